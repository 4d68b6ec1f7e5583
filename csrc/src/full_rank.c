/* Full-rank discretized friction LCP at velocity level (see full_rank.h). */
#include <math.h>
#include <string.h>

#include "mbdcp/assemble.h"
#include "mbdcp/dense.h"
#include "mbdcp/full_rank.h"

/* S = Wt^T M^-1 Wt with a Cholesky pivot below this fraction: Wt is rank deficient. */
#define RANK_TOL 1e-11
/* Automatic compliance for a singular S: this fraction of its largest diagonal entry. */
#define AUTO_COMPLIANCE 1e-8

static mbdcp_int n_dirs(const MbdcpFullRankProblem *p)
{
    return p->n_c * p->n_d;
}

mbdcp_int mbdcp_full_rank_lcp_size(const MbdcpFullRankProblem *p)
{
    return p ? p->n_c + 2 * n_dirs(p) : 0;
}

/* reduction(n_v, 3 n_c) | Ls (2nc)^2 | Y 2nc x (nc+K+1) | Z (nc+K+1)^2 | F | f | x (3 nc) | Lemke */
size_t mbdcp_full_rank_workspace_size(const MbdcpFullRankProblem *p)
{
    if (!p || p->n_c < 0 || p->n_d < 1) return 0;
    const size_t nc = (size_t)p->n_c, K = (size_t)n_dirs(p), N = nc + 2 * K, c = nc + K + 1;
    return mbdcp_reduce_workspace_size(p->n_v, 3 * p->n_c, 0) +
           (4 * nc * nc + 2 * nc * c + c * c + N * N + N + 3 * nc) * sizeof(mbdcp_float) +
           mbdcp_lemke_workspace_size((mbdcp_int)N);
}

static MbdcpReturn check_problem(const MbdcpFullRankProblem *p)
{
    if (!p) return MBDCP_ERR_NULL;
    if (p->n_v < 1 || p->n_c < 0 || p->n_d < 1) return MBDCP_ERR_DIMENSION;
    if (!(p->h > 0.0) || !isfinite(p->h) || !isfinite(p->rho) || !isfinite(p->compliance)) return MBDCP_ERR_SETTING;
    const size_t nv = (size_t)p->n_v, nc = (size_t)p->n_c;
    if (!p->M || !p->v || (nc && (!p->Wn || !p->Wt || !p->mu))) return MBDCP_ERR_NULL;
    if (!mbdcp_all_finite(nv * nv, p->M) || !mbdcp_all_finite(nv, p->v) ||
        !mbdcp_all_finite(nv * nc, p->Wn) || !mbdcp_all_finite(2 * nv * nc, p->Wt) ||
        !mbdcp_all_finite(nc, p->mu) || (p->p_ext && !mbdcp_all_finite(nv, p->p_ext)) ||
        (p->psi_n && !mbdcp_all_finite(nc, p->psi_n)))
        return MBDCP_ERR_NONFINITE;
    for (size_t i = 0; i < nc; ++i)
        if (p->mu[i] < 0.0) return MBDCP_ERR_DATA;
    return MBDCP_OK;
}

/* The state one step shares between its stages: sizes, the reduction and the workspace's arrays. */
typedef struct {
    const MbdcpFullRankProblem *p;
    mbdcp_int nc, nd, K, N; /* contacts, directions per contact, all directions (nc nd), LCP size nc + 2 K */
    mbdcp_int t2, nw, cols; /* tangential entries 2 nc, reduced entries 3 nc, columns of Y and Z */
    MbdcpReduced red;       /* for W = [Wn Wt]: G = W^T M^-1 W, g = W^T (v + M^-1 p_ext) */
    mbdcp_float *Ls;        /* t2 x t2: Cholesky factor of S + c I */
    mbdcp_float *Y;         /* t2 x cols: Ls^-1 [A_tn | E | b_t] */
    mbdcp_float *Z;         /* cols x cols: Y^T Y; column groups A_tn (from 0), E (from nc), b_t (nc + K) */
    mbdcp_float *F, *f;     /* the LCP in z = (p_n, kappa_plus, kappa_minus), N x N and N */
    mbdcp_float *x;         /* 3 nc: (p_n, p_t) for the recovery of v_next */
    void *lemke_work;
    mbdcp_float compliance; /* c of the tangential relation */
    mbdcp_float rho;        /* phantom inertia */
} FullRank;

/* Direction j of n_d in a contact's tangent plane: (cos, sin) of pi j / n_d. */
static void direction(mbdcp_int j, mbdcp_int nd, mbdcp_float *c, mbdcp_float *s)
{
    const mbdcp_float ang = 3.14159265358979323846 * j / nd;
    *c = cos(ang);
    *s = sin(ang);
}

static mbdcp_float zz(const FullRank *R, mbdcp_int r, mbdcp_int c)
{
    return R->Z[(size_t)r * R->cols + c];
}

static MbdcpReturn check_call(const MbdcpFullRankProblem *p, const MbdcpLemkeSettings *s,
                              const MbdcpFullRankOutput *out, const MbdcpLemkeInfo *info, const void *work,
                              size_t work_bytes)
{
    MbdcpReturn rc = check_problem(p);
    if (rc != MBDCP_OK) return rc;
    if (!s || !out || !info || !work || !out->v_next) return MBDCP_ERR_NULL;
    rc = mbdcp_lemke_check_settings(s, NULL);
    if (rc != MBDCP_OK) return rc;
    if (work_bytes < mbdcp_full_rank_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    if (mbdcp_full_rank_lcp_size(p) > 0 && (!out->z || !out->w || (p->n_c && !out->p_t))) return MBDCP_ERR_NULL;
    return MBDCP_OK;
}

/* Sizes, the reduction of W = [Wn Wt] (it fails on an M not SPD), and the arrays after it. */
static MbdcpReturn setup(const MbdcpFullRankProblem *p, void *work, FullRank *R)
{
    R->p = p;
    R->nc = p->n_c;
    R->nd = p->n_d;
    R->K = n_dirs(p);
    R->N = R->nc + 2 * R->K;
    R->t2 = 2 * R->nc;
    R->nw = 3 * R->nc;
    R->cols = R->nc + R->K + 1;
    const size_t red_bytes = mbdcp_reduce_workspace_size(p->n_v, R->nw, 0);
    const MbdcpReduceInput in = {p->n_v, 0, p->h, p->M, p->v, p->p_ext, NULL, NULL, NULL,
                                 2, {p->Wn, p->Wt, NULL, NULL}, {R->nc, R->t2, 0, 0}};
    MbdcpReturn rc = mbdcp_reduce_blocks(&in, &R->red, work, red_bytes);
    if (rc != MBDCP_OK) return rc;
    R->Ls = (mbdcp_float *)((char *)work + red_bytes);
    R->Y = R->Ls + (size_t)R->t2 * R->t2;
    R->Z = R->Y + (size_t)R->t2 * R->cols;
    R->F = R->Z + (size_t)R->cols * R->cols;
    R->f = R->F + (size_t)R->N * R->N;
    R->x = R->f + R->N;
    R->lemke_work = R->x + R->nw;
    return MBDCP_OK;
}

/* S + c I = A_tt + c I = Ls Ls^T. An automatic compliance (c < 0 asked) is 0 unless S is singular
 * (redundant tangent directions), then AUTO_COMPLIANCE times S's largest diagonal entry. */
static MbdcpReturn factor_tangential(FullRank *R)
{
    const mbdcp_int nc = R->nc, t2 = R->t2, nw = R->nw;
    const mbdcp_float *G = R->red.G, asked = R->p->compliance;
    mbdcp_float smax = 0.0, c = asked > 0.0 ? asked : 0.0;
    for (mbdcp_int a = 0; a < t2; ++a) smax = fmax(smax, G[(size_t)(nc + a) * nw + nc + a]);
    for (int attempt = 0;; ++attempt) {
        for (mbdcp_int a = 0; a < t2; ++a) {
            memcpy(R->Ls + (size_t)a * t2, G + (size_t)(nc + a) * nw + nc, (size_t)t2 * sizeof(mbdcp_float));
            R->Ls[(size_t)a * t2 + a] += c;
        }
        if (mbdcp_cholesky(t2, R->Ls, RANK_TOL) == MBDCP_OK) break;
        if (attempt > 0 || asked >= 0.0 || !(smax > 0.0)) return MBDCP_ERR_RANK_DEFICIENT;
        c = AUTO_COMPLIANCE * smax;
    }
    R->compliance = c;
    return MBDCP_OK;
}

/* Y = Ls^-1 [A_tn | E | b_t]; Z = Y^T Y holds every product with S^-1 the LCP needs. */
static void schur_products(FullRank *R)
{
    const mbdcp_int nc = R->nc, nd = R->nd, K = R->K, t2 = R->t2, nw = R->nw, cols = R->cols;
    memset(R->Y, 0, (size_t)t2 * cols * sizeof(mbdcp_float));
    for (mbdcp_int a = 0; a < t2; ++a) {
        mbdcp_float *Ya = R->Y + (size_t)a * cols;
        memcpy(Ya, R->red.G + (size_t)(nc + a) * nw, (size_t)nc * sizeof(mbdcp_float));
        Ya[nc + K] = R->red.g[nc + a];
    }
    for (mbdcp_int i = 0; i < nc; ++i)
        for (mbdcp_int j = 0; j < nd; ++j)
            direction(j, nd, &R->Y[(size_t)(2 * i) * cols + nc + i * nd + j],
                      &R->Y[(size_t)(2 * i + 1) * cols + nc + i * nd + j]);
    mbdcp_trsm_lower(t2, R->Ls, cols, R->Y);
    mbdcp_gram(t2, cols, R->Y, R->Z);
}

/* The rho asked for, or by default the mean diagonal entry of E^T S^-1 E (the mass a direction sees). */
static void phantom_inertia(FullRank *R)
{
    mbdcp_float rho = R->p->rho;
    if (!(rho > 0.0)) {
        mbdcp_float tr = 0.0;
        for (mbdcp_int j = 0; j < R->K; ++j) tr += zz(R, R->nc + j, R->nc + j);
        rho = (R->K > 0 && tr > 0.0) ? tr / R->K : 1.0;
    }
    R->rho = rho;
}

/* The rows of u_n (complementary to p_n), in Z's column groups n (A_tn), E and b (b_t):
 * F = [G_nn - Z_nn, Z_nE, -Z_nE], f = g_n - Z_nb + psi_n / h. */
static void normal_rows(FullRank *R)
{
    const MbdcpFullRankProblem *p = R->p;
    const mbdcp_int nc = R->nc, K = R->K, N = R->N, nw = R->nw, oQ = nc, oR = nc + K, oP = nc, oM = nc + K;
    for (mbdcp_int a = 0; a < nc; ++a) {
        mbdcp_float *Fa = R->F + (size_t)a * N;
        for (mbdcp_int b = 0; b < nc; ++b) Fa[b] = R->red.G[(size_t)a * nw + b] - zz(R, a, b);
        for (mbdcp_int j = 0; j < K; ++j) {
            Fa[oP + j] = zz(R, a, oQ + j);
            Fa[oM + j] = -zz(R, a, oQ + j);
        }
        R->f[a] = mbdcp_sum_or_zero(p->n_v, mbdcp_sum_or_zero(p->n_v, R->red.g[a], -zz(R, a, oR)),
                                    p->psi_n ? p->psi_n[a] / p->h : 0.0);
    }
}

/* The rows of sigma_- (complementary to kappa_plus) and sigma_+ (to kappa_minus), one pair per
 * direction j: mu p_n -+ E^T p_t and the phantom inertia rho on the opposite kappa. */
static void direction_rows(FullRank *R)
{
    const mbdcp_int nc = R->nc, nd = R->nd, K = R->K, N = R->N, oQ = nc, oR = nc + K, oP = nc, oM = nc + K;
    for (mbdcp_int j = 0; j < K; ++j) {
        mbdcp_float *Fm = R->F + (size_t)(oP + j) * N;
        mbdcp_float *Fp = R->F + (size_t)(oM + j) * N;
        for (mbdcp_int b = 0; b < nc; ++b) {
            const mbdcp_float mub = (b == j / nd) ? R->p->mu[b] : 0.0;
            Fm[b] = mub - zz(R, oQ + j, b);
            Fp[b] = mub + zz(R, oQ + j, b);
        }
        for (mbdcp_int k = 0; k < K; ++k) {
            const mbdcp_float e = zz(R, oQ + j, oQ + k), r = (j == k) ? R->rho : 0.0;
            Fm[oP + k] = e;
            Fm[oM + k] = r - e;
            Fp[oP + k] = r - e;
            Fp[oM + k] = e;
        }
        R->f[oP + j] = -zz(R, oQ + j, oR);
        R->f[oM + j] = zz(R, oQ + j, oR);
    }
}

/* p_t = S^-1 (E (kappa_plus - kappa_minus) - b_t - A_tn p_n); then v_next from (p_n, p_t). */
static MbdcpReturn recover(FullRank *R, const mbdcp_float *z, MbdcpFullRankOutput *out)
{
    const mbdcp_int nc = R->nc, nd = R->nd, K = R->K, t2 = R->t2, nw = R->nw, oP = nc, oM = nc + K;
    const mbdcp_float *G = R->red.G;
    mbdcp_float *pt = R->x + nc;
    for (mbdcp_int a = 0; a < t2; ++a) {
        mbdcp_float s_ = -R->red.g[nc + a];
        for (mbdcp_int b = 0; b < nc; ++b) s_ -= G[(size_t)(nc + a) * nw + b] * z[b];
        pt[a] = s_;
    }
    for (mbdcp_int i = 0; i < nc; ++i)
        for (mbdcp_int j = 0; j < nd; ++j) {
            mbdcp_float c, s;
            direction(j, nd, &c, &s);
            const mbdcp_float kap = z[oP + i * nd + j] - z[oM + i * nd + j];
            pt[2 * i] += c * kap;
            pt[2 * i + 1] += s * kap;
        }
    mbdcp_trsv_lower(t2, R->Ls, 0, pt);
    mbdcp_trsv_lower(t2, R->Ls, 1, pt);
    memcpy(R->x, z, (size_t)nc * sizeof(mbdcp_float));
    if (nc) memcpy(out->p_t, pt, (size_t)t2 * sizeof(mbdcp_float));
    return mbdcp_reduced_recover(&R->red, R->x, out->v_next, NULL);
}

MbdcpReturn mbdcp_full_rank_step(const MbdcpFullRankProblem *p, const MbdcpLemkeSettings *s,
                                 MbdcpFullRankOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    MbdcpReturn rc = check_call(p, s, out, info, work, work_bytes);
    if (rc != MBDCP_OK) return rc;
    FullRank R;
    rc = setup(p, work, &R);
    if (rc == MBDCP_OK) rc = factor_tangential(&R);
    if (rc != MBDCP_OK) return rc;
    out->compliance_used = R.compliance;
    schur_products(&R);
    phantom_inertia(&R);
    out->rho_used = R.rho;
    const mbdcp_int N = R.N;
    memset(R.F, 0, (size_t)N * N * sizeof(mbdcp_float));
    normal_rows(&R);
    direction_rows(&R);
    if (out->F) memcpy(out->F, R.F, (size_t)N * N * sizeof(mbdcp_float));
    if (out->f) memcpy(out->f, R.f, (size_t)N * sizeof(mbdcp_float));
    const MbdcpLemkeOutput lout = {out->z, out->w, NULL, NULL};
    rc = mbdcp_lemke_solve(N, R.F, R.f, s, NULL, &lout, info, R.lemke_work, mbdcp_lemke_workspace_size(N));
    if (rc != MBDCP_OK) return rc;
    return recover(&R, out->z, out);
}
