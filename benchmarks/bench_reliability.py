"""Reliability table: how often each solver answers, and how often its "success" is a solution.

Per LCP class (mbdcp.testing.LCP_CLASSES, built around a planted solution, so each problem is
solvable) and per rescaling (none, diagonal 1e-8..1e8, symmetric, global 1e-12..1e12), the same
problems go to mbdcp.lemke, Siconos lcp_lexicolemke and Siconos lcp_pivot. Every answer is checked
componentwise (mbdcp.testing.solves_lcp, NumPy, tol 1e-8) whatever the solver says.

    tried      problems
    success    the solver reported success (mbdcp: SOLVED; Siconos: info == 0)
    verified   the returned z passes the check
    false      success reported on a non-solution (must be 0 for mbdcp)
    crash      the process died (Siconos runs in a subprocess; a crash loses one problem)

    python benchmarks/bench_reliability.py [--per-class N] [--quick]
"""
import argparse
import os
import subprocess
import tempfile
import zlib

import numpy as np
from common import HERE, print_table, siconos_available

import mbdcp
from mbdcp.testing import LCP_CLASSES, lcp_problem, scaled_lcp, solves_lcp

SCALINGS = ["none", "diagonal", "symmetric", "global"]


def problems(kind, how, count, seed):
    rng = np.random.default_rng(seed)
    return [scaled_lcp(*lcp_problem(kind, int(rng.integers(2, 41)), rng), how, rng) for _ in range(count)]


def siconos(batch, solver):
    """[(success, z or None, crashed)] for each problem, with Siconos in a subprocess."""
    out = [(False, None, False)] * len(batch)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.npz")
        np.savez(src, **{f"{a}{k}": x for k, (M, q) in enumerate(batch) for a, x in (("M", M), ("q", q))})
        start = 0
        while start < len(batch):
            run = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "siconos_lcp_runner.py"), src, solver, str(start)],
                                 capture_output=True, text=True, timeout=3600)
            done = start
            for line in run.stdout.splitlines():
                if not line.startswith("RESULT "):
                    continue
                _, k, info, *z = line.split()
                out[int(k)] = (int(info) == 0, np.array([float(x) for x in z]), False)
                done = int(k) + 1
            if run.returncode == 0:
                break
            out[done] = (False, None, True)  # the process died on this problem
            start = done + 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-class", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    count = 40 if args.quick else args.per_class
    peers = ["lexicolemke", "pivot"] if siconos_available() else []
    rows, totals = [], {}
    for kind in LCP_CLASSES:
        for how in SCALINGS:
            batch = problems(kind, how, count, seed=zlib.crc32(f"{kind}/{how}".encode()))
            answers = {"mbdcp": []}
            for M, q in batch:
                res = mbdcp.lemke(M, q)
                answers["mbdcp"].append((res.success, res.z, False))
            for peer in peers:
                answers[peer] = siconos(batch, peer)
            for name, ans in answers.items():
                ok = [z is not None and solves_lcp(M, q, z) for (M, q), (_, z, _) in zip(batch, ans)]
                success = sum(a[0] for a in ans)
                false = sum(a[0] and not v for a, v in zip(ans, ok))
                crash = sum(a[2] for a in ans)
                rows.append((kind, how, name, len(batch), success, sum(ok), false, crash))
                t = totals.setdefault(name, [0, 0, 0, 0, 0])
                for i, x in enumerate((len(batch), success, sum(ok), false, crash)):
                    t[i] += x
    print_table(["class", "scaling", "solver", "tried", "success", "verified", "false", "crash"], rows)
    print()
    print_table(["solver", "tried", "success", "verified", "false successes", "crashes"],
                [(k, *v) for k, v in totals.items()])


if __name__ == "__main__":
    main()
