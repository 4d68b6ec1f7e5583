r"""Read and write friction-contact and complementarity problems in the formats of other projects.

**FCLib** (the Frictional Contact Library, HDF5 files, read and written with ``h5py``, the
``fclib`` extra). :func:`read_fclib` returns an :class:`FclibFile` with three fields:

- ``problem``: a :class:`LocalProblem` (group ``/fclib_local``): find :math:`r, u \in \mathbb{R}^m`
  with :math:`\hat u = W r + q + [\mu_\alpha \|u_{T,\alpha}\|, 0, 0]_\alpha` and
  :math:`C^*_\mu \ni \hat u \perp r \in C_\mu` per contact :math:`\alpha` (the Coulomb problem, not
  its cone relaxation); or a :class:`GlobalProblem` (``/fclib_global``): :math:`M v = H r + G\lambda + f`,
  :math:`G^T v + b = 0`, :math:`u = H^T v + w`, the same cone complementarity on :math:`(u, r)`.
  ``/fclib_global_rolling`` (rolling friction: spacedim 5 = normal, two tangents, two rolling
  components) gives a GlobalProblem whose ``mu_r`` holds the rolling coefficients.
- ``solution``: the :class:`Solution` ``(v, u, r, l)`` of ``/solution``, or None. In the files of
  the FCLib collection it is a zero placeholder, not a solution.
- ``guesses``: a tuple of Solution from ``/guesses/1``, ``/guesses/2``, ...

Sparse matrices are CSparse-style groups ``{nzmax, m, n, nz, p, i, x}``: ``nz >= 0`` triplet with
``i`` the row and ``p`` the column indices (as the files are written, although fclib.h's comment says
the reverse), ``nz = -1`` compressed columns, ``nz = -2`` compressed rows. They come back as
``scipy.sparse`` matrices: CSR when stored by rows, CSC otherwise, duplicates summed, explicit zeros
kept. A square M or W stored as one triangle only (CubeH8, LMGC_GlobalFrictionContactProblem00046:
FE mass matrices) is completed by symmetry and a :class:`SymmetryWarning` says so; a full one that
is not symmetric (Capsules' W, 1e-3 relative; Chute's M, 1.5e-6) is returned as stored, with a
SymmetryWarning. Problem information (``/…/info``: title, description, math_info and any
attributes) becomes the problem's ``info`` dict; matrix information (conditioning...) is not read.
:func:`write_fclib` writes the standard layout (the same as the FCLib C library), in each matrix's
own storage or the one asked for; reading the file back gives bitwise-equal arrays.

**Siconos numerics text files** (``.dat``). A matrix block is a storage type (0 dense, 1
sparse-block, 2 sparse), rows and cols; dense values are listed **column by column** (each printed
line of a square matrix is a column); sparse-block matrices list block-row/column boundaries,
block indices and each block's values, also column-major. Storage 2 is not supported
(:class:`FormatError`). Text after the data is a comment.

- :func:`read_siconos_lcp`: ``n``, M, q -> ``(M, q)`` (an :class:`LCPProblem`), M dense.
- :func:`read_siconos_mlcp` -> :class:`MLCPProblem` ``(A, B, C, D, a, b)``.
- :func:`read_siconos_fc`: local ``d, nc, W, q, mu`` -> LocalProblem; global (``GFC3D``)
  ``d, nc, M, H, q, b, mu`` for :math:`M v = q + H r`, :math:`u = H^T v + b` -> GlobalProblem with
  ``f = q`` and ``w = b`` (FCLib's :math:`b` belongs to equality constraints, absent here).

A malformed or truncated file raises :class:`FormatError` (a ValueError) naming the file and the
field, e.g. ``Box_Stacks.hdf5: /fclib_global/M: nz = -3 is not a known storage``.
"""
import numbers
import os
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Union

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mbdcp import _validate as val
from mbdcp.results import _repr_array

__all__ = ["FclibFile", "FormatError", "GlobalProblem", "LCPProblem", "LocalProblem", "MLCPProblem", "Solution",
           "SymmetryWarning", "read_fclib", "read_siconos_fc", "read_siconos_lcp", "read_siconos_mlcp", "write_fclib"]

# Relative asymmetry max|A - A^T| / max|A| above which a matrix the formats call symmetric is
# reported: rounding in the writers leaves about 1e-16.
SYMMETRY_RTOL = 1e-10
_INT32_MAX = np.iinfo(np.int32).max


class FormatError(ValueError):
    """A problem file is malformed or truncated; the message names the file and the field."""


class SymmetryWarning(UserWarning):
    """A matrix that should be symmetric is stored as one triangle, or is not symmetric."""


# ---------------------------------------------------------------- problem objects


def _frozen_vector(name, x, n, symbol=None, nonnegative=False):
    a = np.array(val.vector(name, x, n, symbol=symbol), dtype=np.float64, copy=True)
    if nonnegative and a.size and a.min() < 0:
        raise ValueError(f"{name} must be nonnegative, got {a.min()}")
    a.setflags(write=False)
    return a


def _sparse(name, A):
    """A canonical CSR (kept when given CSR) or CSC copy of A with finite float64 values."""
    if sp.issparse(A):
        if not (np.issubdtype(A.dtype, np.floating) or np.issubdtype(A.dtype, np.integer) or A.dtype == bool):
            raise TypeError(f"{name} must hold real numbers, got dtype {A.dtype}")
        A = A.tocsr(copy=True) if A.format == "csr" else A.tocsc(copy=True)
        A = A.astype(np.float64, copy=False)
        A.sum_duplicates()
        if not np.all(np.isfinite(A.data)):
            raise ValueError(f"{name} must hold finite values (found NaN or infinity)")
        return A
    return sp.csc_matrix(val.matrix(name, A, (None, None)))


def _spacedim(value, allowed):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"spacedim must be an integer, got {type(value).__name__}")
    if int(value) not in allowed:
        raise ValueError(f"spacedim must be one of {allowed}, got {value}")
    return int(value)


def _info(info):
    if info is None:
        return None
    if not isinstance(info, dict):
        raise TypeError(f"info must be a dict or None, got {type(info).__name__}")
    for key, value in info.items():
        if not isinstance(key, str) or not key or "/" in key:
            raise ValueError(f"info keys must be non-empty strings without '/', got {key!r}")
        if not (isinstance(value, (str, numbers.Real)) or (isinstance(value, np.ndarray) and value.dtype.kind in "biuf")):
            raise TypeError(f"info[{key!r}] must be a str, a number or a numeric ndarray, got {type(value).__name__}")
    return dict(info)


def _short(value):
    if sp.issparse(value):
        return f"<{value.shape[0]}x{value.shape[1]} {value.format.upper()}, {value.nnz} stored>"
    if isinstance(value, np.ndarray):
        return _repr_array(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_short(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple) and value:
        return f"({len(value)} x {type(value[0]).__name__})"
    return repr(value)


class _Repr:
    """A one-line-per-field repr that summarises matrices, arrays and long strings."""

    def __repr__(self):
        # nested objects and multi-line arrays are indented one level more
        fields = ",\n".join(f"    {name}={_short(getattr(self, name))}".replace("\n", "\n    ")
                            for name in self.__dataclass_fields__)
        return f"{type(self).__name__}(\n{fields},\n)"


def _set(obj, **values):
    for k, v in values.items():
        object.__setattr__(obj, k, v)


@dataclass(frozen=True, eq=False, repr=False)
class LocalProblem(_Repr):
    r"""Local (reduced) friction-contact problem FC(W, q, μ) of FCLib and Siconos.

    Find :math:`r, u \in \mathbb{R}^m`, :math:`m = d\,n_c` (``d = spacedim``, each contact's
    components ordered normal, tangent 1[, tangent 2]), with
    :math:`\hat u = W r + q + [\mu_\alpha \|u_{T,\alpha}\|, 0, 0]_\alpha` and
    :math:`C^*_{\mu_\alpha} \ni \hat u_\alpha \perp r_\alpha \in C_{\mu_\alpha}`, where
    :math:`C_\mu = \{\|r_T\| \le \mu r_N\}`.

    Attributes
    ----------
    W : scipy.sparse matrix (m, m)
        Delassus matrix, CSR when given CSR, otherwise CSC (a canonical copy).
    q : ndarray (m,)
    mu : ndarray (n_c,)
        Friction coefficients, nonnegative.
    spacedim : int
        2 or 3.
    info : dict or None
        Free-form strings and numbers (FCLib: title, description, math_info).
    """

    W: sp.spmatrix
    q: np.ndarray
    mu: np.ndarray
    spacedim: int
    info: Optional[dict] = None

    def __post_init__(self):
        d = _spacedim(self.spacedim, (2, 3))
        W = _sparse("W", self.W)
        m = W.shape[0]
        if W.shape[1] != m or m % d:
            raise ValueError(f"W must be square with a size divisible by spacedim = {d}, got shape {W.shape}")
        _set(self, W=W, spacedim=d, q=_frozen_vector("q", self.q, m, "m"),
             mu=_frozen_vector("mu", self.mu, m // d, "n_c", nonnegative=True), info=_info(self.info))

    @property
    def n_contacts(self):
        """Number of contacts n_c = m / spacedim."""
        return self.W.shape[0] // self.spacedim


@dataclass(frozen=True, eq=False, repr=False)
class GlobalProblem(_Repr):
    r"""Global friction-contact problem of FCLib (and Siconos GFC3D files).

    Find :math:`v \in \mathbb{R}^n`, :math:`r, u \in \mathbb{R}^m`, :math:`\lambda \in \mathbb{R}^p`:

    .. math::
        M v = H r + G\lambda + f,\qquad G^T v + b = 0,\qquad u = H^T v + w,

    and per contact :math:`C^*_{\mu_\alpha} \ni u_\alpha + [\mu_\alpha\|u_{T,\alpha}\|, 0, 0]
    \perp r_\alpha \in C_{\mu_\alpha}`. A Siconos global file's
    :math:`M v = q + H r,\ u = H^T v + b` maps to ``f = q``, ``w = b`` (and no G, b here).

    Attributes
    ----------
    M : scipy.sparse (n, n)
        Symmetric positive definite (CSR when given CSR, otherwise CSC).
    H : scipy.sparse (n, m)
    f : ndarray (n,)
    w : ndarray (m,)
    mu : ndarray (n_c,)
    spacedim : int
        2 or 3; with rolling friction (``mu_r`` given) 3 (2-D) or 5 (3-D).
    G : scipy.sparse (n, p) or None
    b : ndarray (p,) or None
        Given together with G.
    info : dict or None
    mu_r : ndarray (n_c,) or None
        Rolling friction coefficients (FCLib ``/fclib_global_rolling``).
    """

    M: sp.spmatrix
    H: sp.spmatrix
    f: np.ndarray
    w: np.ndarray
    mu: np.ndarray
    spacedim: int
    G: Optional[sp.spmatrix] = None
    b: Optional[np.ndarray] = None
    info: Optional[dict] = None
    mu_r: Optional[np.ndarray] = None

    def __post_init__(self):
        d = _spacedim(self.spacedim, (2, 3) if self.mu_r is None else (3, 5))
        M, H = _sparse("M", self.M), _sparse("H", self.H)
        n = M.shape[0]
        if M.shape[1] != n:
            raise ValueError(f"M must be square, got shape {M.shape}")
        m = H.shape[1]
        if H.shape[0] != n or m % d:
            raise ValueError(f"H must have shape (n, spacedim * n_c) = ({n}, multiple of {d}), got {H.shape}")
        nc = m // d
        if (self.G is None) != (self.b is None):
            raise ValueError("G and b must be given together")
        G = b = None
        if self.G is not None:
            G = _sparse("G", self.G)
            if G.shape[0] != n:
                raise ValueError(f"G must have shape (n, p) = ({n}, any), got {G.shape}")
            b = _frozen_vector("b", self.b, G.shape[1], "p")
        mu_r = None if self.mu_r is None else _frozen_vector("mu_r", self.mu_r, nc, "n_c", nonnegative=True)
        _set(self, M=M, H=H, G=G, b=b, spacedim=d, mu_r=mu_r, f=_frozen_vector("f", self.f, n, "n"),
             w=_frozen_vector("w", self.w, m, "m"), mu=_frozen_vector("mu", self.mu, nc, "n_c", nonnegative=True),
             info=_info(self.info))

    @property
    def n_contacts(self):
        """Number of contacts n_c = m / spacedim."""
        return self.H.shape[1] // self.spacedim

    def to_local(self):
        r"""The local problem of the velocities eliminated: :math:`W = H^T M^{-1} H`,
        :math:`q = H^T M^{-1} f + w` (from :math:`v = M^{-1}(H r + f)`).

        Uses a sparse LU of M and a dense n×m intermediate. Problems with equality constraints G
        or rolling friction have no LocalProblem counterpart here (ValueError).
        """
        if self.G is not None:
            raise ValueError("to_local: problems with equality constraints (G, b) are not supported")
        if self.mu_r is not None:
            raise ValueError("to_local: rolling-friction problems are not supported")
        try:
            lu = spla.splu(sp.csc_matrix(self.M))
        except RuntimeError as exc:
            raise ValueError(f"to_local: M is singular ({exc})") from None
        W = self.H.T @ lu.solve(self.H.toarray())
        q = self.H.T @ lu.solve(np.asarray(self.f)) + self.w
        return LocalProblem(sp.csr_matrix(W), q, self.mu, self.spacedim, info=self.info)


@dataclass(frozen=True, eq=False, repr=False)
class Solution(_Repr):
    """A solution or an initial guess: global velocities v, local velocities u, reactions r,
    equality multipliers l (each a read-only float64 vector, or None)."""

    v: Optional[np.ndarray] = None
    u: Optional[np.ndarray] = None
    r: Optional[np.ndarray] = None
    l: Optional[np.ndarray] = None

    def __post_init__(self):
        for name in ("v", "u", "r", "l"):
            x = getattr(self, name)
            if x is not None:
                a = np.array(val.as_array(name, x, 1), dtype=np.float64, copy=True)
                a.setflags(write=False)
                _set(self, **{name: a})


@dataclass(frozen=True, eq=False, repr=False)
class FclibFile(_Repr):
    """What an FCLib file holds: the problem, its ``/solution`` (or None) and its ``/guesses``."""

    problem: Union[LocalProblem, GlobalProblem]
    solution: Optional[Solution] = None
    guesses: tuple[Solution, ...] = field(default_factory=tuple)


class LCPProblem(NamedTuple):
    """LCP(M, q): find z >= 0 with w = M z + q >= 0, z.w = 0 (unpacks as ``M, q``)."""

    M: np.ndarray
    q: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class MLCPProblem(_Repr):
    r"""Mixed LCP: find free :math:`u \in \mathbb{R}^n` and :math:`z \in \mathbb{R}^m` with

    .. math::
        A u + C z + a = 0,\qquad 0 \le z \perp D u + B z + b \ge 0,

    i.e. :math:`M = [[A, C], [D, B]]`, :math:`q = (a, b)`, the first n rows equalities.
    A (n, n), B (m, m), C (n, m), D (m, n), a (n,), b (m,), read-only float64 arrays.
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        A = val.as_array("A", self.A, 2)
        n = A.shape[0]
        if A.shape != (n, n):
            raise ValueError(f"A must be square, got shape {A.shape}")
        B = val.as_array("B", self.B, 2)
        m = B.shape[0]
        if B.shape != (m, m):
            raise ValueError(f"B must be square, got shape {B.shape}")
        C = val.matrix("C", self.C, (n, m), ("n", "m"))
        D = val.matrix("D", self.D, (m, n), ("m", "n"))
        out = {}
        for name, x in (("A", A), ("B", B), ("C", C), ("D", D)):
            x = np.array(x, dtype=np.float64, copy=True)
            x.setflags(write=False)
            out[name] = x
        _set(self, **out, a=_frozen_vector("a", self.a, n, "n"), b=_frozen_vector("b", self.b, m, "m"))

    @property
    def n(self):
        """Number of equality rows (free unknowns)."""
        return self.A.shape[0]

    @property
    def m(self):
        """Number of complementarity rows."""
        return self.B.shape[0]

    @property
    def M(self):
        """[[A, C], [D, B]], shape (n + m, n + m)."""
        return np.block([[self.A, self.C], [self.D, self.B]])

    @property
    def q(self):
        """(a, b), shape (n + m,)."""
        return np.concatenate([self.a, self.b])


# ---------------------------------------------------------------- symmetry


def _symmetry(A, fname, field, complete=True):
    """A square matrix the format calls symmetric: complete a one-triangle storage (FCLib's
    convention for some FE matrices), warn about asymmetry."""
    C = A.tocoo()
    off = C.row != C.col
    if complete and np.any(C.data[off] != 0):
        upper, lower = np.all(C.row[off] < C.col[off]), np.all(C.row[off] > C.col[off])
        if upper or lower:
            warnings.warn(SymmetryWarning(f"{fname}: {field}: only the {'upper' if upper else 'lower'} triangle is "
                                          "stored; completed by symmetry"), stacklevel=3)
            strict = sp.triu(A, 1) if upper else sp.tril(A, -1)
            full = (A + strict.T).tocsc()
            full.sum_duplicates()
            return full if A.format == "csc" else full.tocsr()
    scale = np.abs(A.data).max(initial=0.0)
    asym = abs(A - A.T).max() if scale > 0 else 0.0
    if asym > SYMMETRY_RTOL * scale:
        warnings.warn(SymmetryWarning(f"{fname}: {field}: not symmetric, max|A - A^T| = {asym / scale:.3g} max|A|"),
                      stacklevel=3)
    return A


# ---------------------------------------------------------------- FCLib


def _h5py():
    try:
        import h5py
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("reading and writing FCLib files needs h5py: pip install mbdcp[fclib]") from None
    return h5py


class _Reader:
    """Checked access to the datasets of one open HDF5 file; errors name the file and the field."""

    def __init__(self, h5, fname):
        self.h5, self.fname = h5, fname

    def fail(self, path, msg):
        raise FormatError(f"{self.fname}: {path}: {msg}")

    def has(self, path):
        try:
            return path in self.h5
        except (OSError, RuntimeError, KeyError):
            return False

    def dataset(self, path):
        if not self.has(path):
            self.fail(path, "missing")
        try:
            obj = self.h5[path]
            if not isinstance(obj, _h5py().Dataset):
                self.fail(path, "is a group, expected a dataset")
            return obj[()]
        except FormatError:
            raise
        except (OSError, RuntimeError, KeyError, TypeError, ValueError) as exc:
            self.fail(path, f"cannot be read ({exc})")

    def integer(self, path):
        a = np.asarray(self.dataset(path))
        if not np.issubdtype(a.dtype, np.integer) or a.size != 1:
            self.fail(path, f"expected one integer, got {a.dtype} of shape {a.shape}")
        return int(a.reshape(-1)[0])

    def ints(self, path, n, exact=False):
        a = np.asarray(self.dataset(path))
        if not np.issubdtype(a.dtype, np.integer) or a.ndim != 1:
            self.fail(path, f"expected a 1-D integer array, got {a.dtype} of shape {a.shape}")
        if a.shape[0] < n or (exact and a.shape[0] != n):
            self.fail(path, f"has {a.shape[0]} entries, expected {n}")
        return a[:n]

    def floats(self, path, n, exact=True):
        a = np.asarray(self.dataset(path))
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)) or a.ndim != 1:
            self.fail(path, f"expected a 1-D float array, got {a.dtype} of shape {a.shape}")
        if a.shape[0] < n or (exact and a.shape[0] != n):
            self.fail(path, f"has {a.shape[0]} entries, expected {n}")
        a = a[:n].astype(np.float64)
        if not np.all(np.isfinite(a)):
            self.fail(path, f"non-finite value at index {int(np.flatnonzero(~np.isfinite(a))[0])}")
        return a

    def matrix(self, path):
        nzmax, m, n, nz = (self.integer(f"{path}/{k}") for k in ("nzmax", "m", "n", "nz"))
        if m < 0 or n < 0 or nzmax < 0:
            self.fail(path, f"negative size (m = {m}, n = {n}, nzmax = {nzmax})")
        if nz >= 0:
            i, p = self.ints(f"{path}/i", nz), self.ints(f"{path}/p", nz)
            x = self.floats(f"{path}/x", nz, exact=False)
            self._bounds(f"{path}/i", i, m, "row")
            self._bounds(f"{path}/p", p, n, "column")
            return sp.coo_matrix((x, (i, p)), shape=(m, n)).tocsc()
        if nz not in (-1, -2):
            self.fail(path, f"nz = {nz} is not a known storage (>= 0 triplet, -1 CSC, -2 CSR)")
        outer, inner, kind = (n, m, "row") if nz == -1 else (m, n, "column")
        p = self.ints(f"{path}/p", outer + 1, exact=True)
        if p[0] != 0 or np.any(np.diff(p) < 0):
            self.fail(f"{path}/p", "pointers must start at 0 and never decrease")
        nnz = int(p[-1])
        i = self.ints(f"{path}/i", nnz)
        x = self.floats(f"{path}/x", nnz, exact=False)
        self._bounds(f"{path}/i", i, inner, kind)
        cls = sp.csc_matrix if nz == -1 else sp.csr_matrix
        A = cls((x, i.copy(), p.copy()), shape=(m, n))
        A.sum_duplicates()
        return A

    def _bounds(self, path, idx, size, kind):
        if idx.size and (idx.min() < 0 or idx.max() >= size):
            bad = idx[(idx < 0) | (idx >= size)][0]
            self.fail(path, f"{kind} index {bad} outside [0, {size})")

    def info(self, path):
        if not self.has(path):
            return None
        out = {}
        group = self.h5[path]
        try:
            for key, obj in group.items():
                if isinstance(obj, _h5py().Dataset):
                    out[key] = _plain(self.dataset(f"{path}/{key}"))
            for key, value in group.attrs.items():
                out[key] = _plain(value)
        except (OSError, RuntimeError) as exc:
            self.fail(path, f"cannot be read ({exc})")
        return out

    def solution(self, path, sizes):
        if not self.has(path):
            return None
        values = {}
        for name, n in sizes.items():
            if self.has(f"{path}/{name}") and n:
                values[name] = self.floats(f"{path}/{name}", n)
        return Solution(**values)


def _plain(value):
    """An HDF5 info value as what a problem's info holds: str, int, float, bool or numeric ndarray."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            return value.reshape(-1)[0].item() if value.size == 1 else value
        if value.dtype.kind in "SUO":
            return "\n".join(str(_plain(v)) for v in value.reshape(-1))
    elif isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    elif isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def read_fclib(path):
    r"""Read an FCLib HDF5 file.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    FclibFile
        ``problem`` (:class:`LocalProblem` or :class:`GlobalProblem`), ``solution``
        (:class:`Solution` or None: a zero placeholder in the FCLib collection) and ``guesses``
        (tuple of Solution). See the module docstring for the layout and the conventions.

    Raises
    ------
    FormatError
        The file is not HDF5, or a field is missing, of the wrong size or type, or corrupted.
    FileNotFoundError

    Warns
    -----
    SymmetryWarning
        W or M stored as one triangle (completed by symmetry), or not symmetric.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, scipy.sparse as sp
    >>> from mbdcp.io import LocalProblem, read_fclib, write_fclib
    >>> p = LocalProblem(sp.identity(3, format="csr"), np.array([-1.0, 0.5, 0.0]), [0.3], 3)
    >>> path = os.path.join(tempfile.mkdtemp(), "one.hdf5")
    >>> write_fclib(path, p)
    >>> f = read_fclib(path)
    >>> f.problem.W.format, f.problem.n_contacts, f.problem.mu, f.solution
    ('csr', 1, array([0.3]), None)
    """
    h5py = _h5py()
    fname = os.path.basename(os.fspath(path))
    try:
        h5 = h5py.File(path, "r")
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FormatError(f"{fname}: not a readable HDF5 file ({exc})") from None
    with h5:
        try:
            return _read_fclib(_Reader(h5, fname))
        except (OSError, RuntimeError, KeyError) as exc:  # damage the field checks did not meet first
            raise FormatError(f"{fname}: unreadable ({exc})") from None


def _read_fclib(rd):
    roots = [r for r in ("fclib_local", "fclib_global", "fclib_global_rolling") if rd.has(r)]
    if len(roots) != 1:
        raise FormatError(f"{rd.fname}: expected one of /fclib_local, /fclib_global, /fclib_global_rolling, "
                          f"found {roots or list(rd.h5.keys())}")
    root = "/" + roots[0]
    problem, sizes = (_read_local if root == "/fclib_local" else _read_global)(rd, root)
    solution = rd.solution("/solution", sizes)
    guesses = ()
    if rd.has("/guesses"):
        count = rd.integer("/guesses/number_of_guesses")
        if count < 0:
            rd.fail("/guesses/number_of_guesses", f"negative count {count}")
        for k in range(1, count + 1):
            if not rd.has(f"/guesses/{k}"):
                rd.fail(f"/guesses/{k}", f"missing (number_of_guesses = {count})")
        guesses = tuple(rd.solution(f"/guesses/{k}", sizes) for k in range(1, count + 1))
    return FclibFile(problem, solution, guesses)


def _read_spacedim(rd, root, allowed):
    d = rd.integer(f"{root}/spacedim")
    if d not in allowed:
        rd.fail(f"{root}/spacedim", f"{d} is not one of {allowed}")
    return d


def _checked(rd, root, cls, **fields):
    try:
        return cls(**fields)
    except (ValueError, TypeError) as exc:  # anything the field checks above let through
        rd.fail(root, str(exc))


def _read_local(rd, root):
    for extra in ("V", "R"):
        if rd.has(f"{root}/{extra}"):
            rd.fail(f"{root}/{extra}", "local problems with equality constraints (V, R, s) are not supported")
    d = _read_spacedim(rd, root, (2, 3))
    W = rd.matrix(f"{root}/W")
    m = W.shape[0]
    if W.shape[1] != m or m % d:
        rd.fail(f"{root}/W", f"shape {W.shape} is not square with a size divisible by spacedim = {d}")
    W = _symmetry(W, rd.fname, f"{root}/W")
    q = rd.floats(f"{root}/vectors/q", m)
    mu = _read_mu(rd, f"{root}/vectors/mu", m // d)
    p = _checked(rd, root, LocalProblem, W=W, q=q, mu=mu, spacedim=d, info=rd.info(f"{root}/info"))
    return p, {"v": 0, "u": m, "r": m, "l": 0}


def _read_mu(rd, path, nc):
    mu = rd.floats(path, nc)
    if mu.size and mu.min() < 0:
        rd.fail(path, f"negative friction coefficient {mu.min()}")
    return mu


def _read_global(rd, root):
    rolling = root.endswith("rolling")
    d = _read_spacedim(rd, root, (3, 5) if rolling else (2, 3))
    M = rd.matrix(f"{root}/M")
    n = M.shape[0]
    if M.shape[1] != n:
        rd.fail(f"{root}/M", f"shape {M.shape} is not square")
    M = _symmetry(M, rd.fname, f"{root}/M")
    H = rd.matrix(f"{root}/H")
    m = H.shape[1]
    if H.shape[0] != n or m % d:
        rd.fail(f"{root}/H", f"shape {H.shape} is not (n, spacedim * n_c) with n = {n}, spacedim = {d}")
    G = b = None
    if rd.has(f"{root}/G"):
        G = rd.matrix(f"{root}/G")
        if G.shape[0] != n:
            rd.fail(f"{root}/G", f"shape {G.shape} does not have n = {n} rows")
        b = rd.floats(f"{root}/vectors/b", G.shape[1])
    fields = {"M": M, "H": H, "G": G, "b": b, "spacedim": d, "f": rd.floats(f"{root}/vectors/f", n),
              "w": rd.floats(f"{root}/vectors/w", m), "mu": _read_mu(rd, f"{root}/vectors/mu", m // d),
              "info": rd.info(f"{root}/info")}
    if rolling:
        fields["mu_r"] = _read_mu(rd, f"{root}/vectors/mu_r", m // d)
    p = _checked(rd, root, GlobalProblem, **fields)
    return p, {"v": n, "u": m, "r": m, "l": 0 if G is None else G.shape[1]}


def _write_matrix(group, A, storage):
    storage = storage or ("csr" if A.format == "csr" else "csc")
    if max(A.shape) > _INT32_MAX or A.nnz > _INT32_MAX:
        raise ValueError(f"matrix of shape {A.shape} with {A.nnz} entries does not fit FCLib's 32-bit indices")
    if storage == "triplet":
        C = A.tocoo()
        nz, p, i, x = C.nnz, C.col, C.row, C.data
    else:
        C = A.tocsc() if storage == "csc" else A.tocsr()
        nz, p, i, x = (-1 if storage == "csc" else -2), C.indptr, C.indices, C.data
    for key, value in (("nzmax", A.nnz), ("m", A.shape[0]), ("n", A.shape[1]), ("nz", nz)):
        group.create_dataset(key, data=np.array([value], dtype=np.int32))
    group.create_dataset("p", data=np.asarray(p, dtype=np.int32))
    group.create_dataset("i", data=np.asarray(i, dtype=np.int32))
    group.create_dataset("x", data=np.asarray(x, dtype=np.float64))


def _write_info(group, info):
    for key, value in info.items():
        if isinstance(value, str):
            raw = value.encode("utf-8")
            # NUL-terminated fixed-length string, as the FCLib C library writes it
            group.create_dataset(key, data=np.array(raw, dtype=f"S{len(raw) + 1}"))
        else:
            group.attrs[key] = value


def _write_solution(group, s):
    for name in ("v", "u", "r", "l"):
        x = getattr(s, name)
        if x is not None and x.size:
            group.create_dataset(name, data=x)


def _check_solution(name, s, sizes):
    if s is None:
        return
    if not isinstance(s, Solution):
        raise TypeError(f"{name} must be a Solution, got {type(s).__name__}")
    for key, n in sizes.items():
        x = getattr(s, key)
        if x is not None and x.shape[0] != n:
            raise ValueError(f"{name}.{key} must have shape ({n},) for this problem, got {x.shape}")


def write_fclib(path, problem, solution=None, guesses=None, *, storage=None):
    """Write a problem (and optionally a solution and initial guesses) as an FCLib HDF5 file.

    The file is overwritten. Layout: ``/fclib_local`` or ``/fclib_global`` (``/fclib_global_rolling``
    when ``problem.mu_r`` is set) with ``spacedim``, the sparse matrix groups, ``vectors`` and
    ``info``; ``/solution``; ``/guesses/{number_of_guesses, 1, 2, ...}``. :func:`read_fclib` gives
    back bitwise-equal arrays.

    Parameters
    ----------
    path : str or os.PathLike
    problem : LocalProblem or GlobalProblem
    solution : Solution, optional
        Vector sizes: v (n, global only), u and r (m), l (p when G is given).
    guesses : sequence of Solution, optional
    storage : {None, "csc", "csr", "triplet"}
        Sparse storage of every matrix; None keeps each matrix's own (CSR as CSR, CSC as CSC).

    Examples
    --------
    See :func:`read_fclib`.
    """
    h5py = _h5py()
    if storage not in (None, "csc", "csr", "triplet"):
        raise ValueError(f"storage must be None, 'csc', 'csr' or 'triplet', got {storage!r}")
    if isinstance(problem, LocalProblem):
        m = problem.W.shape[0]
        sizes = {"v": 0, "u": m, "r": m, "l": 0}
        root = "fclib_local"
    elif isinstance(problem, GlobalProblem):
        m = problem.H.shape[1]
        sizes = {"v": problem.M.shape[0], "u": m, "r": m, "l": 0 if problem.G is None else problem.G.shape[1]}
        root = "fclib_global" if problem.mu_r is None else "fclib_global_rolling"
    else:
        raise TypeError(f"problem must be a LocalProblem or a GlobalProblem, got {type(problem).__name__}")
    guesses = () if guesses is None else tuple(guesses)
    _check_solution("solution", solution, sizes)
    for k, g in enumerate(guesses):
        _check_solution(f"guesses[{k}]", g, sizes)
    with h5py.File(path, "w") as h5:
        g = h5.create_group(root)
        g.create_dataset("spacedim", data=np.array([problem.spacedim], dtype=np.int32))
        vec = g.create_group("vectors")
        if root == "fclib_local":
            _write_matrix(g.create_group("W"), problem.W, storage)
            vec.create_dataset("q", data=problem.q)
        else:
            _write_matrix(g.create_group("M"), problem.M, storage)
            _write_matrix(g.create_group("H"), problem.H, storage)
            vec.create_dataset("f", data=problem.f)
            vec.create_dataset("w", data=problem.w)
            if problem.G is not None:
                _write_matrix(g.create_group("G"), problem.G, storage)
                vec.create_dataset("b", data=problem.b)
            if problem.mu_r is not None:
                vec.create_dataset("mu_r", data=problem.mu_r)
        vec.create_dataset("mu", data=problem.mu)
        if problem.info is not None:
            _write_info(g.create_group("info"), problem.info)
        if solution is not None:
            _write_solution(h5.create_group("solution"), solution)
        if guesses:
            gg = h5.create_group("guesses")
            gg.create_dataset("number_of_guesses", data=np.array([len(guesses)], dtype=np.int32))
            for k, s in enumerate(guesses, 1):
                _write_solution(gg.create_group(str(k)), s)


# ---------------------------------------------------------------- Siconos text files


class _Tokens:
    """Whitespace-separated tokens of a text file, consumed in order; errors name file and field."""

    def __init__(self, path):
        self.fname = os.path.basename(os.fspath(path))
        with open(path, "rb") as fh:
            self.toks = fh.read().decode("latin-1").split()
        self.pos = 0

    def fail(self, fieldname, msg):
        raise FormatError(f"{self.fname}: {fieldname}: {msg}")

    def _take(self, count, fieldname, what):
        if count < 0:
            self.fail(fieldname, f"negative count {count}")
        toks = self.toks[self.pos:self.pos + count]
        if len(toks) < count:
            self.fail(fieldname, f"expected {count} {what}, the file ends after {len(toks)}")
        self.pos += count
        return toks

    def ints(self, count, fieldname):
        out = []
        for t in self._take(count, fieldname, "integers"):
            try:
                out.append(int(t))
            except ValueError:
                self.fail(fieldname, f"expected an integer, got {t!r}")
        return out

    def int(self, fieldname, low=None):
        k = self.ints(1, fieldname)[0]
        if low is not None and k < low:
            self.fail(fieldname, f"must be at least {low}, got {k}")
        return k

    def floats(self, count, fieldname):
        toks = self._take(count, fieldname, "numbers")
        try:
            a = np.array(toks, dtype=np.float64)
        except ValueError:
            for t in toks:
                try:
                    float(t)
                except ValueError:
                    self.fail(fieldname, f"expected a number, got {t!r}")
        if not np.all(np.isfinite(a)):
            self.fail(fieldname, f"non-finite value {toks[int(np.flatnonzero(~np.isfinite(a))[0])]!r}")
        return a

    def peek_ints(self, count):
        """The next count tokens as integers, or None if they are not all integers."""
        toks = self.toks[self.pos:self.pos + count]
        try:
            return [int(t) for t in toks] if len(toks) == count else None
        except ValueError:
            return None

    def rest(self):
        return " ".join(self.toks[self.pos:])


def _read_nm(tok, name):
    """A Siconos matrix block: dense ndarray (storage 0) or CSR (storage 1, sparse-block)."""
    storage = tok.int(f"{name}: storage type")
    rows, cols = tok.int(f"{name}: rows", 0), tok.int(f"{name}: columns", 0)
    if storage == 0:
        r2, c2 = tok.int(f"{name}: rows"), tok.int(f"{name}: columns")
        if (r2, c2) != (rows, cols):
            tok.fail(name, f"dense header {r2} x {c2} does not repeat the size {rows} x {cols}")
        # Siconos dense matrices are column-major: each printed line of a square matrix is a column
        return tok.floats(rows * cols, f"{name}: values").reshape((rows, cols), order="F")
    if storage == 1:
        return _read_sbm(tok, name, rows, cols)
    if storage == 2:
        tok.fail(name, "storage type 2 (sparse) is not supported; only 0 (dense) and 1 (sparse-block)")
    tok.fail(name, f"storage type {storage} is not known (0 dense, 1 sparse-block, 2 sparse)")


def _boundaries(tok, name, which, count, total):
    ends = tok.ints(count, f"{name}: {which} block boundaries")
    if count and (ends[0] <= 0 or any(b <= a for a, b in zip(ends, ends[1:])) or ends[-1] != total):
        tok.fail(name, f"{which} block boundaries {ends} must increase strictly up to {total}")
    if not count and total:
        tok.fail(name, f"no {which} blocks for a size of {total}")
    return [0] + ends


def _read_sbm(tok, name, rows, cols):
    """Siconos sparse-block matrix: nbblocks, block rows/cols counts, their cumulative sizes,
    filled1 and filled2, the block-row pointers (index1) and block-column indices (index2),
    then for each block its number and values, column-major."""
    nblocks = tok.int(f"{name}: number of blocks", 0)
    nbr, nbc = tok.int(f"{name}: block rows", 0), tok.int(f"{name}: block columns", 0)
    row_b = _boundaries(tok, name, "row", nbr, rows)
    col_b = _boundaries(tok, name, "column", nbc, cols)
    filled1, filled2 = tok.int(f"{name}: filled1", 1), tok.int(f"{name}: filled2", 0)
    if filled1 > nbr + 1 or filled2 != nblocks:
        tok.fail(name, f"filled1 = {filled1}, filled2 = {filled2} do not fit {nbr} block rows and {nblocks} blocks")
    index1 = tok.ints(filled1, f"{name}: block-row pointers")
    index2 = tok.ints(filled2, f"{name}: block-column indices")
    if index1[0] != 0 or any(b < a for a, b in zip(index1, index1[1:])) or index1[-1] != nblocks:
        tok.fail(name, f"block-row pointers {index1} must go from 0 to {nblocks} without decreasing")
    if any(not 0 <= c < nbc for c in index2):
        tok.fail(name, f"block-column indices {index2} outside [0, {nbc})")
    r_idx, c_idx, vals = [], [], []
    for br in range(filled1 - 1):
        row_cols = index2[index1[br]:index1[br + 1]]
        if any(b <= a for a, b in zip(row_cols, row_cols[1:])):
            tok.fail(name, f"block row {br}: block columns {row_cols} must increase strictly")
        nr = row_b[br + 1] - row_b[br]
        for j in range(index1[br], index1[br + 1]):
            number = tok.int(f"{name}: block {j} number")
            if number != j:
                tok.fail(name, f"block {j} is numbered {number}")
            bc = index2[j]
            nc = col_b[bc + 1] - col_b[bc]
            block = tok.floats(nr * nc, f"{name}: block {j} values").reshape((nr, nc), order="F")
            rr, cc = np.meshgrid(np.arange(row_b[br], row_b[br + 1]), np.arange(col_b[bc], col_b[bc + 1]), indexing="ij")
            r_idx.append(rr.ravel())
            c_idx.append(cc.ravel())
            vals.append(block.ravel())
    if not vals:
        return sp.csr_matrix((rows, cols))
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(r_idx), np.concatenate(c_idx))), shape=(rows, cols))
    A.eliminate_zeros()  # the zeros inside dense blocks, as for a dense matrix block
    return A


def _dense(A):
    return A.toarray() if sp.issparse(A) else A


def read_siconos_lcp(path):
    """Read a Siconos LCP file: ``n``, a matrix block (dense or sparse-block), ``q``.

    Returns
    -------
    LCPProblem
        ``(M, q)``: M a dense (n, n) ndarray (column-major in the file), q (n,).

    Examples
    --------
    >>> import os, tempfile
    >>> from mbdcp.io import read_siconos_lcp
    >>> path = os.path.join(tempfile.mkdtemp(), "lcp.dat")
    >>> _ = open(path, "w").write("2\\n0\\n2\\n2\\n2 2\\n1 2\\n3 4\\n-1 -1\\n")
    >>> M, q = read_siconos_lcp(path)   # each printed line is a column of M
    >>> M
    array([[1., 3.],
           [2., 4.]])
    """
    tok = _Tokens(path)
    n = tok.int("n", 0)
    M = np.ascontiguousarray(_dense(_read_nm(tok, "M")))
    if M.shape != (n, n):
        tok.fail("M", f"shape {M.shape}, expected ({n}, {n})")
    q = tok.floats(n, "q")
    for a in (M, q):
        a.setflags(write=False)
    return LCPProblem(M, q)


def read_siconos_mlcp(path):
    """Read a Siconos MLCP file.

    Format: two flags (storage 1: block layout and a matrix block M with q; storage 2: the blocks
    A, B, C, D row by row, then a, b), ``n`` (equality rows), ``m`` (complementarity rows); with
    storage 1, the row-block boundaries, which blocks are complementarity rows (1) or equalities
    (0), M (column-major when dense) and q. When both are present they must agree exactly.

    Returns
    -------
    MLCPProblem

    Raises
    ------
    FormatError
        Also for a rectangular M (more equality rows than free unknowns, as in Siconos'
        ``Rectangular_mlcp.dat``, whose q has fewer values than M has rows), and for equality
        rows placed after complementarity rows.
    """
    tok = _Tokens(path)
    st1, st2 = tok.int("storage type 1 flag"), tok.int("storage type 2 flag")
    if st1 not in (0, 1) or st2 not in (0, 1) or not (st1 or st2):
        tok.fail("storage flags", f"({st1}, {st2}): each must be 0 or 1, one at least 1")
    n, m = tok.int("n", 0), tok.int("m", 0)
    from1 = from2 = None
    if st1:
        bounds = [tok.int("blocksRows")]
        while bounds[-1] < n + m:
            if len(bounds) > n + m + 1:
                tok.fail("blocksRows", f"{bounds[:8]}... does not reach n + m = {n + m}")
            bounds.append(tok.int("blocksRows"))
        if bounds[0] != 0 or bounds[-1] != n + m or any(b <= a for a, b in zip(bounds, bounds[1:])):
            tok.fail("blocksRows", f"{bounds} must increase strictly from 0 to n + m = {n + m}")
        is_comp = tok.ints(len(bounds) - 1, "blocksIsComp")
        M = _dense(_read_nm(tok, "M"))
        q = tok.floats(M.shape[1], "q")  # Siconos writes as many q values as M has columns
        if M.shape != (n + m, n + m):
            tok.fail("M", f"shape {M.shape}: only square MLCPs with n + m = {n + m} rows and columns are supported")
        comp_rows = [r for k, c in enumerate(is_comp) if c for r in range(bounds[k], bounds[k + 1])]
        if comp_rows != list(range(n, n + m)):
            tok.fail("blocksIsComp", f"{is_comp} over {bounds}: the m = {m} complementarity rows must be the last ones")
        from1 = (M[:n, :n], M[n:, n:], M[:n, n:], M[n:, :n], q[:n], q[n:])
    if st2:
        from2 = tuple(tok.floats(r * c, name).reshape(r, c) for name, r, c in
                      (("A", n, n), ("B", m, m), ("C", n, m), ("D", m, n))) + (tok.floats(n, "a"), tok.floats(m, "b"))
    if from1 is not None and from2 is not None:
        for name, x1, x2 in zip("ABCDab", from1, from2):
            if not np.array_equal(x1, x2):
                tok.fail(name, "storage 2 disagrees with the block of M, q in storage 1")
    return MLCPProblem(*(from2 if from2 is not None else from1))


def read_siconos_fc(path, kind=None):
    r"""Read a Siconos friction-contact file (local ``FC2D``/``FC3D`` or global ``GFC3D``).

    Local: ``d``, ``nc``, W (d·nc square), q (d·nc), μ (nc) — :math:`\hat u = W r + q +
    [\mu\|u_T\|, 0, 0]`. Global: ``d``, ``nc``, M (n×n), H (n×d·nc), q (n), b (d·nc), μ (nc) —
    :math:`M v = q + H r`, :math:`u = H^T v + b`, returned as :class:`GlobalProblem` with ``f = q``,
    ``w = b``. Trailing text becomes ``info["comment"]``.

    Parameters
    ----------
    path : str or os.PathLike
    kind : {None, "local", "global"}
        None tells them apart by the file: a second matrix block after the first means global.

    Returns
    -------
    LocalProblem or GlobalProblem
        Matrices as CSR (dense and sparse-block storage both read).

    Warns
    -----
    SymmetryWarning
        W (local) or M (global) not symmetric.
    """
    if kind not in (None, "local", "global"):
        raise ValueError(f"kind must be None, 'local' or 'global', got {kind!r}")
    tok = _Tokens(path)
    d = tok.int("d")
    if d not in (2, 3):
        tok.fail("d", f"{d} is not 2 or 3")
    nc = tok.int("nc", 0)
    first = sp.csr_matrix(_read_nm(tok, {"local": "W", "global": "M", None: "W or M"}[kind]))
    if kind is None:
        head = tok.peek_ints(3)
        # a global file goes on with H's header: storage type, n rows, d*nc columns
        kind = "global" if head is not None and head[0] in (0, 1, 2) and head[1:] == [first.shape[0], d * nc] else "local"
    if kind == "local":
        if first.shape != (d * nc, d * nc):
            tok.fail("W", f"shape {first.shape}, expected d*nc = {d * nc} square")
        W = _symmetry(first, tok.fname, "W", complete=False)
        q = tok.floats(d * nc, "q")
        mu = tok.floats(nc, "mu")
        if mu.size and mu.min() < 0:
            tok.fail("mu", f"negative friction coefficient {mu.min()}")
        rest = tok.rest()
        return LocalProblem(W, q, mu, d, info={"comment": rest} if rest else None)
    n = first.shape[0]
    if first.shape != (n, n):
        tok.fail("M", f"shape {first.shape} is not square")
    M = _symmetry(first, tok.fname, "M", complete=False)
    H = sp.csr_matrix(_read_nm(tok, "H"))
    if H.shape != (n, d * nc):
        tok.fail("H", f"shape {H.shape}, expected (n, d*nc) = ({n}, {d * nc})")
    f = tok.floats(n, "q")
    w = tok.floats(d * nc, "b")
    mu = tok.floats(nc, "mu")
    if mu.size and mu.min() < 0:
        tok.fail("mu", f"negative friction coefficient {mu.min()}")
    rest = tok.rest()
    return GlobalProblem(M, H, f, w, mu, d, info={"comment": rest} if rest else None)
