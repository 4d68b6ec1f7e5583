"""Fixed-point algorithms 1, 2, 3 against Lemke on the full Stewart–Trinkle LCP.

2-D disk piles (mbdcp.testing.disk_pile) with about 10 to 200 contacts, mu = 0.05, 0.2, 0.5:
time per step, iterations, convergence, and the velocity difference from mbdcp.step.

    python benchmarks/bench_relax.py [--quick]
"""
import argparse

import numpy as np
from common import best_time, print_table

import mbdcp
from mbdcp.testing import disk_pile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = [4, 12, 30] if args.quick else [4, 12, 30, 50, 75]
    rows = []
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
            rows.append(row)
    print("Time per step [ms]; it = iterations (* = not converged in 100); dv = |v - v_lemke| relative")
    print_table(["disks", "contacts", "mu", "lemke", "ok", "alg1", "it", "dv", "alg2", "it", "dv",
                 "alg3", "it", "dv"], rows)


if __name__ == "__main__":
    main()
