/* A time step in compressed storage (relax_sparse.h): its check and its conversion from dense. */
#include "mbdcp/dense.h"
#include "mbdcp/relax_sparse.h"

/* MBDCP_OK when the optional vector x (length n) is NULL or finite. */
static MbdcpReturn finite_or_null(mbdcp_int n, const mbdcp_float *x)
{
    return !x || mbdcp_all_finite((size_t)n, x) ? MBDCP_OK : MBDCP_ERR_NONFINITE;
}

/* The pointer array p (n + 1 starts from 0, nondecreasing) of a compressed matrix. */
static int starts_ok(mbdcp_int n, const mbdcp_int *p)
{
    if (p[0] != 0) return 0;
    for (mbdcp_int i = 0; i < n; ++i)
        if (p[i + 1] < p[i]) return 0;
    return 1;
}

/* M's rows: ascending columns, each ending with its diagonal. */
static int lower_rows_ok(mbdcp_int n, const mbdcp_int *Mp, const mbdcp_int *Mi)
{
    for (mbdcp_int i = 0; i < n; ++i) {
        if (Mp[i + 1] == Mp[i] || Mi[Mp[i + 1] - 1] != i || Mi[Mp[i]] < 0) return 0;
        for (mbdcp_int q = Mp[i] + 1; q < Mp[i + 1]; ++q)
            if (Mi[q] <= Mi[q - 1]) return 0;
    }
    return 1;
}

static MbdcpReturn check_structure(const MbdcpSparseStep *q)
{
    const mbdcp_int nw = q->n_c + q->m;
    if (!starts_ok(q->n_v, q->Mp) || !starts_ok(nw, q->Wp)) return MBDCP_ERR_DIMENSION;
    if (!lower_rows_ok(q->n_v, q->Mp, q->Mi)) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int t = 0; t < q->Wp[nw]; ++t)
        if (q->Wi[t] < 0 || q->Wi[t] >= q->n_v) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int k = 0; k < q->m; ++k)
        if (q->contact[k] < 0 || q->contact[k] >= q->n_c) return MBDCP_ERR_DIMENSION;
    return MBDCP_OK;
}

MbdcpReturn mbdcp_sparse_step_check(const MbdcpSparseStep *q)
{
    if (!q) return MBDCP_ERR_NULL;
    if (q->n_v < 1 || q->n_c < 0 || q->m < 0) return MBDCP_ERR_DIMENSION;
    if (!q->Mp || !q->Mi || !q->Mx || !q->Wp || !q->v || (q->n_c && !q->mu) || (q->m && !q->contact))
        return MBDCP_ERR_NULL;
    if (q->Wp[q->n_c + q->m] > 0 && (!q->Wi || !q->Wx)) return MBDCP_ERR_NULL;
    MbdcpReturn rc = check_structure(q);
    if (rc != MBDCP_OK) return rc;
    if (!(q->h > 0.0) || !mbdcp_all_finite(1, &q->h)) return MBDCP_ERR_SETTING;
    const mbdcp_int nw = q->n_c + q->m;
    if (!mbdcp_all_finite((size_t)q->Mp[q->n_v], q->Mx) || !mbdcp_all_finite((size_t)q->Wp[nw], q->Wx) ||
        !mbdcp_all_finite((size_t)q->n_c, q->mu) || !mbdcp_all_finite((size_t)q->n_v, q->v))
        return MBDCP_ERR_NONFINITE;
    rc = finite_or_null(q->n_v, q->p_ext);
    if (rc == MBDCP_OK) rc = finite_or_null(q->n_c, q->psi_n);
    if (rc == MBDCP_OK) rc = finite_or_null(q->n_c, q->dpsi_n);
    if (rc == MBDCP_OK) rc = finite_or_null(q->m, q->dpsi_f);
    for (mbdcp_int c = 0; rc == MBDCP_OK && c < q->n_c; ++c)
        if (q->mu[c] < 0.0) rc = MBDCP_ERR_DATA;
    return rc;
}

/* The sizes, h and pointers of a dense problem without joints: what the count and the fill read.
 * The values are checked in compressed form where they are used (mbdcp_sparse_step_check: a NaN
 * or infinity is an entry), and what is not read needs no check (M's upper triangle, E beyond
 * the first 1 of each row): a full mbdcp_step_problem_check would scan the dense data again. */
static MbdcpReturn dense_shape(const MbdcpStepProblem *p)
{
    if (!p) return MBDCP_ERR_NULL;
    if (p->n_v < 1 || p->n_c < 0 || p->m < 0 || (p->m && !p->n_c) || p->n_b || p->m_j || p->n_j)
        return MBDCP_ERR_DIMENSION;
    if (!p->M || !p->v || (p->n_c && (!p->Wn || !p->mu)) || (p->m && (!p->D || !p->E))) return MBDCP_ERR_NULL;
    if (!(p->h > 0.0) || !mbdcp_all_finite(1, &p->h)) return MBDCP_ERR_SETTING;
    return MBDCP_OK;
}

/* Row i of W = [Wn D]'s block A (Wn or D, row-major with cols columns, columns from j0 on):
 * count adds its entries to Wp[j + 1]; fill writes them at the cursors Wp[j], none beyond end
 * (0 if one would be). */
static void count_row(const mbdcp_float *Ai, mbdcp_int cols, mbdcp_int j0, mbdcp_int *Wp)
{
    for (mbdcp_int j = 0; j < cols; ++j) Wp[j0 + j + 1] += Ai[j] != 0.0;
}

static int fill_row(const mbdcp_float *Ai, mbdcp_int cols, mbdcp_int j0, mbdcp_int i, mbdcp_int end,
                    mbdcp_int *Wp, mbdcp_int *Wi, mbdcp_float *Wx)
{
    for (mbdcp_int j = 0; j < cols; ++j) {
        if (Ai[j] == 0.0) continue;
        mbdcp_int *at = Wp + j0 + j;
        if (*at >= end) return 0;
        Wi[*at] = i;
        Wx[(*at)++] = Ai[j];
    }
    return 1;
}

MbdcpReturn mbdcp_sparse_step_count(const MbdcpStepProblem *p, mbdcp_int *nnz_m, mbdcp_int *Wp)
{
    if (!nnz_m || !Wp) return MBDCP_ERR_NULL;
    MbdcpReturn rc = dense_shape(p);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int nv = p->n_v, nw = p->n_c + p->m;
    mbdcp_int a = nv;
    for (mbdcp_int j = 0; j <= nw; ++j) Wp[j] = 0;
    for (mbdcp_int i = 0; i < nv; ++i) {
        for (mbdcp_int j = 0; j < i; ++j) a += p->M[(size_t)i * nv + j] != 0.0;
        if (p->n_c) count_row(p->Wn + (size_t)i * p->n_c, p->n_c, 0, Wp);
        if (p->m) count_row(p->D + (size_t)i * p->m, p->m, p->n_c, Wp);
    }
    for (mbdcp_int j = 0; j < nw; ++j) Wp[j + 1] += Wp[j];
    *nnz_m = a;
    return MBDCP_OK;
}

/* Rows of M's lower triangle, the diagonal always stored; 0 if that is more than nnz_m entries. */
static int fill_m(const MbdcpStepProblem *p, mbdcp_int nnz_m, mbdcp_int *Mp, mbdcp_int *Mi, mbdcp_float *Mx)
{
    const mbdcp_int nv = p->n_v;
    mbdcp_int t = 0;
    for (mbdcp_int i = 0; i < nv; ++i) {
        Mp[i] = t;
        for (mbdcp_int j = 0; j <= i; ++j) {
            const mbdcp_float a = p->M[(size_t)i * nv + j];
            if (a == 0.0 && j != i) continue;
            if (t == nnz_m) return 0;
            Mi[t] = j;
            Mx[t++] = a;
        }
    }
    Mp[nv] = t;
    return 1;
}

/* W's columns in one row-major pass, Wp[j] the cursor of column j (the cursors end at the next
 * columns' starts, shifted back after); 0 if an entry falls beyond Wp[n_w]. */
static int fill_w(const MbdcpStepProblem *p, mbdcp_int *Wp, mbdcp_int *Wi, mbdcp_float *Wx)
{
    const mbdcp_int nc = p->n_c, m = p->m, nw = nc + m, end = Wp[nw];
    for (mbdcp_int i = 0; i < p->n_v; ++i)
        if ((nc && !fill_row(p->Wn + (size_t)i * nc, nc, 0, i, end, Wp, Wi, Wx)) ||
            (m && !fill_row(p->D + (size_t)i * m, m, nc, i, end, Wp, Wi, Wx)))
            return 0;
    for (mbdcp_int j = nw; j > 0; --j) Wp[j] = Wp[j - 1];
    Wp[0] = 0;
    return 1;
}

MbdcpReturn mbdcp_sparse_step_fill(const MbdcpStepProblem *p, mbdcp_int nnz_m, mbdcp_int *Mp, mbdcp_int *Mi,
                                   mbdcp_float *Mx, mbdcp_int *Wp, mbdcp_int *Wi, mbdcp_float *Wx, mbdcp_int *contact)
{
    if (!Mp || !Mi || !Mx || !Wp || (p && p->m && !contact)) return MBDCP_ERR_NULL;
    MbdcpReturn rc = dense_shape(p);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int nc = p->n_c, nw = nc + p->m;
    if (Wp[nw] > 0 && (!Wi || !Wx)) return MBDCP_ERR_NULL;
    for (mbdcp_int k = 0; k < p->m; ++k) {
        mbdcp_int c = 0;
        while (c < nc && p->E[(size_t)k * nc + c] != 1.0) ++c;
        if (c == nc) return MBDCP_ERR_DATA;
        contact[k] = c;
    }
    /* more entries than counted: the data changed since the count */
    return fill_m(p, nnz_m, Mp, Mi, Mx) && fill_w(p, Wp, Wi, Wx) ? MBDCP_OK : MBDCP_ERR_DIMENSION;
}
