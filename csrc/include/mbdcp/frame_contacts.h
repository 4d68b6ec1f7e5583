/*
 * frame_contacts.h - a time step's contact data from contacts described in their frames, with the
 * rows of a dense constraint Jacobian J (n_rows x n_v, row-major) for each: its normal row, then one
 * row per frame tangent (MuJoCo's contacts and efc_J with elliptic cones; Todorov, Erez and Tassa
 * 2012). A contact's normal column of W_n is its normal row; its friction column along a direction
 * d_k is (d_k . t_1) J_{t_1}^T + (d_k . t_2) J_{t_2}^T (Stewart and Trinkle 1996), the directions
 * those of directions.h facing the contact's slip in the motion without friction.
 */
#ifndef MBDCP_FRAME_CONTACTS_H
#define MBDCP_FRAME_CONTACTS_H

#include <stdint.h>

#include "mbdcp_types.h"

/* The contacts as reported: n_con records stride bytes apart (an array of structs, or with
 * stride the size of one entry, plain arrays); within a record a field's entries are contiguous. */
typedef struct {
    mbdcp_int n_con;
    size_t stride;
    const mbdcp_float *dist;     /* signed distance, negative in penetration */
    const mbdcp_int *row;        /* its normal row in J; < 0: excluded from the constraints */
    const mbdcp_int *geom;       /* (2) the two shapes it joins */
    const mbdcp_int *rows;       /* its rows in J: 1 frictionless, 3 or more with two tangents */
    const mbdcp_float *friction; /* its sliding friction coefficient first */
    const mbdcp_float *frame;    /* (9) the unit normal (from geom[0] to geom[1]), tangent 1, tangent 2 */
    const mbdcp_float *point;    /* (3) */
} MbdcpFrameContacts;

/* The contacts kept, in their reported order (capacity n_con each). */
typedef struct {
    mbdcp_float *gap;   /* (n) the distance */
    mbdcp_float *mu;    /* (n) the friction coefficient, 0 for a frictionless contact */
    mbdcp_int *row;     /* (n) the normal row */
    mbdcp_int *rows;    /* (n) its rows in J */
    mbdcp_int *geom;    /* (2 n) */
    mbdcp_float *frame; /* (9 n) */
    mbdcp_float *point; /* (3 n) */
    int64_t *key;       /* (n) (geom[0] code_base + geom[1]) 64 + its rank among that pair's contacts (<= 63) */
} MbdcpContactSet;

/*
 * Keeps the contacts with dist <= delta and row >= 0 (with skip_negative_geom, also those whose
 * geoms are both >= 0); *n the count. Every geom must be < code_base.
 */
MbdcpReturn mbdcp_frame_contacts_select(const MbdcpFrameContacts *in, mbdcp_float delta, int skip_negative_geom,
                                        int64_t code_base, MbdcpContactSet *out, mbdcp_int *n);

/*
 * The columns of n contacts kept by mbdcp_frame_contacts_select (row, rows, mu, frame): column c of
 * Wn (n_v x ld_wn, row-major, columns 0 .. n-1 written) and columns c K .. c K + K - 1 of D
 * (n_v x n K). v_free (n_v): the velocity without friction, or NULL (directions from the world axes);
 * a contact's slip is its tangential rows times v_free, its scale the sum of |J_t| |v_free| over them.
 * cos_k, sin_k (K) and rounding as in directions.h. A contact without tangent rows (rows 1) gets
 * zero friction columns. The rows after a contact's normal must be its tangents. work: 3 K doubles.
 */
MbdcpReturn mbdcp_frame_contact_columns(mbdcp_int n, mbdcp_int n_v, mbdcp_int n_rows, const mbdcp_float *J,
                                        const MbdcpContactSet *set, const mbdcp_float *v_free, mbdcp_int K,
                                        const mbdcp_float *cos_k, const mbdcp_float *sin_k, mbdcp_float rounding,
                                        mbdcp_int ld_wn, mbdcp_float *Wn, mbdcp_float *D, mbdcp_float *work);

/*
 * The largest speed of a point of n_g shapes: per shape |v_b| + |omega_b| (|x_g - c_b| + r_g), b its
 * body, v_b and omega_b the body's linear and angular velocity about c_b (cvel (6 n_body): angular,
 * then linear, as MuJoCo's com-based velocities), x_g the shape's centre (3 n_g), c_b the point about
 * which the body's velocity is given (centre (3 n_body), indexed by centre_of[g]) and r_g its
 * bounding radius.
 */
MbdcpReturn mbdcp_fastest_point(mbdcp_int n_g, mbdcp_int n_body, const mbdcp_int *body, const mbdcp_int *centre_of,
                                const mbdcp_float *cvel, const mbdcp_float *x, const mbdcp_float *centre,
                                const mbdcp_float *radius, mbdcp_float *speed);

#endif /* MBDCP_FRAME_CONTACTS_H */
