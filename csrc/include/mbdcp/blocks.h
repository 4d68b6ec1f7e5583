/*
 * blocks.h - block-diagonal mass matrices: M = diag(M_1, ..., M_nb), each M_b k x k (a body's
 * mass and inertia). The CCP needs M^-1 and Q = M^-1 P; both cost O(nb k^3 + nnz(P) k) here,
 * where a general sparse inverse and product would go through per-block slicing.
 */
#ifndef MBDCP_BLOCKS_H
#define MBDCP_BLOCKS_H

#include "mbdcp_types.h"

/* Minv_b = M_b^-1 for nb consecutive k x k row-major blocks (M and Minv: nb k^2 each; scratch:
 * k^2). Each block must be symmetric (to 1e-10 of its largest entry) and positive definite (a
 * Cholesky pivot above 64 eps times its own diagonal entry, so that it is so in double):
 * otherwise *bad is the first block that is not and the return is MBDCP_ERR_DATA (not symmetric)
 * or MBDCP_ERR_NOT_POSDEF; *bad = -1 on success. MBDCP_ERR_NONFINITE for NaN or infinity in M
 * (*bad = -1), or for block *bad whose inverse overflows double. */
MbdcpReturn mbdcp_block_spd_inverse(mbdcp_int nb, mbdcp_int k, const mbdcp_float *M, mbdcp_float *Minv,
                                    mbdcp_float *scratch, mbdcp_int *bad);

/* Q = B P for B block diagonal (nb blocks k x k, row-major) and P (nb k rows, ncols columns) in
 * compressed sparse columns with sorted row indices. Column j of Q is dense over every block that
 * column j of P touches. Count pass: with Q_rowind == NULL only Q_colptr (ncols + 1) is written;
 * then Q_rowind and Q_val need Q_colptr[ncols] entries. */
MbdcpReturn mbdcp_block_times_csc(mbdcp_int nb, mbdcp_int k, const mbdcp_float *B, mbdcp_int ncols,
                                  const mbdcp_int *P_colptr, const mbdcp_int *P_rowind, const mbdcp_float *P_val,
                                  mbdcp_int *Q_colptr, mbdcp_int *Q_rowind, mbdcp_float *Q_val);

#endif /* MBDCP_BLOCKS_H */
