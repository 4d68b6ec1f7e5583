"""The geometry a drawing of a trajectory needs (Trajectory.shapes): read by simulate, which
records it, and by animate, which draws it."""
from dataclasses import dataclass

import numpy as np

__all__ = ["Shapes"]


@dataclass(frozen=True, repr=False)
class Shapes:
    """The geometry a drawing needs, copied from a scene: ``planar``, per body ``radius`` (n,)
    and ``half_extents`` (n, 3; zeros: not a box; a plane box's third is zero), the walls as
    (point, normal, velocity) at the time of the copy, and the fixed obstacles as outlines: a
    block's corners (4, 2) or (8, 3), a segment's ends (2, 2)."""

    planar: bool
    radius: np.ndarray
    half_extents: np.ndarray
    walls: tuple
    obstacles: tuple = ()

    @classmethod
    def of(cls, scene):
        f = scene.fields()
        half = np.zeros((len(scene.bodies), 3))
        half[:, :f["half_extents"].shape[1]] = f["half_extents"]
        walls = tuple((w.point.copy(), w.normal.copy(), w.velocity.copy()) for w in scene.walls if hasattr(w, "normal"))
        obstacles = tuple(w.corners() if hasattr(w, "corners") else np.array([w.start, w.end])
                          for w in scene.walls if not hasattr(w, "normal"))
        return cls(bool(scene.planar), np.array(f["radius"], dtype=float), half, walls, obstacles)

    def __repr__(self):
        return (f"Shapes(planar={self.planar}, bodies={len(self.radius)}, walls={len(self.walls)}, "
                f"obstacles={len(self.obstacles)})")
