"""Friction directions about each contact normal: those of
:func:`mbdcp.mechanics.assembly.friction_directions` (so the same scene gets the same friction
polygon from either layer), kept while the normals stay the same (contacts at rest)."""
import numpy as np

from mbdcp.mechanics.assembly import friction_directions

__all__ = ["Directions"]


class Directions:
    """``dirs(normals, slip=None, scale=None)`` -> (n, count, 3): the first ``count`` of the n_d
    directions of :func:`mbdcp.mechanics.assembly.friction_directions` about each normal (facing
    the slip where there is one)."""

    def __init__(self, n_d, count=None):
        self.n_d, self.count = n_d, count
        self.last = None  # (normals, directions) of the last call: contacts at rest keep their normals

    def __call__(self, n, slip=None, scale=None):
        if slip is not None:  # facing each contact's slip: made afresh
            dirs = np.swapaxes(friction_directions(n, self.n_d, self.count, slip, scale), 1, 2)
            return np.ascontiguousarray(dirs)
        last = self.last
        if last is not None and last[0].shape == n.shape and (last[0] == n).all():
            return last[1]
        dirs = np.ascontiguousarray(np.swapaxes(friction_directions(n, self.n_d, self.count), 1, 2))
        dirs.setflags(write=False)
        self.last = (n.copy(), dirs)
        return dirs
