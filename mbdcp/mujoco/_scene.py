"""A mechanics scene written as a MuJoCo model: the same bodies (masses, inertias, positions,
orientations, velocities), walls, fixed blocks, gravity, friction and time step, so that one scene
runs in :mod:`mbdcp.mechanics`, in :mod:`mbdcp.mujoco` and in MuJoCo's own ``mj_step``."""
import numpy as np

from mbdcp.infrastructure import validate as val

__all__ = ["scene_mjcf", "from_scene"]


def _vec(x):
    return " ".join(f"{float(c):.17g}" for c in np.ravel(x))


def _body(b, friction):
    """The MJCF of one body: a free body, its inertia given explicitly (MuJoCo would otherwise
    derive it from the geom)."""
    if b.half_extents is not None:
        shape = f'type="box" size="{_vec(b.half_extents)}"'
    elif b.radius > 0.0:
        shape = f'type="sphere" size="{float(b.radius):.17g}"'
    else:
        raise ValueError("scene_mjcf writes spheres and boxes, not particles")
    J = np.asarray(b.inertia, float)
    inertial = (f'<inertial pos="0 0 0" mass="{float(b.mass):.17g}" '
                f'fullinertia="{_vec([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]])}"/>')
    return (f'<body pos="{_vec(b.position)}" quat="{_vec(b.quaternion)}"><freejoint/>{inertial}'
            f'<geom {shape} {friction}/></body>')


def scene_mjcf(scene, h):
    """The MJCF text of a spatial ``scene`` (spheres and boxes among fixed planes and blocks, no
    joints) with time step h; MuJoCo's own solver options are its Newton method."""
    from mbdcp.mechanics import Block, Scene

    if not isinstance(scene, Scene):
        raise TypeError(f"scene must be a mbdcp.mechanics.Scene, got {val.describe(scene)}")
    h = val.positive_scalar("h", h)
    if scene.planar or scene.joints:
        raise ValueError("scene_mjcf writes spatial scenes without joints")
    if any(np.any(np.asarray(w.velocity) != 0.0) for w in scene.walls):
        raise ValueError("scene_mjcf writes fixed walls only")
    friction = f'friction="{float(scene.mu):.17g} 0 0"'
    geoms = [f'<geom type="box" size="{_vec(w.half_extents)}" pos="{_vec(w.position)}" quat="{_vec(w.quaternion)}" '
             f'{friction}/>' if isinstance(w, Block) else
             f'<geom type="plane" size="0 0 1" pos="{_vec(w.point)}" zaxis="{_vec(w.normal)}" {friction}/>'
             for w in scene.walls]
    bodies = [_body(b, friction) for b in scene.bodies]
    return (f'<mujoco><option timestep="{h:.17g}" gravity="{_vec(scene.gravity)}" solver="Newton"/><worldbody>'
            + "".join(geoms) + "".join(bodies) + "</worldbody></mujoco>")


def from_scene(scene, h):
    """A :class:`Model` of the scene (:func:`scene_mjcf`) at its state: ``mj_data``'s velocities
    are the bodies' (a free joint's angular velocity in the body frame, as MuJoCo takes it)."""
    from mbdcp.mujoco._model import load

    model = load(scene_mjcf(scene, h))
    mj, data = model._mj, model.mj_data
    for k, b in enumerate(scene.bodies):
        R = np.empty(9)
        mj.mju_quat2Mat(R, np.asarray(b.quaternion, float))
        data.qvel[6 * k:6 * k + 3] = b.velocity
        data.qvel[6 * k + 3:6 * k + 6] = R.reshape(3, 3).T @ np.asarray(b.omega, float)
    return model
