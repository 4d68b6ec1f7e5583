"""Random problems for tests, benchmarks and experiments.

Each generator takes a ``numpy.random.Generator`` (or a seed) so that results
are reproducible.
"""
from dataclasses import dataclass

import numpy as np

from mbdcp.formulations.step import friction_basis
from mbdcp.infrastructure import validate as val

__all__ = ["random_spd", "lcp_with_solution", "Scene", "random_scene", "stewart_trinkle_lcp", "LCP_CLASSES",
           "lcp_problem", "infeasible_lcp", "scaled_lcp", "solves_lcp", "certifies_infeasibility", "spread_lcp",
           "basic_solutions"]


def _rng(seed):
    """A Generator from a Generator, None or a nonnegative integer seed."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(val.integer("seed", seed, 0, allow_none=True))


def _size(name, n, low, per_item, what):
    """A count checked: an integer >= low whose ``per_item`` bytes each (a function of the count
    when they grow with it) fit in memory."""
    n = val.integer(name, n, low)
    val.fits_in_memory(name, n, (per_item(n) if callable(per_item) else per_item) * n, what)
    return n


def _pair(name, x, low, domain=None):
    """A (low, high) range of two finite numbers with low <= high (nonnegative when ``domain``)."""
    a = val.vector(name, x, 2)
    if a[0] > a[1] or a[0] < low:
        raise ValueError(f"{name} must be a range (low, high) with {low} <= low <= high, got {a.tolist()}")
    return a


COND_MAX = 1e15  # beyond it the rounding of Q diag(eig) Q^T can leave the matrix indefinite


def random_spd(n, seed=None, cond=100.0):
    """A random symmetric positive definite n x n matrix with condition number ``cond`` (at most
    COND_MAX = 1e15: the rounding of a larger one may make it indefinite)."""
    rng = _rng(seed)
    n = _size("n", n, 1, lambda k: 32 * k, "for an n x n matrix and its factors")  # n^2 entries: checked as n * (8 n)
    cond = val.scalar_in("cond", cond, 1.0, COND_MAX)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    eig = np.geomspace(1.0, cond, n) if n > 1 else np.ones(1)
    A = (Q * eig) @ Q.T
    return 0.5 * (A + A.T)


def lcp_with_solution(M, seed=None, frac_active=0.5):
    """q and the solution (z, w) of LCP(M, q) built around a chosen point:
    pick r, z = max(r, 0), w = max(-r, 0), q = w - M z."""
    rng = _rng(seed)
    M = val.as_array("M", M, 2)
    n = M.shape[0]
    M = val.matrix("M", M, (n, n), ("n", "n"))
    frac_active = val.scalar_in("frac_active", frac_active, 0.0, 1.0)
    r = rng.standard_normal(n) + (frac_active - 0.5) * 2.0
    z, w = np.maximum(r, 0.0), np.maximum(-r, 0.0)
    return w - M @ z, z, w


@dataclass
class Scene:
    """Data of one time step of a random spatial scene (arguments of :func:`mbdcp.step`)."""

    M: np.ndarray
    Wn: np.ndarray
    D: np.ndarray
    E: np.ndarray
    U: np.ndarray
    v: np.ndarray
    h: float
    p_ext: np.ndarray
    psi_n: np.ndarray
    Wt: np.ndarray = None  # n_v x 2 n_c tangent pairs (u_i, w_i), when the generator knows them

    def args(self):
        return (self.M, self.Wn, self.D, self.E, self.U, self.v, self.h)

    def kwargs(self):
        return {"p_ext": self.p_ext, "psi_n": self.psi_n}


def random_scene(n_bodies, n_contacts, seed=None, n_d=(2, 8), mu=(0.0, 1.0), ground_fraction=0.5,
                 h=0.01, gap=(0.0, 0.01)):
    """A random spatial scene: rigid bodies (6 velocities each: linear, angular in the world
    frame) with ground contacts and body-body contacts.

    Contact i between bodies a and b at offsets r_a, r_b from their centres with unit normal
    n (pointing into a) contributes the column (n, r_a x n) to body a and (-n, -r_b x n) to
    body b; friction directions d from :func:`mbdcp.friction_basis` likewise. The number of
    directions per contact is drawn from ``n_d`` (inclusive, even numbers only), mu uniformly
    from ``mu``, gaps from ``gap`` (nonnegative: a solution then always exists).
    """
    rng = _rng(seed)
    n_bodies = _size("n_bodies", n_bodies, 1, lambda k: 6 * 8 * 6 * k, "for M (6 n_bodies)^2")
    n_contacts = _size("n_contacts", n_contacts, 0, 8 * 6 * n_bodies * 12, "for the Jacobians")
    lo, hi = (int(k) for k in _pair("n_d", n_d, 0))
    if hi > 2 ** 31 - 1:
        raise ValueError(f"n_d must be a range of counts of friction directions (at most 2**31 - 1), got {n_d!r}")
    if lo % 2 or hi % 2 or hi < max(lo, 2):
        raise ValueError(f"n_d must be a range of even numbers (low, high) with high >= 2, got {n_d}")
    mu, gap = _pair("mu", mu, 0.0), _pair("gap", gap, 0.0)
    ground_fraction = val.scalar_in("ground_fraction", ground_fraction, 0.0, 1.0)
    h = val.positive_scalar("h", h)
    n_v = 6 * n_bodies
    M = np.zeros((n_v, n_v))
    for b in range(n_bodies):
        m = rng.uniform(0.5, 2.0)
        M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = m * np.eye(3)
        M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = random_spd(3, rng, cond=5.0) * m * 0.4
    Wn = np.zeros((n_v, n_contacts))
    Wt = np.zeros((n_v, 2 * n_contacts))
    cols, owner, mus = [], [], []
    for c in range(n_contacts):
        normal = rng.standard_normal(3)
        if rng.uniform() < ground_fraction or n_bodies < 2:
            a, b = rng.integers(n_bodies), None
            normal = np.array([0.0, 0.0, 1.0]) + 0.2 * normal
        else:
            a, b = rng.choice(n_bodies, 2, replace=False)
        normal /= np.linalg.norm(normal)
        ra, rb = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        nd = int(rng.integers(max(lo, 2) // 2, hi // 2 + 1)) * 2
        dirs = friction_basis(normal, nd)
        pair = friction_basis(normal, 4)[:, :2]
        for vec, col in [(normal, None)] + [(dirs[:, k], k) for k in range(nd)] + [(pair[:, 0], "u"), (pair[:, 1], "w")]:
            g = np.zeros(n_v)
            g[6 * a:6 * a + 3] = vec
            g[6 * a + 3:6 * a + 6] = np.cross(ra, vec)
            if b is not None:
                g[6 * b:6 * b + 3] = -vec
                g[6 * b + 3:6 * b + 6] = -np.cross(rb, vec)
            if col is None:
                Wn[:, c] = g
            elif col == "u":
                Wt[:, 2 * c] = g
            elif col == "w":
                Wt[:, 2 * c + 1] = g
            else:
                cols.append(g)
                owner.append(c)
        mus.append(rng.uniform(*mu))
    m = len(cols)
    D = np.array(cols).T if m else np.zeros((n_v, 0))
    E = np.zeros((m, n_contacts))
    E[np.arange(m), owner] = 1.0
    v = rng.standard_normal(n_v)
    p_ext = np.zeros(n_v)
    p_ext[2::6] = -9.81 * h * np.diag(M)[2::6]
    psi_n = rng.uniform(*gap, n_contacts)
    return Scene(M, Wn, D, E, np.array(mus), v, h, p_ext, psi_n, Wt)


def stewart_trinkle_lcp(n_bodies, n_contacts, seed=None, **kw):
    """The reduced LCP (F, f) of one step of :func:`random_scene`."""
    import mbdcp

    s = random_scene(n_bodies, n_contacts, seed, **kw)
    res = mbdcp.step(*s.args(), **s.kwargs(), return_lcp=True)
    return res.lcp.F, res.lcp.f


def _planar_column(n_v, body, r, vec, sign=1.0):
    """Generalized vector of a planar force direction ``vec`` applied at offset ``r`` of ``body``
    (velocities x', y', w per body): (vec, r x vec)."""
    col = np.zeros(n_v)
    if body is not None:
        col[3 * body:3 * body + 3] = sign * np.array([vec[0], vec[1], r[0] * vec[1] - r[1] * vec[0]])
    return col


def disk_pile(n_disks, seed=None, radius=0.5, jitter=0.02, width=None, delta=0.05, speed=0.5, h=0.01,
              mu=0.2):
    """One time step of a 2-D pile of disks in a box (smaller than the 136-body pile of Anitescu & Hart (lecture)).

    Disks of radius ``radius`` (shrunk at random by up to ``jitter``) sit on a hexagonal lattice
    on the floor between two walls; every pair (and disk-wall pair) closer than ``delta`` is an
    active contact with two friction directions (t, -t). Velocities (x', y', w) per disk are
    random with magnitude ``speed``; gravity acts along -y. Gaps are >= 0.
    """
    rng = _rng(seed)
    n_disks = _size("n_disks", n_disks, 1, lambda k: 8 * 9 * k * 4, "for the dense M and Jacobians")
    radius, h = val.positive_scalar("radius", radius), val.positive_scalar("h", h)
    if not 1e-100 <= radius <= 1e100:  # the pile squares distances and masses grow as radius^2
        raise ValueError(f"radius must be in [1e-100, 1e100] (its squares must stay within float64), got {radius:g}")
    jitter = val.scalar_in("jitter", jitter, 0.0, 1.0, high_open=True)
    delta, speed, mu = (val.nonnegative_scalar(k, x) for k, x in (("delta", delta), ("speed", speed), ("mu", mu)))
    width = None if width is None else val.integer("width", width, 1)
    per_row = width or max(2, int(np.ceil(np.sqrt(n_disks))))
    r = radius * (1.0 - jitter * rng.uniform(size=n_disks))
    centres = []
    for k in range(n_disks):
        row, col = divmod(k, per_row)
        x = radius * (1 + 2 * col + (row % 2))
        y = radius * (1 + np.sqrt(3.0) * row)
        centres.append((x, y))
    c = np.array(centres)
    c[:, 1] -= radius - r  # every disk of the first row touches the floor
    right = radius * (2 * per_row + 1)
    n_v = 3 * n_disks
    M = np.diag(np.c_[np.ones(n_disks), np.ones(n_disks), 0.5 * r ** 2].ravel())  # m = 1, J = m r^2 / 2
    cols_n, cols_d, gaps = [], [], []

    def add(i, j, point, normal, gap):
        t = np.array([-normal[1], normal[0]])
        wn = _planar_column(n_v, i, point - c[i], normal)
        wd = [_planar_column(n_v, i, point - c[i], d) for d in (t, -t)]
        if j is not None:
            wn -= _planar_column(n_v, j, point - c[j], normal)
            wd = [a - _planar_column(n_v, j, point - c[j], d) for a, d in zip(wd, (t, -t))]
        cols_n.append(wn)
        cols_d.extend(wd)
        gaps.append(gap)

    for i in range(n_disks):
        for j in range(i + 1, n_disks):
            d = c[i] - c[j]
            dist = np.linalg.norm(d)
            gap = dist - r[i] - r[j]
            if gap <= delta:
                n = d / dist  # pushes i away from j
                add(i, j, c[j] + n * r[j], n, max(gap, 0.0))
        for point, normal, gap in (((c[i, 0], 0.0), (0.0, 1.0), c[i, 1] - r[i]),
                                   ((0.0, c[i, 1]), (1.0, 0.0), c[i, 0] - r[i]),
                                   ((right, c[i, 1]), (-1.0, 0.0), right - c[i, 0] - r[i])):
            if gap <= delta:
                add(i, None, np.array(point), np.array(normal), max(gap, 0.0))
    n_c = len(cols_n)
    Wn = np.array(cols_n).T
    D = np.array(cols_d).T
    E = np.kron(np.eye(n_c), np.ones((2, 1)))
    v = speed * rng.standard_normal(n_v)
    p_ext = np.zeros(n_v)
    p_ext[1::3] = -9.81 * h
    return Scene(M, Wn, D, E, np.full(n_c, float(mu)), v, h, p_ext, np.array(gaps))


def granular_pile(n_bodies, n_contacts, seed=None, mu=(0.1, 0.6), h=0.01, sparse=True, pairs="neighbours"):
    """A random 3-D granular scene for the CCP: spheres (6 velocities each, M block diagonal)
    with about ``n_contacts`` contacts, roughly half with the ground and half between two bodies:
    neighbours by index (``pairs="neighbours"``: a banded contact graph) or any two bodies
    (``pairs="random"``: an expander-like graph, hard for iterative solvers). Returns a dict of
    the arguments of :func:`mbdcp.ccp` (M, Wn, Wt as scipy.sparse when ``sparse``)."""
    pairs = val.choice("pairs", pairs, ("neighbours", "random"))
    import scipy.sparse as sp

    rng = _rng(seed)
    n_bodies = _size("n_bodies", n_bodies, 1, 8 * 6 * 4, "for M")
    n_contacts = _size("n_contacts", n_contacts, 0, 8 * 3 * 12 * 4, "for the Jacobians")
    mu, h, sparse = _pair("mu", mu, 0.0), val.positive_scalar("h", h), val.flag("sparse", sparse)
    n_v = 6 * n_bodies
    radius = rng.uniform(0.4, 0.6, n_bodies)
    mass = rng.uniform(0.5, 2.0, n_bodies)
    diag = np.repeat(mass, 6)
    diag[3::6] = diag[4::6] = diag[5::6] = 0.4 * mass * radius ** 2
    M = sp.diags(diag).tocsr()
    rows, cols, vals = [], [], []

    def add(col, body, r, vec, sign):
        rows.extend(range(6 * body, 6 * body + 6))
        cols.extend([col] * 6)
        vals.extend(sign * np.r_[vec, np.cross(r, vec)])

    ground = rng.uniform(size=n_contacts) < 0.5
    for c in range(n_contacts):
        a = int(rng.integers(n_bodies))
        if ground[c] or n_bodies < 2:
            n = np.array([0.0, 0.0, 1.0])
            pair = [(a, -radius[a] * n, 1.0)]
        else:
            b = int((a + (rng.integers(1, 4) if pairs == "neighbours" else rng.integers(1, n_bodies))) % n_bodies)
            n = rng.standard_normal(3)
            n /= np.linalg.norm(n)
            pair = [(a, -radius[a] * n, 1.0), (b, radius[b] * n, -1.0)]
        t1, t2 = friction_basis(n, 4)[:, 0], friction_basis(n, 4)[:, 1]
        for k, vec in enumerate((n, t1, t2)):
            for body, r, sign in pair:
                add(3 * c + k, body, r, vec, sign)
    J = sp.csc_matrix((vals, (rows, cols)), shape=(n_v, 3 * n_contacts))
    Wn = J[:, 0::3]
    Wt = J[:, sorted(list(range(1, 3 * n_contacts, 3)) + list(range(2, 3 * n_contacts, 3)))]
    v = 0.5 * rng.standard_normal(n_v)
    p_ext = np.zeros(n_v)
    p_ext[2::6] = -9.81 * h * mass
    out = dict(M=M, Wn=Wn, Wt=Wt, mu=rng.uniform(*mu, n_contacts), v=v, h=h, p_ext=p_ext,
               psi_n=rng.uniform(0.0, 0.01, n_contacts))
    if not sparse:
        out.update(M=M.toarray(), Wn=Wn.toarray(), Wt=Wt.toarray())
    return out


# ---- LCP classes for reliability tests and benchmarks --------------------------------------------

def solves_lcp(M, q, z, tol=1e-8):
    r"""True when z solves LCP(M, q) row by row, each row at its own scale (a check in extended
    precision, np.longdouble, independent of the C core's).

    With :math:`w = M z + q` and :math:`s_i = |q_i| + \sum_j |M_{ij}| z_j` (the magnitude of the
    terms of :math:`w_i`): :math:`z_i \ge 0`, :math:`w_i \ge -\mathrm{tol}\, s_i`, and
    :math:`z_i = 0` or :math:`w_i \le \mathrm{tol}\, s_i`, for every row i, with no floor:
    invariant under any positive scaling of rows and columns (a change of units).
    """
    M, q, z = _lcp_arrays(M, q, z=z)
    tol = val.nonnegative_scalar("tol", tol)
    M, q, z = (np.asarray(x, dtype=np.longdouble) for x in (M, q, z))
    if z.shape != q.shape or M.shape != q.shape * 2 or not np.all(np.isfinite(z)) or np.any(z < 0):
        return False
    w = M @ z + q
    s = np.abs(q) + np.abs(M) @ z
    return bool(np.all(np.isfinite(w)) and np.all(w >= -tol * s) and np.all((z == 0) | (w <= tol * s)))


def certifies_infeasibility(M, q, y, tol=1e-8):
    """True when y proves LCP(M, q) infeasible (Farkas): y >= 0, M^T y <= 0 and q^T y < 0, each
    column and q^T y at its own scale (np.longdouble): then no z >= 0 has M z + q >= 0."""
    if y is None:
        return False
    M, q, y = _lcp_arrays(M, q, y=y)
    tol = val.nonnegative_scalar("tol", tol)
    M, q, y = (np.asarray(x, dtype=np.longdouble) for x in (M, q, y))
    return bool(np.all(y >= 0) and np.all(M.T @ y <= tol * (np.abs(M).T @ y)) and q @ y < -tol * (np.abs(q) @ y))


def _lcp_arrays(M, q, names=("M", "q"), **vectors):
    """M (n, n), q (n,) and further n-vectors (by name), validated (``names``: those of M and q)."""
    M = val.as_array(names[0], M, 2)
    n = M.shape[0]
    where = {"n": f"{names[0]} is n x n"}
    M = val.matrix(names[0], M, (n, n), ("n", "n"), where)
    return (M, val.vector(names[1], q, n, symbol="n", where=where)) + tuple(val.vector(k, x, n, symbol="n", where=where)
                                                                            for k, x in vectors.items())


def _planted_q(rng, M, integer=False):
    n = len(M)
    if integer:
        z = np.where(rng.uniform(size=n) < 0.5, rng.integers(0, 3, n), 0).astype(float)
        w = np.where((z == 0) & (rng.uniform(size=n) < 0.5), rng.integers(0, 3, n), 0).astype(float)
    else:
        r = rng.standard_normal(n)
        z, w = np.maximum(r, 0.0), np.maximum(-r, 0.0)
    return w - M @ z


def _p_matrix(rng, n):
    K = rng.standard_normal((n, n))
    return random_spd(n, rng, cond=10 ** rng.uniform(0, 6)) + rng.uniform(0, 1) * (K - K.T)


def _psd(rng, n):
    B = rng.standard_normal((n, int(rng.integers(1, n + 1))))
    K = rng.standard_normal((n, n))
    return B @ B.T + rng.uniform(0, 1) * (K - K.T)


def _copositive(rng, n):
    M = rng.uniform(0, 1, (n, n)) * (rng.uniform(size=(n, n)) < 0.5)
    M[np.diag_indices(n)] = rng.uniform(0.1, 2.0, n)
    return M


def _degenerate(rng, n):
    B = rng.integers(-2, 3, (n, int(rng.integers(1, 10)))).astype(float)
    return B @ B.T


LCP_CLASSES = {
    "P": "positive definite (SPD, condition up to 1e6, plus a skew part): a P-matrix",
    "PSD": "low-rank positive semidefinite plus a skew part: monotone, copositive-plus",
    "copositive": "nonnegative with a positive diagonal: strictly copositive",
    "degenerate": "integer B B^T of low rank with an integer planted solution: many ratio ties",
    "frictional": "Stewart-Trinkle LCP of a random spatial scene (non-monotone, always solvable)",
}


def lcp_problem(kind, n, seed=None):
    """A solvable LCP(M, q) of class ``kind`` (see LCP_CLASSES) and size about n, built around a
    planted solution (the frictional class is solvable by Stewart and Trinkle's theorem)."""
    kind = val.choice("kind", kind, tuple(LCP_CLASSES))
    n = _size("n", n, 1, lambda k: 64 * k, "for an n x n matrix and its factors")
    rng = _rng(seed)
    if kind == "frictional":
        return stewart_trinkle_lcp(int(1 + n // 12), max(1, n // 6), seed=rng, n_d=(2, 4))
    make = {"P": _p_matrix, "PSD": _psd, "copositive": _copositive, "degenerate": _degenerate}[kind]
    M = make(rng, n)
    return M, _planted_q(rng, M, integer=kind == "degenerate")


def infeasible_lcp(n, seed=None):
    """An infeasible monotone LCP: M = B B^T with B^T y = 0 for some y >= 0, and q^T y < 0, so
    that y proves infeasibility (Farkas)."""
    n = _size("n", n, 2, lambda k: 32 * k, "for an n x n matrix")
    rng = _rng(seed)
    y = np.where(rng.uniform(size=n) < 0.5, rng.uniform(0, 1, n), 0.0)
    y[rng.integers(n)] = 1.0
    B = rng.standard_normal((n, int(rng.integers(1, n))))
    B -= np.outer(y, y @ B) / (y @ y)
    q = rng.standard_normal(n)
    q -= y * (q @ y + rng.uniform(0.1, 1.0)) / (y @ y)
    return B @ B.T, q


def scaled_lcp(M, q, how, seed=None):
    """LCP(M, q) rescaled without changing its solutions (up to the column scaling of z):
    "diagonal" (rows and columns by 1e-8..1e8), "symmetric" (D M D, D q: keeps PSD and
    copositivity), "global" (both by one factor 1e-12..1e12) or "none"."""
    how = val.choice("how", how, ("none", "diagonal", "symmetric", "global"))
    M, q = _lcp_arrays(M, q)
    rng = _rng(seed)
    n = len(q)
    if how == "diagonal":
        r, c = 10 ** rng.uniform(-8, 8, n), 10 ** rng.uniform(-8, 8, n)
        return r[:, None] * M * c[None, :], r * q
    if how == "symmetric":
        d = 10 ** rng.uniform(-8, 8, n)
        return d[:, None] * M * d[None, :], d * q
    if how == "global":
        a = 10 ** rng.uniform(-12, 12)
        return a * M, a * q
    return M, q


def spread_lcp(n, seed=None, rows=10, values=12):
    """A P-matrix LCP whose rows, columns and planted solution span many orders of magnitude: an
    SPD matrix (condition up to 1e4) with rows and columns scaled by 10^(-rows..rows), and a
    planted z, w with entries 10^(-values..values) (half of them zero). One solution."""
    n = _size("n", n, 1, lambda k: 32 * k, "for an n x n matrix")
    rows, values = val.integer("rows", rows, 0, 300), val.integer("values", values, 0, 300)
    rng = _rng(seed)
    M = random_spd(n, rng, cond=10 ** rng.uniform(0, 4))
    r, c = 10 ** rng.uniform(-rows, rows, n), 10 ** rng.uniform(-rows, rows, n)
    M = r[:, None] * M * c[None, :]
    z = np.where(rng.uniform(size=n) < 0.5, 10 ** rng.uniform(-values, values, n), 0.0)
    w = np.where(z == 0, np.where(rng.uniform(size=n) < 0.5, 10 ** rng.uniform(-values, values, n), 0.0), 0.0)
    return M, w - M @ z


def basic_solutions(F, f, tol=1e-10):
    """Every complementary basic solution of a small LCP(F, f) by enumeration of the 2^n choices of
    basic z (F_SS z_S = -f_S, z = 0 elsewhere), kept when z >= -tol and F z + f >= -tol: a check of
    uniqueness, or the list of solutions, for teaching (exponential in n)."""
    F, f = _lcp_arrays(F, f, names=("F", "f"))
    tol = val.nonnegative_scalar("tol", tol)
    if len(f) > BASIC_SOLUTIONS_MAX:
        raise ValueError(f"F of size n = {len(f)} has 2^n = {2.0 ** len(f):.3g} bases to enumerate: basic_solutions "
                         f"is for small teaching problems (n <= {BASIC_SOLUTIONS_MAX})")
    return _basic_solutions(F, f, tol)


BASIC_SOLUTIONS_MAX = 20  # 2^20 small solves: an enumeration that still ends while one waits


def _basic_solutions(F, f, tol):
    import itertools

    n = len(f)
    for mask in itertools.product([False, True], repeat=n):
        S = np.flatnonzero(mask)
        z = np.zeros(n)
        if S.size:
            try:
                z[S] = np.linalg.solve(F[np.ix_(S, S)], -f[S])
            except np.linalg.LinAlgError:
                continue
        if np.all(np.isfinite(z)) and z.min() >= -tol and (F @ z + f).min() >= -tol:  # an overflowed z solves nothing
            yield np.maximum(z, 0.0)
