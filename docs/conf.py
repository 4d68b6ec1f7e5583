"""Sphinx configuration of the mbdcp documentation (build: see docs/README.md)."""
import glob
import importlib.util
import os
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

import apigen
from sphinx.ext.autodoc.mock import mock

import mbdcp

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
