/*
 * step_ffi.c - mbdcp_step_solve as an XLA FFI handler (see step_ffi.h).
 *
 * Glue, not core: as in lemke_ffi.c, the workspace of a call is the calling thread's block, shared
 * by its instances (XLA may run two calls at once). The call frame's helpers are ffi_frame.c's.
 */
#include "step_ffi.h"

#include <stdio.h>  /* snprintf: messages of failed calls */
#include <string.h>

#include "ffi_frame.h"
#include "mbdcp/step.h"

enum { OP_M, OP_WN, OP_D, OP_E, OP_U, OP_V, OP_H, OP_PEXT, OP_PSI, N_OPERANDS };
static const int64_t BASE_RANK[N_OPERANDS] = {2, 2, 2, 2, 1, 1, 0, 1, 1};

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
    if (o->struct_size < MBDCP_XLA_BUFFER_SIZE || o->rank < 1 || o->rank > MBDCP_XLA_MAX_BATCH_RANK + 1)
        return "mbdcp.step's custom call: its result must be (..., n_v + 2 n_c + m)";
    c->batch_rank = o->rank - 1;
    c->out = mbdcp_xla_f64_buffer(r->size, r->types, r->rets, 0, o->rank);
    int ok = a->size == N_OPERANDS && c->out != NULL;
    for (int i = 0; ok && i < N_OPERANDS; ++i) {
        c->in[i] = mbdcp_xla_f64_buffer(a->size, a->types, a->args, i, c->batch_rank + BASE_RANK[i]);
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

/* Solve every instance; NULL, or the error of the call. */
static MbdcpXlaError *solve_all(const MbdcpXlaCallFrame *frame, const Call *c, const MbdcpLemkeSettings *s)
{
    MbdcpStepProblem p;
    problem_of(c, 0, &p);
    const size_t N = (size_t)mbdcp_step_lcp_size(&p), width = (size_t)c->n_v + N;
    const size_t nbytes = mbdcp_step_workspace_size(&p);
    char *block = mbdcp_xla_workspace(nbytes + (N + 1) * sizeof(double));
    if (!block) return mbdcp_xla_error(frame, MBDCP_XLA_RESOURCE_EXHAUSTED, "mbdcp.step: no memory for the step's workspace");
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
    char message[320];
    if (rc != MBDCP_OK) {
        const char *what = rc == MBDCP_ERR_SETTING ? "h" : "M, Wn, D, E, U, v, p_ext or psi_n";
        if (c->batch_rank > 0)
            snprintf(message, sizeof message, "mbdcp.step: %s (%s, at instance %lld of the batch)",
                     mbdcp_return_message(rc), what, (long long)bad);
        else
            snprintf(message, sizeof message, "mbdcp.step: %s (%s)", mbdcp_return_message(rc), what);
        return mbdcp_xla_error(frame, MBDCP_XLA_INVALID_ARGUMENT, message);
    }
    return mbdcp_xla_failure(frame, "mbdcp.step", c->batch_rank, first_status, first, failed);
}

MbdcpXlaError *mbdcp_xla_step(MbdcpXlaCallFrame *frame)
{
    MbdcpXlaError *over;
    if (mbdcp_xla_preamble(frame, "mbdcp.step", &over)) return over;
    Call c;
    MbdcpLemkeSettings s;
    const char *msg = shapes_of(frame, &c);
    if (!msg) msg = mbdcp_xla_lemke_settings(&frame->attrs, &s);
    if (msg) return mbdcp_xla_error(frame, MBDCP_XLA_INVALID_ARGUMENT, msg);
    return c.count == 0 ? NULL : solve_all(frame, &c, &s);
}
