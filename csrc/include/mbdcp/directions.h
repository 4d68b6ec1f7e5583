/*
 * directions.h - friction directions about contact normals: count of the n_d directions
 * d_k = cos_k t1 + sin_k t2 evenly spaced in the tangent plane of a unit normal n (Stewart and
 * Trinkle 1996), t2 = n x t1. t1 faces against the contact's slip where it has one, so that a
 * sliding contact meets the full friction mu p_n against its motion in any direction (a vertex
 * of the friction polygon, not an edge, faces the slip); elsewhere t1 is the world axis least
 * aligned with n (the first of ties) less its normal part, normalised.
 */
#ifndef MBDCP_DIRECTIONS_H
#define MBDCP_DIRECTIONS_H

#include "mbdcp_types.h"

/*
 * n_c normals (3 n_c, unit); slip (3 n_c) the relative velocity each contact would have without
 * friction, or NULL; scale (n_c) the magnitude of its terms (ignored without slip): a contact
 * slides when its tangential slip u = slip - (slip . n) n has |u| > rounding scale, and then
 * t1 = -u / |u|. cos_k, sin_k (count): the unit circle's points. dirs (3 count n_c): per contact a
 * 3 x count row-major block, direction k its column k.
 */
MbdcpReturn mbdcp_friction_directions(mbdcp_int n_c, mbdcp_int count, const mbdcp_float *normal,
                                      const mbdcp_float *slip, const mbdcp_float *scale, mbdcp_float rounding,
                                      const mbdcp_float *cos_k, const mbdcp_float *sin_k, mbdcp_float *dirs);

/* The same for one contact (n: 3, slip: 3 or NULL), without checks. */
void mbdcp_contact_directions(mbdcp_int count, const mbdcp_float *n, const mbdcp_float *slip, mbdcp_float scale,
                              mbdcp_float rounding, const mbdcp_float *cos_k, const mbdcp_float *sin_k,
                              mbdcp_float *dirs);

#endif /* MBDCP_DIRECTIONS_H */
