"""Input validation shared by the public functions: every message names the argument."""
import numbers

import numpy as np

from mbdcp.infrastructure import _core

__all__ = ["SYMMETRY_RTOL", "OPPOSITE_RTOL", "as_array", "matrix", "vector", "real_scalar", "nonnegative_scalar", "positive_scalar", "positive_int",
           "mass_matrix", "symmetric", "grouping", "lemke_settings"]

# Tolerances of the data checks, defined once (the symmetry one in the C core, which checks M too).
SYMMETRY_RTOL = _core.SYMMETRY_RTOL  # max |A - A^T| over max |A| of a matrix taken as symmetric (M, W)
OPPOSITE_RTOL = 1e-12  # |d_a + d_b| over max |D| of two friction directions taken as opposite

_EMPTY = np.zeros(0)
_EMPTY.setflags(write=False)
_F64 = np.dtype(np.float64)


def as_array(name, x, ndim=None):
    """``x`` as an aligned, native-byte-order, C-contiguous float64 array of finite values (a copy
    only when needed). The one converter of every array argument: real numbers only (integers and
    floats of any width and byte order, or nested sequences of Python reals); TypeError for
    anything else (booleans, complex, dates, strings, objects), ValueError for ragged nesting,
    values beyond float64, NaN or infinity, or the wrong number of dimensions. Messages name the
    argument."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.flags.c_contiguous and x.flags.aligned:
        a = x  # the common case: nothing to check but shape and finiteness
    else:
        a = _real_array(name, x)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if not _core.all_finite(a):
        raise ValueError(f"{name} must hold finite values (found NaN or infinity)")
    return a


def _real_array(name, x):
    if x is None:
        raise TypeError(f"{name} is required, got None")
    if isinstance(x, (str, bytes, dict, set)):
        raise TypeError(f"{name} must be an array of real numbers, got {type(x).__name__}")
    if isinstance(x, np.ndarray):
        a = x
    else:
        try:
            a = np.asarray(x)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{name} must be a rectangular array of real numbers (a ragged or irregular "
                             f"nesting cannot be one: {exc})") from None
    kind = a.dtype.kind
    if kind == "O":
        for item in a.flat:  # Python ints beyond int64, Fractions, ...: real numbers kept as objects
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real):
                what = "a ragged nesting" if isinstance(item, (list, tuple, np.ndarray)) else type(item).__name__
                err = ValueError if what == "a ragged nesting" else TypeError
                raise err(f"{name} must be an array of real numbers, found {what}")
        try:
            return np.ascontiguousarray(a, dtype=np.float64)
        except OverflowError:
            raise ValueError(f"{name} holds a number beyond the float64 range") from None
    if kind == "b":
        raise TypeError(f"{name} must hold real numbers, got a boolean array")
    if kind == "c":
        raise TypeError(f"{name} must be real, got a complex array")
    if kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    # native byte order, aligned, C-contiguous float64 (np.require copies only what it must)
    return np.require(a, dtype=np.float64, requirements=["C", "A"])


# Where each dimension symbol comes from, so that a shape error names every argument involved.
_WHERE = {"n": "M is n x n", "n_v": "M is n_v x n_v", "n_c": "Wn has n_c columns", "2 n_c": "Wn has n_c columns",
          "m": "D has m columns", "n_b": "Wb has n_b columns", "m_j": "Dj has m_j columns", "n_j": "Ej has n_j columns"}


def _shape_error(name, want, got, symbols, where):
    notes = dict(_WHERE, **(where or {}))
    said = [notes[s] for s in dict.fromkeys(symbols or ()) if s in notes]
    return ValueError(f"{name} must have shape {want}, got {got}" + (f" ({'; '.join(said)})" if said else ""))


def matrix(name, x, shape, symbols=None, where=None):
    """A 2-D array of the given shape; a None entry in ``shape`` accepts any size. ``symbols``
    (e.g. ("n_v", "n_c")) name the dimensions in the message, which also says which argument
    fixed each of them (``where`` overrides the usual sources, e.g. {"n_v": "D has n_v rows"})."""
    a = as_array(name, x, 2)
    r, c = a.shape
    if (shape[0] is not None and r != shape[0]) or (shape[1] is not None and c != shape[1]):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        if symbols:
            want = f"({', '.join(symbols)}) = {want}"
        raise _shape_error(name, want, a.shape, [s for s, d in zip(symbols or (), shape) if d is not None], where)
    return a


def vector(name, x, n, optional=False, symbol=None, where=None):
    """A 1-D array of length n; None gives an empty array when optional."""
    if x is None and optional:
        return _EMPTY
    a = as_array(name, x, 1)
    if a.shape[0] != n:
        want = f"({symbol},) = ({n},)" if symbol else f"({n},)"
        raise _shape_error(name, want, a.shape, [symbol] if symbol else [], where)
    return a


def positive_scalar(name, x):
    if type(x) is float and 0.0 < x < np.inf:
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    try:
        x = float(x)
    except OverflowError:
        raise ValueError(f"{name} must be positive and finite, got a number beyond the float64 range") from None
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be positive and finite, got {x}")
    return x


def real_scalar(name, x):
    """A finite real number, as a float (TypeError for anything else, ValueError if not finite)."""
    a = as_array(name, x, 0)
    return float(a)


def nonnegative_scalar(name, x):
    """A finite real number >= 0, as a float."""
    x = real_scalar(name, x)
    if x < 0:
        raise ValueError(f"{name} must be nonnegative, got {x}")
    return x


def positive_int(name, x, allow_none=True):
    if x is None and allow_none:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if x < 1:
        raise ValueError(f"{name} must be at least 1, got {x}")
    if x > 2 ** 31 - 1:  # the C core counts in 32-bit integers
        raise ValueError(f"{name} must be at most 2**31 - 1, got {x}")
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


def symmetric(name, a, rtol=SYMMETRY_RTOL):
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


def lemke_settings(max_iter, tol):
    """(max_iter, tol) of a Lemke solve as the C core takes them: a pivot limit >= 1 (0: the
    default, 100 (n + 1)) and a verification tolerance in (0, 1) (0.0: the default)."""
    max_iter = positive_int("max_iter", max_iter)
    if tol is not None:
        tol = positive_scalar("tol", tol)
        if tol >= 1:
            raise ValueError(f"tol must be below 1 (a relative tolerance), got {tol}")
    return max_iter or 0, tol or 0.0
