"""Cost of a gradient of one time step: implicit-function vjp against the solve and against
finite differences.

For random spatial scenes with 10-200 contacts (4 friction directions each), the loss is
<g, v_next> for a fixed random g; its gradient with respect to the friction coefficients U
(n_c parameters) and the initial velocity v (n_v parameters) is computed

- by mbdcp.derivatives.step (setup: Cholesky of M, active-set factorization; then one vjp),
- by forward finite differences: one extra mbdcp.step per parameter (n_c + n_v solves).

Timed on one BLAS thread (the C solver is single-threaded; threaded BLAS on a shared machine only
adds noise). Finite differences are timed on up to 40 parameters and scaled to all of them; the
gradients are compared on those parameters.

    python benchmarks/bench_derivatives.py [--quick]
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import time

import numpy as np
from common import best_time, print_table

import mbdcp
from mbdcp.testing import random_scene


def fd_gradient(s, g, params, eps=1e-7):
    """Forward differences of <g, v_next> in the listed parameters ((name, index) pairs)."""
    base = g @ mbdcp.step(*s.args(), **s.kwargs()).v_next
    out = []
    for name, i in params:
        U, v = s.U.copy(), s.v.copy()
        x = U if name == "U" else v
        step = eps * max(1.0, abs(x[i]))
        x[i] += step
        r = mbdcp.step(s.M, s.Wn, s.D, s.E, U, v, s.h, **s.kwargs())
        out.append((g @ r.v_next - base) / step)
    return np.array(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = [10, 50] if args.quick else [10, 25, 50, 100, 200]
    rows, ratios = [], []
    for nc in sizes:
        s = random_scene(max(2, nc // 2), nc, seed=nc, n_d=(4, 4))
        n_v = s.M.shape[0]
        g = np.random.default_rng(nc).standard_normal(n_v)
        t_solve, res = best_time(lambda s=s: mbdcp.step(*s.args(), **s.kwargs()))
        assert res.success

        def gradient(s=s, res=res, g=g):
            d = mbdcp.derivatives.step(*s.args(), res, **s.kwargs())
            return d, d.vjp(v_next=g)
        t_grad, (d, grad) = best_time(gradient)
        t_vjp, _ = best_time(lambda d=d, g=g: d.vjp(v_next=g))
        params = [("U", i) for i in range(nc)] + [("v", i) for i in range(n_v)]
        sample = params[:: max(1, len(params) // 40)][:40]
        t0 = time.perf_counter()
        fd = fd_gradient(s, g, sample)
        t_fd = (time.perf_counter() - t0) / (len(sample) + 1) * (len(params) + 1)
        exact = np.array([grad[name][i] for name, i in sample])
        agree = np.abs(fd - exact).max() / np.abs(exact).max()
        modes = {m: int(np.sum(d.mode == m)) for m in ("separated", "sticking", "sliding")}
        rows.append([nc, n_v, len(params), f"{t_solve * 1e3:.3f}", f"{t_grad * 1e3:.3f}", f"{t_vjp * 1e3:.3f}",
                     f"{t_grad / t_solve:.2f}", f"{t_fd * 1e3:.1f}", f"{t_fd / t_grad:.0f}", f"{agree:.1e}",
                     "/".join(str(modes[m]) for m in modes), d.degenerate.size])
        ratios.append(t_grad / t_solve)
    print("Gradient of <g, v_next> w.r.t. U and v for one step of a random scene [ms]")
    print("(setup+vjp: derivative object built and one vjp; FD: one mbdcp.step per parameter)")
    print_table(["contacts", "n_v", "params", "solve", "setup+vjp", "vjp only", "(setup+vjp)/solve", "FD",
                 "FD/(setup+vjp)", "|FD-vjp| rel", "sep/stick/slide", "degenerate"], rows)
    print(f"\nsetup+vjp relative to the solve: {', '.join(f'{r:.2f}' for r in ratios)} (target <= 1)")


if __name__ == "__main__":
    main()
