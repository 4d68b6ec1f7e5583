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
try:
    import jax  # noqa: F401 (imported first, for the extra's message when JAX is missing)
except ModuleNotFoundError as exc:
    if exc.name not in ("jax", "jaxlib"):
        raise
    raise ModuleNotFoundError("mbdcp.jax needs JAX: pip install 'mbdcp[jax]'", name=exc.name) from exc

from mbdcp._jax import backward as _backward
from mbdcp._jax import ffi as _ffi
from mbdcp._jax.layer import call as _call
from mbdcp.derivatives import _layers as ad
from mbdcp.derivatives._layers import CCPOutput, DegenerateWarning, SolveError, StepOutput

__all__ = ["CCPOutput", "DegenerateWarning", "SolveError", "StepOutput", "ccp", "lcp", "step"]

# The machinery is mbdcp._jax's, one module per mechanism. The tests read these of its names here;
# what they change they set where it lives (_jax.backward.CPU_BACKWARD, _jax.callbacks.buffer_callback,
# _jax.layer.LAYERS), so that the change takes effect.
_JAX_BACKWARD_CONTACTS = _backward.JAX_BACKWARD_CONTACTS
_LEMKE_TARGET, _STEP_TARGET = _ffi.LEMKE_TARGET, _ffi.STEP_TARGET
_native_state, _native_target = _ffi.native_state, _ffi.native_target


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
