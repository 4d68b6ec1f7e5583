import glob
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "peers")]  # the tests' helpers, and the peers' runners (shared with the benchmarks)

# Test the installed package. `python -m pytest` puts the source tree first on sys.path, and
# after a plain `pip install .` its mbdcp/ has no compiled extension: drop it then.
_CORE = os.path.join(ROOT, "mbdcp", "infrastructure", "_core.*")
if not glob.glob(_CORE + ".so") + glob.glob(_CORE + ".pyd"):
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != ROOT]
    if "mbdcp" in sys.modules:
        raise RuntimeError("mbdcp was imported from the source tree before conftest.py")


def check_lcp(M, q, z, w=None, tol=1e-8):
    """Assert (z, w) solves LCP(M, q) by definition, tolerance scaled by the data."""
    M, q, z = np.asarray(M, float), np.asarray(q, float), np.asarray(z, float)
    w_true = M @ z + q
    scale = max(1.0, np.abs(q).max(initial=0), np.abs(M).sum(axis=1).max(initial=0) * np.abs(z).max(initial=0))
    t = tol * scale
    assert z.min(initial=0) >= -t, f"z has a negative entry {z.min()}"
    assert w_true.min(initial=0) >= -t, f"w = Mz + q has a negative entry {w_true.min()}"
    assert np.abs(np.minimum(z, w_true)).max(initial=0) <= t, "complementarity violated"
    if w is not None:
        np.testing.assert_allclose(w, w_true, atol=t)


@pytest.fixture
def rng():
    return np.random.default_rng(20261123)
