/* Coulomb friction and its CCP relaxation on the Delassus matrix: (nonsmooth) Gauss-Seidel on the
 * exact local solves (fc_local.c), APGD through ccp.h, the fixed point on s = mu ||u_T||, the
 * semismooth Newton method (fc_newton.c) and the automatic choice among them; acceptance in extended
 * precision (fc_accept.c) and certificates that no solution exists; see coulomb.h. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core_limits.h"
#include "fc_internal.h"
#include "mbdcp/ccp.h"
#include "mbdcp/cone.h"
#include "mbdcp/coulomb.h"
#include "mbdcp/dense.h"

/* The fixed point's smallest damping factor (see fixed_point()). */
#define OMEGA_MIN 0.125
/* Iterates beyond R_LIMIT (core_limits.h) max(||q||_inf, ...) / (1 + max |W_ij|) cannot have a
 * residual below 1e-2 in double precision: the solve stops there (divergence). */
/* AUTO: Gauss-Seidel's rate is measured over the last RATE_WINDOW sweeps (its recent rate: the first
 * sweeps gain more than the later ones), from sweep FIRST_TEST on ... */
#define RATE_WINDOW 3
#define FIRST_TEST 3
/* ... and Newton is expected to need this many iterations. */
#define NEWTON_EXPECTED 8.0
/* AUTO: the iteration limits of one Newton attempt, and its stall limit (iterations without halving
 * the best residual) */
#define AUTO_NEWTON_ITER 100
#define AUTO_NEWTON_MIN 10
/* AUTO: the fixed point's (or APGD's) iteration limit in its last phase: an outer method's */
#define AUTO_LAST_ITER MBDCP_FC_OUTER_MAX_ITER
/* AUTO: at its first test, when Gauss-Seidel's predicted work exceeds PROBE_WORTH times PROBE_ITER
 * Newton iterations, a probe of PROBE_ITER Newton iterations from Gauss-Seidel's point: once the
 * contact states are right Newton converges superlinearly from there, in fewer iterations than from
 * r = 0 (a failed probe costs at most half of Gauss-Seidel's predicted work); Newton goes on when the
 * probe divided the residual by 1 / PROBE_GAIN, else Gauss-Seidel resumes. */
#define PROBE_ITER 2
#define PROBE_WORTH 2.0
#define PROBE_GAIN 1e-2
/* AUTO: before its first hand-over to Newton, Gauss-Seidel spends at least the time of GS_FIRST Newton
 * iterations: Gauss-Seidel's rate is a poor guide while contacts change state (it then often drops by
 * orders of magnitude in a sweep), and this delays Newton by at most GS_FIRST of its iterations. That
 * time, and Newton's in the NEWTON_EXPECTED test, counts the factorisation's flops FACTOR_SPEED times
 * cheaper than a sweep's (dense 3 x 3 block updates against scattered row products). */
#define GS_FIRST 4.5
#define FACTOR_SPEED 4.0
/* NEWTON: iterations without halving the best residual before it gives up */
#define NEWTON_STALL 25
#define AUTO_STALL 10

typedef FcCsr Csr;

MbdcpReturn mbdcp_fc_default_settings(MbdcpFcSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->method = MBDCP_FC_NSGS;
    s->inner = MBDCP_FC_PGS;
    s->tol = 1e-8;
    s->max_iter = 10000;
    s->inner_max_iter = 10000;
    s->warm_start = 0;
    s->factor_blocks = -1;
    s->monitor.fn = NULL;
    s->monitor.ctx = NULL;
    return MBDCP_OK;
}

/* the name of a method, for mbdcp_fc_method_name's table */
#define METHOD_NAME(suffix, name) name,

const char *mbdcp_fc_method_name(MbdcpFcMethod method)
{
    static const char *const names[] = {MBDCP_FC_METHOD_LIST(METHOD_NAME)};
    return (int)method >= 0 && (int)method < (int)MBDCP_FC_METHOD_COUNT ? names[method] : NULL;
}

MbdcpReturn mbdcp_fc_check_settings(const MbdcpFcSettings *s, int coulomb, const char **message)
{
    const char *msg = NULL;
    if (!s) return MBDCP_ERR_NULL;
    const int both = s->method == MBDCP_FC_NEWTON || s->method == MBDCP_FC_AUTO;
    if (coulomb && s->method != MBDCP_FC_NSGS && s->method != MBDCP_FC_FIXED_POINT && !both)
        msg = "method must be nsgs, fixed_point, newton or auto";
    else if (!coulomb && s->method != MBDCP_FC_PGS && s->method != MBDCP_FC_APGD && !both)
        msg = "method must be pgs, apgd, newton or auto";
    else if (s->inner != MBDCP_FC_PGS && s->inner != MBDCP_FC_APGD)
        msg = "inner must be pgs or apgd";
    else if (!(s->tol > 0.0) || !isfinite(s->tol))
        msg = "tol must be positive and finite";
    else if (s->max_iter < 1)
        msg = "max_iter must be at least 1";
    else if (s->inner_max_iter < 1)
        msg = "inner_max_iter must be at least 1";
    else if (s->method == MBDCP_FC_NEWTON && s->factor_blocks < 0)
        msg = "factor_blocks must be set from mbdcp_fc_factor_blocks for newton";
    if (message) *message = msg;
    return msg ? MBDCP_ERR_SETTING : MBDCP_OK;
}

/* The problem ccp.h solves for APGD: P = I (n_v = m), Q = S; S symmetric, so its CSR arrays
 * read as CSC describe S itself. */
static MbdcpCcpProblem ccp_problem(mbdcp_int n_c, const Csr *S, const mbdcp_float *mu, const mbdcp_float *qv,
                                   const mbdcp_int *Iptr, const mbdcp_int *Iind, const mbdcp_float *Ival)
{
    MbdcpCcpProblem cp;
    cp.n_v = 3 * n_c;
    cp.n_c = n_c;
    cp.n_b = 0;
    cp.P_colptr = Iptr;
    cp.P_rowind = Iind;
    cp.P_val = Ival;
    cp.Q_colptr = S->ptr;
    cp.Q_rowind = S->ind;
    cp.Q_val = S->val;
    cp.mu = mu;
    cp.p = qv;
    cp.M_colptr = cp.M_rowind = NULL;
    cp.M_val = NULL;
    return cp;
}

static size_t ccp_bytes(mbdcp_int n_c)
{
    MbdcpCcpProblem cp = ccp_problem(n_c, &(Csr){NULL, NULL, NULL}, NULL, NULL, NULL, NULL, NULL);
    return mbdcp_ccp_workspace_size(&cp);
}

static int uses_apgd(const MbdcpFcSettings *s)
{
    return !s || s->method == MBDCP_FC_APGD || s->method == MBDCP_FC_AUTO ||
           (s->method == MBDCP_FC_FIXED_POINT && s->inner == MBDCP_FC_APGD);
}

static int uses_newton(const MbdcpFcSettings *s)
{
    return s && (s->method == MBDCP_FC_NEWTON || s->method == MBDCP_FC_AUTO) && s->factor_blocks >= 0;
}

/* Doubles: 9 n_c (diagonal blocks), qk, tmp, prev, sweep (m each), ccp's u, the identity's values (m each), ccp's
 * workspace; then ints: the identity's colptr (m + 1) and rowind (m); AUTO: W's transpose; then Newton's
 * workspace. For a 3-D problem with n_c contacts and nnz entries of W. */
static size_t bytes_3d(mbdcp_int n_c, mbdcp_int nnz, const MbdcpFcSettings *s)
{
    const size_t nc = (size_t)n_c, m = 3 * nc;
    size_t bytes = (9 * nc + 4 * m) * sizeof(mbdcp_float);
    if (uses_apgd(s)) bytes += 2 * m * sizeof(mbdcp_float) + ccp_bytes(n_c) + (2 * m + 2) * sizeof(mbdcp_int);
    if (s && s->method == MBDCP_FC_AUTO) /* W's transpose, for the symmetry test, and (W + W^T) / 2 */
        bytes += 3 * (size_t)nnz * (sizeof(mbdcp_float) + sizeof(mbdcp_int)) + 2 * (m + 1) * sizeof(mbdcp_int) + 32;
    if (uses_newton(s)) bytes += 16 + mbdcp_fc_newton_bytes(n_c, nnz, s->factor_blocks);
    return bytes;
}

/* A 2-D problem's 3-D copy (see MbdcpFcProblem.spacedim): W, S (if given), q, r and u. */
static size_t bytes_2d(const MbdcpFcProblem *p)
{
    const size_t nc = (size_t)p->n_c, m = 3 * nc, nnz = (size_t)p->W_rowptr[2 * nc] + nc;
    const size_t snnz = p->S_rowptr ? (size_t)p->S_rowptr[2 * nc] + nc : 0;
    return (nnz + snnz + 3 * m) * sizeof(mbdcp_float) + (2 * (m + 1) + nnz + snnz) * sizeof(mbdcp_int) + 16;
}

size_t mbdcp_fc_workspace_size(const MbdcpFcProblem *p, const MbdcpFcSettings *s)
{
    if (!p || p->n_c < 0 || !p->W_rowptr) return 0;
    if (p->spacedim != 2) return bytes_3d(p->n_c, p->W_rowptr[3 * p->n_c], s);
    return bytes_2d(p) + bytes_3d(p->n_c, p->W_rowptr[2 * p->n_c] + p->n_c, s);
}

/* ---- kernels -------------------------------------------------------------------------------- */

/* The 3 x 3 diagonal blocks of A (row-major, 9 per contact; absent entries are zero). */
static void diagonal_blocks(const Csr *A, mbdcp_int n_c, mbdcp_float *blocks)
{
    memset(blocks, 0, 9 * (size_t)n_c * sizeof(mbdcp_float));
    for (mbdcp_int row = 0; row < 3 * n_c; ++row) {
        const mbdcp_int i = row / 3, a = row % 3;
        for (mbdcp_int k = A->ptr[row]; k < A->ptr[row + 1]; ++k) {
            const mbdcp_int col = A->ind[k];
            if (col / 3 == i) blocks[9 * i + 3 * a + col % 3] += A->val[k];
        }
    }
}

/* u = A r + qv and the residual relative to qnorm. */
static mbdcp_float residual_of(const Csr *A, mbdcp_int n_c, const mbdcp_float *qv, const mbdcp_float *mu, int coulomb,
                               const mbdcp_float *r, mbdcp_float *u, mbdcp_float qnorm)
{
    fc_matvec(A, 3 * n_c, r, qv, u);
    return fc_residual_norm(n_c, mu, coulomb, r, u) / qnorm;
}

/* ---- solvers -------------------------------------------------------------------------------- */

typedef FcRun Run;

/* The problem a loop iterates on: the context's own (judge = the context: acceptance in extended
 * precision, divergence) or an inner one of the fixed point (judge NULL). */
typedef struct {
    const Csr *A;
    const mbdcp_float *qv;
    int coulomb;
    mbdcp_float tol;
    mbdcp_int max_iter;
    mbdcp_int code; /* the monitor's second argument: -1 outer, -2 inner */
    const FcCtx *judge;
} Sub;

/* The end test of a loop: SOLVED (accepted), RAY_TERMINATION (diverged), or still running. */
static int finished(const Sub *sb, const mbdcp_float *r, Run *run)
{
    if (sb->judge) {
        if (run->residual <= sb->tol && mbdcp_fc_accept(sb->judge, r, &run->residual)) {
            run->status = MBDCP_SOLVED;
            return 1;
        }
        if (mbdcp_fc_too_large(sb->judge, r)) {
            run->status = MBDCP_RAY_TERMINATION;
            return 1;
        }
        return 0;
    }
    if (run->residual <= sb->tol) run->status = MBDCP_SOLVED;
    return run->residual <= sb->tol;
}

/* (Nonsmooth) Gauss-Seidel on u = A r + qv, contact by contact with exact local solves; u is kept
 * as the residual's scratch. A sweep that changes nothing ends the loop (it would repeat). */
static Run gauss_seidel(const FcCtx *c, const Sub *sb, mbdcp_float *r, mbdcp_float *u, mbdcp_float *prev,
                        mbdcp_int *failures)
{
    const mbdcp_int m = 3 * c->n_c;
    Run run = {MBDCP_MAX_ITERATIONS, 0, residual_of(sb->A, c->n_c, sb->qv, c->mu, sb->coulomb, r, u, c->qnorm)};
    if (finished(sb, r, &run)) return run;
    while (run.iterations < sb->max_iter) {
        memcpy(prev, r, (size_t)m * sizeof(mbdcp_float));
        mbdcp_fc_sweep(sb->A, c->n_c, sb->qv, c->mu, sb->coulomb, c->blocks, r, failures);
        ++run.iterations;
        run.residual = residual_of(sb->A, c->n_c, sb->qv, c->mu, sb->coulomb, r, u, c->qnorm);
        if (!isfinite(run.residual)) {
            run.status = MBDCP_NUMERICAL_ERROR;
            return run;
        }
        if (mbdcp_monitor_call(c->monitor, run.iterations, sb->code, -1, run.residual)) {
            run.status = MBDCP_INTERRUPTED;
            return run;
        }
        if (finished(sb, r, &run)) return run;
        if (!memcmp(prev, r, (size_t)m * sizeof(mbdcp_float))) break; /* a fixed point that is no solution */
    }
    return run;
}

typedef struct {
    const MbdcpMonitor *outer;
    mbdcp_int code, offset;
} Forward;

/* ccp.h's per-iteration call, passed on to the caller's monitor with our code and count. */
static int forward(void *ctx, mbdcp_int it, mbdcp_int entering, mbdcp_int leaving, double value)
{
    const Forward *f = (const Forward *)ctx;
    (void)entering;
    (void)leaving;
    return mbdcp_monitor_call(f->outer, f->offset + it, f->code, -1, value);
}

typedef struct {
    mbdcp_float *blocks, *qk, *tmp, *prev, *sweep, *ccp_u, *ident_val;
    void *ccp_work;
    size_t ccp_work_bytes;
    mbdcp_int *ident_ptr, *ident_ind;
    mbdcp_float *tval, *sval; /* AUTO: W's transpose (CSR), for the symmetry test, and (W + W^T) / 2 */
    mbdcp_int *tptr, *tind, *sptr, *sind;
    void *newton_work;
    size_t newton_bytes;
} Work;

/* APGD (ccp.h) on u = S r + qv for a symmetric S. ccp.h stops on its own residual measure; while
 * ours is still above tol the solve is repeated, warm-started, with its tolerance tightened. */
static Run apgd(const FcCtx *c, const Sub *sb, mbdcp_float *r, mbdcp_float *u, const Work *w, MbdcpReturn *rc)
{
    const mbdcp_int n_c = c->n_c;
    Run run = {MBDCP_MAX_ITERATIONS, 0, residual_of(sb->A, n_c, sb->qv, c->mu, 0, r, u, c->qnorm)};
    *rc = MBDCP_OK;
    if (finished(sb, r, &run)) return run;
    const MbdcpCcpProblem cp = ccp_problem(n_c, sb->A, c->mu, sb->qv, w->ident_ptr, w->ident_ind, w->ident_val);
    MbdcpCcpSettings cs;
    mbdcp_ccp_default_settings(&cs);
    cs.method = MBDCP_CCP_APGD;
    cs.tol = sb->tol;
    cs.warm_start = 1;
    /* the fixed point on the de Saxce shift converges with the scalar scaling on every FCLib problem
     * (measured: Capsules, asymmetric W, in 56 outer iterations; with the per-axis one not in 200) */
    cs.scaling = MBDCP_CCP_SCALE_CONTACT;
    Forward fw = {c->monitor, sb->code, 0};
    cs.monitor.fn = forward;
    cs.monitor.ctx = &fw;
    while (run.iterations < sb->max_iter) {
        MbdcpCcpInfo ci;
        cs.max_iter = sb->max_iter - run.iterations;
        fw.offset = run.iterations;
        *rc = mbdcp_ccp_solve(&cp, &cs, r, w->ccp_u, &ci, w->ccp_work, w->ccp_work_bytes);
        if (*rc != MBDCP_OK) return run;
        run.iterations += ci.iterations;
        run.residual = residual_of(sb->A, n_c, sb->qv, c->mu, 0, r, u, c->qnorm);
        if (ci.status == MBDCP_INTERRUPTED || ci.status == MBDCP_NUMERICAL_ERROR) {
            run.status = ci.status;
            return run;
        }
        if (finished(sb, r, &run) || ci.status != MBDCP_SOLVED) break;
        /* solved by its measure, not by ours */
        cs.tol *= fmax(1e-3, 0.5 * sb->tol / fmax(run.residual, sb->tol));
        if (!(cs.tol > 1e-300) || ci.iterations == 0) break;
    }
    return run;
}

/* r_{k+1} solves the CCP with matrix I (W for PGS, S for APGD) and q_k = q + (W - I) r_k +
 * kappa mu ||u_T(r_k)|| e_n (kappa = coulomb), warm-started from r_k; stops on the residual of
 * the problem with W (Coulomb when coulomb = 1, the CCP otherwise). */
static Run fixed_point(const FcCtx *c, const Csr *I, MbdcpFcMethod inner, const MbdcpFcSettings *s, mbdcp_float *r,
                       mbdcp_float *u, const Work *w, MbdcpFcInfo *info, MbdcpReturn *rc)
{
    const mbdcp_int n_c = c->n_c, m = 3 * n_c;
    const Sub outer = {&c->W, c->q, c->coulomb, c->tol, s->max_iter, -1, c};
    Run run = {MBDCP_MAX_ITERATIONS, 0, residual_of(&c->W, n_c, c->q, c->mu, c->coulomb, r, u, c->qnorm)};
    *rc = MBDCP_OK;
    mbdcp_float omega = 1.0;
    if (finished(&outer, r, &run)) return run;
    while (run.iterations < s->max_iter) {
        const mbdcp_float before = run.residual;
        if (omega < 1.0) memcpy(w->prev, r, (size_t)m * sizeof(mbdcp_float));
        if (I->val != c->W.val) {
            fc_matvec(I, m, r, NULL, w->tmp);
            for (mbdcp_int j = 0; j < m; ++j) w->qk[j] = u[j] - w->tmp[j];
        } else {
            memcpy(w->qk, c->q, (size_t)m * sizeof(mbdcp_float));
        }
        if (c->coulomb)
            for (mbdcp_int i = 0; i < n_c; ++i)
                w->qk[3 * i] += c->mu[i] * sqrt(u[3 * i + 1] * u[3 * i + 1] + u[3 * i + 2] * u[3 * i + 2]);
        /* inexact inner solves: tighter as the outer residual falls, never below what the outer
         * tolerance needs */
        const Sub in_sub = {I, w->qk, 0, fmax(0.25 * c->tol, 0.05 * run.residual), s->inner_max_iter, -2, NULL};
        Run in = inner == MBDCP_FC_APGD ? apgd(c, &in_sub, r, w->tmp, w, rc)
                                        : gauss_seidel(c, &in_sub, r, w->tmp, w->sweep, &info->local_failures);
        if (*rc != MBDCP_OK) return run;
        info->inner_iterations += in.iterations;
        ++run.iterations;
        if (omega < 1.0) /* damped: r_k + omega (T(r_k) - r_k), in the cones as they are convex */
            for (mbdcp_int j = 0; j < m; ++j) r[j] = w->prev[j] + omega * (r[j] - w->prev[j]);
        run.residual = residual_of(&c->W, n_c, c->q, c->mu, c->coulomb, r, u, c->qnorm);
        if (in.status == MBDCP_INTERRUPTED || in.status == MBDCP_NUMERICAL_ERROR) {
            run.status = in.status;
            return run;
        }
        if (!isfinite(run.residual)) {
            run.status = MBDCP_NUMERICAL_ERROR;
            return run;
        }
        if (mbdcp_monitor_call(c->monitor, run.iterations, -1, -1, run.residual)) {
            run.status = MBDCP_INTERRUPTED;
            return run;
        }
        if (finished(&outer, r, &run)) return run;
        /* a step that did not lower the residual: the map is not contracting here, and the
         * iteration can cycle (Capsules-i125-1213 settled into a cycle of three between 2.5e-6
         * and 6.1e-6): damp the steps from now on */
        if (run.residual >= before) omega = fmax(OMEGA_MIN, 0.5 * omega);
    }
    return run;
}

/* The fixed point (Coulomb, or the CCP with an asymmetric W and APGD) or APGD (the CCP, W = S). */
static Run convex_route(const FcCtx *c, const Csr *S, MbdcpFcMethod method, const MbdcpFcSettings *s, mbdcp_float *r,
                        mbdcp_float *u, const Work *w, MbdcpFcInfo *info, MbdcpReturn *rc)
{
    if (method == MBDCP_FC_APGD && S->val == c->W.val && !c->coulomb) {
        const Sub sb = {&c->W, c->q, 0, c->tol, s->max_iter, -1, c};
        return apgd(c, &sb, r, u, w, rc);
    }
    const MbdcpFcMethod inner = method == MBDCP_FC_APGD ? MBDCP_FC_APGD : s->inner;
    return fixed_point(c, inner == MBDCP_FC_APGD ? S : &c->W, inner, s, r, u, w, info, rc);
}

/* ---- certificates ---------------------------------------------------------------------------- */

/* 1 when d (m, in K) proves that no solution r with ||r||_2 <= bound exists: -W^T d in K* up to a
 * distance delta and q^T d < 0 give u^T d <= ||r|| delta + q^T d < 0 for every r in K (see
 * coulomb.h). Rounding in W^T d and q^T d is added to delta and to q^T d. tmp: m. */
static int certifies(const FcCtx *c, const mbdcp_float *d, mbdcp_float bound, mbdcp_float *tmp)
{
    const mbdcp_int m = 3 * c->n_c;
    mbdcp_float qd = 0.0, qd_abs = 0.0, round = 0.0;
    for (mbdcp_int j = 0; j < m; ++j) {
        tmp[j] = 0.0;
        qd += c->q[j] * d[j];
        qd_abs += fabs(c->q[j] * d[j]);
    }
    for (mbdcp_int row = 0; row < m; ++row)
        for (mbdcp_int k = c->W.ptr[row]; k < c->W.ptr[row + 1]; ++k) {
            tmp[c->W.ind[k]] -= c->W.val[k] * d[row];
            round += fabs(c->W.val[k] * d[row]);
        }
    qd += 4.0 * DBL_EPSILON * qd_abs;
    if (!(qd < 0.0)) return 0;
    mbdcp_float dist2 = 0.0;
    for (mbdcp_int i = 0; i < c->n_c; ++i) { /* distance of z = -W^T d to K* = K_{1/mu} */
        mbdcp_float z[3] = {tmp[3 * i], tmp[3 * i + 1], tmp[3 * i + 2]}, p[3] = {z[0], z[1], z[2]};
        if (c->mu[i] > 0.0) {
            mbdcp_cone_project(1.0 / c->mu[i], p);
        } else {
            p[0] = fmax(p[0], 0.0);
        }
        for (int a = 0; a < 3; ++a) dist2 += (z[a] - p[a]) * (z[a] - p[a]);
    }
    const mbdcp_float delta = sqrt(dist2) + 4.0 * DBL_EPSILON * round;
    return -qd >= bound * delta;
}

/* 1 when e_n of contact i proves that no solution r with ||r||_2 <= bound exists: -W^T e_n (minus
 * the row's entries) in K* up to delta, and q_n < 0 (certifies() for this d, reading W's row only).
 * x (m): zero on entry and exit. */
static int contact_certifies(const FcCtx *c, mbdcp_int i, mbdcp_float bound, mbdcp_float *x)
{
    const mbdcp_int row = 3 * i;
    const mbdcp_float qd = c->q[row] * (1.0 - 4.0 * DBL_EPSILON);
    if (!(qd < 0.0)) return 0;
    mbdcp_float round = 0.0, dist2 = 0.0;
    for (mbdcp_int k = c->W.ptr[row]; k < c->W.ptr[row + 1]; ++k) {
        x[c->W.ind[k]] -= c->W.val[k];
        round += fabs(c->W.val[k]);
    }
    for (mbdcp_int k = c->W.ptr[row]; k < c->W.ptr[row + 1]; ++k) {
        const mbdcp_int j = c->W.ind[k] / 3;
        mbdcp_float z[3] = {x[3 * j], x[3 * j + 1], x[3 * j + 2]}, p[3] = {z[0], z[1], z[2]};
        if (z[0] == 0.0 && z[1] == 0.0 && z[2] == 0.0) continue; /* this block is done */
        if (c->mu[j] > 0.0) mbdcp_cone_project(1.0 / c->mu[j], p);
        else p[0] = fmax(p[0], 0.0);
        for (int a = 0; a < 3; ++a) {
            dist2 += (z[a] - p[a]) * (z[a] - p[a]);
            x[3 * j + a] = 0.0;
        }
    }
    return -qd >= bound * (sqrt(dist2) + 4.0 * DBL_EPSILON * round);
}

/* Candidates of a certificate that no solution exists, from the last point (see coulomb.h); *contact:
 * the contact of MBDCP_FC_CERT_CONTACT. d, tmp: m each. */
static MbdcpFcCertificate find_certificate(const FcCtx *c, const mbdcp_float *r, const mbdcp_float *u, mbdcp_float *d,
                                           mbdcp_float *tmp, mbdcp_int *contact)
{
    const mbdcp_int n_c = c->n_c, m = 3 * n_c;
    const mbdcp_float bound = c->rmax * sqrt((mbdcp_float)m);
    memset(tmp, 0, (size_t)m * sizeof(mbdcp_float));
    for (mbdcp_int i = 0; i < n_c; ++i)
        if (u[3 * i] < 0.0 && contact_certifies(c, i, bound, tmp)) {
            *contact = i;
            return MBDCP_FC_CERT_CONTACT;
        }
    for (int kind = MBDCP_FC_CERT_DIRECTION; kind <= MBDCP_FC_CERT_NORMAL_R; ++kind) {
        if (kind == MBDCP_FC_CERT_DIRECTION && c->coulomb) continue;
        mbdcp_float nd = 0.0;
        for (mbdcp_int i = 0; i < n_c; ++i) {
            mbdcp_float *di = d + 3 * i;
            if (kind == MBDCP_FC_CERT_DIRECTION) {
                memcpy(di, r + 3 * i, 3 * sizeof(mbdcp_float));
                mbdcp_cone_project(c->mu[i], di);
            } else {
                di[0] = kind == MBDCP_FC_CERT_NORMAL ? fmax(-u[3 * i], 0.0) : fmax(r[3 * i], 0.0);
                di[1] = di[2] = 0.0;
            }
            nd = fmax(nd, fmax(fabs(di[0]), fmax(fabs(di[1]), fabs(di[2]))));
        }
        if (!(nd > 0.0) || !isfinite(nd)) continue;
        for (mbdcp_int j = 0; j < m; ++j) d[j] /= nd;
        if (certifies(c, d, bound, tmp)) return (MbdcpFcCertificate)kind;
    }
    return MBDCP_FC_NO_CERTIFICATE;
}

/* ---- AUTO ----------------------------------------------------------------------------------- */

/* AUTO's bookkeeping; costs in flops (estimates from the pattern and the factor's fill). */
typedef struct {
    FcNewton nw;
    int newton_ready;
    mbdcp_float gs_cost, newton_cost; /* spent so far */
    mbdcp_int sweeps, iterations;     /* Gauss-Seidel sweeps; all outer iterations */
    mbdcp_float predicted;            /* Gauss-Seidel's predicted cost to tol at its last test */
    mbdcp_float newton_best;          /* the residual of Newton's best point so far (in Work.qk) */
    int probe;                        /* 0: not decided; 1: probe now; 2: decided; 3: resume after it */
    mbdcp_float hist[RATE_WINDOW];    /* Gauss-Seidel's last residuals */
    mbdcp_int phase_sweeps;           /* sweeps of the current Gauss-Seidel phase */
} Auto;

/* Gauss-Seidel from r, at least min_sweeps sweeps (and GS_FIRST's time before any Newton), then until
 * solved or until its rate over the last RATE_WINDOW sweeps predicts more work to tol than
 * NEWTON_EXPECTED Newton iterations (MAX_ITERATIONS; Newton is set up at the first such test, where
 * a probe may be asked for: Auto.probe). */
static Run auto_gauss_seidel(const FcCtx *c, const MbdcpFcSettings *s, const Work *w, Auto *au, mbdcp_int min_sweeps,
                             mbdcp_float *r, mbdcp_float *u, MbdcpFcInfo *info, MbdcpReturn *rc)
{
    const mbdcp_int m = 3 * c->n_c;
    const Sub sb = {&c->W, c->q, c->coulomb, c->tol, s->max_iter, -1, c};
    mbdcp_float *hist = au->hist;
    Run run = {MBDCP_MAX_ITERATIONS, 0, residual_of(&c->W, c->n_c, c->q, c->mu, c->coulomb, r, u, c->qnorm)};
    if (au->probe == 3) { /* after a failed probe: the phase goes on as if there had been none */
        run.iterations = au->phase_sweeps;
        au->probe = 2;
    }
    if (finished(&sb, r, &run)) return run;
    while (au->sweeps < s->max_iter) {
        hist[run.iterations % RATE_WINDOW] = run.residual;
        memcpy(w->sweep, r, (size_t)m * sizeof(mbdcp_float));
        const mbdcp_float cost = mbdcp_fc_sweep(&c->W, c->n_c, c->q, c->mu, c->coulomb, c->blocks, r, &info->local_failures);
        ++run.iterations;
        ++au->sweeps;
        ++au->iterations;
        au->gs_cost += cost;
        run.residual = residual_of(&c->W, c->n_c, c->q, c->mu, c->coulomb, r, u, c->qnorm);
        if (!isfinite(run.residual)) {
            run.status = MBDCP_NUMERICAL_ERROR;
            return run;
        }
        if (mbdcp_monitor_call(c->monitor, au->iterations, -1, -1, run.residual)) {
            run.status = MBDCP_INTERRUPTED;
            return run;
        }
        if (finished(&sb, r, &run)) return run;
        if (!memcmp(w->sweep, r, (size_t)m * sizeof(mbdcp_float))) break; /* stuck: Newton next */
        if (run.iterations < FIRST_TEST || run.iterations < min_sweeps || !uses_newton(s)) continue;
        if (!au->newton_ready) {
            *rc = mbdcp_fc_newton_setup(c, s->factor_blocks, &au->nw, w->newton_work, w->newton_bytes);
            if (*rc != MBDCP_OK) return run;
            au->newton_ready = 1;
        }
        const mbdcp_float rate = pow(run.residual / hist[run.iterations % RATE_WINDOW], 1.0 / RATE_WINDOW);
        au->predicted = (rate < 1.0 ? log(c->tol / run.residual) / log(rate) : INFINITY) * cost;
        if (!au->probe) {
            au->probe = au->predicted > PROBE_WORTH * PROBE_ITER * au->nw.iteration_cost ? 1 : 2;
            if (au->probe == 1) {
                au->phase_sweeps = run.iterations;
                break;
            }
        }
        const mbdcp_float iteration_time = au->nw.iteration_cost - (1.0 - 1.0 / FACTOR_SPEED) * au->nw.f.flops;
        if (au->newton_cost == 0.0 && au->gs_cost < GS_FIRST * iteration_time) continue;
        if (au->predicted > NEWTON_EXPECTED * iteration_time) break;
    }
    return run;
}

/* Where a Newton attempt of AUTO starts (FROM_PROBE: at r, going on after a probe, while it keeps
 * halving the residual). */
enum { FROM_ZERO, FROM_GS, FROM_BEST, FROM_PROBE };

/* One Newton attempt from r = 0, from Gauss-Seidel's point r, or from Newton's best point so far (kept in
 * w->qk), within limit iterations when limit > 0. Else the first runs within Newton's own limits; the
 * others within a budget of half the Gauss-Seidel work so far or Gauss-Seidel's predicted work, whichever
 * is larger (so that alternating never costs much more than Gauss-Seidel alone). Unless solved, r is left
 * at the better of Gauss-Seidel's point and Newton's best. */
static Run auto_newton(const FcCtx *c, const Work *w, Auto *au, Run gs, int from, mbdcp_int limit, mbdcp_float *r,
                       mbdcp_float *u, MbdcpFcInfo *info, MbdcpReturn *rc)
{
    const mbdcp_int m = 3 * c->n_c;
    FcNewtonRun opt = {limit > 0 ? limit : AUTO_NEWTON_ITER,
                       from == FROM_ZERO ? NEWTON_STALL : from == FROM_PROBE ? PROBE_ITER : AUTO_STALL, 0, 0};
    if ((from == FROM_GS || from == FROM_BEST) && limit <= 0) {
        const mbdcp_float iters = fmax(0.5 * au->gs_cost - au->newton_cost, au->predicted) / au->nw.iteration_cost;
        if (iters < opt.max_iter) opt.max_iter = iters < AUTO_NEWTON_MIN ? AUTO_NEWTON_MIN : (mbdcp_int)iters;
    }
    memcpy(w->prev, r, (size_t)m * sizeof(mbdcp_float));
    if (from == FROM_ZERO) memset(r, 0, (size_t)m * sizeof(mbdcp_float));
    if (from == FROM_BEST) memcpy(r, w->qk, (size_t)m * sizeof(mbdcp_float));
    if (from == FROM_ZERO || from == FROM_BEST) fc_matvec(&c->W, m, r, c->q, u);
    Run run = mbdcp_fc_newton_run(c, &au->nw, &opt, r, u, rc);
    info->inner_iterations += opt.sweeps;
    au->iterations += run.iterations;
    au->newton_cost += opt.factorizations * au->nw.iteration_cost + opt.sweeps * au->nw.sweep_cost;
    run.iterations = au->iterations;
    if (*rc != MBDCP_OK || run.status != MBDCP_MAX_ITERATIONS) return run;
    if (run.residual < au->newton_best) { /* r: Newton's best point */
        au->newton_best = run.residual;
        memcpy(w->qk, r, (size_t)m * sizeof(mbdcp_float));
    }
    if (!(run.residual < gs.residual)) {
        memcpy(r, w->prev, (size_t)m * sizeof(mbdcp_float));
        fc_matvec(&c->W, m, r, c->q, u);
        run.residual = gs.residual;
    }
    return run;
}

/* 1 when W equals its transpose exactly; tptr (m + 1), tind, tval (nnz): the transpose; x (m): zero
 * on entry and exit. */
static int is_symmetric(const Csr *W, mbdcp_int m, mbdcp_int *tptr, mbdcp_int *tind, mbdcp_float *tval, mbdcp_float *x)
{
    memset(tptr, 0, (size_t)(m + 1) * sizeof(mbdcp_int));
    for (mbdcp_int k = 0; k < W->ptr[m]; ++k) ++tptr[W->ind[k] + 1];
    for (mbdcp_int i = 0; i < m; ++i) tptr[i + 1] += tptr[i];
    for (mbdcp_int i = 0; i < m; ++i)
        for (mbdcp_int k = W->ptr[i]; k < W->ptr[i + 1]; ++k) {
            const mbdcp_int slot = tptr[W->ind[k]]++;
            tind[slot] = i;
            tval[slot] = W->val[k];
        }
    for (mbdcp_int i = m; i > 0; --i) tptr[i] = tptr[i - 1];
    tptr[0] = 0;
    int sym = 1;
    for (mbdcp_int i = 0; i < m; ++i) { /* row i of W minus row i of W^T, scattered into x */
        for (mbdcp_int k = W->ptr[i]; k < W->ptr[i + 1]; ++k) x[W->ind[k]] += W->val[k];
        for (mbdcp_int k = tptr[i]; k < tptr[i + 1]; ++k) x[tind[k]] -= tval[k];
        for (mbdcp_int k = W->ptr[i]; k < W->ptr[i + 1]; ++k) {
            if (x[W->ind[k]] != 0.0) sym = 0;
            x[W->ind[k]] = 0.0;
        }
        for (mbdcp_int k = tptr[i]; k < tptr[i + 1]; ++k) {
            if (x[tind[k]] != 0.0) sym = 0;
            x[tind[k]] = 0.0;
        }
    }
    return sym;
}

/* S = (W + W^T) / 2 in CSR, each row W's then W^T's (duplicates are summed where S is used). */
static Csr symmetric_part(const Csr *W, mbdcp_int m, const Work *w)
{
    mbdcp_int out = 0;
    w->sptr[0] = 0;
    for (mbdcp_int i = 0; i < m; ++i) {
        for (mbdcp_int k = W->ptr[i]; k < W->ptr[i + 1]; ++k) {
            w->sind[out] = W->ind[k];
            w->sval[out++] = 0.5 * W->val[k];
        }
        for (mbdcp_int k = w->tptr[i]; k < w->tptr[i + 1]; ++k) {
            w->sind[out] = w->tind[k];
            w->sval[out++] = 0.5 * w->tval[k];
        }
        w->sptr[i + 1] = out;
    }
    return (Csr){w->sptr, w->sind, w->sval};
}

/* AUTO's last resort: the fixed point (Coulomb) or APGD (CCP), with APGD on S (given, or W when it is
 * symmetric, else (W + W^T) / 2 and the splitting of the module's header). */
static Run auto_last(const FcCtx *c, const Csr *S, const MbdcpFcSettings *s, const Work *w, mbdcp_float *r, mbdcp_float *u,
                     MbdcpFcInfo *info, MbdcpReturn *rc)
{
    const mbdcp_int m = 3 * c->n_c;
    MbdcpFcSettings last = *s;
    last.inner = MBDCP_FC_APGD;
    if (last.max_iter > AUTO_LAST_ITER) last.max_iter = AUTO_LAST_ITER; /* max_iter counted sweeps */
    const MbdcpFcMethod method = c->coulomb ? MBDCP_FC_FIXED_POINT : MBDCP_FC_APGD;
    memset(w->tmp, 0, (size_t)m * sizeof(mbdcp_float));
    Csr sym = *S;
    if (S->val == c->W.val && !is_symmetric(&c->W, m, w->tptr, w->tind, w->tval, w->tmp)) sym = symmetric_part(&c->W, m, w);
    info->finished = method;
    return convex_route(c, &sym, method, &last, r, u, w, info, rc);
}

/* Gauss-Seidel (at its first test, perhaps a Newton probe from its point: PROBE_ITER; before the first
 * hand-over, at least GS_FIRST Newton iterations' time); once it is predicted slow, Newton from r = 0; then
 * Gauss-Seidel and Newton alternately (each Gauss-Seidel phase at least as long as all before it; Newton
 * from the better of its own best point and Gauss-Seidel's); once Gauss-Seidel has used max_iter sweeps,
 * the fixed point or APGD from the best point. info->finished says which method ended. */
static Run auto_solve(const FcCtx *c, const Csr *S, const MbdcpFcSettings *s, const Work *w, mbdcp_float *r,
                      mbdcp_float *u, MbdcpFcInfo *info, MbdcpReturn *rc)
{
    Auto au;
    memset(&au, 0, sizeof au);
    au.newton_best = INFINITY;
    Run run = {MBDCP_MAX_ITERATIONS, 0, INFINITY};
    for (int round = 0; au.sweeps < s->max_iter;) {
        info->finished = c->coulomb ? MBDCP_FC_NSGS : MBDCP_FC_PGS;
        run = auto_gauss_seidel(c, s, w, &au, au.probe == 3 ? 0 : au.sweeps, r, u, info, rc);
        run.iterations = au.iterations;
        if (*rc != MBDCP_OK || run.status != MBDCP_MAX_ITERATIONS) return run;
        mbdcp_int contact;
        if (find_certificate(c, r, u, w->sweep, w->tmp, &contact) != MBDCP_FC_NO_CERTIFICATE) {
            run.status = MBDCP_RAY_TERMINATION; /* no solution exists: why go on */
            return run;
        }
        if (!uses_newton(s)) break;
        if (!au.newton_ready) {
            if ((*rc = mbdcp_fc_newton_setup(c, s->factor_blocks, &au.nw, w->newton_work, w->newton_bytes)) != MBDCP_OK)
                return run;
            au.newton_ready = 1;
            au.predicted = INFINITY; /* Gauss-Seidel is stuck */
        }
        info->finished = MBDCP_FC_NEWTON;
        int from = round++ == 0 ? FROM_ZERO : au.newton_best < run.residual ? FROM_BEST : FROM_GS;
        if (au.probe == 1) {
            au.probe = 2;
            const mbdcp_float gs_residual = run.residual, newton_cost = au.newton_cost;
            run = auto_newton(c, w, &au, run, FROM_GS, PROBE_ITER, r, u, info, rc);
            if (*rc != MBDCP_OK || run.status != MBDCP_MAX_ITERATIONS) return run;
            if (!(run.residual <= PROBE_GAIN * gs_residual)) { /* Gauss-Seidel resumes where it was */
                memcpy(r, w->prev, 3 * (size_t)c->n_c * sizeof(mbdcp_float));
                au.newton_best = INFINITY;
                au.newton_cost = newton_cost; /* the later attempts' budgets as without the probe */
                au.probe = 3;
                round = 0;
                continue;
            }
            from = FROM_PROBE;
        }
        run = auto_newton(c, w, &au, run, from, 0, r, u, info, rc);
        if (*rc != MBDCP_OK || run.status != MBDCP_MAX_ITERATIONS) return run;
        if (from == FROM_PROBE) round = 0; /* the probe's lead is lost: as if it had failed */
        au.predicted = 0.0;
    }
    run = auto_last(c, S, s, w, r, u, info, rc);
    run.iterations += au.iterations;
    return run;
}

/* ---- the driver ------------------------------------------------------------------------------ */

static MbdcpReturn check_csr(mbdcp_int m, const mbdcp_int *ptr, const mbdcp_int *ind, const mbdcp_float *val)
{
    if (!ptr) return MBDCP_ERR_NULL;
    if (ptr[0] != 0) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int i = 0; i < m; ++i)
        if (ptr[i + 1] < ptr[i]) return MBDCP_ERR_DIMENSION;
    const mbdcp_int nnz = ptr[m];
    if (nnz > 0 && (!ind || !val)) return MBDCP_ERR_NULL;
    for (mbdcp_int k = 0; k < nnz; ++k)
        if (ind[k] < 0 || ind[k] >= m) return MBDCP_ERR_DIMENSION;
    if (!mbdcp_all_finite((size_t)nnz, val)) return MBDCP_ERR_NONFINITE;
    return MBDCP_OK;
}

static MbdcpReturn check_problem(const MbdcpFcProblem *p, const mbdcp_float *r)
{
    const mbdcp_int n_c = p->n_c, m = 3 * n_c;
    MbdcpReturn rc;
    if (!p->q || !p->mu || !r) return MBDCP_ERR_NULL;
    if ((rc = check_csr(m, p->W_rowptr, p->W_colind, p->W_val)) != MBDCP_OK) return rc;
    if (p->S_rowptr && (rc = check_csr(m, p->S_rowptr, p->S_colind, p->S_val)) != MBDCP_OK) return rc;
    if (!mbdcp_all_finite((size_t)m, p->q) || !mbdcp_all_finite((size_t)n_c, p->mu)) return MBDCP_ERR_NONFINITE;
    for (mbdcp_int i = 0; i < n_c; ++i)
        if (p->mu[i] < 0.0) return MBDCP_ERR_DATA;
    return MBDCP_OK;
}

/* The workspace's parts. */
static void layout(mbdcp_int n_c, mbdcp_int nnz, const MbdcpFcSettings *s, void *work, Work *w)
{
    const mbdcp_int m = 3 * n_c;
    memset(w, 0, sizeof *w);
    w->blocks = (mbdcp_float *)work;
    w->qk = w->blocks + 9 * (size_t)n_c;
    w->tmp = w->qk + m;
    w->prev = w->tmp + m;
    w->sweep = w->prev + m;
    char *end = (char *)(w->sweep + m);
    if (uses_apgd(s)) {
        w->ccp_u = w->sweep + m;
        w->ident_val = w->ccp_u + m;
        w->ccp_work = (void *)(w->ident_val + m);
        w->ccp_work_bytes = ccp_bytes(n_c);
        w->ident_ptr = (mbdcp_int *)((char *)w->ccp_work + w->ccp_work_bytes);
        w->ident_ind = w->ident_ptr + m + 1;
        for (mbdcp_int j = 0; j < m; ++j) {
            w->ident_ptr[j] = j;
            w->ident_ind[j] = j;
            w->ident_val[j] = 1.0;
        }
        w->ident_ptr[m] = m;
        end = (char *)(w->ident_ind + m + 1);
    }
    if (s->method == MBDCP_FC_AUTO) {
        const size_t off = (size_t)(end - (char *)work);
        w->tval = (mbdcp_float *)((char *)work + ((off + 15) & ~(size_t)15));
        w->sval = w->tval + nnz;
        w->tptr = (mbdcp_int *)(w->sval + 2 * (size_t)nnz);
        w->tind = w->tptr + m + 1;
        w->sptr = w->tind + nnz;
        w->sind = w->sptr + m + 1;
        end = (char *)(w->sind + 2 * (size_t)nnz);
    }
    if (uses_newton(s)) {
        const size_t off = (size_t)(end - (char *)work);
        w->newton_work = (char *)work + ((off + 15) & ~(size_t)15); /* its size: set by the caller */
    }
}

/* The context: W, q, mu, the scales. */
static FcCtx context(const MbdcpFcProblem *p, const MbdcpFcSettings *s, int coulomb, const mbdcp_float *blocks,
                     const mbdcp_float *r)
{
    const mbdcp_int m = 3 * p->n_c;
    FcCtx c;
    c.W = (Csr){p->W_rowptr, p->W_colind, p->W_val};
    c.n_c = p->n_c;
    c.q = p->q;
    c.mu = p->mu;
    c.coulomb = coulomb;
    c.tol = s->tol;
    const mbdcp_float qn = fc_norm2(m, p->q);
    c.qnorm = qn > 0.0 ? qn : 1.0;
    const mbdcp_float wmax = mbdcp_norm_inf((size_t)p->W_rowptr[m], p->W_val);
    const mbdcp_float scale = fmax(mbdcp_norm_inf((size_t)m, p->q), wmax * mbdcp_norm_inf((size_t)m, r));
    c.rmax = R_LIMIT * (scale > 0.0 ? scale : 1.0) / (1.0 + wmax);
    c.blocks = blocks;
    c.monitor = &s->monitor;
    return c;
}

static Run dispatch(const FcCtx *c, const Csr *S, const MbdcpFcSettings *s, const Work *w, mbdcp_float *r,
                    mbdcp_float *u, MbdcpFcInfo *info, MbdcpReturn *rc)
{
    *rc = MBDCP_OK;
    info->finished = s->method;
    if (s->method == MBDCP_FC_NSGS || s->method == MBDCP_FC_PGS) {
        const Sub sb = {&c->W, c->q, c->coulomb, c->tol, s->max_iter, -1, c};
        return gauss_seidel(c, &sb, r, u, w->sweep, &info->local_failures);
    }
    if (s->method == MBDCP_FC_AUTO) return auto_solve(c, S, s, w, r, u, info, rc);
    if (s->method == MBDCP_FC_NEWTON) {
        FcNewton nw;
        Run run = {MBDCP_MAX_ITERATIONS, 0, INFINITY};
        if ((*rc = mbdcp_fc_newton_setup(c, s->factor_blocks, &nw, w->newton_work, w->newton_bytes)) != MBDCP_OK) return run;
        fc_matvec(&c->W, 3 * c->n_c, r, c->q, u);
        FcNewtonRun opt = {s->max_iter, NEWTON_STALL, 0, 0};
        run = mbdcp_fc_newton_run(c, &nw, &opt, r, u, rc);
        info->inner_iterations = opt.sweeps;
        return run;
    }
    return convex_route(c, S, s->method, s, r, u, w, info, rc);
}

static MbdcpReturn solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, int coulomb, mbdcp_float *r,
                         mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    if (!p || !s || !info || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_fc_check_settings(s, coulomb, NULL);
    if (rc != MBDCP_OK) return rc;
    if (p->n_c < 0) return MBDCP_ERR_DIMENSION;
    const mbdcp_int n_c = p->n_c, m = 3 * n_c;
    info->status = MBDCP_SOLVED;
    info->iterations = info->inner_iterations = info->local_failures = 0;
    info->residual = 0.0;
    info->finished = s->method;
    info->certificate = MBDCP_FC_NO_CERTIFICATE;
    info->certificate_contact = -1;
    if (n_c == 0) return MBDCP_OK;
    if ((rc = check_problem(p, r)) != MBDCP_OK || !u) return rc != MBDCP_OK ? rc : MBDCP_ERR_NULL;
    const size_t need = mbdcp_fc_workspace_size(p, s);
    if (work_bytes < need) return MBDCP_ERR_WORKSPACE;
    if (!s->warm_start) memset(r, 0, (size_t)m * sizeof(mbdcp_float));
    if (!mbdcp_all_finite((size_t)m, r)) return MBDCP_ERR_NONFINITE;

    Work w;
    layout(n_c, p->W_rowptr[m], s, work, &w);
    if (uses_newton(s)) w.newton_bytes = work_bytes - (size_t)((char *)w.newton_work - (char *)work);
    const FcCtx c = context(p, s, coulomb, w.blocks, r);
    const Csr S = p->S_rowptr ? (Csr){p->S_rowptr, p->S_colind, p->S_val} : c.W;
    diagonal_blocks(&c.W, n_c, w.blocks);
    Run run = dispatch(&c, &S, s, &w, r, u, info, &rc);
    if (rc != MBDCP_OK) return rc;
    info->status = run.status;
    info->iterations = run.iterations;
    /* the residual reported is the extended-precision one, whatever the status */
    info->residual = mbdcp_all_finite((size_t)m, r) ? mbdcp_fc_residual_ld(&c, r, NULL) : run.residual;
    /* u = W r + q of the r returned (the inner solves leave u for their own matrix) */
    fc_matvec(&c.W, m, r, p->q, u);
    if (!mbdcp_all_finite((size_t)m, r) && info->status != MBDCP_INTERRUPTED) info->status = MBDCP_NUMERICAL_ERROR;
    if (info->status != MBDCP_SOLVED && info->status != MBDCP_INTERRUPTED && mbdcp_all_finite((size_t)m, r)) {
        info->certificate = find_certificate(&c, r, u, w.qk, w.tmp, &info->certificate_contact);
        if (info->certificate == MBDCP_FC_NO_CERTIFICATE && info->status == MBDCP_RAY_TERMINATION)
            info->certificate = MBDCP_FC_DIVERGED;
        if (info->certificate != MBDCP_FC_NO_CERTIFICATE) info->status = MBDCP_RAY_TERMINATION;
    }
    return MBDCP_OK;
}

/* The 2-D matrix A (CSR, 2 n_c rows) as the 3-D one with rows and columns (normal, tangent, 0) per
 * contact and |A_tt| (1 where it is 0 or not finite) on the second tangent's diagonal. */
static void embed_matrix(mbdcp_int n_c, const mbdcp_int *ptr, const mbdcp_int *ind, const mbdcp_float *val,
                         mbdcp_int *ptr3, mbdcp_int *ind3, mbdcp_float *val3)
{
    mbdcp_int out = 0;
    ptr3[0] = 0;
    for (mbdcp_int i = 0; i < n_c; ++i) {
        mbdcp_float d = 0.0;
        for (int a = 0; a < 2; ++a) {
            for (mbdcp_int k = ptr[2 * i + a]; k < ptr[2 * i + a + 1]; ++k) {
                ind3[out] = (ind[k] / 2) * 3 + ind[k] % 2;
                val3[out++] = val[k];
                if (a == 1 && ind[k] == 2 * i + 1) d += val[k];
            }
            ptr3[3 * i + a + 1] = out;
        }
        ind3[out] = 3 * i + 2;
        val3[out++] = d != 0.0 && isfinite(d) ? fabs(d) : 1.0;
        ptr3[3 * i + 3] = out;
    }
}

/* A 2-D problem solved as its 3-D copy in the head of the workspace. */
static MbdcpReturn solve_2d(const MbdcpFcProblem *p, const MbdcpFcSettings *s, int coulomb, mbdcp_float *r,
                            mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    const mbdcp_int n_c = p->n_c, m = 3 * n_c, nnz = p->W_rowptr[2 * n_c] + n_c;
    const mbdcp_int snnz = p->S_rowptr ? p->S_rowptr[2 * n_c] + n_c : 0;
    const size_t head = bytes_2d(p);
    if (work_bytes < head) return MBDCP_ERR_WORKSPACE;
    mbdcp_float *val3 = (mbdcp_float *)work, *sval3 = val3 + nnz, *q3 = sval3 + snnz, *r3 = q3 + m, *u3 = r3 + m;
    mbdcp_int *ptr3 = (mbdcp_int *)(u3 + m), *ind3 = ptr3 + m + 1, *sptr3 = ind3 + nnz, *sind3 = sptr3 + m + 1;
    MbdcpFcProblem p3 = *p;
    p3.spacedim = 3;
    embed_matrix(n_c, p->W_rowptr, p->W_colind, p->W_val, ptr3, ind3, val3);
    p3.W_rowptr = ptr3;
    p3.W_colind = ind3;
    p3.W_val = val3;
    if (p->S_rowptr) {
        embed_matrix(n_c, p->S_rowptr, p->S_colind, p->S_val, sptr3, sind3, sval3);
        p3.S_rowptr = sptr3;
        p3.S_colind = sind3;
        p3.S_val = sval3;
    }
    for (mbdcp_int i = 0; i < n_c; ++i) {
        q3[3 * i] = p->q[2 * i];
        q3[3 * i + 1] = p->q[2 * i + 1];
        q3[3 * i + 2] = 0.0;
        r3[3 * i] = r[2 * i];
        r3[3 * i + 1] = r[2 * i + 1];
        r3[3 * i + 2] = 0.0;
    }
    p3.q = q3;
    const MbdcpReturn rc = solve(&p3, s, coulomb, r3, u3, info, (char *)work + head, work_bytes - head);
    if (rc != MBDCP_OK) return rc;
    for (mbdcp_int i = 0; i < n_c; ++i)
        for (int a = 0; a < 2; ++a) {
            r[2 * i + a] = r3[3 * i + a];
            u[2 * i + a] = u3[3 * i + a];
        }
    return MBDCP_OK;
}

static MbdcpReturn solve_any(const MbdcpFcProblem *p, const MbdcpFcSettings *s, int coulomb, mbdcp_float *r,
                             mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    if (!p || !s || !info || !work) return MBDCP_ERR_NULL;
    if (p->spacedim != 2 || p->n_c <= 0) return solve(p, s, coulomb, r, u, info, work, work_bytes);
    if (!p->W_rowptr || !p->q || !p->mu || !r || !u) return MBDCP_ERR_NULL;
    MbdcpReturn rc = check_csr(2 * p->n_c, p->W_rowptr, p->W_colind, p->W_val);
    if (rc == MBDCP_OK && p->S_rowptr) rc = check_csr(2 * p->n_c, p->S_rowptr, p->S_colind, p->S_val);
    if (rc != MBDCP_OK) return rc;
    if (!s->warm_start) memset(r, 0, 2 * (size_t)p->n_c * sizeof(mbdcp_float));
    if (!mbdcp_all_finite(2 * (size_t)p->n_c, p->q) || !mbdcp_all_finite(2 * (size_t)p->n_c, r)) return MBDCP_ERR_NONFINITE;
    return solve_2d(p, s, coulomb, r, u, info, work, work_bytes);
}

MbdcpReturn mbdcp_coulomb_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r, mbdcp_float *u,
                                MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    return solve_any(p, s, 1, r, u, info, work, work_bytes);
}

MbdcpReturn mbdcp_ccp_local_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r, mbdcp_float *u,
                                  MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    return solve_any(p, s, 0, r, u, info, work, work_bytes);
}

MbdcpReturn mbdcp_fc_residual(const MbdcpFcProblem *p, int coulomb, const mbdcp_float *r, mbdcp_float *u,
                              mbdcp_float *residual)
{
    if (!p || !residual) return MBDCP_ERR_NULL;
    if (p->n_c < 0) return MBDCP_ERR_DIMENSION;
    const mbdcp_int n_c = p->n_c, d = p->spacedim == 2 ? 2 : 3, m = d * n_c;
    *residual = 0.0;
    if (n_c == 0) return MBDCP_OK;
    if (!p->q || !p->mu || !r) return MBDCP_ERR_NULL;
    MbdcpReturn rc = check_csr(m, p->W_rowptr, p->W_colind, p->W_val);
    if (rc != MBDCP_OK) return rc;
    const Csr W = {p->W_rowptr, p->W_colind, p->W_val};
    const mbdcp_float qn = fc_norm2(m, p->q);
    mbdcp_float res = 0.0;
    /* without u, contact by contact (a 2-D contact as a 3-D one with zero second tangents) */
    for (mbdcp_int i = 0; i < n_c; ++i) {
        mbdcp_float ui[3] = {0.0, 0.0, 0.0}, ri[3] = {0.0, 0.0, 0.0};
        for (int a = 0; a < d; ++a) {
            ui[a] = fc_row_dot(&W, d * i + a, r) + p->q[d * i + a];
            ri[a] = r[d * i + a];
            if (u) u[d * i + a] = ui[a];
        }
        const mbdcp_float shift = coulomb ? p->mu[i] * sqrt(ui[1] * ui[1] + ui[2] * ui[2]) : 0.0;
        mbdcp_float y[3] = {ri[0] - ui[0] - shift, ri[1] - ui[1], ri[2] - ui[2]};
        mbdcp_cone_project(p->mu[i], y);
        for (int a = 0; a < 3; ++a) res += (ri[a] - y[a]) * (ri[a] - y[a]);
    }
    *residual = sqrt(res) / (qn > 0.0 ? qn : 1.0);
    return MBDCP_OK;
}
