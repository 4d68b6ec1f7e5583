/*
 * columns.h - the columns of a contact Jacobian for rigid bodies. A direction d applied at offset
 * r from a body's centre acts on its velocity (linear, angular) through the column (d, r x d): in
 * 3-D dof = 6 and r x d is a vector; in 2-D dof = 3 and r x d = r_x d_y - r_y d_x. The second body
 * of a pair gets the negated column at its own offset (Stewart and Trinkle 1996; Anitescu and
 * Potra 1997).
 */
#ifndef MBDCP_COLUMNS_H
#define MBDCP_COLUMNS_H

#include "mbdcp_types.h"

/*
 * K columns per contact, contact after contact, in compressed sparse columns: column c K + k holds
 * body a's dof rows a dof .. a dof + dof - 1, then, for a pair (b >= 0), body b's; a < b gives
 * sorted row indices. dim is 2 (dof 3) or 3 (dof 6).
 * body (2 n_c): a, b per contact, b = -1 for a wall; n_v: the number of rows (every body < n_v / dof);
 * r (2 dim n_c): the offsets of the contact point from a's and b's centres (b's unused for a wall);
 * dirs (dim K n_c): per contact a dim x K row-major array, the directions as its columns.
 * Count pass: with rowind == NULL only colptr (K n_c + 1) is written; then rowind and val need
 * colptr[K n_c] entries.
 */
MbdcpReturn mbdcp_contact_columns(mbdcp_int n_c, mbdcp_int dim, mbdcp_int K, mbdcp_int n_v, const mbdcp_int *body,
                                  const mbdcp_float *r, const mbdcp_float *dirs, mbdcp_int *colptr, mbdcp_int *rowind,
                                  mbdcp_float *val);

#endif /* MBDCP_COLUMNS_H */
