"""The docstring examples run and print what they show."""
import doctest
import glob
import importlib
import importlib.util
import os
import pkgutil
import posixpath
import re
import sys
import types

import pytest

import mbdcp


@pytest.mark.parametrize("name", ["mbdcp.lemke", "mbdcp.step", "mbdcp.relax", "mbdcp.full_rank", "mbdcp.instantaneous", "mbdcp.ccp"])
def test_docstring_examples(name):
    # importlib: the attribute mbdcp.lemke is the function, the module lives in sys.modules
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_api_names():
    for name in ["Status", "lemke", "lcp_residual", "step", "friction_basis", "__version__"]:
        assert hasattr(mbdcp, name)
    assert isinstance(mbdcp.__version__, str)


def test_demo_cli_json(tmp_path, monkeypatch, capsys):
    import json

    from mbdcp.__main__ import main

    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["demo"] == "sphere" and summary["max_error_vs_closed_form"] < 1e-12
    assert {"bodies", "steps", "seconds", "max_penetration", "final_kinetic_energy"} <= set(summary)
    assert (tmp_path / "sphere.png").stat().st_size > 1000
    for name in ["particle", "lcp"]:
        assert main(["demo", name, "--json", "--no-plot"]) == 0
        assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["demo"] == name


def test_demo_list_prints_whole_descriptions(capsys, monkeypatch):
    import inspect

    from mbdcp.__main__ import main
    from mbdcp.tools.demos import DEMOS

    monkeypatch.setenv("COLUMNS", "60")
    assert main(["demo", "--list"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 60  # wrapped
    flat = " ".join(out.split())
    for name, fn in DEMOS.items():
        description = " ".join(inspect.getdoc(fn).split("\n\n")[0].split())
        assert f"{name} {description}" in flat  # whole, not cut at the docstring's first line


# ---- the documentation site (docs/): every public name has a place in the API reference

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")
REQUIRED_MODULES = {"mbdcp", "mbdcp.mechanics", "mbdcp.derivatives", "mbdcp.io", "mbdcp.study", "mbdcp.testing",
                    "mbdcp.examples", "mbdcp.relax"}
_AUTO = re.compile(r"^\.\. (auto(?:function|class|exception|data|module))::\s*(\S+)", re.MULTILINE)
_CURRENT = re.compile(r"^\.\. currentmodule::\s*(\S+)", re.MULTILINE)


def _apigen():
    spec = importlib.util.spec_from_file_location("mbdcp_docs_apigen", os.path.join(DOCS, "apigen.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _user_name(module):
    """The name users import a module by: the shortest name sys.modules holds it under
    (mbdcp.io for mbdcp.tools.io)."""
    return min((k for k, v in sys.modules.items() if v is module), key=len)


def public_names():
    """(module, name) for mbdcp.__all__ and the __all__ of every public module, found by walking the
    package; a module of the layout folders (formulations, infrastructure, tools) counts under the
    name users import it by, and not at all when it has none outside those folders."""
    modules = ["mbdcp"]
    for info in pkgutil.walk_packages(mbdcp.__path__, "mbdcp."):
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:
            if (exc.name or "").split(".")[0] == "mbdcp":
                raise
            continue  # an optional dependency is missing: the docs build (autodoc mocks it) covers that module
        name = _user_name(module)
        if any(part.startswith("_") for part in name.split(".")) or name.split(".")[1] in ("formulations",
                                                                                            "infrastructure", "tools"):
            continue
        if hasattr(module, "__all__") and name not in modules:
            modules.append(name)
    return [(m, n) for m in modules for n in importlib.import_module(m).__all__]


def documented_in_sources(api_dir):
    """Full names the .rst pages document with autodoc directives (relative names under currentmodule), as a list."""
    names = []
    for fname in os.listdir(api_dir):
        if not fname.endswith(".rst"):
            continue
        current = None
        with open(os.path.join(api_dir, fname), encoding="utf-8") as fh:
            lines = fh.read().splitlines() + [""]
        for line, following in zip(lines, lines[1:]):
            m = _CURRENT.match(line)
            if m:
                current = m.group(1)
            m = _AUTO.match(line)
            if m and ":no-index:" not in following:  # a no-index description documents nothing
                directive, target = m.groups()
                if directive == "automodule" or current is None or target.startswith(current + "."):
                    names.append(target)
                else:
                    names.append(f"{current}.{target}")
    return names


def _resolve(full):
    """The object a documented dotted name denotes, read as autodoc does: module part, then attributes.

    The last part is always an attribute: ``mbdcp.ccp`` is the function, not the module it shadows.
    """
    parts = full.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(full)


def missing_names(documented):
    """Public (module, name) pairs that no documented name reaches (by identity; data by its own path)."""
    reached = {}
    for full in documented:
        try:
            reached.setdefault(id(_resolve(full)), set()).add(full)
        except (LookupError, AttributeError):
            pass
    missing = []
    for modname, name in public_names():
        obj = getattr(importlib.import_module(modname), name)
        ok = (f"{modname}.{name}" in documented if isinstance(obj, (str, int, float, tuple, dict, list))
              else id(obj) in reached)
        if isinstance(obj, types.ModuleType):
            ok = _user_name(obj) in documented  # a module has its own page (automodule)
        if not ok:
            missing.append(f"{modname}.{name}")
    return missing


def test_public_modules_are_found():
    modules = {m for m, _ in public_names()}
    assert REQUIRED_MODULES <= modules
    assert {("mbdcp.mechanics", "simulate"), ("mbdcp.io", "read_fclib"), ("mbdcp", "lemke")} <= set(public_names())


def test_reference_sources_cover_every_public_name(tmp_path):
    _apigen().write(str(tmp_path))
    names = documented_in_sources(str(tmp_path))
    documented = set(names)
    assert missing_names(documented) == []
    assert {"mbdcp.lemke", "mbdcp.mechanics.Trajectory", "mbdcp.io.read_fclib", "mbdcp.derivatives.lcp"} <= documented
    # each name described once: a second description is a Sphinx warning (duplicate object description)
    assert len(names) == len(documented)
    with open(tmp_path / "index.rst", encoding="utf-8") as fh:
        index = fh.read()
    assert all(f"   {m}\n" in index for m in REQUIRED_MODULES)


def test_reference_check_fails_on_a_missing_name(tmp_path):
    _apigen().write(str(tmp_path))
    page = tmp_path / "mbdcp.rst"
    page.write_text(page.read_text(encoding="utf-8").replace(".. autofunction:: lcp_residual\n", ""), encoding="utf-8")
    page = tmp_path / "mbdcp.mechanics.rst"
    page.write_text(page.read_text(encoding="utf-8").replace(".. autoclass:: Trajectory\n", ""), encoding="utf-8")
    missing = missing_names(set(documented_in_sources(str(tmp_path))))
    assert sorted(missing) == ["mbdcp.lcp_residual", "mbdcp.lemke.lcp_residual", "mbdcp.mechanics.Trajectory",
                               "mbdcp.mechanics.simulate.Trajectory"]


def test_built_inventory_covers_every_public_name():
    inventory = pytest.importorskip("sphinx.util.inventory")
    path = os.environ.get("MBDCP_DOCS_INVENTORY", os.path.join(DOCS, "_build", "html", "objects.inv"))
    if not os.path.exists(path):
        pytest.skip("docs not built: python -m sphinx -W --keep-going -b html docs docs/_build/html")
    with open(path, "rb") as fh:
        inv = inventory.InventoryFile.load(fh, "", posixpath.join)
    documented = {name for kind, entries in inv.items() if kind.startswith("py:") for name in entries}
    assert missing_names(documented) == [], "rebuild the docs if the build is older than the package"


def test_getting_started_examples_run():
    result = doctest.testfile(os.path.join(DOCS, "getting_started.rst"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0


def test_built_site_serves_mathjax_itself():
    """After a build, every page that loads MathJax loads the copy in _static (sphinx-mathjax-offline),
    not a CDN, so that the equations render offline."""
    html_dir = os.environ.get("MBDCP_DOCS_HTML", os.path.join(DOCS, "_build", "html"))
    pages = [os.path.join(d, f) for d, _, files in os.walk(html_dir) for f in files if f.endswith(".html")]
    if not pages:
        pytest.skip("docs not built: python -m sphinx -W --keep-going -b html docs docs/_build/html")
    script = re.compile(r"<script[^>]*\bsrc=\"([^\"]*)\"", re.IGNORECASE)
    local, remote = set(), []
    for page in pages:
        with open(page, encoding="utf-8") as fh:
            for src in script.findall(fh.read()):
                if "mathjax" in src.lower():
                    if re.match(r"(https?:)?//", src):
                        remote.append(f"{os.path.relpath(page, html_dir)}: {src}")
                    else:  # Sphinx may append a cache-busting ?v=... to the path
                        local.add(posixpath.normpath(posixpath.join(posixpath.dirname(
                            os.path.relpath(page, html_dir).replace(os.sep, "/")), src.split("?")[0])))
    assert remote == []
    assert local == {"_static/mathjax/tex-chtml.js"}
    assert os.path.getsize(os.path.join(html_dir, "_static", "mathjax", "tex-chtml.js")) > 100_000
    fonts = glob.glob(os.path.join(html_dir, "_static", "mathjax", "output", "chtml", "fonts", "woff-v2", "*.woff"))
    assert fonts, "MathJax's fonts are served too"
