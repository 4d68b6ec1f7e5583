r"""The vjp of a plain time step (:func:`mbdcp.step` without joints, moving surfaces or gap
correction) in JAX itself, for :func:`mbdcp.jax.step`.

It is :func:`mbdcp.derivatives.step`'s reverse mode written with masks instead of index sets, for
the solutions whose active set needs no host decision: every contact separated (and not grazing)
or sliding with its slip directions decided, friction nonzero where in contact. Sticking contacts
(whose zero-velocity directions the reference selects by a pivoted QR), degenerate points and
singular systems are flagged (``ok`` False) for the host's :func:`mbdcp.derivatives.step`, which
also names the contacts of a degenerate point.
"""
import jax
import jax.numpy as jnp

from mbdcp.derivatives.lcp import RCOND_MIN

_TINY = 2.2250738585072014e-308  # np.finfo(float).tiny


def _scales(M, Minv, Wn, D, own1, v, vn, p_ext, psi_n, h, p_n, beta, tol):
    """(tp, tv per contact): the zero thresholds of mbdcp.derivatives.step (its _scales)."""
    free_acc = Minv(p_ext)
    amax = lambda x: jnp.max(jnp.abs(x), initial=0.0)  # noqa: E731
    V = jnp.maximum(jnp.max(jnp.stack([amax(v), amax(vn), amax(free_acc), amax(vn - v - free_acc)])), _TINY)
    P = jnp.max(jnp.stack([amax(M @ v), amax(M @ vn), amax(p_ext), amax(p_n), amax(beta), jnp.asarray(_TINY)]))
    S_c = V * jnp.sum(jnp.abs(Wn), axis=0) + jnp.abs(psi_n) / h
    S_d = jnp.max(jnp.where(own1, (V * jnp.sum(jnp.abs(D), axis=0))[:, None], -jnp.inf), axis=0, initial=-jnp.inf)
    return tol * P, tol * jnp.maximum(S_c, S_d)


def _active(w_n, w_b, p_n, beta, sigma, mu, O, tp, tv):
    """(free p_n, free beta, free sigma, post direction masks, ok): mbdcp.derivatives.step's
    classification where it needs no host decision, ok False elsewhere. ``O`` (m, n_c) is 1 where
    direction k belongs to contact c."""
    own1 = O > 0.5
    has = jnp.any(own1, axis=0)
    in_contact = p_n > tp
    sig_pos = sigma > tv
    tvd = O @ tv
    free_b = (beta > tp) & (O @ in_contact.astype(O.dtype) > 0.5)
    bz = (beta <= tp) & (w_b <= tvd)
    wm = jnp.where(own1, w_b[:, None], jnp.inf)
    w1 = jnp.min(wm, axis=0, initial=jnp.inf)
    hit = own1 & (w_b[:, None] == w1[None, :])
    arg = hit & (jnp.cumsum(hit, axis=0) == 1)  # the first minimiser of each contact
    w2 = jnp.min(jnp.where(arg, jnp.inf, wm), axis=0, initial=jnp.inf)
    sep = ~in_contact
    post = sep & has & sig_pos & (w1 <= tv)
    kink = sep & has & (w1 <= tv) & (~sig_pos | (w2 <= tv))
    slide = in_contact & has & sig_pos
    stick = in_contact & has & ~sig_pos
    lonely = slide & ~(O.T @ free_b.astype(O.dtype) > 0.5)
    direction = (O.T @ (bz & ~free_b).astype(O.dtype) > 0.5) & slide
    bad = (sep & (w_n <= tv)) | kink | stick | lonely | (in_contact & has & (mu == 0)) | direction
    return in_contact, free_b, slide, (arg & post[None, :]).any(axis=1), ~jnp.any(bad)


def step_vjp(a, out, cot, tol):
    """Gradients by input name of sum_k <cot[k], out[k]> at a plain step's solution.

    ``a``: inputs by name (M, Wn, D, E, U as (n_c,), v, h, p_ext, psi_n; absent vectors as zeros),
    ``out``: (v_next, p_n, beta, sigma), ``cot``: their cotangents (zeros where none). Returns
    (gradients, ok): ok is False where the host's derivative must decide (see the module)."""
    M, Wn, D, E, mu, v, h = (a[k] for k in ("M", "Wn", "D", "E", "U", "v", "h"))
    p_ext, psi_n = a["p_ext"], a["psi_n"]
    vn, p_n, beta, sigma = out
    n_c, m = Wn.shape[1], D.shape[1]
    cho = jax.scipy.linalg.cho_factor(M, lower=True)

    def Minv(b):
        return jax.scipy.linalg.cho_solve(cho, b)
    own = jnp.argmax(E, axis=1) if m else jnp.zeros(0, dtype=int)
    own1 = own[:, None] == jnp.arange(n_c)[None, :]  # (m, n_c): direction k belongs to contact c
    O = own1.astype(M.dtype)
    tp, tv = _scales(M, Minv, Wn, D, own1, v, vn, p_ext, psi_n, h, p_n, beta, tol)
    w_n = Wn.T @ vn + psi_n / h
    w_b = D.T @ vn + O @ sigma
    fn, fb, fs, post_k, ok = _active(w_n, w_b, p_n, beta, sigma, mu, O, tp, tv)
    g_v, g_n, g_b, g_s = cot
    # a separated contact's sigma follows the sliding speed of its slowest direction
    gs_k = post_k * (O @ g_s)
    g_v = g_v - D @ gs_k
    # the implicit-function system in the free multipliers (p_n, beta, sigma), identity elsewhere
    J = jnp.concatenate([Wn, D], axis=1)
    MJ = Minv(J)
    act = jnp.concatenate([fn, fb, fs]).astype(M.dtype)
    nJ = n_c + m
    K = jnp.zeros((nJ + n_c, nJ + n_c), M.dtype)
    K = K.at[:nJ, :nJ].set(J.T @ MJ)
    K = K.at[n_c:nJ, nJ:].set(O)            # beta rows: + dsigma
    K = K.at[nJ:, n_c:nJ].set(-O.T)         # sigma rows: mu dp_n - sum dbeta
    K = K.at[nJ:, :n_c].set(jnp.diag(mu))
    scale = jnp.maximum(jnp.max(jnp.abs(K) * act[:, None] * act[None, :], initial=0.0), 1.0)
    K = act[:, None] * K * act[None, :] + jnp.diag((1.0 - act) * scale)
    Mg = Minv(g_v)
    hvec = act * jnp.concatenate([g_n + Wn.T @ Mg, g_b + D.T @ Mg, g_s])
    lu, piv = jax.scipy.linalg.lu_factor(K)
    lam = act * jax.scipy.linalg.lu_solve((lu, piv), hvec, trans=1)
    u = jnp.abs(jnp.diagonal(lu))
    ln, lf, ls = lam[:n_c], lam[n_c:nJ], lam[nJ:]
    a_v = Mg - MJ @ lam[:nJ]
    sym = jnp.outer(a_v, v - vn)
    g = {"M": 0.5 * (sym + sym.T), "v": M @ a_v, "p_ext": a_v,
         "Wn": jnp.outer(a_v, p_n) - jnp.outer(vn, ln), "psi_n": -ln / h,
         "D": jnp.outer(a_v, beta) - jnp.outer(vn, lf + gs_k), "U": -ls * p_n,
         "h": ln @ psi_n / h ** 2, "E": jnp.zeros_like(E)}
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in g.values()]))
    ok = ok & (jnp.min(u, initial=1.0) > RCOND_MIN * jnp.max(u, initial=1.0)) & finite \
        & jnp.all(jnp.isfinite(cho[0]))
    return g, ok
