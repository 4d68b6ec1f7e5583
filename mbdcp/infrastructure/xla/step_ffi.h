/*
 * step_ffi.h - mbdcp_step_solve (one Stewart-Trinkle time step, Trinkle 2003, eqs. 25-47) as an
 * XLA FFI handler: the forward solve of mbdcp.jax.step in a jitted program, without joints or
 * moving surfaces.
 *
 * Operands (f64, row-major): M (..., n_v, n_v), Wn (..., n_v, n_c), D (..., n_v, m),
 * E (..., m, n_c), U (..., n_c) (mu per contact), v (..., n_v), h (...), p_ext (..., n_v) and
 * psi_n (..., n_c); a p_ext or psi_n whose last axis is 0 is absent (NULL for the C core).
 * Result: one f64 buffer (..., n_v + 2 n_c + m) holding v_next, then z = (p_n, beta, sigma) as
 * mbdcp_step_solve orders it, which is also the order of mbdcp.jax's packed step outputs.
 * The leading axes are batch axes (jax.vmap with vmap_method="expand_dims"): each operand's is 1
 * (shared) or the result's size. Attributes: max_iter (int, 0: the default) and tol (float, 0:
 * the default), Lemke's settings.
 *
 * A step that does not end SOLVED is an error of the call whose message names the status (and the
 * instance of a batch) as mbdcp.jax's SolveError does; inputs the C core rejects (not finite, M
 * not symmetric positive definite, E not a grouping, mu < 0, h <= 0) are an invalid argument.
 */
#ifndef MBDCP_STEP_FFI_H
#define MBDCP_STEP_FFI_H

#include "xla_ffi_abi.h"

MbdcpXlaError *mbdcp_xla_step(MbdcpXlaCallFrame *frame);

#endif /* MBDCP_STEP_FFI_H */
