r"""Derivatives of one cone complementarity step of :func:`mbdcp.ccp` (Negrut, Serban & Tasora 2018, eqs. 10–11)."""
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mbdcp.derivatives._common import DEGENERATE_TOL, _Repr, check_keys, dense_tangent, finite_result, momentum_change, tangents_of
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.deprecated import renamed
from mbdcp.infrastructure.problem import CcpProblem, ccp_data, surface_velocity
from mbdcp.infrastructure.results import CCPResult
from mbdcp.infrastructure.status import Status

__all__ = ["CCPDerivative", "ccp", "at"]

INPUTS = ("M", "Wn", "Wt", "mu", "v", "h", "p_ext", "psi_n", "Wb", "theta", "dtheta", "dpsi_t")
OUTPUTS = ("v_next", "gamma", "p_b")
_SOLVER_ONLY = ("method", "tol", "max_iter", "warm_start", "omega")


def _on_pattern(A, *pairs):
    """sum_k a_k b_k^T on the stored entries of the CSC matrix A: a CSC matrix with A's pattern
    (explicit zeros kept, so the pattern is exactly A's)."""
    rows = A.indices
    cols = np.repeat(np.arange(A.shape[1]), np.diff(A.indptr))
    data = sum(a[rows] * b[cols] for a, b in pairs)
    return sp.csc_matrix((data, A.indices.copy(), A.indptr.copy()), shape=A.shape)


@dataclass(frozen=True, repr=False)
class CCPDerivative(_Repr):
    r"""The derivative of one step of :func:`mbdcp.ccp` (built by :func:`ccp`).

    Public fields: ``mode`` per contact ("separated", "sticking", "sliding"; the side used at a
    degenerate contact), ``degenerate`` (contact indices at a kink), ``degenerate_kind`` (one word
    per index: "grazing" or "stick-slip") and ``margin``.
    """

    mode: np.ndarray
    degenerate: np.ndarray
    degenerate_kind: tuple
    margin: float
    _d: dict = field(repr=False)

    def jvp(self, **tangents):
        """Output tangents {v_next (n_v,), gamma (n_c, 3), p_b (n_b,)} for input tangents keyed by
        input name (M, Wn, Wt, mu, v, h, p_ext, psi_n, Wb, theta, dtheta, dpsi_t); matrices may be sparse."""
        d = self._d
        check_keys(tangents, d["inputs"], "tangent")
        if tangents.get("dpsi_t") is not None:  # (2 n_c,) or (n_c, 2), as ccp takes it
            tangents = dict(tangents, dpsi_t=surface_velocity("dpsi_t", tangents["dpsi_t"], n_c=d["n_c"]))
        t = tangents_of(tangents, INPUTS, d, "mu", ("M", "Wn", "Wt", "Wb"), gap=("psi_n", d["psi_chain"]))
        n_v, n_c, n_b, h = d["n_v"], d["n_c"], d["n_b"], d["h"]
        vn, gam, pb = d["v_next"], d["gamma"], d["p_b"]
        r_v = momentum_change(t, d)
        e3 = np.zeros((n_c, 3))
        e_b = np.zeros(n_b)
        if t["Wn"] is not None:
            r_v += t["Wn"] @ gam[:, 0]
            e3[:, 0] += t["Wn"].T @ vn
        if t["Wt"] is not None:
            r_v += t["Wt"] @ gam[:, 1:].ravel()
            e3[:, 1:] += (t["Wt"].T @ vn).reshape(n_c, 2)
        if t["Wb"] is not None:
            r_v += t["Wb"] @ pb
            e_b += t["Wb"].T @ vn
        dh = t["h"] or 0.0
        e3[:, 0] -= d["psi_n"] * dh / h ** 2
        if t["psi_n"] is not None:
            e3[:, 0] += t["psi_n"] / h
        if t["dpsi_t"] is not None:
            e3[:, 1:] += t["dpsi_t"]
        e_b -= d["theta"] * dh / h ** 2
        if t["theta"] is not None:
            e_b += t["theta"] / h
        if t["dtheta"] is not None:
            e_b += t["dtheta"]
        rhs_c = -np.einsum("ijk,ik->ij", d["A"], e3)
        if t["mu"] is not None:
            rhs_c += t["mu"][:, None] * d["extra"]
        y = d["lu"].solve(np.concatenate([r_v, rhs_c.ravel(), -e_b]))
        return finite_result({"v_next": y[:n_v], "gamma": y[n_v:n_v + 3 * n_c].reshape(n_c, 3),
                              "p_b": y[n_v + 3 * n_c:]}, list(tangents))

    def vjp(self, v_next=None, gamma=None, p_b=None):
        """Gradients keyed by input name of <g_v, v_next> + <g_gamma, gamma> + <g_b, p_b>. Sparse
        inputs get sparse gradients on their own pattern; ``M`` gets the symmetric gradient (valid
        for symmetric changes), ``mu`` the gradient in the vector mu (n_c,), ``h`` a float."""
        d = self._d
        n_v, n_c, n_b, h = d["n_v"], d["n_c"], d["n_b"], d["h"]
        g_v = np.zeros(n_v) if v_next is None else dense_tangent("v_next", v_next, (n_v,))
        g_g = np.zeros((n_c, 3)) if gamma is None else dense_tangent("gamma", gamma, (n_c, 3))
        g_b = np.zeros(n_b) if p_b is None else dense_tangent("p_b", p_b, (n_b,))
        lam = d["lu"].solve(np.concatenate([g_v, g_g.ravel(), g_b]), trans="T")
        lv, lc, lb = lam[:n_v], lam[n_v:n_v + 3 * n_c].reshape(n_c, 3), lam[n_v + 3 * n_c:]
        mu3 = np.einsum("ijk,ij->ik", d["A"], lc)  # A_i^T lambda_i
        mu_b = lb  # joint rows: A = I
        vn, gam, pb = d["v_next"], d["gamma"], d["p_b"]
        out = {}
        a = d["v"] - vn
        if d["sparse"]["M"]:
            out["M"] = _on_pattern(d["M"], (0.5 * lv, a), (0.5 * a, lv))
        else:
            g = np.outer(lv, a)
            out["M"] = 0.5 * (g + g.T)
        out["v"] = d["M"] @ lv
        out["p_ext"] = lv.copy()

        def grad(name, nu, m):
            # a matrix input A enters r_v as dA nu and the rows as -m^T dA^T v_next
            if d["sparse"][name]:
                return _on_pattern(d[name], (lv, nu), (-vn, m))
            return np.outer(lv, nu) - np.outer(vn, m)

        out["Wn"] = grad("Wn", gam[:, 0], mu3[:, 0])
        out["Wt"] = grad("Wt", gam[:, 1:].ravel(), mu3[:, 1:].ravel())
        out["mu"] = np.einsum("ij,ij->i", lc, d["extra"])
        out["psi_n"] = -mu3[:, 0] / h
        if "dpsi_t" in d["inputs"]:
            out["dpsi_t"] = -mu3[:, 1:]
        out["h"] = float(mu3[:, 0] @ d["psi_n"] + mu_b @ d["theta"]) / h ** 2
        if n_b:
            out["Wb"] = grad("Wb", pb, mu_b)
            out["theta"] = -mu_b / h
            out["dtheta"] = -mu_b
        if d["psi_chain"] is not None:  # psi_n entered as the corrected gap
            out["psi_n"], out["h"] = d["psi_chain"].pullback(out["psi_n"], out["h"])
        return finite_result(out, [n for n, x in (("v_next", v_next), ("gamma", gamma), ("p_b", p_b)) if x is not None])


@dataclass
class _Point:
    """The step and the solution being differentiated: its CcpProblem, M and P as CSC matrices, the
    vectors the derivation uses in products with absent ones as zeros (psi_n: the gap the step
    used, after its correction), res's v_next, gamma, p_b, and the relative tolerance."""

    problem: CcpProblem
    M: sp.csc_matrix
    P: sp.csc_matrix
    p_ext: np.ndarray
    psi_n: np.ndarray
    theta: np.ndarray
    dtheta: np.ndarray
    dpsi_t: np.ndarray
    tol: float
    v_next: np.ndarray = None
    gamma: np.ndarray = None
    p_b: np.ndarray = None

    @property
    def sizes(self):
        """(n_v, n_c, n_b)."""
        return self.problem.sizes


def _full(x, n):
    """A vector of the problem, zeros (n,) where it is absent (empty)."""
    return x if x.size else np.zeros(n)


def _point(problem, degenerate_tol):
    """The _Point of a CcpProblem (without the solution)."""
    n_v, n_c, n_b = problem.sizes
    dpsi_t = np.zeros((n_c, 2)) if problem.dpsi_t is None else problem.dpsi_t
    return _Point(problem, problem.mass_matrix(), problem.P_matrix(), _full(problem.p_ext, n_v), _full(problem.psi_n, n_c),
                  _full(problem.theta, n_b), _full(problem.dtheta, n_b), dpsi_t,
                  val.positive_scalar("degenerate_tol", degenerate_tol))


@dataclass
class _Solution:
    """The solution in cone coordinates: the relative velocities d3 (n_c, 3) of the contacts, and
    how small is zero: the impulse scale Pimp, its threshold tp and each contact's velocity scale S
    and threshold tv."""

    d3: np.ndarray
    Pimp: float
    S: np.ndarray
    tp: float
    tv: np.ndarray


@dataclass
class _Modes:
    """Per contact: the masks of the modes and kinks, and the quantities they were judged by
    (s = |d_t|, slack = d_n - mu s, |gamma_t|)."""

    separated: np.ndarray
    sticking: np.ndarray
    sliding: np.ndarray
    grazing: np.ndarray
    stick_slip: np.ndarray
    frictionless_rest: np.ndarray
    s: np.ndarray
    slack: np.ndarray
    gtn: np.ndarray


def _solution(pt, res):
    """Sets pt's v_next, gamma, p_b from res; raises unless res is a SOLVED CCPResult of pt's sizes."""
    n_v, n_c, n_b = pt.sizes
    if not isinstance(res, CCPResult):
        raise TypeError(f"res must be the CCPResult of mbdcp.ccp with the same data, got {val.describe(res)}")
    if res.status != Status.SOLVED:
        raise ValueError(f"res must be a SOLVED result of mbdcp.ccp, got status {res.status.name}: "
                         "an unsolved step has no solution to differentiate")
    gam, pb, vn = (np.asarray(x, dtype=np.float64) for x in (res.gamma, res.p_b, res.v_next))
    for name, x, shape in (("gamma", gam, (n_c, 3)), ("p_b", pb, (n_b,)), ("v_next", vn, (n_v,))):
        if x.shape != shape:
            raise ValueError(f"res.{name} has shape {x.shape}, expected {shape}: res belongs to other data")
    pt.v_next, pt.gamma, pt.p_b = vn, gam, pb


def _check_solution(pt, residual):
    """The _Solution at res; raises unless res solves this step (momentum balance, joints and
    complementarity). Zero is judged with max(tol, 100 residual) relative to the data."""
    n_c = pt.sizes[1]
    M, v, vn, p_ext, h, gam, P = pt.M, pt.problem.v, pt.v_next, pt.p_ext, pt.problem.h, pt.gamma, pt.P
    nu = np.concatenate([gam.ravel(), pt.p_b])
    b = np.concatenate([np.zeros(3 * n_c), pt.theta / h + pt.dtheta])
    b[0:3 * n_c:3] = pt.psi_n / h
    b[1:3 * n_c:3] = pt.dpsi_t[:, 0]
    b[2:3 * n_c:3] = pt.dpsi_t[:, 1]
    dvec = P.T @ vn + b
    d3, dj = dvec[:3 * n_c].reshape(n_c, 3), dvec[3 * n_c:]

    tau = max(pt.tol, 100.0 * residual)
    # velocities, and the velocity changes the applied and contact impulses make
    md = np.abs(M.diagonal())
    V = max(np.abs(v).max(), np.abs(vn).max(), np.abs(b).max(initial=0), np.abs(p_ext / md).max(),
            np.abs((P @ nu) / md).max(), np.finfo(float).tiny)
    Pimp = max(np.abs(M @ v).max(), np.abs(M @ vn).max(), np.abs(p_ext).max(), np.abs(nu).max(initial=0),
               np.finfo(float).tiny)
    colnorm = np.asarray(abs(P).sum(axis=0)).ravel()
    S = (V * colnorm[:3 * n_c].reshape(n_c, 3).max(axis=1, initial=0) + np.abs(pt.psi_n) / h
         + np.abs(pt.dpsi_t).max(axis=1, initial=0))
    S_b = V * colnorm[3 * n_c:] + np.abs(pt.theta) / h + np.abs(pt.dtheta)
    tp, tv = tau * Pimp, tau * S
    bal = M @ (vn - v) - p_ext - P @ nu
    if (np.abs(bal).max() > 1e-8 * Pimp or np.any(np.abs(dj) > 1e3 * tau * np.maximum(S_b, np.finfo(float).tiny))
            or np.any(np.abs(np.einsum("ij,ij->i", gam, d3)) > 1e3 * tp * np.maximum(S, np.finfo(float).tiny))):
        raise ValueError("res is not a solution of this step (momentum balance, joints or complementarity fail): "
                         "it belongs to other data")
    return _Solution(d3, Pimp, S, tp, tv)


def _classify(pt, sol):
    """The _Modes of the contacts (separated, sticking, sliding; grazing and stick-slip kinks)."""
    gn, gt, mu = pt.gamma[:, 0], pt.gamma[:, 1:], pt.problem.mu
    dn, dt = sol.d3[:, 0], sol.d3[:, 1:]
    s = np.linalg.norm(dt, axis=1)
    gtn = np.linalg.norm(gt, axis=1)
    gpos = gn > sol.tp
    slack = dn - mu * s
    dzero = np.maximum(np.abs(dn), s) <= sol.tv
    sliding = gpos & ~dzero
    if np.any(sliding & (s <= sol.tv)):
        raise ValueError("res is not a solution of this step (an impulse with a separating velocity): "
                         "it belongs to other data or was solved with too loose a tol")
    sticking = gpos & dzero
    separated = ~gpos
    return _Modes(separated=separated, sticking=sticking, sliding=sliding, grazing=separated & ~(slack > sol.tv),
                  stick_slip=sticking & (mu > 0) & ~(mu * gn - gtn > sol.tp), frictionless_rest=sticking & (mu == 0),
                  s=s, slack=slack, gtn=gtn)


def _linearisation(pt, sol, modes):
    """Per contact, the linearised optimality conditions A_i d(d_i) + B_i d(gamma_i) = extra_i dmu_i
    (the three smooth equations of the contact's mode): (A, B, extra)."""
    n_c, mu, gn, gt, dt, s = pt.sizes[1], pt.problem.mu, pt.gamma[:, 0], pt.gamma[:, 1:], sol.d3[:, 1:], modes.s
    rest = modes.frictionless_rest
    A = np.zeros((n_c, 3, 3))
    B = np.zeros((n_c, 3, 3))
    extra = np.zeros((n_c, 3))
    A[modes.sticking & ~rest] = np.eye(3)
    B[modes.separated] = np.eye(3)
    A[rest, 0, 0] = 1.0
    B[rest, 1, 1] = B[rest, 2, 2] = 1.0
    i = np.flatnonzero(modes.sliding)
    if i.size:
        tt = dt[i] / s[i, None]
        A[i, 0, 0] = 1.0
        A[i, 0, 1:] = -mu[i, None] * tt
        A[i, 1:, 1:] = gt[i][:, :, None] * tt[:, None, :] + (mu[i] * gn[i])[:, None, None] * np.eye(2)
        B[i, 1:, 0] = mu[i, None] * dt[i]
        B[i, 1:, 1:] = s[i, None, None] * np.eye(2)
        extra[i, 0] = s[i]
        extra[i, 1:] = -gn[i, None] * dt[i]
    return A, B, extra


def _factor(pt, A, B):
    """The sparse LU factor of the implicit-function-theorem system [[M, -P], [A P^T, B]] in
    (dv, dgamma, dp_b) (joint rows: A = I, B = 0); raises when it is singular."""
    n_c, n_b = pt.sizes[1:]
    Ablk = sp.block_diag([sp.bsr_matrix((A, np.arange(n_c), np.arange(n_c + 1)), shape=(3 * n_c, 3 * n_c)),
                          sp.identity(n_b)], format="csr")
    Bblk = sp.block_diag([sp.bsr_matrix((B, np.arange(n_c), np.arange(n_c + 1)), shape=(3 * n_c, 3 * n_c)),
                          sp.csr_matrix((n_b, n_b))], format="csr")
    K = sp.bmat([[pt.M, -pt.P], [Ablk @ pt.P.T, Bblk]], format="csc")
    try:
        return spla.splu(K)
    except RuntimeError:
        raise ValueError("the active constraints of res are dependent (the linearised system is singular): the "
                         "impulses are not locally unique, so the step has no derivative at this solution") from None


def _derivative(pt, sol, modes, A, extra, lu):
    """The CCPDerivative: modes, kinks and margin, and the factor and data for jvp/vjp."""
    n_v, n_c, n_b = pt.sizes
    gn, mu, S, Pimp = pt.gamma[:, 0], pt.problem.mu, sol.S, sol.Pimp
    separated, sticking, sliding = modes.separated, modes.sticking, modes.sliding
    grazing, stick_slip = modes.grazing, modes.stick_slip
    margins = np.concatenate([
        modes.slack[separated & ~grazing] / S[separated & ~grazing],
        gn[~separated] / Pimp,
        (mu * gn - modes.gtn)[sticking & (mu > 0) & ~stick_slip] / Pimp,
        modes.s[sliding] / S[sliding]])
    deg = sorted([(c, "grazing") for c in np.flatnonzero(grazing)] + [(c, "stick-slip") for c in np.flatnonzero(stick_slip)])
    mode = np.where(sliding, "sliding", np.where(sticking, "sticking", "separated")) if n_c else np.zeros(0, dtype=str)
    pr = pt.problem
    Wn, Wt, Wb = pr.jacobians()
    dd = {"M": pt.M, "Wn": Wn, "Wt": Wt, "Wb": Wb, "v": pr.v, "h": pr.h, "p_ext": pt.p_ext, "psi_n": pt.psi_n,
          "theta": pt.theta, "dtheta": pt.dtheta, "dpsi_t": pt.dpsi_t, "n_v": n_v, "n_c": n_c, "n_b": n_b,
          "v_next": pt.v_next, "gamma": pt.gamma, "p_b": pt.p_b, "A": A, "extra": extra, "lu": lu,
          "sparse": {k: k in pr.sparse for k in ("M", "Wn", "Wt", "Wb")}, "psi_chain": pr.psi_chain}
    dd["inputs"] = tuple(k for k in INPUTS if (k not in ("Wb", "theta", "dtheta") or n_b)
                         and (k != "dpsi_t" or pr.dpsi_t is not None))
    return CCPDerivative(mode=mode, degenerate=np.array([c for c, _ in deg], dtype=np.intp),
                         degenerate_kind=tuple(k for _, k in deg),
                         margin=float(margins.min()) if margins.size else np.inf, _d=dd)


@renamed(phi="psi_n", dphi_t="dpsi_t")
def ccp(M, Wn, Wt, mu, v, h, res, *, p_ext=None, psi_n=None, Wb=None, theta=None, dtheta=None, dpsi_t=None,
        degenerate_tol=DEGENERATE_TOL, max_correction_speed=None, baumgarte=1.0, **kwargs):
    r"""Derivative of one cone complementarity step of :func:`mbdcp.ccp`.

    At the solution :math:`\nu = (\gamma, p_b)` with :math:`d = P^T v^{l+1} + b` (b: the
    :math:`\Phi/h`, moving-surface ``dpsi_t`` and joint terms), each contact is classified and its optimality conditions
    :math:`K_i \ni \gamma_i \perp d_i \in K_i^*` are replaced by three smooth equations:

    - *separated* (:math:`\gamma_i = 0`, :math:`d_n > \mu\|d_t\|`): :math:`d\gamma_i = 0`;
    - *sticking* (:math:`\gamma_i` inside :math:`K_i`, :math:`d_i = 0`): :math:`d(d_i) = 0`;
    - *sliding* (:math:`\|\gamma_t\| = \mu\gamma_n > 0`, :math:`d_i = s(\mu, -\hat t)` with
      :math:`s = \|d_t\| > 0`): :math:`d_n - \mu\|d_t\| = 0` and
      :math:`\|d_t\|\gamma_t + \mu\gamma_n d_t = 0`, differentiated;
    - joints: :math:`d(d_j) = 0`.

    With :math:`M\,dv - P\,d\nu = dM(v - v^{l+1}) + M\,dv^l + dp_{ext} + dP\,\nu` this is one
    sparse system in :math:`(dv, d\nu)` (N = PᵀM⁻¹P is never formed), LU-factored once
    (``scipy.sparse.linalg.splu``); ``jvp`` and ``vjp`` are one solve each. h enters through
    :math:`\Phi/h` and :math:`\Theta/h` only.

    **Degenerate contacts** (listed in ``degenerate``; the solution has a kink there): "grazing"
    (:math:`\gamma_i = 0` with :math:`d_i` on the boundary of :math:`K_i^*` or zero, the apex)
    is treated as separated, exact for changes that open it; "stick-slip"
    (:math:`\gamma_i` on the cone's boundary with :math:`d_i = 0`) is treated as sticking, exact
    while the impulse moves into the cone. A frictionless contact (:math:`\mu_i = 0`) at
    tangential rest keeps :math:`\gamma_t = 0` and is not reported: its derivative in
    :math:`\mu` is the right derivative. CCP solutions are iterative: zero is judged with
    ``max(degenerate_tol, 100 res.residual)`` relative to the data, and the derivative is exact
    up to the accuracy of ``res``. If the system is singular (redundant contacts: impulses not
    unique) a ValueError is raised rather than a number returned.

    Parameters
    ----------
    M, Wn, Wt, mu, v, h, p_ext, psi_n, Wb, theta, dtheta, dpsi_t : as for :func:`mbdcp.ccp` (dense or
        scipy.sparse matrices). The gradient of ``dpsi_t`` has shape (n_c, 2).
    res : the SOLVED :class:`mbdcp.CCPResult` of ``mbdcp.ccp`` with the same data.
    degenerate_tol : relative tolerance deciding that an impulse or a velocity is zero.
    **kwargs : solver keywords of :func:`mbdcp.ccp` (``method``, ``tol``, ...), ignored.

    Returns
    -------
    CCPDerivative
        ``jvp(**tangents) -> {v_next, gamma, p_b}``, ``vjp(v_next=, gamma=, p_b=) -> dict``,
        ``mode``, ``degenerate``, ``margin``.

    Examples
    --------
    A unit particle sliding at 1 m/s (mu = 0.5, g h = 0.0981): the CCP gives
    v_x = (1 - mu g h) / (1 + mu^2), so dv_x/dmu = -(g h (1 + mu^2) + 2 mu (1 - mu g h)) / (1 + mu^2)^2:

    >>> import numpy as np, mbdcp
    >>> args = (np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], 0.5, [1.0, 0.0, 0.0], 0.01)
    >>> res = mbdcp.ccp(*args, p_ext=[0, 0, -0.0981], tol=1e-14)
    >>> d = mbdcp.derivatives.ccp(*args, res, p_ext=[0, 0, -0.0981])
    >>> d.mode.tolist(), round(float(d.jvp(mu=1.0)["v_next"][0]), 10)
    (['sliding'], -0.687088)
    >>> round(-(0.0981 * 1.25 + 2 * 0.5 * (1 - 0.5 * 0.0981)) / 1.25 ** 2, 10)
    -0.687088
    """
    for key in kwargs:
        if key not in _SOLVER_ONLY:
            raise TypeError(f"ccp() got an unexpected keyword argument {key!r}")
    problem = ccp_data(M, Wn, Wt, mu, v, h, p_ext, psi_n, Wb, theta, dtheta, dpsi_t, max_correction_speed, baumgarte,
                       invert=False)
    return at(problem, res, degenerate_tol)


def at(problem, res, degenerate_tol=DEGENERATE_TOL):
    """The derivative of :func:`ccp` for the step's validated :class:`~mbdcp.infrastructure.problem.CcpProblem`
    (:func:`~mbdcp.infrastructure.problem.ccp_data`'s, or the one a result of :func:`mbdcp.ccp`
    carries, as the differentiable layers pass it) at its SOLVED result ``res``: nothing checked
    again but ``res`` and ``degenerate_tol``."""
    pt = _point(problem, degenerate_tol)
    _solution(pt, res)
    sol = _check_solution(pt, float(res.residual))
    modes = _classify(pt, sol)
    A, B, extra = _linearisation(pt, sol, modes)
    return _derivative(pt, sol, modes, A, extra, _factor(pt, A, B))
