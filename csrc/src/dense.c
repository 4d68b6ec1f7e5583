/* Dense kernels, written row by row so that inner loops stream contiguous memory. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mbdcp/dense.h"

MbdcpReturn mbdcp_cholesky(mbdcp_int n, mbdcp_float *A, mbdcp_float rel_tol)
{
    return mbdcp_cholesky_profile(n, A, rel_tol, NULL);
}

/* The first nonzero column of row i's part left of the diagonal (i when there is none). */
static mbdcp_int row_start(const mbdcp_float *Ai, mbdcp_int i)
{
    mbdcp_int f = 0;
    while (f < i && Ai[f] == 0.0) ++f;
    return f;
}

MbdcpReturn mbdcp_cholesky_profile(mbdcp_int n, mbdcp_float *A, mbdcp_float rel_tol, mbdcp_int *first)
{
    if (n < 0) return MBDCP_ERR_DIMENSION;
    if (n > 0 && !A) return MBDCP_ERR_NULL;
    for (mbdcp_int i = 0; i < n; ++i) {
        mbdcp_float *Ai = A + (size_t)i * n;
        /* each pivot against its own diagonal entry: invariant under D A D (a change of units), so a
         * diagonal matrix of condition 1e20 factors while a dependent row still fails */
        const mbdcp_float floor_ = rel_tol * fabs(Ai[i]);
        /* L keeps A's profile: the entries left of a row's first nonzero stay zero */
        const mbdcp_int fi = first ? (first[i] = row_start(Ai, i)) : 0;
        for (mbdcp_int j = fi; j <= i; ++j) {
            const mbdcp_float *Aj = A + (size_t)j * n;
            mbdcp_float s = Ai[j];
            const mbdcp_int k0 = first ? (first[j] > fi ? first[j] : fi) : 0;
            for (mbdcp_int k = k0; k < j; ++k) s -= Ai[k] * Aj[k];
            if (j < i) {
                Ai[j] = s / Aj[j];
            } else {
                if (!(s > floor_) || !isfinite(s)) return MBDCP_ERR_NOT_POSDEF;
                Ai[i] = sqrt(s);
            }
        }
        for (mbdcp_int j = i + 1; j < n; ++j) Ai[j] = 0.0;
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_lu_solve(mbdcp_int n, mbdcp_float *A, mbdcp_int *piv, mbdcp_float *b, mbdcp_float rel_tol)
{
    if (n < 0) return MBDCP_ERR_DIMENSION;
    if (n > 0 && (!A || !piv || !b)) return MBDCP_ERR_NULL;
    const mbdcp_float floor_ = rel_tol * mbdcp_norm_inf((size_t)n * n, A);
    for (mbdcp_int k = 0; k < n; ++k) {
        mbdcp_int p = k;
        for (mbdcp_int i = k + 1; i < n; ++i)
            if (fabs(A[(size_t)i * n + k]) > fabs(A[(size_t)p * n + k])) p = i;
        piv[k] = p;
        const mbdcp_float akk = A[(size_t)p * n + k];
        if (!(fabs(akk) > floor_) || !isfinite(akk)) return MBDCP_ERR_RANK_DEFICIENT;
        if (p != k) { /* swap rows k and p of A and b */
            mbdcp_float *Ak = A + (size_t)k * n, *Ap = A + (size_t)p * n;
            for (mbdcp_int j = 0; j < n; ++j) {
                const mbdcp_float t = Ak[j];
                Ak[j] = Ap[j];
                Ap[j] = t;
            }
            const mbdcp_float t = b[k];
            b[k] = b[p];
            b[p] = t;
        }
        const mbdcp_float *Ak = A + (size_t)k * n;
        for (mbdcp_int i = k + 1; i < n; ++i) { /* eliminate below, row by row (contiguous) */
            mbdcp_float *Ai = A + (size_t)i * n;
            const mbdcp_float f = Ai[k] / akk;
            Ai[k] = f;
            if (f == 0.0) continue;
            for (mbdcp_int j = k + 1; j < n; ++j) Ai[j] -= f * Ak[j];
            b[i] -= f * b[k];
        }
    }
    for (mbdcp_int i = n - 1; i >= 0; --i) { /* back substitution */
        const mbdcp_float *Ai = A + (size_t)i * n;
        mbdcp_float s = b[i];
        for (mbdcp_int j = i + 1; j < n; ++j) s -= Ai[j] * b[j];
        b[i] = s / Ai[i];
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_trsm_lower(mbdcp_int n, const mbdcp_float *L, mbdcp_int ncols, mbdcp_float *B)
{
    if (n < 0 || ncols < 0) return MBDCP_ERR_DIMENSION;
    if (n > 0 && ncols > 0 && (!L || !B)) return MBDCP_ERR_NULL;
    for (mbdcp_int i = 0; i < n; ++i) {
        mbdcp_float *Bi = B + (size_t)i * ncols;
        const mbdcp_float *Li = L + (size_t)i * n;
        for (mbdcp_int k = 0; k < i; ++k) {
            const mbdcp_float lik = Li[k];
            if (lik == 0.0) continue;
            const mbdcp_float *Bk = B + (size_t)k * ncols;
            for (mbdcp_int j = 0; j < ncols; ++j) Bi[j] -= lik * Bk[j];
        }
        const mbdcp_float inv = 1.0 / Li[i];
        for (mbdcp_int j = 0; j < ncols; ++j) Bi[j] *= inv;
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_trsv_lower(mbdcp_int n, const mbdcp_float *L, int trans, mbdcp_float *b)
{
    if (n < 0) return MBDCP_ERR_DIMENSION;
    if (n > 0 && (!L || !b)) return MBDCP_ERR_NULL;
    if (!trans) {
        for (mbdcp_int i = 0; i < n; ++i) {
            const mbdcp_float *Li = L + (size_t)i * n;
            mbdcp_float s = b[i];
            for (mbdcp_int k = 0; k < i; ++k) s -= Li[k] * b[k];
            b[i] = s / Li[i];
        }
    } else {
        /* L^T x = b: back substitution by columns of L^T, i.e. rows of L. */
        for (mbdcp_int i = n - 1; i >= 0; --i) {
            const mbdcp_float *Li = L + (size_t)i * n;
            b[i] /= Li[i];
            const mbdcp_float bi = b[i];
            for (mbdcp_int k = 0; k < i; ++k) b[k] -= Li[k] * bi;
        }
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_gram(mbdcp_int k, mbdcp_int n, const mbdcp_float *X, mbdcp_float *G)
{
    if (k < 0 || n < 0) return MBDCP_ERR_DIMENSION;
    if (n > 0 && !G) return MBDCP_ERR_NULL;
    if (k > 0 && n > 0 && !X) return MBDCP_ERR_NULL;
    for (size_t t = 0; t < (size_t)n * n; ++t) G[t] = 0.0;
    /* Sum of rank-one terms x_r x_r^T over the rows of X, upper triangle only. */
    for (mbdcp_int r = 0; r < k; ++r) {
        const mbdcp_float *Xr = X + (size_t)r * n;
        for (mbdcp_int a = 0; a < n; ++a) {
            const mbdcp_float xa = Xr[a];
            if (xa == 0.0) continue;
            mbdcp_float *Ga = G + (size_t)a * n;
            for (mbdcp_int b = a; b < n; ++b) Ga[b] += xa * Xr[b];
        }
    }
    for (mbdcp_int a = 0; a < n; ++a)
        for (mbdcp_int b = 0; b < a; ++b) G[(size_t)a * n + b] = G[(size_t)b * n + a];
    return MBDCP_OK;
}

MbdcpReturn mbdcp_gemm_tn(mbdcp_int k, mbdcp_int n, mbdcp_int m, const mbdcp_float *A,
                          const mbdcp_float *B, mbdcp_float *C)
{
    if (k < 0 || n < 0 || m < 0) return MBDCP_ERR_DIMENSION;
    if (n > 0 && m > 0 && !C) return MBDCP_ERR_NULL;
    if (k > 0 && ((n > 0 && !A) || (m > 0 && !B))) return MBDCP_ERR_NULL;
    for (size_t t = 0; t < (size_t)n * m; ++t) C[t] = 0.0;
    for (mbdcp_int r = 0; r < k; ++r) {
        const mbdcp_float *Ar = A + (size_t)r * n;
        const mbdcp_float *Br = B + (size_t)r * m;
        for (mbdcp_int a = 0; a < n; ++a) {
            const mbdcp_float x = Ar[a];
            if (x == 0.0) continue;
            mbdcp_float *Ca = C + (size_t)a * m;
            for (mbdcp_int b = 0; b < m; ++b) Ca[b] += x * Br[b];
        }
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_gemv(mbdcp_int r, mbdcp_int c, mbdcp_float alpha, const mbdcp_float *A, int trans,
                       const mbdcp_float *x, mbdcp_float beta, mbdcp_float *y)
{
    if (r < 0 || c < 0) return MBDCP_ERR_DIMENSION;
    const mbdcp_int ny = trans ? c : r;
    if (ny > 0 && !y) return MBDCP_ERR_NULL;
    if (r > 0 && c > 0 && (!A || !x)) return MBDCP_ERR_NULL;
    for (mbdcp_int i = 0; i < ny; ++i) y[i] = (beta == 0.0) ? 0.0 : beta * y[i];
    if (!trans) {
        for (mbdcp_int i = 0; i < r; ++i) {
            const mbdcp_float *Ai = A + (size_t)i * c;
            mbdcp_float s = 0.0;
            for (mbdcp_int j = 0; j < c; ++j) s += Ai[j] * x[j];
            y[i] += alpha * s;
        }
    } else {
        for (mbdcp_int i = 0; i < r; ++i) {
            const mbdcp_float *Ai = A + (size_t)i * c;
            const mbdcp_float xi = alpha * x[i];
            if (xi == 0.0) continue;
            for (mbdcp_int j = 0; j < c; ++j) y[j] += Ai[j] * xi;
        }
    }
    return MBDCP_OK;
}

int mbdcp_all_finite(size_t n, const mbdcp_float *x)
{
    if (n > 0 && !x) return 0;
    /* Non-finite is an all-ones exponent: adding one unit of the exponent's lowest bit to the
     * exponent field carries into the sign bit only then. Integer lanes, no chain of additions:
     * the loop vectorizes (it runs over every matrix a solver is given). */
    const uint64_t exponent = UINT64_C(0x7ff) << 52, unit = UINT64_C(1) << 52, sign = UINT64_C(1) << 63;
    uint64_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t b;
        memcpy(&b, x + i, sizeof b);
        bad |= ((b & exponent) + unit) & sign;
    }
    return bad == 0;
}

mbdcp_float mbdcp_norm_inf(size_t n, const mbdcp_float *x)
{
    /* four running maxima (no single chain of comparisons); a NaN entry is passed over, as fmax does */
    mbdcp_float m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const mbdcp_float a0 = fabs(x[i]), a1 = fabs(x[i + 1]), a2 = fabs(x[i + 2]), a3 = fabs(x[i + 3]);
        m0 = a0 > m0 ? a0 : m0;
        m1 = a1 > m1 ? a1 : m1;
        m2 = a2 > m2 ? a2 : m2;
        m3 = a3 > m3 ? a3 : m3;
    }
    for (; i < n; ++i) m0 = fabs(x[i]) > m0 ? fabs(x[i]) : m0;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

int mbdcp_grouping_error(mbdcp_int rows, mbdcp_int groups, const mbdcp_float *E)
{
    mbdcp_int last = -1;
    for (mbdcp_int r = 0; r < rows; ++r) {
        mbdcp_int ones = 0, col = -1;
        for (mbdcp_int c = 0; c < groups; ++c) {
            const mbdcp_float x = E[(size_t)r * groups + c];
            if (x == 1.0) {
                ++ones;
                col = c;
            } else if (x != 0.0) {
                return 1;
            }
        }
        if (ones != 1) return 1;
        if (col < last) return 2;
        last = col;
    }
    return 0;
}

int mbdcp_all_nonnegative(size_t n, const mbdcp_float *x)
{
    for (size_t i = 0; i < n; ++i)
        if (!(x[i] >= 0.0)) return 0;
    return 1;
}

int mbdcp_symmetric(mbdcp_int n, const mbdcp_float *A, mbdcp_float rtol)
{
    mbdcp_float diff = 0.0, amax = 0.0;
    for (mbdcp_int i = 0; i < n; ++i)
        for (mbdcp_int j = 0; j < n; ++j) {
            const mbdcp_float a = A[(size_t)i * n + j];
            amax = fabs(a) > amax ? fabs(a) : amax;
            if (j > i) {
                const mbdcp_float d = fabs(a - A[(size_t)j * n + i]);
                diff = d > diff ? d : diff;
            }
        }
    return diff <= rtol * amax;
}
