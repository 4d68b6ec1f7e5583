"""mbdcp.ccp against Clarabel (same conic QP) and Siconos fc3d_nsgs; scaling per iteration.

1. Three piles of 2000 bodies: random granular piles (mbdcp.testing.granular_pile, 4000 contacts
   between random pairs of bodies, or between bodies close in index: a banded contact graph that
   an interior-point solver factors almost for free) and a 3-D lattice pile compressed
   downwards (mbdcp.mechanics.sphere_pile_scene, about 5000 geometric contacts). APGD, PGS and
   Jacobi to a relative residual of 1e-6, against Clarabel on the same conic QP (N = P^T M^-1 P
   formed for it; its assembly is not timed), objectives compared.
2. Siconos fc3d_nsgs (Debian python3-siconos, in a subprocess, timed there) on W = N, q = p:
   it solves the Coulomb problem, of which the CCP is a convex relaxation, so only times at
   equal residual tolerance are compared.
3. Time per iteration of APGD and PGS at 10^3, 10^4, 10^5 contacts.

    python benchmarks/bench_ccp.py [--quick]
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy.sparse as sp
from common import HERE, print_table, siconos_available

import mbdcp
from mbdcp.formulations.ccp import mass_inverse
from mbdcp.testing import granular_pile


def conic_qp(d):
    Minv = mass_inverse(d["M"])
    n_c = d["Wn"].shape[1]
    perm = np.empty(3 * n_c, dtype=int)
    perm[0::3], perm[1::3], perm[2::3] = np.arange(n_c), n_c + 2 * np.arange(n_c), n_c + 2 * np.arange(n_c) + 1
    P = sp.hstack([d["Wn"], d["Wt"]], format="csc")[:, perm]
    N = (P.T @ Minv @ P).tocsc()
    p = P.T @ (d["v"] + Minv @ d["p_ext"])
    p[0::3] += d["psi_n"] / d["h"]
    return N, p


def lattice_pile(n_spheres=2000, h=0.1, seed=0):
    """A 3-D lattice of spheres in a box, every neighbour within the activation distance,
    moving down at about 2 m/s: the CCP arguments of one step."""
    from mbdcp.mechanics import sphere_pile_scene

    a = sphere_pile_scene(n_spheres, width=12, delta=0.12, seed=seed).assemble(h, sparse=True)
    v = a["v"].copy()
    v[2::6] -= 2.0
    v += 0.3 * np.random.default_rng(seed).standard_normal(v.shape)
    return dict(M=a["M"], Wn=a["Wn"], Wt=a["Wt"], mu=a["U"], v=v, h=h, p_ext=a["p_ext"], psi_n=a["psi_n"])


def objective(N, p, x):
    return 0.5 * x @ (N @ x) + p @ x


def clarabel_solve(N, p, mu):
    import clarabel

    n = len(p)
    diag = np.ones(n)
    diag[0::3] = mu
    A = -sp.diags(diag).tocsc()
    s = clarabel.DefaultSettings()
    s.verbose = False
    solver = clarabel.DefaultSolver(sp.triu(N).tocsc(), p, A, np.zeros(n), [clarabel.SecondOrderConeT(3)] * (n // 3), s)
    t0 = time.perf_counter()
    sol = solver.solve()
    return time.perf_counter() - t0, np.array(sol.x), str(sol.status)


def siconos_fc3d(N, p, mu, tol):
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        np.savez(src, W_indptr=N.indptr, W_indices=N.indices, W_data=N.data, n=N.shape[0], q=p, mu=mu)
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "siconos_fc3d_runner.py"), src, dst, str(tol)],
                       check=True, capture_output=True)
        out = np.load(dst)
        return float(out["seconds"]), int(out["info"]), float(out["residual"]), int(out["iterations"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    nb, nc = (500, 1000) if args.quick else (2000, 4000)
    scenes = [(f"random pile: {nb} bodies, {nc} contacts between random pairs", granular_pile(nb, nc, seed=1, pairs="random")),
              (f"random pile: {nb} bodies, {nc} contacts between index neighbours (banded graph)", granular_pile(nb, nc, seed=1)),
              (f"3-D lattice pile: {nb} spheres (geometric contacts)", lattice_pile(nb))]
    for title, d in scenes:
        N, p = conic_qp(d)
        rows, results = [], {}
        for method in ("apgd", "pgs", "pjacobi"):
            t0 = time.perf_counter()
            res = mbdcp.ccp(**d, method=method, tol=1e-6, max_iter=100_000)
            t = time.perf_counter() - t0
            results[method] = (t, res)
            rows.append([f"mbdcp {method}", f"{t:.3f}", res.iterations, f"{res.residual:.1e}",
                         f"{objective(N, p, res.gamma.ravel()):.8e}", res.status.name])
        try:
            t_c, x_c, st = clarabel_solve(N, p, d["mu"])
            f_c = objective(N, p, x_c)
            rows.append(["clarabel", f"{t_c:.3f}", "-", "-", f"{f_c:.8e}", st])
        except ImportError:
            t_c = f_c = None
        t_s = None
        if siconos_available():
            t_s, info, r_s, it_s = siconos_fc3d(N, p, d["mu"], 1e-6)
            rows.append(["siconos fc3d_nsgs (Coulomb)", f"{t_s:.3f}", it_s, f"{r_s:.1e}", "-", f"info {info}"])
        print(f"\n{title}: {d['Wn'].shape[1]} contacts, {3 * d['Wn'].shape[1]} unknowns; solve times [s]")
        print_table(["solver", "seconds", "iterations", "residual", "objective", "status"], rows)
        t_a, res_a = results["apgd"]
        if f_c is not None:
            rel = abs(objective(N, p, res_a.gamma.ravel()) - f_c) / abs(f_c)
            print(f"Clarabel / APGD time: {t_c / t_a:.1f}x (target >= 10x); objective relative difference {rel:.1e}"
                  " (target <= 1e-4)")
        if t_s is not None:
            t_g = results["pgs"][0]
            print(f"Siconos fc3d_nsgs / mbdcp PGS time at tolerance 1e-6: {t_s / t_g:.1f}x; / APGD: {t_s / t_a:.1f}x")

    print("\nTime per iteration (fixed 30 iterations, tolerance unreachable)")
    rows = []
    for n_contacts in ((1000, 10_000) if args.quick else (1000, 10_000, 100_000)):
        dd = granular_pile(n_contacts // 2, n_contacts, seed=2)
        row = [n_contacts]
        for method in ("apgd", "pgs"):
            t0 = time.perf_counter()
            r = mbdcp.ccp(**dd, method=method, tol=1e-300, max_iter=30)
            t = time.perf_counter() - t0
            row += [f"{t / r.iterations * 1e3:.3f}", f"{t / r.iterations / n_contacts * 1e9:.0f}"]
        rows.append(row)
    print_table(["contacts", "apgd ms/it", "ns/it/contact", "pgs ms/it", "ns/it/contact"], rows)


if __name__ == "__main__":
    main()
