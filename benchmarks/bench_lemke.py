"""mbdcp.lemke against Siconos lcp_lexicolemke and lemkelcp on the same LCPs.

Problems: dense SPD LCPs (n = 100, 400, 800; solution built in, half the constraints
active) and Stewart–Trinkle LCPs of random spatial scenes (a few hundred unknowns).
Siconos runs under Debian's /usr/bin/python3 in a subprocess and is timed there, per
solve, on the same saved problems. Each answer is checked by definition.

    python benchmarks/bench_lemke.py [--quick]
"""
import argparse

import numpy as np
from common import best_time, lemkelcp_solver, print_table, siconos_available, siconos_lcp, verifies

import mbdcp
from mbdcp.testing import lcp_with_solution, random_spd, stewart_trinkle_lcp


def problems(quick):
    rng = np.random.default_rng(2026)
    out = []
    for n in (100, 400) if quick else (100, 400, 800):
        for k in range(2 if quick else 3):
            M = random_spd(n, rng, cond=100)
            out.append((f"SPD n={n} #{k}", M, lcp_with_solution(M, rng)[0]))
    for k, (nb, nc) in enumerate([(20, 40), (30, 60), (40, 80)][: 2 if quick else 3]):
        F, f = stewart_trinkle_lcp(nb, nc, seed=k, n_d=(4, 4))
        out.append((f"ST N={len(f)}", F, f))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lemkelcp-max-n", type=int, default=400, help="largest n given to lemkelcp (slow)")
    args = ap.parse_args()
    probs = problems(args.quick)

    sic = siconos_lcp([(M, q) for _, M, q in probs], repeat=3) if siconos_available() else None
    lk = lemkelcp_solver()

    rows, r_sic, r_lk = [], [], []
    for k, (name, M, q) in enumerate(probs):
        t_m, res = best_time(lambda: mbdcp.lemke(M, q))
        row = [name, res.pivots, f"{t_m * 1e3:.2f}", "yes" if res.success and verifies(M, q, res.z) else "NO"]
        if sic:
            z, w, info, t_s = sic[k]
            ok = verifies(M, q, z)
            row += [f"{t_s * 1e3:.2f}", ("yes" if ok else "NO") + ("" if info == 0 else f" (info {info})"),
                    f"{t_m / t_s:.2f}"]
            r_sic.append(t_m / t_s)
        else:
            row += ["-", "-", "-"]
        if lk and len(q) <= args.lemkelcp_max_n:
            t_l, out = best_time(lambda: lk(M, q, 100 * len(q)), repeat=1, min_total=0)
            row += [f"{t_l * 1e3:.1f}", "yes" if out[1] == 0 and verifies(M, q, out[0]) else "NO",
                    f"{t_l / t_m:.0f}x"]
            r_lk.append(t_l / t_m)
        else:
            row += ["-", "-", "-"]
        rows.append(row)
    print("Lemke's method: best-of-3 wall time per solve [ms]; 'ok' = verified by definition")
    print_table(["problem", "pivots", "mbdcp", "ok", "siconos", "ok", "mbdcp/siconos", "lemkelcp", "ok",
                 "lemkelcp/mbdcp"], rows)
    if r_sic:
        print(f"\nmedian time ratio mbdcp / Siconos lcp_lexicolemke: {np.median(r_sic):.2f} (target <= 0.5)")
    if r_lk:
        print(f"median speed-up over lemkelcp: {np.median(r_lk):.0f}x (target >= 100x)")


if __name__ == "__main__":
    main()
