/* ccp_ops.h - internal to ccp.c, ccp_cert.c, ccp_ipm.c and ccp_ops.c: what the solvers share
 * (products with N, the residuals, the acceptance test), all in ccp_ops.c, so that the files call
 * one another without a circle (ccp.c -> ccp_ipm.c -> ccp_cert.c -> ccp_ops.c). Not part of the
 * public headers. */
#ifndef MBDCP_CCP_OPS_H
#define MBDCP_CCP_OPS_H

#include "mbdcp/ccp.h"

/* ---- ccp_ops.c: products with N = P^T Q and residuals (the comments at their definitions) ---- */

/* Entries of nu: three per contact, one per joint row. */
static inline mbdcp_int ccp_n_p(const MbdcpCcpProblem *p)
{
    return 3 * p->n_c + p->n_b;
}

/* Bits of Ccp.blocked: each contact's three columns of P (of Q) share their rows, as
 * cone_jacobian and a block-diagonal M^-1 build them. Then a contact's three dot products with u
 * (its three scatters into u) take one sweep over its rows. */
enum { BLOCKED_P = 1, BLOCKED_Q = 2 };

/* Lanczos steps for the Lipschitz constant of N, the residual's scale; mbdcp_ccp_lipschitz() takes
 * at most this many. */
#define LANCZOS_STEPS 12

mbdcp_float mbdcp_ccp_product_flops(const MbdcpCcpProblem *p);
void mbdcp_ccp_project_all(const MbdcpCcpProblem *p, mbdcp_float *nu);
mbdcp_float mbdcp_ccp_col_dot_P(const MbdcpCcpProblem *p, mbdcp_int j, const mbdcp_float *u);
int mbdcp_ccp_columns_blocked(mbdcp_int n_c, const mbdcp_int *colptr, const mbdcp_int *rowind);
void mbdcp_ccp_apply_SNS(const MbdcpCcpProblem *p, int blocked, const mbdcp_float *S, const mbdcp_float *x,
                         mbdcp_float *u, mbdcp_float *y);
mbdcp_float mbdcp_ccp_dot(mbdcp_int n, const mbdcp_float *a, const mbdcp_float *b);
mbdcp_float mbdcp_ccp_lipschitz(const MbdcpCcpProblem *p, int blocked, const mbdcp_float *S, int steps,
                                mbdcp_float *x, mbdcp_float *y, mbdcp_float *u, mbdcp_float *v);
mbdcp_float mbdcp_ccp_block_residual(mbdcp_int w, mbdcp_float mu, const mbdcp_float *nu, const mbdcp_float *g,
                                     mbdcp_float inv_L);
mbdcp_float mbdcp_ccp_residual(const MbdcpCcpProblem *p, const mbdcp_float *nu, const mbdcp_float *g,
                               mbdcp_float L, mbdcp_float pnorm);
mbdcp_float mbdcp_ccp_magnitudes(const MbdcpCcpProblem *p, const mbdcp_float *nu, mbdcp_float *au, mbdcp_float *s);
mbdcp_float mbdcp_ccp_block_ratio(const MbdcpCcpProblem *p, mbdcp_int b, const mbdcp_float *nu, const mbdcp_float *g,
                                  mbdcp_float L, const mbdcp_float *s, mbdcp_float floor_);
mbdcp_float mbdcp_ccp_componentwise(const MbdcpCcpProblem *p, const mbdcp_float *nu, const mbdcp_float *g,
                                    mbdcp_float L, mbdcp_float *au, mbdcp_float *s);
mbdcp_float mbdcp_ccp_answer_residual_of(const MbdcpCcpProblem *p, const mbdcp_float *nu, const mbdcp_float *g,
                                         mbdcp_float L, mbdcp_float pnorm, mbdcp_float *au, mbdcp_float *s);
void mbdcp_ccp_gradient(const MbdcpCcpProblem *p, const mbdcp_float *Nx, mbdcp_float *g);
void mbdcp_ccp_scaling(const MbdcpCcpProblem *p, mbdcp_float *eta, mbdcp_float *Nii, mbdcp_float *u);

/* ---- ccp_ops.c: the acceptance test, as ccp.c hands it to the interior-point method -------- */

/* The acceptance test of one solve: the problem, the settings, the Lipschitz estimate L and
 * ||p||_inf of the residual, and scratch (au: n_v, sc: n_p) for the componentwise residual. */
typedef struct {
    const MbdcpCcpProblem *p;
    const MbdcpCcpSettings *s;
    int blocked;               /* BLOCKED_P | BLOCKED_Q bits */
    mbdcp_float L, pnorm;
    mbdcp_float *au, *sc;
} CcpJudge;

/* y = N x, u = Q x (u: n_v, y: n_p). */
void mbdcp_ccp_apply_N(const CcpJudge *J, const mbdcp_float *x, mbdcp_float *u, mbdcp_float *y);

/* The residual an answer nu with gradient g = N nu + p is judged by (ccp.h; NAN if not finite), and
 * the normwise one alone. */
mbdcp_float mbdcp_ccp_answer_residual(const CcpJudge *J, const mbdcp_float *nu, const mbdcp_float *g);
mbdcp_float mbdcp_ccp_normwise_residual(const CcpJudge *J, const mbdcp_float *nu, const mbdcp_float *g);

/* ---- ccp_cert.c: certificates from a growing direction ------------------------------------ */

/* Bytes of mbdcp_ccp_certify's workspace. */
size_t mbdcp_ccp_cert_bytes(const MbdcpCcpProblem *p);

/* 1 when d (n_p) proves that no solution exists: each contact's d_i in K_i, p^T d < 0 beyond its
 * rounding, and every row of P d within 64 eps of its magnitude sum_j |P_rj d_j| (so N d = 0 to
 * rounding); joints' entries of d are free. Pd, Pabs (n_v each): scratch. */
int mbdcp_ccp_is_certificate(const MbdcpCcpProblem *p, const mbdcp_float *d, mbdcp_float *Pd, mbdcp_float *Pabs);

/* A certificate d (n_p, out) near the direction dir (n_p; projected on K in place), along which a
 * first-order method's iterates grow; 1 when one passes mbdcp_ccp_is_certificate. work:
 * mbdcp_ccp_cert_bytes(p) bytes, 8-aligned. */
int mbdcp_ccp_certify(const MbdcpCcpProblem *p, mbdcp_float *dir, mbdcp_float *d, void *work);

/* ---- ccp_ipm.c: the interior-point method --------------------------------------------------- */

/* Bytes of the interior-point method's workspace with a factor of factor_blocks blocks. */
size_t mbdcp_ccp_ipm_bytes(const MbdcpCcpProblem *p, mbdcp_int factor_blocks);

/* What an interior-point run did. */
typedef struct {
    MbdcpStatus status;        /* SOLVED, RAY_TERMINATION, MAX_ITERATIONS, NUMERICAL_ERROR, INTERRUPTED */
    mbdcp_int iterations;
    MbdcpCcpCertificate certificate;
} CcpIpmRun;

/*
 * The interior-point method from nu (warm: nu is a start, else a cold start), at most max_iter
 * iterations, calling the monitor with (first_iteration + k, -1, -1, normwise residual). Out: nu
 * (the answer, or the certificate), u = Q nu, g = N nu + p.
 */
MbdcpReturn mbdcp_ccp_ipm_run(const CcpJudge *J, mbdcp_int max_iter, mbdcp_int first_iteration, int warm,
                              mbdcp_float *nu, mbdcp_float *u, mbdcp_float *g, CcpIpmRun *run, void *work,
                              size_t work_bytes);

#endif /* MBDCP_CCP_OPS_H */
