"""Cost of a gradient through the differentiable layers mbdcp.jax and mbdcp.torch, against a solve
and against mbdcp.derivatives called directly: the layers' own overhead.

For random spatial scenes with n = 10-400 contacts (4 friction directions each; n/2 bodies), the
loss is <g, v_next> of one time step, differentiated in the friction coefficients U and the initial
velocity v:

- solve: mbdcp.step; derivative: mbdcp.derivatives.step on its result plus one vjp (what a
  backward pass needs at the least);
- JAX: jax.jit of the loss (forward: the solve as a host callback; all arrays are arguments of
  the jitted function) and, alone, the jitted backward pass (the function jax.vjp returns);
- PyTorch: mbdcp.torch.step on float64 tensors (forward: the layer's call alone, as JAX's eager
  one; the loss's dot product is the user's code, not the layer's) and torch.autograd.grad of the
  loss on its graph (backward, alone);
- overhead: a pass's wall time minus the time it spent inside mbdcp.step (forward) or
  mbdcp.derivatives.step and its vjp (backward), measured in the same call. A pass that never
  enters mbdcp's Python is charged the time of that work measured apart instead: the jitted
  forward of a plain step (an XLA custom call into the C core) mbdcp.step's, and the backward of
  a plain step (computed in the C core, in both frameworks) mbdcp.derivatives.step's plus its
  vjp's; such an overhead is negative when the pass is
  faster than that work from NumPy;
- floors: the same overhead of a bare torch.autograd.Function, or a bare jax.custom_vjp whose
  passes are host callbacks, that calls mbdcp.step in its forward and mbdcp.derivatives.step and
  the vjp in its backward, nothing else: what PyTorch's autograd and JAX's callbacks themselves
  cost around that work (their code runs slower after that work has filled the caches, so a floor
  is well above the cost of an empty pass);
- empty passes: the gradient through a torch.autograd.Function, and the backward of a
  jax.custom_vjp that is one host callback, each doing nothing, timed warm and right after a pass
  over 32 MB (as a derivative's work leaves the caches): the frameworks' own cost, the least any
  layer's backward can add on this machine.

Goals: a layer's backward <= its forward at n >= 50; overhead <= 20 us per call. A second table
gives the overhead on the smallest problem (the sliding sphere: one contact), where it dominates;
a third the LCP layer at n = 10: under jax.jit, the XLA custom call into the C core against the
host callback it replaces and a jitted no-op.
Timed on one BLAS thread and one PyTorch thread (the C solver is single-threaded).

    python benchmarks/bench_autodiff.py [--quick]
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import time
import warnings

import numpy as np
from common import best_time, print_table

import mbdcp
from mbdcp.examples import sphere_on_plane
from mbdcp.testing import random_scene

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    import mbdcp.jax
except ImportError:
    jax = None
try:
    import torch

    torch.set_num_threads(1)
    import mbdcp.torch
except ImportError:
    torch = None


def scene(n):
    """A random scene's step: its arrays C-contiguous, as a user's usually are (mbdcp.step then takes
    its fast path, which the custom call and the C backward are charged)."""
    s = random_scene(max(2, n // 2), n, seed=n, n_d=(4, 4))
    args = tuple(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in s.args())
    return args, {k: np.ascontiguousarray(a) for k, a in s.kwargs().items()}


def sphere():
    M, Wn, D, E, U = sphere_on_plane()
    h = 0.01
    return (M, Wn, D, E, U, np.array([2.0, 0, 0, 0, 0, 0]), h), {"p_ext": np.array([0, 0, -9.81 * h, 0, 0, 0]),
                                                                  "psi_n": np.zeros(1)}


class Inner:
    """Time spent inside mbdcp's own work during a layer call: mbdcp.step (forward), and
    mbdcp.derivatives.step plus its vjp (backward). A call's overhead is its wall time minus this,
    measured in the same call, so a slower moment of the shared machine cancels out."""

    def __init__(self):
        self.seconds = 0.0
        self._saved = []

    def _timed(self, fn):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t0
        return wrapper

    def __enter__(self):
        from mbdcp.derivatives.step import StepDerivative
        # the vjp's work is StepDerivative._vjp (what vjp calls, and what the layers call directly)
        for owner, name in ((mbdcp, "step"), (mbdcp.derivatives, "step"), (StepDerivative, "_vjp")):
            self._saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, self._timed(getattr(owner, name)))
        return self

    def __exit__(self, *exc):
        for owner, name, fn in reversed(self._saved):
            setattr(owner, name, fn)


def timed(fn, inner, repeat, solve=0.0):
    """(best wall time, best overhead = wall time - time inside mbdcp, last result) over the runs. A
    pass that never enters mbdcp's Python (an XLA custom call into the C core) is charged ``solve``,
    the solve's own time measured apart, as its time inside mbdcp."""
    best, over, out, total, k = np.inf, np.inf, None, 0.0, 0
    while k < repeat or (total < 0.2 and k < 1000):
        inner.seconds = 0.0
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        inside = inner.seconds if inner.seconds > 0.0 else solve
        best, over, total, k = min(best, dt), min(over, dt - inside), total + dt, k + 1
    return best, over, out


def time_numpy(args, kw, g, repeat):
    t_solve, res = best_time(lambda: mbdcp.step(*args, **kw), repeat=repeat)
    assert res.success

    def derivative():
        d = mbdcp.derivatives.step(*args, res, **kw)
        return d.vjp(v_next=g)
    t_deriv, grad = best_time(derivative, repeat=repeat)
    return t_solve, t_deriv, grad


def time_jax(args, kw, g, repeat, inner, solve):
    """{name: (wall time, overhead)} for the eager forward, the jitted forward and the jitted
    backward alone (the function jax.vjp returns, applied under jit); and the gradient in U."""
    M, Wn, D, E, U, v, h = args
    keys = sorted(kw)

    def loss(M, Wn, D, E, U, v, g, *extra):
        return g @ mbdcp.jax.step(M, Wn, D, E, U, v, h, **dict(zip(keys, extra)))
    xs = [jnp.asarray(a) for a in (M, Wn, D, E, U, v, g)] + [jnp.asarray(kw[k]) for k in keys]
    fwd = jax.jit(loss)
    fwd(*xs).block_until_ready()
    _, pullback = jax.vjp(lambda U, v: loss(*xs[:4], U, v, *xs[6:]), xs[4], xs[5])
    apply = jax.jit(lambda f, c: f(c))
    jax.block_until_ready(apply(pullback, 1.0))
    out = {"eager": timed(lambda: mbdcp.jax.step(M, Wn, D, E, U, v, h, **kw).block_until_ready(), inner, repeat),
           "fwd": timed(lambda: fwd(*xs).block_until_ready(), inner, repeat, solve)}
    inner.seconds = 0.0
    jax.block_until_ready(apply(pullback, 1.0))
    entered = inner.seconds > 0.0  # the backward called mbdcp.derivatives (else: computed in the C core)
    b = timed(lambda: jax.block_until_ready(apply(pullback, 1.0)), inner, repeat)
    times = {k: x[:2] for k, x in out.items()}
    times["bwd"] = (b[0], b[1], entered)
    return times, np.asarray(b[2][0])


def time_torch(args, kw, g, repeat, inner, deriv):
    """{name: (wall time, overhead)} for the forward and the backward alone (torch.autograd.grad
    on one graph); and the gradient in U. A backward computed in the C core (a plain step) is
    charged ``deriv``, the derivative's and its vjp's time from NumPy."""
    M, Wn, D, E, U, v, h = args
    f64 = torch.float64
    Mt, Wnt, Dt, Et = (torch.tensor(a, dtype=f64) for a in (M, Wn, D, E))
    kwt = {k: torch.tensor(x, dtype=f64) for k, x in kw.items()}
    gt = torch.tensor(g, dtype=f64)
    Ut = torch.tensor(U, dtype=f64, requires_grad=True)
    vt = torch.tensor(v, dtype=f64, requires_grad=True)

    t_fwd, o_fwd, out = timed(lambda: mbdcp.torch.step(Mt, Wnt, Dt, Et, Ut, vt, h, **kwt), inner, repeat)
    y = gt @ out
    t_bwd, o_bwd, grads = timed(lambda: torch.autograd.grad(y, (Ut, vt), retain_graph=True), inner, repeat, deriv)
    return {"fwd": (t_fwd, o_fwd), "bwd": (t_bwd, o_bwd)}, grads[0].numpy()


def torch_floor(args, kw, g, repeat, inner):
    """(forward, backward) overhead [s] of a bare torch.autograd.Function around the same mbdcp
    calls on the same tensors (U and v the inputs with a gradient; the others constants, each
    converted to NumPy as any Function must), timed as time_torch times the layer."""
    M, Wn, D, E, U, v, h = args
    f64 = torch.float64
    gt = torch.tensor(g, dtype=f64)
    wanted = frozenset(("U", "v"))
    Mt, Wnt, Dt, Et = (torch.tensor(a, dtype=f64) for a in (M, Wn, D, E))
    kwt = {k: torch.tensor(x, dtype=f64) for k, x in kw.items()}

    class Bare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, U, v):
            ctx.res = res = mbdcp.step(Mt.numpy(), Wnt.numpy(), Dt.numpy(), Et.numpy(), U.numpy(), v.numpy(), h,
                                       **{k: x.numpy() for k, x in kwt.items()})
            return torch.from_numpy(res.v_next)

        @staticmethod
        def backward(ctx, g_v):
            d = mbdcp.derivatives.step(M, Wn, D, E, U, v, h, ctx.res, **kw)
            grads = d.vjp(v_next=g_v.numpy(), _wanted=wanted)
            return torch.from_numpy(grads["U"].reshape(np.shape(U))), torch.from_numpy(grads["v"])
    Ut = torch.tensor(U, dtype=f64, requires_grad=True)
    vt = torch.tensor(v, dtype=f64, requires_grad=True)
    _, o_fwd, out = timed(lambda: Bare.apply(Ut, vt), inner, repeat)
    y = gt @ out
    _, o_bwd, _ = timed(lambda: torch.autograd.grad(y, (Ut, vt), retain_graph=True), inner, repeat)
    return o_fwd, o_bwd


def host(fn, size, *a):
    """A host callback as mbdcp.jax's: fn's result written into XLA's output buffer in place where
    JAX can (buffer_callback), else a pure_callback."""
    out = jax.ShapeDtypeStruct((size,), jnp.float64)
    try:
        from jax.experimental.buffer_callback import buffer_callback
    except ImportError:
        return jax.pure_callback(fn, out, *a)

    def in_place(ctx, o, *x):
        np.asarray(o)[...] = fn(*[np.asarray(y) for y in x])
    return buffer_callback(in_place, out)(*a)


def jax_floor(args, kw, g, repeat, inner):
    """(forward, backward) overhead [s] of a bare jax.custom_vjp around the same mbdcp calls (U and
    v the inputs with a gradient), each pass one host callback as mbdcp.jax's (reading XLA's buffers
    in place where JAX can), timed as time_jax times the layer's jitted passes."""
    M, Wn, D, E, U, v, h = args
    wanted, saved = frozenset(("U", "v")), {}

    def solve(U, v):
        saved["res"] = mbdcp.step(M, Wn, D, E, U, v, h, **kw)
        return saved["res"].v_next

    def gradient(U, v, g_v):
        d = mbdcp.derivatives.step(M, Wn, D, E, U, v, h, saved["res"], **kw)
        grads = d.vjp(v_next=g_v, _wanted=wanted)
        return np.concatenate([np.ravel(grads["U"]), grads["v"]])

    @jax.custom_vjp
    def bare(U, v):
        return host(solve, v.size, U, v)

    def bare_fwd(U, v):
        return bare(U, v), (U, v)

    def bare_bwd(res, g_v):
        U, v = res
        flat = host(gradient, U.size + v.size, U, v, g_v)
        return flat[:U.size].reshape(U.shape), flat[U.size:]
    bare.defvjp(bare_fwd, bare_bwd)
    Uj, vj, gj = jnp.asarray(U), jnp.asarray(v), jnp.asarray(g)
    fwd = jax.jit(lambda U, v: gj @ bare(U, v))
    fwd(Uj, vj).block_until_ready()
    _, pullback = jax.vjp(lambda U, v: gj @ bare(U, v), Uj, vj)
    apply = jax.jit(lambda f, c: f(c))
    jax.block_until_ready(apply(pullback, 1.0))
    _, o_fwd, _ = timed(lambda: fwd(Uj, vj).block_until_ready(), inner, repeat)
    _, o_bwd, _ = timed(lambda: jax.block_until_ready(apply(pullback, 1.0)), inner, repeat)
    return o_fwd, o_bwd


def empty_function():
    """A torch.autograd.Function that does nothing: its forward detaches, its backward passes the
    gradient on."""
    class Empty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.detach()

        @staticmethod
        def backward(ctx, g):
            return g
    return Empty


def empty_passes(calls=2000, polluted=200):
    """{framework: (warm, after a 32 MB pass)} [s] per call of an empty backward:
    torch.autograd.Function's gradient and a jax.custom_vjp whose backward is one host callback
    (the frameworks installed)."""
    buffer = np.ones(4 << 20)  # 32 MB

    def per_call(fn, pollute):
        fn()
        if not pollute:
            return best_time(lambda: [fn() for _ in range(calls)], 5)[0] / calls
        best = np.inf
        for _ in range(polluted):
            buffer.sum()
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best
    out = {}
    if torch is not None:
        x = torch.ones(3, dtype=torch.float64, requires_grad=True)
        y = empty_function().apply(x).sum()
        out["torch"] = [per_call(lambda: torch.autograd.grad(y, x, retain_graph=True), p) for p in (False, True)]
    if jax is not None:
        @jax.custom_vjp
        def empty(x):
            return x

        def empty_bwd(_, g):
            return (host(lambda c: c, g.size, g),)
        empty.defvjp(lambda x: (x, None), empty_bwd)
        _, pullback = jax.vjp(empty, jnp.ones(3))
        apply = jax.jit(lambda f, c: f(c))
        ones = jnp.ones(3)
        out["jax"] = [per_call(lambda: jax.block_until_ready(apply(pullback, ones)), p) for p in (False, True)]
    return out


def after_solve(args, kw, runs):
    """{name: best time [s]} of an empty pass run right after mbdcp.step(*args, **kw) from NumPy: a
    torch.autograd.Function forward that only detaches its input, a jitted JAX identity, and a
    NumPy dot of three numbers. A larger solve leaves the caches cold for whatever runs next; this
    is the least any layer's forward overhead can be at that size."""
    y = np.ones(3)
    passes = {"numpy": lambda: y @ y}
    if torch is not None:
        x, Empty = torch.ones(3, dtype=torch.float64, requires_grad=True), empty_function()
        passes["torch"] = lambda: Empty.apply(x)
    if jax is not None:
        identity, xj = jax.jit(lambda x: x), jnp.ones(3)
        passes["jax"] = lambda: identity(xj).block_until_ready()
    best = dict.fromkeys(passes, np.inf)
    for _ in range(runs):
        for name, fn in passes.items():
            fn()  # compiled, and its code warm before the solve as in a loop of layer calls
            mbdcp.step(*args, **kw)
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def us(t):
    return f"{t * 1e6:.0f}"


def ms(t):
    return f"{t * 1e3:.3f}"


def layer_columns(args, kw, g, repeat, inner, grad, solve, deriv):
    """fwd, bwd [ms], bwd/fwd, overhead fwd/bwd [us] and the floor fwd/bwd [us] for JAX (jitted)
    and PyTorch; ``solve``: the solve's own time (what a custom call spends in the C core), ``deriv``:
    the derivative's and its vjp's (what a backward computed in the C core is charged)."""
    cols, small = [], []
    for name, module in (("jax", jax), ("torch", torch)):
        if module is None:
            cols += ["-"] * 5
            small += ["-"] * (4 if name == "jax" else 3)
            continue
        if name == "jax":
            t, gU = time_jax(args, kw, g, repeat, inner, solve)
            # charged the derivative's own time when the backward stays in JAX (no call into mbdcp)
            t["bwd"] = (t["bwd"][0], t["bwd"][1] if t["bwd"][2] else t["bwd"][1] - deriv)
        else:
            t, gU = time_torch(args, kw, g, repeat, inner, deriv)
        assert np.allclose(gU, grad["U"], rtol=1e-10, atol=1e-12), f"{name} gradient differs from mbdcp.derivatives"
        (f, of), (b, ob) = t["fwd"], t["bwd"][:2]
        cols += [ms(f), ms(b), f"{b / f:.2f}", f"{us(of)}/{us(ob)}"]
        small += ([us(t["eager"][1])] if "eager" in t else []) + [us(of), us(ob)]
        floor = (jax_floor if name == "jax" else torch_floor)(args, kw, g, repeat, inner)
        cols.append("/".join(us(x) for x in floor))
        small.append("/".join(us(x) for x in floor))
    return cols, small


def lcp_layers(n=10, calls=2000):
    """Per-call times [us] of the LCP layer at size n: mbdcp.lemke from NumPy; under jax.jit the
    custom call into the C core (XLA FFI) and the host callback it replaces (any option other than
    max_iter and tol keeps the callback; trace=False changes nothing else), against a jitted no-op;
    mbdcp.torch.lcp forward and backward."""
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    M, q = A @ A.T + 0.1 * np.eye(n), rng.standard_normal(n)

    def per_call(fn):
        fn()
        return best_time(lambda: [fn() for _ in range(calls)], 5)[0] / calls * 1e6

    res = mbdcp.lemke(M, q)
    gz = np.ones(n)
    row = [n, f"{per_call(lambda: mbdcp.lemke(M, q)):.1f}",
           f"{per_call(lambda: mbdcp.derivatives.lcp(M, q, res).vjp(gz)):.1f}"]
    if jax is not None:
        Mj, qj = jnp.asarray(M), jnp.asarray(q)
        native = jax.jit(lambda M, q: mbdcp.jax.lcp(M, q))
        callback = jax.jit(lambda M, q: mbdcp.jax.lcp(M, q, trace=False))
        noop = jax.jit(lambda M, q: q * 1.0)
        row += [f"{per_call(lambda: f(Mj, qj).block_until_ready()):.1f}" for f in (noop, native, callback)]
        grad = jax.jit(jax.grad(lambda q: mbdcp.jax.lcp(Mj, q).sum()))
        row.append(f"{per_call(lambda: grad(qj).block_until_ready()):.1f}")
    else:
        row += ["-"] * 4
    if torch is not None:
        Mt, qt = torch.from_numpy(M), torch.from_numpy(q).requires_grad_()
        fwd = per_call(lambda: mbdcp.torch.lcp(Mt, qt))
        both = per_call(lambda: torch.autograd.grad(mbdcp.torch.lcp(Mt, qt).sum(), qt))
        row += [f"{fwd:.1f}", f"{both - fwd:.1f}"]
    else:
        row += ["-"] * 2
    print(f"\nThe LCP layer at n = {n}, per call [us] (deriv: mbdcp.derivatives.lcp + vjp; jax: jitted, the custom")
    print("call is what mbdcp.jax.lcp uses on the CPU, its gradient is computed in JAX itself; torch bwd: a forward")
    print("and backward minus the forward)")
    print_table(["n", "mbdcp.lemke", "deriv", "jax no-op", "jax lcp (custom call)", "jax lcp (callback)", "jax grad",
                 "torch fwd", "torch bwd"], [row])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args_ = ap.parse_args()
    sizes = [10, 50] if args_.quick else [10, 25, 50, 100, 200, 400]
    warnings.simplefilter("ignore", RuntimeWarning)  # degenerate points do not change the timings
    rows, after = [], []
    with Inner() as inner:
        for n in sizes:
            args, kw = scene(n)
            repeat = 3 if n <= 100 else 2
            g = np.random.default_rng(n).standard_normal(args[0].shape[0])
            t_solve, t_deriv, grad = time_numpy(args, kw, g, repeat)
            cols, _ = layer_columns(args, kw, g, repeat, inner, grad, t_solve, t_deriv)
            rows.append([n, args[0].shape[0], ms(t_solve), ms(t_deriv), f"{t_deriv / t_solve:.2f}"] + cols)
            print(*rows[-1], flush=True)
            cold = after_solve(args, kw, runs=max(3, min(30, int(0.2 / t_solve))))
            after.append([n] + [us(cold[k]) if k in cold else "-" for k in ("torch", "jax", "numpy")])
        args, kw = sphere()
        g = np.array([1.0, 0, 0, 0, 0, 0])
        t_solve, t_deriv, grad = time_numpy(args, kw, g, 5)
        _, small = layer_columns(args, kw, g, 5, inner, grad, t_solve, t_deriv)
    print("\nGradient of <g, v_next> in U and v, one step of a random scene [ms] (machine shared: +-20 %)")
    print("(deriv: mbdcp.derivatives.step + vjp; fwd/bwd: a layer's forward and backward passes (JAX: jitted);")
    print(" overhead fwd/bwd [us]: a pass's wall time minus its time inside mbdcp.step / the derivative, same call;")
    print(" a pass that never enters mbdcp's Python is charged that work's time from NumPy, measured apart, so its")
    print(" overhead can be negative: the XLA custom call of the forward mbdcp.step's, the backward of a plain step")
    print(" (in the C core) the deriv column's; floors: the same overhead of a bare")
    print(" jax.custom_vjp (host callbacks) or torch.autograd.Function around the same mbdcp calls: what JAX's")
    print(" callbacks and PyTorch's autograd cost by themselves; the layer's own overhead is the excess over it)")
    print_table(["contacts", "n_v", "solve", "deriv", "deriv/solve", "jax fwd", "jax bwd", "jax bwd/fwd",
                 "jax overhead", "jax floor", "torch fwd", "torch bwd", "torch bwd/fwd", "torch overhead", "torch floor"], rows)
    print("\nAn empty pass right after each size's solve [us]: a torch.autograd.Function forward that only detaches,")
    print("a jitted JAX identity, a NumPy dot of three numbers. A solve that sweeps megabytes leaves the caches cold")
    print("for whatever runs next, so no layer's forward overhead can be below these (the goal is <= 20)")
    print_table(["contacts", "torch empty fwd", "jax empty call", "numpy dot"], after)
    print("\nOverhead per call on the smallest problem (the sliding sphere, one contact) [us] (goal <= 20; the jax jit")
    print("and torch bwd, computed in the C core, are charged the deriv column; floors as above)")
    print_table(["solve", "deriv", "jax eager fwd", "jax jit fwd", "jax jit bwd", "jax floor", "torch fwd", "torch bwd",
                 "torch floor"], [[us(t_solve), us(t_deriv)] + small])
    empty = empty_passes()
    print("\nAn empty backward pass [us]: the frameworks' own cost, warm and right after a pass over 32 MB (the")
    print("least a layer's backward adds around the derivative; the overhead goal is <= 20)")
    print_table(["framework", "warm", "after 32 MB"], [[k, us(w), us(c)] for k, (w, c) in empty.items()])
    lcp_layers(calls=500 if args_.quick else 2000)


if __name__ == "__main__":
    main()
