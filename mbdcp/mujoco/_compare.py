"""mbdcp's methods beside MuJoCo's own ``mj_step`` on one model: :func:`compare` and
:func:`plot_comparison`."""
import copy
import time

import numpy as np

from mbdcp.infrastructure import validate as val
from mbdcp.mechanics import Failure
from mbdcp.mujoco._model import INPUTS, Model, controls
from mbdcp.mujoco._simulate import simulate
from mbdcp.mujoco._solvers import METHODS
from mbdcp.mujoco._trajectory import MujocoTrajectory

__all__ = ["compare", "plot_comparison", "run_mujoco"]

QUANTITIES = ("energy", "kinetic", "penetration", "qpos", "qvel")


def _mujoco_contacts(mj, m, d, h):
    """(deepest penetration, points, normals, normal impulses h f_n) of MuJoCo's contacts in d."""
    n = d.ncon
    if n == 0:
        return 0.0, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)
    con, force = d.contact, np.zeros(6)
    impulses = np.empty(n)
    for i in range(n):
        mj.mj_contactForce(m, d, i, force)
        impulses[i] = h * force[0]
    return max(0.0, -float(np.min(con.dist))), np.array(con.pos), np.array(con.frame)[:, :3], impulses


def run_mujoco(model, T, *, h=None, qpos=None, qvel=None, ctrl=None):
    """MuJoCo's own run of the model (``mj_step`` with the model's options, step ``h``: default its
    time step) from the state (default ``mj_data``'s), as a :class:`MujocoTrajectory`: ``seconds``
    and ``solver_seconds`` both the time spent in ``mj_step``, ``iterations`` its solver's,
    ``statuses`` and ``contact_states`` empty (MuJoCo's soft contacts have none);
    ``max_penetration`` the deepest of its contacts' penetrations; energies as MuJoCo computes them."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be a mbdcp.mujoco.Model, got {val.describe(model)}")
    mj = model._mj
    h = model.timestep if h is None else val.positive_scalar("h", h)
    T = val.nonnegative_scalar("T", T)
    if T < h:
        raise ValueError(f"T must be at least h (the run takes round(T / h) steps), got T = {T} < h = {h}")
    steps = val.step_count(h, T)
    qpos, qvel, ctrl = model.state(qpos, qvel, ctrl)
    m = copy.deepcopy(model.mj_model)
    m.opt.timestep = h
    m.opt.enableflags |= int(mj.mjtEnableBit.mjENBL_ENERGY)
    d = mj.MjData(m)
    for name in INPUTS:
        if hasattr(d, name):
            getattr(d, name)[:] = getattr(model.mj_data, name)
    d.qpos[:], d.qvel[:], d.time = qpos, qvel, float(model.mj_data.time)
    return _mujoco_loop(mj, m, d, steps, h, controls(ctrl, model.nu), model.penetration_tolerance)


def _mujoco_loop(mj, m, d, steps, h, control, pen_tol):
    """mj_step ``steps`` times, recording each state (its contacts and energies are those MuJoCo
    computes at the start of the next step, and by mj_forward for the last state)."""
    Q, V = np.empty((steps + 1, m.nq)), np.empty((steps + 1, m.nv))
    energy, pen = np.empty((steps + 1, 2)), np.empty(steps + 1)
    impulses, points, normals, contacts, iterations = [], [], [], [], []
    seconds = 0.0
    for k in range(steps + 1):
        Q[k], V[k] = d.qpos, d.qvel
        if m.nu:
            d.ctrl[:] = control(d.time, np.array(d.qpos), np.array(d.qvel))
        if k == steps:
            mj.mj_forward(m, d)
        else:
            t1 = time.perf_counter()
            mj.mj_step(m, d)
            seconds += time.perf_counter() - t1
        energy[k] = d.energy
        pen[k], p, n, f = _mujoco_contacts(mj, m, d, h)
        if k < steps:
            impulses.append(f), points.append(p), normals.append(n), contacts.append(d.ncon)
            iterations.append(int(d.solver_niter[0]))
    return MujocoTrajectory(times=h * np.arange(steps + 1), positions=Q, velocities=V, impulses=impulses,
                            kinetic_energy=energy[:, 1], potential_energy=energy[:, 0], max_penetration=pen,
                            contacts=np.array(contacts, dtype=int), statuses=[], seconds=seconds, solver_seconds=seconds,
                            finite=bool(np.all(np.isfinite(Q)) and np.all(np.isfinite(V))), penetration_tolerance=pen_tol,
                            first_failure=_penetration_failure(pen, pen_tol), contact_points=points, contact_normals=normals,
                            iterations=np.array(iterations, dtype=int))


def _penetration_failure(pen, pen_tol):
    """The first state whose penetration exceeds the tolerance, as a Failure (None if none does)."""
    over = np.flatnonzero(pen > pen_tol)
    if not over.size:
        return None
    k = int(over[0])
    return Failure(k, "penetration", f"the penetration {pen[k]:.3g} at step {k} exceeds max_penetration = {pen_tol:.3g}")


def _row(name, engine, tr, reference):
    """One row of the comparison table."""
    energy = tr.kinetic_energy + tr.potential_energy
    steps = max(tr.steps, 1)
    gap = np.abs(tr.positions - reference.positions[:len(tr.positions)]).max() if len(tr.positions) else np.nan
    return dict(name=name, engine=engine, steps=tr.steps, seconds_per_step=tr.seconds / steps,
                solver_share=tr.solver_seconds / tr.seconds if tr.seconds > 0 else np.nan,
                max_penetration=float(tr.max_penetration.max()), energy_change=float(energy[-1] - energy[0]),
                final_kinetic_energy=float(tr.kinetic_energy[-1]), max_qpos_difference=float(gap),
                success=tr.success, trajectory=tr)


def compare(model, T, *, methods=("lcp",), h=None, qpos=None, qvel=None, ctrl=None, progress=False, **options):
    """mbdcp's ``methods`` beside MuJoCo's own ``mj_step`` on the model, from the same state.

    Runs :func:`run_mujoco` and :func:`simulate` with each method (``options``: the other keyword
    arguments of :func:`simulate`, the same for every method) and returns a pandas DataFrame
    (pandas is needed: ``pip install pandas``) indexed by "mujoco" and the methods, with the columns
    ``engine``, ``steps``, ``seconds_per_step``, ``time_ratio`` (over MuJoCo's), ``solver_share``
    (of the step's time in the solver), ``max_penetration``, ``energy_change`` (total energy, end
    less start), ``final_kinetic_energy``, ``max_qpos_difference`` (largest difference of a
    position coordinate from MuJoCo's, over the run), ``success`` and ``trajectory`` (the
    :class:`MujocoTrajectory`). :func:`plot_comparison` draws it.
    """
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError("compare returns a pandas DataFrame: pip install pandas") from exc
    if isinstance(methods, str) or not isinstance(methods, (list, tuple)) or not methods:
        raise TypeError(f"methods must be a non-empty list or tuple of method names, got {val.describe(methods)}")
    for i, name in enumerate(methods):
        val.choice(f"methods[{i}]", name, METHODS)
    reference = run_mujoco(model, T, h=h, qpos=qpos, qvel=qvel, ctrl=ctrl)
    rows = [_row("mujoco", "mujoco", reference, reference)]
    for name in methods:
        tr = simulate(model, T, h=h, method=name, qpos=qpos, qvel=qvel, ctrl=ctrl, progress=progress, **options)
        rows.append(_row(name, "mbdcp", tr, reference))
    table = pd.DataFrame(rows).set_index("name")
    table.insert(2, "time_ratio", table["seconds_per_step"] / table.loc["mujoco", "seconds_per_step"])
    return table


def _series(tr, quantity, coordinate):
    """(times, values) of one quantity of a trajectory."""
    if quantity == "energy":
        return tr.times, tr.kinetic_energy + tr.potential_energy
    if quantity == "kinetic":
        return tr.times, tr.kinetic_energy
    if quantity == "penetration":
        return tr.times, tr.max_penetration
    values = tr.positions if quantity == "qpos" else tr.velocities
    if not 0 <= coordinate < values.shape[1]:
        raise ValueError(f"coordinate must be in [0, {values.shape[1] - 1}] for {quantity}, got {coordinate}")
    return tr.times, values[:, coordinate]


def plot_comparison(table, quantity="energy", *, coordinate=0, ax=None):
    """Draw one quantity of every trajectory of a :func:`compare` table against time into ``ax``
    (default: a new figure); returns the Axes. ``quantity``: ``"energy"`` (kinetic + potential),
    ``"kinetic"``, ``"penetration"``, ``"qpos"`` or ``"qvel"`` (then the column ``coordinate``)."""
    if not hasattr(table, "columns") or "trajectory" not in table.columns:
        raise TypeError(f"table must be the DataFrame of mbdcp.mujoco.compare, got {val.describe(table)}")
    quantity = val.choice("quantity", quantity, QUANTITIES)
    coordinate = val.integer("coordinate", coordinate, 0)
    ax = val.axes("ax", ax)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6.0, 3.5))
    for name, tr in table["trajectory"].items():
        t, y = _series(tr, quantity, coordinate)
        ax.plot(t, y, label=str(name), linestyle="--" if name == "mujoco" else "-")
    label = quantity if quantity not in ("qpos", "qvel") else f"{quantity}[{coordinate}]"
    ax.set_xlabel("t [s]")
    ax.set_ylabel(label)
    ax.legend()
    return ax
