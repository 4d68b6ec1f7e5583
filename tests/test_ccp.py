"""Cone complementarity: optimality by definition, an independent conic solver, artifacts."""
import os

import numpy as np
import pytest
import scipy.sparse as sp

import mbdcp
from mbdcp import Status
from mbdcp.testing import granular_pile

TOL = {"apgd": 1e-9, "pjacobi": 1e-9, "pgs": 1e-9, "ipm": 1e-9, "auto": 1e-9}   # solver tolerance per method
CHECK = 1e-6                                        # definition checks, relative to the data


def build(d):
    """P, M^-1 and p of the CCP, independently of mbdcp.ccp (for checks): dense, or sparse when M
    is given as its diagonal blocks (a large pile)."""
    if np.ndim(d["M"]) == 3:
        Minv = sp.block_diag([np.linalg.inv(b) for b in d["M"]], format="csr")
        Wn, Wt = sp.csc_matrix(d["Wn"]), sp.csc_matrix(d["Wt"])
        n_c = Wn.shape[1]
        P = sp.hstack([Wn, Wt[:, 0::2], Wt[:, 1::2]]).tocsc()[:, (np.arange(3) * n_c + np.arange(n_c)[:, None]).ravel()]
    else:
        M = d["M"].toarray() if sp.issparse(d["M"]) else np.asarray(d["M"])
        Wn = d["Wn"].toarray() if sp.issparse(d["Wn"]) else np.asarray(d["Wn"])
        Wt = d["Wt"].toarray() if sp.issparse(d["Wt"]) else np.asarray(d["Wt"])
        n_c = Wn.shape[1]
        P = np.zeros((M.shape[0], 3 * n_c))
        P[:, 0::3], P[:, 1::3], P[:, 2::3] = Wn, Wt[:, 0::2], Wt[:, 1::2]
        Minv = np.linalg.inv(M)
    v_free = d["v"] + Minv @ d.get("p_ext", np.zeros(Minv.shape[0]))
    p = P.T @ v_free
    p[0::3] += d["psi_n"] / d["h"]
    if d.get("dpsi_t") is not None:  # moving surfaces: the tangential velocity offsets
        dpsi_t = np.reshape(d["dpsi_t"], (-1, 2))
        p[1::3] += dpsi_t[:, 0]
        p[2::3] += dpsi_t[:, 1]
    return P, Minv, p, v_free


def recorded_ccp(name, M):
    """mbdcp.ccp's arguments for a CCP recorded from a simulation (tests/data, see its README), M
    as its diagonal blocks ("blocks") or as one "dense" or "sparse" matrix."""
    with np.load(os.path.join(os.path.dirname(__file__), "data", name)) as f:
        z = dict(f)
    W = {k: sp.csc_matrix((z[f"{k}_data"], z[f"{k}_indices"], z[f"{k}_indptr"]), shape=z[f"{k}_shape"])
         for k in ("Wn", "Wt")}
    blocks = z["M_blocks"]
    d = {"M": blocks if M == "blocks" else sp.block_diag(list(blocks), format="csr"), "Wn": W["Wn"], "Wt": W["Wt"],
         "mu": z["mu"]}
    if M == "dense":
        d["M"] = d["M"].toarray()
    if "phi" in z:  # the file names the gap phi
        d.update(v=z["v"], h=float(z["h"]), p_ext=z["p_ext"], psi_n=z["phi"])
        if "warm_start" in z:  # the step's start in the simulation: the last step's impulses
            d["warm_start"] = z["warm_start"]
    else:  # the whole of p carried by psi_n and dpsi_t
        d.update(v=np.zeros(W["Wn"].shape[0]), h=1.0, psi_n=z["psi_n"], dpsi_t=z["dpsi_t"])
    return d


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


@pytest.mark.parametrize("method", ["apgd", "pjacobi", "pgs", "ipm", "auto"])
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


@pytest.mark.parametrize("method", ["apgd", "pgs", "ipm"])
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
    # Phi/h + v_n - mu v_T >= 0, so it separates at normal speed mu v_T (Negrut et al. 2018, eq. 5d).
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
    assert res.polished is False and res.iterations == 0  # nothing to solve, nothing polished


@pytest.mark.parametrize("change, words", [
    (dict(mu=-0.1), "mu must be nonnegative"),
    (dict(method="lemke"), "method must be one of"),
    (dict(method="IPM"), "method must be one of"),
    (dict(h=0.0), "h must be positive"),
    (dict(Wt=np.zeros((6, 1))), "Wt must have shape (n_v, 2 n_c) = (6, 2)"),
    (dict(Wn=np.zeros((5, 1))), "Wn must have shape (n_v, n_c) = (6, any)"),
    (dict(M=-np.eye(6)), "M must be symmetric positive definite"),
    (dict(M=sp.diags([1.0, 1, 1, -1, 1, 1])), "M must be symmetric positive definite"),
    (dict(omega=2.5), "omega must be in (0, 2)"),
    (dict(warm_start=np.zeros(5)), "warm_start must have shape"),
    (dict(psi_n=[np.nan]), "psi_n must hold finite"),
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
    from mbdcp.formulations.ccp import mass_inverse

    np.testing.assert_allclose(mass_inverse(M).toarray(), np.linalg.inv(M.toarray()), atol=1e-10)


# ---- Gauss-Seidel on redundant contacts (issue: it once diverged to NaN on such scenes) ---------

def _redundant_scene(seed):
    from mbdcp.testing import random_scene

    rng = np.random.default_rng(seed)
    s = random_scene(int(rng.integers(1, 4)), int(rng.integers(8, 21)), seed)
    return dict(M=s.M, Wn=s.Wn, Wt=s.Wt, mu=s.U, v=s.v, h=s.h, p_ext=s.p_ext, psi_n=s.psi_n)


def test_mass_in_csc_from_equal_blocks_is_scipys_block_diag():
    """The interior-point method's M in CSC, built directly from equal diagonal blocks, has exactly
    the arrays scipy's block_diag gives (every entry stored, zeros and -0.0 included)."""
    from mbdcp.infrastructure.problem import _blocks_csc

    rng = np.random.default_rng(5)
    for shape in [(1, 1, 1), (4, 3, 3), (9, 6, 6)]:
        blocks = rng.standard_normal(shape)
        blocks[rng.random(shape) < 0.3] = 0.0
        blocks[0, 0, 0] = -0.0
        A = sp.block_diag(list(blocks), format="csc")
        got = _blocks_csc(blocks)
        for a, b in zip(got, (A.indptr, A.indices, A.data)):
            assert a.dtype in (np.intc, np.float64) and a.flags.c_contiguous
            np.testing.assert_array_equal(a, b)
        assert np.signbit(got[2][0])


@pytest.mark.parametrize("seed", range(40))
def test_gauss_seidel_converges_with_redundant_contacts(seed):
    # 8-20 contacts on 1-3 bodies: N singular, its 3x3 blocks possibly ill-conditioned
    d = _redundant_scene(seed)
    res = mbdcp.ccp(**d, method="pgs", tol=1e-9, max_iter=5000)
    assert res.success and np.all(np.isfinite(res.history))
    check_optimal(res, d)


def _objective(d, gamma):
    P, Minv, p, _ = build(d)
    nu = gamma.ravel()
    return 0.5 * nu @ (P.T @ (Minv @ (P @ nu))) + p @ nu


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_gauss_seidel_descends_monotonically(seed):
    # each contact's local problem is minimised exactly, so every sweep lowers the objective
    d = _redundant_scene(seed)
    values = [_objective(d, mbdcp.ccp(**d, method="pgs", tol=1e-300, max_iter=k).gamma) for k in range(1, 30)]
    assert np.all(np.diff(values) <= 1e-12 * np.abs(values).max())


def _fclib_global(name):
    io = pytest.importorskip("mbdcp.io")
    pytest.importorskip("h5py")
    import warnings

    path = os.path.join(os.path.dirname(__file__), "data", "fclib", name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # matrices stored as one triangle
        P = io.read_fclib(path).problem
    n_c = len(P.mu)
    H = sp.csc_matrix(P.H)
    Wt = sp.hstack([H[:, [3 * i + 1, 3 * i + 2]] for i in range(n_c)], format="csc")
    w = np.asarray(P.w)
    assert np.all(w[1::3] == 0) and np.all(w[2::3] == 0)  # no tangential offsets in these files
    return dict(M=P.M, Wn=H[:, 0::3], Wt=Wt, mu=np.asarray(P.mu), v=np.zeros(P.M.shape[0]), h=1.0,
                p_ext=np.asarray(P.f), psi_n=w[0::3])


@pytest.mark.parametrize("name", ["Box_Stacks-i0122-82-5.hdf5", "CubeH8.hdf5", "LMGC_GlobalFrictionContactProblem00046.hdf5"])
@pytest.mark.parametrize("method", ["apgd", "pgs"])
def test_fclib_global_problems(name, method):
    # the cone relaxation of FCLib's global problems (M v = H r + f, u = H^T v + w); Gauss-Seidel
    # once cycled between residuals 0.64 and 2.4 on Box_Stacks
    d = _fclib_global(name)
    res = mbdcp.ccp(**d, method=method, tol=1e-8, max_iter=20_000)
    assert res.success
    check_optimal(res, d)


def test_fclib_spheres_in_a_box_gauss_seidel_is_slow_but_descends():
    # 256 contacts among 98 spheres: Gauss-Seidel descends at every sweep but slowly (about 1e-5
    # after 10^4 sweeps, measured); APGD reaches 1e-8
    d = _fclib_global("spheres-in-a-box-98-i10000-256-10.hdf5")
    assert mbdcp.ccp(**d, method="apgd", tol=1e-8, max_iter=50_000).success
    pgs = mbdcp.ccp(**d, method="pgs", tol=1e-8, max_iter=300)
    assert pgs.status == Status.MAX_ITERATIONS and pgs.residual < 1e-2
    values = [_objective(d, mbdcp.ccp(**d, method="pgs", tol=1e-300, max_iter=k).gamma) for k in (1, 10, 100, 300)]
    assert np.all(np.diff(values) < 0)


def test_a_diverging_iteration_stops_with_its_best_iterate():
    # over-relaxed Jacobi on redundant contacts diverges: it stops with NUMERICAL_ERROR and returns
    # the best (finite) iterate it met, with that iterate's true residual, never NaN
    for seed in range(12):
        d = _redundant_scene(seed)
        res = mbdcp.ccp(**d, method="pjacobi", omega=1.99, tol=1e-9, max_iter=3000)
        assert res.status == Status.NUMERICAL_ERROR
        assert np.all(np.isfinite(res.gamma)) and np.isfinite(res.residual) and res.residual > 1e-9
        assert np.all(np.isfinite(res.v_next))


def test_a_polished_apgd_answer_is_optimal_by_definition():
    """In a settling sphere pile APGD meets the normwise tolerance while a few contacts (whose
    impulses can be redistributed among themselves) stay above the componentwise one; the polish
    re-solves them. Its answers must pass the same definition checks and agree with a tight solve."""
    from mbdcp.formulations import ccp as formulation
    from mbdcp.mechanics import simulate, sphere_pile_scene

    calls = []
    scene = sphere_pile_scene(64)
    stepped = formulation._stepped  # what simulate calls: mbdcp.ccp's solve of the step's own arrays

    def recording(*args, **kwargs):
        res = stepped(*args, **kwargs)
        calls.append((*formulation._as_call(*args, **kwargs), res))
        return res

    formulation._stepped = recording
    try:
        simulate(scene, 0.01, 0.4, progress=False, method="ccp", tol=1e-6)
    finally:
        formulation._stepped = stepped
    polished = [c for c in calls if c[2].polished]
    assert len(polished) >= 5 and all(c[2].success and c[2].residual <= 1e-6 for c in polished)
    for (M, Wn, Wt, mu, v, h), kwargs, res in polished[:5]:
        d = dict(M=sp.block_diag(list(M)).toarray(), Wn=Wn, Wt=Wt, mu=mu, v=v, h=h, p_ext=kwargs["p_ext"],
                 psi_n=kwargs["psi_n"])
        assert kwargs.get("max_correction_speed") is None and kwargs.get("baumgarte", 1.0) == 1.0  # the gap as is
        check_optimal(res, d)
        tight = mbdcp.ccp(**d, tol=1e-10, max_iter=200_000)
        scale = np.abs(res.v_next).max()
        np.testing.assert_allclose(res.v_next, tight.v_next, atol=1e-5 * scale)


@pytest.mark.parametrize("name, tol, most", [("settled150_ccp.npz", 1e-10, 3000),
                                             ("pile2000_region_ccp.npz", 1e-8, 2500)])
def test_a_stalled_apgd_is_relieved_and_its_answer_is_optimal(name, tol, most):
    """Two piles where APGD's largest residual sat still. settled150_ccp.npz: 150 spheres at rest;
    spheres in the box's corners can trade floor friction for wall pressure, a direction N barely
    bends (8,680 iterations to 1e-10 before relieve(); now about 1,050). pile2000_region_ccp.npz:
    the 244 contacts around the ones at which APGD crawled (from about iteration 1,000 to 5,225, tol
    1e-8) in step 97 of a 2,000-sphere pile, the rest held at that step's answer; the re-solve of
    polish() and relieve() stopped at 3,000 FISTA iterations, short of the flat directions' end
    (3,809 iterations); given the work of 300 products with N, about 1,200. This small problem's own
    N buys the re-solve little more than the 3,000 (a whole pile's buys tens of thousands), so the
    case rests on that margin. The answer must pass the definition checks and agree with
    Gauss-Seidel's. (tests/data/README.md tells how each was recorded.)"""
    d = recorded_ccp(name, "dense")
    res = mbdcp.ccp(**d, tol=tol, max_iter=100_000)
    assert res.status == Status.SOLVED and res.residual <= tol
    assert res.iterations < most
    check_optimal(res, d)
    pgs = mbdcp.ccp(**d, method="pgs", tol=1e-7, max_iter=100_000)
    assert pgs.success
    np.testing.assert_allclose(res.v_next, pgs.v_next, atol=1e-5 * np.abs(pgs.v_next).max())


def test_a_stalled_run_goes_on_from_the_relieved_iterate():
    """20,000 contacts between random pairs of 8,000 bodies: two contacts sat just above tol while
    their local re-solve (relieve()) pushed their neighbours off; refused for its higher residual,
    it was computed again every 30 iterations and the run took 494 iterations. Taken, APGD settles
    the neighbours: about 170."""
    d = granular_pile(8000, 20_000, seed=1, pairs="random")
    res = mbdcp.ccp(**d, method="apgd", tol=1e-6, max_iter=100_000)
    assert res.status == Status.SOLVED and res.residual <= 1e-6
    assert res.iterations <= 300


def test_no_step_of_a_settling_pile_crawls():
    """simulate(method="ccp") on 500 spheres settling for 100 steps: every step SOLVED, and none
    needs more than 5 times the median iterations. A polish that fell short of the componentwise
    test used to be dropped and tried again at doubling waits: one step took 2,737 iterations
    against a median of 194."""
    from mbdcp.mechanics import simulate, sphere_pile_scene

    tr = simulate(sphere_pile_scene(500), 0.01, 1.0, progress=False, method="ccp")
    assert tr.success and len(tr.iterations) == 100
    assert tr.iterations.max() <= 5 * np.median(tr.iterations)


def test_every_step_of_a_disk_pile_at_rest_is_solved():
    """simulate(method="ccp") of the 136-disk pile (disk_pile_scene) for 2 s, its default solver
    ("auto"): every step SOLVED. With APGD alone, the steps of the pile at rest crawled (2,000 to
    5,700 iterations from t = 1.5 s) and 19 of the 200 stopped at 10,000 iterations; the
    interior-point method settles them in tens."""
    from mbdcp.mechanics import disk_pile_scene, simulate

    tr = simulate(disk_pile_scene(136), 0.01, 2.0, progress=False, method="ccp")
    assert tr.success and len(tr.statuses) == 200
    assert all(s == Status.SOLVED for s in tr.statuses)
    assert tr.iterations.max() < 2000


# ---- the interior-point method and auto ---------------------------------------------------------

def test_interior_point_and_auto_agree_with_apgd_on_velocity():
    d = granular_pile(10, 20, seed=3)
    ref = mbdcp.ccp(**d, method="apgd", tol=1e-11, max_iter=500_000)
    for method in ("ipm", "auto"):
        res = mbdcp.ccp(**d, method=method, tol=1e-11, max_iter=500_000)
        assert res.success and res.method == method and res.finished in ("ipm", "apgd")
        assert res.certificate is None
        np.testing.assert_allclose(res.v_next, ref.v_next, atol=1e-7)


@pytest.mark.parametrize("as_blocks", [False, True])
def test_interior_point_on_a_settled_pile(as_blocks):
    """The 150-sphere pile at rest where APGD's residual sat still (see below), with M as its
    diagonal blocks or as one sparse matrix: the answer meets the definition and agrees with APGD."""
    d = recorded_ccp("settled150_ccp.npz", "blocks" if as_blocks else "sparse")
    res = mbdcp.ccp(**d, method="ipm", tol=1e-10, max_iter=100_000)
    assert res.status == Status.SOLVED and res.residual <= 1e-10
    check_optimal(res, d)
    ref = mbdcp.ccp(**d, method="apgd", tol=1e-10, max_iter=100_000)
    np.testing.assert_allclose(res.v_next, ref.v_next, atol=1e-6 * np.abs(ref.v_next).max())
    warm = mbdcp.ccp(**d, method="ipm", tol=1e-10, max_iter=100_000, warm_start=res)
    assert warm.success and warm.iterations <= 2


def _squeezed(mu=0.5, gaps=(-0.01, -0.02)):
    """A unit particle overlapping two opposite walls (normals +z and -z, both gaps negative), tangents
    along x and y for both: no impulses can push it out of both, so the CCP has no solution."""
    Wn = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, -1.0]])
    Wt = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    return dict(M=np.eye(3), Wn=Wn, Wt=Wt, mu=mu, v=np.array([0.1, 0.0, 0.0]), h=0.01, p_ext=np.zeros(3),
                psi_n=np.array(gaps))


@pytest.mark.parametrize("method", ["ipm", "auto"])
def test_no_solution_gives_a_certificate(method):
    d = _squeezed()
    res = mbdcp.ccp(**d, method=method, tol=1e-9)
    assert res.status == Status.RAY_TERMINATION and not res.success
    assert "no solution exists" in res.message
    c = res.certificate
    assert c is not None and c.shape == (6,) and np.abs(c).max() == pytest.approx(1.0)
    P, Minv, p, _ = build(d)
    g = c.reshape(2, 3)
    assert np.all(np.linalg.norm(g[:, 1:], axis=1) <= 0.5 * g[:, 0] * (1 + 1e-12))   # d in K
    Nd = P.T @ Minv @ P @ c
    assert p @ c < -1.0                                                               # p.d < 0
    # any solution nu would satisfy (N nu + p).d >= 0, so ||nu|| >= -p.d / ||N d||: none of any usable size
    assert -(p @ c) >= 1e6 * np.linalg.norm(Nd)
    assert np.all(res.gamma == 0.0)
    # APGD decides it too, from the direction its iterates grow along (tests/test_ccp_certificate.py)
    assert mbdcp.ccp(**d, method="apgd", tol=1e-9, max_iter=2000).status == Status.RAY_TERMINATION


def test_a_solvable_squeeze_is_solved_not_certified():
    # the same particle with both gaps open: a solution (no impulse) exists
    res = mbdcp.ccp(**_squeezed(gaps=(0.01, 0.02)), method="ipm", tol=1e-10)
    assert res.success and res.certificate is None
    np.testing.assert_allclose(res.gamma, 0.0, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_newton_is_optimal_by_definition_and_agrees_with_apgd(seed):
    d = granular_pile(12, 24, seed=seed)
    res = mbdcp.ccp(**d, method="newton", tol=1e-9)
    assert res.success and res.residual <= 1e-9 and res.method == "newton"
    assert res.finished in ("newton", "apgd", "ipm")
    check_optimal(res, d)
    ref = mbdcp.ccp(**d, method="apgd", tol=1e-11, max_iter=500_000)
    np.testing.assert_allclose(res.v_next, ref.v_next, atol=1e-6 * max(1.0, np.abs(ref.v_next).max()))


def test_newton_on_a_singular_N_converges():
    """Step 83 of a 500-sphere settling pile (tests/data/pile500_step83_ccp.npz), from the last
    step's impulses: 3,993 impulses against 3,000 velocities, so N is singular and the solutions
    form a set. With a regularisation that falls tenfold after each full step alone, Newton stopped
    after 48 iterations without converging (APGD finished); kept at least proportional to the
    residual, it converges (about 30 iterations). The answer must pass the definition checks
    (sparse: M by its blocks)."""
    d = recorded_ccp("pile500_step83_ccp.npz", "blocks")
    res = mbdcp.ccp(**d, method="newton")
    assert res.success and res.finished == "newton" and res.iterations <= 45
    check_optimal(res, d)


def test_newton_on_a_settled_pile_takes_few_iterations():
    """The 150-sphere pile at rest where APGD's residual sat still: Newton's iterations stay few,
    from cold and from the answer (the warm start a simulation gives it)."""
    d = recorded_ccp("settled150_ccp.npz", "blocks")
    res = mbdcp.ccp(**d, method="newton", tol=1e-10)
    assert res.success and res.finished == "newton" and res.iterations <= 30
    check_optimal(res, d)
    warm = mbdcp.ccp(**d, method="newton", tol=1e-10, warm_start=res)
    assert warm.success and warm.iterations <= 2


def test_newton_with_joints_or_without_a_solution_hands_over():
    d = granular_pile(10, 20, seed=3)
    Wb = np.zeros((d["M"].shape[0], 1))
    Wb[0, 0] = 1.0
    res = mbdcp.ccp(**d, Wb=Wb, method="newton", tol=1e-9, max_iter=200_000)
    assert res.success and res.finished in ("apgd", "ipm") and abs((Wb.T @ res.v_next)[0]) <= 1e-8
    res = mbdcp.ccp(**_squeezed(), method="newton", tol=1e-9)
    assert res.status == Status.RAY_TERMINATION and res.certificate is not None and not res.success
