"""What mbdcp.jax and mbdcp.torch share, tested without either framework: the host solves and
vector-Jacobian products of mbdcp.derivatives._layers (one problem and batches), the derivative of
mbdcp.ccp in the moving-surface velocities dpsi_t, and the packaging (``import mbdcp`` stays
NumPy-only; the extras exist)."""
import os
import subprocess
import sys

import autodiff_cases as C
import numpy as np
import pytest

import mbdcp
from mbdcp.derivatives import _layers as ad

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
STEP, LCP, CCP = ad.PROBLEMS["step"], ad.PROBLEMS["lcp"], ad.PROBLEMS["ccp"]


def run_python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)


def test_import_mbdcp_imports_neither_framework():
    out = run_python("import sys, mbdcp; print(sorted({m.split('.')[0] for m in sys.modules} & {'jax', 'torch'}))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("layer, extra", [("jax", "jax"), ("torch", "torch")])
def test_missing_framework_names_the_extra(layer, extra):
    # the framework made unimportable: the layer's import error says what to install
    out = run_python(f"import sys; sys.modules['{extra}'] = None\n"
                     f"try:\n    import mbdcp.{layer}\nexcept ModuleNotFoundError as e:\n    print(e)")
    assert f"pip install 'mbdcp[{extra}]'" in out.stdout, out.stdout + out.stderr


def test_pyproject_has_the_extras():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    extras = project["optional-dependencies"]
    assert any(d.startswith("jax") for d in extras["jax"]) and any(d.startswith("torch") for d in extras["torch"])
    assert not any(d.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip() in ("jax", "jaxlib", "torch")
                   for d in project["dependencies"])


# ---- host solves and vjps ----------------------------------------------------------------------

def test_step_vjp_matches_central_differences(rng):
    data = C.stable(C.joint_friction, 1)[0]
    res = C.solve_step(data)
    outs, extras = ad.forward(STEP, data, {})
    for o, x in zip(STEP.outputs, outs):
        np.testing.assert_array_equal(x, getattr(res, o))
    weights = C.output_weights(rng, res, STEP.outputs)
    grads = ad.backward(STEP, data, {}, outs, extras, [weights[o] for o in STEP.outputs])
    assert all(np.shape(grads[k]) == np.shape(v) for k, v in data.items())
    t = C.step_tangents(rng, data)
    fd = C.central_difference(C.solve_step, data, t, weights)
    assert abs(fd - C.directional(grads, t)) <= 1e-6 * abs(fd)


def test_gradients_take_the_shape_of_their_input(rng):
    data = C.stable(C.sliding, 1)[0]
    data["U"] = np.full(data["U"].shape, float(data["U"][0]))  # one mu for every contact: three spellings
    outs, extras = ad.forward(STEP, data, {})
    cots = [rng.standard_normal(np.shape(o)) for o in outs]
    g = ad.backward(STEP, data, {}, outs, extras, cots)["U"]  # (n_c,)
    for U, want in ((data["U"][0], g.sum()), (np.diag(data["U"]), np.diag(g))):
        got = ad.backward(STEP, dict(data, U=U), {}, outs, extras, cots)["U"]
        assert np.shape(got) == np.shape(U)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_batch_layout_shares_and_broadcasts(rng):
    data = C.stable(C.sliding, 1)[0]
    base = {k: np.ndim(v) for k, v in data.items()}
    vs = data["v"] + 0.05 * rng.standard_normal((3, 1, data["v"].size))  # batch axes (3, 1) ...
    mus = data["U"] + 0.01 * rng.uniform(size=(1, 2, data["U"].size))  # ... and (1, 2): a (3, 2) batch
    x = dict(data, v=vs, U=mus)
    outs, extras = ad.forward(STEP, x, {}, base)
    assert outs[0].shape == (3, 2, data["v"].size)
    for i in range(3):
        for j in range(2):
            np.testing.assert_array_equal(outs[0][i, j], C.solve_step(dict(data, v=vs[i, 0], U=mus[0, j])).v_next)
    cots = [rng.standard_normal(o.shape) for o in outs]
    per = ad.backward(STEP, x, {}, outs, extras, cots, base, reduce=False)
    summed = ad.backward(STEP, x, {}, outs, extras, cots, base, reduce=True)
    assert per["M"].shape == (3, 2) + data["M"].shape and summed["M"].shape == data["M"].shape
    assert per["v"].shape == (3, 2, data["v"].size) and summed["v"].shape == vs.shape
    np.testing.assert_allclose(summed["M"], per["M"].sum(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(summed["v"], per["v"].sum(axis=1, keepdims=True), rtol=1e-12)
    one = ad.backward(STEP, dict(data, v=vs[2, 0], U=mus[0, 1]), {}, [o[2, 1] for o in outs], (),
                      [c[2, 1] for c in cots])
    for k in data:
        np.testing.assert_allclose(per[k][2, 1], one[k], rtol=1e-12, atol=1e-15)


def test_jacobian_by_mapped_cotangents_uses_one_derivative(rng):
    data, _ = C.planted_lcp(5, 0)
    base = {"M": 2, "q": 1}
    outs, extras = ad.forward(LCP, data, {}, base)
    grads = ad.backward(LCP, data, {}, outs, extras, [np.eye(5)], base, reduce=False)  # only cotangents batched
    d = mbdcp.derivatives.lcp(data["M"], data["q"], C.solve_lcp(data))
    np.testing.assert_allclose(grads["q"], d.dz_dq, rtol=1e-12, atol=1e-14)


def test_failed_batch_instance_is_named():
    M = np.eye(2) * -1.0
    qs = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0]])
    with pytest.raises(ad.SolveError, match="RAY_TERMINATION at instance 1 of the batch \\(2 instances failed\\)"):
        ad.forward(LCP, {"M": M, "q": qs}, {}, {"M": 2, "q": 1})


def test_torch_batch_rules():
    shapes = {"M": (6, 6), "Wn": (6, 2), "D": (6, 4), "E": (4, 2), "U": (2,), "v": (5, 6), "h": (), "p_ext": (5, 6)}
    assert ad.torch_batch_ndims(STEP, shapes) == {"M": 2, "Wn": 2, "D": 2, "E": 2, "U": 1, "v": 1, "h": 0,
                                                   "p_ext": 1}
    assert ad.torch_batch_ndims(STEP, dict(shapes, v=(6,), p_ext=(6,))) is None
    assert ad.torch_batch_ndims(STEP, dict(shapes, U=(5, 2), h=(5,)))["U"] == 1
    with pytest.raises(ValueError, match="leading batch axis of 4, but v has B = 5"):
        ad.torch_batch_ndims(STEP, dict(shapes, M=(4, 6, 6)))
    ccp_shapes = {"M": (6, 6), "Wn": (6, 2), "Wt": (6, 4), "mu": (), "v": (3, 6), "h": (), "dpsi_t": (2, 2)}
    assert ad.torch_batch_ndims(CCP, ccp_shapes)["dpsi_t"] == 2  # (n_c, 2): shared
    assert ad.torch_batch_ndims(CCP, dict(ccp_shapes, dpsi_t=(3, 4)))["dpsi_t"] == 1  # (B, 2 n_c)


# ---- mbdcp.derivatives.ccp in dpsi_t -----------------------------------------------------------

def test_ccp_derivative_in_surface_velocities(rng):
    for data in C.stable_piles(2):
        args, kw = C.split(data, C.CCP_ARGS)
        d = mbdcp.derivatives.ccp(*args, C.solve_ccp(data), **kw)
        t = 0.01 * rng.standard_normal(data["dpsi_t"].shape)
        j = d.jvp(dpsi_t=t)
        weights = {"v_next": rng.standard_normal(data["v"].shape), "gamma": rng.standard_normal((t.shape[0], 3))}
        fd = C.central_difference(C.solve_ccp, data, {"dpsi_t": t}, weights)
        an = sum(float(np.sum(weights[o] * j[o])) for o in weights)
        assert abs(fd - an) <= 1e-5 * max(abs(fd), abs(an)), (fd, an)
        g = d.vjp(**weights)
        assert g["dpsi_t"].shape == t.shape
        assert abs(float(np.sum(g["dpsi_t"] * t)) - an) <= 1e-11 * abs(an)  # adjoint of jvp
        np.testing.assert_allclose(d.jvp(dpsi_t=t.ravel())["v_next"], j["v_next"], rtol=1e-14)  # (2 n_c,) form
    d = mbdcp.derivatives.ccp(*args, C.solve_ccp({k: v for k, v in data.items() if k != "dpsi_t"}),
                              **{k: v for k, v in kw.items() if k != "dpsi_t"})
    assert "dpsi_t" not in d.vjp(v_next=np.ones(data["v"].size))
    with pytest.raises(TypeError, match="unknown tangent 'dpsi_t'"):
        d.jvp(dpsi_t=t)
