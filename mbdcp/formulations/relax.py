r"""Fixed-point relaxations of the time-stepping LCP (Anitescu & Hart 2004).

The Stewart–Trinkle / Anitescu–Potra LCP of :func:`mbdcp.step` is not monotone: its solution
set can be non-convex, so that interior-point methods, which work for the frictionless problem,
apply to the problem with friction only as far as its solution set is convex, and their efficiency
"may be problematic" (Anitescu & Hart (lecture), slides "Solving the LCP" and "Nonconvex solution
set"). Anitescu and Hart relax it into two convex problems and iterate between them (Anitescu &
Hart 2004; the relaxations are sometimes called "Anitescu–Potra" after the LCP they relax):

**P1(Γ)** — the normal row gets :math:`-U\lambda + \Gamma`:

.. math::
    0 \le p_n &\perp W_n^T v^{l+1} + \Psi_n/h - U\lambda + \Gamma \ge 0 \\
    0 \le \beta &\perp D^T v^{l+1} + E\lambda \ge 0 \\
    0 \le \lambda &\perp U p_n - E^T\beta \ge 0

with :math:`M v^{l+1} - W_b p_b - W_n p_n - D\beta = M v^l + p_{ext}` (and the joints). The
coupling of :math:`(p_n, \beta)` with :math:`\lambda` is skew-symmetric, so P1 is a monotone
(convex) LCP; a solution with :math:`\Gamma = U\lambda` solves the original problem.

**P2(λ)** — the friction cone dropped, the sliding speeds :math:`\lambda` fixed:

.. math::
    0 \le p_n \perp W_n^T v^{l+1} + \Psi_n/h \ge 0, \qquad
    0 \le \beta \perp D^T v^{l+1} + E\lambda \ge 0,

a convex QP (symmetric positive semidefinite LCP). Its velocity is the original one when
:math:`\lambda` is the original's; it dissipates energy and satisfies non-penetration exactly.

**Λ(v)**: :math:`\lambda_j = \max_i (-d_i^T v)` over contact j's directions (the smallest
sliding-speed multiplier compatible with v; the slides print :math:`\max_i d_i^Tv`, equal when the
directions come in opposite pairs).

In :func:`fixed_point`, from SPARSE_MIN_SIZE variables of P1 on (without joints), both
subproblems are first solved by sparse primal-dual active-set steps (Hintermüller, Ito & Kunisch
2002) on the quasi-definite system of a basis (Vanderbei 1995), each point verified by Lemke's
row-scaled rule. On a pile with more contact rows than velocities, :math:`W^T M^{-1} W` is singular
and the impulses are not unique; where the active-set steps cycle there, proximal rounds solve the
subproblem with :math:`\tfrac{\rho}{2}\|x - x_k\|^2` added, :math:`\rho` shrinking from round to
round (the proximal point method, Rockafellar 1976), by the same steps on systems that are never
singular, each point verified on the subproblem itself. Where a subproblem still finds none, the
step is solved by Lemke's method (both are
copositive-plus, so ray termination proves infeasibility), with the Cholesky factor and
:math:`W^T A W` computed once per call. :func:`p1` and :func:`p2` use Lemke's method.
"""
import numpy as np
import scipy.sparse as sp

from mbdcp.formulations.crash import crash_basis
from mbdcp.formulations.registry import Formulation, register
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import stabilization as stab
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.problem import (
    CompressedStep,
    call_core,
    compressed_step,
    full_joint_impulse,
    solve_joints,
    step_data,
    warm_start_flags,
)
from mbdcp.infrastructure.results import FixedPointResult, LCPData, RelaxResult
from mbdcp.infrastructure.status import Status

__all__ = ["fixed_point", "p1", "p2", "sliding_speed"]

_STATUS = tuple(Status)
# From this size of P1 (2 n_c + m) on, P1 and P2 are first solved by sparse active-set steps
SPARSE_MIN_SIZE = 48
# Below this many velocities, scipy.sparse matrices are made dense (a copy costs microseconds there)
# instead of compressed: checking and compressing them costs about a millisecond of scipy calls,
# several times the solve of such a step
COMPRESS_MIN_VELOCITIES = 256


def _data(M, Wn, D, E, U, v, h, p_ext, psi_n, Wb, theta, dtheta):
    """The validated StepProblem (no moving surfaces, no joint friction)."""
    return step_data(M, Wn, D, E, U, v, h, p_ext, psi_n, Wb=Wb, theta=theta, dtheta=dtheta)


def _relaxed(which, M, Wn, D, E, U, v, h, data, name, p_ext, psi_n, Wb, theta, dtheta, return_lcp, tol, max_iter):
    d = _data(M, Wn, D, E, U, v, h, p_ext, psi_n, Wb, theta, dtheta)
    max_iter, tol = val.lemke_settings(max_iter, tol)
    return_lcp = val.flag("return_lcp", return_lcp)
    _, n_c, m, *_ = d.sizes
    data = val.vector(name, data, n_c, symbol="n_c")
    if which == 2 and n_c and data.min() < 0:
        raise ValueError("lam must be nonnegative (sliding speeds)")
    v_next, p_b, z, w, F, f, status, pivots, residual = call_core(
        _core.relax, which, d, data, max_iter, tol, bool(return_lcp))
    status = _STATUS[status]
    lam = z[n_c + m:] if which == 1 else data.copy()
    return RelaxResult(
        success=status == Status.SOLVED, status=status, message=status.message, v_next=v_next,
        p_n=z[:n_c], beta=z[n_c:n_c + m], lam=lam, p_b=p_b, pivots=int(pivots), residual=float(residual),
        lcp=LCPData(F=F, f=f, z=z, w=w) if return_lcp else None,
    )


def p1(M, Wn, D, E, U, v, h, gamma, *, p_ext=None, psi_n=None, Wb=None, theta=None, dtheta=None,
       tol=None, max_iter=None, return_lcp=False):
    r"""Solve the first relaxation P1(Γ) (monotone mixed LCP in :math:`p_n, \beta, \lambda`).

    Arguments as in :func:`mbdcp.step` (``tol``, ``max_iter``: Lemke's); ``gamma`` (n_c,) is Γ. The result has ``lam``, the
    P1 multipliers :math:`\lambda`. With ``gamma = U @ lam`` of a solution of the original
    LCP, P1 reproduces that solution's velocity.

    >>> import numpy as np, mbdcp
    >>> M, Wn = np.eye(2), [[0.0], [1.0]]
    >>> D, E = [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]]
    >>> res = mbdcp.relax.p1(M, Wn, D, E, [0.1], [1.0, 0.0], 0.1, [0.0], p_ext=[0, -0.981])
    >>> bool(res.success), res.v_next.round(6).tolist()   # lifts off at mu times the sliding speed
    (True, [0.89297, 0.089297])
    """
    return _relaxed(1, M, Wn, D, E, U, v, h, gamma, "gamma", p_ext, psi_n, Wb, theta, dtheta, return_lcp,
                    tol, max_iter)


def p2(M, Wn, D, E, U, v, h, lam, *, p_ext=None, psi_n=None, Wb=None, theta=None, dtheta=None,
       tol=None, max_iter=None, return_lcp=False):
    r"""Solve the second relaxation P2(λ) (convex QP in :math:`p_n, \beta`; λ fixed).

    Arguments as in :func:`mbdcp.step` (``tol``, ``max_iter``: Lemke's; U is validated but unused:
    P2 has no cone row);
    ``lam`` (n_c,) ≥ 0 are the sliding speeds. ``res.lam`` echoes them.

    >>> import numpy as np, mbdcp
    >>> M, Wn = np.eye(2), [[0.0], [1.0]]
    >>> D, E = [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]]
    >>> res = mbdcp.relax.p2(M, Wn, D, E, [0.1], [1.0, 0.0], 0.1, [0.9], p_ext=[0, -0.981])
    >>> res.v_next.round(6).tolist()                        # sliding speed fixed at 0.9
    [0.9, 0.0]
    """
    return _relaxed(2, M, Wn, D, E, U, v, h, lam, "lam", p_ext, psi_n, Wb, theta, dtheta, return_lcp,
                    tol, max_iter)


def sliding_speed(D, E, v):
    r"""Λ(v): :math:`\lambda_j = \max(0, \max_i -d_i^T v)` over contact j's directions.

    >>> import mbdcp
    >>> mbdcp.relax.sliding_speed([[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]], [-0.5, 2.0]).tolist()
    [0.5]
    """
    D = val.as_array("D", D, 2)
    n_v, m = D.shape
    E = val.grouping("E", E, m, None, ("m", "n_c"))
    v = val.vector("v", v, n_v, symbol="n_v", where={"n_v": "D has n_v rows"})
    return _core.sliding_speed(D, E, v)


def fixed_point(M, Wn, D, E, U, v, h, *, p_ext=None, psi_n=None, Wb=None, theta=None, dtheta=None,
                algorithm=_core.DEFAULTS["fixed_point"]["algorithm"], tol=_core.DEFAULTS["fixed_point"]["tol"],
                max_iter=_core.DEFAULTS["fixed_point"]["max_iter"], max_correction_speed=None, baumgarte=1.0,
                warm_start=None, crash="ccp"):
    r"""One time step by the fixed-point algorithms 1–3 of Anitescu & Hart (2004).

    - **Algorithm 1**: Γ = 0; repeat :math:`v = P_1(\Gamma)`, :math:`\lambda = \Lambda(v)`,
      :math:`\Gamma = U\lambda`.
    - **Algorithm 2**: Γ = 0; repeat :math:`v = P_1(\Gamma)`, :math:`\lambda = \Lambda(v)`,
      :math:`v = P_2(\lambda)`, :math:`\lambda = \Lambda(v)`, :math:`\Gamma = U\lambda`.
      Stopped early it still gives a velocity that satisfies non-penetration exactly and
      dissipates energy (the friction force may leave the cone).
    - **Algorithm 3**: algorithm 2 for exactly one iteration: exact when no contact is in
      motion (a condition on all the contacts at once, not contact by contact), and
      :math:`\|v - v^3\| \le L\|U\lambda\|` with L depending on the data, where
      :math:`(v, \lambda)` is a solution of the original LCP, whenever μ lies in a set over which
      the friction cone is uniformly pointed (Anitescu & Hart (lecture), slide "Algorithm 3"); not
      in general. A cheap, good approximation for small friction or small sliding speeds.

    Algorithms 1 and 2 converge linearly to the unique velocity of the original LCP when
    :math:`\|U\|` is small enough and the configuration is regular (Mangasarian–Fromovitz:
    it can be disassembled; Anitescu & Hart 2004); for larger μ they may not converge, which is
    reported as status ``MAX_ITERATIONS`` with ``converged == False``, not as an exception.

    Parameters are those of :func:`mbdcp.step` (without moving surfaces and joint friction),
    plus ``max_correction_speed`` and ``baumgarte`` (the penetration correction of
    :func:`mbdcp.step`), ``algorithm`` (1, 2, 3), ``tol`` (stop when
    :math:`\|v_k - v_{k-1}\|_\infty \le tol \cdot \max(1, \|v_k\|_\infty)`) and ``max_iter``.
    ``warm_start`` (a previous :class:`FixedPointResult` or :class:`StepResult`, or a boolean array
    of P1's size 2 n_c + m) starts the first P1 solve (and, from a FixedPointResult, the first P2
    solve) from that result's final basis, as :func:`mbdcp.step`'s ``warm_start`` does: in a
    simulation the last step's, so that a resting pile costs a few pivots; a hint of another size
    is ignored, a wrong one costs time, never the answer.
    ``crash`` (``"ccp"``, the default, or None): without a warm start of P1's size, the first P1
    and P2 solves start from a basis guessed from a loose APGD solve of the cone complementarity
    problem that P1(0) is (where every contact's directions are opposite pairs: planar, or ±t1,
    ±t2, and P1 has at least 256 variables; see ``mbdcp.formulations.crash``), the "crash" basis
    of pivoting codes; Lemke repairs a wrong guess, so the answer is the same verified solution.
    The guess also replaces a warm start that the sparse solves of a large step could not finish
    from. None starts cold.

    Returns
    -------
    FixedPointResult
        ``v_next``, ``p_n``, ``beta`` (of the last subproblem: P1 for algorithm 1, P2 for 2 and
        3), ``lam`` = Λ(v_next), ``p_b``, ``iterations``, ``converged``, ``history``
        (:math:`\|v_k - v_{k-1}\|_\infty` per iteration, :math:`v_0` = the given v), ``status``,
        ``cone_slack`` (:math:`U p_n - E^T\beta`) and ``contact_state`` (see :class:`FixedPointResult`).

    Examples
    --------
    >>> import numpy as np, mbdcp
    >>> M, Wn = np.eye(2), [[0.0], [1.0]]
    >>> D, E = [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]]
    >>> res = mbdcp.fixed_point(M, Wn, D, E, [0.1], [1.0, 0.0], 0.1, p_ext=[0, -0.981])
    >>> bool(res.converged), res.v_next.round(6).tolist()   # mbdcp.step gives 1 - mu g h
    (True, [0.9019, 0.0])
    """
    psi_n = stab.corrected("psi_n", psi_n, h, max_correction_speed, baumgarte)
    compressed = (Wb is None and theta is None and dtheta is None and any(sp.issparse(x) for x in (M, Wn, D, E))
                  and not _small(Wn, D))
    # sparse matrices of a step that is not small stay sparse: made dense only if Lemke has to answer
    d = compressed_step(M, Wn, D, E, U, v, h, p_ext, psi_n) if compressed else _data(
        M, Wn, D, E, U, v, h, p_ext, psi_n, Wb, theta, dtheta)
    algorithm = val.integer("algorithm", algorithm, 1, 3)
    tol = val.positive_scalar("tol", tol)
    max_iter = val.positive_int("max_iter", max_iter, allow_none=False)
    n_c, m = (d.mu.shape[0], d.contact.shape[0]) if compressed else (d.E.shape[1], d.E.shape[0])
    crash = val.choice("crash", crash, ("ccp",), allow_none=True)
    start_p1 = warm_start_flags(warm_start, 2 * n_c + m)
    start_p2 = warm_start_flags(getattr(warm_start, "basis_p2", None), n_c + m)
    tried = _sparse_applies(d)
    out = _sparse(d, int(algorithm), tol, max_iter, start_p1, start_p2) if tried else None
    keep = None
    if out is None:  # small, joints, or a subproblem without a verified sparse point: Lemke
        if compressed:
            d = _data(M, Wn, D, E, U, v, h, p_ext, psi_n, Wb, theta, dtheta)
        # no hint of P1's size, or hints the sparse solves could not finish from (Lemke pivots
        # about as long from those as cold, where the guess saves most of it): start from a guess
        guess_p1, guess_p2 = crash_basis(d) if crash == "ccp" and (start_p1 is None or tried) else (None, None)
        if guess_p1 is not None:
            start_p1, start_p2 = guess_p1, guess_p2 if start_p2 is None or tried else start_p2
        out, keep = solve_joints(_core.fixed_point, d, int(algorithm), tol, max_iter, start_p1, start_p2)
    v_next, p_b, p_n, beta, lam, history, status, iterations, converged, pivots, _, basis, basis_p2 = out
    p_b = full_joint_impulse(p_b, keep, 0 if isinstance(d, CompressedStep) else d.Wb.shape[1])
    status = _STATUS[status]
    return FixedPointResult(
        success=status == Status.SOLVED, status=status, message=status.message, v_next=v_next, p_n=p_n,
        beta=beta, lam=lam, p_b=p_b, iterations=int(iterations), converged=bool(converged),
        history=history, pivots=int(pivots), algorithm=int(algorithm),
        cone_slack=d.mu * p_n - _grouped(d, beta, n_c), basis=basis, basis_p2=basis_p2,
    )


def _sparse(d, algorithm, tol, max_iter, start_p1, start_p2):
    """The outputs of the sparse active-set solves of P1 and P2 (``mbdcp/relax_sparse.h``) of a
    StepProblem or a CompressedStep where they apply (:func:`_sparse_applies`), or None where a
    subproblem ended without a verified point, for the caller's Lemke solves."""
    compressed = isinstance(d, CompressedStep)
    solve = _core.fixed_point_compressed if compressed else _core.fixed_point_sparse
    out = call_core(solve, d, algorithm, tol, max_iter, start_p1, start_p2)
    return None if _STATUS[out[6]] == Status.NUMERICAL_ERROR else out


def _sparse_applies(d):
    """Whether the sparse solves apply to the StepProblem or CompressedStep d: no joints and P1 of
    at least SPARSE_MIN_SIZE variables."""
    _, n_c, m, *rest = d.sizes
    return not (rest and rest[0]) and not _lemke_size(n_c, m)


def _lemke_size(n_c, m):
    """Whether P1 (2 n_c + m variables) is below SPARSE_MIN_SIZE: such a step goes to Lemke."""
    return 2 * n_c + m < SPARSE_MIN_SIZE


def _small(Wn, D):
    """Whether the step is small enough for its scipy.sparse matrices to be made dense rather than
    compressed (read from the shapes alone): fewer than COMPRESS_MIN_VELOCITIES velocities, or of
    Lemke's size anyway."""
    shapes = np.shape(Wn), np.shape(D)
    return all(len(x) == 2 for x in shapes) and (
        shapes[0][0] < COMPRESS_MIN_VELOCITIES or _lemke_size(shapes[0][1], shapes[1][1]))


def _grouped(d, beta, n_c):
    """E^T beta: each contact's sum of its directions' beta."""
    if isinstance(d, CompressedStep):
        return np.bincount(d.contact, weights=beta, minlength=n_c)
    return d.E.T @ beta


def _pose(s, options):
    kw, note = s.modelled(_DATA)
    return (None if note else lambda: fixed_point(s.M, s.Wn, s.D, s.E, s.mu, s.v, s.h, **kw, **options)), note


_DATA = frozenset({"p_ext", "psi_n", "Wb", "theta", "dtheta"})
register(Formulation(
    name="fixed_point", title="Fixed-point relaxations P1, P2 of the Anitescu–Potra LCP: algorithms 1, 2, 3",
    cite="Anitescu & Hart (2004)", function=fixed_point, result=FixedPointResult, derivative=None,
    contacts="directions", data=_DATA,
    options=frozenset({"algorithm", "tol", "max_iter", "warm_start", "crash", "max_correction_speed", "baumgarte"}),
    pose=_pose, variants={f"fixed_point_{a}": {"algorithm": a} for a in (1, 2, 3)},
    stepper="mbdcp.mechanics.steppers.fixed_point", algorithm=("algorithm", 3, (1, 2, 3)),
    scene_form="sparse"))  # solved in compressed storage: a scene's step is never made dense
