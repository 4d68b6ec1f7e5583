/*
 * sparse_ldl.h - sparse factorisation of a matrix of n x n dense blocks of size bs x bs (bs <= 8),
 * without allocation: A = P^T L D U P (U = L^T when A is symmetric), L unit block lower triangular,
 * U unit block upper triangular, D block diagonal, P a fill-reducing permutation of the blocks.
 *
 * The block pattern is symmetrised (a missing mirror block counts as zero), ordered by approximate
 * minimum degree on the quotient graph (Amestoy, Davis and Duff 1996; element absorption and
 * approximate external degrees, without supervariables), and factored without pivoting across blocks
 * (static pivoting): each diagonal block of the Schur complement is inverted by Gaussian
 * elimination with partial pivoting inside the block, and a pivot at or below pivot_tol times the
 * block column's scale is replaced by +-pivot_tol times that scale and counted (`perturbed`), as in
 * static-pivoting LU (Li and Demmel 1998); the caller refines or regularises if that count is > 0.
 * A symmetric factor's dense tail (its last columns, each full below the diagonal: the root of the
 * elimination tree, where a pattern that fills in does most of its work) is factored by panels of
 * block columns (right-looking across panels, left-looking inside one), in L's own storage.
 * Matrices that need no pivoting across blocks: symmetric quasi-definite ones (interior-point KKT
 * systems), block diagonally dominant ones, and the semismooth Newton matrices of friction problems
 * once regularised.
 *
 * Three phases, so that the factor's storage can be sized before it is needed:
 *   1. mbdcp_sldl_analyze: the ordering and the number of blocks of L (a scratch workspace of
 *      mbdcp_sldl_analyze_workspace_size bytes, free again on return);
 *   2. mbdcp_sldl_init: the symbolic factor (L's block pattern, where each block of A goes) in a
 *      workspace of mbdcp_sldl_workspace_size bytes that the handle points into;
 *   3. mbdcp_sldl_factor (numeric, per matrix with that pattern) and mbdcp_sldl_solve (per right-hand side).
 *
 * The pattern and the values of A are given in block CSR: block row i holds the blocks
 * ind[ptr[i] .. ptr[i+1]-1] (column indices, any order, duplicates allowed and summed), and the values
 * are bs * bs numbers per block, row-major, in the same order.
 */
#ifndef MBDCP_SPARSE_LDL_H
#define MBDCP_SPARSE_LDL_H

#include "mbdcp_types.h"

#define MBDCP_SLDL_MAX_BS 8

typedef struct {
    mbdcp_int n, bs, symmetric; /* blocks per side; block size; 1: U = L^T, only L is stored */
    mbdcp_int nnz_a;            /* blocks of A's pattern (with duplicates) */
    mbdcp_int nnz_l;            /* blocks of L strictly below the diagonal */
    mbdcp_int max_col;          /* most blocks in a column of L */
    mbdcp_int tail;             /* symmetric: the first column of L's dense tail (n if none) */
    mbdcp_int *perm, *iperm;    /* n: perm[k] = the block of A in position k; iperm its inverse */
    mbdcp_int *Lp, *Li;         /* n + 1 and nnz_l: L's block columns (positions, increasing) */
    mbdcp_int *amap;            /* nnz_a: where each block of A goes (-1 - k: diagonal k; else a slot) */
    mbdcp_int *amap_upper;      /* nnz_a: 1 when the block goes to U's slot (unsymmetric only) */
    mbdcp_float *Lx;            /* nnz_l blocks: L (after mbdcp_sldl_factor) */
    mbdcp_float *Ux;            /* nnz_l blocks (unsymmetric): block (k, i) of D U stored at L's slot (i, k) */
    mbdcp_float *Dinv;          /* n blocks: inverses of D's blocks */
    mbdcp_float *tmp;           /* scratch: max(max_col, 1) blocks and bs * n numbers */
    mbdcp_int perturbed;        /* pivots replaced by the last factorisation */
    mbdcp_float flops;          /* multiply-adds of one factorisation (for cost estimates) */
} MbdcpSldl;

/* Scratch bytes of mbdcp_sldl_analyze for n blocks and a pattern of nnz blocks. */
size_t mbdcp_sldl_analyze_workspace_size(mbdcp_int n, mbdcp_int nnz);

/*
 * The fill-reducing ordering of the block pattern (ptr: n + 1, ind: ptr[n]) and the size of L.
 * perm (n, output): the ordering; nnz_l (output): blocks of L strictly below the diagonal.
 * flops (output, may be NULL): multiply-adds of a factorisation with blocks of size 1.
 */
MbdcpReturn mbdcp_sldl_analyze(mbdcp_int n, const mbdcp_int *ptr, const mbdcp_int *ind, mbdcp_int *perm,
                               mbdcp_int *nnz_l, mbdcp_float *flops, void *work, size_t work_bytes);

/* nnz_l and flops of mbdcp_sldl_analyze for a given ordering perm (a permutation of the n blocks);
 * the same workspace. */
MbdcpReturn mbdcp_sldl_count(mbdcp_int n, const mbdcp_int *ptr, const mbdcp_int *ind, const mbdcp_int *perm,
                             mbdcp_int *nnz_l, mbdcp_float *flops, void *work, size_t work_bytes);

/* Bytes of the handle's storage for n blocks of size bs, nnz_a blocks of A, nnz_l blocks of L. */
size_t mbdcp_sldl_workspace_size(mbdcp_int n, mbdcp_int bs, int symmetric, mbdcp_int nnz_a, mbdcp_int nnz_l);

/*
 * The symbolic factor of the pattern (ptr, ind) in the ordering perm (from mbdcp_sldl_analyze, copied
 * into the handle), with nnz_l its size; f (output) points into work, which must outlive it.
 * Returns MBDCP_ERR_DIMENSION when nnz_l does not match the pattern and ordering.
 */
MbdcpReturn mbdcp_sldl_init(MbdcpSldl *f, mbdcp_int n, mbdcp_int bs, int symmetric, const mbdcp_int *ptr,
                            const mbdcp_int *ind, const mbdcp_int *perm, mbdcp_int nnz_l, void *work,
                            size_t work_bytes);

/*
 * Numeric factorisation of the matrix with the pattern given to mbdcp_sldl_init and block values val
 * (nnz_a * bs * bs, row-major blocks in pattern order). For a symmetric handle only the blocks on and
 * below the diagonal (block row >= block column, in A's numbering) are read, and the diagonal blocks'
 * lower triangles. pivot_tol > 0: see above. MBDCP_ERR_NONFINITE when a value or pivot is not finite.
 */
MbdcpReturn mbdcp_sldl_factor(MbdcpSldl *f, const mbdcp_float *val, mbdcp_float pivot_tol);

/* x (n * bs): in: the right-hand side b, out: the solution of A x = b with the last factorisation. */
MbdcpReturn mbdcp_sldl_solve(const MbdcpSldl *f, mbdcp_float *x);

#endif /* MBDCP_SPARSE_LDL_H */
