/*
 * Lemke's method with the lexicographic minimum-ratio rule (see lemke.h).
 *
 * Revised form: the basis inverse Binv (n x n) and the basic values xbar are
 * kept; the column of the entering variable is d = Binv a, with a = e_j for
 * w_j, -M[:, j] for z_j and -e for z0. Moving the entering variable by t
 * changes the basic values to xbar - t d, so rows with d_i > 0 block.
 *
 * Binv starts as I and a pivot on row r changes only column r away from the
 * identity, so Binv = I + (dense columns for the set P of rows pivoted so far).
 * Those columns are stored compactly (row i's entries for P are contiguous in
 * Bc), and a pivot costs O(n |P|) instead of O(n^2).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "mbdcp/dense.h"
#include "mbdcp/lemke.h"

/* Ratios closer than this (relative to the largest basic value) are ties: rounding in the
 * basic values grows with the pivots (about 5e-15 * max|xbar| after dozens), and missing a
 * tie can send Lemke onto a spurious ray; a larger value lets a tie chosen with a small
 * pivot push other basic values below zero by TIE_TOL * max|xbar| * d_i / d_r. */
#define TIE_TOL 1e-13

MbdcpReturn mbdcp_lemke_default_settings(MbdcpLemkeSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->max_pivots = 0;
    s->tol = 1e-9;
    s->pivot_tol = 1e-11;
    s->refine = 2;
    return MBDCP_OK;
}

MbdcpReturn mbdcp_lemke_check_settings(const MbdcpLemkeSettings *s, const char **message)
{
    const char *msg = NULL;
    if (!s) return MBDCP_ERR_NULL;
    if (s->max_pivots < 0)
        msg = "max_pivots must be positive (0 selects the default)";
    else if (!(s->tol > 0.0) || !isfinite(s->tol) || s->tol >= 1.0)
        msg = "tol must be positive, finite and below 1";
    else if (!(s->pivot_tol > 0.0) || !(s->pivot_tol < 1.0))
        msg = "pivot_tol must be in (0, 1)";
    else if (s->refine < 0 || s->refine > 10)
        msg = "refine must be between 0 and 10";
    if (message) *message = msg;
    return msg ? MBDCP_ERR_SETTING : MBDCP_OK;
}

/* Layout: Bc, Mt (M transposed, so columns of M are contiguous) as n x n; xbar, d, dnext, res, ag
 * as n-vectors of doubles; then basis, cand, P, pos as n-vectors of ints. */
size_t mbdcp_lemke_workspace_size(mbdcp_int n)
{
    if (n < 0) return 0;
    const size_t nn = (size_t)n;
    return (2 * nn * nn + 5 * nn) * sizeof(mbdcp_float) + 4 * nn * sizeof(mbdcp_int) + 16;
}

mbdcp_float mbdcp_lcp_residual(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                               const mbdcp_float *z, mbdcp_float *w)
{
    mbdcp_float res = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float *Mi = M + (size_t)i * n;
        mbdcp_float s = q[i];
        for (mbdcp_int j = 0; j < n; ++j) s += Mi[j] * z[j];
        if (w) w[i] = s;
        res = fmax(res, fabs(fmin(z[i], s)));
    }
    return res;
}

/* x . y with four independent partial sums: a single running sum is one long dependency
 * chain that the compiler may not reorder, and it dominated the pivot time. */
static mbdcp_float dot(mbdcp_int n, const mbdcp_float *x, const mbdcp_float *y)
{
    mbdcp_float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    mbdcp_int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += x[k] * y[k];
        s1 += x[k + 1] * y[k + 1];
        s2 += x[k + 2] * y[k + 2];
        s3 += x[k + 3] * y[k + 3];
    }
    for (; k < n; ++k) s0 += x[k] * y[k];
    return (s0 + s1) + (s2 + s3);
}

/* Binv = I + the columns P[0..np) stored in Bc (row i: Bc[i * n + 0..np)); pos[c] is the slot
 * of column c, or -1 while column c is still e_c. */
typedef struct {
    mbdcp_int n, np;
    mbdcp_float *Bc;
    mbdcp_int *P, *pos;
    const mbdcp_float *Mt;
} Inverse;

static mbdcp_float binv_at(const Inverse *B, mbdcp_int i, mbdcp_int c)
{
    return B->pos[c] >= 0 ? B->Bc[(size_t)i * B->n + B->pos[c]] : (mbdcp_float)(i == c);
}

/* ag[k] = a[P[k]] for the column a of variable var (w_j: e_j, z_j: -M[:, j], z0: -e), and the
 * diagonal value a[i] needed by rows outside P is read through a_at. */
static mbdcp_float a_at(const Inverse *B, mbdcp_int var, mbdcp_int i)
{
    const mbdcp_int n = B->n;
    if (var < n) return (mbdcp_float)(i == var);
    if (var < 2 * n) return -B->Mt[(size_t)(var - n) * n + i];
    return -1.0;
}

static void gather(const Inverse *B, mbdcp_int var, mbdcp_float *ag)
{
    for (mbdcp_int k = 0; k < B->np; ++k) ag[k] = a_at(B, var, B->P[k]);
}

/* (Binv a)_i from the gathered column ag. */
static mbdcp_float row_dot(const Inverse *B, mbdcp_int i, mbdcp_int var, const mbdcp_float *ag)
{
    mbdcp_float s = dot(B->np, B->Bc + (size_t)i * B->n, ag);
    return B->pos[i] < 0 ? s + a_at(B, var, i) : s;
}

/* Pivot on row r with entering column d, then form dnext = Binv_new a_next in the same pass
 * over Bc (next_var < 0: no next column). ag: scratch of n doubles. */
static void pivot(Inverse *B, mbdcp_float *xbar, const mbdcp_float *d, mbdcp_int r, mbdcp_int next_var,
                  mbdcp_float *dnext, mbdcp_float *ag)
{
    const mbdcp_int n = B->n;
    if (B->pos[r] < 0) { /* column r leaves the identity: give it a slot */
        const mbdcp_int k = B->np++;
        B->P[k] = r;
        B->pos[r] = k;
        for (mbdcp_int i = 0; i < n; ++i) B->Bc[(size_t)i * n + k] = (mbdcp_float)(i == r);
    }
    const mbdcp_int np = B->np;
    mbdcp_float *Br = B->Bc + (size_t)r * n;
    const mbdcp_float inv = 1.0 / d[r];
    for (mbdcp_int k = 0; k < np; ++k) Br[k] *= inv;
    xbar[r] *= inv;
    const mbdcp_float xr = xbar[r];
    if (next_var >= 0) gather(B, next_var, ag);
    for (mbdcp_int i = 0; i < n; ++i) {
        if (i == r) continue;
        mbdcp_float *Bi = B->Bc + (size_t)i * n;
        const mbdcp_float f = d[i];
        if (f != 0.0) {
            for (mbdcp_int k = 0; k < np; ++k) Bi[k] -= f * Br[k];
            xbar[i] -= f * xr;
        }
        if (next_var >= 0) dnext[i] = row_dot(B, i, next_var, ag);
    }
    if (next_var >= 0) dnext[r] = row_dot(B, r, next_var, ag);
}

/* Among the candidate rows cand[0..nc-1] (tied for the minimum ratio), the row
 * whose Binv row divided by d is lexicographically smallest. Entries that are
 * zero in exact arithmetic carry rounding noise, so two entries compare equal
 * when they differ by less than TIE_TOL times the largest entry of the rows. */
static mbdcp_int lexicographic_choice(const Inverse *B, const mbdcp_float *d, mbdcp_int *cand, mbdcp_int nc)
{
    const mbdcp_int n = B->n;
    mbdcp_float scale = 0.0;
    for (mbdcp_int c = 0; c < nc; ++c) {
        const mbdcp_int i = cand[c];
        mbdcp_float m = mbdcp_norm_inf((size_t)B->np, B->Bc + (size_t)i * n);
        if (B->pos[i] < 0) m = fmax(m, 1.0);
        scale = fmax(scale, m / d[i]);
    }
    const mbdcp_float eps = TIE_TOL * scale;
    for (mbdcp_int k = 0; k < n && nc > 1; ++k) {
        mbdcp_float vmin = INFINITY;
        for (mbdcp_int c = 0; c < nc; ++c) vmin = fmin(vmin, binv_at(B, cand[c], k) / d[cand[c]]);
        mbdcp_int kept = 0;
        for (mbdcp_int c = 0; c < nc; ++c)
            if (binv_at(B, cand[c], k) / d[cand[c]] <= vmin + eps) cand[kept++] = cand[c];
        nc = kept;
    }
    return cand[0];
}

/* Put the basic values into z (clipped at 0: they are nonnegative up to
 * rounding), recompute w = M z + q, and verify the LCP conditions. */
static void finish(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *xbar,
                   const mbdcp_int *basis, mbdcp_float tol_rel, mbdcp_float *z, mbdcp_float *w,
                   MbdcpLemkeInfo *info, int verify)
{
    memset(z, 0, (size_t)n * sizeof(mbdcp_float));
    for (mbdcp_int i = 0; i < n; ++i)
        if (basis[i] >= n && basis[i] < 2 * n) z[basis[i] - n] = fmax(xbar[i], 0.0);
    info->residual = mbdcp_lcp_residual(n, M, q, z, w);
    mbdcp_float row_max = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) {
        mbdcp_float s = 0.0;
        for (mbdcp_int j = 0; j < n; ++j) s += fabs(M[(size_t)i * n + j]);
        row_max = fmax(row_max, s);
    }
    mbdcp_float scale = fmax(mbdcp_norm_inf((size_t)n, q), row_max * mbdcp_norm_inf((size_t)n, z));
    if (!(scale > 0.0)) scale = 1.0;
    info->tol_used = tol_rel * scale;
    if (!verify) return;
    int ok = isfinite(info->residual) && info->residual <= info->tol_used;
    for (mbdcp_int i = 0; i < n && ok; ++i) ok = w[i] >= -info->tol_used;
    info->status = ok ? MBDCP_SOLVED : MBDCP_NUMERICAL_ERROR;
}

/* xbar += Binv (q - B xbar): one round of iterative refinement of the basic solution. */
static void refine(const Inverse *B, const mbdcp_float *q, const mbdcp_int *basis, mbdcp_float *xbar,
                   mbdcp_float *res, mbdcp_float *ag)
{
    const mbdcp_int n = B->n;
    const mbdcp_float *Mt = B->Mt;
    memcpy(res, q, (size_t)n * sizeof(mbdcp_float));
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_int v = basis[i];
        const mbdcp_float x = xbar[i];
        if (v < n) {
            res[v] -= x;
        } else if (v < 2 * n) {
            const mbdcp_float *col = Mt + (size_t)(v - n) * n;
            for (mbdcp_int k = 0; k < n; ++k) res[k] += x * col[k];
        } else {
            for (mbdcp_int k = 0; k < n; ++k) res[k] += x;
        }
    }
    for (mbdcp_int k = 0; k < B->np; ++k) ag[k] = res[B->P[k]];
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float s = dot(B->np, B->Bc + (size_t)i * n, ag);
        xbar[i] += B->pos[i] < 0 ? s + res[i] : s;
    }
}

MbdcpReturn mbdcp_lemke_solve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                              const MbdcpLemkeSettings *settings, mbdcp_float *z, mbdcp_float *w,
                              mbdcp_int *trace, mbdcp_int trace_capacity, MbdcpLemkeInfo *info,
                              void *work, size_t work_bytes)
{
    if (!settings || !info) return MBDCP_ERR_NULL;
    if (n < 0 || trace_capacity < 0) return MBDCP_ERR_DIMENSION;
    MbdcpReturn rc = mbdcp_lemke_check_settings(settings, NULL);
    if (rc != MBDCP_OK) return rc;
    info->status = MBDCP_SOLVED;
    info->pivots = 0;
    info->residual = 0.0;
    info->tol_used = 0.0;
    info->trace_len = 0;
    if (n == 0) return MBDCP_OK;
    if (!M || !q || !z || !w || !work) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_lemke_workspace_size(n)) return MBDCP_ERR_WORKSPACE;
    if (!mbdcp_all_finite((size_t)n * n, M) || !mbdcp_all_finite((size_t)n, q)) return MBDCP_ERR_NONFINITE;

    const size_t nn = (size_t)n;
    mbdcp_float *Bc = (mbdcp_float *)work;
    mbdcp_float *Mt = Bc + nn * nn;
    mbdcp_float *xbar = Mt + nn * nn;
    mbdcp_float *d = xbar + nn;
    mbdcp_float *dnext = d + nn;
    mbdcp_float *res = dnext + nn;
    mbdcp_float *ag = res + nn;
    mbdcp_int *basis = (mbdcp_int *)(ag + nn);
    mbdcp_int *cand = basis + nn;
    Inverse B = {n, 0, Bc, cand + nn, cand + 2 * nn, Mt};
    const mbdcp_int max_pivots = settings->max_pivots > 0 ? settings->max_pivots : 100 * (n + 1);
    const mbdcp_int z0 = 2 * n;

    for (mbdcp_int i = 0; i < n; ++i) basis[i] = i;
    memcpy(xbar, q, nn * sizeof(mbdcp_float));

    /* Trivial exit: q >= 0 gives z = 0, w = q. */
    mbdcp_int r = 0;
    for (mbdcp_int i = 1; i < n; ++i)
        if (q[i] <= q[r]) r = i; /* ties: the largest index keeps the tableau lexico-positive */
    if (q[r] >= 0.0) {
        finish(n, M, q, xbar, basis, settings->tol, z, w, info, 1);
        return MBDCP_OK;
    }

    for (mbdcp_int i = 0; i < n; ++i)
        for (mbdcp_int j = 0; j < n; ++j) Mt[(size_t)j * n + i] = M[(size_t)i * n + j];
    for (mbdcp_int i = 0; i < n; ++i) B.pos[i] = -1;

    /* Initial pivot: z0 enters (column -e), the most negative q_r leaves. */
    for (mbdcp_int i = 0; i < n; ++i) d[i] = -1.0;
    mbdcp_int entering = z0;
    mbdcp_int z0_row = -1;
    for (;;) {
        const mbdcp_int leaving = basis[r];
        if (trace && info->trace_len < trace_capacity) {
            trace[2 * info->trace_len] = entering;
            trace[2 * info->trace_len + 1] = leaving;
            info->trace_len++;
        }
        const mbdcp_int next = (leaving == z0) ? -1 : (leaving < n ? leaving + n : leaving - n);
        pivot(&B, xbar, d, r, next, dnext, ag);
        basis[r] = entering;
        info->pivots++;
        if (entering == z0) z0_row = r;
        if (leaving == z0) break; /* a complementary basis: solution found */
        if (info->pivots >= max_pivots) {
            info->status = MBDCP_MAX_ITERATIONS;
            break;
        }
        entering = next;
        memcpy(d, dnext, nn * sizeof(mbdcp_float));

        /* Minimum-ratio test over the blocking rows (d_i > 0). */
        mbdcp_float dmax = 0.0, xmax = 0.0;
        for (mbdcp_int i = 0; i < n; ++i) {
            dmax = fmax(dmax, fabs(d[i]));
            xmax = fmax(xmax, fabs(xbar[i]));
        }
        if (!isfinite(dmax) || !isfinite(xmax)) {
            info->status = MBDCP_NUMERICAL_ERROR;
            break;
        }
        const mbdcp_float ptol = settings->pivot_tol * dmax;
        mbdcp_float theta = INFINITY;
        for (mbdcp_int i = 0; i < n; ++i)
            if (d[i] > ptol) theta = fmin(theta, xbar[i] / d[i]);
        if (theta == INFINITY) {
            info->status = MBDCP_RAY_TERMINATION;
            break;
        }
        const mbdcp_float tie = TIE_TOL * fmax(xmax, DBL_MIN);
        mbdcp_int nc = 0, z0_tied = 0;
        for (mbdcp_int i = 0; i < n; ++i) {
            if (d[i] > ptol && xbar[i] - theta * d[i] <= tie) {
                cand[nc++] = i;
                if (i == z0_row) z0_tied = 1;
            }
        }
        if (z0_tied)
            r = z0_row; /* z0 leaves whenever it can: ends on a solution, never a spurious ray */
        else
            r = nc == 1 ? cand[0] : lexicographic_choice(&B, d, cand, nc);
    }

    if (info->status == MBDCP_SOLVED)
        for (mbdcp_int k = 0; k < settings->refine; ++k) refine(&B, q, basis, xbar, res, ag);
    finish(n, M, q, xbar, basis, settings->tol, z, w, info, info->status == MBDCP_SOLVED);
    return MBDCP_OK;
}
