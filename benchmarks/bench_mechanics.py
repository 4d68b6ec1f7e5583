"""Steps per second of whole simulations (mbdcp.mechanics.simulate).

The 136-disk pile of seed 001 with Lemke on the full LCP, algorithm 3 and the CCP, and a
1000-sphere 3-D pile with the CCP; each from the same initial lattice, for a fixed number of
steps (assembly included).

    python benchmarks/bench_mechanics.py [--quick]
"""
import argparse

from common import print_table

from mbdcp.mechanics import disk_pile_scene, simulate, sphere_pile_scene


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    steps = 10 if args.quick else 40
    rows = []
    for method, kw in (("lcp", {}), ("fixed_point", {"algorithm": 3}), ("ccp", {"ccp_tol": 1e-6})):
        tr = simulate(disk_pile_scene(136), 0.01, steps * 0.01, method=method, progress=False, **kw)
        rows.append([f"136 disks, {method}" + (" (algorithm 3)" if kw.get("algorithm") else ""), tr.steps,
                     int(tr.contacts.mean()), f"{tr.steps / tr.seconds:.2f}", f"{tr.max_penetration.max():.1e}"])
    n = 300 if args.quick else 1000
    tr = simulate(sphere_pile_scene(n, width=10), 0.01, steps * 0.01 / 2, method="ccp", ccp_tol=1e-6, progress=False)
    rows.append([f"{n} spheres, ccp", tr.steps, int(tr.contacts.mean()), f"{tr.steps / tr.seconds:.2f}",
                 f"{tr.max_penetration.max():.1e}"])
    print_table(["scene", "steps", "mean contacts", "steps/s", "max penetration"], rows)


if __name__ == "__main__":
    main()
