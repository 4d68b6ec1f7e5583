"""Bilateral joints of a scene: pins holding a point of one body to a point of another body or of
the world (Trinkle 2003, eq. 28: the joint equations W_b^T v = -Θ/h enter every time step).

A pin is a revolute joint in the plane (two equations) and a ball joint in space (three). Its
equations say that the two attached points coincide, Θ = (x_a + R_a r_a) - (x_b + R_b r_b), and
their velocity is W_b^T v = (v_a + ω_a × R_a r_a) - (v_b + ω_b × R_b r_b). The time step asks for
W_b^T v^{l+1} + Θ/h = 0, so a drift Θ is removed in one step (stabilisation).
"""
import numpy as np
import scipy.sparse as sp

from mbdcp.infrastructure import validate as val
from mbdcp.mechanics import checks
from mbdcp.mechanics.bodies import Body2D, Body3D, rotation_matrix

__all__ = ["Pin", "joint_rows"]


class Pin:
    """A pin joint: body ``a``'s material point at ``point`` (world coordinates, in the current
    configuration) stays at body ``b``'s material point there, or at that fixed point of the world
    when ``b`` is None. Give it to :class:`Scene` with ``joints=[...]``.

    >>> from mbdcp.mechanics import Body2D, Pin, Scene
    >>> bob = Body2D(1.0, [1.0, 0.0], radius=0.1)
    >>> scene = Scene([bob], joints=[Pin(bob, None, [0.0, 0.0])])
    >>> (scene.joint_jacobian()[0].round(12) + 0.0).tolist()   # rows x, y, theta: the pin at r = (-1, 0)
    [[1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]
    """

    def __init__(self, a, b=None, point=None):
        if not isinstance(a, (Body2D, Body3D)):
            raise TypeError(f"a must be a Body2D or Body3D, got {val.describe(a)}")
        if b is not None and type(b) is not type(a):
            raise TypeError(f"b must be None (the world) or a body of the same kind as a, got {val.describe(b)}")
        if b is a:
            raise ValueError("a pin joins two different bodies (b is a)")
        dim = 2 if isinstance(a, Body2D) else 3
        self.a, self.b = a, b
        if point is not None and np.ndim(point) == 1 and len(point) != dim:  # say which body fixes the dimension
            raise ValueError(f"point must have shape ({dim},) since a is a {type(a).__name__}, got ({len(point)},)")
        point = checks.vector("point", a.position if point is None else point, dim)
        self.r_a = _to_body(a, point - a.position)
        self.r_b = point.copy() if b is None else _to_body(b, point - b.position)  # the world: a fixed point

    def __repr__(self):
        return f"Pin(a={self.a!r}, b={self.b!r})"


def _rotation(planar, angle):
    if planar:
        c, s = np.cos(angle), np.sin(angle)
        return np.moveaxis(np.array([[c, -s], [s, c]]), (0, 1), (-2, -1))
    return rotation_matrix(angle)


def _to_body(body, r_world):
    planar = isinstance(body, Body2D)
    R = _rotation(planar, body.theta if planar else body.quaternion)
    return R.T @ r_world


def joint_rows(fields, planar, index, pins, dense=True):
    """(Wb (n_v, n_b), theta (n_b,)) of the pins in the configuration ``fields``; ``index`` maps a
    body to its row. Equations pin after pin, one per axis."""
    dim, dof = (2, 3) if planar else (3, 6)
    n_v = fields["position"].shape[0] * dof
    rows, cols, vals, theta = [], [], [], []
    angle = fields["theta"] if planar else fields["quaternion"]
    for k, pin in enumerate(pins):
        ends = [(index[id(pin.a)], pin.r_a, 1.0)]
        if pin.b is not None:
            ends.append((index[id(pin.b)], pin.r_b, -1.0))
        gap = np.zeros(dim) if pin.b is not None else -pin.r_b
        for body, r_body, sign in ends:
            r = _rotation(planar, angle[body]) @ r_body
            gap = gap + sign * (fields["position"][body] + r)
            for axis in range(dim):
                d = np.eye(dim)[axis]
                ang = [r[0] * d[1] - r[1] * d[0]] if planar else list(np.cross(r, d))
                block = np.r_[d, ang] * sign
                rows.extend(dof * body + np.arange(dof))
                cols.extend([dim * k + axis] * dof)
                vals.extend(block)
        theta.append(gap)
    n_b = dim * len(pins)
    W = sp.csc_matrix((vals, (rows, cols)), shape=(n_v, n_b))
    theta = np.concatenate(theta) if theta else np.zeros(0)
    return (W.toarray() if dense else W), theta
