"""Full-rank friction LCP (Peiret et al.) and the instantaneous model with Painlevé's paradox."""
import numpy as np
import pytest

import mbdcp
from mbdcp import Status
from mbdcp.formulations.full_rank import tangent_directions
from mbdcp.testing import random_scene

G = 9.81


def incline(theta, mu, v0=(0.0, 0.0, 0.0), h=0.01):
    """A unit particle (3 velocities) on a plane tilted by theta about y; u up the slope."""
    n = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    u = np.array([np.cos(theta), 0.0, np.sin(theta)])
    w = np.array([0.0, 1.0, 0.0])
    return (np.eye(3), n[:, None], np.array([u, w]).T, mu, np.asarray(v0, float), h), \
        dict(p_ext=np.array([0.0, 0.0, -G * h])), u


def check_full_rank(res, M, Wn, Wt, mu, v, h, n_d, p_ext=None, psi_n=None, tol=1e-9):
    """Every condition of the full-rank model by definition."""
    n_c = Wn.shape[1]
    p_ext = np.zeros(M.shape[0]) if p_ext is None else p_ext
    psi_n = np.zeros(n_c) if psi_n is None else psi_n
    mu = np.broadcast_to(mu, (n_c,))
    vn, pt = res.v_next, res.p_t.ravel()
    scale = max(1.0, np.abs(M @ v + p_ext).max())
    np.testing.assert_allclose(M @ (vn - v) - Wt @ pt - Wn @ res.p_n, p_ext, atol=tol * scale)
    E = np.kron(np.eye(n_c), tangent_directions(n_d))
    kp, km = res.kappa_plus.ravel(), res.kappa_minus.ravel()
    np.testing.assert_allclose(Wt.T @ vn, E @ (kp - km), atol=tol * scale)
    mu_b = np.repeat(mu, n_d)
    pn_b = np.repeat(res.p_n, n_d)
    for a, b in [(res.p_n, Wn.T @ vn + psi_n / h),
                 (kp, mu_b * pn_b + E.T @ pt + res.rho * km),
                 (km, mu_b * pn_b - E.T @ pt + res.rho * kp)]:
        assert a.min(initial=0) >= -tol * scale and b.min(initial=0) >= -tol * scale
        assert np.abs(a * b).max(initial=0) <= tol * scale


@pytest.mark.parametrize("theta_deg, mu", [(10, 0.3), (20, 0.5), (30, 0.7), (40, 0.9)])
def test_incline_sticks_when_tan_below_mu(theta_deg, mu):
    th = np.radians(theta_deg)
    assert np.tan(th) < mu
    args, kw, u = incline(th, mu)
    res = mbdcp.full_rank_step(*args, **kw)
    assert res.success
    np.testing.assert_allclose(res.v_next, 0.0, atol=1e-12)
    assert np.all(res.kappa_plus == 0) and np.all(res.kappa_minus == 0)
    check_full_rank(res, *args, n_d=2, **kw)


@pytest.mark.parametrize("theta_deg, mu, n_d", [(30, 0.3, 2), (45, 0.5, 2), (60, 0.2, 4), (35, 0.0, 3)])
def test_incline_slides_with_closed_form_speed(theta_deg, mu, n_d):
    th, h = np.radians(theta_deg), 0.01
    args, kw, u = incline(th, mu, h=h)
    res = mbdcp.full_rank_step(*args, n_d=n_d, **kw)
    assert res.success
    expect = h * G * (np.sin(th) - mu * np.cos(th))
    np.testing.assert_allclose(res.v_next, -expect * u, atol=1e-12)  # straight down the slope
    assert res.p_n[0] == pytest.approx(G * h * np.cos(th))
    check_full_rank(res, *args, n_d=n_d, **kw)


def _st_lcp_with_pairs(n_d):
    """The Stewart–Trinkle LCP of step() for a sphere on a plane with n_d opposite-pair directions."""
    M = np.diag([1.0, 1.0, 1.0, 0.4, 0.4, 0.4])
    r = np.array([0.0, 0.0, -1.0])
    n = np.array([0.0, 0.0, 1.0])
    col = lambda d: np.r_[d, np.cross(r, d)]  # noqa: E731
    Wn = col(n)[:, None]
    D = np.array([col(d) for d in mbdcp.friction_basis(n, 2 * n_d).T]).T
    E = np.ones((2 * n_d, 1))
    Wt = np.array([col([1.0, 0, 0]), col([0, 1.0, 0])]).T
    return M, Wn, D, E, Wt


@pytest.mark.parametrize("n_d", [2, 3, 4, 6, 8])
def test_full_rank_lead_matrix_versus_rank_deficient_stewart_trinkle(n_d):
    M, Wn, D, E, Wt = _st_lcp_with_pairs(n_d)
    v = np.array([1.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    st = mbdcp.step(M, Wn, D, E, [0.3], v, 0.01, p_ext=[0, 0, -G * 0.01, 0, 0, 0], return_lcp=True)
    fr = mbdcp.full_rank_step(M, Wn, Wt, 0.3, v, 0.01, n_d=n_d, p_ext=[0, 0, -G * 0.01, 0, 0, 0],
                              return_lcp=True)
    N_st, N_fr = st.lcp.F.shape[0], fr.lcp.F.shape[0]
    assert np.linalg.matrix_rank(st.lcp.F) < N_st        # opposite pairs: dependent columns
    assert np.linalg.matrix_rank(fr.lcp.F) == N_fr       # the phantom inertia restores full rank
    assert N_fr == 1 + 2 * n_d


@pytest.mark.parametrize("seed", range(12))
def test_velocity_does_not_depend_on_rho_and_kappas_exclusive(seed):
    s = random_scene(3, 5, seed)
    base = dict(n_d=4, p_ext=s.p_ext, psi_n=s.psi_n)
    results = [mbdcp.full_rank_step(s.M, s.Wn, s.Wt, s.U, s.v, s.h, rho=rho, **base)
               for rho in (None, 1e-3, 1.0, 1e3)]
    ok = [r for r in results if r.success]
    assert len(ok) >= 3
    for r in ok:
        check_full_rank(r, s.M, s.Wn, s.Wt, s.U, s.v, s.h, **base)
        both = (r.kappa_plus > 1e-10) & (r.kappa_minus > 1e-10)
        assert not both.any()                             # never kappa+ and kappa- together
        np.testing.assert_allclose(r.v_next, ok[0].v_next, atol=1e-8 * max(1, np.abs(s.v).max()))


def spheres_on_floor(n, v, push):
    """n unit spheres (m = 1, I = 2/5) each touching the floor once: a non-redundant scene."""
    M = np.diag(np.tile([1.0, 1.0, 1.0, 0.4, 0.4, 0.4], n))
    r = np.array([0.0, 0.0, -1.0])
    col = lambda d: np.r_[d, np.cross(r, d)]  # noqa: E731
    Wn, Wt, D = np.zeros((6 * n, n)), np.zeros((6 * n, 2 * n)), np.zeros((6 * n, 4 * n))
    for i in range(n):
        s = slice(6 * i, 6 * i + 6)
        Wn[s, i] = col([0.0, 0.0, 1.0])
        Wt[s, 2 * i], Wt[s, 2 * i + 1] = col([1.0, 0, 0]), col([0, 1.0, 0])
        for k, d in enumerate(mbdcp.friction_basis([0, 0, 1], 4).T):
            D[s, 4 * i + k] = col(d)
    E = np.kron(np.eye(n), np.ones((4, 1)))
    h = 0.01
    p_ext = np.tile([push[0] * h, push[1] * h, -G * h, 0, 0, 0], n)
    return M, Wn, Wt, D, E, np.asarray(v, float), h, p_ext


@pytest.mark.parametrize("v, push", [
    (np.zeros(12), (0.5, -0.3)),                                            # at rest, small push
    (np.r_[1.0, 0, 0, 0, 1.0, 0, 0, -0.5, 0, 0.5, 0, 0], (0.0, 0.0)),       # both rolling
])
def test_sticking_scenes_agree_with_step(v, push):
    M, Wn, Wt, D, E, v, h, p_ext = spheres_on_floor(2, v, push)
    st = mbdcp.step(M, Wn, D, E, np.full(2, 0.5), v, h, p_ext=p_ext)
    fr = mbdcp.full_rank_step(M, Wn, Wt, 0.5, v, h, p_ext=p_ext)
    assert st.success and fr.success
    np.testing.assert_allclose(fr.v_next, st.v_next, atol=1e-12)
    np.testing.assert_allclose(Wt.T @ fr.v_next, 0.0, atol=1e-12)  # contact points stick
    np.testing.assert_allclose(fr.p_n, G * h)


def _box_on_four_corners():
    # Four coplanar corners of a box: 8 tangent columns, 3 in-plane motions (Peiret et al. assume
    # non-redundant contact forces).
    corners = [np.array([sx, sy, -0.5]) for sx in (-0.5, 0.5) for sy in (-0.5, 0.5)]
    col = lambda r, d: np.r_[d, np.cross(r, d)]  # noqa: E731
    Wn = np.array([col(r, [0, 0, 1.0]) for r in corners]).T
    Wt = np.array([col(r, d) for r in corners for d in ([1.0, 0, 0], [0, 1.0, 0])]).T
    return np.diag([2.0, 2, 2, 1, 2, 3]), Wn, Wt


def test_redundant_tangent_jacobian_strict_is_reported():
    M, Wn, Wt = _box_on_four_corners()
    with pytest.raises(ValueError, match="Wt must have full column rank"):
        mbdcp.full_rank_step(M, Wn, Wt, 0.5, np.zeros(6), 0.01, compliance=0)


@pytest.mark.parametrize("push, expect", [(0.0, 0.0), (9.0, 0.0), (20.0, 0.01 * (20.0 / 2 - 0.5 * G))])
def test_box_on_four_corners_with_a_compliant_tangential_relation(push, expect):
    # m = 2 resting on four corners, pushed along x: sticks while push < mu m g (9.81), else
    # accelerates at push/m - mu g; the normal impulses carry the weight
    M, Wn, Wt = _box_on_four_corners()
    h = 0.01
    p_ext = np.array([push * h, 0, -2 * G * h, 0, 0, 0])
    res = mbdcp.full_rank_step(M, Wn, Wt, 0.5, np.zeros(6), h, n_d=4, p_ext=p_ext, psi_n=np.zeros(4))
    assert res.success and 0 < res.compliance < 1e-6
    np.testing.assert_allclose(res.v_next, [expect, 0, 0, 0, 0, 0], atol=1e-7)
    assert res.p_n.sum() == pytest.approx(2 * G * h, rel=1e-9)
    # the same answer as the Stewart-Trinkle step on the four corners
    D = np.hstack([np.c_[Wt[:, 2 * i], Wt[:, 2 * i + 1], -Wt[:, 2 * i], -Wt[:, 2 * i + 1]] for i in range(4)])
    E = np.kron(np.eye(4), np.ones((4, 1)))
    lcp = mbdcp.step(M, Wn, D, E, 0.5, np.zeros(6), h, p_ext=p_ext, psi_n=np.zeros(4))
    np.testing.assert_allclose(res.v_next, lcp.v_next, atol=1e-7)
    explicit = mbdcp.full_rank_step(M, Wn, Wt, 0.5, np.zeros(6), h, n_d=4, p_ext=p_ext, psi_n=np.zeros(4),
                                    compliance=1e-6)
    assert explicit.compliance == 1e-6 and explicit.success


def test_zero_contacts_and_bad_input():
    res = mbdcp.full_rank_step(np.eye(2), np.zeros((2, 0)), np.zeros((2, 0)), [], [1.0, 0.0], 0.1, p_ext=[0, -1])
    assert res.success and np.allclose(res.v_next, [1.0, -1.0])
    args, kw, _ = incline(0.3, 0.5)
    M, Wn, Wt, mu, v, h = args
    with pytest.raises(ValueError, match=r"Wt must have shape \(n_v, 2 n_c\) = \(3, 2\)"):
        mbdcp.full_rank_step(M, Wn, Wt[:, :1], mu, v, h)
    with pytest.raises(ValueError, match="Wt must have full column rank"):
        mbdcp.full_rank_step(M, Wn, np.c_[Wt[:, 0], Wt[:, 0]], mu, v, h, compliance=0)
    with pytest.raises(ValueError, match="compliance must be nonnegative"):
        mbdcp.full_rank_step(M, Wn, Wt, mu, v, h, compliance=-1.0)
    with pytest.raises(ValueError, match="mu must be nonnegative"):
        mbdcp.full_rank_step(M, Wn, Wt, -0.1, v, h)
    with pytest.raises(ValueError, match="rho must be positive"):
        mbdcp.full_rank_step(M, Wn, Wt, mu, v, h, rho=-1.0)
    with pytest.raises(ValueError, match="n_d must be at least 1"):
        mbdcp.full_rank_step(M, Wn, Wt, mu, v, h, n_d=0)


# ---- instantaneous model ----------------------------------------------------------------------

def painleve_rod(theta, mu, m=1.0, l=1.0):  # noqa: E741 (the rod's half-length, as in the literature)
    """A rod of length 2 l resting on its lower end, sliding toward -x, at angle theta."""
    M = np.diag([m, m, m * l * l / 3.0])
    Wn = np.array([[0.0], [1.0], [-l * np.cos(theta)]])
    t = np.array([1.0, 0.0, l * np.sin(theta)])
    D = np.array([t, -t]).T
    v = np.array([-1.0, 0.0, 0.0])  # the end slides toward -x
    return M, Wn, D, np.ones((2, 1)), [mu], v, np.array([0.0, -m * G, 0.0])


@pytest.mark.parametrize("theta_deg, mu", [(30, 0.1), (45, 0.3), (60, 0.5), (20, 0.3)])
def test_painleve_rod_normal_force(theta_deg, mu):
    th = np.radians(theta_deg)
    A = 1 + 3 * np.cos(th) ** 2 - 3 * mu * np.sin(th) * np.cos(th)
    assert A > 0
    res = mbdcp.instantaneous(*painleve_rod(th, mu))
    assert res.success and res.sliding[0]
    assert res.c_n[0] == pytest.approx(G / A, rel=1e-12)
    Wn = painleve_rod(th, mu)[1]
    assert (Wn.T @ res.a)[0] == pytest.approx(0.0, abs=1e-12)  # stays in contact


def test_painleve_paradox_has_no_solution():
    th, mu = np.radians(30), 3.0
    assert 1 + 3 * np.cos(th) ** 2 - 3 * mu * np.sin(th) * np.cos(th) < 0
    res = mbdcp.instantaneous(*painleve_rod(th, mu))
    assert res.status == Status.RAY_TERMINATION and not res.success


def test_block_on_table_and_sliding_block():
    M, Wn = 2.0 * np.eye(2), np.array([[0.0], [1.0]])
    D, E = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    k = np.array([0.0, -2.0 * G])
    rest = mbdcp.instantaneous(M, Wn, D, E, [0.4], [0.0, 0.0], k)
    assert rest.success and rest.c_n[0] == pytest.approx(2.0 * G) and not rest.sliding[0]
    np.testing.assert_allclose(rest.a, 0.0, atol=1e-14)
    pushed = mbdcp.instantaneous(M, Wn, D, E, [0.4], [0.0, 0.0], k + [3.0, 0.0])  # below mu m g: sticks
    assert pushed.success and pushed.a[0] == pytest.approx(0.0, abs=1e-12)
    slide = mbdcp.instantaneous(M, Wn, D, E, [0.4], [1.5, 0.0], k)
    assert slide.success and slide.sliding[0]
    assert slide.a[0] == pytest.approx(-0.4 * G)  # kinetic friction opposes the motion
    assert slide.beta.sum() == 0.0 and slide.sigma[0] == 0.0


def test_instantaneous_bad_input():
    with pytest.raises(ValueError, match="k must have shape"):
        mbdcp.instantaneous(np.eye(2), [[0.0], [1.0]], np.zeros((2, 0)), np.zeros((0, 1)), [0.1], [0, 0], [1.0])
    with pytest.raises(ValueError, match="M must be symmetric positive definite"):
        mbdcp.instantaneous(-np.eye(2), [[0.0], [1.0]], np.zeros((2, 0)), np.zeros((0, 1)), [0.1], [0, 0], [0, 0])
