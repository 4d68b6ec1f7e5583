"""The time-stepping loop and what it records."""
import time
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

import mbdcp
from mbdcp.formulations import registry
from mbdcp.infrastructure import stabilization as stab
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.results import _Result
from mbdcp.mechanics import assembly, checks
from mbdcp.mechanics.contacts import CoincidentCentres, UnsupportedPair
from mbdcp.mechanics.scene import Scene
from mbdcp.mechanics.shapes import Shapes

__all__ = ["Failure", "Shapes", "Trajectory", "default_penetration_tolerance", "simulate"]


@dataclass(frozen=True)
class Failure:
    """The first reason a trajectory is not a success: at time index ``step`` (for a non-finite
    state, the index it would have had), ``reason`` "solver" (a status other than SOLVED),
    "non-finite", "penetration", "coincident" (two round bodies on one centre: no contact
    normal) or "unsupported pair" (a box within reach of another body: no contact model), and a
    message."""

    step: int
    reason: str
    message: str


@dataclass(frozen=True, repr=False)
class Trajectory(_Result):
    r"""What :func:`simulate` recorded, one entry per time (index 0: the initial state).

    ``success`` is True only if every step reached the solver's status SOLVED, every state is
    finite and no penetration exceeds ``penetration_tolerance``; ``first_failure`` says where
    and why not. A step giving a non-finite state (``finite`` False) or two round bodies on one
    centre ends the run before it.

    ``times`` has shape (steps + 1,). ``positions`` has one row per time (row k: the state at
    ``times[k]``) and the bodies' configurations side by side, body after body in the scene's
    order: a planar body has 3 columns :math:`(x, y, \theta)` (the angle in radians), a spatial body
    7, :math:`(x, y, z, e_0, e_1, e_2, e_3)`, its position then its unit quaternion, scalar part
    :math:`e_0` first. Body i's columns are ``positions[:, 3*i:3*i+3]`` or
    ``positions[:, 7*i:7*i+7]``, and ``positions.reshape(len(times), n_bodies, -1)`` gives
    (time, body, coordinate). ``velocities`` has the same rows and per body :math:`(\dot x, \dot y,
    \omega)` (3 columns) or :math:`(\dot x, \dot y, \dot z, \omega_x, \omega_y, \omega_z)` (6
    columns, :math:`\omega` in the world frame).

    Per step it also keeps the solver's iterations (``iterations``: Lemke's pivots for "lcp"), the
    active contacts' :class:`~mbdcp.ContactState` (``contact_states``, drawn by
    :meth:`plot_contact_states`), points and normals, and the scene's geometry (``shapes``) for
    :meth:`animate`.
    """

    times: np.ndarray
    positions: np.ndarray          # (steps + 1, n_q): per body q = (x, y, theta) or (x, quaternion)
    velocities: np.ndarray         # (steps + 1, n_v)
    impulses: list                 # per step: normal impulses of the active contacts
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    max_penetration: np.ndarray    # per time: the deepest penetration of the active contacts
    contacts: np.ndarray           # per step: number of active contacts
    statuses: list                 # per step: the solver's Status
    seconds: float
    solver_seconds: float = 0.0    # spent inside the solver calls
    finite: bool = True
    penetration_tolerance: float = np.inf
    first_failure: Optional[Failure] = None
    contact_states: list = field(default_factory=list)   # per step: ContactState of each active contact
    contact_points: list = field(default_factory=list)   # per step: (n_c, dim) points of the active contacts
    contact_normals: list = field(default_factory=list)  # per step: (n_c, dim) unit normals (into body a)
    shapes: Optional["Shapes"] = None  # the scene's geometry at t = 0, for drawing (:meth:`animate`)
    iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))  # per step: the solver's
    # iterations (Lemke's pivots for "lcp", the fixed point's iterations, the CCP solver's)

    @property
    def steps(self):
        return len(self.times) - 1

    @property
    def penetration_ok(self):
        return bool(np.all(self.max_penetration <= self.penetration_tolerance))

    @property
    def success(self):
        return self.first_failure is None

    def plot_energy(self, ax=None):
        """Kinetic and (shifted) potential energy against time, into ``ax`` (a matplotlib Axes;
        default: a new figure); returns the Axes."""
        from mbdcp.mechanics.animate import plot_series

        return plot_series(ax, self.times, {"kinetic": self.kinetic_energy,
                                            "potential (shifted)": self.potential_energy - self.potential_energy[-1]},
                           "energy")

    def plot_contact_states(self, ax=None):
        """Stick/slip timeline: one row per active contact (its index in the step's contact list,
        which changes when contacts appear or vanish), one column per step, coloured by its
        :class:`~mbdcp.ContactState` (white: no such contact at that step), into ``ax`` (default: a
        new figure); returns the Axes."""
        from mbdcp.mechanics.animate import plot_contact_states

        return plot_contact_states(self, ax)

    def animate(self, scene=None, *, every=1, arrows=False, interval=None, figsize=(5.0, 4.0), dpi=72):
        """An animation of the recorded motion (matplotlib; inline in Jupyter, GIF without ffmpeg).

        Planar bodies are drawn as disks (a spoke shows the angle; particles as dots), spatial ones
        projected on the x–z plane: spheres as disks with a spoke along the body's x axis, boxes as
        the outline of their projected corners. Walls are drawn as lines (planes whose normal is
        nearly along y are not drawn). With ``arrows`` every active contact gets a segment along
        its normal of length proportional to its normal impulse, coloured by its contact state
        (blue sticking, red sliding, grey separating): frame k shows the contacts and impulses of
        the step from state k.

        Parameters
        ----------
        scene : a :class:`~mbdcp.mechanics.Scene` giving the bodies' shapes and the walls (at
            t = 0) when the trajectory has no ``shapes`` (default: the recorded ones).
        every : draw every ``every``-th state (a positive integer); there are
            ``len(range(0, steps + 1, every))`` frames.
        arrows : draw the contact impulses.
        interval : milliseconds between frames (default: real time, at least 20 ms).
        figsize, dpi : the figure's size in inches and resolution (small keeps notebooks light).

        Returns
        -------
        matplotlib.animation.FuncAnimation
            It shows as an HTML/JavaScript player in Jupyter (``_repr_html_`` uses ``to_jshtml``
            unless ``rcParams["animation.html"]`` asks otherwise); save a GIF with
            ``anim.save("motion.gif", writer=matplotlib.animation.PillowWriter(fps=20))``.
        """
        from mbdcp.mechanics.animate import animate

        return animate(self, scene, every=every, arrows=arrows, interval=interval, figsize=figsize, dpi=dpi)

    def plot_penetration(self, ax=None):
        """The largest penetration of each step against time, into ``ax`` (default: a new figure);
        returns the Axes."""
        from mbdcp.mechanics.animate import plot_series

        return plot_series(ax, self.times, {"largest penetration": self.max_penetration}, "largest penetration")


def _reach(scene, h):
    """Why a penetration may have happened: the activation distance delta against the step."""
    delta = scene.activation_distance(h)
    given = "given" if scene._delta_given else "default"
    return (f" (the activation distance delta = {delta:.3g}, {given}, may be shorter than the bodies moved in a step "
            f"of h = {h:.3g}: give Scene(delta=...) larger, or a smaller h)")


def default_penetration_tolerance(scene):
    """10 % of the smallest body size (radius, or a box's smallest half extent); infinite when
    every body is a particle."""
    size = scene.smallest_size()
    return np.inf if size is None else 0.1 * size


def _deprecated_tolerances(method, tol, deprecated):
    """tol, or the deprecated ccp_tol / fp_tol of that method (a DeprecationWarning each; each
    checked under its own name, whichever method runs)."""
    for old, its_method in (("ccp_tol", "ccp"), ("fp_tol", "fixed_point")):
        if old in deprecated:
            warnings.warn(f"simulate(): {old} is deprecated; use tol", DeprecationWarning, stacklevel=4)
            value = val.positive_scalar(old, deprecated.pop(old))
            if method == its_method:
                if tol is not None:
                    raise TypeError(f"simulate() got tol and its deprecated name {old}: pass tol only")
                tol = value
    if deprecated:
        raise TypeError(f"simulate() got an unexpected keyword argument {next(iter(deprecated))!r}")
    return tol


def _settings(scene, method, h, T, options, deprecated):
    """Every option of simulate checked whichever method uses it (an option given is an option
    checked): (h, steps, max_penetration, solver options)."""
    if not isinstance(scene, Scene):
        raise TypeError(f"scene must be a mbdcp.mechanics.Scene, got {val.describe(scene)}")
    method = val.choice("method", method, _scene_methods())
    h, T = checks.positive("h", h), checks.nonnegative("T", T)
    if T < h:
        raise ValueError(f"T must be at least h (the run takes round(T / h) steps), got T = {T} < h = {h}")
    steps = val.step_count(h, T)
    per_step = 8 * (scene.configuration().size + scene.n_v + 16) + 512  # the states and lists recorded per step
    val.fits_in_memory("T / h", f"{steps} steps", steps * per_step, "to record the trajectory")
    pen = options.pop("max_penetration")
    pen = default_penetration_tolerance(scene) if pen is None else val.threshold("max_penetration", pen)
    options["algorithm"] = _algorithm(method, options["algorithm"])
    tol = _deprecated_tolerances(method, options["tol"], deprecated)
    if tol is not None:
        tol = val.scalar_in("tol", tol, 0.0, 1.0, True, True) if method == "lcp" else val.positive_scalar("tol", tol)
    options.update(tol=tol, max_iter=val.positive_int("max_iter", options["max_iter"]),
                   warm_start=val.flag("warm_start", options["warm_start"]))
    stab.settings(options["max_correction_speed"], options["baumgarte"])
    for name, x in scene.fields().items():
        if not np.all(np.isfinite(x)):
            k = int(np.flatnonzero(~np.isfinite(x).reshape(len(x), -1).all(axis=1))[0])
            raise ValueError(f"bodies[{k}].{name} must be finite, got {x[k]}")
    return method, h, steps, pen, options


def _algorithm(method, algorithm):
    """The method's algorithm, as its registry entry says (``Formulation.algorithm``: Anitescu &
    Hart's 1, 2 or 3, or the CCP's solver), its default when None; a method without one takes an
    integer 1-3 and ignores it (as it always has)."""
    _, default, choices = registry.formulation(method).algorithm or (None, 3, (1, 2, 3))
    if algorithm is None:
        return default
    if isinstance(choices[0], str):
        return val.choice("algorithm", algorithm, choices)
    if isinstance(algorithm, str):
        raise ValueError(f"algorithm must be 1, 2 or 3 (Anitescu & Hart 2004) for method {method!r}, got {algorithm!r}")
    return val.integer("algorithm", algorithm, min(choices), max(choices))


def _inertia(scene):
    """The world inertias of a spatial scene's bodies, None for a planar one."""
    return None if scene.planar else assembly.world_inertia(scene.fields())


def _scene_methods():
    return tuple(f.name for f in registry.formulations() if f.scenes)


def _solver(scene, method, h, algorithm, tol, max_iter, warm_start=True, correction=None):
    """(form, parts, solve) for the method; solve(args) -> (result, normal impulses)."""
    options = dict(correction or {})  # max_correction_speed, baumgarte
    if max_iter:
        options["max_iter"] = max_iter
    if tol is not None:
        options["tol"] = tol
    entry = registry.formulation(method)
    if entry.algorithm:
        options[entry.algorithm[0]] = algorithm
    form, parts = _FORMS[entry.contacts]
    return entry.scene_form or form, parts, entry.stepper_function()(scene, h, options, warm_start)


# How a formulation's contacts are assembled for its stepper: D and E ("directions", dense unless
# its scene_form says otherwise), or the normals and tangent pairs as the CCP's P with M as its
# diagonal blocks ("pairs").
_FORMS = {"directions": ("dense", ("Wn", "D")), "pairs": ("blocks", ("P",))}


def simulate(scene, h, T, method="lcp", progress=True, algorithm=None, tol=None, max_iter=None,
             max_penetration=None, warm_start=True, max_correction_speed=None, baumgarte=1.0, **deprecated):
    """Time-step a scene from t = 0 to T with step h; the scene's bodies are advanced in place.

    Parameters
    ----------
    scene : Scene
        The bodies, walls and joints; advanced in place.
    h : float
        The time step > 0.
    T : float
        The final time, at least h (round(T / h) steps).
    method : str
        ``"lcp"`` (:func:`mbdcp.step`), ``"fixed_point"`` (:func:`mbdcp.fixed_point` with
        ``algorithm``; fixed walls only) or ``"ccp"`` (:func:`mbdcp.ccp`, M passed as its diagonal
        blocks; walls may move along their normal only).
    progress : bool
        Show a tqdm progress bar (the results do not depend on it).
    algorithm : int or str, optional
        The method's algorithm: Anitescu & Hart's (2004) algorithm 1, 2 or 3 for ``"fixed_point"``
        (default 3); the solver of :func:`mbdcp.ccp` for ``"ccp"``: ``"auto"`` (the default: APGD,
        and for a step it has not settled within about the work of an interior-point solve, the
        interior-point method; the steps of a 2-D pile at rest that APGD crawls on), ``"apgd"``,
        ``"newton"``, ``"ipm"``, ``"pjacobi"`` or ``"pgs"``.
    tol, max_iter : optional
        The tolerance and iteration limit of the method's solver (its own defaults if None):
        Lemke's for ``"lcp"``, the fixed point's for ``"fixed_point"``, the CCP's for ``"ccp"``.
        ``ccp_tol`` and ``fp_tol``, their old names, are deprecated.
    max_penetration : float, optional
        The penetration (m) beyond which the run is not a success; None: 10 % of the smallest body
        size (radius or smallest half extent; no check if all bodies are particles), a size no
        stable run approaches; ``np.inf`` turns the check off.
    warm_start : bool
        ``"lcp"`` and ``"fixed_point"``: start each step's Lemke solves (for algorithms 1–3 the first
        P1 and P2) from the previous step's final bases, carried over contact by contact (a contact
        that persists keeps its basic variables, a new one starts separating): a settling pile costs
        a few pivots per step instead of a cold solve; ``"ccp"``: start each contact's impulse
        from its value at the previous step (new contacts from zero).
    max_correction_speed : float, optional
        At most this separation speed corrects a penetration (see :func:`mbdcp.step`; default: no cap).
    baumgarte : float
        The fraction of a penetration removed per step (default 1).

    Returns
    -------
    Trajectory
        A step of the iterative solvers not reaching the status SOLVED is recorded in
        ``statuses`` and the run goes on with the solver's last iterate; a failed step of a method
        whose registry entry says so (``Formulation.stops``: "lcp", where Lemke's last basic point
        is not a motion), a step giving a non-finite state, or two round bodies on one centre,
        stops the run before that state (the bodies keep the last state).
        ``success`` (no failure at all) and ``first_failure`` summarise.

    Examples
    --------
    With h = 1 s a 1 m box released 0.5 m above the floor falls 9.81 m in one step. The default
    activation distance grows with the step and the bodies' speed and catches it; with
    ``delta = 0.05`` given it sinks 9 m, and the trajectory says so, naming delta:

    >>> from mbdcp.mechanics import Body3D, Plane, Scene, simulate
    >>> box = Body3D(1.0, [0, 0, 1.0], half_extents=[0.5, 0.5, 0.5])
    >>> simulate(Scene([box], [Plane([0, 0, 0], [0, 0, 1])]), h=1.0, T=1.0, progress=False).success
    True
    >>> box = Body3D(1.0, [0, 0, 1.0], half_extents=[0.5, 0.5, 0.5])
    >>> tr = simulate(Scene([box], [Plane([0, 0, 0], [0, 0, 1])], delta=0.05), h=1.0, T=1.0, progress=False)
    >>> tr.success, tr.first_failure.message[:66]
    (False, 'the penetration 9.31 at step 1 exceeds max_penetration = 0.05 (the')
    >>> "delta = 0.05, given" in tr.first_failure.message
    True
    """
    options = {"algorithm": algorithm, "tol": tol, "max_iter": max_iter, "max_penetration": max_penetration,
               "warm_start": warm_start, "max_correction_speed": max_correction_speed, "baumgarte": baumgarte}
    method, h, steps, pen_tol, o = _settings(scene, method, h, T, options, deprecated)
    progress = val.flag("progress", progress)
    correction = dict(max_correction_speed=max_correction_speed, baumgarte=baumgarte)
    form, parts, solve = _solver(scene, method, h, o["algorithm"], o["tol"], o["max_iter"], o["warm_start"], correction)
    stops = registry.formulation(method).stops  # a step not SOLVED ends the run (Formulation.stops)
    iterator = range(1, steps + 1)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc=f"simulate ({method})", unit="step")
    contacts = scene.contacts(h)  # of the current configuration: used for its penetration and next step
    J = _inertia(scene)  # of the current state: for its kinetic energy and the next step's M
    q, vel = [scene.configuration()], [assembly.velocity(scene.fields(), scene.planar)]
    ke, pe, pen = [assembly.kinetic_energy(scene.fields(), scene.planar, J)], [scene.potential_energy()], [contacts.max_penetration()]
    impulses, n_contacts, statuses, failure, finite, solver_seconds = [], [], [], None, True, 0.0
    iterations = []
    contact_states, contact_points, contact_normals = [], [], []
    shapes = Shapes.of(scene)

    def fail(k, reason, message):
        nonlocal failure
        failure = failure or Failure(k, reason, message)

    if pen[0] > pen_tol:
        fail(0, "penetration", f"the initial penetration {pen[0]:.3g} exceeds max_penetration = {pen_tol:.3g}")
    t0 = time.perf_counter()
    for k in iterator:
        a = scene._assembled(h, contacts, form, parts, J)
        t1 = time.perf_counter()
        res, p_n = solve(a)
        solver_seconds += time.perf_counter() - t1
        if stops and res.status != mbdcp.Status.SOLVED:
            # no motion to go on with (Lemke's last basic point, z0 still in the basis): stop before it
            fail(k, "solver", f"step {k} ended with status {res.status.name}; the run stopped before it")
            break
        new = scene.advanced(res.v_next, h) if np.all(np.isfinite(res.v_next)) else None  # a status, not a raise
        if new is None or not (np.all(np.isfinite(p_n)) and all(np.all(np.isfinite(x)) for x in new.values())):
            finite = False
            fail(k, "non-finite", f"step {k} gave a non-finite state (solver status {res.status.name}); the run stopped before it")
            break
        fields = scene.fields()
        moving = [w for w in scene.walls if np.any(w.velocity)]  # lines and planes (obstacles are fixed)
        before = ({name: fields[name] for name in new}, [w.point for w in moving])
        scene.replace(new)
        for wall in moving:  # prescribed motion of the walls
            wall.point = wall.point + h * wall.velocity
        try:
            contacts = scene.contacts(h)
        except (CoincidentCentres, UnsupportedPair) as exc:
            # two particles landing on one spot, or a box within reach of another body: no next step
            scene.replace(before[0])
            for wall, point in zip(moving, before[1]):
                wall.point = point
            reason = "coincident" if isinstance(exc, CoincidentCentres) else "unsupported pair"
            fail(k, reason, f"step {k}: {exc}; the run stopped before it")
            break
        q.append(scene.configuration())
        vel.append(res.v_next.copy())
        J = _inertia(scene)
        ke.append(assembly.kinetic_energy(scene.fields(), scene.planar, J))
        pe.append(scene.potential_energy())
        pen.append(contacts.max_penetration())
        impulses.append(np.array(p_n))
        contact_states.append(res.contact_state)
        contact_points.append(a["contacts"].point)
        contact_normals.append(a["contacts"].normal)
        n_contacts.append(len(a["contacts"]))
        statuses.append(res.status)
        iterations.append(res.iterations if hasattr(res, "iterations") else res.pivots)  # Lemke's: pivots
        if res.status != mbdcp.Status.SOLVED:
            fail(k, "solver", f"step {k} ended with status {res.status.name}")
        if pen[-1] > pen_tol:
            fail(k, "penetration", f"the penetration {pen[-1]:.3g} at step {k} exceeds max_penetration = {pen_tol:.3g}"
                 + _reach(scene, h))
    return Trajectory(times=h * np.arange(len(q)), positions=np.array(q), velocities=np.array(vel), impulses=impulses,
                      kinetic_energy=np.array(ke), potential_energy=np.array(pe), max_penetration=np.array(pen),
                      contacts=np.array(n_contacts, dtype=int), statuses=statuses, seconds=time.perf_counter() - t0,
                      solver_seconds=solver_seconds, finite=finite, penetration_tolerance=pen_tol, first_failure=failure,
                      contact_states=contact_states, contact_points=contact_points, contact_normals=contact_normals,
                      shapes=shapes, iterations=np.array(iterations, dtype=int))
