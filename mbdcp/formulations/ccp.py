r"""Cone complementarity problem (Anitescu & Tasora 2010; Tasora & Anitescu 2011; Negrut, Serban & Tasora 2018).

Contact i has the frame :math:`(n_i, u_i, w_i)` and the impulse
:math:`\gamma_i = (\gamma_n, \gamma_u, \gamma_w) \in K_i = \{\gamma_n \ge 0,
\|(\gamma_u, \gamma_w)\| \le \mu_i\gamma_n\}`. With :math:`P = [D_K\ W_b]` (three columns
:math:`n_i, u_i, w_i` per contact, then the joints) and :math:`\nu = (\gamma, p_b)`:

.. math::
    \min_\nu\ \tfrac12 \nu^T N \nu + p^T\nu \quad \text{s.t. } \gamma_i \in K_i,\qquad
    N = P^T M^{-1} P,

:math:`p_i = (\Phi_i/h, 0, 0) + D_i^T(v + M^{-1}p_{ext})` per contact and
:math:`\Theta_j/h + \partial_t\Theta_j + W_{b,j}^T(v + M^{-1}p_{ext})` per joint;
:math:`v^{l+1} = v + M^{-1}(p_{ext} + P\nu)`. Optimality is
:math:`K_i \ni \gamma_i \perp d_i \in K_i^*` with :math:`d = N\nu + p` and
:math:`K_i^* = \{d_n \ge \mu_i\|d_t\|\}` (Negrut et al. 2018, eqs. 7, 10–12; they call
:math:`K_i^*` the polar cone). It is a convex relaxation of the nonlinear complementarity problem
that Coulomb's law on the exact circular cone gives after time discretization (Negrut et al.
2018, eq. 5 without its relaxation term; the convex relaxation is Anitescu's (2006)), not of the
polygonal LCP of :func:`mbdcp.step`. The
constraint actually enforced is :math:`0 \le \gamma_n \perp \Phi/h + v_n - \mu v_T \ge 0`
(eq. 5d), so a body sliding at speed :math:`v_T` separates with normal speed :math:`\mu v_T`.

The solvers never form N: :math:`N\nu = P^T(Q\nu)` with :math:`Q = M^{-1}P` (M is inverted
block by block), so an iteration costs O(nonzeros): large granular systems stay cheap (Tasora &
Anitescu 2011).
"""
import numpy as np
import scipy.sparse as sp

from mbdcp.formulations.registry import Formulation, Layer, register
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import stabilization as stab
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.deprecated import renamed_value
from mbdcp.infrastructure.problem import friction_coefficients
from mbdcp.infrastructure.results import CCPResult, _built
from mbdcp.infrastructure.status import Status

__all__ = ["ccp", "mass_inverse", "cone_jacobian"]

_STATUS = tuple(Status)


def _sparse_or_dense(name, A, shape, symbols):
    """A scipy.sparse matrix (CSC, finite) or a validated dense array of the given shape."""
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
    if sp.issparse(M):
        n = M.shape[0]
        if M.shape != (n, n) or n == 0:
            raise ValueError(f"M must be a non-empty square matrix, got shape {M.shape}")
        M = val.sparse_matrix("M", M).tocoo()
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
    stack = _diagonal_blocks(M)
    if stack is not None:
        n, k, _ = stack.shape
        inv = _invert_blocks(stack)
        return sp.bsr_matrix((inv, np.arange(n), np.arange(n + 1)), shape=(n * k, n * k)).tocsr()
    M = val.mass_matrix("M", M)
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


def _inverse_times(Minv, x):
    """M^-1 x for M^-1 sparse, or given as its diagonal blocks (n_bodies, k, k)."""
    if isinstance(Minv, np.ndarray):
        return np.einsum("bij,bj->bi", Minv, x.reshape(Minv.shape[0], -1)).ravel()
    return Minv @ x


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


def ccp(M, Wn, Wt, mu, v, h, *, p_ext=None, psi_n=None, Wb=None, theta=None, dtheta=None,
        method="apgd", tol=_core.DEFAULTS["ccp"]["tol"], max_iter=_core.DEFAULTS["ccp"]["max_iter"], warm_start=None,
        omega=None, max_correction_speed=None, baumgarte=1.0, dpsi_t=None, phi=None, dphi_t=None):
    r"""Solve one time step as a cone complementarity problem.

    Parameters
    ----------
    M : array_like or scipy.sparse matrix, shape (n_v, n_v), or ndarray, shape (n_bodies, k, k)
        Mass matrix, dense or sparse (block diagonal per body: each block is inverted once), or
        its diagonal blocks, meaning the block-diagonal matrix with n_v = n_bodies k (see
        :func:`mass_inverse`).
    Wn : array_like or scipy.sparse matrix, shape (n_v, n_c)
        Contact normals.
    Wt : array_like or scipy.sparse matrix, shape (n_v, 2 n_c)
        Tangent pairs (u_i, w_i) in columns 2i, 2i+1.
    mu : float or array_like, shape (n_c,)
        Friction coefficients >= 0 (a scalar applies to all).
    v : array_like, shape (n_v,)
        Velocity at the start of the step.
    h : float
        Time step > 0.
    p_ext : array_like, shape (n_v,), optional
        Applied impulse over the step.
    psi_n : array_like, shape (n_c,), optional
        Gaps :math:`\Psi_{n,i}` (the :math:`\Phi_i` of Negrut, Serban & Tasora (2018); stabilisation
        :math:`\Psi_n/h`). ``phi``, its old name, is deprecated.
    Wb : array_like or scipy.sparse matrix, shape (n_v, n_b), optional
        Bilateral joints.
    theta, dtheta : array_like, shape (n_b,), optional
        Joint drift and its explicit time derivative.
    method : str
        ``"apgd"`` (default), ``"pjacobi"``, ``"pgs"``, ``"newton"``, ``"ipm"`` or ``"auto"``.
        ``"newton"``: the semismooth Newton method on the Alart–Curnier function (Alart & Curnier
        1991) of the CCP in Delassus form, :math:`N` formed sparse and factored by the sparse block
        factorisation of :func:`mbdcp.coulomb` (see :func:`mbdcp.ccp_local`); a few iterations
        per step on a pile with slightly more impulses than velocities (a 100-sphere settling pile:
        a median of 4, where APGD takes 36); more where there are many more (500 spheres: a median of
        9, and 3 steps in 100 that do not converge). APGD then checks its answer by the
        rule below (and finishes it if it falls short); without joints only: with joints, or where
        Newton fails, ``"auto"`` takes over from its last point. ``"ipm"``: a primal-dual
        interior-point method on the exact CCP (Nesterov–Todd scaling, Mehrotra's predictor–corrector;
        an interior-point method for this CCP: Mangoni, Tasora & Garziera (2018); Melanz et al.
        (2017) compare such methods with APGD), each Newton system solved as a sparse quasi-definite
        system in M and the contacts (N is never formed); near the solution, where its linear
        algebra runs out of precision, APGD finishes from its best point. ``"auto"``: APGD for the
        work that the interior-point method is expected to need, then the interior-point method.
        Both end ``SOLVED`` or, when the problem has no solution, ``RAY_TERMINATION`` with a
        certificate (``certificate``, see :class:`CCPResult`).
    tol : float
        Stop when the relative residual
        :math:`\|\nu - \Pi_K(\nu - (N\nu + p)/L)\|_\infty L / \|p\|_\infty` (zero exactly at a
        solution; L estimates the largest eigenvalue of N) is below it, and so is each
        contact's residual relative to the magnitudes of its own terms (``residual``). Both
        must hold for ``SOLVED``; a light body wedged by friction can have impulses whose
        rounding alone exceeds a tight ``tol``: that ends on ``MAX_ITERATIONS``.
    max_iter : int
        Iteration limit; reaching it gives status ``MAX_ITERATIONS`` (not an error).
    warm_start : CCPResult or array_like, optional
        A previous result, gamma (n_c, 3), or the full (3 n_c + n_b,) vector.
    omega : float, optional
        Relaxation for ``"pjacobi"`` (default 0.3) and ``"pgs"`` (default 1.0), in (0, 2).
    max_correction_speed : float, optional
        The penetration correction of :func:`mbdcp.step`: :math:`\Phi_i < 0` enters as
        :math:`\max(b\Phi_i, -h v_{max})`.
    baumgarte : float
        The fraction b in (0, 1] of a penetration removed per step (default 1).
    dpsi_t : array_like, shape (n_c, 2) or (2 n_c,), optional
        Tangentially moving surfaces (``dphi_t``, its old name, is deprecated): per contact, the
        (u, w) components of :math:`\partial_t\Psi_t`, added to the tangential velocity :math:`W_t^Tv^{l+1}` as
        ``dpsi_f`` is for :func:`mbdcp.step` (Trinkle (notes, 2003), p. 21). A conveyor belt moving at speed V
        along :math:`u_i` under the body has ``dpsi_t[i] = (-V, 0)``; friction then drives the
        velocity relative to the belt to zero. Default: fixed surfaces.

    Returns
    -------
    CCPResult
        ``gamma`` (n_c, 3): (normal, u, w) impulses; ``p_b``; ``v_next``; ``iterations``;
        ``residual``; ``history`` (residual per iteration); ``status``; ``success``;
        ``contact_velocity`` (n_c, 3): :math:`(v_n, v_u, v_w)` of each contact after the step;
        ``velocity_scale``: :math:`\|p\|_\infty`; ``contact_state`` (see :class:`CCPResult`).

    Examples
    --------
    A unit particle sliding at 1 m/s on the floor (mu = 0.5): friction slows it, and it also
    lifts off with normal speed mu times its new sliding speed (the "bowling ball" artifact,
    Negrut et al. 2018, discussion of eq. 6), v_z = 0.5 * v_x:

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.ccp(np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], 0.5,
    ...                 [1.0, 0.0, 0.0], 0.01, p_ext=[0, 0, -0.0981], tol=1e-12)
    >>> bool(res.success), res.v_next.round(5).tolist()
    (True, [0.76076, 0.0, 0.38038])
    """
    if phi is not None:  # the deprecated names, taken here: a decorator would be one more frame per call
        psi_n = renamed_value("ccp", "phi", phi, "psi_n", psi_n is not None)
    if dphi_t is not None:
        dpsi_t = renamed_value("ccp", "dphi_t", dphi_t, "dpsi_t", dpsi_t is not None)
    method = val.choice("method", method, METHODS)
    blocks = _diagonal_blocks(M)
    if blocks is not None:  # one k x k inverse per body, and Q = M^-1 P block by block, in C
        Minv = _invert_blocks(blocks)
        n_v = blocks.shape[0] * blocks.shape[1]
    else:
        Minv = mass_inverse(M)
        n_v = Minv.shape[0]
    Wn = _sparse_or_dense("Wn", Wn, (n_v, None), ("n_v", "n_c"))
    n_c = Wn.shape[1]
    Wt = _sparse_or_dense("Wt", Wt, (n_v, 2 * n_c), ("n_v", "2 n_c"))
    mu_a = friction_coefficients("mu", mu, n_c)
    v = val.vector("v", v, n_v, symbol="n_v")
    h = val.positive_scalar("h", h)
    p_ext = val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v")
    psi_n = val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c")
    psi_n = stab.corrected("psi_n", psi_n, h, max_correction_speed, baumgarte)
    if Wb is None:
        if theta is not None or dtheta is not None:
            raise ValueError("theta and dtheta need the joint Jacobian Wb")
        Wb = sp.csc_matrix((n_v, 0))
    else:
        Wb = _sparse_or_dense("Wb", Wb, (n_v, None), ("n_v", "n_b"))
    n_b = Wb.shape[1]
    theta = val.vector("theta", theta, n_b, optional=True, symbol="n_b")
    dtheta = val.vector("dtheta", dtheta, n_b, optional=True, symbol="n_b")
    tol = val.positive_scalar("tol", tol)
    max_iter = val.positive_int("max_iter", max_iter, allow_none=False)
    omega = 0.0 if omega is None else val.positive_scalar("omega", omega)
    if omega >= 2:
        raise ValueError(f"omega must be in (0, 2), got {omega}")

    if dpsi_t is not None:
        dpsi_t = val.as_array("dpsi_t", dpsi_t)
        if dpsi_t.shape not in ((n_c, 2), (2 * n_c,)):
            raise ValueError(f"dpsi_t must have shape (n_c, 2) = ({n_c}, 2) or (2 n_c,) = ({2 * n_c},), got {dpsi_t.shape}")
        dpsi_t = dpsi_t.reshape(n_c, 2)
    nu0 = None if warm_start is None else _warm_start(warm_start, n_c, n_b)
    return _solve(M, blocks, Minv, _csc_arrays(_cone_jacobian(Wn, Wt, Wb)), n_c, n_b, mu_a, v, h, p_ext, psi_n, dpsi_t,
                  theta, dtheta, method, tol, max_iter, omega, nu0)


def _warm_start(w, n_c, n_b):
    """The warm start (a CCPResult, gamma (n_c, 3) or nu (3 n_c + n_b,)) as nu."""
    if isinstance(w, CCPResult):
        w = np.concatenate([w.gamma.ravel(), w.p_b])
    w = val.as_array("warm_start", w)
    if w.shape == (n_c, 3) and n_b == 0:
        w = w.ravel()
    elif w.shape == (n_c, 3):
        w = np.concatenate([w.ravel(), np.zeros(n_b)])
    if w.shape != (3 * n_c + n_b,):
        raise ValueError(f"warm_start must have shape (n_c, 3) = ({n_c}, 3) or (3 n_c + n_b,) = "
                         f"({3 * n_c + n_b},), got {w.shape}")
    return w


def _csc_arrays(A):
    """(indptr, indices, data) of a CSC matrix, indices sorted, as the C core takes them."""
    A.sort_indices()
    return (np.ascontiguousarray(A.indptr, dtype=np.intc), np.ascontiguousarray(A.indices, dtype=np.intc),
            np.ascontiguousarray(A.data, dtype=np.float64))


def _stepped(blocks, P_arrays, mu, v, h, p_ext, psi_n, warm_start=None, Wb=None, theta=None, method="apgd",
             tol=_core.DEFAULTS["ccp"]["tol"], max_iter=_core.DEFAULTS["ccp"]["max_iter"], max_correction_speed=None,
             baumgarte=1.0, plan=None):
    """ccp for a step that mbdcp.mechanics assembled and whose options simulate checked: M as its
    diagonal blocks, [n_1 u_1 w_1 ...] as CSC arrays (see cone_jacobian), mu (n_c,), v, p_ext
    (n_v,), psi_n (n_c,) and warm_start gamma (n_c, 3) float64 arrays; joints Wb (scipy.sparse) and
    theta (n_b,). Only what the step's model can get wrong is checked (M positive definite).
    ``plan``: None, or a dict the caller keeps from step to step, where "auto" keeps its budget
    (see _auto_budget)."""
    n_c = mu.shape[0]
    if Wb is not None:
        P_arrays = _csc_arrays(sp.hstack([_matrix(P_arrays, blocks.shape[0] * blocks.shape[1]),
                                          _sparse_or_dense("Wb", Wb, (None, None), ("n_v", "n_b"))], format="csc"))
    n_b = 0 if Wb is None else Wb.shape[1]
    nu0 = None if warm_start is None else _warm_start(warm_start, n_c, n_b)
    psi_n = stab.corrected("psi_n", psi_n, h, max_correction_speed, baumgarte)
    theta = np.zeros(0) if theta is None else np.asarray(theta, dtype=np.float64)
    return _solve(blocks, blocks, _invert_blocks(blocks), P_arrays, n_c, n_b, mu, v, h, p_ext, psi_n, None, theta,
                  np.zeros(0), method, tol, max_iter, 0.0, nu0, plan)


# "auto" keeps the APGD budget of an analysed step for the next ones while their contacts number
# within this fraction of its own: the budget (an interior-point solve's work) follows the pattern
# slowly, and analysing each step's pattern cost 9 % of a step at 500 spheres, where APGD always
# converges within it
BUDGET_KEPT = 0.1


def _auto_budget(plan, n_c):
    """The budget an earlier step left in ``plan`` for a step of n_c contacts, 0 if none serves."""
    if not plan or abs(n_c - plan["n_c"]) > BUDGET_KEPT * plan["n_c"]:
        return 0
    return plan["budget"]


def _matrix(P_arrays, n_v):
    """P (n_v rows) as a scipy CSC matrix of its arrays (indptr, indices, data)."""
    return sp.csc_matrix(P_arrays[::-1], shape=(n_v, P_arrays[0].shape[0] - 1))


def _as_call(blocks, P_arrays, mu, v, h, p_ext, psi_n, warm_start=None, Wb=None, theta=None, **options):
    """(args, kwargs) of the mbdcp.ccp call that poses the problem of a _stepped call (Wn and Wt
    taken from P's columns): to record a simulation's steps and solve them again."""
    n_c = mu.shape[0]
    P = _matrix(P_arrays, blocks.shape[0] * blocks.shape[1])
    tangent = np.arange(3 * n_c).reshape(n_c, 3)[:, 1:].ravel()
    return ((blocks, P[:, 0::3], P[:, tangent], mu, v, h),
            dict(p_ext=p_ext, psi_n=psi_n, warm_start=warm_start, Wb=Wb, theta=theta, **options))


def _solve(M, blocks, Minv, P_arrays, n_c, n_b, mu, v, h, p_ext, psi_n, dpsi_t, theta, dtheta, method, tol, max_iter,
           omega, nu0, plan=None):
    """ccp of checked arguments: P = [n_1 u_1 w_1 ... | Wb] as CSC arrays (int32 indptr and sorted
    indices, float64 data), Minv the inverse blocks (blocks given) or M^-1 (scipy.sparse)."""
    n_v, n_p = v.shape[0], 3 * n_c + n_b
    v_free = v + (_inverse_times(Minv, p_ext) if p_ext.size else 0.0)
    p = _linear_term(_core.transpose_times(*P_arrays, v_free), n_c, n_b, h, psi_n, dpsi_t, theta, dtheta)
    Q_arrays = (_core.block_times_csc(Minv, n_p, *P_arrays) if blocks is not None
                else _csc_arrays(sp.csc_matrix(Minv @ _matrix(P_arrays, n_v))))
    core_method, newton_iterations, solved = method, 0, False
    if method == "newton":
        # Newton's answer starts APGD, which verifies it by the rules of every CCP solver here (and
        # finishes if it falls short of them); a Newton run that failed (or joints, which it does
        # not take) hands its last point to auto, whose interior-point method decides infeasibility
        if n_b == 0:
            nu0, newton_iterations, solved = _newton(_matrix(P_arrays, n_v), Q_arrays, n_c, mu, p, tol, nu0)
        core_method = "apgd" if solved else "auto"
    nu, u, history, status, iterations, residual, polished, finished, kind = _run_core(
        M, blocks, P_arrays, Q_arrays, n_v, n_c, n_b, mu, p, core_method, tol, max_iter, omega, nu0, plan)
    if method == "newton":
        finished = "newton" if core_method == "apgd" and iterations == 0 else finished
        iterations += newton_iterations
    status = _STATUS[status]
    certificate = None
    if status == Status.RAY_TERMINATION and kind == "direction":
        certificate, nu, u = nu.copy(), np.zeros_like(nu), np.zeros_like(u)  # the impulses are not an answer
    v_next = v_free + u
    return _built(CCPResult, dict(
        success=status == Status.SOLVED, status=status, message=_message(status, kind),
        gamma=nu[:3 * n_c].reshape(n_c, 3), p_b=nu[3 * n_c:], v_next=v_next, iterations=int(iterations),
        residual=float(residual), history=history, method=method,
        contact_velocity=_core.transpose_times(*P_arrays, v_next)[:3 * n_c].reshape(n_c, 3),
        velocity_scale=float(np.abs(p).max()) if p.size else 0.0, polished=polished, finished=finished,
        certificate=certificate))


def _linear_term(p, n_c, n_b, h, psi_n, dpsi_t, theta, dtheta):
    """p = P^T v_free (given) plus the gaps' psi_n / h, the tangential dpsi_t and the joints'
    theta / h + dtheta, in place."""
    if psi_n.size:
        p[0:3 * n_c:3] += psi_n / h
    if dpsi_t is not None:
        p[1:3 * n_c:3] += dpsi_t[:, 0]
        p[2:3 * n_c:3] += dpsi_t[:, 1]
    if n_b:
        p[3 * n_c:] += (theta / h if theta.size else 0.0) + (dtheta if dtheta.size else 0.0)
    return p


def _run_core(M, blocks, P_arrays, Q_arrays, n_v, n_c, n_b, mu, p, core_method, tol, max_iter, omega, nu0, plan):
    """_core.ccp's answer (without its budget) by core_method; "auto" with a plan uses the budget
    kept there and keeps an analysed step's (see _auto_budget)."""
    M_arrays = (lambda: _mass_csc(M, blocks)) if core_method in ("ipm", "auto") else None  # made if needed
    kept = _auto_budget(plan, n_c) if plan is not None and core_method == "auto" else 0
    *answer, budget = _core.ccp(n_v, n_c, n_b, *P_arrays, *Q_arrays, mu, np.ascontiguousarray(p), core_method, tol,
                                max_iter, omega, nu0, M_arrays, kept)
    if plan is not None and budget > 0 and not kept:
        plan.update(n_c=n_c, budget=budget)
    return answer


METHODS = (*_core.CCP_METHODS, "newton")  # the solvers of ccp(method=)
# Newton's residual (Delassus form, 2-norm) is not the CCP's; asking it for NEWTON_MARGIN times the
# tolerance lets the CCP's own check pass at once in the common case (quadratic convergence makes
# the margin cheap)
NEWTON_MARGIN = 1e-2
NEWTON_MAX_ITER = 50


def _newton(P, Q_arrays, n_c, mu, p, tol, nu0):
    """(impulses, iterations, solved) of the semismooth Newton method on the CCP in Delassus form,
    u = W gamma + p with W = P^T Q (Alart & Curnier 1991, with the cone complementarity written as
    Coulomb's law on u_n - mu ||u_T||; see mbdcp.ccp_local), from nu0 (None: zero). W is formed:
    its sparse block factorisation is what makes Newton's few iterations cheap."""
    Q = sp.csc_matrix((Q_arrays[2], Q_arrays[1], Q_arrays[0]), shape=P.shape)
    W = (P.T @ Q).tocsr()
    W.sort_indices()
    ptr, ind = np.ascontiguousarray(W.indptr, dtype=np.intc), np.ascontiguousarray(W.indices, dtype=np.intc)
    r0 = None if nu0 is None else np.ascontiguousarray(nu0[:3 * n_c])
    r, _, _, status, iterations, *_ = _core.fc_solve(
        False, n_c, 3, ptr, ind, np.ascontiguousarray(W.data), None, np.ascontiguousarray(p), mu, "newton", "apgd",
        NEWTON_MARGIN * tol, NEWTON_MAX_ITER, 1, r0)
    if not np.all(np.isfinite(r)):
        return nu0, int(iterations), False  # nothing to start from
    return r, int(iterations), _STATUS[status] == Status.SOLVED


def _mass_csc(M, blocks):
    """M in CSC (int32 indptr, sorted indices, float64 data; both triangles) for the interior-point
    method's augmented system; from its diagonal blocks when given (every entry stored)."""
    if blocks is not None:  # column c of block b: rows b k .. b k + k - 1, values blocks[b][:, c]
        n, k = blocks.shape[:2]
        rows = np.broadcast_to(np.arange(n)[:, None, None] * k + np.arange(k), (n, k, k))
        return (np.arange(n * k + 1, dtype=np.intc) * k, np.ascontiguousarray(rows.ravel(), dtype=np.intc),
                np.ascontiguousarray(blocks.transpose(0, 2, 1).ravel(), dtype=np.float64))
    A = sp.csc_matrix(M, dtype=np.float64)
    A.sum_duplicates()
    A.sort_indices()
    return (np.ascontiguousarray(A.indptr, dtype=np.intc), np.ascontiguousarray(A.indices, dtype=np.intc),
            np.ascontiguousarray(A.data, dtype=np.float64))


def _message(status, kind):
    if status == Status.RAY_TERMINATION and kind == "direction":
        return ("no solution exists: certificate d in K with N d = 0 (to rounding) and p.d < 0, an impulse "
                "pattern in equilibrium that lowers the CCP's objective without bound; see the result's certificate")
    if status == Status.RAY_TERMINATION:
        return ("no solution found: the impulses grew beyond the size at which any residual can be verified "
                "in double precision (no certificate that none exists was found)")
    return status.message


def _pose(s, options):
    """The step with the tangent pairs of D's directions (the circular cone); a moving surface's
    normal speed enters the gap, psi_n + h dpsi_n."""
    kw, note = s.modelled(_DATA)
    if s.Wt is None:
        note = s.wt_note
    dpsi_n = kw.pop("dpsi_n", None)
    if dpsi_n is not None:
        psi = kw.get("psi_n")
        kw["psi_n"] = (0.0 if psi is None else np.asarray(psi, dtype=float)) + s.h * np.asarray(dpsi_n, dtype=float)
    return (None if note else lambda: ccp(s.M, s.Wn, s.Wt, s.mu, s.v, s.h, **kw, **options)), note


_DATA = frozenset({"p_ext", "psi_n", "dpsi_n", "Wb", "theta", "dtheta"})
register(Formulation(
    name="ccp", title="Cone complementarity problem (the CCP's circular cone), APGD, Jacobi or Gauss–Seidel",
    cite="Anitescu & Tasora (2010); Tasora & Anitescu (2011); Negrut, Serban & Tasora (2018)", function=ccp,
    result=CCPResult, derivative="mbdcp.derivatives.ccp", contacts="pairs", data=_DATA,
    options=frozenset({"method", "tol", "max_iter", "omega", "warm_start", "max_correction_speed", "baumgarte"}),
    pose=_pose, stepper="mbdcp.mechanics.steppers.ccp", algorithm=("method", "auto", METHODS),
    defaults={"compare": {"tol": 1e-10}},
    layer=Layer("ccp", ("M", "Wn", "Wt", "mu", "v", "h"), ("p_ext", "psi_n", "Wb", "theta", "dtheta", "dpsi_t"),
                ("v_next", "gamma", "p_b"), (("n_v",), ("n_c", 3), ("n_b",)),
                ("degenerate_tol", "max_correction_speed", "baumgarte"), extras=("residual",), extra_forms=((),),
                filler={"iterations": 0, "history": np.zeros(0), "method": ""})))
