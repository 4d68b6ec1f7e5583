/* One contact's 3 x 3 local problem on the Delassus matrix, Coulomb friction or its CCP relaxation,
 * solved exactly (take-off, stick, or slide through the roots of a trigonometric polynomial):
 * mbdcp_fc_local_solve (coulomb.h), and the (nonsmooth) Gauss-Seidel sweep made of such solves,
 * which coulomb.c's Gauss-Seidel and AUTO and the semismooth Newton method (fc_newton.c, where its
 * line search fails) share; see fc_internal.h. Apart from both, so that neither of those two files
 * calls the other back (coulomb.c -> fc_newton.c -> fc_local.c). */
#include <math.h>
#include <string.h>

#include "fc_internal.h"
#include "mbdcp/cone.h"
#include "mbdcp/coulomb.h"
#include "mbdcp/dense.h"

#define TWO_PI 6.283185307179586476925286766559
/* Intervals of the first bracketing pass over [0, 2 pi) in the slide case. */
#define GRID 24
/* Root candidates kept per local solve (a degree-2 trigonometric polynomial has at most 4). */
#define MAX_ROOTS 8
/* Bound on polynomial evaluations per local solve, against a numerically vanishing polynomial. */
#define MAX_EVALS 4000
/* A local candidate counts as exact when its residual is below this times the local scale. */
#define LOCAL_EXACT 1e-10

static void apply3(const mbdcp_float *A, const mbdcp_float *x, const mbdcp_float *b, mbdcp_float *y)
{
    for (int a = 0; a < 3; ++a) y[a] = A[3 * a] * x[0] + A[3 * a + 1] * x[1] + A[3 * a + 2] * x[2] + b[a];
}

static mbdcp_float local_residual(const mbdcp_float *A, const mbdcp_float *b, mbdcp_float mu, int coulomb,
                                  const mbdcp_float *r)
{
    mbdcp_float u[3], y[3];
    apply3(A, r, b, u);
    const mbdcp_float shift = coulomb ? mu * sqrt(u[1] * u[1] + u[2] * u[2]) : 0.0;
    y[0] = r[0] - u[0] - shift;
    y[1] = r[1] - u[1];
    y[2] = r[2] - u[2];
    mbdcp_cone_project(mu, y);
    return sqrt((r[0] - y[0]) * (r[0] - y[0]) + (r[1] - y[1]) * (r[1] - y[1]) + (r[2] - y[2]) * (r[2] - y[2]));
}

/* x = A^-1 rhs by Gaussian elimination with partial pivoting; 0 when A is (numerically) singular. */
static int solve3(const mbdcp_float *A, const mbdcp_float *rhs, mbdcp_float *x)
{
    mbdcp_float M[3][4], big = 0.0;
    for (int a = 0; a < 3; ++a) {
        for (int c = 0; c < 3; ++c) {
            M[a][c] = A[3 * a + c];
            big = fmax(big, fabs(M[a][c]));
        }
        M[a][3] = rhs[a];
    }
    if (!(big > 0.0)) return 0;
    for (int c = 0; c < 3; ++c) {
        int piv = c;
        for (int a = c + 1; a < 3; ++a)
            if (fabs(M[a][c]) > fabs(M[piv][c])) piv = a;
        if (!(fabs(M[piv][c]) > 1e-14 * big)) return 0;
        if (piv != c)
            for (int k = 0; k < 4; ++k) {
                const mbdcp_float t = M[c][k];
                M[c][k] = M[piv][k];
                M[piv][k] = t;
            }
        for (int a = c + 1; a < 3; ++a) {
            const mbdcp_float f = M[a][c] / M[c][c];
            for (int k = c; k < 4; ++k) M[a][k] -= f * M[c][k];
        }
    }
    for (int c = 2; c >= 0; --c) {
        mbdcp_float s = M[c][3];
        for (int k = c + 1; k < 3; ++k) s -= M[c][k] * x[k];
        x[c] = s / M[c][c];
    }
    return isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]);
}

static mbdcp_float det3(const mbdcp_float *x, const mbdcp_float *y, const mbdcp_float *z)
{
    return x[0] * (y[1] * z[2] - y[2] * z[1]) - x[1] * (y[0] * z[2] - y[2] * z[0]) + x[2] * (y[0] * z[1] - y[1] * z[0]);
}

/* g(t) = c0 + c1 cos t + s1 sin t + c2 cos 2t + s2 sin 2t, and g'(t) in *dg. */
typedef struct {
    mbdcp_float c0, c1, s1, c2, s2;
} Trig;

static mbdcp_float trig_eval(const Trig *g, mbdcp_float t, mbdcp_float *dg)
{
    const mbdcp_float c = cos(t), s = sin(t), c2 = c * c - s * s, s2 = 2.0 * s * c;
    if (dg) *dg = -g->c1 * s + g->s1 * c - 2.0 * g->c2 * s2 + 2.0 * g->s2 * c2;
    return g->c0 + g->c1 * c + g->s1 * s + g->c2 * c2 + g->s2 * s2;
}

/* A root of g in [a, b] where g(a) g(b) < 0: Newton steps kept inside a shrinking bracket. */
static mbdcp_float trig_root(const Trig *g, mbdcp_float a, mbdcp_float ga, mbdcp_float b)
{
    mbdcp_float t = 0.5 * (a + b);
    for (int it = 0; it < 100; ++it) {
        mbdcp_float d;
        const mbdcp_float v = trig_eval(g, t, &d);
        if (v == 0.0) return t;
        if ((v < 0.0) == (ga < 0.0)) {
            a = t;
            ga = v;
        } else {
            b = t;
        }
        mbdcp_float tn = d != 0.0 ? t - v / d : 0.5 * (a + b);
        if (!(tn > a && tn < b)) tn = 0.5 * (a + b);
        const mbdcp_float eps = 4e-16 * (1.0 + fabs(t));
        if (fabs(tn - t) <= eps || b - a <= eps) return tn;
        t = tn;
    }
    return t;
}

static int add_root(mbdcp_float *roots, int n, mbdcp_float t)
{
    for (int k = 0; k < n; ++k)
        if (fabs(roots[k] - t) < 1e-9 || fabs(fabs(roots[k] - t) - TWO_PI) < 1e-9) return n;
    if (n < MAX_ROOTS) roots[n++] = t;
    return n;
}

/* All roots of g in [0, 2 pi): sign changes on a grid, and every interval where the bound on
 * |g'| leaves room for a hidden pair of roots is halved until it is excluded or, below 1e-10
 * wide, taken as a (double) root candidate. */
static int trig_roots(const Trig *g, mbdcp_float *roots)
{
    const mbdcp_float lip = sqrt(g->c1 * g->c1 + g->s1 * g->s1) + 2.0 * sqrt(g->c2 * g->c2 + g->s2 * g->s2);
    int n = 0, evals = 0;
    struct {
        mbdcp_float a, ga, b, gb;
    } stack[64];
    /* the grid's cosines and sines by rotation: no trigonometric calls */
    const mbdcp_float ch = cos(TWO_PI / GRID), sh = sin(TWO_PI / GRID);
    mbdcp_float c = 1.0, s = 0.0;
    mbdcp_float a0 = 0.0, g0 = g->c0 + g->c1 + g->c2;
    for (int k = 1; k <= GRID; ++k) {
        const mbdcp_float cn = c * ch - s * sh, sn = s * ch + c * sh;
        c = cn;
        s = sn;
        const mbdcp_float b0 = TWO_PI * k / GRID;
        const mbdcp_float gb0 = g->c0 + g->c1 * c + g->s1 * s + g->c2 * (c * c - s * s) + g->s2 * (2.0 * s * c);
        int top = 0;
        stack[top].a = a0;
        stack[top].ga = g0;
        stack[top].b = b0;
        stack[top].gb = gb0;
        ++top;
        while (top > 0) {
            --top;
            const mbdcp_float a = stack[top].a, ga = stack[top].ga, b = stack[top].b, gb = stack[top].gb;
            if (ga == 0.0) {
                n = add_root(roots, n, a);
                continue;
            }
            if ((ga < 0.0) != (gb < 0.0)) {
                if (gb != 0.0) n = add_root(roots, n, trig_root(g, a, ga, b));
                continue;
            }
            if (fabs(ga) + fabs(gb) > lip * (b - a) * (1.0 + 1e-12)) continue; /* no root fits */
            if (b - a < 1e-10 || evals > MAX_EVALS || top > 60) {
                n = add_root(roots, n, fabs(ga) < fabs(gb) ? a : b);
                continue;
            }
            const mbdcp_float mid = 0.5 * (a + b), gm = trig_eval(g, mid, NULL);
            ++evals;
            stack[top].a = mid;
            stack[top].ga = gm;
            stack[top].b = b;
            stack[top].gb = gb;
            stack[top + 1].a = a;
            stack[top + 1].ga = ga;
            stack[top + 1].b = mid;
            stack[top + 1].gb = gm;
            top += 2;
        }
        a0 = b0;
        g0 = gb0;
    }
    return n;
}

/* The case an exact local solution r is in. */
static MbdcpFcCase classify(const mbdcp_float *A, const mbdcp_float *b, const mbdcp_float *r, mbdcp_float scale)
{
    if (r[0] == 0.0 && r[1] == 0.0 && r[2] == 0.0) return MBDCP_FC_TAKEOFF;
    mbdcp_float u[3];
    apply3(A, r, b, u);
    return sqrt(u[1] * u[1] + u[2] * u[2]) <= 1e-12 * scale ? MBDCP_FC_STICK : MBDCP_FC_SLIDE;
}

/* The slide case's r_n w(t) - sigma v(t) = -b, w and v affine in (cos t, sin t). */
typedef struct {
    mbdcp_float w[3][3], v[3][3], mu;
} Slide;

/* The candidate r_n (1, mu cos t, mu sin t) of direction t, by least squares on
 * [w, -v] (r_n, sigma) = -b (consistent where g(t) = 0); projected on K when r_n or sigma has
 * the wrong sign (then it is not this case, but may be a near miss of another). */
static void slide_candidate(const Slide *sl, const mbdcp_float *b, mbdcp_float t, mbdcp_float *x)
{
    const mbdcp_float c = cos(t), s = sin(t);
    mbdcp_float wt[3], vt[3];
    for (int a = 0; a < 3; ++a) {
        wt[a] = sl->w[0][a] + c * sl->w[1][a] + s * sl->w[2][a];
        vt[a] = sl->v[0][a] + c * sl->v[1][a] + s * sl->v[2][a];
    }
    const mbdcp_float ww = wt[0] * wt[0] + wt[1] * wt[1] + wt[2] * wt[2];
    const mbdcp_float vv = vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2];
    const mbdcp_float wv = wt[0] * vt[0] + wt[1] * vt[1] + wt[2] * vt[2];
    const mbdcp_float wb = wt[0] * b[0] + wt[1] * b[1] + wt[2] * b[2];
    const mbdcp_float vb = vt[0] * b[0] + vt[1] * b[1] + vt[2] * b[2];
    const mbdcp_float det = ww * vv - wv * wv;
    x[0] = x[1] = x[2] = 0.0;
    if (!(det > 1e-14 * ww * vv)) return;
    const mbdcp_float rn = (-vv * wb + wv * vb) / det, sigma = (-wv * wb + ww * vb) / det;
    x[0] = rn;
    x[1] = sl->mu * rn * c;
    x[2] = sl->mu * rn * s;
    if (!(rn > 0.0 && sigma >= 0.0)) mbdcp_cone_project(sl->mu, x);
}

typedef struct {
    mbdcp_float exact[3], exact_dist; /* the exact candidate closest to the previous r */
    MbdcpFcCase exact_case;
    mbdcp_float loose[3], loose_res;  /* the inexact one with the smallest residual */
} Pick;

static void consider(Pick *pk, const mbdcp_float *A, const mbdcp_float *b, mbdcp_float mu, int coulomb,
                     mbdcp_float anorm, const mbdcp_float *prev, const mbdcp_float *cand)
{
    const mbdcp_float res = local_residual(A, b, mu, coulomb, cand);
    const mbdcp_float scale = fc_norm2(3, b) + anorm * fc_norm2(3, cand);
    if (res <= LOCAL_EXACT * scale) {
        mbdcp_float d = 0.0;
        for (int a = 0; a < 3; ++a) d += (cand[a] - prev[a]) * (cand[a] - prev[a]);
        if (d < pk->exact_dist) {
            pk->exact_dist = d;
            memcpy(pk->exact, cand, sizeof pk->exact);
            pk->exact_case = classify(A, b, cand, scale);
        }
    } else if (res < pk->loose_res) {
        pk->loose_res = res;
        memcpy(pk->loose, cand, sizeof pk->loose);
    }
}

/* The slide case of mbdcp_fc_local_solve: every candidate found is considered in pk. seeds (n_seeds <= 1):
 * a direction to try first when prev is not sliding. */
static void slide_cases(const mbdcp_float *A, const mbdcp_float *b, mbdcp_float mu, int coulomb, mbdcp_float anorm,
                        const mbdcp_float *prev, const mbdcp_float *seeds, int n_seeds, Pick *pk)
{
    /* slide: r = r_n (1, mu cos t, mu sin t), u = sigma (mu (1 - coulomb), -cos t, -sin t) with
     * r_n > 0, sigma >= 0. u = A r + b is then r_n w(t) - sigma v(t) = -b, solvable iff
     * g(t) = det[w(t), v(t), b] = 0; w and v are affine in (cos t, sin t), so g is a
     * trigonometric polynomial of degree 2 whose coefficients follow from
     * T_ab = det[w_a, v_b, b] with w = w_0 + cos t w_1 + sin t w_2, v likewise. */
    Slide sl;
    for (int a = 0; a < 3; ++a) {
        sl.w[0][a] = A[3 * a];
        sl.w[1][a] = mu * A[3 * a + 1];
        sl.w[2][a] = mu * A[3 * a + 2];
        sl.v[0][a] = sl.v[1][a] = sl.v[2][a] = 0.0;
    }
    sl.v[0][0] = coulomb ? 0.0 : mu;
    sl.v[1][1] = sl.v[2][2] = -1.0;
    sl.mu = mu;
    mbdcp_float T[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) T[i][j] = det3(sl.w[i], sl.v[j], b);
    const Trig g = {T[0][0] + 0.5 * (T[1][1] + T[2][2]), T[0][1] + T[1][0], T[0][2] + T[2][0], 0.5 * (T[1][1] - T[2][2]),
                    0.5 * (T[1][2] + T[2][1])};
    const mbdcp_float gscale = fabs(g.c0) + fabs(g.c1) + fabs(g.s1) + fabs(g.c2) + fabs(g.s2);
    mbdcp_float x[3];
    /* a Gauss-Seidel sweep changes b little: Newton from the previous sliding direction usually
     * lands on the root of this one; without one, from the direction of the stick candidate's
     * tangential reaction (the one the cone cut) or against b_T, before all roots are enumerated */
    const mbdcp_float pt = sqrt(prev[1] * prev[1] + prev[2] * prev[2]);
    mbdcp_float seed[3];
    int ns = 0;
    if (prev[0] > 0.0 && fabs(pt - mu * prev[0]) <= 1e-6 * mu * prev[0]) {
        seed[ns++] = atan2(prev[2], prev[1]);
    } else {
        for (int k = 0; k < n_seeds; ++k) seed[ns++] = seeds[k];
        if (b[1] != 0.0 || b[2] != 0.0) seed[ns++] = atan2(-b[2], -b[1]);
    }
    for (int k = 0; gscale > 0.0 && k < ns && pk->exact_case == MBDCP_FC_BEST_EFFORT; ++k) {
        mbdcp_float t = seed[k];
        for (int it = 0; it < 12; ++it) {
            mbdcp_float d;
            const mbdcp_float v = trig_eval(&g, t, &d);
            if (!(d != 0.0)) break;
            const mbdcp_float step = v / d;
            t -= step;
            if (fabs(step) <= 1e-15) break;
        }
        slide_candidate(&sl, b, t, x);
        consider(pk, A, b, mu, coulomb, anorm, prev, x);
    }
    if (pk->exact_case == MBDCP_FC_BEST_EFFORT) {
        mbdcp_float roots[MAX_ROOTS];
        const int nr = gscale > 0.0 ? trig_roots(&g, roots) : 0;
        for (int k = 0; k < nr; ++k) {
            slide_candidate(&sl, b, roots[k], x);
            consider(pk, A, b, mu, coulomb, anorm, prev, x);
        }
    }
}

MbdcpReturn mbdcp_fc_local_solve(const mbdcp_float *A, const mbdcp_float *b, mbdcp_float mu, int coulomb,
                                 mbdcp_float *r, MbdcpFcCase *which)
{
    if (!A || !b || !r) return MBDCP_ERR_NULL;
    if (!(mu >= 0.0) || !isfinite(mu)) return MBDCP_ERR_DATA;
    if (!mbdcp_all_finite(9, A) || !mbdcp_all_finite(3, b)) return MBDCP_ERR_NONFINITE;
    const mbdcp_float prev[3] = {isfinite(r[0]) ? r[0] : 0.0, isfinite(r[1]) ? r[1] : 0.0, isfinite(r[2]) ? r[2] : 0.0};
    MbdcpFcCase dummy;
    if (!which) which = &dummy;
    const mbdcp_float bt = sqrt(b[1] * b[1] + b[2] * b[2]);

    /* take-off: r = 0 is a solution iff û = b (+ mu ||b_T|| e_n) lies in K* */
    if (coulomb ? b[0] >= 0.0 : b[0] >= mu * bt) {
        r[0] = r[1] = r[2] = 0.0;
        *which = MBDCP_FC_TAKEOFF;
        return MBDCP_OK;
    }
    if (mu == 0.0) { /* frictionless: the normal row alone */
        r[1] = r[2] = 0.0;
        r[0] = A[0] > 0.0 ? -b[0] / A[0] : 0.0;
        if (A[0] > 0.0) {
            const mbdcp_float ut1 = A[3] * r[0] + b[1], ut2 = A[6] * r[0] + b[2];
            *which = ut1 == 0.0 && ut2 == 0.0 ? MBDCP_FC_STICK : MBDCP_FC_SLIDE;
        } else {
            r[0] = 0.0;
            *which = MBDCP_FC_BEST_EFFORT;
        }
        return MBDCP_OK;
    }

    mbdcp_float anorm = 0.0;
    for (int k = 0; k < 9; ++k) anorm += A[k] * A[k];
    anorm = sqrt(anorm);
    /* Every candidate, projected on K, is kept when its local residual vanishes (the exact one
     * closest to prev wins); otherwise the one with the smallest residual is remembered. */
    Pick pk = {{0.0, 0.0, 0.0}, INFINITY, MBDCP_FC_BEST_EFFORT, {0.0, 0.0, 0.0}, 0.0};
    pk.loose_res = local_residual(A, b, mu, coulomb, pk.loose);


    /* stick: u = 0 */
    mbdcp_float seeds[1] = {0.0};
    int n_seeds = 0;
    {
        const mbdcp_float rhs[3] = {-b[0], -b[1], -b[2]};
        mbdcp_float x[3];
        if (solve3(A, rhs, x)) {
            if (x[1] != 0.0 || x[2] != 0.0) seeds[n_seeds++] = atan2(x[2], x[1]);
            mbdcp_cone_project(mu, x);
            consider(&pk, A, b, mu, coulomb, anorm, prev, x);
            if (pk.exact_case != MBDCP_FC_BEST_EFFORT) {
                memcpy(r, pk.exact, sizeof pk.exact);
                *which = pk.exact_case;
                return MBDCP_OK;
            }
        }
    }

    slide_cases(A, b, mu, coulomb, anorm, prev, seeds, n_seeds, &pk);
    if (pk.exact_case != MBDCP_FC_BEST_EFFORT) {
        memcpy(r, pk.exact, sizeof pk.exact);
        *which = pk.exact_case;
    } else {
        memcpy(r, pk.loose, sizeof pk.loose);
        *which = MBDCP_FC_BEST_EFFORT;
    }
    return MBDCP_OK;
}

/* ---- the Gauss-Seidel sweep ------------------------------------------------------------------ */

mbdcp_float mbdcp_fc_sweep(const FcCsr *A, mbdcp_int n_c, const mbdcp_float *qv, const mbdcp_float *mu, int coulomb,
                           const mbdcp_float *blocks, mbdcp_float *r, mbdcp_int *failures)
{
    /* the cost of a local solve by its case, in flop-equivalents (a slide solves for the root of a
     * trigonometric polynomial; a failed one enumerates them all) */
    static const mbdcp_float case_cost[4] = {30.0, 150.0, 300.0, 1000.0};
    mbdcp_float cost = 2.0 * A->ptr[3 * n_c];
    for (mbdcp_int i = 0; i < n_c; ++i) {
        const mbdcp_float *B = blocks + 9 * (size_t)i;
        mbdcp_float *ri = r + 3 * i, b[3];
        for (int a = 0; a < 3; ++a)
            b[a] = qv[3 * i + a] + fc_row_dot(A, 3 * i + a, r) - (B[3 * a] * ri[0] + B[3 * a + 1] * ri[1] + B[3 * a + 2] * ri[2]);
        MbdcpFcCase which;
        mbdcp_fc_local_solve(B, b, mu[i], coulomb, ri, &which);
        if (which == MBDCP_FC_BEST_EFFORT) ++*failures;
        cost += case_cost[which];
    }
    return cost;
}
