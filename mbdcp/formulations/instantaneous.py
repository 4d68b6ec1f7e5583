r"""The instantaneous (acceleration-level) contact model (Trinkle 2003, section 2, eqs. 5–24).

For contacts with zero normal velocity, Newton–Euler with contact forces

.. math::  M a = k + W_n c_n + D_r \beta + \sum_{j\ \mathrm{sliding}} \mu_j c_{n,j}\, d_{j^*}

with, for every contact, :math:`0 \le c_n \perp W_n^T a + \dot W_n^T v \ge 0`; for rolling
contacts the friction law on accelerations,

.. math::
    0 \le \beta \perp D_r^T a + \dot D_r^T v + E_r\sigma \ge 0, \qquad
    0 \le \sigma \perp U_r c_n - E_r^T\beta \ge 0,

and for sliding contacts the kinetic law: friction :math:`\mu_j c_{n,j}` along the direction
:math:`d_{j^*}` of contact j's columns of D most opposed to the sliding velocity. Trinkle
(2003, eqs. 12 and 17) makes the kinetic force exactly opposite the sliding velocity,
:math:`-\mu_j c_{n,j} v_{f,j}/\|v_{f,j}\|`; the polygon's direction differs from it by up to
half the angle between neighbouring directions, and equals it when a direction points straight
against the motion (:func:`mbdcp.full_rank_acceleration` uses the exact direction). This is an
LCP in :math:`(c_n, \beta, \sigma)` that can have no solution (Painlevé's paradox; Trinkle
2003, section 2.2, after Trinkle, Pang, Sudarsky & Lo 1997): Lemke's method then ends on a ray,
reported as ``RAY_TERMINATION`` — the reason time-stepping (:func:`mbdcp.step`) is used instead.

Bilateral joints (Trinkle 2003, eq. 19) add forces :math:`W_b c_b` with :math:`c_b` free and

.. math::  W_b^T a + k_b = 0, \qquad k_b = \dot W_b^T v + \frac{\partial^2\Theta}{\partial q\,\partial t}G v
           + \frac{\partial^2\Theta}{\partial t^2},

eliminated with the Schur complement :math:`S = W_b^T M^{-1} W_b`. Joint dry friction of at most
:math:`c_{max}` (Trinkle 2003, eqs. 16, 18, 23) acts along the joint's directions :math:`D_j`: on a
sliding joint it is :math:`c_{max}` along the direction most opposed to the motion; on a joint at
rest it obeys the acceleration-level law of eq. 23, linearized like the contacts',

.. math::
    0 \le \beta_j \perp D_{j}^T a + \dot D_j^T v + E_j\sigma_j \ge 0, \qquad
    0 \le \sigma_j \perp c_{max} - E_j^T\beta_j \ge 0.
"""
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from mbdcp.formulations.lemke import lemke
from mbdcp.formulations.registry import Formulation, register
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.problem import _JOINT_RANK_TOL, cholesky, contact_data, finite_lcp, joint_friction_data, schur_factor
from mbdcp.infrastructure.results import InstantaneousResult, LCPData

__all__ = ["InstantaneousJointResult", "instantaneous"]


@dataclass(frozen=True, repr=False)
class InstantaneousJointResult(InstantaneousResult):
    """:class:`mbdcp.InstantaneousResult` of a system with joints (``Wb`` or ``Dj`` given), with
    ``c_b`` (n_b,) joint forces, ``beta_j`` (m_j,) and ``sigma_j`` (n_j,) of the joint friction
    (zero on sliding joints) and ``sliding_j`` (bool per joint)."""

    c_b: np.ndarray = field(default_factory=lambda: np.zeros(0))
    beta_j: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sigma_j: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sliding_j: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def _joint_data(n_v, Wb, dWb_v, Dj, Ej, beta_max, dDj_v):
    """Validated joint arrays (empty when absent), like :func:`mbdcp.step`'s."""
    if Wb is None:
        if dWb_v is not None:
            raise ValueError("dWb_v needs the joint Jacobian Wb")
        Wb = np.zeros((n_v, 0))
    else:
        Wb = val.matrix("Wb", Wb, (n_v, None), ("n_v", "n_b"))
    n_b = Wb.shape[1]
    dWb_v = np.zeros(n_b) if dWb_v is None else val.vector("dWb_v", dWb_v, n_b, symbol="n_b")
    if Dj is None:
        if Ej is not None or beta_max is not None or dDj_v is not None:
            raise ValueError("Ej, beta_max and dDj_v need the joint friction directions Dj")
        return Wb, dWb_v, np.zeros((n_v, 0)), np.zeros((0, 0)), np.zeros(0), np.zeros(0)
    Dj, Ej, beta_max = joint_friction_data(n_v, Dj, Ej, beta_max)
    m_j = Dj.shape[1]
    dDj_v = np.zeros(m_j) if dDj_v is None else val.vector("dDj_v", dDj_v, m_j, symbol="m_j")
    return Wb, dWb_v, Dj, Ej, beta_max, dDj_v


def _sliding(speeds, owner, n_groups, tol):
    """Per group: whether it slides (some |speed| > tol), and the column most opposed to the motion."""
    sliding = np.zeros(n_groups, dtype=bool)
    opposed = np.zeros(n_groups, dtype=int)
    for j in range(n_groups):
        cols = np.flatnonzero(owner == j)
        if cols.size and np.abs(speeds[cols]).max() > tol:
            sliding[j] = True
            opposed[j] = cols[np.argmin(speeds[cols])]
    return sliding, opposed


def instantaneous(M, Wn, D, E, U, v, k, *, dWn_v=None, dD_v=None, slide_tol=1e-9, tol=None, max_iter=None,
                  return_lcp=False, Wb=None, dWb_v=None, Dj=None, Ej=None, beta_max=None, dDj_v=None):
    r"""Contact forces and accelerations of the instantaneous model.

    Parameters
    ----------
    M, Wn, D, E, U : array_like
        As in :func:`mbdcp.step`; every contact is assumed closed with zero normal velocity.
    v : array_like, shape (n_v,)
        Current velocity (decides which contacts slide).
    k : array_like, shape (n_v,)
        Applied force (gravity, gyroscopic terms, ...).
    dWn_v : array_like, shape (n_c,), optional
        Velocity-product term :math:`\dot W_n^T v`.
    dD_v : array_like, shape (m,), optional
        Velocity-product term :math:`\dot D^T v`.
    slide_tol : float
        A contact slides when :math:`\max_i |d_i^T v|` over its directions exceeds it.
    tol, max_iter : optional
        Lemke's verification tolerance and pivot limit (see :func:`mbdcp.lemke`).
    return_lcp : bool
        Also return the LCP as ``res.lcp``.
    Wb : array_like, shape (n_v, n_b), optional
        Bilateral joint Jacobian (full column rank).
    dWb_v : array_like, shape (n_b,), optional
        The joints' acceleration-level right side :math:`k_b` of Trinkle (2003), eq. 19 (e.g.
        :math:`\dot W_b^T v`).
    Dj, Ej : array_like, shapes (n_v, m_j) and (m_j, n_j), optional
        Joint dry friction directions and their grouping, as in :func:`mbdcp.step`; a joint slides
        when a speed along its directions exceeds ``slide_tol``.
    beta_max : array_like, shape (n_j,), optional
        The largest joint friction *force* :math:`c_{max}` (not an impulse).
    dDj_v : array_like, shape (m_j,), optional
        :math:`\dot D_j^T v`.

    Returns
    -------
    InstantaneousResult
        ``a``, ``c_n``, ``beta`` (m,: zero on sliding contacts), ``sigma`` (n_c,: zero on
        sliding contacts), ``sliding`` (bool per contact), ``status``, ``success``. With ``Wb``
        or ``Dj`` given, an :class:`InstantaneousJointResult` that also has ``c_b``, ``beta_j``,
        ``sigma_j`` and ``sliding_j``.

    Examples
    --------
    A block resting on a table carries its weight:

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.instantaneous(2.0 * np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]],
    ...                           [[1.0], [1.0]], [0.5], [0.0, 0.0], [0.0, -2.0 * 9.81])
    >>> bool(res.success), float(res.c_n[0]), res.a.tolist()
    (True, 19.62, [0.0, 0.0])

    A pendulum bob (m = 1, l = 2) at 60° from the bottom swinging at 1.5 rad/s, pinned by the
    joint :math:`|q| = l` (:math:`W_b = q/l`, :math:`k_b = |v|^2/l`): the rod pulls with
    :math:`m(g\cos\theta + \omega^2 l)`:

    >>> th, w, l = np.radians(60), 1.5, 2.0
    >>> q, v = l * np.array([np.sin(th), -np.cos(th)]), w * l * np.array([np.cos(th), np.sin(th)])
    >>> res = mbdcp.instantaneous(np.eye(2), np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 0)), [], v,
    ...                           [0.0, -9.81], Wb=(q / l)[:, None], dWb_v=[v @ v / l])
    >>> round(float(-res.c_b[0]), 10), round(float(9.81 * np.cos(th) + w * w * l), 10)
    (9.405, 9.405)
    """
    c = contact_data(M, Wn, D, E, U, v)
    M, Wn, D, E, mu, v = c.M, c.Wn, c.D, c.E, c.mu, c.v
    n_v, n_c, m = M.shape[0], Wn.shape[1], D.shape[1]
    k = val.vector("k", k, n_v, symbol="n_v")
    dWn_v = np.zeros(n_c) if dWn_v is None else val.vector("dWn_v", dWn_v, n_c, symbol="n_c")
    dD_v = np.zeros(m) if dD_v is None else val.vector("dD_v", dD_v, m, symbol="m")
    slide_tol = val.positive_scalar("slide_tol", slide_tol)
    joints = Wb is not None or Dj is not None
    Wb, dWb_v, Dj, Ej, c_max, dDj_v = _joint_data(n_v, Wb, dWb_v, Dj, Ej, beta_max, dDj_v)
    n_b, m_j, n_j = Wb.shape[1], Dj.shape[1], Ej.shape[1]
    return_lcp = val.flag("return_lcp", return_lcp)
    chol = cholesky(M)

    owner = E.argmax(axis=1) if m else np.zeros(0, dtype=int)
    sliding, opposed = _sliding(D.T @ v, owner, n_c, slide_tol)
    Wf = Wn.copy()  # the direction each normal force acts along, kinetic friction included
    for j in np.flatnonzero(sliding):
        Wf[:, j] += mu[j] * D[:, opposed[j]]
    rolling_dirs = ~sliding[owner] if m else np.zeros(0, dtype=bool)
    Dr, Er = D[:, rolling_dirs], E[np.ix_(rolling_dirs, ~sliding)]
    n_r, m_r = Er.shape[1], Dr.shape[1]

    owner_j = Ej.argmax(axis=1) if m_j else np.zeros(0, dtype=int)
    sliding_j, opposed_j = _sliding(Dj.T @ v, owner_j, n_j, slide_tol)
    if sliding_j.any():  # a sliding joint's friction is known: c_max against the motion
        k = k + Dj[:, opposed_j[sliding_j]] @ c_max[sliding_j]
    resting_dirs = ~sliding_j[owner_j] if m_j else np.zeros(0, dtype=bool)
    Djr, Ejr = Dj[:, resting_dirs], Ej[np.ix_(resting_dirs, ~sliding_j)]
    mj_r, nj_r = Djr.shape[1], Ejr.shape[1]

    # LCP in z = (c_n, beta_r, beta_jr, sigma_r, sigma_jr): rows use the constraint normals, columns the forces.
    if mj_r:
        rows, cols = np.hstack([Wn, Dr, Djr]), np.hstack([Wf, Dr, Djr])
    else:
        rows, cols = np.hstack([Wn, Dr]), np.hstack([Wf, Dr])
    Minv_cols, Minv_k = scipy.linalg.cho_solve(chol, cols), scipy.linalg.cho_solve(chol, k)
    if n_b:
        # joint forces eliminated: a = M^-1 (f + Wb c_b) with Wb^T a + k_b = 0 for every force f
        X = scipy.linalg.cho_solve(chol, Wb)
        Xt_cols, Xt_k = X.T @ cols, X.T @ k + dWb_v
        # the right-hand sides checked before the Schur solves (an overflow named, not scipy's words)
        finite_lcp(Xt_cols, Xt_k, {"M": M, "Wn": Wn, "D": D, "Wb": Wb, "Dj": Dj, "k": k})
        schol = schur_factor(chol, Wb, "Wb", _JOINT_RANK_TOL, " (redundant joints)")
        Minv_cols = Minv_cols - X @ scipy.linalg.cho_solve(schol, Xt_cols)
        Minv_k = Minv_k - X @ scipy.linalg.cho_solve(schol, Xt_k)
    A = rows.T @ Minv_cols
    b = rows.T @ Minv_k + np.concatenate([dWn_v, dD_v[rolling_dirs], dDj_v[resting_dirs]])
    o2 = n_c + m_r
    o3 = o2 + mj_r
    o4 = o3 + n_r
    N = o4 + nj_r
    F = np.zeros((N, N))
    F[:o3, :o3] = A
    F[n_c:o2, o3:o4] = Er
    F[o2:o3, o4:] = Ejr
    F[o3:o4, :n_c] = np.diag(mu)[~sliding]
    F[o3:o4, n_c:o2] = -Er.T
    F[o4:, o2:o3] = -Ejr.T
    f = np.concatenate([b, np.zeros(n_r), c_max[~sliding_j]])
    finite_lcp(F, f, {"M": M, "Wn": Wn, "D": D, "Wb": Wb, "Dj": Dj, "k": k})
    res = lemke(F, f, tol=tol, max_iter=max_iter)
    z = res.z
    c_n, beta_r, beta_jr, sigma_r, sigma_jr = z[:n_c], z[n_c:o2], z[o2:o3], z[o3:o4], z[o4:]
    force = k + Wf @ c_n + Dr @ beta_r
    if mj_r:
        force = force + Djr @ beta_jr
    c_b = np.zeros(0)
    if n_b:
        c_b = -scipy.linalg.cho_solve(schol, X.T @ force + dWb_v)
        force = force + Wb @ c_b
    a = scipy.linalg.cho_solve(chol, force)
    beta = np.zeros(m)
    beta[rolling_dirs] = beta_r
    sigma = np.zeros(n_c)
    sigma[~sliding] = sigma_r
    common = {
        "success": res.success, "status": res.status, "message": res.message, "a": a, "c_n": c_n, "beta": beta,
        "sigma": sigma, "sliding": sliding, "pivots": res.pivots, "residual": res.residual,
        "lcp": LCPData(F=F, f=f, z=z, w=res.w) if return_lcp else None,
    }
    if not joints:
        return InstantaneousResult(**common)
    beta_j = np.zeros(m_j)
    beta_j[resting_dirs] = beta_jr
    sigma_j = np.zeros(n_j)
    sigma_j[~sliding_j] = sigma_jr
    return InstantaneousJointResult(**common, c_b=c_b, beta_j=beta_j, sigma_j=sigma_j, sliding_j=sliding_j)


register(Formulation(
    name="instantaneous", title="Instantaneous (acceleration-level) model; Painlevé's paradox is a status",
    cite="Trinkle (2003), section 2, eqs. 5–24", function=instantaneous, result=InstantaneousResult,
    derivative=None, contacts=None, data=frozenset(), options=frozenset({"slide_tol", "tol", "max_iter"}), pose=None))
