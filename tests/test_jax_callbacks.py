"""mbdcp.jax's host callbacks: on the CPU they read XLA's buffers in place
(jax.experimental.buffer_callback) where JAX has it, else they go through jax.pure_callback. Both
must give the same numbers (those of mbdcp.step and mbdcp.derivatives), under jit, grad and vmap,
and raise or warn the same way."""
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

import autodiff_cases as C

import mbdcp
import mbdcp.jax as mj
from mbdcp._jax import callbacks as jax_callbacks
from mbdcp._jax import layer as jax_layer

PATHS = ["buffer", "pure"]


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    """Run the test through one kind of callback, with a fresh cache of layers."""
    if request.param == "buffer" and jax_callbacks.buffer_callback is None:
        pytest.skip("this JAX has no jax.experimental.buffer_callback")
    if request.param == "pure":
        monkeypatch.setattr(jax_callbacks, "buffer_callback", None)
    monkeypatch.setattr(jax_layer, "LAYERS", {})
    return request.param


def joints_data():
    """A step with joints: no custom call serves it, so both passes are host callbacks."""
    return C.stable(C.joints, 1)[0]


def test_host_solve_and_vjp_under_jit_are_mbdcp_s(path, rng):
    data = joints_data()
    args, kw = C.split(data, C.STEP_ARGS)
    res = C.solve_step(data)
    d = mbdcp.derivatives.step(*args, res, **kw)
    g = rng.standard_normal(len(data["v"]))
    jargs = [jnp.asarray(a) for a in args]
    jkw = {k: jnp.asarray(x) for k, x in kw.items()}

    def loss(U, v, p_ext):
        return g @ mj.step(*jargs[:4], U, v, jargs[6], **dict(jkw, p_ext=p_ext))
    np.testing.assert_array_equal(jax.jit(lambda *a: mj.step(*a, **jkw))(*jargs), res.v_next)
    got = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(jargs[4], jargs[5], jkw["p_ext"])
    want = d.vjp(v_next=g)
    for x, name in zip(got, ("U", "v", "p_ext")):
        np.testing.assert_allclose(x, want[name], rtol=1e-12, atol=1e-15)


def test_host_callbacks_under_vmap(path, rng):
    data = joints_data()
    args, kw = C.split(data, C.STEP_ARGS)
    M, Wn, D, E, U, v, h = args
    vs = v + 0.01 * rng.standard_normal((3, v.size))
    g = rng.standard_normal(v.size)

    def f(v):
        return g @ mj.step(M, Wn, D, E, U, v, h, **kw)
    values, grads = jax.jit(jax.vmap(jax.value_and_grad(f)))(jnp.asarray(vs))
    for i in range(3):
        res = mbdcp.step(M, Wn, D, E, U, vs[i], h, **kw)
        np.testing.assert_allclose(values[i], g @ res.v_next, rtol=1e-13)
        want = mbdcp.derivatives.step(M, Wn, D, E, U, vs[i], h, res, **kw).vjp(v_next=g)["v"]
        np.testing.assert_allclose(grads[i], want, rtol=1e-12, atol=1e-15)


def test_host_callbacks_raise_and_warn(path):
    M, Wn, D, E, h = C.planar_particle()
    # the stabilisation option keeps the step off the custom call: host solve and host vjp
    with pytest.raises(Exception, match="MAX_ITERATIONS"):
        jax.jit(lambda v: mj.step(M, Wn, D, E, 0.5, v, h, p_ext=jnp.array([0.0, -C.G * h]), psi_n=jnp.zeros(1),
                                  baumgarte=0.5, max_iter=1))(jnp.array([1.0, -1.0])).block_until_ready()

    def vy(lift):  # at rest, touching, unloaded: a grazing contact
        return mj.step(M, Wn, D, E, 0.5, jnp.zeros(2), h, p_ext=jnp.stack([0.0, lift]), psi_n=jnp.zeros(1),
                       baumgarte=0.5)[1]
    with pytest.warns(mj.DegenerateWarning, match=r"contacts \[0\] \(grazing"):
        g = jax.jit(jax.grad(vy))(0.0)
    assert float(g) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.jit(jax.grad(vy))(-0.5)  # pressed down: in contact, no kink


def test_host_lcp_with_an_option_the_custom_call_does_not_take(path, rng):
    data, _ = C.planted_lcp(6, 3)
    M, q = data["M"], data["q"]
    res = mbdcp.lemke(M, q)
    z = jax.jit(lambda M, q: mj.lcp(M, q, trace=False))(jnp.asarray(M), jnp.asarray(q))
    np.testing.assert_array_equal(z, res.z)
    gz = rng.standard_normal(6)
    got = jax.jit(jax.grad(lambda q: gz @ mj.lcp(jnp.asarray(M), q, trace=False)))(jnp.asarray(q))
    np.testing.assert_allclose(got, mbdcp.derivatives.lcp(M, q, res).vjp(gz).q, rtol=1e-12, atol=1e-15)
