"""Cost of a gradient through the differentiable layers mbdcp.jax and mbdcp.torch, against a solve
and against mbdcp.derivatives called directly: the layers' own overhead.

For random spatial scenes with n = 10-400 contacts (4 friction directions each; n/2 bodies), the
loss is <g, v_next> of one time step, differentiated in the friction coefficients U and the initial
velocity v:

- solve: mbdcp.step; derivative: mbdcp.derivatives.step on its result plus one vjp (what a
  backward pass needs at the least);
- JAX: jax.jit of the loss (forward: the solve as a host callback; all arrays are arguments of
  the jitted function) and, alone, the jitted backward pass (the function jax.vjp returns);
- PyTorch: mbdcp.torch.step on float64 tensors (forward) and torch.autograd.grad on its graph
  (backward, alone);
- overhead: layer forward - solve, layer backward - derivative.

Goals: a layer's backward <= its forward at n >= 50; overhead <= 20 us per call. A second table
gives the overhead on the smallest problem (the sliding sphere: one contact), where it dominates.
Timed on one BLAS thread and one PyTorch thread (the C solver is single-threaded).

    python benchmarks/bench_autodiff.py [--quick]
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
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
    s = random_scene(max(2, n // 2), n, seed=n, n_d=(4, 4))
    return s.args(), s.kwargs()


def sphere():
    M, Wn, D, E, U = sphere_on_plane()
    h = 0.01
    return (M, Wn, D, E, U, np.array([2.0, 0, 0, 0, 0, 0]), h), {"p_ext": np.array([0, 0, -9.81 * h, 0, 0, 0]),
                                                                  "psi_n": np.zeros(1)}


def time_numpy(args, kw, g, repeat):
    t_solve, res = best_time(lambda: mbdcp.step(*args, **kw), repeat=repeat)
    assert res.success

    def derivative():
        d = mbdcp.derivatives.step(*args, res, **kw)
        return d, d.vjp(v_next=g)
    t_deriv, (d, grad) = best_time(derivative, repeat=repeat)
    return t_solve, t_deriv, d, grad


def time_jax(args, kw, g, repeat):
    """(eager forward, jitted forward, jitted backward, gradient in U). The backward pass is timed
    alone: the jitted application of the function jax.vjp returns (residuals as its inputs)."""
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
    t_eager, _ = best_time(lambda: mbdcp.jax.step(M, Wn, D, E, U, v, h, **kw).block_until_ready(), repeat=repeat)
    t_fwd, _ = best_time(lambda: fwd(*xs).block_until_ready(), repeat=repeat)
    t_bwd, out = best_time(lambda: jax.block_until_ready(apply(pullback, 1.0)), repeat=repeat)
    return t_eager, t_fwd, t_bwd, np.asarray(out[0])


def time_torch(args, kw, g, repeat):
    """(forward, backward, gradient in U); the backward pass timed alone on one graph."""
    M, Wn, D, E, U, v, h = args
    f64 = torch.float64
    Mt, Wnt, Dt, Et = (torch.tensor(a, dtype=f64) for a in (M, Wn, D, E))
    kwt = {k: torch.tensor(x, dtype=f64) for k, x in kw.items()}
    gt = torch.tensor(g, dtype=f64)
    Ut = torch.tensor(U, dtype=f64, requires_grad=True)
    vt = torch.tensor(v, dtype=f64, requires_grad=True)

    def forward():
        return gt @ mbdcp.torch.step(Mt, Wnt, Dt, Et, Ut, vt, h, **kwt)
    t_fwd, y = best_time(forward, repeat=repeat)
    t_bwd, grads = best_time(lambda: torch.autograd.grad(y, (Ut, vt), retain_graph=True), repeat=repeat)
    return t_fwd, t_bwd, grads[0].numpy()


def us(t):
    return f"{t * 1e6:.0f}"


def ms(t):
    return f"{t * 1e3:.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args_ = ap.parse_args()
    sizes = [10, 50] if args_.quick else [10, 25, 50, 100, 200, 400]
    warnings.simplefilter("ignore", RuntimeWarning)  # degenerate points do not change the timings
    rows, over = [], []
    for n in sizes:
        args, kw = scene(n)
        repeat = 3 if n <= 100 else 2
        g = np.random.default_rng(n).standard_normal(args[0].shape[0])
        t_solve, t_deriv, _, grad = time_numpy(args, kw, g, repeat)
        row = [n, args[0].shape[0], ms(t_solve), ms(t_deriv), f"{t_deriv / t_solve:.2f}"]
        for name, timer in (("jax", time_jax), ("torch", time_torch)):
            if (jax if name == "jax" else torch) is None:
                row += ["-"] * 4
                continue
            if name == "jax":
                _, t_fwd, t_bwd, gU = timer(args, kw, g, repeat)
            else:
                t_fwd, t_bwd, gU = timer(args, kw, g, repeat)
            assert np.allclose(gU, grad["U"], rtol=1e-10, atol=1e-12), f"{name} gradient differs from mbdcp.derivatives"
            row += [ms(t_fwd), ms(t_bwd), f"{t_bwd / t_fwd:.2f}", f"{us(t_fwd - t_solve)}/{us(t_bwd - t_deriv)}"]
        rows.append(row)
        print(*row, flush=True)
    print("\nGradient of <g, v_next> in U and v, one step of a random scene [ms] (machine shared: +-20 %)")
    print("(deriv: mbdcp.derivatives.step + vjp; fwd/bwd: the layer's forward and backward passes;")
    print(" overhead: layer fwd - solve / layer bwd - deriv, in us)")
    print_table(["contacts", "n_v", "solve", "deriv", "deriv/solve", "jax fwd", "jax bwd", "jax bwd/fwd",
                 "jax overhead", "torch fwd", "torch bwd", "torch bwd/fwd", "torch overhead"], rows)

    args, kw = sphere()
    g = np.array([1.0, 0, 0, 0, 0, 0])
    t_solve, t_deriv, _, _ = time_numpy(args, kw, g, 5)
    row = ["sphere (1 contact)", us(t_solve), us(t_deriv)]
    if jax is not None:
        t_eager, t_fwd, t_bwd, _ = time_jax(args, kw, g, 5)
        row += [us(t_eager - t_solve), us(t_fwd - t_solve), us(t_bwd - t_deriv)]
    else:
        row += ["-"] * 3
    if torch is not None:
        t_fwd, t_bwd, _ = time_torch(args, kw, g, 5)
        row += [us(t_fwd - t_solve), us(t_bwd - t_deriv)]
    else:
        row += ["-"] * 2
    over.append(row)
    print("\nOverhead per call on the smallest problem [us] (goal <= 20)")
    print_table(["problem", "solve", "deriv", "jax eager fwd", "jax jit fwd", "jax jit bwd", "torch fwd",
                 "torch bwd"], over)


if __name__ == "__main__":
    main()
