"""One time step of the Stewart–Trinkle / Anitescu–Potra contact LCP (DESIGN.md section 1)."""
import numpy as np
import scipy.linalg as sla

from mbdcp import _core
from mbdcp import _stabilization as stab
from mbdcp import _validate as val
from mbdcp.results import LCPData, StepResult
from mbdcp.status import Status

__all__ = ["step", "friction_basis"]

_STATUS = tuple(Status)  # index by the C status code
_NO_COLUMNS = np.zeros((0, 0))  # absent Wb, Dj, Ej (the C layer reads only their column counts)
_NO_COLUMNS.setflags(write=False)
_MESSAGE = {s: s.message for s in Status}
_JOINT_RANK_TOL = 1e-10  # a pivot of the M-weighted joint Jacobian's QR below this fraction of the first: dependent


def _friction_coefficients(U, n_c):
    """Diagonal of U from a scalar, a 1-D array or a diagonal n_c x n_c matrix; must be >= 0."""
    a = val.as_array("U", U)
    if a.ndim == 0:
        mu = np.full(n_c, float(a))
    elif a.ndim == 1:
        if a.shape[0] != n_c:
            raise ValueError(f"U must have shape (n_c,) = ({n_c},), got {a.shape}")
        mu = a
    elif a.ndim == 2:
        a = val.matrix("U", a, (n_c, n_c), ("n_c", "n_c"))
        mu = np.ascontiguousarray(np.diag(a))
        if np.count_nonzero(a - np.diag(mu)):
            raise ValueError("U must be diagonal (U = diag(mu_j))")
    else:
        raise ValueError(f"U must be a scalar, 1-D (n_c,) or 2-D (n_c, n_c), got shape {a.shape}")
    if n_c and mu.min() < 0:
        raise ValueError("U must be nonnegative (friction coefficients mu_j >= 0)")
    return mu


def _contact_data(M, Wn, D, E, U, v):
    """The validated (M, Wn, D, E, mu, v) shared by the contact formulations."""
    M = val.mass_matrix("M", M)
    n_v = M.shape[0]
    Wn = val.matrix("Wn", Wn, (n_v, None), ("n_v", "n_c"))
    n_c = Wn.shape[1]
    D = val.matrix("D", D, (n_v, None), ("n_v", "m"))
    E = val.grouping("E", E, D.shape[1], n_c, ("m", "n_c"))
    return M, Wn, D, E, _friction_coefficients(U, n_c), val.vector("v", v, n_v, symbol="n_v")


def _step_data(M, Wn, D, E, U, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max):
    """Validated, C-contiguous float64 arrays for the C core (absent data as empty arrays)."""
    M, Wn, D, E, mu, v = _contact_data(M, Wn, D, E, U, v)
    n_v, n_c, m = M.shape[0], Wn.shape[1], D.shape[1]
    h = val.positive_scalar("h", h)
    p_ext = val.vector("p_ext", p_ext, n_v, optional=True, symbol="n_v")
    psi_n = val.vector("psi_n", psi_n, n_c, optional=True, symbol="n_c")
    dpsi_n = val.vector("dpsi_n", dpsi_n, n_c, optional=True, symbol="n_c")
    dpsi_f = val.vector("dpsi_f", dpsi_f, m, optional=True, symbol="m")
    if Wb is None:
        if theta is not None or dtheta is not None:
            raise ValueError("theta and dtheta need the joint Jacobian Wb")
        Wb = np.zeros((n_v, 0))
    else:
        Wb = val.matrix("Wb", Wb, (n_v, None), ("n_v", "n_b"))
    n_b = Wb.shape[1]
    theta = val.vector("theta", theta, n_b, optional=True, symbol="n_b")
    dtheta = val.vector("dtheta", dtheta, n_b, optional=True, symbol="n_b")
    if Dj is None:
        if Ej is not None or beta_max is not None:
            raise ValueError("Ej and beta_max need the joint friction directions Dj")
        return (M, Wn, D, E, mu, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta,
                np.zeros((n_v, 0)), np.zeros((0, 0)), val._EMPTY)
    if Ej is None or beta_max is None:
        raise ValueError("joint friction needs Dj, Ej and beta_max together")
    Dj = val.matrix("Dj", Dj, (n_v, None), ("n_v", "m_j"))
    m_j = Dj.shape[1]
    Ej = val.grouping("Ej", Ej, m_j, None, ("m_j", "n_j"))
    n_j = Ej.shape[1]
    if m_j and np.any(Ej.sum(axis=0) == 0):
        raise ValueError("Ej must give every joint at least one friction direction")
    beta_max = val.vector("beta_max", beta_max, n_j, symbol="n_j")
    if n_j and beta_max.min() < 0:
        raise ValueError("beta_max must be nonnegative")
    return (M, Wn, D, E, mu, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max)


def _call_core(fn, *args, rank_deficient="Wb"):
    """Call a C wrapper, turning its argument errors into ValueErrors that name the argument
    (``rank_deficient``: the Jacobian whose Schur complement the call factors)."""
    try:
        return fn(*args)
    except _core.CoreError as exc:
        if exc.code == _core.ERR_NOT_POSDEF:
            raise ValueError("M must be symmetric positive definite (its Cholesky factorization failed)") from None
        if exc.code == _core.ERR_RANK_DEFICIENT:
            J = rank_deficient
            raise ValueError(f"{J} must have full column rank ({J}^T M^-1 {J} is singular: redundant "
                             "constraints)") from None
        raise


def _independent_joints(M, Wb, theta, dtheta, h):
    """Indices of a largest set of independent joint equations, for a Wb without full column rank
    (redundant joints, e.g. a rigid loop closed twice): the velocity is then unique and the joint
    impulses are one of many distributions (the dropped equations get none). The dropped
    equations must follow from the kept ones, right-hand sides theta/h + dtheta included."""
    X = sla.solve_triangular(np.linalg.cholesky(M), Wb, lower=True)  # S = X^T X
    _, R, piv = sla.qr(X, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.count_nonzero(d > _JOINT_RANK_TOL * d[0])) if d.size and d[0] > 0 else 0
    keep, drop = np.sort(piv[:rank]), np.sort(piv[rank:])
    c = (theta / h if theta.size else 0.0) + (dtheta if dtheta.size else 0.0) + np.zeros(Wb.shape[1])
    a = np.linalg.lstsq(X[:, keep], X[:, drop], rcond=None)[0]  # X_drop = X_keep a
    mismatch = np.abs(c[drop] - a.T @ c[keep])
    if np.any(mismatch > 1e-9 * (np.abs(c[drop]) + np.abs(a.T) @ np.abs(c[keep])) + 1e-300):
        raise ValueError(f"Wb has redundant columns {drop.tolist()} whose theta/dtheta contradict the other joints: "
                         "the joint equations have no common solution")
    return keep


def _solve_joints(fn, data, at, *rest):
    """fn(*data, *rest), or with the independent subset of the joint columns when Wb (data[at],
    theta and dtheta following it) lacks full column rank; returns (outputs, keep or None)."""
    try:
        return fn(*data, *rest), None
    except _core.CoreError as exc:
        if exc.code != _core.ERR_RANK_DEFICIENT:
            return _call_core(fn, *data, *rest), None  # raises the named error
    M, h = data[0], data[6]
    Wb, theta, dtheta = data[at:at + 3]
    keep = _independent_joints(M, Wb, theta, dtheta, h)
    sub = (np.ascontiguousarray(Wb[:, keep]), theta[keep] if theta.size else theta, dtheta[keep] if dtheta.size else dtheta)
    return _call_core(fn, *data[:at], *sub, *data[at + 3:], *rest), keep


def _full_joint_impulse(p_b, keep, n_b):
    if keep is None:
        return p_b
    full = np.zeros(n_b)
    full[keep] = p_b
    return full


def step(M, Wn, D, E, U, v, h, *, p_ext=None, psi_n=None, dpsi_n=None, dpsi_f=None, Wb=None,
         theta=None, dtheta=None, Dj=None, Ej=None, beta_max=None, solver="lemke", return_lcp=False,
         warm_start=None, max_correction_speed=None, baumgarte=1.0):
    r"""One time step of the Stewart–Trinkle / Anitescu–Potra contact LCP.

    Solves the mixed LCP (Stewart & Trinkle 1996; Anitescu & Potra 1997;
    Trinkle et al. 2001 with joint friction) for the velocity
    :math:`v^{l+1}` and the impulses over the step:

    .. math::

        M v^{l+1} - W_b p_b - W_n p_n - D\beta - D_j\beta_j &= M v^l + p_{ext} \\
        W_b^T v^{l+1} + \Theta/h + \partial_t\Theta &= 0 \\
        0 \le p_n \perp W_n^T v^{l+1} + \Psi_n/h + \partial_t\Psi_n &\ge 0 \\
        0 \le \beta \perp D^T v^{l+1} + \partial_t\Psi_f + E\sigma &\ge 0 \\
        0 \le \sigma \perp U p_n - E^T\beta &\ge 0 \\
        0 \le \beta_j \perp D_j^T v^{l+1} + E_j\sigma_j &\ge 0 \\
        0 \le \sigma_j \perp \beta_{max} - E_j^T\beta_j &\ge 0

    :math:`v^{l+1}` and :math:`p_b` are eliminated with a Cholesky factor of
    :math:`M` and the Schur complement :math:`S = W_b^T M^{-1} W_b`, leaving a
    standard LCP(F, f) in :math:`z = (p_n, \beta, \beta_j, \sigma, \sigma_j)`
    that Lemke's method solves (``return_lcp=True`` returns it). Without
    joints and with :math:`\Psi_n/h + \partial_t\Psi_n \ge 0` a solution always
    exists and Lemke finds it; with joints or penetration it may end on a ray,
    which is reported as a status. :math:`\Psi_n/h` is the stabilisation term:
    a penetration is removed in one step.

    Parameters
    ----------
    M : (n_v, n_v) symmetric positive definite mass matrix.
    Wn : (n_v, n_c) normal Jacobian (columns: generalized contact normals).
    D : (n_v, m) friction directions, grouped by contact.
    E : (m, n_c) one 1 per row: column j marks contact j's directions.
    U : friction coefficients: (n_c,) or diagonal (n_c, n_c) (a scalar is applied to all).
    v : (n_v,) velocity at the start of the step.
    h : time step > 0.
    p_ext : (n_v,) applied impulse over the step (h times the applied force).
    psi_n : (n_c,) gaps at the start of the step; dpsi_n (n_c,), dpsi_f (m,):
        prescribed surface velocities (moving surfaces).
    Wb : (n_v, n_b) bilateral joint Jacobian; theta, dtheta (n_b,). Redundant joint equations (Wb
        without full column rank, e.g. a rigid loop) are solved on a largest independent subset:
        ``v_next`` is unique, ``p_b`` is one of the many impulse distributions (the dependent
        equations get none); their theta/dtheta must agree with the others.
    Dj, Ej, beta_max : joint dry friction (n_v, m_j), (m_j, n_j), (n_j,).
    solver : "lemke" (the only pivoting solver; the relaxations are :func:`mbdcp.fixed_point`).
    return_lcp : also return the reduced LCP (F, f, z, w) as ``res.lcp``.
    warm_start : a previous :class:`StepResult` (or a boolean array of the LCP's size): Lemke starts
        from its final basis (``res.basis``) — in a simulation, the last step's. A hint of another
        size (the contacts changed) is ignored; a wrong one only costs pivots, never correctness.
    max_correction_speed, baumgarte : how a penetration :math:`\Psi_i < 0` is corrected: the
        stabilisation term uses :math:`\max(b\Psi_i, -h v_{max})` instead of :math:`\Psi_i`, so
        that the separation velocity asked for is at most ``max_correction_speed`` (seed 004's
        cap; default: none) and a fraction ``baumgarte`` b in (0, 1] (default 1) of the
        penetration is removed per step. Gaps :math:`\Psi_i \ge 0` are never changed.

    Returns
    -------
    StepResult
        ``v_next``, ``p_n``, ``beta``, ``sigma``, ``p_b``, ``beta_j``, ``sigma_j``,
        ``status``, ``success``, ``pivots``, ``residual`` (of the reduced LCP), ``lcp``,
        ``basis`` (Lemke's final basis, for ``warm_start``), ``cone_slack``
        (:math:`U p_n - E^T\beta`) and ``contact_state`` (see :class:`StepResult`).

    Examples
    --------
    A unit particle resting on the ground under gravity (h = 0.1, g = 9.81):

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.step(np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]],
    ...                  [0.5], [0.0, 0.0], 0.1, p_ext=[0.0, -0.981])
    >>> res.success, res.v_next.round(12).tolist(), round(float(res.p_n[0]), 12)
    (True, [0.0, 0.0], 0.981)
    """
    if solver != "lemke":
        raise ValueError(f"solver must be 'lemke', got {solver!r}")
    if stab.active(max_correction_speed, baumgarte):
        psi_n = stab.gap("psi_n", psi_n, val.positive_scalar("h", h), *stab.settings(max_correction_speed, baumgarte))
    if (type(h) is float and 0.0 < h < np.inf and dpsi_n is None and dpsi_f is None and Wb is None and theta is None
            and dtheta is None and Dj is None and Ej is None and beta_max is None
            and _core.step_args_valid(M, Wn, D, E, U, v, p_ext, psi_n)):
        # the common case, checked in one pass by the C layer (same checks as _step_data)
        empty, none = val._EMPTY, _NO_COLUMNS
        data = (M, Wn, D, E, U, v, h, empty if p_ext is None else p_ext, empty if psi_n is None else psi_n,
                empty, empty, none, empty, empty, none, none, empty)
    else:
        data = _step_data(M, Wn, D, E, U, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max)
    n_c, m = data[1].shape[1], data[2].shape[1]
    m_j, n_j = data[14].shape[1], data[15].shape[1]
    start = _warm_start(warm_start, 2 * n_c + m + m_j + n_j)
    (v_next, p_b, z, w, F, f, status, pivots, residual, basis), keep = _solve_joints(
        _core.step, data, 11, 0, 0.0, bool(return_lcp), start)
    p_b = _full_joint_impulse(p_b, keep, data[11].shape[1])
    o = (0, n_c, n_c + m, n_c + m + m_j, 2 * n_c + m + m_j, 2 * n_c + m + m_j + n_j)
    status = _STATUS[status]
    return StepResult(
        success=status == Status.SOLVED,
        status=status,
        message=_MESSAGE[status],
        v_next=v_next,
        p_n=z[o[0]:o[1]],
        beta=z[o[1]:o[2]],
        sigma=z[o[3]:o[4]],
        p_b=p_b,
        beta_j=z[o[2]:o[3]],
        sigma_j=z[o[4]:o[5]],
        pivots=int(pivots),
        residual=float(residual),
        lcp=LCPData(F=F, f=f, z=z, w=w) if return_lcp else None,
        basis=basis,
        cone_slack=w[o[3]:o[4]],
    )


def _warm_start(hint, N):
    """int32 flags of a warm-start hint for an LCP of size N: from a result with a ``basis`` or a
    boolean array; None when there is none or its size is not N."""
    if hint is None:
        return None
    basis = getattr(hint, "basis", hint)
    if basis is None:
        return None
    a = np.asarray(basis)
    if a.dtype != bool or a.ndim != 1:
        raise TypeError("warm_start must be a previous result (with a basis) or a boolean array of the LCP's size")
    return np.ascontiguousarray(a, dtype=np.intc) if a.shape[0] == N else None


def friction_basis(normal, n_d):
    """Unit friction directions evenly spaced in the tangent plane of a 3-D normal.

    Returns a (3, n_d) array whose column k is
    ``cos(2 pi k / n_d) t1 + sin(2 pi k / n_d) t2`` for an orthonormal tangent
    pair (t1, t2) of ``normal`` (t1 is the normal's projection-free direction
    closest to the world axis least aligned with the normal). With n_d even,
    column k + n_d/2 is the opposite of column k, so the directions positively
    span the tangent plane (needed for friction to act in every direction).

    >>> import mbdcp
    >>> mbdcp.friction_basis([0, 0, 1], 4).round(12) + 0.0
    array([[ 1.,  0., -1.,  0.],
           [ 0.,  1.,  0., -1.],
           [ 0.,  0.,  0.,  0.]])
    """
    nrm = val.vector("normal", normal, 3)
    length = np.linalg.norm(nrm)
    if length == 0:
        raise ValueError("normal must be a nonzero 3-vector")
    if isinstance(n_d, (bool, np.bool_)) or not isinstance(n_d, (int, np.integer)) or n_d < 0:
        raise ValueError(f"n_d must be a nonnegative integer, got {n_d!r}")
    return _friction_basis(nrm / length, int(n_d))


def _friction_basis(n, n_d):
    """friction_basis for a unit 3-vector n, without validation (hot loops of the mechanics layer)."""
    k = min(range(3), key=lambda i: abs(n[i]))  # the world axis least aligned with n
    t1 = -n[k] * np.asarray(n, dtype=float)
    t1[k] += 1.0
    t1 /= np.sqrt(t1 @ t1)
    t2 = np.array([n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0]])
    ang = 2.0 * np.pi * np.arange(n_d) / max(n_d, 1)
    return np.outer(t1, np.cos(ang)) + np.outer(t2, np.sin(ang))
