/*
 * cone.h - the friction cone K_mu = {(x_n, x_u, x_w) : ||(x_u, x_w)|| <= mu x_n} in 3-D
 *
 * The two operations every cone solver needs (ccp.c, coulomb.c): the Euclidean projection onto
 * K_mu, and the exact minimiser of a convex quadratic over it (the local problem of projected
 * Gauss-Seidel: one contact's 3 x 3 block).
 */
#ifndef MBDCP_CONE_H
#define MBDCP_CONE_H

#include "mbdcp_types.h"

/* Project g (3 values: normal, u, w) onto K_mu in place (mu >= 0; mu = 0 is the ray g_t = 0). */
void mbdcp_cone_project(mbdcp_float mu, mbdcp_float *gamma);

/* x = argmin 1/2 x^T B x + b^T x over K_mu, B (3 x 3, row-major) symmetric positive semidefinite:
 * the apex, an interior point, or a point of the surface (sampled, then refined by Newton's method). */
void mbdcp_cone_local_solve(const mbdcp_float *B, const mbdcp_float *b, mbdcp_float mu, mbdcp_float *x);

#endif /* MBDCP_CONE_H */
