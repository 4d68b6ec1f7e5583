"""Solve saved LCPs with Siconos numerics, one line of output per problem; run by Debian's
/usr/bin/python3 (benchmarks/bench_reliability.py calls it in a subprocess).

Usage: /usr/bin/python3 siconos_lcp_runner.py IN.npz SOLVER START
IN holds M0, q0, M1, q1, ...; problems START, START+1, ... are solved in order and each result is
printed and flushed at once as "RESULT k info z_1 ... z_n" (Siconos prints messages of its own), so that a crash
loses only the problem it happened on. SOLVER: lexicolemke (SICONOS_LCP_LEMKE) or pivot (SICONOS_LCP_PIVOT).
"""
import sys

import numpy as np
import siconos.numerics as sn


def main():
    src, solver, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ident = {"lexicolemke": sn.SICONOS_LCP_LEMKE, "pivot": sn.SICONOS_LCP_PIVOT}[solver]
    data = np.load(src)
    k = start
    while f"M{k}" in data:
        M, q = np.ascontiguousarray(data[f"M{k}"]), np.ascontiguousarray(data[f"q{k}"])
        z, w = np.zeros(len(q)), np.zeros(len(q))
        info = sn.linearComplementarity_driver(sn.LCP(M, q), z, w, sn.SolverOptions(ident))
        print("RESULT", k, info, " ".join(repr(float(x)) for x in z), flush=True)
        k += 1


if __name__ == "__main__":
    main()
