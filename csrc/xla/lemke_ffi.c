/*
 * lemke_ffi.c - mbdcp_lemke_solve as an XLA FFI handler (see lemke_ffi.h).
 *
 * Glue, not core: XLA gives a CPU handler no allocator, so the workspace of a call is one
 * malloc'd block, shared by the call's instances and freed before returning. No globals: the
 * handler is reentrant (XLA may run two calls at once on its threads).
 */
#include "lemke_ffi.h"

#include <stdio.h>  /* snprintf: messages of failed calls */
#include <stdlib.h> /* malloc, free: the call's workspace */
#include <string.h>

#include "mbdcp/lemke.h"

#define MAX_BATCH_RANK 16

/* The names of mbdcp.Status, in MbdcpStatus order. */
static const char *status_name(MbdcpStatus s)
{
    static const char *const names[MBDCP_N_STATUSES] = {"SOLVED", "RAY_TERMINATION", "MAX_ITERATIONS",
                                                        "NUMERICAL_ERROR", "INTERRUPTED"};
    return (s >= 0 && (int)s < MBDCP_N_STATUSES) ? names[s] : "UNKNOWN";
}

static MbdcpXlaError *error(const MbdcpXlaCallFrame *frame, int errc, const char *message)
{
    MbdcpXlaErrorArgs args;
    args.struct_size = MBDCP_XLA_ERROR_ARGS_SIZE;
    args.extension_start = NULL;
    args.message = message;
    args.errc = errc;
    return frame->api->error_create(&args);
}

/* The registration's query: which FFI version the handler was built for (XLA refuses a
 * mismatch). Nothing else is asked of it; the api table is NULL here, so a bad size cannot be
 * reported as an error and leaves the version unset (0.0), which registration refuses. */
static MbdcpXlaError *metadata(MbdcpXlaCallFrame *frame)
{
    MbdcpXlaMetadataExtension *ext = (MbdcpXlaMetadataExtension *)frame->extension_start;
    if (ext->extension_base.struct_size < MBDCP_XLA_METADATA_EXTENSION_SIZE || !ext->metadata ||
        ext->metadata->struct_size < MBDCP_XLA_METADATA_SIZE)
        return NULL;
    MbdcpXlaMetadata *m = ext->metadata;
    m->api_version.struct_size = MBDCP_XLA_VERSION_SIZE;
    m->api_version.extension_start = NULL;
    m->api_version.major_version = MBDCP_XLA_FFI_MAJOR;
    m->api_version.minor_version = MBDCP_XLA_FFI_MINOR;
    m->traits = 0;
    if (m->struct_size >= MBDCP_XLA_SIZE(MbdcpXlaMetadata, state_type_id)) m->state_type_id = 0; /* stateless */
    return NULL;
}

/* Buffer i of args or rets (NULL unless an f64 buffer of the given rank). */
static const MbdcpXlaBuffer *f64_buffer(int64_t size, const int *types, void *const *items, int64_t i, int64_t rank)
{
    if (i >= size || types[i] != MBDCP_XLA_ARG_BUFFER) return NULL;
    const MbdcpXlaBuffer *b = (const MbdcpXlaBuffer *)items[i];
    if (b->struct_size < MBDCP_XLA_BUFFER_SIZE || b->dtype != MBDCP_XLA_F64 || b->rank != rank) return NULL;
    return b;
}

/* The scalar attribute `name` as a double (ints converted); 1 if found. */
static int scalar_attr(const MbdcpXlaAttrs *attrs, const char *name, double *value)
{
    const size_t len = strlen(name);
    for (int64_t i = 0; i < attrs->size; ++i) {
        const MbdcpXlaByteSpan *key = attrs->names[i];
        if (attrs->types[i] != MBDCP_XLA_ATTR_SCALAR || key->len != len || memcmp(key->ptr, name, len) != 0) continue;
        const MbdcpXlaScalar *s = (const MbdcpXlaScalar *)attrs->attrs[i];
        if (s->dtype == MBDCP_XLA_F64) *value = *(const double *)s->value;
        else if (s->dtype == MBDCP_XLA_S32) *value = *(const int32_t *)s->value;
        else if (s->dtype == MBDCP_XLA_S64) *value = (double)*(const int64_t *)s->value;
        else return 0;
        return 1;
    }
    return 0;
}

/* Settings from the attributes; NULL, or the message of a bad one. */
static const char *settings_from(const MbdcpXlaAttrs *attrs, MbdcpLemkeSettings *s)
{
    double max_iter = 0.0, tol = 0.0;
    const char *msg = NULL;
    mbdcp_lemke_default_settings(s);
    if (!scalar_attr(attrs, "max_iter", &max_iter) || !scalar_attr(attrs, "tol", &tol))
        return "mbdcp.lcp's custom call needs the attributes max_iter and tol";
    if (!(max_iter >= 0.0 && max_iter < 2147483648.0)) return "max_iter must be in [0, 2^31)";
    s->max_pivots = (mbdcp_int)max_iter;
    if (tol > 0.0) s->tol = tol;
    return mbdcp_lemke_check_settings(s, &msg) == MBDCP_OK ? NULL : msg;
}

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
    if (z0->struct_size < MBDCP_XLA_BUFFER_SIZE || z0->rank < 1 || z0->rank > MAX_BATCH_RANK + 1)
        return "mbdcp.lcp's custom call: z must be (..., n)";
    c->batch_rank = z0->rank - 1;
    c->z = f64_buffer(r->size, r->types, r->rets, 0, c->batch_rank + 1);
    c->basis = f64_buffer(r->size, r->types, r->rets, 1, c->batch_rank + 1);
    c->M = f64_buffer(a->size, a->types, a->args, 0, c->batch_rank + 2);
    c->q = f64_buffer(a->size, a->types, a->args, 1, c->batch_rank + 1);
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

/* The message of a failed batch, as mbdcp.jax's SolveError words it. */
static void failure_message(char *buf, size_t size, const Call *c, MbdcpStatus status, int64_t first, int64_t failed)
{
    char where[96] = "";
    if (c->batch_rank > 0) {
        int k = snprintf(where, sizeof where, " at instance %lld of the batch", (long long)first);
        if (failed > 1 && k > 0) snprintf(where + k, sizeof where - (size_t)k, " (%lld instances failed)", (long long)failed);
    }
    snprintf(buf, size, "mbdcp.lcp ended with status %s%s (%s): no solution to return or differentiate",
             status_name(status), where, mbdcp_status_message(status));
}

/* Solve every instance; NULL, or the error of the call. */
static MbdcpXlaError *solve_all(const MbdcpXlaCallFrame *frame, const Call *c, const MbdcpLemkeSettings *s)
{
    const size_t n = (size_t)c->n, nbytes = mbdcp_lemke_workspace_size(c->n);
    char *block = malloc(nbytes + n * (sizeof(double) + sizeof(mbdcp_int)));
    if (!block) return error(frame, MBDCP_XLA_RESOURCE_EXHAUSTED, "mbdcp.lcp: no memory for Lemke's workspace");
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
    free(block);
    char message[320];
    if (rc != MBDCP_OK) {
        snprintf(message, sizeof message, "mbdcp.lcp: %s (M or q)", mbdcp_return_message(rc));
        return error(frame, MBDCP_XLA_INVALID_ARGUMENT, message);
    }
    if (failed == 0) return NULL;
    failure_message(message, sizeof message, c, first_status, first, failed);
    return error(frame, MBDCP_XLA_FAILED_PRECONDITION, message);
}

MbdcpXlaError *mbdcp_xla_lemke(MbdcpXlaCallFrame *frame)
{
    if (frame->extension_start && frame->extension_start->type == MBDCP_XLA_EXTENSION_METADATA)
        return metadata(frame);
    if (frame->struct_size < MBDCP_XLA_CALL_FRAME_SIZE)
        return error(frame, MBDCP_XLA_INVALID_ARGUMENT, "mbdcp.lcp: XLA's call frame is older than its FFI version");
    if (frame->stage != MBDCP_XLA_STAGE_EXECUTE) return NULL; /* registered for execution only */
    Call c;
    MbdcpLemkeSettings s;
    const char *msg = shapes_of(frame, &c);
    if (!msg) msg = settings_from(&frame->attrs, &s);
    if (msg) return error(frame, MBDCP_XLA_INVALID_ARGUMENT, msg);
    return c.n == 0 ? NULL : solve_all(frame, &c, &s);
}
