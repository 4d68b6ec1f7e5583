r"""The instantaneous (acceleration-level) contact model (Trinkle et al., seed 000 section 2;
DESIGN.md section 5).

For contacts with zero normal velocity, Newton–Euler with contact forces

.. math::  M a = k + W_n c_n + D_r \beta + \sum_{j\ \mathrm{sliding}} \mu_j c_{n,j}\, d_{j^*}

with, for every contact, :math:`0 \le c_n \perp W_n^T a + \dot W_n^T v \ge 0`; for rolling
contacts the friction law on accelerations,

.. math::
    0 \le \beta \perp D_r^T a + \dot D_r^T v + E_r\sigma \ge 0, \qquad
    0 \le \sigma \perp U_r c_n - E_r^T\beta \ge 0,

and for sliding contacts the kinetic law: friction :math:`\mu_j c_{n,j}` along the direction
:math:`d_{j^*}` of contact j's columns of D most opposed to the sliding velocity. This is an
LCP in :math:`(c_n, \beta, \sigma)` that can have no solution (Painlevé's paradox): Lemke's
method then ends on a ray, reported as ``RAY_TERMINATION`` — the reason time-stepping
(:func:`mbdcp.step`) is used instead.
"""
import numpy as np
import scipy.linalg

from mbdcp import _validate as val
from mbdcp._problem import contact_data
from mbdcp.lemke import lemke
from mbdcp.results import InstantaneousResult, LCPData

__all__ = ["instantaneous"]


def instantaneous(M, Wn, D, E, U, v, k, *, dWn_v=None, dD_v=None, slide_tol=1e-9, return_lcp=False):
    r"""Contact forces and accelerations of the instantaneous model.

    Parameters
    ----------
    M, Wn, D, E, U : as in :func:`mbdcp.step`; every contact is assumed closed with zero
        normal velocity.
    v : (n_v,) current velocity (decides which contacts slide).
    k : (n_v,) applied force (gravity, gyroscopic terms, ...).
    dWn_v, dD_v : (n_c,), (m,) velocity-product terms :math:`\dot W_n^T v`, :math:`\dot D^T v`.
    slide_tol : a contact slides when :math:`\max_i |d_i^T v|` over its directions exceeds it.

    Returns
    -------
    InstantaneousResult
        ``a``, ``c_n``, ``beta`` (m,: zero on sliding contacts), ``sigma`` (n_c,: zero on
        sliding contacts), ``sliding`` (bool per contact), ``status``, ``success``.

    Examples
    --------
    A block resting on a table carries its weight:

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.instantaneous(2.0 * np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]],
    ...                           [[1.0], [1.0]], [0.5], [0.0, 0.0], [0.0, -2.0 * 9.81])
    >>> bool(res.success), float(res.c_n[0]), res.a.tolist()
    (True, 19.62, [0.0, 0.0])
    """
    M, Wn, D, E, mu, v = contact_data(M, Wn, D, E, U, v)
    n_v, n_c, m = M.shape[0], Wn.shape[1], D.shape[1]
    k = val.vector("k", k, n_v, symbol="n_v")
    dWn_v = np.zeros(n_c) if dWn_v is None else val.vector("dWn_v", dWn_v, n_c, symbol="n_c")
    dD_v = np.zeros(m) if dD_v is None else val.vector("dD_v", dD_v, m, symbol="m")
    slide_tol = val.positive_scalar("slide_tol", slide_tol)
    try:
        chol = scipy.linalg.cho_factor(M)
    except np.linalg.LinAlgError:
        raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)") from None

    owner = E.argmax(axis=1) if m else np.zeros(0, dtype=int)
    speeds = D.T @ v
    sliding = np.zeros(n_c, dtype=bool)
    Wf = Wn.copy()  # the direction each normal force acts along, kinetic friction included
    for j in range(n_c):
        cols = np.flatnonzero(owner == j)
        if cols.size and np.abs(speeds[cols]).max() > slide_tol:
            sliding[j] = True
            Wf[:, j] += mu[j] * D[:, cols[np.argmin(speeds[cols])]]
    rolling_dirs = ~sliding[owner] if m else np.zeros(0, dtype=bool)
    Dr, Er = D[:, rolling_dirs], E[np.ix_(rolling_dirs, ~sliding)]
    n_r, m_r = Er.shape[1], Dr.shape[1]

    # LCP in z = (c_n, beta_r, sigma_r): rows use the constraint normals, columns the forces.
    rows = np.hstack([Wn, Dr])
    cols = np.hstack([Wf, Dr])
    A = rows.T @ scipy.linalg.cho_solve(chol, cols)
    b = rows.T @ scipy.linalg.cho_solve(chol, k) + np.concatenate([dWn_v, dD_v[rolling_dirs]])
    N = n_c + m_r + n_r
    F = np.zeros((N, N))
    F[: n_c + m_r, : n_c + m_r] = A
    F[n_c:n_c + m_r, n_c + m_r:] = Er
    F[n_c + m_r:, :n_c] = np.diag(mu)[~sliding]
    F[n_c + m_r:, n_c:n_c + m_r] = -Er.T
    f = np.concatenate([b, np.zeros(n_r)])
    res = lemke(F, f)
    z = res.z
    c_n, beta_r, sigma_r = z[:n_c], z[n_c:n_c + m_r], z[n_c + m_r:]
    a = scipy.linalg.cho_solve(chol, k + Wf @ c_n + Dr @ beta_r)
    beta = np.zeros(m)
    beta[rolling_dirs] = beta_r
    sigma = np.zeros(n_c)
    sigma[~sliding] = sigma_r
    return InstantaneousResult(
        success=res.success, status=res.status, message=res.message, a=a, c_n=c_n, beta=beta, sigma=sigma,
        sliding=sliding, pivots=res.pivots, residual=res.residual,
        lcp=LCPData(F=F, f=f, z=z, w=res.w) if return_lcp else None,
    )
