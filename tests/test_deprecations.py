"""One spelling per concept: tol and max_iter on every solver, psi_n for the gap, method for the
solver choice. Each old keyword keeps working for one release, with a DeprecationWarning that names
the new one, and gives the same answer; passing both names is a TypeError."""
import warnings

import numpy as np
import pytest

import mbdcp
from mbdcp.examples import sphere_on_plane
from mbdcp.mechanics import Body3D, Plane, Scene, simulate

M, WN, D, E, U = sphere_on_plane(0.2)
V, H = np.array([2.0, 0, 0, 0, 0, 0]), 0.1
P = np.array([0, 0, -9.81 * H, 0, 0, 0])
WT = np.zeros((6, 2))
WT[0, 0], WT[4, 0], WT[1, 1], WT[3, 1] = 1.0, -1.0, 1.0, 1.0

CASES = {
    "lemke max_pivots": (lambda **k: mbdcp.lemke([[2.0, 1.0], [1.0, 2.0]], [-5.0, -6.0], **k).z, "max_pivots", "max_iter", 50),
    "batch.lemke max_pivots": (lambda **k: mbdcp.batch.lemke(np.eye(2), [[-1.0, 2.0]], **k).z, "max_pivots", "max_iter", 9),
    "batch.step max_pivots": (lambda **k: mbdcp.batch.step(M, WN, D, E, U, [V], H, p_ext=P, **k).v_next, "max_pivots",
                              "max_iter", 99),
    "step solver": (lambda **k: mbdcp.step(M, WN, D, E, U, V, H, p_ext=P, **k).v_next, "solver", "method", "lemke"),
    "ccp phi": (lambda **k: mbdcp.ccp(M, WN, WT, 0.2, V, H, p_ext=P, tol=1e-12, **k).v_next, "phi", "psi_n", [0.01]),
    "ccp dphi_t": (lambda **k: mbdcp.ccp(M, WN, WT, 0.2, V, H, p_ext=P, tol=1e-12, **k).v_next, "dphi_t", "dpsi_t",
                   [[0.5, 0.0]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_old_keyword_warns_and_gives_the_same_answer(case):
    fn, old, new, value = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = fn(**{new: value})
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated; use {new}"):
        got = fn(**{old: value})
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match=f"{new} and its deprecated name {old}"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        fn(**{old: value, new: value})


def test_derivatives_ccp_takes_psi_n():
    kw = dict(p_ext=P, psi_n=[0.01])
    res = mbdcp.ccp(M, WN, WT, 0.2, V, H, tol=1e-12, **kw)
    want = mbdcp.derivatives.ccp(M, WN, WT, 0.2, V, H, res, **kw).vjp(v_next=np.ones(6))
    with pytest.warns(DeprecationWarning, match="phi is deprecated; use psi_n"):
        got = mbdcp.derivatives.ccp(M, WN, WT, 0.2, V, H, res, p_ext=P, phi=[0.01]).vjp(v_next=np.ones(6))
    np.testing.assert_array_equal(got["psi_n"], want["psi_n"])


@pytest.mark.parametrize("method, old", [("ccp", "ccp_tol"), ("fixed_point", "fp_tol")])
def test_simulate_takes_tol_for_every_method(method, old):
    def run(**k):
        ball = Body3D(1.0, [0, 0, 1.0], velocity=[1.0, 0, 0], radius=1.0)
        return simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.2), 0.01, 0.05, method=method,
                        progress=False, **k)

    want = run(tol=1e-7)
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated; use tol"):
        got = run(**{old: 1e-7})
    np.testing.assert_array_equal(got.velocities, want.velocities)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        run(bogus=1)


def test_every_solver_takes_tol_and_max_iter():
    import inspect

    solvers = [mbdcp.lemke, mbdcp.step, mbdcp.fixed_point, mbdcp.relax.p1, mbdcp.relax.p2, mbdcp.full_rank_step,
               mbdcp.full_rank_acceleration, mbdcp.instantaneous, mbdcp.ccp, mbdcp.coulomb, mbdcp.ccp_local,
               mbdcp.batch.lemke, mbdcp.batch.step, simulate]
    for fn in solvers:
        params = inspect.signature(fn).parameters
        assert {"tol", "max_iter"} <= set(params), fn.__qualname__
    for fn in (mbdcp.step, mbdcp.ccp, mbdcp.coulomb, mbdcp.ccp_local, simulate):
        assert "method" in inspect.signature(fn).parameters, fn.__qualname__


def test_the_project_itself_uses_only_the_new_keywords():
    # the package, its demos, notebooks and benchmarks call with the new spellings: an old keyword
    # there would warn every user who runs them
    import ast
    import json
    import pathlib

    old = {"max_pivots", "ccp_tol", "fp_tol", "dphi_t", "solver", "phi"}
    root = pathlib.Path(__file__).resolve().parent.parent
    offenders = []
    for d in ("mbdcp", "notebooks", "benchmarks"):
        for path in (root / d).rglob("*"):
            if path.suffix == ".py":
                sources = [path.read_text(encoding="utf-8")]
            elif path.suffix == ".ipynb" and ".ipynb_checkpoints" not in path.parts:
                cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
                sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
                sources = ["\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))
                           for src in sources]
            else:
                continue
            for src in sources:
                for node in ast.walk(ast.parse(src)):
                    if isinstance(node, ast.Call) and getattr(node.func, "id", None) != "renamed":
                        offenders += [f"{path.relative_to(root)}:{node.lineno}: {k.arg}="
                                      for k in node.keywords if k.arg in old]
    assert offenders == []
