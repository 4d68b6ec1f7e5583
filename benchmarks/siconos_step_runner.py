"""The time step done the peer way, for comparison with mbdcp.step; runs under /usr/bin/python3.

Assembles the Stewart–Trinkle LCP (F, f) with NumPy (as mbdcp.step does: X = L^-1 W from a
Cholesky factor, G = X^T X), solves it with Siconos lcp_lexicolemke and recovers v_next.
Usage: /usr/bin/python3 siconos_step_runner.py IN.npz OUT.npz STEPS
IN holds per scene k: M{k}, Wn{k}, D{k}, E{k}, mu{k}, v{k}, h{k}, p{k}, psi{k}.
OUT gets v{k} (the last v_next), info{k}, t{k} (seconds per step, best of 3 loops of STEPS).
"""
import sys
import time

import numpy as np
import siconos.numerics as sn


def one_step(M, Wn, D, E, mu, v, h, p_ext, psi):
    n_c, m = Wn.shape[1], D.shape[1]
    L = np.linalg.cholesky(M)
    W = np.hstack([Wn, D])
    X = np.linalg.solve(L, W)
    y = np.linalg.solve(L, M @ v + p_ext)
    N = 2 * n_c + m
    F = np.zeros((N, N))
    F[: n_c + m, : n_c + m] = X.T @ X
    F[n_c: n_c + m, n_c + m:] = E
    F[n_c + m:, :n_c] = np.diag(mu)
    F[n_c + m:, n_c: n_c + m] = -E.T
    f = np.zeros(N)
    f[: n_c + m] = X.T @ y
    f[:n_c] += psi / h
    z, w = np.zeros(N), np.zeros(N)
    info = sn.linearComplementarity_driver(sn.LCP(F, f), z, w, sn.SolverOptions(sn.SICONOS_LCP_LEMKE))
    v_next = np.linalg.solve(L.T, y + X @ z[: n_c + m])
    return v_next, info


def main():
    src, dst, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = np.load(src)
    out = {}
    k = 0
    while f"M{k}" in data:
        args = [data[f"{name}{k}"] for name in ("M", "Wn", "D", "E", "mu", "v", "h", "p", "psi")]
        args[6] = float(args[6])
        best = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(steps):
                v_next, info = one_step(*args)
            best = min(best, (time.perf_counter() - t0) / steps)
        out.update({f"v{k}": v_next, f"info{k}": info, f"t{k}": best})
        k += 1
    np.savez(dst, **out)


if __name__ == "__main__":
    main()
