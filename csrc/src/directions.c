/* Friction directions about contact normals; see directions.h. */
#include <math.h>

#include "mbdcp/directions.h"

/* t1 from the world axis least aligned with n: e_a - n_a n (not yet normalised). */
static void axis_tangent(const mbdcp_float *n, mbdcp_float *t1)
{
    mbdcp_int a = 0;
    for (mbdcp_int i = 1; i < 3; ++i)
        if (fabs(n[i]) < fabs(n[a])) a = i;
    for (mbdcp_int i = 0; i < 3; ++i) t1[i] = -n[a] * n[i];
    t1[a] += 1.0;
}

/* t1 = -u, u the tangential part of slip, when it exceeds its rounding; returns 0 when it does not. */
static int slip_tangent(const mbdcp_float *n, const mbdcp_float *slip, mbdcp_float scale, mbdcp_float rounding,
                        mbdcp_float *t1)
{
    const mbdcp_float along = slip[0] * n[0] + slip[1] * n[1] + slip[2] * n[2];
    mbdcp_float u[3], sq = 0.0;
    for (mbdcp_int i = 0; i < 3; ++i) {
        u[i] = slip[i] - along * n[i];
        sq += u[i] * u[i];
    }
    const mbdcp_float noise = rounding * scale;
    if (!(sq > noise * noise)) return 0;
    for (mbdcp_int i = 0; i < 3; ++i) t1[i] = -u[i];
    return 1;
}

void mbdcp_contact_directions(mbdcp_int count, const mbdcp_float *n, const mbdcp_float *slip, mbdcp_float scale,
                              mbdcp_float rounding, const mbdcp_float *cos_k, const mbdcp_float *sin_k,
                              mbdcp_float *dirs)
{
    mbdcp_float t1[3], t2[3];
    if (!slip || !slip_tangent(n, slip, scale, rounding, t1)) axis_tangent(n, t1);
    const mbdcp_float len = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
    for (mbdcp_int i = 0; i < 3; ++i) t1[i] /= len;
    t2[0] = n[1] * t1[2] - n[2] * t1[1];
    t2[1] = n[2] * t1[0] - n[0] * t1[2];
    t2[2] = n[0] * t1[1] - n[1] * t1[0];
    for (mbdcp_int i = 0; i < 3; ++i)
        for (mbdcp_int k = 0; k < count; ++k) dirs[i * count + k] = t1[i] * cos_k[k] + t2[i] * sin_k[k];
}

MbdcpReturn mbdcp_friction_directions(mbdcp_int n_c, mbdcp_int count, const mbdcp_float *normal,
                                      const mbdcp_float *slip, const mbdcp_float *scale, mbdcp_float rounding,
                                      const mbdcp_float *cos_k, const mbdcp_float *sin_k, mbdcp_float *dirs)
{
    if (n_c < 0 || count < 0) return MBDCP_ERR_DIMENSION;
    if (n_c == 0 || count == 0) return MBDCP_OK;
    if (!normal || !cos_k || !sin_k || !dirs || (slip && !scale)) return MBDCP_ERR_NULL;
    for (mbdcp_int c = 0; c < n_c; ++c)
        mbdcp_contact_directions(count, normal + 3 * (size_t)c, slip ? slip + 3 * (size_t)c : NULL,
                                 slip ? scale[c] : 0.0, rounding, cos_k, sin_k, dirs + 3 * (size_t)count * c);
    return MBDCP_OK;
}
