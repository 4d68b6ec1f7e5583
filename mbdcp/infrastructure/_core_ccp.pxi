# Included by _core.pyx (one extension module): the cone complementarity problem and its block
# products (ccp.h, blocks.h).


cdef const int *_idata(cnp.ndarray a) except? NULL:
    if cnp.PyArray_TYPE(a) != cnp.NPY_INT or not cnp.PyArray_IS_C_CONTIGUOUS(a):
        raise TypeError("internal: expected a C-contiguous int32 array")
    return <const int *>cnp.PyArray_DATA(a)


cdef tuple _set_mass(MbdcpCcpProblem *pr, object M, int n_v):
    """Points pr at M's CSC arrays (M: their tuple, or a function that makes it, called now);
    returns the tuple, which the caller keeps while pr is in use."""
    if callable(M):
        M = M()
    cdef cnp.ndarray M_ptr, M_ind, M_val
    M_ptr, M_ind, M_val = M
    _compressed(M_ptr, M_ind, M_val, "M", n_v, n_v)
    pr.M_colptr = _idata(M_ptr)
    pr.M_rowind = _idata(M_ind) if M_ind.shape[0] else NULL
    pr.M_val = _data(M_val)
    return M


cdef tuple _analyse(MbdcpCcpProblem *pr, MbdcpCcpSettings *s, object M, int n_v):
    """pr pointed at M (see _set_mass), and settings.factor_blocks and factor_flops of the
    interior-point method for this pattern; returns M's arrays, kept by the caller while pr is used."""
    M = _set_mass(pr, M, n_v)
    cdef mbdcp_int blocks = -1
    cdef mbdcp_float flops = 0.0
    cdef size_t fbytes = mbdcp_ccp_factor_workspace_size(pr)
    cdef cnp.ndarray fwork = _workspace(fbytes)
    _check(mbdcp_ccp_factor_blocks(pr, &blocks, &flops, cnp.PyArray_DATA(fwork), fbytes))
    s.factor_blocks = blocks
    s.factor_flops = flops
    return M


cdef MbdcpReturn _ccp_call(MbdcpCcpProblem *pr, MbdcpCcpSettings *s, cnp.ndarray nu, cnp.ndarray u,
                           MbdcpCcpInfo *info, const MbdcpCcpInfo *first) except *:
    """mbdcp_ccp_solve (first NULL) or mbdcp_ccp_resume after first, in a workspace of its size; the
    settings' message raised as a ValueError, the return code returned."""
    cdef const char *msg = NULL
    if mbdcp_ccp_check_settings(s, &msg) != MBDCP_OK:
        raise ValueError(msg.decode())
    cdef size_t nbytes = mbdcp_ccp_solve_workspace_size(pr, s)
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef double *nup = _out(nu)
    cdef double *up = _out(u)
    cdef MbdcpReturn rc
    with nogil:
        if first == NULL:
            rc = mbdcp_ccp_solve(pr, s, nup, up, info, wp, nbytes)
        else:
            rc = mbdcp_ccp_resume(pr, s, first, nup, up, info, wp, nbytes)
    return rc


def ccp(int n_v, int n_c, int n_b, cnp.ndarray P_ptr, cnp.ndarray P_ind, cnp.ndarray P_val,
        cnp.ndarray Q_ptr, cnp.ndarray Q_ind, cnp.ndarray Q_val, cnp.ndarray mu, cnp.ndarray p,
        method, double tol, int max_iter, double omega, cnp.ndarray nu0, M=None, plan=None):
    """(nu, u, history, status, iterations, residual, polished, finished, certificate, plan); nu0 is
    None or the warm start; method a key of CCP_METHODS (any str, np.str_ included); M (ipm, auto):
    (indptr, indices, data) of M in CSC, both triangles, a function that returns them (called only
    when the C core asks for the analysis of M), or None; plan (auto, with M): None or the (budget,
    n_c) an earlier call returned, AUTO's plan (ccp.h), which C uses or replaces; the plan returned
    is the one to keep (C's info->plan)."""
    if n_v < 1 or n_c < 0 or n_b < 0:
        raise ValueError(f"internal call: n_v = {n_v}, n_c = {n_c}, n_b = {n_b} out of range")
    cdef Py_ssize_t cols = 3 * <Py_ssize_t>n_c + n_b
    _compressed(P_ptr, P_ind, P_val, "P", cols, n_v)
    _compressed(Q_ptr, Q_ind, Q_val, "Q", cols, n_v)
    _f(mu, "mu", (n_c,), n_c == 0)
    _f(p, "p", (cols,), cols == 0)
    if nu0 is not None and np.shape(nu0) != (cols,):
        raise ValueError(f"internal call: nu0 must have shape ({cols},), got {np.shape(nu0)}")
    if plan is not None and M is None:
        raise ValueError("internal call: a plan needs M (its analysis may be asked for)")
    cdef MbdcpCcpProblem pr
    pr.n_v = n_v
    pr.n_c = n_c
    pr.n_b = n_b
    pr.P_colptr = _idata(P_ptr)
    pr.P_rowind = _idata(P_ind) if P_ind.shape[0] else NULL
    pr.P_val = _data(P_val)
    pr.Q_colptr = _idata(Q_ptr)
    pr.Q_rowind = _idata(Q_ind) if Q_ind.shape[0] else NULL
    pr.Q_val = _data(Q_val)
    pr.mu = _data(mu)
    pr.p = _data(p)
    pr.M_colptr = NULL
    pr.M_rowind = NULL
    pr.M_val = NULL
    cdef MbdcpCcpSettings s
    mbdcp_ccp_default_settings(&s)
    s.method = CCP_METHODS[str(method)]
    s.tol = tol
    s.max_iter = max_iter
    s.omega = omega
    s.warm_start = nu0 is not None
    if plan is not None:
        s.plan.budget, s.plan.n_c = plan
    cdef int needs = 0
    _check(mbdcp_ccp_needs_factor(&pr, &s, &needs))
    if needs and M is not None:
        M = _analyse(&pr, &s, M, n_v)
    nu = np.zeros(cols) if nu0 is None else np.array(nu0, dtype=np.float64)
    u = np.zeros(n_v)
    cdef Recorder R
    s.monitor = _monitor(&R, 20.0 * (P_val.shape[0] + Q_val.shape[0]) + 1.0, False, True)
    cdef MbdcpCcpInfo info, first
    cdef MbdcpReturn rc = MBDCP_OK
    try:
        rc = _ccp_call(&pr, &s, nu, u, &info, NULL)
        if rc == MBDCP_OK and info.handover:  # APGD spent the plan's budget: C asks for M's analysis
            first = info
            M = _analyse(&pr, &s, M, n_v)
            rc = _ccp_call(&pr, &s, nu, u, &info, &first)
    finally:
        _, hist = _recorded(&R)
    _check(rc)
    return (nu, u, hist, <int>info.status, info.iterations, info.residual, bool(info.polished),
            _CCP_METHOD_NAMES[<int>info.finished], _CCP_CERTIFICATES[<int>info.certificate],
            (info.plan.budget, info.plan.n_c))


def block_spd_inverse(cnp.ndarray M):
    """(Minv, rc, bad) for a C-contiguous float64 stack (nb, k, k): rc is 0, or the return code
    (MBDCP_ERR_DATA: block `bad` not symmetric; MBDCP_ERR_NOT_POSDEF: not positive definite;
    MBDCP_ERR_NONFINITE: its inverse overflows)."""
    _f(M, "M", (-1, -1, -1))
    if M.shape[1] != M.shape[2]:
        raise ValueError(f"internal call: M must be a stack of square blocks, got shape {np.shape(M)}")
    cdef mbdcp_int nb = M.shape[0], k = M.shape[1], bad = -1
    Minv = np.empty_like(M)
    cdef cnp.ndarray scratch = np.empty(k * k + 1)
    cdef const double *mp = _data(M)
    cdef double *ip = _out(Minv)
    cdef double *sp_ = _out(scratch)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_block_spd_inverse(nb, k, mp, ip, sp_, &bad)
    if rc not in (MBDCP_OK, MBDCP_ERR_DATA, MBDCP_ERR_NOT_POSDEF, MBDCP_ERR_NONFINITE):
        _check(rc)
    return Minv, <int>rc, bad


def block_times_csc(cnp.ndarray B, int ncols, cnp.ndarray P_ptr, cnp.ndarray P_ind, cnp.ndarray P_val):
    """(indptr, indices, data) of Q = B P: B a float64 stack (nb, k, k) of diagonal blocks, P in
    CSC (int32 indptr and sorted indices, float64 data)."""
    _f(B, "B", (-1, -1, -1))
    if B.shape[1] != B.shape[2] or B.shape[1] < 1 or ncols < 0:
        raise ValueError(f"internal call: B must be a stack of square blocks and ncols >= 0, got {np.shape(B)}, {ncols}")
    _compressed(P_ptr, P_ind, P_val, "P", ncols, B.shape[0] * B.shape[1])
    cdef mbdcp_int nb = B.shape[0], k = B.shape[1]
    Q_ptr = np.empty(ncols + 1, dtype=np.intc)
    cdef const int *pp = _idata(P_ptr)
    cdef const int *pi = _idata(P_ind) if P_ind.shape[0] else NULL
    cdef const double *pv = _data(P_val)
    cdef int *qp = <int *>cnp.PyArray_DATA(Q_ptr)
    _check(mbdcp_block_times_csc(nb, k, NULL, ncols, pp, pi, pv, qp, NULL, NULL))
    Q_ind = np.empty(Q_ptr[ncols], dtype=np.intc)
    Q_val = np.empty(Q_ptr[ncols])
    cdef const double *bp = _data(B)
    cdef int *qi = <int *>cnp.PyArray_DATA(Q_ind)
    cdef double *qv = _out(Q_val)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_block_times_csc(nb, k, bp, ncols, pp, pi, pv, qp, qi, qv)
    _check(rc)
    return Q_ptr, Q_ind, Q_val
