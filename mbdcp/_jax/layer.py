"""The ``jax.custom_vjp`` of each problem of :mod:`mbdcp.jax` (``lcp``, ``step``, ``ccp``): one
layer per problem, input names, shapes and options (cached), whose forward is a custom call
(:mod:`mbdcp._jax.ffi`) or a host callback (:mod:`mbdcp._jax.callbacks`) into
:func:`mbdcp.derivatives._layers.forward`, and whose backward is computed in JAX
(:mod:`mbdcp._jax.backward`) or by :func:`mbdcp.derivatives._layers.backward` on the host; outside
any transformation, :func:`eager` solves directly."""
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from mbdcp._jax import backward as bw
from mbdcp._jax import callbacks as cb
from mbdcp._jax import ffi
from mbdcp.derivatives import _layers as ad
from mbdcp.derivatives._common import DEGENERATE_TOL
from mbdcp.infrastructure import validate as val

LAYERS = {}  # (problem, input names, shapes, options) -> the custom_vjp function


def check_x64():
    if not jax.config.read("jax_enable_x64"):
        raise RuntimeError("mbdcp.jax computes in float64, which JAX turns off by default: call "
                           "jax.config.update('jax_enable_x64', True) first (or set JAX_ENABLE_X64=1 before "
                           "importing JAX)")


def call(problem, args, options, full):
    """The outputs of ``problem`` for inputs ``args`` (by name): all of them if ``full``, else the first."""
    check_x64()
    if not any(isinstance(x, jax.core.Tracer) for x in args.values()):
        return eager(problem, args, options, full)
    # what is not traced is checked as any array argument is (a tracer's values are checked on the host)
    args = {n: x if isinstance(x, jax.core.Tracer) else val.as_array(n, np.asarray(x) if isinstance(x, jax.Array) else x)
            for n, x in args.items()}
    names = tuple(args)
    vals = [jnp.asarray(args[n], dtype=jnp.float64) for n in names]
    shapes = tuple(tuple(v.shape) for v in vals)  # under vmap: one problem's shapes
    try:
        key = (problem.name, names, shapes, tuple(sorted(options.items())))
        hash(key)
    except TypeError:  # an option that is an array (warm_start): a layer for this call only
        key = None
    layer = LAYERS.get(key) if key is not None else None
    if layer is None:
        layer = make_layer(problem, names, shapes, options)
        if key is not None:
            if len(LAYERS) >= 1024:  # scenes whose contact count changes make new shapes: keep it bounded
                LAYERS.clear()
            LAYERS[key] = layer
    return layer(*vals)


def eager(problem, args, options, full):
    """:func:`call` with no transformation to serve: the solver checks the inputs and solves (a
    failed solve raises SolveError as is)."""
    outs, _ = ad.forward(problem, {n: np.asarray(x) if isinstance(x, jax.Array) else x for n, x in args.items()},
                         options)
    outs = _to_device(*(outs if full else outs[:1]))
    if isinstance(outs[0], jax.Array):
        return outs
    return tuple(jnp.asarray(o) for o in outs)  # under jax.disable_jit(), _to_device returns its inputs


# NumPy arrays to JAX arrays in one dispatch of a compiled identity: jit's dispatch, in C++, costs
# less than jnp.asarray's Python, and compiles once per tuple of shapes, as jnp.asarray compiles
# once per shape
_to_device = jax.jit(lambda *outs: outs)


def make_layer(problem, names, shapes, options):
    """The custom_vjp function of ``problem`` with inputs of these names and (one problem's) shapes
    and these options. The vjp is a host callback, and so is the solve unless a custom call
    serves it (:func:`mbdcp._jax.ffi.native_lemke`, :func:`mbdcp._jax.ffi.native_step`). The
    callbacks' inputs travel as two packed vectors, matrices and the rest: under ``jax.vmap`` a
    packed argument is mapped as a whole (an unmapped one gets a batch axis of size 1), so mapping
    over vectors (v, mu, p_ext, ...) leaves the matrices one shared copy."""
    base = {n: len(s) for n, s in zip(names, shapes)}
    out_shapes, extra_shapes = ad.output_shapes(problem, dict(zip(names, shapes)))
    groups = ([i for i, s in enumerate(shapes) if len(s) >= 2], [i for i, s in enumerate(shapes) if len(s) < 2])
    total = sum(math.prod(s) for s in out_shapes + extra_shapes)
    packed = [([names[i] for i in group], cb.offsets([shapes[i] for i in group])) for group in groups]
    solution_offsets = cb.offsets(out_shapes + extra_shapes)

    def inputs(packs):
        arrays = {}
        for (group, offsets), pack in zip(packed, packs):
            arrays.update(zip(group, cb.unpack(pack, offsets)))
        return arrays

    def host_solve(*packs):  # NumPy for the solvers, batch axes in front
        lead = cb.lead(packs)
        outs, extras = ad.forward(problem, inputs(packs), options, base if lead else None)
        return cb.flat(outs + extras, out_shapes + extra_shapes, lead)

    def host_vjp(given, wanted):
        """The host vjp for the output gradients ``given`` and input gradients ``wanted`` (indices)."""
        wanted_names = [names[i] for i in wanted]
        cot_offsets = cb.offsets([out_shapes[i] for i in given])

        def host(mats, vecs, flat, cot):
            n_out = len(out_shapes)
            solution = cb.unpack(flat, solution_offsets)
            cots = [None] * n_out
            for i, c in zip(given, cb.unpack(cot, cot_offsets)):
                cots[i] = c
            lead = cb.lead((mats, vecs, flat, cot))
            grads = ad.backward(problem, inputs((mats, vecs)), options, solution[:n_out], solution[n_out:], cots,
                                base if lead else None, reduce=False, layer="mbdcp.jax", wanted=wanted_names)
            return cb.flat([grads[n] for n in wanted_names], [shapes[i] for i in wanted], lead)
        return host

    plain = ffi.plain_step(names, shapes, options) if problem.name == "step" else None
    if plain is not None and plain[1] > bw.JAX_BACKWARD_CONTACTS:
        plain = None
    layout = (names, shapes, groups, out_shapes, plain)
    plain_backwards = {}

    native = (ffi.native_lemke(options) if problem.name == "lcp" else
              ffi.native_step(names, shapes, options) if problem.name == "step" else None)
    degenerate_tol = val.positive_scalar("degenerate_tol", options.get("degenerate_tol", DEGENERATE_TOL))

    def callback(*packs):
        return cb.host_call(host_solve, total, *packs)

    def solve(vals):
        packs = tuple(cb.pack([vals[i] for i in group]) for group in groups)
        if native is None:
            flat = callback(*packs)
        else:  # the custom call exists for the CPU only: elsewhere, the callback
            flat = jax.lax.platform_dependent(vals, packs, cpu=lambda v, p: native(v), default=lambda v, p: callback(*p))
        return tuple(cb.split(flat, out_shapes)), (packs, flat)

    @jax.custom_vjp
    def layer(*vals):
        return solve(vals)[0]

    def fwd(*primals):
        # symbolic zeros: which inputs are differentiated is known here, and travels to bwd in the
        # residuals' structure (None for an input without gradient)
        outs, (packs, flat) = solve([p.value for p in primals])
        return outs, (packs, flat, tuple(jnp.zeros(0) if p.perturbed else None for p in primals))

    def bwd(res, cots):
        (mats, vecs), flat, marks = res
        wanted = [i for i, m in enumerate(marks) if m is not None]
        given = [i for i, c in enumerate(cots) if not isinstance(c, SymbolicZero)]
        if not wanted or not given:
            return (None,) * len(names)
        if problem.name == "lcp":  # in JAX itself: no callback unless a warning or an error is due
            M, q = mats.reshape(shapes[0]), vecs.reshape(shapes[1])
            grads = bw.lcp_vjp(M, q, flat, cots[0], degenerate_tol)
            return tuple(grads[i] if i in wanted else None for i in range(2))
        if plain is None:
            g = bw.host_gradients(host_vjp(given, wanted), shapes, wanted, mats, vecs, flat, [cots[i] for i in given])
        else:  # the C rule on the CPU, else JAX's; the host decides (and warns, or raises) where they do not
            key = (tuple(given), tuple(wanted))
            if key not in plain_backwards:
                plain_backwards[key] = bw.plain_backward(layout, degenerate_tol, host_vjp(given, wanted), given, wanted)
            g = bw.plain_gradients(plain_backwards[key], host_vjp(given, wanted), shapes, wanted, mats, vecs, flat,
                                   [cots[i] for i in given])
        out = [None] * len(names)
        for i, x in zip(wanted, cb.split(g, [shapes[i] for i in wanted])):
            out[i] = x
        return tuple(out)

    layer.defvjp(fwd, bwd, symbolic_zeros=True)
    return layer
