"""The validated data of a time step, shared by the formulations (step, relax, batch, compare,
full_rank, instantaneous): one validation per layer, one named structure instead of positional
tuples, and the call into the C core with its argument errors named."""
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val

__all__ = ["ContactData", "StepData", "friction_coefficients", "contact_data", "step_data", "call_core",
           "solve_joints", "full_joint_impulse", "joint_friction_data", "pair_data", "warm_start_flags"]

_JOINT_RANK_TOL = 1e-10  # a pivot of the M-weighted joint Jacobian's QR below this fraction of the first: dependent


class ContactData(NamedTuple):
    """(M, Wn, D, E, mu, v) validated: C-contiguous float64, mu the diagonal of U."""

    M: np.ndarray
    Wn: np.ndarray
    D: np.ndarray
    E: np.ndarray
    mu: np.ndarray
    v: np.ndarray


class StepData(NamedTuple):
    """The arguments of the C step in its order (absent data as empty arrays): ``*data`` is the
    C call's argument list."""

    M: np.ndarray
    Wn: np.ndarray
    D: np.ndarray
    E: np.ndarray
    mu: np.ndarray
    v: np.ndarray
    h: float
    p_ext: np.ndarray
    psi_n: np.ndarray
    dpsi_n: np.ndarray
    dpsi_f: np.ndarray
    Wb: np.ndarray
    theta: np.ndarray
    dtheta: np.ndarray
    Dj: np.ndarray
    Ej: np.ndarray
    beta_max: np.ndarray

    @property
    def sizes(self):
        """(n_v, n_c, m, n_b, m_j, n_j)."""
        return (self.M.shape[0], self.Wn.shape[1], self.D.shape[1], self.Wb.shape[1], self.Dj.shape[1],
                self.Ej.shape[1])

    def relax_args(self):
        """The arguments of the C relaxations and fixed point (no moving surfaces, no joint friction)."""
        return (self.M, self.Wn, self.D, self.E, self.mu, self.v, self.h, self.p_ext, self.psi_n, self.Wb, self.theta,
                self.dtheta)


def friction_coefficients(name, U, n_c):
    """The friction coefficients mu_j (n_c,) from a scalar (all contacts), a 1-D array or a
    diagonal n_c x n_c matrix U = diag(mu_j); every mu_j >= 0. The one reader of mu for step,
    relax, full_rank, ccp and coulomb; messages name the argument (``U`` or ``mu``)."""
    a = val.as_array(name, U)
    if a.ndim == 0:
        mu = np.full(n_c, float(a))
    elif a.ndim == 1:
        mu = val.vector(name, a, n_c, symbol="n_c")
    elif a.ndim == 2:
        a = val.matrix(name, a, (n_c, n_c), ("n_c", "n_c"))
        mu = np.ascontiguousarray(np.diag(a))
        if np.count_nonzero(a - np.diag(mu)):
            raise ValueError(f"{name} must be diagonal ({name} = diag(mu_j))")
    else:
        raise ValueError(f"{name} must be a scalar, 1-D (n_c,) or 2-D (n_c, n_c), got shape {a.shape}")
    if n_c and mu.min() < 0:
        raise ValueError(f"{name} must be nonnegative (friction coefficients mu_j >= 0)")
    return mu


def contact_data(M, Wn, D, E, U, v):
    """The validated (M, Wn, D, E, mu, v) shared by the contact formulations."""
    M = val.mass_matrix("M", M)
    n_v = M.shape[0]
    Wn = val.matrix("Wn", Wn, (n_v, None), ("n_v", "n_c"))
    n_c = Wn.shape[1]
    D = val.matrix("D", D, (n_v, None), ("n_v", "m"))
    E = val.grouping("E", E, D.shape[1], n_c, ("m", "n_c"))
    return ContactData(M, Wn, D, E, friction_coefficients("U", U, n_c), val.vector("v", v, n_v, symbol="n_v"))


def pair_data(M, Wn, Wt, mu, v):
    """The validated (M, Wn, Wt, mu, v) of the formulations with a tangent pair (u_i, w_i) per
    contact in Wt's columns 2i, 2i+1 (the full-rank model)."""
    M = val.mass_matrix("M", M)
    n_v = M.shape[0]
    Wn = val.matrix("Wn", Wn, (n_v, None), ("n_v", "n_c"))
    n_c = Wn.shape[1]
    Wt = val.matrix("Wt", Wt, (n_v, 2 * n_c), ("n_v", "2 n_c"))
    return M, Wn, Wt, friction_coefficients("mu", mu, n_c), val.vector("v", v, n_v, symbol="n_v")


def step_data(M, Wn, D, E, U, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max):
    """Validated, C-contiguous float64 arrays for the C core (absent data as empty arrays)."""
    M, Wn, D, E, mu, v = contact_data(M, Wn, D, E, U, v)
    n_v, n_c, m = M.shape[0], Wn.shape[1], D.shape[1]
    h = val.positive_scalar("h", h)
    p_ext = val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v")
    psi_n = val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c")
    dpsi_n = val.vector("dpsi_n", dpsi_n, n_c, optional=True, symbol="n_c")
    dpsi_f = val.vector("dpsi_f", dpsi_f, m, optional=True, symbol="m")
    if Wb is None:
        if theta is not None or dtheta is not None:
            raise ValueError("theta and dtheta need the joint Jacobian Wb")
        Wb = np.zeros((n_v, 0))
    else:
        Wb = val.matrix("Wb", Wb, (n_v, None), ("n_v", "n_b"))
    n_b = Wb.shape[1]
    theta = val.vector("theta", theta, n_b, optional=True, symbol="n_b")
    dtheta = val.vector("dtheta", dtheta, n_b, optional=True, symbol="n_b")
    if Dj is None:
        if Ej is not None or beta_max is not None:
            raise ValueError("Ej and beta_max need the joint friction directions Dj")
        return StepData(M, Wn, D, E, mu, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta,
                        np.zeros((n_v, 0)), np.zeros((0, 0)), val._EMPTY)
    return StepData(M, Wn, D, E, mu, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta,
                    *joint_friction_data(n_v, Dj, Ej, beta_max))


def joint_friction_data(n_v, Dj, Ej, beta_max):
    """Validated (Dj, Ej, beta_max) of joint dry friction (Dj given): directions, their grouping by
    joint (every joint has one), and the bounds >= 0."""
    if Ej is None or beta_max is None:
        raise ValueError("joint friction needs Dj, Ej and beta_max together")
    Dj = val.matrix("Dj", Dj, (n_v, None), ("n_v", "m_j"))
    m_j = Dj.shape[1]
    Ej = val.grouping("Ej", Ej, m_j, None, ("m_j", "n_j"))
    n_j = Ej.shape[1]
    if m_j and np.any(Ej.sum(axis=0) == 0):
        raise ValueError("Ej must give every joint at least one friction direction")
    beta_max = val.vector("beta_max", beta_max, n_j, symbol="n_j")
    if n_j and beta_max.min() < 0:
        raise ValueError("beta_max must be nonnegative")
    return Dj, Ej, beta_max


def call_core(fn, *args, rank_deficient="Wb"):
    """Call a C wrapper, turning its argument errors into ValueErrors that name the argument
    (``rank_deficient``: the Jacobian whose Schur complement the call factors)."""
    try:
        return fn(*args)
    except _core.CoreError as exc:
        if exc.code == _core.ERR_NOT_POSDEF:
            raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)") from None
        if exc.code == _core.ERR_RANK_DEFICIENT:
            J = rank_deficient
            raise ValueError(f"{J} must have full column rank ({J}^T M^-1 {J} is singular: redundant "
                             "constraints)") from None
        raise


def independent_joints(M, Wb, theta, dtheta, h):
    """Indices of a largest set of independent joint equations, for a Wb without full column rank
    (redundant joints, e.g. a rigid loop closed twice): the velocity is then unique and the joint
    impulses are one of many distributions (the dropped equations get none). The dropped
    equations must follow from the kept ones, right-hand sides theta/h + dtheta included."""
    X = sla.solve_triangular(np.linalg.cholesky(M), Wb, lower=True)  # S = X^T X
    _, R, piv = sla.qr(X, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.count_nonzero(d > _JOINT_RANK_TOL * d[0])) if d.size and d[0] > 0 else 0
    keep, drop = np.sort(piv[:rank]), np.sort(piv[rank:])
    c = (theta / h if theta.size else 0.0) + (dtheta if dtheta.size else 0.0) + np.zeros(Wb.shape[1])
    a = np.linalg.lstsq(X[:, keep], X[:, drop], rcond=None)[0]  # X_drop = X_keep a
    mismatch = np.abs(c[drop] - a.T @ c[keep])
    if np.any(mismatch > 1e-9 * (np.abs(c[drop]) + np.abs(a.T) @ np.abs(c[keep])) + 1e-300):
        raise ValueError(f"Wb has redundant columns {drop.tolist()} whose theta/dtheta contradict the other joints: "
                         "the joint equations have no common solution")
    return keep


def solve_joints(fn, data, at, *rest):
    """fn(*data, *rest), or with the independent subset of the joint columns when Wb (data[at],
    theta and dtheta following it) lacks full column rank; returns (outputs, keep or None)."""
    try:
        return fn(*data, *rest), None
    except _core.CoreError as exc:
        if exc.code != _core.ERR_RANK_DEFICIENT:
            return call_core(fn, *data, *rest), None  # raises the named error
    M, h = data[0], data[6]
    Wb, theta, dtheta = data[at:at + 3]
    keep = independent_joints(M, Wb, theta, dtheta, h)
    sub = (np.ascontiguousarray(Wb[:, keep]), theta[keep] if theta.size else theta, dtheta[keep] if dtheta.size else dtheta)
    return call_core(fn, *data[:at], *sub, *data[at + 3:], *rest), keep


def full_joint_impulse(p_b, keep, n_b):
    if keep is None:
        return p_b
    full = np.zeros(n_b)
    full[keep] = p_b
    return full


def warm_start_flags(hint, N):
    """int32 flags of a warm-start hint for an LCP of size N: from a result with a ``basis`` or a
    boolean array; None when there is none or its size is not N."""
    if hint is None:
        return None
    basis = getattr(hint, "basis", hint)
    if basis is None:
        return None
    a = np.asarray(basis)
    if a.dtype != bool or a.ndim != 1:
        raise TypeError("warm_start must be a previous result (with a basis) or a boolean array of the LCP's size")
    return np.ascontiguousarray(a, dtype=np.intc) if a.shape[0] == N else None
