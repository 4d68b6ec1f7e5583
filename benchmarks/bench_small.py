"""Small problems: mbdcp against QuantEcon's numba Lemke (``quantecon.optimize.lcp_lemke``).

Three tables, every time the median of interleaved repeats (the two solvers alternate, so a
busy machine slows both alike), per call in microseconds:

1. Per call: ``mbdcp.lemke`` (verified row by row) and ``lcp_lemke`` (not verified) on random SPD
   LCPs (M = A A^T + 0.1 I) and on the friction LCPs that ``mbdcp.step(..., return_lcp=True)``
   assembles for piles of spheres, n = 10 ... 200.
2. Per batch: ``mbdcp.batch.lemke`` (every instance verified, its own status) and a numba
   ``prange`` loop over ``lcp_lemke`` into preallocated arrays, on the same cores, B LCPs of size
   6, 12, 24; per solve.
3. A whole step: ``mbdcp.step`` on the sphere on a plane (Trinkle 2003, section 4; assembly,
   solve, verification, recovery, from Python) against ``lcp_lemke`` on the LCP that step
   assembles; and ``mbdcp.batch.step`` per instance.

QuantEcon's compile time is measured once and printed, not counted. Every answer is checked by
definition (tests/ do that in extended precision; here a cheap check guards the comparison).

    pip install "mbdcp[peers]"        # QuantEcon and numba (and the other peers)
    python benchmarks/bench_small.py [--quick]
"""
import argparse
import os
import time

import numpy as np
from common import print_table, verifies

import mbdcp
from mbdcp.examples import sphere_on_plane


def median_pair(f, g, repeat, inner, warmup=0):
    """Median per-call seconds of f and of g, timed alternately (`inner` calls per sample), each
    sample after `warmup` untimed calls (the other side's threads may still be spinning)."""
    tf, tg = [], []
    for _ in range(repeat):
        for fn, out in ((f, tf), (g, tg)):
            for _ in range(warmup):
                fn()
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            out.append((time.perf_counter() - t0) / inner)
    return float(np.median(tf)), float(np.median(tg))


def spd(n, rng):
    A = rng.standard_normal((n, n))
    return A @ A.T + 0.1 * np.eye(n), rng.standard_normal(n)


def pile_lcp(n_target, seed):
    """The friction step LCP (mbdcp.step's assembly) of the smallest sphere pile whose LCP has at
    least n_target rows, or None."""
    from mbdcp import mechanics as mech
    for bodies in range(1, 200):
        a = mech.sphere_pile_scene(bodies, width=3, seed=seed).assemble(0.01)
        lcp = mbdcp.step(a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], 0.01, p_ext=a["p_ext"], psi_n=a["psi_n"],
                         dpsi_n=a["dpsi_n"], dpsi_f=a["dpsi_f"], return_lcp=True).lcp
        if lcp is not None and lcp.F.shape[0] >= n_target:
            return lcp.F, lcp.f
    return None


def per_call(qe, quick):
    rng = np.random.default_rng(32)
    rows = []
    for n in (10, 25, 50, 100, 200):
        for kind in ("SPD", "step"):
            if kind == "SPD":
                M, q = spd(n, rng)
            else:
                lcp = pile_lcp(n, seed=n)
                if lcp is None:
                    continue
                M, q = lcp
            r, o = mbdcp.lemke(M, q), qe(M, q)
            ok = r.success and verifies(M, q, r.z) and bool(o.success) and verifies(M, q, o.z)
            inner = max(1, int(2000 / n))
            tm, tq = median_pair(lambda: mbdcp.lemke(M, q), lambda: qe(M, q), 5 if quick else 15, inner)
            rows.append([M.shape[0], kind, r.pivots, o.num_iter, f"{tm * 1e6:.1f}", f"{tq * 1e6:.1f}",
                         f"{tm / tq:.2f}", "yes" if ok else "NO"])
    print("\n1. Per call (us); ratio = mbdcp / QuantEcon (below 1: mbdcp faster)")
    print_table(["n", "LCP", "pivots mbdcp", "pivots QE", "mbdcp.lemke", "lcp_lemke", "ratio", "both verified"], rows)


def prange_loop(qe):
    import numba

    @numba.njit(parallel=True, cache=False)
    def loop(Ms, qs, Z, ok):
        for b in numba.prange(Ms.shape[0]):
            res = qe(Ms[b], qs[b], z=Z[b])
            ok[b] = res.success
    return loop


def per_batch(qe, quick):
    import numba
    B = 2000 if quick else 10000
    threads = min(2, os.cpu_count() or 1)
    numba.set_num_threads(threads)
    loop = prange_loop(qe)
    rng = np.random.default_rng(6)
    rows = []
    for n in (6, 12, 24):
        A = rng.standard_normal((B, n, n))
        Ms, qs = A @ A.transpose(0, 2, 1) + 0.1 * np.eye(n), rng.standard_normal((B, n))
        Z, ok = np.zeros((B, n)), np.zeros(B, dtype=np.bool_)
        t0 = time.perf_counter()
        loop(Ms[:2], qs[:2], Z[:2], ok[:2])
        compile_s = time.perf_counter() - t0
        # numba's worker threads spin for a while after a parallel loop and take the cores from whatever
        # runs next (measured: for over 8 ms): ten untimed calls before each sample of 5 calls in a row
        # (a pause instead lets the cores idle, and the first calls after it run up to twice as slow)
        tm, tq = median_pair(lambda: mbdcp.batch.lemke(Ms, qs, threads=threads), lambda: loop(Ms, qs, Z, ok),
                             3 if quick else 7, 5, warmup=10)
        r = mbdcp.batch.lemke(Ms, qs, threads=threads)
        same = r.success.all() and ok.all() and np.abs(r.z - Z).max() <= 1e-10 * max(1.0, np.abs(Z).max())
        rows.append([n, B, threads, f"{tm / B * 1e6:.2f}", f"{tq / B * 1e6:.2f}", f"{tm / tq:.2f}",
                     "yes" if same else "NO", f"{compile_s:.1f}"])
    print("\n2. Per batch: per solve (us); ratio = mbdcp.batch.lemke / numba prange over lcp_lemke")
    print_table(["n", "B", "threads", "batch.lemke", "prange lcp_lemke", "ratio", "same answers", "numba compile s"],
                rows)


def whole_step(qe, quick):
    M, Wn, D, E, mu = sphere_on_plane()
    v, h = np.array([1.0, 0, 0, 0, 0, 0]), 0.01
    p_ext = np.array([0, 0, -9.81 * h, 0, 0, 0])
    lcp = mbdcp.step(M, Wn, D, E, mu, v, h, p_ext=p_ext, return_lcp=True).lcp
    Ml, ql = lcp.F.copy(), lcp.f.copy()
    ts, tq = median_pair(lambda: mbdcp.step(M, Wn, D, E, mu, v, h, p_ext=p_ext), lambda: qe(Ml, ql),
                         5 if quick else 15, 2000)
    B = 2000 if quick else 10000
    vs = np.tile(v, (B, 1))
    tb, tc = median_pair(lambda: mbdcp.batch.step(M, Wn, D, E, mu, vs, h, p_ext=p_ext, threads=1),
                         step_c_loop(M, Wn, D, E, mu, vs, h, p_ext), 3 if quick else 7, 1)
    print(f"\n3. A whole step of the sphere on a plane (LCP of size {Ml.shape[0]}), us per call")
    print_table(["mbdcp.step", "lcp_lemke on its LCP", "ratio", "batch.step per instance (1 thread)",
                 "its C loop alone", "batch / C loop"],
                [[f"{ts * 1e6:.1f}", f"{tq * 1e6:.1f}", f"{ts / tq:.2f}", f"{tb / B * 1e6:.2f}", f"{tc / B * 1e6:.2f}",
                  f"{tb / tc:.2f}"]])


def step_c_loop(M, Wn, D, E, mu, vs, h, p_ext):
    """The C loop that mbdcp.batch.step runs, alone: its arrays prepared once, outside the timing
    (internal calls, for this measurement only)."""
    from mbdcp.infrastructure import _core
    from mbdcp.tools import batch as bt
    inputs = dict(Ms=(M, 2), Wns=(Wn, 2), Ds=(D, 2), Es=(E, 2), Us=(mu, 1), vs=(vs, 1), p_ext=(p_ext, 1),
                  psi_n=(None, 1), dpsi_n=(None, 1), dpsi_f=(None, 1), Wb=(None, 2), theta=(None, 1),
                  dtheta=(None, 1), Dj=(None, 2), Ej=(None, 2), beta_max=(None, 1), h=(h, 0))
    given, hs, B = bt._batch_inputs(inputs)
    arrays, shapes = bt._instance_arrays(given, hs)
    dims = (shapes["Ms"][0], shapes["Wns"][1], shapes["Ds"][1], 0, 0, 0)
    N = 2 * dims[1] + dims[2]
    max_iter, tol = mbdcp.infrastructure.validate.lemke_settings(None, None)

    def loop():  # into new outputs, as batch.step writes (writing the same ones again finds them in cache)
        outs = (np.zeros((B, dims[0])), np.zeros((B, 0)), np.zeros((B, N)), np.zeros((B, N)),
                np.zeros(B, dtype=np.intc), np.zeros(B, dtype=np.intc), np.zeros(B))
        _core.step_batch(tuple(arrays), dims, hs, 0, B, max_iter, tol, *outs, None)
    return loop


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats and a smaller batch")
    args = ap.parse_args()
    try:
        from quantecon.optimize import lcp_lemke as qe
    except ImportError:
        print("QuantEcon is not installed (pip install 'mbdcp[peers]'): nothing to compare with")
        return
    t0 = time.perf_counter()
    qe(np.eye(2), -np.ones(2))
    print(f"QuantEcon's lcp_lemke: first call (numba compile or cache load) {time.perf_counter() - t0:.2f} s, not counted")
    per_call(qe, args.quick)
    per_batch(qe, args.quick)
    whole_step(qe, args.quick)


if __name__ == "__main__":
    main()
