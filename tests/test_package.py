"""Packaging promises: one version, a typed package, a stub that lists every wrapper of the C
core, and an ``__all__`` in every public module."""
import ast
import importlib
import importlib.metadata
import os
import pkgutil

import pytest

import mbdcp
from mbdcp.infrastructure import _core

HERE = os.path.dirname(os.path.abspath(mbdcp.__file__))


def test_version_has_one_source():
    from mbdcp._version import __version__

    assert mbdcp.__version__ == __version__
    try:
        assert importlib.metadata.version("mbdcp") == __version__
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("mbdcp is not installed (running from the source tree)")


def test_typed_package_and_core_stub():
    assert os.path.isfile(os.path.join(HERE, "py.typed"))
    with open(os.path.join(HERE, "infrastructure", "_core.pyi")) as fh:
        stub = ast.parse(fh.read())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {n.target.id for n in stub.body if isinstance(n, ast.AnnAssign)}
    public = {name for name in dir(_core) if not name.startswith("_")} - {"np"}
    assert public <= stubbed, f"missing from mbdcp/infrastructure/_core.pyi: {sorted(public - stubbed)}"
    untyped = sorted(n.name for n in stub.body if isinstance(n, ast.FunctionDef) and n.returns is not None
                     and "Any" in ast.unparse(n.returns))
    assert not untyped, f"_core.pyi returns Any from {untyped}"


def test_core_stub_agrees_with_the_extension(tmp_path):
    # mypy's stubtest: every wrapper's parameters (names, kinds, defaults) as the stub says
    stubtest = pytest.importorskip("mypy.stubtest")
    allow = tmp_path / "allow.txt"
    allow.write_text("".join(f"mbdcp.infrastructure._core.{n}\n" for n in ("__reduce_cython__", "__setstate_cython__",
                                                                              "__test__")))
    assert stubtest.test_stubs(stubtest.parse_options(["mbdcp.infrastructure._core", "--allowlist", str(allow)])) == 0


def _public_modules():
    for info in pkgutil.walk_packages([HERE], "mbdcp."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            yield info.name


@pytest.mark.parametrize("name", sorted(_public_modules()))
def test_every_public_module_declares_all(name):
    if name in ("mbdcp.__main__",):
        pytest.skip("a script")
    framework = {"mbdcp.jax": "jax", "mbdcp.torch": "torch"}.get(name)
    if framework:  # the optional layers need their framework (extras mbdcp[jax], mbdcp[torch])
        pytest.importorskip(framework)
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    for item in module.__all__:
        assert hasattr(module, item), f"{name}.__all__ names {item!r}, which it does not define"


def test_defaults_come_from_the_c_core():
    import inspect

    from mbdcp.mechanics import simulate

    D = _core.DEFAULTS
    assert D["lemke"]["tol"] == 1e-9 and D["ccp"]["tol"] == 1e-8 and D["fixed_point"]["tol"] == 1e-10

    def default(fn, name):
        return inspect.signature(fn).parameters[name].default

    assert default(mbdcp.ccp, "tol") == D["ccp"]["tol"] and default(mbdcp.ccp, "max_iter") == D["ccp"]["max_iter"]
    assert default(mbdcp.fixed_point, "tol") == D["fixed_point"]["tol"]
    assert default(mbdcp.fixed_point, "max_iter") == D["fixed_point"]["max_iter"]
    assert default(mbdcp.fixed_point, "algorithm") == D["fixed_point"]["algorithm"]
    assert default(mbdcp.coulomb, "tol") == D["fc"]["tol"] == default(mbdcp.ccp_local, "tol")
    assert default(simulate, "tol") is None  # each method's own default


def test_the_derivatives_thresholds_come_from_the_c_core():
    """The step's derivative has three rules (the C core's, mbdcp.derivatives.step, the JAX rule of
    mbdcp.jax): their thresholds are step_vjp.h's, read from the extension, as are the defaults of
    every derivative."""
    import inspect

    from mbdcp.derivatives._common import DEGENERATE_TOL
    from mbdcp.derivatives.lcp import RCOND_MIN
    from mbdcp.infrastructure import validate

    D = _core.DEFAULTS["step_vjp"]
    assert D == {"degenerate_tol": 1e-9, "rcond_min": 1e-13, "opposite_rtol": 1e-12}
    assert DEGENERATE_TOL is D["degenerate_tol"] and RCOND_MIN is D["rcond_min"]
    assert validate.OPPOSITE_RTOL is D["opposite_rtol"]
    for fn in (mbdcp.derivatives.lcp, mbdcp.derivatives.step, mbdcp.derivatives.ccp):
        assert inspect.signature(fn).parameters["degenerate_tol"].default == D["degenerate_tol"]
    assert (_core.VJP_RANK_CUT, _core.VJP_NORM_FLOOR, _core.VJP_TIE, _core.VJP_MARGIN) == (1e-9, 1e-300, 1e-9, 1e3)
    pytest.importorskip("jax")
    from mbdcp._jax import step_vjp

    assert (step_vjp.RCOND_MIN, step_vjp.OPPOSITE_RTOL) == (D["rcond_min"], D["opposite_rtol"])
    assert (step_vjp._RANK_CUT, step_vjp._NORM_FLOOR, step_vjp._TIE, step_vjp._MARGIN) == \
        (_core.VJP_RANK_CUT, _core.VJP_NORM_FLOOR, _core.VJP_TIE, _core.VJP_MARGIN)
