"""simulate(method="ccp") against MuJoCo on the same scene: time, penetration, iterations, heights.

The scene (by default mbdcp.mechanics.sphere_pile_scene: spheres dropped into a box, h = 0.01 s,
100 steps) is written as MJCF (mbdcp.mujoco.scene_mjcf: its spheres and boxes with their masses, inertias,
positions, orientations and velocities, its planes, gravity and friction coefficient) and run in
MuJoCo with its Newton solver and defaults otherwise (pyramidal friction cones, soft contacts).
Per N it prints both wall times and their ratio against the goals (<= 3x MuJoCo's time at N = 100,
<= 1x at 500, <= 0.5x at 2,000), both deepest penetrations (mbdcp keeps its contacts exact;
MuJoCo's soft contacts let bodies sink), the solver iterations per step (median and maximum), the
contacts per step (median: mbdcp's are the pairs within the scene's delta, MuJoCo's those within its
margin, 0 by default) and the final mean height, then where simulate's time goes at N = 100. MuJoCo
is an optional dependency (pip install mujoco, or mbdcp[peers]).

    python benchmarks/bench_mujoco.py [--quick] [--sizes N ...] [--steps S]
"""
import argparse
import time

import numpy as np
from common import print_table

import mbdcp
from mbdcp.mechanics import simulate, sphere_pile_scene

GOALS = {100: 3.0, 500: 1.0, 2000: 0.5}  # simulate's time / MuJoCo's, at most


def mujoco_model(scene, h):
    """(model, data) of the scene in MuJoCo at its state (:func:`mbdcp.mujoco.from_scene`)."""
    from mbdcp.mujoco import from_scene

    model = from_scene(scene, h)
    return model.mj_model, model.mj_data


def run_mujoco(scene, h, steps):
    """MuJoCo on the scene: (seconds, deepest penetration, final mean height, iterations per step,
    contacts per step), or None without mujoco."""
    try:
        import mujoco
    except ImportError:
        return None
    model, data = mujoco_model(scene, h)
    deepest, iterations, contacts = 0.0, np.zeros(steps, dtype=int), np.zeros(steps, dtype=int)
    t0 = time.perf_counter()
    for s in range(steps):
        mujoco.mj_step(model, data)
        iterations[s], contacts[s] = data.solver_niter[0], data.ncon
        if data.ncon:
            deepest = max(deepest, -float(data.contact.dist[:data.ncon].min()))
    seconds = time.perf_counter() - t0
    return seconds, deepest, float(data.qpos.reshape(-1, 7)[:, 2].mean()), iterations, contacts


def run_mbdcp(scene, h, steps):
    """simulate(method="ccp") on the scene: (seconds, trajectory)."""
    t0 = time.perf_counter()
    tr = simulate(scene, h, steps * h, method="ccp", progress=False)
    return time.perf_counter() - t0, tr


def compare(sizes, h, steps):
    rows = []
    for n in sizes:
        seconds, tr = run_mbdcp(sphere_pile_scene(n), h, steps)
        its = tr.iterations
        solved = sum(s == mbdcp.Status.SOLVED for s in tr.statuses)
        row = [n, int(np.median(tr.contacts)), f"{seconds:.3f}", f"{tr.max_penetration.max():.1e}",
               f"{np.median(its):.0f}/{its.max()}", f"{tr.positions[-1].reshape(-1, 7)[:, 2].mean():.4f}",
               f"{solved}/{len(tr.statuses)}"]
        mj = run_mujoco(sphere_pile_scene(n), h, steps)
        if mj is None:
            row += ["-"] * 7
        else:
            mj_seconds, deepest, height, mj_its, mj_contacts = mj
            goal = GOALS.get(n)
            row += [f"{mj_seconds:.3f}", int(np.median(mj_contacts)), f"{deepest:.1e}",
                    f"{np.median(mj_its):.0f}/{mj_its.max()}", f"{height:.4f}",
                    f"{seconds / mj_seconds:.2f}", "-" if goal is None else f"{goal:g}"]
        rows.append(row)
        print(*row, flush=True)
    print(f"\nSphere piles (sphere_pile_scene), h = {h} s, {steps} steps; mbdcp simulate(method='ccp') against MuJoCo "
          "(Newton solver, pyramidal cones, soft contacts)")
    print_table(["N", "mbdcp contacts", "mbdcp s", "mbdcp pen [m]", "mbdcp it med/max", "mbdcp height", "SOLVED",
                 "mujoco s", "mujoco contacts", "mujoco pen [m]", "mujoco it med/max", "mujoco height", "ratio", "goal"], rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+")
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    sizes = args.sizes or ((100, 250) if args.quick else (100, 500, 2000))
    print("Timings on a shared machine: ratios, not absolute figures, are what to compare.")
    compare(sizes, 0.01, args.steps)
    from profile_simulate import simulate_profile

    simulate_profile(100, 0.01, args.steps)


if __name__ == "__main__":
    main()
