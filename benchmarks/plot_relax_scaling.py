"""Time per step against contacts: Lemke's method on the full Stewart–Trinkle LCP (mbdcp.step) and
Anitescu & Hart's (2004) algorithms 1, 2, 3 (mbdcp.fixed_point), on 2-D disk piles in motion
(disk_pile_scene, v drawn with sigma = 1.5, mu = 0.3), each solve cold. The algorithms are timed
twice: on the same dense arrays as Lemke's, and on the scene's sparse matrices (what simulate passes
them). Writes the figure of the docs' fixed-point page and prints the table and where the curves
cross.

    python benchmarks/plot_relax_scaling.py [--quick] [--out docs/formulations/fixed_point_scaling.png]
"""
import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from common import print_table  # noqa: E402

import mbdcp  # noqa: E402
from mbdcp.mechanics import disk_pile_scene  # noqa: E402

SIGMA, MU, H = 1.5, 0.3, 0.01


def pile(n):
    """The dense and the sparse arguments of one step of an n-disk pile in motion."""
    scene = disk_pile_scene(n, mu=MU, seed=n)
    v = SIGMA * np.random.default_rng(n + 1).standard_normal(scene.assemble(H)["v"].shape)
    out = []
    for sparse in (False, True):
        a = scene.assemble(H, sparse=sparse)
        out.append(((a["M"], a["Wn"], a["D"], a["E"], a["U"], v, H), {"p_ext": a["p_ext"], "psi_n": a["psi_n"]}))
    return out


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(sizes, quick):
    rows = []
    for n in sizes:
        (args, kw), (sargs, skw) = pile(n)
        repeat = 1 if n >= 300 or quick else 3
        row = {"disks": n, "contacts": args[1].shape[1]}
        row["lemke"] = best(lambda: mbdcp.step(*args, **kw), repeat)
        for alg in (1, 2, 3):
            opts = {"algorithm": alg, "tol": 1e-8, "max_iter": 100}
            row[f"alg{alg}"] = best(lambda: mbdcp.fixed_point(*args, **kw, **opts), repeat)
            row[f"alg{alg} sparse"] = best(lambda: mbdcp.fixed_point(*sargs, **skw, **opts), repeat)
        rows.append(row)
        print(f"{n} disks, {row['contacts']} contacts: Lemke {row['lemke'] * 1e3:.1f} ms", flush=True)
    return rows


def crossing(rows, key):
    """(contacts, contacts) between which the algorithm becomes faster than Lemke for good (it is
    faster on every larger pile measured); None if it is not faster on the largest, () if it is on
    all of them."""
    faster = [r[key] < r["lemke"] for r in rows]
    if not faster[-1]:
        return None
    k = len(faster) - 1
    while k > 0 and faster[k - 1]:
        k -= 1
    return () if k == 0 else (rows[k - 1]["contacts"], rows[k]["contacts"])


def plot(rows, out):
    c = [r["contacts"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.loglog(c, [r["lemke"] for r in rows], "k-o", label="Lemke (full LCP)")
    for alg, color in zip((1, 2, 3), ("tab:blue", "tab:orange", "tab:green")):
        ax.loglog(c, [r[f"alg{alg}"] for r in rows], "-s", color=color, label=f"algorithm {alg}")
        ax.loglog(c, [r[f"alg{alg} sparse"] for r in rows], ":^", color=color, label=f"algorithm {alg}, sparse inputs")
    ax.set_xlabel("contacts")
    ax.set_ylabel("seconds per step (cold)")
    ax.set_title(f"Disk piles in motion (σ = {SIGMA}, μ = {MU})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="docs/formulations/fixed_point_scaling.png")
    args = ap.parse_args()
    sizes = [4, 12, 30, 75, 150] if args.quick else [4, 12, 30, 75, 150, 300, 600]
    rows = measure(sizes, args.quick)
    keys = ["alg1", "alg2", "alg3", "alg1 sparse", "alg2 sparse", "alg3 sparse"]
    print("\nSeconds per step (cold); ratio = time / Lemke's")
    print_table(["disks", "contacts", "lemke"] + keys + [k + " ratio" for k in keys],
                [[r["disks"], r["contacts"], f"{r['lemke']:.4f}"] + [f"{r[k]:.4f}" for k in keys]
                 + [f"{r[k] / r['lemke']:.2f}" for k in keys] for r in rows])
    for k in keys:
        c = crossing(rows, k)
        print(f"{k}: " + ("not faster than Lemke on the largest pile" if c is None else "faster than Lemke on every pile"
                          if c == () else f"faster than Lemke from between {c[0]} and {c[1]} contacts on"))
    plot(rows, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
