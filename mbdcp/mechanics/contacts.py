"""Contact generation, vectorised over bodies.

Walls (lines, planes) meet every body at its nearest point (disk, sphere, particle) or at every
corner (box); disk–disk and sphere–sphere pairs (a particle is one of radius 0) come from a hashed
uniform grid in the compiled core (cells of side :math:`2 r_{max} + \\delta`, so that a pair within
reach lies in neighbouring cells) and are filtered there by their exact gap. Every other pair (a
box with any body, any body with a fixed obstacle) comes from MuJoCo's collision functions
(:mod:`mbdcp.mechanics.collide`). A contact is active when its gap is at most the activation
distance :math:`\\delta`. The order is fixed: wall contacts by (body, wall, corner), then round
pairs by (a, b) with a < b, then MuJoCo's: obstacle contacts by (body, obstacle), pairs by (a, b).

No pair is ever ignored: without MuJoCo, a search in which a box comes within reach of another
body (the gap between their bounding spheres at most :math:`\\delta`, so a contact of theirs could
be active) raises ``UnsupportedPair`` (a ValueError) naming the two bodies.
"""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from mbdcp.infrastructure import _core
from mbdcp.mechanics.bodies import box_corners
from mbdcp.mechanics.walls import Line, Plane

__all__ = ["CoincidentCentres", "Contact", "Contacts", "find_contacts"]


class CoincidentCentres(ValueError):
    """Two round bodies share a centre: their contact normal is undefined."""


class UnsupportedPair(ValueError):
    """Two bodies may touch, but their contacts need MuJoCo's collision functions, which are not
    installed (a box and another body)."""


@dataclass(frozen=True)
class Contact:
    """One active contact: body a (index), body b (index or None for a wall), the point, the
    unit normal pointing into a, the gap, and the wall's velocity (zero for body pairs)."""

    a: int
    b: Optional[int]
    point: np.ndarray
    normal: np.ndarray
    gap: float
    wall_velocity: np.ndarray


@dataclass(frozen=True)
class Contacts:
    """The active contacts of a configuration as arrays with one row per contact; ``b`` is -1
    for a wall. ``contacts[k]`` is the :class:`Contact` k."""

    a: np.ndarray
    b: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    wall_velocity: np.ndarray

    def __len__(self):
        return len(self.gap)

    def __getitem__(self, k):
        b = int(self.b[k])
        return Contact(int(self.a[k]), None if b < 0 else b, self.point[k], self.normal[k], float(self.gap[k]),
                       self.wall_velocity[k])

    def max_penetration(self):
        """The deepest penetration, max(0, -min gap); 0 without contacts."""
        return max(0.0, -float(self.gap.min())) if len(self) else 0.0

    @classmethod
    def of(cls, contacts, dim):
        """Contacts from Contacts or from a sequence of Contact."""
        if isinstance(contacts, cls):
            return contacts
        contacts = list(contacts)

        def rows(name):
            return np.array([getattr(c, name) for c in contacts], dtype=float).reshape(len(contacts), dim)
        return cls(np.array([c.a for c in contacts], dtype=np.intp), np.array([-1 if c.b is None else c.b for c in contacts],
                                                                               dtype=np.intp),
                   rows("point"), rows("normal"), np.array([c.gap for c in contacts], dtype=float), rows("wall_velocity"))


def find_contacts(fields, planar, walls, delta, world=None):
    """The active contacts (gap <= delta) of bodies given by their field arrays, against ``walls``
    (lines or planes, and obstacles); ``world``: the scene's :class:`~mbdcp.mechanics.collide.ShapeWorld`
    for the contacts of boxes and obstacles, None without MuJoCo (an ``UnsupportedPair`` when a
    box is within reach of another body, see ``unsupported_pair``)."""
    pos, rad = fields["position"], fields["radius"]
    box = fields["half_extents"][:, 0] > 0
    if world is None:
        message = unsupported_pair(fields, planar, delta)
        if message:  # their contacts would be missing from the step: refuse rather than ignore them
            raise UnsupportedPair(message)
    round_, boxes = np.flatnonzero(~box), np.flatnonzero(box)
    flat = [w for w in walls if isinstance(w, (Line, Plane))]
    parts = [_wall_contacts(fields, pos, rad, round_, boxes, flat, delta, planar), _pair_contacts(pos, rad, round_, delta)]
    if world is not None:
        a, b, point, normal, gap = world.contacts(fields, delta)
        parts.append((a, b, point, normal, gap, np.zeros_like(point)))
    return Contacts(*(np.concatenate(x) for x in zip(*parts)))


def _wall_contacts(fields, pos, rad, round_, boxes, walls, delta, planar):
    dim = pos.shape[1]
    normals = np.array([wl.normal for wl in walls]).reshape(-1, dim)
    velocities = np.array([wl.velocity for wl in walls]).reshape(-1, dim)
    centres, radii = pos[round_], rad[round_]
    g = np.empty((round_.size, len(walls)))
    for w, wl in enumerate(walls):
        g[:, w] = (centres - wl.point) @ wl.normal - radii
    k, wall = np.nonzero(g <= delta)  # by body, then wall: the order of the keys below
    body, gap = round_[k], g[k, wall]
    point = pos[body] - rad[body, None] * normals[wall]
    if boxes.size:
        corners = _corners(fields, boxes, planar)
        body, wall, point, gap = _box_corners(corners, boxes, walls, delta, body, wall, point, gap)
    return body, np.full(body.size, -1), point, normals[wall], gap, velocities[wall]


def _corners(fields, boxes, planar):
    """The boxes' corners in the world frame: (n, 4, 2) in a plane scene, (n, 8, 3) in space."""
    pos, half = fields["position"][boxes], fields["half_extents"][boxes]
    if not planar:
        return pos[:, None, :] + box_corners(half, fields["quaternion"][boxes])
    c, s = np.cos(fields["theta"][boxes]), np.sin(fields["theta"][boxes])
    local = _SQUARE * half[:, None, :]  # (n, 4, 2)
    return pos[:, None, :] + np.stack([c[:, None] * local[..., 0] - s[:, None] * local[..., 1],
                                       s[:, None] * local[..., 0] + c[:, None] * local[..., 1]], axis=-1)


_SQUARE = np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]], dtype=float)


def _box_corners(pts, boxes, walls, delta, body, wall, point, gap):
    """The round bodies' wall contacts (body, wall, point, gap) and the boxes' corners ``pts``
    within delta of a wall, in the order (body, wall, corner)."""
    per = pts.shape[1]
    parts = [(per * (body * len(walls) + wall), body, wall, point, gap)]
    for w, wl in enumerate(walls):
        g = (pts - wl.point) @ wl.normal
        kb, kc = np.nonzero(g <= delta)
        i = boxes[kb]
        parts.append((per * (i * len(walls) + w) + kc, i, np.full(kb.size, w), pts[kb, kc], g[kb, kc]))
    key, body, wall, point, gap = (np.concatenate(x) for x in zip(*parts))
    order = np.argsort(key, kind="stable")
    return body[order], wall[order], point[order], gap[order]


def _pair_contacts(pos, rad, round_, delta):
    """The round bodies' pairs with gap <= delta (the compiled grid search of spheres.h), in
    increasing (i, j): (i, j, point, normal, gap, wall velocity 0)."""
    dim = pos.shape[1]
    pair, gap, normal, point, coincident = _core.sphere_pairs(np.ascontiguousarray(pos[round_], dtype=np.float64),
                                                              np.ascontiguousarray(rad[round_], dtype=np.float64),
                                                              float(delta))
    if coincident is not None:
        a, b = (int(round_[k]) for k in coincident)
        raise CoincidentCentres(f"bodies {a} and {b} have coincident centres at {pos[a].tolist()}: the contact normal is undefined")
    i, j = round_[pair[:, 0]], round_[pair[:, 1]]
    return i, j, point, normal, gap, np.zeros((i.size, dim))


def unsupported_pair(fields, planar, delta):
    """Why the bodies cannot be stepped without MuJoCo, or None: the rule is that no box comes
    within reach of another body, the gap between their bounding spheres (a box's of radius
    |half_extents|) being at most delta. Such a pair could have an active contact, and only
    MuJoCo's collision functions make it. The message names the first such pair (i, j), i < j."""
    if not np.any(fields["half_extents"][:, 0] > 0):
        return None
    pair = _first_pair_in_reach(fields, delta)
    if pair is None:
        return None
    (i, j), gap = pair
    kinds = [_kind(fields, i), _kind(fields, j)]
    return (f"bodies {i} ({kinds[0]}) and {j} ({kinds[1]}) may touch (the gap of their bounding spheres is {gap:.3g} "
            f"<= delta = {delta:.3g}), and their {'-'.join(sorted(kinds))} contacts come from MuJoCo's collision "
            "functions, which are not installed: pip install \"mbdcp[mujoco]\", or keep every box out of reach of the "
            "other bodies")


def _first_pair_in_reach(fields, delta):
    """((i, j), gap) of the first pair (i < j) of a box and another body whose bounding spheres
    are within delta, or None; one box at a time (O(boxes x bodies) memory would be too much)."""
    pos, half = fields["position"], fields["half_extents"]
    box = half[:, 0] > 0
    with np.errstate(over="ignore", invalid="ignore"):  # a huge size or distance is inf: in reach
        bound = np.where(box, np.linalg.norm(half, axis=1), fields["radius"])
        best = None
        for b in np.flatnonzero(box):
            gap = np.linalg.norm(pos - pos[b], axis=1) - bound - bound[b]
            gap[b] = np.inf
            near = np.flatnonzero(~(gap > delta))  # NaN (inf - inf) counts as in reach
            if near.size:
                j = int(near[0])  # the smallest partner gives b's first pair
                pair = (min(int(b), j), max(int(b), j))
                if best is None or pair < best[0]:
                    best = (pair, float(gap[j]))
    return best


def _kind(fields, i):
    """The shape of body i: box, sphere (disk in a plane scene) or particle."""
    if fields["half_extents"][i, 0] > 0:
        return "box"
    if fields["radius"][i] > 0:
        return "disk" if fields["position"].shape[1] == 2 else "sphere"
    return "particle"
