/*
 * lemke.h - Lemke's complementary pivoting method for the standard LCP
 *
 *     find z >= 0 with w = M z + q >= 0 and z^T w = 0            (LCP(M, q))
 *
 * Pivoting on [I, -M, -e] with covering vector e = (1, ..., 1) and the
 * artificial variable z0 (Lemke 1965; DESIGN.md section 2). Degeneracy is
 * resolved by the lexicographic minimum-ratio rule, and z0 leaves whenever it
 * ties for the minimum ratio. The basis inverse is kept explicitly; a pivot is
 * one pass over it that applies the rank-one update and, in the same pass,
 * forms the next entering column.
 *
 * A result is reported MBDCP_SOLVED only after verification: w = M z + q is
 * recomputed and z >= -tol, w >= -tol, |min(z_i, w_i)| <= tol must hold with
 * tol = settings.tol * max(||q||_inf, ||M||_inf ||z||_inf).
 *
 * Variables are numbered 0..n-1 for w_1..w_n, n..2n-1 for z_1..z_n and 2n
 * for z0 (the trace uses these numbers).
 */
#ifndef MBDCP_LEMKE_H
#define MBDCP_LEMKE_H

#include "mbdcp_types.h"

typedef struct {
    mbdcp_int max_pivots;  /* pivot limit; 0 means 100 * (n + 1) */
    mbdcp_float tol;       /* relative verification tolerance (> 0) */
    mbdcp_float pivot_tol; /* entries of the entering column below pivot_tol * max|column| do not block */
    mbdcp_int refine;      /* rounds of iterative refinement of the final basic solution (>= 0) */
} MbdcpLemkeSettings;

typedef struct {
    MbdcpStatus status;
    mbdcp_int pivots;     /* pivots taken, the initial one (z0 entering) included */
    mbdcp_float residual; /* max_i |min(z_i, w_i)| of the returned z, w */
    mbdcp_float tol_used; /* absolute tolerance used in the verification */
    mbdcp_int trace_len;  /* number of (entering, leaving) pairs written to the trace */
} MbdcpLemkeInfo;

/* Fill s with the defaults: max_pivots 0 (automatic), tol 1e-9, pivot_tol 1e-11, refine 2. */
MbdcpReturn mbdcp_lemke_default_settings(MbdcpLemkeSettings *s);

/* MBDCP_OK, or MBDCP_ERR_SETTING with *message naming the bad setting. */
MbdcpReturn mbdcp_lemke_check_settings(const MbdcpLemkeSettings *s, const char **message);

/* Bytes of workspace mbdcp_lemke_solve needs for an LCP of size n. */
size_t mbdcp_lemke_workspace_size(mbdcp_int n);

/*
 * Solve LCP(M, q).
 *   n            size (n = 0 is a valid, solved problem)
 *   M            n x n, row-major (input)
 *   q            n (input)
 *   z, w         n each (output); on a status other than SOLVED they hold the
 *                last basic point reached (z from the basis, w = M z + q)
 *   trace        NULL, or room for 2 * trace_capacity ints (output): pairs
 *                (entering, leaving) of variable numbers, one per pivot
 *   work         workspace of at least mbdcp_lemke_workspace_size(n) bytes,
 *                aligned for double
 * Returns MBDCP_ERR_* for bad arguments; otherwise MBDCP_OK with the outcome
 * in info->status.
 */
MbdcpReturn mbdcp_lemke_solve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                              const MbdcpLemkeSettings *settings, mbdcp_float *z, mbdcp_float *w,
                              mbdcp_int *trace, mbdcp_int trace_capacity, MbdcpLemkeInfo *info,
                              void *work, size_t work_bytes);

/* max_i |min(z_i, (M z + q)_i)|; writes w = M z + q when w is not NULL. */
mbdcp_float mbdcp_lcp_residual(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                               const mbdcp_float *z, mbdcp_float *w);

#endif /* MBDCP_LEMKE_H */
