"""Every CCP decided: a solution, or a certificate that none exists, checked here by definition.

A certificate d proves that no solution exists when each d_i lies in K_i, P d = 0 (so N d = 0) and
p.d < 0: any solution nu would need (N nu + p).d = p.d >= 0. The checks below read P and p as
built by tests/test_ccp.build, not mbdcp's, in extended precision."""
import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from test_ccp import _squeezed, build, check_optimal

import mbdcp
from mbdcp import Status

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

from bench_ccp import random_pair_pile  # noqa: E402

ROWS = 1e-12   # |P d| row by row, relative to sum_j |P_rj d_j|: zero to rounding
CONE = 1e-12   # d_i in K_i, relative to ||d||_inf


def assert_certificate(res, d):
    """res ends RAY_TERMINATION with a certificate that passes the definition."""
    assert res.status == Status.RAY_TERMINATION and not res.success
    assert "no solution exists" in res.message
    c = res.certificate
    assert c is not None and np.all(np.isfinite(c)) and np.abs(c).max() == pytest.approx(1.0)
    P, _, p, _ = build(d)
    mu = np.broadcast_to(d["mu"], (P.shape[1] // 3,)).astype(np.longdouble)
    cl = c.astype(np.longdouble)
    C = cl.reshape(-1, 3)
    assert np.all(C[:, 0] >= 0)
    assert np.all(np.sqrt(C[:, 1] ** 2 + C[:, 2] ** 2) - mu * C[:, 0] <= CONE)
    Pl = sp.csr_matrix(P, dtype=np.longdouble)
    Pc, Pabs = Pl @ cl, abs(Pl) @ abs(cl)
    assert np.all(np.abs(Pc) <= ROWS * Pabs)
    assert np.dot(p.astype(np.longdouble), cl) < 0
    assert np.all(res.gamma == 0.0)


@pytest.mark.parametrize("method", ["apgd", "auto"])
def test_a_particle_squeezed_between_two_walls_is_certified(method):
    # two contacts whose impulses cancel (normals +z and -z) while both gaps close: p.d = -3 for
    # d = (1, 0, 0) at both; the default method finds it within its first tries
    d = _squeezed()
    res = mbdcp.ccp(**d, method=method, tol=1e-9)
    assert_certificate(res, d)
    assert res.iterations <= 256


def test_a_wedged_sphere_pair_is_certified():
    # two spheres (6 velocities each) touching at two contacts whose normals are far apart
    # (n1.n2 = -0.8): impulses f and -f along n1 - n2 cancel in force and torque on both bodies and
    # lie in both friction cones (tangential / normal = sqrt((1 + n1.n2) / (1 - n1.n2)) = 1/3 < mu),
    # and the gaps close
    d = random_pair_pile(2, 2, seed=0)
    Wn, Wt = d["Wn"].toarray(), d["Wt"].toarray()
    n1, n2 = np.array([0.3, 0.0, 0.1]) / np.sqrt(0.1), np.array([-0.3, 0.0, 0.1]) / np.sqrt(0.1)
    r = 0.05
    for c, n in enumerate((n1, n2)):
        t1 = np.cross(n, [0.0, 1.0, 0.0])
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(n, t1)
        for col, vec in ((Wn[:, c], n), (Wt[:, 2 * c], t1), (Wt[:, 2 * c + 1], t2)):
            col[:] = np.r_[vec, np.cross(-r * n, vec), -vec, -np.cross(r * n, vec)]
    d.update(Wn=Wn, Wt=Wt, mu=np.array([0.5, 0.5]), psi_n=np.array([-1e-4, -1e-4]), v=np.zeros(12))
    res = mbdcp.ccp(**d)
    assert_certificate(res, d)


@pytest.mark.parametrize("method", ["apgd", "auto"])
def test_solvable_problems_stay_solved(method):
    d = _squeezed(gaps=(0.01, 0.02))  # both gaps open: no impulse is a solution
    res = mbdcp.ccp(**d, method=method, tol=1e-10)
    assert res.success and res.certificate is None
    np.testing.assert_allclose(res.gamma, 0.0, atol=1e-10)
    d = mbdcp.testing.granular_pile(60, 120, seed=4, pairs="random")
    res = mbdcp.ccp(**d, method=method, tol=1e-9, max_iter=100_000)
    assert res.success and res.certificate is None
    check_optimal(res, d)


def clarabel_verdict(d):
    """Clarabel's verdict on the same conic QP: "solution", "no solution" or None (undecided)."""
    clarabel = pytest.importorskip("clarabel")
    P, Minv, p, _ = build(d)
    N = sp.csc_matrix(P.T @ Minv @ P)
    n = p.size
    scale = np.ones(n)
    scale[0::3] = d["mu"]
    s = clarabel.DefaultSettings()
    s.verbose = False
    sol = clarabel.DefaultSolver(sp.triu(N).tocsc(), p, -sp.diags(scale).tocsc(), np.zeros(n),
                                 [clarabel.SecondOrderConeT(3)] * (n // 3), s).solve()
    return {"Solved": "solution", "DualInfeasible": "no solution",
            "AlmostDualInfeasible": "no solution"}.get(str(sol.status))


@pytest.mark.parametrize("seed", range(8))
def test_random_pair_piles_agree_with_clarabel(seed):
    pytest.importorskip("clarabel")
    d = random_pair_pile(160, 400, seed=seed)
    res = mbdcp.ccp(**d, tol=1e-8)
    if res.success:
        check_optimal(res, d)
        verdict = "solution"
    else:
        assert_certificate(res, d)
        verdict = "no solution"
    expected = clarabel_verdict(d)
    assert expected in (None, verdict)
