"""mbdcp.jax: contact solves as differentiable JAX functions (jit, grad, vjp, jacrev, vmap).

Gradients are checked against central differences of mbdcp.step / mbdcp.ccp / mbdcp.lemke
themselves (not of the layer), against mbdcp.derivatives, against closed forms (a sliding sphere
and particle), and whole rollouts against closed forms and central differences of NumPy rollouts.
"""
import doctest
import importlib
import os
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

import autodiff_cases as C

import mbdcp
import mbdcp.jax as mj
from mbdcp import Status


def close(fd, an, rtol=1e-5, atol=1e-8):
    assert abs(fd - an) <= rtol * max(abs(fd), abs(an)) + atol, (fd, an)


def as_jax(data):
    return {k: jnp.asarray(v, dtype=jnp.float64) for k, v in data.items()}


def step_loss(data, weights, **options):
    args, kw = C.split(data, C.STEP_ARGS)
    out = mj.step(*args, **kw, **options, full_output=True)
    return sum(jnp.sum(w * getattr(out, o)) for o, w in weights.items())


def test_needs_x64():
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(RuntimeError, match="jax_enable_x64"):
            mj.lcp(np.eye(2), np.array([-1.0, 1.0]))
    finally:
        jax.config.update("jax_enable_x64", True)


def test_docstring_examples():
    result = doctest.testmod(mj, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_an_eager_call_returns_float64_jax_arrays():
    M, Wn, D, E, _ = mbdcp.examples.sphere_on_plane()
    v0, kw = np.array([2.0, 0, 0, 0, 0, 0]), dict(p_ext=[0, 0, -0.0981, 0, 0, 0], psi_n=[0.0])
    ref = mbdcp.step(M, Wn, D, E, 0.2, v0, 0.01, **kw)
    for context in (jax.disable_jit, lambda: jax.disable_jit(False)):
        with context():
            out = mj.step(M, Wn, D, E, 0.2, v0, 0.01, full_output=True, **kw)
        assert all(isinstance(x, jax.Array) and x.dtype == jnp.float64 for x in out)
        np.testing.assert_array_equal(out.v_next, ref.v_next)
        np.testing.assert_array_equal(out.p_n, ref.p_n)
    z = mj.lcp(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-5.0, 6.0]))
    assert isinstance(z, jax.Array) and z.tolist() == [2.5, 0.0]


@pytest.mark.parametrize("name, bad", [("D", np.ones((5, 4))), ("E", np.ones((4, 2))), ("U", np.ones(2)),
                                       ("h", np.ones(1)), ("psi_n", np.zeros(3)), ("p_ext", np.zeros(5))])
def test_a_misshapen_input_is_named_when_jit_traces(name, bad):
    M, Wn, D, E, _ = mbdcp.examples.sphere_on_plane()
    a = {"M": M, "Wn": Wn, "D": D, "E": E, "U": 0.2, "v": np.array([2.0, 0, 0, 0, 0, 0]), "h": 0.01,
         "p_ext": np.zeros(6), "psi_n": np.zeros(1)}

    def f(x):
        b = dict(a, **{name: x})
        return mj.step(b.pop("M"), b.pop("Wn"), b.pop("D"), b.pop("E"), b.pop("U"), b.pop("v"), b.pop("h"), **b)
    with pytest.raises(ValueError, match=f"^{name} must have"):  # at trace time, not JAX's runtime error
        jax.jit(f)(jnp.asarray(bad))


@pytest.mark.parametrize("kind", sorted(C.SCENES))
def test_step_gradient_in_every_input_matches_central_differences(kind, rng):
    for data in C.stable(C.SCENES[kind], 2):
        res = C.solve_step(data)
        weights = C.output_weights(rng, res, importlib.import_module("mbdcp.derivatives.step").OUTPUTS)
        grads = jax.grad(step_loss)(as_jax(data), weights)
        assert set(grads) == set(data) and np.all(np.asarray(grads["E"]) == 0)
        jit_grads = jax.jit(jax.grad(step_loss))(as_jax(data), weights)
        for k in data:  # the compiled program calls the same host code
            np.testing.assert_allclose(jit_grads[k], grads[k], rtol=1e-12, atol=1e-15)
        for k, t in C.step_tangents(rng, data).items():  # one input at a time, then all together
            close(C.central_difference(C.solve_step, data, {k: t}, weights), C.directional(grads, {k: t}))
        t = C.step_tangents(rng, data)
        close(C.central_difference(C.solve_step, data, t, weights), C.directional(grads, t))


def test_step_vjp_is_that_of_mbdcp_derivatives(rng):
    data = C.stable(C.joint_friction, 1)[0]
    args, kw = C.split(data, C.STEP_ARGS)
    res = C.solve_step(data)
    d = mbdcp.derivatives.step(*args, res, **kw)
    jargs = [jnp.asarray(a) for a in args]
    out, vjp = jax.vjp(lambda *a: mj.step(*a, **kw, full_output=True), *jargs)
    np.testing.assert_array_equal(out.v_next, res.v_next)
    cot = mj.StepOutput(*(rng.standard_normal(np.shape(o)) for o in out))
    got = dict(zip(C.STEP_ARGS, vjp(cot)))
    want = d.vjp(**cot._asdict())
    for k in ("M", "Wn", "D", "U", "v", "h"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-15)


def test_vmap_is_the_batch_and_jacrev_the_jacobian(rng):
    data = C.stable(C.sliding, 1)[0]
    args, kw = C.split(data, C.STEP_ARGS)
    M, Wn, D, E, U, v, h = args
    vs = v + 0.1 * rng.standard_normal((5, v.size))
    mus = U + 0.01 * rng.uniform(size=(5, U.size))

    def f(U, v):
        return mj.step(M, Wn, D, E, U, v, h, **kw)
    got = jax.vmap(f)(mus, vs)
    np.testing.assert_array_equal(got, mbdcp.batch.step(M, Wn, D, E, mus, vs, h, **kw).v_next)
    for i in range(5):
        np.testing.assert_array_equal(got[i], mbdcp.step(M, Wn, D, E, mus[i], vs[i], h, **kw).v_next)
    np.testing.assert_array_equal(jax.jit(jax.vmap(f, in_axes=(None, 0)))(U, vs), jax.vmap(f, in_axes=(None, 0))(U, vs))
    nested = jax.vmap(jax.vmap(f, in_axes=(None, 0)), in_axes=(0, None))(mus[:3], vs[:2])
    assert nested.shape == (3, 2, v.size)
    np.testing.assert_array_equal(nested[2, 1], f(mus[2], vs[1]))

    g = rng.standard_normal(v.size)
    per = jax.vmap(jax.grad(lambda U, v: g @ f(U, v), argnums=(0, 1)))(mus, vs)
    total = jax.grad(lambda U: sum(g @ f(U, vs[i]) for i in range(5)))(U)
    np.testing.assert_allclose(jax.grad(lambda U: jnp.sum(jax.vmap(f, in_axes=(None, 0))(U, vs) @ g))(U), total,
                               rtol=1e-12)
    for i in range(5):
        one = jax.grad(lambda U, v: g @ f(U, v), argnums=(0, 1))(mus[i], vs[i])
        np.testing.assert_allclose(per[0][i], one[0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(per[1][i], one[1], rtol=1e-12, atol=1e-15)
    d = mbdcp.derivatives.step(*args, C.solve_step(data), **kw)
    np.testing.assert_allclose(jax.jacrev(f, argnums=1)(U, v), d.jacobian("v_next", "v"), rtol=1e-10, atol=1e-13)


def test_lcp_gradients_vmap_and_jit(rng):
    for seed in range(3):
        data, z = C.planted_lcp(7, seed)
        M, q = jnp.asarray(data["M"]), jnp.asarray(data["q"])
        np.testing.assert_allclose(mj.lcp(M, q), z, atol=1e-10)
        d = mbdcp.derivatives.lcp(data["M"], data["q"], C.solve_lcp(data))
        np.testing.assert_allclose(jax.jacrev(mj.lcp, argnums=1)(M, q), d.dz_dq, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(jax.jit(jax.jacrev(mj.lcp, argnums=1))(M, q), d.dz_dq, rtol=1e-12, atol=1e-14)
        weights = {"z": rng.standard_normal(7)}
        gM, gq = jax.grad(lambda M, q, w=weights["z"]: w @ mj.lcp(M, q), argnums=(0, 1))(M, q)
        t = {"M": rng.standard_normal((7, 7)), "q": rng.standard_normal(7)}  # M need not be symmetric
        close(C.central_difference(C.solve_lcp, data, t, weights), C.directional({"M": gM, "q": gq}, t))
        qs = data["q"] + 0.1 * rng.standard_normal((4, 7))
        np.testing.assert_array_equal(jax.vmap(mj.lcp, in_axes=(None, 0))(M, qs), mbdcp.batch.lemke(data["M"], qs).z)


def test_ccp_closed_form_and_central_differences(rng):
    mu = 0.5
    data = C.ccp_particle(mu)
    args, kw = C.split(data, C.CCP_ARGS)
    vx = jax.grad(lambda mu: mj.ccp(*args[:3], mu, *args[4:], **kw, **C.CCP_SOLVE)[0])(mu)
    gh = 0.0981
    close(float(vx), -(gh * (1 + mu ** 2) + 2 * mu * (1 - mu * gh)) / (1 + mu ** 2) ** 2, rtol=1e-9)
    for data in C.stable_piles(2):
        res = C.solve_ccp(data)
        weights = C.output_weights(rng, res, ("v_next", "gamma"))

        def loss(d, weights=weights):
            args, kw = C.split(d, C.CCP_ARGS)
            out = mj.ccp(*args, **kw, **C.CCP_SOLVE, full_output=True)
            return sum(jnp.sum(w * getattr(out, o)) for o, w in weights.items())
        grads = jax.grad(loss)(as_jax(data))
        assert grads["dpsi_t"].shape == data["dpsi_t"].shape
        for k, t in C.ccp_tangents(rng, data).items():
            close(C.central_difference(C.solve_ccp, data, {k: t}, weights), C.directional(grads, {k: t}), rtol=1e-4)


def test_failed_solve_raises_naming_the_status():
    M, q = -np.eye(2), -np.ones(2)  # ray termination: no solution
    with pytest.raises(mj.SolveError, match="RAY_TERMINATION") as err:
        mj.lcp(M, q)
    assert err.value.status == Status.RAY_TERMINATION
    with pytest.raises(Exception, match="RAY_TERMINATION"):  # under jit, wrapped by JAX's runtime error
        jax.jit(mj.lcp)(M, q).block_until_ready()
    with pytest.raises(Exception, match="RAY_TERMINATION"):
        jax.grad(lambda q: mj.lcp(M, q).sum())(q)
    qs = np.array([[-1.0, 1.0], [1.0, 1.0], [-1.0, -1.0]])
    with pytest.raises(Exception, match="RAY_TERMINATION at instance 0 of the batch"):
        jax.vmap(mj.lcp, in_axes=(None, 0))(M, qs)
    args, kw = C.unconverged_ccp()
    with pytest.raises(mj.SolveError, match="MAX_ITERATIONS"):
        mj.ccp(*args, **kw)


def test_degenerate_points_warn_and_give_the_documented_side():
    M, Wn, D, E, h = C.planar_particle()

    def vy(lift):  # at rest, touching, unloaded: a grazing contact
        return mj.step(M, Wn, D, E, 0.5, jnp.zeros(2), h, p_ext=jnp.stack([0.0, lift]), psi_n=jnp.zeros(1))[1]
    with pytest.warns(mj.DegenerateWarning, match=r"contacts \[0\] \(grazing"):
        g = jax.grad(vy)(0.0)
    assert float(g) == 1.0  # separated: the side on which the contact opens (lift > 0)

    def vx(mu):  # pushed with exactly mu m g: at the edge of the friction cone
        return mj.step(M, Wn, D, E, mu, jnp.zeros(2), h, p_ext=jnp.array([0.5 * C.G * h, -C.G * h]),
                       psi_n=jnp.zeros(1))[0]
    with pytest.warns(mj.DegenerateWarning, match="stick-slip"):
        g = jax.grad(vx)(0.5)
    assert float(g) == 0.0  # sticking: exact as mu grows (the impulse moves into the cone)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.grad(vx)(0.6)  # away from the kink: no warning


def sphere_rollout(mu, v0, steps=C.SPHERE_STEPS):
    M, Wn, D, E = C.sphere_data()
    h = C.SPHERE_H
    v, z = v0, jnp.asarray(1.0)
    for _ in range(steps):
        v = mj.step(M, Wn, D, E, mu, v, h, p_ext=jnp.array([0, 0, -C.G * h, 0, 0, 0]), psi_n=jnp.stack([z - 1.0]))
        z = z + h * v[2]
    return v[0]


def test_sphere_rollout_matches_closed_form():
    v0 = jnp.array([C.SPHERE_V0, 0, 0, 0, 0, 0])
    gmu, gv0 = jax.grad(sphere_rollout, argnums=(0, 1))(0.2, v0)
    close(float(gmu), C.sphere_closed_form_gradient(), rtol=1e-10)
    # an upward v0_z lightens only the first step's normal impulse (the sphere stays on the plane)
    np.testing.assert_allclose(gv0, [1, 0, 0.2, 0, 0, 0], atol=1e-10)
    close(float(jax.jit(jax.grad(sphere_rollout))(0.25, v0)), C.sphere_closed_form_gradient(), rtol=1e-10)
    steps = jnp.arange(1, 6)
    per = jax.vmap(jax.grad(lambda mu: sphere_rollout(mu, v0, steps=10)))(0.1 + 0.02 * steps)
    np.testing.assert_allclose(per, C.sphere_closed_form_gradient(steps=10), rtol=1e-10)


def box_rollout(mu, m):
    J = m * float(((2 * C.BOX_HALF) ** 2).sum()) / 12
    M = jnp.diag(jnp.stack([m, m, J]))
    b = jnp.asarray([[-C.BOX_HALF[0], -C.BOX_HALF[1]], [C.BOX_HALF[0], -C.BOX_HALF[1]]])
    q, v = jnp.asarray(C.BOX_Q0), jnp.zeros(3)
    for k in range(C.BOX_STEPS):
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        rx, ry = b[:, 0] * c - b[:, 1] * s, b[:, 0] * s + b[:, 1] * c
        Wn = jnp.stack([jnp.zeros(2), jnp.ones(2), rx])
        t = jnp.stack([jnp.ones(2), jnp.zeros(2), -ry])
        D = jnp.stack([t[:, 0], -t[:, 0], t[:, 1], -t[:, 1]], axis=1)
        F = C.box_push(k)
        p_ext = C.BOX_H * jnp.stack([F, -m * C.G, -C.BOX_PUSH_HEIGHT * F])
        v = mj.step(M, Wn, D, C.BOX_E, mu, v, C.BOX_H, p_ext=p_ext, psi_n=q[1] + ry)
        q = q + C.BOX_H * v
    return q


def test_box_rollout_matches_central_differences():
    mu, m = 0.3, 1.2
    np.testing.assert_allclose(box_rollout(mu, m), C.box_rollout(mu, m), rtol=1e-12, atol=1e-14)
    jac = jax.jit(jax.jacrev(box_rollout, argnums=(0, 1)))(mu, m)
    dmu, dm = C.box_fd(mu, m)
    np.testing.assert_allclose(jac[0], dmu, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(jac[1], dm, rtol=1e-5, atol=1e-8)
    assert abs(dmu[2]) > 1e-3 and abs(dm[2]) > 1e-3  # the box tips: theta depends on both


def test_gradients_page_examples_run():
    pytest.importorskip("torch")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "gradients.rst")
    result = doctest.testfile(path, module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0


def test_lcp_backward_in_jax_is_that_of_mbdcp_derivatives(rng):
    """The LCP's vjp runs in JAX itself (no host callback unless a warning is due): the same numbers
    as mbdcp.derivatives.lcp, jitted or not, at nondegenerate and degenerate points (where the
    warning names the pairs and the one-sided derivative follows Lemke's basis)."""
    for seed in range(4):
        data, _ = C.planted_lcp(8, seed)
        M, q = data["M"], data["q"]
        d = mbdcp.derivatives.lcp(M, q, mbdcp.lemke(M, q))
        gz = rng.standard_normal(8)
        want = d.vjp(gz)
        loss = lambda M, q: jnp.asarray(gz) @ mj.lcp(M, q)  # noqa: E731
        for f in (jax.grad(loss, argnums=(0, 1)), jax.jit(jax.grad(loss, argnums=(0, 1)))):
            gM, gq = f(jnp.asarray(M), jnp.asarray(q))
            np.testing.assert_allclose(gq, want.q, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(gM, want.M, rtol=1e-12, atol=1e-14)
    # pair 0 degenerate (z_0 = w_0 = 0): warned, and the derivative of mbdcp.derivatives.lcp
    M, q = np.eye(2), np.array([0.0, -1.0])
    want = mbdcp.derivatives.lcp(M, q, mbdcp.lemke(M, q)).vjp(np.ones(2)).q
    for f in (jax.grad(lambda q: mj.lcp(jnp.eye(2), q).sum()), jax.jit(jax.grad(lambda q: mj.lcp(jnp.eye(2), q).sum()))):
        with pytest.warns(mj.DegenerateWarning, match=r"pairs z_i = w_i = 0 at \[0\]"):
            g = f(jnp.asarray(q))
        np.testing.assert_array_equal(g, want)
    with pytest.warns(mj.DegenerateWarning, match=r"at \[0\]"):
        g = jax.vmap(jax.grad(lambda q: mj.lcp(jnp.eye(2), q).sum()))(jnp.array([[0.0, -1.0], [1.0, -1.0]]))
    np.testing.assert_array_equal(g, [want, [0.0, -1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.jit(jax.grad(lambda q: mj.lcp(jnp.eye(2), q).sum()))(jnp.array([1.0, -1.0]))  # no degenerate pair


@pytest.mark.parametrize("jit", [False, True])
def test_a_rolling_sphere_steps_without_false_failures(jit):
    # a step not verified raises SolveError: 25 steps of the sphere that slides, then rolls
    M, Wn, D, E, mu, v, h, p_ext, psi_n = C.rolling_sphere(8)
    f = jax.jit(lambda v: mj.step(M, Wn, D, E, mu, v, h, p_ext=p_ext, psi_n=psi_n)) if jit else (
        lambda v: mj.step(M, Wn, D, E, mu, v, h, p_ext=p_ext, psi_n=psi_n))
    for _ in range(25):
        v = np.asarray(f(v))
    assert abs(v[0] - 2.0 * 5.0 / 7.0) < 1e-9 and abs(v[4] - v[0]) < 1e-9
