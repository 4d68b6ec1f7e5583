/* The cone complementarity problem's products with N = P^T Q (never formed) and its residuals:
 * the Lipschitz estimate of N, the normwise and componentwise natural-map residuals an answer is
 * judged by, the diagonal blocks and scaling; see ccp_ops.h. They are what the first-order
 * methods and the driver (ccp.c) and the interior-point method (ccp_ipm.c) share: kept apart from
 * both, so that neither of those two files calls the other back (ccp.c -> ccp_ipm.c -> ccp_ops.c,
 * ccp.c -> ccp_ops.c). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ccp_ops.h"
#include "mbdcp/ccp.h"
#include "mbdcp/cone.h"

/* Flops of one product with N = P^T Q: its two sweeps and the sum. */
mbdcp_float mbdcp_ccp_product_flops(const MbdcpCcpProblem *p)
{
    const mbdcp_int np_ = ccp_n_p(p);
    return 2.0 * ((mbdcp_float)p->P_colptr[np_] + (mbdcp_float)p->Q_colptr[np_]) + np_;
}

void mbdcp_ccp_project_all(const MbdcpCcpProblem *p, mbdcp_float *nu)
{
    for (mbdcp_int i = 0; i < p->n_c; ++i) mbdcp_cone_project_inline(p->mu[i], nu + 3 * i);
}

/* P_j^T u for column j. */
mbdcp_float mbdcp_ccp_col_dot_P(const MbdcpCcpProblem *p, mbdcp_int j, const mbdcp_float *u)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int k = p->P_colptr[j]; k < p->P_colptr[j + 1]; ++k) s += p->P_val[k] * u[p->P_rowind[k]];
    return s;
}

int mbdcp_ccp_columns_blocked(mbdcp_int n_c, const mbdcp_int *colptr, const mbdcp_int *rowind)
{
    for (mbdcp_int i = 0; i < n_c; ++i) {
        const mbdcp_int k0 = colptr[3 * i], k1 = colptr[3 * i + 1], k2 = colptr[3 * i + 2];
        const mbdcp_int n = k1 - k0;
        if (k2 - k1 != n || colptr[3 * i + 3] - k2 != n) return 0;
        for (mbdcp_int t = 0; t < n; ++t)
            if (rowind[k0 + t] != rowind[k1 + t] || rowind[k0 + t] != rowind[k2 + t]) return 0;
    }
    return 1;
}

/* u = Q S x (S = NULL: u = Q x), scattered column by column; with BLOCKED_Q a contact's three
 * columns in one sweep, each u_r receiving the sum of its three terms (no test per term: a zero
 * term adds nothing, and a branch per entry cost 6 % of APGD's time at 500 spheres). */
static void apply_QS(const MbdcpCcpProblem *p, int blocked, const mbdcp_float *S, const mbdcp_float *x,
                     mbdcp_float *u)
{
    memset(u, 0, (size_t)p->n_v * sizeof(mbdcp_float));
    mbdcp_int j = 0;
    if (blocked & BLOCKED_Q) {
        for (mbdcp_int i = 0; i < p->n_c; ++i) {
            mbdcp_float xs[3];
            for (int a = 0; a < 3; ++a) xs[a] = S ? S[3 * i + a] * x[3 * i + a] : x[3 * i + a];
            if (xs[0] == 0.0 && xs[1] == 0.0 && xs[2] == 0.0) continue;
            const mbdcp_int k0 = p->Q_colptr[3 * i], k1 = p->Q_colptr[3 * i + 1], k2 = p->Q_colptr[3 * i + 2];
            const mbdcp_int *row = p->Q_rowind + k0;
            const mbdcp_float *q0 = p->Q_val + k0, *q1 = p->Q_val + k1, *q2 = p->Q_val + k2;
            for (mbdcp_int t = 0; t < k1 - k0; ++t) u[row[t]] += q0[t] * xs[0] + q1[t] * xs[1] + q2[t] * xs[2];
        }
        j = 3 * p->n_c;
    }
    for (; j < ccp_n_p(p); ++j) {
        const mbdcp_float xj = S ? S[j] * x[j] : x[j];
        if (xj == 0.0) continue;
        for (mbdcp_int k = p->Q_colptr[j]; k < p->Q_colptr[j + 1]; ++k) u[p->Q_rowind[k]] += p->Q_val[k] * xj;
    }
}

/* s_a = P_{3i+a}^T u, a = 0, 1, 2, for a contact whose three columns share their rows; each sum
 * in the order of col_dot_P. */
static void dot3(const MbdcpCcpProblem *p, mbdcp_int i, const mbdcp_float *u, mbdcp_float *s)
{
    const mbdcp_int k0 = p->P_colptr[3 * i], k1 = p->P_colptr[3 * i + 1], k2 = p->P_colptr[3 * i + 2];
    const mbdcp_int *row = p->P_rowind + k0;
    const mbdcp_float *v0 = p->P_val + k0, *v1 = p->P_val + k1, *v2 = p->P_val + k2;
    mbdcp_float s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (mbdcp_int t = 0; t < k1 - k0; ++t) {
        const mbdcp_float ut = u[row[t]];
        s0 += v0[t] * ut;
        s1 += v1[t] * ut;
        s2 += v2[t] * ut;
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
}

/* y_j = S_j P_j^T u (S = NULL: P_j^T u), contact by contact with BLOCKED_P. */
static void gather_P(const MbdcpCcpProblem *p, int blocked, const mbdcp_float *S, const mbdcp_float *u,
                     mbdcp_float *y)
{
    mbdcp_int j = 0;
    if (blocked & BLOCKED_P) {
        for (mbdcp_int i = 0; i < p->n_c; ++i) {
            mbdcp_float s[3];
            dot3(p, i, u, s);
            for (int a = 0; a < 3; ++a) y[3 * i + a] = S ? S[3 * i + a] * s[a] : s[a];
        }
        j = 3 * p->n_c;
    }
    for (; j < ccp_n_p(p); ++j) {
        const mbdcp_float d = mbdcp_ccp_col_dot_P(p, j, u);
        y[j] = S ? S[j] * d : d;
    }
}

/* y = S N S x for the diagonal scaling S (S = NULL: y = N x), the scaling folded into the two
 * sweeps; u receives Q S x; blocked: BLOCKED_P | BLOCKED_Q bits. */
void mbdcp_ccp_apply_SNS(const MbdcpCcpProblem *p, int blocked, const mbdcp_float *S, const mbdcp_float *x,
                         mbdcp_float *u, mbdcp_float *y)
{
    apply_QS(p, blocked, S, x, u);
    gather_P(p, blocked, S, u, y);
}

mbdcp_float mbdcp_ccp_dot(mbdcp_int n, const mbdcp_float *a, const mbdcp_float *b)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

/* The number of eigenvalues of the symmetric tridiagonal T (diagonal a, off-diagonal b[1..k-1])
 * below x (Sturm count). */
static int below(int k, const mbdcp_float *a, const mbdcp_float *b, mbdcp_float x)
{
    int count = 0;
    mbdcp_float d = 1.0;
    for (int i = 0; i < k; ++i) {
        d = a[i] - x - (i > 0 ? b[i] * b[i] / d : 0.0);
        if (d == 0.0) d = -DBL_EPSILON * (fabs(a[i]) + fabs(x) + DBL_MIN);
        count += d < 0.0;
    }
    return count;
}

/* Largest eigenvalue of S N S (symmetric PSD; S = NULL: of N), by LANCZOS_STEPS steps of Lanczos
 * from a fixed start (x, y, u, v: scratch): the largest Ritz value, found by bisection on the
 * Sturm count. It is the largest Rayleigh quotient over the Krylov space that as many power
 * iterations explore, so it is closer from below than power iteration at the same number of
 * products. */
mbdcp_float mbdcp_ccp_lipschitz(const MbdcpCcpProblem *p, int blocked, const mbdcp_float *S, int steps,
                                mbdcp_float *x, mbdcp_float *y, mbdcp_float *u, mbdcp_float *v)
{
    const mbdcp_int np_ = ccp_n_p(p);
    mbdcp_float a[LANCZOS_STEPS], b[LANCZOS_STEPS + 1];
    for (mbdcp_int j = 0; j < np_; ++j) x[j] = 1.0 + 0.01 * (j % 7); /* not orthogonal to anything simple */
    memset(v, 0, (size_t)np_ * sizeof(mbdcp_float));
    mbdcp_float nx = sqrt(mbdcp_ccp_dot(np_, x, x));
    b[0] = 0.0;
    int k = 0;
    while (k < steps && nx > 0.0 && isfinite(nx)) {
        /* x: the new Lanczos vector (unnormalized, norm nx), v: the one before it */
        for (mbdcp_int j = 0; j < np_; ++j) x[j] /= nx;
        b[k] = k > 0 ? nx : 0.0;
        mbdcp_ccp_apply_SNS(p, blocked, S, x, u, y);
        a[k] = mbdcp_ccp_dot(np_, x, y);
        for (mbdcp_int j = 0; j < np_; ++j) {
            const mbdcp_float next = y[j] - a[k] * x[j] - b[k] * v[j];
            v[j] = x[j];
            x[j] = next;
        }
        ++k;
        nx = sqrt(mbdcp_ccp_dot(np_, x, x));
        if (!(nx > 1e-12 * fabs(a[k - 1]))) break; /* an invariant subspace: T's values are exact */
    }
    if (k == 0 || !isfinite(a[0])) return 1.0;
    mbdcp_float lo = 0.0, hi = 0.0;
    for (int i = 0; i < k; ++i) { /* Gershgorin bounds the largest from above */
        lo = fmax(lo, a[i]);
        hi = fmax(hi, a[i] + (i > 0 ? b[i] : 0.0) + (i + 1 < k ? b[i + 1] : 0.0));
    }
    for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; ++it) {
        const mbdcp_float mid = 0.5 * (lo + hi);
        if (below(k, a, b, mid) == k) hi = mid; else lo = mid;
    }
    return hi > 0.0 ? 1.05 * hi : 1.0; /* a little above: the estimate approaches from below */
}

/* max_a |nu_a - Pi(nu - g / L)_a| over one block of w entries (w = 3: a contact with friction
 * coefficient mu; w = 1: a joint, no projection), given inv_L = 1 / L (a product, not a division,
 * in the hot loop); NAN if not finite. */
mbdcp_float mbdcp_ccp_block_residual(mbdcp_int w, mbdcp_float mu, const mbdcp_float *nu, const mbdcp_float *g,
                                     mbdcp_float inv_L)
{
    mbdcp_float sc[3], r = 0.0;
    for (mbdcp_int a = 0; a < w; ++a) sc[a] = nu[a] - g[a] * inv_L;
    if (w == 3) mbdcp_cone_project_inline(mu, sc);
    for (mbdcp_int a = 0; a < w; ++a) {
        const mbdcp_float d = fabs(nu[a] - sc[a]);
        if (!isfinite(d)) return NAN;
        if (d > r) r = d; /* not fmax: a library call in the hot loop, and NAN is out already */
    }
    return r;
}

/* Normwise relative natural-map residual of nu with gradient g = N nu + p; NAN if anything is
 * not finite, so that a diverged iterate never looks converged. */
mbdcp_float mbdcp_ccp_residual(const MbdcpCcpProblem *p, const mbdcp_float *nu, const mbdcp_float *g,
                               mbdcp_float L, mbdcp_float pnorm)
{
    const mbdcp_int nc = p->n_c, np_ = ccp_n_p(p);
    const mbdcp_float inv_L = 1.0 / L;
    mbdcp_float r = 0.0;
    for (mbdcp_int i = 0; i < nc; ++i) {
        const mbdcp_float d = mbdcp_ccp_block_residual(3, p->mu[i], nu + 3 * i, g + 3 * i, inv_L);
        if (isnan(d)) return NAN;
        r = fmax(r, d);
    }
    for (mbdcp_int j = 3 * nc; j < np_; ++j) {
        const mbdcp_float d = mbdcp_ccp_block_residual(1, 0.0, nu + j, g + j, inv_L);
        if (isnan(d)) return NAN;
        r = fmax(r, d);
    }
    return r * L / pnorm;
}

/* The magnitudes of the terms that make up each entry of the gradient, s_j = |p_j| +
 * (|P|^T |Q| |nu|)_j (au: n_v scratch); returns the rounding floor 4 n_p eps max_j s_j. */
mbdcp_float mbdcp_ccp_magnitudes(const MbdcpCcpProblem *p, const mbdcp_float *nu, mbdcp_float *au, mbdcp_float *s)
{
    const mbdcp_int np_ = ccp_n_p(p);
    memset(au, 0, (size_t)p->n_v * sizeof(mbdcp_float));
    for (mbdcp_int j = 0; j < np_; ++j) {
        const mbdcp_float a = fabs(nu[j]);
        if (a == 0.0) continue;
        for (mbdcp_int k = p->Q_colptr[j]; k < p->Q_colptr[j + 1]; ++k) au[p->Q_rowind[k]] += fabs(p->Q_val[k]) * a;
    }
    mbdcp_float smax = 0.0;
    for (mbdcp_int j = 0; j < np_; ++j) {
        mbdcp_float t = fabs(p->p[j]);
        for (mbdcp_int k = p->P_colptr[j]; k < p->P_colptr[j + 1]; ++k) t += fabs(p->P_val[k]) * au[p->P_rowind[k]];
        s[j] = t;
        smax = fmax(smax, t);
    }
    return 4.0 * np_ * DBL_EPSILON * smax;
}

/* Block b's (a contact's, or a joint entry's) natural-map residual over its magnitudes s (floor
 * added); NAN if not finite. */
mbdcp_float mbdcp_ccp_block_ratio(const MbdcpCcpProblem *p, mbdcp_int b, const mbdcp_float *nu, const mbdcp_float *g,
                                  mbdcp_float L, const mbdcp_float *s, mbdcp_float floor_)
{
    const mbdcp_int nc = p->n_c, j0 = b < nc ? 3 * b : 3 * nc + (b - nc), w = b < nc ? 3 : 1;
    const mbdcp_float num = mbdcp_ccp_block_residual(w, b < nc ? p->mu[b] : 0.0, nu + j0, g + j0, 1.0 / L) * L;
    mbdcp_float den = 0.0;
    for (mbdcp_int a = 0; a < w; ++a) den = fmax(den, s[j0 + a]);
    if (!isfinite(num) || !isfinite(den)) return NAN;
    return num > 0.0 ? num / (den + floor_) : 0.0;
}

/* Componentwise relative residual: per contact (per joint entry) the natural-map residual over the
 * magnitude of the terms that make up its gradient (magnitudes), with a rounding floor. au (n_v)
 * and s (n_p): scratch. NAN if not finite. */
mbdcp_float mbdcp_ccp_componentwise(const MbdcpCcpProblem *p, const mbdcp_float *nu, const mbdcp_float *g,
                                    mbdcp_float L, mbdcp_float *au, mbdcp_float *s)
{
    const mbdcp_float floor_ = mbdcp_ccp_magnitudes(p, nu, au, s);
    mbdcp_float r = 0.0;
    for (mbdcp_int b = 0; b < p->n_c + p->n_b; ++b) {
        const mbdcp_float d = mbdcp_ccp_block_ratio(p, b, nu, g, L, s, floor_);
        if (isnan(d)) return NAN;
        r = fmax(r, d);
    }
    return r;
}

/* The residual an answer nu (gradient g) is judged by: the larger of the normwise and the
 * componentwise one (NAN if either is). SOLVED, the start's early exit and the polish's
 * acceptance all need it at most tol; the loops test the cheap normwise one first. */
mbdcp_float mbdcp_ccp_answer_residual_of(const MbdcpCcpProblem *p, const mbdcp_float *nu, const mbdcp_float *g,
                                         mbdcp_float L, mbdcp_float pnorm, mbdcp_float *au, mbdcp_float *s)
{
    const mbdcp_float nw = mbdcp_ccp_residual(p, nu, g, L, pnorm), cw = mbdcp_ccp_componentwise(p, nu, g, L, au, s);
    return isnan(nw) || isnan(cw) ? NAN : fmax(nw, cw);
}

void mbdcp_ccp_gradient(const MbdcpCcpProblem *p, const mbdcp_float *Nx, mbdcp_float *g)
{
    for (mbdcp_int j = 0; j < ccp_n_p(p); ++j) g[j] = Nx[j] + p->p[j];
}

/* The 3 x 3 diagonal blocks N_ii (row-major, 9 per contact), and eta per entry:
 * 3 / trace(N_ii) for a contact's three entries, 1 / N_jj for a joint. u must be zero on entry
 * (it is zero again on return). */
void mbdcp_ccp_scaling(const MbdcpCcpProblem *p, mbdcp_float *eta, mbdcp_float *Nii, mbdcp_float *u)
{
    const mbdcp_int nc = p->n_c, np_ = ccp_n_p(p);
    mbdcp_float *diag = eta;
    for (mbdcp_int j = 0; j < np_; ++j) {
        /* column j of N restricted to its own block: scatter Q_j into u, dot with P, clear. */
        for (mbdcp_int k = p->Q_colptr[j]; k < p->Q_colptr[j + 1]; ++k) u[p->Q_rowind[k]] += p->Q_val[k];
        diag[j] = mbdcp_ccp_col_dot_P(p, j, u);
        if (j < 3 * nc) {
            const mbdcp_int i = j / 3, b = j % 3;
            for (mbdcp_int a = 0; a < 3; ++a) Nii[9 * i + 3 * a + b] = mbdcp_ccp_col_dot_P(p, 3 * i + a, u);
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

/* ---- the acceptance test as the interior-point method (ccp_ipm.c) sees it ------------------- */

void mbdcp_ccp_apply_N(const CcpJudge *J, const mbdcp_float *x, mbdcp_float *u, mbdcp_float *y)
{
    mbdcp_ccp_apply_SNS(J->p, J->blocked, NULL, x, u, y);
}

mbdcp_float mbdcp_ccp_answer_residual(const CcpJudge *J, const mbdcp_float *nu, const mbdcp_float *g)
{
    return mbdcp_ccp_answer_residual_of(J->p, nu, g, J->L, J->pnorm, J->au, J->sc);
}

mbdcp_float mbdcp_ccp_normwise_residual(const CcpJudge *J, const mbdcp_float *nu, const mbdcp_float *g)
{
    return mbdcp_ccp_residual(J->p, nu, g, J->L, J->pnorm);
}
