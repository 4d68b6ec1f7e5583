r"""Coulomb friction and its cone-complementarity relaxation on the Delassus matrix (FCLib's local problem).

Contact :math:`\alpha` has the reaction :math:`r_\alpha = (r_n, r_{t_1}, r_{t_2})` and the local
velocity :math:`u_\alpha`, with :math:`u = W r + q` (W, of size :math:`3n_c`, is the Delassus
matrix :math:`H^T M^{-1} H` of a global problem). With :math:`K_\alpha = \{\|r_T\| \le \mu_\alpha
r_n\}` and its dual :math:`K^*_\alpha = \{u_n \ge \mu_\alpha\|u_T\|\}`:

- **Coulomb** (:func:`coulomb`; FCLib and Siconos pose it so, with the shift of de Saxcé & Feng
  1991):
  :math:`K^*_\alpha \ni \hat u_\alpha \perp r_\alpha \in K_\alpha`,
  :math:`\hat u_\alpha = u_\alpha + \mu_\alpha\|u_{T,\alpha}\| e_n`. Per contact this is take-off
  (:math:`r = 0,\ u_n \ge 0`), stick (:math:`u = 0,\ r \in K`) or slide
  (:math:`u_n = 0,\ r_T = -\mu r_n u_T/\|u_T\|`). Not a convex problem.
- **CCP** (:func:`ccp_local`; the relaxation of Anitescu & Tasora 2010, as in :func:`mbdcp.ccp`):
  :math:`K^*_\alpha \ni u_\alpha \perp r_\alpha \in K_\alpha`, which enforces
  :math:`u_n \ge \mu\|u_T\|`: a sliding contact separates at normal speed :math:`\mu\|u_T\|`. For a
  symmetric positive semidefinite W (a Delassus matrix :math:`H^TM^{-1}H` is one) it is the convex QP
  :math:`\min \tfrac12 r^TWr + q^Tr,\ r \in K`; for a symmetric W that is not, its solutions are
  only the stationary points of that (nonconvex) QP.

Both are judged by FCLib's residual (Acary, Brémond and Huber 2018),
:math:`\|r - \Pi_K(r - \hat u)\|_2 / \|q\|_2` (:math:`\hat u = u` for the CCP), computed by
:func:`fc_residual`; a result is ``SOLVED`` only when it is at most ``tol``, also when recomputed in
extended precision (``long double``: a huge r whose residual vanishes in double rounding is not
accepted), and the ``residual`` reported is that extended-precision value.

**No solution.** Iterates that grow beyond any size at which a residual could be verified
(:math:`\|r\|_\infty (1 + \max|W_{ij}|) > 10^{14}\max(\|q\|_\infty, \dots)`) stop the solve, and a
solve that ends without ``SOLVED`` looks for a certificate that no solution exists: d in K with
:math:`-W^Td \in K^*` and :math:`q^Td < 0` (every solution needs :math:`u^Td \ge 0`: u is in
:math:`K^*` for the CCP, and :math:`u_n \ge 0` for the Coulomb problem, where d must then be normal
only). Either gives status ``RAY_TERMINATION``, with the certificate in the result's ``certificate``
and the ``message`` saying whether no solution exists (certificate) or none was found (divergence).

Methods (the C core, ``coulomb.h``):

- ``"nsgs"`` (Coulomb) and ``"pgs"`` (CCP): Gauss–Seidel over the contacts, each 3×3 local problem
  solved exactly — take-off, stick (:math:`r = -W_{\alpha\alpha}^{-1}b`) or slide, whose direction
  :math:`(\cos t, \sin t)` is a root of a trigonometric polynomial of degree 2 (all roots found by
  bracketing), with :math:`r_n` and :math:`\|u_T\|` then linear. No symmetry of W needed.
- ``"apgd"`` (CCP): Nesterov's accelerated projected gradient of :func:`mbdcp.ccp` on :math:`N = W`.
- ``"newton"`` (both): the semismooth Newton method on the Alart–Curnier function (Alart and Curnier
  1991; Christensen, Klarbring, Pang and Strömberg 1998), per contact
  :math:`\Phi_n = r_n - \max(0, r_n - \rho_n u_n)`,
  :math:`\Phi_T = r_T - \Pi_{D(\mu\max(0, r_n - \rho_n u_n))}(r_T - \rho_t u_T)` with
  :math:`\rho = 1/W_{\alpha\alpha}`'s diagonal (for the CCP, the same law on
  :math:`(u_n - \mu\|u_T\|, u_T)`), whose zeros are the solutions. Each iteration solves
  :math:`(A + BW + \lambda I)d = -\Phi` for an element :math:`A + BW` of the generalized Jacobian by a
  sparse LU of W's 3×3 block pattern (approximate minimum degree ordering, computed once; static
  pivoting), with an Armijo line search on :math:`\|\Phi\|^2/2`; λ adapts (tenfold down after full
  steps, up where the search fails; for the CCP it stays at least :math:`0.1\|\Phi\|/\|\rho\circ q\|`,
  after Fan & Yuan (2005): where W is singular the CCP's reactions may form a set, on which the
  Jacobian is singular, while for a symmetric positive semidefinite W its velocity u is unique),
  and Gauss–Seidel sweeps take over an iteration where even a large λ fails. It converges in a
  few to a few tens of iterations on the FCLib problems, from r = 0 better than from Gauss–Seidel's
  points; it can stall on piles with a rank-deficient W (then the status says so).
- ``"auto"`` (both; the default of :func:`coulomb`): Gauss–Seidel while its observed rate promises
  less work to ``tol`` than about a dozen Newton iterations (at its first test, when that promise is
  worse than four Newton iterations, a probe of two Newton iterations from Gauss–Seidel's point, kept
  while it divides the residual by 100, else Gauss–Seidel resumes where it was), and in any case for
  the time of about four Newton iterations (its rate misleads while contacts change state: it then
  often drops by orders of magnitude in a sweep); then Newton from r = 0; then Gauss–Seidel
  and Newton (from Gauss–Seidel's points) alternately, each Newton attempt within half the
  Gauss–Seidel work so far; and, once Gauss–Seidel has used ``max_iter`` sweeps, the fixed point
  (Coulomb) or APGD (CCP). The result's ``method`` names the phase that finished.
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

from mbdcp.formulations.registry import Formulation, register
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.problem import friction_coefficients
from mbdcp.infrastructure.results import CoulombResult, LocalCCPResult
from mbdcp.infrastructure.status import Status

__all__ = ["ccp_local", "coulomb", "fc_residual", "local_solve"]

_STATUS = tuple(Status)
_COULOMB_METHODS = ("auto", "nsgs", "fixed_point", "newton")
_CCP_METHODS = ("apgd", "pgs", "newton", "auto")
_INNER_METHODS = ("apgd", "pgs")
_DEFAULTS = _core.DEFAULTS["fc"]  # the C core's iteration limits (coulomb.h)


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


_CSR_TYPES = (sp.csr_matrix,) + ((sp.csr_array,) if hasattr(sp, "csr_array") else ())


def _fast_csr(W, d):
    """W's CSR arrays (int32 indices, float64 values) without a copy or a check when W is a float64
    CSR matrix in canonical form or a float64 array of a valid shape (the C core checks the values);
    None otherwise."""
    t = type(W)
    if t is np.ndarray and W.ndim == 2 and W.dtype == np.float64 and W.shape[0] == W.shape[1] and W.shape[0] % d == 0:
        return _core.fc_dense_csr(W if W.flags.c_contiguous else np.ascontiguousarray(W))
    if (t in _CSR_TYPES and W.dtype == np.float64 and W.indptr.dtype == np.intc and W.indices.dtype == np.intc
            and W.shape[0] == W.shape[1] and W.shape[0] % d == 0 and W.has_canonical_format):
        return W.indptr, W.indices, W.data
    return None


def _arrays(W, q, mu, spacedim):
    """(W's CSR arrays, q, mu, d): directly for data that needs no conversion (the values are checked
    by the C core), else through _problem's checks and conversions."""
    if type(spacedim) is int and (spacedim == 3 or spacedim == 2) and type(q) is np.ndarray:
        fast = _fast_csr(W, spacedim)
        if fast is not None:
            m = fast[0].shape[0] - 1
            n_c = m // spacedim
            if q.dtype == np.float64 and q.shape == (m,) and q.flags.c_contiguous:
                if type(mu) is float:
                    return fast, q, np.full(n_c, mu), spacedim
                if type(mu) is np.ndarray and mu.dtype == np.float64 and mu.shape == (n_c,) and mu.flags.c_contiguous:
                    return fast, q, mu, spacedim
    Wc, qc, muc, d = _problem(W, q, mu, spacedim)
    return _csr(Wc), qc, muc, d


def _new(cls, fields):
    """A result without its generated __init__ (a frozen dataclass's sets each field through
    object.__setattr__, a sizeable part of a small solve's time); fields: every field by name."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


def _warm(warm_start, m, n_c, d):
    if warm_start is None:
        return None
    w = warm_start.r if isinstance(warm_start, (CoulombResult, LocalCCPResult)) else warm_start
    w = val.as_array("warm_start", w)
    if w.shape == (n_c, d):
        w = w.ravel()
    if w.shape != (m,):
        raise ValueError(f"warm_start must have shape ({d} n_c,) = ({m},) or (n_c, {d}) = ({n_c}, {d}), got {w.shape}")
    return np.array(w, dtype=np.float64)


def _iter_limit(name, x, default):
    return default if x is None else val.positive_int(name, x, allow_none=False)


def _project_cone(y, mu):
    """Each row (n, t1, t2) of y projected onto {||t|| <= mu_i n}."""
    n, t = y[:, 0], y[:, 1:]
    nt = np.linalg.norm(t, axis=1)
    out = y.copy()
    polar = mu * nt <= -n
    side = ~(nt <= mu * n) & ~polar
    out[polar] = 0.0
    a = (n[side] + mu[side] * nt[side]) / (1 + mu[side] ** 2)
    out[side, 0] = a
    with np.errstate(invalid="ignore", divide="ignore"):
        out[side, 1:] = (mu[side] * a / np.where(nt[side] > 0, nt[side], 1.0))[:, None] * t[side]
    return out


def _certificate(kind, r, u, mu, d):
    """The certificate of the C core's kind (coulomb.h; kind: (name, contact)) from the last r and u,
    or None."""
    kind, contact = kind
    if kind not in ("direction", "normal", "normal_r", "contact"):
        return None
    R, U = r.reshape(-1, d), u.reshape(-1, d)
    c = np.zeros_like(R)
    if kind == "contact":
        c[contact, 0] = 1.0
    elif kind == "direction":
        c = _project_cone(R, mu)
    else:
        c[:, 0] = np.maximum(-U[:, 0], 0.0) if kind == "normal" else np.maximum(R[:, 0], 0.0)
    big = np.abs(c).max()
    return (c / big).ravel() if big > 0 else None


_MESSAGES = {st: st.message for st in Status}


def _message(status, kind, residual):
    if status == Status.RAY_TERMINATION:
        if kind[0] == "diverged":
            return ("no solution found: the reactions grew beyond the size at which any residual can be "
                    "verified in double precision (no certificate that none exists was found)")
        return ("no solution exists: certificate d in K with -W^T d in K* and q.d < 0 "
                "(every solution needs u.d >= 0); see the result's certificate")
    if status == Status.MAX_ITERATIONS:
        return f"{_MESSAGES[status]} (residual {residual:.3g}): no solution found"
    return _MESSAGES[status]


def _solve(coulomb_, W, q, mu, method, inner, tol, max_iter, inner_max_iter, warm_start, spacedim):
    methods = _COULOMB_METHODS if coulomb_ else _CCP_METHODS
    if method not in methods:
        raise ValueError(f"method must be one of {', '.join(repr(x) for x in methods)}, got {method!r}")
    if inner not in _INNER_METHODS:
        raise ValueError(f"inner must be 'apgd' or 'pgs', got {inner!r}")
    (ptr, ind, wv), qv, muv, d = _arrays(W, q, mu, spacedim)
    if not (type(tol) is float and 0.0 < tol < np.inf):
        tol = val.positive_scalar("tol", tol)
    n_c = len(muv)
    m = d * n_c
    r0 = _warm(warm_start, m, n_c, d)
    S = None
    if method == "apgd" or (method == "fixed_point" and inner == "apgd"):
        Wc = sp.csr_matrix((wv, ind, ptr), shape=(m, m))
        if (Wc != Wc.T).nnz:
            S = _csr((Wc + Wc.T) * 0.5)
    outer = method in ("fixed_point", "newton") or (method == "apgd" and S is not None)
    max_iter = _iter_limit("max_iter", max_iter, _DEFAULTS["outer_max_iter" if outer else "max_iter"])
    inner_max_iter = _iter_limit("inner_max_iter", inner_max_iter, _DEFAULTS["inner_max_iter"])
    try:
        r, u, history, status, iterations, inner_iterations, residual, failures, finished, kind = _core.fc_solve(
            coulomb_, n_c, d, ptr, ind, wv, S, qv, muv, method, inner, tol, max_iter, inner_max_iter, r0)
    except _core.CoreError as e:
        if e.code in (_core.ERR_NONFINITE, _core.ERR_DATA):
            _problem(W, q, mu, spacedim)  # raises the error that names the argument
        raise
    status = _STATUS[status]
    cert = _certificate(kind, r, u, muv, d) if status == Status.RAY_TERMINATION else None
    return _new(CoulombResult if coulomb_ else LocalCCPResult, {
        "success": status == Status.SOLVED, "status": status, "message": _message(status, kind, residual), "r": r,
        "u": u, "residual": residual, "iterations": iterations, "history": history if history is not None else _NO_HISTORY,
        "method": finished, "inner_iterations": inner_iterations, "local_failures": failures, "certificate": cert})


_NO_HISTORY = np.zeros(0)
_NO_HISTORY.flags.writeable = False


def coulomb(W, q=None, mu=None, *, method="auto", tol=_core.DEFAULTS["fc"]["tol"], max_iter=None, warm_start=None, inner="apgd",
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
    method : "auto" (default), "nsgs", "newton" or "fixed_point"
        Gauss–Seidel, then Newton once Gauss–Seidel is slow, then the fixed point (module docstring);
        nonsmooth Gauss–Seidel with exact local solves; the semismooth Newton method on the
        Alart–Curnier function; or the fixed point on :math:`s = \mu\|u_T\|` with a warm-started CCP
        per iteration. Gauss–Seidel stalls on two FCLib problems (as Siconos' fc3d_nsgs does), which
        the others solve.
    tol : float
        On the residual :math:`\|r - \Pi_K(r - \hat u)\|_2/\|q\|_2`.
    max_iter : int
        Sweeps (nsgs and auto, default 10 000; auto counts Gauss–Seidel's sweeps) or fixed-point or
        Newton iterations (default 200). Reaching it gives status ``MAX_ITERATIONS``.
    warm_start : CoulombResult, LocalCCPResult or array (m,) or (n_c, spacedim)
        Initial reactions.
    inner : "apgd" (default) or "pgs"
        The CCP solver of each fixed-point iteration (auto: APGD when W is symmetric, else PGS).
    inner_max_iter : int
        Iterations of each inner CCP solve (default 10 000).
    spacedim : 2 or 3
        2-D problems (normal, one tangent) are solved as 3-D ones with a decoupled second tangent.

    Returns
    -------
    CoulombResult
        ``r``, ``u`` (m,), ``residual``, ``status``, ``success``, ``iterations``, ``history``
        (residual per iteration), ``inner_iterations``, ``local_failures``, ``method`` (the method that
        finished: for auto "nsgs", "newton" or "fixed_point"), ``certificate``.

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
    method : "apgd" (default), "pgs", "newton" or "auto"
        Accelerated projected gradient (:func:`mbdcp.ccp`'s C solver with N = W; an asymmetric W
        is handled by the splitting iteration of the module docstring), projected Gauss–Seidel
        with exact local solves, the semismooth Newton method, or the automatic choice (module
        docstring).
    max_iter : int
        APGD iterations or Gauss–Seidel sweeps (default 10 000); with an asymmetric W and APGD,
        splitting iterations (default 200), each of at most ``inner_max_iter`` APGD steps; Newton
        iterations (default 200).

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
    (ptr, ind, wv), qv, muv, d = _arrays(W, q, mu, spacedim)
    n_c = len(muv)
    r = val.vector("r", r, d * n_c, symbol=f"{d} n_c")
    try:
        res, _ = _core.fc_residual(bool(coulomb), n_c, d, ptr, ind, wv, qv, muv, np.ascontiguousarray(r, dtype=np.float64))
    except _core.CoreError as e:
        if e.code in (_core.ERR_NONFINITE, _core.ERR_DATA):
            _problem(W, q, mu, spacedim)
        raise
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


register(Formulation(
    name="coulomb", title="Coulomb friction on the Delassus matrix (FCLib's local problem), with de Saxcé's shift",
    cite="Acary, Brémond & Huber (2018); Alart & Curnier (1991)", function=coulomb, result=CoulombResult,
    derivative=None, contacts=None, data=frozenset(),
    options=frozenset({"method", "tol", "max_iter", "warm_start", "inner", "inner_max_iter"}), pose=None))
