/* Reduction of the time-stepping mixed LCP by Cholesky and Schur complement (see assemble.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "mbdcp/assemble.h"
#include "mbdcp/dense.h"

/* M must be SPD: a Cholesky pivot below this fraction of the largest diagonal rejects it. */
#define SPD_TOL 1e-14
/* Wb^T M^-1 Wb with a pivot below this fraction is treated as singular (dependent joints). */
#define RANK_TOL 1e-11
/* An entry of G or g within NOISE (n_v + 2) eps of the magnitude of its terms carries no digit. */
#define NOISE 4.0

/* One array of a step's problem and its length in entries. */
typedef struct {
    const mbdcp_float *x;
    size_t n;
} Field;

enum { N_REQUIRED = 9, N_OPTIONAL = 7 };

/* The problem's arrays by role: required ones may be NULL only when empty; optional ones may
 * be NULL (meaning zero). */
typedef struct {
    Field required[N_REQUIRED];
    Field optional[N_OPTIONAL];
} Fields;

static Fields fields(const MbdcpStepProblem *p)
{
    const size_t nv = (size_t)p->n_v, nc = (size_t)p->n_c, m = (size_t)p->m, nb = (size_t)p->n_b;
    const size_t mj = (size_t)p->m_j, nj = (size_t)p->n_j;
    const Fields f = {{{p->M, nv * nv}, {p->v, nv}, {p->Wn, nv * nc}, {p->mu, nc}, {p->D, nv * m}, {p->E, m * nc},
                       {p->Wb, nv * nb}, {p->Dj, nv * mj}, {p->Ej, mj * nj}},
                      {{p->p_ext, nv}, {p->psi_n, nc}, {p->dpsi_n, nc}, {p->dpsi_f, m}, {p->theta, nb},
                       {p->dtheta, nb}, {p->beta_max, nj}}};
    return f;
}

static MbdcpReturn check_dimensions(const MbdcpStepProblem *p)
{
    if (p->n_v < 1 || p->n_c < 0 || p->m < 0 || p->n_b < 0 || p->m_j < 0 || p->n_j < 0)
        return MBDCP_ERR_DIMENSION;
    /* friction directions belong to a contact (a joint), and a joint with friction has directions */
    if ((p->m > 0 && p->n_c == 0) || (p->m_j > 0 && p->n_j == 0) || (p->n_j > 0 && p->m_j == 0))
        return MBDCP_ERR_DIMENSION;
    return MBDCP_OK;
}

/* A required array may be NULL only when empty (M and v never are: n_v >= 1). */
static MbdcpReturn check_pointers(const Fields *f)
{
    for (int k = 0; k < N_REQUIRED; ++k)
        if (f->required[k].n > 0 && !f->required[k].x) return MBDCP_ERR_NULL;
    return MBDCP_OK;
}

static MbdcpReturn check_finite(const Fields *f)
{
    for (int k = 0; k < N_REQUIRED; ++k)
        if (f->required[k].x && !mbdcp_all_finite(f->required[k].n, f->required[k].x)) return MBDCP_ERR_NONFINITE;
    for (int k = 0; k < N_OPTIONAL; ++k)
        if (f->optional[k].x && !mbdcp_all_finite(f->optional[k].n, f->optional[k].x)) return MBDCP_ERR_NONFINITE;
    return MBDCP_OK;
}

/* The data's own form: M symmetric, mu >= 0, E and Ej group directions by contact / joint,
 * beta_max >= 0. */
static MbdcpReturn check_ranges(const MbdcpStepProblem *p)
{
    if (!mbdcp_symmetric(p->n_v, p->M, MBDCP_SYMMETRY_RTOL)) return MBDCP_ERR_DATA;
    if (!mbdcp_all_nonnegative((size_t)p->n_c, p->mu) ||
        (p->beta_max && !mbdcp_all_nonnegative((size_t)p->n_j, p->beta_max)))
        return MBDCP_ERR_DATA;
    if ((p->m && mbdcp_grouping_error(p->m, p->n_c, p->E)) || (p->m_j && mbdcp_grouping_error(p->m_j, p->n_j, p->Ej)))
        return MBDCP_ERR_DATA;
    return MBDCP_OK;
}

/* The checks run by group in a fixed order (dimensions, h, pointers, finiteness, ranges), so
 * that a problem with several faults always gets the same code. */
MbdcpReturn mbdcp_step_problem_check(const MbdcpStepProblem *p)
{
    if (!p) return MBDCP_ERR_NULL;
    MbdcpReturn rc = check_dimensions(p);
    if (rc != MBDCP_OK) return rc;
    if (!(p->h > 0.0) || !mbdcp_all_finite(1, &p->h)) return MBDCP_ERR_SETTING;
    const Fields f = fields(p);
    rc = check_pointers(&f);
    if (rc == MBDCP_OK) rc = check_finite(&f);
    if (rc == MBDCP_OK) rc = check_ranges(p);
    return rc;
}

/* L, X, Xb, Ls, Y (n_b x n_w), y, x2, G, g, scratch (2 n_v + n_b + n_w). */
size_t mbdcp_reduce_workspace_size(mbdcp_int n_v, mbdcp_int n_w, mbdcp_int n_b)
{
    const size_t nv = (size_t)n_v, nw = (size_t)n_w, nb = (size_t)n_b;
    return (nv * nv + nv * nw + nv * nb + nb * nb + nb * nw + nv + nb + nw * nw + 2 * nw + 2 * nv + nb + nw) *
           sizeof(mbdcp_float);
}

/* umag_i: the magnitude of the terms that make up u0_i, the free velocity in L-coordinates, for
 * judging what is rounding in g = X^T u0 component by component. For y = L^-1 (M v + p_ext) it is
 * the running bound of forward substitution, t_i = (|p_ext_i| + (|M||v|)_i + sum_{j<i} |L_ij| t_j)
 * / L_ii (Higham 2002, section 8.1): a huge normal load beside a sliding speed of 2 leaves that
 * speed, not a noise of eps times the load. Joints mix the components they couple: their
 * correction Xb c adds |Xb| ||c||_inf (c: the n_b multipliers, NULL without joints). */
static void term_magnitudes(const MbdcpReduceInput *p, const MbdcpReduced *red, const mbdcp_float *c,
                            mbdcp_float *umag)
{
    const mbdcp_int nv = red->n_v, nb = red->n_b;
    for (mbdcp_int i = 0; i < nv; ++i) {
        const mbdcp_float *Mi = p->M + (size_t)i * nv;
        mbdcp_float t = p->p_ext ? fabs(p->p_ext[i]) : 0.0;
        for (mbdcp_int j = 0; j < nv; ++j) t += fabs(Mi[j]) * fabs(p->v[j]);
        const mbdcp_float *Li = red->L + (size_t)i * nv;
        for (mbdcp_int j = 0; j < i; ++j) t += fabs(Li[j]) * umag[j];
        umag[i] = t / Li[i];
    }
    if (!c || nb == 0) return;
    const mbdcp_float cmax = mbdcp_norm_inf((size_t)nb, c);
    for (mbdcp_int i = 0; i < nv; ++i) {
        const mbdcp_float *Xbi = red->Xb + (size_t)i * nb;
        mbdcp_float s = 0.0;
        for (mbdcp_int k = 0; k < nb; ++k) s += fabs(Xbi[k]);
        umag[i] += s * cmax;
    }
}

/* Entries of G and g below the rounding error of their own terms are set to zero: the products
 * of orthogonal friction directions (2e-16 beside 3.5) and the tangential speed of a rolling or
 * resting contact (1e-17 beside 1) are noise, and an LCP judged row by row at each row's own
 * scale would have to honour them (a sticking contact would have to slide at 1e-17). The bounds
 * are NOISE (n_v + 2) eps ||X_a||_2 ||X_b||_2 for G_ab and NOISE (n_v + 2) eps |X_a|^T umag for
 * g_a = X_a^T u0 (umag: the magnitudes of u0's terms, see term_magnitudes), kept in red->gmag as
 * the scale at which the rows of g are judged; `mag` holds n_w scratch. */
static void drop_noise(MbdcpReduced *red, const mbdcp_float *umag, mbdcp_float *mag)
{
    const mbdcp_int nv = red->n_v, nw = red->n_w;
    const mbdcp_float rel = NOISE * (mbdcp_float)(nv + 2) * DBL_EPSILON;
    mbdcp_float *gmag = red->gmag;
    for (mbdcp_int a = 0; a < nw; ++a) gmag[a] = 0.0;
    for (mbdcp_int i = 0; i < nv; ++i) {
        const mbdcp_float *Xi = red->X + (size_t)i * nw;
        for (mbdcp_int a = 0; a < nw; ++a) gmag[a] += fabs(Xi[a]) * umag[i];
    }
    for (mbdcp_int a = 0; a < nw; ++a)
        if (fabs(red->g[a]) <= rel * gmag[a]) red->g[a] = 0.0;
    for (mbdcp_int a = 0; a < nw; ++a) mag[a] = 0.0;
    for (mbdcp_int i = 0; i < nv; ++i) {
        const mbdcp_float *Xi = red->X + (size_t)i * nw;
        for (mbdcp_int a = 0; a < nw; ++a) mag[a] += Xi[a] * Xi[a];
    }
    for (mbdcp_int a = 0; a < nw; ++a) mag[a] = sqrt(mag[a]);
    for (mbdcp_int a = 0; a < nw; ++a) {
        mbdcp_float *Ga = red->G + (size_t)a * nw;
        for (mbdcp_int b = 0; b < nw; ++b)
            if (b != a && fabs(Ga[b]) <= rel * mag[a] * mag[b]) Ga[b] = 0.0;
    }
}

MbdcpReturn mbdcp_reduce(const MbdcpStepProblem *p, MbdcpReduced *red, void *work, size_t work_bytes)
{
    MbdcpReturn rc = mbdcp_step_problem_check(p);
    if (rc != MBDCP_OK) return rc;
    const MbdcpReduceInput in = {p->n_v, p->n_b, p->h, p->M, p->v, p->p_ext, p->Wb, p->theta, p->dtheta,
                                 3, {p->Wn, p->D, p->Dj, NULL}, {p->n_c, p->m, p->m_j, 0}};
    return mbdcp_reduce_blocks(&in, red, work, work_bytes);
}

MbdcpReturn mbdcp_reduce_blocks(const MbdcpReduceInput *p, MbdcpReduced *red, void *work, size_t work_bytes)
{
    if (!p || !red || !work) return MBDCP_ERR_NULL;
    if (p->n_blocks < 0 || p->n_blocks > MBDCP_MAX_BLOCKS) return MBDCP_ERR_DIMENSION;
    const mbdcp_int nv = p->n_v, nb = p->n_b;
    mbdcp_int nw = 0;
    for (mbdcp_int k = 0; k < p->n_blocks; ++k) nw += p->widths[k];
    if (work_bytes < mbdcp_reduce_workspace_size(nv, nw, nb)) return MBDCP_ERR_WORKSPACE;

    mbdcp_float *w = (mbdcp_float *)work;
    red->n_v = nv;
    red->n_w = nw;
    red->n_b = nb;
    red->L = w;            w += (size_t)nv * nv;
    red->X = w;            w += (size_t)nv * nw;
    red->Xb = w;           w += (size_t)nv * nb;
    red->Ls = w;           w += (size_t)nb * nb;
    mbdcp_float *Y = w;    w += (size_t)nb * nw;
    red->y = w;            w += nv;
    red->x2 = w;           w += nb;
    red->G = w;            w += (size_t)nw * nw;
    red->g = w;            w += nw;
    red->gmag = w;         w += nw;
    red->scratch = w;

    memcpy(red->L, p->M, (size_t)nv * nv * sizeof(mbdcp_float));
    /* on M's profile (block-diagonal for bodies: most of the dense factor's products are zeros);
     * the scratch holds the profile until it is used below */
    if (mbdcp_cholesky_profile(nv, red->L, SPD_TOL, (mbdcp_int *)red->scratch) != MBDCP_OK) return MBDCP_ERR_NOT_POSDEF;

    /* X = L^-1 W, W = the column blocks side by side */
    for (mbdcp_int i = 0; i < nv; ++i) {
        mbdcp_float *Xi = red->X + (size_t)i * nw;
        for (mbdcp_int k = 0; k < p->n_blocks; ++k) {
            const mbdcp_int wk = p->widths[k];
            if (wk) memcpy(Xi, p->W_blocks[k] + (size_t)i * wk, (size_t)wk * sizeof(mbdcp_float));
            Xi += wk;
        }
    }
    mbdcp_trsm_lower(nv, red->L, nw, red->X);

    /* y = L^-1 (M v + p_ext) */
    mbdcp_gemv(nv, nv, 1.0, p->M, 0, p->v, 0.0, red->y);
    if (p->p_ext)
        for (mbdcp_int i = 0; i < nv; ++i) red->y[i] += p->p_ext[i];
    mbdcp_trsv_lower(nv, red->L, 0, red->y);

    mbdcp_gram(nv, nw, red->X, red->G);
    mbdcp_gemv(nv, nw, 1.0, red->X, 1, red->y, 0.0, red->g);
    mbdcp_float *umag = red->scratch + nv + nb + nw;
    if (nb == 0) {
        term_magnitudes(p, red, NULL, umag);
        drop_noise(red, umag, red->scratch + nv);
        return MBDCP_OK;
    }

    /* Joints: Schur complement S = Xb^T Xb, Y = Ls^-1 Xb^T X, G -= Y^T Y, g = X^T (y - Xb S^-1 c). */
    if (nv > 0) memcpy(red->Xb, p->Wb, (size_t)nv * nb * sizeof(mbdcp_float));
    mbdcp_trsm_lower(nv, red->L, nb, red->Xb);
    mbdcp_gram(nv, nb, red->Xb, red->Ls);
    if (mbdcp_cholesky(nb, red->Ls, RANK_TOL) != MBDCP_OK) return MBDCP_ERR_RANK_DEFICIENT;
    for (mbdcp_int k = 0; k < nb; ++k)
        red->x2[k] = (p->theta ? p->theta[k] / p->h : 0.0) + (p->dtheta ? p->dtheta[k] : 0.0);
    mbdcp_gemm_tn(nv, nb, nw, red->Xb, red->X, Y);
    mbdcp_trsm_lower(nb, red->Ls, nw, Y);
    for (mbdcp_int k = 0; k < nb; ++k) {
        const mbdcp_float *Yk = Y + (size_t)k * nw;
        for (mbdcp_int a = 0; a < nw; ++a) {
            const mbdcp_float ya = Yk[a];
            if (ya == 0.0) continue;
            mbdcp_float *Ga = red->G + (size_t)a * nw;
            for (mbdcp_int b = 0; b < nw; ++b) Ga[b] -= ya * Yk[b];
        }
    }
    /* v_free in L-coordinates: u0 = y - Xb S^-1 (Xb^T y + x2); g = X^T u0. */
    mbdcp_float *u0 = red->scratch, *t = red->scratch + nv;
    mbdcp_gemv(nv, nb, 1.0, red->Xb, 1, red->y, 0.0, t);
    for (mbdcp_int k = 0; k < nb; ++k) t[k] += red->x2[k];
    mbdcp_trsv_lower(nb, red->Ls, 0, t);
    mbdcp_trsv_lower(nb, red->Ls, 1, t);
    memcpy(u0, red->y, (size_t)nv * sizeof(mbdcp_float));
    mbdcp_gemv(nv, nb, -1.0, red->Xb, 0, t, 1.0, u0);
    mbdcp_gemv(nv, nw, 1.0, red->X, 1, u0, 0.0, red->g);
    term_magnitudes(p, red, t, umag);
    drop_noise(red, umag, red->scratch + nv + nb);
    return MBDCP_OK;
}

/* Components of v_next = L^-T u (u = y + X x, joints' correction included) below the rounding error
 * of their own terms are set to zero: a box brought to rest by impulses of 0.05 whose torques
 * cancel keeps an angular velocity of 1e-17, and the next step's LCP would have to stop that
 * noise with friction impulses of 1e-16 beside normal impulses of 0.05 (its rows judged at
 * their own scale). The magnitudes are |y| + |X| |x| (+ |Xb| |t| with joints), carried through
 * the back substitution as its running bound (Higham 2002, section 8.1). */
static void drop_velocity_noise(const MbdcpReduced *red, const mbdcp_float *x, mbdcp_float *v_next)
{
    const mbdcp_int nv = red->n_v, nw = red->n_w, nb = red->n_b;
    const mbdcp_float rel = NOISE * (mbdcp_float)(nv + 2) * DBL_EPSILON;
    mbdcp_float *mag = red->scratch; /* its first n_v are free after the reduction (t follows them) */
    const mbdcp_float *t = red->scratch + nv;
    for (mbdcp_int i = 0; i < nv; ++i) {
        const mbdcp_float *Xi = red->X + (size_t)i * nw, *Xbi = red->Xb + (size_t)i * nb;
        mbdcp_float m = fabs(red->y[i]);
        for (mbdcp_int a = 0; a < nw; ++a) m += fabs(Xi[a]) * fabs(x[a]);
        for (mbdcp_int k = 0; k < nb; ++k) m += fabs(Xbi[k]) * fabs(t[k]);
        mag[i] = m;
    }
    for (mbdcp_int i = nv - 1; i >= 0; --i) {
        mbdcp_float m = mag[i];
        for (mbdcp_int j = i + 1; j < nv; ++j) m += fabs(red->L[(size_t)j * nv + i]) * mag[j];
        mag[i] = m / red->L[(size_t)i * nv + i];
    }
    for (mbdcp_int i = 0; i < nv; ++i)
        if (fabs(v_next[i]) <= rel * mag[i]) v_next[i] = 0.0;
}

MbdcpReturn mbdcp_reduced_recover(const MbdcpReduced *red, const mbdcp_float *x, mbdcp_float *v_next,
                                  mbdcp_float *p_b)
{
    if (!red) return MBDCP_ERR_NULL;
    if (!v_next) return MBDCP_OK;
    const mbdcp_int nv = red->n_v, nw = red->n_w, nb = red->n_b;
    if (nw > 0 && !x) return MBDCP_ERR_NULL;
    /* u = y + X x are the L-coordinates of M v + p_ext + W x. */
    memcpy(v_next, red->y, (size_t)nv * sizeof(mbdcp_float));
    mbdcp_gemv(nv, nw, 1.0, red->X, 0, x, 1.0, v_next);
    if (nb > 0) {
        mbdcp_float *t = red->scratch + nv;
        mbdcp_gemv(nv, nb, 1.0, red->Xb, 1, v_next, 0.0, t);
        for (mbdcp_int k = 0; k < nb; ++k) t[k] += red->x2[k];
        mbdcp_trsv_lower(nb, red->Ls, 0, t);
        mbdcp_trsv_lower(nb, red->Ls, 1, t);
        mbdcp_gemv(nv, nb, -1.0, red->Xb, 0, t, 1.0, v_next);
        if (p_b)
            for (mbdcp_int k = 0; k < nb; ++k) p_b[k] = -t[k];
    }
    mbdcp_trsv_lower(nv, red->L, 1, v_next);
    drop_velocity_noise(red, x, v_next);
    return MBDCP_OK;
}

void mbdcp_place_gram(const MbdcpReduced *red, mbdcp_int N, mbdcp_float *F)
{
    const mbdcp_int nw = red->n_w;
    memset(F, 0, (size_t)N * N * sizeof(mbdcp_float));
    for (mbdcp_int a = 0; a < nw; ++a) memcpy(F + (size_t)a * N, red->G + (size_t)a * nw, (size_t)nw * sizeof(mbdcp_float));
}

void mbdcp_place_grouping(mbdcp_int rows, mbdcp_int groups, const mbdcp_float *E, mbdcp_int r0, mbdcp_int c0,
                          mbdcp_int N, mbdcp_float *F)
{
    for (mbdcp_int k = 0; k < rows; ++k)
        for (mbdcp_int c = 0; c < groups; ++c) {
            const mbdcp_float e = E[(size_t)k * groups + c];
            F[(size_t)(r0 + k) * N + c0 + c] = e;
            F[(size_t)(c0 + c) * N + r0 + k] = -e;
        }
}

mbdcp_float mbdcp_sum_or_zero(mbdcp_int n_v, mbdcp_float a, mbdcp_float b)
{
    const mbdcp_float sum = a + b;
    return fabs(sum) <= NOISE * (mbdcp_float)(n_v + 2) * DBL_EPSILON * (fabs(a) + fabs(b)) ? 0.0 : sum;
}

void mbdcp_contact_rhs_magnitude(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *fmag)
{
    memcpy(fmag, red->gmag, (size_t)red->n_w * sizeof(mbdcp_float));
    for (mbdcp_int c = 0; c < p->n_c; ++c) {
        if (p->psi_n) fmag[c] += fabs(p->psi_n[c] / p->h);
        if (p->dpsi_n) fmag[c] += fabs(p->dpsi_n[c]);
    }
    if (p->dpsi_f)
        for (mbdcp_int k = 0; k < p->m; ++k) fmag[p->n_c + k] += fabs(p->dpsi_f[k]);
}

void mbdcp_contact_rhs(const MbdcpStepProblem *p, const MbdcpReduced *red, mbdcp_float *f)
{
    const mbdcp_int nv = p->n_v;
    memcpy(f, red->g, (size_t)red->n_w * sizeof(mbdcp_float));
    for (mbdcp_int c = 0; c < p->n_c; ++c) {
        if (p->psi_n) f[c] = mbdcp_sum_or_zero(nv, f[c], p->psi_n[c] / p->h);
        if (p->dpsi_n) f[c] = mbdcp_sum_or_zero(nv, f[c], p->dpsi_n[c]);
    }
    if (p->dpsi_f)
        for (mbdcp_int k = 0; k < p->m; ++k) f[p->n_c + k] = mbdcp_sum_or_zero(nv, f[p->n_c + k], p->dpsi_f[k]);
}
