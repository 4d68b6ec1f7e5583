"""One time step of the Stewart–Trinkle / Anitescu–Potra contact LCP (Trinkle 2003, eqs. 25–47)."""
import numpy as np

from mbdcp.formulations.registry import STEP_DATA, Formulation, Layer, register
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import stabilization as stab
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.deprecated import renamed_value
from mbdcp.infrastructure.problem import full_joint_impulse, solve_joints, step_data, warm_start_flags
from mbdcp.infrastructure.results import LCPData, StepResult
from mbdcp.infrastructure.status import Status

__all__ = ["step", "friction_basis"]

_STATUS = tuple(Status)  # index by the C status code
_MESSAGE = {s: s.message for s in Status}
METHODS = ("lemke",)  # the solvers of the step's LCP


class _Default(str):
    """A default str argument known by identity: step() takes the deprecated ``solver`` as its own
    parameter (a wrapper would cost a Python call per step) and must tell ``method`` given from
    ``method`` defaulted."""


_LEMKE = _Default("lemke")


def step(M, Wn, D, E, U, v, h, *, p_ext=None, psi_n=None, dpsi_n=None, dpsi_f=None, Wb=None,
         theta=None, dtheta=None, Dj=None, Ej=None, beta_max=None, method=_LEMKE, tol=None, max_iter=None,
         return_lcp=False, warm_start=None, max_correction_speed=None, baumgarte=1.0, solver=None):
    r"""One time step of the Stewart–Trinkle / Anitescu–Potra contact LCP.

    Solves the mixed LCP (Stewart & Trinkle 1996; Anitescu & Potra 1997; written
    as in Trinkle 2003, eqs. 25–38, with his dry friction in one-degree-of-freedom
    joints, eq. 38) for the velocity :math:`v^{l+1}` and the impulses over the step:

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
    that Lemke's method solves (``return_lcp=True`` returns it; Trinkle 2003,
    eqs. 39–47). Without joints and with :math:`\Psi_n/h + \partial_t\Psi_n \ge 0`
    a solution always exists and Lemke finds it (Anitescu & Potra 1997; Trinkle
    2003, section 3.2); with joints or penetration it may end on a ray,
    which is reported as a status. :math:`\Psi_n/h` is the stabilisation term:
    a penetration is removed in one step.

    Parameters
    ----------
    M : array_like, shape (n_v, n_v)
        Symmetric positive definite mass matrix.
    Wn : array_like, shape (n_v, n_c)
        Normal Jacobian (columns: generalized contact normals).
    D : array_like, shape (n_v, m)
        Friction directions, grouped by contact.
    E : array_like, shape (m, n_c)
        One 1 per row: column j marks contact j's directions.
    U : float or array_like, shape (n_c,) or (n_c, n_c)
        Friction coefficients mu_j >= 0 (a scalar applies to all; a matrix must be diagonal).
    v : array_like, shape (n_v,)
        Velocity at the start of the step.
    h : float
        Time step > 0.
    p_ext : array_like, shape (n_v,), optional
        Applied impulse over the step (h times the applied force).
    psi_n : array_like, shape (n_c,), optional
        Gaps at the start of the step (the stabilisation term :math:`\Psi_n/h`).
    dpsi_n : array_like, shape (n_c,), optional
        Prescribed normal surface velocities (moving surfaces).
    dpsi_f : array_like, shape (m,), optional
        Prescribed tangential surface velocities along the friction directions (conveyor belts).
    Wb : array_like, shape (n_v, n_b), optional
        Bilateral joint Jacobian. Redundant joint equations (Wb without full column rank, e.g. a
        rigid loop) are solved on a largest independent subset: ``v_next`` is unique, ``p_b`` is
        one of the many impulse distributions (the dependent equations get none); their
        theta/dtheta must agree with the others.
    theta, dtheta : array_like, shape (n_b,), optional
        Joint drift :math:`\Theta` (removed in one step, :math:`\Theta/h`) and explicit time
        derivative :math:`\partial_t\Theta`.
    Dj : array_like, shape (n_v, m_j), optional
        Joint dry friction directions.
    Ej : array_like, shape (m_j, n_j), optional
        Their grouping by joint.
    beta_max : array_like, shape (n_j,), optional
        Largest joint friction impulse per joint (>= 0).
    method : str
        ``"lemke"`` (the only pivoting solver; the relaxations are :func:`mbdcp.fixed_point`).
        ``solver``, its old name, is deprecated.
    tol, max_iter : optional
        Lemke's verification tolerance and pivot limit (see :func:`mbdcp.lemke`).
    return_lcp : bool
        Also return the reduced LCP (F, f, z, w) as ``res.lcp``.
    warm_start : StepResult or ndarray of bool, optional
        A previous result (or a boolean array of the LCP's size): Lemke starts from its final basis
        (``res.basis``) — in a simulation, the last step's. A hint of another size (the contacts
        changed) is ignored; a wrong one only costs pivots, never correctness.
    max_correction_speed : float, optional
        A cap on the correction of a penetration :math:`\Psi_i < 0`, as Negrut, Serban & Tasora
        (2018) suggest after their eq. 6: the stabilisation
        term uses :math:`\max(b\Psi_i, -h v_{max})` instead of :math:`\Psi_i`, so that the
        separation velocity asked for is at most this (default: no cap). Gaps
        :math:`\Psi_i \ge 0` are never changed.
    baumgarte : float
        The fraction b in (0, 1] of a penetration removed per step (default 1).
    solver : str, optional
        Deprecated name of ``method`` (a DeprecationWarning).

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
    if solver is not None:
        method = renamed_value("step", "solver", solver, "method", method is not _LEMKE)
    if (dpsi_n is None and dpsi_f is None and Wb is None and theta is None and dtheta is None and Dj is None and Ej is None
            and beta_max is None and (method is _LEMKE or (type(method) is str and method == "lemke"))
            and tol is None and max_iter is None
            and return_lcp is False and warm_start is None and max_correction_speed is None
            and type(baumgarte) is float and baumgarte == 1.0 and type(h) is float):
        fast = _core.step_plain(M, Wn, D, E, U, v, h, p_ext, psi_n)  # None: validate and name below
        if fast is not None:
            return fast
    val.choice("method", method, METHODS)
    max_iter, tol = val.lemke_settings(max_iter, tol)
    return_lcp = val.flag("return_lcp", return_lcp)
    psi_n = stab.corrected("psi_n", psi_n, h, max_correction_speed, baumgarte)
    data = step_data(M, Wn, D, E, U, v, h, p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max)
    _, n_c, m, n_b, m_j, n_j = data.sizes
    start = warm_start_flags(warm_start, 2 * n_c + m + m_j + n_j)
    (v_next, p_b, z, w, F, f, status, pivots, residual, basis), keep = solve_joints(
        _core.step, data, max_iter, tol, bool(return_lcp), start)
    p_b = full_joint_impulse(p_b, keep, n_b)
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
    n = val.unit_vector("normal", normal, 3)
    n_d = val.integer("n_d", n_d, 0)
    val.fits_in_memory("n_d", n_d, 48 * n_d, "for the (3, n_d) directions")
    return _friction_basis(n, n_d)


def unit_circle(n_d):
    """cos and sin of 2 pi k / n_d, k = 0..n_d-1, with the symmetries exact: 0 and +-1 at quarter
    turns, direction k + n_d/2 the exact opposite of k, and sin(a) = cos(pi/2 - a) where n_d is a
    multiple of 4. NumPy's cos(pi/2) is 6e-17: a direction that should be orthogonal to a motion
    then carries 1e-16 of it, and the LCP of a sphere rolling along an axis had to honour that."""
    k = np.arange(n_d)
    ang = 2.0 * np.pi * k / max(n_d, 1)
    c, s = np.cos(ang), np.sin(ang)
    quarter = (4 * k) % max(n_d, 1) == 0  # there cos and sin are 0 or +-1 up to rounding
    c[quarter], s[quarter] = np.round(c[quarter]), np.round(s[quarter])
    back = k[1:(n_d + 1) // 2]
    c[n_d - back], s[n_d - back] = c[back], -s[back]  # cos is even and sin odd, exactly
    if n_d % 2 == 0:
        c[n_d // 2:], s[n_d // 2:] = -c[:n_d // 2], -s[:n_d // 2]
    if n_d % 4 == 0:
        s = c[(n_d // 4 - k) % n_d]
    return c, s


def _friction_basis(n, n_d):
    """friction_basis for a unit 3-vector n, without validation (hot loops of the mechanics layer):
    the C core's friction directions (directions.h) without a slip, the rule of both layers."""
    c, s = unit_circle(n_d)
    return _core.friction_directions(np.ascontiguousarray(n, dtype=np.float64).reshape(1, 3), None, None, 0.0, c, s)[0]


def _pose(s, options):
    """The time step s as it is: this formulation models every datum of it."""
    kw, _ = s.modelled(STEP_DATA)
    return (lambda: step(s.M, s.Wn, s.D, s.E, s.mu, s.v, s.h, **kw, **options)), ""


register(Formulation(
    name="lcp", title="Stewart–Trinkle / Anitescu–Potra time-stepping LCP, solved by Lemke's method",
    cite="Stewart & Trinkle (1996); Anitescu & Potra (1997); Trinkle (2003), eqs. 25–47", function=step,
    result=StepResult, derivative="mbdcp.derivatives.step", contacts="directions", data=frozenset(STEP_DATA),
    options=frozenset({"method", "tol", "max_iter", "warm_start", "max_correction_speed", "baumgarte"}), pose=_pose,
    stepper="mbdcp.mechanics.steppers.lcp", stops=True,
    layer=Layer("step", ("M", "Wn", "D", "E", "U", "v", "h"), STEP_DATA,
                ("v_next", "p_n", "beta", "sigma", "p_b", "beta_j", "sigma_j"),
                (("n_v",), ("n_c",), ("m",), ("n_c",), ("n_b",), ("m_j",), ("n_j",)),
                ("degenerate_tol", "max_correction_speed", "baumgarte"), combinatorial=("E", "Ej"),
                filler={"pivots": 0, "residual": 0.0}, native="mbdcp.derivatives._native_step.vjp",
                batch="mbdcp.derivatives._layers.step_batch")))
