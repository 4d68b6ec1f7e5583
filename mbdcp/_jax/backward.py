"""Gradients of :mod:`mbdcp.jax` computed in JAX itself: the LCP's (:func:`lcp_vjp`) and a plain
step's (:func:`plain_backward`, by :mod:`mbdcp._jax.step_vjp`), with host callbacks into
:mod:`mbdcp.derivatives` only where those rules do not decide (to warn, to raise, or to take the
reference's side)."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from mbdcp._jax import callbacks as cb
from mbdcp._jax import step_vjp
from mbdcp.derivatives import _layers as ad
from mbdcp.derivatives._common import GEOMETRY
from mbdcp.derivatives.lcp import RCOND_MIN


def lcp_vjp(M, q, flat, gz, tol):
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
JAX_BACKWARD_CONTACTS = 16
# where the plain step's backward runs on the CPU: "c", the C core's rule through a host callback
# (faster there than the same rule compiled by XLA); "jax", JAX's rule as on other platforms (its
# tests run it on the CPU)
CPU_BACKWARD = "c"


def plain_step_vjp(layout, tol, mats, vecs, flat, cots, geometry):
    """(gradients by name, ok) of a plain step by :func:`mbdcp._jax.step_vjp.step_vjp`;
    ``layout``: (names, shapes, groups of packed inputs, output shapes, (n_v, n_c, m)); ``geometry``:
    gradients in the gaps or constraint directions are wanted."""
    names, shapes, groups, out_shapes, (n_v, n_c, _) = layout
    a = {}
    for group, pack in zip(groups, (mats, vecs)):
        a.update(zip((names[i] for i in group), cb.split(pack, [shapes[i] for i in group])))
    a.setdefault("p_ext", jnp.zeros(n_v))
    a.setdefault("psi_n", jnp.zeros(n_c))
    out = cb.split(flat, out_shapes[:4])
    cot = [jnp.zeros(s) if c is None else c for c, s in zip(cots[:4], out_shapes[:4])]
    grads, ok = step_vjp.step_vjp({**a, "U": jnp.broadcast_to(a["U"], (n_c,))}, out, cot, tol, geometry)
    u_shape = shapes[names.index("U")]
    grads["U"] = jnp.reshape(jnp.sum(grads["U"]) if u_shape == () else grads["U"], u_shape)
    return grads, ok


def host_gradients(host_vjp, shapes, wanted, mats, vecs, flat, cot):
    """The gradients of the inputs ``wanted`` (indices into ``shapes``), packed, from the host's vjp
    (a callback on the packed inputs, the forward's ``flat`` and the given cotangents ``cot``)."""
    return cb.host_call(host_vjp, sum(math.prod(shapes[i]) for i in wanted), mats, vecs, flat, cb.pack(cot))


def plain_backward(layout, tol, host_vjp, given, wanted):
    """The backward of a plain step for the output gradients ``given`` and the inputs ``wanted``
    (indices), compiled once (run op by op, its many small operations would cost more than the
    host's): (mats, vecs, flat, cotangents) -> the wanted gradients packed. In JAX itself; the
    host (``host_vjp``) decides, and warns or raises, only where the JAX rule does not."""
    names, shapes, _, out_shapes, _ = layout

    def host(mats, vecs, flat, cot):
        return host_gradients(host_vjp, shapes, wanted, mats, vecs, flat, cot)

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
        grads, ok = plain_step_vjp(layout, tol, mats, vecs, flat, full,
                                   not GEOMETRY.isdisjoint(names[i] for i in wanted))
        return either(ok, cb.pack([grads[names[i]] for i in wanted]), mats, vecs, flat, cot)
    return jax.jit(backward)


def plain_gradients(compiled, host_vjp, shapes, wanted, mats, vecs, flat, cot):
    """The gradients of the inputs ``wanted`` of a plain step, packed: on the CPU the C core's rule
    through the host's vjp (``host_vjp``, which takes :func:`mbdcp.derivatives.step` where the C
    rule does not decide), elsewhere, or everywhere when :data:`CPU_BACKWARD` is "jax",
    ``compiled`` (the JAX rule of :func:`plain_backward`)."""
    if CPU_BACKWARD == "jax":
        return compiled(mats, vecs, flat, cot)

    def on_host(mats, vecs, flat, cot):
        return host_gradients(host_vjp, shapes, wanted, mats, vecs, flat, cot)
    return jax.lax.platform_dependent(mats, vecs, flat, cot, cpu=on_host, default=compiled)
