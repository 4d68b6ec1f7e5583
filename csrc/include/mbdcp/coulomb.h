/*
 * coulomb.h - the local friction-contact problem FC(W, q, mu) of FCLib and Siconos, in its
 * Coulomb form and in its cone-complementarity (CCP) relaxation, on the Delassus matrix W.
 *
 * n_c contacts, m = 3 n_c unknowns ordered per contact (normal, tangent 1, tangent 2);
 * K_i = {r_n >= 0, ||r_T|| <= mu_i r_n}, its dual K_i* = {y_n >= mu_i ||y_T||}, u = W r + q.
 *
 *     CCP:      K_i* ∋ u_i ⊥ r_i ∈ K_i
 *     Coulomb:  K_i* ∋ û_i ⊥ r_i ∈ K_i,  û_i = u_i + mu_i ||u_T,i|| e_n   (de Saxcé's shift)
 *
 * The Coulomb conditions hold exactly when, per contact, r_i = 0 and u_n >= 0 (take-off), or
 * u_i = 0 and r_i ∈ K_i (stick), or u_n = 0, ||r_T|| = mu r_n > 0 and r_T = -mu r_n u_T / ||u_T||
 * (slide). The CCP enforces u_n >= mu ||u_T|| instead of u_n >= 0: a sliding contact separates
 * at normal speed mu ||u_T|| (the "bowling ball" of Negrut, Serban & Tasora 2018, after eq. 6).
 *
 * Residual (FCLib; Acary, Brémond, Huber 2018), zero exactly at a solution:
 *     ||r - Pi_K(r - û)||_2 / ||q||_2        (û = u for the CCP; ||q|| = 0 counts as 1).
 *
 * W is given in compressed-row form (CSR: rowptr[m + 1], colind, values); W need not be
 * symmetric. Solvers:
 *   - MBDCP_FC_NSGS (Coulomb) and MBDCP_FC_PGS (CCP): (nonsmooth) Gauss-Seidel, contact by
 *     contact, each 3 x 3 local problem solved exactly (mbdcp_fc_local_solve);
 *   - MBDCP_FC_APGD (CCP): mbdcp_ccp_solve (ccp.h) with P = I, Q = S, so N = S, for a symmetric
 *     S (the problem's S, or W itself);
 *   - MBDCP_FC_FIXED_POINT (Coulomb): r_{k+1} solves the CCP with S and
 *     q_k = q + (W - S) r_k + mu ||u_T(r_k)|| e_n, warm-started from r_k (Cadoux 2009; Acary,
 *     Cadoux, Lemaréchal, Malick 2011), with the inner solver `inner` (PGS on S = W, or APGD).
 *     A fixed point is a Coulomb solution. Once a step does not lower the residual, steps are
 *     damped (r_k + omega (r_{k+1} - r_k), omega halved per such step, at least 1/8).
 *     APGD on an asymmetric W runs the same iteration
 *     without the mu ||u_T|| term, so every method solves the problem with the W given.
 */
#ifndef MBDCP_COULOMB_H
#define MBDCP_COULOMB_H

#include "mbdcp_types.h"

typedef enum {
    MBDCP_FC_NSGS = 0,       /* Coulomb: nonsmooth Gauss-Seidel with exact local solves */
    MBDCP_FC_FIXED_POINT = 1, /* Coulomb: fixed point on s = mu ||u_T||, a CCP per iteration */
    MBDCP_FC_PGS = 2,        /* CCP: projected Gauss-Seidel with exact local solves */
    MBDCP_FC_APGD = 3        /* CCP: accelerated projected gradient (ccp.h) */
} MbdcpFcMethod;

/* Which case of the local problem a contact's solution is in. */
typedef enum {
    MBDCP_FC_TAKEOFF = 0,    /* r = 0 */
    MBDCP_FC_STICK = 1,      /* u = 0, r in K */
    MBDCP_FC_SLIDE = 2,      /* r on the boundary of K, u_T != 0 */
    MBDCP_FC_BEST_EFFORT = 3 /* no case verified (singular or indefinite block): the candidate
                                with the smallest local residual */
} MbdcpFcCase;

typedef struct {
    mbdcp_int n_c;                     /* m = 3 n_c */
    const mbdcp_int *W_rowptr, *W_colind; /* W (m x m) in CSR */
    const mbdcp_float *W_val;
    const mbdcp_int *S_rowptr, *S_colind; /* optional symmetric S (CSR) for APGD; NULL: S = W */
    const mbdcp_float *S_val;
    const mbdcp_float *q;              /* m */
    const mbdcp_float *mu;             /* n_c, >= 0 */
} MbdcpFcProblem;

typedef struct {
    MbdcpFcMethod method;     /* coulomb: NSGS (default) or FIXED_POINT; ccp: PGS (default) or APGD */
    MbdcpFcMethod inner;      /* FIXED_POINT: PGS (default) or APGD */
    mbdcp_float tol;          /* on the residual, > 0 (default 1e-8) */
    mbdcp_int max_iter;       /* sweeps (NSGS, PGS), APGD iterations, or fixed-point iterations, >= 1 */
    mbdcp_int inner_max_iter; /* FIXED_POINT, and APGD on an asymmetric W: iterations of each
                                 inner solve, >= 1 */
    int warm_start;           /* use r as the initial guess */
    MbdcpMonitor monitor;     /* after every sweep / iteration: (k, -1, -1, residual); inside the
                                 inner solves of a fixed point: (k, -2, -1, inner residual) */
} MbdcpFcSettings;

typedef struct {
    MbdcpStatus status;       /* SOLVED only when residual <= tol */
    mbdcp_int iterations;     /* sweeps, APGD iterations or fixed-point iterations */
    mbdcp_int inner_iterations; /* inner sweeps / APGD iterations of all inner solves */
    mbdcp_float residual;     /* the residual above of the r returned */
    mbdcp_int local_failures; /* local solves that ended in MBDCP_FC_BEST_EFFORT */
} MbdcpFcInfo;

MbdcpReturn mbdcp_fc_default_settings(MbdcpFcSettings *s);
/* coulomb: 1 for mbdcp_coulomb_solve's methods, 0 for mbdcp_ccp_local_solve's. */
MbdcpReturn mbdcp_fc_check_settings(const MbdcpFcSettings *s, int coulomb, const char **message);
size_t mbdcp_fc_workspace_size(const MbdcpFcProblem *p, const MbdcpFcSettings *s);

/*
 * The residual above of r (m) for the Coulomb problem (coulomb = 1) or the CCP (0); u (m, output,
 * may be NULL) receives W r + q.
 */
MbdcpReturn mbdcp_fc_residual(const MbdcpFcProblem *p, int coulomb, const mbdcp_float *r, mbdcp_float *u,
                              mbdcp_float *residual);

/*
 * One contact's problem, u = A r + b with A (3 x 3, row-major, any), solved exactly: take-off if
 * b allows it, else stick (r = -A^-1 b) if that lies in K, else slide, where the sliding direction
 * (cos t, sin t) is a root of a trigonometric polynomial of degree 2 in t (all roots are found by
 * bracketing with a derivative bound) and (r_n, ||u_T||) follow linearly. r (3): in: the previous
 * value (among several solutions the closest is kept), out: the solution. which: output, may be NULL.
 */
MbdcpReturn mbdcp_fc_local_solve(const mbdcp_float *A, const mbdcp_float *b, mbdcp_float mu, int coulomb,
                                 mbdcp_float *r, MbdcpFcCase *which);

/*
 * r (m): in: the warm start when settings->warm_start, out: the solution.
 * u (m): out: W r + q.
 */
MbdcpReturn mbdcp_coulomb_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r,
                                mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes);
MbdcpReturn mbdcp_ccp_local_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r,
                                  mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes);

#endif /* MBDCP_COULOMB_H */
