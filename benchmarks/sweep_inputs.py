"""Bad and extreme input to every public function of mbdcp, each call in its own child process.

For every argument of every public callable (tests/surface_targets.py: solvers, batch,
derivatives, the JAX and PyTorch layers, io, study, mechanics, widgets, examples, testing
helpers) the call is made with each bad or extreme value of the argument's kind
(tests/surface.py: None, strings, dicts, sets, lists of strings, booleans, complex numbers,
Decimals, Fractions, np.matrix, wrong dimensions and shapes, NaN, infinity, 1e300, 1e-300,
denormals, negative values, huge sizes and integers, arrays for string options, valid but
extreme data...), in a forked child with a memory cap and a timeout, and classified:

    ok        a verified result (solutions checked by definition, helpers' outputs finite), or a
              valid value accepted
    clear     ValueError / TypeError naming the argument, without NumPy's or the core's words
    unclear   any other exception, a message not naming the argument or leaking internals, and
              (``refused``) a valid value refused
    garbage   a result that fails its check, or an invalid value accepted silently
    crash     the child died;  hang: it outlived the timeout

Run:  python benchmarks/sweep_inputs.py [--jobs 2] [--only step] [--details] [--json out.json]
"""
import argparse
import collections
import json
import os
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MBDCP_WIDGETS", "static")
HERE = os.path.dirname(os.path.abspath(__file__))
# the checkout this script belongs to, before any installed copy; MBDCP_SWEEP_ROOT sweeps another
sys.path[:0] = [os.environ.get("MBDCP_SWEEP_ROOT", os.path.join(HERE, "..")), os.path.join(HERE, "..", "tests")]

import matplotlib  # noqa: E402 (after the checkout's sys.path)

matplotlib.use("Agg")

import surface  # noqa: E402 (a figure backend chosen first)
import surface_targets  # noqa: E402

GROUPS = ("ok", "clear", "unclear", "refused", "garbage", "crash", "hang")
MEMORY = 6 << 30  # bytes of address space per child: a huge allocation fails instead of swapping


def _area(name):
    for prefix, area in (("mbdcp.derivatives", "derivatives"), ("LCPDerivative", "derivatives"),
                         ("StepDerivative", "derivatives"), ("mbdcp.batch", "batch"), ("Batch", "batch"),
                         ("mbdcp.io", "io"), ("mbdcp.study", "study"), ("Profile", "study"),
                         ("mechanics", "mechanics"), ("Scene", "mechanics"), ("Trajectory", "mechanics"),
                         ("widgets", "widgets"), ("examples", "examples"), ("testing", "testing"),
                         ("mbdcp.jax", "layers"), ("mbdcp.torch", "layers")):
        if name.startswith(prefix):
            return area
    return "solvers"


def report(results, details=False):
    total = collections.Counter(g for _, g, _, _ in results)
    per = collections.defaultdict(collections.Counter)
    areas = collections.defaultdict(collections.Counter)
    for (t, *_), g, _, _ in results:
        per[t.name][g] += 1
        areas[_area(t.name)][g] += 1
    n = len(results)
    unclear = total["unclear"] + total["refused"]
    print(f"\n{n} calls: " + ", ".join(f"{g} {total[g]}" for g in GROUPS)
          + f"\nunclear errors (refused valid input included): {unclear} = {100 * unclear / max(n, 1):.2f} %")
    line = "{:<44}" + "{:>8}" * len(GROUPS)
    print("\nper area\n" + line.format("", *GROUPS))
    for a in sorted(areas):
        print(line.format(a, *(areas[a][g] for g in GROUPS)))
    print("\nper function (those with anything but ok and clear)\n" + line.format("", *GROUPS))
    for name, c in per.items():
        if any(c[g] for g in GROUPS[2:]):
            print(line.format(name, *(c[g] for g in GROUPS)))
    if details:
        print("\ncases")
        for (t, arg, label, _, expect), g, detail, sec in results:
            if g not in ("ok", "clear"):
                print(f"[{g}] {t.name}({arg.name if arg else ''} = {label}; expect {expect}): {detail}")
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="children at a time (default 2)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a call counts as a hang")
    ap.add_argument("--only", default=None, help="only the functions whose name contains this")
    ap.add_argument("--details", action="store_true", help="print every case that is not ok or clear")
    ap.add_argument("--json", default=None, help="write every case's outcome to this file")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mbdcp-sweep-")
    os.chdir(tmp)  # a call given a relative path (write_fclib("abc", ...)) writes there
    targets = surface_targets.targets(tmp)
    if args.only:
        targets = [t for t in targets if args.only in t.name]
    cases = list(surface.cases(targets))
    import mbdcp

    print(f"mbdcp from {os.path.dirname(mbdcp.__file__)}")
    print(f"sweeping {len(cases)} calls of {len(targets)} public callables, {args.jobs} at a time "
          f"(timeout {args.timeout:g} s, {MEMORY >> 30} GiB of address space each)", flush=True)
    t0 = time.perf_counter()
    results = surface.run_forked(cases, args.jobs, args.timeout, MEMORY)
    report(results, args.details)
    print(f"\n{time.perf_counter() - t0:.0f} s (a shared machine: timings vary)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([{"function": t.name, "argument": arg.name if arg else None, "value": label, "expect": expect,
                        "group": g, "detail": d} for (t, arg, label, _, expect), g, d, _ in results], fh, indent=0)


if __name__ == "__main__":
    main()
