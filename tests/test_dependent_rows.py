"""Active rows dropped as dependent (statically indeterminate contacts): the derivative holds their
dependence, which changes of M, mu, v and p_ext keep and a change of one gap may break.

A body resting on two sticking contacts with many friction directions has more active rows than
its velocities can take; mbdcp.derivatives.step keeps an independent subset and holds the others.
Where a dropped row depends on another contact's rows or on the normals, v_next has a kink in the
gaps (its one-sided derivatives differ, and the held derivative is neither): the layers must say so
(DegenerateWarning naming the contacts) when a gradient in the gaps or the directions is asked
for, and stay silent, and exact, for the others. A direction opposite to a kept one of its own
contact stays dependent under any change of the gaps: no warning there.
"""
import functools
import warnings

import numpy as np
import pytest

import mbdcp
from mbdcp.derivatives import _native_step
from mbdcp.derivatives._layers import DegenerateWarning
from mbdcp.examples import sphere_on_plane
from mbdcp.testing import random_scene


def tied_scene():
    """Two sticking ground contacts on one body, friction rows of rank one short of their count."""
    s = random_scene(3, 2, seed=1124, n_d=(2, 8), mu=(0.8, 1.5), gap=(0.0, 0.0))
    s.v *= 0.02
    M, Wn, D, E, U, v, h = s.args()
    return (M, Wn, D, E, np.asarray(U, float), v, h), s.kwargs()


def resting_sphere():
    M, Wn, D, E, _ = sphere_on_plane()
    h = 0.01
    return (M, Wn, D, E, np.array([0.5]), np.zeros(6), h), {"p_ext": np.array([0, 0, -9.81 * h, 0, 0, 0]),
                                                              "psi_n": np.zeros(1)}


def v_next(args, kw, **change):
    a = dict(zip(("M", "Wn", "D", "E", "U", "v", "h"), args), **kw)
    a.update(change)
    positional = [a.pop(k) for k in ("M", "Wn", "D", "E", "U", "v", "h")]
    res = mbdcp.step(*positional, **a)
    assert res.success
    return res.v_next


def one_sided(args, kw, name, i, g, eps=1e-7):
    """(right, left) derivatives of g . v_next in the input ``name``'s entry i."""
    x = np.array(kw[name] if name in kw else args[4], dtype=float)
    e = np.zeros_like(x)
    e[i] = eps
    at = g @ v_next(args, kw)
    if name == "U":
        right = g @ v_next(args[:4] + (x + e,) + args[5:], kw)
        left = g @ v_next(args[:4] + (x - e,) + args[5:], kw)
    else:
        right, left = g @ v_next(args, kw, **{name: x + e}), g @ v_next(args, kw, **{name: x - e})
    return (right - at) / eps, (at - left) / eps


def test_the_reference_names_the_tied_contacts_only():
    args, kw = tied_scene()
    d = mbdcp.derivatives.step(*args, mbdcp.step(*args, **kw), **kw)
    assert d.dependent_contacts.tolist() == [1] and not d.degenerate.size
    args, kw = resting_sphere()
    d = mbdcp.derivatives.step(*args, mbdcp.step(*args, **kw), **kw)
    assert d._d["unused"] and d.dependent_contacts.size == 0  # opposite directions of one contact


def test_the_gap_has_a_kink_there_and_the_others_do_not():
    args, kw = tied_scene()
    g = np.random.default_rng(0).standard_normal(args[5].size)
    right, left = one_sided(args, kw, "psi_n", 0, g)
    assert abs(right - left) > 1.0  # a kink: no gradient in psi_n is a derivative here
    right, left = one_sided(args, kw, "U", 0, g)
    assert abs(right - left) < 1e-6


def _torch_gradient(args, kw, name, g):
    torch = pytest.importorskip("torch")
    import mbdcp.torch as mt
    x = torch.tensor(kw[name] if name in kw else args[4], dtype=torch.float64, requires_grad=True)
    a, k = list(args), dict(kw)
    if name == "U":
        a[4] = x
    else:
        k[name] = x
    (torch.as_tensor(g) @ mt.step(*a, **k)).backward()
    return x.grad.numpy()


def _jax_gradient(args, kw, name, g, jit):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import mbdcp.jax as mj

    def f(x):
        a, k = list(args), dict(kw)
        if name == "U":
            a[4] = x
        else:
            k[name] = x
        return g @ mj.step(*a, **k)
    grad = jax.grad(f)
    return np.asarray((jax.jit(grad) if jit else grad)(kw[name] if name in kw else args[4]))


LAYERS = {"torch": _torch_gradient, "jax": functools.partial(_jax_gradient, jit=False),
          "jax-jit": functools.partial(_jax_gradient, jit=True)}


@pytest.mark.parametrize("layer, rule", [("torch", "c"), ("jax", "c"), ("jax-jit", "c"), ("jax", "jax"),
                                         ("jax-jit", "jax")])
def test_a_layer_warns_for_the_gap_and_is_exact_in_mu(layer, rule, monkeypatch):
    """rule: where mbdcp.jax's backward runs on the CPU, the C core or JAX's own rule."""
    if layer != "torch":
        jax = pytest.importorskip("jax")
        jax.config.update("jax_enable_x64", True)
        from mbdcp._jax import backward as jax_backward
        monkeypatch.setattr(jax_backward, "CPU_BACKWARD", rule)
    args, kw = tied_scene()
    g = np.random.default_rng(0).standard_normal(args[5].size)
    with pytest.warns(DegenerateWarning, match=r"contacts \[1\] \(rows dropped as dependent"):
        LAYERS[layer](args, kw, "psi_n", g)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateWarning)
        grad = LAYERS[layer](args, kw, "U", g)
    for i in range(grad.size):
        right, left = one_sided(args, kw, "U", i, g)
        assert abs(grad[i] - right) <= 1e-5 * max(1.0, abs(right)) and abs(grad[i] - left) <= 1e-5 * max(1.0, abs(left))


def test_opposite_directions_of_one_contact_need_no_warning():
    args, kw = resting_sphere()
    g = np.array([1.0, 0.3, -2.0, 0.1, 0.5, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateWarning)
        grad = _torch_gradient(args, kw, "psi_n", g)
    right, left = one_sided(args, kw, "psi_n", 0, g)
    assert abs(grad[0] - right) <= 1e-5 * max(1.0, abs(right)) and abs(grad[0] - left) <= 1e-5 * max(1.0, abs(left))


def test_the_c_rule_leaves_dropped_candidates_only_when_the_geometry_is_wanted():
    args, kw = tied_scene()
    res = mbdcp.step(*args, **kw)
    arrays = dict(zip(("M", "Wn", "D", "E", "U", "v", "h"), args), **kw)
    outs, cots = (res.v_next, res.p_n, res.beta, res.sigma), (np.ones(args[5].size),)
    assert _native_step.vjp(arrays, {}, outs, cots, ["U", "v"]) is not None
    assert _native_step.vjp(arrays, {}, outs, cots, ["U", "psi_n"]) is None
    assert _native_step.vjp(arrays, {}, outs, cots, ["D"]) is None
