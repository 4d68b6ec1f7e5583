/* Coulomb friction and its CCP relaxation on the Delassus matrix: exact local solves, (nonsmooth)
 * Gauss-Seidel, APGD through ccp.h, and the fixed point on s = mu ||u_T||; see coulomb.h. */
#include <math.h>
#include <string.h>

#include "mbdcp/ccp.h"
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
/* The fixed point's smallest damping factor (see fixed_point()). */
#define OMEGA_MIN 0.125
/* A local candidate counts as exact when its residual is below this times the local scale. */
#define LOCAL_EXACT 1e-10

typedef struct {
    const mbdcp_int *ptr, *ind;
    const mbdcp_float *val;
} Csr;

MbdcpReturn mbdcp_fc_default_settings(MbdcpFcSettings *s)
{
    if (!s) return MBDCP_ERR_NULL;
    s->method = MBDCP_FC_NSGS;
    s->inner = MBDCP_FC_PGS;
    s->tol = 1e-8;
    s->max_iter = 10000;
    s->inner_max_iter = 10000;
    s->warm_start = 0;
    s->monitor.fn = NULL;
    s->monitor.ctx = NULL;
    return MBDCP_OK;
}

MbdcpReturn mbdcp_fc_check_settings(const MbdcpFcSettings *s, int coulomb, const char **message)
{
    const char *msg = NULL;
    if (!s) return MBDCP_ERR_NULL;
    if (coulomb && s->method != MBDCP_FC_NSGS && s->method != MBDCP_FC_FIXED_POINT)
        msg = "method must be nsgs or fixed_point";
    else if (!coulomb && s->method != MBDCP_FC_PGS && s->method != MBDCP_FC_APGD)
        msg = "method must be pgs or apgd";
    else if (s->inner != MBDCP_FC_PGS && s->inner != MBDCP_FC_APGD)
        msg = "inner must be pgs or apgd";
    else if (!(s->tol > 0.0) || !isfinite(s->tol))
        msg = "tol must be positive and finite";
    else if (s->max_iter < 1)
        msg = "max_iter must be at least 1";
    else if (s->inner_max_iter < 1)
        msg = "inner_max_iter must be at least 1";
    if (message) *message = msg;
    return msg ? MBDCP_ERR_SETTING : MBDCP_OK;
}

/* The problem ccp.h solves for APGD: P = I (n_v = m), Q = S; S symmetric, so its CSR arrays
 * read as CSC describe S itself. */
static MbdcpCcpProblem ccp_problem(mbdcp_int n_c, const Csr *S, const mbdcp_float *mu, const mbdcp_float *qv,
                                   const mbdcp_int *Iptr, const mbdcp_int *Iind, const mbdcp_float *Ival)
{
    MbdcpCcpProblem cp;
    cp.n_v = 3 * n_c;
    cp.n_c = n_c;
    cp.n_b = 0;
    cp.P_colptr = Iptr;
    cp.P_rowind = Iind;
    cp.P_val = Ival;
    cp.Q_colptr = S->ptr;
    cp.Q_rowind = S->ind;
    cp.Q_val = S->val;
    cp.mu = mu;
    cp.p = qv;
    return cp;
}

static size_t ccp_bytes(mbdcp_int n_c)
{
    MbdcpCcpProblem cp = ccp_problem(n_c, &(Csr){NULL, NULL, NULL}, NULL, NULL, NULL, NULL, NULL);
    return mbdcp_ccp_workspace_size(&cp);
}

/* Doubles: 9 n_c (diagonal blocks), qk, tmp, prev, ccp's u, the identity's values (m each), ccp's
 * workspace; then ints: the identity's colptr (m + 1) and rowind (m). */
size_t mbdcp_fc_workspace_size(const MbdcpFcProblem *p, const MbdcpFcSettings *s)
{
    if (!p || p->n_c < 0) return 0;
    const size_t nc = (size_t)p->n_c, m = 3 * nc;
    const int apgd = !s || s->method == MBDCP_FC_APGD || (s->method == MBDCP_FC_FIXED_POINT && s->inner == MBDCP_FC_APGD);
    size_t bytes = (9 * nc + 3 * m) * sizeof(mbdcp_float);
    if (apgd) bytes += 2 * m * sizeof(mbdcp_float) + ccp_bytes(p->n_c) + (2 * m + 1) * sizeof(mbdcp_int);
    return bytes;
}

/* ---- kernels -------------------------------------------------------------------------------- */

static mbdcp_float row_dot(const Csr *A, mbdcp_int row, const mbdcp_float *x)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int k = A->ptr[row]; k < A->ptr[row + 1]; ++k) s += A->val[k] * x[A->ind[k]];
    return s;
}

/* y = A x + c (c may be NULL). */
static void matvec(const Csr *A, mbdcp_int m, const mbdcp_float *x, const mbdcp_float *c, mbdcp_float *y)
{
    for (mbdcp_int i = 0; i < m; ++i) y[i] = row_dot(A, i, x) + (c ? c[i] : 0.0);
}

static mbdcp_float norm2(mbdcp_int n, const mbdcp_float *x)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < n; ++i) s += x[i] * x[i];
    return sqrt(s);
}

/* The 3 x 3 diagonal blocks of A (row-major, 9 per contact; absent entries are zero). */
static void diagonal_blocks(const Csr *A, mbdcp_int n_c, mbdcp_float *blocks)
{
    memset(blocks, 0, 9 * (size_t)n_c * sizeof(mbdcp_float));
    for (mbdcp_int row = 0; row < 3 * n_c; ++row) {
        const mbdcp_int i = row / 3, a = row % 3;
        for (mbdcp_int k = A->ptr[row]; k < A->ptr[row + 1]; ++k) {
            const mbdcp_int col = A->ind[k];
            if (col / 3 == i) blocks[9 * i + 3 * a + col % 3] += A->val[k];
        }
    }
}

/* ||r - Pi_K(r - û)||_2 over all contacts, for u = W r + q given. */
static mbdcp_float residual_norm(mbdcp_int n_c, const mbdcp_float *mu, int coulomb, const mbdcp_float *r,
                                 const mbdcp_float *u)
{
    mbdcp_float s = 0.0;
    for (mbdcp_int i = 0; i < n_c; ++i) {
        const mbdcp_float *ri = r + 3 * i, *ui = u + 3 * i;
        const mbdcp_float shift = coulomb ? mu[i] * sqrt(ui[1] * ui[1] + ui[2] * ui[2]) : 0.0;
        mbdcp_float y[3] = {ri[0] - ui[0] - shift, ri[1] - ui[1], ri[2] - ui[2]};
        mbdcp_cone_project(mu[i], y);
        for (int a = 0; a < 3; ++a) s += (ri[a] - y[a]) * (ri[a] - y[a]);
    }
    return sqrt(s);
}

/* u = A r + qv and the residual relative to qnorm. */
static mbdcp_float residual_of(const Csr *A, mbdcp_int n_c, const mbdcp_float *qv, const mbdcp_float *mu, int coulomb,
                               const mbdcp_float *r, mbdcp_float *u, mbdcp_float qnorm)
{
    matvec(A, 3 * n_c, r, qv, u);
    return residual_norm(n_c, mu, coulomb, r, u) / qnorm;
}

/* ---- the local problem ---------------------------------------------------------------------- */

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
    const mbdcp_float scale = norm2(3, b) + anorm * norm2(3, cand);
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
    {
        const mbdcp_float rhs[3] = {-b[0], -b[1], -b[2]};
        mbdcp_float x[3];
        if (solve3(A, rhs, x)) {
            mbdcp_cone_project(mu, x);
            consider(&pk, A, b, mu, coulomb, anorm, prev, x);
            if (pk.exact_case != MBDCP_FC_BEST_EFFORT) {
                memcpy(r, pk.exact, sizeof pk.exact);
                *which = pk.exact_case;
                return MBDCP_OK;
            }
        }
    }

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
     * lands on the root of this one */
    const mbdcp_float pt = sqrt(prev[1] * prev[1] + prev[2] * prev[2]);
    if (gscale > 0.0 && prev[0] > 0.0 && fabs(pt - mu * prev[0]) <= 1e-6 * mu * prev[0]) {
        mbdcp_float t = atan2(prev[2], prev[1]);
        for (int it = 0; it < 12; ++it) {
            mbdcp_float d;
            const mbdcp_float v = trig_eval(&g, t, &d);
            if (!(d != 0.0)) break;
            const mbdcp_float step = v / d;
            t -= step;
            if (fabs(step) <= 1e-15) break;
        }
        slide_candidate(&sl, b, t, x);
        consider(&pk, A, b, mu, coulomb, anorm, prev, x);
    }
    if (pk.exact_case == MBDCP_FC_BEST_EFFORT) {
        mbdcp_float roots[MAX_ROOTS];
        const int nr = gscale > 0.0 ? trig_roots(&g, roots) : 0;
        for (int k = 0; k < nr; ++k) {
            slide_candidate(&sl, b, roots[k], x);
            consider(&pk, A, b, mu, coulomb, anorm, prev, x);
        }
    }
    if (pk.exact_case != MBDCP_FC_BEST_EFFORT) {
        memcpy(r, pk.exact, sizeof pk.exact);
        *which = pk.exact_case;
    } else {
        memcpy(r, pk.loose, sizeof pk.loose);
        *which = MBDCP_FC_BEST_EFFORT;
    }
    return MBDCP_OK;
}

/* ---- solvers -------------------------------------------------------------------------------- */

typedef struct {
    MbdcpStatus status;
    mbdcp_int iterations;
    mbdcp_float residual;
} Run;

/* (Nonsmooth) Gauss-Seidel on u = A r + qv, contact by contact with exact local solves; u is kept
 * as the residual's scratch. `code`: the monitor's second argument (-1 outer, -2 inner). */
static Run gauss_seidel(const Csr *A, mbdcp_int n_c, const mbdcp_float *qv, const mbdcp_float *mu, int coulomb,
                        const mbdcp_float *blocks, mbdcp_float tol, mbdcp_int max_iter, mbdcp_float qnorm,
                        const MbdcpMonitor *mon, mbdcp_int code, mbdcp_float *r, mbdcp_float *u, mbdcp_int *failures)
{
    Run run = {MBDCP_MAX_ITERATIONS, 0, residual_of(A, n_c, qv, mu, coulomb, r, u, qnorm)};
    while (run.residual > tol && run.iterations < max_iter) {
        for (mbdcp_int i = 0; i < n_c; ++i) {
            const mbdcp_float *B = blocks + 9 * (size_t)i;
            mbdcp_float *ri = r + 3 * i, b[3];
            for (int a = 0; a < 3; ++a)
                b[a] = qv[3 * i + a] + row_dot(A, 3 * i + a, r) - (B[3 * a] * ri[0] + B[3 * a + 1] * ri[1] + B[3 * a + 2] * ri[2]);
            MbdcpFcCase which;
            mbdcp_fc_local_solve(B, b, mu[i], coulomb, ri, &which);
            if (which == MBDCP_FC_BEST_EFFORT) ++*failures;
        }
        ++run.iterations;
        run.residual = residual_of(A, n_c, qv, mu, coulomb, r, u, qnorm);
        if (!isfinite(run.residual)) {
            run.status = MBDCP_NUMERICAL_ERROR;
            return run;
        }
        if (mbdcp_monitor_call(mon, run.iterations, code, -1, run.residual)) {
            run.status = MBDCP_INTERRUPTED;
            return run;
        }
    }
    if (run.residual <= tol) run.status = MBDCP_SOLVED;
    return run;
}

typedef struct {
    const MbdcpMonitor *outer;
    mbdcp_int code, offset;
} Forward;

/* ccp.h's per-iteration call, passed on to the caller's monitor with our code and count. */
static int forward(void *ctx, mbdcp_int it, mbdcp_int entering, mbdcp_int leaving, double value)
{
    const Forward *f = (const Forward *)ctx;
    (void)entering;
    (void)leaving;
    return mbdcp_monitor_call(f->outer, f->offset + it, f->code, -1, value);
}

typedef struct {
    mbdcp_float *blocks, *qk, *tmp, *prev, *ccp_u, *ident_val;
    void *ccp_work;
    size_t ccp_work_bytes;
    mbdcp_int *ident_ptr, *ident_ind;
} Work;

/* APGD (ccp.h) on u = S r + qv for a symmetric S. ccp.h stops on its own residual measure; while
 * ours is still above tol the solve is repeated, warm-started, with its tolerance tightened. */
static Run apgd(const Csr *S, mbdcp_int n_c, const mbdcp_float *qv, const mbdcp_float *mu, mbdcp_float tol,
                mbdcp_int max_iter, mbdcp_float qnorm, const MbdcpMonitor *mon, mbdcp_int code, mbdcp_float *r,
                mbdcp_float *u, const Work *w, MbdcpReturn *rc)
{
    Run run = {MBDCP_MAX_ITERATIONS, 0, residual_of(S, n_c, qv, mu, 0, r, u, qnorm)};
    *rc = MBDCP_OK;
    const MbdcpCcpProblem cp = ccp_problem(n_c, S, mu, qv, w->ident_ptr, w->ident_ind, w->ident_val);
    MbdcpCcpSettings cs;
    mbdcp_ccp_default_settings(&cs);
    cs.method = MBDCP_CCP_APGD;
    cs.tol = tol;
    cs.warm_start = 1;
    /* the fixed point on the de Saxce shift converges with the scalar scaling on every FCLib problem
     * (measured: Capsules, asymmetric W, in 56 outer iterations; with the per-axis one not in 200) */
    cs.scaling = MBDCP_CCP_SCALE_CONTACT;
    Forward fw = {mon, code, 0};
    cs.monitor.fn = forward;
    cs.monitor.ctx = &fw;
    while (run.residual > tol && run.iterations < max_iter) {
        MbdcpCcpInfo ci;
        cs.max_iter = max_iter - run.iterations;
        fw.offset = run.iterations;
        *rc = mbdcp_ccp_solve(&cp, &cs, r, w->ccp_u, &ci, w->ccp_work, w->ccp_work_bytes);
        if (*rc != MBDCP_OK) return run;
        run.iterations += ci.iterations;
        run.residual = residual_of(S, n_c, qv, mu, 0, r, u, qnorm);
        if (ci.status == MBDCP_INTERRUPTED || ci.status == MBDCP_NUMERICAL_ERROR) {
            run.status = ci.status;
            return run;
        }
        if (ci.status != MBDCP_SOLVED || run.residual <= tol) break;
        /* solved by its measure, not by ours */
        cs.tol *= fmax(1e-3, 0.5 * tol / run.residual);
        if (!(cs.tol > 1e-300) || ci.iterations == 0) break;
    }
    if (run.residual <= tol) run.status = MBDCP_SOLVED;
    return run;
}

/* r_{k+1} solves the CCP with matrix I (W for PGS, S for APGD) and q_k = q + (W - I) r_k +
 * kappa mu ||u_T(r_k)|| e_n (kappa = coulomb), warm-started from r_k; stops on the residual of
 * the problem with W (Coulomb when coulomb = 1, the CCP otherwise). */
static Run fixed_point(const Csr *W, const Csr *I, mbdcp_int n_c, const mbdcp_float *q, const mbdcp_float *mu,
                       int coulomb, MbdcpFcMethod inner, const MbdcpFcSettings *s, mbdcp_float qnorm, mbdcp_float *r,
                       mbdcp_float *u, const Work *w, MbdcpFcInfo *info, MbdcpReturn *rc)
{
    const mbdcp_int m = 3 * n_c;
    Run run = {MBDCP_MAX_ITERATIONS, 0, residual_of(W, n_c, q, mu, coulomb, r, u, qnorm)};
    *rc = MBDCP_OK;
    mbdcp_float omega = 1.0;
    while (run.residual > s->tol && run.iterations < s->max_iter) {
        const mbdcp_float before = run.residual;
        if (omega < 1.0) memcpy(w->prev, r, (size_t)m * sizeof(mbdcp_float));
        if (I->val != W->val) {
            matvec(I, m, r, NULL, w->tmp);
            for (mbdcp_int j = 0; j < m; ++j) w->qk[j] = u[j] - w->tmp[j];
        } else {
            memcpy(w->qk, q, (size_t)m * sizeof(mbdcp_float));
        }
        if (coulomb)
            for (mbdcp_int i = 0; i < n_c; ++i) w->qk[3 * i] += mu[i] * sqrt(u[3 * i + 1] * u[3 * i + 1] + u[3 * i + 2] * u[3 * i + 2]);
        /* inexact inner solves: tighter as the outer residual falls, never below what the outer
         * tolerance needs */
        const mbdcp_float inner_tol = fmax(0.25 * s->tol, 0.05 * run.residual);
        Run in = inner == MBDCP_FC_APGD
                     ? apgd(I, n_c, w->qk, mu, inner_tol, s->inner_max_iter, qnorm, &s->monitor, -2, r, w->tmp, w, rc)
                     : gauss_seidel(I, n_c, w->qk, mu, 0, w->blocks, inner_tol, s->inner_max_iter, qnorm, &s->monitor, -2,
                                    r, w->tmp, &info->local_failures);
        if (*rc != MBDCP_OK) return run;
        info->inner_iterations += in.iterations;
        ++run.iterations;
        if (omega < 1.0) /* damped: r_k + omega (T(r_k) - r_k), in the cones as they are convex */
            for (mbdcp_int j = 0; j < m; ++j) r[j] = w->prev[j] + omega * (r[j] - w->prev[j]);
        run.residual = residual_of(W, n_c, q, mu, coulomb, r, u, qnorm);
        if (in.status == MBDCP_INTERRUPTED || in.status == MBDCP_NUMERICAL_ERROR) {
            run.status = in.status;
            return run;
        }
        if (!isfinite(run.residual)) {
            run.status = MBDCP_NUMERICAL_ERROR;
            return run;
        }
        /* a step that did not lower the residual: the map is not contracting here, and the
         * iteration can cycle (Capsules-i125-1213 settled into a cycle of three between 2.5e-6
         * and 6.1e-6): damp the steps from now on */
        if (run.residual >= before) omega = fmax(OMEGA_MIN, 0.5 * omega);
        if (mbdcp_monitor_call(&s->monitor, run.iterations, -1, -1, run.residual)) {
            run.status = MBDCP_INTERRUPTED;
            return run;
        }
    }
    if (run.residual <= s->tol) run.status = MBDCP_SOLVED;
    return run;
}

static MbdcpReturn check_csr(mbdcp_int m, const mbdcp_int *ptr, const mbdcp_int *ind, const mbdcp_float *val)
{
    if (!ptr) return MBDCP_ERR_NULL;
    if (ptr[0] != 0) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int i = 0; i < m; ++i)
        if (ptr[i + 1] < ptr[i]) return MBDCP_ERR_DIMENSION;
    const mbdcp_int nnz = ptr[m];
    if (nnz > 0 && (!ind || !val)) return MBDCP_ERR_NULL;
    for (mbdcp_int k = 0; k < nnz; ++k)
        if (ind[k] < 0 || ind[k] >= m) return MBDCP_ERR_DIMENSION;
    if (!mbdcp_all_finite((size_t)nnz, val)) return MBDCP_ERR_NONFINITE;
    return MBDCP_OK;
}

static MbdcpReturn solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, int coulomb, mbdcp_float *r,
                         mbdcp_float *u, MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    if (!p || !s || !info || !work) return MBDCP_ERR_NULL;
    MbdcpReturn rc = mbdcp_fc_check_settings(s, coulomb, NULL);
    if (rc != MBDCP_OK) return rc;
    if (p->n_c < 0) return MBDCP_ERR_DIMENSION;
    const mbdcp_int n_c = p->n_c, m = 3 * n_c;
    if (work_bytes < mbdcp_fc_workspace_size(p, s)) return MBDCP_ERR_WORKSPACE;
    info->status = MBDCP_SOLVED;
    info->iterations = info->inner_iterations = info->local_failures = 0;
    info->residual = 0.0;
    if (n_c == 0) return MBDCP_OK;
    if (!p->q || !p->mu || !r || !u) return MBDCP_ERR_NULL;
    if ((rc = check_csr(m, p->W_rowptr, p->W_colind, p->W_val)) != MBDCP_OK) return rc;
    if (p->S_rowptr && (rc = check_csr(m, p->S_rowptr, p->S_colind, p->S_val)) != MBDCP_OK) return rc;
    if (!mbdcp_all_finite((size_t)m, p->q) || !mbdcp_all_finite((size_t)n_c, p->mu)) return MBDCP_ERR_NONFINITE;
    for (mbdcp_int i = 0; i < n_c; ++i)
        if (p->mu[i] < 0.0) return MBDCP_ERR_DATA;
    if (!s->warm_start) memset(r, 0, (size_t)m * sizeof(mbdcp_float));
    if (!mbdcp_all_finite((size_t)m, r)) return MBDCP_ERR_NONFINITE;

    Work w;
    w.blocks = (mbdcp_float *)work;
    w.qk = w.blocks + 9 * (size_t)n_c;
    w.tmp = w.qk + m;
    w.prev = w.tmp + m;
    w.ccp_u = w.ident_val = NULL;
    w.ccp_work = NULL;
    w.ccp_work_bytes = 0;
    w.ident_ptr = w.ident_ind = NULL;
    const int use_apgd = s->method == MBDCP_FC_APGD || (s->method == MBDCP_FC_FIXED_POINT && s->inner == MBDCP_FC_APGD);
    if (use_apgd) {
        w.ccp_u = w.prev + m;
        w.ident_val = w.ccp_u + m;
        w.ccp_work = (void *)(w.ident_val + m);
        w.ccp_work_bytes = ccp_bytes(n_c);
        w.ident_ptr = (mbdcp_int *)((char *)w.ccp_work + w.ccp_work_bytes);
        w.ident_ind = w.ident_ptr + m + 1;
        for (mbdcp_int j = 0; j < m; ++j) {
            w.ident_ptr[j] = j;
            w.ident_ind[j] = j;
            w.ident_val[j] = 1.0;
        }
        w.ident_ptr[m] = m;
    }
    const Csr W = {p->W_rowptr, p->W_colind, p->W_val};
    const Csr S = p->S_rowptr ? (Csr){p->S_rowptr, p->S_colind, p->S_val} : W;
    diagonal_blocks(&W, n_c, w.blocks);
    const mbdcp_float qn = norm2(m, p->q), qnorm = qn > 0.0 ? qn : 1.0;

    Run run;
    if (s->method == MBDCP_FC_NSGS || s->method == MBDCP_FC_PGS) {
        run = gauss_seidel(&W, n_c, p->q, p->mu, coulomb, w.blocks, s->tol, s->max_iter, qnorm, &s->monitor, -1, r, u,
                           &info->local_failures);
    } else if (s->method == MBDCP_FC_APGD && S.val == W.val) {
        run = apgd(&W, n_c, p->q, p->mu, s->tol, s->max_iter, qnorm, &s->monitor, -1, r, u, &w, &rc);
        if (rc != MBDCP_OK) return rc;
    } else {
        /* the fixed point; APGD on an asymmetric W is the same iteration with kappa = 0 */
        const MbdcpFcMethod inner = s->method == MBDCP_FC_APGD ? MBDCP_FC_APGD : s->inner;
        run = fixed_point(&W, inner == MBDCP_FC_APGD ? &S : &W, n_c, p->q, p->mu, coulomb, inner, s, qnorm, r, u, &w, info,
                          &rc);
        if (rc != MBDCP_OK) return rc;
    }
    info->status = run.status;
    info->iterations = run.iterations;
    info->residual = run.residual;
    /* u = W r + q of the r returned (the inner solves leave u for their own matrix) */
    matvec(&W, m, r, p->q, u);
    if (!mbdcp_all_finite((size_t)m, r) && info->status != MBDCP_INTERRUPTED) info->status = MBDCP_NUMERICAL_ERROR;
    return MBDCP_OK;
}

MbdcpReturn mbdcp_coulomb_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r, mbdcp_float *u,
                                MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    return solve(p, s, 1, r, u, info, work, work_bytes);
}

MbdcpReturn mbdcp_ccp_local_solve(const MbdcpFcProblem *p, const MbdcpFcSettings *s, mbdcp_float *r, mbdcp_float *u,
                                  MbdcpFcInfo *info, void *work, size_t work_bytes)
{
    return solve(p, s, 0, r, u, info, work, work_bytes);
}

MbdcpReturn mbdcp_fc_residual(const MbdcpFcProblem *p, int coulomb, const mbdcp_float *r, mbdcp_float *u,
                              mbdcp_float *residual)
{
    if (!p || !residual) return MBDCP_ERR_NULL;
    if (p->n_c < 0) return MBDCP_ERR_DIMENSION;
    const mbdcp_int n_c = p->n_c, m = 3 * n_c;
    *residual = 0.0;
    if (n_c == 0) return MBDCP_OK;
    if (!p->q || !p->mu || !r) return MBDCP_ERR_NULL;
    MbdcpReturn rc = check_csr(m, p->W_rowptr, p->W_colind, p->W_val);
    if (rc != MBDCP_OK) return rc;
    const Csr W = {p->W_rowptr, p->W_colind, p->W_val};
    const mbdcp_float qn = norm2(m, p->q);
    mbdcp_float res = 0.0;
    /* without u, contact by contact */
    for (mbdcp_int i = 0; i < n_c; ++i) {
        mbdcp_float ui[3];
        for (int a = 0; a < 3; ++a) {
            ui[a] = row_dot(&W, 3 * i + a, r) + p->q[3 * i + a];
            if (u) u[3 * i + a] = ui[a];
        }
        const mbdcp_float *ri = r + 3 * i;
        const mbdcp_float shift = coulomb ? p->mu[i] * sqrt(ui[1] * ui[1] + ui[2] * ui[2]) : 0.0;
        mbdcp_float y[3] = {ri[0] - ui[0] - shift, ri[1] - ui[1], ri[2] - ui[2]};
        mbdcp_cone_project(p->mu[i], y);
        for (int a = 0; a < 3; ++a) res += (ri[a] - y[a]) * (ri[a] - y[a]);
    }
    *residual = sqrt(res) / (qn > 0.0 ? qn : 1.0);
    return MBDCP_OK;
}
