"""Walls: fixed or moving lines (2-D) and planes (3-D); points x with normal . (x - point) >= 0 are outside."""
from mbdcp.mechanics import checks

__all__ = ["Line", "Plane"]


class _Wall:
    dim = 0

    def __init__(self, point, normal, velocity):
        self.point, self.normal, self.velocity = point, normal, velocity

    point = property(lambda self: self._point, lambda self, x: setattr(self, "_point", checks.vector("point", x, self.dim)))
    normal = property(lambda self: self._normal, lambda self, x: setattr(self, "_normal", checks.unit("normal", x, self.dim)))
    velocity = property(lambda self: self._velocity,
                        lambda self, x: setattr(self, "_velocity", checks.vector("velocity", x, self.dim)))

    def __repr__(self):
        return f"{type(self).__name__}(point={self.point!r}, normal={self.normal!r}, velocity={self.velocity!r})"


class Line(_Wall):
    """A fixed or moving line (2-D wall) through ``point`` with unit ``normal`` (normalised),
    translating with ``velocity``."""

    dim = 2

    def __init__(self, point, normal, velocity=(0.0, 0.0)):
        super().__init__(point, normal, velocity)


class Plane(_Wall):
    """A fixed or moving plane (3-D wall) through ``point`` with outward unit ``normal``
    (normalised), translating with ``velocity``."""

    dim = 3

    def __init__(self, point, normal, velocity=(0.0, 0.0, 0.0)):
        super().__init__(point, normal, velocity)
