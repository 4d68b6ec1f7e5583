/*
 * dense.h - small dense linear-algebra kernels (row-major, no allocation).
 */
#ifndef MBDCP_DENSE_H
#define MBDCP_DENSE_H

#include "mbdcp_types.h"

/* Cholesky factor A = L L^T of an n x n symmetric matrix, in place: on
 * return the lower triangle of A holds L, the strict upper triangle is zeroed.
 * Only the lower triangle of A is read. Returns MBDCP_ERR_NOT_POSDEF when a
 * pivot is not larger than rel_tol times its own diagonal entry of A (use
 * rel_tol around 1e-14 for an SPD test, larger to detect rank deficiency). */
MbdcpReturn mbdcp_cholesky(mbdcp_int n, mbdcp_float *A, mbdcp_float rel_tol);

/* mbdcp_cholesky on A's profile (first: n ints, out: the first nonzero column of each row of the
 * lower triangle; the products outside the profile, all zero, are skipped): for block-diagonal or
 * banded A, work in proportion to the profile instead of n^3 / 3. NULL first: mbdcp_cholesky. */
MbdcpReturn mbdcp_cholesky_profile(mbdcp_int n, mbdcp_float *A, mbdcp_float rel_tol, mbdcp_int *first);

/* Solve A x = b in place (A: n x n row-major, overwritten by its LU factors with partial
 * pivoting; piv: n ints; b: n, overwritten by x). MBDCP_ERR_RANK_DEFICIENT when a pivot is at or
 * below rel_tol times the largest entry of A, or not finite. */
MbdcpReturn mbdcp_lu_solve(mbdcp_int n, mbdcp_float *A, mbdcp_int *piv, mbdcp_float *b, mbdcp_float rel_tol);

/* Solve L X = B in place: L n x n lower triangular, B n x ncols (overwritten by X). */
MbdcpReturn mbdcp_trsm_lower(mbdcp_int n, const mbdcp_float *L, mbdcp_int ncols, mbdcp_float *B);

/* Solve L x = b (trans = 0) or L^T x = b (trans = 1) in place, b of length n. */
MbdcpReturn mbdcp_trsv_lower(mbdcp_int n, const mbdcp_float *L, int trans, mbdcp_float *b);

/* G = X^T X for X of size k x n (row-major); G is n x n, written in full. */
MbdcpReturn mbdcp_gram(mbdcp_int k, mbdcp_int n, const mbdcp_float *X, mbdcp_float *G);

/* C = A^T B for A k x n, B k x m; C is n x m. */
MbdcpReturn mbdcp_gemm_tn(mbdcp_int k, mbdcp_int n, mbdcp_int m, const mbdcp_float *A,
                          const mbdcp_float *B, mbdcp_float *C);

/* y = alpha * op(A) x + beta * y, A r x c; op(A) = A (trans = 0) or A^T (trans = 1). */
MbdcpReturn mbdcp_gemv(mbdcp_int r, mbdcp_int c, mbdcp_float alpha, const mbdcp_float *A, int trans,
                       const mbdcp_float *x, mbdcp_float beta, mbdcp_float *y);

/* 1 when all n values are finite, 0 otherwise (NULL with n > 0 gives 0). */
int mbdcp_all_finite(size_t n, const mbdcp_float *x);

/* 0 if the rows x groups matrix E (row-major) has exactly one 1 per row, zeros elsewhere, and the
 * rows of each group consecutive and in group order (the form of E and Ej); 1 for a bad entry or
 * row, 2 for rows out of group order. */
int mbdcp_grouping_error(mbdcp_int rows, mbdcp_int groups, const mbdcp_float *E);

/* A matrix taken as symmetric differs from its transpose by at most this fraction of its largest
 * entry (the one definition; the Python layer reads it as mbdcp.infrastructure.validate.SYMMETRY_RTOL). */
#define MBDCP_SYMMETRY_RTOL 1e-10

/* 1 if the n x n matrix A is symmetric to rtol (max |A_ij - A_ji| <= rtol max |A_ij|), else 0. */
int mbdcp_symmetric(mbdcp_int n, const mbdcp_float *A, mbdcp_float rtol);

/* 1 if the n entries of x are all >= 0 (x may be NULL when n = 0), else 0. */
int mbdcp_all_nonnegative(size_t n, const mbdcp_float *x);

/* Largest absolute value of n entries (0 for n = 0). */
mbdcp_float mbdcp_norm_inf(size_t n, const mbdcp_float *x);

#endif /* MBDCP_DENSE_H */
