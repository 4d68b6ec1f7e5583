"""Sphinx configuration of the mbdcp documentation (build: see docs/README.md)."""
import glob
import importlib.util
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
# Document the source tree when it has the compiled extension (built in place, or copied there by
# `pip install .`); otherwise the installed mbdcp. `python -m sphinx` run from the repository root puts
# the tree first on sys.path, so it is dropped when it has no _core (as in tests/conftest.py).
if glob.glob(os.path.join(ROOT, "mbdcp", "_core*.so")) or glob.glob(os.path.join(ROOT, "mbdcp", "_core*.pyd")):
    sys.path.insert(0, ROOT)
else:
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != ROOT]

import apigen  # noqa: E402 (sys.path chosen above)
from sphinx.ext.autodoc.mock import mock  # noqa: E402

import mbdcp  # noqa: E402

project = "mbdcp"
author = "the mbdcp developers"
copyright = "the mbdcp developers, BSD-3-Clause"
version = release = mbdcp.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax served with the site (copied into _static/mathjax at the end of the build), so that the
    # equations render offline; without it sphinx.ext.mathjax would load MathJax from a CDN
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_nb",
]

# Optional dependencies imported at module level by a public module (ipywidgets for mbdcp.widgets, in
# the notebooks extra; jax and torch for mbdcp.jax and mbdcp.torch) are mocked when absent: the site
# documents the API without installing them.
autodoc_mock_imports = [m for m in ("ipywidgets", "jax", "torch") if importlib.util.find_spec(m) is None]

# The reference is written from the __all__ lists at every build (docs/apigen.py), so public names
# added to the package appear without editing the docs.
with mock(autodoc_mock_imports):
    if "torch" in autodoc_mock_imports:
        # mbdcp.torch takes the C++ apply of torch.autograd.Function's base class when it is imported
        # (super(torch.autograd.Function, _Layer).apply), which needs Function to be a class, not a
        # mock object. The module, imported here once, stays in sys.modules for autodoc.
        import torch.autograd

        class _FunctionBase:
            @staticmethod
            def apply(*args):
                raise RuntimeError("PyTorch is mocked for the documentation build")

        class _Function(_FunctionBase):
            pass

        torch.autograd.Function = _Function
    apigen.write(os.path.join(HERE, "api"))

# The notebooks live in notebooks/ (committed executed); Sphinx reads sources only below docs/, so
# they are copied (mtime kept: unchanged notebooks are not re-read) into docs/notebooks/.
_nb_dir = os.path.join(HERE, "notebooks")
os.makedirs(_nb_dir, exist_ok=True)
_sources = {os.path.basename(p): p for p in glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))}
for _old in os.listdir(_nb_dir):
    if _old.endswith(".ipynb") and _old not in _sources:
        os.remove(os.path.join(_nb_dir, _old))
for _name, _src in _sources.items():
    _dst = os.path.join(_nb_dir, _name)
    if not os.path.exists(_dst) or os.path.getmtime(_dst) != os.path.getmtime(_src):
        shutil.copy2(_src, _dst)

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "README.md", "jupyter_execute", "**.ipynb_checkpoints"]
root_doc = "index"

# notebooks are shown with the outputs they were committed with; they are executed by the tests
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]
# the notebooks' markdown (written for Jupyter) has $$...$$ inside paragraphs
myst_dmath_double_inline = True

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autosummary_generate = False
# the classes' members are documented by autodoc's :members:; numpydoc's extra member tables
# would list each of them twice
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "furo"
html_title = f"mbdcp {release}"

# ---- the site works offline: no page loads a script, style sheet or font from another host
#
# Widgets. myst-nb would load require.js and the widget manager (@jupyter-widgets/html-manager) from
# CDNs on every page whose notebook saved widget state (the tqdm progress bars of notebooks 05, 06,
# 07 and 12). No Python package ships that manager, so it is not loaded at all: widget views are not
# rendered, and each widget output shows the static fallback saved beside it in the same output
# bundle (its final state as text, or its figure; written by notebooks/build.py).
nb_ipywidgets_js = {}
nb_mime_priority_overrides = [("*", "application/vnd.jupyter.widget-view+json", None)]

# Font Awesome. matplotlib's JavaScript animations (TrajectoryAnimation, to_jshtml) link Font Awesome
# 4 from a CDN for the icons of their buttons. The link is dropped from the page, which loads instead
# the Font Awesome Free copy of the fontawesomefree package (docs extra; its all.css keeps the version
# 4 names the buttons use), copied into _static/fontawesome at the end of the build.
_FONT_AWESOME_LINK = re.compile(
    r"""<link\b[^>]*\bhref\s*=\s*["'](?:https?:)?//[^"']*font-?awesome[^"']*["'][^>]*>\s*""", re.IGNORECASE)
_FONT_AWESOME_CSS = "fontawesome/css/all.min.css"
# tags that load what they name when the page is shown (a <link> only as a style sheet, icon or preload)
_TAG = re.compile(r"<(script|link|img|iframe|source|audio|video|embed|object|track|input)\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""\b(src|href|data|srcset|rel)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_REMOTE = re.compile(r"\s*(?:https?:)?//", re.IGNORECASE)


def _remote_loads(html):
    """The URLs on other hosts that the tags of ``html`` load."""
    for tag in _TAG.finditer(html):
        attrs = {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
                 for m in _ATTR.finditer(tag.group(0))}
        name = tag.group(1).lower()
        if name == "link":
            rel = attrs.get("rel", "").lower()
            if not any(word in rel for word in ("stylesheet", "icon", "preload", "prefetch", "import", "manifest")):
                continue
            urls = [attrs.get("href", "")]
        else:
            srcset = [u.split()[0] for u in attrs.get("srcset", "").split(",") if u.strip()]
            urls = [attrs.get("src", ""), attrs.get("data", "")] + srcset
        yield from (u.strip() for u in urls if _REMOTE.match(u))


def _fontawesome_dir():
    spec = importlib.util.find_spec("fontawesomefree")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "static", "fontawesomefree")
    return path if os.path.isfile(os.path.join(path, "css", "all.min.css")) else None


def _offline_page(app, pagename, templatename, context, doctree):
    """Serve Font Awesome from _static on the pages that use it, and warn (an error with -W) about
    anything the page would still load from another host."""
    from sphinx.util import logging

    logger = logging.getLogger("mbdcp.docs")
    body = context.get("body") or ""
    if _FONT_AWESOME_LINK.search(body):
        context["body"] = body = _FONT_AWESOME_LINK.sub("", body)
        app.add_css_file(_FONT_AWESOME_CSS)  # within html-page-context: for this page only
    remote = list(_remote_loads(body))
    for asset in list(context.get("script_files", ())) + list(context.get("css_files", ())):
        name = getattr(asset, "filename", asset)
        if isinstance(name, str) and _REMOTE.match(name):
            remote.append(name)
    for url in dict.fromkeys(remote):
        logger.warning("page loads %s from another host: the docs must work offline", url, location=pagename)


def _copy_fontawesome(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    src = _fontawesome_dir()
    if src is None:
        return  # warned when the build started
    dst = os.path.join(app.outdir, "_static", "fontawesome")
    os.makedirs(os.path.join(dst, "css"), exist_ok=True)
    shutil.copy2(os.path.join(src, "css", "all.min.css"), os.path.join(dst, "css", "all.min.css"))
    shutil.copytree(os.path.join(src, "webfonts"), os.path.join(dst, "webfonts"), dirs_exist_ok=True)
    if os.path.isfile(os.path.join(src, "LICENSE.txt")):
        shutil.copy2(os.path.join(src, "LICENSE.txt"), os.path.join(dst, "LICENSE.txt"))


def _check_fontawesome(app):
    if app.builder.format == "html" and _fontawesome_dir() is None:
        from sphinx.util import logging

        logging.getLogger("mbdcp.docs").warning(
            "fontawesomefree is not installed (pip install '.[docs]'): the animations' buttons would have no icons")


def setup(app):
    app.connect("builder-inited", _check_fontawesome)
    app.connect("html-page-context", _offline_page)
    app.connect("build-finished", _copy_fontawesome)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
