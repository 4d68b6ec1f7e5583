"""Random problems for tests, benchmarks and experiments.

Each generator takes a ``numpy.random.Generator`` (or a seed) so that results
are reproducible.
"""
from dataclasses import dataclass

import numpy as np

from mbdcp.step import friction_basis

__all__ = ["random_spd", "lcp_with_solution", "Scene", "random_scene", "stewart_trinkle_lcp"]


def _rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def random_spd(n, seed=None, cond=100.0):
    """A random symmetric positive definite n x n matrix with condition number ``cond``."""
    rng = _rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    eig = np.geomspace(1.0, cond, n) if n > 1 else np.ones(1)
    A = (Q * eig) @ Q.T
    return 0.5 * (A + A.T)


def lcp_with_solution(M, seed=None, frac_active=0.5):
    """q and the solution (z, w) of LCP(M, q) built around a chosen point:
    pick r, z = max(r, 0), w = max(-r, 0), q = w - M z."""
    rng = _rng(seed)
    n = M.shape[0]
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

    def args(self):
        return (self.M, self.Wn, self.D, self.E, self.U, self.v, self.h)

    def kwargs(self):
        return {"p_ext": self.p_ext, "psi_n": self.psi_n}


def _skew_cross(r, n):
    return np.cross(r, n)


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
    n_v = 6 * n_bodies
    M = np.zeros((n_v, n_v))
    for b in range(n_bodies):
        m = rng.uniform(0.5, 2.0)
        M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = m * np.eye(3)
        M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = random_spd(3, rng, cond=5.0) * m * 0.4
    Wn = np.zeros((n_v, n_contacts))
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
        lo, hi = n_d
        nd = int(rng.integers(lo // 2, hi // 2 + 1)) * 2
        dirs = friction_basis(normal, nd)
        for vec, col in [(normal, None)] + [(dirs[:, k], k) for k in range(nd)]:
            g = np.zeros(n_v)
            g[6 * a:6 * a + 3] = vec
            g[6 * a + 3:6 * a + 6] = _skew_cross(ra, vec)
            if b is not None:
                g[6 * b:6 * b + 3] = -vec
                g[6 * b + 3:6 * b + 6] = -_skew_cross(rb, vec)
            if col is None:
                Wn[:, c] = g
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
    return Scene(M, Wn, D, E, np.array(mus), v, h, p_ext, psi_n)


def stewart_trinkle_lcp(n_bodies, n_contacts, seed=None, **kw):
    """The reduced LCP (F, f) of one step of :func:`random_scene`."""
    import mbdcp

    s = random_scene(n_bodies, n_contacts, seed, **kw)
    res = mbdcp.step(*s.args(), **s.kwargs(), return_lcp=True)
    return res.lcp.F, res.lcp.f
