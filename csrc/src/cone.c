/* cone.c - the friction cone K_mu = {x : x_t <= mu x_n} in 3-D: projection and the exact local problem (cone.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "mbdcp/cone.h"

/* Angles sampled on the cone's surface (where it descends) before refining a contact's minimiser. */
#define LOCAL_SAMPLES 16

void mbdcp_cone_project(mbdcp_float mu, mbdcp_float *g)
{
    mbdcp_cone_project_inline(mu, g);
}

/* ---- a contact's local problem: min 1/2 x^T B x + b^T x over K_mu (B 3 x 3 symmetric PSD) ---- */

static mbdcp_float local_value(const mbdcp_float *B, const mbdcp_float *b, const mbdcp_float *x)
{
    mbdcp_float f = 0.0;
    for (int a = 0; a < 3; ++a) f += x[a] * (0.5 * (B[3 * a] * x[0] + B[3 * a + 1] * x[1] + B[3 * a + 2] * x[2]) + b[a]);
    return f;
}

/* On the surface x = t (1, mu cos phi, mu sin phi), t >= 0, the best t gives the value
 * -min(0, b.a)^2 / (2 a^T B a); returns that value (0 when no descent) and t. */
static mbdcp_float surface_value(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float phi,
                                 mbdcp_float *t)
{
    const mbdcp_float a[3] = {1.0, mu * cos(phi), mu * sin(phi)};
    mbdcp_float ba = 0.0, aBa = 0.0;
    for (int i = 0; i < 3; ++i) {
        ba += b[i] * a[i];
        aBa += a[i] * (B[3 * i] * a[0] + B[3 * i + 1] * a[1] + B[3 * i + 2] * a[2]);
    }
    *t = 0.0;
    if (!(ba < 0.0) || !(aBa > 0.0)) return 0.0;
    *t = -ba / aBa;
    return -0.5 * ba * ba / aBa;
}

static mbdcp_float quad(const mbdcp_float *B, const mbdcp_float *x, const mbdcp_float *y)
{
    mbdcp_float s = 0.0;
    for (int i = 0; i < 3; ++i) s += x[i] * (B[3 * i] * y[0] + B[3 * i + 1] * y[1] + B[3 * i + 2] * y[2]);
    return s;
}

/* Newton's method on F(t, phi) = 1/2 t^2 a^T B a + t b.a, a = (1, mu cos phi, mu sin phi), from a
 * point near the minimiser; keeps a step only if it does not raise F beyond rounding (fs: F at
 * (t, phi)). */
static void surface_newton(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float *t,
                           mbdcp_float *phi, mbdcp_float *fs)
{
    for (int it = 0; it < 8; ++it) {
        const mbdcp_float c = cos(*phi), sn = sin(*phi), T = *t;
        const mbdcp_float a[3] = {1.0, mu * c, mu * sn}, a1[3] = {0.0, -mu * sn, mu * c}, a2[3] = {0.0, -mu * c, -mu * sn};
        const mbdcp_float aBa = quad(B, a, a), aBa1 = quad(B, a, a1), a1Ba1 = quad(B, a1, a1), aBa2 = quad(B, a, a2);
        const mbdcp_float ba = b[0] * a[0] + b[1] * a[1] + b[2] * a[2];
        const mbdcp_float ba1 = b[1] * a1[1] + b[2] * a1[2], ba2 = b[1] * a2[1] + b[2] * a2[2];
        const mbdcp_float Ft = T * aBa + ba, Fp = T * T * aBa1 + T * ba1;
        const mbdcp_float Ftt = aBa, Ftp = 2.0 * T * aBa1 + ba1, Fpp = T * T * (a1Ba1 + aBa2) + T * ba2;
        const mbdcp_float det = Ftt * Fpp - Ftp * Ftp;
        if (!(det > 0.0) || !(Ftt > 0.0)) return;
        const mbdcp_float dt = -(Fpp * Ft - Ftp * Fp) / det, dp = -(Ftt * Fp - Ftp * Ft) / det;
        const mbdcp_float tn = T + dt, pn = *phi + dp;
        if (!(tn > 0.0)) return;
        const mbdcp_float an[3] = {1.0, mu * cos(pn), mu * sin(pn)};
        const mbdcp_float fn = 0.5 * tn * tn * quad(B, an, an) + tn * (b[0] + b[1] * an[1] + b[2] * an[2]);
        if (!(fn <= *fs + 64.0 * DBL_EPSILON * (fabs(*fs) + fabs(T * ba)))) return; /* rounding-level ties: go on */
        *t = tn;
        *phi = pn;
        *fs = fn;
        if (fabs(dp) <= 1e-16 && fabs(dt) <= 1e-16 * tn) return;
    }
}

/* Does x = t (1, mu cos phi, mu sin phi) satisfy the optimality conditions of the local problem
 * on the cone's surface: g = B x + b in the dual cone {g_n >= mu |g_t|} and g . x = 0 (to 1e-12)? */
static int surface_optimal(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float t, mbdcp_float phi)
{
    const mbdcp_float x[3] = {t, t * mu * cos(phi), t * mu * sin(phi)};
    mbdcp_float g[3], scale = 0.0;
    for (int a = 0; a < 3; ++a) {
        g[a] = B[3 * a] * x[0] + B[3 * a + 1] * x[1] + B[3 * a + 2] * x[2] + b[a];
        scale = fmax(scale, fabs(b[a]) + fabs(B[3 * a] * x[0]) + fabs(B[3 * a + 1] * x[1]) + fabs(B[3 * a + 2] * x[2]));
    }
    const mbdcp_float tol = 1e-12 * scale, xn = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    return g[0] - mu * hypot(g[1], g[2]) >= -tol && fabs(g[0] * x[0] + g[1] * x[1] + g[2] * x[2]) <= tol * xn;
}

/* The unconstrained minimiser c = -B^-1 b, by a 3 x 3 Cholesky factorization; 0 when a pivot is
 * at or below 1e-14 trace(B) (B singular: no unique minimiser). */
static int unconstrained(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float *c)
{
    const mbdcp_float tr = B[0] + B[4] + B[8];
    mbdcp_float l00 = B[0];
    if (!(l00 > 1e-14 * tr)) return 0;
    l00 = sqrt(l00);
    const mbdcp_float l10 = B[3] / l00, l20 = B[6] / l00;
    mbdcp_float l11 = B[4] - l10 * l10;
    if (!(l11 > 1e-14 * tr)) return 0;
    l11 = sqrt(l11);
    const mbdcp_float l21 = (B[7] - l20 * l10) / l11;
    mbdcp_float l22 = B[8] - l20 * l20 - l21 * l21;
    if (!(l22 > 1e-14 * tr)) return 0;
    l22 = sqrt(l22);
    const mbdcp_float y0 = -b[0] / l00, y1 = (-b[1] - l10 * y0) / l11, y2 = (-b[2] - l20 * y0 - l21 * y1) / l22;
    c[2] = y2 / l22;
    c[1] = (y1 - l21 * c[2]) / l11;
    c[0] = (y0 - l10 * c[1] - l20 * c[2]) / l00;
    return 1;
}

/* mu = 0: the best point of the ray x = (t, 0, 0), t >= 0; returns its value, t and phi = 0. */
static mbdcp_float ray_minimiser(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float *t, mbdcp_float *phi)
{
    const mbdcp_float fs = B[0] > 0.0 && b[0] < 0.0 ? -0.5 * b[0] * b[0] / B[0] : 0.0;
    *t = fs < 0.0 ? -b[0] / B[0] : 0.0;
    *phi = 0.0;
    return fs;
}

/* The best of LOCAL_SAMPLES + 1 angles from phi0 - delta in steps of `step` (better than *fs):
 * sets *phi and *fs. */
static void sample_surface(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float phi0,
                           mbdcp_float delta, mbdcp_float step, mbdcp_float *phi, mbdcp_float *fs)
{
    for (int k = 0; k <= LOCAL_SAMPLES; ++k) {
        mbdcp_float tk;
        const mbdcp_float ang = phi0 - delta + k * step, f = surface_value(B, b, mu, ang, &tk);
        if (f < *fs) {
            *fs = f;
            *phi = ang;
        }
    }
}

/* Golden-section search for the best angle in [phi - step, phi + step]; returns the middle of
 * the final bracket. */
static mbdcp_float golden_section(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float phi,
                                  mbdcp_float step)
{
    const mbdcp_float g = 0.6180339887498949;
    mbdcp_float lo = phi - step, hi = phi + step;
    mbdcp_float x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), tk;
    mbdcp_float f1 = surface_value(B, b, mu, x1, &tk), f2 = surface_value(B, b, mu, x2, &tk);
    for (int it = 0; it < 80 && hi - lo > 1e-15 * (1.0 + fabs(phi)); ++it) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = surface_value(B, b, mu, x1, &tk);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = surface_value(B, b, mu, x2, &tk);
        }
    }
    return 0.5 * (lo + hi);
}

/* mu > 0: the best point t (1, mu cos phi, mu sin phi) of the cone's surface (b not in the dual
 * cone, bt = |b_t|); returns its value, t and phi. Descent needs b.a < 0, i.e. |phi - phi0| < delta
 * around the direction phi0 opposite b_t. Newton from phi0 first (exact for an isotropic block),
 * accepted when its point satisfies the optimality conditions; else the best sampled angle refined
 * by golden section, and (comparisons locate phi only to sqrt(eps)) Newton on (t, phi). */
static mbdcp_float surface_minimiser(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float bt,
                                     mbdcp_float *t, mbdcp_float *phi)
{
    const mbdcp_float phi0 = atan2(-b[2], -b[1]);
    const mbdcp_float delta = acos(fmax(-1.0, fmin(1.0, b[0] / (mu * bt))));
    const mbdcp_float step = 2.0 * delta / LOCAL_SAMPLES;
    *phi = phi0;
    mbdcp_float fs = surface_value(B, b, mu, *phi, t);
    if (*t > 0.0) surface_newton(B, b, mu, t, phi, &fs);
    if (*t > 0.0 && surface_optimal(B, b, mu, *t, *phi)) return fs;
    fs = INFINITY;
    sample_surface(B, b, mu, phi0, delta, step, phi, &fs);
    const mbdcp_float mid = golden_section(B, b, mu, *phi, step);
    mbdcp_float tk;
    if (surface_value(B, b, mu, mid, &tk) <= fs) *phi = mid;
    fs = surface_value(B, b, mu, *phi, t);
    if (*t > 0.0) surface_newton(B, b, mu, t, phi, &fs);
    return fs;
}

/* The exact minimiser (to rounding) by cases: the apex when b is in the dual cone, the unconstrained
 * minimiser when it lies in K, else the best point of the cone's surface (mu = 0: of the ray
 * x_t = 0). x: in, the current value; out, the minimiser, never worse. */
void mbdcp_cone_local_solve(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float *x)
{
    mbdcp_float best[3] = {x[0], x[1], x[2]}, fbest = local_value(B, b, x);
    /* Near the minimiser the values of two points differ by rounding only: the computed minimiser
     * replaces the current point unless it is worse by more than that (else Gauss-Seidel would
     * stall where rounding hides the last sqrt(eps) of progress). */
    const mbdcp_float slack = 64.0 * DBL_EPSILON * (fabs(fbest) + fabs(b[0] * x[0]) + fabs(b[1] * x[1]) + fabs(b[2] * x[2]));
    fbest += slack;
    const mbdcp_float bt = sqrt(b[1] * b[1] + b[2] * b[2]);
    if (b[0] >= mu * bt) { /* b in K*: the apex is optimal */
        x[0] = x[1] = x[2] = 0.0;
        return;
    }
    mbdcp_float c[3];
    if (unconstrained(B, b, c) && c[0] >= 0.0 && sqrt(c[1] * c[1] + c[2] * c[2]) <= mu * c[0]) {
        const mbdcp_float f = local_value(B, b, c);
        if (f <= fbest) memcpy(x, c, sizeof c);
        return;
    }
    mbdcp_float t, phi;
    const mbdcp_float fs = mu == 0.0 ? ray_minimiser(B, b, &t, &phi) : surface_minimiser(B, b, mu, bt, &t, &phi);
    const mbdcp_float s[3] = {t, t * mu * cos(phi), t * mu * sin(phi)};
    if (fs <= fbest) {
        memcpy(best, s, sizeof s);
        fbest = fs;
    }
    if (0.0 < fbest - slack) best[0] = best[1] = best[2] = 0.0; /* the apex is never worse than a positive value */
    memcpy(x, best, sizeof best);
}
