"""The XLA custom calls of :mod:`mbdcp.jax`: on the CPU, the forward solve of :func:`mbdcp.jax.lcp`
(Lemke's method) and of a plain :func:`mbdcp.jax.step` straight into the C core through ``jax.ffi``,
when the extension ``mbdcp.infrastructure._xla`` is built and fits the installed XLA."""
import jax
import jax.numpy as jnp
import numpy as np

from mbdcp.derivatives._native_step import INPUTS as PLAIN_INPUTS
from mbdcp.derivatives._native_step import plain
from mbdcp.infrastructure import validate as val

try:
    from mbdcp.infrastructure import _xla
except ImportError:  # an optional extension: without it, host callbacks
    _xla = None

LEMKE_TARGET = "mbdcp_lemke"
LEMKE_OPTIONS = ("max_iter", "tol", "degenerate_tol")
STEP_TARGET = "mbdcp_step"
native_state = {}  # target -> True once registered, or the reason it cannot be


def native_target(target, handler):
    """``target`` registered with XLA for the CPU (on first use), or None with the reason kept
    in ``native_state``: no extension, or an XLA whose FFI version the handler does not fit."""
    state = native_state.get(target)
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
        native_state[target] = state
    return target if state is True else None


def native_lemke(options):
    """The forward solve of :func:`mbdcp.jax.lcp` as an XLA custom call (vals -> z and basis packed),
    or None when the custom call cannot serve these options (a warm start, ...) or is not available."""
    if not set(options) <= set(LEMKE_OPTIONS):
        return None
    max_iter, tol = val.lemke_settings(options.get("max_iter"), options.get("tol"))
    target = native_target(LEMKE_TARGET, "lemke_handler")
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


def plain_step(names, shapes, options):
    """(n_v, n_c, m) of a plain step, or None: joints, moving surfaces, a matrix U (its diagonal is
    checked on the host), a stabilisation option, a warm start, ... or shapes that do not fit (a
    misfit the callback's validation names)."""
    if not plain(names, options):
        return None  # other methods raise, the stabilisation options change psi_n: the callback's
    s = dict(zip(names, shapes))
    n_v, n_c, m = s["v"][0] if len(s["v"]) == 1 else -1, s["Wn"][-1], s["D"][-1]
    want = {"M": (n_v, n_v), "Wn": (n_v, n_c), "D": (n_v, m), "E": (m, n_c), "v": (n_v,), "h": (),
            "p_ext": (n_v,), "psi_n": (n_c,)}
    if n_v < 1 or any(s[k] != w for k, w in want.items() if k in s) or s["U"] not in ((), (n_c,)):
        return None
    return n_v, n_c, m


def native_step(names, shapes, options):
    """The forward solve of :func:`mbdcp.jax.step` as an XLA custom call (vals -> v_next, p_n, beta,
    sigma packed, as the callback packs them), or None when the step is not plain
    (:func:`plain_step`) or no custom call is available."""
    sizes = plain_step(names, shapes, options)
    if sizes is None:
        return None
    n_v, n_c, m = sizes
    max_iter, tol = val.lemke_settings(options.get("max_iter"), options.get("tol"))
    target = native_target(STEP_TARGET, "step_handler")
    if target is None:
        return None
    from jax import ffi
    index = {k: i for i, k in enumerate(names)}
    absent = {"p_ext": jnp.zeros(0), "psi_n": jnp.zeros(0)}  # a last axis of 0: NULL for the C core

    def native(vals):
        a = [vals[index[k]] if k in index else absent[k] for k in PLAIN_INPUTS]
        a[4] = jnp.broadcast_to(a[4], (n_c,))  # a scalar mu: the same for every contact
        result = jax.ShapeDtypeStruct((n_v + 2 * n_c + m,), jnp.float64)
        return ffi.ffi_call(target, result, vmap_method="expand_dims")(*a, max_iter=np.int32(max_iter),
                                                                      tol=np.float64(tol))
    return native
