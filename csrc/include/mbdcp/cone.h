/*
 * cone.h - the friction cone K_mu = {(x_n, x_u, x_w) : ||(x_u, x_w)|| <= mu x_n} in 3-D
 *
 * The two operations every cone solver needs (ccp.c, coulomb.c): the Euclidean projection onto
 * K_mu, and the exact minimiser of a convex quadratic over it (the local problem of projected
 * Gauss-Seidel: one contact's 3 x 3 block).
 */
#ifndef MBDCP_CONE_H
#define MBDCP_CONE_H

#include <float.h>
#include <math.h>

#include "mbdcp_types.h"

/* Project g (3 values: normal, u, w) onto K_mu in place (mu >= 0; mu = 0 is the ray g_t = 0). */
void mbdcp_cone_project(mbdcp_float mu, mbdcp_float *gamma);

/* The same, inline for the solvers' inner loops. The tangential norm is sqrt(g_u^2 + g_w^2) when
 * the sum of squares is a normal number far from overflow (then it is within an ulp of hypot,
 * which costs several times more), hypot otherwise. */
static inline void mbdcp_cone_project_inline(mbdcp_float mu, mbdcp_float *g)
{
    if (mu == 0.0) { /* K is the ray g_t = 0, g_n >= 0 */
        g[0] = fmax(g[0], 0.0);
        g[1] = g[2] = 0.0;
        return;
    }
    const mbdcp_float s = g[1] * g[1] + g[2] * g[2];
    const mbdcp_float t = (s >= DBL_MIN && s <= 0.25 * DBL_MAX) ? sqrt(s) : hypot(g[1], g[2]);
    if (g[0] >= 0.0 && t <= mu * g[0]) return; /* inside K */
    if (mu * t <= -g[0]) {                      /* inside the polar cone: the apex */
        g[0] = g[1] = g[2] = 0.0;
        return;
    }
    const mbdcp_float gn = (g[0] + mu * t) / (1.0 + mu * mu);
    const mbdcp_float radius = mu * gn; /* the unit tangent times the radius: no subnormal factor */
    g[0] = gn;
    g[1] = g[1] / t * radius;
    g[2] = g[2] / t * radius;
}

/* x = argmin 1/2 x^T B x + b^T x over K_mu, B (3 x 3, row-major) symmetric positive semidefinite:
 * the apex, an interior point, or a point of the surface (sampled, then refined by Newton's method). */
void mbdcp_cone_local_solve(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float *x);

#endif /* MBDCP_CONE_H */
