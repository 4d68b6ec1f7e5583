/*
 * coulomb.h - the local friction-contact problem FC(W, q, mu) of FCLib and Siconos, in its
 * Coulomb form and in its cone-complementarity (CCP) relaxation, on the Delassus matrix W.
 *
 * n_c contacts, m = 3 n_c unknowns ordered per contact (normal, tangent 1, tangent 2) (2-D problems:
 * m = 2 n_c, see MbdcpFcProblem.spacedim);
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
 *   - MBDCP_FC_NEWTON (both): the semismooth Newton method on the Alart-Curnier function (Alart and
 *     Curnier 1991; for the CCP, Coulomb's law on ũ = (u_n - mu ||u_T||, u_T)), with an Armijo line
 *     search on ||Phi||^2 / 2, the regularisation J + lambda I (lambda adaptive; for the CCP at least
 *     0.1 ||Phi|| / ||rho o q||) and Gauss-Seidel sweeps where the search fails; the generalized
 *     Jacobian J = A + B W is factorised by sparse_ldl.h on W's 3 x 3 block pattern, ordered once
 *     (its fill: mbdcp_fc_factor_blocks).
 *   - MBDCP_FC_AUTO (both): Gauss-Seidel while its observed rate of convergence promises less work
 *     than Newton; then Newton from r = 0; then Gauss-Seidel and Newton from its points alternately
 *     (each Newton attempt within half the Gauss-Seidel work so far); once Gauss-Seidel has used
 *     max_iter sweeps, the fixed point (Coulomb) or APGD (CCP), at most 200 iterations, with APGD on S
 *     (given, or W when it is symmetric, else (W + W^T) / 2 formed here); before each Newton attempt,
 *     a certificate that no solution exists ends the solve; info->finished names the method that
 *     ended.
 *
 * Every method accepts a point only when the residual is at most tol also when recomputed in extended
 * precision (long double), so that a huge r whose residual vanishes in rounding is never SOLVED.
 * Iterates that grow beyond the size at which any residual can be certified
 * (||r||_inf (1 + max |W_ij|) > 1e14 max(||q||_inf, ...)) stop the solve. A solve that ends without
 * SOLVED looks for a certificate that no solution exists: d in K with -W^T d in K* and q^T d < 0 (no u
 * = W r + q, r in K, has u^T d >= 0, which every solution needs: u in K* for the CCP, and u_n >= 0 for
 * the Coulomb problem, where d must then have d_T = 0), checked with margins covering any r below that
 * size. A certificate, or diverging iterates, give MBDCP_RAY_TERMINATION (info->certificate says which).
 */
#ifndef MBDCP_COULOMB_H
#define MBDCP_COULOMB_H

#include "mbdcp_types.h"

/* The methods, one X(SUFFIX, "name") each, in the order of their values: the one list the enum
 * (MBDCP_FC_<SUFFIX> = 0, 1, ...), MBDCP_FC_METHOD_COUNT and mbdcp_fc_method_name() are made from
 * (the Python layer reads the names and the count). */
#define MBDCP_FC_METHOD_LIST(X)                                                                   \
    X(NSGS, "nsgs")               /* Coulomb: nonsmooth Gauss-Seidel with exact local solves */    \
    X(FIXED_POINT, "fixed_point") /* Coulomb: fixed point on s = mu ||u_T||, a CCP per iteration */ \
    X(PGS, "pgs")                 /* CCP: projected Gauss-Seidel with exact local solves */        \
    X(APGD, "apgd")               /* CCP: accelerated projected gradient (ccp.h) */                \
    X(NEWTON, "newton")           /* both: semismooth Newton on the Alart-Curnier function */      \
    X(AUTO, "auto")               /* both: Gauss-Seidel, Newton, then the fixed point or APGD */

#define MBDCP_FC_METHOD_ENUM_(suffix, name) MBDCP_FC_##suffix,
typedef enum { MBDCP_FC_METHOD_LIST(MBDCP_FC_METHOD_ENUM_) MBDCP_FC_METHOD_COUNT } MbdcpFcMethod;
#undef MBDCP_FC_METHOD_ENUM_

/* Why a solve ended without SOLVED, beyond its status (MbdcpFcInfo.certificate). */
typedef enum {
    MBDCP_FC_NO_CERTIFICATE = 0, /* none found */
    MBDCP_FC_CERT_DIRECTION = 1, /* d = Pi_K(r) / ||.|| of the last r certifies that no solution exists */
    MBDCP_FC_CERT_NORMAL = 2,    /* d = (max(-u_n, 0), 0, 0) per contact certifies it */
    MBDCP_FC_CERT_NORMAL_R = 3,  /* d = (max(r_n, 0), 0, 0) per contact certifies it */
    MBDCP_FC_CERT_CONTACT = 4,   /* d = e_n of one contact (MbdcpFcInfo.certificate_contact) certifies it */
    MBDCP_FC_DIVERGED = 5        /* no certificate, but the iterates grew beyond any certifiable size */
} MbdcpFcCertificate;

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
    mbdcp_int spacedim;                /* 3 (or 0) or 2: per contact (normal, tangent), m = 2 n_c, and r, u of
                                          length m; solved as the 3-D problem whose second tangent is
                                          decoupled, with |W_tt| (1 where it is 0) on its diagonal */
} MbdcpFcProblem;

/* The iteration limit of the outer methods (FIXED_POINT, NEWTON, and APGD on an asymmetric W, each
 * iteration a solve of its own) where the caller sets none: mbdcp_fc_default_settings' max_iter
 * counts sweeps. AUTO's last phase (the fixed point or APGD) stops there too. */
#define MBDCP_FC_OUTER_MAX_ITER 200

typedef struct {
    MbdcpFcMethod method;     /* coulomb: NSGS (default), FIXED_POINT, NEWTON or AUTO; ccp: PGS (default),
                                 APGD, NEWTON or AUTO */
    MbdcpFcMethod inner;      /* FIXED_POINT: PGS (default) or APGD */
    mbdcp_float tol;          /* on the residual, > 0 (default 1e-8) */
    mbdcp_int max_iter;       /* sweeps (NSGS, PGS), APGD iterations, fixed-point or Newton iterations, >= 1;
                                 AUTO: the limit of each of its phases */
    mbdcp_int inner_max_iter; /* FIXED_POINT, and APGD on an asymmetric W: iterations of each
                                 inner solve, >= 1 */
    int warm_start;           /* use r as the initial guess */
    mbdcp_int factor_blocks;  /* NEWTON, AUTO: a bound on the fill, which sizes the workspace: the value of
                                 mbdcp_fc_factor_blocks() for this W, or n_c (n_c - 1) / 2 (dense);
                                 -1 (default): unknown, then NEWTON is refused and AUTO skips it */
    MbdcpMonitor monitor;     /* after every sweep / iteration: (k, -1, -1, residual); inside the
                                 inner solves of a fixed point: (k, -2, -1, inner residual) */
} MbdcpFcSettings;

typedef struct {
    MbdcpStatus status;       /* SOLVED only when residual <= tol */
    mbdcp_int iterations;     /* sweeps, APGD iterations or fixed-point iterations */
    mbdcp_int inner_iterations; /* inner sweeps / APGD iterations of all inner solves */
    mbdcp_float residual;     /* the residual above of the r returned */
    mbdcp_int local_failures; /* local solves that ended in MBDCP_FC_BEST_EFFORT */
    MbdcpFcMethod finished;   /* the method that ended the solve (AUTO: one of its phases) */
    MbdcpFcCertificate certificate; /* see above; MBDCP_FC_NO_CERTIFICATE when SOLVED */
    mbdcp_int certificate_contact;  /* MBDCP_FC_CERT_CONTACT: the contact; else -1 */
} MbdcpFcInfo;

MbdcpReturn mbdcp_fc_default_settings(MbdcpFcSettings *s);
/* coulomb: 1 for mbdcp_coulomb_solve's methods, 0 for mbdcp_ccp_local_solve's. */
MbdcpReturn mbdcp_fc_check_settings(const MbdcpFcSettings *s, int coulomb, const char **message);
/* The name of a method ("nsgs", ...; MBDCP_FC_METHOD_LIST), or NULL for no method. */
const char *mbdcp_fc_method_name(MbdcpFcMethod method);
size_t mbdcp_fc_workspace_size(const MbdcpFcProblem *p, const MbdcpFcSettings *s);

/*
 * The fill of Newton's factorisation for W's block pattern: *blocks (output) is the number of 3 x 3
 * blocks of L for the approximate-minimum-degree ordering; *flops (output, may be NULL) the
 * multiply-adds of a factorisation with 1 x 1 blocks. Set settings.factor_blocks to it (or to any
 * larger bound) before the workspace query of NEWTON or AUTO. work: mbdcp_fc_factor_workspace_size(p)
 * bytes.
 */
size_t mbdcp_fc_factor_workspace_size(const MbdcpFcProblem *p);
MbdcpReturn mbdcp_fc_factor_blocks(const MbdcpFcProblem *p, mbdcp_int *blocks, mbdcp_float *flops, void *work,
                                   size_t work_bytes);

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
