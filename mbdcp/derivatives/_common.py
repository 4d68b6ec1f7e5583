"""Shared pieces of the derivative objects: a readable repr and argument checks for tangents."""
import math

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val

# the default tolerance below which a complementary pair counts as both zero (the C core's, step_vjp.h:
# one definition for every derivative and the three rules of the step's)
DEGENERATE_TOL = _core.DEFAULTS["step_vjp"]["degenerate_tol"]
# a step's inputs whose change can break the dependence of active rows dropped as dependent (the
# gaps and the constraint directions; M, mu, v, p_ext and h keep it): see
# StepDerivative.dependent_contacts
GEOMETRY = frozenset(("psi_n", "dpsi_n", "dpsi_f", "Wn", "D", "Wb", "theta", "dtheta", "Dj"))
_NO_TANGENT = ("E", "Ej")  # combinatorial inputs: which direction belongs to which contact or joint


class _Repr:
    """repr listing the public fields (factorizations and work arrays start with an underscore)."""

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name in self.__dataclass_fields__:
            if name.startswith("_"):
                continue
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                value = np.array2string(value, precision=6, threshold=12, edgeitems=3, suppress_small=True)
            lines.append(f"    {name}={value},")
        lines.append(")")
        return "\n".join(lines)


def check_keys(given, allowed, what):
    """Raise unless every key names an input (E and Ej get their own message)."""
    for key in given:
        if key in _NO_TANGENT:
            raise ValueError(f"{key} has no {what}: it only groups directions by contact (combinatorial data)")
        if key not in allowed:
            raise TypeError(f"unknown {what} {key!r}; expected one of {', '.join(allowed)}")


def finite_result(out, given):
    """``out`` (a dict of arrays or floats, or an array), or a ValueError naming the arguments in
    ``given`` when the finite data they hold gave an infinite or NaN result: a derivative is linear,
    so tangents or output gradients near the largest float64 overflow it."""
    values = out.values() if isinstance(out, dict) else [out]
    if all(_finite(x) for x in values):
        return out
    names = ", ".join(given) or "the tangents"
    raise ValueError(f"{names}: the derivative overflows float64 for values this large (it is linear in them: "
                     "scale them down and the result up)")


def _finite(x):
    """True unless x (an array, a sparse matrix, a float or None) holds an infinity or a NaN."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous:
        return _core.all_finite(x)  # one C loop: NumPy's isfinite then all cost more on small arrays
    if x is None:
        return True
    if type(x) is float:
        return math.isfinite(x)
    return bool(np.all(np.isfinite(x.data if sp.issparse(x) else x)))


def dense_tangent(name, x, shape):
    """A tangent (or output gradient) of the given shape as a float64 array; None gives None."""
    if x is None:
        return None
    if type(x) is np.ndarray and x.ndim and x.shape == shape and x.dtype == np.float64:
        # the common case: only finiteness to check (and the layout: a broadcast gradient has stride 0)
        return val.as_array(name, x if x.flags.c_contiguous else np.ascontiguousarray(x))
    if sp.issparse(x):
        x = x.toarray()
    a = val.as_array(name, x)
    if a.ndim == 0 and shape == ():
        return float(a)
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    return a


def matrix_tangent(name, x, shape):
    """A tangent of a matrix input: scipy.sparse stays sparse (CSC), anything else is a dense array."""
    if x is None:
        return None
    if sp.issparse(x):
        if x.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {x.shape}")
        x = sp.csc_matrix(x, dtype=np.float64)
        if not np.all(np.isfinite(x.data)):
            raise ValueError(f"{name} must hold finite values (found NaN or infinity)")
        return x
    return dense_tangent(name, x, shape)


def mu_tangent(name, x, n_c):
    """Tangent of the friction coefficients: a scalar (same change for every contact), (n_c,) or a
    diagonal (n_c, n_c) matrix; returned as (n_c,)."""
    if x is None:
        return None
    a = val.as_array(name, x)
    if a.ndim == 0:
        return np.full(n_c, float(a))
    if a.ndim == 2 and a.shape == (n_c, n_c):
        d = np.diag(a).copy()
        if np.count_nonzero(a - np.diag(d)):
            raise ValueError(f"{name} must be diagonal (U is diag(mu))")
        return d
    if a.shape != (n_c,):
        raise ValueError(f"{name} must have shape ({n_c},), ({n_c}, {n_c}) or be a scalar, got {a.shape}")
    return a


def tangents_of(tangents, inputs, d, mu_name, sparse_names=(), gap=None):
    """Every input's tangent (None where not given), each validated against the data ``d``: the
    friction coefficients (``mu_name``) as for :func:`mu_tangent`, h as a scalar, ``sparse_names``
    as (possibly sparse) matrices, the rest dense; ``gap`` (name, Chain) turns a gap's tangent into
    that of the corrected gap the step used."""
    t = dict.fromkeys(inputs)
    for key, x in tangents.items():
        if x is None:
            continue
        if key == mu_name:
            t[key] = mu_tangent(mu_name, x, d["n_c"])
        elif key == "h":
            t[key] = float(dense_tangent("h", x, ()))
        elif key in sparse_names:
            t[key] = matrix_tangent(key, x, d[key].shape)
        else:
            t[key] = dense_tangent(key, x, d[key].shape)
    if gap is not None and gap[1] is not None:
        t[gap[0]] = gap[1].tangent(t[gap[0]], t["h"])
    return t


def momentum_change(t, d):
    """dM (v - v_next) + M dv + dp_ext: the change of the momentum balance's known side for the
    tangents ``t`` at the solution ``d`` (the impulse terms are the caller's)."""
    r_v = np.zeros(d["n_v"])
    if t["M"] is not None:
        r_v += t["M"] @ (d["v"] - d["v_next"])
    if t["v"] is not None:
        r_v += d["M"] @ t["v"]
    if t["p_ext"] is not None:
        r_v += t["p_ext"]
    return r_v


def sym_outer(a, b):
    """The gradient of <a, dM b> over symmetric dM, as a symmetric matrix: (a b^T + b a^T) / 2."""
    g = np.outer(a, b)
    return 0.5 * (g + g.T)


def owners(E, name):
    """Group index of each row of a validated grouping matrix E (one 1 per row)."""
    if E.shape[0] == 0:
        return np.zeros(0, dtype=np.intp)
    return np.argmax(E, axis=1)


def groups(E, n_g):
    """(owner of each row, has (groups with rows), first row of each group with rows, the rows of
    every group when they all have as many (else 0)) of a validated grouping matrix E with n_g
    groups, whose rows are grouped consecutively in group order."""
    own = E.nonzero()[1]  # one 1 per row, rows in order
    counts = np.bincount(own, minlength=n_g)
    has = counts > 0
    k = int(counts[0]) if n_g and (counts == counts[0]).all() else 0
    return own, has, np.searchsorted(own, np.arange(n_g))[has], k


# LAPACK directly: the scipy.linalg wrappers cost more than the factorizations of small systems
def cholesky_lower(M):
    """Lower Cholesky factor of M, or None if M is not positive definite."""
    L, info = lapack.dpotrf(M, lower=1, clean=1)
    return L if info == 0 else None


def tri_solve(L, b, trans=0):
    """L^-1 b (trans=0) or L^-T b (trans=1) for a lower triangular L; b 1-D or 2-D."""
    if b.size == 0:
        return np.zeros(b.shape)
    x, info = lapack.dtrtrs(L, b, lower=1, trans=trans)
    if info != 0:
        raise np.linalg.LinAlgError("singular triangular factor")
    return x


def lu_factor(K):
    """(lu, piv, reciprocal 1-norm condition number) of a square matrix."""
    lu, piv, info = lapack.dgetrf(K)
    if info > 0:
        return lu, piv, 0.0
    rcond, _ = lapack.dgecon(lu, np.abs(K).sum(axis=0).max(), norm="1")
    return lu, piv, rcond


def lu_solve(factor, b, trans=0):
    if b.size == 0:
        return np.zeros(b.shape)
    return lapack.dgetrs(factor[0], factor[1], b, trans=trans)[0]
