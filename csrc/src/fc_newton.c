/* The semismooth Newton method for the Coulomb problem and the CCP on the Delassus matrix, on the
 * Alart-Curnier function (Alart and Curnier 1991; the generalized Newton of Christensen, Klarbring,
 * Pang and Strömberg 1998), globalised by an Armijo line search on ||Phi||^2 / 2 with an adaptive
 * regularisation and by Gauss-Seidel sweeps where the search fails; the Jacobian's linear system is
 * solved by the sparse block factorisation of sparse_ldl.h. See coulomb.h. */
#include <math.h>
#include <string.h>

#include "fc_internal.h"
#include "mbdcp/coulomb.h"
#include "mbdcp/dense.h"
#include "mbdcp/sparse_ldl.h"

#define ARMIJO 1e-4
#define MAX_HALVINGS 12
/* Gauss-Seidel sweeps when the line search fails. */
#define FALLBACK_SWEEPS 10

/* Static pivoting of the factorisation, relative to each pivot block's scale. */
#define PIVOT_TOL 1e-11
/* Regularisation J + lambda I (J is of order 1 through Alart-Curnier's scaling): lambda starts at
 * LAMBDA_START, falls tenfold after each full step down to LAMBDA_MIN, and where the line search fails
 * it rises tenfold (from at least LAMBDA_RETRY) up to LAMBDA_MAX, where the direction is nearly a
 * projected-gradient step; beyond, Gauss-Seidel sweeps take over for the iteration. With a
 * nonmonotone search (the largest of the last 5 merits) Newton cycled on granular piles. */
#define LAMBDA_START 1e-6
#define LAMBDA_MIN 1e-12
#define LAMBDA_RETRY 1e-8
#define LAMBDA_MAX 1e2
/* For the CCP, lambda is at least LAMBDA_RESIDUAL ||Phi|| / ||rho o q|| (unitless, as J is; Phi
 * and rho o q are both impulses): where N is singular its solutions form a convex set rather than a
 * point, and the Jacobian is singular on it; a regularisation that shrinks with the residual keeps
 * the steps bounded (after Fan and Yuan 2005). The Coulomb problem, not monotone, keeps the schedule
 * alone: with the floor, Newton no longer solved FCLib's LMGC_100_PR_PerioBox-i00. */
#define LAMBDA_RESIDUAL 1e-1

static size_t align8(size_t bytes)
{
    return (bytes + 7) & ~(size_t)7;
}

/* ---- layout -------------------------------------------------------------------------------------- */

typedef struct {
    size_t ints, floats, factor;
} Sizes;

static Sizes sizes(mbdcp_int n_c, mbdcp_int nnz_w, mbdcp_int factor_blocks)
{
    const size_t nc = (size_t)n_c, m = 3 * nc, nbmax = (size_t)nnz_w + nc;
    Sizes s;
    s.ints = (nc + 1) + nbmax + (size_t)nnz_w + 2 * nc;
    s.floats = 18 * nbmax + 20 * nc + 6 * m;
    const size_t a = mbdcp_sldl_analyze_workspace_size(n_c, (mbdcp_int)nbmax);
    const size_t f = mbdcp_sldl_workspace_size(n_c, 3, 0, (mbdcp_int)nbmax, factor_blocks);
    s.factor = a > f ? a : f;
    return s;
}

size_t mbdcp_fc_newton_bytes(mbdcp_int n_c, mbdcp_int nnz_w, mbdcp_int factor_blocks)
{
    if (n_c < 0 || nnz_w < 0 || factor_blocks < 0) return 0;
    const Sizes s = sizes(n_c, nnz_w, factor_blocks);
    return s.floats * sizeof(mbdcp_float) + align8(s.ints * sizeof(mbdcp_int)) + s.factor + 8;
}

/* W's d x d block pattern in block CSR, the diagonal block first in each row; slot[k] (may be NULL):
 * the block of W's entry k. mark: n_c ints. Returns the number of blocks. */
static mbdcp_int block_pattern(const FcCsr *W, mbdcp_int n_c, mbdcp_int d, mbdcp_int *bptr, mbdcp_int *bind,
                               mbdcp_int *slot, mbdcp_int *mark)
{
    for (mbdcp_int j = 0; j < n_c; ++j) mark[j] = -1;
    mbdcp_int nb = 0;
    for (mbdcp_int i = 0; i < n_c; ++i) {
        bptr[i] = nb;
        mark[i] = nb;
        bind[nb++] = i;
        for (mbdcp_int row = d * i; row < d * i + d; ++row)
            for (mbdcp_int k = W->ptr[row]; k < W->ptr[row + 1]; ++k) {
                const mbdcp_int j = W->ind[k] / d;
                if (mark[j] < bptr[i]) {
                    mark[j] = nb;
                    bind[nb++] = j;
                }
                if (slot) slot[k] = mark[j];
            }
    }
    bptr[n_c] = nb;
    return nb;
}

size_t mbdcp_fc_factor_workspace_size(const MbdcpFcProblem *p)
{
    if (!p || p->n_c < 0 || !p->W_rowptr) return 0;
    const mbdcp_int n_c = p->n_c, nbmax = p->W_rowptr[(p->spacedim == 2 ? 2 : 3) * n_c] + n_c;
    return ((size_t)n_c + 1 + (size_t)nbmax + 2 * (size_t)n_c) * sizeof(mbdcp_int) +
           mbdcp_sldl_analyze_workspace_size(n_c, nbmax) + 8;
}

MbdcpReturn mbdcp_fc_factor_blocks(const MbdcpFcProblem *p, mbdcp_int *blocks, mbdcp_float *flops, void *work,
                                   size_t work_bytes)
{
    if (!p || !blocks || !work || !p->W_rowptr) return MBDCP_ERR_NULL;
    if (p->n_c < 0) return MBDCP_ERR_DIMENSION;
    if (work_bytes < mbdcp_fc_factor_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    const mbdcp_int n_c = p->n_c, d = p->spacedim == 2 ? 2 : 3, m = d * n_c;
    for (mbdcp_int i = 0; i < m; ++i)
        if (p->W_rowptr[i + 1] < p->W_rowptr[i]) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int k = 0; k < p->W_rowptr[m]; ++k)
        if (!p->W_colind || p->W_colind[k] < 0 || p->W_colind[k] >= m) return MBDCP_ERR_DIMENSION;
    const FcCsr W = {p->W_rowptr, p->W_colind, p->W_val};
    mbdcp_int *bptr = (mbdcp_int *)work, *bind = bptr + n_c + 1;
    mbdcp_int *mark = bind + p->W_rowptr[m] + n_c, *perm = mark + n_c;
    const mbdcp_int nb = block_pattern(&W, n_c, d, bptr, bind, NULL, mark);
    const size_t used = (size_t)(perm + n_c - (mbdcp_int *)work) * sizeof(mbdcp_int);
    mbdcp_float f = 0.0;
    MbdcpReturn rc = mbdcp_sldl_analyze(n_c, bptr, bind, perm, blocks, &f, (char *)work + used, work_bytes - used);
    (void)nb;
    if (flops) *flops = f;
    return rc;
}

/* ---- the Alart-Curnier function ------------------------------------------------------------------ */

/*
 * One contact's Alart-Curnier function, with the CCP written as Coulomb's law on
 * ũ = (u_n - mu ||u_T||, u_T) (then û = ũ + mu ||ũ_T|| e_n = u):
 *     Phi_n = r_n - max(0, x_n),  x_n = r_n - rho_n ũ_n,
 *     Phi_T = r_T - Pi_D(r_T - rho_t u_T),  D the disc of radius mu max(0, x_n);
 * zero exactly at the solutions. A, B (may be NULL): an element of the generalized Jacobian,
 * dPhi = A dr + B du (3 x 3, row-major). Returns ||Phi||^2.
 */
static mbdcp_float ac_contact(const mbdcp_float *r, const mbdcp_float *u, mbdcp_float mu, mbdcp_float rho_n,
                              mbdcp_float rho_t, int coulomb, mbdcp_float *phi, mbdcp_float *A, mbdcp_float *B)
{
    const mbdcp_float ut = sqrt(u[1] * u[1] + u[2] * u[2]);
    const mbdcp_float k = coulomb ? 0.0 : mu; /* ũ_n = u_n - k ||u_T|| */
    const mbdcp_float g1 = ut > 0.0 ? -k * u[1] / ut : 0.0, g2 = ut > 0.0 ? -k * u[2] / ut : 0.0;
    const mbdcp_float xn = r[0] - rho_n * (u[0] - k * ut);
    if (A) {
        memset(A, 0, 9 * sizeof(mbdcp_float));
        memset(B, 0, 9 * sizeof(mbdcp_float));
    }
    if (!(xn > 0.0)) { /* take-off: Phi = r */
        memcpy(phi, r, 3 * sizeof(mbdcp_float));
        if (A) A[0] = A[4] = A[8] = 1.0;
        return r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    }
    phi[0] = r[0] - xn;
    if (A) {
        B[0] = rho_n;
        B[1] = rho_n * g1;
        B[2] = rho_n * g2;
    }
    const mbdcp_float R = mu * xn, x1 = r[1] - rho_t * u[1], x2 = r[2] - rho_t * u[2];
    const mbdcp_float nx = sqrt(x1 * x1 + x2 * x2);
    if (nx <= R) { /* stick */
        phi[1] = r[1] - x1;
        phi[2] = r[2] - x2;
        if (A) B[4] = B[8] = rho_t;
        return phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2];
    }
    const mbdcp_float s1 = x1 / nx, s2 = x2 / nx, c = R / nx;
    phi[1] = r[1] - R * s1;
    phi[2] = r[2] - R * s2;
    if (A) { /* slide: d(R s) = s mu dx_n + (R / |x|)(I - s s^T) dx_T */
        const mbdcp_float N11 = c * (1.0 - s1 * s1), N12 = -c * s1 * s2, N22 = c * (1.0 - s2 * s2);
        A[3] = -mu * s1;
        A[6] = -mu * s2;
        A[4] = 1.0 - N11;
        A[5] = -N12;
        A[7] = -N12;
        A[8] = 1.0 - N22;
        const mbdcp_float gn[3] = {1.0, g1, g2};
        for (int j = 0; j < 3; ++j) {
            B[3 + j] = mu * rho_n * s1 * gn[j];
            B[6 + j] = mu * rho_n * s2 * gn[j];
        }
        B[4] += N11 * rho_t;
        B[5] += N12 * rho_t;
        B[7] += N12 * rho_t;
        B[8] += N22 * rho_t;
    }
    return phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2];
}

/* Phi of every contact (and the Jacobian's A, B when jac); returns ||Phi||^2 / 2. */
static mbdcp_float evaluate(const FcCtx *c, FcNewton *nw, const mbdcp_float *r, const mbdcp_float *u, int jac)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < c->n_c; ++i)
        s += ac_contact(r + 3 * i, u + 3 * i, c->mu[i], nw->rho[2 * i], nw->rho[2 * i + 1], c->coulomb,
                        nw->phi + 3 * i, jac ? nw->A + 9 * i : NULL, jac ? nw->B + 9 * i : NULL);
    return 0.5 * s;
}

/* rho_n = 1 / W_nn, rho_t = 2 / (W_t1t1 + W_t2t2) per contact (Alart-Curnier's scaling by the diagonal
 * block), with the block's largest entry or 1 where a diagonal entry is not positive. */
static void scaling(const FcCtx *c, mbdcp_float *rho)
{
    for (mbdcp_int i = 0; i < c->n_c; ++i) {
        const mbdcp_float *B = c->blocks + 9 * i;
        mbdcp_float big = 0.0;
        for (int k = 0; k < 9; ++k) big = fmax(big, fabs(B[k]));
        if (!(big > 0.0)) big = 1.0;
        const mbdcp_float wn = B[0] > 1e-12 * big ? B[0] : big, wt = B[4] + B[8] > 1e-12 * big ? 0.5 * (B[4] + B[8]) : big;
        rho[2 * i] = 1.0 / wn;
        rho[2 * i + 1] = 1.0 / wt;
    }
}

/* ---- setup --------------------------------------------------------------------------------------- */

MbdcpReturn mbdcp_fc_newton_setup(const FcCtx *c, mbdcp_int factor_blocks, FcNewton *nw, void *work, size_t work_bytes)
{
    const mbdcp_int n_c = c->n_c, m = 3 * n_c, nnz_w = c->W.ptr[m];
    const Sizes s = sizes(n_c, nnz_w, factor_blocks);
    if (work_bytes < s.floats * sizeof(mbdcp_float) + align8(s.ints * sizeof(mbdcp_int)) + s.factor) return MBDCP_ERR_WORKSPACE;
    const size_t nbmax = (size_t)nnz_w + (size_t)n_c;
    mbdcp_float *fl = (mbdcp_float *)work;
    nw->Wb = fl;
    nw->Jb = nw->Wb + 9 * nbmax;
    nw->A = nw->Jb + 9 * nbmax;
    nw->B = nw->A + 9 * (size_t)n_c;
    nw->rho = nw->B + 9 * (size_t)n_c;
    nw->phi = nw->rho + 2 * (size_t)n_c;
    nw->d = nw->phi + m;
    nw->wd = nw->d + m;
    nw->rt = nw->wd + m;
    nw->ut = nw->rt + m;
    nw->best = nw->ut + m;
    mbdcp_int *in = (mbdcp_int *)(fl + s.floats);
    nw->bptr = in;
    nw->bind = in + n_c + 1;
    nw->slot = nw->bind + nbmax;
    nw->perm = nw->slot + nnz_w;
    mbdcp_int *mark = nw->perm + n_c;
    void *fwork = (char *)work + s.floats * sizeof(mbdcp_float) + align8(s.ints * sizeof(mbdcp_int));
    nw->nb = block_pattern(&c->W, n_c, 3, nw->bptr, nw->bind, nw->slot, mark);
    memset(nw->Wb, 0, 9 * (size_t)nw->nb * sizeof(mbdcp_float));
    for (mbdcp_int row = 0; row < m; ++row)
        for (mbdcp_int k = c->W.ptr[row]; k < c->W.ptr[row + 1]; ++k)
            nw->Wb[9 * (size_t)nw->slot[k] + 3 * (row % 3) + c->W.ind[k] % 3] += c->W.val[k];
    mbdcp_int fill = -1;
    mbdcp_float flops = 0.0;
    MbdcpReturn rc = mbdcp_sldl_analyze(n_c, nw->bptr, nw->bind, nw->perm, &fill, &flops, fwork, s.factor);
    if (rc != MBDCP_OK) return rc;
    if (fill > factor_blocks) return MBDCP_ERR_SETTING; /* the workspace was sized for a smaller fill */
    rc = mbdcp_sldl_init(&nw->f, n_c, 3, 0, nw->bptr, nw->bind, nw->perm, fill, fwork, s.factor);
    if (rc != MBDCP_OK) return rc;
    scaling(c, nw->rho);
    /* flops: a factorisation (its multiply-adds run about twice as fast as a sweep's), two triangular
     * solves, J's blocks (27 per block), two products with W */
    nw->iteration_cost = nw->f.flops + 36.0 * fill + 54.0 * nw->nb + 4.0 * nnz_w + 60.0 * m;
    nw->sweep_cost = 2.0 * nnz_w + 500.0 * n_c;
    return MBDCP_OK;
}

/* ---- one iteration ------------------------------------------------------------------------------- */

/* J = A + B W + lambda I, block by block, into Jb (block CSR order, diagonal block first per row). */
static void assemble(const FcCtx *c, FcNewton *nw, mbdcp_float lambda)
{
    for (mbdcp_int i = 0; i < c->n_c; ++i) {
        const mbdcp_float *B = nw->B + 9 * i;
        const int takeoff = B[0] == 0.0 && B[1] == 0.0 && B[2] == 0.0 && B[4] == 0.0 && B[8] == 0.0 && B[3] == 0.0 &&
                            B[5] == 0.0 && B[6] == 0.0 && B[7] == 0.0;
        for (mbdcp_int k = nw->bptr[i]; k < nw->bptr[i + 1]; ++k) {
            mbdcp_float *J = nw->Jb + 9 * (size_t)k;
            const mbdcp_float *Wk = nw->Wb + 9 * (size_t)k;
            if (takeoff) {
                memset(J, 0, 9 * sizeof(mbdcp_float));
            } else {
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b)
                        J[3 * a + b] = B[3 * a] * Wk[b] + B[3 * a + 1] * Wk[3 + b] + B[3 * a + 2] * Wk[6 + b];
            }
            if (k == nw->bptr[i]) { /* the diagonal block */
                for (int e = 0; e < 9; ++e) J[e] += nw->A[9 * i + e];
                J[0] += lambda;
                J[4] += lambda;
                J[8] += lambda;
            }
        }
    }
}

/* Armijo backtracking from r along d; on success r, u, phi, A, B hold the new point and the merit is
 * returned in *merit. Returns the step, 0 when none was accepted. */
static mbdcp_float line_search(const FcCtx *c, FcNewton *nw, mbdcp_float *r, mbdcp_float *u, mbdcp_float merit0,
                               mbdcp_float *merit)
{
    const mbdcp_int m = 3 * c->n_c;
    mbdcp_float t = 1.0;
    for (int h = 0; h <= MAX_HALVINGS; ++h, t *= 0.5) {
        for (mbdcp_int j = 0; j < m; ++j) {
            nw->rt[j] = r[j] + t * nw->d[j];
            nw->ut[j] = u[j] + t * nw->wd[j];
        }
        const mbdcp_float mt = evaluate(c, nw, nw->rt, nw->ut, 1);
        if (isfinite(mt) && mt <= (1.0 - 2.0 * ARMIJO * t) * merit0) {
            memcpy(r, nw->rt, (size_t)m * sizeof(mbdcp_float));
            fc_matvec(&c->W, m, r, c->q, u); /* afresh, not accumulated */
            *merit = evaluate(c, nw, r, u, 1);
            return t;
        }
    }
    return 0.0;
}

/* Gauss-Seidel sweeps from r where the Newton direction failed; u and the Jacobian renewed. */
static mbdcp_float fallback(const FcCtx *c, FcNewton *nw, mbdcp_float *r, mbdcp_float *u, mbdcp_int *sweeps)
{
    const mbdcp_int m = 3 * c->n_c;
    mbdcp_int failures = 0;
    for (int k = 0; k < FALLBACK_SWEEPS; ++k) {
        mbdcp_fc_sweep(&c->W, c->n_c, c->q, c->mu, c->coulomb, c->blocks, r, &failures);
        ++*sweeps;
    }
    fc_matvec(&c->W, m, r, c->q, u);
    return evaluate(c, nw, r, u, 1);
}

/* The Newton direction d = -(J + lambda I)^-1 Phi (and W d). */
static MbdcpReturn direction(const FcCtx *c, FcNewton *nw, mbdcp_float lambda)
{
    const mbdcp_int m = 3 * c->n_c;
    assemble(c, nw, lambda);
    MbdcpReturn rc;
    for (mbdcp_int j = 0; j < m; ++j) nw->d[j] = -nw->phi[j];
    rc = mbdcp_sldl_factor(&nw->f, nw->Jb, PIVOT_TOL);
    if (rc != MBDCP_OK) return rc;
    rc = mbdcp_sldl_solve(&nw->f, nw->d);
    if (rc != MBDCP_OK) return rc;
    fc_matvec(&c->W, m, nw->d, NULL, nw->wd);
    return mbdcp_all_finite((size_t)m, nw->d) ? MBDCP_OK : MBDCP_ERR_NONFINITE;
}

/* One Newton step from r: directions for lambda, 10 lambda, ... until the line search accepts one
 * (*lambda then 10 times smaller after a full step); 0 when even the largest lambda fails. */
static mbdcp_float step(const FcCtx *c, FcNewton *nw, mbdcp_float *r, mbdcp_float *u, mbdcp_float *merit,
                        mbdcp_float *lambda, mbdcp_int *factorizations, MbdcpReturn *rc)
{
    for (;;) {
        const MbdcpReturn drc = direction(c, nw, *lambda);
        ++*factorizations;
        if (drc != MBDCP_OK && drc != MBDCP_ERR_NONFINITE) {
            *rc = drc;
            return 0.0;
        }
        const mbdcp_float t = drc == MBDCP_OK ? line_search(c, nw, r, u, *merit, merit) : 0.0;
        if (t == 1.0) *lambda = fmax(LAMBDA_MIN, 0.1 * *lambda);
        if (t > 0.0) return t;
        if (*lambda >= LAMBDA_MAX) return 0.0;
        *lambda = fmin(LAMBDA_MAX, fmax(10.0 * *lambda, LAMBDA_RETRY));
    }
}

/* ||rho o q||_2 (1 if zero): the size of the impulses that the velocities q ask for, Phi's unit. */
static mbdcp_float impulse_scale(const FcCtx *c, const FcNewton *nw)
{
    if (!c->q) return 1.0;
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < c->n_c; ++i) {
        const mbdcp_float *q = c->q + 3 * i, *rho = nw->rho + 2 * i;
        s += rho[0] * rho[0] * q[0] * q[0] + rho[1] * rho[1] * (q[1] * q[1] + q[2] * q[2]);
    }
    return s > 0.0 && isfinite(s) ? sqrt(s) : 1.0;
}

/* lambda, raised for the CCP to LAMBDA_RESIDUAL ||Phi|| / ||rho o q|| (merit = ||Phi||^2 / 2). */
static mbdcp_float floored(const FcCtx *c, mbdcp_float lambda, mbdcp_float merit, mbdcp_float impulses)
{
    return c->coulomb ? lambda : fmin(LAMBDA_MAX, fmax(lambda, LAMBDA_RESIDUAL * sqrt(2.0 * merit) / impulses));
}

typedef struct {
    mbdcp_float best_res;
    mbdcp_int best_it;
} Track;

FcRun mbdcp_fc_newton_run(const FcCtx *c, FcNewton *nw, FcNewtonRun *opt, mbdcp_float *r, mbdcp_float *u, MbdcpReturn *rc)
{
    const mbdcp_int m = 3 * c->n_c;
    *rc = MBDCP_OK;
    FcRun run = {MBDCP_MAX_ITERATIONS, 0, fc_residual_norm(c->n_c, c->mu, c->coulomb, r, u) / c->qnorm};
    if (run.residual <= c->tol && mbdcp_fc_accept(c, r, &run.residual)) {
        run.status = MBDCP_SOLVED;
        return run;
    }
    mbdcp_float merit = evaluate(c, nw, r, u, 1), lambda = LAMBDA_START;
    const mbdcp_float impulses = impulse_scale(c, nw);
    Track tr;
    tr.best_res = run.residual;
    tr.best_it = 0;
    memcpy(nw->best, r, (size_t)m * sizeof(mbdcp_float));
    while (run.iterations < opt->max_iter) {
        ++run.iterations;
        lambda = floored(c, lambda, merit, impulses);
        const mbdcp_float t = step(c, nw, r, u, &merit, &lambda, &opt->factorizations, rc);
        if (*rc != MBDCP_OK) return run;
        if (t == 0.0) merit = fallback(c, nw, r, u, &opt->sweeps);
        run.residual = fc_residual_norm(c->n_c, c->mu, c->coulomb, r, u) / c->qnorm;
        if (!isfinite(run.residual)) {
            run.status = MBDCP_NUMERICAL_ERROR;
            break;
        }
        if (run.residual < tr.best_res) {
            if (run.residual < 0.5 * tr.best_res) tr.best_it = run.iterations;
            tr.best_res = run.residual;
            memcpy(nw->best, r, (size_t)m * sizeof(mbdcp_float));
        }
        if (mbdcp_monitor_call(c->monitor, run.iterations, -1, -1, run.residual)) {
            run.status = MBDCP_INTERRUPTED;
            return run;
        }
        if (run.residual <= c->tol && mbdcp_fc_accept(c, r, &run.residual)) {
            run.status = MBDCP_SOLVED;
            return run;
        }
        if (mbdcp_fc_too_large(c, r)) {
            run.status = MBDCP_RAY_TERMINATION;
            return run;
        }
        if (run.iterations - tr.best_it >= opt->stall) break;
    }
    /* not solved: the best point seen (also after a non-finite one) */
    if (!(run.residual <= tr.best_res)) {
        memcpy(r, nw->best, (size_t)m * sizeof(mbdcp_float));
        fc_matvec(&c->W, m, r, c->q, u);
        run.residual = tr.best_res;
    }
    return run;
}
