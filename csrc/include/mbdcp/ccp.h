/*
 * ccp.h - cone complementarity problem (Anitescu & Tasora 2010; Tasora & Anitescu 2011;
 * Negrut, Serban & Tasora 2018, eqs. 10-11)
 *
 *     min  1/2 nu^T N nu + p^T nu   s.t.  gamma_i in K_i = {g_n >= 0, ||(g_u, g_w)|| <= mu_i g_n},
 *
 * nu = (gamma_1, ..., gamma_nc, lambda_B) with 3 entries per contact and free joint
 * multipliers, N = P^T M^-1 P. Matrix-free: the caller passes P (n_v x n_p) and
 * Q = M^-1 P in compressed-column form (CSC: colptr[n_p + 1], rowind, values); then
 * N nu = P^T (Q nu) costs O(nnz). Optimality: gamma_i in K_i, d_i in K_i* (d_n >= mu ||d_t||),
 * gamma_i . d_i = 0 for d = N nu + p, and d_j = 0 on joints.
 *
 * Solvers: APGD (Nesterov accelerated projected gradient with adaptive step and restart,
 * Mazhar et al. 2015), projected Jacobi (with relaxation omega) and projected Gauss-Seidel
 * (contact by contact), both scaled per contact by eta_i = 3 / trace(N_ii) (a scalar, so
 * the projection stays the Euclidean one onto K_i).
 *
 * MBDCP_CCP_IPM: a primal-dual interior-point method on the exact CCP (Nesterov-Todd scaling of
 * each second-order cone, Nesterov and Todd 1997, in the closed form of Vandenberghe 2010;
 * Mehrotra's predictor-corrector, Mehrotra 1992; an interior-point method for this CCP: Mangoni,
 * Tasora and Garziera 2018). Each Newton system is solved in the scaled variables, (F^T N F + I) y
 * = r with H = F^-T F^-1 the cones' barrier Hessian, through the quasi-definite augmented system
 * [[I, (P F)^T], [P F, -M]] (Vanderbei 1995) with the sparse LDL^T of sparse_ldl.h on 3 x 3 blocks:
 * the contacts and joints eliminated first, then the velocities (each in the approximate minimum
 * degree order); N is never formed; iterative refinement on the scaled system. Without a warm start
 * it starts from x = -(N + L E)^-1 p (E: the contacts' entries), where s = N x + p = -L x on the
 * contacts (one more factorisation), both then shifted into the cones' interiors. As the iterates
 * near the cones' boundaries the scaled system's condition grows like 1 / (duality gap) and its
 * solves lose precision; when its steps stall, the method hands its best point to APGD, which
 * finishes (info->finished says which method did). Needs M (problem.M_*) and
 * settings.factor_blocks (from mbdcp_ccp_factor_blocks). The interior-point phase runs at most 200
 * iterations.
 * MBDCP_CCP_AUTO: APGD for as many iterations as cost about 25 interior-point iterations (estimated
 * from the factor's flops and the products with N; at least 50, at most a quarter of max_iter), then
 * the interior-point method from APGD's best point (and APGD again if needed, as above); without
 * factor_blocks, APGD alone. Its plan (MbdcpCcpPlan): a caller solving a sequence of like problems
 * (the steps of a simulation) keeps info->plan and passes it back in settings->plan; while the
 * contacts number within a tenth of those of the problem it was analysed for, the plan serves: AUTO
 * runs APGD for the plan's budget without an analysis of its own (mbdcp_ccp_needs_factor says 0),
 * and only if APGD has not converged (nor been interrupted) with iterations left does it need the
 * factor: then, without factor_blocks, it returns with info->handover set, and the caller analyses
 * the problem and calls mbdcp_ccp_resume, which goes on with the interior-point method from APGD's
 * point (with factor_blocks given, mbdcp_ccp_solve goes on itself). An analysis of a problem the
 * plan does not serve (the sizes moved) makes a new plan.
 *
 * No solution: a direction d with d_i in K_i, N d = 0 (P d = 0) and p^T d < 0 is an impulse pattern
 * in equilibrium along which the objective falls without bound; it proves that no solution exists
 * (every solution nu has (N nu + p)^T d >= 0). APGD (and AUTO in its APGD phase) looks for one after
 * 128 iterations and at every doubling of the count: its iterates then grow along such a direction
 * (the minimal displacement vector of the iteration), whose support, a few jammed contacts, is
 * solved for P d = 0 exactly (each contact held at zero, on a ray of its cone's boundary or inside
 * it; Gauss-Newton); d is accepted only with every d_i in K_i, p^T d < 0 beyond its rounding and
 * each row of P d within 64 eps of sum_j |P_rj d_j| (N d = 0 to rounding). The interior-point method (and AUTO in its phase)
 * tests its growing iterates and last direction: d is accepted when -N d lies within delta
 * (2-norm) of K* x {0} (the dual cones, {0} on joints; rounding added) and -p^T d >= R delta, so
 * that every solution has ||nu||_2 >= R; R = tol / (4 eps) times the problem's natural size
 * (max(||nu_start||_inf, ||p||_inf / L)), beyond which the residual could not be verified to tol
 * in double precision. Status MBDCP_RAY_TERMINATION, info->certificate = MBDCP_CCP_CERT_DIRECTION
 * and d (scaled to ||d||_inf = 1) in nu; iterates beyond 1e14 times the natural size without a
 * certificate: MBDCP_RAY_TERMINATION with MBDCP_CCP_DIVERGED.
 *
 * Residual (zero exactly at a solution): r = ||nu - Pi(nu - g / L)||_inf * L / max(||p||_inf, 1e-300)
 * with g = N nu + p and L an estimate of the largest eigenvalue of N (12 Lanczos steps).
 */
#ifndef MBDCP_CCP_H
#define MBDCP_CCP_H

#include "cone.h"
#include "mbdcp_types.h"

/* The methods, one X(SUFFIX, "name") each, in the order of their values: the one list the enum
 * (MBDCP_CCP_<SUFFIX> = 0, 1, ...), MBDCP_CCP_METHOD_COUNT, mbdcp_ccp_method_name() and the
 * settings check are made from (the Python layer reads the names and the count). */
#define MBDCP_CCP_METHOD_LIST(X) \
    X(APGD, "apgd")              \
    X(PJACOBI, "pjacobi")        \
    X(PGS, "pgs")                \
    X(IPM, "ipm")   /* primal-dual interior point */ \
    X(AUTO, "auto") /* APGD, then the interior point method if APGD has not converged within a budget */

#define MBDCP_CCP_METHOD_ENUM_(suffix, name) MBDCP_CCP_##suffix,
typedef enum { MBDCP_CCP_METHOD_LIST(MBDCP_CCP_METHOD_ENUM_) MBDCP_CCP_METHOD_COUNT } MbdcpCcpMethod;
#undef MBDCP_CCP_METHOD_ENUM_

/* Why a solve ended with MBDCP_RAY_TERMINATION (MbdcpCcpInfo.certificate). */
typedef enum {
    MBDCP_CCP_NO_CERTIFICATE = 0,
    MBDCP_CCP_CERT_DIRECTION = 1, /* nu holds d in K with N d = 0, p^T d < 0 (see above) */
    MBDCP_CCP_DIVERGED = 2        /* no certificate, but the iterates grew beyond any certifiable size */
} MbdcpCcpCertificate;

/* APGD's diagonal scaling: per axis (a contact's normal and tangential entries apart, the default)
 * or one scalar per contact (3 / trace N_ii). */
typedef enum { MBDCP_CCP_SCALE_AXES = 0, MBDCP_CCP_SCALE_CONTACT = 1 } MbdcpCcpScaling;

typedef struct {
    mbdcp_int n_v, n_c, n_b;           /* n_p = 3 n_c + n_b */
    const mbdcp_int *P_colptr, *P_rowind;
    const mbdcp_float *P_val;
    const mbdcp_int *Q_colptr, *Q_rowind;
    const mbdcp_float *Q_val;
    const mbdcp_float *mu;             /* n_c, >= 0 */
    const mbdcp_float *p;              /* n_p */
    const mbdcp_int *M_colptr, *M_rowind; /* IPM, AUTO: M (n_v x n_v, symmetric positive definite) in */
    const mbdcp_float *M_val;          /* CSC, both triangles; NULL otherwise */
} MbdcpCcpProblem;

/* AUTO's plan, kept from one problem to the next like it (see MBDCP_CCP_AUTO above). */
typedef struct {
    mbdcp_int budget;                  /* APGD's iterations before the interior-point method; <= 0: no plan */
    mbdcp_int n_c;                     /* the contacts of the problem whose analysis gave it */
} MbdcpCcpPlan;

typedef struct {
    MbdcpCcpMethod method;
    mbdcp_float tol;                   /* on the relative residual, > 0 */
    mbdcp_int max_iter;                /* >= 1 */
    mbdcp_float omega;                 /* relaxation of Jacobi / Gauss-Seidel in (0, 2); 0: default
                                          (0.3 for Jacobi, 1.0 for Gauss-Seidel) */
    int warm_start;                    /* use nu as the initial guess */
    MbdcpCcpScaling scaling;           /* APGD only */
    MbdcpMonitor monitor;              /* called after every iteration with the residual */
    mbdcp_int factor_blocks;           /* IPM, AUTO: mbdcp_ccp_factor_blocks() for this problem (or any
                                          larger bound), which sizes the workspace; -1 (default):
                                          unknown, then IPM is refused and AUTO runs APGD alone */
    mbdcp_float factor_flops;          /* AUTO: the flops of mbdcp_ccp_factor_blocks (<= 0: estimated
                                          from factor_blocks), which set APGD's budget */
    MbdcpCcpPlan plan;                 /* AUTO: the info->plan of an earlier like problem; {0, 0}
                                          (default): none */
} MbdcpCcpSettings;

typedef struct {
    MbdcpStatus status;
    mbdcp_int iterations;
    mbdcp_float residual;
    mbdcp_float lipschitz;             /* the estimate L used in the residual */
    int polished;                      /* APGD: 1 if the answer came from the local polish of a few
                                          contacts that failed the componentwise test */
    MbdcpCcpCertificate certificate;   /* with MBDCP_RAY_TERMINATION; else MBDCP_CCP_NO_CERTIFICATE */
    MbdcpCcpMethod finished;           /* the method that ended the solve (AUTO: APGD or IPM) */
    MbdcpCcpPlan plan;                 /* the plan to keep for the next like problem: AUTO's own when
                                          it analysed a problem that settings->plan does not serve,
                                          else settings->plan */
    int handover;                      /* AUTO with a plan that serves and no factor_blocks: 1 when
                                          APGD ended its budget short of an answer, with iterations
                                          left (status and nu: APGD's); analyse, then mbdcp_ccp_resume */
} MbdcpCcpInfo;

MbdcpReturn mbdcp_ccp_default_settings(MbdcpCcpSettings *s);
MbdcpReturn mbdcp_ccp_check_settings(const MbdcpCcpSettings *s, const char **message);
/* The name of a method ("apgd", ...; MBDCP_CCP_METHOD_LIST), or NULL for no method. */
const char *mbdcp_ccp_method_name(MbdcpCcpMethod method);
size_t mbdcp_ccp_workspace_size(const MbdcpCcpProblem *p);

/* The workspace of mbdcp_ccp_solve with these settings: mbdcp_ccp_workspace_size(p) for APGD,
 * PJACOBI and PGS, more for IPM and AUTO (with settings->factor_blocks >= 0). */
size_t mbdcp_ccp_solve_workspace_size(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s);

/*
 * The fill of the interior-point method's factorisation: *blocks (output) the 3 x 3 blocks of L for
 * the approximate-minimum-degree ordering of the augmented system, *flops (output, may be NULL) the
 * multiply-adds of one factorisation. Needs M (problem.M_*). work: mbdcp_ccp_factor_workspace_size(p)
 * bytes.
 */
size_t mbdcp_ccp_factor_workspace_size(const MbdcpCcpProblem *p);
MbdcpReturn mbdcp_ccp_factor_blocks(const MbdcpCcpProblem *p, mbdcp_int *blocks, mbdcp_float *flops, void *work,
                                    size_t work_bytes);

/*
 * MBDCP_CCP_AUTO's budget: the APGD iterations it runs before the interior-point method takes over,
 * from settings->factor_blocks and factor_flops (-1 without factor_blocks, or on a NULL argument);
 * the budget of the plan AUTO makes (info->plan).
 */
mbdcp_int mbdcp_ccp_auto_budget(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s);

/*
 * *needs (output): 1 when mbdcp_ccp_solve with these settings needs settings->factor_blocks before
 * it starts (IPM; AUTO unless settings->plan serves p), else 0. MBDCP_ERR_NULL on a NULL argument.
 */
MbdcpReturn mbdcp_ccp_needs_factor(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, int *needs);


/*
 * nu (n_p): in: the warm start when settings->warm_start, out: the solution (with
 * MBDCP_RAY_TERMINATION and MBDCP_CCP_CERT_DIRECTION: the certificate d).
 * u (n_v): out: Q nu = M^-1 P nu (v_next = v + M^-1 p_ext + u).
 */
MbdcpReturn mbdcp_ccp_solve(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, mbdcp_float *nu,
                            mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes);

/*
 * AUTO after a handover (first: the info of the mbdcp_ccp_solve that set first->handover, settings
 * as then with factor_blocks now set, nu and u as it left them): the interior-point method from nu
 * for the iterations left, then APGD if needed, as AUTO goes on. info counts the iterations of both
 * calls (the monitor's too) and keeps first->plan. The workspace: mbdcp_ccp_solve_workspace_size(p, s).
 */
MbdcpReturn mbdcp_ccp_resume(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, const MbdcpCcpInfo *first,
                             mbdcp_float *nu, mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes);

#endif /* MBDCP_CCP_H */
