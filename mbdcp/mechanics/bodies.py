"""Rigid bodies whose fields live in rows of shared arrays.

A body made alone keeps its fields in one-row arrays; a :class:`~mbdcp.mechanics.Scene` gathers
its bodies' rows into arrays with one row per body and rebinds every body to its row, so
``body.position`` is a view of the scene's state and the scene works on whole arrays.
"""
import numpy as np

from mbdcp.infrastructure import validate as val
from mbdcp.mechanics import checks

__all__ = ["quaternion_to_matrix", "rotation_matrix", "B_matrix", "b_matrix", "BodyRows", "Body2D", "Body3D", "box_corners"]


def _quaternions(name, e):
    """e (..., 4) validated (finite, every quaternion nonzero) and normalised, each scaled by its
    largest entry first so that no norm overflows (1e300) or underflows (denormals)."""
    a = val.as_array(name, e)
    if a.ndim == 0 or a.shape[-1] != 4:
        raise ValueError(f"{name} must be a quaternion (4,) or an array of them (..., 4), got shape {a.shape}")
    big = np.abs(a).max(axis=-1, keepdims=True)
    if np.any(big == 0):
        raise ValueError(f"{name} must hold nonzero quaternions (a rotation needs a direction), got a zero one")
    a = a / big
    return a / np.sqrt(np.einsum("...i,...i->...", a, a))[..., None]


def quaternion_to_matrix(e):
    """Rotation matrix of the quaternion e = (e0, e1, e2, e3), normalised first; for an array of
    quaternions (..., 4), the matrices (..., 3, 3).

    >>> import numpy as np
    >>> quaternion_to_matrix([np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]).round(12) + 0.0
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    return rotation_matrix(_quaternions("e", e))


def rotation_matrix(e):
    """quaternion_to_matrix for unit quaternions already checked (the hot loops of a scene)."""
    e0, e1, e2, e3 = np.moveaxis(e, -1, 0)
    R = np.empty(e.shape[:-1] + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = 1 - 2 * (e2 * e2 + e3 * e3), 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = 2 * (e1 * e2 + e0 * e3), 1 - 2 * (e1 * e1 + e3 * e3), 2 * (e2 * e3 - e0 * e1)
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = 2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), 1 - 2 * (e1 * e1 + e2 * e2)
    return R


def B_matrix(e):
    """B(e) with de/dt = B(e) omega for omega in the world frame (B^T B = I/4 for a unit e); for an
    array of quaternions (..., 4), the matrices (..., 4, 3). e is taken as given (finite, any norm)."""
    a = val.as_array("e", e)
    if a.ndim == 0 or a.shape[-1] != 4:
        raise ValueError(f"e must be a quaternion (4,) or an array of them (..., 4), got shape {a.shape}")
    return b_matrix(a)


def b_matrix(e):
    """B_matrix without the checks (the hot loops of a scene)."""
    e0, e1, e2, e3 = np.moveaxis(e, -1, 0)
    rows = [[-e1, -e2, -e3], [e0, e3, -e2], [-e3, e0, e1], [e2, -e1, e0]]
    return 0.5 * np.moveaxis(np.array(rows), (0, 1), (-2, -1))


class BodyRows:
    """Fields of bodies as arrays, one row per body (a scene's state, or a lone body's)."""

    def __init__(self, fields):
        self.fields = fields
        self.detached = False  # set when one of these bodies is gathered into another scene

    @classmethod
    def gather(cls, bodies):
        """New arrays holding the bodies' current fields; each body is rebound to its row."""
        rows = cls({k: np.stack([b._rows.fields[k][b._i] for b in bodies]) for k in bodies[0]._rows.fields})
        for i, b in enumerate(bodies):
            b._rows.detached = True
            b._rows, b._i = rows, i
        return rows


class _Field:
    """A body attribute stored in row ``body._i`` of an array; values are validated by ``check``.
    ``excludes``: the field that must be zero when this one is positive (a sphere's radius and a
    box's half extents)."""

    def __init__(self, check, shape=(), excludes=None):
        self.check, self.shape, self.excludes = check, shape, excludes

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, body, owner=None):
        if body is None:
            return self
        x = body._rows.fields[self.name][body._i]
        return float(x) if np.ndim(x) == 0 else x

    def __set__(self, body, value):
        x = self.check(self.name, value)
        if self.excludes:
            _one_shape(body, self.name, x)
        body._rows.fields[self.name][body._i] = x


def _one_shape(body, name, x):
    """Refuse a Body3D whose new ``name`` = x would give it both a radius and half extents."""
    row = {k: body._rows.fields[k][body._i] for k in ("radius", "half_extents")}
    row[name] = x
    if np.any(row["radius"] > 0) and np.any(row["half_extents"] > 0):
        raise ValueError(both_shapes(row["radius"], row["half_extents"]))


def both_shapes(radius, half_extents, where=""):
    """The message refusing a body given both a radius and half extents: its shape (and so its
    contacts and inertia) would be ambiguous."""
    kind = "Body2D is a disk" if np.size(half_extents) == 2 else "Body3D is a sphere"
    return (f"{where}radius and half_extents: a {kind} (radius > 0) or a box (half_extents), not both; "
            f"got radius = {float(radius):g} and half_extents = {np.asarray(half_extents).tolist()}")


class _HalfExtents(_Field):
    """A box's half extents; zeros in the array stand for None (not a box)."""

    def __get__(self, body, owner=None):
        x = super().__get__(body, owner)
        return x if body is None or x[0] > 0 else None

    def __init__(self, dim):
        super().__init__(lambda name, x: self.validate(name, x, dim), (dim,), excludes="radius")

    @staticmethod
    def validate(name, x, dim=3):
        if x is None:
            return np.zeros(dim)
        a = checks.vector(name, x, dim)
        if np.any(a <= 0):
            raise ValueError(f"{name} must be positive, got {a}")
        return a


class _Body:
    """Shared behaviour: fields in one-row arrays until a scene gathers them."""

    def _start(self):
        self._rows = BodyRows({name: np.zeros((1,) + f.shape) for name, f in type(self)._fields()})
        self._i = 0

    @classmethod
    def _fields(cls):
        return [(k, f) for k, f in vars(cls).items() if isinstance(f, _Field)]

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(f"{k}={getattr(self, k)!r}" for k, _ in self._fields()) + ")"

    def v(self):
        return np.r_[self.velocity, self.omega]


def _default_inertia(body, J):
    """The inertia of a uniform body, refused when its mass and size put it beyond the float64 range."""
    if not np.all(np.isfinite(J)) or np.any(np.asarray(J) <= 0):
        size = "half_extents" if getattr(body, "half_extents", None) is not None else "radius"
        raise ValueError(f"the default inertia of mass = {body.mass:.3g} and {size} = {getattr(body, size)} is beyond "
                         "the float64 range: give inertia, or rescale (change units)")
    return J


class Body2D(_Body):
    """A planar rigid body: a disk of ``radius``, a box of ``half_extents`` (a, b) along its own
    axes turned by ``theta``, or a particle (neither), with mass and inertia J; giving both a
    positive radius and half extents is a ValueError.

    ``inertia`` defaults to a uniform disk, m r^2 / 2, or box, m (a^2 + b^2) / 3 (1 for a
    particle). In a scene, the attributes read and write the scene's arrays.
    """

    mass = _Field(checks.positive)
    position = _Field(lambda name, x: checks.vector(name, x, 2), (2,))
    theta = _Field(checks.real)
    velocity = _Field(lambda name, x: checks.vector(name, x, 2), (2,))
    omega = _Field(checks.real)
    radius = _Field(checks.nonnegative, excludes="half_extents")
    half_extents = _HalfExtents(2)
    inertia = _Field(checks.positive)
    dof = 3

    def __init__(self, mass, position, theta=0.0, velocity=(0.0, 0.0), omega=0.0, radius=0.0, inertia=None,
                 half_extents=None):
        self._start()
        self.mass, self.radius, self.half_extents = mass, radius, half_extents
        if inertia is None:
            with np.errstate(over="ignore", under="ignore"):
                m = np.float64(self.mass)
                if self.half_extents is not None:
                    J = m * np.sum(np.float64(self.half_extents) ** 2) / 3
                else:
                    J = 0.5 * m * np.float64(self.radius) ** 2 if self.radius > 0 else 1.0
            inertia = _default_inertia(self, J)
        self.inertia = inertia
        self.position, self.theta, self.velocity, self.omega = position, theta, velocity, omega

    def q(self):
        return np.r_[self.position, self.theta]

    def mass_matrix(self):
        return np.diag([self.mass, self.mass, self.inertia])


class Body3D(_Body):
    """A spatial rigid body: a sphere (``radius``), a box (``half_extents``) or a particle
    (neither); giving both a positive radius and half extents is a ValueError.

    ``omega`` is in the world frame; ``inertia`` is the body-frame J_B, a 3-vector (principal
    moments) or an SPD 3x3 matrix, by default that of a uniform box or ball (identity for a
    particle). The quaternion is normalised. In a scene, the attributes read and write the
    scene's arrays.
    """

    mass = _Field(checks.positive)
    position = _Field(lambda name, x: checks.vector(name, x, 3), (3,))
    quaternion = _Field(lambda name, x: checks.unit(name, x, 4), (4,))
    velocity = _Field(lambda name, x: checks.vector(name, x, 3), (3,))
    omega = _Field(lambda name, x: checks.vector(name, x, 3), (3,))
    radius = _Field(checks.nonnegative, excludes="half_extents")
    half_extents = _HalfExtents(3)
    inertia = _Field(checks.inertia3, (3, 3))
    dof = 6

    def __init__(self, mass, position, quaternion=(1.0, 0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0),
                 omega=(0.0, 0.0, 0.0), radius=0.0, half_extents=None, inertia=None):
        self._start()
        self.mass = mass
        self.position, self.velocity, self.omega, self.quaternion = position, velocity, omega, quaternion
        self.radius, self.half_extents = radius, half_extents
        if inertia is None:
            with np.errstate(over="ignore", under="ignore"):
                if self.half_extents is not None:
                    a, b, c = 2 * self.half_extents
                    inertia = self.mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
                elif self.radius > 0:
                    inertia = np.full(3, 0.4 * np.float64(self.mass) * np.float64(self.radius) ** 2)
                else:
                    inertia = np.ones(3)
            inertia = _default_inertia(self, inertia)
        self.inertia = inertia

    def q(self):
        return np.r_[self.position, self.quaternion]

    def rotation(self):
        return rotation_matrix(self.quaternion)

    def world_inertia(self):
        R = self.rotation()
        return R @ self.inertia @ R.T

    def mass_matrix(self):
        M = np.zeros((6, 6))
        M[:3, :3] = self.mass * np.eye(3)
        M[3:, 3:] = self.world_inertia()
        return M

    def corners(self):
        """World positions of a box's corners, relative to its centre."""
        if self.half_extents is None:
            raise ValueError("corners: this body is not a box (half_extents is None)")
        return box_corners(self.half_extents[None], self.quaternion[None])[0]


_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)


def box_corners(half_extents, quaternions):
    """Corners (n, 8, 3) of n boxes relative to their centres, in the world frame."""
    R = rotation_matrix(quaternions)
    return (_SIGNS * half_extents[:, None, :]) @ np.swapaxes(R, 1, 2)
