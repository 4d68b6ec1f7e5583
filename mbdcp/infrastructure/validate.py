"""Input validation shared by the public functions: every message names the argument, says what
was expected and what came, and never passes on NumPy's, SciPy's or the C core's own words. The
mechanics layer's field checks (mbdcp.mechanics.checks) are built on these."""
import numbers
import os

import numpy as np
import scipy.sparse as sp

from mbdcp.infrastructure import _core

__all__ = ["SYMMETRY_RTOL", "OPPOSITE_RTOL", "as_array", "matrix", "vector", "real_scalar", "nonnegative_scalar", "positive_scalar",
           "scalar_in", "threshold", "positive_int", "integer", "choice", "flag", "callable_", "axes", "path", "unit_vector",
           "memory_bytes", "step_count", "fits_in_memory", "sparse_matrix", "mass_matrix", "symmetric", "grouping",
           "lemke_settings", "describe"]

# Tolerances of the data checks, defined once in the C core (which checks M's symmetry too, and
# tells opposite directions apart in the step's derivative: step_vjp.h).
SYMMETRY_RTOL = _core.SYMMETRY_RTOL  # max |A - A^T| over max |A| of a matrix taken as symmetric (M, W)
OPPOSITE_RTOL = _core.DEFAULTS["step_vjp"]["opposite_rtol"]  # |d_a + d_b| over max |D| of two friction directions taken as opposite

_EMPTY = np.zeros(0)
_EMPTY.setflags(write=False)
_F64 = np.dtype(np.float64)
_INT32_MAX = 2 ** 31 - 1  # the C core counts in 32-bit integers


def describe(x):
    """A short phrase for what was passed, for messages: "None", "a str ('abc')", "a Decimal"..."""
    if x is None:
        return "None"
    if isinstance(x, (bool, np.bool_)):
        return f"a boolean ({bool(x)})"
    if isinstance(x, (str, bytes)):
        text = repr(x if len(x) <= 20 else x[:17] + type(x)("..."))
        return f"a {type(x).__name__} ({text})"
    if isinstance(x, np.ndarray):
        return f"an array of dtype {x.dtype} and shape {x.shape}"
    if sp.issparse(x):
        return f"a scipy.sparse matrix of dtype {x.dtype} and shape {x.shape}"
    if isinstance(x, numbers.Number):
        return f"a {type(x).__name__} ({x!r})" if len(repr(x)) <= 24 else f"a {type(x).__name__}"
    return f"a {type(x).__name__}"


def as_array(name, x, ndim=None, finite=True):
    """``x`` as an aligned, native-byte-order, C-contiguous float64 array of finite values (a copy
    only when needed). The one converter of every array argument: real numbers only (integers and
    floats of any width and byte order, nested sequences of Python reals, np.matrix, scipy.sparse
    matrices small enough to be dense); TypeError for anything else (booleans, complex, dates,
    strings, objects), ValueError for ragged nesting, values beyond float64, NaN or infinity, or
    the wrong number of dimensions (``finite=False``: infinity passes, NaN does not; ``None``: not
    checked here, for a C loop that checks each instance itself). Messages name the argument."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.flags.c_contiguous and x.flags.aligned:
        a = x  # the common case: nothing to check but shape and finiteness
    else:
        a = _real_array(name, x)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if finite and not _core.all_finite(a):
        raise ValueError(f"{name} must hold finite values (found NaN or infinity)")
    if finite is False and np.isnan(a).any():
        raise ValueError(f"{name} must hold numbers (found NaN)")
    return a


def _shape_text(shape, symbols):
    want = "(" + ", ".join("any" if d is None else str(d) for d in shape) + ")"
    return f"({', '.join(symbols)}) = {want}" if symbols else want


def sparse_matrix(name, A, shape=(None, None), symbols=None, fmt=None, where=None):
    """A scipy.sparse matrix checked: its declared shape against ``shape`` (None: any) and its
    storage against memory before anything is allocated, real values (complex refused, not
    truncated), finite stored values. Returned as a canonical float64 copy in ``fmt`` ("csc",
    "csr"; None: CSR when given CSR, else CSC), duplicates summed. ``where`` as for :func:`matrix`."""
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got shape {A.shape}")
    if any(want is not None and got != want for got, want in zip(A.shape, shape)):
        raise _shape_error(name, _shape_text(shape, symbols), A.shape, [s for s, d in zip(symbols or (), shape)
                                                                        if d is not None], where)
    if A.dtype.kind not in "iuf":
        what = "complex" if A.dtype.kind == "c" else f"of dtype {A.dtype}"
        raise TypeError(f"{name} must hold real numbers, got a {what} scipy.sparse matrix")
    fits_in_memory(name, f"a sparse {A.shape[0]} x {A.shape[1]} matrix", 8 * (max(A.shape) + 2) + 24 * A.nnz,
                   "for its compressed storage")
    fmt = fmt or ("csr" if A.format == "csr" else "csc")
    A = (A.tocsr(copy=True) if fmt == "csr" else A.tocsc(copy=True)).astype(np.float64, copy=False)
    A.sum_duplicates()
    if not _core.all_finite(np.ascontiguousarray(A.data, dtype=np.float64)):
        raise ValueError(f"{name} must hold finite values (found NaN or infinity)")
    return A


def _dense_of_sparse(name, x):
    """A scipy.sparse argument where a dense array is taken: its values checked, its dense size
    checked against memory before anything is allocated."""
    if x.dtype.kind not in "iuf":
        what = "complex" if x.dtype.kind == "c" else f"of dtype {x.dtype}"
        raise TypeError(f"{name} must hold real numbers, got a {what} scipy.sparse matrix")
    fits_in_memory(name, f"a sparse {x.shape[0]} x {x.shape[1]} matrix", 8 * x.shape[0] * x.shape[1],
                   "as the dense array this function takes")
    return x.toarray()


def _real_array(name, x):
    if x is None:
        raise TypeError(f"{name} is required, got None")
    if isinstance(x, (str, bytes, dict, set, frozenset)) or callable(x):
        raise TypeError(f"{name} must be an array of real numbers, got {describe(x)}")
    if sp.issparse(x):
        x = _dense_of_sparse(name, x)
    if isinstance(x, np.ndarray):
        a = x if type(x) is np.ndarray else x.view(np.ndarray)  # np.matrix and other subclasses: plain arrays
    else:
        try:
            a = np.asarray(x)
        except (ValueError, TypeError):
            raise ValueError(f"{name} must be a rectangular array of real numbers, got a ragged nesting "
                             "(sequences of different lengths)") from None
        except (MemoryError, OverflowError):
            raise ValueError(f"{name} is too large to convert to an array ({describe(x)})") from None
        if type(a) is not np.ndarray:
            a = a.view(np.ndarray)
    kind = a.dtype.kind
    if kind == "O":
        return _object_array(name, a)
    if kind == "b":
        raise TypeError(f"{name} must hold real numbers, got a boolean array")
    if kind == "c":
        raise TypeError(f"{name} must be real, got a complex array (pass its real part explicitly if that is meant)")
    if kind in "USa":
        raise TypeError(f"{name} must hold real numbers, got strings")
    if kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got {describe(a)}")
    # native byte order, aligned, C-contiguous float64 (np.require copies only what it must)
    return np.require(a, dtype=np.float64, requirements=["C", "A"])


def _object_array(name, a):
    """An object array of real numbers (Python ints beyond int64, Fractions...) as float64."""
    for item in a.flat:
        if isinstance(item, (list, tuple, np.ndarray)):
            raise ValueError(f"{name} must be a rectangular array of real numbers, got a ragged nesting "
                             "(sequences of different lengths)")
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real):
            raise TypeError(f"{name} must be an array of real numbers, found {describe(item)} in it")
    try:
        return np.ascontiguousarray(a, dtype=np.float64)
    except OverflowError:
        raise ValueError(f"{name} holds a number beyond the float64 range") from None


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
        want = _shape_text(shape, symbols)
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


def _number(name, x, what):
    """x as a float when it is a real number (a Python or NumPy real, a 0-d array of one);
    TypeError naming ``name`` otherwise (booleans, complex, Decimal, strings, sequences...)."""
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be {what}, got {describe(x)}")
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{name} must be {what}, got a number beyond the float64 range") from None


def positive_scalar(name, x):
    """A finite real number > 0, as a float."""
    if type(x) is float and 0.0 < x < np.inf:
        return x
    x = _number(name, x, "a positive real number")
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be positive and finite, got {x}")
    return x


def real_scalar(name, x):
    """A finite real number, as a float (TypeError for anything else, ValueError if not finite)."""
    x = _number(name, x, "a real number")
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def nonnegative_scalar(name, x):
    """A finite real number >= 0, as a float."""
    x = _number(name, x, "a nonnegative real number")
    if not (np.isfinite(x) and x >= 0):
        raise ValueError(f"{name} must be nonnegative and finite, got {x}")
    return x


def threshold(name, x):
    """A real number >= 0 where infinity turns a check off, as a float (NaN refused)."""
    x = _number(name, x, "a nonnegative real number (or infinity)")
    if not x >= 0:
        raise ValueError(f"{name} must be nonnegative (infinity turns the check off), got {x}")
    return x


def scalar_in(name, x, low, high, low_open=False, high_open=False):
    """A finite real number in the interval from low to high (each end open or closed), as a float."""
    x = _number(name, x, "a real number")
    above = x > low if low_open else x >= low
    below = x < high if high_open else x <= high
    if not (np.isfinite(x) and above and below):
        raise ValueError(f"{name} must be in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}, "
                         f"got {x}")
    return x


def integer(name, x, low=None, high=None, allow_none=False):
    """An integer (not a boolean, not a float) in [low, high] (None: unbounded), as an int; None
    passes when ``allow_none``."""
    if x is None and allow_none:
        return None
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu":
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {describe(x)}")
    x = int(x)
    if low is not None and high is not None and high - low <= 3 and not low <= x <= high:  # a few values: list them
        *rest, last = map(str, range(low, high + 1))
        raise ValueError(f"{name} must be {', '.join(rest)} or {last}, got {x}")
    if low is not None and x < low:
        raise ValueError(f"{name} must be at least {low}, got {x}")
    if high is not None and x > high:
        raise ValueError(f"{name} must be at most {high}, got {x}")
    return x


def positive_int(name, x, allow_none=True):
    """An integer in [1, 2**31 - 1] (the C core counts in 32-bit integers); None passes when
    ``allow_none``."""
    if x is not None and not isinstance(x, (bool, np.bool_)) and isinstance(x, numbers.Integral) and x > _INT32_MAX:
        raise ValueError(f"{name} must be at most 2**31 - 1, got {x}")
    return integer(name, x, 1, _INT32_MAX, allow_none)


def choice(name, x, choices, allow_none=False):
    """One of the strings ``choices``; None passes when ``allow_none``."""
    if x is None and allow_none:
        return None
    listed = ", ".join(repr(c) for c in choices)
    if not isinstance(x, str):
        raise TypeError(f"{name} must be one of {listed}, got {describe(x)}")
    if x not in choices:
        raise ValueError(f"{name} must be one of {listed}, got {x!r}")
    return str(x)


def flag(name, x):
    """True or False (also NumPy booleans, and the integers 0 and 1), as a bool: a string such as
    "no" is refused rather than read as True."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, numbers.Integral) and x in (0, 1):
        return bool(x)
    raise TypeError(f"{name} must be True or False, got {describe(x)}")


def path(name, x):
    """A file path (str, bytes or os.PathLike) as os.fspath gives it; an integer (an open file
    descriptor to open()) or anything else is a TypeError."""
    if isinstance(x, (str, bytes, os.PathLike)):
        return os.fspath(x)
    raise TypeError(f"{name} must be a file path (str or os.PathLike), got {describe(x)}")


def axes(name, ax):
    """A matplotlib Axes (anything with plot and set_xlabel), or None for a new figure."""
    if ax is not None and not (hasattr(ax, "plot") and hasattr(ax, "set_xlabel")):
        raise TypeError(f"{name} must be a matplotlib Axes or None (a new figure), got {describe(ax)}")
    return ax


def callable_(name, x):
    if not callable(x):
        raise TypeError(f"{name} must be callable, got {describe(x)}")
    return x


def unit_vector(name, x, n):
    """``x / ||x||`` for a finite nonzero n-vector, scaled first by its largest entry so that
    neither the norm of [1e300]*3 overflows nor that of a denormal vector underflows."""
    a = vector(name, x, n)
    big = float(np.abs(a).max(initial=0.0))
    if big == 0:
        raise ValueError(f"{name} must be a nonzero {n}-vector, got {a.tolist()}")
    a = a / big
    return a / np.sqrt(a @ a)


def memory_bytes():
    """The memory this process may allocate: the machine's physical memory, or less when an
    address-space limit is set."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not POSIX: no bound known
        total = 1 << 62
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            total = min(total, soft)
    except (ImportError, OSError, ValueError):
        pass
    return total


def step_count(h, T):
    """round(T / h) for positive h and T; a ValueError naming h when the count is beyond any run
    (T / h overflows, or is past 2**53: h = 5e-324)."""
    ratio = T / h
    if not ratio <= 2.0 ** 53:
        raise ValueError(f"h = {h:g} is too small for T = {T:g}: T / h = {ratio:g} steps; take a larger h")
    return int(round(ratio))


def fits_in_memory(name, value, nbytes, what="for its arrays"):
    """Raise a ValueError naming ``name`` when ``nbytes`` exceed the memory this process may
    allocate: a size declared but not held (n_d = 10**12, a 1e10 x 1e10 empty matrix) is refused
    before anything is allocated."""
    if nbytes > memory_bytes():
        raise ValueError(f"{name} = {value} needs {nbytes / 2 ** 30:.3g} GiB {what}, more than the "
                         f"{memory_bytes() / 2 ** 30:.3g} GiB this process can allocate")


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
        tol = scalar_in("tol", tol, 0.0, 1.0, low_open=True, high_open=True)
    return max_iter or 0, tol or 0.0
