/*
 * lemke_ffi.c - mbdcp_lemke_solve as an XLA FFI handler (see lemke_ffi.h).
 *
 * Glue, not core: XLA gives a CPU handler no allocator, so the workspace of a call is the calling
 * thread's block (mbdcp_xla_workspace), shared by the call's instances. The handler is reentrant:
 * XLA may run two calls at once on its threads.
 */
#include "lemke_ffi.h"

#include <stdio.h>  /* snprintf: messages of failed calls */
#include <string.h>

#include "ffi_frame.h"
#include "mbdcp/lemke.h"

/* The operands and results of one call, checked. */
typedef struct {
    const MbdcpXlaBuffer *M, *q, *z, *basis;
    mbdcp_int n;
    int64_t batch_rank; /* leading axes */
    int64_t count;      /* instances: the product of the results' leading axes */
} Call;

static const char *shapes_of(const MbdcpXlaCallFrame *frame, Call *c)
{
    const MbdcpXlaArgs *a = &frame->args;
    const MbdcpXlaRets *r = &frame->rets;
    if (r->size != 2 || r->types[0] != MBDCP_XLA_RET_BUFFER) return "mbdcp.lcp's custom call has two results";
    const MbdcpXlaBuffer *z0 = (const MbdcpXlaBuffer *)r->rets[0];
    if (z0->struct_size < MBDCP_XLA_BUFFER_SIZE || z0->rank < 1 || z0->rank > MBDCP_XLA_MAX_BATCH_RANK + 1)
        return "mbdcp.lcp's custom call: z must be (..., n)";
    c->batch_rank = z0->rank - 1;
    c->z = mbdcp_xla_f64_buffer(r->size, r->types, r->rets, 0, c->batch_rank + 1);
    c->basis = mbdcp_xla_f64_buffer(r->size, r->types, r->rets, 1, c->batch_rank + 1);
    c->M = mbdcp_xla_f64_buffer(a->size, a->types, a->args, 0, c->batch_rank + 2);
    c->q = mbdcp_xla_f64_buffer(a->size, a->types, a->args, 1, c->batch_rank + 1);
    if (a->size != 2 || !c->z || !c->basis || !c->M || !c->q)
        return "mbdcp.lcp's custom call takes f64 M (..., n, n) and q (..., n) to f64 z and basis (..., n)";
    const int64_t n = c->z->dims[c->batch_rank];
    if (n > 46340 || c->M->dims[c->batch_rank] != n || c->M->dims[c->batch_rank + 1] != n ||
        c->q->dims[c->batch_rank] != n || c->basis->dims[c->batch_rank] != n)
        return "mbdcp.lcp's custom call: M must be (..., n, n), q, z and basis (..., n)";
    c->n = (mbdcp_int)n;
    c->count = 1;
    for (int64_t k = 0; k < c->batch_rank; ++k) {
        const int64_t d = c->z->dims[k];
        if (c->basis->dims[k] != d || (c->M->dims[k] != d && c->M->dims[k] != 1) ||
            (c->q->dims[k] != d && c->q->dims[k] != 1))
            return "mbdcp.lcp's custom call: each batch axis of M and q must be 1 or the results' size";
        c->count *= d;
    }
    return NULL;
}

/* Offset (in instances) of instance i in an operand whose batch axes are 1 where shared. */
static int64_t instance_offset(const Call *c, const MbdcpXlaBuffer *b, int64_t i)
{
    int64_t offset = 0, stride = 1;
    for (int64_t k = c->batch_rank - 1; k >= 0; --k) {
        const int64_t d = c->z->dims[k], index = i % d;
        i /= d;
        if (b->dims[k] != 1) offset += index * stride;
        stride *= b->dims[k];
    }
    return offset;
}

/* Solve every instance; NULL, or the error of the call. */
static MbdcpXlaError *solve_all(const MbdcpXlaCallFrame *frame, const Call *c, const MbdcpLemkeSettings *s)
{
    const size_t n = (size_t)c->n, nbytes = mbdcp_lemke_workspace_size(c->n);
    char *block = mbdcp_xla_workspace(nbytes + n * (sizeof(double) + sizeof(mbdcp_int)));
    if (!block) return mbdcp_xla_error(frame, MBDCP_XLA_RESOURCE_EXHAUSTED, "mbdcp.lcp: no memory for Lemke's workspace");
    MbdcpLemkeOutput out;
    out.w = (double *)(block + nbytes);
    out.basis = (mbdcp_int *)(block + nbytes + n * sizeof(double));
    out.ray = NULL;
    int64_t first = -1, failed = 0;
    MbdcpStatus first_status = MBDCP_SOLVED;
    MbdcpReturn rc = MBDCP_OK;
    for (int64_t i = 0; i < c->count; ++i) {
        const double *M = (const double *)c->M->data + (size_t)instance_offset(c, c->M, i) * n * n;
        const double *q = (const double *)c->q->data + (size_t)instance_offset(c, c->q, i) * n;
        double *basis = (double *)c->basis->data + (size_t)i * n;
        MbdcpLemkeInfo info;
        out.z = (double *)c->z->data + (size_t)i * n;
        rc = mbdcp_lemke_solve(c->n, M, q, s, NULL, &out, &info, block, nbytes);
        if (rc != MBDCP_OK) break;
        if (info.status != MBDCP_SOLVED && failed++ == 0) {
            first = i;
            first_status = info.status;
        }
        for (size_t j = 0; j < n; ++j) basis[j] = out.basis[j] ? 1.0 : 0.0;
    }
    char message[320];
    if (rc != MBDCP_OK) {
        snprintf(message, sizeof message, "mbdcp.lcp: %s (M or q)", mbdcp_return_message(rc));
        return mbdcp_xla_error(frame, MBDCP_XLA_INVALID_ARGUMENT, message);
    }
    return mbdcp_xla_failure(frame, "mbdcp.lcp", c->batch_rank, first_status, first, failed);
}

MbdcpXlaError *mbdcp_xla_lemke(MbdcpXlaCallFrame *frame)
{
    MbdcpXlaError *over;
    if (mbdcp_xla_preamble(frame, "mbdcp.lcp", &over)) return over;
    Call c;
    MbdcpLemkeSettings s;
    const char *msg = shapes_of(frame, &c);
    if (!msg) msg = mbdcp_xla_lemke_settings(&frame->attrs, &s);
    if (msg) return mbdcp_xla_error(frame, MBDCP_XLA_INVALID_ARGUMENT, msg);
    return c.n == 0 ? NULL : solve_all(frame, &c, &s);
}
