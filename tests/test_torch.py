"""mbdcp.torch: contact solves as torch.autograd.Functions (gradcheck, batches, rollouts).

torch.autograd.gradcheck compares the backward pass with finite differences of the layer on
non-degenerate problems; directional central differences of mbdcp.step itself check the inputs
gradcheck cannot perturb freely (friction directions at sticking contacts move only with their
frame); rollouts are checked against a closed form and against central differences of NumPy
rollouts.
"""
import doctest
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autodiff_cases as C

import mbdcp
import mbdcp.torch as mt
from mbdcp import Status

F64 = torch.float64


def tensor(x, grad=True):
    return torch.tensor(np.asarray(x, dtype=float), dtype=F64, requires_grad=grad)


def gradcheck(fn, inputs):
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)


def close(fd, an, rtol=1e-5, atol=1e-8):
    assert abs(fd - an) <= rtol * max(abs(fd), abs(an)) + atol, (fd, an)


def test_needs_float64_cpu_tensors():
    M, q = torch.eye(2, dtype=torch.float32), torch.tensor([-1.0, 1.0], dtype=F64)
    with pytest.raises(TypeError, match=r"M must be a float64 tensor .* M\.double\(\)"):
        mt.lcp(M, q)
    z = mt.lcp(np.eye(2), q)  # NumPy data are constants
    assert z.dtype == F64 and z.tolist() == [1.0, 0.0] and not z.requires_grad


def test_docstring_examples():
    result = doctest.testmod(mt, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# inputs gradcheck may perturb entry by entry; the others are checked along frame tangents below
FREE = {"sliding": None, "joints": None, "sticking": ("D", "dpsi_f"), "joint-friction": ("D", "Dj")}


@pytest.mark.parametrize("kind", sorted(C.SCENES))
def test_step_gradcheck_in_every_input(kind, rng):
    for data in C.stable(C.SCENES[kind], 2):
        fixed = FREE[kind] or ()
        names = [k for k in data if k not in ("E", "Ej") + fixed]

        def f(*values, data=data, names=names):
            x = dict(data, **dict(zip(names, values)))
            x["M"] = 0.5 * (x["M"] + x["M"].T)  # mbdcp.step takes symmetric mass matrices only
            args, kw = C.split(x, C.STEP_ARGS)
            return tuple(mt.step(*args, **kw, full_output=True))
        gradcheck(f, [tensor(data[k]) for k in names])
        if fixed:
            res = C.solve_step(data)
            weights = C.output_weights(rng, res, mt.StepOutput._fields)
            x = {k: tensor(v) for k, v in data.items()}
            args, kw = C.split(x, C.STEP_ARGS)
            out = mt.step(*args, **kw, full_output=True)
            sum((torch.as_tensor(w) * getattr(out, o)).sum() for o, w in weights.items()).backward()
            grads = {k: v.grad.numpy() for k, v in x.items()}
            for k, t in C.step_tangents(rng, data).items():
                close(C.central_difference(C.solve_step, data, {k: t}, weights), C.directional(grads, {k: t}))


def test_every_output_of_a_plain_step_is_a_tensor_pytorch_accepts_silently():
    # a plain step's absent outputs (p_b, beta_j, sigma_j) are one shared read-only empty array in
    # the solver; PyTorch warns once per process when given one, so the check runs in a fresh one
    code = ("import numpy as np, torch, mbdcp.torch as mt\n"
            "from mbdcp.examples import sphere_on_plane\n"
            "M, Wn, D, E = (np.ascontiguousarray(a) for a in sphere_on_plane()[:4])  # mbdcp.step's plain path\n"
            "mu = torch.tensor([0.2], dtype=torch.float64, requires_grad=True)  # per contact: the plain path\n"
            "v, p = np.array([2.0, 0, 0, 0, 0, 0]), np.array([0, 0, -0.0981, 0, 0, 0])\n"
            "out = mt.step(M, Wn, D, E, mu, v, 0.01, p_ext=p, psi_n=np.zeros(1), full_output=True)\n"
            "assert out.p_b.shape == (0,) and out.beta_j.shape == (0,) and out.sigma_j.shape == (0,)\n"
            "out.v_next[0].backward()\n"
            "print(mu.grad[0].item())\n")
    run = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert abs(float(run.stdout) + 0.0981) < 1e-12


@pytest.mark.parametrize("kind", sorted(C.SCENES))
def test_gradients_of_some_inputs_are_those_of_the_full_vjp(kind, rng):
    # the layer computes only the gradients of the inputs that need one: each of them must be exactly
    # what tracking every input gives, whichever subset is tracked, and the full vjp's (to rounding:
    # a plain step's backward runs in the C core)
    data = C.stable(C.SCENES[kind], 1)[0]
    res = C.solve_step(data)
    args, kw = C.split(data, C.STEP_ARGS)
    d = mbdcp.derivatives.step(*args, res, **kw)
    weights = C.output_weights(rng, res, mt.StepOutput._fields)
    full = d.vjp(**weights)
    names = [k for k in data if k not in ("E", "Ej")]
    every = {}
    for tracked in (names, ["U", "v"], ["M", "h"], ["Wn", "D", "p_ext"], [k for k in names if k in ("Wb", "Dj", "theta")]):
        if not tracked:
            continue
        x = {k: tensor(v, grad=k in tracked) for k, v in data.items()}
        args_t, kw_t = C.split(x, C.STEP_ARGS)
        out = mt.step(*args_t, **kw_t, full_output=True)
        sum((torch.as_tensor(w) * getattr(out, o)).sum() for o, w in weights.items()).backward()
        for k in tracked:
            got = x[k].grad.numpy()
            if tracked is names:
                every[k] = got
                want = np.reshape(np.diag(full[k]) if k == "U" and np.ndim(data[k]) == 2 else full[k], np.shape(data[k]))
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max(initial=1.0), err_msg=k)
            else:
                np.testing.assert_array_equal(got, every[k], err_msg=k)


def test_batch_is_mbdcp_batch_and_gradchecks(rng):
    data = C.stable(C.sliding, 1)[0]
    args, kw = C.split(data, C.STEP_ARGS)
    M, Wn, D, E, U, v, h = args
    B = 4
    vs = v + 0.05 * rng.standard_normal((B, v.size))
    mus = U + 0.01 * rng.uniform(size=(B, U.size))
    out = mt.step(M, Wn, D, E, tensor(mus), tensor(vs), h, **kw)
    want = mbdcp.batch.step(M, Wn, D, E, mus, vs, h, **kw).v_next
    np.testing.assert_array_equal(out.detach().numpy(), want)
    gradcheck(lambda U, v, p: mt.step(M, Wn, D, E, U, v, h, p_ext=p, psi_n=kw["psi_n"]),
              [tensor(mus), tensor(vs), tensor(kw["p_ext"])])
    # a shared input's gradient is the sum over the batch
    p = tensor(kw["p_ext"])
    g = rng.standard_normal((B, v.size))
    (torch.as_tensor(g) * mt.step(M, Wn, D, E, U, vs, h, p_ext=p, psi_n=kw["psi_n"])).sum().backward()
    total = 0
    for i in range(B):
        pi = tensor(kw["p_ext"])
        (torch.as_tensor(g[i]) * mt.step(M, Wn, D, E, U, vs[i], h, p_ext=pi, psi_n=kw["psi_n"])).sum().backward()
        total = total + pi.grad
    np.testing.assert_allclose(p.grad, total, rtol=1e-12, atol=1e-15)
    # options that need mbdcp.step itself: a loop, same answers
    capped = mt.step(M, Wn, D, E, U, vs, h, **kw, max_correction_speed=0.5)
    for i in range(B):
        np.testing.assert_array_equal(capped[i].numpy(), mbdcp.step(*args[:5], vs[i], h, **kw,
                                                                       max_correction_speed=0.5).v_next)
    with pytest.raises(ValueError, match="leading batch axis of 3, but v has B = 4"):
        mt.step(M, Wn, D, E, U, vs, h, p_ext=np.zeros((3, v.size)))


def test_lcp_gradcheck_and_batch(rng):
    data, _ = C.planted_lcp(6, 1)
    gradcheck(mt.lcp, [tensor(data["M"]), tensor(data["q"])])
    qs = data["q"] + 0.1 * rng.standard_normal((5, 6))
    out = mt.lcp(data["M"], tensor(qs))
    np.testing.assert_array_equal(out.detach().numpy(), mbdcp.batch.lemke(data["M"], qs).z)
    Ms = np.stack([data["M"] + 0.1 * i * np.eye(6) for i in range(5)])
    gradcheck(mt.lcp, [tensor(Ms), tensor(qs)])


def test_lcp_gradient_of_q_or_m_alone_is_that_of_the_full_vjp(rng):
    data, _ = C.planted_lcp(6, 2)
    gz = rng.standard_normal(6)
    full = mbdcp.derivatives.lcp(data["M"], data["q"], mbdcp.lemke(data["M"], data["q"])).vjp(gz)
    for tracked in ("q", "M", "Mq"):
        M, q = tensor(data["M"], grad="M" in tracked), tensor(data["q"], grad="q" in tracked)
        (mt.lcp(M, q) * torch.as_tensor(gz)).sum().backward()
        assert (M.grad is None) == ("M" not in tracked) and (q.grad is None) == ("q" not in tracked)
        for x, want in ((M, full.M), (q, full.q)):
            if x.grad is not None:
                np.testing.assert_array_equal(x.grad.numpy(), want)


def test_ccp_gradcheck():
    data = C.ccp_particle()
    args, kw = C.split(data, C.CCP_ARGS)
    gradcheck(lambda A, *a: mt.ccp(0.5 * (A + A.T), *a, **kw, **C.CCP_SOLVE, full_output=True)[:2],
              [tensor(a) for a in args])
    pile = C.stable_piles(1)[0]
    args, kw = C.split(pile, C.CCP_ARGS)
    names = ("mu", "v", "p_ext", "psi_n", "dpsi_t")

    def f(m, *values):
        x = dict(pile, **dict(zip(names, values)))
        x["M"] = torch.diag(m)  # the pile's M is diagonal; perturbed along its diagonal
        a, k = C.split(x, C.CCP_ARGS)
        return tuple(mt.ccp(*a, **k, **C.CCP_SOLVE, full_output=True)[:2])
    gradcheck(f, [tensor(np.diag(pile["M"]))] + [tensor(pile[k]) for k in names])


def test_failed_solve_raises_naming_the_status():
    M, q = -np.eye(2), tensor([-1.0, -1.0])
    with pytest.raises(mt.SolveError, match="RAY_TERMINATION") as err:
        mt.lcp(M, q)
    assert err.value.status == Status.RAY_TERMINATION and err.value.instance is None
    with pytest.raises(mt.SolveError, match="instance 2 of the batch") as err:
        mt.lcp(M, tensor([[1.0, 1.0], [2.0, 1.0], [-1.0, 1.0]]))
    assert err.value.instance == 2
    args, kw = C.unconverged_ccp()
    with pytest.raises(mt.SolveError, match="MAX_ITERATIONS"):
        mt.ccp(*args, **kw)


def test_degenerate_points_warn_and_give_the_documented_side():
    M, Wn, D, E, h = C.planar_particle()
    lift = tensor([0.0, 0.0])
    v = mt.step(M, Wn, D, E, 0.5, np.zeros(2), h, p_ext=lift, psi_n=[0.0])  # touching, unloaded: grazing
    with pytest.warns(mt.DegenerateWarning, match=r"contacts \[0\] \(grazing"):
        v[1].backward()
    assert lift.grad.tolist() == [0.0, 1.0]  # separated: the side on which the contact opens
    mu = tensor(0.5)
    v = mt.step(M, Wn, D, E, mu, np.zeros(2), h, p_ext=[0.5 * C.G * h, -C.G * h], psi_n=[0.0])  # cone's edge
    with pytest.warns(mt.DegenerateWarning, match="stick-slip"):
        v[0].backward()
    assert mu.grad.item() == 0.0  # sticking: exact as mu grows
    mu = tensor(0.6)
    v = mt.step(M, Wn, D, E, mu, np.zeros(2), h, p_ext=[0.5 * C.G * h, -C.G * h], psi_n=[0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v[0].backward()


def test_sphere_rollout_matches_closed_form():
    M, Wn, D, E = C.sphere_data()
    h = C.SPHERE_H
    mu = tensor(0.2)
    v, z = tensor([C.SPHERE_V0, 0, 0, 0, 0, 0]), torch.tensor(1.0, dtype=F64)
    v0 = v
    for _ in range(C.SPHERE_STEPS):
        v = mt.step(M, Wn, D, E, mu, v, h, p_ext=[0, 0, -C.G * h, 0, 0, 0], psi_n=(z - 1.0).reshape(1))
        z = z + h * v[2]
    v[0].backward()
    close(mu.grad.item(), C.sphere_closed_form_gradient(), rtol=1e-10)
    np.testing.assert_allclose(v0.grad, [1, 0, 0.2, 0, 0, 0], atol=1e-10)
    # a batch of spheres with their own mu: one rollout, every gradient
    mus = tensor([[0.1], [0.15], [0.2]])
    v = torch.tensor([[C.SPHERE_V0, 0, 0, 0, 0, 0]] * 3, dtype=F64)
    for _ in range(C.SPHERE_STEPS):
        v = mt.step(M, Wn, D, E, mus, v, h, p_ext=[0, 0, -C.G * h, 0, 0, 0], psi_n=[0.0])
    v[:, 0].sum().backward()
    np.testing.assert_allclose(mus.grad.ravel(), C.sphere_closed_form_gradient(), rtol=1e-10)


def test_box_rollout_matches_central_differences():
    mu0, m0 = 0.3, 1.2
    mu, m = tensor(mu0), tensor(m0)
    b = torch.tensor([[-C.BOX_HALF[0], -C.BOX_HALF[1]], [C.BOX_HALF[0], -C.BOX_HALF[1]]], dtype=F64)
    J = m * float(((2 * C.BOX_HALF) ** 2).sum()) / 12
    M = torch.diag(torch.stack([m, m, J]))
    q, v = torch.tensor(C.BOX_Q0, dtype=F64), torch.zeros(3, dtype=F64)
    for k in range(C.BOX_STEPS):
        c, s = torch.cos(q[2]), torch.sin(q[2])
        rx, ry = b[:, 0] * c - b[:, 1] * s, b[:, 0] * s + b[:, 1] * c
        Wn = torch.stack([torch.zeros(2, dtype=F64), torch.ones(2, dtype=F64), rx])
        t = torch.stack([torch.ones(2, dtype=F64), torch.zeros(2, dtype=F64), -ry])
        D = torch.stack([t[:, 0], -t[:, 0], t[:, 1], -t[:, 1]], dim=1)
        F = C.box_push(k)
        p_ext = C.BOX_H * torch.stack([torch.tensor(F, dtype=F64), -m * C.G, torch.tensor(-C.BOX_PUSH_HEIGHT * F, dtype=F64)])
        v = mt.step(M, Wn, D, C.BOX_E, mu, v, C.BOX_H, p_ext=p_ext, psi_n=q[1] + ry)
        q = q + C.BOX_H * v
    np.testing.assert_allclose(q.detach().numpy(), C.box_rollout(mu0, m0), rtol=1e-12, atol=1e-14)
    dmu, dm = C.box_fd(mu0, m0)
    for i in range(3):
        gmu, gm = torch.autograd.grad(q[i], (mu, m), retain_graph=True)
        close(dmu[i], gmu.item())
        close(dm[i], gm.item())


def test_inputs_changed_in_place_before_backward_are_an_error():
    M, Wn, D, E = C.sphere_data()
    v = tensor([2.0, 0, 0, 0, 0, 0])
    p = tensor([0, 0, -C.G * 0.01, 0, 0, 0])
    out = mt.step(M, Wn, D, E, 0.2, v, 0.01, p_ext=p, psi_n=[0.0])
    with torch.no_grad():
        p[2] = 0.0
    with pytest.raises(RuntimeError, match="input p_ext was modified in place"):
        out[0].backward()
    out = mt.step(M, Wn, D, E, 0.2, v, 0.01, p_ext=[0, 0, -C.G * 0.01, 0, 0, 0], psi_n=[0.0])
    with torch.no_grad():
        out[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_torch_func_transforms_are_refused_clearly_and_their_leftover_tensors_accepted():
    M = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=F64)
    with pytest.raises(RuntimeError, match=r"mbdcp.torch.lcp cannot run inside torch.func's transforms"):
        torch.func.grad(lambda q: mt.lcp(M, q)[0])(torch.tensor([-5.0, 6.0], dtype=F64))
    # a tensor kept from inside a finished torch.func.grad is still a functorch wrapper: the layer's
    # graph must reach the tensor it wraps: q = (-3 x0 - 2, x1 + 5), z0 = -q0 / 2 = (3 x0 + 2) / 2, z1 = 0
    kept = []

    def f(x):
        kept.append(x * torch.tensor([-3.0, 1.0], dtype=F64) + torch.tensor([-2.0, 5.0], dtype=F64))
        return kept[-1].sum()
    x = tensor([1.0, 1.0])
    torch.func.grad(f)(x)
    assert torch._C._functorch.is_functorch_wrapped_tensor(kept[0])
    z = mt.lcp(M, kept[0])
    z[0].backward()
    np.testing.assert_allclose(z.detach().numpy(), [2.5, 0.0], rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), [1.5, 0.0], rtol=1e-14)


def test_the_python_apply_path_gives_the_same_gradients(monkeypatch):
    # PyTorch's Python Function.apply (taken for functorch tensors, or on a PyTorch without the
    # check) and its C++ apply (taken otherwise) build the same graph
    def grads():
        mu, v = tensor(0.2), tensor([2.0, 0, 0, 0, 0, 0])
        out = mt.step(*C.sphere_data(), mu, v, 0.01, p_ext=[0, 0, -C.G * 0.01, 0, 0, 0], psi_n=[0.0])
        return [g.numpy() for g in torch.autograd.grad(out @ tensor([1.0, 2, 3, 0, 0, 0], grad=False), (mu, v))]
    direct = grads()
    monkeypatch.setattr(mt, "_wrapped", lambda x: True)
    wrapped = grads()
    for a, b in zip(direct, wrapped):
        np.testing.assert_array_equal(a, b)
    assert abs(direct[0]).max() > 0.0


def test_constants_stay_out_of_the_graph_but_are_still_checked():
    M, Wn, D, E = (torch.tensor(a, dtype=F64) for a in C.sphere_data())
    mu, v = tensor(0.2), tensor([2.0, 0, 0, 0, 0, 0])
    p = torch.tensor([0, 0, -C.G * 0.01, 0, 0, 0], dtype=F64)
    want = mbdcp.step(*C.sphere_data(), 0.2, [2.0, 0, 0, 0, 0, 0], 0.01, p_ext=p.numpy(), psi_n=[0.0]).v_next
    with torch.no_grad():  # no graph at all, the same numbers
        out = mt.step(M, Wn, D, E, mu, v, 0.01, p_ext=p, psi_n=[0.0])
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), want)
    # a constant tensor (no gradient wanted) changed in place before backward is an error too
    out = mt.step(M, Wn, D, E, mu, v, 0.01, p_ext=p, psi_n=[0.0])
    with torch.no_grad():
        M[0, 0] = 2.0
    with pytest.raises(RuntimeError, match="input M was modified in place"):
        out[0].backward()
    # a second derivative raises instead of being silently zero
    M[0, 0] = 1.0
    out = mt.step(M, Wn, D, E, mu, v, 0.01, p_ext=p, psi_n=[0.0])
    (g,) = torch.autograd.grad(out[0] ** 2, mu, create_graph=True)  # its cotangent depends on mu
    with pytest.raises(RuntimeError, match="differentiate twice"):
        g.backward()


def test_a_column_q_is_named_as_a_batch_of_size_one_problems():
    M = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match=r"q of shape \(2, 1\) is read as a batch .* M must have shape"):
        mt.lcp(M, torch.tensor([[-5.0], [-6.0]], dtype=torch.float64))


def test_lcp_gradient_of_a_sum_is_mbdcp_derivatives(rng):
    # the gradient of z.sum() reaches the layer as a broadcast (stride 0) tensor
    data, _ = C.planted_lcp(7, 2)
    M, q = data["M"], data["q"]
    want = mbdcp.derivatives.lcp(M, q, mbdcp.lemke(M, q)).vjp(np.ones(7))
    Mt, qt = tensor(M), tensor(q)
    gM, gq = torch.autograd.grad(mt.lcp(Mt, qt).sum(), (Mt, qt))
    np.testing.assert_array_equal(gq.numpy(), want.q)
    np.testing.assert_array_equal(gM.numpy(), want.M)


def test_a_rolling_sphere_steps_without_false_failures():
    # a step not verified raises: 25 steps of the sphere that slides, then rolls
    M, Wn, D, E, mu, v, h, p_ext, psi_n = C.rolling_sphere(8)
    t = lambda x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
    v = t(v)
    for _ in range(25):
        v = mt.step(t(M), t(Wn), t(D), t(E), t(mu), v, h, p_ext=t(p_ext), psi_n=t(psi_n))
    v = v.detach().numpy()
    assert abs(v[0] - 2.0 * 5.0 / 7.0) < 1e-9 and abs(v[4] - v[0]) < 1e-9
