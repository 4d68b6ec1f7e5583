/* The reverse-mode derivative of a plain time step at its solution; see step_vjp.h. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "mbdcp/dense.h"
#include "mbdcp/step_vjp.h"

#define TINY DBL_MIN /* the smallest normal double: a scale never below it */
/* step_vjp.h's shared thresholds, by their short names here */
#define RANK_CUT MBDCP_VJP_RANK_CUT
#define NORM_FLOOR MBDCP_VJP_NORM_FLOOR
#define TIE MBDCP_VJP_TIE
#define MARGIN MBDCP_VJP_MARGIN

/* Blocks of imposed rows, in the order they are kept (sliding normals first, all of them). */
enum { NONE = -1, SLIDING_N = 0, STICKING_N = 1, STICKING_B = 2, STRUCTURAL = 3 };

typedef struct {
    const MbdcpStepProblem *p;
    const mbdcp_float *vn, *pn, *beta, *sigma; /* the solution */
    mbdcp_int nv, nc, m, ncol, nk; /* ncol = n_c + m columns of J = [Wn D]; nk: the system's size bound */
    mbdcp_float tp;                /* the impulse threshold */
    mbdcp_int nfn, nfb, nfs;       /* free p_n, beta, sigma */
    mbdcp_float *L, *X, *R, *K; /* X = L^-1 [Wn D], then its free columns Xs in its place (system) */
    mbdcp_float *free_acc, *Mv, *Mvn, *a, *av, *gv, *q, *tv, *wn, *wb, *ws, *w1, *w2, *rhs, *cn, *cf, *norm0, *nrm;
    mbdcp_int *own, *first, *piv, *arg, *FN, *FB, *FS, *pos_n, *pos_s, *block, *picked, *sel;
    mbdcp_int *in_contact, *slide, *stick, *has, *post, *free_b, *cand;
} Vjp;

static size_t floats(mbdcp_int nv, mbdcp_int nc, mbdcp_int m)
{
    const size_t v = (size_t)nv, col = (size_t)nc + (size_t)m, k = col + (size_t)nc;
    return v * v + 2 * v * col + k * k + 7 * v + 6 * (size_t)nc + 2 * (size_t)m + k + 2 * col;
}

static size_t ints(mbdcp_int nv, mbdcp_int nc, mbdcp_int m)
{
    const size_t col = (size_t)nc + (size_t)m;
    return (size_t)nv + (col + (size_t)nc) + 10 * (size_t)nc + 4 * (size_t)m + 3 * col;
}

MbdcpReturn mbdcp_step_vjp_default_settings(MbdcpStepVjpSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->degenerate_tol = MBDCP_DEGENERATE_TOL;
    s->rcond_min = MBDCP_RCOND_MIN;
    s->opposite_rtol = MBDCP_OPPOSITE_RTOL;
    s->geometry = 0;
    return MBDCP_OK;
}

size_t mbdcp_step_vjp_workspace_size(mbdcp_int n_v, mbdcp_int n_c, mbdcp_int m)
{
    if (n_v < 0 || n_c < 0 || m < 0) return 0;
    return floats(n_v, n_c, m) * sizeof(mbdcp_float) + ints(n_v, n_c, m) * sizeof(mbdcp_int);
}

static mbdcp_float *take(mbdcp_float **at, size_t n)
{
    mbdcp_float *x = *at;
    *at += n;
    return x;
}

static mbdcp_int *take_int(mbdcp_int **at, size_t n)
{
    mbdcp_int *x = *at;
    *at += n;
    return x;
}

static void layout(Vjp *w, void *work)
{
    const size_t v = (size_t)w->nv, nc = (size_t)w->nc, m = (size_t)w->m, col = (size_t)w->ncol, k = (size_t)w->nk;
    mbdcp_float *f = (mbdcp_float *)work;
    w->L = take(&f, v * v);
    w->X = take(&f, v * col);
    w->R = take(&f, v * col);
    w->K = take(&f, k * k);
    w->free_acc = take(&f, v);
    w->Mv = take(&f, v);
    w->Mvn = take(&f, v);
    w->a = take(&f, v);
    w->av = take(&f, v);
    w->gv = take(&f, v);
    w->q = take(&f, v);
    w->tv = take(&f, nc);
    w->wn = take(&f, nc);
    w->ws = take(&f, nc);
    w->w1 = take(&f, nc);
    w->w2 = take(&f, nc);
    w->cn = take(&f, nc);
    w->wb = take(&f, m);
    w->cf = take(&f, m);
    w->rhs = take(&f, k);
    w->norm0 = take(&f, col);
    w->nrm = take(&f, col);
    mbdcp_int *i = (mbdcp_int *)f;
    w->first = take_int(&i, v);
    w->piv = take_int(&i, k);
    w->arg = take_int(&i, nc);
    w->FN = take_int(&i, nc);
    w->FS = take_int(&i, nc);
    w->pos_n = take_int(&i, nc);
    w->pos_s = take_int(&i, nc);
    w->in_contact = take_int(&i, nc);
    w->slide = take_int(&i, nc);
    w->stick = take_int(&i, nc);
    w->has = take_int(&i, nc);
    w->post = take_int(&i, nc);
    w->own = take_int(&i, m);
    w->FB = take_int(&i, m);
    w->free_b = take_int(&i, m);
    w->cand = take_int(&i, m);
    w->block = take_int(&i, col);
    w->picked = take_int(&i, col);
    w->sel = take_int(&i, col);
}

static mbdcp_float amax(mbdcp_int n, const mbdcp_float *x, mbdcp_float big)
{
    for (mbdcp_int i = 0; x && i < n; ++i) big = fmax(big, fabs(x[i]));
    return big;
}

/* L = chol(M), X = L^-1 [Wn D], and the zero thresholds of mbdcp.derivatives.step: impulses
 * against the largest momentum or impulse (tp), each contact's velocities against its rows' terms
 * at the step's velocity scale (tv). 0 when M is not positive definite. */
static int scales(Vjp *w, mbdcp_float tol)
{
    const MbdcpStepProblem *p = w->p;
    const mbdcp_int nv = w->nv, nc = w->nc, m = w->m, col = w->ncol;
    memcpy(w->L, p->M, (size_t)nv * nv * sizeof(mbdcp_float));
    if (mbdcp_cholesky_profile(nv, w->L, 0.0, w->first) != MBDCP_OK) return 0;
    for (mbdcp_int r = 0; r < nv; ++r) {
        memcpy(w->X + (size_t)r * col, p->Wn + (size_t)r * nc, (size_t)nc * sizeof(mbdcp_float));
        memcpy(w->X + (size_t)r * col + nc, p->D + (size_t)r * m, (size_t)m * sizeof(mbdcp_float));
    }
    mbdcp_trsm_lower(nv, w->L, col, w->X);
    for (mbdcp_int r = 0; r < nv; ++r) w->free_acc[r] = p->p_ext ? p->p_ext[r] : 0.0;
    mbdcp_trsv_lower(nv, w->L, 0, w->free_acc);
    mbdcp_trsv_lower(nv, w->L, 1, w->free_acc);
    mbdcp_gemv(nv, nv, 1.0, p->M, 0, p->v, 0.0, w->Mv);
    mbdcp_gemv(nv, nv, 1.0, p->M, 0, w->vn, 0.0, w->Mvn);
    mbdcp_float V = amax(nv, p->v, amax(nv, w->vn, amax(nv, w->free_acc, 0.0)));
    for (mbdcp_int r = 0; r < nv; ++r) V = fmax(V, fabs(w->vn[r] - p->v[r] - w->free_acc[r]));
    V = fmax(V, TINY);
    const mbdcp_float P = amax(nc, w->pn, amax(m, w->beta, amax(nv, p->p_ext, amax(nv, w->Mv, amax(nv, w->Mvn, TINY)))));
    w->tp = tol * P;
    for (mbdcp_int c = 0; c < nc; ++c) w->tv[c] = p->psi_n ? fabs(p->psi_n[c]) / p->h : 0.0;
    for (mbdcp_int j = 0; j < col; ++j) w->nrm[j] = 0.0;
    for (mbdcp_int r = 0; r < nv; ++r) { /* column sums of |Wn|, |D| */
        for (mbdcp_int c = 0; c < nc; ++c) w->nrm[c] += fabs(p->Wn[(size_t)r * nc + c]);
        for (mbdcp_int k = 0; k < m; ++k) w->nrm[nc + k] += fabs(p->D[(size_t)r * m + k]);
    }
    for (mbdcp_int c = 0; c < nc; ++c) w->tv[c] += V * w->nrm[c];
    for (mbdcp_int k = 0; k < m; ++k) w->tv[w->own[k]] = fmax(w->tv[w->own[k]], V * w->nrm[nc + k]);
    for (mbdcp_int c = 0; c < nc; ++c) w->tv[c] *= tol;
    return 1;
}

/* The complementary rows: w_n = Wn^T v_next + psi_n / h, w_b = D^T v_next + sigma(own),
 * w_s = mu p_n - E^T beta; per contact the smallest w_b, its first direction and the next smallest. */
static void rows(Vjp *w)
{
    const MbdcpStepProblem *p = w->p;
    const mbdcp_int nv = w->nv, nc = w->nc, m = w->m;
    mbdcp_gemv(nv, nc, 1.0, p->Wn, 1, w->vn, 0.0, w->wn);
    mbdcp_gemv(nv, m, 1.0, p->D, 1, w->vn, 0.0, w->wb);
    for (mbdcp_int c = 0; c < nc; ++c) {
        if (p->psi_n) w->wn[c] += p->psi_n[c] / p->h;
        w->ws[c] = p->mu[c] * w->pn[c];
        w->w1[c] = w->w2[c] = INFINITY;
        w->arg[c] = -1;
        w->has[c] = 0;
    }
    for (mbdcp_int k = 0; k < m; ++k) {
        const mbdcp_int c = w->own[k];
        w->wb[k] += w->sigma[c];
        w->ws[c] -= w->beta[k];
        w->has[c] = 1;
        if (w->wb[k] < w->w1[c]) {
            w->w2[c] = w->w1[c];
            w->w1[c] = w->wb[k];
            w->arg[c] = k;
        } else if (w->wb[k] < w->w2[c]) {
            w->w2[c] = w->wb[k];
        }
    }
}

/* A separated contact: grazing (w_n = 0), or its sigma's maximum attained twice or at zero. */
static MbdcpStepVjpOutcome separated_outcome(const Vjp *w, mbdcp_int c, int sig, int low)
{
    const mbdcp_float tv = w->tv[c];
    if (w->wn[c] <= tv) return MBDCP_VJP_DEGENERATE;
    return low && (!sig || w->w2[c] <= tv) ? MBDCP_VJP_DEGENERATE : MBDCP_VJP_DECIDED;
}

/* A contact in contact: without friction (mu = 0, a boundary), or sticking at the cone's edge. */
static MbdcpStepVjpOutcome in_contact_outcome(const Vjp *w, mbdcp_int c)
{
    if (w->has[c] && w->p->mu[c] == 0.0) return MBDCP_VJP_SPECIAL;
    return w->stick[c] && w->ws[c] <= w->tp ? MBDCP_VJP_DEGENERATE : MBDCP_VJP_DECIDED;
}

/* Each contact in contact, sliding or sticking; separated contacts whose sigma follows a sliding
 * speed (post). The outcome of a contact the rule here does not decide (mbdcp.derivatives.step's
 * _classify): grazing, a sigma tie, mu = 0 in contact, sticking at the cone's edge. */
static MbdcpStepVjpOutcome contact_modes(Vjp *w)
{
    for (mbdcp_int c = 0; c < w->nc; ++c) {
        const mbdcp_float tv = w->tv[c];
        const int in = w->pn[c] > w->tp, sig = w->sigma[c] > tv, low = w->has[c] && w->w1[c] <= tv;
        w->in_contact[c] = in;
        w->slide[c] = in && w->has[c] && sig;
        w->stick[c] = in && w->has[c] && !sig;
        w->post[c] = !in && sig && low;
        const MbdcpStepVjpOutcome o = in ? in_contact_outcome(w, c) : separated_outcome(w, c, sig, low);
        if (o != MBDCP_VJP_DECIDED) return o;
    }
    return MBDCP_VJP_DECIDED;
}

/* Free directions (beta > 0 at a contact in contact) and candidates (beta = w = 0 at a sticking
 * contact); not decided here: a slip exactly between two directions, or a sliding contact
 * without a free direction (the full derivative frees one). */
static MbdcpStepVjpOutcome direction_modes(Vjp *w)
{
    mbdcp_int *freed = w->picked; /* scratch: sliding contacts with a free direction */
    for (mbdcp_int c = 0; c < w->nc; ++c) freed[c] = 0;
    for (mbdcp_int k = 0; k < w->m; ++k) {
        const mbdcp_int c = w->own[k];
        const int bz = w->beta[k] <= w->tp && w->wb[k] <= w->tv[c];
        w->free_b[k] = w->beta[k] > w->tp && w->in_contact[c];
        w->cand[k] = bz && w->stick[c];
        if (bz && w->slide[c]) return MBDCP_VJP_DEGENERATE;
        if (w->free_b[k]) freed[c] = 1;
    }
    for (mbdcp_int c = 0; c < w->nc; ++c)
        if (w->slide[c] && !freed[c]) return MBDCP_VJP_SPECIAL;
    return MBDCP_VJP_DECIDED;
}

/* Has direction i of a contact (directions k0..k1-1, zero-w ones those with w_b <= tv) an opposite
 * one among the contact's zero-w directions: |d_i + d_j| <= rtol scale? */
static int paired(const Vjp *w, mbdcp_int i, mbdcp_int k0, mbdcp_int k1, mbdcp_float tv, mbdcp_float limit)
{
    const mbdcp_float *D = w->p->D;
    const mbdcp_int m = w->m;
    for (mbdcp_int j = k0; j < k1; ++j) {
        if (j == i || !(w->wb[j] <= tv)) continue;
        mbdcp_float gap = 0.0;
        for (mbdcp_int r = 0; r < w->nv; ++r) gap = fmax(gap, fabs(D[(size_t)r * m + i] + D[(size_t)r * m + j]));
        if (gap <= limit) return 1;
    }
    return 0;
}

/* The candidates of a sticking contact are structural (w = 0 persists) when its zero-w directions
 * come in opposite pairs; otherwise a linear program decides: not here. */
static MbdcpStepVjpOutcome structural(const Vjp *w, mbdcp_float rtol)
{
    const MbdcpStepProblem *p = w->p;
    const mbdcp_int m = w->m;
    for (mbdcp_int k0 = 0, k1; k0 < m; k0 = k1) {
        const mbdcp_int c = w->own[k0];
        const mbdcp_float tv = w->tv[c];
        mbdcp_int any = 0;
        for (k1 = k0; k1 < m && w->own[k1] == c; ++k1) any |= w->cand[k1];
        if (!any) continue;
        mbdcp_float scale = 0.0;
        for (mbdcp_int k = k0; k < k1; ++k)
            for (mbdcp_int r = 0; r < w->nv && w->wb[k] <= tv; ++r) scale = fmax(scale, fabs(p->D[(size_t)r * m + k]));
        for (mbdcp_int i = k0; i < k1; ++i)
            if (w->wb[i] <= tv && !paired(w, i, k0, k1, tv, rtol * scale)) return MBDCP_VJP_SPECIAL;
    }
    return MBDCP_VJP_DECIDED;
}

/* Column norms of the n_v x nsel matrix R (row-major) into nrm, for the columns with block b that
 * are not picked (-1 for the others). */
static void norms(const Vjp *w, mbdcp_int nsel, int b)
{
    for (mbdcp_int j = 0; j < nsel; ++j) w->nrm[j] = 0.0;
    for (mbdcp_int r = 0; r < w->nv; ++r) {
        const mbdcp_float *Rr = w->R + (size_t)r * nsel;
        for (mbdcp_int j = 0; j < nsel; ++j) w->nrm[j] += Rr[j] * Rr[j];
    }
    for (mbdcp_int j = 0; j < nsel; ++j)
        w->nrm[j] = w->block[j] == b && !w->picked[j] ? sqrt(w->nrm[j]) : -1.0;
}

/* The first index of the largest of the n values x that are not -1, but skip; -1 if none. */
static mbdcp_int largest(const mbdcp_float *x, mbdcp_int n, mbdcp_int skip)
{
    mbdcp_int j = -1;
    for (mbdcp_int i = 0; i < n; ++i)
        if (i != skip && x[i] > (j < 0 ? -1.0 : x[j])) j = i;
    return j;
}

/* |R_j + R_k| (k < 0: |R_j|) for columns of the n_v x nsel matrix R. */
static mbdcp_float column_norm(const Vjp *w, mbdcp_int nsel, mbdcp_int j, mbdcp_int k)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int r = 0; r < w->nv; ++r) {
        const mbdcp_float t = w->R[(size_t)r * nsel + j] + (k >= 0 ? w->R[(size_t)r * nsel + k] : 0.0);
        s += t * t;
    }
    return sqrt(s);
}

/* One pick of a pivoted QR on block b: the column of largest residual norm while it exceeds cut,
 * orthogonalised out of R. Returns 0 when none is left, else 1, and sets *tie when the runner-up
 * equalled it (not being its negative) and the pick made it dependent. */
static int pick(Vjp *w, mbdcp_int nsel, int b, mbdcp_float cut, int *tie)
{
    norms(w, nsel, b);
    const mbdcp_int j = largest(w->nrm, nsel, -1);
    if (j < 0 || !(w->nrm[j] > cut)) return 0;
    const mbdcp_int k = largest(w->nrm, nsel, j);
    const mbdcp_int nv = w->nv;
    const mbdcp_float nj = w->nrm[j];
    const int near = k >= 0 && w->nrm[k] >= (1.0 - TIE) * nj && column_norm(w, nsel, j, k) > TIE * nj;
    for (mbdcp_int r = 0; r < nv; ++r) w->q[r] = w->R[(size_t)r * nsel + j] / nj;
    mbdcp_float *coef = w->rhs; /* scratch (nsel <= nk) */
    mbdcp_gemv(nv, nsel, 1.0, w->R, 1, w->q, 0.0, coef);
    for (mbdcp_int r = 0; r < nv; ++r) {
        mbdcp_float *Rr = w->R + (size_t)r * nsel;
        for (mbdcp_int i = 0; i < nsel; ++i) Rr[i] -= w->q[r] * coef[i];
    }
    if (near) *tie |= column_norm(w, nsel, k, -1) <= cut;
    w->picked[j] = 1;
    return 1;
}

/* The block of column j of J = [Wn D] among the imposed rows (NONE: not imposed). */
static int block_of(const Vjp *w, mbdcp_int j)
{
    const mbdcp_int nc = w->nc;
    if (j < nc) return w->in_contact[j] ? (w->slide[j] ? SLIDING_N : STICKING_N) : NONE;
    if (w->cand[j - nc]) return STRUCTURAL;
    return w->free_b[j - nc] && w->stick[w->own[j - nc]] ? STICKING_B : NONE;
}

/* The imposed columns (sel, their blocks) and R = their columns of X with their norms squared in
 * norm0; returns how many, 0 when all are sliding normals (nothing to choose). */
static mbdcp_int imposed(Vjp *w)
{
    mbdcp_int nsel = 0, any = 0;
    for (mbdcp_int j = 0; j < w->ncol; ++j) {
        const int b = block_of(w, j);
        if (b == NONE) continue;
        any |= b != SLIDING_N;
        w->sel[nsel] = j;
        w->block[nsel] = b;
        w->picked[nsel++] = 0;
    }
    if (!any) return 0;
    for (mbdcp_int i = 0; i < nsel; ++i) w->norm0[i] = 0.0;
    for (mbdcp_int r = 0; r < w->nv; ++r) {
        mbdcp_float *Rr = w->R + (size_t)r * nsel;
        for (mbdcp_int i = 0; i < nsel; ++i) {
            Rr[i] = w->X[(size_t)r * w->ncol + w->sel[i]];
            w->norm0[i] += Rr[i] * Rr[i];
        }
    }
    return nsel;
}

/* Direction k of D (its column) into x (stride apart); returns its norm. */
static mbdcp_float load_direction(const Vjp *w, mbdcp_int k, mbdcp_float *x, size_t stride)
{
    mbdcp_float n = 0.0;
    for (mbdcp_int row = 0; row < w->nv; ++row) {
        x[(size_t)row * stride] = w->p->D[(size_t)row * w->m + k];
        n += x[(size_t)row * stride] * x[(size_t)row * stride];
    }
    return sqrt(n);
}

/* x (stride apart) minus its projections on R's first r orthonormal columns (modified
 * Gram-Schmidt); returns the norm left. */
static mbdcp_float project_out(const Vjp *w, mbdcp_int nsel, mbdcp_int r, mbdcp_float *x, size_t stride)
{
    mbdcp_float n = 0.0;
    for (mbdcp_int t = 0; t < r; ++t) {
        mbdcp_float dot = 0.0;
        for (mbdcp_int row = 0; row < w->nv; ++row) dot += w->R[(size_t)row * nsel + t] * x[(size_t)row * stride];
        for (mbdcp_int row = 0; row < w->nv; ++row) x[(size_t)row * stride] -= dot * w->R[(size_t)row * nsel + t];
    }
    for (mbdcp_int row = 0; row < w->nv; ++row) n += x[(size_t)row * stride] * x[(size_t)row * stride];
    return sqrt(n);
}

/* An orthonormal basis of the span of contact c's kept directions (D's columns: dependence does not
 * depend on the metric), in R's first columns (row stride nsel, R being free once the rows are
 * picked); returns its size. */
static mbdcp_int own_basis(Vjp *w, mbdcp_int nsel, mbdcp_int c)
{
    mbdcp_int r = 0;
    for (mbdcp_int i = 0; i < nsel; ++i) {
        const mbdcp_int k = w->sel[i] - w->nc;
        if (!w->picked[i] || w->block[i] < STICKING_B || w->own[k] != c) continue;
        mbdcp_float *x = w->R + r;
        const mbdcp_float n0 = load_direction(w, k, x, (size_t)nsel), n1 = project_out(w, nsel, r, x, (size_t)nsel);
        if (!(n1 > RANK_CUT * n0)) continue;
        for (mbdcp_int row = 0; row < w->nv; ++row) x[(size_t)row * nsel] /= n1;
        ++r;
    }
    return r;
}

/* Does a dropped candidate lie outside the span of its own contact's kept directions, i.e. depend
 * on other contacts' rows or on the normals (mbdcp.derivatives.step's _tied)? Then a gradient in
 * the gaps or the directions holds a relation that a change of one of them breaks: the full
 * derivative names the contacts. Scratch: q. */
static int any_tied(Vjp *w, mbdcp_int nsel)
{
    mbdcp_int c = -1, r = 0;
    for (mbdcp_int i = 0; i < nsel; ++i) {
        if (w->block[i] != STRUCTURAL || w->picked[i]) continue;
        const mbdcp_int k = w->sel[i] - w->nc;
        if (w->own[k] != c) r = own_basis(w, nsel, c = w->own[k]);
        const mbdcp_float n0 = load_direction(w, k, w->q, 1);
        if (project_out(w, nsel, r, w->q, 1) > RANK_CUT * fmax(n0, NORM_FLOOR)) return 1;
    }
    return 0;
}

/* Block b's rows picked (pivoted QR against those kept before); 1 if a sticking row is dropped. */
static int pick_block(Vjp *w, mbdcp_int nsel, int b, int *tie)
{
    mbdcp_float big = 0.0;
    for (mbdcp_int i = 0; i < nsel; ++i)
        if (w->block[i] == b) big = fmax(big, sqrt(w->norm0[i]));
    while (pick(w, nsel, b, RANK_CUT * fmax(big, NORM_FLOOR), tie)) {
    }
    for (mbdcp_int i = 0; i < nsel && (b == STICKING_N || b == STICKING_B); ++i)
        if (w->block[i] == b && !w->picked[i]) return 1;
    return 0;
}

/* The imposed rows kept (mbdcp.derivatives.step's _drop_dependent): all sliding normals, then per
 * block (sticking normals, sticking directions, candidates) those independent of the rows kept
 * before, in the metric of M^-1. A sticking row dropped, or a tie, is not decided here, nor (with
 * geometry) a dropped candidate tied to other contacts (any_tied); else a dropped candidate stays
 * at zero, a kept one joins the free directions. */
static MbdcpStepVjpOutcome independent(Vjp *w, int geometry)
{
    const mbdcp_int nsel = imposed(w);
    int tie = 0;
    for (int b = SLIDING_N; nsel && b <= STRUCTURAL; ++b)
        if (pick_block(w, nsel, b, &tie)) return MBDCP_VJP_DEPENDENT;
    if (tie || (geometry && any_tied(w, nsel))) return MBDCP_VJP_DEPENDENT;
    for (mbdcp_int i = 0; i < nsel; ++i)
        if (w->block[i] == STRUCTURAL && w->picked[i]) w->free_b[w->sel[i] - w->nc] = 1;
    return MBDCP_VJP_DECIDED;
}

/* The free multipliers' indices FN (p_n), FB (beta), FS (sigma), and the positions of p_n and
 * sigma among them (-1: not free). */
static void free_indices(Vjp *w)
{
    w->nfn = w->nfb = w->nfs = 0;
    for (mbdcp_int c = 0; c < w->nc; ++c) {
        w->pos_n[c] = w->pos_s[c] = -1;
        if (w->in_contact[c]) w->pos_n[c] = w->nfn, w->FN[w->nfn++] = c;
        if (w->slide[c]) w->pos_s[c] = w->nfs, w->FS[w->nfs++] = c;
    }
    for (mbdcp_int k = 0; k < w->m; ++k)
        if (w->free_b[k]) w->FB[w->nfb++] = k;
}

/* The free multipliers' indices, X's columns of their rows (Xs), and K^T of the implicit-function
 * system in (p_n[FN], beta[FB], sigma[FS]) (mbdcp.derivatives.step's _ift_system). */
static void system(Vjp *w)
{
    const MbdcpStepProblem *p = w->p;
    const mbdcp_int nv = w->nv, nc = w->nc;
    free_indices(w);
    const mbdcp_int nJ = w->nfn + w->nfb, n = nJ + w->nfs;
    /* Xs (n_v x nJ) in X's place: each entry moves to an index no larger than its own (the free
     * columns ascend), which the entries before it have left */
    for (mbdcp_int r = 0; r < nv; ++r) {
        const mbdcp_float *Xr = w->X + (size_t)r * w->ncol;
        mbdcp_float *Sr = w->X + (size_t)r * nJ;
        for (mbdcp_int i = 0; i < w->nfn; ++i) Sr[i] = Xr[w->FN[i]];
        for (mbdcp_int i = 0; i < w->nfb; ++i) Sr[w->nfn + i] = Xr[nc + w->FB[i]];
    }
    /* X_s^T X_s formed at K's start (nJ x nJ), then spread to K's rows of n, the last row first */
    mbdcp_gram(nv, nJ, w->X, w->K);
    for (mbdcp_int i = n - 1; i >= 0; --i) {
        mbdcp_float *Ki = w->K + (size_t)i * n;
        if (i < nJ) memmove(Ki, w->K + (size_t)i * nJ, (size_t)nJ * sizeof(mbdcp_float));
        for (mbdcp_int j = i < nJ ? nJ : 0; j < n; ++j) Ki[j] = 0.0;
    }
    /* K: beta rows + dsigma; sigma rows mu dp_n - sum dbeta; here transposed */
    for (mbdcp_int i = 0; i < w->nfb; ++i) {
        const mbdcp_int s = w->pos_s[w->own[w->FB[i]]];
        if (s < 0) continue;
        w->K[(size_t)(nJ + s) * n + w->nfn + i] = 1.0;
        w->K[(size_t)(w->nfn + i) * n + nJ + s] = -1.0;
    }
    for (mbdcp_int s = 0; s < w->nfs; ++s) {
        const mbdcp_int c = w->FS[s];
        w->K[(size_t)w->pos_n[c] * n + nJ + s] = p->mu[c];
    }
}

/* g_v (the cotangent of v_next) and c_f: a separated contact's sigma follows the sliding speed of
 * its slowest direction, -(d_k^T v_next), so its cotangent moves to v_next and to D's column. */
static void follow_sliding_speed(Vjp *w, const MbdcpStepVectors *c)
{
    const mbdcp_float *D = w->p->D;
    for (mbdcp_int r = 0; r < w->nv; ++r) w->gv[r] = c->v_next ? c->v_next[r] : 0.0;
    for (mbdcp_int k = 0; k < w->m; ++k) w->cf[k] = 0.0;
    for (mbdcp_int i = 0; c->sigma && i < w->nc; ++i) {
        if (!w->post[i]) continue;
        const mbdcp_int k = w->arg[i];
        w->cf[k] += c->sigma[i];
        for (mbdcp_int r = 0; r < w->nv; ++r) w->gv[r] -= D[(size_t)r * w->m + k] * c->sigma[i];
    }
}

/* lam = K^-T h for h = (the free multipliers' cotangents) + (X_s^T L^-1 g_v, 0); a = L^-1 g_v. 0
 * when K is too near singular for its pivots' spread to clear rcond_min. */
static int multipliers(Vjp *w, const MbdcpStepVectors *c, mbdcp_float rcond_min)
{
    const mbdcp_int nv = w->nv, nJ = w->nfn + w->nfb, n = nJ + w->nfs;
    memcpy(w->a, w->gv, (size_t)nv * sizeof(mbdcp_float));
    mbdcp_trsv_lower(nv, w->L, 0, w->a);
    for (mbdcp_int i = 0; i < w->nfn; ++i) w->rhs[i] = c->p_n ? c->p_n[w->FN[i]] : 0.0;
    for (mbdcp_int i = 0; i < w->nfb; ++i) w->rhs[w->nfn + i] = c->beta ? c->beta[w->FB[i]] : 0.0;
    for (mbdcp_int i = 0; i < w->nfs; ++i) w->rhs[nJ + i] = c->sigma ? c->sigma[w->FS[i]] : 0.0;
    mbdcp_gemv(nv, nJ, 1.0, w->X, 1, w->a, 1.0, w->rhs);
    if (n == 0) return 1;
    if (mbdcp_lu_solve(n, w->K, w->piv, w->rhs, 0.0) != MBDCP_OK) return 0;
    mbdcp_float lo = INFINITY, hi = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_float u = fabs(w->K[(size_t)i * n + i]);
        lo = fmin(lo, u);
        hi = fmax(hi, u);
    }
    return lo > MARGIN * rcond_min * hi;
}

/* The gradients from lam (mbdcp.derivatives.step's reverse mode): a_v = L^-T (a - X_s lam_J). */
static void gradients(Vjp *w, MbdcpStepGradients *g)
{
    const MbdcpStepProblem *p = w->p;
    const mbdcp_int nv = w->nv, nc = w->nc, m = w->m, nJ = w->nfn + w->nfb;
    const mbdcp_float *lam = w->rhs, h = p->h;
    memcpy(w->av, w->a, (size_t)nv * sizeof(mbdcp_float));
    mbdcp_gemv(nv, nJ, -1.0, w->X, 0, lam, 1.0, w->av);
    mbdcp_trsv_lower(nv, w->L, 1, w->av);
    for (mbdcp_int c = 0; c < nc; ++c) w->cn[c] = g->mu[c] = 0.0;
    g->h = 0.0;
    for (mbdcp_int i = 0; i < w->nfn; ++i) {
        w->cn[w->FN[i]] = lam[i];
        if (p->psi_n) g->h += lam[i] * p->psi_n[w->FN[i]];
    }
    g->h /= h * h;
    for (mbdcp_int i = 0; i < w->nfb; ++i) w->cf[w->FB[i]] += lam[w->nfn + i];
    for (mbdcp_int i = 0; i < w->nfs; ++i) g->mu[w->FS[i]] = -lam[nJ + i] * w->pn[w->FS[i]];
    for (mbdcp_int c = 0; c < nc; ++c) g->psi_n[c] = -w->cn[c] / h;
    memcpy(g->p_ext, w->av, (size_t)nv * sizeof(mbdcp_float));
    mbdcp_gemv(nv, nv, 1.0, p->M, 0, w->av, 0.0, g->v);
    for (mbdcp_int r = 0; r < nv; ++r) {
        const mbdcp_float ar = w->av[r], vr = w->vn[r], dr = p->v[r] - w->vn[r];
        if (g->M)
            for (mbdcp_int j = 0; j < nv; ++j) g->M[(size_t)r * nv + j] = 0.5 * (ar * (p->v[j] - w->vn[j]) + dr * w->av[j]);
        if (g->Wn)
            for (mbdcp_int c = 0; c < nc; ++c) g->Wn[(size_t)r * nc + c] = ar * w->pn[c] - vr * w->cn[c];
        if (g->D)
            for (mbdcp_int k = 0; k < m; ++k) g->D[(size_t)r * m + k] = ar * w->beta[k] - vr * w->cf[k];
    }
}

static int finite_gradients(const Vjp *w, const MbdcpStepGradients *g)
{
    const size_t nv = (size_t)w->nv, nc = (size_t)w->nc, m = (size_t)w->m;
    return mbdcp_all_finite(nv, g->v) && mbdcp_all_finite(nv, g->p_ext) && mbdcp_all_finite(nc, g->mu) &&
           mbdcp_all_finite(nc, g->psi_n) && isfinite(g->h) && (!g->M || mbdcp_all_finite(nv * nv, g->M)) &&
           (!g->Wn || mbdcp_all_finite(nv * nc, g->Wn)) && (!g->D || mbdcp_all_finite(nv * m, g->D));
}

/* Are the n pointers given? */
static int given(int n, const void *const *ptr)
{
    for (int i = 0; i < n; ++i)
        if (!ptr[i]) return 0;
    return 1;
}

/* The solution's and the gradients' pointers a step of these sizes needs. */
static int pointers_given(const MbdcpStepProblem *p, const MbdcpStepVectors *x, const MbdcpStepGradients *g)
{
    const void *const per_v[] = {x->v_next, g->v, g->p_ext};
    const void *const per_c[] = {x->p_n, x->sigma, g->mu, g->psi_n};
    return given(3, per_v) && (!p->n_c || given(4, per_c)) && (!p->m || x->beta);
}

/* The step checked as mbdcp_step_solve checks it, plain, with the solution's and the gradients'
 * pointers given, and valid settings. */
static MbdcpReturn check(const MbdcpStepProblem *p, const MbdcpStepVectors *x, const MbdcpStepVjpSettings *s,
                         const MbdcpStepGradients *g)
{
    const MbdcpReturn rc = mbdcp_step_problem_check(p);
    if (rc != MBDCP_OK) return rc;
    if (p->n_b || p->m_j || p->n_j || p->dpsi_n || p->dpsi_f) return MBDCP_ERR_DATA;
    if (!pointers_given(p, x, g)) return MBDCP_ERR_NULL;
    const int settings_ok = s->degenerate_tol > 0.0 && s->rcond_min > 0.0 && s->opposite_rtol >= 0.0;
    return settings_ok ? MBDCP_OK : MBDCP_ERR_SETTING;
}

/* The contact of each friction direction: the column of its row's 1 in E (checked a grouping). */
static void owners(Vjp *w)
{
    for (mbdcp_int k = 0; k < w->m; ++k) {
        const mbdcp_float *Ek = w->p->E + (size_t)k * w->nc;
        mbdcp_int c = 0;
        while (Ek[c] != 1.0) ++c;
        w->own[k] = c;
    }
}

MbdcpReturn mbdcp_step_vjp(const MbdcpStepProblem *p, const MbdcpStepVectors *x, const MbdcpStepVectors *c,
                           const MbdcpStepVjpSettings *s, MbdcpStepGradients *g, MbdcpStepVjpOutcome *outcome,
                           void *work, size_t work_bytes)
{
    const void *const args[] = {p, x, c, s, g, outcome};
    if (!given(6, args)) return MBDCP_ERR_NULL;
    const MbdcpReturn rc = check(p, x, s, g);
    if (rc != MBDCP_OK) return rc;
    if (!work || work_bytes < mbdcp_step_vjp_workspace_size(p->n_v, p->n_c, p->m)) return MBDCP_ERR_WORKSPACE;
    Vjp w;
    memset(&w, 0, sizeof w);
    w.p = p;
    w.vn = x->v_next;
    w.pn = x->p_n;
    w.beta = x->beta;
    w.sigma = x->sigma;
    w.nv = p->n_v;
    w.nc = p->n_c;
    w.m = p->m;
    w.ncol = p->n_c + p->m;
    w.nk = w.ncol + p->n_c;
    layout(&w, work);
    owners(&w);
    *outcome = MBDCP_VJP_SINGULAR;
    if (!scales(&w, s->degenerate_tol)) return MBDCP_OK;
    rows(&w);
    if ((*outcome = contact_modes(&w)) != MBDCP_VJP_DECIDED) return MBDCP_OK;
    if ((*outcome = direction_modes(&w)) != MBDCP_VJP_DECIDED) return MBDCP_OK;
    if ((*outcome = structural(&w, s->opposite_rtol)) != MBDCP_VJP_DECIDED) return MBDCP_OK;
    if ((*outcome = independent(&w, s->geometry)) != MBDCP_VJP_DECIDED) return MBDCP_OK;
    system(&w);
    follow_sliding_speed(&w, c);
    *outcome = MBDCP_VJP_SINGULAR;
    if (!multipliers(&w, c, s->rcond_min)) return MBDCP_OK;
    gradients(&w, g);
    if (finite_gradients(&w, g)) *outcome = MBDCP_VJP_DECIDED;
    return MBDCP_OK;
}
