r"""Coulomb friction and its cone-complementarity relaxation on the Delassus matrix (FCLib's local problem).

Contact :math:`\alpha` has the reaction :math:`r_\alpha = (r_n, r_{t_1}, r_{t_2})` and the local
velocity :math:`u_\alpha`, with :math:`u = W r + q` (W, of size :math:`3n_c`, is the Delassus
matrix :math:`H^T M^{-1} H` of a global problem). With :math:`K_\alpha = \{\|r_T\| \le \mu_\alpha
r_n\}` and its dual :math:`K^*_\alpha = \{u_n \ge \mu_\alpha\|u_T\|\}`:

- **Coulomb** (:func:`coulomb`; FCLib and Siconos pose it so, with de Saxcé's shift):
  :math:`K^*_\alpha \ni \hat u_\alpha \perp r_\alpha \in K_\alpha`,
  :math:`\hat u_\alpha = u_\alpha + \mu_\alpha\|u_{T,\alpha}\| e_n`. Per contact this is take-off
  (:math:`r = 0,\ u_n \ge 0`), stick (:math:`u = 0,\ r \in K`) or slide
  (:math:`u_n = 0,\ r_T = -\mu r_n u_T/\|u_T\|`). Not a convex problem.
- **CCP** (:func:`ccp_local`; the relaxation of Anitescu & Tasora 2010, as in :func:`mbdcp.ccp`):
  :math:`K^*_\alpha \ni u_\alpha \perp r_\alpha \in K_\alpha`, which enforces
  :math:`u_n \ge \mu\|u_T\|`: a sliding contact separates at normal speed :math:`\mu\|u_T\|`. For a
  symmetric W it is the convex QP :math:`\min \tfrac12 r^TWr + q^Tr,\ r \in K`.

Both are judged by FCLib's residual (Acary, Brémond and Huber 2018),
:math:`\|r - \Pi_K(r - \hat u)\|_2 / \|q\|_2` (:math:`\hat u = u` for the CCP), computed by
:func:`fc_residual`; a result is ``SOLVED`` only when it is at most ``tol``.

Methods (the C core, ``coulomb.h``):

- ``"nsgs"`` (Coulomb) and ``"pgs"`` (CCP): Gauss–Seidel over the contacts, each 3×3 local problem
  solved exactly — take-off, stick (:math:`r = -W_{\alpha\alpha}^{-1}b`) or slide, whose direction
  :math:`(\cos t, \sin t)` is a root of a trigonometric polynomial of degree 2 (all roots found by
  bracketing), with :math:`r_n` and :math:`\|u_T\|` then linear. No symmetry of W needed.
- ``"apgd"`` (CCP): Nesterov's accelerated projected gradient of :func:`mbdcp.ccp` on :math:`N = W`.
- ``"fixed_point"`` (Coulomb; Cadoux 2009, Acary, Cadoux, Lemaréchal and Malick 2011): with
  :math:`s_k = \mu\|u_T(r_k)\|`, :math:`r_{k+1}` solves the CCP with :math:`q + s_k e_n`,
  warm-started from :math:`r_k`, by ``inner`` ("apgd", default, or "pgs"); a fixed point solves
  the Coulomb problem. Once a step fails to lower the residual, the steps are damped,
  :math:`r_{k+1} = r_k + \omega(\mathrm{CCP}(\dots) - r_k)` with ω halved at each such step
  down to 1/8 (without it, Capsules-i125-1213 can settle into a cycle of three iterates).

**Asymmetric W** (e.g. FCLib's Capsules, :math:`10^{-3}` relative): "nsgs" and "pgs" use W as
given. APGD needs a symmetric matrix: with :math:`S = (W + W^T)/2` the iteration
:math:`r_{k+1} = \mathrm{CCP}(S,\ q + (W - S)r_k\ [+\ s_k e_n])` is run instead, whose fixed point
solves the problem with W itself — nothing is symmetrised away; for a strongly asymmetric W it may
not converge (then the status says so).

**Global problems** (:math:`Mv = Hr + f,\ u = H^Tv + w`): pass a :class:`mbdcp.io.GlobalProblem`
and it is reduced with :meth:`~mbdcp.io.GlobalProblem.to_local` (:math:`W = H^TM^{-1}H`), or solve
the CCP of a time step with :func:`mbdcp.ccp` on M and H directly (H's columns per contact: normal,
t1, t2, as ``Wn``/``Wt``).
"""
import numbers

import numpy as np
import scipy.sparse as sp

from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.problem import friction_coefficients
from mbdcp.infrastructure.results import CoulombResult, LocalCCPResult
from mbdcp.infrastructure.status import Status

__all__ = ["ccp_local", "coulomb", "fc_residual", "local_solve"]

_STATUS = tuple(Status)
_COULOMB_METHODS = ("nsgs", "fixed_point")
_CCP_METHODS = ("apgd", "pgs")


def _csr(A):
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    A.sort_indices()
    return (np.ascontiguousarray(A.indptr, dtype=np.intc), np.ascontiguousarray(A.indices, dtype=np.intc),
            np.ascontiguousarray(A.data, dtype=np.float64))


def _problem(W, q, mu, spacedim):
    """(W CSR float64, q, mu, d) from arrays or an mbdcp.io problem; 2-D problems come back as
    they are (embedded later)."""
    from mbdcp.tools import io

    if isinstance(W, (io.LocalProblem, io.GlobalProblem)):
        if q is not None or mu is not None:
            raise ValueError("q and mu must be None when W is a LocalProblem or GlobalProblem (they come from it)")
        prob = W.to_local() if isinstance(W, io.GlobalProblem) else W
        return sp.csr_matrix(prob.W, dtype=np.float64), np.array(prob.q, dtype=np.float64), \
            np.array(prob.mu, dtype=np.float64), prob.spacedim
    if isinstance(spacedim, (bool, np.bool_)) or not isinstance(spacedim, numbers.Integral) or spacedim not in (2, 3):
        raise ValueError(f"spacedim must be 2 or 3, got {spacedim!r}")
    d = int(spacedim)
    if W is None:
        raise TypeError("W is required, got None")
    if sp.issparse(W):
        if W.ndim != 2:
            raise ValueError(f"W must be 2-dimensional, got shape {W.shape}")
        if not (np.issubdtype(W.dtype, np.floating) or np.issubdtype(W.dtype, np.integer) or W.dtype == bool):
            raise TypeError(f"W must hold real numbers, got dtype {W.dtype}")
        Wc = sp.csr_matrix(W, dtype=np.float64)
        if not np.all(np.isfinite(Wc.data)):
            raise ValueError("W must hold finite values (found NaN or infinity)")
    else:
        Wc = sp.csr_matrix(val.as_array("W", W, 2))
    m = Wc.shape[0]
    if Wc.shape != (m, m) or m % d:
        raise ValueError(f"W must be square of size spacedim * n_c = {d} n_c, got shape {Wc.shape}")
    n_c = m // d
    q = val.vector("q", q, m, symbol=f"{d} n_c")
    mu_a = friction_coefficients("mu", mu, n_c)
    return Wc, np.array(q, dtype=np.float64), np.ascontiguousarray(mu_a), d


def _embed(W, q, n_c):
    """A 2-D problem (normal, tangent per contact) as a 3-D one whose second tangent is decoupled
    with a positive diagonal: its solutions have r_t2 = u_t2 = 0 and the rest equal the 2-D ones."""
    idx = np.arange(2 * n_c)
    keep = (idx // 2) * 3 + idx % 2
    P = sp.csr_matrix((np.ones(2 * n_c), (keep, idx)), shape=(3 * n_c, 2 * n_c))
    diag = np.abs(W.diagonal()[1::2])
    diag[diag == 0] = 1.0
    W3 = (P @ W @ P.T + sp.csr_matrix((diag, (3 * np.arange(n_c) + 2, 3 * np.arange(n_c) + 2)),
                                      shape=(3 * n_c, 3 * n_c))).tocsr()
    q3 = P @ q
    return W3, q3, keep


def _warm(warm_start, m, n_c, d, keep):
    if warm_start is None:
        return None
    w = warm_start.r if isinstance(warm_start, (CoulombResult, LocalCCPResult)) else warm_start
    w = val.as_array("warm_start", w)
    if w.shape == (n_c, d):
        w = w.ravel()
    if w.shape != (m,):
        raise ValueError(f"warm_start must have shape ({d} n_c,) = ({m},) or (n_c, {d}) = ({n_c}, {d}), got {w.shape}")
    if keep is None:
        return np.array(w, dtype=np.float64)
    r0 = np.zeros(3 * n_c)
    r0[keep] = w
    return r0


def _iter_limit(name, x, default):
    return default if x is None else val.positive_int(name, x, allow_none=False)


def _solve(coulomb_, W, q, mu, method, inner, tol, max_iter, inner_max_iter, warm_start, spacedim):
    methods = _COULOMB_METHODS if coulomb_ else _CCP_METHODS
    if method not in methods:
        raise ValueError(f"method must be one of {', '.join(repr(x) for x in methods)}, got {method!r}")
    if inner not in _CCP_METHODS:
        raise ValueError(f"inner must be 'apgd' or 'pgs', got {inner!r}")
    Wc, q, mu, d = _problem(W, q, mu, spacedim)
    tol = val.positive_scalar("tol", tol)
    m = Wc.shape[0]
    n_c = m // d
    keep = None
    if d == 2:
        Wc, q, keep = _embed(Wc, q, n_c)
    r0 = _warm(warm_start, m, n_c, d, keep)
    uses_apgd = method == "apgd" or (method == "fixed_point" and inner == "apgd")
    S = None
    if uses_apgd and (Wc != Wc.T).nnz:
        S = _csr((Wc + Wc.T) * 0.5)
    outer = method == "fixed_point" or (method == "apgd" and S is not None)
    max_iter = _iter_limit("max_iter", max_iter, 200 if outer else 10_000)
    inner_max_iter = _iter_limit("inner_max_iter", inner_max_iter, 10_000)
    r, u, history, status, iterations, inner_iterations, residual, failures = _core.fc_solve(
        coulomb_, n_c, *_csr(Wc), S, np.ascontiguousarray(q), mu, method, inner, tol, max_iter, inner_max_iter, r0)
    if keep is not None:
        r, u = r[keep], u[keep]
    status = _STATUS[status]
    cls = CoulombResult if coulomb_ else LocalCCPResult
    return cls(success=status == Status.SOLVED, status=status, message=status.message, r=r, u=u,
               residual=float(residual), iterations=int(iterations),
               history=history if history is not None else np.zeros(0), method=method,
               inner_iterations=int(inner_iterations), local_failures=int(failures))


def coulomb(W, q=None, mu=None, *, method="fixed_point", tol=_core.DEFAULTS["fc"]["tol"], max_iter=None, warm_start=None, inner="apgd",
            inner_max_iter=None, spacedim=3):
    r"""Solve the Coulomb friction problem FC(W, q, μ) (FCLib's local problem; module docstring).

    Find :math:`r` with :math:`u = Wr + q`, :math:`\hat u_\alpha = u_\alpha + \mu_\alpha
    \|u_{T,\alpha}\| e_n` and :math:`K^*_\alpha \ni \hat u_\alpha \perp r_\alpha \in K_\alpha`
    for every contact :math:`\alpha`.

    Parameters
    ----------
    W : array_like or scipy.sparse matrix, shape (m, m), m = spacedim · n_c
        Delassus matrix, each contact's rows and columns ordered normal, tangent 1[, tangent 2];
        need not be symmetric. Or an :class:`mbdcp.io.LocalProblem` / :class:`mbdcp.io.GlobalProblem`
        (reduced to its local problem), with q and mu left None.
    q : array_like, shape (m,)
        The free local velocities.
    mu : float or array_like, shape (n_c,)
        Friction coefficients >= 0.
    method : "fixed_point" (default) or "nsgs"
        The fixed point on :math:`s = \mu\|u_T\|` with a warm-started CCP per iteration, or
        nonsmooth Gauss–Seidel with exact local solves. On the FCLib collection the fixed point
        (inner APGD) reaches 1e-8 everywhere; Gauss–Seidel stalls on two problems, as Siconos'
        fc3d_nsgs does.
    tol : float
        On the residual :math:`\|r - \Pi_K(r - \hat u)\|_2/\|q\|_2`.
    max_iter : int
        Sweeps (nsgs, default 10 000) or fixed-point iterations (default 200). Reaching it gives
        status ``MAX_ITERATIONS``.
    warm_start : CoulombResult, LocalCCPResult or array (m,) or (n_c, spacedim)
        Initial reactions.
    inner : "apgd" (default) or "pgs"
        The CCP solver of each fixed-point iteration.
    inner_max_iter : int
        Iterations of each inner CCP solve (default 10 000).
    spacedim : 2 or 3
        2-D problems (normal, one tangent) are solved as 3-D ones with a decoupled second tangent.

    Returns
    -------
    CoulombResult
        ``r``, ``u`` (m,), ``residual``, ``status``, ``success``, ``iterations``, ``history``
        (residual per iteration), ``inner_iterations``, ``local_failures``.

    Examples
    --------
    A unit mass pressed down (normal velocity −1) while sliding at 2, μ = 0.5: it slides on the
    plane (u_n = 0) with r_n = 1 and friction −μ r_n against the motion.

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.coulomb(np.eye(3), [-1.0, 2.0, 0.0], 0.5, method="nsgs")
    >>> bool(res.success), (res.r.round(10) + 0.0).tolist(), (res.u.round(10) + 0.0).tolist()
    (True, [1.0, -0.5, 0.0], [0.0, 1.5, 0.0])
    """
    return _solve(True, W, q, mu, method, inner, tol, max_iter, inner_max_iter, warm_start, spacedim)


def ccp_local(W, q=None, mu=None, *, method="apgd", tol=_core.DEFAULTS["fc"]["tol"], max_iter=None, warm_start=None,
              inner_max_iter=None, spacedim=3):
    r"""Solve the cone complementarity problem on the Delassus matrix: :math:`u = Wr + q`,
    :math:`K^*_\alpha \ni u_\alpha \perp r_\alpha \in K_\alpha`.

    The CCP of :func:`mbdcp.ccp` in Delassus form (:math:`N = W`, :math:`p = q`), for problems
    given by W instead of M, Wn, Wt; a global problem is reduced (:meth:`mbdcp.io.GlobalProblem.to_local`)
    or solved with :func:`mbdcp.ccp` on M and H.

    Parameters
    ----------
    W, q, mu, tol, warm_start, spacedim
        As :func:`coulomb`.
    method : "apgd" (default) or "pgs"
        Accelerated projected gradient (:func:`mbdcp.ccp`'s C solver with N = W; an asymmetric W
        is handled by the splitting iteration of the module docstring) or projected Gauss–Seidel
        with exact local solves.
    max_iter : int
        APGD iterations or Gauss–Seidel sweeps (default 10 000); with an asymmetric W and APGD,
        splitting iterations (default 200), each of at most ``inner_max_iter`` APGD steps.

    Returns
    -------
    LocalCCPResult
        ``r``, ``u``, ``residual`` :math:`\|r - \Pi_K(r - u)\|_2/\|q\|_2`, ``status``, ``history``
        (for APGD on a symmetric W, the residual measure of :func:`mbdcp.ccp` per iteration).

    Examples
    --------
    The sliding mass of :func:`coulomb`'s example, as a CCP: it separates from the plane at
    normal speed μ‖u_T‖ = 0.5 · 1.2 (the "bowling ball" artifact).

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.ccp_local(np.eye(3), [-1.0, 2.0, 0.0], 0.5, tol=1e-12)
    >>> bool(res.success), (res.r.round(8) + 0.0).tolist(), (res.u.round(8) + 0.0).tolist()
    (True, [1.6, -0.8, 0.0], [0.6, 1.2, 0.0])
    """
    return _solve(False, W, q, mu, method, "apgd", tol, max_iter, inner_max_iter, warm_start, spacedim)


def fc_residual(W, q, mu, r, *, coulomb=True, spacedim=3):
    r"""FCLib's residual :math:`\|r - \Pi_K(r - \hat u)\|_2 / \|q\|_2` of reactions r
    (:math:`\hat u = Wr + q + \mu\|u_T\|e_n` for the Coulomb problem, :math:`Wr + q` for the CCP
    when ``coulomb=False``; :math:`\|q\| = 0` counts as 1). W, q, mu as :func:`coulomb`.

    >>> import numpy as np
    >>> from mbdcp.coulomb import fc_residual
    >>> fc_residual(np.eye(3), [-1.0, 2.0, 0.0], 0.5, [1.0, -0.5, 0.0])
    0.0
    """
    Wc, q, mu, d = _problem(W, q, mu, spacedim)
    m = Wc.shape[0]
    n_c = m // d
    r = val.vector("r", r, m, symbol=f"{d} n_c")
    if d == 2:
        Wc, q, keep = _embed(Wc, q, n_c)
        r3 = np.zeros(3 * n_c)
        r3[keep] = r
        r = r3
    res, _ = _core.fc_residual(bool(coulomb), n_c, *_csr(Wc), np.ascontiguousarray(q), mu, np.ascontiguousarray(r))
    return float(res)


def local_solve(A, b, mu, *, coulomb=True, previous=None):
    r"""One contact's problem :math:`u = Ar + b` (A 3×3, any), solved exactly by cases.

    Returns ``(r, case)`` with case "takeoff", "stick", "slide", or "best_effort" when no case
    could be verified (singular or indefinite A): then r is the candidate with the smallest local
    residual. ``previous`` (3,): among several solutions the one closest to it is returned.

    >>> import numpy as np
    >>> from mbdcp.coulomb import local_solve
    >>> r, case = local_solve(np.eye(3), [-1.0, 0.1, 0.0], 0.5)
    >>> case, (r.round(12) + 0.0).tolist()
    ('stick', [1.0, -0.1, 0.0])
    """
    A = val.matrix("A", A, (3, 3))
    b = val.vector("b", b, 3)
    if isinstance(mu, (bool, np.bool_)) or not isinstance(mu, numbers.Real):
        raise TypeError(f"mu must be a real number, got {type(mu).__name__}")
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be nonnegative and finite, got {mu}")
    prev = None if previous is None else val.vector("previous", previous, 3)
    return _core.fc_local(A, b, float(mu), bool(coulomb), prev)
