"""Defaults that do not depend on the frame: with the default friction directions a sliding
contact meets the full friction against its motion whatever its direction (the polygon's vertex
faces the slip), so a box slides the same way in every direction and a turned scene gives the
turned trajectory; the default activation distance catches a body falling at the step's speed."""
import numpy as np
import pytest

import mbdcp
from mbdcp.formulations.step import unit_circle
from mbdcp.mechanics import Body3D, Plane, Scene, quaternion_to_matrix, simulate
from mbdcp.mechanics.assembly import SLIP_ROUNDING, friction_directions

G = 9.81


def _solved(tr):
    return tr.success and all(s == mbdcp.Status.SOLVED for s in tr.statuses)


def _product(p, q):
    """The quaternion of the rotation q followed by p."""
    return np.r_[p[0] * q[0] - p[1:] @ q[1:], p[0] * q[1:] + q[0] * p[1:] + np.cross(p[1:], q[1:])]


def _turn_z(angle):
    return np.array([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)])


@pytest.mark.parametrize("degrees", [0.0, 10.0, 30.0, 45.0, 77.0])
def test_a_box_slides_on_the_floor_the_same_way_in_every_direction(degrees):
    phi = np.radians(degrees)
    u = np.array([np.cos(phi), np.sin(phi), 0.0])
    box = Body3D(1.0, [0, 0, 0.5], quaternion=_turn_z(0.3), velocity=2.0 * u, half_extents=[0.5, 0.4, 0.5])
    tr = simulate(Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=0.4), 0.01, 0.4, progress=False)
    assert _solved(tr)
    vel = tr.velocities[:, :3]
    np.testing.assert_allclose(vel - np.outer(vel @ u, u), 0.0, atol=1e-12)  # no sideways drift
    np.testing.assert_allclose(np.diff(vel @ u) / 0.01, -0.4 * G, rtol=0, atol=1e-9)  # mu g, exactly
    np.testing.assert_allclose(tr.velocities[:, 3:], 0.0, atol=1e-12)  # no spin


@pytest.mark.parametrize("mu", [0.3, 0.7])
def test_a_box_on_a_30_degree_slope_turned_30_degrees_about_the_vertical(mu):
    # the slope falls along u (30 degrees from x); the box sits on it, turned with it
    turn, tilt = np.radians(30), np.radians(30)
    u = np.array([np.cos(turn), np.sin(turn), 0.0])
    axis = np.cross([0, 0, 1.0], u)
    e_tilt = np.r_[np.cos(tilt / 2), np.sin(tilt / 2) * axis]
    n = quaternion_to_matrix(e_tilt) @ [0, 0, 1.0]
    assert n @ u > 0  # the slope falls along u
    e = _product(e_tilt, _turn_z(turn))  # turned about the vertical, then tilted with the slope
    box = Body3D(1.0, 0.5 * n, quaternion=e, half_extents=[0.5, 0.5, 0.5])
    tr = simulate(Scene([box], [Plane([0, 0, 0], n)], mu=mu), 0.01, 0.5, progress=False)
    assert _solved(tr)
    down = n[2] * n - [0, 0, 1.0]
    down /= np.linalg.norm(down)  # the steepest descent in the slope
    assert down @ u == pytest.approx(np.cos(tilt))
    vel = tr.velocities[:, :3]
    np.testing.assert_allclose(vel - np.outer(vel @ down, down), 0.0, atol=1e-12)  # no sideways drift
    if mu == 0.3:
        np.testing.assert_allclose(np.diff(vel @ down) / 0.01, G * (np.sin(tilt) - mu * np.cos(tilt)), rtol=0, atol=1e-9)
    else:
        np.testing.assert_allclose(vel, 0.0, atol=1e-12)


def test_a_turned_scene_gives_the_turned_trajectory():
    def run(angle):
        R, e = quaternion_to_matrix(_turn_z(angle)), _turn_z(angle)
        bodies = [Body3D(1.0, R @ [0, 0, 0.5], quaternion=e, velocity=R @ [1.5, 0.4, 0], omega=R @ [0, 0, 2.0],
                         half_extents=[0.5, 0.3, 0.5]),
                  Body3D(1.0, R @ [3.0, 0, 0.4], velocity=R @ [-1.0, 0.5, 0], radius=0.4)]
        tr = simulate(Scene(bodies, [Plane([0, 0, 0], [0, 0, 1])], mu=0.3), 0.01, 0.6, progress=False)
        assert _solved(tr)
        return R, tr.positions.reshape(len(tr.times), 2, 7)[:, :, :3]

    _, x0 = run(0.0)
    R, x1 = run(0.6)
    np.testing.assert_allclose(x1, x0 @ R.T, atol=1e-9)


@pytest.mark.parametrize("shape", ["sphere", "box"])
def test_the_default_delta_catches_a_body_falling_at_the_steps_speed(shape):
    kw = dict(radius=0.05) if shape == "sphere" else dict(half_extents=[0.05, 0.05, 0.05])
    body = Body3D(1.0, [0, 0, 3.0], velocity=[0, 0, -5.0], **kw)  # 5 m/s and more: 5 cm per step and more
    scene = Scene([body], [Plane([0, 0, 0], [0, 0, 1])])
    assert scene.delta == pytest.approx(0.005)  # a tenth of the size: far less than a step's fall
    tr = simulate(scene, 0.01, 1.0, progress=False)
    assert _solved(tr) and tr.max_penetration.max() <= 1e-12
    assert tr.positions[-1, 2] == pytest.approx(0.05, abs=1e-12)  # caught at the floor, at rest
    given = simulate(Scene([Body3D(1.0, [0, 0, 3.0], velocity=[0, 0, -5.0], **kw)], [Plane([0, 0, 0], [0, 0, 1])],
                           delta=0.005), 0.01, 1.0, progress=False)
    assert given.first_failure.reason == "penetration" and "delta = 0.005, given" in given.first_failure.message


def test_the_mujoco_layer_follows_the_same_rules():
    mm = pytest.importorskip("mbdcp.mujoco")
    pytest.importorskip("mujoco")
    xml = """<mujoco><option timestep="0.01"/><worldbody><geom type="plane" size="9 9 .1" friction="0.4"/>
      <body pos="0 0 3"><freejoint/><geom type="box" size=".05 .05 .05" mass="1" friction="0.4"/></body>
      </worldbody></mujoco>"""
    model = mm.load(xml)
    model.mj_data.qvel[2] = -5.0
    tr = mm.simulate(model, 1.0, progress=False)
    assert tr.success and tr.max_penetration.max() <= 1e-12 and tr.positions[-1, 2] == pytest.approx(0.05, abs=1e-12)
    fixed = mm.simulate(model, 1.0, delta=0.005, progress=False)
    assert fixed.first_failure.reason == "penetration" and "delta = 0.005, given" in fixed.first_failure.message
    slide = mm.load(xml.replace('pos="0 0 3"', 'pos="0 0 0.05"'))
    u = np.array([np.cos(0.5), np.sin(0.5), 0.0])
    slide.mj_data.qvel[:3] = 2.0 * u
    tr = mm.simulate(slide, 0.3, progress=False)
    vel = tr.velocities[:, :3]
    np.testing.assert_allclose(vel - np.outer(vel @ u, u), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.diff(vel @ u) / 0.01, -0.4 * G, rtol=0, atol=1e-9)


def _directions_by_definition(n, n_d, slip=None, scale=None):
    """The friction directions evaluated from their definition in NumPy: t1 the world axis least
    aligned with n (the first of ties) less its normal part, or against the tangential slip where
    it exceeds SLIP_ROUNDING of its scale; direction k = cos_k t1 + sin_k (n x t1)."""
    k = np.argmin(np.abs(n), axis=1)
    t1 = np.eye(3)[k] - n[np.arange(len(n)), k][:, None] * n
    if slip is not None:
        u = slip - np.sum(slip * n, axis=1)[:, None] * n
        sliding = np.sum(u * u, axis=1) > (SLIP_ROUNDING * scale) ** 2
        t1[sliding] = -u[sliding]
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    c, s = unit_circle(n_d)
    return t1[:, :, None] * c + np.cross(n, t1)[:, :, None] * s


@pytest.mark.parametrize("n_d", [2, 4, 6, 8])
def test_friction_directions_follow_their_definition(n_d):
    rng = np.random.default_rng(n_d)
    n = rng.normal(size=(300, 3))
    n = np.r_[[[0, 0, 1.0], [1.0, 0, 0], [0, -1.0, 0], [0.6, 0, 0.8]], n / np.linalg.norm(n, axis=1)[:, None]]
    slip, scale = rng.normal(size=n.shape), np.ones(len(n))
    slip[::3] *= 1e-11  # below the rounding of its scale: the axis rule
    slip[1::3] = n[1::3] * 2.0  # along the normal: no tangential slip
    for args in ((), (slip, scale)):
        dirs = friction_directions(n, n_d, None, *args)
        np.testing.assert_allclose(dirs, _directions_by_definition(n, n_d, *args), rtol=0, atol=1e-15)
        np.testing.assert_allclose(np.einsum("cik,ci->ck", dirs, n), 0.0, atol=1e-12)  # u carries eps |slip|
        np.testing.assert_allclose(np.linalg.norm(dirs, axis=1), 1.0, rtol=1e-15)
    u = slip[2::3] - np.sum(slip[2::3] * n[2::3], axis=1)[:, None] * n[2::3]
    first = friction_directions(n, n_d, 1, slip, scale)[2::3, :, 0]  # a sliding contact's first direction opposes it
    np.testing.assert_allclose(first, -u / np.linalg.norm(u, axis=1)[:, None], atol=1e-15)
    assert friction_directions(n, n_d, 3).shape == (len(n), 3, min(3, n_d))
