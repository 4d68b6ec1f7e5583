r"""Derivatives of one Stewart–Trinkle / Anitescu–Potra time step (:func:`mbdcp.step`; Trinkle 2003, eqs. 25–38).

The mixed LCP of :func:`mbdcp.step` is differentiated directly, in the unknowns
(v_next, p_b, p_n, beta, beta_j, sigma, sigma_j), with the active set read off the solution; see
:func:`step` for the conventions.
"""
import functools
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import lapack

from mbdcp.derivatives._common import (
    DEGENERATE_TOL,
    _Repr,
    check_keys,
    cholesky_lower,
    dense_tangent,
    finite_result,
    groups,
    lu_factor,
    lu_solve,
    momentum_change,
    sym_outer,
    tangents_of,
    tri_solve,
)
from mbdcp.derivatives.lcp import RCOND_MIN
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import stabilization as stab
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.deprecated import renamed
from mbdcp.infrastructure.problem import StepProblem, step_data
from mbdcp.infrastructure.results import StepResult
from mbdcp.infrastructure.status import Status

__all__ = ["StepDerivative", "step"]

INPUTS = ("M", "Wn", "D", "U", "v", "h", "p_ext", "psi_n", "dpsi_n", "dpsi_f", "Wb", "theta", "dtheta", "Dj",
          "beta_max")
_ALL_INPUTS = frozenset(INPUTS)
OUTPUTS = ("v_next", "p_n", "beta", "sigma", "p_b", "beta_j", "sigma_j")
# keywords of mbdcp.step that choose how the step is solved, not what it is
_SOLVER_ONLY = ("method", "return_lcp", "warm_start", "basis", "max_iter", "tol")
_TINY = float(np.finfo(float).tiny)
_EMPTY = np.zeros(0)
_EMPTY.setflags(write=False)


def _pairs_ok(z, w, tz, tw):
    """True unless some pair is clearly not complementary or clearly negative."""
    return not (((z > tz) & (w > tw)).any() or (z < -tz).any() or (w < -tw).any())


@dataclass(frozen=True, repr=False)
class StepDerivative(_Repr):
    r"""The derivative of one time step of :func:`mbdcp.step` (built by :func:`step`).

    Public fields: ``mode`` (per contact: "separated", "sticking" or "sliding", the side used at
    a degenerate contact), ``joint_mode`` (per friction joint: "sticking" or "sliding"),
    ``degenerate`` (indices into z = (p_n, beta, beta_j, sigma, sigma_j), the ordering of
    ``res.lcp``, of the pairs at which the solution has a kink), ``degenerate_kind`` (one word
    per index: "grazing", "direction", "stick-slip", "sigma"), ``degenerate_contacts`` (contact
    indices involved), ``margin`` (smallest relative distance of a decided pair from
    degeneracy; infinity when no pair is decided), ``indeterminate`` (True when dependent active constraints were dropped: the
    impulse derivatives are those of one of many impulse distributions) and ``dependent_contacts``
    (the contacts of active rows dropped as dependent on other contacts' rows or on the normals: the
    derivatives in the gaps and the constraint directions, psi_n, dpsi_n, dpsi_f, Wn, D, hold
    that dependence, and are exact only for changes that keep it; ``jvp`` warns when a tangent
    breaks it).
    """

    mode: np.ndarray
    joint_mode: np.ndarray
    degenerate: np.ndarray
    degenerate_kind: tuple
    degenerate_contacts: np.ndarray
    margin: float
    indeterminate: bool
    _d: dict = field(repr=False)

    @functools.cached_property
    def dependent_contacts(self):
        """The contacts tied by active rows dropped as dependent (see the class; found when asked
        for: only a gradient in the gaps or the directions needs them)."""
        d = self._d
        return np.array(_tied(d["own"], d["held"] + d["unused"], d["FB"], d["D"]), dtype=np.intp)

    # ---- forward mode -------------------------------------------------------------------------
    def jvp(self, **tangents):
        """Output tangents {v_next, p_n, beta, sigma, p_b, beta_j, sigma_j} for input tangents
        keyed by input name (M, Wn, D, U, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta,
        Dj, beta_max); absent inputs do not change. ``U`` takes a scalar, (n_c,) or diagonal."""
        d = self._d
        check_keys(tangents, d["inputs"], "tangent")
        t = self._tangents(tangents)
        r_v, r_rows, r_s, r_sj = self._rhs(t)
        u = tri_solve(d["L"], r_v)
        X = d["X"]
        dx = lu_solve(d["lu"], np.concatenate([r_rows - X.T @ u, r_s, r_sj]))
        dv = tri_solve(d["L"], u + X @ dx[:X.shape[1]], trans=1)
        out = self._outputs(t, dv, dx)
        if d["held"] or d["unused"]:
            # velocity scale of the tangents: the change without contact impulses, and the rows' changes
            dv_scale = max(np.abs(dv).max(), np.abs(tri_solve(d["L"], u, trans=1)).max(),
                           np.abs(r_rows).max(initial=0.0))
            self._check_dropped(t, dv, dv_scale)
        return finite_result(out, list(tangents))

    def _rhs(self, t):
        """The known sides of the linearised system for tangents t: the momentum row, the rows
        imposed with free multipliers (joints, normals, friction directions, joint friction
        directions) and the cone rows of sliding contacts and joints."""
        d = self._d
        h, vn = d["h"], d["v_next"]
        FN, FB, FBJ, FS, FSJ = d["FN"], d["FB"], d["FBJ"], d["FS"], d["FSJ"]
        r_v = momentum_change(t, d)
        for mat, imp in (("Wb", "p_b"), ("Wn", "p_n"), ("D", "beta"), ("Dj", "beta_j")):
            if t[mat] is not None:
                r_v += t[mat] @ d[imp]
        dh = t["h"] or 0.0
        r_b = -(dh * (-d["theta"] / h ** 2))
        if t["theta"] is not None:
            r_b -= t["theta"] / h
        if t["dtheta"] is not None:
            r_b -= t["dtheta"]
        if t["Wb"] is not None:
            r_b -= t["Wb"].T @ vn
        r_n = dh * d["psi_n"][FN] / h ** 2
        if t["psi_n"] is not None:
            r_n -= t["psi_n"][FN] / h
        if t["dpsi_n"] is not None:
            r_n -= t["dpsi_n"][FN]
        if t["Wn"] is not None:
            r_n -= t["Wn"][:, FN].T @ vn
        r_f = np.zeros(FB.size)
        if t["dpsi_f"] is not None:
            r_f -= t["dpsi_f"][FB]
        if t["D"] is not None:
            r_f -= t["D"][:, FB].T @ vn
        r_j = np.zeros(FBJ.size) if t["Dj"] is None else -(t["Dj"][:, FBJ].T @ vn)
        r_s = np.zeros(FS.size) if t["U"] is None else -t["U"][FS] * d["p_n"][FS]
        r_sj = np.zeros(FSJ.size) if t["beta_max"] is None else -t["beta_max"][FSJ]
        return r_v, np.concatenate([r_b, r_n, r_f, r_j]), r_s, r_sj

    def _offsets(self):
        """Where p_b, p_n[FN], beta[FB], beta_j[FBJ], sigma[FS], sigma_j[FSJ] start in the unknowns."""
        return self._d["offsets"]

    def _outputs(self, t, dv, dx):
        """The output tangents from dv and the free multipliers' changes dx; the sigma of a contact
        (joint) without friction impulse follows its sliding speed."""
        d = self._d
        out = {name: np.zeros_like(d[name]) for name in OUTPUTS}
        out["v_next"] = dv
        o = self._offsets()
        out["p_b"] = dx[o[0]:o[1]].copy()
        for name, free, i in (("p_n", "FN", 1), ("beta", "FB", 2), ("beta_j", "FBJ", 3), ("sigma", "FS", 4),
                              ("sigma_j", "FSJ", 5)):
            out[name][d[free]] = dx[o[i]:o[i + 1]]
        vn = d["v_next"]
        pc, pk = d["post_c"], d["post_k"]
        if pc.size:
            s = -(d["D"][:, pk].T @ dv)
            if t["D"] is not None:
                s -= t["D"][:, pk].T @ vn
            if t["dpsi_f"] is not None:
                s -= t["dpsi_f"][pk]
            out["sigma"][pc] = s
        pj, pjk = d["post_j"], d["post_jk"]
        if pj.size:
            s = -(d["Dj"][:, pjk].T @ dv)
            if t["Dj"] is not None:
                s -= t["Dj"][:, pjk].T @ vn
            out["sigma_j"][pj] = s
        return out

    def _check_dropped(self, t, dv, dv_scale):
        """Dropped dependent rows stay satisfied only for tangents that keep the dependence: warn
        (one-sided derivative) when a held impulse's row moves, or an unused direction's row
        would turn negative."""
        d = self._d
        vn, h, dh = d["v_next"], d["h"], t["h"] or 0.0
        mats = {"p_n": "Wn", "beta": "D", "beta_j": "Dj"}
        for rows, both in ((d["held"], True), (d["unused"], False)):
            for var, i in rows:
                name = mats[var]
                dw = d[name][:, i] @ dv + (t[name][:, i] @ vn if t[name] is not None else 0.0)
                if var == "p_n":
                    dw += -d["psi_n"][i] * dh / h ** 2 + (t["psi_n"][i] / h if t["psi_n"] is not None else 0.0) \
                        + (t["dpsi_n"][i] if t["dpsi_n"] is not None else 0.0)
                elif var == "beta" and t["dpsi_f"] is not None:
                    dw += t["dpsi_f"][i]
                # round-off scale of the row: its terms, with v_next at the step's velocity scale
                # and dv at the velocity scale of the tangents
                dcol = 0.0 if t[name] is None else np.abs(t[name][:, i]).sum() * d["V"]
                scale = np.abs(d[name][:, i]).sum() * dv_scale + dcol + 1e-300
                if (abs(dw) if both else -dw) > 1e-8 * scale:
                    warnings.warn(f"this tangent changes the relation among dependent active constraints ({var}[{i}] "
                                  "was dropped as dependent): the solution leaves its piece and the derivative is "
                                  "one-sided", RuntimeWarning, stacklevel=3)
                    return

    # ---- reverse mode -------------------------------------------------------------------------
    def vjp(self, v_next=None, p_n=None, beta=None, sigma=None, p_b=None, beta_j=None, sigma_j=None, *,
            _wanted=None):
        """Gradients keyed by input name of the loss sum_k <g_k, output_k> for output gradients
        g_k (absent ones are zero). ``U`` gets the gradient with respect to the vector mu (n_c,),
        ``M`` the symmetric gradient (valid for symmetric changes of M), ``h`` a float."""
        # _wanted (private, for the differentiable layers): only these inputs' gradients; the
        # matrix ones (M, Wn, D, Wb, Dj), outer products of n_v rows, are formed only when wanted
        return self._vjp((v_next, p_n, beta, sigma, p_b, beta_j, sigma_j), _wanted)

    def _vjp(self, cots, wanted):
        d = self._d
        FN, FB, FBJ, FS, FSJ = d["FN"], d["FB"], d["FBJ"], d["FS"], d["FSJ"]
        g = [None if x is None else dense_tangent(name, x, d[name].shape) for name, x in zip(OUTPUTS, cots)]
        h, vn = d["h"], d["v_next"]
        want = (_ALL_INPUTS if wanted is None else wanted).__contains__
        # each Jacobian's gradient is outer(a_v, impulses) - outer(v_next, c) with c the multipliers
        # of its rows (a separated contact's sigma adds its slowest direction's): c_n, c_f, c_j;
        # absent output gradients are zero, and add nothing
        g_v = np.zeros(d["n_v"]) if g[0] is None else g[0].copy()
        c_f, c_j = np.zeros(d["m"]), np.zeros(d["Dj"].shape[1])
        pc, pk = d["post_c"], d["post_k"]
        if pc.size and g[3] is not None:
            gs = g[3][pc]
            g_v -= d["D"][:, pk] @ gs
            c_f[pk] += gs
        pj, pjk = d["post_j"], d["post_jk"]
        if pj.size and g[6] is not None:
            gs = g[6][pj]
            g_v -= d["Dj"][:, pjk] @ gs
            c_j[pjk] += gs
        o = d["offsets"]
        if any(x is not None for x in g[1:]):
            g_x = np.concatenate([np.zeros(o[i + 1] - o[i]) if x is None else x if idx is None else x[idx]
                                  for i, (x, idx) in enumerate(zip((g[4], g[1], g[2], g[5], g[3], g[6]),
                                                                   (None, FN, FB, FBJ, FS, FSJ)))])
        else:
            g_x = np.zeros(o[6])
        X, L = d["X"], d["L"]
        nJ = X.shape[1]
        a = tri_solve(L, g_v)
        hvec = g_x
        hvec[:nJ] += X.T @ a
        lam = lu_solve(d["lu"], hvec, trans=1)
        a_v = tri_solve(L, a - X @ lam[:nJ], trans=1)
        lb, ln, lf, lj, ls, lsj = (lam[o[i]:o[i + 1]] for i in range(6))
        c_n = np.zeros(d["n_c"])
        c_n[FN] = ln
        c_f[FB] += lf
        c_j[FBJ] += lj
        grad = {}
        if want("v"):
            grad["v"] = d["M"] @ a_v
        if want("p_ext"):
            grad["p_ext"] = a_v.copy()
        grad["psi_n"] = -c_n / h
        if want("dpsi_n"):
            grad["dpsi_n"] = -c_n
        if want("dpsi_f"):
            grad["dpsi_f"] = -c_f
        if want("U"):
            grad["U"] = np.zeros(d["n_c"])
            grad["U"][FS] = -ls * d["p_n"][FS]
        grad["h"] = float(ln @ d["psi_n"][FN] + (lb @ d["theta"] if d["n_b"] else 0.0)) / h ** 2
        # the matrices' gradients (outer products of n_v rows) only where wanted
        if want("M"):
            grad["M"] = sym_outer(a_v, d["v"] - vn)
        if want("Wn"):
            grad["Wn"] = np.outer(a_v, d["p_n"]) - np.outer(vn, c_n)
        if want("D"):
            grad["D"] = np.outer(a_v, d["beta"]) - np.outer(vn, c_f)
        if d["n_b"]:
            if want("Wb"):
                grad["Wb"] = np.outer(a_v, d["p_b"]) - np.outer(vn, lb)
            grad["theta"] = -lb / h
            grad["dtheta"] = -lb
        if d["has_joint_friction"]:
            if want("Dj"):
                grad["Dj"] = np.outer(a_v, d["beta_j"]) - np.outer(vn, c_j)
            grad["beta_max"] = np.zeros(d["n_j"])
            grad["beta_max"][FSJ] = -lsj
        if d["psi_chain"] is not None:  # psi_n entered as the corrected gap
            grad["psi_n"], grad["h"] = d["psi_chain"].pullback(grad["psi_n"], grad["h"])
        if wanted is not None:
            grad = {n: x for n, x in grad.items() if n in wanted}
        return finite_result(grad, [n for n, x in zip(OUTPUTS, cots) if x is not None])

    def jacobian(self, of, wrt):
        """Dense Jacobian d(of)/d(wrt), shape of.shape + wrt.shape, for an output name ``of`` and an
        input name ``wrt``; built with jvp or vjp, whichever needs fewer solves."""
        d = self._d
        if of not in OUTPUTS:
            raise ValueError(f"of must be one of {', '.join(OUTPUTS)}, got {of!r}")
        check_keys([wrt], d["inputs"], "input")
        out_shape = d[of].shape
        in_shape = () if wrt == "h" else (d["n_c"],) if wrt == "U" else d[wrt].shape
        n_in, n_out = int(np.prod(in_shape)), int(np.prod(out_shape))
        J = np.zeros((n_out, n_in))
        if n_in <= n_out:
            for k in range(n_in):
                e = np.zeros(n_in)
                e[k] = 1.0
                J[:, k] = self.jvp(**{wrt: e.reshape(in_shape) if in_shape else 1.0})[of].ravel()
        else:
            for k in range(n_out):
                e = np.zeros(n_out)
                e[k] = 1.0
                J[k] = np.ravel(self.vjp(**{of: e.reshape(out_shape)})[wrt])
        return J.reshape(out_shape + in_shape)

    def _tangents(self, tangents):
        return tangents_of(tangents, INPUTS, self._d, "U", gap=("psi_n", self._d["psi_chain"]))


def _group_min(w, own, n_g, has, first, k):
    """Per group: the smallest w, the index of its first minimiser, and the second smallest
    (groups without directions get inf and -1); ``first``: the first row of each group with rows
    (rows grouped consecutively in group order), ``k`` the rows of every group if they all have
    as many, else 0."""
    inf = np.full(n_g, np.inf)
    if w.size == 0:
        return inf, np.full(n_g, -1), inf
    if k:
        # every group has k directions (the usual case): a (n_g, k) array
        W = w.reshape(n_g, k)
        low = W.argmin(axis=1)  # the first minimiser
        rows = np.arange(n_g)
        w1 = W[rows, low]
        if k == 1:
            return w1, low + rows, inf
        W = W.copy()
        W[rows, low] = np.inf
        return w1, low + rows * k, W.min(axis=1)
    w1 = inf.copy()
    w1[has] = np.minimum.reduceat(w, first)
    hit = (w == w1[own]).nonzero()[0]
    g = own[hit]
    lead = np.ones(g.size, dtype=bool)  # the first hit of each group (hits and groups ascend together)
    lead[1:] = g[1:] != g[:-1]
    arg = np.full(n_g, -1)
    arg[g[lead]] = hit[lead]
    w_rest = w.copy()
    w_rest[arg[has]] = np.inf
    w2 = inf.copy()
    w2[has] = np.minimum.reduceat(w_rest, first)
    return w1, arg, w2


_MODES = np.array(["separated", "sliding", "sticking"])
_TINY_RATIO = 1e-300


def _classify(in_contact, beta, w_beta, sigma, w_sigma, limit_zero, grouped, n_g, tv, tp):
    """Modes of friction groups (contacts or friction joints) from the solution; ``grouped``:
    (owner of each direction, has, first) of :func:`mbdcp.derivatives._common.groups`.

    Returns (mode, free_beta, free_sigma, post groups, post directions, candidates (group,
    directions) for the rank selection, degenerate list of (kind, "beta"|"sigma", index), the
    smallest margin (inf: none))."""
    own, has, first, k = grouped
    tvd = tv[own]
    free_b = beta > tp
    bz = ~free_b & (w_beta <= tvd)  # beta_k = w_k = 0
    w1, arg, w2 = _group_min(w_beta, own, n_g, has, first, k)
    sig_pos = sigma > tv
    no_slip, limited = ~sig_pos, ~limit_zero
    # friction impulses zero (no contact, or a zero limit without slip): sigma only bounded below by
    # the sliding speed max_k -(d_k^T v + ...); follow it
    free = ~in_contact | (limit_zero & no_slip)
    bound = ~free
    free_b &= bound[own]
    low = has & (w1 <= tv)
    post = free & sig_pos & low
    kink = free & low & (no_slip | (w2 <= tv))
    acting = bound & has
    slide = acting & sig_pos
    stick = acting & no_slip
    if slide.any():
        lonely = slide & ~np.bincount(own, weights=free_b, minlength=n_g).astype(bool)
        free_b[arg[lonely]] = True  # limit ~ 0: the slip direction still carries sigma
    edge = stick & (w_sigma <= tp) & limited
    mode = _MODES[np.where(in_contact, 2 - (sig_pos & (bound | ~has)), 0)]
    degenerate = []
    if kink.any():
        degenerate += [("sigma", "sigma", g) for g in np.flatnonzero(kink)]
    direction = bz & ~free_b & slide[own]
    if direction.any():
        degenerate += [("direction", "beta", k) for k in np.flatnonzero(direction)]
    if edge.any():
        degenerate += [("stick-slip", "sigma", g) for g in np.flatnonzero(edge)]
    cand = bz & stick[own]
    cands = [(g, np.flatnonzero(cand & (own == g))) for g in np.unique(own[cand])] if cand.any() else []
    margin = np.inf
    for num, den, mask in ((sigma, tv, post | slide), (w2, tv, post & ~kink & (w2 < np.inf)),
                           (w_sigma, None, stick & ~edge & limited)):
        if mask.any():
            r = num[mask] / (max(tp, _TINY_RATIO) if den is None else np.maximum(den[mask], _TINY_RATIO))
            margin = min(margin, r.min())
    post_c = np.flatnonzero(post)
    return mode, free_b, slide, post_c, arg[post_c], cands, degenerate, margin


def _opposite_pairs(cols):
    """True if every column has its negative among the columns (then they positively span their span)."""
    k = cols.shape[1]
    scale = np.abs(cols).max(initial=0.0)
    gap = np.abs(cols[:, :, None] + cols[:, None, :]).max(axis=0, initial=0.0)  # gap[i, j]: |col i + col j|
    gap[np.arange(k), np.arange(k)] = np.inf
    return bool((gap <= val.OPPOSITE_RTOL * scale).any(axis=1).all())


def _positively_spanning(cols):
    """True if some strictly positive combination of the columns is zero."""
    if _opposite_pairs(cols):
        return True
    from scipy.optimize import linprog

    k = cols.shape[1]
    r = linprog(np.zeros(k), A_eq=cols, b_eq=np.zeros(cols.shape[0]), bounds=[(1.0, None)] * k, method="highs")
    return r.status == 0


@functools.lru_cache(maxsize=256)
def _qr_work(n_r, n_k):
    """LAPACK's workspace sizes (its query) for the pivoted QR of an n_r x n_k matrix and for
    forming its economic Q, as scipy.linalg.qr asks them."""
    a = np.zeros((n_r, n_k), order="F")
    work = lapack.dgeqp3(a, lwork=-1)[3]
    k = min(n_r, n_k)
    work_q = lapack.dorgqr(a[:, :k], np.zeros(k), lwork=-1)[1]
    return int(work[0].real), int(work_q[0].real)


def _pivoted_qr(R, need_q):
    """(q or None, |diag(r)|, column order) of R's pivoted QR: the LAPACK calls and workspace
    scipy.linalg.qr(R, mode="economic", pivoting=True) makes, without its Python layers."""
    n_r, n_k = R.shape
    lwork, lwork_q = _qr_work(n_r, n_k)
    qr, jpvt, tau, _, info = lapack.dgeqp3(R, lwork=lwork)
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK's dgeqp3")
    diag = np.abs(np.diagonal(qr))
    if not need_q:
        return None, diag, jpvt - 1
    q, _, info = lapack.dorgqr(qr[:, :n_r] if n_r < n_k else qr, tau, lwork=lwork_q, overwrite_a=1)
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK's dorgqr")
    return q, diag, jpvt - 1


def _independent(L, blocks, mats):
    """Entries (name, index) of the blocks whose columns (in the metric of M^-1 = L^-T L^-1) are
    independent: all of the first block, then per block a maximal subset independent of those
    kept before (pivoted QR of what the kept columns leave unexplained). A block is a list of
    (name, indices) runs; its entries are (name, index) in that order."""
    Q = None
    kept = set()
    blocks = [[(var, idx) for var, idx in block if len(idx)] for block in blocks]
    last = max(b for b, block in enumerate(blocks) if block)
    for b, runs in enumerate(blocks):
        if not runs:
            continue
        block = [(var, i) for var, idx in runs for i in idx]
        cols = [mats[var][:, idx] for var, idx in runs]
        X = tri_solve(L, cols[0] if len(cols) == 1 else np.hstack(cols))
        # the columns' norms as np.linalg.norm forms them
        cut = _core.VJP_RANK_CUT * max(np.sqrt(np.add.reduce(X * X, axis=0)).max(), _core.VJP_NORM_FLOOR)
        R = X if Q is None else X - Q @ (Q.T @ X)
        if R.shape[0] == 0:  # no velocities: nothing is independent
            q, diag, piv = np.zeros((0, 0)), np.zeros(0), np.arange(R.shape[1])
        else:
            q, diag, piv = _pivoted_qr(R, b < last)
        rank = int(np.count_nonzero(diag > cut))
        kept.update(block if b == 0 else [block[p] for p in piv[:rank]])
        if b < last:
            Q = q[:, :rank] if Q is None else np.hstack([Q, q[:, :rank]])
    return kept


@dataclass
class _Point:
    """The step and the solution being differentiated: the validated data with absent vectors as
    zeros (the derivation uses them in products) and psi_n the gap the step used (after the
    correction, whose chain ``psi_chain`` is None without one), res's outputs by name, the
    relative tolerance deciding that an impulse or a velocity is zero, and the names of the
    vectors that were absent (zeros: terms that add nothing are skipped)."""

    p: StepProblem
    psi_chain: object
    has_joint_friction: bool
    sol: dict
    tol: float
    absent: frozenset = frozenset()


@dataclass
class _Scales:
    """How small is zero at this solution: the lower Cholesky factor L of M, the owner (contact or
    joint) of each friction direction, the velocity scale V, the impulse threshold tp and the
    velocity thresholds per contact (tv_c) and per friction joint (tv_j); the groupings as
    :func:`mbdcp.derivatives._common.groups` gives them, and M v, M v_next."""

    L: np.ndarray
    own: np.ndarray
    own_j: np.ndarray
    V: float
    tp: float
    tv_c: np.ndarray
    tv_j: np.ndarray
    grouped: tuple
    grouped_j: tuple
    Mv: np.ndarray
    Mvn: np.ndarray


@dataclass
class _Rows:
    """The complementary rows at the solution (Trinkle (2003), eqs. 25–38): normal w_n, friction
    direction w_b, friction cone w_s, and their joint friction counterparts w_bj, w_sj."""

    w_n: np.ndarray
    w_b: np.ndarray
    w_s: np.ndarray
    w_bj: np.ndarray
    w_sj: np.ndarray


@dataclass
class _ActiveSets:
    """The pieces the solution lies on. ``free_*``: masks of the multipliers left free (their rows
    hold with equality) for p_n, beta, sigma, beta_j, sigma_j; ``post_*``: groups without friction
    impulse whose sigma follows the sliding speed of direction ``post_k`` / ``post_jk``;
    ``degenerate``: (kind, variable, index) of the kinks; ``margins``: the smallest relative
    distances of decided pairs from degeneracy (normal pairs, contacts' friction, joints' friction);
    ``held`` / ``unused``: dependent rows dropped (impulse held at
    its value / structural direction kept at zero)."""

    mode: np.ndarray
    joint_mode: np.ndarray
    free_n: np.ndarray
    free_b: np.ndarray
    free_s: np.ndarray
    free_bj: np.ndarray
    free_sj: np.ndarray
    post_c: np.ndarray
    post_k: np.ndarray
    post_j: np.ndarray
    post_jk: np.ndarray
    degenerate: list
    margins: list
    held: list = field(default_factory=list)
    unused: list = field(default_factory=list)
    indices: tuple = None

    def free(self):
        """Indices of the free multipliers: (FN, FB, FBJ, FS, FSJ), once the masks are final."""
        if self.indices is None:
            self.indices = tuple(x.nonzero()[0] for x in (self.free_n, self.free_b, self.free_bj, self.free_s,
                                                          self.free_sj))
        return self.indices


def _point(data, has_joint_friction, res, degenerate_tol, max_correction_speed, baumgarte):
    """The _Point of validated step data (made for this call: completed in place) and res; raises
    unless res is a SOLVED StepResult of data's sizes."""
    n_v, n_c, m, n_b, m_j, n_j = data.sizes
    p = data
    absent = []
    for name, n in (("p_ext", n_v), ("psi_n", n_c), ("dpsi_n", n_c), ("dpsi_f", m), ("theta", n_b), ("dtheta", n_b),
                    ("beta_max", n_j)):
        if getattr(p, name).size != n:
            setattr(p, name, np.zeros(n))
            absent.append(name)
    # through the correction too
    p.psi_n, psi_chain = stab.differentiable("psi_n", p.psi_n, p.h, max_correction_speed, baumgarte)
    tol = val.positive_scalar("degenerate_tol", degenerate_tol)
    if not isinstance(res, StepResult):
        raise TypeError(f"res must be the StepResult of mbdcp.step with the same data, got {val.describe(res)}")
    if res.status != Status.SOLVED:
        raise ValueError(f"res must be a SOLVED result of mbdcp.step, got status {res.status.name}: "
                         "an unsolved step has no solution to differentiate")
    sol = {}
    for name, n in zip(OUTPUTS, (n_v, n_c, m, n_c, n_b, m_j, n_j)):
        x = getattr(res, name)
        if type(x) is not np.ndarray or x.dtype != np.float64:
            x = np.asarray(x, dtype=np.float64)
        if x.shape != (n,):
            raise ValueError(f"res.{name} has shape {x.shape}, expected ({n},): res belongs to other data")
        sol[name] = x
    return _Point(p, psi_chain, has_joint_friction, sol, tol, frozenset(absent))


def _scales(pt):
    """The _Scales of the solution: velocities against the free and actual motion, impulses
    against the largest momentum or impulse, each contact's velocity threshold against its rows."""
    p, sol, tol = pt.p, pt.sol, pt.tol
    M, v, vn, p_ext = p.M, p.v, sol["v_next"], p.p_ext
    L = cholesky_lower(M)
    if L is None:
        raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)")
    n_c, n_j = p.Wn.shape[1], p.Ej.shape[1]
    grouped = groups(p.E, n_c)
    grouped_j = groups(p.Ej, n_j) if n_j else (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=bool), np.zeros(0, np.intp),
                                                0)
    own, own_j = grouped[0], grouped_j[0]
    free_acc = tri_solve(L, tri_solve(L, p_ext), trans=1)
    Mv, Mvn = M @ v, M @ vn
    # the largest magnitude of several arrays is that of their concatenation (max is exact)
    V = max(np.abs(np.concatenate((v, vn, free_acc, vn - v - free_acc))).max(initial=0.0), _TINY)
    P = max(np.abs(np.concatenate((Mv, Mvn, p_ext, sol["p_n"], sol["beta"], sol["p_b"], sol["beta_j"],
                                   p.beta_max))).max(initial=0.0), _TINY)
    # absent gaps and surface speeds add zeros to nonnegative sums: skipped
    absent = pt.absent
    S_c = V * np.abs(p.Wn).sum(axis=0) + np.abs(p.psi_n) / p.h
    if "dpsi_n" not in absent:
        S_c += np.abs(p.dpsi_n)
    if p.D.shape[1]:
        has, first = grouped[1:3]
        S_d = V * np.abs(p.D).sum(axis=0)
        if "dpsi_f" not in absent:
            S_d += np.abs(p.dpsi_f)
        S_c[has] = np.maximum(S_c[has], np.maximum.reduceat(S_d, first))
    S_j = np.zeros(n_j)
    if p.Dj.shape[1]:
        has, first = grouped_j[1:3]
        S_j[has] = np.maximum(S_j[has], np.maximum.reduceat(V * np.abs(p.Dj).sum(axis=0), first))
    return _Scales(L, own, own_j, V, tol * P, tol * S_c, tol * S_j, grouped, grouped_j, Mv, Mvn)


def _check_solution(pt, sc):
    """The complementary rows at res; raises unless res is a solution of this step (momentum
    balance, joints and complementarity, within a loose multiple of the zero thresholds)."""
    p, tol, tp, tv_c, tv_j = pt.p, pt.tol, sc.tp, sc.tv_c, sc.tv_j
    vn, pn, beta, sigma, pb, bj, sj = (pt.sol[k] for k in OUTPUTS)
    own, own_j, n_c, n_j, n_b, h = sc.own, sc.own_j, p.Wn.shape[1], p.Ej.shape[1], p.Wb.shape[1], p.h
    # absent joints and joint friction subtract exact zeros: skipped
    bal = sc.Mvn - p.Wb @ pb if n_b else sc.Mvn
    bal = bal - p.Wn @ pn - p.D @ beta
    if n_j:
        bal = bal - p.Dj @ bj
    bal = bal - sc.Mv
    absent = pt.absent
    if "p_ext" not in absent:
        bal -= p.p_ext
    # absent surface speeds add zeros (changing at most the sign of a zero row, which compares the same)
    w_n = p.Wn.T @ vn + p.psi_n / h
    if "dpsi_n" not in absent:
        w_n += p.dpsi_n
    w_b = p.D.T @ vn
    if "dpsi_f" not in absent:
        w_b += p.dpsi_f
    w_b += sigma[own]
    rows = _Rows(w_n=w_n, w_b=w_b, w_s=p.mu * pn - np.bincount(own, beta, minlength=n_c), w_bj=_EMPTY, w_sj=_EMPTY)
    if n_j:
        rows.w_bj, rows.w_sj = p.Dj.T @ vn + sj[own_j], p.beta_max - np.bincount(own_j, bj, minlength=n_j)
    loose = 1e3
    joints_fail = False
    if n_b:
        w_jt = p.Wb.T @ vn + p.theta / h + p.dtheta
        S_b = sc.V * np.abs(p.Wb).sum(axis=0) + np.abs(p.theta) / h + np.abs(p.dtheta)
        joints_fail = (np.abs(w_jt) > loose * tol * S_b).any()
    ltp, ltv = loose * tp, loose * tv_c
    # the pairs (p_n, w_n), (beta, w_b), (sigma, w_s) at once: impulses against tp, velocities against tv
    z, w = np.concatenate((pn, beta, sigma)), np.concatenate((rows.w_n, rows.w_b, rows.w_s))
    tz = np.concatenate((np.full(pn.size + beta.size, ltp), ltv))
    tw = np.concatenate((ltv, ltv[own], np.full(sigma.size, ltp)))
    if (np.abs(bal).max() > ltp or joints_fail or not _pairs_ok(z, w, tz, tw)
            or n_j and not (_pairs_ok(bj, rows.w_bj, loose * tp, loose * tv_j[own_j])
                            and _pairs_ok(sj, rows.w_sj, loose * tv_j, loose * tp))):
        raise ValueError("res is not a solution of this step (momentum balance or complementarity fails): "
                         "it belongs to other data")
    return rows


def _active_sets(pt, sc, rows):
    """The _ActiveSets of the solution: normal pairs, the friction modes of contacts and joints,
    the structural or kinked sticking directions, then an independent subset of the imposed rows."""
    p, sol, tp, tv_c = pt.p, pt.sol, sc.tp, sc.tv_c
    pn, w_n, n_j = sol["p_n"], rows.w_n, p.Ej.shape[1]
    in_contact = pn > tp
    grazing = ~in_contact & (w_n <= tv_c)
    degenerate = [("grazing", "p_n", c) for c in np.flatnonzero(grazing)] if grazing.any() else []
    dec = in_contact | (w_n > tv_c)
    # divided after selecting: with the data all zero (and denormals flushed, as in XLA's threads) tp is 0
    margins = [(np.where(in_contact, pn, w_n)[dec] / np.where(in_contact, tp, np.maximum(tv_c, 1e-300))[dec]).min(
        initial=np.inf)]
    mode, free_b, free_s, post_c, post_k, cands, deg_c, mar = _classify(
        in_contact, sol["beta"], rows.w_b, sol["sigma"], rows.w_s, p.mu == 0, sc.grouped, p.Wn.shape[1], tv_c, tp)
    degenerate += deg_c
    margins.append(mar)
    if n_j:
        jmode, free_bj, free_sj, post_j, post_jk, cands_j, deg_j, mar_j = _classify(
            np.ones(n_j, dtype=bool), sol["beta_j"], rows.w_bj, sol["sigma_j"], rows.w_sj, p.beta_max == 0,
            sc.grouped_j, n_j, sc.tv_j, tp)
        degenerate += [(kind, {"beta": "beta_j", "sigma": "sigma_j"}[var], i) for kind, var, i in deg_j]
        margins.append(mar_j)
    else:
        none = np.zeros(0, dtype=np.intp)
        jmode, free_bj, free_sj, post_j, post_jk, cands_j = np.zeros(0, dtype=str), np.zeros(p.Dj.shape[1], dtype=bool), \
            np.zeros(0, dtype=bool), none, none, []
    sets = _ActiveSets(mode, jmode, in_contact.copy(), free_b, free_s, free_bj, free_sj, post_c, post_k, post_j,
                       post_jk, degenerate, margins)
    _drop_dependent(pt, sc, sets, _structural(pt, sc, rows, sets, cands, cands_j))
    return sets


def _structural(pt, sc, rows, sets, cands, cands_j):
    """Sticking directions with beta = w = 0 (candidates (group, directions) of contacts and
    joints): structural when the group's zero-w directions positively span (then w = 0 persists),
    a kink otherwise (added to ``sets.degenerate``). Returns the structural (variable, index)."""
    structural = []
    if not (cands or cands_j):
        return structural
    for which, group_cands, cols, wrow, tvg, own_g in (("beta", cands, pt.p.D, rows.w_b, sc.tv_c, sc.own),
                                                       ("beta_j", cands_j, pt.p.Dj, rows.w_bj, sc.tv_j, sc.own_j)):
        for g, ks in group_cands:
            allk = np.flatnonzero((own_g == g) & (wrow <= tvg[own_g]))
            if _positively_spanning(cols[:, allk]):
                structural += [(which, k) for k in ks]
            else:
                sets.degenerate += [("direction", which, k) for k in ks]
    return structural


def _drop_dependent(pt, sc, sets, structural):
    """The velocity rows imposed with free multipliers (joints, normals, friction at sticking
    contacts) may be dependent: statically indeterminate contacts, e.g. a box resting on two
    corners with friction at both. Keep an independent subset, block by block in this order; a
    dropped active impulse is held at its value (one of the many impulse splits), a dropped
    structural direction stays at zero. Updates ``sets`` (free masks, held, unused)."""
    p = pt.p
    in_contact, free_s = sets.free_n.copy(), sets.free_s
    stick_b = sets.free_b & ~free_s[sc.own]
    stick_bj = sets.free_bj & ~sets.free_sj[sc.own_j] if sets.free_bj.size else sets.free_bj
    stick_n = in_contact & ~free_s
    if not (structural or stick_n.any() or stick_b.any() or stick_bj.any()):
        return
    stick_b, stick_bj = np.flatnonzero(stick_b), np.flatnonzero(stick_bj)
    sticking_n = np.flatnonzero(stick_n)
    runs = [[("p_b", range(p.Wb.shape[1])), ("p_n", np.flatnonzero(in_contact & free_s))], [("p_n", sticking_n)],
            [("beta", stick_b), ("beta_j", stick_bj)], _runs(structural)]
    kept = _independent(sc.L, runs, {"p_b": p.Wb, "p_n": p.Wn, "beta": p.D, "beta_j": p.Dj})
    blocks = [[("p_n", c) for c in sticking_n], [("beta", k) for k in stick_b] + [("beta_j", k) for k in stick_bj],
              structural]
    for b, block in enumerate(blocks, 1):
        for e in block:
            if e not in kept:
                (sets.held if b < 3 else sets.unused).append(e)
    masks = {"p_n": sets.free_n, "beta": sets.free_b, "beta_j": sets.free_bj}
    for var, i in sets.held:
        masks[var][i] = False
    for var, i in structural:
        if (var, i) in kept:
            masks[var][i] = True


def _tied(own_of, dropped, kept_b, D):
    """The contacts (sorted) of the dropped rows (``dropped``: (name, index)) that are not
    combinations of their own contact's kept directions (``kept_b``: the free ones; ``own_of``: each
    direction's contact) alone; the C rule's any_tied (step_vjp.c) decides alike. A direction
    opposite to a kept one of its contact (or in their span) stays dependent under any change
    that keeps the contact's frame; any other dropped row is tied to other contacts' rows or to the
    normals, and a change of one gap, normal or direction breaks its dependence: the derivative in
    those inputs then holds a relation the solution leaves (a kink, on one side or both)."""
    tied = {int(i) for var, i in dropped if var == "p_n"}  # a normal: its gap enters the relation
    drop_b = np.array([i for var, i in dropped if var == "beta"], dtype=np.intp)
    for c in np.unique(own_of[drop_b]) if drop_b.size else ():
        if int(c) in tied:
            continue
        own, ks = kept_b[own_of[kept_b] == c], drop_b[own_of[drop_b] == c]
        # dependence does not depend on the metric: D's rows where the contact's directions live
        rows = np.flatnonzero(np.any(D[:, np.r_[own, ks]] != 0.0, axis=1))
        X = R = D[np.ix_(rows, ks)]
        if own.size:  # the kept directions are independent: a reduced QR spans them
            Q = np.linalg.qr(D[np.ix_(rows, own)])[0]
            R = X - Q @ (Q.T @ X)
        if np.any(np.linalg.norm(R, axis=0) > _core.VJP_RANK_CUT * np.maximum(np.linalg.norm(X, axis=0), _core.VJP_NORM_FLOOR)):
            tied.add(int(c))
    return sorted(tied)


def _runs(entries):
    """(name, indices) runs of consecutive (name, index) entries of the same name."""
    runs = []
    for var, i in entries:
        if runs and runs[-1][0] == var:
            runs[-1][1].append(i)
        else:
            runs.append((var, [i]))
    return runs


def _ift_system(pt, sc, sets):
    """The implicit-function-theorem system with v_next and p_b eliminated: X = L^-1 J for the
    imposed rows J = [Wb, Wn_F, D_F, Dj_F] and the LU factor of the small matrix in the free
    multipliers (None when there are none); raises when it is singular."""
    p, n_b, n_c, n_j = pt.p, pt.p.Wb.shape[1], pt.p.Wn.shape[1], pt.p.Ej.shape[1]
    own, own_j = sc.own, sc.own_j
    FN, FB, FBJ, FS, FSJ = sets.free()
    parts = [a for a in (p.Wb, p.Wn[:, FN], p.D[:, FB], p.Dj[:, FBJ]) if a.shape[1]]
    nJ, ns = sum(a.shape[1] for a in parts), FS.size + FSJ.size
    X = tri_solve(sc.L, parts[0] if len(parts) == 1 else np.hstack(parts)) if parts else np.zeros((p.M.shape[0], 0))
    K = np.zeros((nJ + ns, nJ + ns))
    K[:nJ, :nJ] = X.T @ X
    ob, oj = n_b + FN.size, n_b + FN.size + FB.size
    # beta rows get + dsigma; sigma rows read mu dp_n - sum dbeta (beta_max - sum dbeta_j for joints)
    if FS.size:
        pos_s = np.zeros(n_c, dtype=np.intp) - 1
        pos_s[FS] = np.arange(FS.size)
        pos_n = np.zeros(n_c, dtype=np.intp) - 1
        pos_n[FN] = np.arange(n_b, n_b + FN.size)
        s_of = pos_s[own[FB]]
        r = (s_of >= 0).nonzero()[0]
        K[ob + r, nJ + s_of[r]] = 1.0
        K[nJ + s_of[r], ob + r] = -1.0
        K[nJ + pos_s[FS], pos_n[FS]] = p.mu[FS]
    if FSJ.size:
        pos_sj = np.zeros(n_j, dtype=np.intp) - 1
        pos_sj[FSJ] = nJ + FS.size + np.arange(FSJ.size)
        s_of = pos_sj[own_j[FBJ]]
        r = (s_of >= 0).nonzero()[0]
        K[oj + r, s_of[r]] = 1.0
        K[s_of[r], oj + r] = -1.0
    lu = None
    if K.size:
        *lu, rcond = lu_factor(K)
        if not rcond > RCOND_MIN:
            raise _singular_system(sc.L, rcond)
    return X, lu


def _singular_system(L, rcond):
    """The error for an implicit-function system too close to singular: M itself when its own
    condition (at least the squared spread of its Cholesky factor's diagonal) explains it, else
    dependent active constraints."""
    d = np.abs(np.diag(L))
    kappa = (d.max() / d.min()) ** 2 if d.size and d.min() > 0 else np.inf
    if kappa * RCOND_MIN >= 1e-3:
        return ValueError(f"M is too ill-conditioned for the step's derivative (its condition number is at least "
                          f"{kappa:.1e}; the derivative's system has reciprocal condition {rcond:.1e}): express M "
                          "in units that bring its entries closer (or drop its negligible masses)")
    return ValueError(f"the active constraints of res are dependent (reciprocal condition {rcond:.1e}): the "
                      "impulses are not locally unique, so the step has no derivative at this solution")


_INPUTS_OF = {(joints, friction): tuple(k for k in INPUTS if (k not in ("Wb", "theta", "dtheta") or joints)
                                       and (k not in ("Dj", "beta_max") or friction))
              for joints in (False, True) for friction in (False, True)}


def _derivative(pt, sc, sets, X, lu):
    """The StepDerivative: public fields from the active sets, the factors and data for jvp/vjp."""
    p, n_c, m, m_j, n_b = pt.p, pt.p.Wn.shape[1], pt.p.D.shape[1], pt.p.Dj.shape[1], pt.p.Wb.shape[1]
    has_jf, degenerate = pt.has_joint_friction, sets.degenerate
    FN, FB, FBJ, FS, FSJ = sets.free()
    d = dict(M=p.M, Wn=p.Wn, D=p.D, Dj=p.Dj, Wb=p.Wb, v=p.v, h=p.h, p_ext=p.p_ext, psi_n=p.psi_n, dpsi_n=p.dpsi_n,
             dpsi_f=p.dpsi_f, theta=p.theta, dtheta=p.dtheta, beta_max=p.beta_max, n_v=p.M.shape[0], n_c=n_c, m=m,
             n_b=n_b, n_j=p.Ej.shape[1], has_joint_friction=has_jf, L=sc.L, X=X, lu=lu, FN=FN, FB=FB, FBJ=FBJ,
             FS=FS, FSJ=FSJ, post_c=sets.post_c, post_k=sets.post_k, post_j=sets.post_j, post_jk=sets.post_jk,
             held=sets.held, unused=sets.unused, own=sc.own, V=sc.V, psi_chain=pt.psi_chain, **pt.sol)
    d["inputs"] = _INPUTS_OF[bool(n_b), bool(has_jf)]
    # where p_b, p_n[FN], beta[FB], beta_j[FBJ], sigma[FS], sigma_j[FSJ] start in the unknowns
    o = [0]
    for size in (n_b, FN.size, FB.size, FBJ.size, FS.size, FSJ.size):
        o.append(o[-1] + size)
    d["offsets"] = tuple(o)
    if degenerate:
        o_z = {"p_n": 0, "beta": n_c, "beta_j": n_c + m, "sigma": n_c + m + m_j, "sigma_j": 2 * n_c + m + m_j}
        degenerate.sort(key=lambda e: o_z[e[1]] + e[2])
        contact_of = {"p_n": lambda i: i, "sigma": lambda i: i, "beta": lambda i: int(sc.own[i])}
        indices = np.array([o_z[var] + i for _, var, i in degenerate], dtype=np.intp)
        contacts = np.unique(np.array([contact_of[var](i) for _, var, i in degenerate if var in contact_of],
                                      dtype=np.intp))
    else:
        indices, contacts = np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    return StepDerivative(
        mode=sets.mode,
        joint_mode=sets.joint_mode.astype(str),
        degenerate=indices,
        degenerate_kind=tuple(kind for kind, _, _ in degenerate),
        degenerate_contacts=contacts,
        margin=float(min(sets.margins)) * pt.tol,
        indeterminate=bool(sets.held),
        _d=d,
    )


@renamed(solver="method", max_pivots="max_iter")
def step(M, Wn, D, E, U, v, h, res, *, p_ext=None, psi_n=None, dpsi_n=None, dpsi_f=None, Wb=None, theta=None,
         dtheta=None, Dj=None, Ej=None, beta_max=None, degenerate_tol=DEGENERATE_TOL, max_correction_speed=None, baumgarte=1.0,
         **kwargs):
    r"""Derivative of one time step of :func:`mbdcp.step` by the implicit function theorem.

    The arguments are those of :func:`mbdcp.step` plus its SOLVED result ``res``. With the active
    set read off the solution, the mixed LCP of :func:`mbdcp.step` becomes a square linear system
    in (v_next, p_b, and the free parts of p_n, beta, beta_j, sigma, sigma_j):

    .. math::

        M\,dv - W_b\,dp_b - W_F\,dz_F &= dM(v - v^{l+1}) + M\,dv^l + dp_{ext} + dW\,z + dW_b\,p_b \\
        W_{b}^T dv &= -(dW_b^T v^{l+1} + d\Theta/h - \Theta\,dh/h^2 + d\partial_t\Theta) \\
        dw_i &= 0 \quad (i \text{ free}), \qquad dz_i = 0 \quad (\text{otherwise})

    with :math:`w` the complementary rows of section 1 (h enters only through
    :math:`\Psi_n/h` and :math:`\Theta/h`: give ``p_ext``'s tangent yourself if it is
    :math:`h k`). v_next and p_b are eliminated with a Cholesky factor of M; the remaining matrix
    is LU-factored once, so ``jvp`` and ``vjp`` cost two triangular solves with M plus one with
    the small factor.

    **Modes** (judged with ``degenerate_tol`` relative to the data: impulses against the largest
    momentum or impulse, velocities against each contact's velocity scale):

    - *separated* (p_n = 0 < w_n): dp_n = dbeta = 0. Its sigma is only bounded below by the
      sliding speed; Lemke returns that speed, max_k -(d_k^T v_next + dpsi_f_k), and its
      derivative is the one given (that of the maximising direction).
    - *sliding* (sigma > 0): U p_n = E^T beta kept; the directions with beta_k > 0 stay active.
    - *sticking* (sigma = 0 < U p_n - E^T beta): the directions with beta_k > 0 keep w_k = 0.
      Directions with beta_k = w_k = 0 at a sticking contact whose zero-w directions positively
      span their span (e.g. opposite pairs) are no kink: v_next stays on the sticking piece. They
      are added to the active set as long as their velocity rows are independent of those already
      imposed (so w_k = 0 persists), which fixes one of the many splits of the friction impulse
      among directions: dbeta is the derivative of that split; D beta, p_n, v_next do not depend
      on it. This holds for every change of the other inputs, and for changes of D and dpsi_f
      that keep the linear relations among a contact's directions, as a moving contact frame
      does (D_c = T_c A_c with A_c fixed, dpsi_f = D^T ds): other changes of D or dpsi_f at a
      sticking contact with dependent directions leave its sticking piece (a kink).

    **Degenerate points** (listed in ``degenerate`` as indices of z = (p_n, beta, beta_j, sigma,
    sigma_j), the order of ``res.lcp``; the solution has a kink there and only one-sided
    derivatives exist). The derivative returned is that of the piece named in brackets, exact for
    changes that stay on it:

    - "grazing": p_n = w_n = 0 [separated: exact when the contact opens, dw_n >= 0];
    - "stick-slip": sigma = 0 and U p_n = E^T beta, sticking exactly at the cone's edge
      [sticking: exact while the friction impulse moves inside the cone];
    - "direction": beta_k = w_k = 0 at a sliding contact (slip exactly between two directions),
      or at a sticking contact whose directions do not positively span [beta_k = 0 kept];
    - "sigma": the sliding-speed maximum is attained twice, or is zero, at a contact without
      friction impulse [the direction listed first]; only sigma has the kink.

    A contact with mu = 0 (or a joint with beta_max = 0) sits at the boundary of mu >= 0; its
    derivative in mu is the right derivative and it is not reported.

    **Dependent active constraints** (statically indeterminate contacts, e.g. a box resting on two
    corners with friction at both): the impulses are not unique, v_next is. An independent subset
    of the imposed velocity rows is kept (joints and sliding normals, then sticking normals, then
    sticking friction directions); a dropped impulse is held at its value, so dp_n, dbeta follow one
    of the many impulse distributions and ``indeterminate`` is True. The dropped rows stay
    satisfied for tangents that keep their dependence (always at rest, v_next = 0); ``jvp`` warns
    (RuntimeWarning) when a tangent breaks it. If the system is singular even so (e.g. dependent
    sliding contacts), a ValueError is raised rather than a number returned.

    Parameters
    ----------
    M, Wn, D, E, U, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max :
        as for :func:`mbdcp.step`.
    res : the SOLVED :class:`mbdcp.StepResult` of ``mbdcp.step`` with the same data.
    degenerate_tol : relative tolerance deciding that an impulse or a velocity is zero.
    **kwargs : the solver keywords of :func:`mbdcp.step` (``solver``, ``return_lcp``,
        ``warm_start``, ...) are accepted and ignored: they do not change the solution.

    Returns
    -------
    StepDerivative
        ``jvp(**tangents) -> dict``, ``vjp(v_next=, p_n=, beta=, sigma=, ...) -> dict``,
        ``jacobian(of, wrt)``, ``mode``, ``degenerate``, ``margin``.

    Examples
    --------
    The sphere of Trinkle (2003), section 4, sliding at 2 m/s: v_x after one step is v0 - mu g h, so
    dv_x/dmu = -g h and d(omega_y)/dmu = 5/2 g h / r:

    >>> import numpy as np, mbdcp
    >>> from mbdcp.examples import sphere_on_plane
    >>> M, Wn, D, E, U = sphere_on_plane(mu=0.2)
    >>> v, h, p = np.array([2.0, 0, 0, 0, 0, 0]), 0.01, np.array([0, 0, -9.81 * 0.01, 0, 0, 0])
    >>> res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p, psi_n=[0.0])
    >>> d = mbdcp.derivatives.step(M, Wn, D, E, U, v, h, res, p_ext=p, psi_n=[0.0])
    >>> d.mode.tolist(), d.jvp(U=[1.0])["v_next"][[0, 4]].round(12).tolist()
    (['sliding'], [-0.0981, 0.24525])
    """
    for key in kwargs:
        if key not in _SOLVER_ONLY:
            raise TypeError(f"step() got an unexpected keyword argument {key!r}")
    pt = _point(step_data(M, Wn, D, E, U, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max),
                Dj is not None, res, degenerate_tol, max_correction_speed, baumgarte)
    sc = _scales(pt)
    rows = _check_solution(pt, sc)
    sets = _active_sets(pt, sc, rows)
    X, lu = _ift_system(pt, sc, sets)
    return _derivative(pt, sc, sets, X, lu)
