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
 * Residual (zero exactly at a solution): r = ||nu - Pi(nu - g / L)||_inf * L / max(||p||_inf, 1e-300)
 * with g = N nu + p and L an estimate of the largest eigenvalue of N (12 Lanczos steps).
 */
#ifndef MBDCP_CCP_H
#define MBDCP_CCP_H

#include "cone.h"
#include "mbdcp_types.h"

typedef enum { MBDCP_CCP_APGD = 0, MBDCP_CCP_PJACOBI = 1, MBDCP_CCP_PGS = 2 } MbdcpCcpMethod;

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
} MbdcpCcpProblem;

typedef struct {
    MbdcpCcpMethod method;
    mbdcp_float tol;                   /* on the relative residual, > 0 */
    mbdcp_int max_iter;                /* >= 1 */
    mbdcp_float omega;                 /* relaxation of Jacobi / Gauss-Seidel in (0, 2); 0: default
                                          (0.3 for Jacobi, 1.0 for Gauss-Seidel) */
    int warm_start;                    /* use nu as the initial guess */
    MbdcpCcpScaling scaling;           /* APGD only */
    MbdcpMonitor monitor;              /* called after every iteration with the residual */
} MbdcpCcpSettings;

typedef struct {
    MbdcpStatus status;
    mbdcp_int iterations;
    mbdcp_float residual;
    mbdcp_float lipschitz;             /* the estimate L used in the residual */
    int polished;                      /* APGD: 1 if the answer came from the local polish of a few
                                          contacts that failed the componentwise test */
} MbdcpCcpInfo;

MbdcpReturn mbdcp_ccp_default_settings(MbdcpCcpSettings *s);
MbdcpReturn mbdcp_ccp_check_settings(const MbdcpCcpSettings *s, const char **message);
size_t mbdcp_ccp_workspace_size(const MbdcpCcpProblem *p);


/*
 * nu (n_p): in: the warm start when settings->warm_start, out: the solution.
 * u (n_v): out: Q nu = M^-1 P nu (v_next = v + M^-1 p_ext + u).
 */
MbdcpReturn mbdcp_ccp_solve(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, mbdcp_float *nu,
                            mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes);

#endif /* MBDCP_CCP_H */
