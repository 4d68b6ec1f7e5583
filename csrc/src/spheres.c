/* The contacts between round bodies on a hashed uniform grid; see spheres.h. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mbdcp/spheres.h"

/* Buckets: the power of two at or above 2 n, so that a sparse scene's cells seldom share one. */
static mbdcp_int n_buckets(mbdcp_int n)
{
    mbdcp_int t = 1;
    while (t < 2 * n && t < ((mbdcp_int)1 << 29)) t *= 2;
    return t;
}

size_t mbdcp_sphere_pairs_workspace_size(mbdcp_int n)
{
    if (n < 0) return 0;
    /* cells (3 n int64), one body's partners' distances (n); bucket bounds (buckets + 2), bodies by
     * bucket (n), one body's partners (n) */
    return 3 * (size_t)n * sizeof(int64_t) + (size_t)n * sizeof(mbdcp_float) +
           ((size_t)n_buckets(n) + 2 + 2 * (size_t)n) * sizeof(mbdcp_int);
}

static mbdcp_int bucket(const int64_t *c, mbdcp_int mask)
{
    const uint64_t h = (uint64_t)c[0] * 0x9E3779B97F4A7C15u ^ (uint64_t)c[1] * 0xC2B2AE3D27D4EB4Fu ^
                       (uint64_t)c[2] * 0x165667B19E3779F9u;
    return (mbdcp_int)((h ^ (h >> 29)) & (uint64_t)mask);
}

typedef struct {
    mbdcp_int n, dim, mask;
    const mbdcp_float *pos, *rad;
    mbdcp_float delta;
    int64_t *cell;                  /* n x 3: each body's cell (the third 0 in 2-D) */
    mbdcp_float *dist;              /* the distances of one body's partners, as part */
    mbdcp_int *start, *body, *part; /* bucket b holds body[start[b] .. start[b + 1] - 1], increasing */
} Grid;

/* Each body's cell and the bodies sorted by bucket (counting sort). */
static void build(Grid *g, void *work)
{
    mbdcp_float rmax = 0.0, pmax = 0.0;
    for (mbdcp_int i = 0; i < g->n; ++i) rmax = fmax(rmax, g->rad[i]);
    for (mbdcp_int k = 0; k < g->n * g->dim; ++k) pmax = fmax(pmax, fabs(g->pos[k]));
    /* cells a little wider than the reach, as a pair's computed distance may round below its
     * coordinates' difference; no finer than 2^-40 of the largest coordinate, so that cell indices
     * stay far inside int64 (coarser cells only add candidates) */
    const mbdcp_float side = fmax((2.0 * rmax + g->delta) * (1.0 + 1e-9), pmax * 0x1p-40);
    const mbdcp_int nb = n_buckets(g->n);
    g->mask = nb - 1;
    g->cell = (int64_t *)work;
    g->dist = (mbdcp_float *)(g->cell + 3 * (size_t)g->n);
    g->start = (mbdcp_int *)(g->dist + g->n);
    g->body = g->start + nb + 2;
    g->part = g->body + g->n;
    memset(g->start, 0, ((size_t)nb + 2) * sizeof(mbdcp_int));
    for (mbdcp_int i = 0; i < g->n; ++i) {
        int64_t *c = g->cell + 3 * (size_t)i;
        c[2] = 0;
        for (mbdcp_int a = 0; a < g->dim; ++a) c[a] = side > 0.0 ? (int64_t)floor(g->pos[g->dim * i + a] / side) : 0;
        g->start[bucket(c, g->mask) + 2]++;
    }
    for (mbdcp_int b = 0; b < nb; ++b) g->start[b + 2] += g->start[b + 1];
    for (mbdcp_int i = 0; i < g->n; ++i) g->body[g->start[bucket(g->cell + 3 * (size_t)i, g->mask) + 1]++] = i;
}

/* |d| of d = c_i - c_j, rescaled where |d|^2 underflows or overflows; d (3, the third 0 in 2-D) on
 * return. */
static mbdcp_float distance(const Grid *g, mbdcp_int i, mbdcp_int j, mbdcp_float *d)
{
    d[2] = 0.0;
    for (mbdcp_int a = 0; a < g->dim; ++a) d[a] = g->pos[g->dim * i + a] - g->pos[g->dim * j + a];
    const mbdcp_float dist = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if ((dist > 0.0 && dist <= DBL_MAX) || (d[0] == 0.0 && d[1] == 0.0 && d[2] == 0.0)) return dist;
    const mbdcp_float big = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
    const mbdcp_float e[3] = {d[0] / big, d[1] / big, d[2] / big};
    return big * sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
}

/* The partners j > i of body i with gap <= delta, increasing, into g->part (their distances into
 * g->dist, computed once); their count, or -1 - j
 * for a partner j on i's centre. */
static mbdcp_int partners(const Grid *g, mbdcp_int i)
{
    const int64_t *ci = g->cell + 3 * (size_t)i;
    const int reach_z = g->dim == 3 ? 1 : 0;
    mbdcp_int m = 0;
    for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dz = -reach_z; dz <= reach_z; ++dz) {
                const int64_t c[3] = {ci[0] + dx, ci[1] + dy, ci[2] + dz};
                const mbdcp_int b = bucket(c, g->mask);
                for (mbdcp_int k = g->start[b]; k < g->start[b + 1]; ++k) {
                    const mbdcp_int j = g->body[k];
                    const int64_t *cj = g->cell + 3 * (size_t)j;
                    if (j <= i || cj[0] != c[0] || cj[1] != c[1] || cj[2] != c[2]) continue;
                    mbdcp_float d[3];
                    const mbdcp_float dist = distance(g, i, j, d);
                    if (dist == 0.0) return -1 - j;
                    if (dist - g->rad[i] - g->rad[j] > g->delta) continue;
                    mbdcp_int at = m++; /* insertion: partners come a few per cell */
                    while (at > 0 && g->part[at - 1] > j) {
                        g->part[at] = g->part[at - 1];
                        g->dist[at] = g->dist[at - 1];
                        --at;
                    }
                    g->part[at] = j;
                    g->dist[at] = dist;
                }
            }
    return m;
}

/* The pair's gap, normal and point from its distance dist = |d|, d = c_i - c_j: gap = dist - r_i -
 * r_j, normal = d / dist, point = c_j + r_j normal. */
static void write_pair(const Grid *g, mbdcp_int i, mbdcp_int j, mbdcp_float dist, mbdcp_int k, mbdcp_int *pair,
                       mbdcp_float *gap, mbdcp_float *normal, mbdcp_float *point)
{
    pair[2 * k] = i;
    pair[2 * k + 1] = j;
    gap[k] = dist - g->rad[i] - g->rad[j];
    for (mbdcp_int a = 0; a < g->dim; ++a) {
        normal[g->dim * k + a] = (g->pos[g->dim * i + a] - g->pos[g->dim * j + a]) / dist;
        point[g->dim * k + a] = g->pos[g->dim * j + a] + g->rad[j] * normal[g->dim * k + a];
    }
}

static MbdcpReturn check(mbdcp_int n, mbdcp_int dim, const mbdcp_float *pos, const mbdcp_float *rad,
                         mbdcp_float delta, mbdcp_int capacity)
{
    if (n < 0 || (dim != 2 && dim != 3) || capacity < 0) return MBDCP_ERR_DIMENSION;
    if (!(delta >= 0.0) || !isfinite(delta)) return MBDCP_ERR_DATA;
    for (mbdcp_int i = 0; i < n; ++i) {
        if (!(rad[i] >= 0.0) || !isfinite(rad[i])) return MBDCP_ERR_DATA;
        for (mbdcp_int a = 0; a < dim; ++a)
            if (!isfinite(pos[dim * i + a])) return MBDCP_ERR_NONFINITE;
    }
    return MBDCP_OK;
}

/* The pairs into the outputs (as many as capacity holds); their count, or -1 on a coincident pair
 * (then in pair[0..1] when capacity > 0). */
static mbdcp_int all_pairs(const Grid *g, mbdcp_int capacity, mbdcp_int *pair, mbdcp_float *gap, mbdcp_float *normal,
                           mbdcp_float *point)
{
    mbdcp_int count = 0;
    for (mbdcp_int i = 0; i < g->n; ++i) {
        const mbdcp_int m = partners(g, i);
        if (m < 0) {
            if (capacity > 0) {
                pair[0] = i;
                pair[1] = -1 - m;
            }
            return -1;
        }
        for (mbdcp_int k = 0; k < m; ++k, ++count)
            if (count < capacity) write_pair(g, i, g->part[k], g->dist[k], count, pair, gap, normal, point);
    }
    return count;
}

MbdcpReturn mbdcp_sphere_pairs(mbdcp_int n, mbdcp_int dim, const mbdcp_float *pos, const mbdcp_float *rad,
                               mbdcp_float delta, mbdcp_int capacity, mbdcp_int *n_pairs, mbdcp_int *pair,
                               mbdcp_float *gap, mbdcp_float *normal, mbdcp_float *point, void *work,
                               size_t work_bytes)
{
    if (!n_pairs || !work || (n > 0 && (!pos || !rad)) || (capacity > 0 && (!pair || !gap || !normal || !point)))
        return MBDCP_ERR_NULL;
    *n_pairs = 0;
    const MbdcpReturn rc = check(n, dim, pos, rad, delta, capacity);
    if (rc != MBDCP_OK) return rc;
    if (work_bytes < mbdcp_sphere_pairs_workspace_size(n)) return MBDCP_ERR_WORKSPACE;
    Grid g = {n, dim, 0, pos, rad, delta, NULL, NULL, NULL, NULL, NULL};
    build(&g, work);
    const mbdcp_int count = all_pairs(&g, capacity, pair, gap, normal, point);
    if (count < 0) return MBDCP_ERR_DATA;
    *n_pairs = count;
    return count > capacity ? MBDCP_ERR_WORKSPACE : MBDCP_OK;
}
