"""The time-stepping loop on a MuJoCo model: :func:`simulate`."""
import time
from types import SimpleNamespace

import numpy as np

import mbdcp
from mbdcp.formulations.ccp import METHODS as CCP_METHODS
from mbdcp.formulations.registry import formulation
from mbdcp.infrastructure import stabilization as stab
from mbdcp.infrastructure import validate as val
from mbdcp.mechanics import Failure
from mbdcp.mujoco._model import Model, controls, friction_count
from mbdcp.mujoco._solvers import METHODS, stepper
from mbdcp.mujoco._trajectory import ContactStates, MujocoTrajectory

__all__ = ["simulate"]


def _settings(model, T, h, method, n_d, delta, tol, max_iter, algorithm, max_penetration, warm_start, correction):
    """Every option checked once, whichever method uses it."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a mbdcp.mujoco.Model (from mbdcp.mujoco.load), got {val.describe(model)}")
    method = val.choice("method", method, METHODS)
    h = model.timestep if h is None else val.positive_scalar("h", h)
    T = val.nonnegative_scalar("T", T)
    if T < h:
        raise ValueError(f"T must be at least h (the run takes round(T / h) steps), got T = {T} < h = {h}")
    steps = val.step_count(h, T)
    val.fits_in_memory("T / h", f"{steps} steps", steps * 8 * (model.nq + 2 * model.nv + 16), "to record the trajectory")
    if tol is not None:
        tol = val.scalar_in("tol", tol, 0.0, 1.0, True) if method == "lcp" else val.positive_scalar("tol", tol)
    if method == "lcp" and algorithm is not None:
        raise ValueError("algorithm is for methods 'fixed_point' (1, 2 or 3) and 'ccp' (a mbdcp.ccp method); "
                         "method 'lcp' has none")
    if method == "fixed_point" and algorithm is not None:
        algorithm = val.integer("algorithm", algorithm, 1, 3)
    if method != "lcp" and _has_joint_friction(model):
        raise ValueError(f"method {method!r} does not model joint friction (the model's frictionloss): use method 'lcp'")
    if method == "ccp":
        algorithm = val.choice("algorithm", "auto" if algorithm is None else algorithm, CCP_METHODS)
    stab.settings(correction["max_correction_speed"], correction["baumgarte"])
    pen = model.penetration_tolerance if max_penetration is None else val.threshold("max_penetration", max_penetration)
    return SimpleNamespace(method=method, h=h, steps=steps, n_d=friction_count(4 if n_d is None else n_d),
                           delta=model.delta if delta is None else val.nonnegative_scalar("delta", delta), tol=tol,
                           delta_given=delta is not None, stops=formulation(method).stops,
                           max_iter=val.positive_int("max_iter", max_iter), algorithm=algorithm, pen=pen,
                           warm_start=val.flag("warm_start", warm_start))


def _has_joint_friction(model):
    """True when the model's joints or tendons have friction loss (and MuJoCo's flags keep it)."""
    m, mj = model.mj_model, model._mj
    off = int(mj.mjtDisableBit.mjDSBL_FRICTIONLOSS) | int(mj.mjtDisableBit.mjDSBL_CONSTRAINT)
    return not (m.opt.disableflags & off) and (np.any(m.dof_frictionloss > 0) or np.any(m.tendon_frictionloss > 0))


class _Record:
    """What the loop keeps: per time (state) and per step (solve)."""

    def __init__(self, steps, nq, nv):
        self.q, self.v = np.empty((steps + 1, nq)), np.empty((steps + 1, nv))
        self.ke, self.pe, self.pen = np.empty(steps + 1), np.empty(steps + 1), np.empty(steps + 1)
        self.n = 0
        self.impulses, self.statuses, self.iterations, self.contacts = [], [], [], []
        self.results, self.points, self.normals = [], [], []

    def state(self, q, v, a):
        k = self.n
        self.q[k], self.v[k] = q, v
        self.ke[k], self.pe[k] = 0.5 * float(v @ (a.M @ v)), a.potential
        self.pen[k] = max(0.0, -float(a.contacts.gap.min())) if len(a.contacts) else 0.0
        self.n += 1

    def step(self, res, p_n, iterations, a):
        n_c = len(a.contacts)
        self.impulses.append(np.array(p_n[:n_c]))
        self.statuses.append(res.status)
        self.iterations.append(iterations)
        self.contacts.append(n_c)
        self.results.append(res)
        self.points.append(a.contacts.point)
        self.normals.append(a.contacts.normal)


def simulate(model, T, *, h=None, method="lcp", n_d=None, delta=None, qpos=None, qvel=None, ctrl=None, tol=None,
             max_iter=None, progress=True, algorithm=None, max_penetration=None, warm_start=True,
             max_correction_speed=None, baumgarte=1.0):
    r"""Time-step a MuJoCo model with one of mbdcp's methods, from its state for a time T.

    Each step solves the time-stepping problem of :meth:`Model.problem` (Stewart & Trinkle 1996;
    Anitescu & Potra 1997; in the notation of Trinkle 2003, eqs. 25–38) for :math:`v^{l+1}`, then
    moves the positions with MuJoCo's own ``mj_integratePos`` (quaternions of free and ball joints
    on the unit sphere). Contacts are rigid: a pair of geoms closer than ``delta`` enters the step
    with its gap :math:`\Psi_n` and the stabilisation :math:`\Psi_n/h`, as in
    :func:`mbdcp.mechanics.simulate`.

    Parameters
    ----------
    model : Model
        From :func:`load`; its ``mj_data`` gives the start (qpos, qvel, ctrl) unless given here. The
        model and its data are not changed.
    T : float
        The final time, at least h (round(T / h) steps).
    h : float, optional
        The time step (default: the model's ``opt.timestep``).
    method : str
        ``"lcp"`` (:func:`mbdcp.step`, Lemke's method; the only one with joint friction),
        ``"fixed_point"`` (:func:`mbdcp.fixed_point`, ``algorithm`` 1, 2 or 3) or ``"ccp"``
        (:func:`mbdcp.ccp`, ``algorithm`` one of its methods, default ``"auto"``).
    n_d : int, optional
        Friction directions per contact, an even number (default 4; ``"ccp"`` uses the friction cone).
    delta : float, optional
        The activation distance (default: :attr:`Model.delta`).
    qpos, qvel : array_like, optional
        The start, shapes (n_q,) and (n_v,).
    ctrl : array_like of shape (n_u,), or callable, optional
        Constant controls, or ``ctrl(t, qpos, qvel)`` returning them at each step.
    tol, max_iter : optional
        The method's tolerance and iteration limit (its own defaults if None).
    progress : bool
        A tqdm progress bar.
    max_penetration : float, optional
        The penetration beyond which the run is not a success (default:
        :attr:`Model.penetration_tolerance`; ``np.inf``: no check).
    warm_start : bool
        Start each step from the last one (Lemke's basis, or the CCP's impulses), contact by contact.
    max_correction_speed, baumgarte : optional
        The penetration correction of :func:`mbdcp.step` (default: none, the whole gap per step).

    Returns
    -------
    MujocoTrajectory
        qpos and qvel per time, energies, penetration, contacts, statuses and the solver's time. An
        ``"lcp"`` step not SOLVED, or a non-finite state, stops the run before it (``first_failure``).
    """
    correction = dict(max_correction_speed=max_correction_speed, baumgarte=baumgarte)
    s = _settings(model, T, h, method, n_d, delta, tol, max_iter, algorithm, max_penetration, warm_start, correction)
    progress = val.flag("progress", progress)
    qpos, qvel, ctrl = model.state(qpos, qvel, ctrl)
    solve = stepper(s.method, s.n_d, s.algorithm, s.tol, s.max_iter, s.warm_start, correction)
    return _run(model, s, qpos, qvel, controls(ctrl, model.nu), solve, progress)


def _run(model, s, qpos, qvel, control, solve, progress):
    """The loop: assemble the state, solve, integrate the positions; record."""
    a, mj, h = model._prepared(s.delta), model._mj, s.h
    a.grow_from = None if s.delta_given else s.delta  # the default grows with the speed, as the mechanics layer's
    t0 = float(model.mj_data.time)
    rec, failure, finite, solver_seconds = _Record(s.steps, model.nq, model.nv), None, True, 0.0

    def assemble(q, v, t):
        a.run(q, v, control(t, q, v), h, t)
        return a.arrays(h, s.n_d, pairs=s.method == "ccp")

    steps = range(1, s.steps + 1)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=f"simulate ({s.method})", unit="step")
    start = time.perf_counter()
    arrays = assemble(qpos, qvel, t0)
    rec.state(qpos, qvel, arrays)
    if rec.pen[0] > s.pen:
        failure = Failure(0, "penetration", f"the initial penetration {rec.pen[0]:.3g} exceeds max_penetration = {s.pen:.3g}")
    for k in steps:
        t1 = time.perf_counter()
        res, p_n, iterations = solve(arrays)
        solver_seconds += time.perf_counter() - t1
        if s.stops and res.status != mbdcp.Status.SOLVED:  # the registry's stop rule, read once
            failure = failure or Failure(k, "solver", f"step {k} ended with status {res.status.name}; the run stopped before it")
            break
        q_next = qpos.copy()
        solved = np.isfinite(res.v_next).all() and np.isfinite(p_n).all()
        if solved:
            mj.mj_integratePos(a.m, q_next, res.v_next, h)
        if not (solved and np.isfinite(q_next).all()):
            finite = False
            failure = failure or Failure(k, "non-finite", f"step {k} gave a non-finite state (solver status "
                                                          f"{res.status.name}); the run stopped before it")
            break
        rec.step(res, p_n, iterations, arrays)
        qpos, qvel = q_next, np.array(res.v_next)
        arrays = assemble(qpos, qvel, t0 + k * h)
        rec.state(qpos, qvel, arrays)
        if res.status != mbdcp.Status.SOLVED:
            failure = failure or Failure(k, "solver", f"step {k} ended with status {res.status.name}")
        if rec.pen[k] > s.pen:
            failure = failure or Failure(k, "penetration", f"the penetration {rec.pen[k]:.3g} at step {k} exceeds "
                                                           f"max_penetration = {s.pen:.3g}" + _reach(a, s))
    return _trajectory(rec, h, time.perf_counter() - start, solver_seconds, finite, s.pen, failure)


def _reach(a, s):
    """Why a penetration may have happened: the activation distance delta against the step."""
    return (f" (the activation distance delta = {a.delta:.3g}, {'given' if s.delta_given else 'default'}, may be "
            f"shorter than the bodies moved in a step of h = {s.h:.3g}: give delta larger, or a smaller h)")


def _trajectory(rec, h, seconds, solver_seconds, finite, pen_tol, failure):
    n = rec.n
    return MujocoTrajectory(times=h * np.arange(n), positions=rec.q[:n], velocities=rec.v[:n], impulses=rec.impulses,
                            kinetic_energy=rec.ke[:n], potential_energy=rec.pe[:n], max_penetration=rec.pen[:n],
                            contacts=np.array(rec.contacts, dtype=int), statuses=rec.statuses, seconds=seconds,
                            solver_seconds=solver_seconds, finite=finite, penetration_tolerance=pen_tol,
                            first_failure=failure, contact_states=ContactStates(rec.results, rec.contacts), contact_points=rec.points,
                            contact_normals=rec.normals, shapes=None, iterations=np.array(rec.iterations, dtype=int))
