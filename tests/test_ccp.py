"""Cone complementarity: optimality by definition, an independent conic solver, artifacts."""
import numpy as np
import pytest
import scipy.sparse as sp

import mbdcp
from mbdcp import Status
from mbdcp.testing import granular_pile

TOL = {"apgd": 1e-9, "pjacobi": 1e-9, "pgs": 1e-9}   # solver tolerance per method
CHECK = 1e-6                                        # definition checks, relative to the data


def build(d):
    """P, M^-1 and p of the CCP, independently of mbdcp.ccp (dense, for checks)."""
    M = d["M"].toarray() if sp.issparse(d["M"]) else np.asarray(d["M"])
    Wn = d["Wn"].toarray() if sp.issparse(d["Wn"]) else np.asarray(d["Wn"])
    Wt = d["Wt"].toarray() if sp.issparse(d["Wt"]) else np.asarray(d["Wt"])
    n_c = Wn.shape[1]
    P = np.zeros((M.shape[0], 3 * n_c))
    P[:, 0::3], P[:, 1::3], P[:, 2::3] = Wn, Wt[:, 0::2], Wt[:, 1::2]
    Minv = np.linalg.inv(M)
    v_free = d["v"] + Minv @ d["p_ext"]
    p = P.T @ v_free
    p[0::3] += d["phi"] / d["h"]
    return P, Minv, p, v_free


def check_optimal(res, d, tol=CHECK):
    P, Minv, p, v_free = build(d)
    mu = np.broadcast_to(d["mu"], (P.shape[1] // 3,))
    nu = res.gamma.ravel()
    dd = P.T @ (Minv @ (P @ nu)) + p
    scale = max(np.abs(p).max(), 1e-12)
    gscale = max(np.abs(nu).max(), 1e-12)
    g, dv = res.gamma, dd.reshape(-1, 3)
    assert np.all(g[:, 0] >= -tol * gscale)
    assert np.all(np.linalg.norm(g[:, 1:], axis=1) <= mu * g[:, 0] + tol * gscale)        # gamma in K
    assert np.all(dv[:, 0] >= mu * np.linalg.norm(dv[:, 1:], axis=1) - tol * scale)       # d in K*
    assert np.abs(np.sum(g * dv, axis=1)).max() <= tol * scale * gscale                   # gamma . d = 0
    np.testing.assert_allclose(res.v_next, v_free + Minv @ (P @ nu), atol=tol * scale)    # momentum


@pytest.mark.parametrize("method", ["apgd", "pjacobi", "pgs"])
@pytest.mark.parametrize("seed", range(6))
def test_optimal_by_definition(method, seed):
    d = granular_pile(12, 24, seed=seed)
    res = mbdcp.ccp(**d, method=method, tol=TOL[method], max_iter=200_000)
    assert res.success and res.status == Status.SOLVED and res.residual <= TOL[method]
    assert len(res.history) == res.iterations
    check_optimal(res, d)


@pytest.mark.parametrize("seed", range(5))
def test_objective_matches_clarabel(seed):
    clarabel = pytest.importorskip("clarabel")
    d = granular_pile(8, 14, seed=100 + seed)
    P, Minv, p, _ = build(d)
    n = P.shape[1]
    N = P.T @ Minv @ P
    N = 0.5 * (N + N.T)
    mu = d["mu"]
    # cones: s = b - A x in SOC(3) per contact, (mu g_n, g_u, g_w)
    A = sp.lil_matrix((n, n))
    for i in range(n // 3):
        A[3 * i, 3 * i] = -mu[i]
        A[3 * i + 1, 3 * i + 1] = -1.0
        A[3 * i + 2, 3 * i + 2] = -1.0
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
    solver = clarabel.DefaultSolver(sp.triu(sp.csc_matrix(N)).tocsc(), p, sp.csc_matrix(A), np.zeros(n),
                                    [clarabel.SecondOrderConeT(3)] * (n // 3), settings)
    sol = solver.solve()
    x = np.array(sol.x)
    f_ref = 0.5 * x @ N @ x + p @ x
    for method in ("apgd", "pgs"):
        res = mbdcp.ccp(**d, method=method, tol=1e-10, max_iter=200_000)
        nu = res.gamma.ravel()
        f = 0.5 * nu @ N @ nu + p @ nu
        assert f == pytest.approx(f_ref, rel=1e-6, abs=1e-9 * np.abs(p).max())


def test_sparse_and_dense_give_the_same_answer():
    d = granular_pile(10, 20, seed=7)
    dense = granular_pile(10, 20, seed=7, sparse=False)
    a = mbdcp.ccp(**d, tol=1e-11, max_iter=100_000)
    b = mbdcp.ccp(**dense, tol=1e-11, max_iter=100_000)
    assert a.success and b.success
    np.testing.assert_allclose(a.v_next, b.v_next, atol=1e-8)


def test_three_methods_agree_on_velocity():
    d = granular_pile(10, 20, seed=3)
    vs = [mbdcp.ccp(**d, method=m, tol=1e-11, max_iter=500_000).v_next for m in ("apgd", "pjacobi", "pgs")]
    np.testing.assert_allclose(vs[1], vs[0], atol=1e-7)
    np.testing.assert_allclose(vs[2], vs[0], atol=1e-7)


@pytest.mark.parametrize("method", ["apgd", "pgs"])
def test_bilateral_constraints_hold(method):
    d = granular_pile(6, 8, seed=2)
    rng = np.random.default_rng(0)
    n_v = d["v"].shape[0]
    Wb = sp.csc_matrix(rng.standard_normal((n_v, 3)) * (rng.uniform(size=(n_v, 3)) < 0.3))
    theta = rng.uniform(-0.01, 0.01, 3)
    res = mbdcp.ccp(**d, Wb=Wb, theta=theta, method=method, tol=1e-11, max_iter=500_000)
    assert res.success and res.p_b.shape == (3,)
    np.testing.assert_allclose(Wb.T @ res.v_next + theta / d["h"], 0.0, atol=1e-7)


@pytest.mark.parametrize("mu", [0.1, 0.3, 0.8])
def test_bowling_ball_lift_off_speed(mu):
    # A sphere (r = 1) sliding on the floor without spin: the CCP enforces
    # Phi/h + v_n - mu v_T >= 0, so it separates at normal speed mu v_T (seed 004).
    M = np.diag([1.0, 1.0, 1.0, 0.4, 0.4, 0.4])
    r = np.array([0.0, 0.0, -1.0])
    col = lambda d: np.r_[d, np.cross(r, d)]  # noqa: E731
    Wn = col([0, 0, 1.0])[:, None]
    Wt = np.array([col([1.0, 0, 0]), col([0, 1.0, 0])]).T
    res = mbdcp.ccp(M, Wn, Wt, mu, [3.0, 0, 0, 0, 0, 0], 0.01, p_ext=[0, 0, -9.81 * 0.01, 0, 0, 0], tol=1e-12)
    assert res.success
    v_T = np.linalg.norm(Wt.T @ res.v_next)
    assert v_T > 0.5                                  # still sliding
    assert (Wn.T @ res.v_next)[0] == pytest.approx(mu * v_T, rel=1e-8)
    # The LCP of mbdcp.step keeps it on the floor.
    D = np.array([col(d_) for d_ in mbdcp.friction_basis([0, 0, 1], 8).T]).T
    st = mbdcp.step(M, Wn, D, np.ones((8, 1)), [mu], [3.0, 0, 0, 0, 0, 0], 0.01,
                    p_ext=[0, 0, -9.81 * 0.01, 0, 0, 0])
    assert st.v_next[2] == pytest.approx(0.0, abs=1e-12)


def test_non_convergence_is_a_status_and_warm_start_helps():
    d = granular_pile(15, 30, seed=11)
    short = mbdcp.ccp(**d, method="pjacobi", tol=1e-12, max_iter=5)
    assert short.status == Status.MAX_ITERATIONS and not short.success and short.iterations == 5
    cold = mbdcp.ccp(**d, tol=1e-9, max_iter=100_000)
    warm = mbdcp.ccp(**d, tol=1e-9, max_iter=100_000, warm_start=cold)
    assert warm.success and warm.iterations <= 2
    warm2 = mbdcp.ccp(**d, tol=1e-9, max_iter=100_000, warm_start=cold.gamma)
    assert warm2.success and warm2.iterations <= 2


def test_zero_contacts():
    res = mbdcp.ccp(np.eye(2), np.zeros((2, 0)), np.zeros((2, 0)), [], [1.0, 2.0], 0.1, p_ext=[0.5, 0.0])
    assert res.success and np.allclose(res.v_next, [1.5, 2.0]) and res.gamma.shape == (0, 3)


@pytest.mark.parametrize("change, words", [
    (dict(mu=-0.1), "mu must be nonnegative"),
    (dict(method="newton"), "method must be one of"),
    (dict(h=0.0), "h must be positive"),
    (dict(Wt=np.zeros((6, 1))), "Wt must have shape (n_v, 2 n_c) = (6, 2)"),
    (dict(Wn=np.zeros((5, 1))), "Wn must have shape (n_v, n_c) = (6, any)"),
    (dict(M=-np.eye(6)), "M must be symmetric positive definite"),
    (dict(M=sp.diags([1.0, 1, 1, -1, 1, 1])), "M must be symmetric positive definite"),
    (dict(omega=2.5), "omega must be in (0, 2)"),
    (dict(warm_start=np.zeros(5)), "warm_start must have shape"),
    (dict(phi=[np.nan]), "phi must hold finite"),
])
def test_bad_input(change, words):
    kw = dict(M=np.eye(6), Wn=np.eye(6)[:, 2:3], Wt=np.eye(6)[:, :2], mu=0.5, v=np.zeros(6), h=0.01)
    kw.update(change)
    with pytest.raises(ValueError) as info:
        mbdcp.ccp(**kw)
    assert words in str(info.value)


def test_mass_inverse_blocks():
    rng = np.random.default_rng(1)
    blocks = [mbdcp.testing.random_spd(k, rng) for k in (3, 6, 1, 6, 2)]
    M = sp.block_diag(blocks).tocsr()
    from mbdcp.ccp import mass_inverse

    np.testing.assert_allclose(mass_inverse(M).toarray(), np.linalg.inv(M.toarray()), atol=1e-10)
