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
6. (--decide) Random-pair piles (random_pair_pile: 1,600 bodies and 4,000 contacts, with --large
   8,000 and 20,000), several seeds, with and without solutions: mbdcp.ccp's default (or --method)
   and Clarabel back to back in one process, with each one's time per iteration; each verdict (SOLVED,
   or RAY_TERMINATION with a certificate) checked here in extended precision (checked_verdict),
   Clarabel's verdict beside it, times and ratios.

    python benchmarks/bench_ccp.py [--quick] [--settling | --decided | --decide [--large] [--seeds N] [--first SEED]
                                   [--method METHOD]]
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
    """(N = P^T M^-1 P, p) of a pile's CCP (ccp_data)."""
    P, Minv, p = ccp_data(d)
    return (P.T @ Minv @ P).tocsc(), p


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
    return time.perf_counter() - t0, np.array(sol.x), str(sol.status), sol.iterations


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
                    t_c, _, st, _ = clarabel_solve(N, p, d["mu"])
                    rows.append([kind, n_c, "clarabel", f"{t_c:.3f}", "-", st, "-"])
                    rows[first][3] += f" ({times['apgd'] / t_c:.3f} of Clarabel)"
                except ImportError:
                    pass
    print("\nDecided or not: random-pair and lattice piles, tol 1e-6 [s]")
    print_table(["pile", "contacts", "solver", "seconds", "iterations", "status", "decided"], rows)
    print(f"undecided mbdcp solves: {undecided}")


def random_pair_pile(n_bodies, n_contacts, seed=0, h=0.005, ground=0.2):
    """A pile where many steps have no solution: spheres of radius 0.05 and mass uniform in [0.5, 1.5]
    (M block diagonal, 6 velocities each); each contact joins two random bodies, or one body and the
    ground with probability ``ground``, along a random normal tilted upward (n_z >= 0); mu uniform in
    [0.2, 0.6], gaps uniform in +-1e-4, velocities N(0, 0.2^2), gravity, time step h. Dense clusters of
    such contacts jam: their impulses can cancel on every body (P d = 0) while the gaps close (p.d < 0),
    and then no impulses keep the bodies apart. Returns mbdcp.ccp's arguments."""
    rng = np.random.default_rng(seed)
    radius = 0.05
    mass = rng.uniform(0.5, 1.5, n_bodies)
    diag = np.repeat(mass, 6)
    for k in (3, 4, 5):
        diag[k::6] = 0.4 * mass * radius ** 2
    a = rng.integers(n_bodies, size=n_contacts)
    b = (a + rng.integers(1, n_bodies, size=n_contacts)) % n_bodies
    one_body = rng.uniform(size=n_contacts) < ground
    n = rng.standard_normal((n_contacts, 3))
    n[:, 2] = np.abs(n[:, 2])
    n /= np.linalg.norm(n, axis=1)[:, None]
    t1 = np.cross(n, np.where(np.abs(n[:, [0]]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]]))
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(n, t1)
    rows, cols, vals = [], [], []
    for k, vec in enumerate((n, t1, t2)):
        col = 3 * np.arange(n_contacts) + k
        for body, offset, sign, keep in ((a, -radius * n, 1.0, np.ones(n_contacts, bool)), (b, radius * n, -1.0, ~one_body)):
            block = sign * np.hstack([vec, np.cross(offset, vec)])[keep]
            rows.append((6 * body[keep])[:, None] + np.arange(6))
            cols.append(np.repeat(col[keep][:, None], 6, axis=1))
            vals.append(block)
    J = sp.csc_matrix((np.concatenate([v.ravel() for v in vals]),
                       (np.concatenate([r.ravel() for r in rows]), np.concatenate([c.ravel() for c in cols]))),
                      shape=(6 * n_bodies, 3 * n_contacts))
    tangent = np.sort(np.r_[1:3 * n_contacts:3, 2:3 * n_contacts:3])
    p_ext = np.zeros(6 * n_bodies)
    p_ext[2::6] = -9.81 * h * mass
    return dict(M=sp.diags(diag).tocsr(), Wn=J[:, 0::3], Wt=J[:, tangent], mu=rng.uniform(0.2, 0.6, n_contacts),
                v=0.2 * rng.standard_normal(6 * n_bodies), h=h, p_ext=p_ext,
                psi_n=rng.uniform(-1e-4, 1e-4, n_contacts))


def ccp_data(d):
    """P (CSC, columns n_i u_i w_i per contact), M^-1 and p of a pile, built here (not by mbdcp.ccp)."""
    Minv = mass_inverse(d["M"])
    n_c = d["Wn"].shape[1]
    perm = np.empty(3 * n_c, dtype=int)
    perm[0::3], perm[1::3], perm[2::3] = np.arange(n_c), n_c + 2 * np.arange(n_c), n_c + 2 * np.arange(n_c) + 1
    P = sp.hstack([d["Wn"], d["Wt"]], format="csc")[:, perm]
    p = P.T @ (d["v"] + Minv @ d["p_ext"])
    p[0::3] += d["psi_n"] / d["h"]
    return P, Minv, p


def checked_verdict(d, res, tol, P=None, Minv=None, p=None):
    """("solution", worst residual) or ("no solution", worst residual) when the result passes the
    check, else ("REJECTED", what failed): by definition, in extended precision (np.longdouble),
    with none of mbdcp's code. A solution: gamma in K, d = N gamma + p in K*, gamma . d = 0, each to
    tol relative to the data (||p||_inf, and |N| |gamma| for complementarity). A certificate c: c in
    K to 1e-12, p.c < 0, and every row of P c zero to 1e-12 of its magnitude sum_j |P_rj c_j| (then
    N c = P^T M^-1 P c = 0 to rounding)."""
    if P is None:
        P, Minv, p = ccp_data(d)
    mu = np.asarray(d["mu"], dtype=np.longdouble)
    Pl = sp.csc_matrix(P, dtype=np.longdouble)
    if res.certificate is not None:
        c = res.certificate.astype(np.longdouble)
        C = c.reshape(-1, 3)
        cone = np.max(np.sqrt(C[:, 1] ** 2 + C[:, 2] ** 2) - mu * C[:, 0]) / np.abs(C).max()
        Pc, Pabs = Pl @ c, abs(Pl) @ abs(c)
        rows = np.max(np.abs(Pc) / np.where(Pabs > 0, Pabs, 1))
        pc = np.dot(p.astype(np.longdouble), c)
        if cone <= 1e-12 and rows <= 1e-12 and pc < 0 and C[:, 0].min() >= 0:
            return "no solution", float(max(cone, rows))
        return "REJECTED", f"cone {float(cone):.1e}, rows {float(rows):.1e}, p.c {float(pc):.1e}"
    if not res.success:
        return "REJECTED", res.status.name
    g = res.gamma.astype(np.longdouble).ravel()
    Minv_l = sp.csr_matrix(Minv, dtype=np.longdouble)
    Ng = Pl.T @ (Minv_l @ (Pl @ g))
    Nabs = abs(Pl).T @ (abs(Minv_l) @ (abs(Pl) @ abs(g)))
    G, D = g.reshape(-1, 3), (Ng + p).reshape(-1, 3)
    scale = max(np.abs(p).max(), 1e-300)
    cone = np.max(np.sqrt(G[:, 1] ** 2 + G[:, 2] ** 2) - mu * G[:, 0]) / max(np.abs(G).max(), 1e-300)
    dual = np.max(mu * np.sqrt(D[:, 1] ** 2 + D[:, 2] ** 2) - D[:, 0]) / scale
    comp = np.max(np.abs(np.sum(G * D, axis=1)) / (np.abs(G).sum(axis=1) * (scale + Nabs.reshape(-1, 3).max(axis=1)) + 1e-300))
    worst = float(max(cone, dual, comp))
    return ("solution", worst) if worst <= 10 * tol else ("REJECTED", f"residual {worst:.1e}")


def clarabel_verdict(N, p, mu):
    """(seconds, verdict, iterations) of Clarabel on the same conic QP: "solution", "no solution"
    (DualInfeasible, AlmostDualInfeasible) or its status."""
    t, _, status, iterations = clarabel_solve(N, p, mu)
    verdicts = {"Solved": "solution", "AlmostSolved": "solution", "DualInfeasible": "no solution",
                "AlmostDualInfeasible": "no solution"}
    return t, verdicts.get(status, status), iterations


def decide(large, seeds, first=0, tol=1e-6, method=None):
    """Section 6 (--decide): random-pair piles, mbdcp.ccp (its default method, or ``method``) and
    Clarabel back to back; time per iteration of each beside the totals."""
    sizes = ((1600, 4000), (8000, 20000)) if large else ((1600, 4000),)
    rows, ratios, failures = [], [], 0
    for nb, nc in sizes:
        for seed in range(first, first + seeds):
            d = random_pair_pile(nb, nc, seed)
            P, Minv, p = ccp_data(d)
            t0 = time.perf_counter()
            res = mbdcp.ccp(**d, tol=tol, **({"method": method} if method else {}))
            t_m = time.perf_counter() - t0
            verdict, check = checked_verdict(d, res, tol, P, Minv, p)
            try:
                t_c, v_c, it_c = clarabel_verdict((P.T @ Minv @ P).tocsc(), p, d["mu"])
            except ImportError:
                t_c, v_c, it_c = float("nan"), "-", 0
            agree = "-" if v_c not in ("solution", "no solution") else ("yes" if v_c == verdict else "NO")
            failures += verdict == "REJECTED" or agree == "NO"
            if np.isfinite(t_c):
                ratios.append(t_m / t_c)
            check_text = f"{check:.1e}" if isinstance(check, float) else check
            per_it = f"{t_m / max(res.iterations, 1) * 1e3:.1f}"
            per_it_c = f"{t_c / it_c * 1e3:.1f}" if it_c else "-"
            rows.append([nc, seed, res.status.name, res.iterations, verdict, check_text, f"{t_m:.3f}", per_it, v_c,
                         it_c, f"{t_c:.3f}", per_it_c, f"{t_m / t_c:.4f}", agree])
    print(f"\nEvery CCP decided: random-pair piles, mbdcp.ccp ({method or 'default'} method, tol {tol}) beside "
          "Clarabel [s]; ms/it: time per iteration (an interior-point iteration factors once, an APGD one does not)")
    print_table(["contacts", "seed", "status", "iterations", "checked verdict", "check", "mbdcp s", "ms/it", "Clarabel",
                 "its", "Clarabel s", "ms/it", "mbdcp/Clarabel", "agree"], rows)
    if ratios:
        print(f"time ratio mbdcp/Clarabel: geometric mean {np.exp(np.mean(np.log(ratios))):.4f}, worst {max(ratios):.4f}")
    print(f"rejected or disagreeing: {failures}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--settling", action="store_true", help="only section 4 (settling piles against MuJoCo)")
    ap.add_argument("--decided", action="store_true", help="only section 5 (1k/4k/20k contacts, decided or not)")
    ap.add_argument("--decide", action="store_true", help="only section 6 (random-pair piles beside Clarabel)")
    ap.add_argument("--large", action="store_true", help="section 6 also at 20,000 contacts")
    ap.add_argument("--seeds", type=int, default=5, help="section 6: seeds per size")
    ap.add_argument("--first", type=int, default=0, help="section 6: the first seed")
    ap.add_argument("--method", default=None, help="section 6: mbdcp.ccp's method (default: its default)")
    args = ap.parse_args()
    if args.decide:
        decide(args.large, args.seeds, args.first, method=args.method)
        return
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
            t_c, x_c, st, _ = clarabel_solve(N, p, d["mu"])
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
