# Included by _core.pyx (one extension module): batches of LCPs and time steps on threads (batch.h).


def lemke_batch(cnp.ndarray Ms, cnp.ndarray qs, Py_ssize_t first, Py_ssize_t count, int max_pivots,
                double tol, cnp.ndarray z, cnp.ndarray w, cnp.ndarray basis, cnp.ndarray status,
                cnp.ndarray pivots, cnp.ndarray residual, stop=None):
    """Solve instances first..first+count-1 of a batch into rows of the (B, n) outputs.
    Ms is (B, n, n), or (1, n, n) shared by all; qs (B, n); basis (B, n) int32; status and
    pivots (B,) int32; residual (B,). Releases the GIL for the whole loop; stops on Ctrl-C (on the
    main thread) or when ``stop`` (None or an int32 array of one flag) is set by another thread."""
    _f(qs, "qs", (-1, -1))
    cdef Py_ssize_t B = qs.shape[0], n_ = qs.shape[1]
    _f(Ms, "Ms", (-1, n_, n_))
    if Ms.shape[0] not in (1, B):
        raise ValueError(f"internal call: Ms must hold 1 or {B} matrices, got {Ms.shape[0]}")
    for a, name in ((z, "z"), (w, "w")):
        _f(a, name, (B, n_))
    _i(basis, "basis", (B, n_))
    _i(status, "status", (B,))
    _i(pivots, "pivots", (B,))
    _f(residual, "residual", (B,))
    if first < 0 or count < 0 or first + count > B:
        raise ValueError(f"internal call: instances {first}..{first + count - 1} outside the batch of {B}")
    cdef mbdcp_int n = qs.shape[1]
    cdef MbdcpLemkeSettings s = _lemke_settings(max_pivots, tol)
    if count <= 0 or n == 0:
        return
    cdef size_t M_stride = 0 if Ms.shape[0] == 1 else <size_t>(n * n)
    cdef MbdcpLemkeBatchOutput out
    out.z = <double *>cnp.PyArray_DATA(z) + first * n
    out.w = <double *>cnp.PyArray_DATA(w) + first * n
    out.basis = <int *>cnp.PyArray_DATA(basis) + first * n
    out.status = <int *>cnp.PyArray_DATA(status) + first
    out.pivots = <int *>cnp.PyArray_DATA(pivots) + first
    out.residual = <double *>cnp.PyArray_DATA(residual) + first
    cdef const double *Mp = <const double *>cnp.PyArray_DATA(Ms) + first * M_stride
    cdef const double *qp = <const double *>cnp.PyArray_DATA(qs) + first * n
    cdef size_t nbytes = mbdcp_lemke_workspace_size(n)
    cdef cnp.ndarray work = _part_workspace(nbytes)
    cdef void *wk = _on_lines(work)
    cdef mbdcp_int failed = -1
    cdef MbdcpReturn rc
    cdef Recorder R
    # the monitor runs per pivot, or per instance (about n pivots) when the C loop polls between them
    s.monitor = _monitor(&R, 4.0 * n * n * ((n + 1.0) if mbdcp_lemke_batch_quiet(n, &s) else 1.0), False, False, stop)
    with nogil:
        rc = mbdcp_lemke_batch(<mbdcp_int>count, n, Mp, M_stride, qp, &s, &out, &failed, wk, nbytes)
    _recorded(&R)
    if rc != MBDCP_OK:
        err = CoreError(rc, f"instance {first + failed}: " + mbdcp_return_message(rc).decode())
        err.instance = first + failed
        raise err


cdef int _step_batch_shapes(tuple arrays, tuple dims, cnp.ndarray hs, Py_ssize_t first, Py_ssize_t count,
                            cnp.ndarray v_next, cnp.ndarray p_b, cnp.ndarray z, cnp.ndarray w, cnp.ndarray status,
                            cnp.ndarray pivots, cnp.ndarray residual) except -1:
    """step_batch's arguments agree: 16 arrays with a leading axis of 1 or B (or empty: absent) and
    each instance's shape from dims, outputs of B rows, instances inside the batch."""
    if len(arrays) != 16 or len(dims) != 6 or any(not isinstance(d, int) or d < 0 for d in dims) or dims[0] < 1:
        raise ValueError("internal call: arrays must hold 16 arrays and dims 6 sizes (n_v >= 1, the others >= 0)")
    n_v, n_c, m, n_b, m_j, n_j = dims
    cdef Py_ssize_t B = v_next.shape[0] if v_next.ndim == 2 else -1, N = 2 * n_c + m + m_j + n_j
    shapes = ((n_v, n_v), (n_v, n_c), (n_v, m), (m, n_c), (n_c,), (n_v,), (n_v,), (n_c,), (n_c,), (m,),
              (n_v, n_b), (n_b,), (n_b,), (n_v, m_j), (m_j, n_j), (n_j,))
    names = ("Ms", "Wns", "Ds", "Es", "Us", "vs", "p_ext", "psi_n", "dpsi_n", "dpsi_f", "Wb", "theta", "dtheta",
             "Dj", "Ej", "beta_max")
    for a, name, shape in zip(arrays, names, shapes):
        _f(a, name, (-1,) + shape, True)
        if a.size and a.shape[0] not in (1, B):
            raise ValueError(f"internal call: {name} must hold 1 or {B} instances, got {a.shape[0]}")
    _f(hs, "hs", (-1,))
    if hs.shape[0] not in (1, B):
        raise ValueError(f"internal call: hs must hold 1 or {B} values, got {hs.shape[0]}")
    for a, name, n in ((v_next, "v_next", n_v), (p_b, "p_b", n_b), (z, "z", N), (w, "w", N)):
        _f(a, name, (B, n))
    _i(status, "status", (B,))
    _i(pivots, "pivots", (B,))
    _f(residual, "residual", (B,))
    if first < 0 or count < 0 or first + count > B:
        raise ValueError(f"internal call: instances {first}..{first + count - 1} outside the batch of {B}")
    return 0


def step_batch(tuple arrays, tuple dims, cnp.ndarray hs, Py_ssize_t first, Py_ssize_t count, int max_pivots,
               double tol, cnp.ndarray v_next, cnp.ndarray p_b, cnp.ndarray z, cnp.ndarray w,
               cnp.ndarray status, cnp.ndarray pivots, cnp.ndarray residual, stop=None):
    """Time steps first..first+count-1 of a batch. ``arrays``: the 16 validated inputs of
    :func:`step` in its order without h (M, Wn, D, E, mu, v, p_ext, psi_n, dpsi_n, dpsi_f, Wb,
    theta, dtheta, Dj, Ej, beta_max), each C-contiguous float64 with a leading batch axis of B or
    1 (1: shared by all instances; an empty array: absent); ``dims`` = (n_v, n_c, m, n_b, m_j,
    n_j); ``hs`` (B,) or (1,). Outputs are rows of v_next (B, n_v), p_b (B, n_b), z and w (B, N),
    status, pivots (int32) and residual (B,). Returns the failing instance and error code, or
    None."""
    cdef const double *base[16]
    cdef size_t stride[16]
    cdef Py_ssize_t k, i, j
    cdef cnp.ndarray a
    _step_batch_shapes(arrays, dims, hs, first, count, v_next, p_b, z, w, status, pivots, residual)
    for k in range(16):
        a = arrays[k]
        base[k] = _data(a)
        stride[k] = 0 if a.shape[0] == 1 or a.size == 0 else <size_t>(a.size // a.shape[0])
    cdef MbdcpLemkeSettings s = _lemke_settings(max_pivots, tol)
    cdef mbdcp_int N = 2 * dims[1] + dims[2] + dims[4] + dims[5]
    cdef Py_ssize_t n_v = dims[0], n_b = dims[3]
    if count <= 0:
        return
    cdef MbdcpStepProblem *P = <MbdcpStepProblem *>PyMem_Malloc(count * sizeof(MbdcpStepProblem))
    cdef MbdcpStepOutput *out = <MbdcpStepOutput *>PyMem_Malloc(count * sizeof(MbdcpStepOutput))
    cdef MbdcpLemkeInfo *info = <MbdcpLemkeInfo *>PyMem_Malloc(count * sizeof(MbdcpLemkeInfo))
    cdef const double *h_p = <const double *>cnp.PyArray_DATA(hs)
    cdef size_t h_stride = 0 if hs.shape[0] == 1 else 1
    cdef double *vn = _out(v_next)
    cdef double *pb = _out(p_b)
    cdef double *zp = _out(z)
    cdef double *wp = _out(w)
    cdef size_t nbytes
    cdef cnp.ndarray work
    cdef void *wk
    cdef mbdcp_int failed = -1
    cdef MbdcpReturn rc = MBDCP_OK
    cdef Recorder R
    try:
        if P == NULL or out == NULL or info == NULL:
            raise MemoryError()
        for i in range(count):
            j = first + i
            P[i].n_v, P[i].n_c, P[i].m, P[i].n_b, P[i].m_j, P[i].n_j = dims
            P[i].h = h_p[j * h_stride]
            P[i].M = base[0] + j * stride[0] if base[0] else NULL
            P[i].Wn = base[1] + j * stride[1] if base[1] else NULL
            P[i].D = base[2] + j * stride[2] if base[2] else NULL
            P[i].E = base[3] + j * stride[3] if base[3] else NULL
            P[i].mu = base[4] + j * stride[4] if base[4] else NULL
            P[i].v = base[5] + j * stride[5] if base[5] else NULL
            P[i].p_ext = base[6] + j * stride[6] if base[6] else NULL
            P[i].psi_n = base[7] + j * stride[7] if base[7] else NULL
            P[i].dpsi_n = base[8] + j * stride[8] if base[8] else NULL
            P[i].dpsi_f = base[9] + j * stride[9] if base[9] else NULL
            P[i].Wb = base[10] + j * stride[10] if base[10] else NULL
            P[i].theta = base[11] + j * stride[11] if base[11] else NULL
            P[i].dtheta = base[12] + j * stride[12] if base[12] else NULL
            P[i].Dj = base[13] + j * stride[13] if base[13] else NULL
            P[i].Ej = base[14] + j * stride[14] if base[14] else NULL
            P[i].beta_max = base[15] + j * stride[15] if base[15] else NULL
            out[i].v_next = vn + j * n_v
            out[i].p_b = pb + j * n_b if n_b else NULL
            out[i].z = zp + j * N if N else NULL
            out[i].w = wp + j * N if N else NULL
            out[i].F = NULL
            out[i].f = NULL
            out[i].basis = NULL
        nbytes = mbdcp_step_workspace_size(&P[0])
        work = _part_workspace(nbytes)
        wk = _on_lines(work)
        s.monitor = _monitor(&R, 4.0 * N * N, False, False, stop)
        with nogil:
            rc = mbdcp_step_batch(<mbdcp_int>count, P, &s, out, info, &failed, wk, nbytes)
        _recorded(&R)
        for i in range(count if rc == MBDCP_OK else failed):
            (<int *>cnp.PyArray_DATA(status))[first + i] = <int>info[i].status
            (<int *>cnp.PyArray_DATA(pivots))[first + i] = info[i].pivots
            (<double *>cnp.PyArray_DATA(residual))[first + i] = info[i].residual
    finally:
        PyMem_Free(P)
        PyMem_Free(out)
        PyMem_Free(info)
    if rc != MBDCP_OK:
        return first + failed, <int>rc
    return None
