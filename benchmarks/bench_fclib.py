"""The Coulomb friction problem: every mbdcp method against Siconos on every local problem at hand.

Problems (fc_collection.py): the FCLib files and Siconos' FrictionContact files of the shared data
(global ones reduced to W = H^T M^-1 H), and the collections built there (granular piles, piles at rest
with a rank-deficient W, piles pushed into, a near-singular W, a settled 150-sphere pile; mu up to 1).
Solvers: mbdcp.coulomb with method auto (the default), nsgs, newton, fixed_point (inner apgd) and
fixed_point/pgs; Siconos' fc3d_nsgs and fc3d_nsn_ac (3-D) or fc2d_nsgs and fc2d_lemke (2-D), run by
Debian's python3-siconos in a subprocess (one per problem and solver, capped at 4 GB and 10 minutes),
timed there around the driver call alone; mbdcp is timed around the mbdcp.coulomb call (input checks
included). Times: the best of repeated runs (repeated until 0.2 s have passed, at most 1000 runs, one
run when it takes over a second). Every answer is judged here by the residual computed from its
definition, ||r - Pi_K(r - û)||_2 / ||q||_2 with û = W r + q + mu ||u_T|| e_n; solved means at most tol.

Printed: a row per problem and solver; the solved counts; per mbdcp method the geometric mean over the
problems both solve of (its time / the time of Siconos' fastest solver that solved the problem), and
of auto's time over the fastest mbdcp method's. Drawn: Dolan-Moré performance profiles (Dolan and Moré
2002) of time and of residual, to benchmarks/out/fclib_profiles.png.

    python benchmarks/bench_fclib.py [--tol 1e-8] [--data DIR] [--no-built] [--no-siconos]
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
from common import HERE, print_table, siconos_available

import mbdcp
from mbdcp.formulations.coulomb import _project_cone

sys.path.insert(0, HERE)
from fc_collection import built_problems, shared_problems

METHODS = {
    "auto": {"method": "auto"},
    "nsgs": {"method": "nsgs"},
    "newton": {"method": "newton"},
    "fixed_point": {"method": "fixed_point", "inner": "apgd"},
    "fixed_point/pgs": {"method": "fixed_point", "inner": "pgs", "max_iter": 50, "inner_max_iter": 2000},
}
SICONOS = {3: ("nsgs", "nsn_ac"), 2: ("2d_nsgs", "2d_lemke")}
MAX_ITER = 10_000  # Gauss-Seidel sweeps and Newton iterations, for mbdcp and Siconos alike


def residual(W, q, mu, r, d=3):
    """||r - Pi_K(r - û)||_2 / ||q||_2, û = W r + q + mu ||u_T|| e_n, written here from the definition."""
    u = np.asarray(W @ r + q).reshape(-1, d)
    R = np.asarray(r, float).reshape(-1, d)
    uh = u.copy()
    uh[:, 0] += mu * np.linalg.norm(u[:, 1:], axis=1)
    proj = _project_cone(R - uh, mu)  # the projection onto the friction cones, row by row
    nq = np.linalg.norm(q)
    return float(np.linalg.norm(R - proj) / (nq if nq > 0 else 1.0))


def timed(fn, min_total=0.2, max_runs=1000):
    best, out, total, k = np.inf, None, 0.0, 0
    while k < 3 or (total < min_total and k < max_runs):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best, total, k = min(best, dt), total + dt, k + 1
        if dt > 1.0:
            break
    return best, out


def run_mbdcp(problems, tol):
    table = {}
    for name, p in problems:
        for label, kw in METHODS.items():
            kw = {"max_iter": MAX_ITER if label in ("auto", "nsgs") else None, **kw}
            t, res = timed(lambda p=p, kw=kw: mbdcp.coulomb(p.W, p.q, p.mu, tol=tol, spacedim=p.spacedim, **kw))
            rho = residual(p.W, p.q, p.mu, res.r, p.spacedim)
            table[name, label] = {"t": t, "res": rho, "ok": rho <= tol * (1 + 1e-9), "it": res.iterations,
                                  "note": res.method if label == "auto" else res.status.name.lower()}
    return table


def run_siconos(problems, tol):
    from siconos_peer import siconos_fc

    table = {}
    for name, p in problems:
        for solver in SICONOS[p.spacedim]:
            try:
                o = siconos_fc([(p.W, p.q, p.mu)], solver, tol, MAX_ITER, repeat=20 if p.n_contacts < 50 else 3,
                               timeout=600, memory=4 << 30)[0]
                rho = residual(p.W, p.q, p.mu, o["r"], p.spacedim)
                entry = {"t": o["seconds"], "res": rho, "ok": rho <= tol * (1 + 1e-9) and o["info"] >= 0,
                         "it": o["iterations"], "note": f"info {o['info']}"}
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
                entry = {"t": np.inf, "res": np.inf, "ok": False, "it": 0, "note": type(e).__name__}
            table[name, "siconos " + solver.replace("2d_", "")] = entry
    return table


def profile(ax, values, labels, problems, title):
    """Dolan and Moré's performance profile: the share of problems on which each solver is within a
    factor tau of the best (values: (problem, label) -> positive number, inf for a failure)."""
    ratios = {}
    for name, _ in problems:
        best = min(values[name, s] for s in labels if (name, s) in values)
        for s in labels:
            if (name, s) in values:
                ratios.setdefault(s, []).append(values[name, s] / best if np.isfinite(best) else np.inf)
    taus = np.logspace(0, 4, 400)
    for s in labels:
        r = np.array(ratios[s])
        ax.step(taus, [(r <= tau).mean() for tau in taus], where="post", label=s)
    ax.set_xscale("log")
    ax.set_xlabel("tau (ratio to the best)")
    ax.set_ylabel("share of problems")
    ax.set_title(title)
    ax.grid(alpha=0.3)


def draw(table, labels, problems, path, tol):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    times = {k: (v["t"] if v["ok"] else np.inf) for k, v in table.items()}
    res = {k: max(v["res"], tol) if np.isfinite(v["res"]) else np.inf for k, v in table.items()}
    profile(axes[0], times, labels, problems, "time (failures never count)")
    profile(axes[1], res, labels, problems, "residual reached (below tol counts as tol)")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


def geomean(xs):
    return float(np.exp(np.mean(np.log(xs)))) if xs else float("nan")


def ratios_to_siconos(table, problems, method, peers):
    """[time of method / time of Siconos' fastest successful solver] over the problems both solve."""
    out = []
    for n, p in problems:
        sic = [table[n, x]["t"] for x in peers if (n, x) in table and table[n, x]["ok"]]
        if sic and table[n, method]["ok"]:
            out.append(table[n, method]["t"] / min(sic))
    return out


def summarize(table, problems, labels, peers, n_files):
    print("\nsolved (residual <= tol) out of", len(problems))
    print("  " + ", ".join(f"{s}: {sum(table[n, s]['ok'] for n, p in problems if (n, s) in table)}" for s in labels))
    unsolved = [n for n, p in problems if any(table[n, s]["ok"] for s in peers if (n, s) in table)
                and not table[n, "auto"]["ok"]]
    print("  solved by a Siconos solver but not by auto:", unsolved or "none")
    rows = []
    for s in METHODS:
        parts = [ratios_to_siconos(table, sub, s, peers) for sub in (problems, problems[:n_files], problems[n_files:])]
        r = parts[0]
        rows.append([s, len(r), f"{geomean(r):.2f}", f"{min(r):.3f}" if r else "-", f"{max(r):.2f}" if r else "-",
                     f"{geomean(parts[1]):.2f} ({len(parts[1])})", f"{geomean(parts[2]):.2f} ({len(parts[2])})"])
    if peers:
        print("\nmbdcp time / Siconos' fastest successful solver, per problem, over the problems both solve")
        print_table(["method", "problems", "geometric mean", "min", "max", "files", "built"], rows)
    worst = []
    for n, p in problems:
        best = min(table[n, s]["t"] for s in METHODS if table[n, s]["ok"]) if any(
            table[n, s]["ok"] for s in METHODS) else None
        if best is not None:
            worst.append((table[n, "auto"]["t"] / best if table[n, "auto"]["ok"] else np.inf, n))
    worst.sort(reverse=True)
    finite = [w for w, _ in worst if np.isfinite(w)]
    print(f"\nauto / fastest mbdcp method, over the {len(worst)} problems some method solves: geometric mean "
          f"{geomean(finite):.2f}, above 1.5 on {sum(w > 1.5 for w, _ in worst)}: "
          + ", ".join(f"{n} {w:.2f}" for w, n in worst if w > 1.5))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--data", default=None, help="directory with fclib/ and siconos/FrictionContact/")
    ap.add_argument("--no-built", action="store_true", help="only the files, not the built collections")
    ap.add_argument("--no-siconos", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "fclib_profiles.png"))
    args = ap.parse_args()
    files = shared_problems(args.data)
    n_files = len(files)
    problems = files + ([] if args.no_built else built_problems())
    table = run_mbdcp(problems, args.tol)
    peers = []
    if not args.no_siconos and siconos_available():
        table.update(run_siconos(problems, args.tol))
        peers = sorted({k[1] for k in table if k[1].startswith("siconos")})
    elif not args.no_siconos:
        print("Siconos not available (/usr/bin/python3 -c 'import siconos.numerics' failed): peers skipped")
    labels = list(METHODS) + peers
    rows = []
    for n, p in problems:
        for s in labels:
            if (n, s) not in table:
                continue
            e = table[n, s]
            rows.append([n, p.spacedim, p.n_contacts, s, f"{e['t'] * 1e3:.4g}", f"{e['res']:.1e}",
                         "yes" if e["ok"] else "NO", e["it"], e["note"]])
    print(f"\nCoulomb local problems, tol = {args.tol:g} on ||r - Pi_K(r - û)|| / ||q|| (computed here); time in ms")
    print_table(["problem", "d", "n_c", "solver", "ms", "residual", "solved", "iterations", "note"], rows)
    summarize(table, problems, labels, peers, n_files)
    print("\nperformance profiles:", draw(table, labels, problems, args.out, args.tol))


if __name__ == "__main__":
    main()
