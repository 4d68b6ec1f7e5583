"""A starting ("crash") basis for the fixed-point algorithms' first P1 and P2 solves.

With Γ = 0, P1 is the cone complementarity problem of Anitescu & Tasora (2010) with the polygonal
friction cone of D: its normal row :math:`W_n^T v + \\Psi_n/h - U\\lambda \\ge 0` is the dual-cone
condition :math:`d_n \\ge \\mu \\|d_t\\|` when λ is the sliding speed. Where every contact's
directions come in opposite pairs (t, -t: the planar cone, exactly the circular one; or ±t1, ±t2),
the CCP with tangent columns t (t1, t2) is solved loosely by APGD (:func:`mbdcp.ccp`), and which
variables are positive there is the guess of P1's basis:

- p_n basic where the normal impulse is positive;
- λ basic where the contact slides or separates while moving tangentially (λ = Λ(v) > 0, its
  row U p_n - E^T β then zero);
- β_i basic along the friction impulse's component(s), and along the direction most opposed to
  the motion where λ is basic (the row d_i^T v + λ that λ makes zero).

P2(λ) gets the p_n, β part. Lemke's warm start factors the guessed basis and repairs what is wrong
with the artificial variable, so a wrong guess costs pivots, never the answer (mbdcp.lemke's
``basis``).
"""
import numpy as np
import scipy.sparse as sp

from mbdcp.infrastructure.validate import OPPOSITE_RTOL

__all__ = ["crash_basis"]

# APGD's tolerance for the guess: an active set, not an answer
CCP_TOL = 1e-4
CCP_MAX_ITER = 500
# Below this size of P1 (2 n_c + m) a cold Lemke costs less than the CCP call's fixed ~1 ms
# (30 planar contacts: 0.6 ms cold, 1.9 ms with the guess; 80 contacts: 6.8 ms cold, 3.9 ms)
MIN_SIZE = 256


def _tangents(D, E):
    """The tangent columns (n_v, 2 n_c) of the CCP and the direction indices (n_c, k) of each
    contact, or None where the directions are not opposite pairs of k = 2 or 4 consecutive columns."""
    n_c = E.shape[1]
    m = D.shape[1]
    if n_c == 0 or m % n_c:
        return None
    k = m // n_c
    idx = np.arange(m).reshape(n_c, k)
    if k not in (2, 4) or not np.array_equal(np.argmax(E, axis=1), np.repeat(np.arange(n_c), k)):
        return None
    if np.count_nonzero(E) != m:
        return None
    scale = max(np.abs(D).max(), 1e-300)
    pairs = ((0, 1),) if k == 2 else ((0, 2), (1, 3)) if np.abs(D[:, 0::4] + D[:, 2::4]).max() <= OPPOSITE_RTOL * scale \
        else ((0, 1), (2, 3))
    for a, b in pairs:
        if np.abs(D[:, idx[:, a]] + D[:, idx[:, b]]).max() > OPPOSITE_RTOL * scale:
            return None
    Wt = np.zeros((D.shape[0], 2 * n_c))
    for col, (a, _) in enumerate(pairs):
        Wt[:, col::2] = D[:, idx[:, a]]
    return Wt, idx, pairs


def crash_basis(d):
    """P1's and P2's guessed bases (int32 flags "z_i basic", sizes 2 n_c + m and n_c + m) for the
    StepProblem d, or (None, None) where no guess applies (small, no contacts, joints, other cones)."""
    from mbdcp.formulations.ccp import ccp

    _, n_c, m, n_b, *_ = d.sizes
    if n_c == 0 or n_b or 2 * n_c + m < MIN_SIZE:
        return None, None
    t = _tangents(d.D, d.E)
    if t is None:
        return None, None
    Wt, idx, pairs = t
    # M sparse: ccp inverts it body by body (a dense M would be inverted as a whole)
    r = ccp(sp.csr_matrix(d.M), d.Wn, Wt, d.mu, d.v, d.h, p_ext=d.p_ext if d.p_ext.size else None,
            psi_n=d.psi_n if d.psi_n.size else None, tol=CCP_TOL, max_iter=CCP_MAX_ITER)
    if not np.all(np.isfinite(r.gamma)) or not np.all(np.isfinite(r.v_next)):
        return None, None
    g = r.gamma
    tiny = 1e-9 * max(np.abs(g).max(), 1e-300)
    on = g[:, 0] > tiny
    opposed = -(d.D.T @ r.v_next)[idx]            # -d_i^T v per contact and direction
    lam = opposed.max(axis=1) > 1e-6 * max(r.velocity_scale, 1e-300)
    beta = np.zeros((n_c, idx.shape[1]), dtype=bool)
    for col, (a, b) in enumerate(pairs):            # the friction impulse's components: +t or -t
        beta[:, a] = on & (g[:, 1 + col] > tiny)
        beta[:, b] = on & (g[:, 1 + col] < -tiny)
    beta[np.arange(n_c), opposed.argmax(axis=1)] |= lam
    p1 = np.concatenate([on, beta.ravel(), lam]).astype(np.intc)
    return p1, np.ascontiguousarray(p1[:n_c + m])

