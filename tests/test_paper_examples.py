"""Examples and forms of the source papers that the other tests do not cover: the Euler table and
parts seating of Trinkle (notes, 2003), pp. 3 and 29-30, joints in the instantaneous model (Trinkle
2003, eqs. 19, 23), the wire, joint friction and conveyor belt with mbdcp.step, tangentially moving
surfaces in mbdcp.ccp, and the full-rank model at acceleration level (Peiret et al., eq. 8)."""
import numpy as np
import pytest
from scipy.special import ellipk

import mbdcp
from mbdcp.examples import SEATING_WN, bead_on_wire, box_on_belt, euler_table, parts_seating, slider_with_joint_friction
from mbdcp.formulations.instantaneous import InstantaneousJointResult

G = 9.81
NO_CONTACTS = (np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 0)), np.zeros(0))


# ---- explicit against semi-implicit Euler (Trinkle (notes, 2003), p. 3) ---------------------------------

def test_euler_table_is_the_notes():
    tab = euler_table()  # F = m = h = 1 from rest, rows l = 0..3 as printed in the notes
    assert tab.l.tolist() == [0, 1, 2, 3]
    assert tab.q_explicit.tolist() == [0, 0, 1, 3] and tab.v_explicit.tolist() == [0, 1, 2, 3]
    assert tab.q_semi_implicit.tolist() == [0, 1, 3, 6] and tab.v_semi_implicit.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("F, m, h, q0, v0", [(1.0, 1.0, 1.0, 0.0, 0.0), (-2.5, 3.0, 0.1, 1.0, 0.7), (9.81, 0.2, 0.02, -1.0, -3.0)])
def test_euler_table_closed_forms(F, m, h, q0, v0):
    tab = euler_table(steps=20, F=F, m=m, h=h, q0=q0, v0=v0)
    ell, a = tab.l, F / m
    np.testing.assert_allclose(tab.v_explicit, v0 + a * h * ell, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tab.v_semi_implicit, tab.v_explicit, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tab.q_explicit, q0 + v0 * h * ell + a * h * h * ell * (ell - 1) / 2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tab.q_semi_implicit, q0 + v0 * h * ell + a * h * h * ell * (ell + 1) / 2, rtol=1e-12, atol=1e-12)
    # the exact position is the mean of the two ("delayed" and "extra fast" responses)
    np.testing.assert_allclose(tab.q_exact, (tab.q_explicit + tab.q_semi_implicit) / 2, rtol=1e-12, atol=1e-12)


def test_euler_table_bad_input():
    with pytest.raises(ValueError, match="m"):
        euler_table(m=0.0)
    with pytest.raises(ValueError, match="steps"):
        euler_table(steps=0)


# ---- parts seating and the point in a corner (Trinkle (notes, 2003), pp. 29-30) -------------------------

def _check_step(res, p_ext, psi_n, Wn, h):
    """The step's solution by definition: momentum, gaps >= 0, impulses >= 0, complementarity."""
    np.testing.assert_allclose(res.v_next, p_ext + Wn @ res.p_n, atol=1e-12)
    np.testing.assert_allclose(res.gaps_after, psi_n + h * Wn.T @ res.v_next, atol=1e-12)
    assert res.gaps_after.min() > -1e-10 and res.p_n.min() > -1e-12
    assert abs(res.p_n @ res.gaps_after) < 1e-10


def test_seating_bound_is_the_notes():
    rng = np.random.default_rng(0)
    for _ in range(20):
        psi, h = rng.uniform(0.1, 2.0, 3), rng.uniform(0.2, 2.0)
        res = parts_seating(-rng.uniform(0, 5, 3), psi, h=h)
        np.testing.assert_allclose(res.seed_bound, np.array([-psi[0], -psi[1], psi[1] - psi[2]]) / h, atol=1e-12)


def test_seed_inequality_necessary_not_sufficient():
    rng = np.random.default_rng(1)
    seated = counterexamples = 0
    for _ in range(400):
        psi = rng.uniform(0.1, 2.0, 3)
        p_ext = rng.uniform(-6.0, 2.0, 3)
        res = parts_seating(p_ext, psi)
        _check_step(res, p_ext, psi, SEATING_WN, 1.0)
        assert res.seated == res.seats  # the step agrees with the closed-form condition p_n >= 0
        if res.seated:
            seated += 1
            assert res.seed_inequality  # necessary
            np.testing.assert_allclose(res.p_n, res.p_n_required, atol=1e-10)
        elif res.seed_inequality:
            counterexamples += 1  # ... but not sufficient
            assert res.p_n_required[1] < 0 and res.gaps_after[1] > 0  # contact 2 is the one left open
    assert seated > 20 and counterexamples > 20


def test_seating_counterexample():
    res = parts_seating([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0])
    assert res.seed_inequality and not res.seats and not res.seated
    np.testing.assert_allclose(res.p_n_required, [0.0, -1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(res.gaps_after, [0.0, 0.5, 0.0], atol=1e-12)


def test_point_into_corner_inequality_is_exact():
    rng = np.random.default_rng(2)
    for _ in range(200):
        psi, h = rng.uniform(0.1, 2.0, 2), rng.uniform(0.2, 2.0)
        p_ext = rng.uniform(-6.0, 1.0, 2)
        res = parts_seating(p_ext, psi, Wn=np.eye(2), h=h)
        _check_step(res, p_ext, psi, np.eye(2), h)
        np.testing.assert_allclose(res.seed_bound, -psi / h, atol=1e-12)
        assert res.seed_inequality == res.seated == bool(np.all(p_ext <= -psi / h))


def test_seating_bad_input():
    with pytest.raises(ValueError, match="Wn"):
        parts_seating([0, 0], [1, 1], Wn=np.ones((2, 3)))
    with pytest.raises(ValueError, match="Wn"):
        parts_seating([0, 0], [1, 1], Wn=np.ones((2, 2)))
    with pytest.raises(ValueError, match="p_ext"):
        parts_seating([0, 0], [1, 1, 1])


# ---- joints in the instantaneous model (Trinkle 2003, eqs. 19, 23) -----------------------------

def _pendulum(th, w, length, m):
    q = length * np.array([np.sin(th), -np.cos(th)])
    v = w * length * np.array([np.cos(th), np.sin(th)])
    return q, v


@pytest.mark.parametrize("th, w, length, m", [(0.0, 0.0, 1.0, 1.0), (0.3, 2.0, 1.5, 2.0), (2.5, 4.0, 0.5, 0.3),
                                              (-1.0, -1.0, 3.0, 1.0)])
def test_instantaneous_pendulum_tension(th, w, length, m):
    q, v = _pendulum(th, w, length, m)
    Wb, kb = (q / length)[:, None], [v @ v / length]
    res = mbdcp.instantaneous(m * np.eye(2), *NO_CONTACTS, v, [0.0, -m * G], Wb=Wb, dWb_v=kb)
    assert isinstance(res, InstantaneousJointResult) and res.success
    np.testing.assert_allclose(-res.c_b[0], m * (G * np.cos(th) + w * w * length), rtol=1e-12)
    tangent = np.array([np.cos(th), np.sin(th)])
    np.testing.assert_allclose(res.a @ tangent, -G * np.sin(th), atol=1e-12)  # theta'' = -g/l sin(theta)
    np.testing.assert_allclose(Wb[:, 0] @ res.a + kb[0], 0.0, atol=1e-12)  # eq. 19


def test_instantaneous_joint_with_contact():
    # a particle on the floor z = 0 held on the vertical line x = 0 by a joint, pushed sideways and down
    M, Wn, D, E = 2.0 * np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]]
    res = mbdcp.instantaneous(M, Wn, D, E, [0.5], [0.0, 0.0], [3.0, -2.0 * G], Wb=[[1.0], [0.0]])
    assert res.success
    np.testing.assert_allclose(res.a, [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(res.c_n, [2.0 * G], rtol=1e-12)
    # the joint and friction share the sideways load; together they cancel it
    np.testing.assert_allclose(res.c_b[0] + res.beta[0] - res.beta[1], -3.0, atol=1e-12)


@pytest.mark.parametrize("force, c_max, v0", [(1.0, 2.0, 0.0), (-1.9, 2.0, 0.0), (3.0, 2.0, 0.0), (-3.5, 2.0, 0.0),
                                              (1.0, 2.0, 0.5), (-3.0, 2.0, -0.5), (0.0, 1.0, -2.0)])
def test_instantaneous_joint_friction(force, c_max, v0):
    m = 1.5
    res = mbdcp.instantaneous(m * np.eye(2), *NO_CONTACTS, [v0, 0.0], [force, -m * G], Wb=[[0.0], [1.0]],
                              Dj=[[1.0, -1.0], [0.0, 0.0]], Ej=[[1.0], [1.0]], beta_max=[c_max])
    assert res.success
    if v0 != 0.0:  # sliding: c_max against the motion (eq. 18)
        expected = (force - c_max * np.sign(v0)) / m
        assert res.sliding_j.tolist() == [True] and np.all(res.beta_j == 0)
    elif abs(force) <= c_max:  # at rest and held (eq. 23)
        expected = 0.0
    else:  # at rest, starts to slide with the friction at its limit
        expected = (force - c_max * np.sign(force)) / m
    np.testing.assert_allclose(res.a, [expected, 0.0], atol=1e-12)
    np.testing.assert_allclose(res.c_b, [m * G], rtol=1e-12)


def test_instantaneous_without_joints_keeps_its_result_type():
    res = mbdcp.instantaneous(np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]], [0.5],
                              [0.0, 0.0], [0.0, -G])
    assert type(res) is mbdcp.InstantaneousResult


def test_instantaneous_joint_bad_input():
    args = (np.eye(2), *NO_CONTACTS, [0.0, 0.0], [0.0, -G])
    with pytest.raises(ValueError, match="dWb_v"):
        mbdcp.instantaneous(*args, dWb_v=[1.0])
    with pytest.raises(ValueError, match="Wb"):
        mbdcp.instantaneous(*args, Wb=np.ones((3, 1)))
    with pytest.raises(ValueError, match="Wb"):
        mbdcp.instantaneous(*args, Wb=[[1.0, 2.0], [1.0, 2.0]])  # redundant
    with pytest.raises(ValueError, match="dWb_v"):
        mbdcp.instantaneous(*args, Wb=[[1.0], [0.0]], dWb_v=[1.0, 2.0])
    with pytest.raises(ValueError, match="Dj"):
        mbdcp.instantaneous(*args, beta_max=[1.0])
    with pytest.raises(ValueError, match="together"):
        mbdcp.instantaneous(*args, Dj=[[1.0], [0.0]])
    with pytest.raises(ValueError, match="beta_max"):
        mbdcp.instantaneous(*args, Dj=[[1.0], [0.0]], Ej=[[1.0]], beta_max=[-1.0])


# ---- wire, joint friction and conveyor belt with mbdcp.step -----------------------------------

def test_bead_on_circular_wire_is_a_pendulum():
    th0, length, h = 0.5, 1.0, 1e-3
    traj = bead_on_wire(theta0=th0, length=length, h=h, T=3.0)
    assert np.abs(np.linalg.norm(traj.q, axis=1) - length).max() < 1e-5  # Theta/h keeps it on the wire
    x = traj.q[:, 0]
    down = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))
    crossings = traj.t[down] + x[down] / (x[down] - x[down + 1]) * h
    period = 4 * np.sqrt(length / G) * ellipk(np.sin(th0 / 2) ** 2)  # exact, any amplitude
    np.testing.assert_allclose(np.diff(crossings), period, rtol=1e-4)
    # the wire's pull at the bottom: m (g + w^2 l) = m g (3 - 2 cos th0)
    np.testing.assert_allclose(-traj.impulses[down[0], 0] / h, G * (3 - 2 * np.cos(th0)), rtol=1e-4)


def test_slider_sticks_below_its_friction_limit():
    traj = slider_with_joint_friction(1.5, 2.0, h=0.01, T=0.5)
    np.testing.assert_allclose(traj.v, 0.0, atol=1e-12)
    # friction holds the push: beta_- = h F
    np.testing.assert_allclose(traj.impulses[:, 1] - traj.impulses[:, 0], 0.01 * 1.5, atol=1e-12)


@pytest.mark.parametrize("force, c_max, v0, m", [(3.0, 2.0, 0.0, 1.0), (-5.0, 1.0, 0.0, 2.0), (0.0, 2.0, 1.0, 1.0),
                                                 (1.0, 3.0, -2.0, 0.5)])
def test_slider_closed_form(force, c_max, v0, m):
    h = 0.01
    traj = slider_with_joint_friction(force, c_max, v0=v0, h=h, T=1.0, m=m)
    t = traj.t
    if v0 == 0.0:
        expected = (force - c_max * np.sign(force)) / m * t
    else:  # decelerates at (c_max - F sign v0)/m until it stops, then stays (|F| < c_max here)
        decel = (c_max - force * np.sign(v0)) / m
        expected = np.sign(v0) * np.maximum(abs(v0) - decel * t, 0.0)
    np.testing.assert_allclose(traj.v[:, 0], expected, atol=1e-10)
    np.testing.assert_allclose(traj.v[:, 1], 0.0, atol=1e-12)


@pytest.mark.parametrize("V, mu, v0", [(1.0, 0.3, 0.0), (2.0, 0.5, 0.5), (-1.5, 0.2, 0.0)])
def test_box_on_belt_reaches_belt_speed(V, mu, v0):
    traj = box_on_belt(belt_speed=V, mu=mu, v0=v0, h=0.01, T=1.5)
    s = np.sign(V - v0)
    expected = v0 + s * np.minimum(mu * G * traj.t, abs(V - v0))
    np.testing.assert_allclose(traj.v[:, 0], expected, atol=1e-10)
    np.testing.assert_allclose(traj.impulses[:, 0], G * 0.01, rtol=1e-12)
    np.testing.assert_allclose(traj.q[:, 1], 0.0, atol=1e-12)


# ---- tangentially moving surfaces in mbdcp.ccp -----------------------------------------------

CCP_BLOCK = (np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])


def test_ccp_block_on_belt_reaches_belt_speed():
    V, h, v, z = 1.0, 0.01, np.zeros(3), 0.0
    for _ in range(80):
        res = mbdcp.ccp(*CCP_BLOCK, 0.3, v, h, p_ext=[0, 0, -G * h], psi_n=[z], dpsi_t=[[-V, 0.0]], tol=1e-12)
        assert res.success
        v = res.v_next
        z += h * v[2]
    np.testing.assert_allclose(v, [V, 0.0, 0.0], atol=1e-8)


def test_ccp_moving_surface_is_a_change_of_frame():
    # a belt moving at (Vu, Vw) under a body at v gives the fixed-floor result for v - V, shifted by V
    rng = np.random.default_rng(3)
    for _ in range(10):
        V = np.r_[rng.normal(size=2), 0.0]
        v = rng.normal(size=3)
        moving = mbdcp.ccp(*CCP_BLOCK, 0.4, v, 0.01, p_ext=[0, 0, -0.0981], psi_n=[0.0], dpsi_t=-V[:2], tol=1e-12)
        fixed = mbdcp.ccp(*CCP_BLOCK, 0.4, v - V, 0.01, p_ext=[0, 0, -0.0981], psi_n=[0.0], tol=1e-12)
        np.testing.assert_allclose(moving.v_next, fixed.v_next + V, atol=1e-9)
        np.testing.assert_allclose(moving.gamma, fixed.gamma, atol=1e-9)


def test_ccp_without_moving_surface_unchanged():
    args = (*CCP_BLOCK, 0.5, [1.0, 0.2, 0.0], 0.01)
    plain = mbdcp.ccp(*args, p_ext=[0, 0, -0.0981])
    zero = mbdcp.ccp(*args, p_ext=[0, 0, -0.0981], dpsi_t=np.zeros(2))
    assert np.array_equal(plain.v_next, zero.v_next) and np.array_equal(plain.gamma, zero.gamma)


def test_ccp_dphi_t_shape():
    with pytest.raises(ValueError, match="dpsi_t"):
        mbdcp.ccp(*CCP_BLOCK, 0.5, [0.0, 0.0, 0.0], 0.01, dpsi_t=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="dpsi_t"):
        mbdcp.ccp(*CCP_BLOCK, 0.5, [0.0, 0.0, 0.0], 0.01, dpsi_t=[np.nan, 0.0])


# ---- the full-rank model at acceleration level (Peiret et al., eq. 8) ---------------------------

def _incline(alpha):
    n = np.array([-np.sin(alpha), 0.0, np.cos(alpha)])
    u = np.array([np.cos(alpha), 0.0, np.sin(alpha)])
    return n[:, None], np.array([u, [0.0, 1.0, 0.0]]).T, u


@pytest.mark.parametrize("alpha, mu", [(0.3, 0.5), (0.5, 0.3), (0.5, 0.6), (1.0, 0.2)])
@pytest.mark.parametrize("n_d", [1, 2, 3, 5])
def test_full_rank_acceleration_incline_from_rest(alpha, mu, n_d):
    Wn, Wt, u = _incline(alpha)
    m = 2.0
    res = mbdcp.full_rank_acceleration(m * np.eye(3), Wn, Wt, mu, np.zeros(3), [0.0, 0.0, -m * G], n_d=n_d)
    assert res.success and not res.sliding[0]
    slip = max(G * (np.sin(alpha) - mu * np.cos(alpha)), 0.0)  # sticks when mu >= tan(alpha)
    np.testing.assert_allclose(res.a, -slip * u, atol=1e-10)
    np.testing.assert_allclose(res.c_n, [m * G * np.cos(alpha)], rtol=1e-10)
    np.testing.assert_allclose(res.c_t[0], [m * (G * np.sin(alpha) - slip), 0.0], atol=1e-10)
    assert np.all(res.kappa_plus * res.kappa_minus == 0)  # never both directions


def test_full_rank_acceleration_rho_does_not_change_the_dynamics():
    Wn, Wt, _ = _incline(0.5)
    k = [1.0, 0.7, -G]
    base = mbdcp.full_rank_acceleration(np.eye(3), Wn, Wt, 0.3, np.zeros(3), k, n_d=4)
    for rho in (1e-3, 1.0, 50.0):
        res = mbdcp.full_rank_acceleration(np.eye(3), Wn, Wt, 0.3, np.zeros(3), k, n_d=4, rho=rho, return_lcp=True)
        assert res.rho == rho and np.linalg.matrix_rank(res.lcp.F) == res.lcp.F.shape[0]
        np.testing.assert_allclose(res.a, base.a, atol=1e-10)
        np.testing.assert_allclose(res.c_t, base.c_t, atol=1e-10)


@pytest.mark.parametrize("th, u, R", [(0.0, 2.0, 0.5), (0.4, 1.0, 1.0), (-1.0, 3.0, 2.0)])
def test_full_rank_acceleration_ring_uses_dJn_v(th, u, R):
    # a particle sliding (mu = 0) along the inside of a vertical ring: the ring pushes with m(g cos th + u^2/R)
    m = 1.5
    q = R * np.array([np.sin(th), -np.cos(th)])
    t = np.array([np.cos(th), np.sin(th)])
    Wn, Wt = (-q / R)[:, None], np.column_stack([t, [0.0, 0.0]])
    res = mbdcp.full_rank_acceleration(m * np.eye(2), Wn, Wt, 0.0, u * t, [0.0, -m * G], dWn_v=[-u * u / R])
    assert res.success and res.sliding[0]
    np.testing.assert_allclose(res.c_n, [m * (G * np.cos(th) + u * u / R)], rtol=1e-12)
    np.testing.assert_allclose(Wn[:, 0] @ res.a - u * u / R, 0.0, atol=1e-12)  # stays on the ring


@pytest.mark.parametrize("c", [0.5, 2.0, -4.0, 6.0])
def test_full_rank_acceleration_dJt_v(c):
    # a contact point whose tangential acceleration carries J_t' v = c (a point on a curved path):
    # sticking needs a_x = -c, possible while |c| <= mu g; beyond, friction saturates at mu m g
    mu = 0.5
    res = mbdcp.full_rank_acceleration(np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], mu,
                                       np.zeros(3), [0.0, 0.0, -G], dWt_v=[c, 0.0])
    assert res.success
    expected = -c if abs(c) <= mu * G else -mu * G * np.sign(c)
    np.testing.assert_allclose(res.a, [expected, 0.0, 0.0], atol=1e-10)


def test_full_rank_acceleration_kinetic_friction_matches_instantaneous():
    # a particle sliding diagonally on the floor: Coulomb's force opposes the sliding direction exactly
    v = np.array([0.6, 0.8, 0.0])
    res = mbdcp.full_rank_acceleration(np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], 0.4,
                                       v, [0.0, 0.0, -G])
    np.testing.assert_allclose(res.a, -0.4 * G * v, atol=1e-12)
    np.testing.assert_allclose(res.c_t[0], -0.4 * G * v[:2], atol=1e-12)


def test_full_rank_acceleration_bad_input():
    args = (np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], 0.5, np.zeros(3), [0, 0, -G])
    with pytest.raises(ValueError, match="dWt_v"):
        mbdcp.full_rank_acceleration(*args, dWt_v=[1.0])
    with pytest.raises(ValueError, match="dWn_v"):
        mbdcp.full_rank_acceleration(*args, dWn_v=[1.0, 2.0])
    with pytest.raises(ValueError, match="mu"):
        mbdcp.full_rank_acceleration(*args[:3], -1.0, *args[4:])
    with pytest.raises(ValueError, match="Wt"):
        mbdcp.full_rank_acceleration(np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]], 0.5,
                                     np.zeros(3), [0, 0, -G])
    with pytest.raises(ValueError, match="k"):
        mbdcp.full_rank_acceleration(*args[:5], [0.0, 1.0])


def test_sphere_columns_are_those_of_trinkles_sphere():
    """sphere_columns gives the normal and the four directions of sphere_on_plane (Trinkle 2003,
    before eq. 48), and any other direction's column (d, r_c x d) at the contact (0, 0, -r)."""
    M, Wn, D, E, U = mbdcp.examples.sphere_on_plane(r=2.0)
    col = mbdcp.examples.sphere_columns
    np.testing.assert_array_equal(col([[0.0, 0.0, 1.0]], r=2.0), Wn)
    np.testing.assert_array_equal(col([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, -1.0, 0]], r=2.0), D)
    d = np.array([[0.6, 0.8, 0.0]])
    np.testing.assert_allclose(col(d, r=2.0)[3:, 0], np.cross([0.0, 0.0, -2.0], d[0]), atol=1e-15)
    with pytest.raises(ValueError, match="directions"):
        col([1.0, 0.0, 0.0])
