"""Worked examples of the source papers, as data and closed forms.

- :func:`sphere_on_plane`: Trinkle (2003, section 4, eqs. 48–50), a unit sphere
  sliding then rolling on a plane, and :func:`sphere_closed_form`; :func:`sphere_columns`, the
  columns of any directions at its contact.
- :func:`particle_above_wall`: the particle tables of Trinkle (notes, 2003), pp. 7-12.
- :func:`euler_table`: explicit against semi-implicit Euler for a constant force (Trinkle (notes, 2003), p. 3).
- :func:`parts_seating`: frictionless parts seating and the point pushed into a corner (Trinkle
  (notes, 2003), pp. 29-30), with the notes' necessary (not sufficient) inequality on the applied impulse.
- :func:`bead_on_wire`, :func:`slider_with_joint_friction`, :func:`box_on_belt`: bilateral joints,
  joint dry friction and a moving surface in :func:`mbdcp.step` (Trinkle (notes, 2003), pp. 21-22;
  Trinkle 2003, eqs. 16 and 38).
"""
from dataclasses import dataclass

import numpy as np

import mbdcp
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.results import _Result

__all__ = [
    "SEATING_WN",
    "EulerTable",
    "SeatingResult",
    "Trajectory",
    "bead_on_wire",
    "box_on_belt",
    "euler_table",
    "particle_above_wall",
    "parts_seating",
    "simulate_sphere",
    "slider_with_joint_friction",
    "sphere_closed_form",
    "sphere_columns",
    "sphere_on_plane",
]


def sphere_on_plane(mu=0.2, m=1.0, r=1.0):
    """M, Wn, D, E, U of a uniform sphere (radius r, mass m) touching the plane z = 0.

    v = (v_x, v_y, v_z, w_x, w_y, w_z); inertia 2/5 m r^2; four friction directions
    along +x, -x, +y, -y at the contact point (0, 0, -r) relative to the centre (the
    D printed in Trinkle (2003), section 4, before eq. 48).
    """
    mu, m, r = val.nonnegative_scalar("mu", mu), val.positive_scalar("m", m), val.positive_scalar("r", r)
    inertia = 0.4 * m * r * r
    if not np.isfinite(inertia) or inertia == 0:
        raise ValueError(f"m r^2 = {m * r * r:.3g} is beyond the float64 range: rescale m or r (change units)")
    M = np.diag([m, m, m, inertia, inertia, inertia])
    Wn = np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T
    D = np.array([
        [1.0, -1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, -1.0],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, r, -r],
        [-r, r, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ])
    E = np.ones((4, 1))
    return M, Wn, D, E, np.array([mu])


def sphere_columns(directions, r=1.0):
    """The columns (d, r_c x d) of unit directions d (rows of ``directions``, shape (k, 3)) applied at
    the contact point r_c = (0, 0, -r) of a sphere of radius r on the plane z = 0, in the velocity
    (v_x, v_y, v_z, w_x, w_y, w_z) of :func:`sphere_on_plane`: shape (6, k). The normal's column is
    ``sphere_columns([[0, 0, 1]])``; a CCP's tangent pair ``sphere_columns([[1, 0, 0], [0, 1, 0]])``.

    >>> import mbdcp
    >>> mbdcp.examples.sphere_columns([[1.0, 0.0, 0.0]]).ravel().tolist()
    [1.0, 0.0, 0.0, 0.0, -1.0, 0.0]
    """
    d = val.as_array("directions", directions)
    if d.ndim != 2 or d.shape[1] != 3:
        raise ValueError(f"directions must have shape (k, 3), got {d.shape}")
    r_c = np.array([0.0, 0.0, -val.positive_scalar("r", r)])
    return np.concatenate([d, np.cross(r_c, d)], axis=1).T


def sphere_closed_form(t, v0=2.0, mu=0.2, g=9.81, r=1.0):
    """Exact (v_x, w_y) of the sphere released sliding at v0 along x (Trinkle 2003, section 4):
    it slides until t* = 2 v0 / (7 mu g), then rolls with v_x = r w_y = 5/7 v0."""
    t = val.as_array("t", t)
    if np.any(t < 0):
        raise ValueError(f"t must hold times after the release (t >= 0), got a minimum of {t.min():g}")
    v0, mu, g, r = val.real_scalar("v0", v0), val.positive_scalar("mu", mu), val.positive_scalar("g", g), \
        val.positive_scalar("r", r)
    t_star = 2.0 * v0 / (7.0 * mu * g)
    ts = np.minimum(t, t_star)
    vx = v0 - mu * g * ts
    wy = 2.5 * mu * g * ts / r
    if not (np.all(np.isfinite(vx)) and np.all(np.isfinite(wy))):
        raise ValueError(f"the velocities overflow float64 with t up to {np.abs(t).max():.3g}, v0 = {v0:.3g}, mu = {mu:.3g}, "
                         f"g = {g:.3g}, r = {r:.3g}: choose less extreme values (or change units)")
    return vx, wy


def simulate_sphere(h=0.12, T=0.6, v0=2.0, mu=0.2, g=9.81):
    """Time-step the sphere with :func:`mbdcp.step`: returns times, velocities (steps+1, 6),
    normal impulses and friction impulses (steps, 4)."""
    M, Wn, D, E, U = sphere_on_plane(mu)
    steps = _steps(h, T, 12)
    v0, g = val.real_scalar("v0", v0), val.real_scalar("g", g)
    v = np.array([v0, 0.0, 0.0, 0.0, 0.0, 0.0])
    z = 1.0  # height of the centre: the gap is z - r
    p_ext = np.array([0.0, 0.0, -g * h, 0.0, 0.0, 0.0])
    vs, pn, beta = [v], [], []
    for _ in range(steps):
        res = _solved("sphere", dict(h=h, v0=v0, mu=mu, g=g), M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=[z - 1.0])
        v = res.v_next
        z += h * v[2]
        vs.append(v)
        pn.append(res.p_n[0])
        beta.append(res.beta)
    return np.arange(steps + 1) * h, np.array(vs), np.array(pn), np.array(beta)


def particle_above_wall(steps=6, v0=-4.0, gap=1.0, wall_speed=0.0, m=1.0, h=1.0, g=1.0):
    """The 1-D particle falling onto a wall (Trinkle (notes, 2003), pp. 7-12): gap, velocity and p_n per step.

    The wall moves up at ``wall_speed``, so the gap's time derivative from the wall is
    dpsi_n = -wall_speed. Returns arrays p_n (steps,) and v (steps,) of the end velocities.
    """
    steps = val.integer("steps", steps, 0)
    val.fits_in_memory("steps", steps, 16 * steps, "for the impulses and velocities")
    v0, gap, wall_speed, g = (val.real_scalar(n, x) for n, x in (("v0", v0), ("gap", gap), ("wall_speed", wall_speed),
                                                                 ("g", g)))
    m, h = val.positive_scalar("m", m), val.positive_scalar("h", h)
    M, Wn = np.array([[m]]), np.array([[1.0]])
    D, E = np.zeros((1, 0)), np.zeros((0, 1))
    v, psi = np.array([v0]), gap
    pns, vs = [], []
    for _ in range(steps):
        res = _solved("particle", dict(v0=v0, gap=gap, wall_speed=wall_speed, m=m, h=h, g=g),
                      M, Wn, D, E, [0.0], v, h, p_ext=[-m * g * h], psi_n=[psi], dpsi_n=[-wall_speed])
        v = res.v_next
        psi += h * (v[0] - wall_speed)
        pns.append(res.p_n[0])
        vs.append(v[0])
    return np.array(pns), np.array(vs)


@dataclass(frozen=True, repr=False)
class EulerTable(_Result):
    """Rows l = 0..steps of :func:`euler_table`: times, the explicit and semi-implicit Euler
    positions and velocities, and the exact solution of q'' = F/m."""

    l: np.ndarray
    t: np.ndarray
    q_explicit: np.ndarray
    v_explicit: np.ndarray
    q_semi_implicit: np.ndarray
    v_semi_implicit: np.ndarray
    q_exact: np.ndarray
    v_exact: np.ndarray


def euler_table(steps=3, F=1.0, m=1.0, h=1.0, q0=0.0, v0=0.0):
    r"""Explicit against semi-implicit Euler for a particle under a constant force (Trinkle (notes, 2003), p. 3).

    Explicit: :math:`v^{l+1} = v^l + hF/m,\ q^{l+1} = q^l + h v^l` ("delayed response");
    semi-implicit: :math:`q^{l+1} = q^l + h v^{l+1}` ("extra fast response") — the scheme of
    :func:`mbdcp.step`, which is used here to compute it (a step without contacts). Both give
    the exact velocity; the positions bracket the exact :math:`q_0 + v_0 t + F t^2/(2m)`, which is
    their mean.

    Returns
    -------
    EulerTable

    Examples
    --------
    The notes' table (F = m = h = 1, starting at rest):

    >>> from mbdcp.examples import euler_table
    >>> tab = euler_table()
    >>> tab.q_explicit.tolist(), tab.q_semi_implicit.tolist(), tab.v_explicit.tolist()
    ([0.0, 0.0, 1.0, 3.0], [0.0, 1.0, 3.0, 6.0], [0.0, 1.0, 2.0, 3.0])
    """
    steps = val.positive_int("steps", steps, allow_none=False)
    val.fits_in_memory("steps", steps, 64 * steps, "for the table")
    F = val.real_scalar("F", F)
    m = val.positive_scalar("m", m)
    h = val.positive_scalar("h", h)
    q0 = val.real_scalar("q0", q0)
    v0 = val.real_scalar("v0", v0)
    qe, ve, qs, vs = [q0], [v0], [q0], [v0]
    no_contacts = (np.zeros((1, 0)), np.zeros((1, 0)), np.zeros((0, 0)), np.zeros(0))
    for _ in range(steps):
        qe.append(qe[-1] + h * ve[-1])
        ve.append(ve[-1] + h * F / m)
        v_next = _solved("particle", dict(F=F, m=m, h=h, q0=q0, v0=v0),
                         [[m]], *no_contacts, [vs[-1]], h, p_ext=[h * F]).v_next[0]
        vs.append(v_next)
        qs.append(qs[-1] + h * v_next)
    t = h * np.arange(steps + 1)
    if not (np.all(np.isfinite(qe)) and np.all(np.isfinite(qs)) and np.all(np.isfinite(F / m * t * t))):
        raise ValueError(f"the positions overflow float64 with steps = {steps}, F = {F:.3g}, m = {m:.3g}, h = {h:.3g}, "
                         f"q0 = {q0:.3g}, v0 = {v0:.3g}: choose less extreme values (or change units)")
    return EulerTable(l=np.arange(steps + 1), t=t, q_explicit=np.array(qe), v_explicit=np.array(ve),
                      q_semi_implicit=np.array(qs), v_semi_implicit=np.array(vs),
                      q_exact=q0 + v0 * t + 0.5 * F / m * t * t, v_exact=v0 + F / m * t)


#: The frictionless parts-seating example of Trinkle (notes, 2003), p. 29: a planar part, v = (v_x, v_y, w),
#: touching a wall (contact 1, normal x) and a floor at two points (contacts 2 and 3, normal y, the
#: third with unit moment arm). Columns are the contact normals W_n.
SEATING_WN = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
SEATING_WN.setflags(write=False)


@dataclass(frozen=True, repr=False)
class SeatingResult(_Result):
    """Result of :func:`parts_seating`.

    ``seed_bound``: the right side b of the notes' inequality :math:`p_{ext} \\le b`;
    ``seed_inequality``: whether it holds; ``p_n_required``: the impulses that close every
    contact in one step (the solution of the closure equations); ``seats``: whether they are all
    >= 0 (the exact condition); ``p_n``, ``v_next``, ``gaps_after`` (:math:`\\Psi + hW_n^Tv^{l+1}`)
    from :func:`mbdcp.step`; ``seated``: whether every gap is closed after the step."""

    seed_bound: np.ndarray
    seed_inequality: bool
    p_n_required: np.ndarray
    seats: bool
    p_n: np.ndarray
    v_next: np.ndarray
    gaps_after: np.ndarray
    seated: bool


def parts_seating(p_ext, psi_n, Wn=SEATING_WN, h=1.0, tol=1e-9):
    r"""Does one applied impulse seat a part, closing all its contacts in one step? (Trinkle (notes, 2003), pp. 29-30)

    With :math:`M = I`, :math:`v^l = 0` and fixed surfaces, the time step's LCP with every
    contact closed (:math:`\rho_n = W_n^Tv^{l+1} + \Psi_n/h = 0`) gives, for a square invertible
    :math:`W_n`,

    .. math::  p_n = -W_n^{-1}p_{ext} - W_n^{-1}W_n^{-T}\Psi_n/h \ge 0,

    the exact condition. The notes multiply it by :math:`W_n` to get the polytope
    :math:`p_{ext} \le -W_n^{-T}\Psi_n/h` — necessary (:math:`W_n \ge 0` entrywise keeps the
    sign) but not sufficient unless :math:`W_n^{-1} \ge 0` too, as for the point pushed into a
    corner (:math:`W_n = I`). The step itself is solved with :func:`mbdcp.step`.

    Parameters
    ----------
    p_ext : array_like, shape (n,)
        Applied impulse.
    psi_n : array_like, shape (n,)
        Gaps before the step (> 0 for a part not seated).
    Wn : array_like, shape (n, n)
        Invertible normal Jacobian (default: the notes' :data:`SEATING_WN`).
    h : float
        Time step.
    tol : float
        A gap or impulse within tol of zero counts as zero.

    Returns
    -------
    SeatingResult

    Examples
    --------
    Pushing with p_ext = (-1, -1, -1) against gaps (1, 1, 1) satisfies the notes' inequality
    (bound (-1, -1, 0)) but would need a negative impulse at contact 2: the part tilts, contact 2
    stays open.

    >>> from mbdcp.examples import parts_seating
    >>> res = parts_seating([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0])
    >>> (res.seed_bound + 0.0).tolist(), res.seed_inequality, (res.p_n_required + 0.0).tolist(), res.seats, res.seated
    ([-1.0, -1.0, 0.0], True, [0.0, -1.0, 1.0], False, False)
    """
    Wn = val.matrix("Wn", Wn, (None, None), ("n", "n"))
    n = Wn.shape[0]
    if Wn.shape[1] != n:
        raise ValueError(f"Wn must be square (n, n), got shape {Wn.shape}")
    if abs(np.linalg.det(Wn)) < 1e-12 * max(1.0, np.abs(Wn).max()) ** n:
        raise ValueError("Wn must be invertible")
    p_ext = val.vector("p_ext", p_ext, n, symbol="n")
    psi_n = val.vector("psi_n", psi_n, n, symbol="n")
    h = val.positive_scalar("h", h)
    tol = val.positive_scalar("tol", tol)
    with np.errstate(over="ignore"):
        rate = psi_n / h
    if not np.all(np.isfinite(rate)):
        raise ValueError(f"psi_n / h overflows float64 (psi_n up to {np.abs(psi_n).max():.3g}, h = {h:.3g}): "
                         "choose a larger h (or change units)")
    WnT_inv_psi = np.linalg.solve(Wn.T, rate)
    bound = -WnT_inv_psi
    required = -np.linalg.solve(Wn, p_ext + WnT_inv_psi)
    res = _solved("parts seating", dict(p_ext=p_ext, psi_n=psi_n, Wn=Wn, h=h),
                  np.eye(n), Wn, np.zeros((n, 0)), np.zeros((0, n)), np.zeros(n), np.zeros(n), h, p_ext=p_ext, psi_n=psi_n)
    gaps = psi_n + h * (Wn.T @ res.v_next)
    return SeatingResult(
        seed_bound=bound, seed_inequality=bool(np.all(p_ext <= bound + tol)), p_n_required=required,
        seats=bool(np.all(required >= -tol)), p_n=res.p_n, v_next=res.v_next, gaps_after=gaps,
        seated=bool(np.all(np.abs(gaps) <= tol * max(1.0, np.abs(psi_n).max()))),
    )


@dataclass(frozen=True, repr=False)
class Trajectory(_Result):
    """A simulated trajectory: times (steps+1,), positions q and velocities v (steps+1, n_v) at
    those times, and the constraint impulses of each step (steps, k) in ``impulses``."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    impulses: np.ndarray


def _steps(h, T, per_step):
    """round(T / h) for valid h and T, refused when the ``per_step`` numbers recorded per step would
    not fit in memory."""
    h, T = val.positive_scalar("h", h), val.positive_scalar("T", T)
    steps = val.step_count(h, T)
    val.fits_in_memory("T / h", steps, 8 * per_step * steps + 64 * steps, "for the recorded steps")
    return steps


def _unsolved(what, params, reason):
    """The ValueError for parameters (valid one by one) whose step the solver refuses or does not
    solve: which of them is to blame only their combination says, so it names them all."""
    given = ", ".join(f"{k} = {v:.3g}" if np.ndim(v) == 0 else f"{k} up to {np.abs(v).max(initial=0.0):.3g}"
                      for k, v in params.items())
    return ValueError(f"the {what} with {given} gives a step the solver cannot take ({reason}): "
                      "choose less extreme values (or change units)")


def _solved(what, params, *args, **kwargs):
    """mbdcp.step(*args, **kwargs), or the _unsolved error of ``params`` when it raises a
    ValueError or is not SOLVED."""
    try:
        res = mbdcp.step(*args, **kwargs)
    except ValueError as exc:
        raise _unsolved(what, params, str(exc)) from None
    if not res.success:
        raise _unsolved(what, params, res.message)
    return res


def _march(step, q, v, steps, h, what, params):
    """``steps`` semi-implicit Euler steps: ``step(q, v) -> (StepResult, impulses)`` gives v_next,
    then q += h v_next. A step that is not SOLVED raises the _unsolved error of ``params``."""
    qs, vs, imp = [q], [v], []
    for _ in range(steps):
        try:
            res, impulses = step(q, v)
        except ValueError as exc:  # finite parameters whose products overflow, or a singular joint
            raise _unsolved(what, params, str(exc)) from None
        if not res.success:
            raise _unsolved(what, params, res.message)
        v = res.v_next
        q = q + h * v
        qs.append(q)
        vs.append(v)
        imp.append(impulses)
    return Trajectory(t=h * np.arange(steps + 1), q=np.array(qs), v=np.array(vs), impulses=np.array(imp))


def bead_on_wire(theta0=0.5, length=1.0, h=1e-3, T=2.0, m=1.0, g=9.81):
    r"""A bead on a circular frictionless wire (a pendulum), time-stepped with :func:`mbdcp.step`.

    The wire is the bilateral constraint :math:`\Theta(q) = |q| - l = 0` (Trinkle (notes, 2003), p. 22), q the
    bead's position from the wire's centre: :math:`W_b = q/|q|`, with :math:`\Theta/h` correcting
    the drift each step. Starts at rest at angle ``theta0`` from the bottom. The joint impulse
    over a step is :math:`-h` times the wire's pull on the bead (``impulses[:, 0]``).
    """
    theta0 = val.real_scalar("theta0", theta0)
    length, h, T, m = (val.positive_scalar(n, x) for n, x in (("length", length), ("h", h), ("T", T), ("m", m)))
    g = val.real_scalar("g", g)
    steps = _steps(h, T, 6)
    q = length * np.array([np.sin(theta0), -np.cos(theta0)])
    v = np.zeros(2)
    M, p_ext = m * np.eye(2), np.array([0.0, -m * g * h])
    no_contacts = (np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 0)), np.zeros(0))

    def step(q, v):
        r = np.linalg.norm(q)
        res = mbdcp.step(M, *no_contacts, v, h, p_ext=p_ext, Wb=(q / r)[:, None], theta=[r - length])
        return res, res.p_b

    return _march(step, q, v, steps, h, "bead", dict(theta0=theta0, length=length, h=h, m=m, g=g))


def slider_with_joint_friction(force, c_max, v0=0.0, h=1e-2, T=1.0, m=1.0):
    r"""A block on a horizontal rail (a prismatic joint) with dry joint friction, by :func:`mbdcp.step`.

    v = (v_x, v_y); the rail is the joint :math:`W_b = e_y`; its friction (Trinkle 2003, eqs. 16 and 38) acts
    along :math:`D_j = [e_x, -e_x]` with at most ``c_max`` (a force; :math:`\beta_{max} = h c_{max}`).
    A constant ``force`` along x is applied. Closed form: the block sticks while
    :math:`|F| \le c_{max}`, else slides with :math:`m\dot v = F - c_{max}\,\mathrm{sign}(v)`.
    ``impulses`` holds :math:`(\beta_{j+}, \beta_{j-}, p_b)` per step.
    """
    force = val.real_scalar("force", force)
    c_max = val.nonnegative_scalar("c_max", c_max)
    v0 = val.real_scalar("v0", v0)
    h, T, m = (val.positive_scalar(n, x) for n, x in (("h", h), ("T", T), ("m", m)))
    steps = _steps(h, T, 7)
    M = m * np.eye(2)
    Wb, Dj, Ej = np.array([[0.0], [1.0]]), np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    no_contacts = (np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 0)), np.zeros(0))
    q, v = np.zeros(2), np.array([v0, 0.0])

    def step(q, v):
        res = mbdcp.step(M, *no_contacts, v, h, p_ext=[h * force, 0.0], Wb=Wb, Dj=Dj, Ej=Ej, beta_max=[h * c_max])
        return res, np.concatenate([res.beta_j, res.p_b])

    return _march(step, q, v, steps, h, "slider", dict(force=force, c_max=c_max, v0=v0, h=h, m=m))


def box_on_belt(belt_speed=1.0, mu=0.3, v0=0.0, h=1e-2, T=1.0, m=1.0, g=9.81):
    r"""A box dropped at rest on a conveyor belt, by :func:`mbdcp.step` with a moving surface.

    Planar, v = (v_x, v_z); the belt z = 0 moves along x at ``belt_speed``, so the relative
    tangential velocity is :math:`D^Tv + \partial_t\Psi_f` with
    :math:`\partial_t\Psi_f = -D^T(V e_x) = (-V, V)` (Trinkle (notes, 2003), p. 21). Closed form: friction
    :math:`\mu m g` accelerates the box until it moves with the belt, :math:`v_x(t) = \min(v_0 +
    \mu g t, V)` for :math:`v_0 \le V`. ``impulses`` holds :math:`(p_n, \beta_+, \beta_-)`.
    """
    V = val.real_scalar("belt_speed", belt_speed)
    mu = val.nonnegative_scalar("mu", mu)
    v0 = val.real_scalar("v0", v0)
    h, T, m = (val.positive_scalar(n, x) for n, x in (("h", h), ("T", T), ("m", m)))
    g = val.real_scalar("g", g)
    steps = _steps(h, T, 7)
    M, Wn = m * np.eye(2), np.array([[0.0], [1.0]])
    D, E = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    dpsi_f = -D.T @ np.array([V, 0.0])
    q, v = np.zeros(2), np.array([v0, 0.0])

    def step(q, v):
        res = mbdcp.step(M, Wn, D, E, [mu], v, h, p_ext=[0.0, -m * g * h], psi_n=[q[1]], dpsi_f=dpsi_f)
        return res, np.concatenate([res.p_n, res.beta])

    return _march(step, q, v, steps, h, "belt", dict(belt_speed=V, mu=mu, v0=v0, h=h, m=m, g=g))
