"""Friction directions about each contact normal: those of :func:`mbdcp.friction_basis` (and of
:func:`mbdcp.mechanics.assembly.friction_directions`, to the bit: the same scene gets the same
friction polygon from either layer), the circle's angles computed once per n_d."""
import functools

import numpy as np

from mbdcp.formulations.step import unit_circle

__all__ = ["Directions"]


@functools.lru_cache(maxsize=16)
def _circle(n_d, count):
    c, s = unit_circle(n_d)
    return c[:count].copy(), s[:count].copy()


class Directions:
    """``dirs(normals)`` -> (n, count, 3): the first ``count`` of the n_d unit directions
    :math:`\\cos(2\\pi k/n_d)\\,t_1 + \\sin(2\\pi k/n_d)\\,t_2`, with :math:`t_1` the normal's
    projection-free part of the world axis least aligned with it and :math:`t_2 = n \\times t_1`."""

    def __init__(self, n_d, count=None):
        self.c, self.s = _circle(n_d, n_d if count is None else count)
        self.last = None  # (normals, directions) of the last call: contacts at rest keep their normals

    def __call__(self, n):
        last = self.last
        if last is not None and last[0].shape == n.shape and (last[0] == n).all():
            return last[1]
        dirs = self._directions(n)
        dirs.setflags(write=False)
        self.last = (n.copy(), dirs)
        return dirs

    def _directions(self, n):
        k = np.argmin(np.abs(n), axis=1)
        axis = (k[:, None] == _AXES).astype(float)  # e_k
        t1 = axis - np.einsum("ij,ij->i", axis, n)[:, None] * n  # e_k - n_k n
        t1 /= np.sqrt(np.einsum("ij,ij->i", t1, t1))[:, None]
        t2 = n[:, _NEXT] * t1[:, _LAST] - n[:, _LAST] * t1[:, _NEXT]  # n x t1
        return self.c[:, None] * t1[:, None, :] + self.s[:, None] * t2[:, None, :]


_AXES = np.arange(3)
_NEXT, _LAST = np.array([1, 2, 0]), np.array([2, 0, 1])
