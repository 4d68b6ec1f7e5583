r"""Contact states: which contacts of a time step separate, stick or slide.

Every time-step result (:class:`~mbdcp.StepResult`, :class:`~mbdcp.FixedPointResult`,
:class:`~mbdcp.FullRankResult`, :class:`~mbdcp.CCPResult`) has a ``contact_state`` property: an
array with one :class:`ContactState` per contact, decided from the solution:

- **SEPARATING** when the normal impulse vanishes, :math:`p_n \le \tau_p` (the contact carries no
  load: the bodies part or only touch);
- **SLIDING** when it carries load, the relative tangential velocity is nonzero (the formulation's
  sliding variable exceeds :math:`\tau_v`) and the friction impulse is on the boundary of the
  friction cone (its slack is at most :math:`\tau_p`; complementarity makes both hold together at an
  exact solution, and the slack check keeps a rounding-size slip of a resting body from counting);
- **STICKING** otherwise (load, no slip; friction anywhere in the cone).

The tolerances are relative to the size of the solution, plus the result's own residual where
it has one: :math:`\tau_p = \epsilon\,\max(\|p_n\|_\infty, \|\text{friction}\|_\infty) + r` and
:math:`\tau_v = \epsilon\,s_v + r`, with :math:`\epsilon` = ``RTOL`` = 1e-9 and :math:`s_v` the
velocity scale of the step (see each result's docstring for :math:`r`, :math:`s_v` and the
sliding variable).
"""
from enum import IntEnum

import numpy as np

__all__ = ["RTOL", "ContactState", "classify"]

RTOL = 1e-9  # relative part of the tolerances (results of direct methods are exact to rounding)


class ContactState(IntEnum):
    """State of one contact over a time step: SEPARATING (no normal impulse), STICKING (normal
    impulse, no relative tangential velocity), SLIDING (normal impulse, friction on the cone
    boundary opposing a nonzero relative tangential velocity).

    >>> import mbdcp
    >>> mbdcp.ContactState(2), int(mbdcp.ContactState.STICKING)
    (SLIDING, 1)
    """

    SEPARATING = 0
    STICKING = 1
    SLIDING = 2

    def __repr__(self):  # short in arrays and tables: array([SLIDING, STICKING], dtype=object)
        return self.name

    __str__ = __repr__


_MEMBERS = np.array(list(ContactState), dtype=object)


def _inf_norm(*arrays):
    return max((float(np.max(np.abs(a))) for a in arrays if np.size(a)), default=0.0)


def classify(p_n, slip, *, p_tol, slip_tol):
    """Contact states from normal impulses and a nonnegative slip measure per contact.

    Parameters
    ----------
    p_n : array_like, shape (n_c,)
        Normal impulses.
    slip : array_like, shape (n_c,)
        A measure of the relative tangential speed (a sliding-speed multiplier
        :math:`\\sigma`, :math:`\\lambda`, or a norm of the tangential velocity).
    p_tol, slip_tol : float
        Nonnegative absolute tolerances: SEPARATING when ``p_n <= p_tol``, else SLIDING when
        ``slip > slip_tol``, else STICKING.

    Returns
    -------
    ndarray (n_c,) of :class:`ContactState` (dtype object).

    >>> classify([0.0, 1.0, 1.0], [5.0, 0.0, 0.3], p_tol=1e-12, slip_tol=1e-12).tolist()
    [SEPARATING, STICKING, SLIDING]
    """
    p_n = np.asarray(p_n, dtype=float)
    slip = np.asarray(slip, dtype=float)
    if p_n.ndim != 1:
        raise ValueError(f"p_n must be 1-D (n_c,), got shape {p_n.shape}")
    if slip.shape != p_n.shape:
        raise ValueError(f"slip must have shape (n_c,) = {p_n.shape}, got {slip.shape}")
    for name, x in (("p_tol", p_tol), ("slip_tol", slip_tol)):
        if not (np.isscalar(x) and np.isfinite(x) and x >= 0):
            raise ValueError(f"{name} must be a nonnegative finite number, got {x!r}")
    codes = np.where(p_n <= p_tol, 0, np.where(slip > slip_tol, 2, 1))
    return _MEMBERS[codes]


def _per_contact_max(x, n_c):
    """Largest entry of each contact's block of a flat array with equal-size blocks (0 if empty)."""
    x = np.asarray(x, dtype=float).reshape(n_c, -1)
    return x.max(axis=1) if x.shape[1] else np.zeros(n_c)


_BIG = float(np.finfo(np.float64).max)


def _sliding_rule(p_n, slip, slack, p_tol, v_tol):
    """classify, with SLIDING only where the friction is also on the cone boundary (slack <= p_tol):
    a slip of rounding size at a contact well inside the cone is no slip. Tolerances that overflow
    (a result of huge data, or an unsolved one with an infinite residual) are held at the largest
    float."""
    p_tol, v_tol = (min(float(t), _BIG) for t in (p_tol, v_tol))
    states = classify(p_n, slip, p_tol=p_tol, slip_tol=v_tol)
    if slack is not None:
        inside = np.asarray(slack) > p_tol
        states[inside & (states == ContactState.SLIDING)] = ContactState.STICKING
    return states


def step_states(res):
    """Stewart–Trinkle / Anitescu–Potra results: slip = sigma (or lam), cone slack U p_n - E^T beta."""
    slip = res.sigma if hasattr(res, "sigma") else res.lam
    residual = getattr(res, "residual", 0.0)
    p_tol = RTOL * _inf_norm(res.p_n, res.beta) + residual
    v_tol = RTOL * _inf_norm(res.v_next, slip) + residual
    return _sliding_rule(res.p_n, slip, res.cone_slack, p_tol, v_tol)


def full_rank_states(res):
    """Full-rank results: slip = max_j (kappa_plus + kappa_minus) per contact, slack = min_j sigma_j+-."""
    n_c = res.p_n.shape[0]
    slip = _per_contact_max(res.kappa_plus + res.kappa_minus, n_c)
    p_tol = RTOL * _inf_norm(res.p_n, res.p_t) + res.residual
    v_tol = RTOL * _inf_norm(res.v_next, res.kappa_plus, res.kappa_minus) + res.residual
    return _sliding_rule(res.p_n, slip, res.cone_slack, p_tol, v_tol)


def ccp_states(res):
    """CCP results: slip = ||(v_u, v_w)|| of ``contact_velocity``; tolerances from the residual."""
    gamma = res.gamma
    if res.contact_velocity is None:
        raise ValueError("this CCPResult has no contact_velocity: contact states need the contacts' relative velocity")
    slip = np.hypot(res.contact_velocity[:, 1], res.contact_velocity[:, 2])
    rel = RTOL + 10.0 * res.residual  # the residual is relative to ||p||_inf (velocities)
    scale_v = res.velocity_scale if res.velocity_scale is not None else _inf_norm(res.v_next, res.contact_velocity)
    return classify(gamma[:, 0], slip, p_tol=min(rel * _inf_norm(gamma), _BIG), slip_tol=min(rel * scale_v, _BIG))
