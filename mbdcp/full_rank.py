r"""Full-rank discretized friction (Peiret, Kövecses & Font-Llagunes; DESIGN.md section 4).

Stewart–Trinkle friction with opposite direction pairs gives a rank-deficient LCP: the
columns of :math:`d` and :math:`-d` are dependent. Peiret et al. discretize the *sliding
velocity* instead, :math:`u_t = \sum_j e_j(\kappa_{j+} - \kappa_{j-})`, keep the friction
impulse :math:`p_t` as a 2-vector per contact, and couple the two saturations through a
"phantom inertia" :math:`\rho > 0`:

.. math::
    M(v^{l+1} - v) - W_t p_t - W_n p_n &= p_{ext} \\
    W_t^T v^{l+1} - E\kappa_+ + E\kappa_- &= 0 \\
    0 \le p_n \perp W_n^T v^{l+1} + \Psi_n/h &\ge 0 \\
    0 \le \kappa_+ \perp \sigma_- = \mu p_n + E^T p_t + \rho\kappa_- &\ge 0 \\
    0 \le \kappa_- \perp \sigma_+ = \mu p_n - E^T p_t + \rho\kappa_+ &\ge 0

Eliminating :math:`v^{l+1}` and :math:`p_t` (Schur complement with
:math:`S = W_t^T M^{-1} W_t`) leaves an LCP in :math:`(p_n, \kappa_+, \kappa_-)` whose lead
matrix has full rank. :math:`\rho` does not change the dynamics: :math:`\kappa_{j+}` and
:math:`\kappa_{j-}` are never both positive.
"""
import numpy as np

from mbdcp import _core
from mbdcp import _validate as val
from mbdcp._problem import call_core
from mbdcp._problem import friction_coefficients
from mbdcp.results import FullRankResult, LCPData
from mbdcp.status import Status

__all__ = ["full_rank_step", "tangent_directions"]

_STATUS = tuple(Status)


def tangent_directions(n_d):
    """The n_d unit directions e_j = (cos(pi j/n_d), sin(pi j/n_d)) in a contact's (u, w) plane,
    as a (2, n_d) array (evenly spaced in [0, pi), the first along u)."""
    ang = np.pi * np.arange(n_d) / n_d
    return np.vstack([np.cos(ang), np.sin(ang)])


def full_rank_step(M, Wn, Wt, mu, v, h, *, n_d=2, rho=None, p_ext=None, psi_n=None, return_lcp=False):
    r"""One time step with the full-rank discretized friction model, at velocity level.

    Parameters
    ----------
    M : (n_v, n_v) symmetric positive definite.
    Wn : (n_v, n_c) normal Jacobian.
    Wt : (n_v, 2 n_c) tangent Jacobian: columns 2i, 2i+1 are contact i's tangent pair
        (u_i, w_i); must have full column rank.
    mu : (n_c,) friction coefficients (a scalar applies to all), >= 0.
    v : (n_v,) velocity; h : time step > 0.
    n_d : directions per contact, evenly spaced in [0, pi) from u_i (>= 1; 2 gives u and w).
    rho : phantom inertia > 0. Default: the mean diagonal entry of :math:`E^T S^{-1} E`, the
        effective mass one direction sees, so the LCP is well scaled; any positive value gives
        the same velocity.
    p_ext, psi_n : applied impulse (n_v,) and gaps (n_c,).
    return_lcp : also return the LCP (F, f, z, w) in z = (p_n, kappa_plus, kappa_minus).

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
    M = val.mass_matrix("M", M)
    n_v = M.shape[0]
    Wn = val.matrix("Wn", Wn, (n_v, None), ("n_v", "n_c"))
    n_c = Wn.shape[1]
    Wt = val.matrix("Wt", Wt, (n_v, 2 * n_c), ("n_v", "2 n_c"))
    mu_a = friction_coefficients("mu", mu, n_c)
    v = val.vector("v", v, n_v, symbol="n_v")
    h = val.positive_scalar("h", h)
    n_d = val.positive_int("n_d", n_d, allow_none=False)
    rho = 0.0 if rho is None else val.positive_scalar("rho", rho)
    p_ext = val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v")
    psi_n = val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c")
    v_next, p_t, z, w, F, f, rho_used, status, pivots, residual = call_core(
        _core.full_rank_step, M, Wn, Wt, mu_a, v, h, n_d, rho, p_ext, psi_n, bool(return_lcp),
        rank_deficient="Wt")
    status = _STATUS[status]
    K = n_c * n_d
    return FullRankResult(
        success=status == Status.SOLVED, status=status, message=status.message, v_next=v_next,
        p_n=z[:n_c], p_t=p_t.reshape(n_c, 2), kappa_plus=z[n_c:n_c + K].reshape(n_c, n_d),
        kappa_minus=z[n_c + K:].reshape(n_c, n_d), rho=float(rho_used), pivots=int(pivots),
        residual=float(residual), lcp=LCPData(F=F, f=f, z=z, w=w) if return_lcp else None,
        cone_slack=w[n_c:].reshape(2, n_c, n_d).min(axis=(0, 2)) if n_d else np.zeros(n_c),
    )
