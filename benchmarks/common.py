"""Shared helpers of the benchmarks: timing, peers, table printing.

Every table a benchmark prints is also kept, and written as JSON when the script ends if the
environment names a file (``MBDCP_BENCH_JSON=out.json python benchmarks/bench_lemke.py``): the script,
its arguments, the time, and each table's headers and rows. Figures are read from there, not copied
into docstrings."""
import atexit
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peers"))  # the peers' runners, shared with the tests

from siconos_peer import siconos_available, siconos_lcp  # noqa: E402,F401


def best_time(fn, repeat=3, min_total=0.2):
    """Best wall time of fn() over `repeat` runs (more runs for fast calls); returns (seconds, result)."""
    best, out, total, k = np.inf, None, 0.0, 0
    while k < repeat or (total < min_total and k < 1000):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best, total, k = min(best, dt), total + dt, k + 1
    return best, out


def verifies(M, q, z, tol=1e-6):
    """z solves LCP(M, q) by definition, to tol relative to the data."""
    if z is None or not np.all(np.isfinite(z)):
        return False
    w = M @ z + q
    scale = max(np.abs(q).max(), np.abs(M).sum(axis=1).max() * np.abs(z).max(), 1e-300)
    return bool(z.min() >= -tol * scale and w.min() >= -tol * scale
                and np.abs(np.minimum(z, w)).max() <= tol * scale)


_TABLES = []  # every table printed by this run, for MBDCP_BENCH_JSON


def _cell(c):
    """A table cell as JSON: numbers as numbers, anything else as its text."""
    if isinstance(c, (bool, np.bool_)):
        return bool(c)
    if isinstance(c, (int, float, np.integer, np.floating)):
        return c.item() if isinstance(c, np.generic) else c
    return str(c)


def _write_json():
    path = os.environ.get("MBDCP_BENCH_JSON")
    if path and _TABLES:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"script": os.path.basename(sys.argv[0]), "argv": sys.argv[1:],
                       "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "tables": _TABLES}, fh, indent=1)


atexit.register(_write_json)


def print_table(headers, rows):
    _TABLES.append({"headers": [str(h) for h in headers], "rows": [[_cell(c) for c in r] for r in rows]})
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(f"{h:>{w}}" for h, w in zip(headers, widths))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(f"{str(c):>{w}}" for c, w in zip(r, widths)))


def lemkelcp_solver():
    """lemkelcp (PyPI 0.1) as (M, q, max_iter) -> (z, exit_code), or None when missing.

    Its tableau stores index maps as Python 2 ``range`` objects and then assigns into them,
    which fails on Python 3; they are turned into lists before running, nothing else changes."""
    try:
        from lemkelcp.lemkelcp import lemketableau
    except ImportError:
        return None

    def solve(M, q, max_iter):
        tab = lemketableau(np.asarray(M, float), np.asarray(q, float), max_iter)
        tab.wPos, tab.zPos = list(tab.wPos), list(tab.zPos)
        z, code, _ = tab.lemkeAlgorithm()
        return z, code

    return solve
