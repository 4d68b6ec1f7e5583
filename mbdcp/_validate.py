"""Input validation shared by the public functions: every message names the argument."""
import numbers

import numpy as np

from mbdcp import _core

_EMPTY = np.zeros(0)
_EMPTY.setflags(write=False)
_F64 = np.dtype(np.float64)


def as_array(name, x, ndim=None):
    """``x`` as a C-contiguous float64 array of finite values (a copy only when needed);
    TypeError if not numeric, ValueError if not finite or not ``ndim``-dimensional."""
    if type(x) is np.ndarray and (x.dtype is _F64 or x.dtype == _F64):
        a = x
    elif x is None:
        raise TypeError(f"{name} is required, got None")
    else:
        if np.iscomplexobj(x):
            raise TypeError(f"{name} must be real, got a complex array")
        try:
            a = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be convertible to a float64 array ({exc})") from None
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    if not _core.all_finite(a):
        raise ValueError(f"{name} must hold finite values (found NaN or infinity)")
    return a


def matrix(name, x, shape, symbols=None):
    """A 2-D array of the given shape; a None entry in ``shape`` accepts any size. ``symbols``
    (e.g. ("n_v", "n_c")) name the dimensions in the message."""
    a = as_array(name, x, 2)
    r, c = a.shape
    if (shape[0] is not None and r != shape[0]) or (shape[1] is not None and c != shape[1]):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        if symbols:
            want = f"({', '.join(symbols)}) = {want}"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    return a


def vector(name, x, n, optional=False, symbol=None):
    """A 1-D array of length n; None gives an empty array when optional."""
    if x is None and optional:
        return _EMPTY
    a = as_array(name, x, 1)
    if a.shape[0] != n:
        want = f"({symbol},) = ({n},)" if symbol else f"({n},)"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    return a


def positive_scalar(name, x):
    if type(x) is float and 0.0 < x < np.inf:
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    x = float(x)
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be positive and finite, got {x}")
    return x


def positive_int(name, x, allow_none=True):
    if x is None and allow_none:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if x < 1:
        raise ValueError(f"{name} must be at least 1, got {x}")
    return int(x)


def mass_matrix(name, M):
    """A non-empty, square, symmetric float64 matrix (positive definiteness is checked by the
    Cholesky factorization that every solver performs)."""
    M = as_array(name, M, 2)
    n = M.shape[0]
    if M.shape != (n, n) or n == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {M.shape}")
    symmetric(name, M)
    return M


def symmetric(name, a, rtol=1e-10):
    """Raise unless a square matrix is symmetric to rtol relative to its largest entry."""
    diff, scale = _core.asymmetry(a)
    if diff > rtol * scale:
        raise ValueError(f"{name} must be symmetric")


def grouping(name, E, n_rows, n_groups, symbols=None):
    """E (n_rows x n_groups) must have exactly one 1 per row, zeros elsewhere, and the rows
    of each group consecutive and in group order. Returns E as an array."""
    E = matrix(name, E, (n_rows, n_groups), symbols)
    err = _core.grouping_error(E)
    if err == 1:
        raise ValueError(f"{name} must have exactly one 1 in each row and zeros elsewhere")
    if err == 2:
        raise ValueError(f"{name} must group each contact's directions in consecutive rows, in contact order")
    return E
