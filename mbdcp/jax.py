r"""Contact solves as differentiable JAX functions: :func:`lcp`, :func:`step` and :func:`ccp`.

Each function solves with mbdcp's C core on the host and returns JAX arrays; its gradient is the
exact derivative of the verified solution from :mod:`mbdcp.derivatives` (implicit function
theorem on the solution's active set), registered as a ``jax.custom_vjp``. It works under

- ``jax.jit``: the compiled program calls mbdcp's C core. On the CPU, when mbdcp's XLA extension is
  built and matches the installed XLA, :func:`lcp` is an XLA custom call straight into Lemke's
  method (no Python on the way), its gradient computed in JAX itself (a host callback runs only to
  warn or raise), and so is the solve of a plain :func:`step` (``p_ext`` and ``psi_n`` its only
  array keywords, U a scalar or (n_c,), no stabilisation option or warm start). A plain step's
  gradient, the same as :func:`mbdcp.derivatives.step`'s, is computed by the C core on the CPU
  (a host callback), and on other platforms up to 16 contacts in JAX itself; either calls
  :func:`mbdcp.derivatives.step` only where that function decides: a degenerate point (to warn
  and take the documented side), a system near singularity (to raise), statically indeterminate
  contacts, two candidate rows that tie, a sticking contact whose directions are not in
  opposite pairs, or (for a gradient in the gaps or directions) dropped candidate rows that may
  tie contacts together. Every other solve and gradient is a host callback into
  Python (on the CPU ``jax.experimental.buffer_callback``, which reads XLA's buffers in place,
  where JAX has it; else ``jax.pure_callback``),
- ``jax.grad``, ``jax.vjp``, ``jax.jacrev`` in every array input, the keywords included (``p_ext``,
  gaps, moving surfaces, joints, joint friction); E and Ej group directions and get zero gradients.
  Forward mode (``jax.jvp``, ``jax.jacfwd``) is not registered: use the reverse mode;
- ``jax.vmap``: a mapped :func:`lcp` or :func:`step` is one :func:`mbdcp.batch.lemke` or
  :func:`mbdcp.batch.step` call (a loop over the instances when an option needs :func:`mbdcp.step`
  itself), or one custom call over the instances where the custom call serves; a mapped
  :func:`ccp` loops.

**float64 only.** JAX computes in float32 unless told otherwise; these functions raise a
RuntimeError until ``jax.config.update("jax_enable_x64", True)`` has run (or ``JAX_ENABLE_X64=1``
is set before JAX is imported).

**Failures.** A solve that does not end SOLVED raises :class:`SolveError` naming the status: directly
when called outside a transformation; under ``jax.jit`` as JAX's runtime error, whose message is
SolveError's (and, in a batch, names the first failing instance). No array is returned for an
unsolved problem.

**Degenerate points.** Where the solution has a kink (a grazing contact, a contact at the edge of its
friction cone, ...), the gradient is the one-sided derivative documented in
:mod:`mbdcp.derivatives`, and a :class:`DegenerateWarning` names the contacts; so it does for a
gradient in the gaps or the directions where contacts are tied by active rows dropped as
dependent (see ``docs/gradients.rst``).

Example: the sphere of Trinkle (2003) sliding at 2 m/s; one step slows it by mu g h, so
d v_x / d mu = -g h:

>>> import jax, jax.numpy as jnp, numpy as np
>>> jax.config.update("jax_enable_x64", True)
>>> import mbdcp.jax
>>> from mbdcp.examples import sphere_on_plane
>>> M, Wn, D, E, _ = sphere_on_plane()
>>> v0, h = jnp.array([2.0, 0, 0, 0, 0, 0]), 0.01
>>> p = jnp.array([0, 0, -9.81 * h, 0, 0, 0])
>>> vx = lambda mu: mbdcp.jax.step(M, Wn, D, E, mu, v0, h, p_ext=p, psi_n=jnp.zeros(1))[0]
>>> round(float(jax.grad(vx)(0.2)), 12), round(float(jax.jit(jax.grad(vx))(0.3)), 12)
(-0.0981, -0.0981)
"""
import math

import numpy as np

try:
    import jax
    import jax.numpy as jnp
    from jax.custom_derivatives import SymbolicZero
except ModuleNotFoundError as exc:
    if exc.name not in ("jax", "jaxlib"):
        raise
    raise ModuleNotFoundError("mbdcp.jax needs JAX: pip install 'mbdcp[jax]'", name=exc.name) from exc

from mbdcp.derivatives import _jax_step
from mbdcp.derivatives import _layers as ad
from mbdcp.derivatives._common import DEGENERATE_TOL, GEOMETRY
from mbdcp.derivatives._layers import CCPOutput, DegenerateWarning, SolveError, StepOutput
from mbdcp.derivatives._native_step import INPUTS as _PLAIN_INPUTS
from mbdcp.derivatives._native_step import plain as _plain
from mbdcp.derivatives.lcp import RCOND_MIN
from mbdcp.infrastructure import validate as val

try:
    from mbdcp.infrastructure import _xla
except ImportError:  # an optional extension: without it, host callbacks
    _xla = None
try:  # newer JAX: a host callback on the CPU's own buffers
    from jax.experimental.buffer_callback import buffer_callback as _buffer_callback
except ImportError:
    _buffer_callback = None

__all__ = ["CCPOutput", "DegenerateWarning", "SolveError", "StepOutput", "ccp", "lcp", "step"]

_LAYERS = {}  # (problem, input names, shapes, options) -> the custom_vjp function


def _check_x64():
    if not jax.config.read("jax_enable_x64"):
        raise RuntimeError("mbdcp.jax computes in float64, which JAX turns off by default: call "
                           "jax.config.update('jax_enable_x64', True) first (or set JAX_ENABLE_X64=1 before "
                           "importing JAX)")


def _call(problem, args, options, full):
    """The outputs of ``problem`` for inputs ``args`` (by name): all of them if ``full``, else the first."""
    _check_x64()
    if not any(isinstance(x, jax.core.Tracer) for x in args.values()):
        return _eager(problem, args, options, full)
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
    layer = _LAYERS.get(key) if key is not None else None
    if layer is None:
        layer = _layer(problem, names, shapes, options)
        if key is not None:
            if len(_LAYERS) >= 1024:  # scenes whose contact count changes make new shapes: keep it bounded
                _LAYERS.clear()
            _LAYERS[key] = layer
    return layer(*vals)


def _eager(problem, args, options, full):
    """:func:`_call` with no transformation to serve: the solver checks the inputs and solves (a
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


def _host_call(fn, size, *args):
    """fn(*args as NumPy arrays) -> a float64 array of ``size`` entries (batch axes in front
    under ``jax.vmap``), called from the compiled program. On the CPU through
    ``jax.experimental.buffer_callback``: fn reads XLA's buffers in place and its result is written
    into XLA's (``jax.pure_callback`` first copies every argument into a new jax.Array, which
    costs more than a small solve); fn must keep no reference to its arguments. Elsewhere (or
    with a JAX without it), ``jax.pure_callback``."""
    result = jax.ShapeDtypeStruct((size,), jnp.float64)

    def pure(*a):
        return jax.pure_callback(fn, result, *a, vmap_method="expand_dims")
    if _buffer_callback is None:
        return pure(*args)

    def in_place(ctx, out, *a):
        np.asarray(out)[...] = fn(*[np.asarray(x) for x in a])
    cpu = _buffer_callback(in_place, result, vmap_method="expand_dims")
    return jax.lax.platform_dependent(*args, cpu=cpu, default=pure)


def _pack(vals):
    """One flat vector of the arrays: a host callback costs per argument, so arrays travel packed."""
    return jnp.concatenate([jnp.ravel(v) for v in vals]) if vals else jnp.zeros(0)


def _split(flat, shapes):
    """The arrays of the given shapes packed in a flat vector (JAX, inside the traced function)."""
    out, o = [], 0
    for s in shapes:
        n = math.prod(s)
        out.append(flat[o:o + n].reshape(s))
        o += n
    return out


def _offsets(shapes):
    """(start, stop, shape) of each array of these shapes packed in a flat vector: what
    :func:`_unpack` takes, worked out once per layer rather than once per call."""
    out, o = [], 0
    for s in shapes:
        n = math.prod(s)
        out.append((o, o + n, tuple(s)))
        o += n
    return tuple(out)


def _unpack(flat, offsets):
    """The arrays packed in a flat NumPy vector at ``offsets`` (:func:`_offsets`), its leading
    (batch) axes kept in front of each."""
    flat = np.asarray(flat)
    if flat.ndim == 1:
        return [flat[a:b].reshape(s) for a, b, s in offsets]
    lead = flat.shape[:-1]
    return [flat[..., a:b].reshape(lead + s) for a, b, s in offsets]


def _flat(arrays, shapes, lead):
    """Arrays with the batch axes ``lead`` in front, packed along the last axis."""
    if not lead:
        return np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.zeros(0)
    return np.concatenate([np.reshape(a, lead + (math.prod(s),)) for a, s in zip(arrays, shapes)] + [np.zeros(lead + (0,))],
                          axis=-1)


_LEMKE_TARGET = "mbdcp_lemke"
_LEMKE_OPTIONS = ("max_iter", "tol", "degenerate_tol")
_native_state = {}  # target -> True once registered, or the reason it cannot be


def _native_target(target, handler):
    """``target`` registered with XLA for the CPU (on first use), or None with the reason kept
    in ``_native_state``: no extension, or an XLA whose FFI version the handler does not fit."""
    state = _native_state.get(target)
    if state is None:
        if _xla is None:
            state = "mbdcp.infrastructure._xla is not built"
        else:
            try:
                from jax import ffi
                # a registration before the CPU backend exists is only checked when the backend
                # starts, where a refusal would stop JAX itself: start it first, so it raises here
                jax.devices("cpu")
                ffi.register_ffi_target(target, getattr(_xla, handler)(), platform="cpu")
                state = True
            except (ImportError, RuntimeError) as exc:
                # a JAX without jax.ffi, no CPU backend, or an XLA that refused the handler's FFI
                # version: keep the callbacks
                state = f"the handler (built for XLA FFI {_xla.FFI_VERSION}) was not registered: {exc!r}"
        _native_state[target] = state
    return target if state is True else None


def _native_lemke(options):
    """The forward solve of :func:`lcp` as an XLA custom call (vals -> z and basis packed), or None
    when the custom call cannot serve these options (a warm start, ...) or is not available."""
    if not set(options) <= set(_LEMKE_OPTIONS):
        return None
    max_iter, tol = val.lemke_settings(options.get("max_iter"), options.get("tol"))
    target = _native_target(_LEMKE_TARGET, "lemke_handler")
    if target is None:
        return None
    from jax import ffi

    def native(vals):
        M, q = vals
        result = jax.ShapeDtypeStruct(q.shape, jnp.float64)
        z, basis = ffi.ffi_call(target, (result, result), vmap_method="expand_dims")(
            M, q, max_iter=np.int32(max_iter), tol=np.float64(tol))
        return jnp.concatenate([z, basis])
    return native


_STEP_TARGET = "mbdcp_step"


def _plain_step(names, shapes, options):
    """(n_v, n_c, m) of a plain step, or None: joints, moving surfaces, a matrix U (its diagonal is
    checked on the host), a stabilisation option, a warm start, ... or shapes that do not fit (a
    misfit the callback's validation names)."""
    if not _plain(names, options):
        return None  # other methods raise, the stabilisation options change psi_n: the callback's
    s = dict(zip(names, shapes))
    n_v, n_c, m = s["v"][0] if len(s["v"]) == 1 else -1, s["Wn"][-1], s["D"][-1]
    want = {"M": (n_v, n_v), "Wn": (n_v, n_c), "D": (n_v, m), "E": (m, n_c), "v": (n_v,), "h": (),
            "p_ext": (n_v,), "psi_n": (n_c,)}
    if n_v < 1 or any(s[k] != w for k, w in want.items() if k in s) or s["U"] not in ((), (n_c,)):
        return None
    return n_v, n_c, m


def _native_step(names, shapes, options):
    """The forward solve of :func:`step` as an XLA custom call (vals -> v_next, p_n, beta, sigma
    packed, as the callback packs them), or None when the step is not plain (:func:`_plain_step`)
    or no custom call is available."""
    sizes = _plain_step(names, shapes, options)
    if sizes is None:
        return None
    n_v, n_c, m = sizes
    max_iter, tol = val.lemke_settings(options.get("max_iter"), options.get("tol"))
    target = _native_target(_STEP_TARGET, "step_handler")
    if target is None:
        return None
    from jax import ffi
    index = {k: i for i, k in enumerate(names)}
    absent = {"p_ext": jnp.zeros(0), "psi_n": jnp.zeros(0)}  # a last axis of 0: NULL for the C core

    def native(vals):
        a = [vals[index[k]] if k in index else absent[k] for k in _PLAIN_INPUTS]
        a[4] = jnp.broadcast_to(a[4], (n_c,))  # a scalar mu: the same for every contact
        result = jax.ShapeDtypeStruct((n_v + 2 * n_c + m,), jnp.float64)
        return ffi.ffi_call(target, result, vmap_method="expand_dims")(*a, max_iter=np.int32(max_iter),
                                                                      tol=np.float64(tol))
    return native


def _lcp_vjp(M, q, flat, gz, tol):
    """(gM, gq) of <gz, z> in JAX itself, by mbdcp.derivatives.lcp's rule: on the active set a
    (z_i > 0, and the degenerate pairs whose z_i is basic in Lemke's final basis), gq_a =
    -M_aa^-T gz_a, gq = 0 elsewhere, gM = gq z^T. ``flat`` holds z and the basis (the forward's). A
    degenerate pair warns (DegenerateWarning) and a singular active block raises, from host
    callbacks that run only then."""
    n = q.shape[-1]
    z, basis = flat[:n], flat[n:2 * n]
    w = M @ z + q
    thr = tol * (jnp.abs(q) + jnp.abs(M) @ jnp.abs(z))
    zpos = z > thr
    deg = ~zpos & ~(w > thr)
    a = (zpos | (deg & (basis > 0.5))).astype(M.dtype)
    # M_aa on the active rows and columns, the identity at M's scale elsewhere: one solve for all
    scale = jnp.maximum(jnp.max(jnp.abs(M) * a[:, None] * a[None, :]), 1.0)
    K = a[:, None] * M * a[None, :] + jnp.diag((1.0 - a) * scale)
    lu, piv = jax.scipy.linalg.lu_factor(K)
    g = jax.scipy.linalg.lu_solve((lu, piv), a * gz, trans=1)
    u = jnp.abs(jnp.diagonal(lu))
    singular = ~(jnp.min(u) > RCOND_MIN * jnp.max(u)) | ~jnp.all(jnp.isfinite(g))
    jax.lax.cond(singular | jnp.any(deg), lambda: jax.debug.callback(_notify, singular, deg), lambda: None)
    gq = jnp.where(a > 0.0, -g, 0.0)
    return jnp.outer(gq, z), gq


def _notify(singular, deg):
    """The error for a singular active block, else the warning for degenerate pairs (under jax.vmap
    this runs for every instance: it acts on the flags only)."""
    if np.any(singular):
        raise ValueError("mbdcp.jax.lcp: M restricted to the active set of the solution is singular: the "
                         "solution is not locally unique, so it has no derivative")
    deg = np.asarray(deg)
    if deg.any():
        where = np.argwhere(deg).tolist() if deg.ndim > 1 else np.flatnonzero(deg).tolist()
        ad._warn("mbdcp.jax", ad.PROBLEMS["lcp"], [(None, f"pairs z_i = w_i = 0 at {where}")])


# the plain step's backward in JAX up to this many contacts; beyond, its dense masked system of
# size 2 n_c + m and its row selection cost more than the host's vjp on index sets (bench_autodiff)
_JAX_BACKWARD_CONTACTS = 16
# where the plain step's backward runs on the CPU: "c", the C core's rule through a host callback
# (faster there than the same rule compiled by XLA); "jax", JAX's rule as on other platforms (its
# tests run it on the CPU)
_CPU_BACKWARD = "c"


def _plain_step_vjp(layout, tol, mats, vecs, flat, cots, geometry):
    """(gradients by name, ok) of a plain step by :func:`mbdcp.derivatives._jax_step.step_vjp`;
    ``layout``: (names, shapes, groups of packed inputs, output shapes, (n_v, n_c, m)); ``geometry``:
    gradients in the gaps or constraint directions are wanted."""
    names, shapes, groups, out_shapes, (n_v, n_c, _) = layout
    a = {}
    for group, pack in zip(groups, (mats, vecs)):
        a.update(zip((names[i] for i in group), _split(pack, [shapes[i] for i in group])))
    a.setdefault("p_ext", jnp.zeros(n_v))
    a.setdefault("psi_n", jnp.zeros(n_c))
    out = _split(flat, out_shapes[:4])
    cot = [jnp.zeros(s) if c is None else c for c, s in zip(cots[:4], out_shapes[:4])]
    grads, ok = _jax_step.step_vjp({**a, "U": jnp.broadcast_to(a["U"], (n_c,))}, out, cot, tol, geometry)
    u_shape = shapes[names.index("U")]
    grads["U"] = jnp.reshape(jnp.sum(grads["U"]) if u_shape == () else grads["U"], u_shape)
    return grads, ok


def _host_gradients(host_vjp, shapes, wanted, mats, vecs, flat, cot):
    """The gradients of the inputs ``wanted`` (indices into ``shapes``), packed, from the host's vjp
    (a callback on the packed inputs, the forward's ``flat`` and the given cotangents ``cot``)."""
    return _host_call(host_vjp, sum(math.prod(shapes[i]) for i in wanted), mats, vecs, flat, _pack(cot))


def _plain_backward(layout, tol, host_vjp, given, wanted):
    """The backward of a plain step for the output gradients ``given`` and the inputs ``wanted``
    (indices), compiled once (run op by op, its many small operations would cost more than the
    host's): (mats, vecs, flat, cotangents) -> the wanted gradients packed. In JAX itself; the
    host (``host_vjp``) decides, and warns or raises, only where the JAX rule does not."""
    names, shapes, _, out_shapes, _ = layout

    def host(mats, vecs, flat, cot):
        return _host_gradients(host_vjp, shapes, wanted, mats, vecs, flat, cot)

    @jax.custom_batching.custom_vmap
    def either(ok, own, mats, vecs, flat, cot):
        return jax.lax.cond(ok, lambda: own, lambda: host(mats, vecs, flat, cot))

    @either.def_vmap
    def either_batched(n, batched, ok, own, *args):
        # one conditional for the batch (a mapped one would run both branches): the host for every
        # instance only when one of them needs it
        ok = jnp.all(ok) if batched[0] else ok
        own = own if batched[1] else jnp.broadcast_to(own, (n,) + own.shape)
        axes = tuple(jax.tree.map(lambda b: 0 if b else None, b) for b in batched[2:])
        return jax.lax.cond(ok, lambda: own, lambda: jax.vmap(host, in_axes=axes, axis_size=n)(*args)), True

    def backward(mats, vecs, flat, cot):
        full = [None] * len(out_shapes)
        for i, c in zip(given, cot):
            full[i] = c
        grads, ok = _plain_step_vjp(layout, tol, mats, vecs, flat, full,
                                    not GEOMETRY.isdisjoint(names[i] for i in wanted))
        return either(ok, _pack([grads[names[i]] for i in wanted]), mats, vecs, flat, cot)
    return jax.jit(backward)


def _layer(problem, names, shapes, options):
    """The custom_vjp function of ``problem`` with inputs of these names and (one problem's) shapes
    and these options. The vjp is a host callback, and so is the solve unless a custom call
    serves it (:func:`_native_lemke`, :func:`_native_step`). The callbacks' inputs travel as two packed vectors,
    matrices and the rest: under ``jax.vmap`` a packed argument is mapped as a whole (an unmapped
    one gets a batch axis of size 1), so mapping over vectors (v, mu, p_ext, ...) leaves the
    matrices one shared copy."""
    base = {n: len(s) for n, s in zip(names, shapes)}
    out_shapes, extra_shapes = ad.output_shapes(problem, dict(zip(names, shapes)))
    groups = ([i for i, s in enumerate(shapes) if len(s) >= 2], [i for i, s in enumerate(shapes) if len(s) < 2])
    total = sum(math.prod(s) for s in out_shapes + extra_shapes)
    packed = [([names[i] for i in group], _offsets([shapes[i] for i in group])) for group in groups]
    solution_offsets = _offsets(out_shapes + extra_shapes)

    def inputs(packs):
        arrays = {}
        for (group, offsets), pack in zip(packed, packs):
            arrays.update(zip(group, _unpack(pack, offsets)))
        return arrays

    def host_solve(*packs):  # NumPy for the solvers, batch axes in front
        lead = _lead(packs)
        outs, extras = ad.forward(problem, inputs(packs), options, base if lead else None)
        return _flat(outs + extras, out_shapes + extra_shapes, lead)

    def host_vjp(given, wanted):
        """The host vjp for the output gradients ``given`` and input gradients ``wanted`` (indices)."""
        wanted_names = [names[i] for i in wanted]
        cot_offsets = _offsets([out_shapes[i] for i in given])

        def host(mats, vecs, flat, cot):
            n_out = len(out_shapes)
            solution = _unpack(flat, solution_offsets)
            cots = [None] * n_out
            for i, c in zip(given, _unpack(cot, cot_offsets)):
                cots[i] = c
            lead = _lead((mats, vecs, flat, cot))
            grads = ad.backward(problem, inputs((mats, vecs)), options, solution[:n_out], solution[n_out:], cots,
                                base if lead else None, reduce=False, layer="mbdcp.jax", wanted=wanted_names)
            return _flat([grads[n] for n in wanted_names], [shapes[i] for i in wanted], lead)
        return host

    plain = _plain_step(names, shapes, options) if problem.name == "step" else None
    if plain is not None and plain[1] > _JAX_BACKWARD_CONTACTS:
        plain = None
    layout = (names, shapes, groups, out_shapes, plain)
    plain_backwards = {}

    native = (_native_lemke(options) if problem.name == "lcp" else
              _native_step(names, shapes, options) if problem.name == "step" else None)
    degenerate_tol = val.positive_scalar("degenerate_tol", options.get("degenerate_tol", DEGENERATE_TOL))

    def callback(*packs):
        return _host_call(host_solve, total, *packs)

    def solve(vals):
        packs = tuple(_pack([vals[i] for i in group]) for group in groups)
        if native is None:
            flat = callback(*packs)
        else:  # the custom call exists for the CPU only: elsewhere, the callback
            flat = jax.lax.platform_dependent(vals, packs, cpu=lambda v, p: native(v), default=lambda v, p: callback(*p))
        return tuple(_split(flat, out_shapes)), (packs, flat)

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
            grads = _lcp_vjp(M, q, flat, cots[0], degenerate_tol)
            return tuple(grads[i] if i in wanted else None for i in range(2))
        if plain is None:
            g = _host_gradients(host_vjp(given, wanted), shapes, wanted, mats, vecs, flat, [cots[i] for i in given])
        else:  # the C rule on the CPU, else JAX's; the host decides (and warns, or raises) where they do not
            key = (tuple(given), tuple(wanted))
            if key not in plain_backwards:
                plain_backwards[key] = _plain_backward(layout, degenerate_tol, host_vjp(given, wanted), given, wanted)
            c = [cots[i] for i in given]
            if _CPU_BACKWARD == "jax":
                g = plain_backwards[key](mats, vecs, flat, c)
            else:
                def on_host(mats, vecs, flat, c):
                    return _host_gradients(host_vjp(given, wanted), shapes, wanted, mats, vecs, flat, c)
                g = jax.lax.platform_dependent(mats, vecs, flat, c, cpu=on_host, default=plain_backwards[key])
        out = [None] * len(names)
        for i, x in zip(wanted, _split(g, [shapes[i] for i in wanted])):
            out[i] = x
        return tuple(out)

    layer.defvjp(fwd, bwd, symbolic_zeros=True)
    return layer


def _lead(packs):
    """The batch axes of packed callback arguments (all in front of the last axis)."""
    leads = [np.shape(p)[:-1] for p in packs]
    return np.broadcast_shapes(*leads) if any(leads) else ()


def lcp(M, q, **options):
    r"""The solution z of LCP(M, q) by :func:`mbdcp.lemke`, differentiable in M and q.

    Find :math:`z \ge 0` with :math:`w = Mz + q \ge 0`, :math:`z^T w = 0`. The gradient holds the
    active set (:math:`z_i > 0`) fixed: :math:`\bar q_\alpha = -M_{\alpha\alpha}^{-T}\bar z_\alpha`,
    :math:`\bar M = \bar q z^T` (:func:`mbdcp.derivatives.lcp`).

    Parameters
    ----------
    M : array_like, shape (n, n)
    q : array_like, shape (n,)
    **options
        :func:`mbdcp.lemke`'s keywords (``max_iter``, ``tol``, ...) and ``degenerate_tol`` of
        :func:`mbdcp.derivatives.lcp`.

    Returns
    -------
    jax.Array, shape (n,)
        z. A problem without a verified solution raises :class:`SolveError`.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import mbdcp.jax
    >>> M, q = jnp.array([[2.0, 1.0], [1.0, 2.0]]), jnp.array([-5.0, 6.0])
    >>> mbdcp.jax.lcp(M, q).tolist(), jax.grad(lambda q: mbdcp.jax.lcp(M, q)[0])(q).tolist()
    ([2.5, 0.0], [-0.5, 0.0])
    """
    return _call(ad.PROBLEMS["lcp"], {"M": M, "q": q}, options, False)[0]


def step(M, Wn, D, E, U, v, h, *, full_output=False, **kwargs):
    r"""One time step of :func:`mbdcp.step` (Stewart–Trinkle / Anitescu–Potra LCP), differentiable.

    Parameters
    ----------
    M, Wn, D, E, U, v, h
        As for :func:`mbdcp.step`. Gradients: ``M`` gets the symmetric gradient (valid for
        symmetric changes, the only ones :func:`mbdcp.step` accepts); ``U`` one of its own shape
        (a scalar, (n_c,), or the diagonal of a (n_c, n_c) matrix); E is combinatorial (zero).
    full_output : bool
        Return every output as a :class:`StepOutput` (v_next, p_n, beta, sigma, p_b, beta_j,
        sigma_j), each differentiable; default: ``v_next`` only.
    **kwargs
        :func:`mbdcp.step`'s keywords. Array keywords (``p_ext``, ``psi_n``, ``dpsi_n``,
        ``dpsi_f``, ``Wb``, ``theta``, ``dtheta``, ``Dj``, ``beta_max``) are inputs with gradients
        (``Ej`` gets zero); the others (``max_correction_speed``, ``baumgarte``, ``warm_start``,
        ...) are settings, as is ``degenerate_tol`` of :func:`mbdcp.derivatives.step`.

    Returns
    -------
    jax.Array, shape (n_v,), or StepOutput
        ``v_next`` (or all outputs). A step without a verified solution raises :class:`SolveError`.

    Examples
    --------
    A unit particle pushed along the ground (mu = 0.5): it slides, v_x = 0.8 - mu g h, so
    d v_x / d mu = -g h and d v_x / d push = 1:

    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import mbdcp.jax
    >>> M, Wn, D, E = jnp.eye(2), jnp.array([[0.0], [1.0]]), jnp.array([[1.0, -1.0], [0.0, 0.0]]), jnp.ones((2, 1))
    >>> def vx(mu, push):
    ...     return mbdcp.jax.step(M, Wn, D, E, mu, jnp.zeros(2), 0.1, p_ext=jnp.stack([push, -0.981]))[0]
    >>> round(float(vx(0.5, 0.8)), 12), [round(float(g), 12) for g in jax.grad(vx, (0, 1))(0.5, 0.8)]
    (0.3095, [-0.981, 1.0])
    """
    problem = ad.PROBLEMS["step"]
    arrays, options = ad.split_keywords(problem, kwargs)
    outs = _call(problem, dict(M=M, Wn=Wn, D=D, E=E, U=U, v=v, h=h, **arrays), options, full_output)
    return StepOutput(*outs) if full_output else outs[0]


def ccp(M, Wn, Wt, mu, v, h, *, full_output=False, **kwargs):
    r"""One cone complementarity step of :func:`mbdcp.ccp` (Anitescu & Tasora 2010), differentiable.

    Parameters
    ----------
    M, Wn, Wt, mu, v, h
        As for :func:`mbdcp.ccp`, dense (M as an (n_v, n_v) matrix). ``mu``'s gradient has its shape.
    full_output : bool
        Return a :class:`CCPOutput` (v_next, gamma (n_c, 3), p_b); default: ``v_next`` only.
    **kwargs
        :func:`mbdcp.ccp`'s keywords: ``p_ext``, ``psi_n``, ``Wb``, ``theta``, ``dtheta``, ``dpsi_t``
        are inputs with gradients; ``method``, ``tol``, ``max_iter``, ... and ``degenerate_tol`` of
        :func:`mbdcp.derivatives.ccp` are settings. The gradient is exact up to the accuracy of the
        iterative solve: use a tight ``tol``.

    Returns
    -------
    jax.Array, shape (n_v,), or CCPOutput
        A step that does not reach ``tol`` raises :class:`SolveError`.

    Examples
    --------
    A unit particle sliding at 1 m/s (mu = 0.5, g h = 0.0981): v_x = (1 - mu g h) / (1 + mu^2)

    >>> import jax, jax.numpy as jnp
    >>> jax.config.update("jax_enable_x64", True)
    >>> import mbdcp.jax
    >>> Wn, Wt = jnp.array([[0.0], [0.0], [1.0]]), jnp.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> vx = lambda mu: mbdcp.jax.ccp(jnp.eye(3), Wn, Wt, mu, jnp.array([1.0, 0, 0]), 0.01,
    ...                               p_ext=jnp.array([0, 0, -0.0981]), tol=1e-14)[0]
    >>> round(float(jax.grad(vx)(0.5)), 6)
    -0.687088
    """
    problem = ad.PROBLEMS["ccp"]
    arrays, options = ad.split_keywords(problem, kwargs)
    outs = _call(problem, dict(M=M, Wn=Wn, Wt=Wt, mu=mu, v=v, h=h, **arrays), options, full_output)
    return CCPOutput(*outs) if full_output else outs[0]
