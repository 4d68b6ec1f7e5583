"""Ready-made scenes: a 2-D disk pile (136 disks by default, the size of Anitescu & Hart's) and a 3-D sphere pile."""
import numpy as np

from mbdcp.infrastructure import validate as val
from mbdcp.mechanics.bodies import Body2D, Body3D
from mbdcp.mechanics.scene import Scene
from mbdcp.mechanics.walls import Line, Plane

__all__ = ["disk_pile_scene", "sphere_pile_scene"]


def disk_pile_scene(n_disks=136, width=10, radius=0.5, mu=0.3, seed=0, delta=0.1):
    """A 2-D pile like the 136-body one of Anitescu & Hart (lecture), slide "Results of a 2D
    simulation with 136 bodies" (the layout is mbdcp's): disks (radius about ``radius``, m = 1) on a loose lattice in a box of
    ``width`` disks, dropped under gravity; floor at y = 0, walls at x = 0 and x = 2 width r."""
    n_disks, width, radius, rng = _pile("n_disks", n_disks, width, radius, seed)
    bodies = []
    for k in range(n_disks):
        row, col = divmod(k, width)
        r = radius * (1 - 0.1 * rng.uniform())
        x = radius * (1.1 + 2.1 * col) + 0.04 * radius * rng.uniform(-1, 1)  # spacing 2.1 r: no overlap
        y = radius * (1 + 2.1 * row) + 0.02
        bodies.append(Body2D(1.0, [x, y], radius=r, velocity=0.1 * rng.standard_normal(2)))
    walls = [Line([0, 0], [0, 1]), Line([0, 0], [1, 0]), Line([2.1 * width * radius + 0.1 * radius, 0], [-1, 0])]
    return Scene(bodies, walls, mu=mu, delta=delta)


def sphere_pile_scene(n_spheres=500, width=8, radius=0.5, mu=0.3, seed=0, delta=0.1):
    """Spheres on a loose lattice over a floor inside four walls (a square box of ``width``
    diameters), dropped under gravity."""
    n_spheres, width, radius, rng = _pile("n_spheres", n_spheres, width, radius, seed)
    bodies = []
    side = (2.1 * width + 0.1) * radius
    for k in range(n_spheres):
        layer, rest = divmod(k, width * width)
        row, col = divmod(rest, width)
        r = radius * (1 - 0.1 * rng.uniform())
        pos = [radius * (1.1 + 2.1 * col) + 0.02 * rng.uniform(-1, 1), radius * (1.1 + 2.1 * row) + 0.02 * rng.uniform(-1, 1),
               radius * (1 + 2.1 * layer) + 0.02]  # spacing 2.1 r: no overlap
        bodies.append(Body3D(1.0, pos, radius=r, velocity=0.1 * rng.standard_normal(3)))
    walls = [Plane([0, 0, 0], [0, 0, 1]), Plane([0, 0, 0], [1, 0, 0]), Plane([side, 0, 0], [-1, 0, 0]),
             Plane([0, 0, 0], [0, 1, 0]), Plane([0, side, 0], [0, -1, 0])]
    return Scene(bodies, walls, mu=mu, delta=delta)


_BODY_BYTES = 4096  # a body object and its rows in the scene's arrays, at the least


def _pile(name, n, width, radius, seed):
    """A pile's sizes checked (the count against memory, before any body is made): (n, width,
    radius, random generator); mu and delta are the Scene's to check."""
    n = val.integer(name, n, 1)
    val.fits_in_memory(name, n, n * _BODY_BYTES, "for the bodies")
    width, radius = val.integer("width", width, 1), val.positive_scalar("radius", radius)
    if not np.isfinite(2.2 * (n + width) * radius):
        raise ValueError(f"radius = {radius:.3g} puts the pile's {n} bodies beyond the float64 range: rescale (change units)")
    return n, width, radius, np.random.default_rng(val.integer("seed", seed, 0, allow_none=True))
