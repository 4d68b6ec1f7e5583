/* Internal to ccp.c and ccp_ipm.c: what the interior-point method shares with the first-order
 * solvers (products with N, the acceptance test). Not part of the public headers. */
#ifndef MBDCP_CCP_INTERNAL_H
#define MBDCP_CCP_INTERNAL_H

#include "mbdcp/ccp.h"

/* The acceptance test of one solve: the problem, the settings, the Lipschitz estimate L and
 * ||p||_inf of the residual, and scratch (au: n_v, sc: n_p) for the componentwise residual. */
typedef struct {
    const MbdcpCcpProblem *p;
    const MbdcpCcpSettings *s;
    int blocked;               /* ccp.c's BLOCKED_P | BLOCKED_Q bits */
    mbdcp_float L, pnorm;
    mbdcp_float *au, *sc;
} CcpJudge;

/* y = N x, u = Q x (u: n_v, y: n_p). */
void mbdcp_ccp_apply_N(const CcpJudge *J, const mbdcp_float *x, mbdcp_float *u, mbdcp_float *y);

/* The residual an answer nu with gradient g = N nu + p is judged by (ccp.h; NAN if not finite), and
 * the normwise one alone. */
mbdcp_float mbdcp_ccp_answer_residual(const CcpJudge *J, const mbdcp_float *nu, const mbdcp_float *g);
mbdcp_float mbdcp_ccp_normwise_residual(const CcpJudge *J, const mbdcp_float *nu, const mbdcp_float *g);

/* ccp_ipm.c: bytes of the interior-point method's workspace with a factor of factor_blocks blocks. */
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

#endif /* MBDCP_CCP_INTERNAL_H */
