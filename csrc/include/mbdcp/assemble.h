/*
 * assemble.h - reduction of the time-stepping mixed LCP (Trinkle 2003, eqs. 39-47)
 *
 *     M v_next - Wb p_b - W x = M v + p_ext,   Wb^T v_next + theta/h + dtheta = 0,
 *
 * with W = [Wn D Dj] and x = (p_n, beta, beta_j) the contact impulses. For a
 * Cholesky factor M = L L^T (M^-1 is never formed), X = L^-1 W, Xb = L^-1 Wb
 * and S = Xb^T Xb = Wb^T M^-1 Wb = Ls Ls^T, eliminating v_next and p_b gives
 *
 *     W^T v_next = G x + g,   G = W^T A W = X^T X - Y^T Y,  Y = Ls^-1 Xb^T X,
 *
 * A = M^-1 - M^-1 Wb S^-1 Wb^T M^-1, and g = W^T v_free (v_free: velocity with
 * all contact impulses zero, joints enforced). Every complementarity
 * formulation of the time step (Stewart-Trinkle, Anitescu & Hart's
 * relaxations, the full-rank model) is assembled from G and g.
 */
#ifndef MBDCP_ASSEMBLE_H
#define MBDCP_ASSEMBLE_H

#include "mbdcp_types.h"

/* One time step's data. All matrices row-major; optional vectors may be NULL
 * (meaning zero); a matrix with a zero dimension may be NULL. */
typedef struct {
    mbdcp_int n_v;                /* generalized velocities (>= 1) */
    mbdcp_int n_c;                /* contacts */
    mbdcp_int m;                  /* friction directions of all contacts */
    mbdcp_int n_b;                /* bilateral joint equations */
    mbdcp_int m_j;                /* joint friction directions */
    mbdcp_int n_j;                /* joints with dry friction */
    mbdcp_float h;                /* time step (> 0) */
    const mbdcp_float *M;         /* n_v x n_v, symmetric positive definite */
    const mbdcp_float *Wn;        /* n_v x n_c */
    const mbdcp_float *D;         /* n_v x m */
    const mbdcp_float *E;         /* m x n_c, one 1 per row */
    const mbdcp_float *mu;        /* n_c, diagonal of U */
    const mbdcp_float *v;         /* n_v */
    const mbdcp_float *p_ext;     /* n_v or NULL */
    const mbdcp_float *psi_n;     /* n_c or NULL */
    const mbdcp_float *dpsi_n;    /* n_c or NULL */
    const mbdcp_float *dpsi_f;    /* m or NULL */
    const mbdcp_float *Wb;        /* n_v x n_b */
    const mbdcp_float *theta;     /* n_b or NULL */
    const mbdcp_float *dtheta;    /* n_b or NULL */
    const mbdcp_float *Dj;        /* n_v x m_j */
    const mbdcp_float *Ej;        /* m_j x n_j */
    const mbdcp_float *beta_max;  /* n_j or NULL */
} MbdcpStepProblem;

/* The reduced system; every pointer points into the workspace given to mbdcp_reduce. */
typedef struct {
    mbdcp_int n_v, n_w, n_b;      /* n_w = n_c + m + m_j */
    mbdcp_float *L;               /* n_v x n_v, Cholesky factor of M */
    mbdcp_float *X;               /* n_v x n_w, L^-1 W */
    mbdcp_float *Xb;              /* n_v x n_b, L^-1 Wb */
    mbdcp_float *Ls;              /* n_b x n_b, Cholesky factor of S */
    mbdcp_float *y;               /* n_v, L^-1 (M v + p_ext) */
    mbdcp_float *x2;              /* n_b, theta/h + dtheta */
    mbdcp_float *G;               /* n_w x n_w, W^T A W */
    mbdcp_float *g;               /* n_w, W^T v_free */
    mbdcp_float *gmag;            /* n_w, the magnitudes of the terms that formed g (the rows' data scale) */
    mbdcp_float *scratch;         /* 2 n_v + n_b + n_w */
} MbdcpReduced;

/* Checks dimensions, pointers, h and finiteness of every input of p. */
MbdcpReturn mbdcp_step_problem_check(const MbdcpStepProblem *p);

/* What the reduction needs: the dynamics, the joints and W given as column blocks
 * (W = [W_blocks[0] ... W_blocks[n_blocks - 1]], block k is n_v x widths[k]). */
#define MBDCP_MAX_BLOCKS 4
typedef struct {
    mbdcp_int n_v, n_b;
    mbdcp_float h;
    const mbdcp_float *M, *v, *p_ext;                 /* p_ext may be NULL */
    const mbdcp_float *Wb, *theta, *dtheta;           /* theta, dtheta may be NULL */
    mbdcp_int n_blocks;
    const mbdcp_float *W_blocks[MBDCP_MAX_BLOCKS];
    mbdcp_int widths[MBDCP_MAX_BLOCKS];
} MbdcpReduceInput;

size_t mbdcp_reduce_workspace_size(mbdcp_int n_v, mbdcp_int n_w, mbdcp_int n_b);

/* Factor and reduce (inputs already checked); errors: MBDCP_ERR_NOT_POSDEF (M),
 * MBDCP_ERR_RANK_DEFICIENT (Wb). */
MbdcpReturn mbdcp_reduce_blocks(const MbdcpReduceInput *in, MbdcpReduced *red, void *work, size_t work_bytes);

/* mbdcp_reduce_blocks for a step problem, with W = [Wn D Dj], after mbdcp_step_problem_check. */
MbdcpReturn mbdcp_reduce(const MbdcpStepProblem *p, MbdcpReduced *red, void *work, size_t work_bytes);

/* The blocks every contact LCP shares (step, P1, P2), into F (N x N, row-major):
 * mbdcp_place_gram zeroes F and copies G into its leading n_w x n_w block; mbdcp_place_grouping
 * puts a grouping matrix E (rows x groups) at rows r0.., columns c0.. and -E^T at rows c0..,
 * columns r0..; mbdcp_contact_rhs writes the n_w contact rows of the right-hand side,
 * f = (g_n + psi_n/h + dpsi_n, g_d + dpsi_f, g_j). */
void mbdcp_place_gram(const MbdcpReduced *red, mbdcp_int N, mbdcp_float *F);
void mbdcp_place_grouping(mbdcp_int rows, mbdcp_int groups, const mbdcp_float *E, mbdcp_int r0, mbdcp_int c0,
                          mbdcp_int N, mbdcp_float *F);
void mbdcp_contact_rhs(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *f);
/* The magnitudes of the terms that formed those n_w rows: red->gmag plus |psi_n/h|, |dpsi_n|,
 * |dpsi_f|. Each row of a step's LCP is judged at this scale (mbdcp_lemke_solve_scaled). */
void mbdcp_contact_rhs_magnitude(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *fmag);

/* a + b, or exactly zero when the sum is within the rounding error of its terms,
 * 4 (n_v + 2) eps (|a| + |b|): a right-hand side assembled from parts that cancel (a contact
 * that rolls, or closes at exactly the speed of its gap) is zero, not a speed of 1e-18 that a
 * row judged at its own scale would have to honour. The reduction's G and g are cleaned so too. */
mbdcp_float mbdcp_sum_or_zero(mbdcp_int n_v, mbdcp_float a, mbdcp_float b);

/* From contact impulses x (n_w), the velocity v_next (n_v) and joint impulses p_b (n_b, may be
 * NULL when n_b = 0). */
MbdcpReturn mbdcp_reduced_recover(const MbdcpReduced *red, const mbdcp_float *x, mbdcp_float *v_next,
                                  mbdcp_float *p_b);

#endif /* MBDCP_ASSEMBLE_H */
