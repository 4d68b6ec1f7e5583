"""Coulomb friction and the CCP on the Delassus matrix: FCLib's residual computed here by definition,
closed forms per regime, problems built around a known solution, the FCLib and Siconos collections."""
import functools
import glob
import os
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mbdcp
from mbdcp import Status
from mbdcp.formulations.coulomb import _project_cone, fc_residual, local_solve

HERE = os.path.dirname(os.path.abspath(__file__))
FCLIB = sorted(glob.glob(os.path.join(HERE, "data", "fclib", "*.hdf5")))
SICONOS_FC = sorted(glob.glob(os.path.join(HERE, "data", "siconos", "FrictionContact", "*.dat")))
TOL = 1e-8
EXACT = 1e-12   # direct (closed-form) checks, relative to the data

# name -> (function, keywords): each FCLib problem is solved by each
METHODS = {
    "nsgs": (mbdcp.coulomb, {"method": "nsgs", "max_iter": 10_000}),
    "fixed_point": (mbdcp.coulomb, {"method": "fixed_point"}),
    "fixed_point_pgs": (mbdcp.coulomb, {"method": "fixed_point", "inner": "pgs", "max_iter": 30, "inner_max_iter": 1000}),
    "ccp_apgd": (mbdcp.ccp_local, {"method": "apgd"}),
    "ccp_pgs": (mbdcp.ccp_local, {"method": "pgs", "max_iter": 5000}),
}


# ---- the residual, written here from its definition -------------------------------------------------

def project_cone(mu, y):
    """Euclidean projection of each row y_i = (n, t...) onto {||t|| <= mu_i n}."""
    y = np.asarray(y, float)
    n, t = y[:, 0], y[:, 1:]
    nt = np.linalg.norm(t, axis=1)
    out = np.zeros_like(y)
    inside = nt <= mu * n
    polar = ~inside & (mu * nt <= -n)
    side = ~inside & ~polar
    out[inside] = y[inside]
    a = (n[side] + mu[side] * nt[side]) / (1 + mu[side] ** 2)
    out[side, 0] = a
    with np.errstate(invalid="ignore", divide="ignore"):
        out[side, 1:] = (mu[side] * a / np.where(nt[side] > 0, nt[side], 1.0))[:, None] * t[side]
    return out


def residual(W, q, mu, r, coulomb=True, d=3):
    """||r - Pi_K(r - û)||_2 / ||q||_2 with û = W r + q (+ mu ||u_T|| e_n)."""
    W = W.toarray() if sp.issparse(W) else np.asarray(W, float)
    q, r = np.asarray(q, float), np.asarray(r, float)
    mu = np.broadcast_to(np.asarray(mu, float), (len(q) // d,))
    u = (W @ r + q).reshape(-1, d)
    uh = u.copy()
    if coulomb:
        uh[:, 0] += mu * np.linalg.norm(u[:, 1:], axis=1)
    R = r.reshape(-1, d)
    nq = np.linalg.norm(q)
    return np.linalg.norm(R - project_cone(mu, R - uh)) / (nq if nq > 0 else 1.0)


def test_residual_helper_matches_definition(rng):
    W = rng.standard_normal((9, 9))
    q, r, mu = rng.standard_normal(9), rng.standard_normal(9), np.array([0.3, 0.0, 1.2])
    for coulomb in (True, False):
        assert fc_residual(W, q, mu, r, coulomb=coulomb) == pytest.approx(residual(W, q, mu, r, coulomb), rel=1e-12)


# ---- FCLib collection --------------------------------------------------------------------------------

@functools.cache
def fclib_local(path):
    """The local problem of an FCLib file (global ones reduced); None for rolling friction."""
    io = pytest.importorskip("mbdcp.io")
    pytest.importorskip("h5py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Capsules' asymmetric W, one-triangle M
        p = io.read_fclib(path).problem
    if isinstance(p, io.GlobalProblem):
        if p.mu_r is not None:
            return None
        p = p.to_local()
    return p


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("path", FCLIB, ids=[os.path.basename(p)[:24] for p in FCLIB])
def test_fclib_problem(path, method):
    p = fclib_local(path)
    if p is None:
        pytest.skip("rolling friction (spacedim 5) has no local Coulomb problem here")
    fn, kw = METHODS[method]
    res = fn(p.W, p.q, p.mu, tol=TOL, **kw)
    true = residual(p.W, p.q, p.mu, res.r, coulomb=fn is mbdcp.coulomb)
    np.testing.assert_allclose(res.u, p.W @ res.r + p.q, rtol=0, atol=1e-12 * (np.abs(p.q).max() + 1e-300) + 1e-300)
    # the residual reported is the true one, up to rounding in u = W r + q
    rounding = 1e-12 * (np.linalg.norm(abs(p.W) @ np.abs(res.r)) + np.linalg.norm(p.q)) / np.linalg.norm(p.q)
    assert res.residual == pytest.approx(true, rel=1e-6, abs=rounding)
    if res.success:
        assert res.status == Status.SOLVED and true <= TOL * (1 + 1e-9)
    else:
        # an honest status: the limit was reached above the tolerance
        assert res.status == Status.MAX_ITERATIONS and true > TOL
    assert len(res.history) == res.iterations
    assert res.local_failures == 0


def test_default_method_solves_every_fclib_problem():
    # The fixed point with warm-started APGD reaches 1e-8 on every local problem of the collection,
    # including the two where Gauss-Seidel (ours and Siconos' fc3d_nsgs alike) stalls.
    solved = 0
    for path in FCLIB:
        p = fclib_local(path)
        if p is None:
            continue
        res = mbdcp.coulomb(p.W, p.q, p.mu, tol=TOL)
        assert res.success, os.path.basename(path)
        assert residual(p.W, p.q, p.mu, res.r) <= TOL * (1 + 1e-9)
        solved += 1
    assert solved == 7


def test_problem_objects_are_accepted():
    io = pytest.importorskip("mbdcp.io")
    pytest.importorskip("h5py")
    path = os.path.join(HERE, "data", "fclib", "LMGC_GlobalFrictionContactProblem00046.hdf5")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = io.read_fclib(path).problem
    local = g.to_local()
    a = mbdcp.coulomb(g, method="nsgs")
    b = mbdcp.coulomb(local.W, local.q, local.mu, method="nsgs")
    assert a.success and np.array_equal(a.r, b.r)
    c = mbdcp.ccp_local(local)
    assert c.success and residual(local.W, local.q, local.mu, c.r, coulomb=False) <= TOL


def test_asymmetric_capsules_solved_with_w_as_given():
    # Capsules' W is asymmetric (1e-3 relative). Every method must solve the problem with W itself:
    # the symmetric part's solution is not one (so a silent symmetrisation would fail here).
    p = fclib_local(os.path.join(HERE, "data", "fclib", "Capsules-i125-1213.hdf5"))
    W = p.W.toarray()
    assert np.abs(W - W.T).max() > 1e-4 * np.abs(W).max()
    S = 0.5 * (W + W.T)
    sym = mbdcp.coulomb(S, p.q, p.mu, method="nsgs", tol=1e-10)
    assert sym.success and residual(W, p.q, p.mu, sym.r) > 100 * TOL
    for kw in ({"method": "nsgs"}, {"method": "fixed_point", "inner": "apgd"}):
        res = mbdcp.coulomb(p.W, p.q, p.mu, tol=TOL, **kw)
        assert res.success and residual(W, p.q, p.mu, res.r) <= TOL * (1 + 1e-9)
    ccp = mbdcp.ccp_local(p.W, p.q, p.mu, method="apgd", tol=TOL)
    assert ccp.success and residual(W, p.q, p.mu, ccp.r, coulomb=False) <= TOL * (1 + 1e-9)


# ---- Siconos test problems (3-D and 2-D) --------------------------------------------------------------

@pytest.mark.parametrize("path", SICONOS_FC, ids=[os.path.basename(p)[:-4] for p in SICONOS_FC])
def test_siconos_local_problems(path):
    from mbdcp import io

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = io.read_siconos_fc(path)
    if isinstance(p, io.GlobalProblem):
        p = p.to_local()
    d = p.spacedim
    for method in ("nsgs", "fixed_point"):
        res = mbdcp.coulomb(p.W, p.q, p.mu, method=method, spacedim=d, tol=TOL)
        assert res.r.shape == (d * p.n_contacts,)
        true = residual(p.W, p.q, p.mu, res.r, d=d)
        assert res.residual == pytest.approx(true, rel=1e-6, abs=1e-13)
        assert res.success and true <= TOL * (1 + 1e-9), (method, true)
    res = mbdcp.ccp_local(p.W, p.q, p.mu, spacedim=d, tol=TOL)
    assert res.success and residual(p.W, p.q, p.mu, res.r, coulomb=False, d=d) <= TOL * (1 + 1e-9)


# ---- one contact: the three regimes in closed form ----------------------------------------------------

A_DIAG = np.diag([2.0, 0.5, 0.5])   # normal and tangential inverse masses (isotropic, decoupled)


@pytest.mark.parametrize("coulomb", [True, False])
def test_takeoff(coulomb):
    q = np.array([0.3, 0.2, -0.1])   # separating normal velocity: for Coulomb r = 0 whatever u_T
    r, case = local_solve(A_DIAG, q, 0.4, coulomb=coulomb)
    if coulomb:
        assert case == "takeoff" and np.array_equal(r, np.zeros(3))
    else:
        # the CCP needs u_n >= mu ||u_T|| = 0.4 * 0.2236 = 0.089 < 0.3: take-off as well
        assert case == "takeoff" and np.array_equal(r, np.zeros(3))
    res = (mbdcp.coulomb if coulomb else mbdcp.ccp_local)(A_DIAG, q, 0.4)
    assert res.success and np.array_equal(res.r, np.zeros(3)) and np.array_equal(res.u, q)


def test_ccp_does_not_take_off_where_coulomb_does():
    q = np.array([0.05, 1.0, 0.0])   # 0 <= u_n < mu ||u_T||: Coulomb flies, the CCP pushes
    assert local_solve(A_DIAG, q, 0.5)[1] == "takeoff"
    r, case = local_solve(A_DIAG, q, 0.5, coulomb=False)
    # slide of the CCP: r_n = (mu ||q_T|| - q_n) / (a + mu^2 b), closed form below
    rn = (0.5 * 1.0 - 0.05) / (2.0 + 0.25 * 0.5)
    assert case == "slide"
    np.testing.assert_allclose(r, [rn, -0.5 * rn, 0.0], atol=EXACT)


@pytest.mark.parametrize("coulomb", [True, False])
def test_stick(coulomb):
    q = np.array([-1.0, 0.05, -0.02])   # ||q_T|| / b = 0.108 <= mu (-q_n) / a = 0.2
    r, case = local_solve(A_DIAG, q, 0.4, coulomb=coulomb)
    assert case == "stick"
    np.testing.assert_allclose(r, [0.5, -0.1, 0.04], atol=EXACT)
    res = (mbdcp.coulomb if coulomb else mbdcp.ccp_local)(A_DIAG, q, 0.4, tol=1e-12)
    assert res.success
    np.testing.assert_allclose(res.u, 0.0, atol=1e-10)


def test_slide_coulomb_closed_form():
    a, b, mu = 2.0, 0.5, 0.3
    q = np.array([-1.0, 0.6, 0.8])      # ||q_T|| = 1
    r, case = local_solve(A_DIAG, q, mu)
    rn = 1.0 / a                        # u_n = a r_n + q_n = 0
    d = q[1:] / 1.0                     # sliding direction: friction does not turn it (isotropic)
    assert case == "slide"
    np.testing.assert_allclose(r, np.r_[rn, -mu * rn * d], atol=EXACT)
    u = A_DIAG @ r + q
    np.testing.assert_allclose(u, np.r_[0.0, (1 - mu * rn * b) * d], atol=EXACT)


def test_slide_ccp_closed_form_is_the_bowling_ball():
    a, b, mu = 2.0, 0.5, 0.3
    q = np.array([-1.0, 0.6, 0.8])
    r, case = local_solve(A_DIAG, q, mu, coulomb=False)
    rn = (mu * 1.0 + 1.0) / (a + mu * mu * b)
    sigma = 1.0 - mu * b * rn
    assert case == "slide"
    np.testing.assert_allclose(r, np.r_[rn, -mu * rn * q[1:]], atol=EXACT)
    np.testing.assert_allclose(A_DIAG @ r + q, np.r_[mu * sigma, sigma * q[1:]], atol=EXACT)  # lifts off at mu ||u_T||


def random_spd(n, rng, cond=10.0):
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return Q @ np.diag(np.geomspace(1.0, cond, n)) @ Q.T


def built_around(W, mu, regimes, rng, coulomb=True):
    """q such that r (chosen per contact in its regime) with u = W r + q solves the problem."""
    n_c = len(regimes)
    r, u = np.zeros(3 * n_c), np.zeros(3 * n_c)
    for i, kind in enumerate(regimes):
        d = rng.standard_normal(2)
        d /= np.linalg.norm(d)
        if kind == "takeoff":
            u[3 * i:3 * i + 3] = [abs(rng.standard_normal()) + 0.1, *rng.standard_normal(2)]
            if not coulomb:
                u[3 * i] += mu[i] * np.linalg.norm(u[3 * i + 1:3 * i + 3])
        elif kind == "stick":
            rn = abs(rng.standard_normal()) + 0.5
            r[3 * i:3 * i + 3] = [rn, *(0.9 * mu[i] * rn * rng.uniform(0, 1) * d)]
        else:
            rn, sigma = abs(rng.standard_normal()) + 0.5, abs(rng.standard_normal()) + 0.1
            r[3 * i:3 * i + 3] = [rn, *(mu[i] * rn * d)]
            u[3 * i:3 * i + 3] = [0.0 if coulomb else mu[i] * sigma, *(-sigma * d)]
    return u - W @ r, r


@pytest.mark.parametrize("coulomb", [True, False])
@pytest.mark.parametrize("kind", ["takeoff", "stick", "slide"])
def test_local_solve_coupled_block_built_around_solution(kind, coulomb, rng):
    for _ in range(20):
        A = random_spd(3, rng, cond=3.0)
        A[0, 1] += 0.05  # any block: no symmetry needed
        q, r_true = built_around(A, np.array([0.3]), [kind], rng, coulomb)
        r, case = local_solve(A, q, 0.3, coulomb=coulomb)
        assert case == kind
        np.testing.assert_allclose(r, r_true, atol=1e-10 * (1 + np.abs(r_true).max()))


@pytest.mark.parametrize("method", ["nsgs", "fixed_point"])
@pytest.mark.parametrize("seed", range(4))
def test_multi_contact_built_around_solution(method, seed):
    rng = np.random.default_rng(seed)
    n_c = 8
    W = random_spd(3 * n_c, rng, cond=20.0)
    mu = rng.uniform(0.1, 0.6, n_c)
    q, _ = built_around(W, mu, rng.choice(["takeoff", "stick", "slide"], n_c), rng)
    res = mbdcp.coulomb(W, q, mu, method=method, tol=1e-10, max_iter=20_000)
    assert res.success and residual(W, q, mu, res.r) <= 1e-10 * (1 + 1e-9)
    q2, _ = built_around(W, mu, rng.choice(["takeoff", "stick", "slide"], n_c), rng, coulomb=False)
    for m in ("apgd", "pgs"):
        res = mbdcp.ccp_local(W, q2, mu, method=m, tol=1e-10, max_iter=50_000)
        assert res.success and residual(W, q2, mu, res.r, coulomb=False) <= 1e-10 * (1 + 1e-9)


def test_frictionless_contact():
    r, case = local_solve(A_DIAG, [-1.0, 0.3, 0.0], 0.0)
    assert case == "slide" and np.allclose(r, [0.5, 0.0, 0.0], atol=EXACT)


# ---- CCP and Coulomb: equal when every contact sticks, not when one slides ----------------------------

def box_on_plane(push, mu=0.5, h=0.01, m=2.0, g=9.81):
    """A box (half sizes 0.3, 0.2, 0.1) resting on z = 0 on its four bottom corners, pushed along x
    at its centre: the global problem M v = H r + f, u = H^T v (one step of length h from rest)."""
    from mbdcp import io

    J = m / 3 * np.array([0.2 ** 2 + 0.1 ** 2, 0.3 ** 2 + 0.1 ** 2, 0.3 ** 2 + 0.2 ** 2])
    M = np.diag([m, m, m, *J])
    cols = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            p = np.array([0.3 * sx, 0.2 * sy, -0.1])
            for d in (np.array([0.0, 0, 1]), np.array([1.0, 0, 0]), np.array([0, 1.0, 0])):
                cols.append(np.r_[d, np.cross(p, d)])
    H = np.array(cols).T
    f = h * np.array([push, 0.0, -m * g, 0.0, 0.0, 0.0])
    return io.GlobalProblem(sp.csc_matrix(M), sp.csc_matrix(H), f, np.zeros(12), np.full(4, mu), 3), M, H, f


def test_ccp_and_coulomb_coincide_when_every_contact_sticks():
    prob, M, H, f = box_on_plane(push=0.2 * 2.0 * 9.81)     # 0.2 m g < mu m g: the box stays put
    local = prob.to_local()
    coul = mbdcp.coulomb(prob, tol=1e-10)
    ccp = mbdcp.ccp_local(prob, tol=1e-10)
    assert coul.success and ccp.success
    scale = np.abs(local.q).max()
    for res in (coul, ccp):
        np.testing.assert_allclose(res.u, 0.0, atol=1e-8 * scale)                       # every contact sticks
        np.testing.assert_allclose(np.linalg.solve(M, H @ res.r + f), 0.0, atol=1e-8 * scale)  # v_next = 0
    np.testing.assert_allclose(H @ coul.r, H @ ccp.r, atol=1e-8 * np.abs(f).max())       # the same net impulse
    # each answer solves the other problem too (u = 0 makes the two conditions the same)
    assert residual(local.W, local.q, local.mu, coul.r, coulomb=False) <= 1e-8
    assert residual(local.W, local.q, local.mu, ccp.r, coulomb=True) <= 1e-8


def test_ccp_and_coulomb_differ_when_the_box_slides():
    prob, M, H, f = box_on_plane(push=1.0 * 2.0 * 9.81)     # m g > mu m g: it slides
    coul = mbdcp.coulomb(prob, tol=1e-10)
    ccp = mbdcp.ccp_local(prob, tol=1e-10)
    v_coul = np.linalg.solve(M, H @ coul.r + f)
    v_ccp = np.linalg.solve(M, H @ ccp.r + f)
    assert v_coul[0] > 0 and abs(v_coul[2]) < 1e-9                    # slides on the plane
    assert v_ccp[2] == pytest.approx(0.5 * v_ccp[0], rel=1e-6)        # lifts off at mu v_T


# ---- warm start, statuses, bad input, threads ---------------------------------------------------------

def test_warm_start():
    p = fclib_local(os.path.join(HERE, "data", "fclib", "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5"))
    for method in ("nsgs", "fixed_point"):
        cold = mbdcp.coulomb(p.W, p.q, p.mu, method=method, tol=1e-9)
        rough = mbdcp.coulomb(p.W, p.q, p.mu, method=method, tol=1e-5)
        warm = mbdcp.coulomb(p.W, p.q, p.mu, method=method, tol=1e-9, warm_start=rough)
        again = mbdcp.coulomb(p.W, p.q, p.mu, method=method, tol=1e-9, warm_start=cold.r.reshape(-1, 3))
        assert cold.success and warm.success and again.success
        assert warm.iterations < cold.iterations
        assert again.iterations == 0 and np.array_equal(again.r, cold.r)


def test_limit_is_a_status():
    p = fclib_local(os.path.join(HERE, "data", "fclib", "local_problem_test.hdf5"))
    res = mbdcp.coulomb(p.W, p.q, p.mu, method="nsgs", max_iter=7)
    assert res.status == Status.MAX_ITERATIONS and not res.success and res.iterations == 7
    assert res.residual == pytest.approx(residual(p.W, p.q, p.mu, res.r), rel=1e-9)
    assert np.all(np.diff(res.history) != 0) and len(res.history) == 7


def test_zero_contacts():
    res = mbdcp.coulomb(np.zeros((0, 0)), np.zeros(0), np.zeros(0))
    assert res.success and res.r.shape == (0,)


def test_dense_and_sparse_agree():
    rng = np.random.default_rng(5)
    W = random_spd(12, rng)
    q, _ = built_around(W, np.full(4, 0.3), ["slide", "stick", "takeoff", "slide"], rng)
    a = mbdcp.coulomb(W, q, 0.3, method="nsgs")
    b = mbdcp.coulomb(sp.csc_matrix(W), q, 0.3, method="nsgs")
    assert a.success and np.allclose(a.r, b.r, atol=1e-12)


@pytest.mark.parametrize("call, words", [
    (lambda: mbdcp.coulomb(np.eye(4), np.zeros(4), 0.3), "W must be square of size"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(2), 0.3), "q must have shape"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(3), -0.3), "mu must be nonnegative"),
    (lambda: mbdcp.coulomb(np.eye(6), np.zeros(6), [0.3]), "mu must have shape (n_c,) = (2,)"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(3), 0.3, method="pgs"), "method must be one of 'auto', 'nsgs'"),
    (lambda: mbdcp.ccp_local(np.eye(3), np.zeros(3), 0.3, method="nsgs"), "method must be one of 'apgd'"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(3), 0.3, inner="jacobi"), "inner must be"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(3), 0.3, tol=0), "tol must be positive"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(3), 0.3, max_iter=0), "max_iter must be at least 1"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(3), 0.3, warm_start=np.zeros(2)), "warm_start must have shape"),
    (lambda: mbdcp.coulomb(np.full((3, 3), np.nan), np.zeros(3), 0.3), "W must hold finite values"),
    (lambda: mbdcp.coulomb(np.eye(3), [0, np.inf, 0], 0.3), "q must hold finite values"),
    (lambda: mbdcp.coulomb(np.eye(3), np.zeros(3), 0.3, spacedim=4), "spacedim must be 2 or 3"),
    (lambda: local_solve(np.eye(2), np.zeros(3), 0.3), "A must have shape"),
    (lambda: local_solve(np.eye(3), np.zeros(3), -1.0), "mu must be nonnegative"),
])
def test_bad_input(call, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_type_errors():
    with pytest.raises(TypeError, match="W is required"):
        mbdcp.coulomb(None, np.zeros(3), 0.3)
    with pytest.raises(TypeError, match="q must hold real numbers"):
        mbdcp.coulomb(np.eye(3), ["a", "b", "c"], 0.3)
    with pytest.raises(TypeError, match="mu must be a real number"):
        local_solve(np.eye(3), np.zeros(3), "0.3")


def test_problem_object_with_q_is_rejected():
    io = pytest.importorskip("mbdcp.io")
    p = io.LocalProblem(sp.eye(3), np.zeros(3), [0.3], 3)
    with pytest.raises(ValueError, match="q and mu must be None"):
        mbdcp.coulomb(p, np.zeros(3), 0.3)


def test_threads_deterministic_and_gil_released():
    p = fclib_local(os.path.join(HERE, "data", "fclib", "Capsules-i125-1213.hdf5"))
    serial = mbdcp.coulomb(p.W, p.q, p.mu, method="nsgs").r
    out, ticks, done = [None] * 3, [], threading.Event()

    def work(k):
        out[k] = mbdcp.coulomb(p.W, p.q, p.mu, method="nsgs").r

    def ticker():
        while not done.is_set():
            ticks.append(1)

    tick = threading.Thread(target=ticker)
    tick.start()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    tick.join()
    assert all(np.array_equal(o, serial) for o in out)
    assert len(ticks) > 100


def test_docstring_examples():
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("mbdcp.coulomb"), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_case_names_agree_with_core():
    from mbdcp.infrastructure import _core

    assert _core.FC_CASES == ("takeoff", "stick", "slide", "best_effort")
    assert set(_core.FC_METHODS) == {"nsgs", "fixed_point", "pgs", "apgd", "newton", "auto"}
    # the method tables come from C's one list per family: names by value, in the order of the enum
    assert list(_core.FC_METHODS.values()) == list(range(6)) and _core.FC_METHOD_NAMES == tuple(_core.FC_METHODS)
    assert _core.CCP_METHODS == {"apgd": 0, "pjacobi": 1, "pgs": 2, "ipm": 3, "auto": 4}


def test_the_default_iteration_limits_are_the_cores():
    # the fixed point and Newton: MBDCP_FC_OUTER_MAX_ITER iterations; Gauss-Seidel: the settings' max_iter
    from mbdcp.infrastructure import _core

    assert (_core.DEFAULTS["fc"]["outer_max_iter"], _core.DEFAULTS["fc"]["max_iter"]) == (200, 10_000)
    W = np.array([[1.0, 0, 0], [0, 1.0, 0.9], [0, -0.9, 1.0]])
    res = mbdcp.coulomb(W, np.array([-1.0, 1.0, 0.5]), 0.5, method="fixed_point", tol=1e-300)  # a tol never met
    assert res.status == mbdcp.Status.MAX_ITERATIONS and res.iterations == 200


# ---- Newton and auto ------------------------------------------------------------------------------------

def siconos_local(path):
    from mbdcp import io

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = io.read_siconos_fc(path)
    return p.to_local() if isinstance(p, io.GlobalProblem) else p


ALL_LOCAL = [p for p in FCLIB if "Chute" not in p] + SICONOS_FC


def local_problem(path):
    return fclib_local(path) if path.endswith(".hdf5") else siconos_local(path)


@pytest.mark.parametrize("method", ["newton", "auto"])
@pytest.mark.parametrize("path", ALL_LOCAL, ids=[os.path.basename(p)[:24] for p in ALL_LOCAL])
def test_newton_and_auto_solve_every_collection_problem(path, method):
    # every FCLib problem at hand and every Siconos one (2-D and 3-D), judged by the residual
    # computed here from its definition
    p = local_problem(path)
    d = p.spacedim
    res = mbdcp.coulomb(p.W, p.q, p.mu, method=method, spacedim=d, tol=TOL)
    true = residual(p.W, p.q, p.mu, res.r, d=d)
    assert res.success and res.status == Status.SOLVED, (res.status, res.message, true)
    assert true <= TOL * (1 + 1e-9)
    assert res.r.shape == res.u.shape == (d * p.n_contacts,)
    np.testing.assert_allclose(res.u, p.W @ res.r + p.q, rtol=0, atol=1e-12 * np.abs(p.q).max() + 1e-300)
    rounding = 1e-12 * (np.linalg.norm(abs(p.W) @ np.abs(res.r)) + np.linalg.norm(p.q)) / np.linalg.norm(p.q)
    assert res.residual == pytest.approx(true, rel=1e-6, abs=rounding)
    assert len(res.history) == res.iterations
    assert res.method in (("nsgs", "newton", "fixed_point") if method == "auto" else ("newton",))


def test_auto_is_the_default_and_names_the_method_that_finished():
    # one contact: Gauss-Seidel's exact local solve ends it in one sweep
    one = mbdcp.coulomb(np.eye(3), [-1.0, 2.0, 0.0], 0.5)
    assert one.success and one.method == "nsgs" and one.iterations == 1
    # Gauss-Seidel stalls near 2e-4 here (as Siconos' fc3d_nsgs does): auto goes on with Newton
    p = fclib_local(os.path.join(HERE, "data", "fclib", "local_problem_test.hdf5"))
    res = mbdcp.coulomb(p.W, p.q, p.mu)
    gs = mbdcp.coulomb(p.W, p.q, p.mu, method="nsgs", max_iter=2000)
    assert not gs.success and res.success and res.method == "newton"
    assert residual(p.W, p.q, p.mu, res.r) <= TOL * (1 + 1e-9)
    assert len(res.history) == res.iterations


def test_newton_and_auto_for_the_ccp():
    # Newton on the CCP's Alart-Curnier function converges on these; it can stall on piles with a
    # rank-deficient W (spheres-in-a-box), where auto goes on with Gauss-Seidel or APGD
    for path in ALL_LOCAL:
        p = local_problem(path)
        name = os.path.basename(path)
        auto = mbdcp.ccp_local(p.W, p.q, p.mu, method="auto", spacedim=p.spacedim)
        assert auto.success and residual(p.W, p.q, p.mu, auto.r, coulomb=False, d=p.spacedim) <= TOL * (1 + 1e-9), name
        assert auto.method in ("pgs", "newton", "apgd", "fixed_point")
        if name.startswith(("Box_Stacks", "local_problem", "FC2D", "FC3D", "Rover", "Confeti")):
            res = mbdcp.ccp_local(p.W, p.q, p.mu, method="newton", spacedim=p.spacedim)
            true = residual(p.W, p.q, p.mu, res.r, coulomb=False, d=p.spacedim)
            assert res.success and true <= TOL * (1 + 1e-9), (name, res.status, true)


@pytest.mark.parametrize("seed", range(6))
def test_newton_on_problems_built_around_a_solution(seed):
    rng = np.random.default_rng(100 + seed)
    n_c = 12
    W = random_spd(3 * n_c, rng, cond=50.0)
    mu = rng.uniform(0.1, 1.0, n_c)
    q, _ = built_around(W, mu, rng.choice(["takeoff", "stick", "slide"], n_c), rng)
    for Wx in (W, sp.csr_matrix(W)):  # dense and sparse W
        res = mbdcp.coulomb(Wx, q, mu, method="newton", tol=1e-12)
        assert res.success and residual(W, q, mu, res.r) <= 1e-12 * (1 + 1e-9)
    q2, _ = built_around(W, mu, rng.choice(["takeoff", "stick", "slide"], n_c), rng, coulomb=False)
    res = mbdcp.ccp_local(W, q2, mu, method="newton", tol=1e-12)
    assert res.success and residual(W, q2, mu, res.r, coulomb=False) <= 1e-12 * (1 + 1e-9)


def test_newton_2d_matches_3d_embedding():
    p = siconos_local(os.path.join(HERE, "data", "siconos", "FrictionContact", "FC2D_SliderCrankLagrangian00000.dat"))
    res = mbdcp.coulomb(p.W, p.q, p.mu, method="newton", spacedim=2)
    assert res.success and res.r.shape == (4,)
    assert residual(p.W, p.q, p.mu, res.r, d=2) <= TOL * (1 + 1e-9)
    # the same problem as a 3-D one with a decoupled second tangent
    W = p.W.toarray()
    W3 = np.zeros((6, 6))
    idx = [0, 1, 3, 4]
    W3[np.ix_(idx, idx)] = W
    W3[2, 2] = W3[5, 5] = 1.0
    q3 = np.zeros(6)
    q3[idx] = p.q
    res3 = mbdcp.coulomb(W3, q3, p.mu, method="newton")
    assert res3.success
    np.testing.assert_allclose(res3.r[idx], res.r, atol=1e-9 * np.abs(res.r).max())


def test_warm_newton_from_its_answer_takes_no_iteration():
    p = fclib_local(os.path.join(HERE, "data", "fclib", "Capsules-i125-1213.hdf5"))
    res = mbdcp.coulomb(p.W, p.q, p.mu, method="newton")
    again = mbdcp.coulomb(p.W, p.q, p.mu, method="newton", warm_start=res)
    assert res.success and again.success and again.iterations == 0 and np.array_equal(again.r, res.r)


# ---- degenerate W: singular, zero or rank-deficient (issue: no solution is never SOLVED) ----------------

def ld_residual(W, q, mu, r, coulomb=True, d=3):
    """||r - Pi_K(r - û)||_2 / ||q||_2 in extended precision (np.longdouble), from the definition."""
    L = np.longdouble
    W = np.asarray(W.toarray() if sp.issparse(W) else W, dtype=L)
    q, r, mu = np.asarray(q, dtype=L), np.asarray(r, dtype=L), np.asarray(mu, dtype=L)
    u = (W @ r + q).reshape(-1, d)
    R = r.reshape(-1, d)
    uh = u.copy()
    if coulomb:
        uh[:, 0] += mu * np.sqrt((u[:, 1:] ** 2).sum(axis=1))
    proj = _project_cone(R - uh, mu)  # NumPy, in long double: independent of the C core
    nq = np.sqrt((q ** 2).sum())
    return float(np.sqrt(((R - proj) ** 2).sum()) / (nq if nq > 0 else 1))


def planted_2d_or_3d(W, mu, d, rng, coulomb):
    """q with a solution r of the Coulomb problem (or the CCP) built per contact, in 2-D or 3-D."""
    n_c = len(mu)
    r, u = np.zeros((n_c, d)), np.zeros((n_c, d))
    for i in range(n_c):
        s = rng.standard_normal(d - 1)
        s /= np.linalg.norm(s)
        kind = rng.integers(3)
        if kind == 0:  # take-off
            u[i] = [abs(rng.standard_normal()) + 0.1, *rng.standard_normal(d - 1)]
            if not coulomb:
                u[i, 0] += mu[i] * np.linalg.norm(u[i, 1:])
        elif kind == 1:  # stick
            rn = abs(rng.standard_normal()) + 0.5
            r[i] = [rn, *(0.9 * mu[i] * rn * rng.uniform() * s)]
        else:  # slide
            rn, sigma = abs(rng.standard_normal()) + 0.5, abs(rng.standard_normal()) + 0.1
            r[i] = [rn, *(mu[i] * rn * s)]
            u[i] = [0.0 if coulomb else mu[i] * sigma, *(-sigma * s)]
    return u.ravel() - W @ r.ravel(), r.ravel()


def degenerate_instance(seed):
    """A small problem with a singular, zero or rank-deficient W: (W, q, mu, d, kind, expected), expected
    one of "zero_solution" (r = 0 solves it), "no_solution" (a contact's normal row of W is zero and its
    q_n < 0: u_n < 0 whatever r), "solvable" (a planted solution) or "unknown"."""
    rng = np.random.default_rng(seed)
    d = 2 if seed % 5 == 0 else 3
    n_c = int(rng.integers(1, 6))
    m = d * n_c
    scale = 10.0 ** rng.uniform(-3, 3)
    mu = np.where(rng.uniform(size=n_c) < 0.15, 0.0, rng.uniform(0.05, 1.2, n_c))
    kind = ("zero", "rank", "planted", "planted", "no_solution", "zero_solution")[seed % 6]
    B = rng.standard_normal((m, int(rng.integers(0, m)))) if kind != "zero" else np.zeros((m, 0))
    if kind == "no_solution":
        i = int(rng.integers(n_c))
        B[d * i] = 0.0  # contact i's normal row and column of W vanish
    W = scale * (B @ B.T)
    coulomb = bool(rng.integers(2))
    if kind == "planted":
        q, _ = planted_2d_or_3d(W, mu, d, rng, coulomb)
        return W, q, mu, d, coulomb, "solvable"
    q = scale * rng.standard_normal(m)
    if kind == "no_solution":
        q[d * i] = -abs(q[d * i]) - 0.1 * scale
        return W, q, mu, d, coulomb, "no_solution"
    if kind == "zero_solution":
        W = np.zeros((m, m))
        q.reshape(-1, d)[:, 0] = np.abs(q.reshape(-1, d)[:, 0]) + (
            0 if coulomb else mu * np.abs(q.reshape(-1, d)[:, 1:]).sum(axis=1))
        return W, q, mu, d, coulomb, "zero_solution"
    return W, q, mu, d, coulomb, "unknown"


DEGENERATE_SOLVERS = {
    True: [("auto", {"max_iter": 2000}), ("nsgs", {"max_iter": 2000}), ("newton", {}),
           ("fixed_point", {"max_iter": 30, "inner_max_iter": 300})],
    False: [("auto", {"max_iter": 2000}), ("pgs", {"max_iter": 2000}), ("newton", {}), ("apgd", {"max_iter": 3000})],
}


def check_certificate(W, q, mu, d, cert, coulomb):
    """The certificate's promise: c in K, -W^T c in K* (up to rounding), q.c < 0 (and c_T = 0 for
    the Coulomb problem)."""
    C = cert.reshape(-1, d)
    assert np.all(C[:, 0] >= 0) and np.all(np.linalg.norm(C[:, 1:], axis=1) <= mu * C[:, 0] * (1 + 1e-12) + 1e-300)
    if coulomb:
        assert np.all(C[:, 1:] == 0)
    z = -(W.T @ cert).reshape(-1, d)
    tol = 1e-12 * (np.abs(W).max() + 1e-300) * np.abs(cert).sum()
    zt = np.linalg.norm(z[:, 1:], axis=1)
    assert np.all(np.where(mu > 0, mu * zt <= z[:, 0] + tol, z[:, 0] >= -tol))  # -W^T c in K* = {z_n >= mu ||z_T||}
    assert q @ cert < 0


@pytest.mark.parametrize("block", range(8))
def test_degenerate_w_never_gives_a_false_solved(block):
    # 8 blocks of 250 seeded instances (2,000 in all), each solved by four methods; every SOLVED is
    # judged in extended precision by the definition, every certificate by its promise
    counts = {"solved": 0, "false": 0, "ray": 0}
    for seed in range(250 * block, 250 * (block + 1)):
        W, q, mu, d, coulomb, expected = degenerate_instance(seed)
        fn = mbdcp.coulomb if coulomb else mbdcp.ccp_local
        for method, kw in DEGENERATE_SOLVERS[coulomb]:
            res = fn(W, q, mu, method=method, spacedim=d, **kw)
            assert np.all(np.isfinite(res.r)) and np.all(np.isfinite(res.u))
            if res.success:
                counts["solved"] += 1
                true = ld_residual(W, q, mu, res.r, coulomb, d)
                assert true <= TOL * (1 + 1e-6), (seed, method, true)
                assert expected != "no_solution", (seed, method)
            if expected == "zero_solution":
                assert res.success and not np.any(res.r), (seed, method, res.status)
            if expected == "no_solution":
                assert res.status == Status.RAY_TERMINATION and "no solution" in res.message, (seed, method, res.status)
            if res.status == Status.RAY_TERMINATION:
                counts["ray"] += 1
                assert "no solution" in res.message
                if res.certificate is not None:
                    check_certificate(W, q, mu, d, res.certificate, coulomb)
    assert counts["solved"] > 0 and counts["ray"] > 0


def test_degenerate_planted_problems_are_mostly_solved_by_auto():
    solved = total = 0
    for seed in range(2, 1200, 6):
        W, q, mu, d, coulomb, expected = degenerate_instance(seed)
        assert expected == "solvable"
        res = (mbdcp.coulomb if coulomb else mbdcp.ccp_local)(W, q, mu, method="auto", spacedim=d)
        total += 1
        solved += res.success
        if res.success:
            assert ld_residual(W, q, mu, res.r, coulomb, d) <= TOL * (1 + 1e-6)
    assert solved >= 0.9 * total, (solved, total)


def test_issue_examples_zero_w():
    # u = q for every r: q_n < 0 leaves no solution; the huge r that hid in rounding is not SOLVED
    for fn, methods in ((mbdcp.ccp_local, ("apgd", "pgs", "newton", "auto")),
                        (mbdcp.coulomb, ("auto", "nsgs", "newton", "fixed_point"))):
        for method in methods:
            res = fn(np.zeros((3, 3)), [-1.0, 0.3, 0.0], 0.5, method=method)
            assert res.status == Status.RAY_TERMINATION and not res.success, (fn.__name__, method)
            assert res.message.startswith("no solution exists")
            assert res.residual > 0.5 and res.certificate is not None
            check_certificate(np.zeros((3, 3)), np.array([-1.0, 0.3, 0.0]), np.array([0.5]), 3, res.certificate,
                              fn is mbdcp.coulomb)
        # r = 0 when it is the solution
        ok = fn(np.zeros((3, 3)), [1.0, 0.3, 0.0], 0.5, method=methods[0])
        assert ok.success and np.array_equal(ok.r, np.zeros(3)) and ok.iterations == 0


def test_residual_is_not_normalised_by_r():
    # the same point scaled up: the residual grows with the violation, it is not divided by ||r||
    W, q = np.zeros((3, 3)), np.array([-1.0, 0.3, 0.0])
    small = fc_residual(W, q, 0.5, [1.0, 0.0, 0.0], coulomb=False)
    big = fc_residual(W, q, 0.5, [1e6, 0.0, 0.0], coulomb=False)
    assert small == pytest.approx(big, rel=1e-9) and small > 0.5


# ---- Ctrl-C --------------------------------------------------------------------------------------------

def test_ctrl_c_reaches_the_caller_of_newton_and_auto():
    import _thread
    import signal
    import time

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        p = fclib_local(os.path.join(HERE, "data", "fclib", "spheres-in-a-box-98-i10000-256-10.hdf5"))
        for method in ("newton", "auto"):
            timer = threading.Timer(0.3, _thread.interrupt_main)
            timer.start()
            t0 = time.perf_counter()
            with pytest.raises(KeyboardInterrupt):
                while True:  # tol 1e-300 is never met: every solve runs to its limits
                    mbdcp.coulomb(p.W, p.q, p.mu, method=method, tol=1e-300, max_iter=2 ** 31 - 1)
            timer.join()
            assert time.perf_counter() - t0 < 1.5
    finally:
        signal.signal(signal.SIGINT, previous)
