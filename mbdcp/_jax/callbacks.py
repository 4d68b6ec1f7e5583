"""Host callbacks of :mod:`mbdcp.jax`: a NumPy function called from the compiled program, its
arrays travelling packed in flat vectors (a host callback costs per argument)."""
import math

import jax
import jax.numpy as jnp
import numpy as np

try:  # newer JAX: a host callback on the CPU's own buffers
    from jax.experimental.buffer_callback import buffer_callback
except ImportError:
    buffer_callback = None


def host_call(fn, size, *args):
    """fn(*args as NumPy arrays) -> a float64 array of ``size`` entries (batch axes in front
    under ``jax.vmap``), called from the compiled program. On the CPU through
    ``jax.experimental.buffer_callback``: fn reads XLA's buffers in place and its result is written
    into XLA's (``jax.pure_callback`` first copies every argument into a new jax.Array, which
    costs more than a small solve); fn must keep no reference to its arguments. Elsewhere (or
    with a JAX without it), ``jax.pure_callback``."""
    result = jax.ShapeDtypeStruct((size,), jnp.float64)

    def pure(*a):
        return jax.pure_callback(fn, result, *a, vmap_method="expand_dims")
    if buffer_callback is None:
        return pure(*args)

    def in_place(ctx, out, *a):
        np.asarray(out)[...] = fn(*[np.asarray(x) for x in a])
    cpu = buffer_callback(in_place, result, vmap_method="expand_dims")
    return jax.lax.platform_dependent(*args, cpu=cpu, default=pure)


def pack(vals):
    """One flat vector of the arrays: a host callback costs per argument, so arrays travel packed."""
    return jnp.concatenate([jnp.ravel(v) for v in vals]) if vals else jnp.zeros(0)


def split(flat, shapes):
    """The arrays of the given shapes packed in a flat vector (JAX, inside the traced function)."""
    out, o = [], 0
    for s in shapes:
        n = math.prod(s)
        out.append(flat[o:o + n].reshape(s))
        o += n
    return out


def offsets(shapes):
    """(start, stop, shape) of each array of these shapes packed in a flat vector: what
    :func:`unpack` takes, worked out once per layer rather than once per call."""
    out, o = [], 0
    for s in shapes:
        n = math.prod(s)
        out.append((o, o + n, tuple(s)))
        o += n
    return tuple(out)


def unpack(flat, at):
    """The arrays packed in a flat NumPy vector at the offsets ``at`` (:func:`offsets`), its
    leading (batch) axes kept in front of each."""
    flat = np.asarray(flat)
    if flat.ndim == 1:
        return [flat[a:b].reshape(s) for a, b, s in at]
    lead = flat.shape[:-1]
    return [flat[..., a:b].reshape(lead + s) for a, b, s in at]


def flat(arrays, shapes, lead):
    """Arrays with the batch axes ``lead`` in front, packed along the last axis."""
    if not lead:
        return np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.zeros(0)
    return np.concatenate([np.reshape(a, lead + (math.prod(s),)) for a, s in zip(arrays, shapes)] + [np.zeros(lead + (0,))],
                          axis=-1)


def lead(packs):
    """The batch axes of packed callback arguments (all in front of the last axis)."""
    leads = [np.shape(p)[:-1] for p in packs]
    return np.broadcast_shapes(*leads) if any(leads) else ()
