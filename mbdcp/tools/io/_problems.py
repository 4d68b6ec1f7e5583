"""The problem objects that the FCLib and Siconos readers return and the writer takes, and the
errors and warnings they raise."""
import numbers
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Union

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.results import _repr_array

SYMMETRY_RTOL = val.SYMMETRY_RTOL
_INT32_MAX = np.iinfo(np.int32).max


class FormatError(ValueError):
    """A problem file is malformed or truncated; the message names the file and the field."""


class SymmetryWarning(UserWarning):
    """A matrix that should be symmetric is stored as one triangle, or is not symmetric."""


# ---------------------------------------------------------------- problem objects


def _frozen_vector(name, x, n, symbol=None, nonnegative=False):
    a = np.array(val.vector(name, x, n, symbol=symbol, where=_SIZES), dtype=np.float64, copy=True)
    if nonnegative and a.size and a.min() < 0:
        raise ValueError(f"{name} must be nonnegative, got {a.min()}")
    a.setflags(write=False)
    return a


def _sparse(name, A, shape=(None, None), symbols=("any", "any")):
    """A canonical CSR (kept when given CSR) or CSC copy of A with finite float64 values. A sparse
    A's declared shape is checked against ``shape`` (None: any) before anything is allocated."""
    if sp.issparse(A):
        return val.sparse_matrix(name, A, shape, symbols, where=_SIZES)
    return sp.csc_matrix(val.matrix(name, A, (None, None)))


# where io's sizes come from (for messages): a matrix's declared shape, or a vector's length
_SIZES = {"n": "M is n x n, f has n entries", "m": "W is m x m, or H has m columns", "p": "G has p columns",
          "n_c": "m = spacedim n_c"}


def _spacedim(value, allowed):
    value = val.integer("spacedim", value)
    if value not in allowed:
        raise ValueError(f"spacedim must be one of {allowed}, got {value}")
    return value


def _info(info):
    if info is None:
        return None
    if not isinstance(info, dict):
        raise TypeError(f"info must be a dict or None, got {val.describe(info)}")
    for key, value in info.items():
        if not isinstance(key, str) or not key or "/" in key:
            raise ValueError(f"info keys must be non-empty strings without '/', got {key!r}")
        if not (isinstance(value, (str, numbers.Real)) or (isinstance(value, np.ndarray) and value.dtype.kind in "biuf")):
            raise TypeError(f"info[{key!r}] must be a str, a number or a numeric ndarray, got {val.describe(value)}")
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
        # a sparse W declares m: q (held in memory) must match it before W is converted
        if sp.issparse(self.W) and self.W.shape[0] == self.W.shape[1]:
            _frozen_vector("q", self.q, self.W.shape[0], "m")
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
        # sparse M and H declare n and m: f and w (held in memory) bound them before conversion
        n, m = val.as_array("f", self.f, 1).shape[0], val.as_array("w", self.w, 1).shape[0]
        M, H = _sparse("M", self.M, (n, n), ("n", "n")), _sparse("H", self.H, (n, None), ("n", "m"))
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
            G = _sparse("G", self.G, (n, val.as_array("b", self.b, 1).shape[0]), ("n", "p"))
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

