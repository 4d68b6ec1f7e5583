"""mbdcp.jax.lcp under jax.jit as an XLA custom call into Lemke's method (csrc/xla/).

The custom call must give exactly mbdcp.lemke's z (the same C solve), solutions checked by
definition, batches under jax.vmap as mbdcp.batch.lemke, failures raised naming the status (and
the instance of a batch), and the host-callback path when the custom call is not available. The
interface declared in csrc/xla/xla_ffi_abi.h is compared with jaxlib's own header.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

from conftest import ROOT, check_lcp

import mbdcp
import mbdcp.jax as mj
from mbdcp.infrastructure import _xla  # built with the package: a missing extension fails here


def problem(rng, n, active=None):
    """An LCP with a P-matrix and a known solution: z = max(r, 0), w = max(-r, 0), q = w - M z."""
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n) if rng.random() < 0.5 else A @ A.T + 0.1 * np.eye(n) + (A - A.T)
    r = rng.standard_normal(n)
    if active is not None:
        r = np.where(np.arange(n) < active, np.abs(r) + 0.1, -np.abs(r) - 0.1)
    z, w = np.maximum(r, 0), np.maximum(-r, 0)
    return M, w - M @ z, z


def compiled(f, *args):
    return jax.jit(f).lower(*args).as_text()


@pytest.fixture
def callbacks(monkeypatch):
    """mbdcp.jax with the custom call marked unavailable (layers built afresh)."""
    monkeypatch.setattr(mj, "_LAYERS", {})
    monkeypatch.setitem(mj._native_state, mj._LEMKE_TARGET, "unavailable for this test")
    yield
    mj._LAYERS.clear()


def test_the_declared_interface_is_jaxlibs():
    """csrc/xla/abi_check.c compiles only if every size, offset, constant and the FFI version
    declared in xla_ffi_abi.h agree with jaxlib's xla/ffi/api/c_api.h."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    header = os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api", "c_api.h")
    if cc is None or not os.path.isfile(header):
        pytest.skip("needs a C compiler and jaxlib's FFI header")
    run = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", jax.ffi.include_dir(), "-I",
                          os.path.join(ROOT, "csrc", "xla"), os.path.join(ROOT, "csrc", "xla", "abi_check.c")],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert _xla.FFI_VERSION == (0, 3)


def test_jit_is_the_custom_call():
    M, q = np.eye(3), -np.ones(3)
    assert mj._native_target(mj._LEMKE_TARGET, "lemke_handler") == mj._LEMKE_TARGET, mj._native_state
    text = compiled(mj.lcp, M, q)
    assert "mbdcp_lemke" in text and "callback" not in text.lower()
    # the gradient keeps its host callback (the custom VJP); the forward solve stays native
    grad_text = compiled(jax.grad(lambda q: mj.lcp(M, q).sum()), q)
    assert "mbdcp_lemke" in grad_text and "callback" in grad_text.lower()


@pytest.mark.parametrize("n", [1, 2, 5, 10, 40])
def test_same_z_as_mbdcp_lemke(rng, n):
    f = jax.jit(mj.lcp)
    for _ in range(5):
        M, q, z_known = problem(rng, n)
        z = np.asarray(f(M, q))
        np.testing.assert_array_equal(z, mbdcp.lemke(M, q).z)  # the same C solve, bit for bit
        check_lcp(M, q, z)
        np.testing.assert_allclose(z, z_known, atol=1e-9 * max(1.0, np.abs(q).max()))


def test_empty_problem():
    assert jax.jit(mj.lcp)(np.zeros((0, 0)), np.zeros(0)).shape == (0,)


def test_options_reach_the_solver(rng):
    M, q, _ = problem(rng, 8, active=8)  # every z_i > 0: Lemke needs at least 8 pivots
    z = jax.jit(lambda M, q: mj.lcp(M, q, tol=1e-12, max_iter=1000))(M, q)
    np.testing.assert_array_equal(z, mbdcp.lemke(M, q, tol=1e-12, max_iter=1000).z)
    with pytest.raises(Exception, match="MAX_ITERATIONS"):
        jax.jit(lambda M, q: mj.lcp(M, q, max_iter=2))(M, q).block_until_ready()
    with pytest.raises(ValueError, match="tol"):  # checked when traced, naming the option
        jax.jit(lambda M, q: mj.lcp(M, q, tol=2.0))(M, q)


def test_vmap_is_the_batch(rng):
    n, B = 6, 7
    M, _, _ = problem(rng, n)
    qs = rng.standard_normal((B, n))
    Ms = np.stack([problem(rng, n)[0] for _ in range(B)])
    f = jax.jit(jax.vmap(mj.lcp, in_axes=(None, 0)))
    np.testing.assert_array_equal(f(M, qs), mbdcp.batch.lemke(M, qs).z)
    both = jax.jit(jax.vmap(mj.lcp))(Ms, qs)
    np.testing.assert_array_equal(both, np.stack([mbdcp.lemke(Ms[i], qs[i]).z for i in range(B)]))
    nested = jax.jit(jax.vmap(jax.vmap(mj.lcp, in_axes=(None, 0)), in_axes=(0, None)))(Ms[:3], qs[:4])
    for i in range(3):
        for j in range(4):
            np.testing.assert_array_equal(nested[i, j], mbdcp.lemke(Ms[i], qs[j]).z)
            check_lcp(Ms[i], qs[j], nested[i, j])


def test_gradients_through_the_custom_call(rng):
    M, q, z = problem(rng, 6, active=3)
    g = rng.standard_normal(6)
    gq, gM = jax.jit(jax.grad(lambda q, M: mj.lcp(M, q) @ g, argnums=(0, 1)))(q, M)
    # closed form on the active set a = {z_i > 0}: dq_a = -M_aa^-T g_a, dM = dq z^T
    a = z > 0
    want = np.zeros(6)
    want[a] = -np.linalg.solve(M[np.ix_(a, a)].T, g[a])
    np.testing.assert_allclose(gq, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gM, np.outer(want, z), rtol=1e-9, atol=1e-12)


def test_infeasible_problem_raises_naming_the_status():
    M, q = -np.eye(2), -np.ones(2)  # ray termination: no solution
    with pytest.raises(Exception, match=r"mbdcp.lcp ended with status RAY_TERMINATION \(") as err:
        jax.jit(mj.lcp)(M, q).block_until_ready()
    assert "CpuCallback" not in str(err.value)  # the custom call's own error, not a callback's
    qs = np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, 2.0], [-1.0, -1.0]])
    with pytest.raises(Exception, match=r"RAY_TERMINATION at instance 1 of the batch \(2 instances failed\)"):
        jax.jit(jax.vmap(mj.lcp, in_axes=(None, 0)))(M, qs).block_until_ready()
    with pytest.raises(Exception, match="NaN"):
        jax.jit(mj.lcp)(np.eye(2), np.array([np.nan, 1.0])).block_until_ready()


def test_without_the_custom_call_the_callbacks_serve(rng, callbacks):
    M, q, _ = problem(rng, 5)

    def lcp(M, q):  # a function JAX has not traced before (it keeps the traces of mbdcp.jax.lcp)
        return mj.lcp(M, q)
    text = compiled(lcp, M, q)
    assert "mbdcp_lemke" not in text and "callback" in text.lower()
    np.testing.assert_array_equal(jax.jit(lcp)(M, q), mbdcp.lemke(M, q).z)
    with pytest.raises(Exception, match="RAY_TERMINATION"):
        jax.jit(lcp)(-np.eye(2), -np.ones(2)).block_until_ready()
