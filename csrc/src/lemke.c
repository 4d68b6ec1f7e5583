/*
 * Lemke's method with the lexicographic minimum-ratio rule (see lemke.h).
 *
 * Revised form on the scaled problem LCP(M', q'): the basis inverse Binv (n x n) and the basic
 * values xbar are kept; the column of the entering variable is d = Binv a, with a = e_j for
 * w_j, -M'[:, j] for z_j and -cov for z0. Moving the entering variable by t changes the basic
 * values to xbar - t d, so rows with d_i > 0 block.
 *
 * Binv starts as I and a pivot on row r changes only column r away from the identity, so
 * Binv = I + (dense columns for a set P of rows). Those columns are stored compactly (column k of
 * Bc, contiguous, holds Binv's column P[k]), and a pivot costs O(n |P|) instead of O(n^2), in
 * passes over whole columns (long contiguous vectors, also for small n). A
 * refactorization puts each basic w_j in row j; the others form a set S, and
 * B = [[B_SS, 0], [B_NS, I]] gives Binv = [[B_SS^-1, 0], [-B_NS B_SS^-1, I]]: again I plus the
 * columns S, so both forms share one storage.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mbdcp/dense.h"
#include "mbdcp/lemke.h"
#include "lemke_avx2.h"

/* Ratios closer than TIGHT_TIE (relative to the largest basic value) are ties; closer than
 * LOOSE_TIE they are too close to call with a rank-one-updated inverse, which is then
 * recomputed from the basis before deciding. Missing a tie can send Lemke onto a spurious
 * ray; taking a false one pushes basic values below zero by about TIGHT_TIE max|xbar|. */
#define TIGHT_TIE 1e-13
#define LOOSE_TIE 1e-7
/* A pivot smaller than this fraction of its column's largest entry amplifies rounding in the
 * updated inverse: refactor before the next decision. */
#define SMALL_PIVOT 1e-5
/* Ruiz equilibration rounds, and the row/column norm spread (log2) below which the data are
 * only scaled as a whole (so that the pivot path is exactly that of the given data). */
#define RUIZ_ROUNDS 8
#define SPREAD_LOG2 10
/* Entries of a failing point below CLEAN_ZERO n eps max z are retried as zeros (extract). */
#define CLEAN_ZERO 1024.0
/* A basic value within NOISE (n + 2) eps of the magnitude of its computation is rounding (extract). */
#define NOISE 4.0
/* Passes of single-variable mends over the rows a cleaned point still fails (extract). */
#define MEND_PASSES 4
/* Scaled data stay below 2^LIMIT_LOG2 in magnitude. */
#define LIMIT_LOG2 960
/* A basis block whose elimination meets a pivot at or below SINGULAR times its largest entry is
 * singular in double: its basic values carry no correct digit (large impulses whose difference
 * is lost), and the componentwise test, scaled by |M||z|, cannot tell. Pivoting then stops as a
 * numerical error and the solve starts again cold. */
#define SINGULAR 1e-14
/* A hinted basis must be further from singular: below this, the hint is dropped (warm, polish). */
#define HINT_SINGULAR 1e-12
/* Pivots over which run() remembers the bases it met (cycle detection). */
#define CYCLE_RING 256
/* The last attempts on a positive semidefinite M whose paths broke down: M' + eps I, eps this
 * fraction of tol (then ten times it) times each row's largest entry (see solve()) */
#define REGULARIZE 0.01
/* The last attempts on paths that broke down otherwise: q + PERTURB max|q| v, along at most
 * PERTURB_TRIES directions v (see solve()). */
#define PERTURB 1e-12
#define PERTURB_TRIES 3
/* Columns per panel of the blocked Gauss-Jordan inversion in refactor(). */
#define PANEL 32

/* fmax(acc, x) for an accumulator acc that is never NaN, and fmax(x, 0): the same values
 * (a NaN x is skipped), inlined (libm's fmax is a call, in the hottest loops). */
static inline mbdcp_float acc_max(mbdcp_float acc, mbdcp_float x) { return x > acc ? x : acc; }
static inline mbdcp_float pos_part(mbdcp_float x) { return x > 0.0 ? x : 0.0; }

MbdcpReturn mbdcp_lemke_default_settings(MbdcpLemkeSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->max_pivots = 0;
    s->tol = 1e-9;
    s->pivot_tol = 1e-11;
    s->refine = 2;
    s->scale = 1;
    s->monitor.fn = NULL;
    s->monitor.ctx = NULL;
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
    else if (s->scale != 0 && s->scale != 1)
        msg = "scale must be 0 or 1";
    if (message) *message = msg;
    return msg ? MBDCP_ERR_SETTING : MBDCP_OK;
}

/* Rows of an even number of doubles: in an aligned workspace every row and vector then starts
 * on 16 bytes, and the vectorized loops over them need no loads split across cache lines. */
static mbdcp_int row_stride(mbdcp_int n) { return n + (n & 1); }

/* Layout: KEPT_BYTES of kept state (what mbdcp_lemke_resolve may start from); Bc, Mt (scaled M
 * transposed: columns of M' contiguous) as ld x ld, ld = row_stride(n); xbar, d, dnext, res, ag,
 * qs, cov, rs, cs, ratios as vectors of ld doubles; X as PANEL n-vectors; then basis, cand, P,
 * pos, flags as n-vectors of ints. */
size_t mbdcp_lemke_workspace_size(mbdcp_int n)
{
    if (n < 0) return 0;
    const size_t nn = (size_t)n, ld = (size_t)row_stride(n);
    const size_t bytes =
        32 + (2 * ld * ld + 11 * ld + PANEL * nn) * sizeof(mbdcp_float) + 6 * nn * sizeof(mbdcp_int) + 16;
    return (bytes + 15) / 16 * 16; /* what a caller places after the workspace stays aligned */
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

/* Relative rounding bound of a computed row sum w_i = q_i + sum_j M_ij z_j (n + 1 terms),
 * against s_i: the verdict on the computed w must hold for the exact one. */
static mbdcp_float sum_rounding(mbdcp_int n) { return 2.0 * (mbdcp_float)(n + 2) * DBL_EPSILON; }

/* The ratio of row i: its violation beyond the subnormal floor over s_i (s_i = 0 with a
 * violation: inf). */
static mbdcp_float row_ratio(mbdcp_float z, mbdcp_float w, mbdcp_float s, mbdcp_float floor_)
{
    mbdcp_float bad = w < 0.0 ? -w : 0.0;
    bad = z > 0.0 && w > bad ? w : bad;
    return bad <= floor_ ? 0.0 : (bad - floor_) / s;
}

mbdcp_float mbdcp_lcp_row_ratio(mbdcp_int n, const mbdcp_float *z, const mbdcp_float *w, const mbdcp_float *s,
                                mbdcp_int *worst)
{
    /* below this, products are subnormal and carry an absolute, not a relative, rounding error */
    const mbdcp_float floor_ = (mbdcp_float)(n + 2) * (DBL_MIN * DBL_EPSILON);
    mbdcp_float ratio = 0.0;
    mbdcp_int at = n > 0 ? 0 : -1;
    /* the common case without branches (every candidate point is verified): a NaN or infinity
     * anywhere makes the sum of the entries times zero NaN, and the careful loop below decides */
    mbdcp_float nonfinite = 0.0;
    int negative = 0;
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float r = row_ratio(z[i], w[i], s[i], floor_);
        nonfinite += 0.0 * z[i] + 0.0 * w[i] + 0.0 * s[i];
        negative |= z[i] < 0.0;
        at = r > ratio ? i : at;
        ratio = r > ratio ? r : ratio;
    }
    if (nonfinite == 0.0 && !negative) {
        if (worst) *worst = at;
        return ratio;
    }
    ratio = 0.0;
    at = n > 0 ? 0 : -1;
    for (mbdcp_int i = 0; i < n; ++i) {
        mbdcp_float r = row_ratio(z[i], w[i], s[i], floor_);
        if (!(z[i] >= 0.0) || !isfinite(z[i]) || !isfinite(w[i]) || !isfinite(s[i])) r = INFINITY;
        if (r > ratio) {
            ratio = r;
            at = i;
        }
        if (isinf(ratio)) break;
    }
    if (worst) *worst = at;
    return ratio;
}

/* The scale of q_i: max(|q_i|, qmag_i) (qmag: NULL, or the magnitudes of the terms that formed q,
 * see lemke.h). */
static inline mbdcp_float q_size(const mbdcp_float *q, const mbdcp_float *qmag, mbdcp_int i)
{
    const mbdcp_float a = fabs(q[i]);
    return qmag && qmag[i] > a ? qmag[i] : a;
}

/* w = M z + q and s = |M||z| + q_size, row by row. */
static void row_sums(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *qmag,
                     const mbdcp_float *z, mbdcp_float *w, mbdcp_float *s)
{
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float *Mi = M + (size_t)i * n;
        mbdcp_float wi = q[i], si = q_size(q, qmag, i);
        for (mbdcp_int j = 0; j < n; ++j) {
            const mbdcp_float t = Mi[j] * z[j];
            wi += t;
            si += fabs(t);
        }
        w[i] = wi;
        s[i] = si;
    }
}

/* The verdict on a point whose worst row has this ratio: tol less the rounding of a row sum. */
static int passes(mbdcp_int n, mbdcp_float ratio, mbdcp_float tol)
{
    mbdcp_float margin = sum_rounding(n);
    if (margin > 0.5 * tol) margin = 0.5 * tol;
    return ratio <= tol - margin;
}

int mbdcp_lcp_verify_scaled(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *q_mag,
                            const mbdcp_float *z, mbdcp_float tol, mbdcp_float *w, mbdcp_float *s)
{
    row_sums(n, M, q, q_mag, z, w, s); /* in full first: callers read w whatever the verdict */
    return passes(n, mbdcp_lcp_row_ratio(n, z, w, s, NULL), tol);
}

int mbdcp_lcp_verify(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *z,
                     mbdcp_float tol, mbdcp_float *w, mbdcp_float *s)
{
    return mbdcp_lcp_verify_scaled(n, M, q, NULL, z, tol, w, s);
}

/* The solver's state on the scaled problem. Binv = I + the columns P[0..np) stored in Bc
 * (slot k: Bc[k * ld + 0..n)); pos[c] is the slot of column c, or -1 while column c is e_c. */
/* What a solve leaves at the start of its workspace for mbdcp_lemke_resolve. */
typedef enum { KEPT_NOTHING = 0, KEPT_INVERSE = 1, KEPT_BASIS = 2 } LemkeKeptWhat;
typedef struct {
    mbdcp_int magic, n, np; /* KEPT_MAGIC, the size and the number of stored columns of Binv */
    LemkeKeptWhat what;     /* KEPT_INVERSE: Binv of the final basis; KEPT_BASIS: the verified hint in flags */
} LemkeKept;
#define KEPT_MAGIC 0x4c454d4b /* "LEMK" */
#define KEPT_BYTES 32         /* sizeof(LemkeKept), rounded up so that the doubles after it stay aligned */

typedef struct {
    /* the given problem, the caller's outputs, and the outcome so far */
    const mbdcp_float *M, *q;
    const mbdcp_float *qmag; /* NULL, or the magnitudes of q's terms (row_sums) */
    const MbdcpLemkeSettings *s;
    const MbdcpLemkeOutput *out;
    LemkeKept *kept;
    mbdcp_int pivots, limit; /* pivots taken by every strategy together, and their limit */
    MbdcpStatus status;      /* of the last strategy tried */
    int verified;            /* out->z is a verified solution */
    int certified;           /* the ray buffer holds a Farkas certificate */
    int warm;                /* the answer came from the hint or the kept basis */
    /* the solver's state on the scaled problem */
    mbdcp_int n, np;
    mbdcp_int ld; /* the rows of Bc and Mt are ld apart (row_stride) */
    mbdcp_float *Bc;
    mbdcp_int *P, *pos;
    mbdcp_float *Mt, *qs, *cov, *rs, *cs;
    mbdcp_float *xbar, *d, *dnext, *res, *ag, *X;
    mbdcp_float *ratios; /* ratio_test's scratch: x_i^+ / d_i on the blocking rows, else +inf */
    mbdcp_float *qalt;   /* a perturbed q, solved as a problem of its own for its basis */
    mbdcp_int *basis, *cand, *flags;
    mbdcp_int *path;       /* the z-flags of the complementary basis a last path ended on */
    mbdcp_int z0_row;      /* row of z0 while it is basic, else -1 */
    mbdcp_int since;       /* pivots since the last refactorization */
    int stale;             /* refactor before the next decision */
    mbdcp_int entering;    /* the unblocked variable after a ray termination */
    mbdcp_int refactorizations;
    mbdcp_float dmax;      /* max |d_i| of the entering column, from ratio_test */
    mbdcp_float ratio;     /* the worst row's ratio at the last verification (verify()), and its row */
    mbdcp_int worst;
} Lemke;

/* mbdcp_lcp_verify of z on the given data (w and s = L->res filled), keeping the worst row's ratio
 * and index for finish(). */
static int verify(Lemke *L, const mbdcp_float *z)
{
    const mbdcp_int n = L->n;
    row_sums(n, L->M, L->q, L->qmag, z, L->out->w, L->res);
    L->ratio = mbdcp_lcp_row_ratio(n, z, L->out->w, L->res, &L->worst);
    return passes(n, L->ratio, L->s->tol);
}

static mbdcp_float binv_at(const Lemke *L, mbdcp_int i, mbdcp_int c)
{
    return L->pos[c] >= 0 ? L->Bc[(size_t)L->pos[c] * L->ld + i] : (mbdcp_float)(i == c);
}

/* Entry i of the column of variable var in [I, -M', -cov]. */
static mbdcp_float a_at(const Lemke *L, mbdcp_int var, mbdcp_int i)
{
    const mbdcp_int n = L->n;
    if (var < n) return (mbdcp_float)(i == var);
    if (var < 2 * n) return -L->Mt[(size_t)(var - n) * L->ld + i];
    return -L->cov[i];
}

static mbdcp_int complement(mbdcp_int var, mbdcp_int n)
{
    return var < n ? var + n : var - n;
}

static void gather(const Lemke *L, mbdcp_int var, mbdcp_float *ag)
{
    for (mbdcp_int k = 0; k < L->np; ++k) ag[k] = a_at(L, var, L->P[k]);
}

/* y += a x over n entries. */
static inline void axpy(mbdcp_int n, mbdcp_float a, const mbdcp_float *restrict x, mbdcp_float *restrict y)
{
    for (mbdcp_int i = 0; i < n; ++i) y[i] += a * x[i];
}

/* c -= b d, then y += g c, in one pass over c. */
static inline void update_and_add(mbdcp_int n, mbdcp_float b, const mbdcp_float *restrict d, mbdcp_float g,
                                  mbdcp_float *restrict c, mbdcp_float *restrict y)
{
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float ci = c[i] - b * d[i];
        c[i] = ci;
        y[i] += g * ci;
    }
}

/* y_i = a_i on the rows whose column of Binv is e_i, 0 on the others, for the column a of
 * variable var (var < 0: a = q'). */
static void identity_rows(const Lemke *L, mbdcp_int var, mbdcp_float *y)
{
    const mbdcp_int n = L->n;
    if (var >= 0 && var < n) {
        memset(y, 0, (size_t)n * sizeof(mbdcp_float));
        if (L->pos[var] < 0) y[var] = 1.0;
        return;
    }
    const mbdcp_float *a = var < 0 ? L->qs : var < 2 * n ? L->Mt + (size_t)(var - n) * L->ld : L->cov;
    const mbdcp_float sign = var < 0 ? 1.0 : -1.0;
    for (mbdcp_int i = 0; i < n; ++i) y[i] = (mbdcp_float)(L->pos[i] < 0) * (sign * a[i]); /* a product: no branch */
}

/* y = Binv a for variable var (var < 0: a = q') from the gathered a[P] (ag). */
static void binv_times(const Lemke *L, mbdcp_int var, const mbdcp_float *ag, mbdcp_float *y)
{
    const mbdcp_int n = L->n;
    identity_rows(L, var, y);
    for (mbdcp_int k = 0; k < L->np; ++k)
        if (ag[k] != 0.0) axpy(n, ag[k], L->Bc + (size_t)k * L->ld, y);
}

/* d = Binv a for variable var. */
static void column(Lemke *L, mbdcp_int var, mbdcp_float *d)
{
    gather(L, var, L->ag);
    binv_times(L, var, L->ag, d);
}

/* xbar = Binv q'. */
static void basic_values(Lemke *L)
{
    for (mbdcp_int k = 0; k < L->np; ++k) L->ag[k] = L->qs[L->P[k]];
    binv_times(L, -1, L->ag, L->xbar);
}

/* Pivot on row r with entering column d, then form dnext = Binv_new a_next in the same pass
 * over Bc (next_var < 0: no next column). Column by column: Binv_new = Binv - (d - e_r) Binv[r, :] / d_r. */
static void pivot(Lemke *L, const mbdcp_float *d, mbdcp_int r, mbdcp_int next_var, mbdcp_float *dnext)
{
    const mbdcp_int n = L->n;
    if (L->pos[r] < 0) { /* column r leaves the identity: give it a slot */
        const mbdcp_int k = L->np++;
        L->P[k] = r;
        L->pos[r] = k;
        mbdcp_float *Ck = L->Bc + (size_t)k * L->ld;
        memset(Ck, 0, (size_t)n * sizeof(mbdcp_float));
        Ck[r] = 1.0;
    }
    const mbdcp_int np = L->np;
    const mbdcp_float inv = 1.0 / d[r];
    const mbdcp_float xr = L->xbar[r] * inv;
    axpy(n, -xr, d, L->xbar);
    L->xbar[r] = xr;
    if (next_var >= 0) {
        gather(L, next_var, L->ag);
        identity_rows(L, next_var, dnext);
    }
    mbdcp_float dr = 0.0; /* dnext[r], from the exact Ck[r] = br rather than its rounded update */
    for (mbdcp_int k = 0; k < np; ++k) {
        mbdcp_float *restrict Ck = L->Bc + (size_t)k * L->ld;
        const mbdcp_float br = Ck[r] * inv, g = next_var >= 0 ? L->ag[k] : 0.0;
        if (br != 0.0 && g != 0.0)
            update_and_add(n, br, d, g, Ck, dnext);
        else if (br != 0.0)
            axpy(n, -br, d, Ck);
        else if (g != 0.0)
            axpy(n, g, Ck, dnext);
        Ck[r] = br;
        dr += g * br;
    }
    if (next_var >= 0) dnext[r] = dr;
}

/* Row a of the matrix invert_in_place() works on: Bc's row P[a]. */
static inline mbdcp_float *inv_row(const Lemke *L, mbdcp_int a)
{
    return L->Bc + (size_t)L->P[a] * L->ld;
}

/* The row (from c on, of s) with the largest entry in column c, and that entry's magnitude. */
static mbdcp_int pivot_row(const Lemke *L, mbdcp_int s, mbdcp_int c, mbdcp_float *best)
{
    mbdcp_int p = c;
    *best = -1.0;
    for (mbdcp_int a = c; a < s; ++a) {
        const mbdcp_float v = fabs(inv_row(L, a)[c]);
        if (v > *best) {
            *best = v;
            p = a;
        }
    }
    return p;
}

/* Gauss-Jordan on the panel's columns K = [k, ke) alone: for each column, the pivot row
 * interchanged into place (recorded in cand), scaled, and subtracted from every other row, on K
 * only. 0 if a pivot is at or below tiny (or not finite). */
static int reduce_panel(Lemke *L, mbdcp_int s, mbdcp_int k, mbdcp_int ke, mbdcp_float tiny)
{
    for (mbdcp_int c = k; c < ke; ++c) {
        mbdcp_float best;
        const mbdcp_int p = pivot_row(L, s, c, &best);
        if (!(best > tiny) || !isfinite(best)) return 0;
        L->cand[c] = p;
        mbdcp_float *Rc = inv_row(L, c);
        if (p != c) {
            mbdcp_float *Rp = inv_row(L, p);
            for (mbdcp_int j = 0; j < s; ++j) {
                const mbdcp_float t = Rc[j];
                Rc[j] = Rp[j];
                Rp[j] = t;
            }
        }
        const mbdcp_float inv = 1.0 / Rc[c];
        Rc[c] = 1.0;
        for (mbdcp_int j = k; j < ke; ++j) Rc[j] *= inv;
        for (mbdcp_int a = 0; a < s; ++a) {
            if (a == c) continue;
            mbdcp_float *Ra = inv_row(L, a);
            const mbdcp_float f = Ra[c];
            if (f == 0.0) continue;
            Ra[c] = 0.0;
            for (mbdcp_int j = k; j < ke; ++j) Ra[j] -= f * Rc[j];
        }
    }
    return 1;
}

/* Ra[j] += sum_q f[q] x[q][j] for the columns j outside [k, ke) (of s), four terms per pass. */
static void add_products(mbdcp_float *Ra, mbdcp_int s, mbdcp_int k, mbdcp_int ke, mbdcp_int nf,
                         const mbdcp_float *f, const mbdcp_float *const *x)
{
    mbdcp_int q = 0;
    for (; q + 4 <= nf; q += 4) {
        const mbdcp_float f0 = f[q], f1 = f[q + 1], f2 = f[q + 2], f3 = f[q + 3];
        const mbdcp_float *x0 = x[q], *x1 = x[q + 1], *x2 = x[q + 2], *x3 = x[q + 3];
        for (mbdcp_int j = 0; j < k; ++j) Ra[j] += f0 * x0[j] + f1 * x1[j] + f2 * x2[j] + f3 * x3[j];
        for (mbdcp_int j = ke; j < s; ++j) Ra[j] += f0 * x0[j] + f1 * x1[j] + f2 * x2[j] + f3 * x3[j];
    }
    for (; q < nf; ++q) {
        const mbdcp_float f0 = f[q], *x0 = x[q];
        for (mbdcp_int j = 0; j < k; ++j) Ra[j] += f0 * x0[j];
        for (mbdcp_int j = ke; j < s; ++j) Ra[j] += f0 * x0[j];
    }
}

/* The panel's row transformation T applied to the columns outside K = [k, ke): with X = K's
 * rows as they were (copied to L->X), R[a, :] += T[a, K] X for the rows outside K and
 * R[K, :] = T[K, K] X. */
static void update_outside_panel(Lemke *L, mbdcp_int s, mbdcp_int k, mbdcp_int ke)
{
    const mbdcp_int n = L->n;
    for (mbdcp_int c = k; c < ke; ++c) memcpy(L->X + (size_t)(c - k) * n, inv_row(L, c), (size_t)s * sizeof(mbdcp_float));
    for (mbdcp_int a = 0; a < s; ++a) {
        mbdcp_float *Ra = inv_row(L, a);
        mbdcp_float f[PANEL];
        const mbdcp_float *x[PANEL];
        mbdcp_int nf = 0;
        for (mbdcp_int c = k; c < ke; ++c)
            if (Ra[c] != 0.0) {
                f[nf] = Ra[c];
                x[nf++] = L->X + (size_t)(c - k) * n;
            }
        if (a >= k && a < ke) { /* R[a, :] = T[a, K] X outside K */
            for (mbdcp_int j = 0; j < k; ++j) Ra[j] = 0.0;
            for (mbdcp_int j = ke; j < s; ++j) Ra[j] = 0.0;
        }
        add_products(Ra, s, k, ke, nf, f, x);
    }
}

/* In-place Gauss-Jordan inversion, with partial pivoting, of the s x s matrix whose row a is
 * Bc's row P[a] (entries 0..s), blocked by panels K of PANEL columns. The panel's columns are
 * reduced alone (reduce_panel). The pivots of K act on the matrix as a row transformation T that
 * differs from I only in the columns K, and the in-place bookkeeping leaves exactly T[:, K] in
 * them; every other column then becomes T R (update_outside_panel), one store of R per four
 * products (storing every entry once per pivot would bind the inversion to memory traffic). Row
 * interchanges move whole rows (outside K a row is still untouched by the panel) and are undone
 * on the columns at the end. A pivot at or below tiny (or not finite) means singular: returns 0.
 * Scratch: cand (the interchanges), X (PANEL rows of n). */
static int invert_in_place(Lemke *L, mbdcp_int s, mbdcp_float tiny)
{
    const mbdcp_int *perm = L->cand;
    for (mbdcp_int k = 0; k < s; k += PANEL) {
        const mbdcp_int ke = k + PANEL < s ? k + PANEL : s;
        if (!reduce_panel(L, s, k, ke, tiny)) return 0;
        if (k == 0 && ke == s) break; /* one panel: no other columns */
        update_outside_panel(L, s, k, ke);
    }
    for (mbdcp_int c = s - 1; c >= 0; --c) /* undo the row interchanges on the columns */
        if (perm[c] != c)
            for (mbdcp_int a = 0; a < s; ++a) {
                mbdcp_float *Ra = inv_row(L, a);
                const mbdcp_float t = Ra[c];
                Ra[c] = Ra[perm[c]];
                Ra[perm[c]] = t;
            }
    return 1;
}

/* The inversion works on rows (row i of Binv's stored columns in Bc[i ld + 0..np)); the pivots on
 * columns (slot k in Bc[k ld + 0..n)): one in-place transposition of the n x n block turns one
 * into the other. */
static void transpose_columns(Lemke *L)
{
    const mbdcp_int n = L->n;
    for (mbdcp_int i = 0; i < n; ++i)
        for (mbdcp_int k = i + 1; k < n; ++k) {
            const mbdcp_float t = L->Bc[(size_t)i * L->ld + k];
            L->Bc[(size_t)i * L->ld + k] = L->Bc[(size_t)k * L->ld + i];
            L->Bc[(size_t)k * L->ld + i] = t;
        }
}

/* Recompute Binv from the basis (Gauss-Jordan with partial pivoting on B_SS), after moving
 * each basic w_j to row j, then xbar = Binv q'. A pivot of B_SS at or below sing_tol times
 * its largest entry means singular: returns 0 and leaves the state unusable. */
static int refactor(Lemke *L, mbdcp_float sing_tol)
{
    const mbdcp_int n = L->n;
    mbdcp_int *nb = L->cand;
    for (mbdcp_int i = 0; i < n; ++i) nb[i] = -1;
    for (mbdcp_int i = 0; i < n; ++i)
        if (L->basis[i] < n) nb[L->basis[i]] = L->basis[i];
    mbdcp_int k = 0, s = 0;
    for (mbdcp_int i = 0; i < n; ++i) {
        if (L->basis[i] < n) continue;
        while (nb[k] != -1) ++k;
        nb[k] = L->basis[i];
    }
    L->z0_row = -1;
    for (mbdcp_int i = 0; i < n; ++i) {
        L->basis[i] = nb[i];
        L->pos[i] = -1;
        if (nb[i] == 2 * n) L->z0_row = i;
    }
    for (mbdcp_int i = 0; i < n; ++i)
        if (L->basis[i] >= n) {
            L->P[s] = i;
            L->pos[i] = s++;
        }
    L->np = s;
    L->since = 0;
    L->stale = 0;
    L->refactorizations++;

    /* B_SS: row a of the block (constraint S[a]) in Bc's row S[a], column b = position S[b]. */
    mbdcp_float amax = 0.0;
    for (mbdcp_int b = 0; b < s; ++b) {
        const mbdcp_int var = L->basis[L->P[b]];
        for (mbdcp_int a = 0; a < s; ++a) {
            const mbdcp_float v = a_at(L, var, L->P[a]);
            L->Bc[(size_t)L->P[a] * L->ld + b] = v;
            amax = acc_max(amax, fabs(v));
        }
    }
    if (!invert_in_place(L, s, sing_tol * amax)) return 0;
    /* Rows outside S: -B_NS B_SS^-1. */
    mbdcp_float *g = L->ag;
    for (mbdcp_int i = 0; i < n; ++i) {
        if (L->pos[i] >= 0) continue;
        mbdcp_float *Bi = L->Bc + (size_t)i * L->ld;
        for (mbdcp_int b = 0; b < s; ++b) g[b] = a_at(L, L->basis[L->P[b]], i);
        for (mbdcp_int a = 0; a < s; ++a) Bi[a] = 0.0;
        for (mbdcp_int b = 0; b < s; ++b) {
            if (g[b] == 0.0) continue;
            const mbdcp_float *Xb = L->Bc + (size_t)L->P[b] * L->ld;
            for (mbdcp_int a = 0; a < s; ++a) Bi[a] -= g[b] * Xb[a];
        }
    }
    transpose_columns(L);
    basic_values(L);
    return 1;
}

/* x += Binv (a - B x): one round of iterative refinement of x = Binv a, for the basic values
 * (var < 0: a = q') or the column of variable var. */
static void refine(Lemke *L, mbdcp_int var, mbdcp_float *x)
{
    const mbdcp_int n = L->n;
    mbdcp_float *res = L->res;
    if (var < 0)
        memcpy(res, L->qs, (size_t)n * sizeof(mbdcp_float));
    else if (var < n) {
        memset(res, 0, (size_t)n * sizeof(mbdcp_float));
        res[var] = 1.0;
    } else {
        const mbdcp_float *a = var < 2 * n ? L->Mt + (size_t)(var - n) * L->ld : L->cov;
        for (mbdcp_int k = 0; k < n; ++k) res[k] = -a[k];
    }
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_int v = L->basis[i];
        const mbdcp_float xi = x[i];
        if (xi == 0.0) continue;
        if (v < n) {
            res[v] -= xi;
        } else {
            const mbdcp_float *col = v < 2 * n ? L->Mt + (size_t)(v - n) * L->ld : L->cov;
            for (mbdcp_int k = 0; k < n; ++k) res[k] += xi * col[k];
        }
    }
    for (mbdcp_int k = 0; k < L->np; ++k) L->ag[k] = res[L->P[k]];
    for (mbdcp_int i = 0; i < n; ++i) x[i] += (mbdcp_float)(L->pos[i] < 0) * res[i];
    for (mbdcp_int k = 0; k < L->np; ++k)
        if (L->ag[k] != 0.0) axpy(n, L->ag[k], L->Bc + (size_t)k * L->ld, x);
}

/* Among the candidate rows cand[0..nc-1] (tied for the minimum ratio), the row whose Binv row
 * divided by d is lexicographically smallest. Entries that are zero in exact arithmetic carry
 * rounding noise, so two entries compare equal when they differ by less than TIGHT_TIE times
 * the largest entry of the rows. */
static mbdcp_int lexicographic_choice(const Lemke *L, const mbdcp_float *d, mbdcp_int *cand, mbdcp_int nc)
{
    const mbdcp_int n = L->n;
    mbdcp_float scale = 0.0;
    for (mbdcp_int c = 0; c < nc; ++c) {
        const mbdcp_int i = cand[c];
        mbdcp_float m = L->pos[i] < 0 ? 1.0 : 0.0;
        for (mbdcp_int k = 0; k < L->np; ++k) m = fmax(m, fabs(L->Bc[(size_t)k * L->ld + i]));
        scale = acc_max(scale, m / d[i]);
    }
    const mbdcp_float eps = TIGHT_TIE * scale;
    for (mbdcp_int k = 0; k < n && nc > 1; ++k) {
        mbdcp_float vmin = INFINITY;
        for (mbdcp_int c = 0; c < nc; ++c) vmin = fmin(vmin, binv_at(L, cand[c], k) / d[cand[c]]);
        mbdcp_int kept = 0;
        for (mbdcp_int c = 0; c < nc; ++c)
            if (binv_at(L, cand[c], k) / d[cand[c]] <= vmin + eps) cand[kept++] = cand[c];
        nc = kept;
    }
    return cand[0];
}

/* t_i = x_i^+ / d_i on the rows that block (d_i > ptol), +inf on the others; returns min_i t_i.
 * Every row is divided and the others masked: a pass without branches, which vectorizes
 * (whether a row blocks is a coin toss for a branch predictor). */
static mbdcp_float blocking_ratios(mbdcp_int n, const mbdcp_float *restrict x, const mbdcp_float *restrict d,
                                   mbdcp_float ptol, mbdcp_float *restrict t)
{
    for (mbdcp_int i = 0; i < n; ++i) { /* 1 / +0 = +inf on the rows that do not block */
        const mbdcp_float di = d[i], xp = pos_part(x[i]);
        t[i] = (di > ptol ? xp : 1.0) / (di > ptol ? di : 0.0);
    }
    mbdcp_float m0 = INFINITY, m1 = INFINITY, m2 = INFINITY, m3 = INFINITY; /* exact in any order */
    mbdcp_int i = 0;
    for (; i + 4 <= n; i += 4) {
        m0 = t[i] < m0 ? t[i] : m0;
        m1 = t[i + 1] < m1 ? t[i + 1] : m1;
        m2 = t[i + 2] < m2 ? t[i + 2] : m2;
        m3 = t[i + 3] < m3 ? t[i + 3] : m3;
    }
    for (; i < n; ++i) m0 = t[i] < m0 ? t[i] : m0;
    m0 = m1 < m0 ? m1 : m0;
    m2 = m3 < m2 ? m3 : m2;
    return m2 < m0 ? m2 : m0;
}

/* The blocking rows whose basic value is within `loose` of zero at the step theta. */
static mbdcp_int near_rows(mbdcp_int n, const mbdcp_float *restrict x, const mbdcp_float *restrict d,
                           mbdcp_float ptol, mbdcp_float theta, mbdcp_float loose)
{
    mbdcp_float count = 0.0; /* a double: the loop then vectorizes */
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float di = d[i], gap = pos_part(x[i]) - theta * di;
        count += ((di > ptol) & (gap <= loose)) ? 1.0 : 0.0;
    }
    return (mbdcp_int)count;
}

enum { RATIO_ROW, RATIO_RAY, RATIO_UNCLEAR, RATIO_NONFINITE };

/* Minimum-ratio test for the entering column d; on RATIO_ROW *r is the leaving row. With
 * `fresh` false, a comparison too close to call gives RATIO_UNCLEAR (refactor and retry). */
static int ratio_test(Lemke *L, const mbdcp_float *d, mbdcp_float pivot_tol, int fresh, mbdcp_int *r)
{
    const mbdcp_int n = L->n;
    const mbdcp_float *xbar = L->xbar;
    const mbdcp_float dmax = mbdcp_norm_inf((size_t)n, d), xmax = mbdcp_norm_inf((size_t)n, xbar);
    L->dmax = dmax;
    if (!isfinite(dmax) || !isfinite(xmax)) return RATIO_NONFINITE;
    const mbdcp_float ptol = pivot_tol * dmax;
    const mbdcp_float theta = blocking_ratios(n, xbar, d, ptol, L->ratios);
    if (!(theta < INFINITY)) return RATIO_RAY;
    mbdcp_int imin = 0;
    while (L->ratios[imin] != theta) ++imin; /* the first row at the minimum */
    /* ties: how far each blocking row's basic value would be from zero at the step theta */
    const mbdcp_float tight = TIGHT_TIE * xmax, loose = LOOSE_TIE * xmax;
    mbdcp_int nc = 0, z0_tied = 0, unclear = 0;
    const int imin_near = pos_part(xbar[imin]) - theta * d[imin] <= loose;
    if (imin_near && near_rows(n, xbar, d, ptol, theta, loose) == 1) { /* imin alone: the usual case */
        L->cand[nc++] = imin;
        z0_tied = imin == L->z0_row;
    } else {
        for (mbdcp_int i = 0; i < n; ++i) {
            if (!(d[i] > ptol)) continue;
            const mbdcp_float gap = pos_part(xbar[i]) - theta * d[i];
            if (!(gap <= loose) && i != imin) continue;
            if (i == imin || gap <= tight) {
                L->cand[nc++] = i;
                if (i == L->z0_row) z0_tied = 1;
            } else {
                unclear = 1;
            }
        }
    }
    if (unclear && !fresh) return RATIO_UNCLEAR;
    if (z0_tied)
        *r = L->z0_row; /* z0 leaves whenever it can: ends on a solution, never a spurious ray */
    else
        *r = nc == 1 ? L->cand[0] : lexicographic_choice(L, d, L->cand, nc);
    return RATIO_ROW;
}

/* Nearest power of two to x > 0, capped at 2^LIMIT_LOG2. */
static mbdcp_float pow2_near(mbdcp_float x)
{
    int e;
    const mbdcp_float m = frexp(x, &e); /* x = m 2^e, m in [0.5, 1) */
    if (m < 0.70710678118654752) --e;
    if (e > LIMIT_LOG2) e = LIMIT_LOG2;
    if (e < -LIMIT_LOG2) e = -LIMIT_LOG2;
    return ldexp(1.0, e);
}

/* max_j |x_j| (four running maxima: no single chain of comparisons), and colmax_j raised to |x_j|
 * (a pass of its own, which vectorizes); *nonfinite becomes NaN if some x_j is NaN or infinite
 * (x_j times zero is then NaN). */
static mbdcp_float row_and_column_max(mbdcp_int n, const mbdcp_float *restrict x, mbdcp_float *restrict colmax,
                                      mbdcp_float *nonfinite)
{
    for (mbdcp_int j = 0; j < n; ++j) {
        const mbdcp_float a = fabs(x[j]), c = colmax[j];
        colmax[j] = a > c ? a : c;
    }
    mbdcp_float m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, b0 = 0.0, b1 = 0.0;
    mbdcp_int j = 0;
    for (; j + 4 <= n; j += 4) {
        m0 = acc_max(m0, fabs(x[j]));
        m1 = acc_max(m1, fabs(x[j + 1]));
        m2 = acc_max(m2, fabs(x[j + 2]));
        m3 = acc_max(m3, fabs(x[j + 3]));
        b0 += 0.0 * x[j] + 0.0 * x[j + 1];
        b1 += 0.0 * x[j + 2] + 0.0 * x[j + 3];
    }
    for (; j < n; ++j) {
        m0 = acc_max(m0, fabs(x[j]));
        b0 += 0.0 * x[j];
    }
    *nonfinite += b0 + b1;
    return acc_max(acc_max(m0, m1), acc_max(m2, m3));
}

/* Mt = f M^T (columns of M contiguous, ld apart). */
static void scaled_transpose(mbdcp_int n, mbdcp_int ld, const mbdcp_float *restrict M, mbdcp_float f,
                             mbdcp_float *restrict Mt)
{
    for (mbdcp_int j = 0; j < n; ++j)
        for (mbdcp_int i = 0; i < n; ++i) Mt[(size_t)j * ld + i] = f * M[(size_t)i * n + j];
}

/* Ruiz's rounds of row and column scales (powers of two) on M (rs, cs start at 1; tmp: n scratch). */
static void ruiz(mbdcp_int n, const mbdcp_float *M, mbdcp_float *rs, mbdcp_float *cs, mbdcp_float *tmp)
{
    for (int round = 0; round < RUIZ_ROUNDS; ++round) {
        int changed = 0;
        for (mbdcp_int i = 0; i < n; ++i) {
            mbdcp_float m = 0.0;
            for (mbdcp_int j = 0; j < n; ++j) m = acc_max(m, fabs(M[(size_t)i * n + j]) * cs[j]);
            m *= rs[i];
            if (m > 0.0) {
                const mbdcp_float f = pow2_near(1.0 / sqrt(m));
                changed |= f != 1.0;
                rs[i] *= f;
            }
        }
        for (mbdcp_int j = 0; j < n; ++j) tmp[j] = 0.0;
        for (mbdcp_int i = 0; i < n; ++i)
            for (mbdcp_int j = 0; j < n; ++j) tmp[j] = acc_max(tmp[j], fabs(M[(size_t)i * n + j]) * rs[i]);
        for (mbdcp_int j = 0; j < n; ++j) {
            const mbdcp_float m = tmp[j] * cs[j];
            if (m > 0.0) {
                const mbdcp_float f = pow2_near(1.0 / sqrt(m));
                changed |= f != 1.0;
                cs[j] *= f;
            }
        }
        if (!changed) break;
    }
}

/* Row and column scales (powers of two), the scaled M transposed and the scaled q. The pass that
 * measures the rows and columns also copies M transposed and checks that M is finite; data scaled
 * as a whole (the common case) are then multiplied in place, by a power of two, so exactly as from
 * M. Returns 0 if M holds a NaN or an infinity. */
static int equilibrate(Lemke *L)
{
    const mbdcp_int n = L->n, scale = L->s->scale;
    const mbdcp_float *M = L->M, *q = L->q;
    mbdcp_float *rs = L->rs, *cs = L->cs, *tmp = L->res, *Mt = L->Mt;
    for (mbdcp_int i = 0; i < n; ++i) rs[i] = cs[i] = 1.0;
    const mbdcp_float qmax = mbdcp_norm_inf((size_t)n, q);
    /* rows and columns within a factor 2^SPREAD_LOG2 of each other: one factor for all */
    mbdcp_float rlo = INFINITY, rhi = 0.0, clo = INFINITY, chi = 0.0, nonfinite = 0.0;
    for (mbdcp_int j = 0; j < n; ++j) tmp[j] = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float m = row_and_column_max(n, M + (size_t)i * n, tmp, &nonfinite);
        if (m > 0.0) {
            rlo = m < rlo ? m : rlo;
            rhi = acc_max(rhi, m);
        }
    }
    if (nonfinite != 0.0) return 0;
    const mbdcp_float amax = rhi;
    int uniform = 1;
    if (scale && amax > 0.0) {
        for (mbdcp_int j = 0; j < n; ++j)
            if (tmp[j] > 0.0) {
                clo = tmp[j] < clo ? tmp[j] : clo;
                chi = acc_max(chi, tmp[j]);
            }
        const mbdcp_float spread = ldexp(1.0, SPREAD_LOG2);
        uniform = rhi <= spread * rlo && chi <= spread * clo;
        if (uniform) {
            const mbdcp_float f = pow2_near(1.0 / amax); /* keeps the pivot path of the given data */
            for (mbdcp_int i = 0; i < n; ++i) rs[i] = f;
        } else {
            ruiz(n, M, rs, cs, tmp);
        }
        /* keep q' representable */
        const mbdcp_float limit = ldexp(1.0, LIMIT_LOG2);
        for (mbdcp_int i = 0; i < n; ++i)
            if (qmax > 0.0 && rs[i] * qmax > limit) rs[i] = pow2_near(limit / qmax);
    }
    if (uniform) { /* rs[i] = f for every i (or 1): Mt = f M^T */
        const mbdcp_float f = n > 0 ? rs[0] : 1.0;
        for (mbdcp_int i = 0; i < n; ++i) L->qs[i] = f * q[i];
        scaled_transpose(n, L->ld, M, f, Mt);
        return 1;
    }
    for (mbdcp_int i = 0; i < n; ++i) {
        L->qs[i] = rs[i] * q[i];
        for (mbdcp_int j = 0; j < n; ++j) Mt[(size_t)j * L->ld + i] = rs[i] * M[(size_t)i * n + j] * cs[j];
    }
    return 1;
}

/* Basis inverse I, basic variables w, covering vector cov. */
static void cold_basis(Lemke *L)
{
    for (mbdcp_int i = 0; i < L->n; ++i) {
        L->basis[i] = i;
        L->pos[i] = -1;
        L->xbar[i] = L->qs[i];
    }
    L->np = 0;
    L->z0_row = -1;
    L->since = 0;
    L->stale = 0;
}

/* The cold start of path `attempt` (0: covering vector 1; 1: another, irrational one): the basis
 * of all w, d = -cov, and the row z0 enters at, the most negative q_i / cov_i (ties: the largest
 * i); -1 when q >= 0 (z = 0 solves it). */
static mbdcp_int cold_start(Lemke *L, const mbdcp_float *q, int attempt)
{
    cold_basis(L);
    mbdcp_int r = -1;
    if (attempt == 0) { /* cov = 1: the ratios are q' itself, no division */
        for (mbdcp_int i = 0; i < L->n; ++i) {
            L->cov[i] = 1.0;
            L->d[i] = -1.0;
            if (q[i] < 0.0 && (r < 0 || L->qs[i] <= L->qs[r])) r = i;
        }
        return r;
    }
    for (mbdcp_int i = 0; i < L->n; ++i) {
        L->cov[i] = 1.0 + 0.5 * fmod(0.6180339887498949 * (i + 1), 1.0);
        L->d[i] = -L->cov[i];
        if (q[i] < 0.0 && (r < 0 || L->qs[i] / L->cov[i] <= L->qs[r] / L->cov[r])) r = i;
    }
    return r;
}

/* The most negative basic value (ties: the largest index, which keeps the tableau
 * lexicographically positive on a cold start), or -1 if none is negative. */
static mbdcp_int most_negative(const Lemke *L)
{
    mbdcp_int r = -1;
    for (mbdcp_int i = 0; i < L->n; ++i)
        if (L->xbar[i] < 0.0 && (r < 0 || L->xbar[i] <= L->xbar[r])) r = i;
    return r;
}

/* A basis's fingerprint is the sum of its variables' hashes (splitmix64), so that a pivot
 * updates it in O(1). */
static uint64_t var_hash(mbdcp_int var)
{
    uint64_t x = (uint64_t)var + 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* Complementary pivoting from the current basis with z0 entering at row r (L->d = its column).
 * Returns the status; counts pivots in L->pivots up to limit. On a ray, L->entering is the
 * unblocked variable and L->d its column. Lemke's path never meets a basis twice; with ties
 * decided in rounding it can cycle until the pivot limit: a basis seen in the last CYCLE_RING
 * pivots ends the run as a numerical error, and the caller takes another path. */
static MbdcpStatus run(Lemke *L, mbdcp_int r, mbdcp_int limit)
{
    const MbdcpLemkeSettings *s = L->s;
    const mbdcp_int n = L->n, z0 = 2 * n, period = n > 64 ? n : 64;
    mbdcp_int entering = z0;
    L->dmax = mbdcp_norm_inf((size_t)n, L->d); /* then ratio_test's, of the same column */
    uint64_t seen[CYCLE_RING], fp = 0;
    for (mbdcp_int i = 0; i < n; ++i) fp += var_hash(L->basis[i]);
    seen[0] = fp;
    for (mbdcp_int stored = 1;; ++stored) { /* seen[] holds the last min(stored, CYCLE_RING) bases */
        const mbdcp_int leaving = L->basis[r];
        const mbdcp_int next = leaving == z0 ? -1 : complement(leaving, n);
        const int small = fabs(L->d[r]) < SMALL_PIVOT * L->dmax;
        pivot(L, L->d, r, next, L->dnext);
        L->basis[r] = entering;
        fp += var_hash(entering) - var_hash(leaving);
        ++L->pivots;
        ++L->since;
        L->z0_row = entering == z0 ? r : (leaving == z0 ? -1 : L->z0_row);
        if (mbdcp_monitor_call(&s->monitor, L->pivots, entering, leaving, NAN)) return MBDCP_INTERRUPTED;
        if (leaving == z0) return MBDCP_SOLVED; /* a complementary basis */
        if (L->pivots >= limit) return MBDCP_MAX_ITERATIONS;
        for (mbdcp_int k = 0; k < stored && k < CYCLE_RING; ++k)
            if (seen[k] == fp) return MBDCP_NUMERICAL_ERROR;
        seen[stored % CYCLE_RING] = fp;
        entering = next;
        mbdcp_float *t = L->d;
        L->d = L->dnext;
        L->dnext = t;
        if (small || L->since >= period) L->stale = 1;
        if (L->stale) {
            if (!refactor(L, SINGULAR)) return MBDCP_NUMERICAL_ERROR;
            column(L, entering, L->d);
            refine(L, -1, L->xbar);
            refine(L, entering, L->d);
        }
        int rt = ratio_test(L, L->d, s->pivot_tol, L->since == 0, &r);
        if (rt == RATIO_UNCLEAR) {
            /* decide on refined values: one round of refinement with the updated inverse
             * costs a product, not a factorization */
            refine(L, -1, L->xbar);
            refine(L, entering, L->d);
            rt = ratio_test(L, L->d, s->pivot_tol, 1, &r);
        }
        if (rt == RATIO_RAY && L->since > 0) {
            /* before reporting a ray: a basis inverse recomputed from the basis, not updated */
            if (!refactor(L, SINGULAR)) return MBDCP_NUMERICAL_ERROR;
            column(L, entering, L->d);
            refine(L, -1, L->xbar);
            refine(L, entering, L->d);
            rt = ratio_test(L, L->d, s->pivot_tol, 1, &r);
        }
        if (rt == RATIO_NONFINITE) return MBDCP_NUMERICAL_ERROR;
        if (rt == RATIO_RAY) {
            L->entering = entering;
            return MBDCP_RAY_TERMINATION;
        }
    }
}

/* z = C max(z', 0) from the basic values. */
static void basic_point(const Lemke *L, mbdcp_float *z)
{
    const mbdcp_int n = L->n;
    memset(z, 0, (size_t)n * sizeof(mbdcp_float));
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_int v = L->basis[i];
        if (v >= n && v < 2 * n) z[v - n] = L->cs[v - n] * pos_part(L->xbar[i]);
    }
}

/* Zero the z_j > 0 whose w_j is not negligible (w_j > tol s_j) but which are themselves
 * negligible in every row they enter (|M_ij| z_j <= tol s_i / 2): a rounding-level impulse beside
 * a separating gap. 1 if any changed. */
static int drop_negligible(mbdcp_int n, const mbdcp_float *M, mbdcp_float tol, mbdcp_float *z, const mbdcp_float *w,
                           const mbdcp_float *s)
{
    int changed = 0;
    for (mbdcp_int j = 0; j < n; ++j) {
        if (!(z[j] > 0.0) || !(w[j] > tol * s[j])) continue;
        int negligible = 1;
        for (mbdcp_int i = 0; i < n && negligible; ++i) negligible = fabs(M[(size_t)i * n + j]) * z[j] <= 0.5 * tol * s[i];
        if (negligible) {
            z[j] = 0.0;
            changed = 1;
        }
    }
    return changed;
}

/* Failing rows of z (mbdcp_lcp_verify's rule at tolerance tol, on the computed w and s). */
static int row_fails(mbdcp_float z, mbdcp_float w, mbdcp_float s, mbdcp_float tol)
{
    return w < -tol * s || (z > 0.0 && w > tol * s);
}

/* Would z_j + delta (>= 0) leave every row it enters passing, or failing no worse, and mend row i?
 * Checks column j only: O(n). */
static int move_helps(mbdcp_int n, const mbdcp_float *M, mbdcp_float tol, const mbdcp_float *z, const mbdcp_float *w,
                      const mbdcp_float *s, mbdcp_int i, mbdcp_int j, mbdcp_float delta)
{
    const mbdcp_float zj = z[j] + delta;
    if (!(zj >= 0.0) || !isfinite(zj)) return 0;
    for (mbdcp_int k = 0; k < n; ++k) {
        const mbdcp_float a = M[(size_t)k * n + j];
        if (a == 0.0 && k != j) continue;
        const mbdcp_float wk = w[k] + a * delta, sk = s[k] + fabs(a) * (zj - z[j]);
        const mbdcp_float zk = k == j ? zj : z[k];
        const int was = row_fails(z[k], w[k], s[k], tol), now = row_fails(zk, wk, sk, 0.5 * tol);
        if (k == i ? now : now && !was) return 0;
    }
    return 1;
}

/* Apply z_j += delta to z, w and s. */
static void apply_move(mbdcp_int n, const mbdcp_float *M, mbdcp_float *z, mbdcp_float *w, mbdcp_float *s,
                       mbdcp_int j, mbdcp_float delta)
{
    const mbdcp_float zj = z[j] + delta;
    for (mbdcp_int k = 0; k < n; ++k) {
        const mbdcp_float a = M[(size_t)k * n + j];
        w[k] += a * delta;
        s[k] += fabs(a) * (zj - z[j]);
    }
    z[j] = zj;
}

/* Mend failing row i by one variable: z_i to zero (w_i too large beside z_i > 0), a z_j that pulls
 * w_i down to zero or less, or one that lifts w_i to zero. 1 if a move was made. */
static int mend_row(mbdcp_int n, const mbdcp_float *M, mbdcp_float tol, mbdcp_float *z, mbdcp_float *w,
                    mbdcp_float *s, mbdcp_int i)
{
    const mbdcp_float *Mi = M + (size_t)i * n;
    if (w[i] > 0.0) {
        if (move_helps(n, M, tol, z, w, s, i, i, -z[i])) {
            apply_move(n, M, z, w, s, i, -z[i]);
            return 1;
        }
        return 0;
    }
    for (mbdcp_int j = 0; j < n; ++j) {
        if (Mi[j] == 0.0) continue;
        /* w_i + M_ij delta = 0; a decrease may also take z_j to zero */
        mbdcp_float delta = -w[i] / Mi[j];
        if (delta < -z[j]) delta = -z[j];
        if (delta != 0.0 && move_helps(n, M, tol, z, w, s, i, j, delta)) {
            apply_move(n, M, z, w, s, j, delta);
            return 1;
        }
    }
    return 0;
}

/* A few passes of single-variable moves over the rows that fail at their own scale: the rounding
 * of a degenerate basis leaves impulses of 1e-30 where a contact's normal impulse is zero, or a
 * separating contact's tangential speed of 1e-10 without its sliding speed. Each move mends one
 * row and breaks none, judged on the computed w and s; the caller verifies the result. 1 if z
 * changed. */
static int mend_rows(mbdcp_int n, const mbdcp_float *M, mbdcp_float tol, mbdcp_float *z, mbdcp_float *w,
                     mbdcp_float *s)
{
    int changed = 0;
    for (int pass = 0; pass < MEND_PASSES; ++pass) {
        int moved = 0, failing = 0;
        for (mbdcp_int i = 0; i < n; ++i) {
            if (!row_fails(z[i], w[i], s[i], 0.5 * tol)) continue;
            ++failing;
            moved += mend_row(n, M, tol, z, w, s, i);
        }
        changed |= moved > 0;
        if (!moved || moved == failing) break;
    }
    return changed;
}

/* Zero the basic z_j whose value is within the rounding error of its computation from q',
 * NOISE (n + 2) eps (|Binv| |q'|)_i for its row i: a degenerate basic variable, zero in exact
 * arithmetic, whose 1e-30 would fail a row that holds nothing else. 1 if any changed. */
static int drop_rounding(const Lemke *L, mbdcp_float *z)
{
    const mbdcp_int n = L->n;
    const mbdcp_float rel = NOISE * (mbdcp_float)(n + 2) * DBL_EPSILON;
    int changed = 0;
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_int v = L->basis[i];
        if (v < n || v >= 2 * n || z[v - n] == 0.0) continue;
        mbdcp_float mag = L->pos[i] < 0 ? fabs(L->qs[i]) : 0.0;
        for (mbdcp_int k = 0; k < L->np; ++k) mag += fabs(L->Bc[(size_t)k * L->ld + i]) * fabs(L->qs[L->P[k]]);
        if (fabs(L->xbar[i]) <= rel * mag) {
            z[v - n] = 0.0;
            changed = 1;
        }
    }
    return changed;
}

/* z_j <= CLEAN_ZERO n eps max z set to zero: a cruder cut, for when the others do not suffice. */
static int drop_small(mbdcp_int n, mbdcp_float *z)
{
    const mbdcp_float cut = CLEAN_ZERO * n * DBL_EPSILON * mbdcp_norm_inf((size_t)n, z);
    int changed = 0;
    for (mbdcp_int j = 0; j < n; ++j)
        if (z[j] > 0.0 && z[j] <= cut) {
            z[j] = 0.0;
            changed = 1;
        }
    return changed;
}

/* The basic point into out->z, w into out->w (s into L->res); 1 if it verifies on the given data.
 * A point that fails is cleaned of what rounding left in it and tried again: basic values within
 * their rounding error (drop_rounding), negligible impulses beside a gap (drop_negligible), then
 * single-variable mends of the rows that still fail (mend_rows); last, with a cruder cut of small
 * values (drop_small). On a degenerate problem (a box resting on four corners, a pile at rest) a
 * zero impulse comes out as 1e-14 or 1e-30 and fails a row that is all rounding. The cleaned
 * point must pass the same verification; otherwise the basic point itself is reported. */
static int extract(Lemke *L)
{
    const mbdcp_int n = L->n;
    const mbdcp_float tol = L->s->tol, *M = L->M;
    mbdcp_float *z = L->out->z, *w = L->out->w, *s = L->res;
    basic_point(L, z);
    if (verify(L, z)) return 1;
    if (drop_rounding(L, z) && verify(L, z)) return 1;
    int changed = drop_negligible(n, M, tol, z, w, s);
    changed |= mend_rows(n, M, tol, z, w, s);
    if (changed && verify(L, z)) return 1;
    if (drop_small(n, z)) {
        if (verify(L, z)) return 1;
        mend_rows(n, M, tol, z, w, s);
        if (verify(L, z)) return 1;
    }
    basic_point(L, z);
    verify(L, z);
    return 0;
}

/* Is y >= 0 (n entries, scaled to max 1) a Farkas certificate of infeasibility of LCP(M, q):
 * M^T y <= 0 and q^T y < 0, each column and q^T y at its own scale (mty, aty: n scratch each)? */
static int farkas(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, mbdcp_float tol, mbdcp_float *y,
                  mbdcp_float *mty, mbdcp_float *aty)
{
    mbdcp_float ymax = 0.0, qy = 0.0, aqy = 0.0;
    for (mbdcp_int j = 0; j < n; ++j) ymax = fmax(ymax, y[j]);
    if (!(ymax > 0.0) || !isfinite(ymax)) return 0;
    for (mbdcp_int j = 0; j < n; ++j) {
        y[j] /= ymax;
        mty[j] = aty[j] = 0.0;
    }
    for (mbdcp_int i = 0; i < n; ++i) {
        if (y[i] == 0.0) continue;
        const mbdcp_float *Mi = M + (size_t)i * n;
        for (mbdcp_int j = 0; j < n; ++j) {
            mty[j] += Mi[j] * y[i];
            aty[j] += fabs(Mi[j]) * y[i];
        }
        qy += q[i] * y[i];
        aqy += fabs(q[i]) * y[i];
    }
    const mbdcp_float floor_ = (mbdcp_float)(n + 2) * (DBL_MIN * DBL_EPSILON);
    for (mbdcp_int j = 0; j < n; ++j)
        if (mty[j] > tol * aty[j] + floor_) return 0;
    return qy < -tol * aqy;
}

/* The certificate's buffer: the caller's, or scratch. */
static mbdcp_float *ray_buffer(Lemke *L) { return L->out->ray ? L->out->ray : L->dnext; }

/* A certificate of infeasibility from a ray (L->entering unbounded, column L->d): its z-part y'
 * (in the scaled problem) certifies LCP(M', q') when M' is copositive-plus; mapped back,
 * y = R y' certifies LCP(M, q) (M' = R M C), and when M itself is copositive-plus the z-part
 * C y' in the original units does. Both are tried; sets L->certified if one is a Farkas
 * certificate (left in the ray buffer), else clears the buffer. */
static int certify_ray(Lemke *L)
{
    const mbdcp_int n = L->n, entering = L->entering;
    mbdcp_float *y = ray_buffer(L);
    for (int map = 0; map < 2 && !L->certified; ++map) {
        memset(y, 0, (size_t)n * sizeof(mbdcp_float));
        if (entering >= n && entering < 2 * n) y[entering - n] = 1.0;
        for (mbdcp_int i = 0; i < n; ++i) {
            const mbdcp_int v = L->basis[i];
            if (v >= n && v < 2 * n) y[v - n] = pos_part(-L->d[i]);
        }
        for (mbdcp_int j = 0; j < n; ++j) y[j] *= map == 0 ? L->cs[j] : L->rs[j];
        L->certified = farkas(n, L->M, L->q, L->s->tol, y, L->res, L->ag);
    }
    if (!L->certified) memset(y, 0, (size_t)n * sizeof(mbdcp_float));
    return L->certified;
}

/* Does some row of the verified z cancel more than 1/sqrt(tol): (|M||z|)_i against |w_i| + |q_i|?
 * A huge z that nearly solves an infeasible monotone LCP (along a direction M nearly annihilates)
 * does. One that does not cannot be a certificate too: its rows hold to sqrt(tol) of |w| + |q|. */
static int cancels(const Lemke *L)
{
    const mbdcp_float *w = L->out->w, *s = L->res, cancel = 1.0 / sqrt(L->s->tol);
    for (mbdcp_int i = 0; i < L->n; ++i)
        if (s[i] > cancel * (fabs(w[i]) + q_size(L->q, L->qmag, i))) return 1;
    return 0;
}

/* A verified z may also be, scaled, a Farkas certificate (z >= 0, M^T z <= 0, q^T z < 0): both
 * hold only within the tolerance, on an infeasible LCP whose huge z hides a tiny negative w under
 * the tolerance its own size sets. Infeasibility wins (sets L->certified). Such a z cancels
 * (cancels()), and rounding leaves its direction a component of about 1e-5 in the range of M: the
 * certificate is judged at sqrt(tol). A z that does not cancel is not tested (see cancels()); nor
 * is one with q^T z >= 0. */
static int certify_answer(Lemke *L)
{
    const mbdcp_int n = L->n;
    mbdcp_float qz = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) qz += L->q[i] * L->out->z[i];
    if (!(qz < 0.0) || !cancels(L)) return 0;
    mbdcp_float *y = ray_buffer(L);
    memcpy(y, L->out->z, (size_t)n * sizeof(mbdcp_float));
    L->certified = farkas(n, L->M, L->q, sqrt(L->s->tol), y, L->res, L->ag);
    if (!L->certified) memset(y, 0, (size_t)n * sizeof(mbdcp_float));
    return L->certified;
}

/* Is (M + M^T)/2 + delta I positive definite for a tiny delta (M positive semidefinite, so
 * copositive-plus)? Uses scratch (n x n). */
static int semidefinite(mbdcp_int n, const mbdcp_float *M, mbdcp_float *scratch)
{
    mbdcp_float dmax = 0.0;
    for (mbdcp_int i = 0; i < n; ++i)
        for (mbdcp_int j = 0; j < n; ++j) {
            const mbdcp_float h = 0.5 * (M[(size_t)i * n + j] + M[(size_t)j * n + i]);
            scratch[(size_t)i * n + j] = h;
            if (i == j) dmax = acc_max(dmax, fabs(h));
        }
    const mbdcp_float delta = 1e-10 * dmax + DBL_MIN;
    for (mbdcp_int i = 0; i < n; ++i) scratch[(size_t)i * n + i] += delta;
    return mbdcp_cholesky(n, scratch, 0.0) == MBDCP_OK;
}

/* From the current basis (inverse up to date, xbar = Binv q'): done if it is feasible, else z0
 * enters with the covering vector B 1 over every row (`all`: the cold start's shape in the basis'
 * own coordinates, as warm starts and re-solves use it), or B 1_I over the infeasible rows I only,
 * so that only those move (polish's first round, for rounding-level infeasibilities). */
static MbdcpStatus repair(Lemke *L, mbdcp_int limit, int all)
{
    const mbdcp_int n = L->n;
    const mbdcp_int r = most_negative(L);
    if (r < 0) return MBDCP_SOLVED;
    for (mbdcp_int k = 0; k < n; ++k) L->cov[k] = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) {
        L->d[i] = 0.0;
        if (!(L->xbar[i] < 0.0) && !all) continue;
        L->d[i] = -1.0;
        const mbdcp_int v = L->basis[i];
        if (v < n)
            L->cov[v] += 1.0;
        else
            for (mbdcp_int k = 0; k < n; ++k) L->cov[k] -= L->Mt[(size_t)(v - n) * L->ld + k];
    }
    return run(L, r, limit);
}

/* Are the basic values nonnegative up to rounding (CLEAN_ZERO n eps max |xbar|)? A warm basis that
 * is the answer typically has degenerate values at -1e-17 (a sticking contact: lam = 0 and a
 * zero friction impulse basic); letting z0 take them out can end on a spurious ray along the
 * degenerate direction (beta+ and beta- of one contact growing together), so such a basis goes
 * to polish (which verifies it) as it is. */
static int nearly_feasible(const Lemke *L)
{
    mbdcp_float lo = 0.0, big = 0.0;
    for (mbdcp_int i = 0; i < L->n; ++i) {
        lo = L->xbar[i] < lo ? L->xbar[i] : lo;
        big = acc_max(big, fabs(L->xbar[i]));
    }
    return lo >= -CLEAN_ZERO * L->n * DBL_EPSILON * big;
}

/* Has a strategy settled the outcome (a verified answer, a certificate, an interrupt, the limit)? */
static int settled(const Lemke *L)
{
    return L->verified || L->certified || L->status == MBDCP_INTERRUPTED || L->pivots >= L->limit;
}

/* Refine and verify the basic solution of a complementary basis; once more after a
 * refactorization if needed. A basis whose solution still fails (typically a degenerate
 * basic variable at -1e-16 where data was computed with rounding) is repaired by a warm
 * start from it: z0 moves the infeasible rows, then (second round) all rows. A repair that ends
 * on a certified ray proves infeasibility. Sets L->verified or L->certified; returns the status. */
static MbdcpStatus polish(Lemke *L)
{
    const mbdcp_int n = L->n, refine_rounds = L->s->refine;
    for (mbdcp_int k = 0; k < refine_rounds; ++k) refine(L, -1, L->xbar);
    if ((L->verified = extract(L))) return MBDCP_SOLVED;
    if (L->since > 0 && refactor(L, SINGULAR)) {
        for (mbdcp_int k = 0; k < refine_rounds; ++k) refine(L, -1, L->xbar);
        if ((L->verified = extract(L))) return MBDCP_SOLVED;
    }
    for (int round = 0; round < 2 && L->pivots < L->limit; ++round) {
        for (mbdcp_int i = 0; i < n; ++i) L->flags[i] = 0;
        for (mbdcp_int i = 0; i < n; ++i)
            if (L->basis[i] >= n && L->basis[i] < 2 * n) L->flags[L->basis[i] - n] = 1;
        const mbdcp_int budget = L->pivots + n + 10 < L->limit ? L->pivots + n + 10 : L->limit;
        for (mbdcp_int i = 0; i < n; ++i) L->basis[i] = L->flags[i] ? n + i : i;
        if (!refactor(L, HINT_SINGULAR)) return MBDCP_NUMERICAL_ERROR;
        const MbdcpStatus st = repair(L, budget, round);
        if (st == MBDCP_INTERRUPTED) return st;
        if (st == MBDCP_RAY_TERMINATION && certify_ray(L)) return st;
        if (st != MBDCP_SOLVED) continue;
        for (mbdcp_int k = 0; k < refine_rounds; ++k) refine(L, -1, L->xbar);
        if ((L->verified = extract(L))) return MBDCP_SOLVED;
    }
    return MBDCP_NUMERICAL_ERROR;
}

/* The hint as the basis: L->basis, and L->flags (kept for a re-solve). */
static void hint_basis(Lemke *L, const mbdcp_int *start)
{
    for (mbdcp_int i = 0; i < L->n; ++i) {
        L->flags[i] = start[i] != 0;
        L->basis[i] = L->flags[i] ? L->n + i : i;
    }
}

/* A hint whose basic solution verifies is the answer: z_S solves M_SS z_S = -q_S (w_S = 0) on the
 * set S of basic z, z = 0 elsewhere. An LU factorization of M_SS costs k^3 / 3 flops where the
 * basis inverse that pivoting starts from costs about k^2 n: a resting pile, warm-started from the
 * last step's basis, costs one solve and one verification. Scratch: Bc, cand, res, P. */
static void try_direct(Lemke *L, const mbdcp_int *start)
{
    const mbdcp_int n = L->n;
    mbdcp_int k = 0;
    for (mbdcp_int i = 0; i < n; ++i)
        if (start[i]) L->P[k++] = i;
    const mbdcp_int *S = L->P;
    mbdcp_float *A = L->Bc, *rhs = L->res;
    for (mbdcp_int a = 0; a < k; ++a) {
        const mbdcp_float *Ma = L->M + (size_t)S[a] * n;
        for (mbdcp_int b = 0; b < k; ++b) A[(size_t)a * k + b] = Ma[S[b]];
        rhs[a] = -L->q[S[a]];
    }
    if (mbdcp_lu_solve(k, A, L->cand, rhs, 1e-13) != MBDCP_OK) return;
    memset(L->out->z, 0, (size_t)n * sizeof(mbdcp_float));
    for (mbdcp_int a = 0; a < k; ++a) L->out->z[S[a]] = pos_part(rhs[a]);
    hint_basis(L, start);
    L->np = 0;
    L->verified = L->warm = verify(L, L->out->z);
    if (L->verified) {
        L->status = MBDCP_SOLVED;
        L->kept->what = KEPT_BASIS;
    }
}

/* The warm phase may take about as many pivots as a cold solve usually needs. */
static mbdcp_int warm_limit(const Lemke *L) { return L->limit < 2 * L->n + 10 ? L->limit : 2 * L->n + 10; }

/* Only q changed since the last solve in this workspace, which ended verified with its basis
 * inverse kept (so are the scaling and Mt): start from that basis, covering every row as
 * try_warm() does. The basic values Binv q are usually accurate already: verify first, refine
 * only on failure. */
static void try_resolve(Lemke *L)
{
    L->np = L->kept->np;
    L->z0_row = -1;
    L->since = 0;
    L->stale = 0;
    for (mbdcp_int i = 0; i < L->n; ++i) L->qs[i] = L->rs[i] * L->q[i];
    basic_values(L);
    L->status = nearly_feasible(L) ? MBDCP_SOLVED : repair(L, warm_limit(L), 1);
    if (L->status == MBDCP_SOLVED && !(L->verified = extract(L))) L->status = polish(L);
    L->warm = L->verified;
}

/* Warm start from a hint (start: z_i basic): factor that basis, then repair it with the covering
 * vector B 1 over every row. In the hint's coordinates this is the cold start on the principal
 * pivot transform of LCP(M', q'), which is positive semidefinite when M' is (P1, P2): the path
 * keeps the cold path's guarantees. Covering only the infeasible rows (a covering vector with
 * zeros) does not, and ran into singular bases or secondary rays. A hint that cannot be used
 * leaves the outcome open for the cold start. */
static void try_warm(Lemke *L, const mbdcp_int *start)
{
    for (mbdcp_int i = 0; i < L->n; ++i) {
        L->basis[i] = start[i] ? L->n + i : i;
        L->cov[i] = 1.0;
    }
    if (!refactor(L, HINT_SINGULAR)) return;
    L->status = nearly_feasible(L) ? MBDCP_SOLVED : repair(L, warm_limit(L), 1);
    if (L->status == MBDCP_SOLVED) L->status = polish(L);
    L->warm = L->verified;
}

/* Cold start (covering vector 1); once more with another covering vector after a ray without
 * certificate, a basis gone singular in rounding, or a complementary basis whose point fails. */
static void try_cold(Lemke *L)
{
    for (int attempt = 0; attempt < 2 && !settled(L); ++attempt) {
        const mbdcp_int r = cold_start(L, L->q, attempt);
        if (r < 0) { /* trivial: q >= 0 gives z = 0, w = q */
            L->status = MBDCP_SOLVED;
            L->verified = extract(L);
            return;
        }
        L->status = run(L, r, L->limit);
        if (L->status == MBDCP_SOLVED)
            L->status = polish(L);
        else if (L->status == MBDCP_RAY_TERMINATION)
            certify_ray(L);
        if (L->status == MBDCP_MAX_ITERATIONS) return;
    }
}

/* The complementary basis a last path ended on (L->path) on altered data, as the given data's hint:
 * solved directly, then with the basic w_i that fail at their row's scale exchanged for their z_i (a
 * principal pivot: a degenerate tie that the altered data decided one way and the given q the
 * other), then Lemke's warm start from it on the given data. Verified as every answer. */
static void from_path(Lemke *L)
{
    const mbdcp_int n = L->n;
    try_direct(L, L->path);
    if (settled(L)) return;
    int exchanged = 0;
    for (mbdcp_int i = 0; i < n; ++i) {
        L->flags[i] = L->path[i];
        if (!L->path[i] && -L->out->w[i] > L->s->tol * L->res[i]) { /* failing at its own scale */
            L->flags[i] = 1;
            exchanged = 1;
        }
    }
    if (exchanged) try_direct(L, L->flags);
    if (settled(L) || !equilibrate(L)) return; /* equilibrate: M' and q' of the given data again */
    try_warm(L, L->path);
    L->warm = 0; /* a hint of its own, not the caller's */
}

/* A last path from the cold start on the data in L as the caller altered them (q' perturbed, or
 * M' regularized), its complementary point polished and verified against the given M and q. Only
 * a verified point counts: a ray, a limit or a failing point on altered data proves nothing about
 * the given ones (MBDCP_NUMERICAL_ERROR, or MBDCP_INTERRUPTED). */
static void last_path(Lemke *L)
{
    const mbdcp_int r = cold_start(L, L->qs, 0);
    MbdcpStatus st = r < 0 ? MBDCP_NUMERICAL_ERROR : run(L, r, L->limit);
    const int complementary = st == MBDCP_SOLVED;
    if (complementary) /* its basis, before polish repairs it */
        for (mbdcp_int i = 0; i < L->n; ++i) L->path[i] = 0;
    for (mbdcp_int i = 0; complementary && i < L->n; ++i)
        if (L->basis[i] >= L->n && L->basis[i] < 2 * L->n) L->path[L->basis[i] - L->n] = 1;
    if (st == MBDCP_SOLVED) st = polish(L); /* a certificate it finds is checked on the given data */
    L->status = st == MBDCP_SOLVED || st == MBDCP_INTERRUPTED ? st : MBDCP_NUMERICAL_ERROR;
    if (complementary && !settled(L)) from_path(L);
}

/* Entries of q within a tight tie of its largest (|q'_i| <= TIGHT_TIE max|q'|) are, most often,
 * zeros that rounding left nonzero (a body at rest moves at 1e-33); their signs, which rounding
 * chose, decide the path's ties and can send it round a cycle. Once more with them zero: a change
 * smaller than the ties the ratio test already ignores. The answer is verified against the given q. */
static void try_flushed(Lemke *L)
{
    if (settled(L) || !equilibrate(L)) return;
    const mbdcp_float cut = TIGHT_TIE * mbdcp_norm_inf((size_t)L->n, L->qs);
    int flushed = 0;
    for (mbdcp_int i = 0; i < L->n; ++i)
        if (L->qs[i] != 0.0 && fabs(L->qs[i]) <= cut) {
            L->qs[i] = 0.0;
            flushed = 1;
        }
    if (flushed) last_path(L);
}

/* The perturbed q' (L->qalt) solved as a problem of its own, its point polished and verified
 * against q' itself (polish's repairs work towards q', not q); the basis it ends on is then the
 * given data's hint (from_path). Nothing it finds about q' (a point, a ray) is an answer. */
static void hint_from_altered(Lemke *L)
{
    const mbdcp_float *given = L->q;
    L->q = L->qalt;
    const mbdcp_int r = equilibrate(L) ? cold_start(L, L->qs, 0) : -1;
    MbdcpStatus st = r < 0 ? MBDCP_NUMERICAL_ERROR : run(L, r, L->limit);
    if (st == MBDCP_SOLVED) st = polish(L);
    const int solved = st == MBDCP_SOLVED && L->verified;
    L->q = given;
    if (L->certified && L->out->ray) memset(L->out->ray, 0, (size_t)L->n * sizeof(mbdcp_float));
    L->verified = L->certified = 0;
    L->status = st == MBDCP_INTERRUPTED ? st : MBDCP_NUMERICAL_ERROR;
    if (!solved) return;
    for (mbdcp_int i = 0; i < L->n; ++i) L->path[i] = 0;
    for (mbdcp_int i = 0; i < L->n; ++i)
        if (L->basis[i] >= L->n && L->basis[i] < 2 * L->n) L->path[L->basis[i] - L->n] = 1;
    if (equilibrate(L)) from_path(L);
}

/* On a degenerate problem the lexicographic rule decides ties between basic values that are zero
 * in exact arithmetic; decided in rounding, a path can cycle or end on a complementary basis whose
 * point fails. Once more on q + delta v, delta = PERTURB max |q|, v_i = frac(a (i + 1)) in [0, 1)
 * for an irrational a: the perturbation that the lexicographic rule stands for, with gaps rounding
 * cannot hide, along up to PERTURB_TRIES directions. Answers are verified against the given q: they
 * count only where delta is within the tolerance. Where the point fails, q' is solved on its own and
 * its basis tried on q (hint_from_altered). */
static void try_perturbed(Lemke *L)
{
    const mbdcp_float directions[PERTURB_TRIES] = {0.6180339887498949, 0.7548776662466927, 0.41421356237309515};
    for (int t = 0; t < PERTURB_TRIES && !settled(L); ++t) {
        equilibrate(L);
        const mbdcp_float delta = PERTURB * mbdcp_norm_inf((size_t)L->n, L->q);
        for (mbdcp_int i = 0; i < L->n; ++i) L->qs[i] += L->rs[i] * delta * fmod(directions[t] * (i + 1), 1.0);
        last_path(L);
        if (settled(L) || L->status == MBDCP_INTERRUPTED) continue;
        for (mbdcp_int i = 0; i < L->n; ++i) L->qalt[i] = L->q[i] + delta * fmod(directions[t] * (i + 1), 1.0);
        hint_from_altered(L);
    }
}

/* A singular positive semidefinite M (P2's two opposite friction directions of a contact have
 * opposite columns) has many nearly singular complementary bases, and both paths can break down
 * on them in rounding. Once more on M' + eps I, eps = REGULARIZE tol times each row's largest
 * entry (then ten times that): positive definite, its path avoids them. The answer is verified
 * against the given M and q, so it counts only where eps z stays within the tolerance. */
static void try_regularized(Lemke *L)
{
    const mbdcp_int n = L->n;
    for (int level = 0; level < 2 && !settled(L); ++level) {
        equilibrate(L);
        const mbdcp_float eps = (level == 0 ? REGULARIZE : 10.0 * REGULARIZE) * L->s->tol;
        for (mbdcp_int i = 0; i < n; ++i) {
            mbdcp_float rowmax = 0.0;
            for (mbdcp_int j = 0; j < n; ++j) rowmax = acc_max(rowmax, fabs(L->Mt[(size_t)j * L->ld + i]));
            L->Mt[(size_t)i * L->ld + i] += eps * rowmax;
        }
        last_path(L);
    }
}

/* The final status and info; the last basic point when unsolved; what a re-solve may reuse. */
static void finish(Lemke *L, MbdcpLemkeInfo *info)
{
    const mbdcp_int n = L->n;
    MbdcpStatus st = L->status;
    if (L->certified)
        st = MBDCP_RAY_TERMINATION;
    else if (st == MBDCP_SOLVED && !L->verified)
        st = MBDCP_NUMERICAL_ERROR;
    if (st != MBDCP_SOLVED) {
        extract(L); /* the last basic point */
        if (!mbdcp_all_finite((size_t)n, L->out->z) || !mbdcp_all_finite((size_t)n, L->out->w)) {
            /* it overflowed (a solution beyond the double range): report z = 0, w = q instead */
            for (mbdcp_int i = 0; i < n; ++i) {
                L->out->z[i] = 0.0;
                L->out->w[i] = L->q[i];
                L->res[i] = fabs(L->q[i]);
            }
        }
    }
    /* every strategy leaves out->w and s (L->res) of out->z, and their ratio, from its last
     * verification; the point reset above is measured here */
    if (st != MBDCP_SOLVED) L->ratio = mbdcp_lcp_row_ratio(n, L->out->z, L->out->w, L->res, &L->worst);
    info->residual = L->ratio;
    info->worst_row = L->worst;
    if (st == MBDCP_SOLVED && certify_answer(L)) st = MBDCP_RAY_TERMINATION;
    if (st == MBDCP_RAY_TERMINATION && !L->certified && semidefinite(n, L->M, L->Bc))
        st = MBDCP_NUMERICAL_ERROR; /* copositive-plus: a ray would claim infeasibility */
    info->status = st;
    info->pivots = L->pivots;
    info->refactorizations = L->refactorizations;
    info->certified = L->certified;
    info->warm = L->warm && st == MBDCP_SOLVED;
    if (L->out->basis) {
        for (mbdcp_int i = 0; i < n; ++i) L->out->basis[i] = 0;
        for (mbdcp_int i = 0; i < n; ++i)
            if (L->basis[i] >= n && L->basis[i] < 2 * n) L->out->basis[L->basis[i] - n] = 1;
    }
    L->kept->magic = KEPT_MAGIC;
    L->kept->n = n;
    L->kept->np = L->np;
    if (st != MBDCP_SOLVED || L->certified) L->kept->what = KEPT_NOTHING;
}

/* Carve the workspace (layout: mbdcp_lemke_workspace_size) and set the problem's fields. */
static void setup(Lemke *L, mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const MbdcpLemkeSettings *s,
                  const MbdcpLemkeOutput *out, void *work)
{
    const size_t nn = (size_t)n, ld = (size_t)row_stride(n);
    memset(L, 0, sizeof(*L));
    L->n = n;
    L->ld = (mbdcp_int)ld;
    L->M = M;
    L->q = q;
    L->s = s;
    L->out = out;
    L->kept = (LemkeKept *)work;
    L->Bc = (mbdcp_float *)((char *)work + KEPT_BYTES);
    L->Mt = L->Bc + ld * ld;
    L->xbar = L->Mt + ld * ld;
    L->d = L->xbar + ld;
    L->dnext = L->d + ld;
    L->res = L->dnext + ld;
    L->ag = L->res + ld;
    L->qs = L->ag + ld;
    L->cov = L->qs + ld;
    L->rs = L->cov + ld;
    L->cs = L->rs + ld;
    L->ratios = L->cs + ld;
    L->qalt = L->ratios + ld;
    L->X = L->qalt + ld;
    L->basis = (mbdcp_int *)(L->X + PANEL * nn);
    L->cand = L->basis + nn;
    L->P = L->cand + nn;
    L->pos = L->P + nn;
    L->flags = L->pos + nn;
    L->path = L->flags + nn;
    L->entering = -1;
    L->status = MBDCP_NUMERICAL_ERROR;
    L->limit = s->max_pivots > 0 ? s->max_pivots : 100 * (n + 1);
}

/* The last attempts, while the outcome is still open after the paths broke down: with q's entries
 * at rounding level zero, then on perturbed data when M is not positive semidefinite, else on
 * regularized data. */
static void try_last(Lemke *L, const mbdcp_float *M)
{
    if (!settled(L) && (L->status == MBDCP_NUMERICAL_ERROR || L->status == MBDCP_SOLVED)) try_flushed(L);
    const int open = !settled(L) && (L->status == MBDCP_NUMERICAL_ERROR || L->status == MBDCP_SOLVED);
    const int psd = open && semidefinite(L->n, M, L->Bc);
    if (open && !psd) try_perturbed(L);
    if (open && psd) try_regularized(L);
}

/* The call's form (pointers to the settings and outputs, n >= 0, the settings); then the info
 * of a solved empty problem. */
static MbdcpReturn check_call(mbdcp_int n, const MbdcpLemkeSettings *settings, const MbdcpLemkeOutput *out,
                              MbdcpLemkeInfo *info)
{
    if (!settings || !info || !out) return MBDCP_ERR_NULL;
    if (n < 0) return MBDCP_ERR_DIMENSION;
    const MbdcpReturn rc = mbdcp_lemke_check_settings(settings, NULL);
    if (rc != MBDCP_OK) return rc;
    memset(info, 0, sizeof(*info));
    info->status = MBDCP_SOLVED;
    info->worst_row = -1;
    return MBDCP_OK;
}

/* What the last solve of this size left in the workspace for a re-solve (nothing unless reuse). */
static LemkeKeptWhat kept_state(mbdcp_int n, int reuse, const void *work)
{
    const LemkeKept *kept = (const LemkeKept *)work;
    return reuse && kept->magic == KEPT_MAGIC && kept->n == n ? kept->what : KEPT_NOTHING;
}

/* Lemke's method as a cascade of strategies, each tried while the outcome is open: the hint solved
 * directly, the kept basis of the last solve (`reuse`), the warm start from the hint, the two cold
 * paths, then the last paths on perturbed (M not positive semidefinite) or regularized data. */
static MbdcpReturn solve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *q_mag,
                         const MbdcpLemkeSettings *settings, const mbdcp_int *start, int reuse,
                         const MbdcpLemkeOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    const MbdcpReturn rc = check_call(n, settings, out, info);
    if (rc != MBDCP_OK || n == 0) return rc;
    if (!M || !q || !out->z || !out->w || !work) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_lemke_workspace_size(n)) return MBDCP_ERR_WORKSPACE;
    const LemkeKeptWhat kept = kept_state(n, reuse, work);
    const int resolve = kept == KEPT_INVERSE, hinted = kept == KEPT_BASIS;
    /* M is checked here when a hint uses it before equilibrate() does (which checks it in its pass
     * over M); a re-solve's M passed the check in the solve it continues */
    if (((start || hinted) && !mbdcp_all_finite((size_t)n * n, M)) || !mbdcp_all_finite((size_t)n, q) ||
        (q_mag && !mbdcp_all_finite((size_t)n, q_mag)))
        return MBDCP_ERR_NONFINITE;

    Lemke L;
    setup(&L, n, M, q, settings, out, work);
    L.qmag = q_mag;
    L.kept->what = KEPT_NOTHING; /* valid again only after this solve succeeds */
    if (out->ray) memset(out->ray, 0, (size_t)n * sizeof(mbdcp_float));
    if (hinted) start = L.flags; /* the last solve was direct: its hint is in flags */
    if (start) try_direct(&L, start);
    if (resolve && !settled(&L)) try_resolve(&L);
    if (!settled(&L) && !equilibrate(&L)) return MBDCP_ERR_NONFINITE;
    if (start && !settled(&L)) try_warm(&L, start);
    if (!settled(&L)) try_cold(&L);
    try_last(&L, M);
    if (L.verified) L.status = MBDCP_SOLVED;
    if (L.status == MBDCP_SOLVED && L.verified && L.kept->what != KEPT_BASIS) L.kept->what = KEPT_INVERSE;
    finish(&L, info);
    return MBDCP_OK;
}

#ifdef LEMKE_AVX2_COPY
MbdcpReturn mbdcp_lemke_solve_avx2(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *q_mag,
                                   const MbdcpLemkeSettings *settings, const mbdcp_int *start, int reuse,
                                   const MbdcpLemkeOutput *out, MbdcpLemkeInfo *info, void *work,
                                   size_t work_bytes)
{
    return solve(n, M, q, q_mag, settings, start, reuse, out, info, work, work_bytes);
}
#else
/* solve() in the copy compiled for AVX2 from this size on, when the CPU has it, else here: the
 * same answers. Below it, the longer vectors' loop heads and tails cost more than they save. */
#define AVX2_FROM_N 12
static MbdcpReturn dispatch(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q, const mbdcp_float *q_mag,
                            const MbdcpLemkeSettings *settings, const mbdcp_int *start, int reuse,
                            const MbdcpLemkeOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
#ifdef LEMKE_AVX2
    if (n >= AVX2_FROM_N && __builtin_cpu_supports("avx2"))
        return mbdcp_lemke_solve_avx2(n, M, q, q_mag, settings, start, reuse, out, info, work, work_bytes);
#endif
    return solve(n, M, q, q_mag, settings, start, reuse, out, info, work, work_bytes);
}

MbdcpReturn mbdcp_lemke_solve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                              const MbdcpLemkeSettings *settings, const mbdcp_int *start,
                              const MbdcpLemkeOutput *out, MbdcpLemkeInfo *info, void *work,
                              size_t work_bytes)
{
    return dispatch(n, M, q, NULL, settings, start, 0, out, info, work, work_bytes);
}

MbdcpReturn mbdcp_lemke_solve_scaled(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                                     const mbdcp_float *q_mag, const MbdcpLemkeSettings *settings,
                                     const mbdcp_int *start, int reuse, const MbdcpLemkeOutput *out,
                                     MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    return dispatch(n, M, q, q_mag, settings, start, reuse != 0, out, info, work, work_bytes);
}

MbdcpReturn mbdcp_lemke_resolve(mbdcp_int n, const mbdcp_float *M, const mbdcp_float *q,
                                const MbdcpLemkeSettings *settings, const MbdcpLemkeOutput *out,
                                MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    return dispatch(n, M, q, NULL, settings, NULL, 1, out, info, work, work_bytes);
}
#endif
