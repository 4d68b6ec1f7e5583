r"""Full-rank discretized friction (Peiret, Kövecses & Font-Llagunes, eqs. 1–8), at velocity level.

Stewart–Trinkle friction with opposite direction pairs gives a rank-deficient LCP: the
columns of :math:`d` and :math:`-d` are dependent. The discretized friction model of Glocker
(2001) discretizes the pre-sliding tangential acceleration instead, :math:`\dot u_t = \sum_j
e_j(\kappa_{j+} - \kappa_{j-})`, and keeps the friction :math:`p_t` a 2-vector per contact;
Peiret et al.'s contribution is the "phantom inertia" :math:`\rho > 0` that couples the two
saturations of each direction. Here the same construction is applied to the time step (the
project's adaptation: impulses, and :math:`\kappa_\pm` discretizing the sliding velocity):

.. math::
    M(v^{l+1} - v) - W_t p_t - W_n p_n &= p_{ext} \\
    W_t^T v^{l+1} - E\kappa_+ + E\kappa_- &= 0 \\
    0 \le p_n \perp W_n^T v^{l+1} + \Psi_n/h &\ge 0 \\
    0 \le \kappa_+ \perp \sigma_- = \mu p_n + E^T p_t + \rho\kappa_- &\ge 0 \\
    0 \le \kappa_- \perp \sigma_+ = \mu p_n - E^T p_t + \rho\kappa_+ &\ge 0

Eliminating :math:`v^{l+1}` and :math:`p_t` (Schur complement with
:math:`S = W_t^T M^{-1} W_t`) leaves an LCP in :math:`(p_n, \kappa_+, \kappa_-)` whose lead
matrix has full rank if the contact forces are not redundant (Peiret et al., after eq. 8: then
the normal and tangent Jacobians have full rank); with redundant contacts (a box on four coplanar
corners) it does not, and ``compliance`` makes the tangential relation compliant.
:math:`\rho` does not change the dynamics: :math:`\kappa_{j+}` and :math:`\kappa_{j-}` are
never both positive, whatever :math:`\rho` (Peiret et al., after eq. 3).
"""
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import scipy.linalg as sla

from mbdcp.formulations.lemke import lemke
from mbdcp.formulations.registry import Formulation, register
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.problem import call_core, cholesky, finite_lcp, pair_data, schur_factor
from mbdcp.infrastructure.results import FullRankResult, LCPData, _Result
from mbdcp.infrastructure.status import Status

__all__ = ["FullRankAccelerationResult", "full_rank_acceleration", "full_rank_step", "tangent_directions"]

_STATUS = tuple(Status)


def tangent_directions(n_d):
    """The n_d unit directions e_j = (cos(pi j/n_d), sin(pi j/n_d)) in a contact's (u, w) plane,
    as a (2, n_d) array (evenly spaced in [0, pi), the first along u)."""
    n_d = val.positive_int("n_d", n_d, allow_none=False)
    val.fits_in_memory("n_d", n_d, 16 * n_d, "for the (2, n_d) directions")
    ang = np.pi * np.arange(n_d) / n_d
    return np.vstack([np.cos(ang), np.sin(ang)])


def _lcp_size(n_c, n_d, n_v):
    """n_d checked against the memory the LCP of n_c (1 + 2 n_d) unknowns and its reduction take."""
    n_d = val.positive_int("n_d", n_d, allow_none=False)
    N = n_c * (1 + 2 * n_d)
    val.fits_in_memory("n_d", n_d, 8 * (N * N + 4 * N * (n_v + 1)) + 16 * n_d,
                       f"for the LCP of n_c (1 + 2 n_d) = {N} unknowns")
    return n_d


def full_rank_step(M, Wn, Wt, mu, v, h, *, n_d=2, rho=None, p_ext=None, psi_n=None, tol=None, max_iter=None,
                   return_lcp=False, compliance=None):
    r"""One time step with the full-rank discretized friction model, at velocity level.

    Parameters
    ----------
    M : array_like, shape (n_v, n_v)
        Symmetric positive definite mass matrix.
    Wn : array_like, shape (n_v, n_c)
        Normal Jacobian.
    Wt : array_like, shape (n_v, 2 n_c)
        Tangent Jacobian: columns 2i, 2i+1 are contact i's tangent pair (u_i, w_i). Without full
        column rank (redundant contacts: a box on four corners) the tangential relation is made
        compliant, see ``compliance``.
    mu, v, h : float or array_like
        As for :func:`mbdcp.ccp`: friction coefficients (n_c,) >= 0 (a scalar applies to all), the
        velocity at the start of the step (n_v,) and the time step > 0.
    n_d : int
        Directions per contact, evenly spaced in [0, pi) from u_i (>= 1; 2 gives u and w).
    rho : float, optional
        Phantom inertia > 0. Default: the mean diagonal entry of :math:`E^T S^{-1} E`, the
        effective mass one direction sees, so the LCP is well scaled; any positive value gives
        the same velocity.
    p_ext : array_like, shape (n_v,), optional
        Applied impulse over the step.
    psi_n : array_like, shape (n_c,), optional
        Gaps at the start of the step.
    tol, max_iter : optional
        Lemke's verification tolerance and pivot limit (see :func:`mbdcp.lemke`).
    return_lcp : bool
        Also return the LCP (F, f, z, w) in z = (p_n, kappa_plus, kappa_minus).
    compliance : float, optional
        c >= 0 turns the tangential relation into
        :math:`W_t^T v^{l+1} + c\,p_t = E(\kappa_+ - \kappa_-)`, i.e. :math:`S + cI` for :math:`S`: a
        documented regularisation that makes :math:`p_t` unique when :math:`W_t` lacks full column
        rank. Default None: 0 when :math:`S` is regular (the model as published), else
        :math:`10^{-8}\max_i S_{ii}` (the velocity then violates the tangential relation by
        :math:`c\,|p_t|`, far below the step's own error). The value used is ``res.compliance``.

    Returns
    -------
    FullRankResult
        ``v_next``, ``p_n``, ``p_t`` (n_c, 2) in (u, w) components, ``kappa_plus`` and
        ``kappa_minus`` (n_c, n_d), ``rho`` used, ``status``, ``success``, ``lcp``, ``cone_slack``
        (per contact the least :math:`\sigma_{j\pm}`) and ``contact_state`` (see :class:`FullRankResult`).

    Examples
    --------
    A unit particle on a 30° incline with mu = 0.3 < tan 30°: it slides down with
    h g (sin 30° - mu cos 30°).

    >>> import numpy as np, mbdcp
    >>> th, h, g = np.radians(30), 0.01, 9.81
    >>> n, u, w = [-np.sin(th), 0, np.cos(th)], [np.cos(th), 0, np.sin(th)], [0, 1, 0]
    >>> res = mbdcp.full_rank_step(np.eye(3), np.array([n]).T, np.array([u, w]).T, 0.3,
    ...                            np.zeros(3), h, p_ext=[0, 0, -g * h])
    >>> round(float(-res.v_next @ u), 8), round(float(h * g * (np.sin(th) - 0.3 * np.cos(th))), 8)
    (0.02356287, 0.02356287)
    """
    M, Wn, Wt, mu_a, v = pair_data(M, Wn, Wt, mu, v)
    n_v, n_c = Wn.shape
    h = val.positive_scalar("h", h)
    n_d = _lcp_size(n_c, n_d, n_v)
    rho = 0.0 if rho is None else val.positive_scalar("rho", rho)
    # None: automatic (-1 for the C core)
    compliance = -1.0 if compliance is None else val.nonnegative_scalar("compliance", compliance)
    return_lcp = val.flag("return_lcp", return_lcp)
    p_ext = val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v")
    psi_n = val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c")
    max_iter, tol = val.lemke_settings(max_iter, tol)
    v_next, p_t, z, w, F, f, rho_used, status, pivots, residual, c_used = call_core(
        _core.full_rank_step, M, Wn, Wt, mu_a, v, h, n_d, rho, p_ext, psi_n, bool(return_lcp), float(compliance),
        max_iter, tol, rank_deficient="Wt", named={"M": M, "Wn": Wn, "Wt": Wt, "p_ext": p_ext, "psi_n": psi_n, "h": h})
    status = _STATUS[status]
    K = n_c * n_d
    return FullRankResult(
        success=status == Status.SOLVED, status=status, message=status.message, v_next=v_next,
        p_n=z[:n_c], p_t=p_t.reshape(n_c, 2), kappa_plus=z[n_c:n_c + K].reshape(n_c, n_d),
        kappa_minus=z[n_c + K:].reshape(n_c, n_d), rho=float(rho_used), pivots=int(pivots),
        residual=float(residual), lcp=LCPData(F=F, f=f, z=z, w=w) if return_lcp else None,
        cone_slack=w[n_c:].reshape(2, n_c, n_d).min(axis=(0, 2)) if n_d else np.zeros(n_c),
        compliance=float(c_used),
    )


@dataclass(frozen=True, repr=False)
class FullRankAccelerationResult(_Result):
    """Result of :func:`full_rank_acceleration`: accelerations ``a`` (n_v,), normal forces ``c_n``
    (n_c,), friction forces ``c_t`` (n_c, 2) in (u, w) components, ``kappa_plus`` and
    ``kappa_minus`` (n_c, n_d) (zero on sliding contacts), ``sliding`` (bool per contact), the
    phantom inertia ``rho`` used, Lemke's ``pivots`` and ``residual``, and the LCP when asked."""

    success: bool
    status: Status
    message: str
    a: np.ndarray
    c_n: np.ndarray
    c_t: np.ndarray
    kappa_plus: np.ndarray
    kappa_minus: np.ndarray
    sliding: np.ndarray
    rho: float
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)


def full_rank_acceleration(M, Wn, Wt, mu, v, k, *, n_d=2, rho=None, dWn_v=None, dWt_v=None, slide_tol=1e-9,
                           tol=None, max_iter=None, return_lcp=False):
    r"""The full-rank discretized friction model at acceleration level (Peiret et al., eq. 8).

    For closed contacts (zero normal velocity), with :math:`W_n = J_n^T`, :math:`W_t = J_t^T`:

    .. math::
        \begin{bmatrix} M & -W_t & -W_n & 0 & 0 \\ W_t^T & 0 & 0 & -E & E \\ W_n^T & 0 & 0 & 0 & 0 \\
        0 & E^T & \mu & 0 & \rho \\ 0 & -E^T & \mu & \rho & 0 \end{bmatrix}
        \begin{bmatrix} a \\ c_t \\ c_n \\ \kappa_+ \\ \kappa_- \end{bmatrix} +
        \begin{bmatrix} -k \\ \dot J_t v \\ \dot J_n v \\ 0 \\ 0 \end{bmatrix} =
        \begin{bmatrix} 0 \\ 0 \\ \dot u_n \\ \sigma_- \\ \sigma_+ \end{bmatrix},

    :math:`0 \le c_n \perp \dot u_n \ge 0`, :math:`0 \le \kappa_+ \perp \sigma_- \ge 0`,
    :math:`0 \le \kappa_- \perp \sigma_+ \ge 0` (k: applied minus Coriolis forces,
    :math:`f_a - c`). The tangential acceleration :math:`\dot u_t = J_t a + \dot J_t v` of a
    contact at rest is :math:`E(\kappa_+ - \kappa_-)`: zero while it sticks, and its friction
    saturates against it when it starts to slip. :math:`a` and :math:`c_t` are eliminated
    (Schur complement :math:`S = W_t^TM^{-1}W_t`), leaving an LCP in
    :math:`(c_n, \kappa_+, \kappa_-)` of full rank if the contact forces are not redundant
    (Peiret et al., after eq. 8). A contact already sliding (tangential velocity above
    ``slide_tol``) gets Coulomb's kinetic force :math:`-\mu c_n u_t/|u_t|` instead, exactly
    opposite its sliding velocity (Peiret et al.'s model concerns contacts that do not slide).
    Like :func:`mbdcp.instantaneous` the problem can have no solution (Painlevé); Lemke then
    ends on a ray.

    Parameters
    ----------
    M, Wn, Wt, mu, n_d, rho : array_like, float and int
        As in :func:`full_rank_step` (forces instead of impulses; the default rho is the mean
        diagonal entry of :math:`E^TS^{-1}E` over the contacts at rest).
    v : array_like, shape (n_v,)
        Velocity.
    k : array_like, shape (n_v,)
        Applied force minus Coriolis and centrifugal terms.
    dWn_v : array_like, shape (n_c,), optional
        :math:`\dot J_n v`.
    dWt_v : array_like, shape (2 n_c,) or (n_c, 2), optional
        :math:`\dot J_t v`.
    slide_tol : float
        A contact slides when its tangential speed exceeds it.
    tol, max_iter : optional
        Lemke's verification tolerance and pivot limit (see :func:`mbdcp.lemke`).
    return_lcp : bool
        Also return the LCP (F, f, z, w) in z = (c_n, kappa_plus, kappa_minus) of the contacts at
        rest (all normal forces first).

    Returns
    -------
    FullRankAccelerationResult

    Examples
    --------
    A unit particle moving at 2 m/s along the inside of a vertical ring of radius 0.5, at its
    bottom: :math:`\dot J_n v = -u^2/R` and the ring pushes with :math:`m(g + u^2/R)`.

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.full_rank_acceleration(np.eye(2), [[0.0], [1.0]], [[1.0, 0.0], [0.0, 0.0]], 0.0,
    ...                                    [2.0, 0.0], [0.0, -9.81], dWn_v=[-2.0 ** 2 / 0.5])
    >>> round(float(res.c_n[0]), 10), res.a.round(10).tolist()
    (17.81, [0.0, 8.0])
    """
    M, Wn, Wt, mu_a, v = pair_data(M, Wn, Wt, mu, v)
    n_v, n_c = Wn.shape
    k = val.vector("k", k, n_v, symbol="n_v")
    n_d = _lcp_size(n_c, n_d, n_v)
    rho = None if rho is None else val.positive_scalar("rho", rho)
    dWn_v = np.zeros(n_c) if dWn_v is None else val.vector("dWn_v", dWn_v, n_c, symbol="n_c")
    if dWt_v is None:
        dWt_v = np.zeros(2 * n_c)
    else:
        dWt_v = val.as_array("dWt_v", dWt_v)
        if dWt_v.shape not in ((n_c, 2), (2 * n_c,)):
            raise ValueError(f"dWt_v must have shape (2 n_c,) = ({2 * n_c},) or (n_c, 2) = ({n_c}, 2), got {dWt_v.shape}")
        dWt_v = dWt_v.reshape(2 * n_c)
    slide_tol = val.positive_scalar("slide_tol", slide_tol)
    return_lcp = val.flag("return_lcp", return_lcp)
    chol = cholesky(M)
    with np.errstate(over="ignore", invalid="ignore"):
        u_t = (Wt.T @ v).reshape(n_c, 2)
    if not np.all(np.isfinite(u_t)):
        raise ValueError("Wt^T v overflows float64: Wt's entries (up to "
                         f"{np.abs(Wt).max():.3g}) times v's; rescale the problem (change units)")
    speed = np.hypot(u_t[:, 0], u_t[:, 1])  # no overflow of the squares
    sliding = speed > slide_tol
    Wf = Wn.copy()  # the direction each normal force acts along, kinetic friction included
    for i in np.flatnonzero(sliding):
        Wf[:, i] -= mu_a[i] * Wt[:, 2 * i:2 * i + 2] @ (u_t[i] / speed[i])
    rest = np.flatnonzero(~sliding)
    s = rest.size
    tcols = np.ravel(np.column_stack([2 * rest, 2 * rest + 1]))
    Wtr, dWtr = Wt[:, tcols], dWt_v[tcols]
    E = np.kron(np.eye(s), tangent_directions(n_d))  # (2s, s n_d)
    K = s * n_d
    Minv_k, Minv_Wf = sla.cho_solve(chol, k), sla.cho_solve(chol, Wf)
    if s:
        X = sla.cho_solve(chol, Wtr)
        schol = schur_factor(chol, Wtr, "Wt", 1e-10, " over the contacts at rest")
        Sinv_E = sla.cho_solve(schol, E)
        # c_t = L z + l0 and a = A z + a0 in z = (c_n, kappa_plus, kappa_minus)
        L = np.hstack([-sla.cho_solve(schol, X.T @ Wf), Sinv_E, -Sinv_E])
        l0 = -sla.cho_solve(schol, dWtr + X.T @ k)
        rho_used = float(np.mean(np.diag(E.T @ Sinv_E))) if rho is None else rho
    else:
        L, l0 = np.zeros((0, n_c)), np.zeros(0)
        rho_used = 0.0 if rho is None else rho
    A = np.hstack([Minv_Wf, np.zeros((n_v, 2 * K))]) + (X @ L if s else 0.0)
    a0 = Minv_k + (X @ l0 if s else 0.0)
    Mu = np.zeros((K, n_c))
    Mu[np.arange(K), np.repeat(rest, n_d)] = mu_a[np.repeat(rest, n_d)]
    EtL, Etl0 = E.T @ L, E.T @ l0
    N = n_c + 2 * K
    F = np.zeros((N, N))
    F[:n_c] = Wn.T @ A
    F[n_c:n_c + K] = EtL
    F[n_c:n_c + K, :n_c] += Mu
    F[n_c:n_c + K, n_c + K:] += rho_used * np.eye(K)
    F[n_c + K:] = -EtL
    F[n_c + K:, :n_c] += Mu
    F[n_c + K:, n_c:n_c + K] += rho_used * np.eye(K)
    f = np.concatenate([Wn.T @ a0 + dWn_v, Etl0, -Etl0])
    finite_lcp(F, f, {"M": M, "Wn": Wn, "Wt": Wt, "k": k})
    res = lemke(F, f, tol=tol, max_iter=max_iter)
    z = res.z
    c_n = z[:n_c]
    c_t = np.zeros((n_c, 2))
    if s:
        c_t[rest] = (L @ z + l0).reshape(s, 2)
    c_t[sliding] = -(mu_a[sliding] * c_n[sliding])[:, None] * u_t[sliding] / speed[sliding][:, None]
    # a from the forces themselves (not A z + a0): M a = k + Wn c_n + Wt c_t then holds row by row at
    # each row's own scale, also beside a row of k many orders larger
    a = sla.cho_solve(chol, k + Wn @ c_n + Wt @ c_t.ravel())
    kp, km = np.zeros((n_c, n_d)), np.zeros((n_c, n_d))
    kp[rest], km[rest] = z[n_c:n_c + K].reshape(s, n_d), z[n_c + K:].reshape(s, n_d)
    return FullRankAccelerationResult(
        success=res.success, status=res.status, message=res.message, a=a, c_n=c_n, c_t=c_t, kappa_plus=kp,
        kappa_minus=km, sliding=sliding, rho=float(rho_used), pivots=res.pivots, residual=res.residual,
        lcp=LCPData(F=F, f=f, z=z, w=res.w) if return_lcp else None,
    )


def _pose(s, options):
    """The step with the tangent pairs of D's directions and n_d = half the directions per contact
    (its pyramid |e_j^T p_t| <= mu p_n differs from Stewart–Trinkle's for n_d = 2)."""
    kw, note = s.modelled(_DATA)
    n_c = s.Wn.shape[1]
    if s.Wt is None:
        note = s.wt_note
    elif n_c and (np.any(s.n_d % 4) or np.any(s.n_d != s.n_d[0])):
        note = "the full-rank model needs a 2-D tangent plane (n_d a multiple of 4) and one n_d for all contacts"
    n_d = max(int(s.n_d[0]) // 2, 1) if n_c else 2
    return (None if note else lambda: full_rank_step(s.M, s.Wn, s.Wt, s.mu, s.v, s.h, n_d=n_d, **kw, **options)), note


_DATA = frozenset({"p_ext", "psi_n"})
register(Formulation(
    name="full_rank", title="Full-rank discretized Coulomb friction LCP (phantom inertia rho)",
    cite="Glocker (2001); Peiret, Kövecses & Font-Llagunes (extended abstract)", function=full_rank_step, result=FullRankResult,
    derivative=None, contacts="pairs", data=_DATA, options=frozenset({"rho", "tol", "max_iter", "compliance"}),
    pose=_pose))
