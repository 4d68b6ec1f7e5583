/* Anitescu & Hart's fixed-point algorithms with P1, P2 solved by sparse active-set steps (see
 * relax_sparse.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "mbdcp/dense.h"
#include "mbdcp/relax_sparse.h"
#include "mbdcp/sparse_ldl.h"

/* Regularisation of the basis system, relative to each row's scale: basic variables get REG,
 * non-basic ones 1 / REG (Vanderbei 1995's quasi-definite form; refinement removes REG). */
#define REG 1e-10
#define REFINE 2
/* Static pivots of the factorisations (sparse_ldl.h), relative to the block column's scale. */
#define PIVOT_TOL 1e-14
/* Entries of a basis point below CLEAN_ZERO n eps max z are zeros (lemke.c's rule). */
#define CLEAN_ZERO 64.0
/* See contacts_first. */
#define FILL_LIMIT 4
/* The proximal active-set steps (see prox_sub): the first weight, its factor per round and its
 * floor (relative to each row's diagonal of G), the rounds and the bases per round: few, since a
 * round needs only an approximate solve (the next round starts from its point; with more, P2's
 * rounds on compacting piles ran to the cap round after round, with fewer they lost steps). */
#define PROX_FIRST 1e-2
#define PROX_SHRINK 0.1
#define PROX_LAST 1e-8
#define PROX_ROUNDS 40
#define PROX_BASES 5

typedef struct {
    char *base; /* NULL: only count */
    size_t used;
} Bump;

static void *take(Bump *b, size_t n, size_t size)
{
    void *at = b->base ? b->base + b->used : NULL;
    b->used += (n * size + 7) / 8 * 8;
    return at;
}

typedef struct {
    const MbdcpSparseStep *p;
    const MbdcpFixedPointSettings *s;
    mbdcp_int nv, nc, m, nw, N1, K, nnz_m, nnz_w, nnz_k;
    const mbdcp_int *Mp, *Mi, *Wp, *Wi, *dirc; /* the caller's data (MbdcpSparseStep) */
    const mbdcp_float *Mx, *Wx;
    mbdcp_int *Kp, *Ki, *kdiag, *basis1, *basis2, *have;
    mbdcp_float *Kx, *gdiag;
    mbdcp_float *r, *vfree, *f0, *fmag0, *f, *fmag, *u, *rho, *z, *w, *sc, *lam, *gamma, *vprev;
    mbdcp_float clean; /* the last basis point's entries at most this large are rounding of zero */
    mbdcp_float prox;  /* 0, or the weight of the proximal term about xc (see prox_sub) */
    mbdcp_float *xc;   /* N1: the proximal centre (x, then lam in P1) */
    MbdcpSldl FM, FK;
    void *fm_work, *fk_work;
    size_t fm_bytes, fk_bytes;
} Sp;

/* Pointers into the workspace (or, with b->base NULL, its size). */
static void layout(Sp *S, Bump *b, const MbdcpRelaxSparseOrder *ord)
{
    const size_t nv = (size_t)S->nv, nw = (size_t)S->nw, N1 = (size_t)S->N1, K = (size_t)S->K;
    S->Kp = take(b, K + 1, sizeof(mbdcp_int));
    S->Ki = take(b, (size_t)S->nnz_k, sizeof(mbdcp_int));
    S->Kx = take(b, (size_t)S->nnz_k, sizeof(mbdcp_float));
    S->kdiag = take(b, K, sizeof(mbdcp_int));
    S->have = take(b, nw, sizeof(mbdcp_int));
    if (!ord) return; /* the analysis needs the patterns alone */
    S->basis1 = take(b, N1, sizeof(mbdcp_int));
    S->basis2 = take(b, nw, sizeof(mbdcp_int));
    S->gdiag = take(b, nw, sizeof(mbdcp_float));
    S->r = take(b, nv, sizeof(mbdcp_float));
    S->vfree = take(b, nv, sizeof(mbdcp_float));
    S->vprev = take(b, nv, sizeof(mbdcp_float));
    S->f0 = take(b, nw, sizeof(mbdcp_float));
    S->fmag0 = take(b, nw, sizeof(mbdcp_float));
    S->f = take(b, nw, sizeof(mbdcp_float));
    S->fmag = take(b, nw, sizeof(mbdcp_float));
    S->u = take(b, K, sizeof(mbdcp_float));
    S->rho = take(b, K, sizeof(mbdcp_float));
    S->z = take(b, N1, sizeof(mbdcp_float));
    S->w = take(b, N1, sizeof(mbdcp_float));
    S->sc = take(b, N1, sizeof(mbdcp_float));
    S->lam = take(b, (size_t)S->nc, sizeof(mbdcp_float));
    S->gamma = take(b, (size_t)S->nc, sizeof(mbdcp_float));
    S->xc = take(b, N1, sizeof(mbdcp_float));
    S->fm_bytes = mbdcp_sldl_workspace_size(S->nv, 1, 1, S->nnz_m, ord->nnzl_m);
    S->fk_bytes = mbdcp_sldl_workspace_size(S->K, 1, 1, S->nnz_k, ord->nnzl_k);
    S->fm_work = take(b, S->fm_bytes, 1);
    S->fk_work = take(b, S->fk_bytes, 1);
}

/* Sizes and data pointers from q (checked in full when check); MBDCP_ERR_DIMENSION when ord was
 * made for a problem of other sizes. */
static MbdcpReturn dims(const MbdcpSparseStep *q, Sp *S, int check, const MbdcpRelaxSparseOrder *ord)
{
    MbdcpReturn rc = check ? mbdcp_sparse_step_check(q) : MBDCP_OK;
    if (rc != MBDCP_OK) return rc;
    if (q->n_v < 1 || q->n_c < 0 || q->m < 0) return MBDCP_ERR_DIMENSION;
    if (!q->Mp || !q->Wp) return MBDCP_ERR_NULL;
    memset(S, 0, sizeof(*S));
    S->p = q;
    S->nv = q->n_v;
    S->nc = q->n_c;
    S->m = q->m;
    S->nw = q->n_c + q->m;
    S->N1 = 2 * q->n_c + q->m;
    S->K = q->n_v + S->N1;
    S->Mp = q->Mp;
    S->Mi = q->Mi;
    S->Mx = q->Mx;
    S->Wp = q->Wp;
    S->Wi = q->Wi;
    S->Wx = q->Wx;
    S->dirc = q->contact;
    S->nnz_m = q->Mp[S->nv];
    S->nnz_w = q->Wp[S->nw];
    S->nnz_k = S->nnz_m + S->nc + S->nnz_w + 2 * S->nw;
    if (ord && (ord->nnz_m != S->nnz_m || ord->nnz_k != S->nnz_k)) return MBDCP_ERR_DIMENSION;
    return MBDCP_OK;
}

/* The basis system's lower triangle by rows, u = (v, lam, x), with its fixed entries (M, -W,
 * -C); the diagonal entries of lam and x are set per basis (kdiag: where each diagonal is). */
static void build_system(Sp *S)
{
    const mbdcp_int nv = S->nv, nc = S->nc, nw = S->nw;
    mbdcp_int t = 0;
    for (mbdcp_int i = 0; i < nv; ++i) {
        S->Kp[i] = t;
        for (mbdcp_int q = S->Mp[i]; q < S->Mp[i + 1]; ++q) {
            if (S->Mi[q] == i) S->kdiag[i] = t;
            S->Ki[t] = S->Mi[q];
            S->Kx[t++] = S->Mx[q];
        }
    }
    for (mbdcp_int c = 0; c < nc; ++c) {
        S->Kp[nv + c] = t;
        S->kdiag[nv + c] = t;
        S->Ki[t] = nv + c;
        S->Kx[t++] = 0.0;
    }
    for (mbdcp_int j = 0; j < nw; ++j) {
        const mbdcp_int row = nv + nc + j, c = j < nc ? j : S->dirc[j - nc];
        S->Kp[row] = t;
        for (mbdcp_int q = S->Wp[j]; q < S->Wp[j + 1]; ++q) {
            S->Ki[t] = S->Wi[q];
            S->Kx[t++] = -S->Wx[q];
        }
        S->Ki[t] = nv + c; /* -C: +mu on the normal row, -1 on a direction's */
        S->Kx[t++] = j < nc ? S->p->mu[c] : -1.0;
        S->kdiag[row] = t;
        S->Ki[t] = row;
        S->Kx[t++] = 0.0;
    }
    S->Kp[S->K] = t;
}

/* The basis system's ordering: the contact variables x, then lam, eliminated first (each x row
 * couples a few velocities and its contact's lam; fill stays within the bodies a contact
 * touches), then the velocities in their given order; the approximate minimum degree order of
 * the whole pattern instead where that leaves a factor more than FILL_LIMIT times the system. */
static MbdcpReturn contacts_first(Sp *S, mbdcp_int *perm, mbdcp_int *nnz_l, void *work, size_t bytes)
{
    const mbdcp_int nv = S->nv, nc = S->nc;
    for (mbdcp_int k = 0; k < S->nw; ++k) perm[k] = nv + nc + k;
    for (mbdcp_int c = 0; c < nc; ++c) perm[S->nw + c] = nv + c;
    for (mbdcp_int i = 0; i < nv; ++i) perm[S->N1 + i] = i;
    MbdcpReturn rc = mbdcp_sldl_count(S->K, S->Kp, S->Ki, perm, nnz_l, NULL, work, bytes);
    if (rc != MBDCP_OK || *nnz_l <= FILL_LIMIT * S->nnz_k) return rc;
    return mbdcp_sldl_analyze(S->K, S->Kp, S->Ki, perm, nnz_l, NULL, work, bytes);
}

size_t mbdcp_relax_sparse_analyze_workspace_size(const MbdcpSparseStep *p)
{
    Sp S;
    if (!p || dims(p, &S, 0, NULL) != MBDCP_OK) return 0;
    Bump b = {NULL, 0};
    layout(&S, &b, NULL);
    const size_t am = mbdcp_sldl_analyze_workspace_size(S.nv, S.nnz_m);
    const size_t ak = mbdcp_sldl_analyze_workspace_size(S.K, S.nnz_k);
    return b.used + (am > ak ? am : ak) + 8;
}

MbdcpReturn mbdcp_relax_sparse_analyze(const MbdcpSparseStep *p, MbdcpRelaxSparseOrder *ord, void *work,
                                       size_t work_bytes)
{
    if (!ord || !work) return MBDCP_ERR_NULL;
    Sp S;
    MbdcpReturn rc = dims(p, &S, 1, NULL);
    if (rc != MBDCP_OK) return rc;
    if (!ord->perm_m || !ord->perm_k) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_relax_sparse_analyze_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    Bump b = {(char *)work, 0};
    layout(&S, &b, NULL);
    build_system(&S);
    void *aw = (char *)work + b.used;
    const size_t ab = work_bytes - b.used;
    rc = mbdcp_sldl_analyze(S.nv, S.Mp, S.Mi, ord->perm_m, &ord->nnzl_m, NULL, aw, ab);
    if (rc != MBDCP_OK) return rc;
    rc = contacts_first(&S, ord->perm_k, &ord->nnzl_k, aw, ab);
    ord->nnz_m = S.nnz_m;
    ord->nnz_k = S.nnz_k;
    return rc;
}

size_t mbdcp_fixed_point_sparse_workspace_size(const MbdcpSparseStep *p, const MbdcpRelaxSparseOrder *ord)
{
    Sp S;
    if (!p || !ord || dims(p, &S, 0, ord) != MBDCP_OK) return 0;
    Bump b = {NULL, 0};
    layout(&S, &b, ord);
    return b.used;
}

/* y = M x from M's lower triangle. */
static void m_times(const Sp *S, const mbdcp_float *x, mbdcp_float *y)
{
    memset(y, 0, (size_t)S->nv * sizeof(mbdcp_float));
    for (mbdcp_int i = 0; i < S->nv; ++i)
        for (mbdcp_int q = S->Mp[i]; q < S->Mp[i + 1]; ++q) {
            const mbdcp_int j = S->Mi[q];
            y[i] += S->Mx[q] * x[j];
            if (j != i) y[j] += S->Mx[q] * x[i];
        }
}

/* W_j^T x, and the sum of the magnitudes of its terms when mag is not NULL. */
static mbdcp_float col_dot(const Sp *S, mbdcp_int j, const mbdcp_float *x, mbdcp_float *mag)
{
    mbdcp_float d = 0.0, a = 0.0;
    for (mbdcp_int q = S->Wp[j]; q < S->Wp[j + 1]; ++q) {
        d += S->Wx[q] * x[S->Wi[q]];
        a += fabs(S->Wx[q] * x[S->Wi[q]]);
    }
    if (mag) *mag = a;
    return d;
}

/* Lambda(v) (relax.h) from W's direction columns. */
static void sliding(const Sp *S, const mbdcp_float *v, mbdcp_float *lam)
{
    memset(lam, 0, (size_t)S->nc * sizeof(mbdcp_float));
    for (mbdcp_int k = 0; k < S->m; ++k) {
        const mbdcp_float s = -col_dot(S, S->nc + k, v, NULL);
        if (s > lam[S->dirc[k]]) lam[S->dirc[k]] = s;
    }
}

/* The factors' handles, M's factor, the free motion and the contact rows' right-hand side f0
 * with its terms' magnitudes fmag0 (the rows' data scale, as relax.c's), a sum within the
 * rounding of its terms set to zero (mbdcp_sum_or_zero's rule). 1 when M's factor is unusable. */
static MbdcpReturn prepare(Sp *S, const MbdcpRelaxSparseOrder *ord, int *bad)
{
    const MbdcpSparseStep *p = S->p;
    MbdcpReturn rc = mbdcp_sldl_init(&S->FM, S->nv, 1, 1, S->Mp, S->Mi, ord->perm_m, ord->nnzl_m, S->fm_work, S->fm_bytes);
    if (rc == MBDCP_OK) rc = mbdcp_sldl_init(&S->FK, S->K, 1, 1, S->Kp, S->Ki, ord->perm_k, ord->nnzl_k, S->fk_work, S->fk_bytes);
    if (rc == MBDCP_OK) rc = mbdcp_sldl_factor(&S->FM, S->Mx, PIVOT_TOL);
    if (rc == MBDCP_ERR_NONFINITE) rc = MBDCP_OK, S->FM.perturbed = 1;
    if (rc != MBDCP_OK) return rc;
    *bad = S->FM.perturbed > 0;
    m_times(S, p->v, S->r);
    for (mbdcp_int i = 0; i < S->nv; ++i) S->r[i] += p->p_ext ? p->p_ext[i] : 0.0;
    memcpy(S->vfree, S->r, (size_t)S->nv * sizeof(mbdcp_float));
    mbdcp_sldl_solve(&S->FM, S->vfree);
    const mbdcp_float round = 4.0 * (mbdcp_float)(S->nv + 2) * DBL_EPSILON;
    for (mbdcp_int j = 0; j < S->nw; ++j) {
        mbdcp_float mag, e = 0.0, gd = 0.0;
        const mbdcp_float g = col_dot(S, j, S->vfree, &mag);
        if (j < S->nc)
            e = (p->psi_n ? p->psi_n[j] / p->h : 0.0) + (p->dpsi_n ? p->dpsi_n[j] : 0.0);
        else if (p->dpsi_f)
            e = p->dpsi_f[j - S->nc];
        S->fmag0[j] = mag + fabs(e);
        S->f0[j] = fabs(g + e) <= round * S->fmag0[j] ? 0.0 : g + e;
        for (mbdcp_int q = S->Wp[j]; q < S->Wp[j + 1]; ++q) {
            const mbdcp_int i = S->Wi[q];
            gd += S->Wx[q] * S->Wx[q] / S->Mx[S->Mp[i + 1] - 1]; /* the diagonal ends row i */
        }
        S->gdiag[j] = gd > 0.0 ? gd : 1.0;
    }
    return MBDCP_OK;
}

/* The subproblem's right-hand side f and its scale fmag: P1 adds gamma to the normal rows, P2
 * adds E lam to the direction rows (relax.c's p1_rhs, p2_rhs). */
static void subproblem_rhs(Sp *S, int which, const mbdcp_float *data)
{
    memcpy(S->f, S->f0, (size_t)S->nw * sizeof(mbdcp_float));
    memcpy(S->fmag, S->fmag0, (size_t)S->nw * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < S->nw; ++j) {
        mbdcp_float a;
        if (which == 1 && j < S->nc)
            a = data[j];
        else if (which == 2 && j >= S->nc)
            a = data[S->dirc[j - S->nc]];
        else
            continue;
        S->f[j] = mbdcp_sum_or_zero(S->nv, S->f[j], a);
        S->fmag[j] += fabs(a);
    }
}

/* The scale of contact c's lam in the basis system (the size of its row's entries). */
static mbdcp_float lam_scale(const Sp *S, mbdcp_int c)
{
    return (1.0 + S->p->mu[c] * S->p->mu[c]) / S->gdiag[c];
}

/* The diagonal of the basis system for basis (P1: N1 flags (x, lam); P2: n_w flags, lam fixed)
 * and its right-hand side (0; 0; f_B) in S->u, unknowns (v_next - v_free, lam, x); factors it. */
static MbdcpReturn factor_basis(Sp *S, int which, const mbdcp_int *basis)
{
    const mbdcp_int nv = S->nv, nc = S->nc, nw = S->nw;
    for (mbdcp_int c = 0; c < nc; ++c) {
        const mbdcp_float scale = lam_scale(S, c);
        const int on = which == 1 && basis[nw + c];
        /* in P1's proximal rounds lam has its proximal term too: the whole monotone LCP is regularised */
        S->Kx[S->kdiag[nv + c]] = on ? (S->prox > 0.0 ? S->prox : REG) * scale : scale / REG;
        S->u[nv + c] = on ? S->prox * scale * S->xc[nw + c] : 0.0;
    }
    const mbdcp_float reg = S->prox > 0.0 ? S->prox : REG;
    for (mbdcp_int j = 0; j < nw; ++j) {
        S->Kx[S->kdiag[nv + nc + j]] = basis[j] ? -reg * S->gdiag[j] : -S->gdiag[j] / REG;
        S->u[nv + nc + j] = basis[j] ? S->f[j] - S->prox * S->gdiag[j] * S->xc[j] : 0.0;
    }
    memset(S->u, 0, (size_t)nv * sizeof(mbdcp_float));
    return mbdcp_sldl_factor(&S->FK, S->Kx, PIVOT_TOL);
}

/* rho = the basis equations' residual at u = (dv, lam, x), dv = v_next - v_free (non-basic
 * variables held at zero, their rows dropped): M dv - W x = 0; lam rows C^T x = 0; x rows
 * W^T dv + C lam + f = 0 (w = G x + C lam + f with G x = W^T dv), with the proximal term
 * prox g_j (x_j - xc_j) added to each when prox > 0. */
static void basis_residual(Sp *S, int which, const mbdcp_int *basis)
{
    const mbdcp_int nv = S->nv, nc = S->nc, nw = S->nw;
    const mbdcp_float *v = S->u, *lam = S->u + nv, *x = S->u + nv + nc;
    m_times(S, v, S->rho);
    for (mbdcp_int i = 0; i < nv; ++i) S->rho[i] = -S->rho[i];
    memset(S->rho + nv, 0, (size_t)(nc + nw) * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < nw; ++j) {
        const mbdcp_int c = j < nc ? j : S->dirc[j - nc];
        const mbdcp_float cjc = j < nc ? -S->p->mu[c] : 1.0;
        for (mbdcp_int q = S->Wp[j]; q < S->Wp[j + 1]; ++q) S->rho[S->Wi[q]] += S->Wx[q] * x[j];
        if (which == 1 && basis[nw + c]) S->rho[nv + c] += cjc * x[j];
        if (basis[j])
            S->rho[nv + nc + j] = col_dot(S, j, v, NULL) + cjc * lam[c] + S->f[j] +
                                  S->prox * S->gdiag[j] * (x[j] - S->xc[j]);
    }
    for (mbdcp_int c = 0; c < nc && which == 1 && S->prox > 0.0; ++c)
        if (basis[nw + c]) S->rho[nv + c] -= S->prox * lam_scale(S, c) * (lam[c] - S->xc[nw + c]);
}

/* Zero the non-basic entries of u (lam entirely for P2). */
static void zero_nonbasic(Sp *S, int which, const mbdcp_int *basis, mbdcp_float *u)
{
    for (mbdcp_int c = 0; c < S->nc; ++c)
        if (which != 1 || !basis[S->nw + c]) u[S->nv + c] = 0.0;
    for (mbdcp_int j = 0; j < S->nw; ++j)
        if (!basis[j]) u[S->nv + S->nc + j] = 0.0;
}

/* u = the point of the basis (w_B = 0, z_N = 0), with REFINE rounds of iterative refinement. */
static MbdcpReturn solve_basis(Sp *S, int which, const mbdcp_int *basis)
{
    MbdcpReturn rc = factor_basis(S, which, basis);
    if (rc != MBDCP_OK) return rc;
    mbdcp_sldl_solve(&S->FK, S->u);
    zero_nonbasic(S, which, basis, S->u);
    for (int k = 0; k < REFINE; ++k) {
        basis_residual(S, which, basis);
        mbdcp_sldl_solve(&S->FK, S->rho);
        zero_nonbasic(S, which, basis, S->rho);
        for (mbdcp_int i = 0; i < S->K; ++i) S->u[i] += S->rho[i];
    }
    return MBDCP_OK;
}

/* The LCP point z (x, then lam for P1; when cleaned, the basis point's entries below CLEAN_ZERO n
 * eps max z, rounding of entries that are zero, set to zero, as Lemke's extraction does),
 * v_next = v_free + M^-1 W x, w = F z + f and a row scale sc no larger than the dense one (see
 * relax_sparse.h). Returns 1 when z passes mbdcp_lcp_verify_scaled's rule at tol. */
static int evaluate(Sp *S, int which, mbdcp_float *v_next, int cleaned)
{
    const mbdcp_int nv = S->nv, nc = S->nc, nw = S->nw, n = which == 1 ? S->N1 : nw;
    mbdcp_float *z = S->z, *w = S->w, *sc = S->sc;
    mbdcp_float zmax = 0.0;
    for (mbdcp_int j = 0; j < nw; ++j) z[j] = fmax(S->u[nv + nc + j], 0.0);
    for (mbdcp_int c = 0; c < nc && which == 1; ++c) z[nw + c] = fmax(S->u[nv + c], 0.0);
    for (mbdcp_int i = 0; i < n; ++i) zmax = fmax(zmax, z[i]);
    const mbdcp_float clean = CLEAN_ZERO * (mbdcp_float)n * DBL_EPSILON * zmax;
    for (mbdcp_int i = 0; i < n && cleaned; ++i) z[i] = z[i] <= clean ? 0.0 : z[i];
    S->clean = clean;
    mbdcp_float *dv = S->rho;
    memset(dv, 0, (size_t)nv * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < nw; ++j)
        for (mbdcp_int q = S->Wp[j]; q < S->Wp[j + 1]; ++q) dv[S->Wi[q]] += S->Wx[q] * z[j];
    mbdcp_sldl_solve(&S->FM, dv);
    for (mbdcp_int i = 0; i < nv; ++i) v_next[i] = S->vfree[i] + dv[i];
    for (mbdcp_int c = 0; c < nc && which == 1; ++c) w[nw + c] = sc[nw + c] = 0.0;
    for (mbdcp_int j = 0; j < nw; ++j) {
        const mbdcp_int c = j < nc ? j : S->dirc[j - nc];
        mbdcp_float cl = 0.0;
        if (which == 1) {
            cl = j < nc ? -S->p->mu[c] * z[nw + c] : z[nw + c];
            const mbdcp_float t = j < nc ? S->p->mu[c] * z[j] : -z[j];
            w[nw + c] += t;
            sc[nw + c] += fabs(t);
        }
        const mbdcp_float gx = col_dot(S, j, dv, NULL);
        w[j] = gx + cl + S->f[j];
        sc[j] = fabs(gx) + fabs(cl) + fmax(fabs(S->f[j]), S->fmag[j]);
    }
    mbdcp_float margin = 2.0 * (mbdcp_float)(n + 2) * DBL_EPSILON;
    const mbdcp_float tol = S->s->lemke.tol;
    if (margin > 0.5 * tol) margin = 0.5 * tol;
    return mbdcp_lcp_row_ratio(n, z, w, sc, NULL) <= tol - margin;
}

/* P1: C lam's entry in row j < n_w at the basis point (P2: 0, lam is in f). */
static mbdcp_float lam_term(const Sp *S, int which, mbdcp_int j)
{
    if (which != 1) return 0.0;
    const mbdcp_int c = j < S->nc ? j : S->dirc[j - S->nc];
    return (j < S->nc ? -S->p->mu[c] : 1.0) * S->u[S->nv + c];
}

/* Entry i of the basis point: x_i for i < n_w, else lam of contact i - n_w (P1). */
static mbdcp_float point_entry(const Sp *S, mbdcp_int i)
{
    return i < S->nw ? S->u[S->nv + S->nc + i] : S->u[S->nv + i - S->nw];
}

/* Row i as the active-set update reads it: the verified point's w_i, or in a proximal round the
 * regularised subproblem's row, for x at the basis point itself (P2: lam is in f), as the rule has
 * it, and for a non-basic lam w_i plus its proximal term prox s (0 - lam_k). */
static mbdcp_float update_row(Sp *S, int which, mbdcp_int i)
{
    if (S->prox <= 0.0) return S->w[i];
    if (i >= S->nw) return S->w[i] - S->prox * lam_scale(S, i - S->nw) * S->xc[i];
    return col_dot(S, i, S->u, NULL) + S->f[i] - S->prox * S->gdiag[i] * S->xc[i] + lam_term(S, which, i);
}

/* The primal-dual active-set update: basic entries stay where the basis point is positive,
 * non-basic ones enter where their row (with the proximal term, see prox_sub) is negative beyond
 * tol. 1 when the basis changed. */
static int next_basis(Sp *S, int which, mbdcp_int *basis)
{
    const mbdcp_int n = which == 1 ? S->N1 : S->nw;
    /* the proximal rounds enter a row at half the tolerance of acceptance, so that no row can sit
     * between the two while the basis stays (the last round's point is then never accepted) */
    const mbdcp_float tol = S->prox > 0.0 ? 0.5 * S->s->lemke.tol : S->s->lemke.tol;
    int changed = 0;
    for (mbdcp_int i = 0; i < n; ++i) {
        const mbdcp_int b = basis[i] ? point_entry(S, i) >= -S->clean : update_row(S, which, i) < -tol * S->sc[i];
        changed |= b != basis[i];
        basis[i] = b;
    }
    return changed;
}

static void guess_p1(Sp *S, const mbdcp_float *gamma, mbdcp_int *basis);

/* Drop the basic entries of the basis point within the rounding of zero (negative ones included):
 * next_basis keeps them, the verified point clamps or cleans them to zero, and a P2 round then ends
 * on a point whose rows they carry fail by that much (1.7e-11 on a row of scale 2.7e-3 in a
 * 2,000-disk pile), or whose own row, of a scale as small as the entry, keeps it positive round
 * after round. P1 rounds do not take it (0): there the dropped entries re-enter and the round
 * cycles. 1 when one was dropped. */
static int drop_rounding(Sp *S, int which, mbdcp_int *basis)
{
    int changed = 0;
    if (which != 2) return 0;
    for (mbdcp_int i = 0; i < S->nw; ++i) {
        if (basis[i] && point_entry(S, i) <= S->clean) {
            basis[i] = 0;
            changed = 1;
        }
    }
    return changed;
}

/* A subproblem after its active-set steps failed: the proximal point method (Rockafellar 1976),
 * x_k+1 = argmin { x^T G x / 2 + f^T x + prox/2 ||x - x_k||^2_diag(G) : x >= 0 } for P2, each solved
 * by the active-set steps, whose bases are then never singular (the piles' G is: there are more
 * contact rows than velocities, and the impulses are not unique), with prox shrinking from round to
 * round; P1, a monotone LCP in (x, lam) rather than a QP in x, has prox/2 ||lam - lam_k||^2 (weighted
 * by lam_scale) too, without which its rounds cycled. Every basis point is verified on the
 * subproblem itself, unregularised. */
static MbdcpReturn prox_sub(Sp *S, int which, mbdcp_int *basis, mbdcp_float *v_next, MbdcpFixedPointInfo *info,
                           MbdcpStatus *st)
{
    /* the first round from the free motion's basis (the failed steps' last basis is a worse start) */
    if (which == 1)
        guess_p1(S, S->gamma, basis);
    else
        for (mbdcp_int j = 0; j < S->nw; ++j) basis[j] = S->f[j] < 0.0;
    S->prox = PROX_FIRST;
    for (int k = 0; k < PROX_ROUNDS && *st != MBDCP_SOLVED; ++k) {
        for (int j = 0; j < PROX_BASES; ++j) {
            MbdcpReturn rc = solve_basis(S, which, basis);
            info->pivots++;
            if (rc == MBDCP_ERR_NONFINITE || (rc == MBDCP_OK && !mbdcp_all_finite((size_t)S->K, S->u))) break;
            if (rc != MBDCP_OK) return rc;
            /* a basic entry below the rounding of zero can carry its row: then the point as it is */
            if (evaluate(S, which, v_next, 1) || evaluate(S, which, v_next, 0)) {
                *st = MBDCP_SOLVED;
                break;
            }
            if (!next_basis(S, which, basis) && !drop_rounding(S, which, basis)) break;
        }
        memcpy(S->xc, S->z, (size_t)(which == 1 ? S->N1 : S->nw) * sizeof(mbdcp_float));
        S->prox = fmax(S->prox * PROX_SHRINK, PROX_LAST);
    }
    S->prox = 0.0;
    info->residual = mbdcp_lcp_row_ratio(which == 1 ? S->N1 : S->nw, S->z, S->w, S->sc, NULL);
    return MBDCP_OK;
}

/* Solve P1 (which = 1, data = gamma) or P2 (data = lam) from basis (updated in place); v_next
 * and S->z hold the point. *st: SOLVED or NUMERICAL_ERROR (no verified point). */
static MbdcpReturn solve_sub(Sp *S, int which, const mbdcp_float *data, mbdcp_int *basis, mbdcp_float *v_next,
                             MbdcpFixedPointInfo *info, MbdcpStatus *st)
{
    subproblem_rhs(S, which, data);
    *st = MBDCP_NUMERICAL_ERROR;
    for (mbdcp_int k = 0; k < MBDCP_RELAX_SPARSE_MAX_BASES; ++k) {
        MbdcpReturn rc = solve_basis(S, which, basis);
        info->pivots++;
        if (rc == MBDCP_ERR_NONFINITE) return MBDCP_OK;
        if (rc != MBDCP_OK) return rc;
        if (!mbdcp_all_finite((size_t)S->K, S->u)) return MBDCP_OK;
        const int ok = evaluate(S, which, v_next, 1);
        info->residual = mbdcp_lcp_row_ratio(which == 1 ? S->N1 : S->nw, S->z, S->w, S->sc, NULL);
        if (ok) {
            *st = MBDCP_SOLVED;
            return MBDCP_OK;
        }
        if (!next_basis(S, which, basis)) break;
    }
    return prox_sub(S, which, basis, v_next, info, st);
}

/* P1's first basis without a hint, from the free motion: lam basic where the contact moves
 * tangentially, with the direction most opposed to the motion (the row lam makes zero); p_n
 * basic where the normal row, less mu lam, is negative. */
static void guess_p1(Sp *S, const mbdcp_float *gamma, mbdcp_int *basis)
{
    const mbdcp_int nc = S->nc, nw = S->nw;
    memset(basis, 0, (size_t)S->N1 * sizeof(mbdcp_int));
    sliding(S, S->vfree, S->lam);
    for (mbdcp_int k = 0; k < S->m; ++k) {
        const mbdcp_int c = S->dirc[k];
        if (S->lam[c] > 0.0 && -col_dot(S, nc + k, S->vfree, NULL) == S->lam[c] && !basis[nw + c]) {
            basis[nw + c] = 1;
            basis[nc + k] = 1;
        }
    }
    for (mbdcp_int c = 0; c < nc; ++c)
        basis[c] = S->f0[c] + gamma[c] - S->p->mu[c] * S->lam[c] < 0.0;
}

/* P1's first basis: the hint's flags for the contacts it has pressing (p_n basic), the guess of
 * guess_p1 for the others: for a separating contact the hint only says which way it slid, and a
 * new one would start with its direction rows and cone row apart (a basis or two each). */
static void start_basis(Sp *S, const mbdcp_int *hint)
{
    const mbdcp_int nc = S->nc, nw = S->nw;
    mbdcp_int *named = S->have; /* n_c flags (have is scratch once the data are built) */
    guess_p1(S, S->gamma, S->basis1);
    if (!hint) return;
    for (mbdcp_int c = 0; c < nc; ++c) named[c] = hint[c] != 0;
    for (mbdcp_int c = 0; c < nc; ++c) {
        if (!named[c]) continue;
        S->basis1[c] = hint[c] != 0;
        S->basis1[nw + c] = hint[nw + c] != 0;
    }
    for (mbdcp_int k = 0; k < S->m; ++k)
        if (named[S->dirc[k]]) S->basis1[nc + k] = hint[nc + k] != 0;
}

/* One pass of the fixed point (relax.c's fixed_point_pass): v = P1(gamma), lam = Lambda(v);
 * algorithms 2, 3 then v = P2(lam), lam = Lambda(v). */
static MbdcpReturn pass(Sp *S, mbdcp_int it, MbdcpFixedPointOutput *out,
                        MbdcpFixedPointInfo *info, MbdcpStatus *st)
{
    MbdcpReturn rc = solve_sub(S, 1, S->gamma, S->basis1, out->v_next, info, st);
    if (rc != MBDCP_OK || *st != MBDCP_SOLVED) return rc;
    sliding(S, out->v_next, S->lam);
    if (S->s->algorithm == 1) return MBDCP_OK;
    if (it == 0) memcpy(S->basis2, S->basis1, (size_t)S->nw * sizeof(mbdcp_int));
    rc = solve_sub(S, 2, S->lam, S->basis2, out->v_next, info, st);
    if (rc != MBDCP_OK || *st != MBDCP_SOLVED) return rc;
    sliding(S, out->v_next, S->lam);
    return MBDCP_OK;
}

/* After a solved pass (relax.c's fixed_point_done): gamma = U lam, the monitor, the test. */
static int done(Sp *S, mbdcp_int it, const mbdcp_float *v_next, MbdcpFixedPointInfo *info)
{
    const MbdcpFixedPointSettings *s = S->s;
    for (mbdcp_int c = 0; c < S->nc; ++c) S->gamma[c] = S->p->mu[c] * S->lam[c];
    mbdcp_float change = 0.0;
    for (mbdcp_int i = 0; i < S->nv; ++i) {
        change = fmax(change, fabs(v_next[i] - S->vprev[i]));
        S->vprev[i] = v_next[i];
    }
    info->iterations = it + 1;
    if (mbdcp_monitor_call(&s->lemke.monitor, it + 1, -1, -1, change)) {
        info->status = MBDCP_INTERRUPTED;
        return 1;
    }
    const mbdcp_float scale = fmax(1.0, mbdcp_norm_inf((size_t)S->nv, v_next));
    if (s->algorithm == 3 || (it > 0 && change <= s->tol * scale)) {
        info->converged = 1;
        info->status = MBDCP_SOLVED;
        return 1;
    }
    return 0;
}

/* Workspace, data, M's factor; *bad when M's factor has a pivot that is not positive. */
static MbdcpReturn setup(Sp *S, const MbdcpSparseStep *p, const MbdcpRelaxSparseOrder *ord, void *work,
                         size_t work_bytes, int *bad)
{
    MbdcpReturn rc = dims(p, S, 1, ord); /* the data must have the analysed sizes */
    if (rc != MBDCP_OK) return rc;
    if (!ord->perm_m || !ord->perm_k) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_fixed_point_sparse_workspace_size(p, ord)) return MBDCP_ERR_WORKSPACE;
    Bump b = {(char *)work, 0};
    layout(S, &b, ord);
    build_system(S);
    rc = prepare(S, ord, bad);
    for (mbdcp_int i = 0; rc == MBDCP_OK && i < S->nv; ++i) *bad |= !(S->FM.Dinv[i] > 0.0);
    return rc;
}

MbdcpReturn mbdcp_fixed_point_sparse(const MbdcpSparseStep *p, const MbdcpFixedPointSettings *s,
                                     const MbdcpRelaxSparseOrder *ord, const mbdcp_int *start_p1,
                                     const mbdcp_int *start_p2, MbdcpFixedPointOutput *out,
                                     MbdcpFixedPointInfo *info, void *work, size_t work_bytes)
{
    if (!s || !ord || !out || !info || !out->v_next || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_fixed_point_check_settings(s, NULL);
    if (rc != MBDCP_OK) return rc;
    if (p && ((p->n_c && (!out->p_n || !out->lam)) || (p->m && !out->beta))) return MBDCP_ERR_NULL;
    Sp S;
    int bad = 0;
    rc = setup(&S, p, ord, work, work_bytes, &bad);
    if (rc != MBDCP_OK) return rc;
    S.s = s;
    info->status = bad ? MBDCP_NUMERICAL_ERROR : MBDCP_MAX_ITERATIONS;
    info->iterations = info->converged = info->pivots = 0;
    info->residual = 0.0;
    memset(S.gamma, 0, (size_t)S.nc * sizeof(mbdcp_float));
    memset(S.xc, 0, (size_t)S.N1 * sizeof(mbdcp_float)); /* read (times prox = 0) by every basis */
    memcpy(S.vprev, p->v, (size_t)S.nv * sizeof(mbdcp_float));
    start_basis(&S, start_p1);
    /* P2 first starts from this P1's (p_n, beta) basis, never from start_p2: that hint is the last
     * step's P2 basis, farther from this step's (on a forming pile it can make P2 cycle). */
    (void)start_p2;
    for (mbdcp_int it = 0; it < s->max_iter && !bad; ++it) {
        MbdcpStatus st;
        rc = pass(&S, it, out, info, &st);
        if (rc != MBDCP_OK) return rc;
        if (st != MBDCP_SOLVED) {
            info->status = st;
            break;
        }
        if (done(&S, it, out->v_next, info)) break;
    }
    if (S.nc) memcpy(out->p_n, S.z, (size_t)S.nc * sizeof(mbdcp_float));
    if (S.m) memcpy(out->beta, S.z + S.nc, (size_t)S.m * sizeof(mbdcp_float));
    if (S.nc) memcpy(out->lam, S.lam, (size_t)S.nc * sizeof(mbdcp_float));
    if (out->basis_p1) memcpy(out->basis_p1, S.basis1, (size_t)S.N1 * sizeof(mbdcp_int));
    if (out->basis_p2 && s->algorithm > 1) memcpy(out->basis_p2, S.basis2, (size_t)S.nw * sizeof(mbdcp_int));
    return MBDCP_OK;
}
