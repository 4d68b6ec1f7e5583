"""Penetration correction (the cap on the correction speed of Negrut, Serban & Tasora 2018, a Baumgarte factor) and the
default activation distance: no bounce from stabilisation."""
import numpy as np
import pytest

import mbdcp
from mbdcp.mechanics import Body2D, Body3D, Line, Plane, Scene, simulate

# a unit particle in the plane (x, y), 1 mm below a floor, sliding at 0.3 m/s; no gravity
M, WN, D, E = np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]]
V, H, PSI = [0.3, 0.0], 0.01, [-0.01]
WT = [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]  # for ccp: (x, z, y) with the floor normal along z


def solve(method, **kw):
    if method == "step":
        return mbdcp.step(M, WN, D, E, [0.5], V, H, psi_n=PSI, **kw).v_next
    if method == "fixed_point":
        return mbdcp.fixed_point(M, WN, D, E, [0.5], V, H, psi_n=PSI, algorithm=2, **kw).v_next
    res = mbdcp.ccp(np.eye(3), [[0.0], [1.0], [0.0]], WT, 0.0, [0.3, 0.0, 0.0], H, psi_n=PSI, tol=1e-12, **kw)
    return res.v_next[[0, 1]]


@pytest.mark.parametrize("method", ["step", "fixed_point", "ccp"])
def test_correction_speed_closed_form(method):
    # uncorrected: the 1 cm penetration is removed in one step, at 1 m/s
    assert solve(method)[1] == pytest.approx(1.0, rel=1e-10)
    # capped at 0.2 m/s; Baumgarte 0.1 asks for 0.1 m/s; both: the smaller
    assert solve(method, max_correction_speed=0.2)[1] == pytest.approx(0.2, rel=1e-10)
    assert solve(method, baumgarte=0.1)[1] == pytest.approx(0.1, rel=1e-10)
    assert solve(method, baumgarte=0.5, max_correction_speed=0.2)[1] == pytest.approx(0.2, rel=1e-10)


def test_friction_follows_the_capped_normal_impulse():
    # p_n = 1 stops the slide (mu p_n = 0.5 > 0.3); capped, p_n = 0.2 leaves 0.3 - 0.1 = 0.2 m/s
    assert mbdcp.step(M, WN, D, E, [0.5], V, H, psi_n=PSI).v_next[0] == pytest.approx(0.0, abs=1e-12)
    res = mbdcp.step(M, WN, D, E, [0.5], V, H, psi_n=PSI, max_correction_speed=0.2)
    assert res.p_n[0] == pytest.approx(0.2, rel=1e-12) and res.v_next[0] == pytest.approx(0.2, rel=1e-12)


def test_gaps_are_never_changed():
    plain = mbdcp.step(M, WN, D, E, [0.5], V, H, psi_n=[0.004], p_ext=[0.0, -0.5])
    kept = mbdcp.step(M, WN, D, E, [0.5], V, H, psi_n=[0.004], p_ext=[0.0, -0.5], max_correction_speed=1e-3,
                      baumgarte=0.2)
    assert np.array_equal(plain.v_next, kept.v_next) and np.array_equal(plain.p_n, kept.p_n)


@pytest.mark.parametrize("kw, err, match", [
    (dict(baumgarte=0.0), ValueError, r"baumgarte must be in \(0, 1\]"),
    (dict(baumgarte=1.5), ValueError, r"baumgarte must be in \(0, 1\]"),
    (dict(baumgarte="1"), TypeError, "baumgarte must be a real number"),
    (dict(max_correction_speed=-1.0), ValueError, "max_correction_speed must be positive"),
    (dict(max_correction_speed=np.nan), ValueError, "max_correction_speed must be positive"),
])
@pytest.mark.parametrize("method", ["step", "fixed_point", "ccp"])
def test_settings_are_validated(method, kw, err, match):
    with pytest.raises(err, match=match):
        solve(method, **kw)


def _rebound(scene, h, **kw):
    tr = simulate(scene, h, 1.5, progress=False, **kw)
    assert tr.success, tr.first_failure
    gap = tr.positions[:, -1 if scene.planar else 2] - 0.5
    first = np.argmax(gap <= 1e-6)  # it reaches the floor (or sinks in)
    return gap[first:].max(), gap.min()


@pytest.mark.parametrize("h", [0.01, 0.002])
@pytest.mark.parametrize("method", ["lcp", "ccp"])
def test_dropped_sphere_does_not_bounce_by_default(h, method):
    # 1 m drop; the activation distance defaults to 10 % of the radius
    scene = Scene([Body3D(1.0, [0, 0, 1.5], radius=0.5)], [Plane([0, 0, 0], [0, 0, 1])], mu=0.3)
    assert scene.delta == pytest.approx(0.05)
    up, low = _rebound(scene, h, method=method)
    assert up < 1e-6 and low > -1e-6


@pytest.mark.parametrize("h", [0.01, 0.002])
def test_cap_bounds_the_bounce_without_activation_distance(h):
    # delta = 0: the sphere sinks in before its contact is seen; uncorrected it rebounds (0.11 m at
    # h = 0.01, 0.54 m at h = 0.002); capped at 0.1 m/s it rises at most v^2 / 2g + one step
    def scene():
        return Scene([Body3D(1.0, [0, 0, 1.5], radius=0.5)], [Plane([0, 0, 0], [0, 0, 1])], mu=0.3, delta=0.0)
    free, _ = _rebound(scene(), h)
    assert free > 0.05
    capped, _ = _rebound(scene(), h, max_correction_speed=0.1)
    assert capped <= 0.1 ** 2 / (2 * 9.81) + 0.1 * h + 1e-9


def test_planar_default_delta_and_particles():
    disk = Scene([Body2D(1.0, [0, 2.0], radius=0.2), Body2D(2.0, [1, 2.0], radius=0.4)], [Line([0, 0], [0, 1])])
    assert disk.delta == pytest.approx(0.02)
    assert Scene([Body2D(1.0, [0, 2.0])], [Line([0, 0], [0, 1])]).delta == 0.0  # particles: none


def _fd(f, x, eps):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("kw", [dict(baumgarte=0.5), dict(max_correction_speed=0.2), dict(baumgarte=0.3, max_correction_speed=0.5)])
def test_step_derivative_through_the_correction(kw):
    p_ext = [0.0, -0.05]

    def out(psi, h):
        return mbdcp.step(M, WN, D, E, [0.5], V, h, psi_n=[psi], p_ext=p_ext, **kw).v_next

    res = mbdcp.step(M, WN, D, E, [0.5], V, H, psi_n=PSI, p_ext=p_ext, **kw)
    d = mbdcp.derivatives.step(M, WN, D, E, [0.5], V, H, res, psi_n=PSI, p_ext=p_ext, **kw)
    for name, tangent, fd in (("psi_n", dict(psi_n=[1.0]), _fd(lambda x: out(x, H), PSI[0], 1e-6)),
                              ("h", dict(h=1.0), _fd(lambda x: out(PSI[0], x), H, 1e-7))):
        np.testing.assert_allclose(d.jvp(**tangent)["v_next"], fd, atol=1e-6, err_msg=name)
        g = d.vjp(v_next=np.array([0.3, -1.0]))
        got = g[name] if name == "h" else g[name][0]
        assert got == pytest.approx(fd @ [0.3, -1.0], abs=1e-6), name


def test_ccp_derivative_through_the_correction():
    kw = dict(max_correction_speed=0.2)
    Wn, M3 = [[0.0], [1.0], [0.0]], np.eye(3)

    def out(phi, h):
        return mbdcp.ccp(M3, Wn, WT, 0.0, [0.3, 0.0, 0.0], h, psi_n=[phi], tol=1e-12, **kw).v_next

    res = mbdcp.ccp(M3, Wn, WT, 0.0, [0.3, 0.0, 0.0], H, psi_n=PSI, tol=1e-12, **kw)
    d = mbdcp.derivatives.ccp(M3, Wn, WT, 0.0, [0.3, 0.0, 0.0], H, res, psi_n=PSI, **kw)
    np.testing.assert_allclose(d.jvp(h=1.0)["v_next"], _fd(lambda x: out(PSI[0], x), H, 1e-7), atol=1e-6)
    np.testing.assert_allclose(d.jvp(psi_n=[1.0])["v_next"], 0.0, atol=1e-12)  # capped: the gap does not matter
    g = d.vjp(v_next=np.array([0.0, 1.0, 0.0]))
    assert g["h"] == pytest.approx(0.0, abs=1e-9) and g["psi_n"][0] == 0.0
