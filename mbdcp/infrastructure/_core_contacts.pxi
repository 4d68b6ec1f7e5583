# Included by _core.pyx (one extension module): contact geometry: Jacobian columns, friction
# directions, MuJoCo's contact records, sphere pairs
# (columns.h, directions.h, frame_contacts.h,
# spheres.h).


def contact_columns(cnp.ndarray body, cnp.ndarray r, cnp.ndarray dirs, int n_v):
    """(indptr, indices, data) of a contact Jacobian's columns (see columns.h): body an int32
    (n_c, 2) array (b = -1 for a wall), r the float64 offsets (n_c, 2, dim), dirs the float64
    directions (n_c, dim, K), n_v the rows."""
    _f(r, "r", (-1, 2, -1))
    _f(dirs, "dirs", (r.shape[0], r.shape[2], -1))
    _i(body, "body", (r.shape[0], 2))
    cdef mbdcp_int n_c = r.shape[0], dim = r.shape[2], K = dirs.shape[2]
    indptr = np.empty(n_c * K + 1, dtype=np.intc)
    cdef const int *bp = <const int *>cnp.PyArray_DATA(body)
    cdef int *cp = <int *>cnp.PyArray_DATA(indptr)
    _check(mbdcp_contact_columns(n_c, dim, K, n_v, bp, NULL, NULL, cp, NULL, NULL))
    indices = np.empty(indptr[n_c * K], dtype=np.intc)
    data = np.empty(indptr[n_c * K])
    cdef int *ip = <int *>cnp.PyArray_DATA(indices)
    cdef double *vp = _out(data)
    cdef const double *rp = _data(r)
    cdef const double *dp = _data(dirs)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_contact_columns(n_c, dim, K, n_v, bp, rp, dp, cp, ip, vp)
    _check(rc)
    return indptr, indices, data


def friction_directions(cnp.ndarray normal, object slip, object scale, double rounding, cnp.ndarray cos_k,
                        cnp.ndarray sin_k):
    """(n, 3, count) friction directions about the unit normals (n, 3) (see directions.h), facing
    the slip (n, 3) beyond rounding times its scale (n,) where slip is not None; cos_k and sin_k
    (count,) the unit circle's points."""
    _f(normal, "normal", (-1, 3))
    _f(cos_k, "cos_k", (-1,))
    _f(sin_k, "sin_k", (cos_k.shape[0],))
    cdef mbdcp_int n = normal.shape[0], count = cos_k.shape[0]
    cdef const double *sp = NULL
    cdef const double *cp = NULL
    if slip is not None:
        _f(slip, "slip", (n, 3))
        _f(scale, "scale", (n,))
        sp, cp = _data(slip), _data(scale)
    dirs = np.empty((n, 3, count))
    cdef const double *np_ = _data(normal)
    cdef const double *kp = _data(cos_k)
    cdef const double *sk = _data(sin_k)
    cdef double *dp = _out(dirs)
    _check(mbdcp_friction_directions(n, count, np_, sp, cp, rounding, kp, sk, dp))
    return dirs


cdef const void *_field(cnp.ndarray a, str name, int typenum, Py_ssize_t n, Py_ssize_t width,
                        Py_ssize_t stride) except NULL:
    """The data of a record array's field: n records stride bytes apart, width contiguous entries each."""
    cdef int itemsize = 8 if typenum == cnp.NPY_DOUBLE else 4
    ok = (cnp.PyArray_TYPE(a) == typenum and cnp.PyArray_ISNOTSWAPPED(a) and cnp.PyArray_ISALIGNED(a)
          and a.shape[0] == n and (n < 2 or a.strides[0] == stride)
          and (a.ndim == 1 and width == 1 or a.ndim == 2 and a.shape[1] == width and a.strides[1] == itemsize))
    if not ok:
        raise ValueError(f"internal call: {name} must be {n} records {stride} bytes apart of {width} "
                         f"{'float64' if typenum == cnp.NPY_DOUBLE else 'int32'}, got {a.dtype} {np.shape(a)}")
    return cnp.PyArray_DATA(a)


def frame_contacts(cnp.ndarray dist, cnp.ndarray row, cnp.ndarray geom, cnp.ndarray rows, cnp.ndarray friction,
                   cnp.ndarray frame, cnp.ndarray point, double delta, bint skip_negative_geom, long long code_base):
    """The contacts kept of n_con records (see frame_contacts.h; fields as MuJoCo's contact array:
    dist, row, rows int32 (n_con,), geom int32 (n_con, 2), friction (n_con, >= 1), frame (n_con, 9),
    point (n_con, 3), all with the same record stride): (gap, mu, row, rows, geom, frame (n, 3, 3),
    point, key int64)."""
    cdef Py_ssize_t n_con = dist.shape[0]
    cdef Py_ssize_t stride = dist.strides[0]
    cdef MbdcpFrameContacts inp
    inp.n_con, inp.stride = n_con, stride
    if n_con:
        inp.dist = <const double *>_field(dist, "dist", cnp.NPY_DOUBLE, n_con, 1, stride)
        inp.row = <const int *>_field(row, "row", cnp.NPY_INT, n_con, 1, stride)
        inp.geom = <const int *>_field(geom, "geom", cnp.NPY_INT, n_con, 2, stride)
        inp.rows = <const int *>_field(rows, "rows", cnp.NPY_INT, n_con, 1, stride)
        inp.friction = <const double *>_field(friction, "friction", cnp.NPY_DOUBLE, n_con, friction.shape[1], stride)
        inp.frame = <const double *>_field(frame, "frame", cnp.NPY_DOUBLE, n_con, 9, stride)
        inp.point = <const double *>_field(point, "point", cnp.NPY_DOUBLE, n_con, 3, stride)
    gap, mu, point_out = np.empty(n_con), np.empty(n_con), np.empty((n_con, 3))
    frame_out, key = np.empty((n_con, 3, 3)), np.empty(n_con, dtype=np.int64)
    row_out, rows_out, geom_out = np.empty(n_con, dtype=np.intc), np.empty(n_con, dtype=np.intc), np.empty((n_con, 2), dtype=np.intc)
    cdef MbdcpContactSet out
    out.gap, out.mu, out.point, out.frame = _out(gap), _out(mu), _out(point_out), _out(frame_out)
    out.row, out.rows = <int *>cnp.PyArray_DATA(row_out), <int *>cnp.PyArray_DATA(rows_out)
    out.geom, out.key = <int *>cnp.PyArray_DATA(geom_out), <int64_t *>cnp.PyArray_DATA(key)
    cdef mbdcp_int n = 0
    _check(mbdcp_frame_contacts_select(&inp, delta, skip_negative_geom, code_base, &out, &n))
    return gap[:n], mu[:n], row_out[:n], rows_out[:n], geom_out[:n], frame_out[:n], point_out[:n], key[:n]


def frame_contact_columns(cnp.ndarray J, cnp.ndarray row, cnp.ndarray rows, cnp.ndarray frame, object v_free,
                          cnp.ndarray cos_k, cnp.ndarray sin_k, double rounding, cnp.ndarray Wn, cnp.ndarray D):
    """Writes the n contacts' (row, rows int32 (n,), frame (n, 3, 3)) normal columns into the first n
    columns of Wn (n_v, >= n) and their K friction columns each into D (n_v, n K), from J
    (n_rows, n_v) (see frame_contacts.h); v_free (n_v,) or None; cos_k, sin_k (K,)."""
    _f(J, "J", (-1, -1))
    cdef mbdcp_int n = row.shape[0], n_v = J.shape[1], K = cos_k.shape[0]
    _i(row, "row", (n,))
    _i(rows, "rows", (n,))
    _f(frame, "frame", (n, 3, 3))
    _f(cos_k, "cos_k", (K,))
    _f(sin_k, "sin_k", (K,))
    _f(Wn, "Wn", (n_v, -1))
    _f(D, "D", (n_v, n * K))
    cdef const double *fp = NULL
    if v_free is not None:
        _f(v_free, "v_free", (n_v,))
        fp = _data(v_free)
    cdef MbdcpContactSet s
    memset(&s, 0, sizeof(s))
    s.row, s.rows = <int *>cnp.PyArray_DATA(row), <int *>cnp.PyArray_DATA(rows)
    s.frame = <double *>cnp.PyArray_DATA(frame)
    work = np.empty(3 * K + 1)
    _check(mbdcp_frame_contact_columns(n, n_v, J.shape[0], <const double *>cnp.PyArray_DATA(J), &s, fp, K,
                                       <const double *>cnp.PyArray_DATA(cos_k), <const double *>cnp.PyArray_DATA(sin_k),
                                       rounding, Wn.shape[1], _out(Wn), _out(D), _out(work)))


def fastest_point(cnp.ndarray body, cnp.ndarray centre_of, cnp.ndarray cvel, cnp.ndarray x, cnp.ndarray centre,
                  cnp.ndarray radius):
    """The largest speed of a point of the shapes (see frame_contacts.h): body, centre_of int32
    (n_g,), cvel (n_body, 6), x (n_g, 3), centre (n_body, 3), radius (n_g,)."""
    cdef mbdcp_int n_g = body.shape[0], n_body = cvel.shape[0]
    _i(body, "body", (n_g,))
    _i(centre_of, "centre_of", (n_g,))
    _f(cvel, "cvel", (n_body, 6))
    _f(x, "x", (n_g, 3))
    _f(centre, "centre", (n_body, 3))
    _f(radius, "radius", (n_g,))
    cdef double speed = 0.0
    _check(mbdcp_fastest_point(n_g, n_body, <const int *>cnp.PyArray_DATA(body),
                               <const int *>cnp.PyArray_DATA(centre_of), <const double *>cnp.PyArray_DATA(cvel),
                               <const double *>cnp.PyArray_DATA(x), <const double *>cnp.PyArray_DATA(centre),
                               <const double *>cnp.PyArray_DATA(radius), &speed))
    return speed


def sphere_pairs(cnp.ndarray pos, cnp.ndarray rad, double delta):
    """The pairs of round bodies (centres pos (n, dim), radii rad (n,), float64) with gap <= delta
    (see spheres.h): (pair (m, 2) int32 increasing, gap (m,), normal (m, dim), point (m, dim),
    coincident), coincident None or the first pair (i, j) found on one centre (then m = 0)."""
    _f(pos, "pos", (-1, -1))
    _f(rad, "rad", (pos.shape[0],))
    cdef mbdcp_int n = pos.shape[0], dim = pos.shape[1], m = 0, cap = 6 * pos.shape[0] + 8
    cdef size_t nbytes = mbdcp_sphere_pairs_workspace_size(n)
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef MbdcpReturn rc
    while True:  # again with room for every pair when they outnumber the guess
        pair = np.empty((cap, 2), dtype=np.intc)
        gap, normal, point = np.empty(cap), np.empty((cap, dim)), np.empty((cap, dim))
        rc = _sphere_pairs(pos, rad, delta, cap, &m, pair, gap, normal, point, work, nbytes)
        if rc != MBDCP_ERR_WORKSPACE or m <= cap:
            break
        cap = m
    if rc == MBDCP_ERR_DATA and pair[0, 0] >= 0:
        return pair[:0], gap[:0], normal[:0], point[:0], (int(pair[0, 0]), int(pair[0, 1]))
    _check(rc)
    return pair[:m], gap[:m], normal[:m], point[:m], None


cdef MbdcpReturn _sphere_pairs(cnp.ndarray pos, cnp.ndarray rad, double delta, mbdcp_int cap, mbdcp_int *m,
                               cnp.ndarray pair, cnp.ndarray gap, cnp.ndarray normal, cnp.ndarray point,
                               cnp.ndarray work, size_t nbytes):
    cdef const double *xp = _data(pos)
    cdef const double *rp = _data(rad)
    cdef int *pp = <int *>cnp.PyArray_DATA(pair)
    cdef double *gp = _out(gap)
    cdef double *np_ = _out(normal)
    cdef double *op = _out(point)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef mbdcp_int n = pos.shape[0], dim = pos.shape[1]
    cdef MbdcpReturn rc
    pp[0] = -1
    with nogil:
        rc = mbdcp_sphere_pairs(n, dim, xp, rp, delta, cap, m, pp, gp, np_, op, wp, nbytes)
    return rc
