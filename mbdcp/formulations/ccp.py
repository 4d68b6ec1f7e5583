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
from mbdcp.infrastructure.problem import (
    CcpProblem,
    _csc_arrays,
    _csc_of,
    _invert_blocks,
    _sparse_or_dense,
    ccp_data,
    cone_jacobian,
    mass_inverse,
)
from mbdcp.infrastructure.results import CCPResult, _built
from mbdcp.infrastructure.status import Status

__all__ = ["ccp", "mass_inverse", "cone_jacobian"]

_STATUS = tuple(Status)


def _inverse_times(Minv, x):
    """M^-1 x for M^-1 sparse, or given as its diagonal blocks (n_bodies, k, k)."""
    if isinstance(Minv, np.ndarray):
        return np.einsum("bij,bj->bi", Minv, x.reshape(Minv.shape[0], -1)).ravel()
    return Minv @ x


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
        work that the interior-point method is expected to need (at most a quarter of
        ``max_iter``), then the interior-point method.
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
    problem = ccp_data(M, Wn, Wt, mu, v, h, p_ext, psi_n, Wb, theta, dtheta, dpsi_t, max_correction_speed, baumgarte)
    tol = val.positive_scalar("tol", tol)
    max_iter = val.positive_int("max_iter", max_iter, allow_none=False)
    omega = 0.0 if omega is None else val.positive_scalar("omega", omega)
    if omega >= 2:
        raise ValueError(f"omega must be in (0, 2), got {omega}")
    nu0 = None if warm_start is None else _warm_start(warm_start, problem.n_c, problem.n_b)
    return _solve(problem, method, tol, max_iter, omega, nu0)


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


def _stepped(blocks, P_arrays, mu, v, h, p_ext, psi_n, warm_start=None, Wb=None, theta=None, method="apgd",
             tol=_core.DEFAULTS["ccp"]["tol"], max_iter=_core.DEFAULTS["ccp"]["max_iter"], max_correction_speed=None,
             baumgarte=1.0, plan=None):
    """ccp for a step that mbdcp.mechanics assembled and whose options simulate checked: M as its
    diagonal blocks, [n_1 u_1 w_1 ...] as CSC arrays (see cone_jacobian), mu (n_c,), v, p_ext
    (n_v,), psi_n (n_c,) and warm_start gamma (n_c, 3) float64 arrays; joints Wb (scipy.sparse) and
    theta (n_b,). Only what the step's model can get wrong is checked (M positive definite).
    ``plan``: None, or a dict the caller keeps from step to step, where "auto" keeps its plan
    ("budget", "n_c": the C core's, see ccp.h)."""
    n_c, n_v = mu.shape[0], blocks.shape[0] * blocks.shape[1]
    if Wb is not None:
        Wb = _sparse_or_dense("Wb", Wb, (None, None), ("n_v", "n_b"))
        P_arrays = _csc_arrays(sp.hstack([_csc_of(P_arrays, n_v), Wb], format="csc"))
    n_b = 0 if Wb is None else Wb.shape[1]
    nu0 = None if warm_start is None else _warm_start(warm_start, n_c, n_b)
    problem = CcpProblem(blocks, _invert_blocks(blocks), P_arrays, n_c, n_b, mu, v, h, p_ext=p_ext,
                         psi_n=stab.corrected("psi_n", psi_n, h, max_correction_speed, baumgarte),
                         theta=np.zeros(0) if theta is None else np.asarray(theta, dtype=np.float64), Wb=Wb)
    return _solve(problem, method, tol, max_iter, 0.0, nu0, plan)


def _as_call(blocks, P_arrays, mu, v, h, p_ext, psi_n, warm_start=None, Wb=None, theta=None, **options):
    """(args, kwargs) of the mbdcp.ccp call that poses the problem of a _stepped call (Wn and Wt
    taken from P's columns): to record a simulation's steps and solve them again."""
    n_c = mu.shape[0]
    P = _csc_of(P_arrays, blocks.shape[0] * blocks.shape[1])
    tangent = np.arange(3 * n_c).reshape(n_c, 3)[:, 1:].ravel()
    return ((blocks, P[:, 0::3], P[:, tangent], mu, v, h),
            dict(p_ext=p_ext, psi_n=psi_n, warm_start=warm_start, Wb=Wb, theta=theta, **options))


def _solve(problem, method, tol, max_iter, omega, nu0, plan=None):
    """ccp of a CcpProblem and checked options; the result carries the problem (``_problem``, not a
    field: a result changed by dataclasses.replace drops it), which the derivative reads instead of
    checking the data again."""
    pr = problem
    n_c, n_b = pr.n_c, pr.n_b
    v_free = pr.v + (_inverse_times(pr.Minv, pr.p_ext) if pr.p_ext.size else 0.0)
    p = _linear_term(_core.transpose_times(*pr.P, v_free), pr)
    Q_arrays = (_core.block_times_csc(pr.Minv, 3 * n_c + n_b, *pr.P) if pr.blocks is not None
                else _csc_arrays(sp.csc_matrix(pr.Minv @ pr.P_matrix())))
    core_method, newton_iterations, solved = method, 0, False
    if method == "newton":
        # Newton's answer starts APGD, which verifies it by the rules of every CCP solver here (and
        # finishes if it falls short of them); a Newton run that failed (or joints, which it does
        # not take) hands its last point to auto, whose interior-point method decides infeasibility
        if n_b == 0:
            nu0, newton_iterations, solved = _newton(pr.P_matrix(), Q_arrays, n_c, pr.mu, p, tol, nu0)
        core_method = "apgd" if solved else "auto"
    nu, u, history, status, iterations, residual, polished, finished, kind = _run_core(
        pr, Q_arrays, p, core_method, tol, max_iter, omega, nu0, plan)
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
        contact_velocity=_core.transpose_times(*pr.P, v_next)[:3 * n_c].reshape(n_c, 3),
        velocity_scale=float(np.abs(p).max()) if p.size else 0.0, polished=polished, finished=finished,
        certificate=certificate, _problem=problem))


def _linear_term(p, problem):
    """p = P^T v_free (given) plus the gaps' psi_n / h, the tangential dpsi_t and the joints'
    theta / h + dtheta, in place."""
    n_c, h, dpsi_t = problem.n_c, problem.h, problem.dpsi_t
    if problem.psi_n.size:
        p[0:3 * n_c:3] += problem.psi_n / h
    if dpsi_t is not None:
        p[1:3 * n_c:3] += dpsi_t[:, 0]
        p[2:3 * n_c:3] += dpsi_t[:, 1]
    if problem.n_b:
        theta, dtheta = problem.theta, problem.dtheta
        p[3 * n_c:] += (theta / h if theta.size else 0.0) + (dtheta if dtheta.size else 0.0)
    return p


def _run_core(problem, Q_arrays, p, core_method, tol, max_iter, omega, nu0, plan):
    """_core.ccp's answer by core_method. The C core decides when M's analysis is needed (M is made
    only then) and what "auto" keeps from step to step: ``plan`` (a dict, or None) hands it the plan
    kept there and keeps the one it returns."""
    kept = None if plan is None else (plan.get("budget", 0), plan.get("n_c", 0))
    *answer, kept = _core.ccp(*problem.sizes, *problem.P, *Q_arrays, problem.mu, np.ascontiguousarray(p), core_method,
                              tol, max_iter, omega, nu0, problem.mass_csc, kept)
    if plan is not None:
        plan["budget"], plan["n_c"] = kept
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
