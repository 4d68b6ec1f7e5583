"""Reliability table: how often each solver says "solved", and how often that is a solution.

Every answer is judged by one rule, computed here from the returned z in extended precision
(mbdcp.testing.solves_lcp, np.longdouble), whatever the solver says: z >= 0, and for every row
w_i >= -tol s_i and (z_i = 0 or w_i <= tol s_i), s_i = (|M||z| + |q|)_i, each row at its own
scale (tol 1e-8, ten times looser than mbdcp's own 1e-9). The same problems go to mbdcp.lemke and
to Siconos' lcp_lexicolemke and lcp_pivot (in a subprocess of Debian's Python; a crash loses one
problem). Classes:

    LCP_CLASSES x scaling   mbdcp.testing.lcp_problem (planted solution) under none, diagonal
                            (rows and columns 1e-8..1e8), symmetric and global scalings
    spread rows             P-matrices with rows, columns and solution over 1e-12..1e12 (spread_lcp)
    P 1e+-6, P 1e+-8        P-matrix LCPs with rows and columns scaled over 1e-6..1e6, 1e-8..1e8
    infeasible              monotone LCPs with no solution (infeasible_lcp, scaled 1e-3..1e3): any
                            "solved" is false
    box-drop steps          the reduced LCPs mbdcp.step assembles while a box tumbles onto a floor

    solved     the solver said so (mbdcp: SOLVED; Siconos: info == 0)
    false      said solved on a non-solution (or on an infeasible problem)
    unsolved   did not say solved (for the infeasible class, the right answer)

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
from mbdcp.testing import LCP_CLASSES, infeasible_lcp, lcp_problem, scaled_lcp, solves_lcp, spread_lcp

SCALINGS = ["none", "diagonal", "symmetric", "global"]


def lcp_classes(count):
    for kind in LCP_CLASSES:
        for how in SCALINGS:
            rng = np.random.default_rng(zlib.crc32(f"{kind}/{how}".encode()))
            yield f"{kind} / {how}", True, [scaled_lcp(*lcp_problem(kind, int(rng.integers(2, 41)), rng), how, rng)
                                           for _ in range(count)]


def p_scaled(rng, lo, hi):
    n = int(rng.integers(2, 41))
    M, q = lcp_problem("P", n, rng)
    r, c = 10 ** rng.uniform(lo, hi, n), 10 ** rng.uniform(lo, hi, n)
    return r[:, None] * M * c[None, :], r * q


def infeasible(rng):
    M, q = infeasible_lcp(int(rng.integers(4, 51)), rng)
    d = 10 ** rng.uniform(-3, 3, len(q)) if rng.uniform() < 0.5 else np.full(len(q), 10 ** rng.uniform(-3, 3))
    return d[:, None] * M * d[None, :], d * q


def box_drop_lcps(count):
    """The reduced LCPs of the steps with contacts of box drops, one in five, until count are gathered."""
    from mbdcp.mechanics import Body3D, Plane, Scene, simulate

    out, seen, step = [], [0], mbdcp.step

    def keep(*a, **k):
        res = step(*a, **{**k, "return_lcp": True})
        if res.lcp is not None and res.lcp.f.size:
            seen[0] += 1
            if len(out) < count and seen[0] % 5 == 0:
                out.append((res.lcp.F, res.lcp.f))
        return res

    mbdcp.step = keep
    try:
        for seed in range(1000):
            if len(out) >= count:
                break
            rng = np.random.default_rng(seed)
            q = rng.standard_normal(4)
            box = Body3D(1.0, [0, 0, rng.uniform(0.6, 1.2)], quaternion=q / np.linalg.norm(q),
                         velocity=rng.uniform(-1, 1, 3), omega=rng.uniform(-3, 3, 3), half_extents=[0.5, 0.3, 0.2])
            simulate(Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=rng.uniform(0.1, 0.8), n_d=8, delta=0.02),
                     0.005, 0.6, method="lcp", progress=False)
    finally:
        mbdcp.step = step
    return out


def trust_classes(count):
    def family(name, make, seed):
        rng = np.random.default_rng(seed)
        return [make(rng) for _ in range(count)]

    yield "spread rows", True, family("spread", lambda r: spread_lcp(int(r.integers(2, 31)), r), 29)
    yield "P 1e+-6", True, family("P6", lambda r: p_scaled(r, -6, 6), 36)
    yield "P 1e+-8", True, family("P8", lambda r: p_scaled(r, -8, 8), 38)
    yield "infeasible", False, family("inf", infeasible, 31)
    yield "box-drop steps", True, box_drop_lcps(count)


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


def judge(batch, answers, feasible):
    """(solved, false, unsolved, crashed) counts of one solver's answers."""
    said = [a[0] for a in answers]
    right = [feasible and z is not None and solves_lcp(M, q, z) for (M, q), (_, z, _) in zip(batch, answers)]
    false = sum(s and not r for s, r in zip(said, right))
    return sum(said), false, len(batch) - sum(said), sum(a[2] for a in answers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-class", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    count = 40 if args.quick else args.per_class
    peers = ["lexicolemke", "pivot"] if siconos_available() else []
    rows, totals = [], {}
    for name, feasible, batch in [*trust_classes(count), *lcp_classes(count)]:
        answers = {"mbdcp": [(r.success, r.z, False) for r in (mbdcp.lemke(M, q) for M, q in batch)]}
        for peer in peers:
            answers[peer] = siconos(batch, peer)
        for solver, ans in answers.items():
            counts = judge(batch, ans, feasible)
            rows.append((name, solver, len(batch), *counts))
            t = totals.setdefault(solver, [0] * 5)
            for i, x in enumerate((len(batch), *counts)):
                t[i] += x
    print_table(["class", "solver", "tried", "solved", "false", "unsolved", "crashed"], rows)
    print()
    print_table(["solver", "tried", "solved", "false solved", "unsolved", "crashed"], [(k, *v) for k, v in totals.items()])


if __name__ == "__main__":
    main()
