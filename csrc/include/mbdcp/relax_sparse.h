/*
 * relax_sparse.h - Anitescu & Hart's (2004) fixed-point algorithms 1-3 (relax.h) with the
 * subproblems P1(Gamma) and P2(lam) solved sparsely, without forming G = W^T M^-1 W or any LCP matrix.
 *
 * Each subproblem is an LCP w = F z + f, 0 <= z _|_ w >= 0. Given a basis B (the z_i that may be
 * positive), its point solves w_B = 0, z_N = 0, i.e. the symmetric quasi-definite system
 * (Vanderbei 1995), unknowns u = (v_next, lam, x) with x = (p_n, beta):
 *
 *     [ M     0     -W   ] [v  ]   [ M v + p_ext ]
 *     [ 0     D_l   -C^T ] [lam] = [ 0           ]      C = [-U; E] (n_c + m x n_c)
 *     [ -W^T  -C    -D_x ] [x  ]   [ f_B         ]
 *
 * with D tiny on basic variables (regularisation, removed by iterative refinement) and huge on
 * non-basic ones (which then vanish and are set to zero), factored by the sparse LDL^T of
 * sparse_ldl.h (scalar blocks, approximate minimum degree). The basis is updated by the
 * primal-dual active-set rule (Hintermüller, Ito & Kunisch 2002): keep the basic z_i >= 0 (a zero
 * within rounding stays: a degenerate variable dropped and re-entered makes two bases cycle), add
 * the non-basic rows with w_i < 0; at most MBDCP_RELAX_SPARSE_MAX_BASES bases per subproblem.
 * P2 holds lam fixed (all lam non-basic, E lam moved into f).
 *
 * First bases: for P1 a guess from the free motion v_free (p_n basic where the normal row is
 * negative there, lam basic where the contact moves tangentially, with the beta most opposed to the
 * motion), replaced by the hint start_p1 (e.g. the last step's basis) contact by contact where the
 * hint has p_n basic; for P2 P1's final (p_n, beta) basis (start_p2 is not read); later solves
 * start from their subproblem's last basis.
 *
 * Verification: a point is accepted when it passes mbdcp_lcp_verify_scaled's row rule (each row's
 * violation at most tol times its scale, tol = s->lemke.tol) with a scale no larger than that
 * rule's: |(G x)_i| (computed as |w_i^T (v_next - v_free)|) in place of (|G| |x|)_i, the other
 * terms as in relax.c. A point accepted here is therefore SOLVED under the dense definition.
 * When MBDCP_RELAX_SPARSE_MAX_BASES bases give no accepted point (a pile has more contact rows than
 * velocities: G is singular and the impulses are not unique, and the active-set steps can cycle
 * between bases whose systems are singular), the subproblem is solved by proximal rounds
 * (Rockafellar 1976): x_k+1 = the solution of the subproblem with prox/2 ||x - x_k||^2 (weighted
 * by G's diagonal) added to its quadratic form (in P1 also prox/2 ||lam - lam_k||^2, weighted by its
 * rows' scale), by the same active-set steps on a system that is never singular, prox shrinking
 * from round to round (1e-2 to 1e-8 of the diagonal); each basis point is verified on the subproblem
 * itself, unregularised. A subproblem without an accepted
 * point after that ends the run with status MBDCP_NUMERICAL_ERROR: the caller then solves the
 * step with Lemke's method (mbdcp_fixed_point_warm).
 *
 * The data come in compressed storage (MbdcpSparseStep; no joints: n_b = m_j = n_j = 0), from the
 * caller's sparse matrices or from a dense MbdcpStepProblem by mbdcp_sparse_step_count and
 * mbdcp_sparse_step_fill. info->pivots counts the bases tried (factorisations), not pivots.
 *
 * Calling sequence: mbdcp_relax_sparse_analyze (scratch of mbdcp_relax_sparse_analyze_workspace_size
 * bytes) fills an MbdcpRelaxSparseOrder whose perm_m (n_v) and perm_k (n_v + 2 n_c + m) the caller
 * provides; then mbdcp_fixed_point_sparse with mbdcp_fixed_point_sparse_workspace_size bytes.
 */
#ifndef MBDCP_RELAX_SPARSE_H
#define MBDCP_RELAX_SPARSE_H

#include "relax.h"

#define MBDCP_RELAX_SPARSE_MAX_BASES 12

/* One time step without joints in compressed storage; every array is an input, read, never
 * copied. n_w = n_c + m. */
typedef struct {
    mbdcp_int n_v, n_c, m;
    mbdcp_float h;             /* > 0 */
    const mbdcp_int *Mp;       /* n_v + 1: row i of M's lower triangle is Mi, Mx[Mp[i] .. Mp[i+1] - 1] */
    const mbdcp_int *Mi;       /* column indices, ascending within a row, each row ending with its
                                  diagonal (stored even where zero) */
    const mbdcp_float *Mx;
    const mbdcp_int *Wp;       /* n_w + 1: column j of W = [Wn D] is Wi, Wx[Wp[j] .. Wp[j+1] - 1] */
    const mbdcp_int *Wi;       /* row indices in [0, n_v), any order */
    const mbdcp_float *Wx;
    const mbdcp_int *contact;  /* m: the contact of each friction direction (the column of E's 1 in
                                  its row), in [0, n_c) */
    const mbdcp_float *mu;     /* n_c, >= 0 */
    const mbdcp_float *v;      /* n_v */
    const mbdcp_float *p_ext;  /* n_v or NULL (zero) */
    const mbdcp_float *psi_n;  /* n_c or NULL */
    const mbdcp_float *dpsi_n; /* n_c or NULL */
    const mbdcp_float *dpsi_f; /* m or NULL */
} MbdcpSparseStep;

/* MBDCP_ERR_NULL, _DIMENSION (a size, a pointer array or an index out of range, a row of M not
 * ascending or not ending with its diagonal), _NONFINITE, _SETTING (h), _DATA (mu < 0). */
MbdcpReturn mbdcp_sparse_step_check(const MbdcpSparseStep *q);

/* The compressed storage of a dense problem without joints (MBDCP_ERR_DIMENSION with joints),
 * reading M's lower triangle and the first 1 in each row of E only (the values are checked in
 * compressed form, by mbdcp_sparse_step_check): first the counts, *nnz_m (M's lower triangle with
 * its diagonal) and the column starts Wp (output, n_w + 1; Wp[n_w] entries of W); then, for the
 * same problem, the arrays (outputs: Mp n_v + 1, Mi and Mx nnz_m, Wi and Wx Wp[n_w], contact m;
 * Wp the count's, read and restored; MBDCP_ERR_DATA when a row of E has no 1,
 * MBDCP_ERR_DIMENSION when there are more entries than counted). */
MbdcpReturn mbdcp_sparse_step_count(const MbdcpStepProblem *p, mbdcp_int *nnz_m, mbdcp_int *Wp);
MbdcpReturn mbdcp_sparse_step_fill(const MbdcpStepProblem *p, mbdcp_int nnz_m, mbdcp_int *Mp, mbdcp_int *Mi,
                                   mbdcp_float *Mx, mbdcp_int *Wp, mbdcp_int *Wi, mbdcp_float *Wx, mbdcp_int *contact);

typedef struct {
    mbdcp_int *perm_m;  /* n_v (caller-provided): ordering of M's factor */
    mbdcp_int *perm_k;  /* n_v + 2 n_c + m (caller-provided): ordering of the basis system's factor */
    mbdcp_int nnz_m, nnz_k;   /* output: entries of the lower triangles of M and of the system */
    mbdcp_int nnzl_m, nnzl_k; /* output: entries of the factors strictly below the diagonal */
} MbdcpRelaxSparseOrder;

size_t mbdcp_relax_sparse_analyze_workspace_size(const MbdcpSparseStep *q);
MbdcpReturn mbdcp_relax_sparse_analyze(const MbdcpSparseStep *q, MbdcpRelaxSparseOrder *ord, void *work,
                                       size_t work_bytes);

size_t mbdcp_fixed_point_sparse_workspace_size(const MbdcpSparseStep *q, const MbdcpRelaxSparseOrder *ord);

/* Algorithms 1-3 as mbdcp_fixed_point_warm (same settings, hints and outputs; p_b unused). */
MbdcpReturn mbdcp_fixed_point_sparse(const MbdcpSparseStep *q, const MbdcpFixedPointSettings *s,
                                     const MbdcpRelaxSparseOrder *ord, const mbdcp_int *start_p1,
                                     const mbdcp_int *start_p2, MbdcpFixedPointOutput *out,
                                     MbdcpFixedPointInfo *info, void *work, size_t work_bytes);

#endif /* MBDCP_RELAX_SPARSE_H */
