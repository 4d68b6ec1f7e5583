/*
 * blocks.c - inverse of a block-diagonal SPD matrix and its product with a sparse matrix
 * (see blocks.h).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "mbdcp/blocks.h"
#include "mbdcp/dense.h"

MbdcpReturn mbdcp_block_spd_inverse(mbdcp_int nb, mbdcp_int k, const mbdcp_float *M, mbdcp_float *Minv,
                                    mbdcp_float *scratch, mbdcp_int *bad)
{
    if (!bad) return MBDCP_ERR_NULL;
    *bad = -1;
    if (nb < 0 || k < 0) return MBDCP_ERR_DIMENSION;
    const size_t kk = (size_t)k * k;
    if (nb == 0 || k == 0) return MBDCP_OK;
    if (!M || !Minv || !scratch) return MBDCP_ERR_NULL;
    if (!mbdcp_all_finite((size_t)nb * kk, M)) return MBDCP_ERR_NONFINITE;
    for (mbdcp_int b = 0; b < nb; ++b) {
        const mbdcp_float *Mb = M + (size_t)b * kk;
        mbdcp_float *X = Minv + (size_t)b * kk, amax = 0.0, asym = 0.0;
        for (size_t t = 0; t < kk; ++t) amax = fmax(amax, fabs(Mb[t]));
        for (mbdcp_int i = 0; i < k; ++i)
            for (mbdcp_int j = 0; j < i; ++j) asym = fmax(asym, fabs(Mb[(size_t)i * k + j] - Mb[(size_t)j * k + i]));
        *bad = b;
        if (asym > 1e-10 * amax) return MBDCP_ERR_DATA;
        memcpy(scratch, Mb, kk * sizeof(mbdcp_float));
        /* the SPD test; a pivot below 64 eps of its own diagonal entry is singular in double */
        if (mbdcp_cholesky(k, scratch, 64.0 * DBL_EPSILON) != MBDCP_OK) return MBDCP_ERR_NOT_POSDEF;
        /* Gauss-Jordan in place, diagonal pivots (positive for SPD): exact on diagonal blocks */
        memcpy(X, Mb, kk * sizeof(mbdcp_float));
        for (mbdcp_int c = 0; c < k; ++c) {
            mbdcp_float *Xc = X + (size_t)c * k;
            const mbdcp_float pivot = Xc[c];
            Xc[c] = 1.0;
            for (mbdcp_int j = 0; j < k; ++j) Xc[j] /= pivot;
            for (mbdcp_int r = 0; r < k; ++r) {
                mbdcp_float *Xr = X + (size_t)r * k;
                const mbdcp_float f = Xr[c];
                if (r == c || f == 0.0) continue;
                Xr[c] = 0.0;
                for (mbdcp_int j = 0; j < k; ++j) Xr[j] -= f * Xc[j];
            }
        }
        /* an SPD block whose inverse does not fit in double (a pivot near the smallest floats) */
        if (!mbdcp_all_finite(kk, X)) return MBDCP_ERR_NONFINITE;
    }
    *bad = -1;
    return MBDCP_OK;
}

/* A matrix in compressed sparse columns, as mbdcp_block_times_csc takes P. */
typedef struct {
    mbdcp_int ncols;
    const mbdcp_int *colptr, *rowind;
    const mbdcp_float *val;
} Csc;

/* Row indices within [0, rows) and strictly increasing in each column. */
static int rows_sorted(const Csc *P, mbdcp_int rows)
{
    for (mbdcp_int j = 0; j < P->ncols; ++j)
        for (mbdcp_int t = P->colptr[j]; t < P->colptr[j + 1]; ++t)
            if (P->rowind[t] < 0 || P->rowind[t] >= rows || (t > P->colptr[j] && P->rowind[t] <= P->rowind[t - 1]))
                return 0;
    return 1;
}

/* Q_colptr: k entries per block of k rows that a column of P touches. */
static void count_blocks(const Csc *P, mbdcp_int k, mbdcp_int *Q_colptr)
{
    Q_colptr[0] = 0;
    for (mbdcp_int j = 0; j < P->ncols; ++j) {
        mbdcp_int blocks = 0, last = -1;
        for (mbdcp_int t = P->colptr[j]; t < P->colptr[j + 1]; ++t)
            if (P->rowind[t] / k != last) {
                last = P->rowind[t] / k;
                ++blocks;
            }
        Q_colptr[j + 1] = Q_colptr[j] + blocks * k;
    }
}

/* Column j of Q = B P, block by block of the rows P's column touches: q = B_b p_b over the
 * entries of that block. MBDCP_ERR_DIMENSION if Q_colptr leaves too little room (not from the
 * count pass). */
static MbdcpReturn product_column(const Csc *P, mbdcp_int k, const mbdcp_float *B, mbdcp_int j,
                                  const mbdcp_int *Q_colptr, mbdcp_int *Q_rowind, mbdcp_float *Q_val)
{
    const size_t kk = (size_t)k * k;
    mbdcp_int out = Q_colptr[j];
    for (mbdcp_int t = P->colptr[j]; t < P->colptr[j + 1];) {
        const mbdcp_int b = P->rowind[t] / k;
        if (out + k > Q_colptr[j + 1]) return MBDCP_ERR_DIMENSION;
        const mbdcp_float *Bb = B + (size_t)b * kk;
        mbdcp_float *q = Q_val + out;
        for (mbdcp_int i = 0; i < k; ++i) {
            q[i] = 0.0;
            Q_rowind[out + i] = b * k + i;
        }
        for (; t < P->colptr[j + 1] && P->rowind[t] / k == b; ++t) { /* column r - b k of B_b */
            const mbdcp_int r = P->rowind[t] - b * k;
            const mbdcp_float p = P->val[t];
            for (mbdcp_int i = 0; i < k; ++i) q[i] += Bb[(size_t)i * k + r] * p;
        }
        out += k;
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_block_times_csc(mbdcp_int nb, mbdcp_int k, const mbdcp_float *B, mbdcp_int ncols,
                                  const mbdcp_int *P_colptr, const mbdcp_int *P_rowind, const mbdcp_float *P_val,
                                  mbdcp_int *Q_colptr, mbdcp_int *Q_rowind, mbdcp_float *Q_val)
{
    if (nb < 0 || k <= 0 || ncols < 0) return MBDCP_ERR_DIMENSION;
    if (!P_colptr || !Q_colptr) return MBDCP_ERR_NULL;
    const int entries = P_colptr[ncols] > 0;
    if (entries && !P_rowind) return MBDCP_ERR_NULL;
    const Csc P = {ncols, P_colptr, P_rowind, P_val};
    if (!rows_sorted(&P, nb * k)) return MBDCP_ERR_DATA;
    if (!Q_rowind) { /* the count pass */
        count_blocks(&P, k, Q_colptr);
        return MBDCP_OK;
    }
    if (!B || !Q_val || (entries && !P_val)) return MBDCP_ERR_NULL;
    for (mbdcp_int j = 0; j < ncols; ++j) {
        const MbdcpReturn rc = product_column(&P, k, B, j, Q_colptr, Q_rowind, Q_val);
        if (rc != MBDCP_OK) return rc;
    }
    return MBDCP_OK;
}
