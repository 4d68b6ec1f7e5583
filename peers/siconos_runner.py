"""Run Siconos numerics on saved problems; executed by Debian's /usr/bin/python3.

Usage: /usr/bin/python3 siconos_runner.py IN.npz OUT.npz SOLVER [REPEAT]
IN holds arrays M0, q0, M1, q1, ...; OUT gets z0, w0, info0, t0, ... (t: best of REPEAT runs,
seconds). SOLVER: lexicolemke (Siconos' SICONOS_LCP_LEMKE, lexicographic Lemke).
"""
import sys
import time

import numpy as np
import siconos.numerics as sn


def main():
    src, dst, solver = sys.argv[1:4]
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    ids = {"lexicolemke": sn.SICONOS_LCP_LEMKE}
    data = np.load(src)
    out = {}
    k = 0
    while f"M{k}" in data:
        M = np.ascontiguousarray(data[f"M{k}"])
        q = np.ascontiguousarray(data[f"q{k}"])
        best = np.inf
        for _ in range(repeat):
            lcp = sn.LCP(M, q)
            z, w = np.zeros(len(q)), np.zeros(len(q))
            so = sn.SolverOptions(ids[solver])
            t0 = time.perf_counter()
            info = sn.linearComplementarity_driver(lcp, z, w, so)
            best = min(best, time.perf_counter() - t0)
        out.update({f"z{k}": z, f"w{k}": w, f"info{k}": info, f"t{k}": best})
        k += 1
    np.savez(dst, **out)


if __name__ == "__main__":
    main()
