/*
 * step.h - one time step of the Stewart-Trinkle / Anitescu-Potra LCP (Trinkle 2003, eqs. 25-47)
 *
 *     M v_next - Wb p_b - Wn p_n - D beta - Dj beta_j = M v + p_ext
 *     Wb^T v_next + theta/h + dtheta = 0
 *     0 <= p_n     _|_  Wn^T v_next + psi_n/h + dpsi_n  >= 0
 *     0 <= beta    _|_  D^T v_next + dpsi_f + E sigma    >= 0
 *     0 <= sigma   _|_  U p_n - E^T beta                 >= 0
 *     0 <= beta_j  _|_  Dj^T v_next + Ej sigma_j         >= 0
 *     0 <= sigma_j _|_  beta_max - Ej^T beta_j           >= 0
 *
 * reduced (assemble.h) to the standard LCP(F, f) in z = (p_n, beta, beta_j,
 * sigma, sigma_j), of size N = n_c + m + m_j + n_c + n_j:
 *
 *     F = [ G (n_w x n_w)                 | E-blocks ]    f = [ g_n + psi_n/h + dpsi_n ]
 *         [                               |          ]        [ g_d + dpsi_f           ]
 *         [ U  -E^T  0                    |  0   0   ]        [ g_j                    ]
 *         [ 0   0   -Ej^T                 |  0   0   ]        [ 0 ; beta_max           ]
 *
 * (E sits in rows beta, columns sigma; Ej in rows beta_j, columns sigma_j),
 * then solved by Lemke's method (lemke.h).
 */
#ifndef MBDCP_STEP_H
#define MBDCP_STEP_H

#include "assemble.h"
#include "lemke.h"

/* Caller-provided outputs. F, f may be NULL (not wanted). */
typedef struct {
    mbdcp_float *v_next;  /* n_v */
    mbdcp_float *p_b;     /* n_b (may be NULL when n_b = 0) */
    mbdcp_float *z;       /* N: (p_n, beta, beta_j, sigma, sigma_j) */
    mbdcp_float *w;       /* N: F z + f */
    mbdcp_float *F;       /* N x N or NULL */
    mbdcp_float *f;       /* N or NULL */
    mbdcp_int *basis;     /* N flags or NULL: 1 where z_i is basic in Lemke's final basis */
} MbdcpStepOutput;

/* Size N of the reduced LCP. */
mbdcp_int mbdcp_step_lcp_size(const MbdcpStepProblem *p);

size_t mbdcp_step_workspace_size(const MbdcpStepProblem *p);

/* Assemble F (N x N) and f (N) from a reduction. */
MbdcpReturn mbdcp_step_assemble(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *F,
                                mbdcp_float *f);

/* Reduce, assemble, solve with Lemke and recover v_next and p_b. The outcome is in info->status;
 * out is filled on every status (on failure with the last basic point Lemke reached). start: NULL
 * or N flags, a warm-start hint for Lemke (e.g. out->basis of the previous step). */
MbdcpReturn mbdcp_step_solve(const MbdcpStepProblem *p, const MbdcpLemkeSettings *settings, const mbdcp_int *start,
                             MbdcpStepOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes);

/* The scale at which each row of the step's f is judged (N, see mbdcp_lemke_solve_scaled): the
 * magnitudes of the terms that formed it, |W^T| |v| and |W^T M^-1| |p_ext| carried through the
 * reduction (mbdcp_contact_rhs_magnitude), 0 in sigma's rows, |beta_max| in sigma_j's. For checking
 * a step's answer by the definition the solver applies (mbdcp_lcp_verify_scaled). work: at least
 * mbdcp_step_workspace_size(p) bytes. */
MbdcpReturn mbdcp_step_rhs_magnitude(const MbdcpStepProblem *p, mbdcp_float *fmag, void *work, size_t work_bytes);

#endif /* MBDCP_STEP_H */
