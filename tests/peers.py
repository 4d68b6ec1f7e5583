"""Independent peers called from tests and benchmarks."""
import os
import subprocess
import tempfile

import numpy as np

SICONOS_PYTHON = "/usr/bin/python3"
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
