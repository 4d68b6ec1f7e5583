"""mbdcp.batch.lemke against a Python loop over mbdcp.lemke and QuantEcon's lcp_lemke (numba).

Problems: 10^4 LCPs of each size n = 6, 12, 24 with M = A A^T + 0.1 I (A standard normal) and
q standard normal, the same for every solver. Every answer is checked by definition. The batch
runs with 1 and with 2 threads (the speed-up is printed); the loops are single-threaded, as a
user would write them. A second table steps 10^4 spheres of Trinkle (2003), section 4 (one contact, four
friction directions, per-instance velocity and friction coefficient) with mbdcp.batch.step and
with a loop over mbdcp.step.

    python benchmarks/bench_batch.py [--quick]
"""
import argparse

import numpy as np
from common import best_time, print_table, verifies

import mbdcp
from mbdcp.examples import sphere_on_plane


def quantecon_solver():
    try:
        from quantecon.optimize import lcp_lemke
    except ImportError:
        return None
    return lcp_lemke


def lcps(n, B, rng):
    A = rng.standard_normal((B, n, n))
    return A @ A.transpose(0, 2, 1) + 0.1 * np.eye(n), rng.standard_normal((B, n))


def lemke_table(B, quick):
    rng = np.random.default_rng(2026)
    qe = quantecon_solver()
    rows = []
    for n in (6, 12, 24):
        Ms, qs = lcps(n, B, rng)
        t1, r1 = best_time(lambda: mbdcp.batch.lemke(Ms, qs, threads=1), repeat=3)
        t2, r2 = best_time(lambda: mbdcp.batch.lemke(Ms, qs, threads=2), repeat=3)
        assert np.array_equal(r1.z, r2.z)
        ok = r1.success.all() and all(verifies(Ms[i], qs[i], r1.z[i]) for i in range(B))
        tl, singles = best_time(lambda: [mbdcp.lemke(Ms[i], qs[i]) for i in range(B)], repeat=1 if quick else 2)
        same = all(np.array_equal(s.z, r1.z[i]) for i, s in enumerate(singles))
        tb = min(t1, t2)
        row = [n, B, f"{t1 * 1e3:.1f}", f"{t2 * 1e3:.1f}", f"{t1 / t2:.2f}", f"{tl * 1e3:.1f}", f"{tl / tb:.1f}",
               "yes" if ok else "NO", "yes" if same else "NO"]
        if qe is not None:
            qe(Ms[0], qs[0])  # compile outside the timing
            tq, outs = best_time(lambda: [qe(Ms[i], qs[i]) for i in range(B)], repeat=1 if quick else 2)
            qok = sum(bool(o.success) and verifies(Ms[i], qs[i], o.z) for i, o in enumerate(outs))
            row += [f"{tq * 1e3:.1f}", f"{tq / tb:.2f}", f"{qok}/{B}"]
        else:
            row += ["-", "-", "-"]
        rows.append(row)
    print(f"\n{B} LCPs per size (times in ms; ratio = loop time / best batch time)")
    print_table(["n", "B", "batch 1 thr", "batch 2 thr", "speed-up", "mbdcp loop", "ratio", "verified", "bitwise",
                 "QuantEcon loop", "ratio QE", "QE verified"], rows)
    if qe is None:
        print("QuantEcon not installed (pip install quantecon): its columns are empty")


def step_table(B, quick):
    rng = np.random.default_rng(7)
    M, Wn, D, E, _ = sphere_on_plane()
    vs = np.zeros((B, 6))
    vs[:, 0] = rng.uniform(0.1, 5.0, B)
    mus = rng.uniform(0.0, 1.0, (B, 1))
    h = 0.01
    p_ext = [0, 0, -9.81 * h, 0, 0, 0]
    t1, r1 = best_time(lambda: mbdcp.batch.step(M, Wn, D, E, mus, vs, h, p_ext=p_ext, psi_n=[0.0], threads=1))
    t2, r2 = best_time(lambda: mbdcp.batch.step(M, Wn, D, E, mus, vs, h, p_ext=p_ext, psi_n=[0.0], threads=2))
    tl, singles = best_time(lambda: [mbdcp.step(M, Wn, D, E, mus[i], vs[i], h, p_ext=p_ext, psi_n=[0.0])
                                     for i in range(B)], repeat=1 if quick else 2)
    same = all(np.array_equal(s.v_next, r1.v_next[i]) for i, s in enumerate(singles))
    print(f"\n{B} time steps of the sphere (times in ms)")
    print_table(["B", "batch 1 thr", "batch 2 thr", "speed-up", "mbdcp.step loop", "ratio", "all solved", "bitwise"],
                [[B, f"{t1 * 1e3:.1f}", f"{t2 * 1e3:.1f}", f"{t1 / t2:.2f}", f"{tl * 1e3:.1f}", f"{tl / min(t1, t2):.1f}",
                  "yes" if r1.success.all() else "NO", "yes" if same else "NO"]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10^3 problems instead of 10^4")
    args = ap.parse_args()
    B = 1000 if args.quick else 10000
    lemke_table(B, args.quick)
    step_table(B, args.quick)


if __name__ == "__main__":
    main()
