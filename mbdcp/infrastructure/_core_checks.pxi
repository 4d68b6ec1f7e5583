# Included by _core.pyx (one extension module): products and checks the public layer calls once per
# input (cone.h, dense.h).


def transpose_times(cnp.ndarray A_ptr, cnp.ndarray A_ind, cnp.ndarray A_val, cnp.ndarray x):
    """A^T x for A in CSC (int32 indptr and indices, float64 data; as many rows as x has entries)
    and a float64 x: a column's dot product with x per entry."""
    _f(x, "x", (-1,))
    cdef Py_ssize_t n = A_ptr.shape[0] - 1, j, k
    _compressed(A_ptr, A_ind, A_val, "A", n, x.shape[0])
    out = np.empty(n)
    cdef const int *ap = _idata(A_ptr)
    cdef const int *ai = _idata(A_ind) if A_ind.shape[0] else NULL
    cdef const double *av = _data(A_val)
    cdef const double *xp = _data(x)
    cdef double *op = _out(out)
    cdef double acc
    with nogil:
        for j in range(n):
            acc = 0.0
            for k in range(ap[j], ap[j + 1]):
                acc += av[k] * xp[ai[k]]
            op[j] = acc
    return out


def cone_project(double mu, cnp.ndarray g):
    """Project a contiguous float64 3-vector onto the friction cone (a copy)."""
    out = np.array(g, dtype=np.float64)
    _f(out, "g", (3,))
    mbdcp_cone_project(mu, <double *>cnp.PyArray_DATA(out))
    return out


# ---- fast validation helpers (the public layer names the argument) -------------------------

cdef inline bint _plain(object a, int ndim):
    """A float64, C-contiguous ndarray of that ndim."""
    return (type(a) is np.ndarray and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == ndim and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>a) and cnp.PyArray_ISALIGNED(<cnp.ndarray>a))


cdef inline bint _finite(cnp.ndarray a):
    return mbdcp_all_finite(<size_t>cnp.PyArray_SIZE(a), <const double *>cnp.PyArray_DATA(a)) != 0


def all_finite(cnp.ndarray a):
    """True when every entry of a C-contiguous float64 array is finite."""
    _f(a, "a", tuple(-1 for _ in range(a.ndim)))
    cdef const double *p = <const double *>cnp.PyArray_DATA(a)
    cdef size_t n = <size_t>cnp.PyArray_SIZE(a)
    cdef int ok
    with nogil:
        ok = mbdcp_all_finite(n, p)
    return ok != 0


def asymmetry(const double[:, ::1] A):
    """(max |A_ij - A_ji|, max |A_ij|) of a square matrix."""
    cdef Py_ssize_t n = A.shape[0], i, j
    if A.shape[1] != n:
        raise ValueError(f"internal call: A must be square, got {A.shape[0]} x {A.shape[1]}")
    cdef double d = 0.0, m = 0.0, x
    for i in range(n):
        for j in range(n):
            x = A[i, j]
            if x < 0:
                x = -x
            if x > m:
                m = x
            if j > i:
                x = A[i, j] - A[j, i]
                if x < 0:
                    x = -x
                if x > d:
                    d = x
    return d, m


def grouping_error(const double[:, ::1] E):
    """0 if E has exactly one 1 per row, zeros elsewhere, and groups in nondecreasing
    column order; 1 for bad entries, 2 for bad order (mbdcp_grouping_error)."""
    if E.shape[0] == 0 or E.shape[1] == 0:
        return 0 if E.shape[0] == 0 else 1
    return mbdcp_grouping_error(<mbdcp_int>E.shape[0], <mbdcp_int>E.shape[1], &E[0, 0])
