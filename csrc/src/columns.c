/* The columns of a contact Jacobian for rigid bodies; see columns.h. */
#include "mbdcp/columns.h"

/* A body's velocities: (linear, angular) in 2-D is 2 + 1, in 3-D 3 + 3. */
static mbdcp_int dof_of(mbdcp_int dim)
{
    return dim == 2 ? 3 : 6;
}

/* One end's dof entries of direction d at offset r, times sign. */
static void end_column(mbdcp_int dim, const mbdcp_float *r, const mbdcp_float *d, mbdcp_float sign, mbdcp_float *out)
{
    for (mbdcp_int a = 0; a < dim; ++a) out[a] = sign * d[a];
    if (dim == 2) {
        out[2] = sign * (r[0] * d[1] - r[1] * d[0]);
        return;
    }
    out[3] = sign * (r[1] * d[2] - r[2] * d[1]);
    out[4] = sign * (r[2] * d[0] - r[0] * d[2]);
    out[5] = sign * (r[0] * d[1] - r[1] * d[0]);
}

static MbdcpReturn check(mbdcp_int n_c, mbdcp_int dim, mbdcp_int K, mbdcp_int n_v, const mbdcp_int *body)
{
    if (n_c < 0 || K < 0 || (dim != 2 && dim != 3)) return MBDCP_ERR_DIMENSION;
    const mbdcp_int dof = dof_of(dim);
    if (n_v < 0 || n_v % dof) return MBDCP_ERR_DIMENSION;
    for (mbdcp_int c = 0; c < n_c; ++c) {
        const mbdcp_int a = body[2 * c], b = body[2 * c + 1];
        if (a < 0 || a >= n_v / dof || b < -1 || b >= n_v / dof || b == a) return MBDCP_ERR_DIMENSION;
    }
    return MBDCP_OK;
}

/* Contact c's K columns from colptr[c K] on: per direction, body a's entries, then b's negated. */
static void contact(mbdcp_int c, mbdcp_int dim, mbdcp_int K, const mbdcp_int *body, const mbdcp_float *r,
                    const mbdcp_float *dirs, const mbdcp_int *colptr, mbdcp_int *rowind, mbdcp_float *val)
{
    const mbdcp_int dof = dof_of(dim);
    const mbdcp_float *rc = r + 2 * dim * (size_t)c, *dc = dirs + (size_t)dim * K * c;
    for (mbdcp_int k = 0; k < K; ++k) {
        mbdcp_float d[3];
        for (mbdcp_int a = 0; a < dim; ++a) d[a] = dc[a * K + k];
        mbdcp_int at = colptr[c * K + k];
        for (mbdcp_int e = 0; e < 2 && body[2 * c + e] >= 0; ++e) {
            end_column(dim, rc + e * dim, d, e ? -1.0 : 1.0, val + at);
            for (mbdcp_int i = 0; i < dof; ++i) rowind[at + i] = body[2 * c + e] * dof + i;
            at += dof;
        }
    }
}

/* colptr: dof entries per column of a wall contact, 2 dof of a pair. */
static void pointers(mbdcp_int n_c, mbdcp_int dim, mbdcp_int K, const mbdcp_int *body, mbdcp_int *colptr)
{
    const mbdcp_int dof = dof_of(dim);
    colptr[0] = 0;
    for (mbdcp_int c = 0; c < n_c; ++c)
        for (mbdcp_int k = 0; k < K; ++k) colptr[c * K + k + 1] = colptr[c * K + k] + dof * (body[2 * c + 1] >= 0 ? 2 : 1);
}

MbdcpReturn mbdcp_contact_columns(mbdcp_int n_c, mbdcp_int dim, mbdcp_int K, mbdcp_int n_v, const mbdcp_int *body,
                                  const mbdcp_float *r, const mbdcp_float *dirs, mbdcp_int *colptr, mbdcp_int *rowind,
                                  mbdcp_float *val)
{
    if (!colptr || (n_c > 0 && !body)) return MBDCP_ERR_NULL;
    const MbdcpReturn rc = check(n_c, dim, K, n_v, body);
    if (rc != MBDCP_OK) return rc;
    pointers(n_c, dim, K, body, colptr);
    if (!rowind) return MBDCP_OK;
    if (!val || (n_c > 0 && K > 0 && (!r || !dirs))) return MBDCP_ERR_NULL;
    for (mbdcp_int c = 0; c < n_c; ++c) contact(c, dim, K, body, r, dirs, colptr, rowind, val);
    return MBDCP_OK;
}
