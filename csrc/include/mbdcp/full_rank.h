/*
 * full_rank.h - full-rank discretized friction (Peiret, Kovecses & Font-Llagunes, eq. 8),
 * applied at velocity level.
 *
 * Contact i has the tangent pair (u_i, w_i) as columns 2i, 2i+1 of Wt and n_d directions
 * e_j = (cos(pi j / n_d), sin(pi j / n_d)) in (u_i, w_i) coordinates, E_i = [e_1 ... e_nd]
 * (E = diag(E_i), 2 n_c x K with K = n_c n_d). Unknowns: v_next, p_t (2 per contact), p_n,
 * kappa_plus, kappa_minus >= 0 (the tangential velocity is E (kappa_plus - kappa_minus)):
 *
 *     M (v_next - v) - Wt p_t - Wn p_n = p_ext
 *     Wt^T v_next - E kappa_plus + E kappa_minus = 0
 *     0 <= p_n          _|_  u_n     = Wn^T v_next + psi_n/h                     >= 0
 *     0 <= kappa_plus   _|_  sigma_- = mu p_n + E^T p_t + rho kappa_minus        >= 0
 *     0 <= kappa_minus  _|_  sigma_+ = mu p_n - E^T p_t + rho kappa_plus         >= 0
 *
 * rho > 0 is the phantom inertia: it makes the lead matrix full rank and does not change
 * the dynamics (kappa_plus and kappa_minus are never both positive). v_next and p_t are
 * eliminated with S = Wt^T M^-1 Wt (Schur complement, by Cholesky factors), leaving an LCP
 * in z = (p_n, kappa_plus, kappa_minus) of size N = n_c + 2K solved by Lemke's method.
 */
#ifndef MBDCP_FULL_RANK_H
#define MBDCP_FULL_RANK_H

#include "lemke.h"

typedef struct {
    mbdcp_int n_v, n_c, n_d;      /* n_d >= 1 directions per contact in [0, pi) */
    mbdcp_float h;
    const mbdcp_float *M;         /* n_v x n_v SPD */
    const mbdcp_float *Wn;        /* n_v x n_c */
    const mbdcp_float *Wt;        /* n_v x 2 n_c, full column rank */
    const mbdcp_float *mu;        /* n_c, >= 0 */
    const mbdcp_float *v;         /* n_v */
    const mbdcp_float *p_ext;     /* n_v or NULL */
    const mbdcp_float *psi_n;     /* n_c or NULL */
    mbdcp_float rho;              /* phantom inertia; <= 0 selects the default: the mean diagonal
                                     entry of E^T S^-1 E (the mass a direction sees) */
    mbdcp_float compliance;       /* c >= 0: the tangential relation is W_t^T v + c p_t = E kappa, i.e.
                                     S = W_t^T M^-1 W_t + c I (0: strict, and a W_t without full column
                                     rank is MBDCP_ERR_RANK_DEFICIENT); c < 0: automatic, 0 when S is
                                     regular, else 1e-8 times its largest diagonal entry (redundant
                                     contacts, e.g. a box on four corners) */
} MbdcpFullRankProblem;

typedef struct {
    mbdcp_float *v_next;          /* n_v */
    mbdcp_float *p_t;             /* 2 n_c */
    mbdcp_float *z;               /* N: (p_n, kappa_plus, kappa_minus) */
    mbdcp_float *w;               /* N: (u_n, sigma_-, sigma_+) */
    mbdcp_float *F, *f;           /* N x N and N, or NULL */
    mbdcp_float rho_used;         /* output */
    mbdcp_float compliance_used;  /* output: the c of the tangential relation */
} MbdcpFullRankOutput;

mbdcp_int mbdcp_full_rank_lcp_size(const MbdcpFullRankProblem *p);
size_t mbdcp_full_rank_workspace_size(const MbdcpFullRankProblem *p);

/* Errors: MBDCP_ERR_NOT_POSDEF (M), MBDCP_ERR_RANK_DEFICIENT (Wt, with compliance 0),
 * MBDCP_ERR_SETTING (h, rho, compliance), MBDCP_ERR_DATA (mu < 0). */
MbdcpReturn mbdcp_full_rank_step(const MbdcpFullRankProblem *p, const MbdcpLemkeSettings *s,
                                 MbdcpFullRankOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes);

#endif /* MBDCP_FULL_RANK_H */
