"""The time-stepping LCP: paper tables, closed forms, the mixed LCP checked by definition."""
import itertools
import threading

import numpy as np
import pytest

import mbdcp
from mbdcp import Status
from mbdcp.examples import particle_above_wall, simulate_sphere, sphere_closed_form, sphere_on_plane
from mbdcp.testing import random_scene

G = 9.81


def check_mixed_lcp(res, M, Wn, D, E, mu, v, h, p_ext=None, psi_n=None, dpsi_n=None, dpsi_f=None,
                    Wb=None, theta=None, dtheta=None, Dj=None, Ej=None, beta_max=None, tol=1e-8):
    """Assert every condition of mbdcp.step's mixed LCP (Trinkle 2003, eqs. 25-38) holds for res (independent of F, f)."""
    n_v, n_c, m = M.shape[0], Wn.shape[1], D.shape[1]
    z = lambda x, n: np.zeros(n) if x is None else np.asarray(x, float)  # noqa: E731
    p_ext, psi_n, dpsi_n, dpsi_f = z(p_ext, n_v), z(psi_n, n_c), z(dpsi_n, n_c), z(dpsi_f, m)
    mu = np.asarray(mu, float)
    vn = res.v_next
    scale = max(1.0, np.abs(M @ v + p_ext).max(), np.abs(res.p_n).max(initial=0) * np.abs(M).max())
    t = tol * scale
    lhs = M @ vn - Wn @ res.p_n - D @ res.beta
    if Wb is not None:
        lhs -= Wb @ res.p_b
        np.testing.assert_allclose(Wb.T @ vn + z(theta, Wb.shape[1]) / h + z(dtheta, Wb.shape[1]), 0, atol=t)
    if Dj is not None:
        lhs -= Dj @ res.beta_j
    np.testing.assert_allclose(lhs, M @ v + p_ext, atol=t)
    pairs = [(res.p_n, Wn.T @ vn + psi_n / h + dpsi_n),
             (res.beta, D.T @ vn + dpsi_f + E @ res.sigma),
             (res.sigma, mu * res.p_n - E.T @ res.beta)]
    if Dj is not None:
        pairs += [(res.beta_j, Dj.T @ vn + Ej @ res.sigma_j), (res.sigma_j, beta_max - Ej.T @ res.beta_j)]
    for a, b in pairs:
        assert a.min(initial=0) >= -t and b.min(initial=0) >= -t
        assert np.abs(a * b).max(initial=0) <= t * max(1.0, np.abs(a).max(initial=0), np.abs(b).max(initial=0))


# ---- Trinkle (notes, 2003), pp. 7-12: particle and wall ---------------------------------------------------------

def test_particle_fixed_wall_table():
    p_n, v = particle_above_wall(steps=5)
    np.testing.assert_allclose(p_n, [4, 2, 1, 1, 1], atol=1e-12)
    np.testing.assert_allclose(v, [-1, 0, 0, 0, 0], atol=1e-12)


def test_particle_moving_wall_table():
    p_n, v = particle_above_wall(steps=5, wall_speed=0.5)
    np.testing.assert_allclose(p_n, [4.5, 2, 1, 1, 1], atol=1e-12)
    np.testing.assert_allclose(v, [-0.5, 0.5, 0.5, 0.5, 0.5], atol=1e-12)


# ---- Trinkle (2003), section 4: the sphere -------------------------------------------------------

def test_sphere_lcp_matches_eq_48():
    M, Wn, D, E, U = sphere_on_plane()
    h, v = 0.12, np.array([2.0, 0.3, -0.1, 0.2, 0.5, 0.0])
    res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=[0, 0, -G * h, 0, 0, 0], psi_n=[0.05], return_lcp=True)
    F, f = res.lcp.F, res.lcp.f
    assert F.shape == (6, 6)
    assert F[0, 0] == pytest.approx(1.0) and np.allclose(F[0, 1:], 0)
    np.testing.assert_allclose(np.abs(F[1:5, 1:5]), 3.5 * np.array(
        [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]), atol=1e-12)
    np.testing.assert_allclose(F[1:5, 5], 1.0)
    np.testing.assert_allclose(F[5], [0.2, -1, -1, -1, -1, 0])
    np.testing.assert_allclose(f, [v[2] + 0.05 / h - G * h, v[0] - v[4], -v[0] + v[4],
                                   v[1] + v[3], -v[1] - v[3], 0.0], atol=1e-12)
    np.testing.assert_allclose(res.lcp.w, F @ res.lcp.z + f, atol=1e-12)


@pytest.mark.parametrize("h, v0, mu", [(0.12, 2.0, 0.2), (0.05, 2.0, 0.2), (0.01, 2.0, 0.2),
                                       (0.03, 3.0, 0.5), (0.1, 1.0, 0.05)])
def test_sphere_matches_closed_form_at_every_step(h, v0, mu):
    t, v, p_n, beta = simulate_sphere(h=h, T=0.6, v0=v0, mu=mu)
    vx, wy = sphere_closed_form(t, v0=v0, mu=mu)
    np.testing.assert_allclose(v[:, 0], vx, atol=1e-12)
    np.testing.assert_allclose(v[:, 4], wy, atol=1e-12)
    np.testing.assert_allclose(v[:, [1, 2, 3, 5]], 0, atol=1e-12)
    np.testing.assert_allclose(p_n, G * h, rtol=1e-12)


def test_sphere_transition_time():
    t, v, _, _ = simulate_sphere(h=0.001, T=0.6)
    slip = v[:, 0] - v[:, 4]
    t_roll = t[np.argmax(slip < 1e-12)]
    assert t_roll == pytest.approx(2 * 2.0 / (7 * 0.2 * G), abs=1e-3)  # 0.291


# ---- Trinkle (notes, 2003), pp. 14-17: planar friction, the eight sign cases --------------------------------------

def planar(v, push=0.0, gap=0.0, mu=0.5, h=0.1, lift=0.0):
    """A planar particle on the floor: v = (x', y'); D = [t, -t], E = [1, 1]^T."""
    M, Wn = np.eye(2), np.array([[0.0], [1.0]])
    D, E = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    args = (M, Wn, D, E, [mu], np.asarray(v, float), h)
    kw = dict(p_ext=np.array([push, -G * h + lift]), psi_n=[gap])
    return args, kw


def sign_case(res):
    """Case number 1..8 of Trinkle (notes, 2003), p. 17, from the signs of (beta_1, beta_2, sigma)."""
    pos = tuple(bool(x > 1e-10) for x in (res.beta[0], res.beta[1], res.sigma[0]))
    return 1 + [(1, 1, 1), (1, 1, 0), (1, 0, 1), (1, 0, 0), (0, 1, 1), (0, 1, 0), (0, 0, 1), (0, 0, 0)].index(
        tuple(map(int, pos)))


@pytest.mark.parametrize("case, v, push, lift", [
    (3, (-2.0, 0.0), 0.0, 0.0),    # slides toward -x: friction along +t at its limit
    (4, (0.0, 0.0), -0.1, 0.0),    # sticks, pushed toward -x
    (5, (2.0, 0.0), 0.0, 0.0),     # slides toward +x
    (6, (0.0, 0.0), 0.1, 0.0),     # sticks, pushed toward +x
    (7, (2.0, 0.0), 0.0, 2.0),     # lifted off while sliding: no contact force, sigma >= |x'|
    (8, (0.0, 0.0), 0.0, 0.0),     # rests with no tangential load
])
def test_planar_friction_cases(case, v, push, lift):
    args, kw = planar(v, push, lift=lift)
    res = mbdcp.step(*args, **kw)
    assert res.success
    check_mixed_lcp(res, *args, **kw)
    assert sign_case(res) == case
    if case in (3, 5):
        assert res.beta.sum() == pytest.approx(0.5 * res.p_n[0])
        assert res.sigma[0] == pytest.approx(abs(res.v_next[0]))
    if case in (4, 6, 8):
        assert res.v_next[0] == pytest.approx(0.0, abs=1e-12)


def _all_solutions(F, f):
    """Every complementary basic solution of a small LCP (enumeration, independent of Lemke)."""
    n = len(f)
    sols = []
    for mask in itertools.product([0, 1], repeat=n):
        idx = [i for i in range(n) if mask[i]]
        z = np.zeros(n)
        if idx:
            try:
                z[idx] = np.linalg.solve(F[np.ix_(idx, idx)], -f[idx])
            except np.linalg.LinAlgError:
                continue
        w = F @ z + f
        if z.min() >= -1e-10 and w.min() >= -1e-10:
            sols.append(z)
    return sols


def test_case_1_inconsistent_and_case_2_consistent():
    rng = np.random.default_rng(5)
    for _ in range(50):
        args, kw = planar(rng.uniform(-2, 2, 2), rng.uniform(-1, 1), gap=rng.uniform(0, 0.1))
        res = mbdcp.step(*args, **kw, return_lcp=True)
        F, f = res.lcp.F, res.lcp.f
        for zz in _all_solutions(F, f):
            assert not (zz[1] > 1e-9 and zz[2] > 1e-9 and zz[3] > 1e-9)  # case 1 never solves
    # Case 2 (both beta > 0, sigma = 0: sticking) is consistent: adding c to both directions
    # of a sticking solution leaves the LCP solved and the velocity unchanged.
    args, kw = planar((0.0, 0.0), -0.1)
    res = mbdcp.step(*args, **kw, return_lcp=True)
    z = res.lcp.z.copy()
    slack = res.lcp.w[3] / 2
    z[1:3] += 0.5 * slack
    w = res.lcp.F @ z + res.lcp.f
    assert z.min() >= 0 and w.min() >= -1e-12 and abs(z @ w) < 1e-12
    assert z[1] > 0 and z[2] > 0 and z[3] == 0


# ---- random spatial scenes: every condition by definition --------------------------------------

@pytest.mark.parametrize("seed", range(60))
def test_random_scenes_solved_and_verified(seed):
    rng = np.random.default_rng(seed)
    nb, nc = int(rng.integers(1, 6)), int(rng.integers(1, 16))
    s = random_scene(nb, nc, rng)
    res = mbdcp.step(*s.args(), **s.kwargs())
    assert res.success, res.message  # a solution exists without joints and with gaps >= 0
    check_mixed_lcp(res, *s.args(), **s.kwargs())


def test_moving_surfaces_random():
    rng = np.random.default_rng(42)
    for _ in range(20):
        s = random_scene(3, 8, rng)
        dpsi_n = rng.uniform(0, 0.5, s.Wn.shape[1])  # surfaces receding: a solution exists
        dpsi_f = rng.uniform(-1, 1, s.D.shape[1])
        res = mbdcp.step(*s.args(), **s.kwargs(), dpsi_n=dpsi_n, dpsi_f=dpsi_f)
        assert res.success
        check_mixed_lcp(res, *s.args(), **s.kwargs(), dpsi_n=dpsi_n, dpsi_f=dpsi_f)


def test_conveyor_belt_drags_resting_block():
    # A floor moving along +x at speed u: the tangential velocity relative to it is x' - u,
    # so dpsi_f = -u D^T e_x; a sticking block picks up the belt's speed.
    args, kw = planar((0.0, 0.0), mu=2.0)
    u = 0.3
    res = mbdcp.step(*args, **kw, dpsi_f=[-u, u])
    assert res.success and res.v_next[0] == pytest.approx(u)


def test_fast_path_result_is_the_validating_paths():
    """Plain float64 arrays take the fast path (its StepResult built in Cython, field by field);
    lists take the validating path. Same fields, same values, solved or not."""
    M, Wn, D, E, U = sphere_on_plane()
    v, h, p_ext = np.array([1.0, 0, 0, 0, 0, 0]), 0.01, np.array([0, 0, -G * 0.01, 0, 0, 0])
    for kw in ({"p_ext": p_ext}, {"p_ext": p_ext, "psi_n": np.array([-0.1])}, {}):
        fast = mbdcp.step(M, Wn, D, E, U, v, h, **kw)
        slow = mbdcp.step(M.tolist(), Wn.tolist(), D.tolist(), E.tolist(), U.tolist(), v.tolist(), h,
                          **{k: x.tolist() for k, x in kw.items()})
        check_mixed_lcp(fast, M, Wn, D, E, U, v, h, **kw)
        assert sorted(vars(fast)) == sorted(vars(slow))
        for name in vars(slow):
            a, b = getattr(fast, name), getattr(slow, name)
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, name


def test_zero_contacts_is_free_flight():
    M = np.diag([2.0, 2.0, 3.0])
    v, p = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 0.3])
    res = mbdcp.step(M, np.zeros((3, 0)), np.zeros((3, 0)), np.zeros((0, 0)), [], v, 0.1, p_ext=p)
    assert res.success and res.pivots == 0
    np.testing.assert_allclose(res.v_next, v + np.linalg.solve(M, p))
    assert res.p_n.shape == (0,) and res.beta.shape == (0,)


def test_frictionless_contact_has_no_directions():
    res = mbdcp.step(np.eye(2), [[0.0], [1.0]], np.zeros((2, 0)), np.zeros((0, 1)), [0.3],
                     [1.0, -1.0], 0.1, psi_n=[0.0])
    assert res.success
    np.testing.assert_allclose(res.v_next, [1.0, 0.0], atol=1e-14)
    assert res.p_n[0] == pytest.approx(1.0) and res.sigma.shape == (1,)


# ---- joints ----------------------------------------------------------------------------------

def test_particle_on_a_wire():
    # A particle on the wire y = 0 under gravity: v_y stays 0, the joint carries m g h.
    M = 2.0 * np.eye(2)
    Wb = np.array([[0.0], [1.0]])
    h = 0.01
    args = (M, np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 0)), [], np.array([1.0, 0.0]), h)
    res = mbdcp.step(*args, p_ext=[0.0, -2.0 * G * h], Wb=Wb)
    assert res.success
    np.testing.assert_allclose(res.v_next, [1.0, 0.0], atol=1e-14)
    assert res.p_b[0] == pytest.approx(2.0 * G * h)
    # Stabilisation: a violation theta is removed in one step.
    res = mbdcp.step(*args, p_ext=[0.0, -2.0 * G * h], Wb=Wb, theta=[0.003], dtheta=[0.0])
    assert res.v_next[1] == pytest.approx(-0.3)


def test_joint_and_contact_together_random():
    rng = np.random.default_rng(9)
    for _ in range(20):
        s = random_scene(3, 5, rng)
        Wb = rng.standard_normal((s.M.shape[0], 3))
        theta = rng.uniform(-0.01, 0.01, 3)
        res = mbdcp.step(*s.args(), **s.kwargs(), Wb=Wb, theta=theta)
        if res.success:
            check_mixed_lcp(res, *s.args(), **s.kwargs(), Wb=Wb, theta=theta)
        else:
            assert res.status in (Status.RAY_TERMINATION, Status.NUMERICAL_ERROR)


@pytest.mark.parametrize("push, expect_v", [(0.5, 0.0), (1.5, 0.5), (-1.5, -0.5), (-0.9, 0.0)])
def test_joint_friction_sticks_below_and_slides_above(push, expect_v):
    # A slider (m = 1) on a horizontal guide with dry friction of at most beta_max = 1 per step.
    M = np.eye(2)
    Wb = np.array([[0.0], [1.0]])
    Dj, Ej = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    args = (M, np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 0)), [], np.zeros(2), 0.1)
    kw = dict(p_ext=[push, -G * 0.1], Wb=Wb, Dj=Dj, Ej=Ej, beta_max=[1.0])
    res = mbdcp.step(*args, **kw)
    assert res.success
    assert res.v_next[0] == pytest.approx(expect_v, abs=1e-12)
    assert res.beta_j.sum() == pytest.approx(min(abs(push), 1.0))
    check_mixed_lcp(res, *args, **kw)


def test_redundant_joints_solved_on_an_independent_subset():
    # a rod (x, y, theta; m = 1, I = 1/3) pinned at its end (0, -1 from the centre... at angle 0:
    # r = (-1, 0)) by the pin twice, and resting on the floor with its other end
    M = np.diag([1.0, 1.0, 1 / 3])
    pin = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])  # velocity of the end at r = (-1, 0)
    Wn = np.array([[0.0], [1.0], [1.0]])                 # the other end, r = (1, 0), on the floor
    D, E = np.array([[1.0, -1.0], [0.0, 0.0], [0.0, 0.0]]), np.ones((2, 1))
    args = (M, Wn, D, E, [0.3], [0.0, 0.0, -0.5], 0.01)
    kw = dict(p_ext=[0.0, -0.0981, 0.0], psi_n=[0.0])
    once = mbdcp.step(*args, Wb=pin, **kw)
    for twice in (np.hstack([pin, pin]), np.hstack([pin, 2 * pin[:, 1:]])):
        for solve in (mbdcp.step, lambda *a, **k: mbdcp.fixed_point(*a, algorithm=2, **k)):
            res = solve(*args, Wb=twice, **kw)
            assert res.success
            np.testing.assert_allclose(res.v_next, once.v_next, atol=1e-13)
            np.testing.assert_allclose(twice @ res.p_b, pin @ once.p_b, atol=1e-13)  # the same joint force
            assert res.p_b.shape == (twice.shape[1],)
    # dependent equations must agree: the same pin asked to move two ways cannot hold
    with pytest.raises(ValueError, match=r"Wb has redundant columns \[2\] whose theta/dtheta contradict"):
        mbdcp.step(*args, Wb=np.hstack([pin, pin[:, :1]]), theta=[0.0, 0.0, 0.01], **kw)


# ---- input validation -------------------------------------------------------------------------

def _ok():
    return dict(M=np.eye(2), Wn=np.array([[0.0], [1.0]]), D=np.array([[1.0, -1.0], [0.0, 0.0]]),
                E=np.ones((2, 1)), U=[0.5], v=np.zeros(2), h=0.1)


@pytest.mark.parametrize("change, exc, words", [
    (dict(M=np.eye(3)), ValueError, "Wn must have shape (n_v, n_c) = (3, any), got (2, 1)"),
    (dict(M=np.array([[1.0, 0.5], [0.0, 1.0]])), ValueError, "M must be symmetric"),
    (dict(M=np.array([[1.0, 2.0], [2.0, 1.0]])), ValueError, "M must be symmetric positive definite"),
    (dict(M=np.diag([1.0, np.nan])), ValueError, "M must hold finite"),
    (dict(Wn=np.array([[0.0, 1.0]])), ValueError, "Wn must have shape"),
    (dict(D=np.ones((3, 2))), ValueError, "D must have shape"),
    (dict(E=np.array([[1.0], [0.0]])), ValueError, "E must have exactly one 1"),
    (dict(E=np.array([[2.0], [1.0]])), ValueError, "E must have exactly one 1"),
    (dict(E=np.ones((3, 1))), ValueError, "E must have shape (m, n_c) = (2, 1)"),
    (dict(U=[-0.1]), ValueError, "U must be nonnegative"),
    (dict(U=[0.1, 0.2]), ValueError, "U must have shape"),
    (dict(U=np.array([[0.1, 0.2], [0.0, 0.1]])), ValueError, "U must have shape (n_c, n_c) = (1, 1)"),
    (dict(v=[1.0]), ValueError, "v must have shape (n_v,) = (2,)"),
    (dict(v=[1.0, np.inf]), ValueError, "v must hold finite"),
    (dict(h=0.0), ValueError, "h must be positive"),
    (dict(h=-1.0), ValueError, "h must be positive"),
    (dict(h="0.1"), TypeError, "h must be a positive real number"),
    (dict(v=["a", "b"]), TypeError, "v must hold real numbers"),
])
def test_bad_input(change, exc, words):
    kw = _ok()
    kw.update(change)
    with pytest.raises(exc) as info:
        mbdcp.step(kw.pop("M"), kw.pop("Wn"), kw.pop("D"), kw.pop("E"), kw.pop("U"), kw.pop("v"), kw.pop("h"))
    assert words in str(info.value)


@pytest.mark.parametrize("extra, words", [
    (dict(p_ext=[1.0]), "p_ext must have shape (n_v,) = (2,)"),
    (dict(psi_n=[0.0, 0.0]), "psi_n must have shape (n_c,) = (1,)"),
    (dict(dpsi_f=[0.0]), "dpsi_f must have shape (m,) = (2,)"),
    (dict(theta=[0.0]), "theta and dtheta need the joint Jacobian Wb"),
    (dict(Wb=np.ones((3, 1))), "Wb must have shape"),
    (dict(Wb=np.array([[0.0], [1.0]]), theta=[0.0, 1.0]), "theta must have shape (n_b,) = (1,)"),
    (dict(Dj=np.ones((2, 1))), "joint friction needs Dj, Ej and beta_max"),
    (dict(Dj=np.ones((2, 2)), Ej=np.ones((2, 1)), beta_max=[-1.0]), "beta_max must be nonnegative"),
    (dict(Dj=np.ones((2, 2)), Ej=np.ones((3, 1)), beta_max=[1.0]), "Ej must have shape (m_j, n_j) = (2, any)"),
    (dict(method="path"), "method must be one of"),
])
def test_bad_keywords(extra, words):
    kw = _ok()
    with pytest.raises(ValueError) as info:
        mbdcp.step(*kw.values(), **extra)
    assert words in str(info.value)


def test_e_must_group_contacts_in_order():
    M = np.eye(3)
    Wn = np.eye(3)[:, :2]
    D = np.ones((3, 4))
    E = np.array([[1.0, 0], [0, 1], [1, 0], [0, 1]])
    with pytest.raises(ValueError, match="E must group each contact's directions"):
        mbdcp.step(M, Wn, D, E, [0.1, 0.1], np.zeros(3), 0.1)


def test_u_forms_agree_and_inputs_untouched():
    s = random_scene(2, 4, 1)
    U2 = np.diag(s.U)
    U2.setflags(write=False)
    a = mbdcp.step(s.M, s.Wn, s.D, s.E, s.U, s.v, s.h, **s.kwargs())
    b = mbdcp.step(np.asfortranarray(s.M), s.Wn, s.D, s.E, U2, s.v, s.h, **s.kwargs())
    np.testing.assert_array_equal(a.v_next, b.v_next)
    assert a.lcp is None


def test_threads_agree():
    scenes = [random_scene(6, 20, k) for k in range(6)]
    serial = [mbdcp.step(*s.args(), **s.kwargs()).v_next for s in scenes]
    out = {}

    def work(k):
        for j, s in enumerate(scenes):
            out[(k, j)] = mbdcp.step(*s.args(), **s.kwargs()).v_next

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert all(np.array_equal(v, serial[j]) for (k, j), v in out.items())


# ---- friction_basis ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_d", [2, 4, 6, 8])
def test_friction_basis_properties(n_d):
    rng = np.random.default_rng(n_d)
    normal = rng.standard_normal(3)
    B = mbdcp.friction_basis(normal, n_d)
    assert B.shape == (3, n_d)
    np.testing.assert_allclose(np.linalg.norm(B, axis=0), 1.0)
    np.testing.assert_allclose(normal @ B, 0.0, atol=1e-12)
    np.testing.assert_allclose(B[:, : n_d // 2], -B[:, n_d // 2:], atol=1e-12)  # opposite pairs
    # evenly spaced: consecutive directions (cyclically) are 2 pi / n_d apart
    cosines = np.sum(B * np.roll(B, -1, axis=1), axis=0)
    np.testing.assert_allclose(cosines, np.cos(2 * np.pi / n_d), atol=1e-12)


def test_friction_basis_bad_input():
    with pytest.raises(ValueError, match="normal must be a nonzero"):
        mbdcp.friction_basis([0, 0, 0], 4)
    with pytest.raises(ValueError, match="normal must have shape"):
        mbdcp.friction_basis([0, 1], 4)
    with pytest.raises(ValueError, match="n_d must be"):
        mbdcp.friction_basis([0, 0, 1], -2)


def test_every_bad_common_argument_is_refused_by_name():
    # step() validates its arguments in one layer (mbdcp.infrastructure.problem.step_data); the C
    # core's own check only guards what it reads
    from mbdcp.infrastructure.problem import step_data

    base = dict(M=np.eye(3), Wn=np.array([[0.0], [1.0], [0.0]]), D=np.array([[1.0, -1.0], [0, 0], [0, 0]]),
                E=np.ones((2, 1)), U=np.array([0.5]), v=np.zeros(3), p_ext=np.zeros(3), psi_n=np.zeros(1))
    bad = [
        (dict(M=np.diag([1.0, np.nan, 1.0])), "M"), (dict(M=np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])), "M"),
        (dict(M=np.eye(2)), "Wn"), (dict(Wn=np.zeros((2, 1))), "Wn"), (dict(D=np.zeros((3, 3))), "E"),
        (dict(E=np.array([[1.0], [0.0]])), "E"), (dict(E=np.array([[2.0], [1.0]])), "E"), (dict(U=np.array([-0.1])), "U"),
        (dict(U=np.array([0.1, 0.2])), "U"), (dict(v=np.zeros(2)), "v"), (dict(v=np.array([0.0, np.inf, 0.0])), "v"),
        (dict(p_ext=np.zeros(2)), "p_ext"), (dict(psi_n=np.array([np.nan])), "psi_n"),
        (dict(E=np.ones((2, 2)) * np.array([1.0, 0.0])), "E"),
    ]
    for change, name in bad:
        kw = dict(base, **change)
        with pytest.raises(ValueError, match=name):
            step_data(kw["M"], kw["Wn"], kw["D"], kw["E"], kw["U"], kw["v"], 0.1, kw["p_ext"], kw["psi_n"])
        with pytest.raises(ValueError, match=name):
            mbdcp.step(kw["M"], kw["Wn"], kw["D"], kw["E"], kw["U"], kw["v"], 0.1, p_ext=kw["p_ext"], psi_n=kw["psi_n"])
