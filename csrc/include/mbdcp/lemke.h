/*
 * lemke.h - Lemke's complementary pivoting method for the standard LCP
 *
 *     find z >= 0 with w = M z + q >= 0 and z^T w = 0            (LCP(M, q))
 *
 * Pivoting on [I, -M, -e] with covering vector e and the artificial variable z0
 * (Lemke 1965; Cottle, Pang & Stone 1992, chapter 4). Degeneracy is resolved by the lexicographic
 * minimum-ratio rule, and z0 leaves whenever it ties for the minimum ratio.
 *
 * Numerics (why a result can be trusted on badly scaled and degenerate data):
 *   - Equilibration. A badly scaled M (row or column norms spread over more than a
 *     factor 2^10) is replaced by R M C with R, C positive diagonal powers of two (Ruiz
 *     iteration), q by R q; solutions map one-to-one (z = C z'). Otherwise M and q are
 *     multiplied by one power of two so that max|M_ij| is about 1: the pivot path is
 *     then exactly that of Lemke's method on the given data. e = (1, ..., 1) is the
 *     covering vector of the scaled problem. Scaling by powers of two is exact.
 *   - The basis inverse is updated by rank-one pivots and refactored from the basis
 *     itself (Gauss-Jordan with partial pivoting) periodically, after a small pivot,
 *     when a ratio comparison is too close to call with the updated inverse, and before
 *     a ray is reported.
 *   - Ray termination is checked: y = the ray's z-part is an infeasibility certificate
 *     when y >= 0, M^T y <= 0 and q^T y < 0 (Farkas). A ray without certificate is
 *     retried with another covering vector; if M + M^T is positive semidefinite (so a
 *     ray would claim infeasibility) and still no certificate is found, the status is
 *     MBDCP_NUMERICAL_ERROR, never a false ray.
 *   - A result is MBDCP_SOLVED only after row-by-row verification on the original data,
 *     each row at its own scale (mbdcp_lcp_verify), and only if the answer is not also a
 *     certificate of infeasibility (an infeasible LCP whose huge z hides a negative w under
 *     the tolerance: RAY_TERMINATION with that certificate).
 *
 * Warm start: a hint of which z_i are basic (e.g. the basis of a neighbouring problem)
 * is factored; a feasible hint is a solution at once, otherwise z0 repairs it with the
 * covering vector B 1: the cold start on the hint's principal pivot transform, which is
 * positive semidefinite when M is. A hint that is singular or leads nowhere falls back to
 * the cold start, so a wrong hint costs time, never correctness.
 *
 * Variables are numbered 0..n-1 for w_1..w_n, n..2n-1 for z_1..z_n and 2n for z0
 * (the monitor receives these numbers).
 */
#ifndef MBDCP_LEMKE_H
#define MBDCP_LEMKE_H

#include "mbdcp_types.h"

typedef struct {
    mbdcp_int max_pivots;  /* pivot limit (cold and warm phases together); 0 means 100 * (n + 1) */
    mbdcp_float tol;       /* componentwise verification tolerance (> 0, < 1) */
    mbdcp_float pivot_tol; /* entries of the entering column below pivot_tol * max|column| do not block */
    mbdcp_int refine;      /* rounds of iterative refinement of the final basic solution (0..10) */
    mbdcp_int scale;       /* 1: equilibrate badly scaled data (default); 0: never */
    MbdcpMonitor monitor;  /* called after every pivot; may be {NULL, NULL} */
} MbdcpLemkeSettings;

typedef struct {
    MbdcpStatus status;
    mbdcp_int pivots;          /* pivots taken, the initial one (z0 entering) included */
    mbdcp_float residual;      /* the worst row's ratio (mbdcp_lcp_row_ratio) of the returned z, w */
    mbdcp_int worst_row;       /* the row of that ratio (-1 when n = 0) */
    mbdcp_int refactorizations; /* times the basis inverse was recomputed from the basis */
    mbdcp_int certified;       /* on RAY_TERMINATION: 1 if the ray certifies infeasibility */
    mbdcp_int warm;            /* 1 if the result was reached from the warm-start hint */
} MbdcpLemkeInfo;

/* Caller-provided outputs. z and w are required (n each); on a status other than SOLVED
 * they hold the last basic point reached (w = M z + q), or z = 0, w = q when that point
 * overflows double (a solution beyond its range). */
typedef struct {
    mbdcp_float *z;
    mbdcp_float *w;
    mbdcp_int *basis; /* NULL, or n flags: 1 where z_i is basic at the end */
    mbdcp_float *ray; /* NULL, or n: on a certified ray, y >= 0 with M^T y <= 0, q^T y < 0 */
} MbdcpLemkeOutput;

/* Fill s with the defaults: max_pivots 0 (automatic), tol 1e-9, pivot_tol 1e-11, refine 2,
 * scale 1, no monitor. */
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
 *   start        NULL, or n flags (input): nonzero where z_i should start basic (warm start)
 *   out          outputs (see MbdcpLemkeOutput)
 *   work         workspace of at least mbdcp_lemke_workspace_size(n) bytes, aligned for double
 * Returns MBDCP_ERR_* for bad arguments; otherwise MBDCP_OK with the outcome in info->status.
 */
MbdcpReturn mbdcp_lemke_solve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                              const MbdcpLemkeSettings *settings, const mbdcp_int *start,
                              const MbdcpLemkeOutput *out, MbdcpLemkeInfo *info, void *work,
                              size_t work_bytes);

/*
 * Solve LCP(M, q) for a new q after a solve in the same workspace on the same M (same n, M not
 * changed: the caller's promise). Starts from the basis that solve ended in, with its basis inverse
 * and scaling kept in `work`: a feasible basis costs one product Binv q, an infeasible one a few
 * pivots of z0 (covering vector B 1_I). Falls back to a cold solve when the workspace holds no
 * successful solve of that size, or when the warm phase fails. Same outputs as mbdcp_lemke_solve;
 * info->warm tells whether the kept basis was used.
 */
MbdcpReturn mbdcp_lemke_resolve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                                const MbdcpLemkeSettings *settings, const MbdcpLemkeOutput *out,
                                MbdcpLemkeInfo *info, void *work, size_t work_bytes);

/*
 * mbdcp_lemke_solve (reuse = 0) or mbdcp_lemke_resolve (reuse = 1, start ignored) of an LCP whose q
 * was computed from larger terms, each row judged at the scale of the data that formed it:
 *   q_mag        NULL, or n magnitudes (input): q_mag_i >= 0 bounds the terms that were summed
 *                into q_i (a time step's f_i = W_i^T v_free from |W|^T |v| and |W^T M^-1| |p_ext|).
 *                The verification's row scale is then s_i = max(|q_i|, q_mag_i) + (|M||z|)_i
 *                (mbdcp_lcp_verify_scaled): a q_i of 1e-16 left by the rounding of a sum of terms
 *                of size 1 is judged at size 1, as the pivoting judges it, not at its own 1e-16.
 */
MbdcpReturn mbdcp_lemke_solve_scaled(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                                     const mbdcp_float *q_mag, const MbdcpLemkeSettings *settings,
                                     const mbdcp_int *start, int reuse, const MbdcpLemkeOutput *out,
                                     MbdcpLemkeInfo *info, void *work, size_t work_bytes);

/* max_i |min(z_i, (M z + q)_i)|; writes w = M z + q when w is not NULL. */
mbdcp_float mbdcp_lcp_residual(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                               const mbdcp_float *z, mbdcp_float *w);

/*
 * Row-by-row verification of z for LCP(M, q), each row at its own scale. With
 * s_i = |q_i| + sum_j |M_ij| |z_j| (the magnitude of the terms that make up w_i = (M z + q)_i):
 *     z_i >= 0,   w_i >= -tol s_i,   and   z_i = 0 or w_i <= tol s_i      for every i,
 * which is invariant under any positive row and column scaling of M (a change of units). The
 * test is made on the computed w with tol reduced by the rounding bound 2 (n + 2) eps of a row
 * sum, so that it holds for the exact w; the only absolute floor is the subnormal range
 * ((n + 2) 2^-1074). Outputs (n each, required): w = M z + q and s, always computed in full.
 * Returns 1 if z passes, else 0.
 */
int mbdcp_lcp_verify(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *z,
                     mbdcp_float tol, mbdcp_float *w, mbdcp_float *s);

/* mbdcp_lcp_verify with the row scale s_i = max(|q_i|, q_mag_i) + (|M||z|)_i (q_mag: NULL, or the
 * magnitudes of the terms that formed q; see mbdcp_lemke_solve_scaled). */
int mbdcp_lcp_verify_scaled(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *q_mag,
                            const mbdcp_float *z, mbdcp_float tol, mbdcp_float *w, mbdcp_float *s);

/*
 * The worst row of z, given w = M z + q and s as mbdcp_lcp_verify computes them: the largest
 * ratio (violation of row i) / s_i, the violation being max(-w_i, 0), and also w_i where
 * z_i > 0; inf for a negative or non-finite z_i. It is the smallest tol at which the rows pass
 * (0 for an exact solution). *worst (may be NULL) receives its row, -1 when n = 0.
 */
mbdcp_float mbdcp_lcp_row_ratio(mbdcp_int n, const mbdcp_float *z, const mbdcp_float *w, const mbdcp_float *s,
                                mbdcp_int *worst);

#endif /* MBDCP_LEMKE_H */
