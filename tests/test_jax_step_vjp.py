"""The backward of a plain mbdcp.jax.step (no joints, moving surfaces, gap correction or warm
start) computed in JAX itself (what other platforms than the CPU run; here forced on the CPU,
where the C core's rule is the default: tested last).

Its gradients must be mbdcp.derivatives.step's (the reference) on random sliding and sticking
scenes, jitted or not, under jax.vmap, against central differences of mbdcp.step, and through a
rollout against the closed form; the host (mbdcp.derivatives.step through the callback) must run
only at degenerate points, where it warns naming the contacts.
"""
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

import autodiff_cases as C

import mbdcp
import mbdcp.jax as mj
from mbdcp._jax import backward as jax_backward
from mbdcp.derivatives import _layers as ad
from mbdcp.tools.testing import random_scene

NAMES = C.STEP_ARGS + ("p_ext", "psi_n")
OUTS = ("v_next", "p_n", "beta", "sigma")


@pytest.fixture(autouse=True)
def jax_rule(monkeypatch):
    """JAX's own rule on the CPU too (the default there is the C core's)."""
    monkeypatch.setattr(jax_backward, "CPU_BACKWARD", "jax")


@pytest.fixture
def host_calls(monkeypatch):
    """The number of host backward passes (mbdcp.derivatives.step through the callback) so far."""
    calls = []
    real = ad.backward

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(ad, "backward", counted)
    return calls


def plain(seed, sticky):
    """A random plain scene: fast bodies (mostly sliding) or slow ones with much friction resting on
    the ground (mostly sticking)."""
    if sticky:
        s = random_scene(1 + seed % 2, 3 + seed % 6, seed=seed, n_d=(2, 8), mu=(0.8, 1.5), gap=(0.0, 0.0))
        s.v *= 0.02
    else:
        s = random_scene(2 + seed % 5, 3 + seed % 11, seed=seed, n_d=(4, 8))
    data = dict(zip(C.STEP_ARGS, s.args()))
    data.update(s.kwargs())
    assert set(data) == set(NAMES)
    data["U"] = np.asarray(data["U"], float)
    return data


def reference(data, cots):
    args, kw = C.split(data, C.STEP_ARGS)
    res = C.solve_step(data)
    d = mbdcp.derivatives.step(*args, res, **kw)
    return d, d.vjp(**cots)


def layer_grads(data, cots, jit):
    def loss(*x):
        out = mj.step(*x[:7], p_ext=x[7], psi_n=x[8], full_output=True)
        return sum(jnp.vdot(cots[o], getattr(out, o)) for o in OUTS)
    f = jax.grad(loss, argnums=tuple(range(len(NAMES))))
    return dict(zip(NAMES, (jax.jit(f) if jit else f)(*(jnp.asarray(data[k]) for k in NAMES))))


def assert_same(got, want, rtol=1e-10):
    for k in NAMES:
        if k == "E":
            assert np.all(np.asarray(got[k]) == 0)
            continue
        w = np.asarray(want[k])
        np.testing.assert_allclose(got[k], w, rtol=rtol, atol=rtol * max(np.abs(w).max(initial=0.0), 1e-300),
                                   err_msg=k)


@pytest.mark.parametrize("sticky", [False, True])
def test_gradients_are_mbdcp_derivatives_and_no_host_runs(sticky, rng, host_calls):
    """The host runs only where the gradients in the gaps and directions (asked for here) meet a
    candidate direction dropped as dependent (the host tells whether it is tied to other contacts,
    which is named: those points are test_dependent_rows.py's)."""
    modes, tested = set(), 0
    for seed in range(40):
        data = plain(seed, sticky)
        res = C.solve_step(data)
        cots = C.output_weights(rng, res, OUTS)
        d, want = reference(data, cots)
        if d.degenerate.size or d.dependent_contacts.size:
            continue
        want["U"] = np.asarray(want["U"])  # U is given per contact
        for jit in (True, False) if tested < 2 else (True,):  # each shape compiles anew: a few eager
            before = len(host_calls)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no degenerate warning either
                got = layer_grads(data, cots, jit)
            ran = len(host_calls) > before
            assert ran == bool(d._d["unused"]), f"seed {seed}: the host ran: {ran}, dropped candidates: {d._d['unused']}"
            assert_same(got, want)
        modes.update(d.mode.tolist())
        tested += 1
        if tested == 6:
            break
    assert tested == 6 and modes >= ({"sticking", "separated"} if sticky else {"sliding", "separated"})


def test_central_differences(rng, host_calls):
    """Against mbdcp.step itself (not the reference derivative): sliding and sticking scenes."""
    scenes = C.stable(lambda s: plain(s, False), 1) + C.stable(lambda s: plain(s, True), 1)
    dropped = 0
    for data in scenes:
        res = C.solve_step(data)
        args, kw = C.split(data, C.STEP_ARGS)
        dropped += bool(mbdcp.derivatives.step(*args, res, **kw)._d["unused"])
        weights = C.output_weights(rng, res, OUTS)
        grads = layer_grads(data, weights, jit=True)
        t = C.step_tangents(rng, data)
        fd = C.central_difference(C.solve_step, data, t, weights)
        an = C.directional(grads, t)
        assert abs(fd - an) <= 1e-5 * max(abs(fd), abs(an)) + 1e-8, (fd, an)
    assert len(host_calls) == dropped  # the gradients in the gaps and directions are asked for


def test_degenerate_points_go_to_the_host_and_warn(host_calls):
    """Sticking exactly at the cone's edge (stick-slip) and a grazing contact: the reference's
    one-sided derivative, the warning naming the contacts, from the host."""
    M, Wn, D, E, h = C.planar_particle()
    p_edge = np.array([0.5 * C.G * h, -C.G * h])  # pushed with exactly mu m g, mu = 0.5
    cases = [(p_edge, "stick-slip"), (np.array([0.0, 0.0]), "grazing")]
    for p_ext, kind in cases:
        data = {"M": M, "Wn": Wn, "D": D, "E": E, "U": np.array([0.5]), "v": np.zeros(2), "h": h, "p_ext": p_ext,
                "psi_n": np.zeros(1)}
        res = C.solve_step(data)
        cots = {o: np.ones(np.shape(getattr(res, o))) for o in OUTS}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d, want = reference(data, cots)
        assert kind in d.degenerate_kind
        for jit in (False, True):
            before = len(host_calls)
            with pytest.warns(mj.DegenerateWarning, match=rf"contacts \[0\] \(.*{kind}"):
                got = layer_grads(data, cots, jit)
            assert len(host_calls) > before
            assert_same(got, want, rtol=1e-12)


def test_vmap(rng, host_calls):
    data = C.stable(lambda s: plain(s, True), 1)[0]
    M, Wn, D, E, U, v, h = (data[k] for k in C.STEP_ARGS)
    vs = v + 0.002 * rng.standard_normal((4, v.size))
    g = rng.standard_normal(v.size)

    def loss(U, v):
        return g @ mj.step(M, Wn, D, E, U, v, h, p_ext=data["p_ext"], psi_n=data["psi_n"])
    for f in (jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, 0)),
              jax.jit(jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, 0)))):
        gU, gv = f(U, vs)
        for i in range(4):
            one = dict(data, v=vs[i])
            _, want = reference(one, {"v_next": g})
            np.testing.assert_allclose(gU[i], want["U"], rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(gv[i], want["v"], rtol=1e-10, atol=1e-14)
    assert not host_calls  # one conditional for the batch, not one per instance (which runs both branches)
    # an instance at a degenerate point sends the batch to the host, with the warning
    M, Wn, D, E, h = C.planar_particle()
    pushes = jnp.array([0.3, 0.5, 0.7]) * C.G * h  # the middle one at the cone's edge (mu = 0.5)

    def vx(mu, push):
        return mj.step(M, Wn, D, E, mu, jnp.zeros(2), h, p_ext=jnp.stack([push, -C.G * h]), psi_n=jnp.zeros(1))[0]
    with pytest.warns(mj.DegenerateWarning, match="stick-slip"):
        got = jax.jit(jax.vmap(jax.grad(vx, argnums=(0, 1)), in_axes=(None, 0)))(0.5, pushes)
    assert host_calls
    for i in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = jax.grad(vx, argnums=(0, 1))(0.5, pushes[i])
        np.testing.assert_allclose([got[0][i], got[1][i]], one, rtol=1e-12, atol=1e-15)


def sphere_rollout(mu, steps=C.SPHERE_STEPS):
    M, Wn, D, E = C.sphere_data()
    h = C.SPHERE_H
    v = jnp.array([C.SPHERE_V0, 0, 0, 0, 0, 0])
    for _ in range(steps):
        v = mj.step(M, Wn, D, E, mu, v, h, p_ext=jnp.array([0, 0, -C.G * h, 0, 0, 0]), psi_n=jnp.zeros(1))
    return v[0]


def test_sphere_rollout_closed_form_without_the_host(host_calls):
    """d v_x(T) / d mu = -g h per sliding step (Trinkle (2003)'s sphere), jitted, in JAX alone."""
    for f in (jax.grad(sphere_rollout), jax.jit(jax.grad(sphere_rollout))):
        g = float(f(0.2))
        assert abs(g - C.sphere_closed_form_gradient()) <= 1e-10 * abs(g)
    assert not host_calls


def test_jaxpr_keeps_the_host_only_behind_the_check():
    """The compiled backward's only callback sits in a branch of a conditional (the host's
    degenerate and singular cases), not on the path every call takes."""
    M, Wn, D, E = C.sphere_data()
    v = jnp.array([2.0, 0, 0, 0, 0, 0])
    f = jax.grad(lambda mu: mj.step(M, Wn, D, E, mu, v, 0.01, p_ext=jnp.array([0, 0, -0.0981, 0, 0, 0]),
                                    psi_n=jnp.zeros(1))[0])
    text = str(jax.make_jaxpr(f)(0.2))
    top = [ln for ln in text.splitlines() if "pure_callback" in ln]
    assert top, "the host path is gone: degenerate points could not warn"
    assert "cond[" in text

    def callbacks_outside_cond(jaxpr):
        n = 0
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "pure_callback":
                n += 1
            elif eqn.primitive.name != "cond":
                for p in eqn.params.values():
                    for sub in p if isinstance(p, (tuple, list)) else (p,):
                        sub = getattr(sub, "jaxpr", sub)
                        if hasattr(sub, "eqns"):
                            n += callbacks_outside_cond(sub)
        return n
    assert callbacks_outside_cond(jax.make_jaxpr(f)(0.2).jaxpr) == 0



def _rest_on(Wn_scales, D_scales):
    """ok of the JAX rule for a particle resting on contacts whose rows are the planar particle's
    scaled (normals by Wn_scales, friction by D_scales), sharing its weight."""
    from mbdcp._jax import step_vjp
    from mbdcp.derivatives._common import DEGENERATE_TOL
    M, Wn, D, E, h = C.planar_particle()
    weight, k = C.G * h, len(Wn_scales)
    a = {"M": M, "Wn": np.hstack([s * Wn for s in Wn_scales]), "D": np.hstack([s * D for s in D_scales]),
         "E": np.kron(np.eye(k), E), "U": np.full(k, 0.5), "v": np.zeros(2), "h": h,
         "p_ext": np.array([0.0, -weight]), "psi_n": np.zeros(k)}
    out = (np.zeros(2), weight / (k * np.asarray(Wn_scales)), np.zeros(2 * k), np.zeros(k))
    cot = (np.ones(2), np.ones(k), np.ones(2 * k), np.ones(k))
    a = {n: jnp.asarray(x, dtype=float) for n, x in a.items()}
    _, ok = step_vjp.step_vjp(a, tuple(map(jnp.asarray, out)), tuple(map(jnp.asarray, cot)), DEGENERATE_TOL)
    return bool(ok)


def test_a_held_impulse_is_left_to_the_host():
    """A particle resting on two contacts with parallel rows (scaled apart, so that no tie decides)
    sharing its weight: a solution Lemke, whose solutions are basic, does not return, but another
    solver may. The reference holds one normal impulse at its value, a choice left to the host.
    On one contact the rule stays in JAX."""
    assert _rest_on([1.0], [1.0])
    assert not _rest_on([1.0, 2.0], [1.0, 2.0])


def test_many_contacts_take_the_host_vjp(host_calls):
    """Beyond mbdcp.jax's limit of contacts the host's vjp (on index sets) is the faster one."""
    s = random_scene(6, mj._JAX_BACKWARD_CONTACTS + 4, seed=3, n_d=(4, 4))
    data = dict(zip(C.STEP_ARGS, s.args()))
    data.update(s.kwargs())
    data["U"] = np.asarray(data["U"], float)
    res = C.solve_step(data)
    cots = {o: np.ones(np.shape(getattr(res, o))) for o in OUTS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, want = reference(data, cots)
        got = layer_grads(data, cots, jit=True)
    assert host_calls
    assert_same(got, want)


def test_the_cpu_default_is_the_c_rule(monkeypatch, rng, host_calls):
    """By default on the CPU a plain step's backward is the host's, computed in the C core:
    mbdcp.derivatives.step is never built at a non-degenerate point, jitted or mapped, and the
    gradients are its own to rounding."""
    monkeypatch.setattr(jax_backward, "CPU_BACKWARD", "c")
    built = []
    real = mbdcp.derivatives.step

    def counted(*a, **k):
        built.append(1)
        return real(*a, **k)
    data = C.stable(lambda s: plain(s, False), 1)[0]
    res = C.solve_step(data)
    cots = C.output_weights(rng, res, OUTS)
    _, want = reference(data, cots)
    want["U"] = np.asarray(want["U"])
    monkeypatch.setattr(mbdcp.derivatives, "step", counted)
    for jit in (False, True):
        assert_same(layer_grads(data, cots, jit), want)
    assert host_calls and not built
    grad_v = jax.vmap(jax.grad(lambda v: jnp.vdot(cots["v_next"], mj.step(*(data[k] for k in C.STEP_ARGS[:5]), v,
                                                                          data["h"], p_ext=data["p_ext"],
                                                                          psi_n=data["psi_n"]))))
    monkeypatch.setattr(mbdcp.derivatives, "step", real)
    _, want_v = reference(data, {"v_next": cots["v_next"]})
    monkeypatch.setattr(mbdcp.derivatives, "step", counted)
    vs = np.stack([data["v"], data["v"]])
    np.testing.assert_allclose(grad_v(vs), np.stack([want_v["v"]] * 2), rtol=1e-10,
                               atol=1e-10 * np.abs(want_v["v"]).max())
    assert not built
