"""The geometry a drawing of a trajectory needs (Trajectory.shapes): read by simulate, which
records it, and by animate, which draws it."""
from dataclasses import dataclass

import numpy as np

__all__ = ["Shapes"]


@dataclass(frozen=True, repr=False)
class Shapes:
    """The geometry a drawing needs, copied from a scene: ``planar``, per body ``radius`` (n,)
    and ``half_extents`` (n, 3; zeros: not a box), and the walls as (point, normal, velocity) at
    the time of the copy."""

    planar: bool
    radius: np.ndarray
    half_extents: np.ndarray
    walls: tuple

    @classmethod
    def of(cls, scene):
        f = scene.fields()
        n = len(scene.bodies)
        half = np.zeros((n, 3)) if scene.planar else np.array(f["half_extents"], dtype=float)
        walls = tuple((w.point.copy(), w.normal.copy(), w.velocity.copy()) for w in scene.walls)
        return cls(bool(scene.planar), np.array(f["radius"], dtype=float), half, walls)

    def __repr__(self):
        return f"Shapes(planar={self.planar}, bodies={len(self.radius)}, walls={len(self.walls)})"
