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
 * primal-dual active-set rule (Hintermüller, Ito & Kunisch 2002): keep the basic z_i > 0, add the
 * non-basic rows with w_i < 0; at most MBDCP_RELAX_SPARSE_MAX_BASES bases per subproblem.
 * P2 holds lam fixed (all lam non-basic, E lam moved into f).
 *
 * First bases: the caller's hints (start_p1, start_p2, e.g. the last step's), else for P1 a guess
 * from the free motion v_free (p_n basic where the normal row is negative there, lam basic where
 * the contact moves tangentially, with the beta most opposed to the motion) and for P2 P1's
 * (p_n, beta) basis; later solves start from their subproblem's last basis.
 *
 * Verification: a point is accepted when it passes mbdcp_lcp_verify_scaled's row rule (each row's
 * violation at most tol times its scale, tol = s->lemke.tol) with a scale no larger than that
 * rule's: |(G x)_i| (computed as |w_i^T (v_next - v_free)|) in place of (|G| |x|)_i, the other
 * terms as in relax.c. A point accepted here is therefore SOLVED under the dense definition.
 * A subproblem without an accepted point ends the run with status MBDCP_NUMERICAL_ERROR: the
 * caller then solves the step with Lemke's method (mbdcp_fixed_point_warm).
 *
 * Needs n_b = m_j = n_j = 0 (MBDCP_ERR_DIMENSION otherwise). info->pivots counts the bases tried
 * (factorisations), not pivots.
 *
 * Calling sequence: mbdcp_relax_sparse_analyze (scratch of mbdcp_relax_sparse_analyze_workspace_size
 * bytes) fills an MbdcpRelaxSparseOrder whose perm_m (n_v) and perm_k (n_v + 2 n_c + m) the caller
 * provides; then mbdcp_fixed_point_sparse with mbdcp_fixed_point_sparse_workspace_size bytes.
 */
#ifndef MBDCP_RELAX_SPARSE_H
#define MBDCP_RELAX_SPARSE_H

#include "relax.h"

#define MBDCP_RELAX_SPARSE_MAX_BASES 12

typedef struct {
    mbdcp_int *perm_m;  /* n_v (caller-provided): ordering of M's factor */
    mbdcp_int *perm_k;  /* n_v + 2 n_c + m (caller-provided): ordering of the basis system's factor */
    mbdcp_int nnz_m, nnz_k;   /* output: entries of the lower triangles of M and of the system */
    mbdcp_int nnzl_m, nnzl_k; /* output: entries of the factors strictly below the diagonal */
} MbdcpRelaxSparseOrder;

size_t mbdcp_relax_sparse_analyze_workspace_size(const MbdcpStepProblem *p);
MbdcpReturn mbdcp_relax_sparse_analyze(const MbdcpStepProblem *p, MbdcpRelaxSparseOrder *ord, void *work,
                                       size_t work_bytes);

size_t mbdcp_fixed_point_sparse_workspace_size(const MbdcpStepProblem *p, const MbdcpRelaxSparseOrder *ord);

/* Algorithms 1-3 as mbdcp_fixed_point_warm (same settings, hints and outputs). */
MbdcpReturn mbdcp_fixed_point_sparse(const MbdcpStepProblem *p, const MbdcpFixedPointSettings *s,
                                     const MbdcpRelaxSparseOrder *ord, const mbdcp_int *start_p1,
                                     const mbdcp_int *start_p2, MbdcpFixedPointOutput *out,
                                     MbdcpFixedPointInfo *info, void *work, size_t work_bytes);

#endif /* MBDCP_RELAX_SPARSE_H */
