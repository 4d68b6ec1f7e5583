/*
 * ffi_frame.h - what every mbdcp XLA FFI handler does with its call frame: the registration's
 * metadata query, errors, typed buffers and scalar attributes, Lemke's settings, the message of a
 * failed solve. Glue, not core (see lemke_ffi.c).
 */
#ifndef MBDCP_FFI_FRAME_H
#define MBDCP_FFI_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "mbdcp/lemke.h"
#include "xla_ffi_abi.h"

/* Leading (batch) axes a handler accepts. */
#define MBDCP_XLA_MAX_BATCH_RANK 16

/* An XLA error with this code and message (copied by XLA). */
MbdcpXlaError *mbdcp_xla_error(const MbdcpXlaCallFrame *frame, int errc, const char *message);

/* The checks every call starts with: 1 if the call is over (*result is then what to return: the
 * metadata query answered, a frame older than our FFI version refused, a stage other than
 * execution), 0 if it is to execute. `who` names the function in messages ("mbdcp.lcp"). */
int mbdcp_xla_preamble(MbdcpXlaCallFrame *frame, const char *who, MbdcpXlaError **result);

/* The calling thread's workspace of at least `bytes`, or NULL when out of memory. It is kept
 * between calls (grown, never shrunk, as the Python binding's is) and freed when the thread ends:
 * a large step's workspace, malloc'd per call, would be mapped afresh every time and zeroed by the
 * kernel page by page. One block per thread keeps the handlers reentrant: XLA may run two calls at
 * once on its threads. */
void *mbdcp_xla_workspace(size_t bytes);

/* Buffer i of args or rets (NULL unless an f64 buffer of the given rank). */
const MbdcpXlaBuffer *mbdcp_xla_f64_buffer(int64_t size, const int *types, void *const *items, int64_t i,
                                           int64_t rank);

/* Lemke's settings from the attributes max_iter and tol; NULL, or the message of a bad one. */
const char *mbdcp_xla_lemke_settings(const MbdcpXlaAttrs *attrs, MbdcpLemkeSettings *s);

/* NULL when no instance failed, else the error of the call as mbdcp.jax's SolveError words it:
 * `who`, the status, and in a batch (batch_rank > 0) the first failing instance and how many failed. */
MbdcpXlaError *mbdcp_xla_failure(const MbdcpXlaCallFrame *frame, const char *who, int64_t batch_rank,
                                 MbdcpStatus status, int64_t first, int64_t failed);

#endif /* MBDCP_FFI_FRAME_H */
