"""The validated data of a time step, shared by the formulations (step, relax, batch, compare,
full_rank, instantaneous, ccp), their derivatives and the differentiable layers: problem data as
dataclasses with named fields (the C wrappers read them by name), each input checked once on its way
in, and the call into the C core with its argument errors named."""
import dataclasses
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from mbdcp.infrastructure import _core
from mbdcp.infrastructure import stabilization as stab
from mbdcp.infrastructure import validate as val

__all__ = ["ContactData", "StepProblem", "CompressedStep", "CcpProblem", "friction_coefficients", "contact_data",
           "step_data", "compressed_step", "ccp_data", "mass_inverse", "cone_jacobian", "call_core", "overflow_error",
           "cholesky", "finite_lcp", "schur_factor", "solve_joints", "full_joint_impulse", "joint_friction_data", "pair_data",
           "warm_start_flags"]

_JOINT_RANK_TOL = 1e-10  # a pivot of the M-weighted joint Jacobian's QR below this fraction of the first: dependent
_NO_COLUMNS = np.zeros((0, 0))  # an absent Jacobian (the C layer reads only its column count)
_NO_COLUMNS.setflags(write=False)


@dataclass(slots=True)
class ContactData:
    """The validated (M, Wn, D, E, mu, v) of the contact formulations: aligned, C-contiguous
    float64 arrays, mu the diagonal of U."""

    M: np.ndarray
    Wn: np.ndarray
    D: np.ndarray
    E: np.ndarray
    mu: np.ndarray
    v: np.ndarray


@dataclass(slots=True)
class StepProblem(ContactData):
    """The validated data of one time step (Trinkle (2003), eqs. 25–38; the notation of the docs'
    notation table): the contact data, h, and the rest as aligned, C-contiguous float64 arrays,
    absent data as empty arrays (Wb and Dj as (n_v, 0), Ej as (0, 0)). The C wrappers read the
    fields by name (the C core's MbdcpStepProblem)."""

    h: float
    p_ext: np.ndarray = field(default_factory=lambda: val._EMPTY)
    psi_n: np.ndarray = field(default_factory=lambda: val._EMPTY)
    dpsi_n: np.ndarray = field(default_factory=lambda: val._EMPTY)
    dpsi_f: np.ndarray = field(default_factory=lambda: val._EMPTY)
    Wb: np.ndarray = field(default_factory=lambda: _NO_COLUMNS)
    theta: np.ndarray = field(default_factory=lambda: val._EMPTY)
    dtheta: np.ndarray = field(default_factory=lambda: val._EMPTY)
    Dj: np.ndarray = field(default_factory=lambda: _NO_COLUMNS)
    Ej: np.ndarray = field(default_factory=lambda: _NO_COLUMNS)
    beta_max: np.ndarray = field(default_factory=lambda: val._EMPTY)

    # the arrays in the order of the C problem (h apart): the order of mbdcp.batch.step's inputs
    ARRAYS = ("M", "Wn", "D", "E", "mu", "v", "p_ext", "psi_n", "dpsi_n", "dpsi_f", "Wb", "theta", "dtheta", "Dj",
              "Ej", "beta_max")

    @property
    def sizes(self):
        """(n_v, n_c, m, n_b, m_j, n_j)."""
        return (self.M.shape[0], self.Wn.shape[1], self.D.shape[1], self.Wb.shape[1], self.Dj.shape[1],
                self.Ej.shape[1])

    def arrays(self):
        """{name: array} in the order of ARRAYS."""
        return {name: getattr(self, name) for name in self.ARRAYS}

    def with_joints(self, keep):
        """The problem with only the joint equations ``keep`` (indices of Wb's columns)."""
        return dataclasses.replace(self, Wb=np.ascontiguousarray(self.Wb[:, keep]),
                                   theta=self.theta[keep] if self.theta.size else self.theta,
                                   dtheta=self.dtheta[keep] if self.dtheta.size else self.dtheta)


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


def step_data(M, Wn, D, E, U, v, h, p_ext=None, psi_n=None, dpsi_n=None, dpsi_f=None, Wb=None, theta=None,
              dtheta=None, Dj=None, Ej=None, beta_max=None):
    """The validated StepProblem of a time step's arguments (every check, every message naming the
    argument)."""
    c = contact_data(M, Wn, D, E, U, v)
    n_v, n_c, m = c.M.shape[0], c.Wn.shape[1], c.D.shape[1]
    p = StepProblem(c.M, c.Wn, c.D, c.E, c.mu, c.v, val.positive_scalar("h", h),
                    p_ext=val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v"),
                    psi_n=val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c"),
                    dpsi_n=val.vector("dpsi_n", dpsi_n, n_c, optional=True, symbol="n_c"),
                    dpsi_f=val.vector("dpsi_f", dpsi_f, m, optional=True, symbol="m"))
    if Wb is None:
        if theta is not None or dtheta is not None:
            raise ValueError("theta and dtheta need the joint Jacobian Wb")
        p.Wb = np.zeros((n_v, 0))
    else:
        p.Wb = val.matrix("Wb", Wb, (n_v, None), ("n_v", "n_b"))
        n_b = p.Wb.shape[1]
        p.theta = val.vector("theta", theta, n_b, optional=True, symbol="n_b")
        p.dtheta = val.vector("dtheta", dtheta, n_b, optional=True, symbol="n_b")
    if Dj is None:
        if Ej is not None or beta_max is not None:
            raise ValueError("Ej and beta_max need the joint friction directions Dj")
        p.Dj = np.zeros((n_v, 0))
    else:
        p.Dj, p.Ej, p.beta_max = joint_friction_data(n_v, Dj, Ej, beta_max)
    return p


@dataclass(slots=True)
class CompressedStep:
    """A validated time step without joints in compressed storage, never made dense (the C core's
    MbdcpSparseStep, read by field name): M's lower triangle by rows (Mp, Mi, Mx: int32 pointers and
    indices, ascending columns, each row ending with its diagonal), W = [Wn D] by columns (Wp, Wi,
    Wx), the contact of each friction direction (E's column in that row), mu, v, h and p_ext, psi_n
    (empty when absent)."""

    Mp: np.ndarray
    Mi: np.ndarray
    Mx: np.ndarray
    Wp: np.ndarray
    Wi: np.ndarray
    Wx: np.ndarray
    contact: np.ndarray
    mu: np.ndarray
    v: np.ndarray
    h: float
    p_ext: np.ndarray
    psi_n: np.ndarray

    @property
    def sizes(self):
        """(n_v, n_c, m)."""
        return self.v.shape[0], self.mu.shape[0], self.contact.shape[0]


def _compressed_matrix(name, A, shape, symbols, fmt):
    """A checked matrix (scipy.sparse or array_like) as a canonical scipy.sparse matrix in fmt."""
    if sp.issparse(A):
        return val.sparse_matrix(name, A, shape, symbols, fmt=fmt)
    A = val.matrix(name, A, shape, symbols)
    return sp.csr_matrix(A) if fmt == "csr" else sp.csc_matrix(A)


def _lower_rows(M):
    """M (CSR, checked square) as its lower triangle's rows, each ending with its diagonal:
    (pointers, indices, values); ValueError when M is not symmetric or has a diagonal entry that
    is not positive (no Cholesky factor)."""
    n = M.shape[0]
    if n == 0:
        raise ValueError(f"M must be a non-empty square matrix, got shape {M.shape}")
    scale = abs(M).max() if M.nnz else 0.0
    if M.nnz and abs(M - M.T).max() > val.SYMMETRY_RTOL * scale:
        raise ValueError("M must be symmetric")
    if not np.all(M.diagonal() > 0):
        raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)")
    L = sp.tril(M, format="csr")
    L.eliminate_zeros()  # the entries of the dense path (mbdcp_sparse_step_fill): the same factor
    L.sort_indices()
    return (L.indptr.astype(np.intc), L.indices.astype(np.intc), np.ascontiguousarray(L.data, dtype=np.float64))


def _contact_of_rows(E, m, n_c):
    """The contact (column) of each row of the grouping E (scipy.sparse or array_like, m x n_c), with
    the checks and messages of :func:`mbdcp.infrastructure.validate.grouping`."""
    if not sp.issparse(E):
        E = val.grouping("E", E, m, n_c, ("m", "n_c"))
        return np.ascontiguousarray(np.argmax(E, axis=1) if m and n_c else np.zeros(m), dtype=np.intc)
    E = val.sparse_matrix("E", E, (m, n_c), ("m", "n_c"), fmt="csr")
    E.eliminate_zeros()
    if np.any(np.diff(E.indptr) != 1) or np.any(E.data != 1.0):
        raise ValueError("E must have exactly one 1 in each row and zeros elsewhere")
    if np.any(np.diff(E.indices) < 0):
        raise ValueError("E must group each contact's directions in consecutive rows, in contact order")
    return np.ascontiguousarray(E.indices, dtype=np.intc)


def compressed_step(M, Wn, D, E, U, v, h, p_ext=None, psi_n=None):
    """The validated :class:`CompressedStep` of a time step without joints whose matrices may be
    scipy.sparse (any of M, Wn, D, E; dense ones are put in compressed storage): the checks and
    messages of :func:`step_data` (M's positive definiteness as far as its diagonal shows it)."""
    M = _compressed_matrix("M", M, (None, None), None, "csr")
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a non-empty square matrix, got shape {M.shape}")
    n_v = M.shape[0]
    Mp, Mi, Mx = _lower_rows(M)
    Wn = _compressed_matrix("Wn", Wn, (n_v, None), ("n_v", "n_c"), "csc")
    D = _compressed_matrix("D", D, (n_v, None), ("n_v", "m"), "csc")
    n_c, m = Wn.shape[1], D.shape[1]
    contact = _contact_of_rows(E, m, n_c)
    W = sp.hstack([Wn, D], format="csc")
    W.eliminate_zeros()
    return CompressedStep(
        Mp=Mp, Mi=Mi, Mx=Mx, Wp=W.indptr.astype(np.intc), Wi=W.indices.astype(np.intc),
        Wx=np.ascontiguousarray(W.data, dtype=np.float64), contact=contact,
        mu=friction_coefficients("U", U, n_c), v=val.vector("v", v, n_v, symbol="n_v"), h=val.positive_scalar("h", h),
        p_ext=val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v"),
        psi_n=val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c"))


# ---- the cone complementarity problem (mbdcp.ccp) ---------------------------------------------

@dataclass(slots=True)
class CcpProblem:
    """The validated data of one cone complementarity step (:func:`mbdcp.ccp`; Negrut, Serban &
    Tasora (2018), eqs. 10–11), checked once on its way in (:func:`ccp_data`) and read by the solver,
    its derivative (:mod:`mbdcp.derivatives.ccp`, from the :class:`~mbdcp.CCPResult` that carries it)
    and the differentiable layers.

    M is the mass matrix as checked: a float64 array (n_v, n_v), a scipy.sparse matrix, or its
    diagonal blocks (n_bodies, k, k); Minv its inverse (the blocks' inverses (n_bodies, k, k) with
    blocks, else scipy.sparse; None where only the derivative reads the problem). P = [n_1 u_1 w_1
    ... | Wb] (:func:`cone_jacobian`) in the C core's CSC arrays (int32 indptr, sorted int32
    indices, float64 data), built once. Wn, Wt, Wb are the checked Jacobians in CSC (None where the
    step came assembled as P, from :mod:`mbdcp.mechanics`: see :meth:`jacobians`), ``sparse`` the
    names of those given as scipy.sparse (their gradients keep their pattern). psi_n is the gap the
    step uses, after the correction of ``max_correction_speed`` and ``baumgarte``, whose
    :class:`Chain <mbdcp.infrastructure.stabilization.Chain>` is ``psi_chain`` (None without one).
    Absent vectors are empty arrays, an absent ``dpsi_t`` None."""

    M: object
    Minv: object
    P: tuple
    n_c: int
    n_b: int
    mu: np.ndarray
    v: np.ndarray
    h: float
    p_ext: np.ndarray = field(default_factory=lambda: val._EMPTY)
    psi_n: np.ndarray = field(default_factory=lambda: val._EMPTY)
    psi_chain: Optional[stab.Chain] = None
    theta: np.ndarray = field(default_factory=lambda: val._EMPTY)
    dtheta: np.ndarray = field(default_factory=lambda: val._EMPTY)
    dpsi_t: Optional[np.ndarray] = None
    Wn: Optional[sp.csc_matrix] = None
    Wt: Optional[sp.csc_matrix] = None
    Wb: Optional[sp.csc_matrix] = None
    sparse: frozenset = frozenset()

    @property
    def sizes(self):
        """(n_v, n_c, n_b)."""
        return self.v.shape[0], self.n_c, self.n_b

    @property
    def blocks(self):
        """M's diagonal blocks (n_bodies, k, k) when it was given so, else None."""
        return self.M if isinstance(self.M, np.ndarray) and self.M.ndim == 3 else None

    def P_matrix(self):
        """P as a scipy CSC matrix (on P's arrays, not a copy)."""
        return _csc_of(self.P, self.v.shape[0])

    def jacobians(self):
        """(Wn, Wt, Wb) in CSC: the checked ones, or P's columns where the step came as P."""
        if self.Wn is not None:
            return self.Wn, self.Wt, self.Wb
        P, n_c = self.P_matrix(), self.n_c
        tangent = np.arange(3 * n_c).reshape(n_c, 3)[:, 1:].ravel()
        return P[:, 0:3 * n_c:3], P[:, tangent], P[:, 3 * n_c:]

    def mass_matrix(self):
        """M as a scipy CSC matrix (duplicates summed, indices sorted; from blocks: every entry stored)."""
        if self.blocks is not None:
            return _csc_of(_blocks_csc(self.blocks), self.v.shape[0])
        A = sp.csc_matrix(self.M, dtype=np.float64)
        A.sum_duplicates()
        A.sort_indices()
        return A

    def mass_csc(self):
        """M's CSC arrays (int32 indptr, sorted indices, float64 data; both triangles), as the C
        core's interior-point method takes them."""
        if self.blocks is not None:
            return _blocks_csc(self.blocks)
        return _csc_arrays(self.mass_matrix())


def _csc_of(arrays, n_rows):
    """The scipy CSC matrix (n_rows rows) of the arrays (indptr, indices, data)."""
    return sp.csc_matrix(arrays[::-1], shape=(n_rows, arrays[0].shape[0] - 1))


def _csc_arrays(A):
    """(indptr, indices, data) of a CSC matrix, indices sorted, as the C core takes them."""
    A.sort_indices()
    return (np.ascontiguousarray(A.indptr, dtype=np.intc), np.ascontiguousarray(A.indices, dtype=np.intc),
            np.ascontiguousarray(A.data, dtype=np.float64))


def _blocks_csc(blocks):
    """The CSC arrays of the block-diagonal matrix of ``blocks`` (n, k, k), every entry stored: column
    c of block b has rows b k .. b k + k - 1, values blocks[b][:, c]."""
    n, k = blocks.shape[:2]
    rows = np.broadcast_to(np.arange(n)[:, None, None] * k + np.arange(k), (n, k, k))
    return (np.arange(n * k + 1, dtype=np.intc) * k, np.ascontiguousarray(rows.ravel(), dtype=np.intc),
            np.ascontiguousarray(blocks.transpose(0, 2, 1).ravel(), dtype=np.float64))


def _sparse_or_dense(name, A, shape, symbols):
    """A scipy.sparse matrix (CSC, finite) or a validated dense array of the given shape, in CSC."""
    if sp.issparse(A):
        return val.sparse_matrix(name, A, shape, symbols, fmt="csc")
    return sp.csc_matrix(val.matrix(name, A, shape, symbols))


def _blocks(S):
    """Boundaries of the consecutive diagonal blocks of a sparse square matrix's pattern."""
    S = sp.coo_matrix(S)
    n = S.shape[0]
    reach = np.arange(n)  # farthest row/column index coupled to each index
    np.maximum.at(reach, S.row, S.col)
    np.maximum.at(reach, S.col, S.row)
    ends = np.flatnonzero(np.maximum.accumulate(reach) == np.arange(n))
    return np.concatenate([[0], ends + 1])


_OVERFLOW = "M's inverse overflows float64 ({where}): express M in larger units"


def _invert_blocks(stack):
    """Inverses of a stack of diagonal blocks (n, k, k) of M (in C); ValueError naming
    M unless each is symmetric positive definite."""
    inv, rc, bad = _core.block_spd_inverse(np.ascontiguousarray(stack, dtype=np.float64))
    if rc == _core.ERR_DATA:
        raise ValueError(f"M must be symmetric (diagonal block {bad} is not)")
    if rc == _core.ERR_NONFINITE:
        raise ValueError(_OVERFLOW.format(where=f"diagonal block {bad} has entries near the smallest floats"))
    if rc:
        raise ValueError(f"M must be symmetric positive definite (diagonal block {bad} is not)")
    return inv


def _diagonal_blocks(M):
    """M given as its diagonal blocks (n_bodies, k, k), validated, or None for another form."""
    if sp.issparse(M):
        return None
    stack = val.as_array("M", M)  # names M on ragged or non-numeric input
    if stack.ndim != 3:
        return None
    n, k, k2 = stack.shape
    if n == 0 or k == 0 or k != k2:
        raise ValueError(f"M given as diagonal blocks must have shape (n_bodies, k, k) with n_bodies, k >= 1, got {stack.shape}")
    return stack


def _block_entries(starts, inv):
    """COO triplets of the blocks inv[i] (k x k) placed at rows and columns starts[i]."""
    k = inv.shape[1]
    idx = starts[:, None] + np.arange(k)
    return np.repeat(idx, k, axis=1).ravel(), np.tile(idx, (1, k)).ravel(), inv.ravel()


def _sparse_inverse(M):
    """M^-1 (CSR) of a checked scipy.sparse M, block by block: its consecutive diagonal blocks, those
    of equal size inverted in one batched call."""
    n = M.shape[0]
    M = M.tocoo()
    bounds = _blocks(M)
    sizes = np.diff(bounds)
    block = np.searchsorted(bounds, M.row, side="right") - 1  # of every stored entry
    parts = []
    for size in np.unique(sizes):
        members = np.flatnonzero(sizes == size)
        slot = np.full(sizes.size, -1)
        slot[members] = np.arange(members.size)
        stack = np.zeros((members.size, size, size))
        e = slot[block] >= 0
        b = block[e]
        stack[slot[b], M.row[e] - bounds[b], M.col[e] - bounds[b]] = M.data[e]
        parts.append(_block_entries(bounds[members], _invert_blocks(stack)))
    rows, cols, vals = (np.concatenate(x) for x in zip(*parts))
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, n))


def _dense_inverse(M):
    """M^-1 (CSR) of a checked dense M, by its Cholesky factor."""
    n = M.shape[0]
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)") from None
    with np.errstate(over="ignore", invalid="ignore"):
        Minv = np.linalg.solve(L, np.eye(n))
        Minv = Minv.T @ Minv
    if not np.all(np.isfinite(Minv)):
        raise ValueError(_OVERFLOW.format(where="an entry near the smallest floats"))
    return sp.csr_matrix(Minv)


def _mass(M, invert):
    """(M checked, M^-1): M dense, scipy.sparse or (with ``invert``) its diagonal blocks, M^-1 as
    the solver takes it (the blocks' inverses, else scipy.sparse), which checks positive
    definiteness; without ``invert`` M (2-D) is checked square and symmetric and M^-1 is None."""
    if sp.issparse(M):
        n = M.shape[0]
        if M.shape != (n, n) or n == 0:
            raise ValueError(f"M must be a non-empty square matrix, got shape {M.shape}")
        M = val.sparse_matrix("M", M)
        if invert:
            return M, _sparse_inverse(M)
        if abs(M - M.T).max() > val.SYMMETRY_RTOL * abs(M).max():
            raise ValueError("M must be symmetric")
        return M, None
    stack = _diagonal_blocks(M) if invert else None
    if stack is not None:  # one k x k inverse per body, and Q = M^-1 P block by block, in C
        return stack, _invert_blocks(stack)
    M = val.mass_matrix("M", M)
    return M, (_dense_inverse(M) if invert else None)


def mass_inverse(M):
    """M^-1 as a scipy.sparse matrix.

    M may be dense (inverted as a whole), scipy.sparse (inverted block by block: its consecutive
    diagonal blocks, one per body, found from the sparsity pattern) or an array of diagonal
    blocks (n_bodies, k, k) standing for the block-diagonal matrix. Blocks of equal size are
    inverted in one batched call. Raises ValueError unless M (every block) is symmetric
    positive definite.

    >>> import numpy as np
    >>> mass_inverse(np.array([[[2.0, 0], [0, 4]], [[1.0, 0], [0, 1]]])).toarray().diagonal().tolist()
    [0.5, 0.25, 1.0, 1.0]
    """
    M, Minv = _mass(M, True)
    if isinstance(Minv, np.ndarray):  # the inverses of M's diagonal blocks
        n, k, _ = Minv.shape
        return sp.bsr_matrix((Minv, np.arange(n), np.arange(n + 1)), shape=(n * k, n * k)).tocsr()
    return Minv


def cone_jacobian(Wn, Wt, Wb=None):
    """P = [n_1 u_1 w_1 ... n_{n_c} u_{n_c} w_{n_c} | Wb] (CSC): per contact its normal and tangent
    pair, then the joints — the columns the CCP's unknowns gamma_i = (n, u, w) multiply. Wn
    (n_v, n_c), Wt (n_v, 2 n_c) and Wb (n_v, n_b), optional, dense or scipy.sparse."""
    Wn = _sparse_or_dense("Wn", Wn, (None, None), ("n_v", "n_c"))
    n_v, n_c = Wn.shape
    Wt = _sparse_or_dense("Wt", Wt, (n_v, 2 * n_c), ("n_v", "2 n_c"))
    Wb = sp.csc_matrix((n_v, 0)) if Wb is None else _sparse_or_dense("Wb", Wb, (n_v, None), ("n_v", "n_b"))
    return _cone_jacobian(Wn, Wt, Wb)


def _cone_jacobian(Wn, Wt, Wb):
    """cone_jacobian of validated CSC matrices."""
    n_c = Wn.shape[1]
    perm = np.empty(3 * n_c, dtype=np.intp)
    perm[0::3] = np.arange(n_c)
    perm[1::3] = n_c + 2 * np.arange(n_c)
    perm[2::3] = n_c + 2 * np.arange(n_c) + 1
    return sp.hstack([sp.hstack([Wn, Wt], format="csc")[:, perm], Wb], format="csc")


def surface_velocity(name, x, n_c):
    """A moving surface's tangential velocity dpsi_t given as (n_c, 2) or (2 n_c,), as (n_c, 2)."""
    a = val.as_array(name, x)
    if a.shape not in ((n_c, 2), (2 * n_c,)):
        raise ValueError(f"{name} must have shape (n_c, 2) = ({n_c}, 2) or (2 n_c,) = ({2 * n_c},), got {a.shape}")
    return a.reshape(n_c, 2)


def ccp_data(M, Wn, Wt, mu, v, h, p_ext=None, psi_n=None, Wb=None, theta=None, dtheta=None, dpsi_t=None,
             max_correction_speed=None, baumgarte=1.0, invert=True):
    """The validated :class:`CcpProblem` of :func:`mbdcp.ccp`'s data (every check, every message
    naming the argument), P built once. ``invert``: M may be given as diagonal blocks and M^-1 is
    formed (the solver's; it checks M positive definite); without it (the derivative, which never
    solves with M) M is a checked symmetric 2-D matrix and Minv None."""
    sparse = frozenset(name for name, A in (("M", M), ("Wn", Wn), ("Wt", Wt), ("Wb", Wb)) if sp.issparse(A))
    M, Minv = _mass(M, invert)
    n_v = M.shape[0] * M.shape[1] if M.ndim == 3 else M.shape[0]
    Wn = _sparse_or_dense("Wn", Wn, (n_v, None), ("n_v", "n_c"))
    n_c = Wn.shape[1]
    Wt = _sparse_or_dense("Wt", Wt, (n_v, 2 * n_c), ("n_v", "2 n_c"))
    mu = friction_coefficients("mu", mu, n_c)
    v = val.vector("v", v, n_v, symbol="n_v")
    h = val.positive_scalar("h", h)
    p_ext = val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v")
    psi_n = val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c")
    gap, chain = stab.differentiable("psi_n", psi_n if psi_n.size else None, h, max_correction_speed, baumgarte)
    if Wb is None:
        if theta is not None or dtheta is not None:
            raise ValueError("theta and dtheta need the joint Jacobian Wb")
        Wb = sp.csc_matrix((n_v, 0))
    else:
        Wb = _sparse_or_dense("Wb", Wb, (n_v, None), ("n_v", "n_b"))
    n_b = Wb.shape[1]
    return CcpProblem(
        M, Minv, _csc_arrays(_cone_jacobian(Wn, Wt, Wb)), n_c, n_b, mu, v, h, p_ext=p_ext,
        psi_n=psi_n if gap is None else gap, psi_chain=chain,
        theta=val.vector("theta", theta, n_b, optional=True, symbol="n_b"),
        dtheta=val.vector("dtheta", dtheta, n_b, optional=True, symbol="n_b"),
        dpsi_t=None if dpsi_t is None else surface_velocity("dpsi_t", dpsi_t, n_c), Wn=Wn, Wt=Wt, Wb=Wb, sparse=sparse)


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


def call_core(fn, *args, rank_deficient="Wb", named=None):
    """Call a C wrapper, turning its argument errors into ValueErrors that name the argument
    (``rank_deficient``: the Jacobian whose Schur complement the call factors; ``named``: the
    data by name, for saying what overflows when finite data overflow inside C; a StepProblem
    among ``args`` serves when it is None)."""
    try:
        return fn(*args)
    except _core.CoreError as exc:
        if exc.code == _core.ERR_NOT_POSDEF:
            raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)") from None
        if exc.code == _core.ERR_RANK_DEFICIENT:
            J = rank_deficient
            raise ValueError(f"{J} must have full column rank ({J}^T M^-1 {J} is singular: redundant "
                             "constraints)") from None
        if exc.code == _core.ERR_NONFINITE:
            if named is None:
                p = next((a for a in args if isinstance(a, StepProblem)), None)
                named = {} if p is None else dict(p.arrays(), h=p.h)
            raise overflow_error(named) from None
        raise


def cholesky(M):
    """scipy's cho_factor of a validated M, its failure a ValueError naming M."""
    try:
        return sla.cho_factor(M)
    except np.linalg.LinAlgError:
        raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)") from None


def schur_factor(chol, J, name, rank_tol, what):
    """The factor (R, lower=False) of S = J^T M^-1 J for scipy's cho_solve, from the QR of
    B = U^-T J (M = U^T U, ``chol`` its cho_factor): S is never formed, so it neither overflows nor
    underflows where B does not. A ValueError naming J when B overflows, or when J lacks full column
    rank (a singular value of B below ``rank_tol`` times the largest; ``what`` says why it matters)."""
    with np.errstate(over="ignore", invalid="ignore"):
        B = sla.solve_triangular(chol[0], J, trans="T", lower=chol[1])
    if not _core.all_finite(np.ascontiguousarray(B)):
        raise ValueError(f"M^-1/2 {name} overflows float64: {name}'s entries (up to {np.abs(J).max():.3g}) are too "
                         "large for M's; rescale the problem (change units)")
    sv = np.linalg.svd(B, compute_uv=False)
    if sv.min() <= rank_tol * sv.max():
        raise ValueError(f"{name} must have full column rank{what} ({name}^T M^-1 {name} is singular)")
    return np.linalg.qr(B, mode="r"), False


def finite_lcp(F, f, named):
    """Raise the overflow_error of the data ``named`` unless the LCP (F, f) they gave is finite."""
    if not (_core.all_finite(np.ascontiguousarray(F, dtype=np.float64))
            and _core.all_finite(np.ascontiguousarray(f, dtype=np.float64))):
        raise overflow_error(named)


_JACOBIANS = ("Wn", "D", "Wt", "Wb", "Dj")
_LOADS = ("p_ext", "k")  # times M^-1
_RATES = ("psi_n", "theta")  # divided by h


def overflow_error(named):
    """The ValueError for finite data whose products overflow float64 inside the C core: it names
    the first product found to overflow (J^T M^-1 J for a Jacobian J, M^-1 p_ext, a gap over h,
    J^T v) and says what to do."""
    M, h = named.get("M"), named.get("h", 1.0)
    fix = ("rescale the problem (change units) so that these products stay within the float64 range (about 1e308)")
    with np.errstate(all="ignore"):
        try:
            L = np.linalg.cholesky(M)
        except (np.linalg.LinAlgError, ValueError, TypeError):
            L = None
        inv = (lambda X: sla.solve_triangular(L, X, lower=True)) if L is not None else None
        for name in _JACOBIANS:
            J = named.get(name)
            if J is not None and J.size and inv is not None:
                X = inv(J)
                if not (np.all(np.isfinite(X)) and np.all(np.isfinite(X.T @ X))):
                    return ValueError(f"{name}^T M^-1 {name} overflows float64: {name}'s entries (up to "
                                      f"{np.abs(J).max():.3g}) are too large for M's (diagonal down to "
                                      f"{np.abs(np.diag(M)).min():.3g}); {fix}")
        for name in _LOADS:
            x = named.get(name)
            if x is not None and x.size and inv is not None and not np.all(np.isfinite(inv(x))):
                return ValueError(f"M^-1 {name} overflows float64: {name} (up to {np.abs(x).max():.3g}) is too "
                                  f"large for M; {fix}")
        for name in _RATES:
            x = named.get(name)
            if x is not None and x.size and not np.all(np.isfinite(x / h)):
                return ValueError(f"{name} / h overflows float64 ({name} up to {np.abs(x).max():.3g}, h = {h:.3g}); {fix}")
    given = ", ".join(k for k, x in named.items() if k != "h" and getattr(x, "size", 0))
    return ValueError(f"the products of the data ({given or 'M'}) overflow float64 inside the solver; {fix}")


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


def solve_joints(fn, problem, *rest):
    """fn(problem, *rest), or with the independent subset of the joint columns when Wb lacks full
    column rank; returns (outputs, keep or None)."""
    try:
        return fn(problem, *rest), None
    except _core.CoreError as exc:
        if exc.code != _core.ERR_RANK_DEFICIENT:
            return call_core(fn, problem, *rest), None  # raises the named error
    keep = independent_joints(problem.M, problem.Wb, problem.theta, problem.dtheta, problem.h)
    return call_core(fn, problem.with_joints(keep), *rest), keep


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
