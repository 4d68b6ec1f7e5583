"""mbdcp.mujoco.simulate against MuJoCo's own mj_step on the same MuJoCo models.

The models: a stack of five boxes at rest, a pile of twenty boxes dropped on the floor, the
ragdoll of tests/models (20 bodies, hinge and ball joints with limits), and six such ragdolls
side by side (120 bodies). Per model and method it prints the time per step of the whole mbdcp
step (MuJoCo's stages, the assembly, the solver, the recording) and of mj_step (the model's own
options: soft contacts, pyramidal cones, Newton's method), their ratio, the solver's share of
mbdcp's step, both deepest penetrations (mbdcp's contacts are rigid; MuJoCo's soft ones let bodies
sink), the median number of contacts and the steps SOLVED; then the goals of the issue (the whole
step within 20x mj_step on the five-box stack; the solver at least half of the step from five
bodies on) and, with --profile, where the five-box stack's step goes (cProfile). MuJoCo is
optional: without it (pip install mbdcp[mujoco]) nothing can be compared and the script says so.

    python benchmarks/bench_models.py [--quick] [--profile] [--models NAME ...]
"""
import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import re
import warnings

import numpy as np
from common import print_table

import mbdcp

HERE = os.path.dirname(os.path.abspath(__file__))
RAGDOLL = os.path.join(HERE, "..", "tests", "models", "ragdoll.xml")
GOAL_RATIO = 20.0  # mbdcp's step over mj_step, at most, on the five-box stack
GOAL_SHARE = 0.5  # the solver's share of mbdcp's step, at least, from five bodies on


def stack(n=5):
    """n cubes (0.2 m, 1 kg) stacked on the floor, each on the one below."""
    bodies = "".join(f'<body pos="0 0 {0.1 + 0.2 * k:.17g}"><freejoint/><geom/></body>' for k in range(n))
    return ('<mujoco><option timestep="0.01"/><default><geom type="box" size="0.1 0.1 0.1" mass="1" friction="0.5"/>'
            '</default><worldbody><geom type="plane" size="5 5 0.1"/>' + bodies + "</worldbody></mujoco>")


def pile(n=20, stream=7):
    """n cubes (0.2 m) dropped, turned by up to 10 degrees, from a column of 3 x 3 layers above the floor
    (0.3 m apart: none touches another at the start)."""
    rng = np.random.default_rng(stream)
    bodies = []
    for k in range(n):
        layer, i, j = divmod(k, 9)[0], *divmod(k % 9, 3)
        pos = (0.3 * (i - 1) + 0.01 * rng.normal(), 0.3 * (j - 1) + 0.01 * rng.normal(), 0.15 + 0.3 * layer)
        euler = rng.uniform(-10, 10, size=3)
        bodies.append(f'<body pos="{pos[0]:.6f} {pos[1]:.6f} {pos[2]:.6f}" euler="{euler[0]:.3f} {euler[1]:.3f} '
                      f'{euler[2]:.3f}"><freejoint/><geom/></body>')
    return ('<mujoco><option timestep="0.005"/><default><geom type="box" size="0.1 0.1 0.1" mass="1" friction="0.5"/>'
            '</default><worldbody><geom type="plane" size="5 5 0.1"/>' + "".join(bodies) + "</worldbody></mujoco>")


def ragdolls(count):
    """``count`` copies of the ragdoll of tests/models, 1 m apart along y (their names made unique)."""
    with open(RAGDOLL, encoding="utf-8") as fh:
        xml = fh.read()
    start, end = xml.index('<body name="pelvis"'), xml.rindex("</body>") + len("</body>")
    body = xml[start:end]
    copies = []
    for k in range(count):
        one = re.sub(r'name="([^"]+)"', lambda m, k=k: f'name="{m.group(1)}{k}"', body)
        copies.append(one.replace('pos="0 0 0.12"', f'pos="0 {k - (count - 1) / 2:.1f} 0.12"', 1))
    return xml[:start] + "".join(copies) + xml[end:]


# name: (MJCF, simulated time (quick, full), the simulate options)
MODELS = {
    "stack5": (stack(5), (0.5, 2.0), {}),
    "pile20": (pile(20), (0.25, 1.0), dict(delta=0.02)),
    "ragdoll": (None, (0.2, 0.4), dict(h=0.002, delta=0.01)),
    "ragdolls6": (None, (0.15, 0.3), dict(h=0.002, delta=0.01)),
}
METHODS = {"stack5": ("lcp",), "pile20": ("lcp", "ccp"), "ragdoll": ("lcp",), "ragdolls6": ("lcp",)}


def load(name):
    import mbdcp.mujoco as mm

    xml = {"ragdoll": lambda: ragdolls(1), "ragdolls6": lambda: ragdolls(6)}.get(name, lambda: MODELS[name][0])()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mm.NotMappedWarning)
        return mm.load(xml)


def best_of(run, repeat):
    """The run (a trajectory) with the least time per step among ``repeat`` runs: on a shared
    machine the least disturbed one."""
    runs = [run() for _ in range(repeat)]
    return min(runs, key=lambda tr: tr.seconds / max(tr.steps, 1))


def measure(name, quick, repeat):
    """The table's rows for one model: one per mbdcp method, each beside MuJoCo's run (each the
    best of ``repeat`` runs)."""
    import mbdcp.mujoco as mm

    model = load(name)
    T, options = MODELS[name][1][0 if quick else 1], MODELS[name][2]
    ref = best_of(lambda: mm.run_mujoco(model, T, h=options.get("h")), repeat)
    mj_step = ref.seconds / ref.steps
    rows = []
    for method in METHODS[name]:
        tr = best_of(lambda method=method: mm.simulate(model, T, method=method, progress=False, **options), repeat)
        per_step = tr.seconds / max(tr.steps, 1)
        solved = sum(s == mbdcp.Status.SOLVED for s in tr.statuses)
        rows.append([name, model.mj_model.nbody - 1, model.nv, method, tr.steps, f"{1e3 * per_step:.3f}",
                     f"{1e3 * mj_step:.3f}", f"{per_step / mj_step:.1f}", f"{tr.solver_seconds / tr.seconds:.2f}",
                     f"{tr.max_penetration.max():.1e}", f"{ref.max_penetration.max():.1e}",
                     int(np.median(tr.contacts)) if tr.steps else 0, int(np.median(ref.contacts)),
                     f"{solved}/{len(tr.statuses)}"])
        print(*rows[-1], flush=True)
    return rows


def profile_stack(quick):
    """cProfile of simulate on the five-box stack: the functions taking the most time."""
    import mbdcp.mujoco as mm

    model = load("stack5")
    mm.simulate(model, 0.1, progress=False)  # warm up
    prof = cProfile.Profile()
    prof.enable()
    mm.simulate(model, 0.5 if quick else 2.0, progress=False)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
    print("\nWhere the five-box stack's step goes (cProfile, by own time):")
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:4000])


def goals(rows):
    """The issue's goals against the measured rows."""
    for r in rows:
        name, bodies, method, ratio, share = r[0], r[1], r[3], float(r[7]), float(r[8])
        if name == "stack5":
            print(f"goal: whole step within {GOAL_RATIO:g}x mj_step on the five-box stack ({method}): {ratio:.1f}x -> "
                  f"{'met' if ratio <= GOAL_RATIO else 'NOT met'}")
        if bodies >= 5:
            print(f"goal: solver at least {GOAL_SHARE:.0%} of the step ({name}, {method}): {share:.0%} -> "
                  f"{'met' if share >= GOAL_SHARE else 'NOT met'}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="shorter runs")
    ap.add_argument("--profile", action="store_true", help="profile the five-box stack's step")
    ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest is kept")
    args = ap.parse_args()
    if importlib.util.find_spec("mujoco") is None:
        print("MuJoCo is not installed (pip install mbdcp[mujoco]): there is nothing to compare.")
        return
    print("Timings on a shared machine: ratios, not absolute figures, are what to compare; each is the "
          f"fastest of {args.repeat} runs.")
    rows = [row for name in args.models for row in measure(name, args.quick, args.repeat)]
    print("\nmbdcp.mujoco.simulate against MuJoCo's mj_step on the same models (per step: the whole step)")
    print_table(["model", "bodies", "n_v", "method", "steps", "mbdcp ms", "mj_step ms", "ratio", "solver share",
                 "mbdcp pen [m]", "mujoco pen [m]", "mbdcp contacts", "mujoco contacts", "SOLVED"], rows)
    goals(rows)
    if args.profile:
        profile_stack(args.quick)


if __name__ == "__main__":
    main()
