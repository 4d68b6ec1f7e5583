# Included by _core.pyx (one extension module): the fixed-point relaxations P1, P2 and algorithms
# 1-3, dense and sparse (relax.h, relax_sparse.h).


def relax(int which, object problem, cnp.ndarray data, int max_pivots, double tol, bint return_lcp):
    """P1(gamma = data) when which == 1, P2(lam = data) otherwise, of a StepProblem without moving
    surfaces or joint friction: (v_next, p_b, z, w, F, f, status, pivots, residual)."""
    cdef MbdcpStepProblem p = _problem(problem)
    _not_modelled(p)
    cdef MbdcpLemkeSettings s = _lemke_settings(max_pivots, tol)
    cdef MbdcpLemkeInfo info
    cdef mbdcp_int N = (2 * p.n_c + p.m) if which == 1 else (p.n_c + p.m)
    cdef Recorder R
    s.monitor = _monitor(&R, 4.0 * N * N, False, False)
    cdef size_t nbytes = mbdcp_relax_workspace_size(&p)
    cdef MbdcpStepOutput out
    F, f = _lcp_arrays(N, return_lcp)
    cdef _Outputs o = _step_buffers(&out, p.n_v, p.n_b, N, F, f)
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef void *wp = cnp.PyArray_DATA(work)
    _f(data, "gamma" if which == 1 else "lam", (p.n_c,), p.n_c == 0)
    cdef const double *dp = _data(data)
    cdef MbdcpReturn rc
    with nogil:
        if which == 1:
            rc = mbdcp_relax_p1(&p, dp, &s, &out, &info, wp, nbytes)
        else:
            rc = mbdcp_relax_p2(&p, dp, &s, &out, &info, wp, nbytes)
    _recorded(&R)
    _check(rc)
    return _step_results(o, F, f, info)


cdef MbdcpFixedPointSettings _fixed_point_settings(int algorithm, double tol, int max_iter) except *:
    """The settings of a fixed-point call, checked by the C core (a ValueError with its message)."""
    cdef MbdcpFixedPointSettings s
    cdef const char *msg = NULL
    mbdcp_fixed_point_default_settings(&s)
    s.algorithm = algorithm
    s.tol = tol
    s.max_iter = max_iter
    if mbdcp_fixed_point_check_settings(&s, &msg) != MBDCP_OK:
        raise ValueError(msg.decode())
    return s


cdef class _FixedPointCall:
    """A fixed-point call's outputs (v_next, p_b, p_n, beta, lam), bases and warm starts, bound to
    an MbdcpFixedPointOutput; shared by the pivoting and the sparse paths."""
    cdef _Outputs o
    cdef cnp.ndarray basis_p1, basis_p2
    cdef object start_p1, start_p2
    cdef const int *s1
    cdef const int *s2

    def __cinit__(self, Py_ssize_t n_v, Py_ssize_t n_b, Py_ssize_t n_c, Py_ssize_t m, start_p1, start_p2):
        cdef Py_ssize_t N = 2 * n_c + m, N2 = n_c + m
        self.o = _Outputs((n_v, n_b, n_c, m, n_c))
        self.basis_p1, self.basis_p2 = np.zeros(N, dtype=np.intc), np.zeros(N2, dtype=np.intc)
        if start_p1 is not None:
            _i(start_p1, "start_p1", (N,))
        if start_p2 is not None:
            _i(start_p2, "start_p2", (N2,))
        self.start_p1, self.start_p2 = start_p1, start_p2  # kept alive while C reads them
        self.s1 = _idata(start_p1) if start_p1 is not None and N else NULL
        self.s2 = _idata(start_p2) if start_p2 is not None and N2 else NULL

    cdef void bind(self, MbdcpFixedPointOutput *out):
        out.v_next = self.o.ptr(0)
        out.p_b = self.o.ptr(1)
        out.p_n = self.o.ptr(2)
        out.beta = self.o.ptr(3)
        out.lam = self.o.ptr(4)
        out.basis_p1 = <int *>cnp.PyArray_DATA(self.basis_p1) if self.basis_p1.size else NULL
        out.basis_p2 = <int *>cnp.PyArray_DATA(self.basis_p2) if self.basis_p2.size else NULL

    cdef tuple result(self, history, MbdcpFixedPointInfo *info):
        return tuple(self.o.views()) + (history, <int>info.status, info.iterations, bool(info.converged), info.pivots,
                                        info.residual, self.basis_p1.astype(bool), self.basis_p2.astype(bool))


def fixed_point(object problem, int algorithm, double tol, int max_iter, start_p1=None, start_p2=None):
    """(v_next, p_b, p_n, beta, lam, history, status, iterations, converged, pivots, residual,
    basis_p1, basis_p2) of a StepProblem without moving surfaces or joint friction; start_p1 /
    start_p2: None or int32 arrays of 2 n_c + m / n_c + m flags."""
    cdef MbdcpStepProblem p = _problem(problem)
    _not_modelled(p)
    cdef MbdcpFixedPointSettings s = _fixed_point_settings(algorithm, tol, max_iter)
    cdef Py_ssize_t N = 2 * p.n_c + p.m
    cdef Recorder R
    s.lemke.monitor = _monitor(&R, 4.0 * N * N, False, True)
    cdef MbdcpFixedPointInfo info
    cdef size_t nbytes = mbdcp_relax_workspace_size(&p)
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef _FixedPointCall call = _FixedPointCall(p.n_v, p.n_b, p.n_c, p.m, start_p1, start_p2)
    cdef MbdcpFixedPointOutput out
    call.bind(&out)
    cdef const int *s1 = call.s1
    cdef const int *s2 = call.s2
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_fixed_point_warm(&p, &s, s1, s2, &out, &info, wp, nbytes)
    _, history = _recorded(&R)
    _check(rc)
    return call.result(history, &info)


def fixed_point_sparse(object problem, int algorithm, double tol, int max_iter, start_p1=None, start_p2=None):
    """fixed_point's outputs with the subproblems solved by sparse active-set steps (relax_sparse.h),
    the dense StepProblem put in compressed storage first (mbdcp_sparse_step_count, _fill); status
    NUMERICAL_ERROR when a subproblem has no verified point (the caller falls back)."""
    cdef MbdcpStepProblem p = _problem(problem)
    _not_modelled(p)
    cdef cnp.ndarray Wp = np.zeros(p.n_c + p.m + 1, dtype=np.intc)
    cdef mbdcp_int nnz_m = 0
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_sparse_step_count(&p, &nnz_m, <int *>cnp.PyArray_DATA(Wp))
    _check(rc)
    cdef mbdcp_int nnz_w = (<int *>cnp.PyArray_DATA(Wp))[p.n_c + p.m]
    cdef cnp.ndarray Mp = np.zeros(p.n_v + 1, dtype=np.intc), Mi = np.zeros(max(nnz_m, 1), dtype=np.intc)
    cdef cnp.ndarray Mx = np.zeros(max(nnz_m, 1)), Wi = np.zeros(max(nnz_w, 1), dtype=np.intc)
    cdef cnp.ndarray Wx = np.zeros(max(nnz_w, 1)), contact = np.zeros(max(p.m, 1), dtype=np.intc)
    with nogil:
        rc = mbdcp_sparse_step_fill(&p, nnz_m, <int *>cnp.PyArray_DATA(Mp), <int *>cnp.PyArray_DATA(Mi),
                                    <double *>cnp.PyArray_DATA(Mx), <int *>cnp.PyArray_DATA(Wp),
                                    <int *>cnp.PyArray_DATA(Wi), <double *>cnp.PyArray_DATA(Wx),
                                    <int *>cnp.PyArray_DATA(contact))
    _check(rc)
    cdef MbdcpSparseStep q
    q.n_v, q.n_c, q.m, q.h = p.n_v, p.n_c, p.m, p.h
    q.Mp, q.Mi, q.Mx = <const int *>cnp.PyArray_DATA(Mp), <const int *>cnp.PyArray_DATA(Mi), _data(Mx)
    q.Wp, q.Wi, q.Wx = <const int *>cnp.PyArray_DATA(Wp), <const int *>cnp.PyArray_DATA(Wi), _data(Wx)
    q.contact, q.mu, q.v = <const int *>cnp.PyArray_DATA(contact), p.mu, p.v
    q.p_ext, q.psi_n, q.dpsi_n, q.dpsi_f = p.p_ext, p.psi_n, NULL, NULL
    return _fixed_point_compressed(&q, algorithm, tol, max_iter, start_p1, start_p2)


def fixed_point_compressed(object c, int algorithm, double tol, int max_iter, start_p1=None, start_p2=None):
    """fixed_point_sparse's outputs for a CompressedStep (mbdcp.infrastructure.problem): a step given
    in compressed storage, never made dense."""
    cdef cnp.ndarray Mp = c.Mp, Mi = c.Mi, Mx = c.Mx, Wp = c.Wp, Wi = c.Wi, Wx = c.Wx, contact = c.contact
    cdef cnp.ndarray mu = c.mu, v = c.v, p_ext = c.p_ext, psi_n = c.psi_n
    _f(v, "v", (-1,))
    cdef Py_ssize_t n_v = v.shape[0], n_c = mu.shape[0], m = contact.shape[0]
    _compressed(Mp, Mi, Mx, "M", n_v, n_v)
    _compressed(Wp, Wi, Wx, "W", n_c + m, n_v)
    _i(contact, "contact", (m,), m == 0)
    for a, name, shape, optional in ((mu, "mu", (n_c,), n_c == 0), (p_ext, "p_ext", (n_v,), True),
                                     (psi_n, "psi_n", (n_c,), True)):
        _f(a, name, shape, optional)
    cdef MbdcpSparseStep q
    q.n_v, q.n_c, q.m, q.h = n_v, n_c, m, c.h
    q.Mp, q.Mi, q.Mx = <const int *>cnp.PyArray_DATA(Mp), <const int *>cnp.PyArray_DATA(Mi), _data(Mx)
    q.Wp, q.Wi, q.Wx = <const int *>cnp.PyArray_DATA(Wp), <const int *>cnp.PyArray_DATA(Wi), _data(Wx)
    q.contact, q.mu, q.v = <const int *>cnp.PyArray_DATA(contact), _data(mu), _data(v)
    q.p_ext, q.psi_n, q.dpsi_n, q.dpsi_f = _data(p_ext), _data(psi_n), NULL, NULL
    return _fixed_point_compressed(&q, algorithm, tol, max_iter, start_p1, start_p2)


cdef tuple _fixed_point_compressed(const MbdcpSparseStep *q, int algorithm, double tol, int max_iter, start_p1,
                                   start_p2):
    """Analysis and solve of a step in compressed storage (the caller keeps its arrays alive)."""
    cdef MbdcpFixedPointSettings s = _fixed_point_settings(algorithm, tol, max_iter)
    cdef Py_ssize_t N = 2 * q.n_c + q.m
    cdef cnp.ndarray perm_m = np.zeros(max(q.n_v, 1), dtype=np.intc)
    cdef cnp.ndarray perm_k = np.zeros(max(q.n_v + N, 1), dtype=np.intc)
    cdef MbdcpRelaxSparseOrder ord
    ord.perm_m = <int *>cnp.PyArray_DATA(perm_m)
    ord.perm_k = <int *>cnp.PyArray_DATA(perm_k)
    cdef size_t abytes = mbdcp_relax_sparse_analyze_workspace_size(q)
    cdef cnp.ndarray work = _workspace(abytes)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_relax_sparse_analyze(q, &ord, wp, abytes)
    _check(rc)
    cdef Recorder R
    s.lemke.monitor = _monitor(&R, 4.0 * N * N, False, True)
    cdef MbdcpFixedPointInfo info
    cdef size_t nbytes = mbdcp_fixed_point_sparse_workspace_size(q, &ord)
    work = _workspace(nbytes)
    wp = cnp.PyArray_DATA(work)
    cdef _FixedPointCall call = _FixedPointCall(q.n_v, 0, q.n_c, q.m, start_p1, start_p2)
    cdef MbdcpFixedPointOutput out
    call.bind(&out)
    cdef const int *s1 = call.s1
    cdef const int *s2 = call.s2
    with nogil:
        rc = mbdcp_fixed_point_sparse(q, &s, &ord, s1, s2, &out, &info, wp, nbytes)
    _, history = _recorded(&R)
    _check(rc)
    return call.result(history, &info)


def sliding_speed(cnp.ndarray D, cnp.ndarray E, cnp.ndarray v):
    _f(D, "D", (-1, -1))
    _f(E, "E", (D.shape[1], -1))
    _f(v, "v", (D.shape[0],), D.shape[0] == 0)
    cdef mbdcp_int n_v = D.shape[0], m = D.shape[1], n_c = E.shape[1]
    lam = np.zeros(n_c)
    cdef double *lp = _out(lam)
    _check(mbdcp_sliding_speed(n_v, n_c, m, _data(D), _data(E), _data(v), lp if n_c else NULL))
    return lam
