r"""A small rigid-body layer: bodies, shapes, contact generation and the time-stepping loop.

Planar bodies have velocities :math:`(\dot x, \dot y, \omega)` and :math:`M = \mathrm{diag}(m, m, J)`;
a contact at offset :math:`r` from the centre of mass with unit normal :math:`\hat n` (pointing
into the body) contributes the column :math:`(\hat n, (r \times \hat n)_z)`.

Spatial bodies (DESIGN.md section 7) have configuration :math:`q = (x, e)` with a unit
quaternion :math:`e`, velocities :math:`v = (\dot x, \omega)` with :math:`\omega` in the world
frame, :math:`\dot q = G(q)v`, :math:`G = \mathrm{blockdiag}(I_3, B(e))`,

.. math::  B(e) = \tfrac12\begin{bmatrix} -e_1 & -e_2 & -e_3 \\ e_0 & e_3 & -e_2 \\
                                       -e_3 & e_0 & e_1 \\ e_2 & -e_1 & e_0 \end{bmatrix},

world inertia :math:`J = R J_B R^T`, gyroscopic impulse :math:`-h\,\omega \times J\omega`, and the
quaternion renormalised after each step. A contact column is :math:`(\hat n, r \times \hat n)`;
the other body of a pair gets the negated vector at its own offset.

Contacts are generated for particle/disk–line and disk–disk in 2-D, and particle/sphere–plane,
sphere–sphere and box–plane (corners) in 3-D. Pairs closer than the activation distance
``delta`` (seed 004) enter the step with their gap :math:`\Psi_n` (stabilisation
:math:`\Psi_n/h`). Walls may move with a prescribed velocity (``dpsi_n``, ``dpsi_f``).
"""
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import numpy as np

import mbdcp
from mbdcp.step import _friction_basis as friction_basis

__all__ = ["Body2D", "Body3D", "Line", "Plane", "Scene", "Trajectory", "simulate", "quaternion_to_matrix",
           "disk_pile_scene", "sphere_pile_scene"]


# ---------------------------------------------------------------------------------------------
# bodies and walls

@dataclass
class Body2D:
    """A planar rigid body: a disk of ``radius`` (0: a particle) with mass and inertia J."""

    mass: float
    position: Sequence[float]
    theta: float = 0.0
    velocity: Sequence[float] = (0.0, 0.0)
    omega: float = 0.0
    radius: float = 0.0
    inertia: Optional[float] = None  # default: a uniform disk, m r^2 / 2 (1 for a particle)

    def __post_init__(self):
        _positive("mass", self.mass)
        if self.radius < 0:
            raise ValueError(f"radius must be nonnegative, got {self.radius}")
        if self.inertia is None:
            self.inertia = 0.5 * self.mass * self.radius ** 2 if self.radius > 0 else 1.0
        _positive("inertia", self.inertia)
        self.position = _vec("position", self.position, 2)
        self.velocity = _vec("velocity", self.velocity, 2)

    dof = 3

    def q(self):
        return np.r_[self.position, self.theta]

    def v(self):
        return np.r_[self.velocity, self.omega]

    def mass_matrix(self):
        return np.diag([self.mass, self.mass, self.inertia])

    def column(self, r, vec):
        return [vec[0], vec[1], r[0] * vec[1] - r[1] * vec[0]]

    def applied(self, g, h):
        return h * np.r_[self.mass * g, 0.0]

    def advance(self, v, h):
        self.velocity, self.omega = v[:2].copy(), float(v[2])
        self.position = self.position + h * self.velocity
        self.theta += h * self.omega


def quaternion_to_matrix(e):
    """Rotation matrix of a unit quaternion e = (e0, e1, e2, e3)."""
    e0, e1, e2, e3 = e
    return np.array([
        [1 - 2 * (e2 * e2 + e3 * e3), 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), 1 - 2 * (e1 * e1 + e3 * e3), 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), 1 - 2 * (e1 * e1 + e2 * e2)],
    ])


def B_matrix(e):
    """B(e) with de/dt = B(e) omega for omega in the world frame (DESIGN.md section 7)."""
    e0, e1, e2, e3 = e
    return 0.5 * np.array([[-e1, -e2, -e3], [e0, e3, -e2], [-e3, e0, e1], [e2, -e1, e0]])


@dataclass
class Body3D:
    """A spatial rigid body: a sphere (``radius``), a box (``half_extents``) or a particle."""

    mass: float
    position: Sequence[float]
    quaternion: Sequence[float] = (1.0, 0.0, 0.0, 0.0)
    velocity: Sequence[float] = (0.0, 0.0, 0.0)
    omega: Sequence[float] = (0.0, 0.0, 0.0)   # world frame
    radius: float = 0.0
    half_extents: Optional[Sequence[float]] = None
    inertia: Optional[Sequence] = None           # body frame J_B: 3-vector (diagonal) or 3x3

    def __post_init__(self):
        _positive("mass", self.mass)
        self.position = _vec("position", self.position, 3)
        self.velocity = _vec("velocity", self.velocity, 3)
        self.omega = _vec("omega", self.omega, 3)
        e = _vec("quaternion", self.quaternion, 4)
        if np.linalg.norm(e) == 0:
            raise ValueError("quaternion must be nonzero")
        self.quaternion = e / np.linalg.norm(e)
        if self.half_extents is not None:
            self.half_extents = _vec("half_extents", self.half_extents, 3)
            if np.any(self.half_extents <= 0):
                raise ValueError("half_extents must be positive")
        if self.inertia is None:
            if self.half_extents is not None:
                a, b, c = 2 * self.half_extents
                self.inertia = self.mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
            elif self.radius > 0:
                self.inertia = np.full(3, 0.4 * self.mass * self.radius ** 2)
            else:
                self.inertia = np.ones(3)
        J = np.asarray(self.inertia, dtype=float)
        J = np.diag(J) if J.shape == (3,) else J
        if J.shape != (3, 3) or not np.allclose(J, J.T) or np.linalg.eigvalsh(J).min() <= 0:
            raise ValueError("inertia must be a positive 3-vector or a symmetric positive definite 3x3 matrix")
        self.inertia = J

    dof = 6

    def q(self):
        return np.r_[self.position, self.quaternion]

    def v(self):
        return np.r_[self.velocity, self.omega]

    def rotation(self):
        return quaternion_to_matrix(self.quaternion)

    def world_inertia(self):
        R = self.rotation()
        return R @ self.inertia @ R.T

    def mass_matrix(self):
        M = np.zeros((6, 6))
        M[:3, :3] = self.mass * np.eye(3)
        M[3:, 3:] = self.world_inertia()
        return M

    def column(self, r, vec):
        return [vec[0], vec[1], vec[2], r[1] * vec[2] - r[2] * vec[1], r[2] * vec[0] - r[0] * vec[2],
                r[0] * vec[1] - r[1] * vec[0]]

    def applied(self, g, h):
        J = self.world_inertia()
        return h * np.r_[self.mass * g, -np.cross(self.omega, J @ self.omega)]

    def advance(self, v, h):
        self.velocity, self.omega = v[:3].copy(), v[3:].copy()
        self.position = self.position + h * self.velocity
        e = self.quaternion + h * B_matrix(self.quaternion) @ self.omega
        self.quaternion = e / np.linalg.norm(e)

    def corners(self):
        """World positions of a box's corners, relative to its centre."""
        R = self.rotation()
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return (signs * self.half_extents) @ R.T


@dataclass
class Line:
    """A fixed or moving line (2-D wall): points x with normal . (x - point) >= 0 are outside."""

    point: Sequence[float]
    normal: Sequence[float]
    velocity: Sequence[float] = (0.0, 0.0)

    def __post_init__(self):
        self.point = _vec("point", self.point, 2)
        self.normal = _unit("normal", self.normal, 2)
        self.velocity = _vec("velocity", self.velocity, 2)


@dataclass
class Plane:
    """A fixed or moving plane (3-D wall) with outward unit normal."""

    point: Sequence[float]
    normal: Sequence[float]
    velocity: Sequence[float] = (0.0, 0.0, 0.0)

    def __post_init__(self):
        self.point = _vec("point", self.point, 3)
        self.normal = _unit("normal", self.normal, 3)
        self.velocity = _vec("velocity", self.velocity, 3)


def _positive(name, x):
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be positive and finite, got {x}")


def _vec(name, x, n):
    a = np.asarray(x, dtype=float)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a.copy()


def _unit(name, x, n):
    a = _vec(name, x, n)
    norm = np.linalg.norm(a)
    if norm == 0:
        raise ValueError(f"{name} must be nonzero")
    return a / norm


# ---------------------------------------------------------------------------------------------
# scene and contacts

@dataclass
class Contact:
    """One active contact: body a (index), body b (index or None for a wall), the point, the
    unit normal pointing into a, the gap, and the wall's velocity (zero for body pairs)."""

    a: int
    b: Optional[int]
    point: np.ndarray
    normal: np.ndarray
    gap: float
    wall_velocity: np.ndarray


@dataclass
class Scene:
    """Bodies (all planar or all spatial), walls, gravity and contact parameters.

    ``mu`` and ``n_d`` (friction directions per contact; even numbers give opposite pairs)
    apply to every contact; ``delta`` >= 0 is the activation distance.
    """

    bodies: List
    walls: List = field(default_factory=list)
    gravity: Optional[Sequence[float]] = None
    mu: float = 0.5
    n_d: Optional[int] = None
    delta: float = 0.0

    def __post_init__(self):
        if not self.bodies:
            raise ValueError("bodies must hold at least one body")
        kinds = {type(b) for b in self.bodies}
        if kinds not in ({Body2D}, {Body3D}):
            raise ValueError("bodies must be all Body2D or all Body3D")
        self.planar = kinds == {Body2D}
        dim = 2 if self.planar else 3
        wall_kind = Line if self.planar else Plane
        for w in self.walls:
            if not isinstance(w, wall_kind):
                raise ValueError(f"walls must be {wall_kind.__name__} objects for {'planar' if self.planar else 'spatial'} bodies")
        if self.gravity is None:
            self.gravity = np.r_[np.zeros(dim - 1), -9.81]
        self.gravity = _vec("gravity", self.gravity, dim)
        if not (self.mu >= 0):
            raise ValueError(f"mu must be nonnegative, got {self.mu}")
        if self.n_d is None:
            self.n_d = 2 if self.planar else 4
        if self.planar and self.n_d not in (0, 2):
            raise ValueError("n_d must be 0 or 2 for planar scenes (directions t and -t)")
        if not self.planar and (self.n_d < 0 or self.n_d % 2):
            raise ValueError(f"n_d must be a nonnegative even number, got {self.n_d}")
        if not (self.delta >= 0):
            raise ValueError(f"delta must be nonnegative, got {self.delta}")
        self.offsets = np.cumsum([0] + [b.dof for b in self.bodies])

    @property
    def n_v(self):
        return int(self.offsets[-1])

    def contacts(self):
        """The active contacts (gap <= delta) of the current configuration."""
        out = []
        zero = np.zeros(2 if self.planar else 3)
        for i, body in enumerate(self.bodies):
            for w in self.walls:
                for point, gap in _wall_points(body, w):
                    if gap <= self.delta:
                        out.append(Contact(i, None, point, w.normal, gap, w.velocity))
        round_ = [i for i, b in enumerate(self.bodies) if b.half_extents is None] if not self.planar \
            else list(range(len(self.bodies)))
        if len(round_) > 1:
            pos = np.array([self.bodies[i].position for i in round_])
            rad = np.array([self.bodies[i].radius for i in round_])
            for ia in range(len(round_)):
                d = pos[ia] - pos[ia + 1:]
                dist = np.linalg.norm(d, axis=1)
                gaps = dist - rad[ia] - rad[ia + 1:]
                for k in np.flatnonzero(gaps <= self.delta):
                    ib = ia + 1 + k
                    n = d[k] / dist[k]
                    point = pos[ib] + rad[ib] * n
                    out.append(Contact(round_[ia], round_[ib], point, n, float(gaps[k]), zero))
        return out

    def assemble(self, h, sparse=False, contacts=None):
        """Arguments of one step: a dict with M, Wn, D, E, U, Wt, v, p_ext, psi_n, dpsi_n, dpsi_f
        and the contacts (``contacts``: those of the current configuration, if already known);
        M, Wn, D, E, Wt are scipy.sparse (M block diagonal) when ``sparse``."""
        import scipy.sparse as sp

        n_v = self.n_v
        contacts = self.contacts() if contacts is None else contacts
        n_c, n_d = len(contacts), self.n_d
        v = np.zeros(n_v)
        p_ext = np.zeros(n_v)
        blocks = []
        for body, o in zip(self.bodies, self.offsets):
            blocks.append(body.mass_matrix())
            v[o:o + body.dof] = body.v()
            p_ext[o:o + body.dof] = body.applied(self.gravity, h)
        M = sp.block_diag(blocks, format="csr")
        trip = {"Wn": ([], [], []), "D": ([], [], []), "Wt": ([], [], [])}

        def put(name, o, col, vals):
            r, c, x = trip[name]
            r.extend(range(o, o + len(vals)))
            c.extend([col] * len(vals))
            x.extend(vals)

        psi, dpsi_n, dpsi_f = np.zeros(n_c), np.zeros(n_c), np.zeros(n_c * n_d)
        for c, ct in enumerate(contacts):
            if self.planar:
                t = np.array([-ct.normal[1], ct.normal[0]])
                dirs, pair = np.array([t, -t]).T[:, :n_d], np.array([t, np.zeros(2)]).T
            else:
                four = friction_basis(ct.normal, 4)
                dirs, pair = (four if n_d == 4 else friction_basis(ct.normal, n_d)), four[:, :2]
            for idx, sign in ((ct.a, 1.0), (ct.b, -1.0)):
                if idx is None:
                    continue
                body, o = self.bodies[idx], self.offsets[idx]
                r = ct.point - body.position
                put("Wn", o, c, [sign * x for x in body.column(r, ct.normal)])
                for k in range(n_d):
                    put("D", o, c * n_d + k, [sign * x for x in body.column(r, dirs[:, k])])
                for k in range(2):
                    put("Wt", o, 2 * c + k, [sign * x for x in body.column(r, pair[:, k])])
            psi[c] = ct.gap
            dpsi_n[c] = -ct.normal @ ct.wall_velocity
            dpsi_f[c * n_d:(c + 1) * n_d] = -dirs.T @ ct.wall_velocity
        widths = {"Wn": n_c, "D": n_c * n_d, "Wt": 2 * n_c}
        mats = {k: sp.csc_matrix((x, (r, c)), shape=(n_v, widths[k])) for k, (r, c, x) in trip.items()}
        mats["E"] = sp.kron(sp.eye(n_c), np.ones((n_d, 1)), format="csc")
        if not sparse:
            M = M.toarray()
            mats = {k: m.toarray() for k, m in mats.items()}
        return dict(M=M, Wn=mats["Wn"], D=mats["D"], E=mats["E"], U=np.full(n_c, float(self.mu)), Wt=mats["Wt"], v=v,
                    p_ext=p_ext, psi_n=psi, dpsi_n=dpsi_n, dpsi_f=dpsi_f, contacts=contacts)

    def kinetic_energy(self):
        return sum(0.5 * b.v() @ b.mass_matrix() @ b.v() for b in self.bodies)

    def potential_energy(self):
        return -sum(b.mass * (self.gravity @ b.position) for b in self.bodies)

    def max_penetration(self, contacts=None):
        gaps = [c.gap for c in (self.contacts() if contacts is None else contacts)]
        return max(0.0, -min(gaps)) if gaps else 0.0


def _wall_points(body, wall):
    """(point, gap) pairs of a body against a wall: the nearest point of a disk/sphere/particle,
    or every corner of a box."""
    n = wall.normal
    if getattr(body, "half_extents", None) is not None:
        return [(body.position + c, float(n @ (body.position + c - wall.point))) for c in body.corners()]
    centre_gap = float(n @ (body.position - wall.point))
    return [(body.position - body.radius * n, centre_gap - body.radius)]


# ---------------------------------------------------------------------------------------------
# simulation

@dataclass
class Trajectory:
    """What :func:`simulate` recorded, one entry per time (index 0: the initial state)."""

    times: np.ndarray
    positions: np.ndarray          # (steps + 1, n_q): per body q = (x, y, theta) or (x, quaternion)
    velocities: np.ndarray         # (steps + 1, n_v)
    impulses: list                 # per step: normal impulses of the active contacts
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    max_penetration: np.ndarray    # per time: the deepest penetration of the active contacts
    contacts: np.ndarray           # per step: number of active contacts
    statuses: list                 # per step: the solver's Status
    seconds: float

    @property
    def steps(self):
        return len(self.times) - 1

    @property
    def success(self):
        return all(s == mbdcp.Status.SOLVED for s in self.statuses)

    def plot_energy(self, ax=None):
        import matplotlib.pyplot as plt

        ax = ax or plt.gca()
        ax.plot(self.times, self.kinetic_energy, label="kinetic")
        ax.plot(self.times, self.potential_energy - self.potential_energy[-1], label="potential (shifted)")
        ax.set_xlabel("t")
        ax.set_ylabel("energy")
        ax.legend()
        return ax

    def plot_penetration(self, ax=None):
        import matplotlib.pyplot as plt

        ax = ax or plt.gca()
        ax.plot(self.times, self.max_penetration)
        ax.set_xlabel("t")
        ax.set_ylabel("largest penetration")
        return ax


def simulate(scene, h, T, method="lcp", progress=True, algorithm=3, ccp_tol=1e-8, fp_tol=1e-10,
             max_iter=None):
    """Time-step a scene from t = 0 to T with step h; the scene's bodies are advanced in place.

    ``method``: "lcp" (:func:`mbdcp.step`), "fixed_point" (:func:`mbdcp.fixed_point` with
    ``algorithm``; fixed walls only) or "ccp" (:func:`mbdcp.ccp`; walls may move along their
    normal only). ``progress`` shows a tqdm progress bar (the results do not depend on it).
    Returns a :class:`Trajectory`; a step that does not reach the solver's status SOLVED is
    recorded in ``statuses`` and the simulation goes on with the solver's last iterate.
    """
    import time

    if method not in ("lcp", "fixed_point", "ccp"):
        raise ValueError(f"method must be 'lcp', 'fixed_point' or 'ccp', got {method!r}")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h must be positive and finite, got {h}")
    if not (np.isfinite(T) and T >= 0):
        raise ValueError(f"T must be nonnegative and finite, got {T}")
    steps = int(round(T / h))
    iterator = range(steps)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc=f"simulate ({method})", unit="step")
    q = [np.concatenate([b.q() for b in scene.bodies])]
    vel = [np.concatenate([b.v() for b in scene.bodies])]
    contacts = scene.contacts()  # of the current configuration: used for its penetration and next step
    ke, pe, pen = [scene.kinetic_energy()], [scene.potential_energy()], [scene.max_penetration(contacts)]
    impulses, n_contacts, statuses = [], [], []
    t0 = time.perf_counter()
    for _ in iterator:
        a = scene.assemble(h, sparse=method == "ccp", contacts=contacts)
        args = (a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], h)
        if method == "lcp":
            res = mbdcp.step(*args, p_ext=a["p_ext"], psi_n=a["psi_n"], dpsi_n=a["dpsi_n"], dpsi_f=a["dpsi_f"])
            p_n = res.p_n
        elif method == "fixed_point":
            if np.any(a["dpsi_n"]) or np.any(a["dpsi_f"]):
                raise ValueError("method 'fixed_point' supports fixed walls only")
            res = mbdcp.fixed_point(*args, p_ext=a["p_ext"], psi_n=a["psi_n"], algorithm=algorithm, tol=fp_tol,
                                    **({"max_iter": max_iter} if max_iter else {}))
            p_n = res.p_n
        else:
            dirs_moving = np.any(a["dpsi_f"])
            if dirs_moving:
                raise ValueError("method 'ccp' supports walls moving along their normal only")
            res = mbdcp.ccp(a["M"], a["Wn"], a["Wt"], a["U"], a["v"], h, p_ext=a["p_ext"],
                            phi=a["psi_n"] + h * a["dpsi_n"], tol=ccp_tol,
                            **({"max_iter": max_iter} if max_iter else {}))
            p_n = res.gamma[:, 0]
        for body, o in zip(scene.bodies, scene.offsets):
            body.advance(res.v_next[o:o + body.dof], h)
        for wall in scene.walls:  # prescribed motion of the walls
            wall.point = wall.point + h * wall.velocity
        q.append(np.concatenate([b.q() for b in scene.bodies]))
        vel.append(res.v_next.copy())
        ke.append(scene.kinetic_energy())
        pe.append(scene.potential_energy())
        contacts = scene.contacts()
        pen.append(scene.max_penetration(contacts))
        impulses.append(np.array(p_n))
        n_contacts.append(len(a["contacts"]))
        statuses.append(res.status)
    return Trajectory(times=h * np.arange(steps + 1), positions=np.array(q), velocities=np.array(vel),
                      impulses=impulses, kinetic_energy=np.array(ke), potential_energy=np.array(pe),
                      max_penetration=np.array(pen), contacts=np.array(n_contacts), statuses=statuses,
                      seconds=time.perf_counter() - t0)


# ---------------------------------------------------------------------------------------------
# ready-made scenes

def disk_pile_scene(n_disks=136, width=10, radius=0.5, mu=0.3, seed=0, delta=0.1):
    """Seed 001's test: disks (radius about ``radius``, m = 1) on a loose lattice in a box of
    ``width`` disks, dropped under gravity; floor at y = 0, walls at x = 0 and x = 2 width r."""
    rng = np.random.default_rng(seed)
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
    rng = np.random.default_rng(seed)
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
