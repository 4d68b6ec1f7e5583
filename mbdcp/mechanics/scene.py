"""A scene: bodies (their fields gathered into arrays), walls, gravity and contact parameters."""
import collections.abc

import numpy as np

from mbdcp.infrastructure import validate as val
from mbdcp.mechanics import assembly, checks
from mbdcp.mechanics.bodies import Body2D, Body3D, BodyRows, b_matrix, both_shapes
from mbdcp.mechanics.collide import ShapeWorld, mujoco_module, needs_shapes
from mbdcp.mechanics.contacts import Contact, Contacts, UnsupportedPair, find_contacts, unsupported_pair
from mbdcp.mechanics.joints import Pin, joint_rows
from mbdcp.mechanics.obstacles import Block, Segment
from mbdcp.mechanics.walls import Line, Plane

__all__ = ["Scene"]


class Scene:
    """Bodies (all planar or all spatial), walls, gravity and contact parameters.

    ``mu`` (>= 0) and ``n_d`` (friction directions per contact: 0 or 2 in 2-D, a nonnegative
    even number in 3-D, default 2 or 4) apply to every contact; ``delta`` >= 0 is the activation
    distance (default: :meth:`default_delta`, 10 % of the smallest body size); ``joints``: pins
    (:class:`Pin`) between bodies or to the world; ``gravity``
    defaults to 9.81 downwards along the last axis. The scene gathers the bodies' fields into
    arrays with one row per body; each body then reads and writes its row (a body belongs to the
    last scene built with it). ``bodies`` and ``walls`` are tuples.

    ``walls`` may hold fixed obstacles of finite size as well: :class:`~mbdcp.mechanics.Block`
    (2-D or 3-D) and, in a plane scene, :class:`~mbdcp.mechanics.Segment`. Every pair gets
    contacts or is refused: those of a box with another body or of any body with an obstacle come
    from MuJoCo's collision functions (``pip install "mbdcp[mujoco]"``); without MuJoCo, a box
    within reach of another body (the gap between their bounding spheres at most ``delta``) is a
    ValueError naming the two bodies, here, in :meth:`update` and in every contact search (a
    simulation ends there, with the failure "unsupported pair"), and an obstacle an ImportError.
    A body is a disk or sphere, a box or a particle, never two of them.

    >>> from mbdcp.mechanics import Body2D, Line, Scene
    >>> scene = Scene([Body2D(1.0, [0, 0.4], radius=0.5)], [Line([0, 0], [0, 1])])
    >>> c = scene.contacts()[0]
    >>> c.a, c.b, round(c.gap, 12)
    (0, None, -0.1)
    """

    def __init__(self, bodies, walls=(), gravity=None, mu=0.5, n_d=None, delta=None, joints=()):
        bodies = checks.sequence("bodies", bodies, (Body2D, Body3D), "Body2D or Body3D")
        walls = checks.sequence("walls", walls, (Line, Plane, Block, Segment), "walls (Line, Plane) or obstacles (Block, Segment)")
        if not bodies:
            raise ValueError("bodies must hold at least one body")
        if {type(b) for b in bodies} not in ({Body2D}, {Body3D}):
            raise ValueError("bodies must be all Body2D or all Body3D")
        if len({id(b) for b in bodies}) != len(bodies):
            raise ValueError("bodies must be distinct objects (a body appears twice)")
        self.planar = isinstance(bodies[0], Body2D)
        kinds = "Line, Block (2-D) or Segment" if self.planar else "Plane or Block (3-D)"
        for k, w in enumerate(walls):
            if w.dim != (2 if self.planar else 3):
                raise ValueError(f"walls must be {kinds} objects for {'planar' if self.planar else 'spatial'} bodies; "
                                 f"walls[{k}] is a {w.dim}-D {type(w).__name__}")
        self.gravity = np.r_[np.zeros(self.dim - 1), -9.81] if gravity is None else gravity
        self.n_d = (2 if self.planar else 4) if n_d is None else n_d
        self.bodies, self.walls = tuple(bodies), tuple(walls)
        self._rows = BodyRows.gather(bodies)
        self.offsets = bodies[0].dof * np.arange(len(bodies) + 1)
        self.mu, self.delta = mu, self.default_delta() if delta is None else delta
        self._delta_given = delta is not None  # else it grows with the bodies' speed (activation_distance)
        self._world = None  # MuJoCo's model of the boxes and obstacles, made at the first search that needs it
        if any(isinstance(w, (Block, Segment)) for w in walls):
            mujoco_module("the contacts of obstacles (Block, Segment)")
        self._refuse_unsupported(self._rows.fields, "Scene: ")
        joints = tuple(checks.sequence("joints", joints, (Pin,), "Pin joints"))
        index = {id(b): k for k, b in enumerate(self.bodies)}
        for k, j in enumerate(joints):
            if not isinstance(j, Pin):
                raise TypeError(f"joints[{k}] must be a Pin, got {val.describe(j)}")
            if id(j.a) not in index or (j.b is not None and id(j.b) not in index):
                raise ValueError(f"joints[{k}] joins a body that is not in this scene")
        self.joints, self._index = joints, index

    def _refuse_unsupported(self, fields, where):
        """Raise UnsupportedPair when two bodies of ``fields`` may touch and MuJoCo, which would
        find their contacts, is not installed."""
        if self._shape_world(fields) is not None:
            return
        message = unsupported_pair(fields, self.planar, self.delta)
        if message:
            raise UnsupportedPair(where + message)

    def _shape_world(self, fields):
        """The ShapeWorld finding the contacts of the boxes and obstacles of ``fields`` (made or
        remade when the shapes or the obstacles change), or None: none needed, or MuJoCo missing."""
        if not needs_shapes(fields, self.planar, self.walls):
            return None
        if self._world is None or not self._world.matches(fields, self.planar, self.walls):
            try:
                self._world = ShapeWorld(fields, self.planar, self.walls)
            except ImportError:
                return None
        return self._world

    def smallest_size(self):
        """The smallest body size (radius, or a box's smallest half extent); None when every body
        is a particle."""
        f = self.fields()
        sizes = np.where(f["half_extents"][:, 0] > 0, f["half_extents"].min(axis=1), f["radius"])
        sizes = sizes[sizes > 0]
        return float(sizes.min()) if sizes.size else None

    def default_delta(self):
        """The activation distance used when none is given: 10 % of the smallest body size, 0 when
        every body is a particle. A contact becomes active before the bodies touch, so a falling
        body stops at the surface instead of sinking in and being pushed out by the stabilisation
        term Ψ/h (which makes it bounce)."""
        size = self.smallest_size()
        return 0.0 if size is None else 0.1 * size

    dim = property(lambda self: 2 if self.planar else 3)
    n_v = property(lambda self: int(self.offsets[-1]))
    gravity = property(lambda self: self._gravity,
                       lambda self, g: setattr(self, "_gravity", checks.vector("gravity", g, self.dim)))
    mu = property(lambda self: self._mu, lambda self, x: setattr(self, "_mu", checks.nonnegative("mu", x)))

    @property
    def delta(self):
        return self._delta

    @delta.setter
    def delta(self, x):
        self._delta, self._delta_given = checks.nonnegative("delta", x), True

    def activation_distance(self, h=None):
        r"""The activation distance of a contact search before a step of length ``h``: ``delta`` when
        it was given; by default the larger of :meth:`default_delta` and the distance two bodies can
        close in the step, :math:`h(2s + |g|h)`, :math:`s` the largest speed of a point of a body
        (:math:`|v| + |\omega|` times its bounding radius), so that a body falling at the step's
        speed is caught."""
        if self._delta_given or h is None:
            return self.delta
        f = self.fields()
        bound = np.where(f["half_extents"][:, 0] > 0, np.linalg.norm(f["half_extents"], axis=1), f["radius"])
        omega = np.abs(f["omega"]) if self.planar else np.linalg.norm(f["omega"], axis=1)
        reach = step_reach(h, np.max(np.linalg.norm(f["velocity"], axis=1) + omega * bound), np.linalg.norm(self.gravity))
        return max(self.delta, reach)

    @property
    def n_d(self):
        return self._n_d

    @n_d.setter
    def n_d(self, n_d):
        n_d = val.integer("n_d", n_d, 0)
        if self.planar and n_d not in (0, 2):
            raise ValueError("n_d must be 0 or 2 for planar scenes (directions t and -t)")
        if not self.planar and (n_d < 0 or n_d % 2):
            raise ValueError(f"n_d must be a nonnegative even number, got {n_d}")
        self._n_d = int(n_d)

    def fields(self):
        """The bodies' fields: a dict of arrays with one row per body (the scene's state)."""
        if self._rows.detached:
            raise ValueError("a body of this scene was put into a newer Scene, which now holds its state")
        return self._rows.fields

    def contacts(self, h=None):
        """The active contacts of the current configuration, as :class:`Contacts`: those with gap
        at most :meth:`activation_distance` (``delta``, or more before a step of length ``h`` when
        delta is the default)."""
        fields = self.fields()
        delta = self.activation_distance(None if h is None else checks.positive("h", h))
        return find_contacts(fields, self.planar, self.walls, delta, self._shape_world(fields))

    def joint_jacobian(self, sparse=False):
        """(Wb, theta) of the scene's joints in the current configuration: Wb (n_v, n_b), one
        column per pin axis, and theta (n_b,) the joints' drift (zero when they hold)."""
        sparse = val.flag("sparse", sparse)
        return joint_rows(self.fields(), self.planar, self._index, self.joints, dense=not sparse)

    def assemble(self, h, sparse=False, contacts=None, form=None, parts=("Wn", "D", "Wt")):
        """Arguments of one step: a dict with M, Wn, D, E, U, Wt, v, p_ext, psi_n, dpsi_n, dpsi_f
        and the contacts (``contacts``: those of the current configuration, if already known);
        M, Wn, D, E, Wt are scipy.sparse (M block diagonal) when ``sparse``. ``form="blocks"``
        gives M as its diagonal blocks (n_bodies, k, k) and sparse Jacobians."""
        h = checks.positive("h", h)
        contacts = self.contacts() if contacts is None else _contacts(contacts, self.dim)
        form = val.choice("form", form, assembly.FORMS, allow_none=True) or (
            "sparse" if val.flag("sparse", sparse) else "dense")
        return self._assembled(h, contacts, form, _parts(parts))

    def _assembled(self, h, contacts, form, parts, J=None):
        """:meth:`assemble` of checked arguments (simulate's loop); ``J``: the bodies' world
        inertias (:func:`mbdcp.mechanics.assembly.world_inertia`), if already known."""
        out = assembly.assemble(self.fields(), self.planar, self.gravity, self.mu, self.n_d, h, contacts, form, parts, J)
        if self.joints:  # W_b and the drift theta of the joints (Trinkle 2003, eq. 28)
            out["Wb"], out["theta"] = self.joint_jacobian(sparse=form != "dense")
        return out

    def kinetic_energy(self):
        return assembly.kinetic_energy(self.fields(), self.planar)

    def potential_energy(self):
        f = self.fields()
        return -float(np.sum(f["mass"] * (f["position"] @ self.gravity)))

    def max_penetration(self, contacts=None):
        return (self.contacts() if contacts is None else _contacts(contacts, self.dim)).max_penetration()

    def configuration(self):
        """q of every body, body after body: (x, y, theta) or (x, quaternion)."""
        f = self.fields()
        angle = f["theta"][:, None] if self.planar else f["quaternion"]
        return np.concatenate([f["position"], angle], axis=1).ravel()

    def advanced(self, v, h):
        """The fields changed by one step with velocity v (not applied): positions move by h v,
        the quaternions by h B(e) omega and are renormalised."""
        f = self.fields()
        V = val.vector("v", v, self.n_v, symbol="n_v").reshape(len(self.bodies), -1)
        h = checks.positive("h", h)
        vel, w = V[:, :self.dim].copy(), V[:, self.dim:].copy()
        with np.errstate(over="ignore", invalid="ignore"):  # a non-finite result is the caller's to detect
            new = dict(velocity=vel, position=f["position"] + h * vel)
            if self.planar:
                new.update(omega=w[:, 0], theta=f["theta"] + h * w[:, 0])
            else:
                e = f["quaternion"] + h * np.einsum("nij,nj->ni", b_matrix(f["quaternion"]), w)
                new.update(omega=w, quaternion=e / np.linalg.norm(e, axis=1)[:, None])
        return new

    def update(self, new):
        """Replace fields by new arrays (views held by the user keep the old values). Each is
        checked as the bodies check it: a known field, its shape, finite values, mass and inertia
        positive, radius and half extents nonnegative, not both positive in a row; quaternions are
        normalised. A box brought within reach of another body is refused (see the class)."""
        if not isinstance(new, collections.abc.Mapping):
            raise TypeError(f"new must be a dict of field arrays, got {val.describe(new)}")
        fields = self.fields()
        checked = {}
        for name, x in new.items():
            if name not in fields:
                raise ValueError(f"new has no field {name!r}: the fields are {', '.join(sorted(fields))}")
            checked[name] = _field(f"new[{name!r}]", name, x, fields[name].shape)
        merged = {**fields, **checked}
        _one_shape_per_row(merged)  # the rows as the bodies hold them: one shape each
        self._refuse_unsupported(merged, "new: ")  # no box in reach of another body without MuJoCo
        fields.update(checked)

    def replace(self, new):
        """update without the checks, for fields a step computed (the simulation loop)."""
        self.fields().update(new)


def step_reach(h, s, g):
    """How far two bodies can close in a step of length h when no point moves faster than s under
    gravity g: h (2 s + g h); 0 for a state beyond the float range (the step's own failure says so)."""
    with np.errstate(over="ignore", invalid="ignore"):
        reach = float(h * (2 * s + g * h))
    return reach if reach < np.inf else 0.0


_POSITIVE, _NONNEGATIVE = ("mass",), ("radius", "half_extents")


def _field(label, name, x, shape):
    """A new value of a scene field, checked (see Scene.update)."""
    a = np.array(val.as_array(label, x), dtype=np.float64)
    if a.shape != shape:
        raise ValueError(f"{label} must have shape {shape} (one row per body), got {a.shape}")
    if name == "quaternion":
        return np.array([val.unit_vector(f"{label}[{k}]", row, 4) for k, row in enumerate(a)])
    if name in _POSITIVE and np.any(a <= 0):
        raise ValueError(f"{label} must be positive, got {a.min()}")
    if name in _NONNEGATIVE and np.any(a < 0):
        raise ValueError(f"{label} must be nonnegative, got {a.min()}")
    if name == "inertia" and a.ndim == 1 and np.any(a <= 0):
        raise ValueError(f"{label} must be positive, got {a.min()}")
    if name == "inertia" and a.ndim == 3:
        for k, J in enumerate(a):
            checks.inertia3(f"{label}[{k}]", J)
    return a


def _one_shape_per_row(fields):
    """Refuse a row with both a radius and half extents (Body3D refuses such a body)."""
    both = np.flatnonzero((fields["radius"] > 0) & np.any(fields["half_extents"] > 0, axis=1))
    if both.size:
        k = both[0]
        raise ValueError(both_shapes(fields["radius"][k], fields["half_extents"][k], where=f"new: body {k}: "))


def _contacts(contacts, dim):
    """Contacts, or a list of Contact, as Contacts."""
    if isinstance(contacts, Contacts):
        return contacts
    if not isinstance(contacts, (list, tuple)) or not all(isinstance(c, Contact) for c in contacts):
        raise TypeError(f"contacts must be the Contacts of Scene.contacts() or a list of Contact, got "
                        f"{val.describe(contacts)}")
    return Contacts.of(contacts, dim)


def _parts(parts):
    """The Jacobians to assemble: a sequence of names among Wn, D, Wt."""
    if isinstance(parts, str) or not isinstance(parts, (list, tuple, set, frozenset)):
        raise TypeError(f"parts must be a sequence of names among 'Wn', 'D', 'Wt', got {val.describe(parts)}")
    bad = [p for p in parts if p not in ("Wn", "D", "Wt")]
    if bad:
        raise ValueError(f"parts must name Jacobians among 'Wn', 'D', 'Wt', got {bad}")
    return tuple(parts)
