"""Siconos numerics on saved local friction-contact problems; executed by Debian's /usr/bin/python3.

Usage: /usr/bin/python3 siconos_fc_runner.py IN.npz OUT.npz SOLVER TOL MAX_ITER [REPEAT]
IN holds, per problem k, W{k}_indptr, W{k}_indices, W{k}_data (W in CSC), q{k}, mu{k}.
OUT gets r{k}, u{k}, info{k} (Siconos' return flag: 0 = its own test passed), t{k} (best of
REPEAT runs, seconds, timed here around the solver call only), iter{k}, err{k} (Siconos' own error
measure, for information: callers compute the residual themselves).
SOLVER: nsgs (SICONOS_FRICTION_3D_NSGS) or nsn_ac (SICONOS_FRICTION_3D_NSN_AC) for 3-D problems,
2d_nsgs (SICONOS_FRICTION_2D_NSGS) or 2d_lemke (SICONOS_FRICTION_2D_LEMKE) for 2-D ones (given with
dense W; a problem k is 2-D when its file holds d{k} = 2). All solve the Coulomb problem with de Saxcé's
shift, u + (mu ||u_T||, 0, 0) in K* ⊥ r in K. A solver that raises gives info -1 and zeros.
"""
import sys
import time

import numpy as np
import scipy.sparse as sp
import siconos.numerics as sn


def main():
    src, dst, solver = sys.argv[1:4]
    tol, max_iter = float(sys.argv[4]), int(sys.argv[5])
    repeat = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    ids = {"nsgs": sn.SICONOS_FRICTION_3D_NSGS, "nsn_ac": sn.SICONOS_FRICTION_3D_NSN_AC,
           "2d_nsgs": sn.SICONOS_FRICTION_2D_NSGS, "2d_lemke": sn.SICONOS_FRICTION_2D_LEMKE}
    two_d = solver.startswith("2d_")
    data = np.load(src)
    out = {}
    k = 0
    while f"q{k}" in data:
        q, mu = np.ascontiguousarray(data[f"q{k}"]), np.ascontiguousarray(data[f"mu{k}"])
        n = len(q)
        W = sp.csc_matrix((data[f"W{k}_data"], data[f"W{k}_indices"].astype(np.int64),
                           data[f"W{k}_indptr"].astype(np.int64)), shape=(n, n))
        d = 2 if two_d else 3
        best, info = np.inf, -1
        for _ in range(repeat):
            prob = sn.FrictionContactProblem(d, n // d, W.toarray() if two_d else W, q, mu)
            so = sn.SolverOptions(ids[solver])
            so.dparam[sn.SICONOS_DPARAM_TOL] = tol
            so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = max_iter
            r, u = np.zeros(n), np.zeros(n)
            try:
                t0 = time.perf_counter()
                info = (sn.fc2d_driver if two_d else sn.fc3d_driver)(prob, r, u, so)
                best = min(best, time.perf_counter() - t0)
            except Exception:  # noqa: BLE001 - recorded as a failure of the peer
                info, r, u = -1, np.zeros(n), np.zeros(n)
                break
        out.update({f"r{k}": r, f"u{k}": u, f"info{k}": info, f"t{k}": best,
                    f"iter{k}": so.iparam[sn.SICONOS_IPARAM_ITER_DONE], f"err{k}": so.dparam[sn.SICONOS_DPARAM_RESIDU]})
        k += 1
    np.savez(dst, **out)


if __name__ == "__main__":
    main()
