/* Internal to coulomb.c, fc_newton.c, fc_accept.c and fc_local.c: the kernels and the solve context
 * they share. The acceptance test (fc_accept.c) and the local solves and sweep (fc_local.c) are
 * apart from the solvers that use them, so that the files call one another without a circle
 * (coulomb.c -> fc_newton.c -> fc_accept.c, fc_local.c). Not part of the public headers. */
#ifndef MBDCP_FC_INTERNAL_H
#define MBDCP_FC_INTERNAL_H

#include <math.h>

#include "mbdcp/cone.h"
#include "mbdcp/coulomb.h"
#include "mbdcp/sparse_ldl.h"

typedef struct {
    const mbdcp_int *ptr, *ind;
    const mbdcp_float *val;
} FcCsr;

/* What every loop of one solve shares: the problem as given, the acceptance test, the monitor. */
typedef struct {
    FcCsr W;
    mbdcp_int n_c;
    const mbdcp_float *q, *mu;
    int coulomb;               /* 1: the Coulomb problem, 0: the CCP */
    mbdcp_float tol;
    mbdcp_float qnorm;         /* ||q||_2, or 1 when q = 0 */
    mbdcp_float rmax;          /* ||r||_inf beyond which no residual can be certified (divergence) */
    const mbdcp_float *blocks; /* W's 3 x 3 diagonal blocks, row-major, 9 per contact */
    const MbdcpMonitor *monitor;
} FcCtx;

typedef struct {
    MbdcpStatus status;
    mbdcp_int iterations;
    mbdcp_float residual;
} FcRun;

/* ||x||_2. */
static inline mbdcp_float fc_norm2(mbdcp_int n, const mbdcp_float *x)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) s += x[i] * x[i];
    return sqrt(s);
}

static inline mbdcp_float fc_row_dot(const FcCsr *A, mbdcp_int row, const mbdcp_float *x)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int k = A->ptr[row]; k < A->ptr[row + 1]; ++k) s += A->val[k] * x[A->ind[k]];
    return s;
}

/* y = A x + c (c may be NULL). */
static inline void fc_matvec(const FcCsr *A, mbdcp_int m, const mbdcp_float *x, const mbdcp_float *c, mbdcp_float *y)
{
    for (mbdcp_int i = 0; i < m; ++i) y[i] = fc_row_dot(A, i, x) + (c ? c[i] : 0.0);
}

/* ||r - Pi_K(r - û)||_2 over all contacts, for u = W r + q given (û = u for the CCP). */
static inline mbdcp_float fc_residual_norm(mbdcp_int n_c, const mbdcp_float *mu, int coulomb, const mbdcp_float *r,
                                           const mbdcp_float *u)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < n_c; ++i) {
        const mbdcp_float *ri = r + 3 * i, *ui = u + 3 * i;
        const mbdcp_float shift = coulomb ? mu[i] * sqrt(ui[1] * ui[1] + ui[2] * ui[2]) : 0.0;
        mbdcp_float y[3] = {ri[0] - ui[0] - shift, ri[1] - ui[1], ri[2] - ui[2]};
        mbdcp_cone_project_inline(mu[i], y);
        for (int a = 0; a < 3; ++a) s += (ri[a] - y[a]) * (ri[a] - y[a]);
    }
    return sqrt(s);
}

/* fc_accept.c: the residual of r relative to c->qnorm in extended precision, and in *bound (may be
 * NULL) a bound on its rounding error. */
mbdcp_float mbdcp_fc_residual_ld(const FcCtx *c, const mbdcp_float *r, mbdcp_float *bound);

/* fc_accept.c: 1 when residual <= tol holds for r also in extended precision (then *residual is
 * that value); 0 otherwise (*residual unchanged when it was above tol). */
int mbdcp_fc_accept(const FcCtx *c, const mbdcp_float *r, mbdcp_float *residual);

/* fc_accept.c: 1 when ||r||_inf > c->rmax. */
int mbdcp_fc_too_large(const FcCtx *c, const mbdcp_float *r);

/* fc_local.c: one (nonsmooth) Gauss-Seidel sweep on u = A r + qv with exact local solves; returns its
 * cost in flop-equivalents (local solves weighed by their case). */
mbdcp_float mbdcp_fc_sweep(const FcCsr *A, mbdcp_int n_c, const mbdcp_float *qv, const mbdcp_float *mu, int coulomb,
                           const mbdcp_float *blocks, mbdcp_float *r, mbdcp_int *failures);

/* fc_newton.c: the semismooth Newton method (see there). */
typedef struct {
    mbdcp_int nb;                  /* blocks of W's 3 x 3 block pattern, diagonal included */
    mbdcp_int *bptr, *bind, *slot; /* the pattern in block CSR; slot[k]: the block of W's entry k */
    mbdcp_int *perm;               /* the factorisation's ordering */
    mbdcp_float *Wb, *Jb;          /* W's blocks and the Jacobian's, 9 numbers each */
    mbdcp_float *A, *B, *rho;      /* per contact: dPhi = A dr + B du (9 + 9), rho_n and rho_t */
    mbdcp_float *phi, *d, *wd, *rt, *ut, *best;
    MbdcpSldl f;
    mbdcp_float iteration_cost; /* flops of one Newton iteration, estimated */
    mbdcp_float sweep_cost;     /* flops of one Gauss-Seidel sweep, estimated */
} FcNewton;

/* Bytes of Newton's workspace for n_c contacts, nnz_w entries of W, a factor of factor_blocks blocks. */
size_t mbdcp_fc_newton_bytes(mbdcp_int n_c, mbdcp_int nnz_w, mbdcp_int factor_blocks);

/* W's block pattern, the ordering and the symbolic factor, in work. */
MbdcpReturn mbdcp_fc_newton_setup(const FcCtx *c, mbdcp_int factor_blocks, FcNewton *nw, void *work, size_t work_bytes);

/* The limits of a Newton run and what it did. */
typedef struct {
    mbdcp_int max_iter;       /* iterations */
    mbdcp_int stall;          /* iterations without halving the best residual before giving up */
    mbdcp_int sweeps;         /* output (added to): Gauss-Seidel sweeps where the line search failed */
    mbdcp_int factorizations; /* output (added to) */
} FcNewtonRun;

/* Newton from r (u = W r + q on entry; both updated; not solved: the best point seen). */
FcRun mbdcp_fc_newton_run(const FcCtx *c, FcNewton *nw, FcNewtonRun *opt, mbdcp_float *r, mbdcp_float *u, MbdcpReturn *rc);

#endif /* MBDCP_FC_INTERNAL_H */
