/*
 * step_ffi.c - mbdcp_step_solve as an XLA FFI handler (see step_ffi.h).
 *
 * Glue, not core: as in lemke_ffi.c, the workspace of a call is one malloc'd block shared by its
 * instances and freed before returning; no globals (XLA may run two calls at once). The small
 * helpers of the call frame are lemke_ffi.c's, kept static in each handler.
 */
#include "step_ffi.h"

#include <stdio.h>  /* snprintf: messages of failed calls */
#include <stdlib.h> /* malloc, free: the call's workspace */
#include <string.h>

#include "mbdcp/step.h"

#define MAX_BATCH_RANK 16

enum { OP_M, OP_WN, OP_D, OP_E, OP_U, OP_V, OP_H, OP_PEXT, OP_PSI, N_OPERANDS };
static const int64_t BASE_RANK[N_OPERANDS] = {2, 2, 2, 2, 1, 1, 0, 1, 1};

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

/* The registration's query: the FFI version the handler was built for (see lemke_ffi.c). */
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

/* Lemke's settings from the attributes; NULL, or the message of a bad one. */
static const char *settings_from(const MbdcpXlaAttrs *attrs, MbdcpLemkeSettings *s)
{
    double max_iter = 0.0, tol = 0.0;
    const char *msg = NULL;
    mbdcp_lemke_default_settings(s);
    if (!scalar_attr(attrs, "max_iter", &max_iter) || !scalar_attr(attrs, "tol", &tol))
        return "mbdcp.step's custom call needs the attributes max_iter and tol";
    if (!(max_iter >= 0.0 && max_iter < 2147483648.0)) return "max_iter must be in [0, 2^31)";
    s->max_pivots = (mbdcp_int)max_iter;
    if (tol > 0.0) s->tol = tol;
    return mbdcp_lemke_check_settings(s, &msg) == MBDCP_OK ? NULL : msg;
}

/* The operands and result of one call, checked. */
typedef struct {
    const MbdcpXlaBuffer *in[N_OPERANDS], *out;
    int64_t n_v, n_c, m;
    int64_t batch_rank; /* leading axes */
    int64_t count;      /* instances: the product of the result's leading axes */
} Call;

/* The last dimension (axis k from the end, 1-based) of one instance of operand i. */
static int64_t dim(const Call *c, int i, int64_t k)
{
    return c->in[i]->dims[c->in[i]->rank - k];
}

/* Base dimensions: each operand's (rows, cols) or (length,) must be these; p_ext, psi_n may be 0. */
static int dims_fit(const Call *c)
{
    const int64_t nv = c->n_v, nc = c->n_c, m = c->m;
    const int64_t want[N_OPERANDS][2] = {{nv, nv}, {nv, nc}, {nv, m}, {m, nc}, {nc, 0},
                                         {nv, 0},  {0, 0},   {nv, 0}, {nc, 0}};
    for (int i = 0; i < N_OPERANDS; ++i) {
        for (int64_t a = 0; a < BASE_RANK[i]; ++a) {
            const int64_t d = dim(c, i, BASE_RANK[i] - a);
            if (d != want[i][a] && !((i == OP_PEXT || i == OP_PSI) && d == 0)) return 0;
        }
    }
    return nv >= 1 && nv <= 46340 && 2 * nc + m <= 46340; /* N^2 and n_v^2 fit an int */
}

static const char *shapes_of(const MbdcpXlaCallFrame *frame, Call *c)
{
    const MbdcpXlaArgs *a = &frame->args;
    const MbdcpXlaRets *r = &frame->rets;
    if (r->size != 1 || r->types[0] != MBDCP_XLA_RET_BUFFER) return "mbdcp.step's custom call has one result";
    const MbdcpXlaBuffer *o = (const MbdcpXlaBuffer *)r->rets[0];
    if (o->struct_size < MBDCP_XLA_BUFFER_SIZE || o->rank < 1 || o->rank > MAX_BATCH_RANK + 1)
        return "mbdcp.step's custom call: its result must be (..., n_v + 2 n_c + m)";
    c->batch_rank = o->rank - 1;
    c->out = f64_buffer(r->size, r->types, r->rets, 0, o->rank);
    int ok = a->size == N_OPERANDS && c->out != NULL;
    for (int i = 0; ok && i < N_OPERANDS; ++i) {
        c->in[i] = f64_buffer(a->size, a->types, a->args, i, c->batch_rank + BASE_RANK[i]);
        ok = c->in[i] != NULL;
    }
    if (!ok)
        return "mbdcp.step's custom call takes f64 M, Wn, D, E, U, v, h, p_ext, psi_n (with the same leading axes) "
               "to one f64 result";
    c->n_v = dim(c, OP_V, 1);
    c->n_c = dim(c, OP_WN, 1);
    c->m = dim(c, OP_D, 1);
    if (!dims_fit(c) || c->out->dims[c->batch_rank] != c->n_v + 2 * c->n_c + c->m)
        return "mbdcp.step's custom call: M must be (n_v, n_v), Wn (n_v, n_c), D (n_v, m), E (m, n_c), U (n_c), "
               "v (n_v), h (), p_ext (n_v or 0), psi_n (n_c or 0), the result (n_v + 2 n_c + m)";
    c->count = 1;
    for (int64_t k = 0; k < c->batch_rank; ++k) {
        const int64_t d = c->out->dims[k];
        for (int i = 0; i < N_OPERANDS; ++i)
            if (c->in[i]->dims[k] != d && c->in[i]->dims[k] != 1)
                return "mbdcp.step's custom call: each batch axis of an operand must be 1 or the result's size";
        c->count *= d;
    }
    return NULL;
}

/* Operand i's data for instance `index` (its batch axes are 1 where shared); NULL when empty. */
static const double *instance_data(const Call *c, int i, int64_t index)
{
    const MbdcpXlaBuffer *b = c->in[i];
    int64_t offset = 0, stride = 1, size = 1;
    for (int64_t k = 0; k < BASE_RANK[i]; ++k) size *= b->dims[b->rank - 1 - k];
    if (size == 0) return NULL;
    for (int64_t k = c->batch_rank - 1; k >= 0; --k) {
        const int64_t d = c->out->dims[k], at = index % d;
        index /= d;
        if (b->dims[k] != 1) offset += at * stride;
        stride *= b->dims[k];
    }
    return (const double *)b->data + (size_t)(offset * size);
}

/* The step problem of instance i. */
static void problem_of(const Call *c, int64_t i, MbdcpStepProblem *p)
{
    memset(p, 0, sizeof *p);
    p->n_v = (mbdcp_int)c->n_v;
    p->n_c = (mbdcp_int)c->n_c;
    p->m = (mbdcp_int)c->m;
    p->h = *instance_data(c, OP_H, i);
    p->M = instance_data(c, OP_M, i);
    p->Wn = instance_data(c, OP_WN, i);
    p->D = instance_data(c, OP_D, i);
    p->E = instance_data(c, OP_E, i);
    p->mu = instance_data(c, OP_U, i);
    p->v = instance_data(c, OP_V, i);
    p->p_ext = instance_data(c, OP_PEXT, i);
    p->psi_n = instance_data(c, OP_PSI, i);
}

/* The message of a failed call, as mbdcp.jax's SolveError words it. */
static void failure_message(char *buf, size_t size, const Call *c, MbdcpStatus status, int64_t first, int64_t failed)
{
    char where[96] = "";
    if (c->batch_rank > 0) {
        int k = snprintf(where, sizeof where, " at instance %lld of the batch", (long long)first);
        if (failed > 1 && k > 0) snprintf(where + k, sizeof where - (size_t)k, " (%lld instances failed)", (long long)failed);
    }
    snprintf(buf, size, "mbdcp.step ended with status %s%s (%s): no solution to return or differentiate",
             status_name(status), where, mbdcp_status_message(status));
}

/* Solve every instance; NULL, or the error of the call. */
static MbdcpXlaError *solve_all(const MbdcpXlaCallFrame *frame, const Call *c, const MbdcpLemkeSettings *s)
{
    MbdcpStepProblem p;
    problem_of(c, 0, &p);
    const size_t N = (size_t)mbdcp_step_lcp_size(&p), width = (size_t)c->n_v + N;
    const size_t nbytes = mbdcp_step_workspace_size(&p);
    char *block = malloc(nbytes + (N + 1) * sizeof(double));
    if (!block) return error(frame, MBDCP_XLA_RESOURCE_EXHAUSTED, "mbdcp.step: no memory for the step's workspace");
    MbdcpStepOutput out;
    memset(&out, 0, sizeof out);
    out.w = (double *)(block + nbytes);
    int64_t first = -1, failed = 0, bad = 0;
    MbdcpStatus first_status = MBDCP_SOLVED;
    MbdcpReturn rc = MBDCP_OK;
    for (int64_t i = 0; i < c->count; ++i) {
        MbdcpLemkeInfo info;
        problem_of(c, i, &p);
        out.v_next = (double *)c->out->data + (size_t)i * width;
        out.z = out.v_next + c->n_v;
        rc = mbdcp_step_solve(&p, s, NULL, &out, &info, block, nbytes);
        if (rc != MBDCP_OK) {
            bad = i;
            break;
        }
        if (info.status != MBDCP_SOLVED && failed++ == 0) {
            first = i;
            first_status = info.status;
        }
    }
    free(block);
    char message[320];
    if (rc != MBDCP_OK) {
        const char *what = rc == MBDCP_ERR_SETTING ? "h" : "M, Wn, D, E, U, v, p_ext or psi_n";
        if (c->batch_rank > 0)
            snprintf(message, sizeof message, "mbdcp.step: %s (%s, at instance %lld of the batch)",
                     mbdcp_return_message(rc), what, (long long)bad);
        else
            snprintf(message, sizeof message, "mbdcp.step: %s (%s)", mbdcp_return_message(rc), what);
        return error(frame, MBDCP_XLA_INVALID_ARGUMENT, message);
    }
    if (failed == 0) return NULL;
    failure_message(message, sizeof message, c, first_status, first, failed);
    return error(frame, MBDCP_XLA_FAILED_PRECONDITION, message);
}

MbdcpXlaError *mbdcp_xla_step(MbdcpXlaCallFrame *frame)
{
    if (frame->extension_start && frame->extension_start->type == MBDCP_XLA_EXTENSION_METADATA)
        return metadata(frame);
    if (frame->struct_size < MBDCP_XLA_CALL_FRAME_SIZE)
        return error(frame, MBDCP_XLA_INVALID_ARGUMENT, "mbdcp.step: XLA's call frame is older than its FFI version");
    if (frame->stage != MBDCP_XLA_STAGE_EXECUTE) return NULL; /* registered for execution only */
    Call c;
    MbdcpLemkeSettings s;
    const char *msg = shapes_of(frame, &c);
    if (!msg) msg = settings_from(&frame->attrs, &s);
    if (msg) return error(frame, MBDCP_XLA_INVALID_ARGUMENT, msg);
    return c.count == 0 ? NULL : solve_all(frame, &c, &s);
}
