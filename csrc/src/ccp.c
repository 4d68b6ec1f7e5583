/* Cone complementarity: APGD, projected Jacobi and Gauss-Seidel, without forming N; see ccp.h. */
#include <math.h>
#include <string.h>

#include "mbdcp/ccp.h"
#include "mbdcp/dense.h"

#define POWER_ITERATIONS 30
/* Projected gradient steps on a contact's 3 x 3 local problem in Gauss-Seidel. */
#define LOCAL_ITERATIONS 20

MbdcpReturn mbdcp_ccp_default_settings(MbdcpCcpSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->method = MBDCP_CCP_APGD;
    s->tol = 1e-8;
    s->max_iter = 10000;
    s->omega = 0.0;
    s->warm_start = 0;
    s->monitor.fn = NULL;
    s->monitor.ctx = NULL;
    return MBDCP_OK;
}

MbdcpReturn mbdcp_ccp_check_settings(const MbdcpCcpSettings *s, const char **message)
{
    const char *msg = NULL;
    if (!s) return MBDCP_ERR_NULL;
    if ((int)s->method < 0 || (int)s->method > 2)
        msg = "method must be apgd, pjacobi or pgs";
    else if (!(s->tol > 0.0) || !isfinite(s->tol))
        msg = "tol must be positive and finite";
    else if (s->max_iter < 1)
        msg = "max_iter must be at least 1";
    else if (!(s->omega >= 0.0 && s->omega < 2.0))
        msg = "omega must be in (0, 2)";
    if (message) *message = msg;
    return msg ? MBDCP_ERR_SETTING : MBDCP_OK;
}

static mbdcp_int n_p(const MbdcpCcpProblem *p)
{
    return 3 * p->n_c + p->n_b;
}

/* eta, g, y, prev, Nx, Ny, trial, Ngam, gam, tmp (n_p each); Nii (9 per contact); ut (n_v). */
size_t mbdcp_ccp_workspace_size(const MbdcpCcpProblem *p)
{
    if (!p) return 0;
    return (10 * (size_t)n_p(p) + 9 * (size_t)p->n_c + (size_t)p->n_v) * sizeof(mbdcp_float);
}

void mbdcp_cone_project(mbdcp_float mu, mbdcp_float *g)
{
    const mbdcp_float t = sqrt(g[1] * g[1] + g[2] * g[2]);
    if (g[0] >= 0.0 && t <= mu * g[0]) return; /* inside K */
    if (mu * t <= -g[0]) {                      /* inside the polar cone: the apex */
        g[0] = g[1] = g[2] = 0.0;
        return;
    }
    if (mu == 0.0) {                            /* K is the ray g_t = 0, g_n >= 0 */
        g[1] = g[2] = 0.0;
        return;
    }
    const mbdcp_float gn = (g[0] + mu * t) / (1.0 + mu * mu);
    const mbdcp_float scale = mu * gn / t;
    g[0] = gn;
    g[1] *= scale;
    g[2] *= scale;
}

static void project_all(const MbdcpCcpProblem *p, mbdcp_float *nu)
{
    for (mbdcp_int i = 0; i < p->n_c; ++i) mbdcp_cone_project(p->mu[i], nu + 3 * i);
}

/* u = Q x (scatter over columns). */
static void apply_Q(const MbdcpCcpProblem *p, const mbdcp_float *x, mbdcp_float *u)
{
    memset(u, 0, (size_t)p->n_v * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < n_p(p); ++j) {
        const mbdcp_float xj = x[j];
        if (xj == 0.0) continue;
        for (mbdcp_int k = p->Q_colptr[j]; k < p->Q_colptr[j + 1]; ++k) u[p->Q_rowind[k]] += p->Q_val[k] * xj;
    }
}

/* P_j^T u for column j. */
static mbdcp_float col_dot_P(const MbdcpCcpProblem *p, mbdcp_int j, const mbdcp_float *u)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int k = p->P_colptr[j]; k < p->P_colptr[j + 1]; ++k) s += p->P_val[k] * u[p->P_rowind[k]];
    return s;
}

/* y = N x = P^T (Q x); u receives Q x. */
static void apply_N(const MbdcpCcpProblem *p, const mbdcp_float *x, mbdcp_float *u, mbdcp_float *y)
{
    apply_Q(p, x, u);
    for (mbdcp_int j = 0; j < n_p(p); ++j) y[j] = col_dot_P(p, j, u);
}

/* y = S N S x for the diagonal scaling S (S = NULL: y = N x); tmp: n_p scratch. */
static void apply_SNS(const MbdcpCcpProblem *p, const mbdcp_float *S, const mbdcp_float *x, mbdcp_float *u,
                      mbdcp_float *y, mbdcp_float *tmp)
{
    const mbdcp_int np_ = n_p(p);
    if (!S) {
        apply_N(p, x, u, y);
        return;
    }
    for (mbdcp_int j = 0; j < np_; ++j) tmp[j] = S[j] * x[j];
    apply_N(p, tmp, u, y);
    for (mbdcp_int j = 0; j < np_; ++j) y[j] *= S[j];
}

static mbdcp_float dot(mbdcp_int n, const mbdcp_float *a, const mbdcp_float *b)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

/* Largest eigenvalue of S N S (symmetric PSD; S = NULL: of N) by power iteration from a fixed start. */
static mbdcp_float lipschitz(const MbdcpCcpProblem *p, const mbdcp_float *S, mbdcp_float *x, mbdcp_float *y,
                             mbdcp_float *u, mbdcp_float *tmp)
{
    const mbdcp_int np_ = n_p(p);
    for (mbdcp_int j = 0; j < np_; ++j) x[j] = 1.0 + 0.01 * (j % 7); /* not orthogonal to anything simple */
    mbdcp_float lam = 0.0;
    for (int it = 0; it < POWER_ITERATIONS; ++it) {
        const mbdcp_float nx = sqrt(dot(np_, x, x));
        if (!(nx > 0.0)) break;
        for (mbdcp_int j = 0; j < np_; ++j) x[j] /= nx;
        apply_SNS(p, S, x, u, y, tmp);
        lam = dot(np_, x, y);
        memcpy(x, y, (size_t)np_ * sizeof(mbdcp_float));
    }
    return lam > 0.0 ? 1.05 * lam : 1.0; /* a little above: the power method approaches from below */
}

/* Relative natural-map residual of nu with gradient g = N nu + p (scratch: np entries). */
static mbdcp_float residual(const MbdcpCcpProblem *p, const mbdcp_float *nu, const mbdcp_float *g,
                            mbdcp_float L, mbdcp_float pnorm, mbdcp_float *scratch)
{
    const mbdcp_int np_ = n_p(p);
    for (mbdcp_int j = 0; j < np_; ++j) scratch[j] = nu[j] - g[j] / L;
    project_all(p, scratch);
    mbdcp_float r = 0.0;
    for (mbdcp_int j = 0; j < np_; ++j) r = fmax(r, fabs(nu[j] - scratch[j]));
    return r * L / pnorm;
}

static void gradient(const MbdcpCcpProblem *p, const mbdcp_float *Nx, mbdcp_float *g)
{
    for (mbdcp_int j = 0; j < n_p(p); ++j) g[j] = Nx[j] + p->p[j];
}

/* The 3 x 3 diagonal blocks N_ii (row-major, 9 per contact), and eta per entry:
 * 3 / trace(N_ii) for a contact's three entries, 1 / N_jj for a joint. u must be zero. */
static void scaling(const MbdcpCcpProblem *p, mbdcp_float *eta, mbdcp_float *Nii, mbdcp_float *u)
{
    const mbdcp_int nc = p->n_c, np_ = n_p(p);
    mbdcp_float *diag = eta;
    for (mbdcp_int j = 0; j < np_; ++j) {
        /* column j of N restricted to its own block: scatter Q_j into u, dot with P, clear. */
        for (mbdcp_int k = p->Q_colptr[j]; k < p->Q_colptr[j + 1]; ++k) u[p->Q_rowind[k]] += p->Q_val[k];
        diag[j] = col_dot_P(p, j, u);
        if (j < 3 * nc) {
            const mbdcp_int i = j / 3, b = j % 3;
            for (mbdcp_int a = 0; a < 3; ++a) Nii[9 * i + 3 * a + b] = col_dot_P(p, 3 * i + a, u);
        }
        for (mbdcp_int k = p->Q_colptr[j]; k < p->Q_colptr[j + 1]; ++k) u[p->Q_rowind[k]] = 0.0;
    }
    for (mbdcp_int i = 0; i < nc; ++i) {
        const mbdcp_float tr = diag[3 * i] + diag[3 * i + 1] + diag[3 * i + 2];
        const mbdcp_float e = tr > 0.0 ? 3.0 / tr : 1.0;
        eta[3 * i] = eta[3 * i + 1] = eta[3 * i + 2] = e;
    }
    for (mbdcp_int j = 3 * nc; j < np_; ++j) eta[j] = diag[j] > 0.0 ? 1.0 / diag[j] : 1.0;
}

MbdcpReturn mbdcp_ccp_solve(const MbdcpCcpProblem *p, const MbdcpCcpSettings *s, mbdcp_float *nu,
                            mbdcp_float *u, MbdcpCcpInfo *info, void *work, size_t work_bytes)
{
    if (!p || !s || !info || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_ccp_check_settings(s, NULL);
    if (rc != MBDCP_OK) return rc;
    if (p->n_v < 1 || p->n_c < 0 || p->n_b < 0) return MBDCP_ERR_DIMENSION;
    const mbdcp_int np_ = n_p(p), nv = p->n_v;
    if (np_ > 0 && (!p->P_colptr || !p->Q_colptr || !p->p || !nu || (p->n_c && !p->mu))) return MBDCP_ERR_NULL;
    if (!u) return MBDCP_ERR_NULL;
    if (work_bytes < mbdcp_ccp_workspace_size(p)) return MBDCP_ERR_WORKSPACE;
    if (!mbdcp_all_finite((size_t)np_, p->p) || !mbdcp_all_finite((size_t)p->n_c, p->mu)) return MBDCP_ERR_NONFINITE;
    for (mbdcp_int i = 0; i < p->n_c; ++i)
        if (p->mu[i] < 0.0) return MBDCP_ERR_SETTING;
    for (mbdcp_int j = 0; j < np_; ++j)
        if (p->P_colptr[j + 1] < p->P_colptr[j] || p->Q_colptr[j + 1] < p->Q_colptr[j]) return MBDCP_ERR_DIMENSION;

    mbdcp_float *eta = (mbdcp_float *)work, *g = eta + np_, *y = g + np_, *prev = y + np_;
    mbdcp_float *Nx = prev + np_, *Ny = Nx + np_, *trial = Ny + np_;
    mbdcp_float *Ngam = trial + np_, *gam = Ngam + np_, *tmp = gam + np_, *Nii = tmp + np_;
    mbdcp_float *ut = Nii + 9 * (size_t)p->n_c;
    info->status = MBDCP_MAX_ITERATIONS;
    info->iterations = 0;
    info->residual = 0.0;
    memset(ut, 0, (size_t)nv * sizeof(mbdcp_float));
    memset(u, 0, (size_t)nv * sizeof(mbdcp_float));
    if (np_ == 0) {
        info->status = MBDCP_SOLVED;
        return MBDCP_OK;
    }
    if (!s->warm_start) memset(nu, 0, (size_t)np_ * sizeof(mbdcp_float));
    if (!mbdcp_all_finite((size_t)np_, nu)) return MBDCP_ERR_NONFINITE;
    project_all(p, nu);

    const mbdcp_float L = lipschitz(p, NULL, y, Ny, ut, tmp);
    info->lipschitz = L;
    const mbdcp_float pnorm = fmax(mbdcp_norm_inf((size_t)np_, p->p), 1e-300);
    const mbdcp_float omega = s->omega > 0.0 ? s->omega : (s->method == MBDCP_CCP_PJACOBI ? 0.3 : 1.0);
    scaling(p, eta, Nii, ut);

    apply_N(p, nu, u, Nx);
    gradient(p, Nx, g);
    mbdcp_float res = residual(p, nu, g, L, pnorm, trial);
    int interrupted = 0;

    if (s->method == MBDCP_CCP_APGD) {
        /* Mazhar, Heyn, Negrut, Tasora (2015), Algorithm 2 (Nesterov with adaptive step and
         * restart), run on x = gamma / S with S = sqrt(eta): one scalar per contact keeps each
         * cone and its Euclidean projection, and evens out the contacts' effective masses.
         * Vectors below are in x-space; 'prev' keeps the best gamma found. */
        mbdcp_float *S = eta, *ps = g; /* ps = S p */
        for (mbdcp_int j = 0; j < np_; ++j) S[j] = sqrt(eta[j]);
        for (mbdcp_int j = 0; j < np_; ++j) ps[j] = S[j] * p->p[j];
        const mbdcp_float Ls = lipschitz(p, S, y, Ny, ut, tmp);
        mbdcp_float Lk = Ls, theta = 1.0, best = res;
        memcpy(prev, nu, (size_t)np_ * sizeof(mbdcp_float));
        for (mbdcp_int j = 0; j < np_; ++j) gam[j] = nu[j] / S[j];
        apply_SNS(p, S, gam, ut, Ngam, tmp);
        memcpy(y, gam, (size_t)np_ * sizeof(mbdcp_float));
        memcpy(Ny, Ngam, (size_t)np_ * sizeof(mbdcp_float));
        for (mbdcp_int k = 0; k < s->max_iter && res > s->tol && !interrupted; ++k) {
            /* Nx: the gradient at y; nu: scratch for the product with the trial point */
            for (mbdcp_int j = 0; j < np_; ++j) Nx[j] = Ny[j] + ps[j];
            const mbdcp_float fy = 0.5 * dot(np_, y, Ny) + dot(np_, ps, y);
            mbdcp_float fnew = 0.0;
            for (int ls = 0; ls < 60; ++ls) {
                for (mbdcp_int j = 0; j < np_; ++j) trial[j] = y[j] - Nx[j] / Lk;
                project_all(p, trial);
                apply_SNS(p, S, trial, ut, nu, tmp);
                fnew = 0.5 * dot(np_, trial, nu) + dot(np_, ps, trial);
                mbdcp_float lin = 0.0, sq = 0.0;
                for (mbdcp_int j = 0; j < np_; ++j) {
                    const mbdcp_float dlt = trial[j] - y[j];
                    lin += Nx[j] * dlt;
                    sq += dlt * dlt;
                }
                if (fnew <= fy + lin + 0.5 * Lk * sq + 1e-14 * fabs(fy)) break;
                Lk *= 2.0;
            }
            const mbdcp_float theta_new = 0.5 * (-theta * theta + theta * sqrt(theta * theta + 4.0));
            const mbdcp_float beta = theta * (1.0 - theta) / (theta * theta + theta_new);
            mbdcp_float restart = 0.0;
            for (mbdcp_int j = 0; j < np_; ++j) restart += Nx[j] * (trial[j] - gam[j]);
            /* y = x_new + beta (x_new - x); N y from the two products by linearity */
            for (mbdcp_int j = 0; j < np_; ++j) {
                const mbdcp_float step_ = trial[j] - gam[j];
                gam[j] = trial[j];
                y[j] = trial[j] + beta * step_;
                Ny[j] = nu[j] + beta * (nu[j] - Ngam[j]);
                Ngam[j] = nu[j];
            }
            /* residual in gamma-space: gamma = S x, N gamma + p = (S N S x + S p) / S */
            for (mbdcp_int j = 0; j < np_; ++j) {
                trial[j] = S[j] * gam[j];
                Nx[j] = (Ngam[j] + ps[j]) / S[j];
            }
            res = residual(p, trial, Nx, L, pnorm, tmp);
            info->iterations = k + 1;
            if (mbdcp_monitor_call(&s->monitor, k + 1, -1, -1, res)) interrupted = 1;
            if (res < best) {
                best = res;
                memcpy(prev, trial, (size_t)np_ * sizeof(mbdcp_float));
            }
            if (restart > 0.0) {
                memcpy(y, gam, (size_t)np_ * sizeof(mbdcp_float));
                memcpy(Ny, Ngam, (size_t)np_ * sizeof(mbdcp_float));
                theta = 1.0;
            } else {
                theta = theta_new;
            }
            Lk *= 0.9;
        }
        memcpy(nu, prev, (size_t)np_ * sizeof(mbdcp_float));
        res = best;
        apply_Q(p, nu, u);
    } else if (s->method == MBDCP_CCP_PJACOBI) {
        for (mbdcp_int k = 0; k < s->max_iter && res > s->tol && !interrupted; ++k) {
            for (mbdcp_int j = 0; j < np_; ++j) nu[j] -= omega * eta[j] * g[j];
            project_all(p, nu);
            apply_N(p, nu, u, Nx);
            gradient(p, Nx, g);
            res = residual(p, nu, g, L, pnorm, trial);
            info->iterations = k + 1;
            if (mbdcp_monitor_call(&s->monitor, k + 1, -1, -1, res)) interrupted = 1;
        }
    } else {
        /* Gauss-Seidel: u = Q nu is kept current; contact i reads g_i = P_i^T u + p_i and solves its
         * local problem min 1/2 x^T N_ii x + (g_i - N_ii gamma_i)^T x over K_i by a few projected
         * gradient steps (step 1 / ||N_ii||_F <= 1 / lambda_max), as nonsmooth Gauss-Seidel does. */
        for (mbdcp_int k = 0; k < s->max_iter && res > s->tol && !interrupted; ++k) {
            for (mbdcp_int i = 0; i < p->n_c + p->n_b; ++i) {
                const int contact = i < p->n_c;
                const mbdcp_int j0 = contact ? 3 * i : 3 * p->n_c + (i - p->n_c);
                const mbdcp_int w = contact ? 3 : 1;
                mbdcp_float old[3], gi[3];
                for (mbdcp_int a = 0; a < w; ++a) {
                    old[a] = nu[j0 + a];
                    gi[a] = col_dot_P(p, j0 + a, u) + p->p[j0 + a];
                }
                if (contact) {
                    const mbdcp_float *B = Nii + 9 * (size_t)i;
                    mbdcp_float fro = 0.0, b[3], x[3] = {old[0], old[1], old[2]};
                    for (int q = 0; q < 9; ++q) fro += B[q] * B[q];
                    const mbdcp_float step_ = fro > 0.0 ? 1.0 / sqrt(fro) : eta[j0];
                    for (int a = 0; a < 3; ++a) b[a] = gi[a] - (B[3 * a] * old[0] + B[3 * a + 1] * old[1] + B[3 * a + 2] * old[2]);
                    for (int inner = 0; inner < LOCAL_ITERATIONS; ++inner) {
                        mbdcp_float y3[3], change = 0.0;
                        for (int a = 0; a < 3; ++a)
                            y3[a] = x[a] - step_ * (B[3 * a] * x[0] + B[3 * a + 1] * x[1] + B[3 * a + 2] * x[2] + b[a]);
                        mbdcp_cone_project(p->mu[i], y3);
                        for (int a = 0; a < 3; ++a) {
                            change = fmax(change, fabs(y3[a] - x[a]));
                            x[a] = y3[a];
                        }
                        if (change <= 1e-3 * s->tol * fmax(fabs(x[0]), 1e-300)) break;
                    }
                    for (int a = 0; a < 3; ++a) nu[j0 + a] = old[a] + omega * (x[a] - old[a]);
                    mbdcp_cone_project(p->mu[i], nu + j0); /* relaxation may leave the cone when omega > 1 */
                } else {
                    nu[j0] -= omega * eta[j0] * gi[0];
                }
                for (mbdcp_int a = 0; a < w; ++a) {
                    const mbdcp_float dlt = nu[j0 + a] - old[a];
                    if (dlt == 0.0) continue;
                    for (mbdcp_int q = p->Q_colptr[j0 + a]; q < p->Q_colptr[j0 + a + 1]; ++q)
                        u[p->Q_rowind[q]] += p->Q_val[q] * dlt;
                }
            }
            apply_N(p, nu, u, Nx); /* also refreshes u, against drift */
            gradient(p, Nx, g);
            res = residual(p, nu, g, L, pnorm, trial);
            info->iterations = k + 1;
            if (mbdcp_monitor_call(&s->monitor, k + 1, -1, -1, res)) interrupted = 1;
        }
    }
    info->residual = res;
    if (interrupted)
        info->status = MBDCP_INTERRUPTED;
    else if (!isfinite(res) || !mbdcp_all_finite((size_t)np_, nu))
        info->status = MBDCP_NUMERICAL_ERROR;
    else if (res <= s->tol)
        info->status = MBDCP_SOLVED;
    return MBDCP_OK;
}
