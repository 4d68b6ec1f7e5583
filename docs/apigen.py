"""Write the API reference pages of the docs from the package's ``__all__`` lists.

A module is public when no part of its dotted name starts with an underscore and it defines
``__all__``. Each public name is documented once, on the first page that reaches its object:
``mbdcp`` first (``mbdcp.__all__``), then the public modules in the order of :func:`public_modules`
(the modules named in ``mbdcp.__all__``, then the others, parents before children). A module with no
name left to document (``mbdcp.lemke`` only re-exports what ``mbdcp`` documents) gets no page.
New public names and modules appear without editing the docs; ``tests/test_docs.py`` reads the
pages written here (no Sphinx needed) and fails when a public name is missing.

Used by ``docs/conf.py`` at every build (``python docs/apigen.py OUTDIR`` writes them by hand).
"""
import ast
import importlib
import importlib.util
import inspect
import os
import pkgutil
import sys
import types

PACKAGE = "mbdcp"


def _module_all(name):
    """(module or None, __all__ or None); a module whose import fails is read with ast."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        # an optional dependency is missing: still list the names, autodoc will report the import
        spec = importlib.util.find_spec(name)
        with open(spec.origin, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                return None, list(ast.literal_eval(node.value))
        return None, None
    names = getattr(module, "__all__", None)
    return module, (list(names) if names is not None else None)


# The folders that group the package by role: their modules are documented under the names users
# import them by (mbdcp.tools.io is mbdcp.io), or not at all when mbdcp.* re-exports all they hold.
LAYOUT = ("formulations", "infrastructure", "tools")


def _public_name(name):
    """The name users import a module by: mbdcp.io for mbdcp.tools.io, its own name outside the
    layout folders, None for a module reachable only by its layout path."""
    if name.split(".")[1:2] and name.split(".")[1] not in LAYOUT:
        return name
    for alias, module in sys.modules.items():
        if alias.count(".") == 1 and alias.startswith(PACKAGE + ".") and getattr(module, "__name__", None) == name:
            return alias
    parent, _, last = name.rpartition(".")
    up = _public_name(parent) if parent.count(".") > 1 else None
    return f"{up}.{last}" if up else None


def public_modules():
    """Dotted names of the public modules, ``mbdcp`` first, then those of ``mbdcp.__all__``."""
    root = importlib.import_module(PACKAGE)
    found = []
    for info in pkgutil.walk_packages(root.__path__, PACKAGE + "."):
        name = _public_name(info.name)
        if name is None or any(part.startswith("_") for part in name.split(".")):
            continue
        if _module_all(name)[1] is not None:
            found.append(name)
    listed = [f"{PACKAGE}.{n}" for n in root.__all__ if isinstance(getattr(root, n, None), types.ModuleType)]
    rest = sorted((m for m in found if m not in listed), key=lambda m: (m.count("."), m))
    return [PACKAGE] + [m for m in listed if m in found or _module_all(m)[1] is not None] + rest


def _kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "data"


def _shadowed(modname):
    """True when the parent package's attribute of that name is not the module (mbdcp.ccp is a function)."""
    parent, _, last = modname.rpartition(".")
    if not parent:
        return False
    return getattr(sys.modules.get(parent), last, None) is not sys.modules.get(modname)


def plan():
    """``[(module, shadowed, [(name, kind), ...])]``: the names each page documents, in order."""
    seen = {}  # id(object) -> where it is documented
    pages = []
    modules = public_modules()
    for modname in modules:
        module, names = _module_all(modname)
        entries = []
        for name in names:
            obj = getattr(module, name, None) if module is not None else None
            if obj is None and module is not None and name not in vars(module):
                raise AttributeError(f"{modname}.__all__ lists {name!r}, which the module does not define")
            kind = _kind(obj) if module is not None else "auto"
            if kind == "module":
                entries.append((name, kind))  # a link to the module's own page
                continue
            # strings, numbers and None are shared objects: document each such name where it is listed
            key = id(obj) if kind != "data" else (modname, name)
            if key in seen:
                continue
            seen[key] = f"{modname}.{name}"
            entries.append((name, kind))
        if modname == PACKAGE or any(kind != "module" for _, kind in entries):
            pages.append((modname, _shadowed(modname), entries))
    return pages


def _page(modname, shadowed, entries, modules_with_pages):
    title = f"``{modname}``"
    lines = [title, "=" * len(title), ""]
    # a shadowed module (the function mbdcp.ccp hides the module mbdcp.ccp) gets no module target,
    # which would clash with the function's
    lines += [f".. automodule:: {modname}"] + (["   :no-index:"] if shadowed else []) + [""]
    lines += [f".. currentmodule:: {modname}", ""]
    objects = [(n, k) for n, k in entries if k != "module"]
    submodules = [n for n, k in entries if k == "module"]
    if submodules:
        lines += ["Modules", "-------", ""]
        for n in submodules:
            target = f"{modname}.{n}"
            ref = f":doc:`{target}`" if target in modules_with_pages else f"``{target}``"
            lines.append(f"- {ref}")
        lines.append("")
    if objects:
        lines += ["Summary", "-------", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {n}" for n, _ in objects] + [""]
        lines += ["Reference", "---------", ""]
        for n, kind in objects:
            directive = {"class": "autoclass", "exception": "autoexception", "function": "autofunction",
                         "data": "autodata", "auto": "autofunction"}[kind]
            lines.append(f".. {directive}:: {n}")
            if kind in ("class", "exception"):
                lines += ["   :members:", "   :undoc-members:", "   :show-inheritance:"]
            if kind == "data":
                lines.append("   :no-value:" if n != "__version__" else "")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def registry_table():
    """The table of registered formulations (mbdcp.formulations.registry) as reStructuredText,
    included by formulations.rst: the docs read the same table as compare and simulate."""
    from mbdcp.formulations import registry

    rows = [".. list-table:: The registered formulations (``mbdcp.formulations.registry``)", "   :header-rows: 1", "",
            "   * - name", "     - model", "     - solver", "     - result", "     - derivative", "     - after"]
    for f in registry.formulations():
        names = ", ".join(f"``{n}``" for n in (tuple(f.variants) or (f.name,)))
        deriv = f":func:`{f.derivative}`" if f.derivative else "—"
        rows += [f"   * - {names}", f"     - {f.title}", f"     - :func:`mbdcp.{f.function.__name__}`",
                 f"     - :class:`mbdcp.{f.result.__name__}`", f"     - {deriv}", f"     - {f.cite}"]
    return "\n".join(rows) + "\n"


def write(outdir):
    """Write ``index.rst``, one page per module and the table of formulations (``registry.inc``)
    into outdir; return the plan."""
    os.makedirs(outdir, exist_ok=True)
    pages = plan()
    with_pages = {m for m, _, _ in pages}
    texts = {"index.rst": "\n".join(["API reference", "=============", "",
                                     "Every public name of mbdcp (``__all__`` of the package and of its public modules),",
                                     "documented once, on the first page below that reaches it.", "",
                                     ".. toctree::", "   :maxdepth: 1", ""] + [f"   {m}" for m, _, _ in pages]) + "\n"}
    for modname, shadowed, entries in pages:
        texts[modname + ".rst"] = _page(modname, shadowed, entries, with_pages)
    texts["registry.inc"] = registry_table()
    for old in os.listdir(outdir):
        if old.endswith(".rst") and old not in texts:
            os.remove(os.path.join(outdir, old))
    for fname, text in texts.items():
        path = os.path.join(outdir, fname)
        # rewrite only on change so that Sphinx does not rebuild unchanged pages
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return pages


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    for modname, _, entries in write(sys.argv[1] if len(sys.argv) > 1 else "api"):
        print(modname, [n for n, _ in entries])
