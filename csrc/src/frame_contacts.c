/* A time step's contact data from contacts in their frames and a constraint Jacobian; see frame_contacts.h. */
#include <math.h>
#include <string.h>

#include "mbdcp/directions.h"
#include "mbdcp/frame_contacts.h"

/* Contact i's record of field f. */
static const void *at(const MbdcpFrameContacts *in, const void *f, mbdcp_int i)
{
    return (const char *)f + (size_t)i * in->stride;
}

static int kept(const MbdcpFrameContacts *in, mbdcp_int i, mbdcp_float delta, int skip_negative_geom)
{
    const mbdcp_int *g = at(in, in->geom, i);
    if (!(*(const mbdcp_float *)at(in, in->dist, i) <= delta) || *(const mbdcp_int *)at(in, in->row, i) < 0) return 0;
    return !skip_negative_geom || (g[0] >= 0 && g[1] >= 0);
}

/* Contact i of in as entry k of out, its key given. */
static void copy_contact(const MbdcpFrameContacts *in, mbdcp_int i, mbdcp_int k, int64_t key, MbdcpContactSet *out)
{
    const mbdcp_int *g = at(in, in->geom, i), rows = *(const mbdcp_int *)at(in, in->rows, i);
    out->gap[k] = *(const mbdcp_float *)at(in, in->dist, i);
    out->rows[k] = rows;
    out->mu[k] = rows == 1 ? 0.0 : *(const mbdcp_float *)at(in, in->friction, i);
    out->row[k] = *(const mbdcp_int *)at(in, in->row, i);
    out->geom[2 * k] = g[0];
    out->geom[2 * k + 1] = g[1];
    memcpy(out->frame + 9 * (size_t)k, at(in, in->frame, i), 9 * sizeof(mbdcp_float));
    memcpy(out->point + 3 * (size_t)k, at(in, in->point, i), 3 * sizeof(mbdcp_float));
    out->key[k] = key;
}

MbdcpReturn mbdcp_frame_contacts_select(const MbdcpFrameContacts *in, mbdcp_float delta, int skip_negative_geom,
                                        int64_t code_base, MbdcpContactSet *out, mbdcp_int *n)
{
    if (!in || !out || !n) return MBDCP_ERR_NULL;
    *n = 0;
    if (in->n_con < 0 || code_base < 1) return MBDCP_ERR_DIMENSION;
    if (in->n_con == 0) return MBDCP_OK;
    if (!in->dist || !in->row || !in->geom || !in->rows || !in->friction || !in->frame || !in->point) return MBDCP_ERR_NULL;
    if (!out->gap || !out->mu || !out->row || !out->rows || !out->geom || !out->frame || !out->point || !out->key)
        return MBDCP_ERR_NULL;
    int64_t last = -1, rank = 0;
    for (mbdcp_int i = 0; i < in->n_con; ++i) {
        if (!kept(in, i, delta, skip_negative_geom)) continue;
        const mbdcp_int *g = at(in, in->geom, i);
        if (g[0] >= code_base || g[1] >= code_base) return MBDCP_ERR_DATA;
        const int64_t code = (int64_t)g[0] * code_base + g[1];
        rank = code == last ? rank + 1 : 0; /* a pair's contacts come together */
        last = code;
        copy_contact(in, i, *n, code * 64 + (rank < 63 ? rank : 63), out);
        ++*n;
    }
    return MBDCP_OK;
}

/* The tangential slip of a contact in the world frame from its rows' motion, and its scale. */
static mbdcp_float world_slip(mbdcp_int n_v, const mbdcp_float *Jt, const mbdcp_float *frame, const mbdcp_float *v_free,
                              mbdcp_float *slip)
{
    mbdcp_float along[2] = {0.0, 0.0}, scale = 0.0;
    for (mbdcp_int j = 0; j < 2; ++j)
        for (mbdcp_int i = 0; i < n_v; ++i) {
            along[j] += Jt[(size_t)j * n_v + i] * v_free[i];
            scale += fabs(Jt[(size_t)j * n_v + i]) * fabs(v_free[i]);
        }
    for (mbdcp_int i = 0; i < 3; ++i) slip[i] = along[0] * frame[3 + i] + along[1] * frame[6 + i];
    return scale;
}

/* Contact c's K friction columns of D (row-major, ld_d columns): (d_k . t_1) J_t1 + (d_k . t_2) J_t2, or
 * zeros without tangent rows (Jt NULL). */
static void friction_columns(mbdcp_int c, mbdcp_int n_v, const mbdcp_float *Jt, const mbdcp_float *frame,
                             const mbdcp_float *dirs, mbdcp_int K, size_t ld_d, mbdcp_float *D)
{
    for (mbdcp_int k = 0; k < K; ++k) {
        mbdcp_float a = 0.0, b = 0.0;
        if (Jt)
            for (mbdcp_int i = 0; i < 3; ++i) {
                a += dirs[i * K + k] * frame[3 + i];
                b += dirs[i * K + k] * frame[6 + i];
            }
        mbdcp_float *col = D + (size_t)c * K + k;
        for (mbdcp_int i = 0; i < n_v; ++i) col[i * ld_d] = Jt ? a * Jt[i] + b * Jt[(size_t)n_v + i] : 0.0;
    }
}

static MbdcpReturn check_columns(mbdcp_int n, mbdcp_int n_v, mbdcp_int n_rows, const MbdcpContactSet *set,
                                 mbdcp_int K, mbdcp_int ld_wn)
{
    if (n < 0 || n_v < 0 || n_rows < 0 || K < 0 || ld_wn < n) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int c = 0; c < n; ++c) {
        const mbdcp_int tangents = set->rows[c] >= 3 ? 2 : 0;
        if (set->row[c] < 0 || set->row[c] + tangents >= n_rows) return MBDCP_ERR_DIMENSION;
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_frame_contact_columns(mbdcp_int n, mbdcp_int n_v, mbdcp_int n_rows, const mbdcp_float *J,
                                        const MbdcpContactSet *set, const mbdcp_float *v_free, mbdcp_int K,
                                        const mbdcp_float *cos_k, const mbdcp_float *sin_k, mbdcp_float rounding,
                                        mbdcp_int ld_wn, mbdcp_float *Wn, mbdcp_float *D, mbdcp_float *work)
{
    if (!set || !J || !Wn || (K > 0 && (!D || !cos_k || !sin_k || !work))) return n == 0 ? MBDCP_OK : MBDCP_ERR_NULL;
    MbdcpReturn rc = check_columns(n, n_v, n_rows, set, K, ld_wn);
    if (rc != MBDCP_OK) return rc;
    for (mbdcp_int c = 0; c < n; ++c) {
        const mbdcp_float *Jn = J + (size_t)set->row[c] * n_v, *frame = set->frame + 9 * (size_t)c;
        for (mbdcp_int i = 0; i < n_v; ++i) Wn[(size_t)i * ld_wn + c] = Jn[i];
        if (K == 0) continue;
        const mbdcp_float *Jt = set->rows[c] >= 3 ? Jn + n_v : NULL;
        mbdcp_float slip[3], scale = 0.0;
        if (Jt && v_free) scale = world_slip(n_v, Jt, frame, v_free, slip);
        mbdcp_contact_directions(K, frame, Jt && v_free ? slip : NULL, scale, rounding, cos_k, sin_k, work);
        friction_columns(c, n_v, Jt, frame, work, K, (size_t)n * K, D);
    }
    return MBDCP_OK;
}

MbdcpReturn mbdcp_fastest_point(mbdcp_int n_g, mbdcp_int n_body, const mbdcp_int *body, const mbdcp_int *centre_of,
                                const mbdcp_float *cvel, const mbdcp_float *x, const mbdcp_float *centre,
                                const mbdcp_float *radius, mbdcp_float *speed)
{
    if (!speed) return MBDCP_ERR_NULL;
    *speed = 0.0;
    if (n_g < 0 || n_body < 0) return MBDCP_ERR_DIMENSION;
    if (n_g == 0) return MBDCP_OK;
    if (!body || !centre_of || !cvel || !x || !centre || !radius) return MBDCP_ERR_NULL;
    for (mbdcp_int g = 0; g < n_g; ++g) {
        const mbdcp_int b = body[g], o = centre_of[g];
        if (b < 0 || b >= n_body || o < 0 || o >= n_body) return MBDCP_ERR_DIMENSION;
        const mbdcp_float *w = cvel + 6 * (size_t)b, *v = w + 3, *xg = x + 3 * (size_t)g, *cb = centre + 3 * (size_t)o;
        const mbdcp_float arm = sqrt((xg[0] - cb[0]) * (xg[0] - cb[0]) + (xg[1] - cb[1]) * (xg[1] - cb[1]) +
                                     (xg[2] - cb[2]) * (xg[2] - cb[2]));
        const mbdcp_float s = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
                              sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * (arm + radius[g]);
        if (s > *speed || s != s) *speed = s; /* NaN carried: the step's own checks name it */
    }
    return MBDCP_OK;
}
