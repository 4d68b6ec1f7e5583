"""Steps per second of whole simulations (mbdcp.mechanics.simulate), and where a step's time goes.

1. Piles stepped from the same initial lattice: the 136-disk pile (the size of Anitescu & Hart's) with Lemke on
   the full LCP, algorithm 3 and the CCP; the 500-sphere pile (the pile3d demo) and a
   10,000-sphere pile with the CCP (its first 10 steps, and 20 steps while it settles). For
   each: steps/s, the share of the step spent in the solver call (``Trajectory.solver_seconds``)
   and, for the CCP, in its C iteration (``mbdcp._core.ccp``, timed by a wrapper installed
   here); the rest is the rigid-body layer (contacts, assembly, update, energies) and the
   solver's Python set-up.
2. Contact search and assembly per contact on compressed sphere lattices (every neighbour
   within the activation distance) of about 1e3, 1e4 and 1e5 contacts: constant time per
   contact means linear growth.

    python benchmarks/bench_mechanics.py [--quick]
"""
import argparse
import time

from common import best_time, print_table

import mbdcp
from mbdcp.infrastructure import _core
from mbdcp.mechanics import disk_pile_scene, simulate, sphere_pile_scene

_C_SECONDS = [0.0]


def _timed_core_ccp():
    """Wrap mbdcp._core.ccp to add its wall time to _C_SECONDS."""
    inner = _core.ccp

    def ccp(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            _C_SECONDS[0] += time.perf_counter() - t0

    _core.ccp = ccp


def run(label, scene, steps, h=0.01, **kw):
    _C_SECONDS[0] = 0.0
    tr = simulate(scene, h, steps * h, progress=False, **kw)
    c_share = f"{_C_SECONDS[0] / tr.seconds:.0%}" if kw.get("method") == "ccp" else "-"
    return [label, tr.steps, int(tr.contacts.mean()), f"{tr.steps / tr.seconds:.2f}", f"{tr.solver_seconds / tr.seconds:.0%}",
            c_share, f"{1 - tr.solver_seconds / tr.seconds:.0%}", f"{tr.max_penetration.max():.1e}",
            "yes" if tr.success else f"no ({tr.first_failure.reason})"]


def per_contact(n_spheres, width):
    """Seconds per contact of Scene.contacts() and of the CCP's assembly on a compressed lattice."""
    scene = sphere_pile_scene(n_spheres, width=width, delta=0.12)
    t_search, contacts = best_time(scene.contacts, repeat=3)
    t_assemble, _ = best_time(lambda: scene.assemble(0.01, contacts=contacts, form="blocks", parts=("Wn", "Wt")), repeat=3)
    n = len(contacts)
    return [n_spheres, n, f"{1e6 * t_search:.0f}", f"{1e6 * t_assemble:.0f}", f"{1e6 * t_search / n:.2f}",
            f"{1e6 * t_assemble / n:.2f}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if hasattr(_core, "ccp"):
        _timed_core_ccp()
    steps = 10 if args.quick else 40
    rows = []
    for method, kw in (("lcp", {}), ("fixed_point", {"algorithm": 3}), ("ccp", {"tol": 1e-6})):
        rows.append(run(f"136 disks, {method}" + (" (algorithm 3)" if kw.get("algorithm") else ""), disk_pile_scene(136), steps,
                        method=method, **kw))
    rows.append(run("500 spheres, ccp (pile3d)", sphere_pile_scene(500), steps, method="ccp", tol=1e-6))
    big = 2000 if args.quick else 10_000
    rows.append(run(f"{big} spheres, ccp", sphere_pile_scene(big, width=25), 3 if args.quick else 10, method="ccp",
                    tol=1e-6))
    # the same pile while it settles (steps 46-65): contacts persist and APGD needs its most iterations
    settled, first = sphere_pile_scene(big, width=25), 10 if args.quick else 45
    simulate(settled, 0.01, first * 0.01, progress=False, method="ccp", tol=1e-6)
    rows.append(run(f"{big} spheres, ccp, settling (steps {first + 1}-{first + (5 if args.quick else 20)})", settled,
                    5 if args.quick else 20, method="ccp", tol=1e-6))
    print_table(["scene", "steps", "mean contacts", "steps/s", "solver call", "C iteration", "rest", "max penetration",
                 "success"], rows)
    print()
    sizes = [(400, 8), (3500, 20)] + ([] if args.quick else [(35_000, 40)])
    print_table(["spheres", "contacts", "search (us)", "assembly (us)", "search/contact (us)", "assembly/contact (us)"],
                [per_contact(n, w) for n, w in sizes])
    print(f"\nmbdcp {mbdcp.__version__}; time per contact constant across sizes means linear growth")


if __name__ == "__main__":
    main()
