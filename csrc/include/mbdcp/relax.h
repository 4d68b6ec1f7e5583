/*
 * relax.h - fixed-point relaxations of the time-stepping LCP of Anitescu & Potra (1997):
 * P1, P2 and algorithms 1-3 of Anitescu & Hart (2004)
 *
 * With the reduction of assemble.h (W = [Wn D], G = W^T A W, g = W^T v_free):
 *
 * P1(Gamma), unknowns z = (p_n, beta, lam), N = 2 n_c + m: the normal row gets -U lam + Gamma,
 *     0 <= p_n  _|_  Wn^T v_next + psi_n/h + dpsi_n - U lam + Gamma >= 0
 *     0 <= beta _|_  D^T v_next + dpsi_f + E lam                   >= 0
 *     0 <= lam  _|_  U p_n - E^T beta                               >= 0
 *   The coupling of (p_n, beta) with lam is skew-symmetric, so P1 is monotone; with
 *   Gamma = U lam it is the original problem.
 * P2(lam), unknowns z = (p_n, beta), N = n_c + m: the cone dropped, sliding speeds fixed,
 *     0 <= p_n  _|_  Wn^T v_next + psi_n/h + dpsi_n >= 0
 *     0 <= beta _|_  D^T v_next + dpsi_f + E lam    >= 0
 *   G is symmetric positive semidefinite: a convex QP.
 * Lambda(v): lam_j = max(0, max over contact j's directions d_i of -d_i^T v).
 * Algorithm 1: Gamma = 0; repeat v = P1(Gamma), lam = Lambda(v), Gamma = U lam.
 * Algorithm 2: Gamma = 0; repeat v = P1(Gamma), lam = Lambda(v), v = P2(lam), lam = Lambda(v),
 *              Gamma = U lam.
 * Algorithm 3: algorithm 2 for exactly one iteration.
 * Joint friction (m_j, n_j > 0) is not part of these formulations (MBDCP_ERR_DIMENSION).
 */
#ifndef MBDCP_RELAX_H
#define MBDCP_RELAX_H

#include "step.h"

typedef struct {
    mbdcp_int algorithm;       /* 1, 2 or 3 */
    mbdcp_float tol;           /* stop when ||v_k - v_{k-1}||_inf <= tol * max(1, ||v_k||_inf) */
    mbdcp_int max_iter;        /* >= 1 */
    MbdcpLemkeSettings lemke;  /* for the subproblems; lemke.monitor also receives every outer
                                  iteration (entering = -1, value = ||v_k - v_{k-1}||_inf, v_0 = v) */
} MbdcpFixedPointSettings;

typedef struct {
    MbdcpStatus status;        /* SOLVED: converged (algorithm 3: its one pass solved) */
    mbdcp_int iterations;
    mbdcp_int converged;       /* 1 or 0 */
    mbdcp_int pivots;          /* Lemke pivots over all subproblems */
    mbdcp_float residual;      /* LCP residual of the last subproblem */
} MbdcpFixedPointInfo;

/* Caller-provided outputs of the fixed-point algorithms. */
typedef struct {
    mbdcp_float *v_next;       /* n_v */
    mbdcp_float *p_b;          /* n_b (may be NULL when n_b = 0) */
    mbdcp_float *p_n;          /* n_c */
    mbdcp_float *beta;         /* m */
    mbdcp_float *lam;          /* n_c: Lambda(v_next) */
    mbdcp_int *basis_p1;       /* NULL, or 2 n_c + m flags: z_i basic in P1's last solve (p_n, beta, lam) */
    mbdcp_int *basis_p2;       /* NULL, or n_c + m flags: the same for P2 (p_n, beta); untouched by algorithm 1 */
} MbdcpFixedPointOutput;

MbdcpReturn mbdcp_fixed_point_default_settings(MbdcpFixedPointSettings *s);
MbdcpReturn mbdcp_fixed_point_check_settings(const MbdcpFixedPointSettings *s, const char **message);

/* lam (n_c) = Lambda(v) for D (n_v x m) grouped by E (m x n_c). */
MbdcpReturn mbdcp_sliding_speed(mbdcp_int n_v, mbdcp_int n_c, mbdcp_int m, const mbdcp_float *D,
                                const mbdcp_float *E, const mbdcp_float *v, mbdcp_float *lam);

/* Workspace for mbdcp_relax_p1, mbdcp_relax_p2 and mbdcp_fixed_point. */
size_t mbdcp_relax_workspace_size(const MbdcpStepProblem *p);

/* Solve P1(gamma) (gamma: n_c) or P2(lam) (lam: n_c, >= 0). out->z holds (p_n, beta, lam) for
 * P1 and (p_n, beta) for P2; F, f as in mbdcp_step_solve. */
MbdcpReturn mbdcp_relax_p1(const MbdcpStepProblem *p, const mbdcp_float *gamma, const MbdcpLemkeSettings *s,
                           MbdcpStepOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes);
MbdcpReturn mbdcp_relax_p2(const MbdcpStepProblem *p, const mbdcp_float *lam, const MbdcpLemkeSettings *s,
                           MbdcpStepOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes);

/* Algorithms 1, 2, 3. The reduction (Cholesky factor, G) is computed once. */
MbdcpReturn mbdcp_fixed_point(const MbdcpStepProblem *p, const MbdcpFixedPointSettings *s,
                              MbdcpFixedPointOutput *out, MbdcpFixedPointInfo *info, void *work,
                              size_t work_bytes);

/* The same, the first P1 and P2 solves warm-started from basis hints (NULL: cold), e.g. the
 * basis_p1 / basis_p2 of the previous time step: see mbdcp_lemke_solve's start. */
MbdcpReturn mbdcp_fixed_point_warm(const MbdcpStepProblem *p, const MbdcpFixedPointSettings *s,
                                   const mbdcp_int *start_p1, const mbdcp_int *start_p2,
                                   MbdcpFixedPointOutput *out, MbdcpFixedPointInfo *info, void *work,
                                   size_t work_bytes);

#endif /* MBDCP_RELAX_H */
