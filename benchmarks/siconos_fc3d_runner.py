"""Siconos fc3d_nsgs on a saved local problem; runs under /usr/bin/python3 (needs python3-scipy).

Usage: /usr/bin/python3 siconos_fc3d_runner.py IN.npz OUT.npz TOL
IN: W (CSC arrays W_indptr, W_indices, W_data, n), q, mu. OUT: r, u, info, seconds, residual.
Note: fc3d solves the Coulomb friction problem (u + (mu ||u_T||, 0, 0) in K*), not the CCP.
"""
import sys
import time

import numpy as np
import scipy.sparse as sp
import siconos.numerics as sn


def main():
    src, dst, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    d = np.load(src)
    n = int(d["n"])
    W = sp.csc_matrix((d["W_data"], d["W_indices"].astype(np.int64), d["W_indptr"].astype(np.int64)), shape=(n, n))
    q, mu = d["q"], d["mu"]
    prob = sn.FrictionContactProblem(3, n // 3, W, q, mu)
    so = sn.SolverOptions(sn.SICONOS_FRICTION_3D_NSGS)
    so.dparam[sn.SICONOS_DPARAM_TOL] = tol
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = 100000
    r, u = np.zeros(n), np.zeros(n)
    t0 = time.perf_counter()
    info = sn.fc3d_nsgs(prob, r, u, so)
    seconds = time.perf_counter() - t0
    np.savez(dst, r=r, u=u, info=info, seconds=seconds, residual=so.dparam[sn.SICONOS_DPARAM_RESIDU],
             iterations=so.iparam[sn.SICONOS_IPARAM_ITER_DONE])


if __name__ == "__main__":
    main()
