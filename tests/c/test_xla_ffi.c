/* Unit tests of the XLA FFI handlers of Lemke's method and of the plain time step (mbdcp/infrastructure/xla/lemke_ffi.c,
 * mbdcp/infrastructure/xla/step_ffi.c), called the way XLA
 * calls it: a call frame of buffers and sorted scalar attributes, and an api table whose error
 * constructor here records the message. Built with sanitizers by tests/c/run_xla.sh. */
#include <string.h>

#include "check.h"
#include "lemke_ffi.h"
#include "mbdcp/lemke.h"
#include "mbdcp/step.h"
#include "step_ffi.h"

static char last_message[512];
static int last_errc;
static MbdcpXlaError *const AN_ERROR = (MbdcpXlaError *)&last_errc; /* any non-NULL: XLA owns it */

static MbdcpXlaError *record_error(MbdcpXlaErrorArgs *args)
{
    CHECK(args->struct_size == MBDCP_XLA_ERROR_ARGS_SIZE);
    strncpy(last_message, args->message, sizeof last_message - 1);
    last_errc = args->errc;
    return AN_ERROR;
}

/* What every test frame holds besides its buffers: the attributes max_iter and tol, the api table
 * and the frame itself. */
typedef struct {
    MbdcpXlaByteSpan names_store[2];
    MbdcpXlaByteSpan *names[2];
    MbdcpXlaScalar scalars[2];
    void *attrs[2];
    int attr_types[2];
    int32_t max_iter;
    double tol;
    MbdcpXlaApi api;
    MbdcpXlaCallFrame frame;
} Common;

/* The attributes, the api and the frame's header of a frame with these operands and results. */
static void finish(Common *k, int64_t nargs, int *arg_types, void **args, int64_t nrets, int *ret_types, void **rets)
{
    for (int i = 0; i < 2; ++i) {
        k->names[i] = &k->names_store[i];
        k->attrs[i] = &k->scalars[i];
        k->attr_types[i] = MBDCP_XLA_ATTR_SCALAR;
    }
    k->names_store[0] = (MbdcpXlaByteSpan){"max_iter", 8};
    k->names_store[1] = (MbdcpXlaByteSpan){"tol", 3};
    k->scalars[0] = (MbdcpXlaScalar){MBDCP_XLA_S32, &k->max_iter};
    k->scalars[1] = (MbdcpXlaScalar){MBDCP_XLA_F64, &k->tol};
    k->api.error_create = record_error;
    MbdcpXlaCallFrame *c = &k->frame;
    c->struct_size = MBDCP_XLA_CALL_FRAME_SIZE;
    c->api = &k->api;
    c->stage = MBDCP_XLA_STAGE_EXECUTE;
    c->args = (MbdcpXlaArgs){MBDCP_XLA_SIZE(MbdcpXlaArgs, args), NULL, nargs, arg_types, args};
    c->rets = (MbdcpXlaRets){MBDCP_XLA_SIZE(MbdcpXlaRets, rets), NULL, nrets, ret_types, rets};
    c->attrs = (MbdcpXlaAttrs){MBDCP_XLA_SIZE(MbdcpXlaAttrs, attrs), NULL, 2, k->attr_types, k->names, k->attrs};
}

typedef struct {
    MbdcpXlaBuffer buf[4];
    void *args[2], *rets[2];
    int arg_types[2], ret_types[2];
    Common k;
} Frame;

static void set_buffer(MbdcpXlaBuffer *b, void *data, int64_t rank, int64_t *dims)
{
    b->struct_size = MBDCP_XLA_BUFFER_SIZE;
    b->extension_start = NULL;
    b->dtype = MBDCP_XLA_F64;
    b->data = data;
    b->rank = rank;
    b->dims = dims;
}

/* A frame for M, q -> z, basis with the given dims (rank of M: batch + 2). */
static void build(Frame *f, double *M, int64_t *Mdims, double *q, int64_t *qdims, double *z, double *basis,
                  int64_t *outdims, int64_t batch_rank)
{
    memset(f, 0, sizeof *f);
    set_buffer(&f->buf[0], M, batch_rank + 2, Mdims);
    set_buffer(&f->buf[1], q, batch_rank + 1, qdims);
    set_buffer(&f->buf[2], z, batch_rank + 1, outdims);
    set_buffer(&f->buf[3], basis, batch_rank + 1, outdims);
    for (int i = 0; i < 2; ++i) {
        f->args[i] = &f->buf[i];
        f->rets[i] = &f->buf[2 + i];
        f->arg_types[i] = MBDCP_XLA_ARG_BUFFER;
        f->ret_types[i] = MBDCP_XLA_RET_BUFFER;
    }
    finish(&f->k, 2, f->arg_types, f->args, 2, f->ret_types, f->rets);
}

/* z of LCP(M, q) by mbdcp_lemke_solve itself; its status */
static MbdcpStatus direct(int n, const double *M, const double *q, double *z, int *basis)
{
    static char work[1 << 16];
    double w[8];
    MbdcpLemkeSettings s;
    MbdcpLemkeInfo info;
    MbdcpLemkeOutput out = {z, w, basis, NULL};
    mbdcp_lemke_default_settings(&s);
    CHECK(mbdcp_lemke_solve(n, M, q, &s, NULL, &out, &info, work, sizeof work) == MBDCP_OK);
    return info.status;
}

static void test_metadata(void)
{
    MbdcpXlaMetadata m;
    memset(&m, 0, sizeof m);
    m.struct_size = MBDCP_XLA_METADATA_SIZE;
    m.state_type_id = 42; /* beyond the counted size: left alone */
    MbdcpXlaMetadataExtension ext = {{MBDCP_XLA_METADATA_EXTENSION_SIZE, MBDCP_XLA_EXTENSION_METADATA, NULL}, &m};
    MbdcpXlaCallFrame c;
    memset(&c, 0, sizeof c);
    c.struct_size = MBDCP_XLA_CALL_FRAME_SIZE;
    c.extension_start = &ext.extension_base;
    CHECK(mbdcp_xla_lemke(&c) == NULL);
    CHECK(m.api_version.major_version == MBDCP_XLA_FFI_MAJOR && m.api_version.minor_version == MBDCP_XLA_FFI_MINOR);
    CHECK(m.api_version.struct_size == MBDCP_XLA_VERSION_SIZE && m.traits == 0 && m.state_type_id == 42);
}

static void test_one_problem(void)
{
    double M[9] = {2, 1, 0, 1, 2, 1, 0, 1, 2}, q[3] = {-1, 2, -3}, z[3], basis[3], zd[3];
    int bd[3];
    int64_t Md[2] = {3, 3}, qd[1] = {3};
    Frame f;
    build(&f, M, Md, q, qd, z, basis, qd, 0);
    CHECK(mbdcp_xla_lemke(&f.k.frame) == NULL);
    CHECK(direct(3, M, q, zd, bd) == MBDCP_SOLVED);
    for (int i = 0; i < 3; ++i) CHECK(z[i] == zd[i] && basis[i] == (bd[i] ? 1.0 : 0.0));
}

/* M shared (batch axis 1), q per instance (3): each instance as a direct solve */
static void test_batch_and_failures(void)
{
    double M[4] = {1, 0, 0, 1}, q[6] = {-1, 1, 1, -2, -3, -4}, z[6], basis[6], zd[2];
    int bd[2];
    int64_t Md[3] = {1, 2, 2}, qd[2] = {3, 2};
    Frame f;
    build(&f, M, Md, q, qd, z, basis, qd, 1);
    CHECK(mbdcp_xla_lemke(&f.k.frame) == NULL);
    for (int i = 0; i < 3; ++i) {
        direct(2, M, q + 2 * i, zd, bd);
        CHECK(z[2 * i] == zd[0] && z[2 * i + 1] == zd[1]);
    }
    double Mneg[4] = {-1, 0, 0, -1}; /* instances with a negative q have no solution */
    build(&f, Mneg, Md, q, qd, z, basis, qd, 1);
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR && last_errc == MBDCP_XLA_FAILED_PRECONDITION);
    CHECK(strstr(last_message, "status RAY_TERMINATION at instance 0 of the batch (3 instances failed)") != NULL);
    double q2[6] = {1, 1, -1, 1, 2, 3}; /* only instance 1 needs a pivot beyond z0's */
    build(&f, M, Md, q2, qd, z, basis, qd, 1);
    f.k.max_iter = 1;
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR);
    CHECK(strstr(last_message, "status MAX_ITERATIONS at instance 1 of the batch (") != NULL);
    CHECK(strstr(last_message, "instances failed") == NULL);
}

static void test_bad_calls(void)
{
    double M[4] = {1, 0, 0, 1}, q[2] = {NAN, 1}, z[2], basis[2];
    int64_t Md[2] = {2, 2}, qd[1] = {2}, bad[1] = {3};
    Frame f;
    build(&f, M, Md, q, qd, z, basis, qd, 0);
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR && last_errc == MBDCP_XLA_INVALID_ARGUMENT &&
          strstr(last_message, "NaN") != NULL);
    q[0] = 1;
    build(&f, M, Md, q, qd, z, basis, bad, 0); /* results of the wrong size */
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR && strstr(last_message, "(..., n, n)") != NULL);
    build(&f, M, Md, q, qd, z, basis, qd, 0);
    f.buf[1].dtype = MBDCP_XLA_S32;
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR && strstr(last_message, "f64") != NULL);
    build(&f, M, Md, q, qd, z, basis, qd, 0);
    f.k.frame.attrs.size = 1; /* tol missing */
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR && strstr(last_message, "attributes") != NULL);
    build(&f, M, Md, q, qd, z, basis, qd, 0);
    f.k.tol = 2.0;
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR && strstr(last_message, "tol") != NULL);
    build(&f, M, Md, q, qd, z, basis, qd, 0);
    f.k.frame.struct_size -= 8; /* an older XLA's call frame */
    CHECK(mbdcp_xla_lemke(&f.k.frame) == AN_ERROR);
    build(&f, M, Md, q, qd, z, basis, qd, 0);
    f.k.frame.stage = 0; /* instantiation: nothing to do */
    CHECK(mbdcp_xla_lemke(&f.k.frame) == NULL);
}

/* ---- the step handler: a unit particle in the plane (x, y) on the ground y = 0 ---- */

enum { NV = 2, NC = 1, ND = 2, WIDTH = NV + 2 * NC + ND };

typedef struct {
    MbdcpXlaBuffer buf[10];
    void *args[9], *rets[1];
    int arg_types[9], ret_types[1];
    int64_t dims[10][4];
    Common k;
} StepFrame;

typedef struct {
    double M[NV * NV], Wn[NV * NC], D[NV * ND], E[ND * NC], mu[NC], v[NV], h, p_ext[NV], psi_n[NC];
} Scene;

static void particle(Scene *s, double vx, double vy)
{
    const Scene base = {{1, 0, 0, 1}, {0, 1}, {1, -1, 0, 0}, {1, 1}, {0.5}, {vx, vy}, 0.1, {0, -0.981}, {0}};
    *s = base;
}

/* A frame for one scene (batch 0) or, with batch > 0, v per instance (vs) and the rest shared. */
static void build_step(StepFrame *f, Scene *s, double *vs, int64_t batch, double *out)
{
    static const int64_t base_rank[9] = {2, 2, 2, 2, 1, 1, 0, 1, 1};
    const int64_t base[9][2] = {{NV, NV}, {NV, NC}, {NV, ND}, {ND, NC}, {NC, 0}, {NV, 0}, {0, 0}, {NV, 0}, {NC, 0}};
    double *data[9] = {s->M, s->Wn, s->D, s->E, s->mu, vs ? vs : s->v, &s->h, s->p_ext, s->psi_n};
    const int64_t lead = batch > 0;
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 10; ++i) {
        const int64_t r = i < 9 ? base_rank[i] : 1;
        if (lead) f->dims[i][0] = (i == 5 || i == 9) ? batch : 1;
        for (int64_t a = 0; a < r; ++a) f->dims[i][lead + a] = i < 9 ? base[i][a] : WIDTH;
        set_buffer(&f->buf[i], i < 9 ? (void *)data[i] : (void *)out, lead + r, f->dims[i]);
        if (i < 9) {
            f->args[i] = &f->buf[i];
            f->arg_types[i] = MBDCP_XLA_ARG_BUFFER;
        }
    }
    f->rets[0] = &f->buf[9];
    f->ret_types[0] = MBDCP_XLA_RET_BUFFER;
    finish(&f->k, 9, f->arg_types, f->args, 1, f->ret_types, f->rets);
}

/* v_next and z of the scene by mbdcp_step_solve itself (p_ext NULL if !with_p_ext); its status */
static MbdcpStatus direct_step(const Scene *s, const double *v, int with_p_ext, double *out)
{
    static char work[1 << 14];
    double w[WIDTH];
    MbdcpStepProblem p;
    memset(&p, 0, sizeof p);
    p.n_v = NV, p.n_c = NC, p.m = ND, p.h = s->h;
    p.M = s->M, p.Wn = s->Wn, p.D = s->D, p.E = s->E, p.mu = s->mu, p.v = v;
    p.p_ext = with_p_ext ? s->p_ext : NULL;
    p.psi_n = s->psi_n;
    MbdcpStepOutput o;
    memset(&o, 0, sizeof o);
    o.v_next = out, o.z = out + NV, o.w = w;
    MbdcpLemkeSettings st;
    MbdcpLemkeInfo info;
    mbdcp_lemke_default_settings(&st);
    CHECK(mbdcp_step_solve(&p, &st, NULL, &o, &info, work, sizeof work) == MBDCP_OK);
    return info.status;
}

static void test_step(void)
{
    Scene s;
    StepFrame f;
    double out[WIDTH], want[WIDTH];
    particle(&s, 1.0, 0.0); /* sliding: v_x = 1 - mu g h, resting on the ground */
    build_step(&f, &s, NULL, 0, out);
    CHECK(mbdcp_xla_step(&f.k.frame) == NULL);
    CHECK(direct_step(&s, s.v, 1, want) == MBDCP_SOLVED);
    for (int i = 0; i < WIDTH; ++i) CHECK(out[i] == want[i]);
    CHECK(fabs(out[0] - (1.0 - 0.5 * 0.981)) < 1e-12 && fabs(out[1]) < 1e-12 && fabs(out[2] - 0.981) < 1e-12);
    build_step(&f, &s, NULL, 0, out); /* p_ext absent: a last axis of 0 */
    f.dims[7][0] = 0;
    CHECK(mbdcp_xla_step(&f.k.frame) == NULL);
    CHECK(direct_step(&s, s.v, 0, want) == MBDCP_SOLVED);
    for (int i = 0; i < WIDTH; ++i) CHECK(out[i] == want[i]);
}

static void test_step_batch_and_failures(void)
{
    Scene s;
    StepFrame f;
    double vs[3 * NV] = {1, 0, 0, 1, 2, 0}, out[3 * WIDTH], want[WIDTH];
    particle(&s, 0, 0);
    build_step(&f, &s, vs, 3, out);
    CHECK(mbdcp_xla_step(&f.k.frame) == NULL);
    for (int b = 0; b < 3; ++b) {
        direct_step(&s, vs + NV * b, 1, want);
        for (int i = 0; i < WIDTH; ++i) CHECK(out[WIDTH * b + i] == want[i]);
    }
    build_step(&f, &s, vs, 3, out);
    f.k.max_iter = 1; /* instance 1 rises off the ground (z = 0 after one pivot); the sliding ones need more */
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && last_errc == MBDCP_XLA_FAILED_PRECONDITION);
    CHECK(strstr(last_message, "mbdcp.step ended with status MAX_ITERATIONS at instance 0 of the batch (2 instances "
                               "failed)") != NULL);
}

static void test_step_bad_calls(void)
{
    Scene s;
    StepFrame f;
    double out[WIDTH];
    particle(&s, 1.0, 0.0);
    s.v[1] = NAN;
    build_step(&f, &s, NULL, 0, out);
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && last_errc == MBDCP_XLA_INVALID_ARGUMENT &&
          strstr(last_message, "NaN") != NULL);
    particle(&s, 1.0, 0.0);
    s.h = -0.1;
    build_step(&f, &s, NULL, 0, out);
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && strstr(last_message, "(h)") != NULL);
    particle(&s, 1.0, 0.0);
    build_step(&f, &s, NULL, 0, out);
    f.dims[9][0] = WIDTH - 1; /* a result of the wrong size */
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && strstr(last_message, "n_v + 2 n_c + m") != NULL);
    build_step(&f, &s, NULL, 0, out);
    f.dims[3][0] = 1; /* E (1, n_c) beside D's two directions */
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && strstr(last_message, "E (m, n_c)") != NULL);
    build_step(&f, &s, NULL, 0, out);
    f.k.frame.args.size = 8;
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && strstr(last_message, "psi_n") != NULL);
    build_step(&f, &s, NULL, 0, out);
    f.buf[6].dtype = MBDCP_XLA_S32;
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && strstr(last_message, "f64") != NULL);
    build_step(&f, &s, NULL, 0, out);
    f.k.tol = 2.0;
    CHECK(mbdcp_xla_step(&f.k.frame) == AN_ERROR && strstr(last_message, "tol") != NULL);
    build_step(&f, &s, NULL, 0, out);
    f.k.frame.stage = 0;
    CHECK(mbdcp_xla_step(&f.k.frame) == NULL);
}

int main(void)
{
    test_metadata();
    test_one_problem();
    test_batch_and_failures();
    test_bad_calls();
    test_step();
    test_step_batch_and_failures();
    test_step_bad_calls();
    return report();
}
