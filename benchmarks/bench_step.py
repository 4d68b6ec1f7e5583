"""mbdcp.step against the same step done by NumPy assembly + Siconos lcp_lexicolemke.

1. The 6-DOF sphere of Trinkle (2003), section 4: time per step from Python, and 10^5 steps.
2. Random spatial scenes with 10-200 contacts (4 friction directions each): time per step
   of mbdcp.step and of the peer pipeline (benchmarks/siconos_step_runner.py, run under
   Debian's /usr/bin/python3 and timed there), with the velocities compared.

    python benchmarks/bench_step.py [--quick]
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np
from common import HERE, best_time, print_table, siconos_available

import mbdcp
from mbdcp.examples import sphere_on_plane
from mbdcp.testing import random_scene


def sphere_rate(n_steps):
    M, Wn, D, E, U = sphere_on_plane()
    h = 0.01
    p = np.array([0, 0, -9.81 * h, 0, 0, 0])
    psi = np.zeros(1)
    v = np.array([2.0, 0, 0, 0, 0, 0])
    t0 = time.perf_counter()
    for _ in range(n_steps):
        v = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p, psi_n=psi).v_next
    return time.perf_counter() - t0, v


def peer(scenes, steps):
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        arrays = {}
        for k, s in enumerate(scenes):
            for name, val in zip(("M", "Wn", "D", "E", "mu", "v", "h", "p", "psi"),
                                 (s.M, s.Wn, s.D, s.E, s.U, s.v, s.h, s.p_ext, s.psi_n)):
                arrays[f"{name}{k}"] = np.asarray(val, float)
        np.savez(src, **arrays)
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "siconos_step_runner.py"), src, dst, str(steps)],
                       check=True)
        out = np.load(dst)
        return [(out[f"v{k}"], int(out[f"info{k}"]), float(out[f"t{k}"])) for k in range(len(scenes))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()

    n = 20_000 if args.quick else 100_000
    seconds, _ = sphere_rate(n)
    print(f"Sphere (6 DOF, 1 contact, 4 directions): {n} steps of mbdcp.step from Python in {seconds:.2f} s "
          f"= {seconds / n * 1e6:.1f} us per step (targets: <= 10 us, 1e5 steps < 2 s)")

    sizes = [10, 50, 100] if args.quick else [10, 25, 50, 100, 200]
    scenes = [random_scene(max(2, nc // 2), nc, seed=nc, n_d=(4, 4)) for nc in sizes]
    steps = 5 if args.quick else 20
    sic = peer(scenes, steps) if siconos_available() else None
    rows, ratios = [], []
    for k, (nc, s) in enumerate(zip(sizes, scenes)):
        t_m, res = best_time(lambda: mbdcp.step(*s.args(), **s.kwargs()))
        row = [nc, s.M.shape[0], len(res.lcp.z) if res.lcp else 2 * nc + s.D.shape[1], f"{t_m * 1e3:.3f}",
               "yes" if res.success else "NO"]
        if sic:
            v_peer, info, t_s = sic[k]
            agree = np.abs(v_peer - res.v_next).max() / max(1.0, np.abs(res.v_next).max())
            row += [f"{t_s * 1e3:.3f}", f"{info}", f"{agree:.1e}", f"{t_m / t_s:.2f}"]
            ratios.append(t_m / t_s)
        rows.append(row)
    print("\nOne time step of random spatial scenes [ms per step] (peer: NumPy assembly + Siconos lexicolemke)")
    print_table(["contacts", "n_v", "LCP size", "mbdcp", "solved", "peer", "peer info", "|dv| rel", "mbdcp/peer"],
                rows)
    if ratios:
        print(f"\nmedian time ratio mbdcp / peer pipeline: {np.median(ratios):.2f} (target <= 0.5)")


if __name__ == "__main__":
    main()
