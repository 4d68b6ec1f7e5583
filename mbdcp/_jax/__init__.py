"""The machinery behind :mod:`mbdcp.jax`, one module per mechanism:

- :mod:`~mbdcp._jax.layer`: the ``jax.custom_vjp`` of each problem (its forward and backward, the
  cache of layers by shapes and options), and the eager path outside transformations;
- :mod:`~mbdcp._jax.callbacks`: host callbacks from the compiled program into NumPy
  (``jax.experimental.buffer_callback`` on the CPU, else ``jax.pure_callback``), their arguments
  packed into flat vectors;
- :mod:`~mbdcp._jax.ffi`: the XLA custom calls (``jax.ffi``) into the C core's Lemke method and
  plain step, where the extension ``mbdcp.infrastructure._xla`` serves;
- :mod:`~mbdcp._jax.backward`: gradients computed in JAX itself (the LCP's, a plain step's), with
  the host deciding only where they do not;
- :mod:`~mbdcp._jax.step_vjp`: the plain step's reverse mode written with masks, for that backward.

What the layers of JAX and PyTorch share, in NumPy only, is :mod:`mbdcp.derivatives._layers`.
"""

__all__ = []  # private: the names live at mbdcp.jax
