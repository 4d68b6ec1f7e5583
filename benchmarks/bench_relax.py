"""Fixed-point algorithms 1, 2, 3 against Lemke on the full Stewart–Trinkle LCP.

1. 2-D disk piles (mbdcp.testing.disk_pile) with about 10 to 200 contacts, mu = 0.05, 0.2, 0.5:
   time per step (each solve cold), iterations, convergence, the velocity difference from
   mbdcp.step, and the median ratio of each algorithm's time to Lemke's.
2. Warm starts in a simulation: the 136-disk pile of Anitescu & Hart (lecture) (mechanics.simulate) while it forms
   from its lattice (contacts appear every step) and while it settles (from the state after 150
   steps), with Lemke on the full LCP and with algorithm 3, each step started from the last
   step's bases (warm_start=True) or cold.
3. Stress runs: 4-50 disks thrown at 2 m/s, mu = 0.2 and 0.5, algorithms 1-3 (120 runs): the
   subproblem failures (target: none).
4. The 136-disk pile demo (python -m mbdcp demo pile2d): 200 steps of its settling from the
   lattice with algorithm 3, warm-started (the issue's target: under a minute).
5. Piles in motion (disk_pile_scene, v drawn with sigma = 1.5): each algorithm's time over a cold
   Lemke step, measured back to back in the same process and repeated (medians), for small piles
   (12-75 disks, mu 0.05-0.5) and large ones (300 and 600 disks, one run each).

    python benchmarks/bench_relax.py [--quick] [--ratios] [--simulate]

--ratios runs part 5 alone; --simulate runs simulate(method="fixed_point") against method="lcp"
on piles of 500 to 2,000 disks for a few steps (seconds per step and their ratio).
"""
import argparse
import copy
import time

import numpy as np
from common import best_time, print_table

import mbdcp
from mbdcp.mechanics import disk_pile_scene, simulate
from mbdcp.testing import disk_pile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ratios", action="store_true")
    ap.add_argument("--simulate", action="store_true")
    args = ap.parse_args()
    if args.ratios or args.simulate:
        if args.ratios:
            moving_piles(args.quick)
        if args.simulate:
            simulate_piles(args.quick)
        return
    sizes = [4, 12, 30] if args.quick else [4, 12, 30, 50, 75]
    rows, ratios = [], {1: [], 2: [], 3: []}
    for n in sizes:
        for mu in (0.05, 0.2, 0.5):
            s = disk_pile(n, seed=n, mu=mu)
            t_l, ref = best_time(lambda: mbdcp.step(*s.args(), **s.kwargs()), repeat=2, min_total=0)
            row = [n, s.Wn.shape[1], mu, f"{t_l * 1e3:.1f}", "yes" if ref.success else "NO"]
            for alg in (1, 2, 3):
                t_a, res = best_time(lambda: mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=alg,
                                                               tol=1e-8, max_iter=100), repeat=2, min_total=0)
                err = np.abs(res.v_next - ref.v_next).max() / max(1.0, np.abs(ref.v_next).max())
                row += [f"{t_a * 1e3:.1f}", f"{res.iterations}{'' if res.converged else '*'}", f"{err:.0e}"]
                ratios[alg].append(t_a / t_l)
            rows.append(row)
    print("Time per step [ms]; it = iterations (* = not converged in 100); dv = |v - v_lemke| relative")
    print_table(["disks", "contacts", "mu", "lemke", "ok", "alg1", "it", "dv", "alg2", "it", "dv",
                 "alg3", "it", "dv"], rows)
    print("median time / Lemke's: " + ", ".join(f"algorithm {a} {np.median(r):.2f}" for a, r in ratios.items()))
    stress(2 if args.quick else 5)
    warm_table(30 if args.quick else 100, 60 if args.quick else 150)
    settling(50 if args.quick else 200)


def warm_table(steps, formed):
    """Seconds for `steps` steps with warm_start True / False: from the lattice (the pile forms,
    contacts appear every step) and from the pile formed after `formed` steps (it settles)."""
    rows = []
    for label, kw in (("lemke (full LCP)", {"method": "lcp"}), ("algorithm 3", {"method": "fixed_point", "algorithm": 3})):
        formed_scene = disk_pile_scene(136)
        simulate(formed_scene, 0.01, formed * 0.01, progress=False, **kw)
        for phase, scene in (("forming (from the lattice)", disk_pile_scene(136)), (f"settling (after {formed} steps)", formed_scene)):
            seconds, ok = {}, {}
            for warm in (True, False):
                run_scene = copy.deepcopy(scene)
                t0 = time.perf_counter()
                tr = simulate(run_scene, 0.01, steps * 0.01, progress=False, warm_start=warm, **kw)
                seconds[warm] = time.perf_counter() - t0
                ok[warm] = "yes" if tr.success else f"no ({tr.first_failure.reason} at step {tr.first_failure.step})"
            rows.append([label, phase, steps, f"{tr.contacts[0]}-{tr.contacts[-1]}", f"{seconds[False]:.1f}",
                         f"{seconds[True]:.1f}", f"{seconds[False] / seconds[True]:.2f}", ok[True], ok[False]])
    print(f"\n136-disk pile (as in Anitescu & Hart's lecture), {steps} steps of h = 0.01 (seconds)")
    print_table(["solver", "phase", "steps", "contacts", "cold", "warm_start", "speed-up", "warm ok", "cold ok"], rows)


def stress(seeds):
    """The issue's stress runs: disk piles thrown at 2 m/s with mu = 0.2 and 0.5, algorithms 1-3,
    each solve cold; counts subproblem failures (a status other than SOLVED, or MAX_ITERATIONS of
    the outer iteration, which is non-convergence, not a failure) and non-convergence."""
    runs, failures, unconverged = 0, [], 0
    for n in (4, 12, 30, 50):
        for mu in (0.2, 0.5):
            for seed in range(seeds):
                s = disk_pile(n, seed=1000 + seed, mu=mu, speed=2.0)
                for alg in (1, 2, 3):
                    res = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=alg, tol=1e-8, max_iter=100)
                    runs += 1
                    if res.status == mbdcp.Status.MAX_ITERATIONS and not res.converged:
                        unconverged += 1
                    elif res.status != mbdcp.Status.SOLVED:
                        failures.append(f"{n} disks, mu {mu}, seed {1000 + seed}, algorithm {alg}: {res.status.name}")
    print(f"\nStress runs (2 m/s disk piles, mu >= 0.2): {runs} runs, {len(failures)} subproblem failures, "
          f"{unconverged} not converged in 100 iterations (a status, algorithms 1 and 2 at large mu)")
    for f_ in failures:
        print("  " + f_)


def settling(steps):
    """Seconds for the pile demo's 200 steps with algorithm 3 (warm starts, the default)."""
    scene = disk_pile_scene(136)
    t0 = time.perf_counter()
    tr = simulate(scene, 0.01, steps * 0.01, progress=False, method="fixed_point", algorithm=3)
    seconds = time.perf_counter() - t0
    print(f"\n136-disk pile demo, {steps} steps from the lattice with algorithm 3: {seconds:.1f} s "
          f"({steps / seconds:.1f} steps/s, contacts {tr.contacts[0]}-{tr.contacts[-1]}, "
          f"final kinetic energy {tr.kinetic_energy[-1]:.2e}, {'all solved' if tr.success else 'NOT all solved'})")


def moving_pile(n, mu, seed, sigma=1.5, h=0.01, sparse=False):
    """One step of an n-disk pile in motion: disk_pile_scene's contacts, velocities drawn with sigma
    (M, Wn, D, E as scipy.sparse matrices when sparse, as simulate passes them to fixed_point)."""
    a = disk_pile_scene(n, mu=mu, seed=seed).assemble(h, sparse=sparse)
    v = sigma * np.random.default_rng(seed + 1).standard_normal(a["v"].shape)
    return (a["M"], a["Wn"], a["D"], a["E"], a["U"], v, h), {"p_ext": a["p_ext"], "psi_n": a["psi_n"]}


def ratio_row(n, mu, repeat):
    """Lemke's time and each algorithm's median time over it (measured back to back), given the
    same dense arrays and given the scene's sparse matrices ("s"), with iterations and the velocity
    difference from Lemke's."""
    args, kw = moving_pile(n, mu, seed=n)
    sargs, skw = moving_pile(n, mu, seed=n, sparse=True)
    keys = (1, 2, 3, "1s", "2s", "3s")
    ratios, notes = {k: [] for k in keys}, {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        ref = mbdcp.step(*args, **kw)
        t_l = time.perf_counter() - t0
        for key in keys:
            a, k = (sargs, skw) if str(key).endswith("s") else (args, kw)
            t0 = time.perf_counter()
            res = mbdcp.fixed_point(*a, **k, algorithm=int(str(key)[0]), tol=1e-8, max_iter=100)
            ratios[key].append((time.perf_counter() - t0) / t_l)
            dv = np.abs(res.v_next - ref.v_next).max() / max(1.0, np.abs(ref.v_next).max())
            notes[key] = f"{res.iterations}{'' if res.converged else '*'}/{dv:.0e}"
    row = [n, args[1].shape[1], mu, f"{t_l * 1e3:.1f}", ref.pivots]
    for key in keys:
        row += [f"{np.median(ratios[key]):.2f}", notes[key]]
    return row, {a: float(np.median(r)) for a, r in ratios.items()}


def moving_piles(quick):
    """Part 5: the ratios on small piles (repeated) and large ones (one run each)."""
    headers = ["disks", "contacts", "mu", "lemke ms", "pivots", "alg1", "it/dv", "alg2", "it/dv", "alg3", "it/dv",
               "alg1s", "it/dv", "alg2s", "it/dv", "alg3s", "it/dv"]
    for label, sizes, mus, repeat in (("small", [12, 30, 50, 75], (0.05, 0.2, 0.5), 3 if quick else 7),
                                      ("large", [300] if quick else [300, 600], (0.3,), 1)):
        rows, med = [], {k: [] for k in (1, 2, 3, "1s", "2s", "3s")}
        for n in sizes:
            for mu in mus:
                row, r = ratio_row(n, mu, repeat)
                rows.append(row)
                for a, times in med.items():
                    times.append(r[a])
        print(f"\n{label} piles in motion (sigma = 1.5): time / cold Lemke step (median of {repeat}); "
              "it = iterations (* not converged), dv = |v - v_lemke| relative; algNs: given sparse matrices")
        print_table(headers, rows)
        print(f"{label} piles, median over rows: " + ", ".join(f"algorithm {a} {np.median(r):.2f}" for a, r in med.items()))


def simulate_piles(quick):
    """simulate(method="fixed_point", algorithm 3) against method="lcp" on large piles, a few steps
    from the lattice (warm starts as simulate does by default): seconds per step."""
    rows = []
    for n in ([500] if quick else [500, 1000, 2000]):
        steps = 2 if n >= 1000 else 3
        seconds = {}
        for label, kw in (("lcp", {"method": "lcp"}), ("fixed_point", {"method": "fixed_point", "algorithm": 3})):
            scene = disk_pile_scene(n, width=max(10, int(np.sqrt(n))))
            t0 = time.perf_counter()
            tr = simulate(scene, 0.01, steps * 0.01, progress=False, **kw)
            seconds[label] = (time.perf_counter() - t0) / steps
            ok = tr.success
        rows.append([n, steps, f"{tr.contacts[0]}-{tr.contacts[-1]}", f"{seconds['lcp']:.2f}",
                     f"{seconds['fixed_point']:.2f}", f"{seconds['fixed_point'] / seconds['lcp']:.2f}", ok])
    print("\nsimulate: seconds per step, fixed_point (algorithm 3) against lcp (Lemke)")
    print_table(["disks", "steps", "contacts", "lcp s/step", "fixed_point s/step", "ratio", "solved"], rows)


if __name__ == "__main__":
    main()
