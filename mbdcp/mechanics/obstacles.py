"""Fixed obstacles of finite size: a block (a table, a step) in 2-D or 3-D and a segment in 2-D.

They are passed among a scene's ``walls`` and meet every body as a wall does (a contact with
``b = None``), but at their exact shape: the contacts come from MuJoCo's collision functions
(:mod:`mbdcp.mechanics.collide`), so a scene holding one needs ``pip install "mbdcp[mujoco]"``.
"""
import numpy as np

from mbdcp.infrastructure import validate as val
from mbdcp.mechanics import checks

__all__ = ["Block", "Segment"]


class Block:
    """A fixed box: ``half_extents`` (2 numbers in 2-D, 3 in 3-D, positive) about its centre
    ``position``, turned by ``theta`` (2-D, radians) or the unit ``quaternion`` (3-D).

    >>> Block([0.0, 0.5], [1.0, 0.5]).dim
    2
    """

    def __init__(self, position, half_extents, theta=0.0, quaternion=(1.0, 0.0, 0.0, 0.0)):
        half = val.as_array("half_extents", half_extents)
        if half.shape not in ((2,), (3,)):
            raise ValueError(f"half_extents must hold 2 numbers (2-D) or 3 (3-D), got shape {half.shape}")
        self.dim = half.size
        self.half_extents = checks.vector("half_extents", half, self.dim)
        if np.any(self.half_extents <= 0):
            raise ValueError(f"half_extents must be positive, got {self.half_extents.tolist()}")
        self.position = checks.vector("position", position, self.dim)
        self.theta = checks.real("theta", theta)
        if self.dim == 2:
            quaternion = (np.cos(self.theta / 2), 0.0, 0.0, np.sin(self.theta / 2))
        elif self.theta != 0:
            raise ValueError("theta turns a 2-D block: give a 3-D block its quaternion")
        self.quaternion = checks.unit("quaternion", quaternion, 4)

    velocity = property(lambda self: np.zeros(self.dim), doc="Zero: an obstacle is fixed.")

    def corners(self):
        """The corners in the world frame: (4, 2) counter-clockwise in 2-D, (8, 3) in 3-D."""
        from mbdcp.mechanics.bodies import rotation_matrix

        R = rotation_matrix(self.quaternion)
        if self.dim == 2:
            signs = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float)
            return self.position + (signs * self.half_extents) @ R[:2, :2].T
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
        return self.position + (signs * self.half_extents) @ R.T

    def __repr__(self):
        turn = f"theta={self.theta!r}" if self.dim == 2 else f"quaternion={self.quaternion!r}"
        return f"Block(position={self.position!r}, half_extents={self.half_extents!r}, {turn})"


class Segment:
    """A fixed segment of a plane scene from ``start`` to ``end`` (distinct 2-D points), touched
    from both sides and at its ends (a shelf, the edge of a table drawn as a line).

    >>> Segment([0, 0], [1, 0]).length
    1.0
    """

    dim = 2

    def __init__(self, start, end):
        self.start, self.end = checks.vector("start", start, 2), checks.vector("end", end, 2)
        if not np.all(np.isfinite(self.end - self.start)) or np.array_equal(self.start, self.end):
            raise ValueError(f"start and end must be distinct points, got {self.start.tolist()} twice")

    length = property(lambda self: float(np.hypot(*(self.end - self.start))))
    velocity = property(lambda self: np.zeros(2), doc="Zero: an obstacle is fixed.")

    def __repr__(self):
        return f"Segment(start={self.start!r}, end={self.end!r})"
