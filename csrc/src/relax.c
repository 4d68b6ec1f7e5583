/* Anitescu & Hart's relaxations P1, P2 and fixed-point algorithms (see relax.h). */
#include <math.h>
#include <string.h>

#include "mbdcp/dense.h"
#include "mbdcp/relax.h"

MbdcpReturn mbdcp_fixed_point_default_settings(MbdcpFixedPointSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->algorithm = 2;
    s->tol = 1e-10;
    s->max_iter = 100;
    return mbdcp_lemke_default_settings(&s->lemke);
}

MbdcpReturn mbdcp_fixed_point_check_settings(const MbdcpFixedPointSettings *s, const char **message)
{
    const char *msg = NULL;
    if (!s) return MBDCP_ERR_NULL;
    if (s->algorithm < 1 || s->algorithm > 3)
        msg = "algorithm must be 1, 2 or 3";
    else if (!(s->tol > 0.0) || !isfinite(s->tol))
        msg = "tol must be positive and finite";
    else if (s->max_iter < 1)
        msg = "max_iter must be at least 1";
    else
        mbdcp_lemke_check_settings(&s->lemke, &msg); /* leaves msg NULL when valid */
    if (message) *message = msg;
    return msg ? MBDCP_ERR_SETTING : MBDCP_OK;
}

MbdcpReturn mbdcp_sliding_speed(mbdcp_int n_v, mbdcp_int n_c, mbdcp_int m, const mbdcp_float *D,
                                const mbdcp_float *E, const mbdcp_float *v, mbdcp_float *lam)
{
    if (n_v < 0 || n_c < 0 || m < 0) return MBDCP_ERR_DIMENSION;
    if ((n_c && !lam) || (m && (!D || !E || !v))) return MBDCP_ERR_NULL;
    for (mbdcp_int c = 0; c < n_c; ++c) lam[c] = 0.0;
    for (mbdcp_int k = 0; k < m; ++k) {
        mbdcp_int c = 0;
        while (c < n_c && E[(size_t)k * n_c + c] != 1.0) ++c;
        if (c == n_c) return MBDCP_ERR_DIMENSION; /* a direction without a contact */
        mbdcp_float s = 0.0;
        for (mbdcp_int i = 0; i < n_v; ++i) s -= D[(size_t)i * m + k] * v[i];
        lam[c] = fmax(lam[c], s);
    }
    return MBDCP_OK;
}

static mbdcp_int size_p1(const MbdcpStepProblem *p)
{
    return 2 * p->n_c + p->m;
}

/* Lemke workspaces are rounded up to whole doubles so that what follows stays aligned. */
static size_t lemke_bytes(mbdcp_int N)
{
    const size_t b = mbdcp_lemke_workspace_size(N);
    return (b + sizeof(mbdcp_float) - 1) / sizeof(mbdcp_float) * sizeof(mbdcp_float);
}

/* reduction | F (N1^2) | f | fmag | z | w | vectors: lam, gamma, v_prev (n_c, n_c, n_v) |
 * base f, fmag (n_w each) | Lemke(N1) |
 * Lemke(N2): P1 and P2 each keep their own Lemke state, so that every iteration of the fixed point
 * restarts each subproblem from its last basis (only the right-hand side changes). */
size_t mbdcp_relax_workspace_size(const MbdcpStepProblem *p)
{
    if (!p) return 0;
    const size_t N = (size_t)size_p1(p), nw = (size_t)(p->n_c + p->m);
    return mbdcp_reduce_workspace_size(p->n_v, (mbdcp_int)nw, p->n_b) +
           (N * N + 4 * N + 2 * nw + 2 * (size_t)p->n_c + (size_t)p->n_v) * sizeof(mbdcp_float) +
           lemke_bytes((mbdcp_int)N) + lemke_bytes((mbdcp_int)nw);
}

typedef struct {
    MbdcpReduced red;
    mbdcp_float *F, *f, *fmag, *z, *w, *lam, *gamma, *v_prev; /* fmag: f's data scale */
    mbdcp_float *f0, *fmag0; /* the contact rows' right-hand side and scale, the same for P1 and P2 */
    void *lemke_work[2]; /* P1, P2 */
    size_t lemke_bytes[2];
} Work;

static MbdcpReturn setup(const MbdcpStepProblem *p, void *work, size_t work_bytes, Work *W)
{
    MbdcpReturn rc = mbdcp_step_problem_check(p);
    if (rc != MBDCP_OK) return rc;
    if (p->m_j || p->n_j) return MBDCP_ERR_DIMENSION;
    if (!work) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_relax_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    const size_t N = (size_t)size_p1(p), red_bytes = mbdcp_reduce_workspace_size(p->n_v, p->n_c + p->m, p->n_b);
    rc = mbdcp_reduce(p, &W->red, work, red_bytes);
    if (rc != MBDCP_OK) return rc;
    W->F = (mbdcp_float *)((char *)work + red_bytes);
    W->f = W->F + N * N;
    W->fmag = W->f + N;
    W->z = W->fmag + N;
    W->w = W->z + N;
    W->lam = W->w + N;
    W->gamma = W->lam + p->n_c;
    W->v_prev = W->gamma + p->n_c;
    W->f0 = W->v_prev + p->n_v;
    W->fmag0 = W->f0 + p->n_c + p->m;
    mbdcp_contact_rhs(p, &W->red, W->f0); /* once per run: the fixed point changes Gamma and lam only */
    mbdcp_contact_rhs_magnitude(p, &W->red, W->fmag0);
    W->lemke_work[0] = W->fmag0 + p->n_c + p->m;
    W->lemke_bytes[0] = lemke_bytes((mbdcp_int)N);
    W->lemke_work[1] = (char *)W->lemke_work[0] + W->lemke_bytes[0];
    W->lemke_bytes[1] = lemke_bytes(p->n_c + p->m);
    return MBDCP_OK;
}

/* The P1 matrix (N1 x N1): G, E in rows beta / columns lam, -E^T below, the skew coupling of p_n
 * and lam through U. P2's matrix is G itself. Both stay fixed over a fixed-point run. */
static void p1_matrix(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *F)
{
    const mbdcp_int nc = p->n_c, m = p->m, nw = nc + m, N = size_p1(p);
    mbdcp_place_gram(red, N, F);
    mbdcp_place_grouping(m, nc, p->E, nc, nw, N, F);
    for (mbdcp_int c = 0; c < nc; ++c) {
        F[(size_t)c * N + nw + c] = -p->mu[c];
        F[(size_t)(nw + c) * N + c] = p->mu[c];
    }
}

/* P1's right-hand side f and its rows' data scale fmag (W->f0, W->fmag0, + gamma and |gamma|). */
static void p1_rhs(const MbdcpStepProblem *p, const Work *W, const mbdcp_float *gamma, mbdcp_float *f,
                   mbdcp_float *fmag)
{
    const mbdcp_int nc = p->n_c, nw = nc + p->m;
    memcpy(f, W->f0, (size_t)nw * sizeof(mbdcp_float));
    memcpy(fmag, W->fmag0, (size_t)nw * sizeof(mbdcp_float));
    for (mbdcp_int c = 0; c < nc; ++c) {
        if (gamma) {
            f[c] = mbdcp_sum_or_zero(p->n_v, f[c], gamma[c]);
            fmag[c] += fabs(gamma[c]);
        }
        f[nw + c] = fmag[nw + c] = 0.0;
    }
}

/* P2's right-hand side f and its rows' data scale fmag (W->f0, W->fmag0, + E lam and |E lam|). */
static void p2_rhs(const MbdcpStepProblem *p, const Work *W, const mbdcp_float *lam, mbdcp_float *f,
                   mbdcp_float *fmag)
{
    const mbdcp_int nc = p->n_c, m = p->m;
    memcpy(f, W->f0, (size_t)(nc + m) * sizeof(mbdcp_float));
    memcpy(fmag, W->fmag0, (size_t)(nc + m) * sizeof(mbdcp_float));
    for (mbdcp_int k = 0; k < m; ++k)
        for (mbdcp_int c = 0; c < nc; ++c) {
            const mbdcp_float e = p->E[(size_t)k * nc + c];
            if (e == 0.0) continue;
            f[nc + k] = mbdcp_sum_or_zero(p->n_v, f[nc + k], e * lam[c]);
            fmag[nc + k] += fabs(e * lam[c]);
        }
}

/* Assemble (P1 when which == 1, else P2), solve with Lemke (from the subproblem's last basis when
 * `again`: same matrix, new right-hand side), recover v_next and p_b. */
static MbdcpReturn solve_sub(const MbdcpStepProblem *p, Work *W, int which, const mbdcp_float *data,
                             const MbdcpLemkeSettings *s, int again, const mbdcp_int *start,
                             mbdcp_int *basis, mbdcp_float *v_next, mbdcp_float *p_b, MbdcpLemkeInfo *info)
{
    const mbdcp_int N = which == 1 ? size_p1(p) : p->n_c + p->m;
    const mbdcp_float *F = which == 1 ? W->F : W->red.G;
    if (which == 1) {
        if (!again) p1_matrix(p, &W->red, W->F);
        p1_rhs(p, W, data, W->f, W->fmag);
    } else {
        p2_rhs(p, W, data, W->f, W->fmag);
    }
    const MbdcpLemkeOutput lout = {W->z, W->w, basis, NULL};
    void *lw = W->lemke_work[which - 1];
    const size_t lb = W->lemke_bytes[which - 1];
    MbdcpReturn rc = mbdcp_lemke_solve_scaled(N, F, W->f, W->fmag, s, again ? NULL : start, again, &lout, info, lw, lb);
    if (rc != MBDCP_OK) return rc;
    return mbdcp_reduced_recover(&W->red, W->z, v_next, p_b);
}

static MbdcpReturn relax_one(const MbdcpStepProblem *p, int which, const mbdcp_float *data,
                             const MbdcpLemkeSettings *s, MbdcpStepOutput *out, MbdcpLemkeInfo *info,
                             void *work, size_t work_bytes)
{
    if (!s || !out || !info || !out->v_next || (p && p->n_b > 0 && !out->p_b)) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_lemke_check_settings(s, NULL);
    if (rc != MBDCP_OK) return rc;
    Work W;
    rc = setup(p, work, work_bytes, &W);
    if (rc != MBDCP_OK) return rc;
    if (p->n_c && !data) return MBDCP_ERR_NULL;
    if (!mbdcp_all_finite((size_t)p->n_c, data)) return MBDCP_ERR_NONFINITE;
    rc = solve_sub(p, &W, which, data, s, 0, NULL, NULL, out->v_next, out->p_b, info);
    if (rc != MBDCP_OK) return rc;
    const size_t N = (size_t)(which == 1 ? size_p1(p) : p->n_c + p->m);
    if (out->z) memcpy(out->z, W.z, N * sizeof(mbdcp_float));
    if (out->w) memcpy(out->w, W.w, N * sizeof(mbdcp_float));
    if (out->F) memcpy(out->F, which == 1 ? W.F : W.red.G, N * N * sizeof(mbdcp_float));
    if (out->f) memcpy(out->f, W.f, N * sizeof(mbdcp_float));
    return MBDCP_OK;
}

MbdcpReturn mbdcp_relax_p1(const MbdcpStepProblem *p, const mbdcp_float *gamma, const MbdcpLemkeSettings *s,
                           MbdcpStepOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    return relax_one(p, 1, gamma, s, out, info, work, work_bytes);
}

MbdcpReturn mbdcp_relax_p2(const MbdcpStepProblem *p, const mbdcp_float *lam, const MbdcpLemkeSettings *s,
                           MbdcpStepOutput *out, MbdcpLemkeInfo *info, void *work, size_t work_bytes)
{
    if (p && lam)
        for (mbdcp_int c = 0; c < p->n_c; ++c)
            if (lam[c] < 0.0) return MBDCP_ERR_DATA; /* sliding speeds are nonnegative */
    return relax_one(p, 2, lam, s, out, info, work, work_bytes);
}

MbdcpReturn mbdcp_fixed_point(const MbdcpStepProblem *p, const MbdcpFixedPointSettings *s,
                              MbdcpFixedPointOutput *out, MbdcpFixedPointInfo *info, void *work,
                              size_t work_bytes)
{
    return mbdcp_fixed_point_warm(p, s, NULL, NULL, out, info, work, work_bytes);
}

/* A fixed-point run's state: the call's arguments and the relaxations' workspace. */
typedef struct {
    const MbdcpStepProblem *p;
    const MbdcpFixedPointSettings *s;
    const mbdcp_int *start[2]; /* the hints of the first P1 and P2 solves (NULL: cold) */
    MbdcpFixedPointOutput *out;
    MbdcpFixedPointInfo *info;
    Work W;
} FixedPoint;

/* One pass: v = P1(Gamma), lam = Lambda(v); algorithms 2, 3 then v = P2(lam), lam = Lambda(v).
 * The first solves start from the hints, later ones from their subproblem's last basis. *st:
 * SOLVED, or the status of the subproblem that was not. */
static MbdcpReturn fixed_point_pass(FixedPoint *F, mbdcp_int it, MbdcpStatus *st)
{
    const MbdcpStepProblem *p = F->p;
    MbdcpFixedPointOutput *out = F->out;
    const int last = F->s->algorithm >= 2 ? 2 : 1;
    *st = MBDCP_SOLVED;
    for (int which = 1; which <= last && *st == MBDCP_SOLVED; ++which) {
        MbdcpLemkeInfo li;
        const MbdcpReturn rc = solve_sub(p, &F->W, which, which == 1 ? F->W.gamma : F->W.lam, &F->s->lemke, it > 0,
                                         F->start[which - 1], which == 1 ? out->basis_p1 : out->basis_p2,
                                         out->v_next, out->p_b, &li);
        if (rc != MBDCP_OK) return rc;
        F->info->pivots += li.pivots;
        F->info->residual = li.residual;
        *st = li.status;
        if (*st == MBDCP_SOLVED) mbdcp_sliding_speed(p->n_v, p->n_c, p->m, p->D, p->E, out->v_next, F->W.lam);
    }
    return MBDCP_OK;
}

/* After a solved pass `it`: Gamma = U lam for the next one, the change of v reported to the
 * monitor, and the convergence test. 1 to stop, with the status set. */
static int fixed_point_done(FixedPoint *F, mbdcp_int it)
{
    const MbdcpStepProblem *p = F->p;
    const MbdcpFixedPointSettings *s = F->s;
    MbdcpFixedPointInfo *info = F->info;
    const mbdcp_float *v_next = F->out->v_next;
    for (mbdcp_int c = 0; c < p->n_c; ++c) F->W.gamma[c] = p->mu[c] * F->W.lam[c];
    mbdcp_float change = 0.0;
    for (mbdcp_int i = 0; i < p->n_v; ++i) {
        change = fmax(change, fabs(v_next[i] - F->W.v_prev[i]));
        F->W.v_prev[i] = v_next[i];
    }
    info->iterations = it + 1;
    if (mbdcp_monitor_call(&s->lemke.monitor, it + 1, -1, -1, change)) {
        info->status = MBDCP_INTERRUPTED;
        return 1;
    }
    /* Algorithm 3 is one pass by definition; 1 and 2 compare two iterates (v_0 is the old v). */
    const mbdcp_float scale = fmax(1.0, mbdcp_norm_inf((size_t)p->n_v, v_next));
    if (s->algorithm == 3 || (it > 0 && change <= s->tol * scale)) {
        info->converged = 1;
        info->status = MBDCP_SOLVED;
        return 1;
    }
    return 0;
}

MbdcpReturn mbdcp_fixed_point_warm(const MbdcpStepProblem *p, const MbdcpFixedPointSettings *s,
                                   const mbdcp_int *start_p1, const mbdcp_int *start_p2,
                                   MbdcpFixedPointOutput *out, MbdcpFixedPointInfo *info, void *work,
                                   size_t work_bytes)
{
    if (!s || !out || !info || !out->v_next) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_fixed_point_check_settings(s, NULL);
    if (rc != MBDCP_OK) return rc;
    FixedPoint F;
    rc = setup(p, work, work_bytes, &F.W);
    if (rc != MBDCP_OK) return rc;
    const mbdcp_int nc = p->n_c, m = p->m;
    if ((p->n_b && !out->p_b) || (nc && (!out->p_n || !out->lam)) || (m && !out->beta)) return MBDCP_ERR_NULL;
    F.p = p;
    F.s = s;
    F.start[0] = start_p1;
    F.start[1] = start_p2;
    F.out = out;
    F.info = info;

    info->status = MBDCP_MAX_ITERATIONS;
    info->iterations = 0;
    info->converged = 0;
    info->pivots = 0;
    info->residual = 0.0;
    memset(F.W.gamma, 0, (size_t)nc * sizeof(mbdcp_float));
    memcpy(F.W.v_prev, p->v, (size_t)p->n_v * sizeof(mbdcp_float));
    for (mbdcp_int it = 0; it < s->max_iter; ++it) {
        MbdcpStatus st;
        rc = fixed_point_pass(&F, it, &st);
        if (rc != MBDCP_OK) return rc;
        if (st != MBDCP_SOLVED) {
            info->status = st;
            break;
        }
        if (fixed_point_done(&F, it)) break;
    }
    if (nc) memcpy(out->p_n, F.W.z, (size_t)nc * sizeof(mbdcp_float));
    if (m) memcpy(out->beta, F.W.z + nc, (size_t)m * sizeof(mbdcp_float));
    if (nc) memcpy(out->lam, F.W.lam, (size_t)nc * sizeof(mbdcp_float));
    return MBDCP_OK;
}
