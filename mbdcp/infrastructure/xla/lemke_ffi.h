/*
 * lemke_ffi.h - mbdcp_lemke_solve as an XLA FFI handler (a custom call of a jitted JAX program).
 *
 * Operands (f64, row-major): M (..., n, n) and q (..., n); results: z (..., n) and basis
 * (..., n), 1.0 where z_i is basic at the end (the active set the derivative needs), 0.0 elsewhere.
 * The leading axes are batch axes (jax.vmap with vmap_method="expand_dims"): each of M's and q's
 * is 1 (shared) or the results' size. Attributes: max_iter (int, 0: the default), the
 * settings' max_pivots, and tol (float, 0: the default).
 *
 * A problem that does not end SOLVED is an error of the call, whose message names the status
 * and the instance as mbdcp.jax's SolveError does; JAX raises it as a runtime error.
 */
#ifndef MBDCP_LEMKE_FFI_H
#define MBDCP_LEMKE_FFI_H

#include "xla_ffi_abi.h"

MbdcpXlaError *mbdcp_xla_lemke(MbdcpXlaCallFrame *frame);

#endif /* MBDCP_LEMKE_FFI_H */
