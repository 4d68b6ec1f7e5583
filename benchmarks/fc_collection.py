"""Local friction-contact problems for the Coulomb benchmarks: the FCLib and Siconos files at hand, and
collections built here (granular piles from mbdcp.testing, the settled 150-sphere pile of tests/data).

Every problem is a :class:`mbdcp.io.LocalProblem` (global ones reduced to W = H^T M^-1 H; the
rolling-friction one has no local Coulomb problem and is left out). The built collections:

- ``pile-*``: :func:`mbdcp.testing.granular_pile` as generated (random velocities and gaps: many
  contacts open), mu 0.1 to 1.0;
- ``rest-*``: the same piles at rest on closed contacts (v = 0, gaps 0) under gravity, mu 0.7 to 1.0:
  three to five contacts per body, so W is rank-deficient (hyperstatic) and Gauss-Seidel stalls;
- ``push-*``: closed contacts driven by random velocities pressing into the pile, mu 0.7 to 1.0;
- ``nearsing-*``: a ``rest`` pile with W + 1e-10 max|W| I (near-singular instead of singular);
- ``settled150*``: the contact problem of a settled pile of 150 spheres (350 contacts), with its own
  friction coefficients and with mu = 0.8.
"""
import glob
import os
import warnings

import numpy as np
import scipy.sparse as sp

from mbdcp import io, testing

HERE = os.path.dirname(os.path.abspath(__file__))


def shared_problems(data=None):
    """[(name, LocalProblem)] of the FCLib (.hdf5) and Siconos (FrictionContact/*.dat) files under data
    (default: the project's shared data, else tests/data)."""
    if data is None:
        data = os.path.join(HERE, "..", "..", "shared", "data")
        if not os.path.isdir(data):
            data = os.path.join(HERE, "..", "tests", "data")
    out = []
    for path in sorted(glob.glob(os.path.join(data, "fclib", "*.hdf5"))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Capsules' asymmetric W, one-triangle M
            p = io.read_fclib(path).problem
        if isinstance(p, io.GlobalProblem):
            if p.mu_r is not None:
                continue
            p = p.to_local()
        out.append((os.path.basename(path).split("-i")[0].replace(".hdf5", "")[:24], p))
    for path in sorted(glob.glob(os.path.join(data, "siconos", "FrictionContact", "*.dat"))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = io.read_siconos_fc(path)
        if isinstance(p, io.GlobalProblem):
            p = p.to_local()
        out.append((os.path.basename(path)[:-4][:24], p))
    return out


def local_problem(M, Wn, Wt, mu, v, h, p_ext, phi):
    """The local problem u = W r + q of one time step: H = [normal, t1, t2 per contact], W = H^T M^-1 H,
    q = H^T (v + M^-1 p_ext) with the gap phi / h on each normal."""
    n_c = Wn.shape[1]
    H = sp.hstack([sp.csc_matrix(Wn), sp.csc_matrix(Wt)]).tocsc()
    order = np.empty(3 * n_c, dtype=int)
    order[0::3] = np.arange(n_c)
    order[1::3] = n_c + 2 * np.arange(n_c)
    order[2::3] = n_c + 2 * np.arange(n_c) + 1
    H = H[:, order]
    Minv = sp.csc_matrix(np.linalg.inv(M.toarray() if sp.issparse(M) else M))
    W = (H.T @ Minv @ H).tocsr()
    W.eliminate_zeros()
    q = H.T @ (v + Minv @ p_ext)
    q[0::3] += phi / h
    return io.LocalProblem(W, q, np.asarray(mu, float), 3)


def _pile(n_b, n_c, pairs, mu, seed, kind):
    g = testing.granular_pile(n_b, n_c, seed=seed, mu=mu, pairs=pairs)
    v, phi = g["v"], g["psi_n"]  # the gap
    if kind != "pile":
        rng = np.random.default_rng(seed)
        phi = 0.0 * phi
        v = np.zeros_like(v) if kind in ("rest", "nearsing") else 0.3 * rng.standard_normal(len(v))
        if kind == "push":
            v[2::6] = -np.abs(v[2::6])
    p = local_problem(g["M"], g["Wn"], g["Wt"], g["mu"], v, g["h"], g["p_ext"], phi)
    if kind == "nearsing":
        W = p.W + 1e-10 * abs(p.W).max() * sp.eye(p.W.shape[0], format="csr")
        p = io.LocalProblem(W.tocsr(), p.q, p.mu, 3)
    return f"{kind}-{pairs[:4]}-{n_b}-{n_c}", p


def settled150(mu=None):
    """The settled 150-sphere pile's contact problem (tests/data/settled150_ccp.npz), mu as recorded or
    the value given."""
    d = np.load(os.path.join(HERE, "..", "tests", "data", "settled150_ccp.npz"))
    M = sp.block_diag(list(d["M_blocks"])).tocsc()
    Wn = sp.csc_matrix((d["Wn_data"], d["Wn_indices"], d["Wn_indptr"]), shape=tuple(d["Wn_shape"]))
    Wt = sp.csc_matrix((d["Wt_data"], d["Wt_indices"], d["Wt_indptr"]), shape=tuple(d["Wt_shape"]))
    mus = d["mu"] if mu is None else np.full(len(d["mu"]), float(mu))
    return local_problem(M, Wn, Wt, mus, d["v"], float(d["h"]), d["p_ext"], d["phi"])


PILES = [  # (bodies, contacts, pairs, mu range, seed, kind)
    (40, 60, "neighbours", (0.7, 1.0), 1, "pile"), (80, 200, "random", (0.7, 1.0), 3, "pile"),
    (150, 450, "random", (0.3, 0.9), 5, "pile"), (300, 600, "neighbours", (0.7, 1.0), 6, "pile"),
    (40, 120, "neighbours", (0.7, 1.0), 11, "rest"), (80, 300, "random", (0.7, 1.0), 12, "rest"),
    (200, 900, "neighbours", (0.7, 1.0), 15, "rest"), (150, 450, "neighbours", (0.8, 1.0), 13, "push"),
    (100, 400, "random", (0.7, 0.9), 14, "push"), (60, 200, "neighbours", (0.7, 1.0), 16, "nearsing"),
]


def built_problems():
    """[(name, LocalProblem)] of the collections described in the module docstring."""
    out = [_pile(*args) for args in PILES]
    out.append(("settled150", settled150()))
    out.append(("settled150-mu0.8", settled150(0.8)))
    return out
