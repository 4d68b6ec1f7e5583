"""Siconos numerics as an independent reader of its own .dat files.

As a script, under Debian's /usr/bin/python3:  siconos_reader.py OUT.npz KIND PATH...
(KIND: lcp, mlcp, fc or gfc) saves, for file k, dense matrices and vectors as Siconos reads them:
M_k, q_k (lcp, mlcp); W_k, q_k, mu_k, d_k (fc); M_k, H_k, q_k, b_k, mu_k, d_k (gfc).
From the tests: ``siconos_read(kind, paths)`` runs it and returns one dict per file.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

SICONOS_PYTHON = "/usr/bin/python3"


def _dense(sn, A, rows, cols):
    if isinstance(A, np.ndarray):  # dense: Siconos' own shape
        return np.array(A, dtype=float)
    if hasattr(A, "toarray"):
        return A.toarray()
    get = sn.SBM_get_value if isinstance(A, sn.SparseBlockStructuredMatrix) else sn.NM_get_value
    return np.array([[get(A, i, j) for j in range(cols)] for i in range(rows)])


def _main(out, kind, paths):
    import scipy.sparse  # noqa: F401  (the Siconos wrappers convert sparse matrices only once it is loaded)
    import siconos.numerics as sn

    arrays = {}
    for k, path in enumerate(paths):
        if kind == "lcp":
            p = sn.LCP(np.eye(1), np.zeros(1))
            sn.linearComplementarity_newFromFilename(p, path)
            arrays[f"M_{k}"] = _dense(sn, p.M, p.size, p.size)
            arrays[f"q_{k}"] = np.array(p.q, dtype=float)
        elif kind == "mlcp":
            p = sn.MLCP()
            sn.mixedLinearComplementarity_newFromFilename(p, path)
            arrays[f"M_{k}"] = _dense(sn, p.M, p.n + p.m, p.n + p.m)
            arrays[f"q_{k}"] = np.array(p.q, dtype=float)
        elif kind == "fc":
            p = sn.frictionContact_new_from_filename(path)
            m = p.dimension * p.numberOfContacts
            arrays.update({f"W_{k}": _dense(sn, p.M, m, m), f"q_{k}": np.array(p.q, dtype=float),
                           f"mu_{k}": np.array(p.mu, dtype=float), f"d_{k}": p.dimension})
        elif kind == "gfc":
            p = sn.globalFrictionContact_new_from_filename(path)
            m = p.dimension * p.numberOfContacts
            q = np.array(p.q, dtype=float)
            arrays.update({f"M_{k}": _dense(sn, p.M, q.size, q.size), f"H_{k}": _dense(sn, p.H, q.size, m), f"q_{k}": q,
                           f"b_{k}": np.array(p.b, dtype=float), f"mu_{k}": np.array(p.mu, dtype=float),
                           f"d_{k}": p.dimension})
        else:
            raise SystemExit(f"unknown kind {kind}")
    np.savez(out, **arrays)


def siconos_read(kind, paths):
    """Read files with Siconos in a subprocess: a list of dicts of arrays, one per path."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.npz")
        subprocess.run([SICONOS_PYTHON, os.path.abspath(__file__), out, kind, *map(str, paths)], check=True,
                       capture_output=True, timeout=600)
        data = np.load(out)
        result = [{} for _ in paths]
        for key in data.files:
            name, k = key.rsplit("_", 1)
            result[int(k)][name] = data[key]
        return result


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2], sys.argv[3:])
