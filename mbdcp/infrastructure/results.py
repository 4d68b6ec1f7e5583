"""Result objects: frozen dataclasses with named fields, ``success``, ``status``, ``message`` first."""
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from mbdcp.infrastructure.status import Status

__all__ = ["LemkeResult", "LCPData", "StepResult", "RelaxResult", "FixedPointResult", "FullRankResult",
           "InstantaneousResult", "CCPResult", "CoulombResult", "LocalCCPResult"]


def _repr_array(a):
    return np.array2string(np.asarray(a), precision=6, threshold=12, edgeitems=3, suppress_small=True)


class _Result:
    """Shared behaviour: a readable repr listing the fields."""

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name in self.__dataclass_fields__:
            val = getattr(self, name)
            if isinstance(val, np.ndarray):
                val = _repr_array(val)
            elif isinstance(val, Status):
                val = val.name
            elif isinstance(val, list) and len(val) > 8:
                val = f"[{', '.join(map(str, val[:8]))}, ... ({len(val)} items)]"
            lines.append(f"    {name}={val},")
        lines.append(")")
        return "\n".join(lines)


def _built(cls, fields):
    """An instance of a frozen result dataclass from the dict of all its fields, without its
    __init__ (one dict update instead of one object.__setattr__ per field, and no keyword
    arguments to pack: the hot path of the small solves)."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


_OUTCOME_ATTRIBUTES = """    success : bool
        True only when ``status`` is SOLVED: the result was verified componentwise.
    status : Status
        How the solver ended (:class:`mbdcp.Status`).
    message : str
        The status in words.
"""

def _contact_states(classify, doc):
    """The ``contact_state`` property of a result: ``mbdcp.infrastructure.contact_state.<classify>``
    of the result, documented by ``doc``."""
    def get(self):
        from mbdcp.infrastructure import contact_state

        return getattr(contact_state, classify)(self)

    return property(get, doc=doc)


@dataclass(frozen=True, repr=False)
class _Outcome(_Result):
    """The fields every solver result starts with: ``success`` (True only when ``status`` is SOLVED,
    i.e. the result was verified), ``status`` (:class:`mbdcp.Status`) and its ``message``. A
    subclass's ``Attributes`` section gets their entries first."""

    success: bool
    status: Status
    message: str

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        head = "    Attributes\n    ----------\n"
        if cls.__doc__ and head in cls.__doc__:
            cls.__doc__ = cls.__doc__.replace(head, head + _OUTCOME_ATTRIBUTES, 1)


@dataclass(frozen=True, repr=False)
class LemkeResult(_Outcome):
    r"""Result of :func:`mbdcp.lemke` for LCP(M, q): z >= 0, w = M z + q >= 0, z.w = 0.

    Attributes
    ----------
    z, w : ndarray, shape (n,)
        The solution and w = M z + q (on a failure, the last basic point reached).
    pivots : int
        Pivots taken, the one bringing in z0 included.
    residual : float
        The worst row's ratio: the largest violation of a row (:math:`-w_i`, or :math:`w_i`
        where :math:`z_i > 0`) over the magnitude :math:`s_i = (|M||z| + |q|)_i` of its terms;
        0 for an exact solution, at most ``tol`` when SOLVED (:func:`mbdcp.lemke`).
    trace : list of (str, str) or None
        The (entering, leaving) variables of every pivot, when asked for.
    basis : ndarray of bool, shape (n,)
        Lemke's final basis (True where :math:`z_i` is basic): a warm start for a neighbouring LCP.
    certificate : ndarray, shape (n,), or None
        On a certified ray: y >= 0 with :math:`M^T y \le 0`, :math:`q^T y < 0` (infeasibility).
    warm_started : bool
        Whether the result was reached from the warm-start hint.
    """

    z: np.ndarray
    w: np.ndarray
    pivots: int
    residual: float
    trace: Optional[List[Tuple[str, str]]] = None
    basis: Optional[np.ndarray] = None
    certificate: Optional[np.ndarray] = None
    warm_started: bool = False


@dataclass(frozen=True, repr=False)
class LCPData(_Result):
    """The standard LCP(F, f) a time step solved, and its solution z with w = F z + f."""

    F: np.ndarray
    f: np.ndarray
    z: np.ndarray
    w: np.ndarray


@dataclass(frozen=True, repr=False)
class StepResult(_Outcome):
    r"""Result of one time step (:func:`mbdcp.step`).

    Attributes
    ----------
    v_next : ndarray, shape (n_v,)
        The velocity :math:`v^{l+1}`.
    p_n, sigma : ndarray, shape (n_c,)
        Normal impulses and sliding-speed multipliers.
    beta : ndarray, shape (m,)
        Friction impulses along the directions D.
    p_b : ndarray, shape (n_b,)
        Joint impulses.
    beta_j, sigma_j : ndarray, shape (m_j,) and (n_j,)
        Joint friction impulses and multipliers.
    pivots : int
        Lemke's pivots.
    residual : float
        The worst row's ratio of the reduced LCP(F, f) (see :class:`LemkeResult`), each row judged
        at the scale of the data that formed it: :math:`s_i = (|F||z|)_i + \max(|f_i|, \hat f_i)`
        where :math:`\hat f_i` bounds the terms summed into :math:`f_i`, :math:`(|W^T||v|)_i`,
        :math:`(|W^T M^{-1}||p_{ext}|)_i`, :math:`|\psi_{n,i}|/h` and the surface speeds. A
        rolling contact's tangential speed of 1e-16, left by the rounding of 1.43 - 1.43, is judged
        at 1.43, not at its own 1e-16.
    lcp : LCPData or None
        The reduced LCP(F, f), when asked for.
    basis : ndarray of bool
        Lemke's final basis, for ``warm_start``.
    cone_slack : ndarray, shape (n_c,)
        :math:`U p_n - E^T\beta`, the complement of sigma.
    """

    v_next: np.ndarray
    p_n: np.ndarray
    beta: np.ndarray
    sigma: np.ndarray
    p_b: np.ndarray
    beta_j: np.ndarray
    sigma_j: np.ndarray
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)
    basis: Optional[np.ndarray] = None  # Lemke's final basis of the reduced LCP (True: z_i basic)
    cone_slack: Optional[np.ndarray] = None  # (n_c,): U p_n - E^T beta, the complement of sigma

    contact_state = _contact_states("step_states", r"""One :class:`~mbdcp.ContactState` per contact (Stewart–Trinkle): SEPARATING when
        :math:`p_n \le \tau_p`; else SLIDING when the sliding-speed multiplier
        :math:`\sigma > \tau_v` (:math:`\sigma = \max_i(-d_i^T v^{l+1})` is the slip speed) and the
        friction is on the cone boundary, ``cone_slack`` :math:`U p_n - E^T\beta \le \tau_p` (both
        hold together by complementarity); else STICKING. :math:`\tau_p = 10^{-9}\max(\|p_n\|_\infty, \|\beta\|_\infty) + r`,
        :math:`\tau_v = 10^{-9}\max(\|v^{l+1}\|_\infty, \|\sigma\|_\infty) + r` with r the LCP
        residual. A contact without friction directions has no :math:`\sigma` that measures slip
        and is never SLIDING.""")


@dataclass(frozen=True, repr=False)
class RelaxResult(_Outcome):
    """Result of one relaxed subproblem (:func:`mbdcp.relax.p1`, :func:`mbdcp.relax.p2`).

    Attributes
    ----------
    v_next : ndarray, shape (n_v,)
        The velocity of the subproblem's solution.
    p_n, lam : ndarray, shape (n_c,)
        Normal impulses; sliding speeds (P1's multipliers, or P2's given lambda).
    beta : ndarray, shape (m,)
        Friction impulses.
    p_b : ndarray, shape (n_b,)
        Joint impulses.
    pivots : int
        Lemke's pivots.
    residual : float
        The worst row's ratio of the subproblem's LCP (see :class:`LemkeResult`).
    lcp : LCPData or None
        The subproblem's LCP, when asked for.
    """

    v_next: np.ndarray
    p_n: np.ndarray
    beta: np.ndarray
    lam: np.ndarray
    p_b: np.ndarray
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)


@dataclass(frozen=True, repr=False)
class FixedPointResult(_Outcome):
    r"""Result of :func:`mbdcp.fixed_point` (Anitescu & Hart's 2004 algorithms 1, 2, 3).

    Attributes
    ----------
    v_next : ndarray, shape (n_v,)
        The velocity :math:`v^{l+1}`.
    p_n, lam : ndarray, shape (n_c,)
        Normal impulses (of the last subproblem) and :math:`\lambda = \Lambda(v^{l+1})`.
    beta : ndarray, shape (m,)
        Friction impulses (of the last subproblem).
    p_b : ndarray, shape (n_b,)
        Joint impulses.
    iterations : int
        Fixed-point iterations.
    converged : bool
        The fixed point converged (the same as ``success``; kept for the fixed-point vocabulary).
    history : ndarray
        :math:`\|v_k - v_{k-1}\|_\infty` per iteration.
    pivots : int
        Lemke's pivots over all subproblems.
    algorithm : int
        1, 2 or 3.
    cone_slack : ndarray, shape (n_c,)
        :math:`U p_n - E^T\beta` of the returned impulses.
    basis, basis_p2 : ndarray of bool, shapes (2 n_c + m,), (n_c + m,)
        Lemke's final bases of P1 (variables :math:`p_n, \beta, \lambda`: the layout of
        :func:`mbdcp.step`'s LCP) and of P2 (:math:`p_n, \beta`; all False for algorithm 1),
        True where the variable is basic: the ``warm_start`` of a neighbouring step.
    """

    v_next: np.ndarray
    p_n: np.ndarray
    beta: np.ndarray
    lam: np.ndarray
    p_b: np.ndarray
    iterations: int
    converged: bool
    history: np.ndarray
    pivots: int
    algorithm: int
    cone_slack: Optional[np.ndarray] = None  # (n_c,): U p_n - E^T beta of the returned impulses
    basis: Optional[np.ndarray] = None     # P1's final basis (p_n, beta, lam), True: basic
    basis_p2: Optional[np.ndarray] = None  # P2's final basis (p_n, beta)

    contact_state = _contact_states("step_states", r"""One :class:`~mbdcp.ContactState` per contact: SEPARATING when
        :math:`p_n \le \tau_p`; else SLIDING when the sliding speed :math:`\lambda = \Lambda(v^{l+1}) > \tau_v` and
        ``cone_slack`` :math:`U p_n - E^T\beta \le \tau_p`; else STICKING (tolerances as for :attr:`StepResult.contact_state`,
        without a residual). At a
        converged fixed point :math:`\lambda` is the original LCP's :math:`\sigma`, so the friction
        of a SLIDING contact is on the cone boundary; for algorithm 3 or an unconverged run the
        state is the kinematic one of :math:`v^{l+1}` (P2 does not enforce the cone).""")


@dataclass(frozen=True, repr=False)
class FullRankResult(_Outcome):
    r"""Result of :func:`mbdcp.full_rank_step` (full-rank discretized friction).

    Attributes
    ----------
    v_next : ndarray, shape (n_v,)
        The velocity :math:`v^{l+1}`.
    p_n : ndarray, shape (n_c,)
        Normal impulses.
    p_t : ndarray, shape (n_c, 2)
        Friction impulses in (u, w) components.
    kappa_plus, kappa_minus : ndarray, shape (n_c, n_d)
        The discretized sliding velocity's parts.
    rho : float
        The phantom inertia used.
    pivots : int
        Lemke's pivots.
    residual : float
        The worst row's ratio of the LCP (see :class:`LemkeResult`).
    lcp : LCPData or None
        The LCP, when asked for.
    cone_slack : ndarray, shape (n_c,)
        Per contact the least :math:`\sigma_{j\pm}`.
    compliance : float
        The c of the tangential relation :math:`W_t^T v + c\,p_t = E\kappa` (0: as published).
    """

    v_next: np.ndarray
    p_n: np.ndarray
    p_t: np.ndarray
    kappa_plus: np.ndarray
    kappa_minus: np.ndarray
    rho: float
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)
    cone_slack: Optional[np.ndarray] = None  # (n_c,): min over j of sigma_{j+}, sigma_{j-}
    compliance: float = 0.0  # c of the tangential relation W_t^T v + c p_t = E kappa (0: as published)

    contact_state = _contact_states("full_rank_states", r"""One :class:`~mbdcp.ContactState` per contact (full-rank model):
        SEPARATING when
        :math:`p_n \le \tau_p`; else SLIDING when some :math:`\kappa_{j+} + \kappa_{j-} > \tau_v`
        (the discretized sliding velocity :math:`u_t = E(\kappa_+ - \kappa_-) = W_t^T v^{l+1}` is
        nonzero) and some :math:`\sigma_{j\pm} \le \tau_p` (``cone_slack``: friction on the
        boundary, which :math:`\kappa_{j\mp} > 0` forces); else STICKING. :math:`\tau_p = 10^{-9}\max(\|p_n\|_\infty,
        \|p_t\|_\infty) + r`,
        :math:`\tau_v = 10^{-9}\max(\|v^{l+1}\|_\infty, \|\kappa_\pm\|_\infty) + r`.""")


@dataclass(frozen=True, repr=False)
class InstantaneousResult(_Outcome):
    """Result of :func:`mbdcp.instantaneous` (acceleration-level contact model).

    Attributes
    ----------
    a : ndarray, shape (n_v,)
        Accelerations.
    c_n, sigma : ndarray, shape (n_c,)
        Normal forces and sliding multipliers.
    beta : ndarray, shape (m,)
        Friction forces along the directions D.
    sliding : ndarray of bool, shape (n_c,)
        Contacts that slide (kinetic friction).
    pivots : int
        Lemke's pivots.
    residual : float
        The worst row's ratio of the LCP (see :class:`LemkeResult`).
    lcp : LCPData or None
        The LCP, when asked for.
    """

    a: np.ndarray
    c_n: np.ndarray
    beta: np.ndarray
    sigma: np.ndarray
    sliding: np.ndarray
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)


@dataclass(frozen=True, repr=False)
class CCPResult(_Outcome):
    r"""Result of :func:`mbdcp.ccp` (cone complementarity problem).

    Attributes
    ----------
    gamma : ndarray, shape (n_c, 3)
        Per contact the (normal, u, w) impulses.
    p_b : ndarray, shape (n_b,)
        Joint impulses.
    v_next : ndarray, shape (n_v,)
        The velocity :math:`v^{l+1}`.
    iterations : int
        Iterations taken.
    residual : float
        The larger of the two relative residuals of the answer: the normwise one of ``tol``
        (:func:`mbdcp.ccp`) and the componentwise one, each contact's natural-map residual over
        the magnitudes :math:`|p| + |P|^T|M^{-1}P||\nu|` of the terms of its gradient.
        ``SOLVED`` if and only if it is at most ``tol``.
    history : ndarray
        The normwise residual per iteration.
    method : str
        ``"apgd"``, ``"pjacobi"``, ``"pgs"``, ``"newton"``, ``"ipm"`` or ``"auto"``: the method asked for.
    finished : str
        The method that ended the solve: ``method`` itself, or ``"apgd"`` when APGD finished an
        interior-point or Newton solve or ``"auto"`` never handed over (``"newton"``: APGD's check
        passed at Newton's answer; ``iterations`` then counts Newton's).
    certificate : ndarray, shape (3 n_c + n_b,), or None
        With status ``RAY_TERMINATION`` (``"ipm"``, ``"auto"``), when the problem was proved to have
        no solution: d with each contact's :math:`d_i \in K_i`, :math:`Nd = P^TM^{-1}Pd` zero up to
        a distance :math:`\delta` from :math:`K^*\times\{0\}`, and :math:`p^Td < 0` with
        :math:`-p^Td \ge R\delta`. Any solution :math:`\nu` satisfies
        :math:`(N\nu + p)^Td \ge 0`, so :math:`\|\nu\|_2 \ge -p^Td/\delta \ge R`: none exists of
        a size (R = tol / (4 eps) times the problem's natural size) whose residual could be verified
        to ``tol`` in double precision. ``gamma`` and ``p_b`` are then zero.
    contact_velocity : ndarray, shape (n_c, 3)
        Per contact :math:`(v_n, v_u, v_w) = D_i^T v^{l+1}`.
    velocity_scale : float
        :math:`\|p\|_\infty`, the size of the free relative velocities.
    polished : bool
        APGD only: the answer passed the componentwise test after a polish. When APGD meets the
        normwise tolerance but a few contacts fail the componentwise one (typically contacts whose
        impulses can be redistributed among themselves, where N has almost no curvature and APGD's
        common step moves them very slowly), those contacts and their neighbours are solved
        again as a small cone problem with the rest fixed; the result is kept only if the whole
        solution then passes both tests.
    """

    gamma: np.ndarray
    p_b: np.ndarray
    v_next: np.ndarray
    iterations: int
    residual: float
    history: np.ndarray
    method: str
    contact_velocity: Optional[np.ndarray] = None  # (n_c, 3): (v_n, v_u, v_w) = D_i^T v_next per contact
    velocity_scale: Optional[float] = None  # ||p||_inf: the free relative velocities' size
    polished: bool = False  # APGD's answer came from polishing a few contacts (see Attributes)
    finished: Optional[str] = None  # the method that ended the solve (see Attributes)
    certificate: Optional[np.ndarray] = None  # RAY_TERMINATION: proof that no solution exists

    contact_state = _contact_states("ccp_states", r"""One :class:`~mbdcp.ContactState` per contact (cone complementarity):
        SEPARATING when
        :math:`\gamma_n \le \tau_p`; else SLIDING when the relative tangential speed
        :math:`\|(v_u, v_w)\| > \tau_v` (then :math:`\gamma_i \perp d_i` puts :math:`\gamma_i` on
        the boundary of :math:`K_i`, :math:`\|\gamma_t\| = \mu_i\gamma_n`); else STICKING. With r the
        relative residual and :math:`\epsilon = 10^{-9} + 10r`:
        :math:`\tau_p = \epsilon\|\gamma\|_\infty`, :math:`\tau_v = \epsilon\|p\|_\infty`
        (``velocity_scale``: the largest free relative velocity, the residual's scale).""")


@dataclass(frozen=True, repr=False)
class CoulombResult(_Outcome):
    r"""Result of :func:`mbdcp.coulomb` (Coulomb friction on the Delassus matrix, FCLib's local problem).

    ``r`` (3 n_c,): reactions, per contact normal then tangents; ``u`` = W r + q (without de Saxcé's
    shift); ``residual``: :math:`\\|r - \\Pi_K(r - \\hat u)\\|_2 / \\|q\\|_2` with
    :math:`\\hat u = u + \\mu\\|u_T\\| e_n` (for a SOLVED result, as recomputed in extended precision);
    ``iterations``: sweeps (nsgs), fixed-point or Newton iterations (with ``"auto"``, those of all its
    phases); ``inner_iterations``: the CCP solves' iterations (fixed_point) or the Gauss-Seidel sweeps
    where Newton's line search failed; ``local_failures``: local solves where no case could be
    verified; ``history``: the residual after each iteration; ``method``: the method that ended the
    solve (for ``"auto"``, the phase: "nsgs", "newton" or "fixed_point"); ``certificate``: when the
    status is RAY_TERMINATION and a proof was found, d (3 n_c,) in K with :math:`-W^Td \\in K^*` and
    :math:`q^Td < 0`, which no solution allows (otherwise None)."""

    r: np.ndarray
    u: np.ndarray
    residual: float
    iterations: int
    history: np.ndarray
    method: str
    inner_iterations: int = 0
    local_failures: int = 0
    certificate: Optional[np.ndarray] = None


@dataclass(frozen=True, repr=False)
class LocalCCPResult(_Outcome):
    r"""Result of :func:`mbdcp.ccp_local` (the cone complementarity problem on the Delassus matrix).

    Fields as :class:`CoulombResult`, with the residual :math:`\\|r - \\Pi_K(r - u)\\|_2 / \\|q\\|_2`
    (``method`` for ``"auto"``: "pgs", "newton" or "apgd")."""

    r: np.ndarray
    u: np.ndarray
    residual: float
    iterations: int
    history: np.ndarray
    method: str
    inner_iterations: int = 0
    local_failures: int = 0
    certificate: Optional[np.ndarray] = None
