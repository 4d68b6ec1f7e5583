"""Independent peers called from tests and benchmarks."""
import os
import subprocess
import tempfile

import numpy as np

# Debian's Python, which has python3-siconos; MBDCP_SICONOS_PYTHON names another interpreter (the tests use it to
# check that a notebook comparing with Siconos still runs when the peer is broken).
SICONOS_PYTHON = os.environ.get("MBDCP_SICONOS_PYTHON", "/usr/bin/python3")
RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "siconos_runner.py")


def siconos_available():
    if not os.path.exists(SICONOS_PYTHON):
        return False
    r = subprocess.run([SICONOS_PYTHON, "-c", "import siconos.numerics"], capture_output=True)
    return r.returncode == 0


def siconos_lcp(problems, solver="lexicolemke", repeat=1):
    """Solve [(M, q), ...] with Siconos in a subprocess: list of (z, w, info, seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        arrays = {}
        for k, (M, q) in enumerate(problems):
            arrays[f"M{k}"], arrays[f"q{k}"] = np.asarray(M, float), np.asarray(q, float)
        np.savez(src, **arrays)
        subprocess.run([SICONOS_PYTHON, RUNNER, src, dst, solver, str(repeat)], check=True,
                       capture_output=True, timeout=3600)
        out = np.load(dst)
        return [(out[f"z{k}"], out[f"w{k}"], int(out[f"info{k}"]), float(out[f"t{k}"]))
                for k in range(len(problems))]


FC_RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "siconos_fc_runner.py")


def _limit_memory(nbytes):
    """A preexec_fn that caps the child's address space (a runaway peer must not take the machine)."""
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return limit


def siconos_fc(problems, solver="nsgs", tol=1e-8, max_iter=100_000, repeat=1, timeout=3600, memory=None):
    """Solve local friction-contact problems [(W, q, mu), ...] (W dense or scipy.sparse) with
    Siconos fc3d (solver "nsgs" or "nsn_ac", 3-D problems) or fc2d ("2d_nsgs" or "2d_lemke", 2-D
    problems) in a subprocess: list of dicts with r, u, info (Siconos' own flag; -1 when it raised),
    seconds (timed in the subprocess), iterations, error (Siconos' own measure). memory: a cap on the
    subprocess's address space in bytes (None: none)."""
    import scipy.sparse as sp

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        arrays = {}
        for k, (W, q, mu) in enumerate(problems):
            W = sp.csc_matrix(W, dtype=float)
            W.sort_indices()
            arrays.update({f"W{k}_indptr": W.indptr, f"W{k}_indices": W.indices, f"W{k}_data": W.data,
                           f"q{k}": np.asarray(q, float), f"mu{k}": np.asarray(mu, float)})
        np.savez(src, **arrays)
        subprocess.run([SICONOS_PYTHON, FC_RUNNER, src, dst, solver, repr(tol), str(max_iter), str(repeat)],
                       check=True, capture_output=True, timeout=timeout,
                       preexec_fn=_limit_memory(memory) if memory else None)
        out = np.load(dst)
        return [{"r": out[f"r{k}"], "u": out[f"u{k}"], "info": int(out[f"info{k}"]), "seconds": float(out[f"t{k}"]),
                 "iterations": int(out[f"iter{k}"]), "error": float(out[f"err{k}"])} for k in range(len(problems))]
