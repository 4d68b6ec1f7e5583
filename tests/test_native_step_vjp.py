"""The reverse mode of a plain time step in the C core (mbdcp.derivatives._native_step), behind the
backward passes of mbdcp.jax and mbdcp.torch.

Wherever mbdcp.derivatives.step (the reference) is one linear system (no degenerate point, no
impulse held as indeterminate, not singular) the C rule must decide, and agree with the
reference to rounding; everywhere else it must decide nothing, so that the reference warns or
raises.
"""
import warnings

import autodiff_cases as C
import numpy as np
import pytest

import mbdcp
from mbdcp.derivatives import _native_step
from mbdcp.tools.testing import random_scene

NAMES = C.STEP_ARGS + ("p_ext", "psi_n")
OUTS = ("v_next", "p_n", "beta", "sigma")


def plain(seed, kind):
    """A random plain step: fast bodies (mostly sliding), slow ones with much friction on the ground
    (mostly sticking), or bodies at rest on it (sticking, often at degenerate points)."""
    if kind == "sliding":
        s = random_scene(2 + seed % 5, 3 + seed % 11, seed=seed, n_d=(4, 8))
    else:
        s = random_scene(1 + seed % 3, 2 + seed % 9, seed=seed, n_d=(2, 8), mu=(0.3, 1.5), gap=(0.0, 0.0))
        s.v *= 0.02 if kind == "sticking" else 0.0
    data = dict(zip(C.STEP_ARGS, s.args()))
    data.update(s.kwargs())
    data["U"] = np.asarray(data["U"], float)
    return data


def reference(data, res, cots):
    """(the reference's gradients, or None where it is not one linear system: degenerate,
    indeterminate or singular; or where it holds a dependence on other contacts' rows, which the
    layers name when gradients in the gaps or directions are asked for, as NAMES asks)."""
    args, kw = C.split(data, C.STEP_ARGS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = mbdcp.derivatives.step(*args, res, **kw)
    except ValueError:
        return None
    if d.degenerate.size or d.indeterminate or d.dependent_contacts.size:
        return None
    return d.vjp(**cots)


def assert_close(got, want, names, rtol=1e-10):
    for k in names:
        w = np.asarray(want[k], dtype=float)
        np.testing.assert_allclose(got[k], w, rtol=rtol, atol=rtol * np.abs(w).max(initial=1e-300), err_msg=k)


@pytest.mark.parametrize("kind", ["sliding", "sticking", "resting"])
def test_decides_the_reference_s_linear_points_and_agrees(kind, rng):
    decided = left = 0
    modes = set()
    for seed in range(60):
        data = plain(seed, kind)
        res = C.solve_step(data)
        cots = C.output_weights(rng, res, OUTS)
        want = reference(data, res, cots)
        got = _native_step.vjp(data, {}, [getattr(res, o) for o in OUTS], [cots[o] for o in OUTS], NAMES)
        assert (got is None) == (want is None), f"seed {seed}: the C rule and the reference disagree on deciding"
        if got is None:
            left += 1
            continue
        assert_close(got, want, [k for k in NAMES if k != "E"])
        assert "E" not in got  # a grouping: no gradient
        decided += 1
        args, kw = C.split(data, C.STEP_ARGS)
        modes.update(mbdcp.derivatives.step(*args, res, **kw).mode.tolist())
    assert decided >= 30
    assert modes >= {"sliding", "separated"} if kind == "sliding" else {"sticking"}
    if kind == "resting":
        assert left >= 5  # degenerate points occur at rest: they must be left to the reference


def test_degenerate_points_are_left_to_the_reference():
    """A particle pushed with exactly mu m g (sticking at the edge of its friction cone) and one at
    zero gap without weight (grazing): points the random scenes almost never hit."""
    M, Wn, D, E, h = C.planar_particle()
    for p_ext, kind in ((np.array([0.5 * C.G * h, -C.G * h]), "stick-slip"), (np.zeros(2), "grazing")):
        data = {"M": M, "Wn": Wn, "D": D, "E": E, "U": np.array([0.5]), "v": np.zeros(2), "h": h, "p_ext": p_ext,
                "psi_n": np.zeros(1)}
        res = C.solve_step(data)
        args, kw = C.split(data, C.STEP_ARGS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert kind in mbdcp.derivatives.step(*args, res, **kw).degenerate_kind
        cots = [np.ones(np.shape(getattr(res, o))) for o in OUTS]
        assert _native_step.vjp(data, {}, [getattr(res, o) for o in OUTS], cots, NAMES) is None, kind


def _resting(scales, sliding=False):
    """A unit particle on the floor on len(scales) contacts whose rows are the planar particle's
    scaled, sharing its weight: at rest, or sliding at 1 m/s (mu = 0.5). Not Lemke's solution (a
    basic one puts the weight on one contact), but a solution another solver may return."""
    M, Wn, D, E, h = C.planar_particle()
    k, weight, mu = len(scales), C.G * h, 0.5
    s = np.asarray(scales, float)
    data = {"M": M, "Wn": np.hstack([c * Wn for c in s]), "D": np.hstack([c * D for c in s]),
            "E": np.kron(np.eye(k), E), "U": np.full(k, mu), "v": np.array([1.0 if sliding else 0.0, 0.0]),
            "h": h, "p_ext": np.array([0.0, -weight]), "psi_n": np.zeros(k)}
    p_n = weight / (k * s)
    if not sliding:
        return data, (np.zeros(2), p_n, np.zeros(2 * k), np.zeros(k))
    v_x = 1.0 - mu * weight
    beta = np.zeros(2 * k)
    beta[1::2] = mu * p_n  # against the motion
    return data, (np.array([v_x, 0.0]), p_n, beta, s * v_x)


def test_dependent_rows_are_left_to_the_reference():
    """One contact: decided. Two parallel sticking contacts: the reference holds one normal impulse
    at its value (indeterminate), its choice. Two parallel sliding ones: the system is singular
    and the reference raises."""
    cots = (np.ones(2), None, None, None)
    for scales, sliding, decided in (([1.0], False, True), ([1.0], True, True), ([1.0, 2.0], False, False),
                                     ([1.0, 2.0], True, False)):
        data, outs = _resting(scales, sliding)
        assert (_native_step.vjp(data, {}, outs, cots, NAMES) is not None) == decided, (scales, sliding)
        res = mbdcp.StepResult(success=True, status=mbdcp.Status.SOLVED, message="", v_next=outs[0], p_n=outs[1],
                               beta=outs[2], sigma=outs[3], p_b=np.zeros(0), beta_j=np.zeros(0),
                               sigma_j=np.zeros(0), pivots=0, residual=0.0)
        if not decided:
            args, kw = C.split(data, C.STEP_ARGS)
            if sliding:
                with pytest.raises(ValueError, match="dependent"):
                    mbdcp.derivatives.step(*args, res, **kw)
            else:
                assert mbdcp.derivatives.step(*args, res, **kw).indeterminate


def test_steps_that_are_not_plain_are_left_to_the_reference():
    data = plain(1, "sliding")
    res = C.solve_step(data)
    outs, cots = [getattr(res, o) for o in OUTS], [np.ones(np.shape(getattr(res, o))) for o in OUTS]
    assert _native_step.vjp(data, {}, outs, cots, NAMES) is not None
    assert _native_step.vjp(data, {"degenerate_tol": 1e-7}, outs, cots, NAMES) is not None
    for options in ({"baumgarte": 0.5}, {"max_correction_speed": 1.0}, {"warm_start": None}):
        assert _native_step.vjp(data, options, outs, cots, NAMES) is None, options
    assert _native_step.vjp(dict(data, dpsi_n=np.zeros(len(res.p_n))), {}, outs, cots, NAMES) is None
    assert _native_step.vjp(dict(data, U=np.diag(np.broadcast_to(data["U"], len(res.p_n)))), {}, outs, cots,
                            NAMES) is None
    with pytest.raises(ValueError, match="degenerate_tol"):
        _native_step.vjp(data, {"degenerate_tol": -1.0}, outs, cots, NAMES)


def test_torch_backward_of_a_plain_step_runs_in_c(monkeypatch, rng):
    """mbdcp.torch's backward of a non-degenerate plain step never builds mbdcp.derivatives.step, and
    gives its gradients; at a degenerate point it does, and warns."""
    torch = pytest.importorskip("torch")
    import mbdcp.torch as mt
    calls = []
    real = mbdcp.derivatives.step

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(mbdcp.derivatives, "step", counted)
    data = C.stable(lambda s: plain(s, "sliding"), 1)[0]
    res = C.solve_step(data)
    cots = C.output_weights(rng, res, OUTS)
    x = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k != "E") for k, v in data.items()}
    calls.clear()  # choosing a stable scene took derivatives
    args, kw = C.split(x, C.STEP_ARGS)
    out = mt.step(*args, **kw, full_output=True)
    sum((torch.as_tensor(cots[o]) * getattr(out, o)).sum() for o in OUTS).backward()
    assert not calls
    want = reference(data, res, cots)
    assert_close({k: x[k].grad.numpy() for k in NAMES if k != "E"}, want, [k for k in NAMES if k != "E"])
    M, Wn, D, E, h = C.planar_particle()  # grazing: no weight on a contact at zero gap
    mu = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    with pytest.warns(mt.DegenerateWarning, match="grazing"):
        mt.step(M, Wn, D, E, mu, np.zeros(2), h, p_ext=np.zeros(2), psi_n=np.zeros(1))[0].backward()
    assert calls
