# Included by _core.pyx (one extension module): Coulomb friction and its CCP relaxation on the
# Delassus matrix (coulomb.h).


# ---- Coulomb friction and its CCP relaxation on the Delassus matrix (coulomb.h) ------------

# name -> value of each method on the Delassus matrix, in the order of their values
# (coulomb.h's MBDCP_FC_METHOD_LIST)
FC_METHODS = {mbdcp_fc_method_name(<MbdcpFcMethod>i).decode(): i for i in range(MBDCP_FC_METHOD_COUNT)}
FC_METHOD_NAMES = tuple(FC_METHODS)
FC_CASES = ("takeoff", "stick", "slide", "best_effort")
FC_CERTIFICATES = ("none", "direction", "normal", "normal_r", "contact", "diverged")


cdef int _fc_record(void *ctx, mbdcp_int it, mbdcp_int a, mbdcp_int b, double value) noexcept nogil:
    """Records the outer iterations (a == -1); the inner solves of a fixed point (a == -2) are
    only counted, for the Ctrl-C check."""
    if a == -1:
        return _record(ctx, it, a, b, value)
    return _poll(<Recorder *>ctx)


cdef MbdcpFcProblem _fc_problem(int n_c, int d, cnp.ndarray W_ptr, cnp.ndarray W_ind, cnp.ndarray W_val, S,
                                cnp.ndarray q, cnp.ndarray mu) except *:
    if n_c < 0:
        raise ValueError(f"internal call: n_c must be >= 0, got {n_c}")
    _compressed(W_ptr, W_ind, W_val, "W", d * <Py_ssize_t>n_c, d * <Py_ssize_t>n_c)
    if S is not None:
        if not isinstance(S, tuple) or len(S) != 3:
            raise TypeError("internal call: S must be None or a (ptr, ind, val) tuple")
        _compressed(S[0], S[1], S[2], "S", d * <Py_ssize_t>n_c, d * <Py_ssize_t>n_c)
    _f(q, "q", (d * n_c,), n_c == 0)
    _f(mu, "mu", (n_c,), n_c == 0)
    cdef MbdcpFcProblem pr
    pr.n_c = n_c
    pr.spacedim = d
    pr.W_rowptr = _idata(W_ptr)
    pr.W_colind = _idata(W_ind) if W_ind.shape[0] else NULL
    pr.W_val = _data(W_val)
    pr.S_rowptr = NULL
    pr.S_colind = NULL
    pr.S_val = NULL
    if S is not None:
        pr.S_rowptr = _idata(S[0])
        pr.S_colind = _idata(S[1]) if S[1].shape[0] else NULL
        pr.S_val = _data(S[2])
    pr.q = _data(q)
    pr.mu = _data(mu)
    return pr


cdef int _fc_factor_blocks(MbdcpFcProblem *pr, mbdcp_float *flops) except -2:
    """Blocks of Newton's factor for W's pattern (mbdcp_fc_factor_blocks)."""
    cdef size_t nbytes = mbdcp_fc_factor_workspace_size(pr)
    cdef cnp.ndarray work = np.empty(nbytes // 8 + 1)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef mbdcp_int blocks = 0
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_fc_factor_blocks(pr, &blocks, flops, wp, nbytes)
    _check(rc)
    return blocks


def fc_solve(bint coulomb, int n_c, int d, cnp.ndarray W_ptr, cnp.ndarray W_ind, cnp.ndarray W_val, S,
             cnp.ndarray q, cnp.ndarray mu, method, inner, double tol, int max_iter, int inner_max_iter, r0):
    """(r, u, history, status, iterations, inner_iterations, residual, local_failures, finished method,
    certificate kind) of mbdcp_coulomb_solve (coulomb) or mbdcp_ccp_local_solve for spacedim d; W and S
    (None or a (ptr, ind, val) tuple) in CSR; r0 is None or the warm start."""
    cdef MbdcpFcProblem pr = _fc_problem(n_c, d, W_ptr, W_ind, W_val, S, q, mu)
    cdef MbdcpFcSettings s
    cdef const char *msg = NULL
    cdef mbdcp_float flops = 0.0
    mbdcp_fc_default_settings(&s)
    for name, x in (("method", method), ("inner", inner)):  # callers check them; a wrong one still gets a clear error
        if not isinstance(x, str) or x not in FC_METHODS:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, FC_METHODS))}, got {x!r}")
    s.method = FC_METHODS[str(method)]
    s.inner = FC_METHODS[str(inner)]
    s.tol = tol
    s.max_iter = max_iter
    s.inner_max_iter = inner_max_iter
    s.warm_start = r0 is not None
    if s.method == MBDCP_FC_NEWTON or s.method == MBDCP_FC_AUTO:
        # a few contacts: the dense bound costs less than the ordering
        s.factor_blocks = n_c * (n_c - 1) // 2 if n_c <= 12 else _fc_factor_blocks(&pr, &flops)
    if mbdcp_fc_check_settings(&s, coulomb, &msg) != MBDCP_OK:
        raise ValueError(msg.decode())
    cdef Recorder R
    s.monitor = _monitor(&R, 4.0 * W_val.shape[0] + 60.0 * n_c + 1.0, False, True)
    s.monitor.fn = _fc_record
    r = np.zeros(d * n_c) if r0 is None else np.array(r0, dtype=np.float64)
    _f(r, "r0", (d * n_c,), n_c == 0)
    u = np.zeros(d * n_c)
    cdef size_t nbytes = mbdcp_fc_workspace_size(&pr, &s)
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef double *rp = _out(r)
    cdef double *up = _out(u)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef MbdcpFcInfo info
    cdef MbdcpReturn rc
    with nogil:
        if coulomb:
            rc = mbdcp_coulomb_solve(&pr, &s, rp, up, &info, wp, nbytes)
        else:
            rc = mbdcp_ccp_local_solve(&pr, &s, rp, up, &info, wp, nbytes)
    _, hist = _recorded(&R)
    _check(rc)
    return (r, u, hist, <int>info.status, info.iterations, info.inner_iterations, info.residual,
            info.local_failures, FC_METHOD_NAMES[<int>info.finished],
            (FC_CERTIFICATES[<int>info.certificate], info.certificate_contact))


def fc_dense_csr(const double[:, ::1] W):
    """(ptr, ind, val) of the nonzero (or non-finite) entries of a dense W, in CSR with int32 indices."""
    cdef Py_ssize_t m = W.shape[0], n = W.shape[1], i, j, k = 0, nnz = 0
    for i in range(m):
        for j in range(n):
            if W[i, j] != 0.0:
                nnz += 1
    ptr_a = np.empty(m + 1, dtype=np.intc)
    ind_a = np.empty(nnz, dtype=np.intc)
    val_a = np.empty(nnz)
    cdef int[::1] ptr = ptr_a, ind = ind_a
    cdef double[::1] val = val_a
    ptr[0] = 0
    for i in range(m):
        for j in range(n):
            if W[i, j] != 0.0:
                ind[k] = <int>j
                val[k] = W[i, j]
                k += 1
        ptr[i + 1] = <int>k
    return ptr_a, ind_a, val_a


def fc_residual(bint coulomb, int n_c, int d, cnp.ndarray W_ptr, cnp.ndarray W_ind, cnp.ndarray W_val,
                cnp.ndarray q, cnp.ndarray mu, cnp.ndarray r):
    """(residual, u) of coulomb.h's residual for r (W in CSR, spacedim d)."""
    cdef MbdcpFcProblem pr = _fc_problem(n_c, d, W_ptr, W_ind, W_val, None, q, mu)
    _f(r, "r", (d * n_c,), n_c == 0)
    u = np.zeros(d * n_c)
    cdef double res = 0.0
    cdef double *up = _out(u)
    cdef const double *rp = _data(r)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_fc_residual(&pr, coulomb, rp, up, &res)
    _check(rc)
    return res, u


def fc_local(const double[:, ::1] A, const double[::1] b, double mu, bint coulomb, r0):
    """(r, case name) of one contact's exact local solve; r0 None or the previous r."""
    if A.shape[0] != 3 or A.shape[1] != 3 or b.shape[0] != 3:
        raise ValueError(f"internal call: A must be 3 x 3 and b of length 3, got {A.shape[0]} x {A.shape[1]} and {b.shape[0]}")
    r = np.zeros(3) if r0 is None else np.array(r0, dtype=np.float64)
    _f(r, "r0", (3,))
    cdef double *rp = _out(r)
    cdef MbdcpFcCase which = MBDCP_FC_BEST_EFFORT
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_fc_local_solve(&A[0, 0], &b[0], mu, coulomb, rp, &which)
    _check(rc)
    return r, FC_CASES[<int>which]
