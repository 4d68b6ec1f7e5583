/* The acceptance test of a solve on the Delassus matrix (the residual in extended precision, with a
 * bound on its rounding error) and the divergence test: what the loops of coulomb.c and the
 * semismooth Newton method (fc_newton.c) stop by; see fc_internal.h. Apart from both, so that
 * neither of those two files calls the other back (coulomb.c -> fc_newton.c -> fc_accept.c). */
#include <float.h>
#include <math.h>

#include "fc_internal.h"

/* The projection onto K_mu in long double. */
static void project_ld(long double mu, long double *g)
{
    if (mu == 0.0L) {
        g[0] = g[0] > 0.0L ? g[0] : 0.0L;
        g[1] = g[2] = 0.0L;
        return;
    }
    const long double t = sqrtl(g[1] * g[1] + g[2] * g[2]);
    if (g[0] >= 0.0L && t <= mu * g[0]) return;
    if (mu * t <= -g[0]) {
        g[0] = g[1] = g[2] = 0.0L;
        return;
    }
    const long double gn = (g[0] + mu * t) / (1.0L + mu * mu);
    g[0] = gn;
    g[1] = g[1] / t * mu * gn;
    g[2] = g[2] / t * mu * gn;
}

/* The unit roundoff of long double as this machine computes it: 2^-64 with x87's extended precision,
 * DBL_EPSILON / 2 where long double is double (or is run as double, as under valgrind). */
static long double ld_roundoff(void)
{
    volatile long double one = 1.0L, e = LDBL_EPSILON;
    return one + e != one ? 0.5L * LDBL_EPSILON : 0.5L * DBL_EPSILON;
}

/* The residual of r with u = W r + q and the projection in long double: where r is so large that
 * r - û rounds to r in double precision, this still sees û. *bound (may be NULL): a bound on the
 * rounding error of that value (the projection is 1-Lipschitz; u, û, r - û each add a few roundoffs
 * of their terms' size). */
mbdcp_float mbdcp_fc_residual_ld(const FcCtx *c, const mbdcp_float *r, mbdcp_float *bound)
{
    long double s = 0.0L, size = 0.0L;
    for (mbdcp_int i = 0; i < c->n_c; ++i) {
        long double u[3], y[3], mag[3];
        for (int a = 0; a < 3; ++a) {
            const mbdcp_int row = 3 * i + a;
            long double v = c->q[row], t = fabsl((long double)c->q[row]);
            for (mbdcp_int k = c->W.ptr[row]; k < c->W.ptr[row + 1]; ++k) {
                const long double wr = (long double)c->W.val[k] * r[c->W.ind[k]];
                v += wr;
                t += fabsl(wr);
            }
            u[a] = v;
            mag[a] = t + fabsl((long double)r[row]);
        }
        const long double shift = c->coulomb ? c->mu[i] * sqrtl(u[1] * u[1] + u[2] * u[2]) : 0.0L;
        for (int a = 0; a < 3; ++a) {
            y[a] = (long double)r[3 * i + a] - u[a] - (a == 0 ? shift : 0.0L);
            size += (mag[a] + shift) * (mag[a] + shift);
        }
        project_ld(c->mu[i], y);
        for (int a = 0; a < 3; ++a) s += (r[3 * i + a] - y[a]) * (r[3 * i + a] - y[a]);
    }
    if (bound) *bound = (mbdcp_float)(8.0L * (3 * c->n_c + 8) * ld_roundoff() * sqrtl(size) / c->qnorm);
    return (mbdcp_float)(sqrtl(s) / c->qnorm);
}

/* SOLVED needs the residual at most tol in extended precision, and that value's rounding error to be
 * well below tol (else it proves nothing: the huge r of a problem without solution). */
int mbdcp_fc_accept(const FcCtx *c, const mbdcp_float *r, mbdcp_float *residual)
{
    if (!(*residual <= c->tol)) return 0;
    mbdcp_float bound;
    const mbdcp_float exact = mbdcp_fc_residual_ld(c, r, &bound);
    if (!(exact <= c->tol) || !(bound <= 0.5 * c->tol)) return 0;
    *residual = exact;
    return 1;
}

int mbdcp_fc_too_large(const FcCtx *c, const mbdcp_float *r)
{
    const mbdcp_int m = 3 * c->n_c;
    for (mbdcp_int j = 0; j < m; ++j)
        if (!(fabs(r[j]) <= c->rmax)) return 1;
    return 0;
}
