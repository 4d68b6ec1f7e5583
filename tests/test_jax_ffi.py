"""mbdcp.jax.lcp and mbdcp.jax.step under jax.jit as XLA custom calls into Lemke's method and
mbdcp_step_solve (mbdcp/infrastructure/xla/).

The custom call must give exactly mbdcp.lemke's z (the same C solve), solutions checked by
definition, batches under jax.vmap as mbdcp.batch.lemke, failures raised naming the status (and
the instance of a batch), and the host-callback path when the custom call is not available. The
interface declared in mbdcp/infrastructure/xla/xla_ffi_abi.h is compared with jaxlib's own header.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

import autodiff_cases as C
from conftest import ROOT, check_lcp

import mbdcp
import mbdcp.jax as mj
from mbdcp._jax import layer as jax_layer
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
    monkeypatch.setattr(jax_layer, "LAYERS", {})
    monkeypatch.setitem(mj._native_state, mj._LEMKE_TARGET, "unavailable for this test")
    monkeypatch.setitem(mj._native_state, mj._STEP_TARGET, "unavailable for this test")
    yield
    jax_layer.LAYERS.clear()


def test_the_declared_interface_is_jaxlibs():
    """mbdcp/infrastructure/xla/abi_check.c compiles only if every size, offset, constant and the FFI version
    declared in xla_ffi_abi.h agree with jaxlib's xla/ffi/api/c_api.h."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    header = os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api", "c_api.h")
    if cc is None or not os.path.isfile(header):
        pytest.skip("needs a C compiler and jaxlib's FFI header")
    xla = os.path.join(ROOT, "mbdcp", "infrastructure", "xla")
    run = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", jax.ffi.include_dir(), "-I", xla,
                          os.path.join(xla, "abi_check.c")],
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


def test_threads_sizes_and_order_share_nothing(rng):
    """Each thread's workspace is kept between calls and grown when a larger problem comes: calls
    from two threads at once, sizes growing and shrinking, all give mbdcp.lemke's z bit for bit."""
    from concurrent.futures import ThreadPoolExecutor
    f = jax.jit(mj.lcp)
    problems = [problem(rng, n)[:2] for n in (3, 40, 7, 60, 2, 25) * 3]

    def solve(k):
        M, q = problems[k]
        return np.array_equal(np.asarray(f(M, q)), mbdcp.lemke(M, q).z)
    with ThreadPoolExecutor(2) as pool:
        assert all(pool.map(solve, range(len(problems))))


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


# ---- mbdcp.jax.step -------------------------------------------------------------------------

def sphere(mu=0.2):
    """Trinkle (2003)'s sphere sliding at 2 m/s on a plane."""
    M, Wn, D, E, _ = mbdcp.examples.sphere_on_plane()
    h = 0.01
    return (M, Wn, D, E, np.array([mu]), np.array([2.0, 0, 0, 0, 0, 0]), h), \
        {"p_ext": np.array([0, 0, -9.81 * h, 0, 0, 0]), "psi_n": np.zeros(1)}


def check_step(args, kw, out, tol=1e-9):
    """The step's conditions by definition: momentum balance and the three complementarities."""
    M, Wn, D, E, U, v, h = args
    mu = np.broadcast_to(np.asarray(U, float), (Wn.shape[1],))
    vn, pn, beta, sigma = (np.asarray(o) for o in out[:4])
    rhs = M @ v + kw.get("p_ext", 0.0)
    scale = max(1.0, np.abs(rhs).max())
    np.testing.assert_allclose(M @ vn - Wn @ pn - D @ beta, rhs, atol=tol * scale)
    for z, w in ((pn, Wn.T @ vn + kw.get("psi_n", 0.0) / h), (beta, D.T @ vn + E @ sigma), (sigma, mu * pn - E.T @ beta)):
        assert np.all(z >= 0) and np.all(w >= -tol * scale) and np.all(np.abs(z * w) <= tol * scale)


def test_step_jit_is_the_custom_call():
    args, kw = sphere()
    assert mj._native_target(mj._STEP_TARGET, "step_handler") == mj._STEP_TARGET, mj._native_state
    text = compiled(lambda *a: mj.step(*a, **kw), *args)
    assert "mbdcp_step" in text and "callback" not in text.lower()
    grad_text = compiled(jax.grad(lambda mu: mj.step(*args[:4], mu, *args[5:], **kw)[0]), 0.3)
    assert "mbdcp_step" in grad_text and "callback" in grad_text.lower()  # the vjp stays a host callback
    M, Wn, D, E, U, v, h = args
    for other in ({"Wb": Wn}, {"dpsi_n": np.zeros(1)}, {"baumgarte": 0.5}, {"warm_start": np.zeros(6, bool)}):
        assert "mbdcp_step" not in compiled(lambda v: mj.step(M, Wn, D, E, U, v, h, **kw, **other), v)
    assert "mbdcp_step" not in compiled(lambda v: mj.step(M, Wn, D, E, np.diag(U), v, h, **kw), v)  # a matrix U


def test_step_same_outputs_as_mbdcp_step(rng):
    f = jax.jit(lambda args, kw: mj.step(*args, **kw, full_output=True))
    scenes = [sphere(mu) for mu in (0.0, 0.2, 5.0)] + [C.split(C.sliding(seed), C.STEP_ARGS) for seed in range(6)]
    for args, kw in scenes:
        for U in (args[4], float(args[4][0])):  # mu per contact, or one for all
            a = list(args[:4]) + [U] + list(args[5:])
            for keys in (("p_ext", "psi_n"), ("p_ext",), ()):
                k = {n: kw[n] for n in keys}
                out = f(a, k)
                res = mbdcp.step(*a, **k)
                for name, got in zip(mj.StepOutput._fields, out):
                    np.testing.assert_array_equal(got, getattr(res, name), err_msg=name)  # the same C solve
                check_step(a, k, out)


def test_step_vmap_is_the_batch(rng):
    data = C.sliding(0)
    (M, Wn, D, E, U, v, h), kw = C.split(data, C.STEP_ARGS)
    vs = v + 0.1 * rng.standard_normal((5, v.size))
    mus = U + 0.01 * rng.uniform(size=(5, U.size))

    def f(U, v):
        return mj.step(M, Wn, D, E, U, v, h, **kw)
    assert "mbdcp_step" in compiled(jax.vmap(f), mus, vs)
    got = jax.jit(jax.vmap(f))(mus, vs)
    shared = jax.jit(jax.vmap(f, in_axes=(None, 0)))(U, vs)
    nested = jax.jit(jax.vmap(jax.vmap(f, in_axes=(None, 0)), in_axes=(0, None)))(mus[:3], vs[:2])
    for i in range(5):
        np.testing.assert_array_equal(got[i], mbdcp.step(M, Wn, D, E, mus[i], vs[i], h, **kw).v_next)
        np.testing.assert_array_equal(shared[i], mbdcp.step(M, Wn, D, E, U, vs[i], h, **kw).v_next)
    for i in range(3):
        for j in range(2):
            np.testing.assert_array_equal(nested[i, j], mbdcp.step(M, Wn, D, E, mus[i], vs[j], h, **kw).v_next)


def test_step_gradients_through_the_custom_call(rng):
    for data in C.stable(C.sliding, 2):
        args, kw = C.split(data, C.STEP_ARGS)
        res = C.solve_step(data)
        d = mbdcp.derivatives.step(*args, res, **kw)
        g = rng.standard_normal(args[0].shape[0])

        def loss(*a):
            return mj.step(*a[:7], p_ext=a[7], psi_n=a[8]) @ g
        names = C.STEP_ARGS + ("p_ext", "psi_n")
        grads = jax.jit(jax.grad(loss, argnums=tuple(range(9))))(*args, kw["p_ext"], kw["psi_n"])
        want = d.vjp(v_next=g)
        for name, got in zip(names, grads):
            if name != "E":
                np.testing.assert_allclose(got, want[name], rtol=1e-12, atol=1e-15, err_msg=name)


def test_failed_step_raises_naming_the_status():
    args, kw = sphere()
    with pytest.raises(Exception, match=r"mbdcp.step ended with status MAX_ITERATIONS \(") as err:
        jax.jit(lambda *a: mj.step(*a, **kw, max_iter=1))(*args).block_until_ready()
    assert "CpuCallback" not in str(err.value)  # the custom call's own error, not a callback's
    M, Wn, D, E, U, v, h = args
    vs = np.array([[0, 0, 1.0, 0, 0, 0], v, [0, 0, 2.0, 0, 0, 0], v])  # rising: no contact force, 1 pivot
    with pytest.raises(Exception, match=r"MAX_ITERATIONS at instance 1 of the batch \(2 instances failed\)"):
        jax.jit(jax.vmap(lambda v: mj.step(M, Wn, D, E, U, v, h, **kw, max_iter=1)))(vs).block_until_ready()
    with pytest.raises(Exception, match="NaN"):
        jax.jit(lambda v: mj.step(M, Wn, D, E, U, v, h, **kw))(v * np.nan).block_until_ready()
    with pytest.raises(Exception, match="mbdcp.step: .*h\\)"):
        jax.jit(lambda h: mj.step(M, Wn, D, E, U, v, h, **kw))(-0.01).block_until_ready()


def test_step_without_the_custom_call_the_callbacks_serve(callbacks):
    args, kw = sphere()

    def step(*a):  # a function JAX has not traced before
        return mj.step(*a, **kw)
    text = compiled(step, *args)
    assert "mbdcp_step" not in text and "callback" in text.lower()
    np.testing.assert_array_equal(jax.jit(step)(*args), mbdcp.step(*args, **kw).v_next)
