r"""The vjp of a plain time step (:func:`mbdcp.step` without joints, moving surfaces or gap
correction) in JAX itself, for :func:`mbdcp.jax.step` on platforms other than the CPU.

It is the C core's rule (``csrc/src/step_vjp.c``, which :func:`mbdcp.derivatives.step` extends to
every step) written with masks instead of index sets: contacts separated, sliding or sticking, the
sticking contacts' independent rows picked as the reference picks them (largest residual first, a
pivoted QR). Whatever the host decides is flagged (``ok`` False) for the host's
:func:`mbdcp.derivatives.step`, which also names the contacts of a degenerate point: degenerate
points, a system near singularity, a dependent imposed row (an impulse the reference holds at its
value: statically indeterminate contacts), and a tie between two candidate rows that a pivoted QR
could break either way.

Why a JAX copy of the C rule: XLA calls the C core only on the CPU (a custom call or a host
callback); on a GPU or TPU this rule runs inside the compiled program, on the device, where the C
rule would cost a host callback (a copy of the inputs to the host and back, and Python) per
backward pass. On the CPU, :mod:`mbdcp.jax` calls the C rule. Its thresholds are the C core's
(``step_vjp.h``, read from the compiled extension), so the three rules decide alike.
"""
import jax
import jax.numpy as jnp
import numpy as np

from mbdcp.derivatives.lcp import RCOND_MIN
from mbdcp.infrastructure import _core
from mbdcp.infrastructure.validate import OPPOSITE_RTOL

_TINY = float(np.finfo(np.float64).tiny)  # the smallest normal float64: a scale never below it
# the thresholds of the C core's step derivative (step_vjp.h; RCOND_MIN and OPPOSITE_RTOL too), so
# that the three rules take the same decisions
_RANK_CUT, _NORM_FLOOR, _TIE, _MARGIN = _core.VJP_RANK_CUT, _core.VJP_NORM_FLOOR, _core.VJP_TIE, _core.VJP_MARGIN


def _scales(M, Minv, Wn, D, own1, v, vn, p_ext, psi_n, h, p_n, beta, tol):
    """(tp, tv per contact): the zero thresholds of mbdcp.derivatives.step (its _scales)."""
    def amax(x):
        return jnp.max(jnp.abs(x), initial=0.0)
    free_acc = Minv(p_ext)
    V = jnp.maximum(jnp.max(jnp.stack([amax(v), amax(vn), amax(free_acc), amax(vn - v - free_acc)])), _TINY)
    P = jnp.max(jnp.stack([amax(M @ v), amax(M @ vn), amax(p_ext), amax(p_n), amax(beta), jnp.asarray(_TINY)]))
    S_c = V * jnp.sum(jnp.abs(Wn), axis=0) + jnp.abs(psi_n) / h
    S_d = jnp.max(jnp.where(own1, (V * jnp.sum(jnp.abs(D), axis=0))[:, None], -jnp.inf), axis=0, initial=-jnp.inf)
    return tol * P, tol * jnp.maximum(S_c, S_d)


def _active(D, w_n, w_b, w_s, p_n, beta, sigma, mu, O, tp, tv):
    """The masks of mbdcp.derivatives.step's classification (its _classify and _structural) and
    ok, False where it needs the host: degenerate points, contacts without friction, sticking
    directions whose zero-velocity set is not made of opposite pairs (a linear program decides
    there). ``O`` (m, n_c) is 1 where direction k belongs to contact c."""
    own1 = O > 0.5
    has = jnp.any(own1, axis=0)
    in_contact = p_n > tp
    sig_pos = sigma > tv
    tvd = O @ tv
    free_b = (beta > tp) & (O @ in_contact.astype(O.dtype) > 0.5)
    zero_w = w_b <= tvd
    bz = (beta <= tp) & zero_w
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
    edge = stick & (w_s <= tp)
    # sticking directions with beta = w = 0: structural when the contact's zero-w directions come
    # in opposite pairs (they positively span), the only case decided here
    cand = bz & (O @ stick.astype(O.dtype) > 0.5)
    cand_c = O.T @ cand.astype(O.dtype) > 0.5
    pool = zero_w & (O @ cand_c.astype(O.dtype) > 0.5)
    # each pooled direction's most opposite partner in its pool (by angle), then the reference's
    # test on that pair; a pair it would accept that the angle misses sends the step to the host
    same = (O @ O.T > 0.5) & pool[None, :] & ~jnp.eye(D.shape[1], dtype=bool)
    Dn = D / jnp.maximum(jnp.linalg.norm(D, axis=0), _TINY)
    partner = jnp.argmin(jnp.where(same, Dn.T @ Dn, jnp.inf), axis=1)
    scale = jnp.max(jnp.where(own1, jnp.max(jnp.abs(D), axis=0, initial=0.0)[:, None], 0.0), axis=0, initial=0.0)
    gap = jnp.max(jnp.abs(D + D[:, partner]), axis=0, initial=0.0)
    unpaired = pool & ~(jnp.any(same, axis=1) & (gap <= OPPOSITE_RTOL * (O @ scale)))
    bad = ((sep & (w_n <= tv)) | kink | lonely | (in_contact & has & (mu == 0)) | direction | edge
           | (O.T @ unpaired.astype(O.dtype) > 0.5))
    return {"in_contact": in_contact, "free_b": free_b, "slide": slide, "stick": stick, "cand": cand,
            "post_k": (arg & post[None, :]).any(axis=1), "ok": ~jnp.any(bad)}


def _greedy(R, cand, cut):
    """One block of mbdcp.derivatives.step's _independent: the candidate columns picked by largest
    residual (columns of R, what the columns kept before leave unexplained) while it exceeds
    ``cut`` (a pivoted QR), each pick orthogonalised out of R. Returns (R, picked, tie): tie where
    the runner-up's residual equalled the pick's, without being its negative, and the pick made it
    dependent (which of the two is dropped, and the gradients in D and beta, could differ from
    LAPACK's choice)."""
    def norms(R, picked):
        return jnp.where(cand & ~picked, jnp.linalg.norm(R, axis=0), -1.0)

    def more(state):
        return jnp.max(state[2], initial=-1.0) > cut

    def pick(state):
        R, picked, nrm, tie = state
        j = jnp.argmax(nrm)
        rest = nrm.at[j].set(-1.0)
        k = jnp.argmax(rest)
        near = (rest[k] >= (1.0 - _TIE) * nrm[j]) & (jnp.linalg.norm(R[:, j] + R[:, k]) > _TIE * nrm[j])
        q = R[:, j] / nrm[j]
        R = R - jnp.outer(q, q @ R)
        tie = tie | (near & (jnp.linalg.norm(R[:, k]) <= cut))  # the order decides which one is dropped
        picked = picked.at[j].set(True)
        return R, picked, norms(R, picked), tie
    picked = jnp.zeros(R.shape[1], dtype=bool)
    R, picked, _, tie = jax.lax.while_loop(more, pick, (R, picked, norms(R, picked), jnp.array(False)))
    return R, picked, tie


def _independent(X, blocks, geometry):
    """(kept, host): the kept columns (a mask) of the blocks (masks over X's columns, in order): all
    of the first, then per block a maximal subset independent of those kept before; host where the
    reference's choice is the host's to make: an imposed row dropped (blocks 1 and 2: its impulse
    would be held), a tie (see _greedy), or with ``geometry`` (gradients in psi_n, Wn or D wanted)
    a candidate dropped (block 3: the host tells whether they hold a dependence on other contacts)."""
    R, norms, kept, host = X, jnp.linalg.norm(X, axis=0), blocks[0], jnp.array(False)
    for b, block in enumerate(blocks):
        cut = _RANK_CUT * jnp.maximum(jnp.max(jnp.where(block, norms, 0.0), initial=0.0), _NORM_FLOOR)
        R, picked, tie = _greedy(R, block, cut)
        host = host | tie | (jnp.any(block & ~picked) if b in (1, 2) or (b == 3 and geometry) else False)
        if b:
            kept = kept | picked
    return kept, host


def _free(X, n_c, s, geometry):
    """(free p_n, free beta, host): the rows imposed, an independent subset at sticking contacts
    (mbdcp.derivatives.step's _drop_dependent); host where the host must decide (_independent)."""
    in_contact, free_b, slide, stick, cand = s["in_contact"], s["free_b"], s["slide"], s["stick"], s["cand"]
    O = s["O"]
    stick_b = free_b & (O @ stick.astype(O.dtype) > 0.5)
    sticking_n = in_contact & ~slide
    blocks = [jnp.concatenate([in_contact & slide, jnp.zeros_like(free_b)]),
              jnp.concatenate([sticking_n, jnp.zeros_like(free_b)]),
              jnp.concatenate([jnp.zeros_like(in_contact), stick_b]),
              jnp.concatenate([jnp.zeros_like(in_contact), cand])]
    kept, host = jax.lax.cond(jnp.any(sticking_n) | jnp.any(stick_b) | jnp.any(cand),
                              lambda: _independent(X, blocks, geometry),
                              lambda: (jnp.concatenate([in_contact, free_b]), jnp.array(False)))
    return kept[:n_c], kept[n_c:] | (free_b & ~stick_b), host


def step_vjp(a, out, cot, tol, geometry=False):
    """Gradients by input name of sum_k <cot[k], out[k]> at a plain step's solution.

    ``a``: inputs by name (M, Wn, D, E, U as (n_c,), v, h, p_ext, psi_n; absent vectors as zeros),
    ``out``: (v_next, p_n, beta, sigma), ``cot``: their cotangents (zeros where none);
    ``geometry``: the gradients in psi_n, Wn or D are wanted. Returns (gradients, ok): ok is False
    where the host's derivative must decide (see the module)."""
    M, Wn, D, E, mu, v, h = (a[k] for k in ("M", "Wn", "D", "E", "U", "v", "h"))
    p_ext, psi_n = a["p_ext"], a["psi_n"]
    vn, p_n, beta, sigma = out
    n_c, m = Wn.shape[1], D.shape[1]
    L = jnp.linalg.cholesky(M)

    def Minv(b):
        return jax.scipy.linalg.cho_solve((L, True), b)
    own = jnp.argmax(E, axis=1) if m else jnp.zeros(0, dtype=int)
    own1 = own[:, None] == jnp.arange(n_c)[None, :]  # (m, n_c): direction k belongs to contact c
    O = own1.astype(M.dtype)
    tp, tv = _scales(M, Minv, Wn, D, own1, v, vn, p_ext, psi_n, h, p_n, beta, tol)
    w_n = Wn.T @ vn + psi_n / h
    w_b = D.T @ vn + O @ sigma
    w_s = mu * p_n - O.T @ beta
    s = _active(D, w_n, w_b, w_s, p_n, beta, sigma, mu, O, tp, tv)
    J = jnp.concatenate([Wn, D], axis=1)
    X = jax.scipy.linalg.solve_triangular(L, J, lower=True)  # the rows in the metric of M^-1
    fn, fb, host = _free(X, n_c, dict(s, O=O), geometry)
    fs, post_k, ok = s["slide"], s["post_k"], s["ok"]
    g_v, g_n, g_b, g_s = cot
    # a separated contact's sigma follows the sliding speed of its slowest direction
    gs_k = post_k * (O @ g_s)
    g_v = g_v - D @ gs_k
    # the implicit-function system in the free multipliers (p_n, beta, sigma), identity elsewhere
    MJ = Minv(J)
    act = jnp.concatenate([fn, fb, fs]).astype(M.dtype)
    nJ = n_c + m
    K = jnp.zeros((nJ + n_c, nJ + n_c), M.dtype)
    K = K.at[:nJ, :nJ].set(X.T @ X)
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
    # the pivots' spread only bounds the condition number: the host's estimate decides near its limit
    ok = ok & ~host & (jnp.min(u, initial=1.0) > _MARGIN * RCOND_MIN * jnp.max(u, initial=1.0)) & finite \
        & jnp.all(jnp.isfinite(L))
    return g, ok
