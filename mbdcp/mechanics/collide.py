"""Contacts at the exact shapes wherever a box or a fixed obstacle takes part, from MuJoCo's
collision functions (Todorov, Erez & Tassa 2012).

mbdcp's own code finds the contacts of round bodies with each other and of every body with the
walls (lines, planes); every other pair (box–box, box–sphere or disk, box–particle, and any body
against a :class:`~mbdcp.mechanics.Block` or :class:`~mbdcp.mechanics.Segment`) is handed to
MuJoCo, which returns, for each pair within the activation distance, up to eight points with their
signed distance and normal: the corners of the overlap of two faces, one point for an edge or a
sphere. A body is a free MuJoCo body with one geom (a particle a sphere of radius ``eps``, added
back to its gaps); an obstacle is a geom of the world.

A plane scene is extruded along z: a disk is a sphere centred in the plane z = 0, a box a box of
half-depth far larger than the scene, a segment a capsule of radius ``eps``. Their contacts lie
on the faces' edges at both ends of the extrusion, or in the plane; they are projected onto it
and those that differ only in z are merged.
"""
import numpy as np

from mbdcp.mechanics.obstacles import Block, Segment

__all__ = ["ShapeWorld", "mujoco_module", "needs_shapes"]


def fmt(x):
    """Numbers as an MJCF attribute: their reprs, space-separated."""
    return " ".join(repr(float(c)) for c in x)

_BOX, _ROUND = ('contype="1" conaffinity="3"', 'contype="2" conaffinity="1"')  # round-round pairs are mbdcp's own
_INERTIAL = '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'  # MuJoCo's masses are never used


def mujoco_module(why):
    """The mujoco module, or an ImportError saying ``why`` it is needed and how to install it."""
    try:
        import mujoco
    except ImportError as exc:
        raise ImportError(f"{why} come from MuJoCo's collision functions: pip install \"mbdcp[mujoco]\"") from exc
    return mujoco


def needs_shapes(fields, planar, walls):
    """Whether a scene has a box or an obstacle, so that some of its contacts come from MuJoCo."""
    return bool(np.any(fields["half_extents"][:, 0] > 0) or any(isinstance(w, (Block, Segment)) for w in walls))


def _scale(fields, walls):
    """A length of the scene's size: its largest body or obstacle, or 1."""
    sizes = [np.abs(fields["half_extents"]).max(initial=0), fields["radius"].max(initial=0)]
    for w in walls:
        if isinstance(w, Block):
            sizes.append(np.abs(w.half_extents).max())
        elif isinstance(w, Segment):
            sizes.append(w.length)
    return max(sizes) or 1.0


class ShapeWorld:
    """The MuJoCo model of one scene's shapes and obstacles, for its contact searches.

    Built for the shapes (radii, half extents) and the obstacles it is given; :meth:`matches`
    tells whether it still serves a scene, :meth:`contacts` finds the contacts of a
    configuration within an activation distance."""

    def __init__(self, fields, planar, walls):
        self.mujoco = mujoco_module("contacts of boxes and obstacles")
        self.planar, self.delta = planar, 0.0
        self.key = self._key(fields, planar, walls)
        scale = _scale(fields, walls)
        self.eps, self.depth = 1e-9 * scale, 100.0 * scale  # a particle's radius; the extrusion of a plane scene
        self.tol = 1e-9 * scale  # merging of points that differ only in z
        n = len(fields["radius"])
        self.memory_mb = 4 + n // 25  # MB: grows when a search fills it
        self.xml, self.geom_body, self.geom_wall, self.geom_eps = self._xml(fields, walls)
        self._build()

    def _build(self):
        self.model = self.mujoco.MjModel.from_xml_string(self.xml.replace("MEMORY", f"{self.memory_mb}M"))
        self.data = self.mujoco.MjData(self.model)

    @staticmethod
    def _key(fields, planar, walls):
        obstacles = tuple((type(w).__name__,) + tuple(np.concatenate([np.ravel(x) for x in vars(w).values()]).tolist())
                          for w in walls if isinstance(w, (Block, Segment)))
        return (planar, fields["radius"].tobytes(), fields["half_extents"].tobytes(), obstacles)

    def matches(self, fields, planar, walls):
        return self.key == self._key(fields, planar, walls)

    def _xml(self, fields, walls):
        margin = 'margin="0"'  # set by each search (contacts)
        bodies, geom_body, geom_wall, geom_eps = [], [], [], []
        for w, wall in enumerate(walls):  # the world's geoms come first
            if isinstance(wall, (Block, Segment)):
                bodies.append(self._obstacle(wall, margin))
                geom_body.append(-1), geom_wall.append(w), geom_eps.append(0.0 if isinstance(wall, Block) else self.eps)
        for i, (r, half) in enumerate(zip(fields["radius"], fields["half_extents"])):
            if half[0] > 0:
                size = " ".join(repr(float(x)) for x in (half if not self.planar else (half[0], half[1], self.depth)))
                geom = f'<geom type="box" size="{size}" {margin} {_BOX}/>'
            else:
                geom = f'<geom type="sphere" size="{float(r) or float(self.eps)!r}" {margin} {_ROUND}/>'
            bodies.append(f'<body name="b{i}"><freejoint/>{_INERTIAL}{geom}</body>')
            geom_body.append(i), geom_wall.append(-1), geom_eps.append(0.0 if r > 0 or half[0] > 0 else self.eps)
        xml = (f'<mujoco><size memory="MEMORY"/><option><flag gravity="disable"/></option>'
               f'<worldbody>{"".join(bodies)}</worldbody></mujoco>')
        return xml, np.array(geom_body), np.array(geom_wall), np.array(geom_eps)

    def _obstacle(self, wall, margin):
        """The MJCF of a fixed obstacle: a capsule of radius eps along a segment, or a box."""
        if isinstance(wall, Segment):
            ends = " ".join(repr(float(x)) for x in (*wall.start, 0.0, *wall.end, 0.0))
            return f'<geom type="capsule" fromto="{ends}" size="{float(self.eps)!r}" {margin} {_BOX}/>'
        half = wall.half_extents if wall.dim == 3 else np.r_[wall.half_extents, self.depth]
        pos = wall.position if wall.dim == 3 else np.r_[wall.position, 0.0]
        return f'<geom type="box" pos="{fmt(pos)}" quat="{fmt(wall.quaternion)}" size="{fmt(half)}" {margin} {_BOX}/>'

    def contacts(self, fields, delta):
        """(a, b, point, normal, gap) of the contacts with gap <= delta of the configuration in
        ``fields``: b = -1 for an obstacle (whose index among the walls orders them), a < b for a
        pair; the normal points into body a. Obstacle contacts by (a, wall, MuJoCo's order), then
        pairs by (a, b, MuJoCo's order)."""
        mj, m, d = self.mujoco, self.model, self.data
        if delta != self.delta:
            self.delta = float(delta)
            m.geom_margin[:] = self.delta + self.tol
        qpos = d.qpos.reshape(-1, 7)
        if self.planar:
            qpos[:, :2], qpos[:, 2] = fields["position"], 0.0
            half = 0.5 * fields["theta"]
            qpos[:, 3:] = np.stack([np.cos(half), 0 * half, 0 * half, np.sin(half)], axis=1)
        else:
            qpos[:, :3], qpos[:, 3:] = fields["position"], fields["quaternion"]
        mj.mj_kinematics(m, d)
        mj.mj_collision(m, d)
        if d.warning[mj.mjtWarning.mjWARN_CONTACTFULL].number:  # never lose a contact: more memory, again
            self.memory_mb *= 4
            self._build()
            self.delta = -1.0  # margins to set again
            return self.contacts(fields, delta)
        return self._read(d)

    def _read(self, d):
        c = d.contact
        g = np.asarray(c.geom[:d.ncon], dtype=np.intp).reshape(-1, 2)
        body, wall = self.geom_body[g], self.geom_wall[g]
        gap = np.asarray(c.dist[:d.ncon]) + self.geom_eps[g].sum(axis=1)
        n = np.asarray(c.frame[:d.ncon, :3])  # from geom 1 to geom 2
        point = np.asarray(c.pos[:d.ncon])
        obstacle = body.min(axis=1) < 0
        first = np.where(obstacle, body[:, 0] >= 0, body[:, 0] < body[:, 1])  # is body a geom 1?
        a = np.where(obstacle, body.max(axis=1), body.min(axis=1))
        b = np.where(obstacle, -1, body.max(axis=1))
        normal = np.where(first[:, None], -n, n)
        w = np.where(obstacle, wall.max(axis=1), -1)
        keep = gap <= self.delta
        a, b, w, point, normal, gap = a[keep], b[keep], w[keep], point[keep], normal[keep], gap[keep]
        if self.planar:
            a, b, w, point, normal, gap = self._in_plane(a, b, w, point, normal, gap)
        order = np.lexsort((np.arange(a.size), b, w, a, b >= 0))
        return a[order], b[order], point[order], normal[order], gap[order]

    def _in_plane(self, a, b, w, point, normal, gap):
        """Contacts of an extruded plane scene, projected onto the plane; of the points that differ
        only in z (the two ends of an extruded edge), the first."""
        normal = normal[:, :2] / np.linalg.norm(normal[:, :2], axis=1)[:, None]
        point = point[:, :2]
        key = np.column_stack([a, b, w, np.round(point / self.tol)]).astype(np.int64)
        _, first = np.unique(key, axis=0, return_index=True)
        first.sort()
        return a[first], b[first], w[first], point[first], normal[first], gap[first]
