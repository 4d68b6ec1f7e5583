/*
 * spheres.h - the contacts between round bodies (spheres in 3-D, disks in 2-D): every pair i < j
 * whose gap |c_i - c_j| - r_i - r_j is at most delta, found on a hashed uniform grid of cells of
 * side 2 max r + delta, so that each such pair lies in neighbouring cells (O(n) for bodies of like
 * size, where all pairs would be O(n^2)).
 */
#ifndef MBDCP_SPHERES_H
#define MBDCP_SPHERES_H

#include "mbdcp_types.h"

/* Bytes of the workspace of mbdcp_sphere_pairs for n bodies. */
size_t mbdcp_sphere_pairs_workspace_size(mbdcp_int n);

/*
 * The pairs (i, j), i < j, with gap <= delta, in increasing (i, j); per pair its gap, unit normal
 * c_i - c_j over its length, and point c_j + r_j normal (on body j's surface).
 * pos (n dim, row-major), rad (n, nonnegative), dim 2 or 3, delta >= 0, all finite.
 * *n_pairs: the number of such pairs. When it exceeds capacity, only the count is exact and the
 * return is MBDCP_ERR_WORKSPACE: call again with capacity >= *n_pairs. pair (2 capacity), gap
 * (capacity), normal and point (dim capacity) may be NULL when capacity is 0.
 * work: work_bytes >= mbdcp_sphere_pairs_workspace_size(n), 8-byte aligned.
 * MBDCP_ERR_DATA when two centres coincide (no normal): *n_pairs = 0 and, when capacity > 0,
 * pair[0..1] = that pair.
 */
MbdcpReturn mbdcp_sphere_pairs(mbdcp_int n, mbdcp_int dim, const mbdcp_float *pos, const mbdcp_float *rad,
                               mbdcp_float delta, mbdcp_int capacity, mbdcp_int *n_pairs, mbdcp_int *pair,
                               mbdcp_float *gap, mbdcp_float *normal, mbdcp_float *point, void *work,
                               size_t work_bytes);

#endif /* MBDCP_SPHERES_H */
