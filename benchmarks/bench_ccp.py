"""mbdcp.ccp against Clarabel (same conic QP) and Siconos fc3d_nsgs; scaling per iteration.

1. Three piles of 2000 bodies: random granular piles (mbdcp.testing.granular_pile, 4000 contacts
   between random pairs of bodies, or between bodies close in index: a banded contact graph that
   an interior-point solver factors almost for free) and a 3-D lattice pile compressed
   downwards (mbdcp.mechanics.sphere_pile_scene, about 5000 geometric contacts). APGD, PGS,
   Jacobi, the interior-point method and auto to a relative residual of 1e-6, against Clarabel on the same conic QP (N = P^T M^-1 P
   formed for it; its assembly is not timed), objectives compared.
2. Siconos fc3d_nsgs (Debian python3-siconos, in a subprocess, timed there) on W = N, q = p:
   it solves the Coulomb problem, of which the CCP is a convex relaxation, so only times at
   equal residual tolerance are compared.
3. Time per iteration of APGD and PGS at 10^3, 10^4, 10^5 contacts.
4. (--settling) Settling sphere piles (mbdcp.mechanics.sphere_pile_scene, 100 to 500 spheres,
   h = 0.01 s, 100 steps): every step's CCP of a simulate(method="ccp") run recorded, then solved
   again by APGD, the semismooth Newton method, the interior-point method and auto from the same
   warm start (iterations and time per step, SOLVED count), and the whole run once more with
   algorithm="newton"; MuJoCo (optional import) on the same spheres, walls, masses, friction
   and time step (Newton solver, its default pyramidal cones and soft contacts): time per step,
   deepest penetration, final mean height.

5. (--decided) Random-pair and lattice piles of 1k, 4k and 20k contacts: APGD, Newton, auto and
   Clarabel to 1e-6, and whether each mbdcp solve was decided (SOLVED or a certificate).

    python benchmarks/bench_ccp.py [--quick] [--settling | --decided]
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy.sparse as sp
from bench_mujoco import run_mujoco
from common import HERE, print_table, siconos_available
from profile_simulate import simulate_profile

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


def recorded_steps(n_spheres, h, steps):
    """Run simulate(method="ccp") on a sphere pile and record every step's mbdcp.ccp call: ([(args,
    kwargs)], trajectory, seconds)."""
    import sys

    from mbdcp.mechanics import simulate, sphere_pile_scene

    module = sys.modules["mbdcp.formulations.ccp"]  # simulate solves each step by its _stepped
    calls, original = [], module._stepped

    def recording(*a, **kw):
        calls.append((a, kw))
        return original(*a, **kw)

    module._stepped = recording
    try:
        t0 = time.perf_counter()
        tr = simulate(sphere_pile_scene(n_spheres), h, steps * h, method="ccp", progress=False)
        seconds = time.perf_counter() - t0
    finally:
        module._stepped = original
    return [module._as_call(*a, **kw) for a, kw in calls], tr, seconds  # as mbdcp.ccp's arguments


def settling(sizes, h=0.01, steps=100):
    """Section 4: apgd, newton, ipm and auto on every recorded step of settling piles; MuJoCo alongside."""
    from mbdcp.mechanics import simulate, sphere_pile_scene

    for n_spheres in sizes:
        calls, tr, sim_seconds = recorded_steps(n_spheres, h, steps)
        heights = tr.positions[-1].reshape(-1, 7)[:, 2]
        print(f"\nsphere pile, {n_spheres} spheres, h = {h}, {steps} steps: simulate(method='ccp') "
              f"{sim_seconds:.2f} s ({tr.solver_seconds:.2f} s in mbdcp.ccp), deepest penetration "
              f"{tr.max_penetration.max():.2e} m, final mean height {heights.mean():.4f} m, contacts per step "
              f"{int(np.median(tr.contacts))} (median)")
        rows = []
        for method in ("apgd", "newton", "ipm", "auto"):
            its, secs, solved, finished_second = [], 0.0, 0, 0
            for a, kw in calls:
                kw = dict(kw, method=method)
                t0 = time.perf_counter()
                r = mbdcp.ccp(*a, **kw)
                secs += time.perf_counter() - t0
                its.append(r.iterations)
                solved += r.success
                finished_second += r.finished in ("ipm", "newton")
            its = np.array(its)
            rows.append([method, f"{secs / len(calls) * 1e3:.2f}", f"{np.median(its):.0f}", int(its.max()),
                         f"{its.max() / max(np.median(its), 1):.1f}", f"{solved}/{len(calls)}", finished_second])
        print_table(["method", "ms/step", "median it", "max it", "max/median", "SOLVED", "ended by ipm/newton"], rows)
        t0 = time.perf_counter()
        tr_newton = simulate(sphere_pile_scene(n_spheres), h, steps * h, method="ccp", algorithm="newton", progress=False)
        newton_seconds = time.perf_counter() - t0
        print(f"simulate(method='ccp', algorithm='newton'): {newton_seconds:.2f} s, every step SOLVED: "
              f"{tr_newton.success}, deepest penetration {tr_newton.max_penetration.max():.2e} m")
        mj = run_mujoco(sphere_pile_scene(n_spheres), h, steps)
        if mj is None:
            print("MuJoCo: not installed")
        else:
            print(f"MuJoCo (Newton): {mj[0]:.3f} s for {steps} steps ({mj[0] / steps * 1e3:.2f} ms/step), deepest "
                  f"penetration {mj[1]:.2e} m, final mean height {mj[2]:.4f} m; simulate / MuJoCo time "
                  f"{sim_seconds / mj[0]:.1f}x (auto), {newton_seconds / mj[0]:.1f}x (newton)")


def decided(quick):
    """Section 5 (--decided): random-pair and lattice piles of 1k, 4k and 20k contacts; apgd, newton
    (up to 4k contacts: random pairs fill its factor), auto and Clarabel (up to 4k contacts) to
    1e-6: time, iterations, and whether the solve was decided (SOLVED, or RAY_TERMINATION with a
    certificate)."""
    sizes = ((500, 1000), (2000, 4000)) if quick else ((500, 1000), (2000, 4000), (8000, 20000))
    rows, undecided = [], 0
    for nb, nc in sizes:
        for kind, d in (("random pairs", granular_pile(nb, nc, seed=1, pairs="random")), ("lattice", lattice_pile(2 * nc // 5))):
            n_c = d["Wn"].shape[1]
            times, first = {}, len(rows)  # rows[first]: APGD's
            for method in ("apgd", "newton", "auto"):
                if method == "newton" and n_c > 5000:
                    continue
                t0 = time.perf_counter()
                r = mbdcp.ccp(**d, method=method, tol=1e-6, max_iter=100_000)
                times[method] = time.perf_counter() - t0
                ok = r.success or r.certificate is not None
                undecided += not ok
                rows.append([kind, n_c, method, f"{times[method]:.3f}", r.iterations, r.status.name, "yes" if ok else "NO"])
            if n_c <= 5000:
                try:
                    N, p = conic_qp(d)
                    t_c, _, st = clarabel_solve(N, p, d["mu"])
                    rows.append([kind, n_c, "clarabel", f"{t_c:.3f}", "-", st, "-"])
                    rows[first][3] += f" ({times['apgd'] / t_c:.3f} of Clarabel)"
                except ImportError:
                    pass
    print("\nDecided or not: random-pair and lattice piles, tol 1e-6 [s]")
    print_table(["pile", "contacts", "solver", "seconds", "iterations", "status", "decided"], rows)
    print(f"undecided mbdcp solves: {undecided}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--settling", action="store_true", help="only section 4 (settling piles against MuJoCo)")
    ap.add_argument("--decided", action="store_true", help="only section 5 (1k/4k/20k contacts, decided or not)")
    args = ap.parse_args()
    if args.decided:
        decided(args.quick)
        return
    if args.settling:
        print("Timings on a shared machine: ratios, not absolute figures, are what to compare.")
        settling((100, 250) if args.quick else (100, 250, 500))
        simulate_profile(100, 0.01, 100)
        return
    nb, nc = (500, 1000) if args.quick else (2000, 4000)
    scenes = [(f"random pile: {nb} bodies, {nc} contacts between random pairs", granular_pile(nb, nc, seed=1, pairs="random")),
              (f"random pile: {nb} bodies, {nc} contacts between index neighbours (banded graph)", granular_pile(nb, nc, seed=1)),
              (f"3-D lattice pile: {nb} spheres (geometric contacts)", lattice_pile(nb))]
    for title, d in scenes:
        N, p = conic_qp(d)
        rows, results = [], {}
        for method in ("apgd", "pgs", "pjacobi", "ipm", "auto"):
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
