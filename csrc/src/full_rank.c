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

static MbdcpReturn check(const MbdcpFullRankProblem *p)
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

MbdcpReturn mbdcp_full_rank_step(const MbdcpFullRankProblem *p, const MbdcpLemkeSettings *s,
                                 MbdcpFullRankOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    MbdcpReturn rc = check(p);
    if (rc != MBDCP_OK) return rc;
    if (!s || !out || !info || !work || !out->v_next) return MBDCP_ERR_NULL;
    rc = mbdcp_lemke_check_settings(s, NULL);
    if (rc != MBDCP_OK) return rc;
    if (work_bytes < mbdcp_full_rank_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    const mbdcp_int nc = p->n_c, nd = p->n_d, K = n_dirs(p), N = nc + 2 * K, t2 = 2 * nc;
    const mbdcp_int cols = nc + K + 1;
    if (N > 0 && (!out->z || !out->w || (nc && !out->p_t))) return MBDCP_ERR_NULL;

    /* W = [Wn Wt]: G = W^T M^-1 W, g = W^T (v + M^-1 p_ext). */
    const size_t red_bytes = mbdcp_reduce_workspace_size(p->n_v, 3 * nc, 0);
    const MbdcpReduceInput in = {p->n_v, 0, p->h, p->M, p->v, p->p_ext, NULL, NULL, NULL,
                                 2, {p->Wn, p->Wt, NULL, NULL}, {nc, t2, 0, 0}};
    MbdcpReduced red;
    rc = mbdcp_reduce_blocks(&in, &red, work, red_bytes);
    if (rc != MBDCP_OK) return rc;
    mbdcp_float *Ls = (mbdcp_float *)((char *)work + red_bytes);
    mbdcp_float *Y = Ls + (size_t)t2 * t2;
    mbdcp_float *Z = Y + (size_t)t2 * cols;
    mbdcp_float *F = Z + (size_t)cols * cols;
    mbdcp_float *f = F + (size_t)N * N;
    mbdcp_float *x = f + N;
    void *lemke_work = x + 3 * nc;
    const mbdcp_int nw = 3 * nc;
    const mbdcp_float *G = red.G, *g = red.g;

    /* S + c I = A_tt + c I = Ls Ls^T (c: the compliance of the tangential relation) */
    mbdcp_float smax = 0.0, c = p->compliance > 0.0 ? p->compliance : 0.0;
    for (mbdcp_int a = 0; a < t2; ++a) smax = fmax(smax, G[(size_t)(nc + a) * nw + nc + a]);
    for (int attempt = 0;; ++attempt) {
        for (mbdcp_int a = 0; a < t2; ++a) {
            memcpy(Ls + (size_t)a * t2, G + (size_t)(nc + a) * nw + nc, (size_t)t2 * sizeof(mbdcp_float));
            Ls[(size_t)a * t2 + a] += c;
        }
        if (mbdcp_cholesky(t2, Ls, RANK_TOL) == MBDCP_OK) break;
        if (attempt > 0 || p->compliance >= 0.0 || !(smax > 0.0)) return MBDCP_ERR_RANK_DEFICIENT;
        c = AUTO_COMPLIANCE * smax; /* redundant tangent directions: a compliant relation */
    }
    out->compliance_used = c;

    /* Y = Ls^-1 [A_tn | E | b_t]; Z = Y^T Y holds every product with S^-1 the LCP needs. */
    memset(Y, 0, (size_t)t2 * cols * sizeof(mbdcp_float));
    for (mbdcp_int a = 0; a < t2; ++a) {
        mbdcp_float *Ya = Y + (size_t)a * cols;
        memcpy(Ya, G + (size_t)(nc + a) * nw, (size_t)nc * sizeof(mbdcp_float));
        Ya[nc + K] = g[nc + a];
    }
    for (mbdcp_int i = 0; i < nc; ++i)
        for (mbdcp_int j = 0; j < nd; ++j) {
            const mbdcp_float ang = 3.14159265358979323846 * j / nd;
            Y[(size_t)(2 * i) * cols + nc + i * nd + j] = cos(ang);
            Y[(size_t)(2 * i + 1) * cols + nc + i * nd + j] = sin(ang);
        }
    mbdcp_trsm_lower(t2, Ls, cols, Y);
    mbdcp_gram(t2, cols, Y, Z);
#define ZZ(r, c) Z[(size_t)(r) * cols + (c)]
    const mbdcp_int oQ = nc, oR = nc + K; /* column groups of Z: A_tn, E, b_t */

    mbdcp_float rho = p->rho;
    if (!(rho > 0.0)) {
        mbdcp_float tr = 0.0;
        for (mbdcp_int j = 0; j < K; ++j) tr += ZZ(oQ + j, oQ + j);
        rho = (K > 0 && tr > 0.0) ? tr / K : 1.0;
    }
    out->rho_used = rho;

    /* F and f in z = (p_n, kappa_plus, kappa_minus), w = (u_n, sigma_-, sigma_+). */
    const mbdcp_int oP = nc, oM = nc + K;
    memset(F, 0, (size_t)N * N * sizeof(mbdcp_float));
    for (mbdcp_int a = 0; a < nc; ++a) {
        mbdcp_float *Fa = F + (size_t)a * N;
        for (mbdcp_int b = 0; b < nc; ++b) Fa[b] = G[(size_t)a * nw + b] - ZZ(a, b);
        for (mbdcp_int j = 0; j < K; ++j) {
            Fa[oP + j] = ZZ(a, oQ + j);
            Fa[oM + j] = -ZZ(a, oQ + j);
        }
        f[a] = mbdcp_sum_or_zero(p->n_v, mbdcp_sum_or_zero(p->n_v, g[a], -ZZ(a, oR)), p->psi_n ? p->psi_n[a] / p->h : 0.0);
    }
    for (mbdcp_int j = 0; j < K; ++j) {
        mbdcp_float *Fm = F + (size_t)(oP + j) * N; /* sigma_- row, complementary to kappa_plus */
        mbdcp_float *Fp = F + (size_t)(oM + j) * N; /* sigma_+ row, complementary to kappa_minus */
        for (mbdcp_int b = 0; b < nc; ++b) {
            const mbdcp_float mub = (b == j / nd) ? p->mu[b] : 0.0;
            Fm[b] = mub - ZZ(oQ + j, b);
            Fp[b] = mub + ZZ(oQ + j, b);
        }
        for (mbdcp_int k = 0; k < K; ++k) {
            const mbdcp_float e = ZZ(oQ + j, oQ + k), r = (j == k) ? rho : 0.0;
            Fm[oP + k] = e;
            Fm[oM + k] = r - e;
            Fp[oP + k] = r - e;
            Fp[oM + k] = e;
        }
        f[oP + j] = -ZZ(oQ + j, oR);
        f[oM + j] = ZZ(oQ + j, oR);
    }
#undef ZZ
    if (out->F) memcpy(out->F, F, (size_t)N * N * sizeof(mbdcp_float));
    if (out->f) memcpy(out->f, f, (size_t)N * sizeof(mbdcp_float));

    const MbdcpLemkeOutput lout = {out->z, out->w, NULL, NULL};
    rc = mbdcp_lemke_solve(N, F, f, s, NULL, &lout, info, lemke_work, mbdcp_lemke_workspace_size(N));
    if (rc != MBDCP_OK) return rc;

    /* p_t = S^-1 (E (kappa_plus - kappa_minus) - b_t - A_tn p_n); then v_next from (p_n, p_t). */
    mbdcp_float *pt = x + nc;
    for (mbdcp_int a = 0; a < t2; ++a) {
        mbdcp_float s_ = -g[nc + a];
        for (mbdcp_int b = 0; b < nc; ++b) s_ -= G[(size_t)(nc + a) * nw + b] * out->z[b];
        pt[a] = s_;
    }
    for (mbdcp_int i = 0; i < nc; ++i)
        for (mbdcp_int j = 0; j < nd; ++j) {
            const mbdcp_float ang = 3.14159265358979323846 * j / nd;
            const mbdcp_float kap = out->z[oP + i * nd + j] - out->z[oM + i * nd + j];
            pt[2 * i] += cos(ang) * kap;
            pt[2 * i + 1] += sin(ang) * kap;
        }
    mbdcp_trsv_lower(t2, Ls, 0, pt);
    mbdcp_trsv_lower(t2, Ls, 1, pt);
    memcpy(x, out->z, (size_t)nc * sizeof(mbdcp_float));
    if (nc) memcpy(out->p_t, pt, (size_t)t2 * sizeof(mbdcp_float));
    return mbdcp_reduced_recover(&red, x, out->v_next, NULL);
}
