"""mbdcp.mujoco.from_scene writes a scene as MJCF faithfully (the MuJoCo benchmark's scenes): MuJoCo
then holds the same bodies (masses, inertias, positions, orientations, velocities), walls, fixed
blocks, gravity, friction and time step."""
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from mbdcp.mechanics import Block, Body3D, Plane, Scene, simulate, sphere_pile_scene
from mbdcp.mujoco import from_scene
from mbdcp.mujoco import scene_mjcf as mjcf
from mbdcp.mujoco import simulate as mj_simulate


def mujoco_model(scene, h):
    model = from_scene(scene, h)
    return model.mj_model, model.mj_data


def scene():
    q = np.array([np.cos(0.3), np.sin(0.3) * 0.6, 0.0, np.sin(0.3) * 0.8])
    box = Body3D(2.0, [0.0, 0.0, 1.0], quaternion=q, velocity=[0.1, 0.2, -0.3], omega=[1.0, -2.0, 0.5],
                 half_extents=[0.4, 0.2, 0.1], inertia=[[0.3, 0.02, 0.0], [0.02, 0.2, 0.01], [0.0, 0.01, 0.4]])
    ball = Body3D(0.5, [2.0, 1.0, 0.5], quaternion=q, omega=[0.0, 3.0, -1.0], radius=0.25)
    walls = [Plane([0, 0, 0], [0, 0, 1]), Plane([3, 0, 0], [-1, 0, 0])]
    return Scene([box, ball], walls, gravity=[0.0, 0.5, -9.0], mu=0.4)


def test_the_model_holds_the_scene():
    s, h = scene(), 0.005
    model, data = mujoco_model(s, h)
    assert model.opt.timestep == h and np.allclose(model.opt.gravity, s.gravity)
    assert model.nbody == 3 and model.ngeom == 4  # the world, two bodies; two planes, two shapes
    mujoco.mj_forward(model, data)
    for k, b in enumerate(s.bodies, start=1):
        assert model.body_mass[k] == b.mass
        np.testing.assert_allclose(np.sort(model.body_inertia[k]), np.linalg.eigvalsh(b.inertia), rtol=1e-12)
        np.testing.assert_allclose(data.xpos[k], b.position, rtol=0, atol=1e-15)
        np.testing.assert_allclose(data.xquat[k], b.quaternion, rtol=0, atol=1e-15)
        # world-frame velocities back from MuJoCo's (linear in the world, angular in the body frame)
        R = data.xmat[k].reshape(3, 3)
        qvel = data.qvel[6 * (k - 1):6 * k]
        np.testing.assert_allclose(qvel[:3], b.velocity, atol=1e-15)
        np.testing.assert_allclose(R @ qvel[3:], b.omega, atol=1e-14)
    kinds = [mujoco.mjtGeom.mjGEOM_PLANE] * 2 + [mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_SPHERE]
    assert list(model.geom_type) == kinds
    np.testing.assert_allclose(model.geom_size[2], s.bodies[0].half_extents)
    assert model.geom_size[3][0] == s.bodies[1].radius
    assert np.all(model.geom_friction[:, 0] == s.mu)
    np.testing.assert_allclose(data.geom_xmat[1].reshape(3, 3)[:, 2], [-1.0, 0.0, 0.0], atol=1e-15)  # its normal
    np.testing.assert_allclose(data.geom_xpos[1], [3.0, 0.0, 0.0])


def test_a_pile_falls_in_mujoco_as_written():
    model, data = mujoco_model(sphere_pile_scene(8, width=2), 0.01)
    for _ in range(100):
        mujoco.mj_step(model, data)
    heights = data.qpos.reshape(-1, 7)[:, 2]
    assert np.all(heights > 0.3) and np.all(heights < 2.5)  # on the floor, not through it


def test_what_mjcf_cannot_write_is_refused():
    with pytest.raises(TypeError, match="scene must be"):
        mjcf("<mujoco/>", 0.01)
    with pytest.raises(ValueError, match="particles"):
        mjcf(Scene([Body3D(1.0, [0, 0, 1.0])]), 0.01)
    moving = Plane([0, 0, 0], [0, 0, 1])
    moving.velocity = [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="fixed walls"):
        mjcf(Scene([Body3D(1.0, [0, 0, 1.0], radius=0.1)], [moving]), 0.01)


def test_a_free_ball_turns_about_its_world_axis():
    s, h = scene(), 1e-3
    model, data = mujoco_model(s, h)
    mujoco.mj_step(model, data)
    ball = s.bodies[1]
    w = np.asarray(ball.omega, float)
    angle = np.linalg.norm(w) * h
    turn = np.r_[np.cos(angle / 2), np.sin(angle / 2) * w / np.linalg.norm(w)]  # exp(omega h / 2), world frame
    expected = np.empty(4)
    mujoco.mju_mulQuat(expected, turn, np.asarray(ball.quaternion, float))
    np.testing.assert_allclose(data.qpos[7 + 3:7 + 7], expected, atol=1e-12)


def test_a_box_on_a_block_runs_the_same_in_both_layers():
    box = Body3D(1.0, [0.3, 0.0, 0.75], velocity=[1.0, 0.5, 0.0], half_extents=[0.25, 0.25, 0.25], inertia=[1 / 24] * 3)
    scene = Scene([box], [Plane([0, 0, 0], [0, 0, 1]), Block([0, 0, 0.25], [2.0, 2.0, 0.25])], mu=0.3)
    model = from_scene(scene, 0.01)
    ours = mj_simulate(model, 0.3, progress=False)
    mech = simulate(scene, 0.01, 0.3, progress=False)
    assert ours.success and mech.success
    np.testing.assert_allclose(ours.positions[:, :3], mech.positions[:, :3], atol=1e-9)
