"""A MuJoCo model (MJCF or URDF) as mbdcp steps it: :func:`load` and :class:`Model`."""
import os

import numpy as np

from mbdcp.infrastructure import validate as val
from mbdcp.mechanics import Scene
from mbdcp.mechanics.simulate import default_penetration_tolerance
from mbdcp.mujoco import _mj
from mbdcp.mujoco._assembly import Assembler
from mbdcp.mujoco._features import not_mapped, warn_not_mapped

__all__ = ["Model", "load", "controls", "friction_count", "INPUTS"]


# what of mj_data, besides the state, a step reads: applied forces, mocap poses, activations, and
# which equality constraints are on (mjData.eq_active since MuJoCo 3.0)
INPUTS = ("qfrc_applied", "xfrc_applied", "mocap_pos", "mocap_quat", "act", "eq_active")


class _Sizes:
    """The smallest size of a model's bodies, read by the mechanics layer's rules for delta and the
    penetration tolerance (:meth:`mbdcp.mechanics.Scene.default_delta`)."""

    def __init__(self, size):
        self.size = size

    def smallest_size(self):
        return self.size


def smallest_size(mj, m):
    """The smallest half extent of the geoms that can touch something and move (their bounding
    boxes in their own frames: a sphere's or capsule's radius, a box's smallest half side); None
    when there is none (planes and height fields have no size)."""
    if m.ngeom == 0:
        return None
    flat = np.isin(m.geom_type, [int(mj.mjtGeom.mjGEOM_PLANE), int(mj.mjtGeom.mjGEOM_HFIELD)])
    touching = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
    moving = m.body_weldid[m.geom_bodyid] != 0
    half = np.asarray(m.geom_aabb).reshape(m.ngeom, 6)[:, 3:]
    sizes = half[touching & moving & ~flat].min(axis=1, initial=np.inf)
    sizes = sizes[sizes > 0]
    return float(sizes.min()) if sizes.size else None


class Model:
    """A MuJoCo model stepped by mbdcp's solvers (made by :func:`load`).

    ``mj_model`` is the ``mujoco.MjModel`` (never changed by mbdcp: it reads a private copy made
    here, so changes made later to ``mj_model`` need a new ``Model(mj_model)``); ``mj_data`` a
    ``mujoco.MjData`` of it whose ``qpos``, ``qvel`` and ``ctrl`` are the default start of
    :func:`simulate` and :meth:`problem` (and whose ``qfrc_applied``, ``xfrc_applied``,
    ``mocap_pos``, ``mocap_quat``, ``act`` and ``eq_active`` they use). ``delta`` is the activation distance used
    when none is given: 10 % of the smallest geom that moves and can touch (a radius or a smallest
    half extent), the rule of :meth:`mbdcp.mechanics.Scene.default_delta`; ``penetration_tolerance``
    the rule of :func:`mbdcp.mechanics.simulate.default_penetration_tolerance`. ``not_mapped`` lists
    (feature, what mbdcp does instead) for what the step does not model; a
    :class:`NotMappedWarning` names them once, here.
    """

    def __init__(self, mj_model):
        mj = _mj.mujoco()
        if not isinstance(mj_model, mj.MjModel):
            raise TypeError(f"mj_model must be a mujoco.MjModel, got {val.describe(mj_model)}")
        self.mj_model, self.mj_data = mj_model, mj.MjData(mj_model)
        self.not_mapped = tuple(not_mapped(mj, mj_model))
        warn_not_mapped(self.not_mapped, stacklevel=3)
        sizes = _Sizes(smallest_size(mj, mj_model))
        self.delta = Scene.default_delta(sizes)
        self.penetration_tolerance = default_penetration_tolerance(sizes)
        self._mj, self._assembler = mj, Assembler(mj, mj_model)

    nq = property(lambda self: int(self.mj_model.nq), doc="Number of position coordinates (qpos).")
    nv = property(lambda self: int(self.mj_model.nv), doc="Number of velocities (qvel): n_v.")
    nu = property(lambda self: int(self.mj_model.nu), doc="Number of controls (ctrl).")
    timestep = property(lambda self: float(self.mj_model.opt.timestep), doc="The model's time step (opt.timestep).")

    def __repr__(self):
        return (f"Model(nq={self.nq}, nv={self.nv}, nu={self.nu}, bodies={self.mj_model.nbody - 1}, "
                f"geoms={self.mj_model.ngeom}, timestep={self.timestep:g}, delta={self.delta:g})")

    def state(self, qpos=None, qvel=None, ctrl=None):
        """(qpos, qvel, ctrl) checked, each defaulting to ``mj_data``'s; ``ctrl`` may be callable
        (returned as it is)."""
        qpos = np.array(self.mj_data.qpos) if qpos is None else val.vector("qpos", qpos, self.nq, symbol="nq").copy()
        qvel = np.array(self.mj_data.qvel) if qvel is None else val.vector("qvel", qvel, self.nv, symbol="nv").copy()
        if ctrl is None:
            ctrl = np.array(self.mj_data.ctrl)
        elif not callable(ctrl):
            ctrl = val.vector("ctrl", ctrl, self.nu, symbol="nu").copy()
        return qpos, qvel, ctrl

    def _prepared(self, delta):
        """The assembler with the inputs of ``mj_data`` that are not the state, and delta set."""
        a, src = self._assembler, self.mj_data
        for name in INPUTS:
            if hasattr(src, name):
                getattr(a.d, name)[:] = getattr(src, name)
        a.set_delta(self.delta if delta is None else delta)
        a.grow_from = None  # a fixed delta, unless the caller (simulate) lets it grow
        return a

    def problem(self, qpos=None, qvel=None, h=None, ctrl=None, *, delta=None, n_d=4):
        r"""The arguments of :func:`mbdcp.step` for one step of h from the state (qpos, qvel).

        Returns a dict with ``M, Wn, D, E, U, v, h, p_ext, psi_n, Wb, theta, Dj, Ej, beta_max``, so
        that ``mbdcp.step(**model.problem(...))`` solves the time-stepping LCP of Trinkle (2003),
        eqs. 25–38, on the model's state: its contacts within ``delta`` (then its joint and tendon
        limits, frictionless) as the columns of ``Wn`` with their gaps ``psi_n``, ``n_d`` friction
        directions per contact, MuJoCo's equality constraints as ``Wb`` with their errors
        ``theta``, and friction loss as joint friction (``beta_max = h * frictionloss``; None
        where the model has none). ``qpos``, ``qvel``, ``ctrl`` default to ``mj_data``'s, ``h`` to
        the model's time step, ``delta`` to :attr:`delta`.
        """
        qpos, qvel, ctrl = self.state(qpos, qvel, ctrl)
        h = self.timestep if h is None else val.positive_scalar("h", h)
        n_d = friction_count(n_d)
        a = self._prepared(None if delta is None else val.nonnegative_scalar("delta", delta))
        t = float(self.mj_data.time)
        a.run(qpos, qvel, controls(ctrl, self.nu)(t, qpos, qvel), h, t)
        return a.arrays(h, n_d).step_arguments()


def controls(ctrl, nu):
    """control(t, qpos, qvel): the constant ``ctrl`` or the callable's value, checked."""
    if not callable(ctrl):
        return lambda t, q, v: ctrl

    def control(t, q, v):
        return val.vector("ctrl(t, qpos, qvel)", ctrl(t, q.copy(), v.copy()), nu, symbol="nu")
    return control


def friction_count(n_d):
    """n_d checked: a nonnegative even integer (directions come in opposite pairs)."""
    n_d = val.integer("n_d", n_d, 0)
    if n_d % 2:
        raise ValueError(f"n_d must be a nonnegative even number (opposite pairs of directions), got {n_d}")
    return n_d


def load(path_or_xml):
    """A :class:`Model` from an MJCF or URDF file, an MJCF (or URDF) string, or a ``mujoco.MjModel``.

    A string starting with "<" is read as the model's XML, any other string or path as a file.
    MuJoCo's parser reads both formats (a URDF file is recognised by its ``<robot>`` root).
    """
    mj = _mj.mujoco()
    if isinstance(path_or_xml, mj.MjModel):
        return Model(path_or_xml)
    if not isinstance(path_or_xml, (str, os.PathLike)):
        raise TypeError(f"path_or_xml must be a file path, an XML string or a mujoco.MjModel, got {val.describe(path_or_xml)}")
    text = os.fspath(path_or_xml)
    is_xml = isinstance(path_or_xml, str) and text.lstrip().startswith("<")
    if not is_xml and not os.path.isfile(text):
        raise ValueError(f"path_or_xml must be an existing MJCF or URDF file or an XML string, got {text!r} (no such file)")
    try:
        model = mj.MjModel.from_xml_string(text) if is_xml else mj.MjModel.from_xml_path(text)
    except ValueError as exc:
        raise ValueError(f"path_or_xml: MuJoCo could not load the model: {exc}") from exc
    return Model(model)
