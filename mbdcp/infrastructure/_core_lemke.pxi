# Included by _core.pyx (one extension module): Lemke's method and the time step (lemke.h, step.h,
# step_vjp.h): the wrappers, their fast path for small problems and the step's derivative.


def lemke(const double[:, ::1] M, const double[::1] q, int max_pivots, double tol, bint trace, start, q_scale=None):
    """(z, w, status, pivots, residual, trace (k, 2) or None, basis (bool), certificate or None,
    refactorizations, warm, worst_row); ``start`` is None or an int32 array of n flags; ``q_scale``
    None or n nonnegative magnitudes of q's terms (mbdcp_lemke_solve_scaled)."""
    cdef mbdcp_int n = q.shape[0]
    if M.shape[0] != n or M.shape[1] != n:
        raise ValueError(f"internal call: M must be {n} x {n} (q has {n} entries), got {M.shape[0]} x {M.shape[1]}")
    if start is not None:
        _i(start, "start", (n,))
    cdef MbdcpLemkeSettings s = _lemke_settings(max_pivots, tol)
    cdef MbdcpLemkeInfo info
    cdef Recorder R
    s.monitor = _monitor(&R, 4.0 * n * n, trace, False)
    z = np.zeros(n)
    w = np.zeros(n)
    ray = np.zeros(n)
    basis = np.zeros(n, dtype=np.intc)
    cdef MbdcpLemkeOutput out
    out.z = <double *>cnp.PyArray_DATA(z)
    out.w = <double *>cnp.PyArray_DATA(w)
    out.ray = <double *>cnp.PyArray_DATA(ray)
    out.basis = <int *>cnp.PyArray_DATA(basis)
    cdef const int *sp = NULL
    if start is not None:
        sp = _idata(start)
    cdef size_t nbytes = mbdcp_lemke_workspace_size(n)
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef void *wk = cnp.PyArray_DATA(work)
    cdef MbdcpReturn rc
    cdef const double *Mp = _ptr2(M)
    cdef const double *qp = _ptr(q)
    cdef const double[::1] qm
    cdef const double *qmp = NULL
    if q_scale is not None:
        qm = q_scale
        if qm.shape[0] != n:
            raise ValueError(f"internal call: q_scale must have {n} entries, got {qm.shape[0]}")
        qmp = _ptr(qm)
    with nogil:
        rc = mbdcp_lemke_solve_scaled(n, Mp, qp, qmp, &s, sp, 0, &out, &info, wk, nbytes)
    tr, _ = _recorded(&R)
    _check(rc)
    del work
    return (z, w, <int>info.status, info.pivots, info.residual, tr, basis.astype(bool),
            ray if info.certified else None, info.refactorizations, bool(info.warm), info.worst_row)


# ---- the small solves' fast path -----------------------------------------------------------
# A small LCP's time is the Python around the C solve: argument checks, allocations, the result.
# lemke_plain takes aligned, C-contiguous float64 arrays as they are (anything else: None, and the
# caller takes the validating path), reuses one workspace per thread, and allocates only what the
# result keeps.

cdef object _THREAD = _threading.local()  # per thread: the workspace of the plain Lemke solves


cdef inline bint _plain_array(object a, int ndim):
    return (type(a) is np.ndarray and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == ndim and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>a) and cnp.PyArray_ISALIGNED(<cnp.ndarray>a))


cdef inline MbdcpMonitor _plain_monitor(Recorder *R, mbdcp_int n):
    """The monitor of a plain Lemke solve of size n: Ctrl-C only, nothing recorded (no Python)."""
    memset(R, 0, sizeof(Recorder))
    R.check_every = max(1, <long>(1e7 / (4.0 * n * n + 1.0)))
    R.signals = PyThread_get_thread_ident() == _MAIN
    cdef MbdcpMonitor m
    m.fn = _record
    m.ctx = R
    return m


cdef inline Py_ssize_t _dim(object a, int axis):
    """a.shape[axis] of an ndarray without building the shape tuple."""
    return cnp.PyArray_DIM(<cnp.ndarray>a, axis)


cdef cnp.ndarray _thread_workspace(size_t nbytes):
    """This thread's workspace of at least nbytes (grown, never shrunk)."""
    cdef cnp.ndarray work = getattr(_THREAD, "work", None)
    if work is None or <size_t>cnp.PyArray_NBYTES(work) < nbytes:
        work = np.empty(nbytes // 8 + 1)
        _THREAD.work = work
    return work


cdef object _LemkeResult = None, _StepResult = None  # the result classes, on first use (they import this module)
cdef tuple _STATUSES = None, _STATUS_MESSAGES = None  # Status and its message, by C code


cdef int _load_results() except -1:
    global _LemkeResult, _StepResult, _STATUSES, _STATUS_MESSAGES
    from mbdcp.infrastructure.results import LemkeResult, StepResult
    from mbdcp.infrastructure.status import Status
    _STATUSES = tuple(Status)
    _STATUS_MESSAGES = tuple([s.message for s in Status])
    _LemkeResult, _StepResult = LemkeResult, StepResult
    return 0


cpdef object lemke_result(z, w, int code, int pivots, double residual, basis, certificate, int worst,
                          trace=None, bint warm=False):
    """mbdcp.lemke's LemkeResult from the C solve's outputs (``code``: the C status; ``worst``: the
    worst row, named in the message of a failed point; ``trace``: the named pivots or None)."""
    if _LemkeResult is None:
        _load_results()
    status = _STATUSES[code]
    message = _STATUS_MESSAGES[code]
    if (code == MBDCP_NUMERICAL_ERROR or code == MBDCP_MAX_ITERATIONS) and worst >= 0 and residual > 0:
        message += f"; at the last point, row {worst} is violated by {residual:.3g} of its own scale"
    return _built(_LemkeResult, _LEMKE_FIELDS, (code == MBDCP_SOLVED, status, message, z, w, pivots, residual, trace,
                                                basis, certificate, warm))


cdef tuple _LEMKE_FIELDS = ("success", "status", "message", "z", "w", "pivots", "residual", "trace", "basis",
                            "certificate", "warm_started")
cdef tuple _STEP_FIELDS = ("success", "status", "message", "v_next", "p_n", "beta", "sigma", "p_b", "beta_j", "sigma_j",
                           "pivots", "residual", "lcp", "basis", "cone_slack")


cdef object _built(cls, tuple names, tuple values):
    """An instance of the frozen result dataclass cls from all its fields, without its __init__: its
    __dict__ filled in place (a small solve's result costs about as much as the solve)."""
    result = object.__new__(cls)
    cdef dict d = result.__dict__
    cdef Py_ssize_t i
    for i in range(len(names)):
        d[names[i]] = values[i]
    return result


def lemke_plain(object M, object q, int max_pivots, double tol):
    """The LemkeResult of LCP(M, q), or None when M (n x n) and q (n,) are not plain float64
    arrays or hold NaN or infinity (the validating path then names the argument)."""
    if not (_plain_array(M, 2) and _plain_array(q, 1)):
        return None
    cdef cnp.ndarray Ma = <cnp.ndarray>M, qa = <cnp.ndarray>q
    cdef mbdcp_int n = <mbdcp_int>cnp.PyArray_DIM(qa, 0)
    if cnp.PyArray_DIM(Ma, 0) != n or cnp.PyArray_DIM(Ma, 1) != n or n == 0:
        return None
    cdef MbdcpLemkeSettings s = _lemke_settings(max_pivots, tol)
    cdef Recorder R
    s.monitor = _plain_monitor(&R, n)
    cdef size_t nbytes = mbdcp_lemke_workspace_size(n)
    cdef cnp.ndarray work = _thread_workspace(nbytes + <size_t>n * (sizeof(double) + sizeof(int)))
    cdef char *base = <char *>cnp.PyArray_DATA(work)
    z, w = _empty(n, cnp.NPY_DOUBLE), _empty(n, cnp.NPY_DOUBLE)
    cdef MbdcpLemkeOutput out
    out.z = _out(z)
    out.w = _out(w)
    out.ray = <double *>(base + nbytes)
    out.basis = <int *>(base + nbytes + n * sizeof(double))
    cdef MbdcpLemkeInfo info
    cdef MbdcpReturn rc
    cdef const double *Mp = <const double *>cnp.PyArray_DATA(Ma)
    cdef const double *qp = <const double *>cnp.PyArray_DATA(qa)
    with nogil:
        rc = mbdcp_lemke_solve(n, Mp, qp, &s, NULL, &out, &info, base, nbytes)
    _recorded(&R)
    if rc == MBDCP_ERR_NONFINITE:
        return None
    _check(rc)
    basis = _bool_basis(out.basis, n)
    ray = _copy(out.ray, n) if info.certified else None
    return lemke_result(z, w, <int>info.status, info.pivots, info.residual, basis, ray, info.worst_row)


cdef cnp.ndarray _NOTHING = np.zeros(0)  # the absent outputs of a plain step (p_b, beta_j, sigma_j)
_NOTHING.setflags(write=False)


cdef inline cnp.ndarray _empty(Py_ssize_t n, int typenum):
    """np.empty(n) of a numpy type number through the C API (no Python attribute lookups or
    keywords: the small solves' outputs)."""
    cdef cnp.npy_intp dims = n
    return cnp.PyArray_EMPTY(1, &dims, typenum, 0)


cdef cnp.ndarray _bool_basis(const int *flags, Py_ssize_t n):
    """Lemke's final basis (1: z_i basic) as a bool array."""
    cdef cnp.ndarray basis = _empty(n, cnp.NPY_BOOL)
    cdef char *bp = <char *>cnp.PyArray_DATA(basis)
    cdef Py_ssize_t i
    for i in range(n):
        bp[i] = flags[i] != 0
    return basis


cdef cnp.ndarray _copy(double *x, Py_ssize_t n):
    cdef cnp.ndarray a = _empty(n, cnp.NPY_DOUBLE)
    if n:
        memcpy(cnp.PyArray_DATA(a), x, n * sizeof(double))
    return a


cdef bint _plain_step(MbdcpStepProblem *p, object M, object Wn, object D, object E, object mu, object v, double h,
                      object p_ext, object psi_n) except -1:
    """p: a step without joints or moving surfaces on these arrays (p_ext, psi_n: None or arrays);
    False when one is not a plain float64 array of its shape. Their values are the C core's to check."""
    if not (_plain_array(M, 2) and _plain_array(Wn, 2) and _plain_array(D, 2) and _plain_array(E, 2)
            and _plain_array(mu, 1) and _plain_array(v, 1) and (p_ext is None or _plain_array(p_ext, 1))
            and (psi_n is None or _plain_array(psi_n, 1))):
        return False
    memset(p, 0, sizeof(MbdcpStepProblem))
    p.n_v, p.n_c, p.m = _dim(M, 0), _dim(Wn, 1), _dim(D, 1)
    if (_dim(M, 1) != p.n_v or _dim(Wn, 0) != p.n_v or _dim(D, 0) != p.n_v or _dim(E, 0) != p.m
            or _dim(E, 1) != p.n_c or _dim(mu, 0) != p.n_c or _dim(v, 0) != p.n_v or p.n_v == 0
            or (p_ext is not None and _dim(p_ext, 0) != p.n_v) or (psi_n is not None and _dim(psi_n, 0) != p.n_c)):
        return False
    p.h = h
    p.M, p.Wn, p.D, p.E = _data(M), _data(Wn), _data(D), _data(E)
    p.mu, p.v = _data(mu), _data(v)
    p.p_ext = _data(p_ext) if p_ext is not None else NULL
    p.psi_n = _data(psi_n) if psi_n is not None else NULL
    return True


def step_plain(object M, object Wn, object D, object E, object mu, object v, double h, object p_ext, object psi_n):
    """The StepResult of one time step without joints or moving surfaces, or None when an argument
    is not a plain float64 array of its shape, or its values fail the C core's check (finite, M
    symmetric, E a grouping, mu >= 0, h > 0): the validating path then names the argument. p_ext,
    psi_n: None or arrays."""
    cdef MbdcpStepProblem p
    if not _plain_step(&p, M, Wn, D, E, mu, v, h, p_ext, psi_n):
        return None
    cdef mbdcp_int N = mbdcp_step_lcp_size(&p)
    cdef MbdcpLemkeSettings s = _lemke_settings(0, 0.0)
    cdef Recorder R
    s.monitor = _plain_monitor(&R, N)
    cdef size_t nbytes = mbdcp_step_workspace_size(&p)
    cdef cnp.ndarray work = _thread_workspace(nbytes + <size_t>N * (2 * sizeof(double) + sizeof(int)))
    cdef char *base = <char *>cnp.PyArray_DATA(work)
    v_next = _empty(p.n_v, cnp.NPY_DOUBLE)
    cdef MbdcpStepOutput out
    memset(&out, 0, sizeof(out))
    out.v_next = _out(v_next)
    out.z = <double *>(base + nbytes)
    out.w = out.z + N
    out.basis = <int *>(out.w + N)
    cdef MbdcpLemkeInfo info
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_step_solve(&p, &s, NULL, &out, &info, base, nbytes)
    _recorded(&R)
    if rc in (MBDCP_ERR_NONFINITE, MBDCP_ERR_DATA, MBDCP_ERR_NOT_POSDEF, MBDCP_ERR_SETTING, MBDCP_ERR_DIMENSION):
        return None
    _check(rc)
    basis = _bool_basis(out.basis, N)
    cdef Py_ssize_t nc = p.n_c, m = p.m
    return _plain_step_result(v_next, _copy(out.z, nc), _copy(out.z + nc, m), _copy(out.z + nc + m, nc),
                              _copy(out.w + nc + m, nc), <int>info.status, info.pivots, info.residual, basis)


cdef object _plain_step_result(v_next, p_n, beta, sigma, cone_slack, int code, int pivots, double residual, basis):
    """The StepResult of a plain step (no joints, no LCP kept)."""
    if _StepResult is None:
        _load_results()
    return _built(_StepResult, _STEP_FIELDS, (code == MBDCP_SOLVED, _STATUSES[code], _STATUS_MESSAGES[code], v_next,
                                              p_n, beta, sigma, _NOTHING, _NOTHING, _NOTHING, pivots, residual, None,
                                              basis, cone_slack))


cdef inline const double *_vector(object g, Py_ssize_t n) except? NULL:
    """The data of a vector given to step_vjp (None: NULL)."""
    if g is None:
        return NULL
    if not (_plain_array(g, 1) and _dim(g, 0) == n):
        raise ValueError(f"step_vjp's solution and cotangents are contiguous float64 vectors, got one not of length {n}")
    return _data(g)


cdef MbdcpStepVectors _step_vectors(const MbdcpStepProblem *p, tuple vectors) except *:
    """(v_next, p_n, beta, sigma) of step p as the C core takes them (None: NULL)."""
    cdef MbdcpStepVectors x
    x.v_next, x.p_n = _vector(vectors[0], p.n_v), _vector(vectors[1], p.n_c)
    x.beta, x.sigma = _vector(vectors[2], p.m), _vector(vectors[3], p.n_c)
    return x


def step_vjp(tuple step, tuple solution, tuple cotangents, tuple settings, bint want_M, bint want_Wn, bint want_D):
    """(outcome, gradients) of a plain step's reverse-mode derivative in the C core (step_vjp.h).

    step: (M, Wn, D, E, mu (n_c,), v, h, p_ext or None, psi_n or None), contiguous float64 arrays
    of a plain step; solution: (v_next, p_n, beta, sigma); cotangents: theirs, None for zero;
    settings: (degenerate_tol, geometry), the others the C core's defaults. gradients: a dict (v,
    p_ext, U, psi_n, h, and M, Wn, D if wanted) when outcome is 0 (decided), else None."""
    M, Wn, D, E, mu, v, h, p_ext, psi_n = step
    cdef MbdcpStepProblem p
    if not _plain_step(&p, M, Wn, D, E, mu, v, h, p_ext, psi_n):
        raise ValueError("step_vjp takes the contiguous float64 arrays of a plain step, of fitting shapes")
    cdef MbdcpStepVectors x = _step_vectors(&p, solution), ct = _step_vectors(&p, cotangents)
    cdef MbdcpStepVjpSettings s
    mbdcp_step_vjp_default_settings(&s)
    s.degenerate_tol, s.geometry = settings
    out = {"v": _empty(p.n_v, cnp.NPY_DOUBLE), "p_ext": _empty(p.n_v, cnp.NPY_DOUBLE),
           "U": _empty(p.n_c, cnp.NPY_DOUBLE), "psi_n": _empty(p.n_c, cnp.NPY_DOUBLE)}
    cdef MbdcpStepGradients g
    memset(&g, 0, sizeof(g))
    g.v, g.p_ext, g.mu, g.psi_n = _out(out["v"]), _out(out["p_ext"]), _out(out["U"]), _out(out["psi_n"])
    for name, wanted, shape in (("M", want_M, (p.n_v, p.n_v)), ("Wn", want_Wn, (p.n_v, p.n_c)),
                                ("D", want_D, (p.n_v, p.m))):
        if wanted:
            out[name] = np.empty(shape)
    g.M = _out(out["M"]) if want_M else NULL
    g.Wn = _out(out["Wn"]) if want_Wn else NULL
    g.D = _out(out["D"]) if want_D else NULL
    cdef size_t nbytes = mbdcp_step_vjp_workspace_size(p.n_v, p.n_c, p.m)
    cdef cnp.ndarray work = _thread_workspace(nbytes)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef MbdcpStepVjpOutcome outcome
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_step_vjp(&p, &x, &ct, &s, &g, &outcome, wp, nbytes)
    _check(rc)
    if outcome != MBDCP_VJP_DECIDED:
        return <int>outcome, None
    out["h"] = g.h
    return 0, out


def lcp_verify(const double[:, ::1] M, const double[::1] q, const double[::1] z, double tol):
    """True when z passes the componentwise verification of LCP(M, q) (lemke.h)."""
    cdef mbdcp_int n = q.shape[0]
    _same_lcp(M, q, z)
    if n == 0:
        return True
    w = np.empty(n)
    s = np.empty(n)
    cdef int ok
    cdef const double *Mp = &M[0, 0]
    cdef const double *qp = &q[0]
    cdef const double *zp = &z[0]
    cdef double *wp = _out(w)
    cdef double *sp = _out(s)
    with nogil:
        ok = mbdcp_lcp_verify(n, Mp, qp, zp, tol, wp, sp)
    return ok != 0


cdef int _same_lcp(const double[:, ::1] M, const double[::1] q, const double[::1] z) except -1:
    cdef Py_ssize_t n = q.shape[0]
    if M.shape[0] != n or M.shape[1] != n or z.shape[0] != n:
        raise ValueError(f"internal call: M ({M.shape[0]} x {M.shape[1]}), q ({n}) and z ({z.shape[0]}) must agree")
    return 0


def lcp_residual(const double[:, ::1] M, const double[::1] q, const double[::1] z):
    cdef mbdcp_int n = q.shape[0]
    _same_lcp(M, q, z)
    cdef double r
    if n == 0:
        return 0.0
    cdef const double *Mp = &M[0, 0]
    cdef const double *qp = &q[0]
    cdef const double *zp = &z[0]
    with nogil:
        r = mbdcp_lcp_residual(n, Mp, qp, zp, NULL)
    return r


cdef const double *_data(cnp.ndarray a) except? NULL:
    """Data pointer of a C-contiguous float64 array (NULL when empty); memoryviews cost
    ~0.4 us each, too much for a per-step call with twenty arguments."""
    if (cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or not cnp.PyArray_IS_C_CONTIGUOUS(a)
            or not cnp.PyArray_ISNOTSWAPPED(a) or not cnp.PyArray_ISALIGNED(a)):
        raise TypeError("internal: expected an aligned, native, C-contiguous float64 array")
    if cnp.PyArray_SIZE(a) == 0:
        return NULL
    return <const double *>cnp.PyArray_DATA(a)


cdef MbdcpStepProblem _problem(object P) except *:
    """The C view of a StepProblem (mbdcp.infrastructure.problem), read by field name; every count
    and length checked against the arrays."""
    cdef MbdcpStepProblem p
    cdef cnp.ndarray M = P.M, Wn = P.Wn, D = P.D, E = P.E, mu = P.mu, v = P.v, p_ext = P.p_ext
    cdef cnp.ndarray psi_n = P.psi_n, dpsi_n = P.dpsi_n, dpsi_f = P.dpsi_f, Wb = P.Wb, theta = P.theta
    cdef cnp.ndarray dtheta = P.dtheta, Dj = P.Dj, Ej = P.Ej, beta_max = P.beta_max
    _f(M, "M", (-1, -1))
    cdef Py_ssize_t n_v = M.shape[0]
    _f(Wn, "Wn", (n_v, -1))
    _f(D, "D", (n_v, -1))
    _f(Wb, "Wb", (n_v, -1), True)
    _f(Dj, "Dj", (n_v, -1), True)
    cdef Py_ssize_t n_c = Wn.shape[1], m = D.shape[1]
    cdef Py_ssize_t n_b = Wb.shape[1] if Wb.size else 0, m_j = Dj.shape[1] if Dj.size else 0
    _f(Ej, "Ej", (m_j, -1), True)
    cdef Py_ssize_t n_j = Ej.shape[1] if Ej.size else 0
    for a, name, shape, optional in ((M, "M", (n_v, n_v), False), (E, "E", (m, n_c), m == 0), (mu, "mu", (n_c,), n_c == 0),
                                     (v, "v", (n_v,), False), (p_ext, "p_ext", (n_v,), True),
                                     (psi_n, "psi_n", (n_c,), True), (dpsi_n, "dpsi_n", (n_c,), True),
                                     (dpsi_f, "dpsi_f", (m,), True), (theta, "theta", (n_b,), True),
                                     (dtheta, "dtheta", (n_b,), True), (beta_max, "beta_max", (n_j,), True)):
        _f(a, name, shape, optional)
    p.n_v = n_v
    p.n_c = n_c
    p.m = m
    p.n_b = n_b
    p.m_j = m_j
    p.n_j = n_j
    p.h = P.h
    p.M = _data(M)
    p.Wn = _data(Wn)
    p.D = _data(D)
    p.E = _data(E)
    p.mu = _data(mu)
    p.v = _data(v)
    p.p_ext = _data(p_ext)
    p.psi_n = _data(psi_n)
    p.dpsi_n = _data(dpsi_n)
    p.dpsi_f = _data(dpsi_f)
    p.Wb = _data(Wb)
    p.theta = _data(theta)
    p.dtheta = _data(dtheta)
    p.Dj = _data(Dj)
    p.Ej = _data(Ej)
    p.beta_max = _data(beta_max)
    return p


cdef class _Outputs:
    """The output arrays of one C call, carved back to back from one zeroed buffer that holds
    nothing else: ``ptr(k)`` is array k's data for the C side, ``views()`` the arrays for the
    results."""
    cdef cnp.ndarray buf
    cdef list offsets

    def __cinit__(self, sizes):
        cdef Py_ssize_t total = 0
        self.offsets = [0]
        for size in sizes:
            total += size
            self.offsets.append(total)
        self.buf = np.zeros(total)

    cdef double *ptr(self, int k):
        return <double *>cnp.PyArray_DATA(self.buf) + <Py_ssize_t>self.offsets[k]

    def views(self):
        cdef Py_ssize_t k, n = len(self.offsets) - 1
        return [self.buf[self.offsets[k]:self.offsets[k + 1]] for k in range(n)]


cdef tuple _lcp_arrays(Py_ssize_t N, bint return_lcp):
    """(F, f): the LCP a step solved, zeroed (N x N and N), when asked for; else (None, None)."""
    if not return_lcp:
        return None, None
    return np.zeros((N, N)), np.zeros(N)


cdef inline double *_ptr_or_null(a):
    return <double *>cnp.PyArray_DATA(a) if a is not None and cnp.PyArray_SIZE(a) else NULL


cdef _Outputs _step_buffers(MbdcpStepOutput *out, Py_ssize_t n_v, Py_ssize_t n_b, Py_ssize_t N, F, f):
    """The outputs v_next, p_b, z, w of a step or relaxation (and F, f when given)."""
    cdef _Outputs o = _Outputs((n_v, n_b, N, N))
    out.v_next = o.ptr(0)
    out.p_b = o.ptr(1) if n_b else NULL
    out.z = o.ptr(2) if N else NULL
    out.w = o.ptr(3) if N else NULL
    out.F = _ptr_or_null(F)
    out.f = _ptr_or_null(f)
    out.basis = NULL
    return o


cdef tuple _step_results(_Outputs o, F, f, MbdcpLemkeInfo info):
    """(v_next, p_b, z, w, F, f, status, pivots, residual) from the outputs of _step_buffers."""
    return tuple(o.views()) + (F, f, <int>info.status, info.pivots, info.residual)


cdef int _not_modelled(MbdcpStepProblem p) except -1:
    """The relaxations model no moving surfaces and no joint friction."""
    if p.dpsi_n != NULL or p.dpsi_f != NULL or p.m_j or p.n_j:
        raise ValueError("internal call: the relaxations take no dpsi_n, dpsi_f or joint friction")
    return 0


def step(object problem, int max_pivots, double tol, bint return_lcp, start=None):
    """(v_next, p_b, z, w, F, f, status, pivots, residual, basis) of a StepProblem; start: None or
    an int32 array of N warm-start flags."""
    cdef MbdcpStepProblem p = _problem(problem)
    cdef MbdcpLemkeSettings s = _lemke_settings(max_pivots, tol)
    cdef MbdcpLemkeInfo info
    cdef mbdcp_int N = mbdcp_step_lcp_size(&p)
    cdef Recorder R
    s.monitor = _monitor(&R, 4.0 * N * N, False, False)
    cdef size_t nbytes = mbdcp_step_workspace_size(&p)
    cdef MbdcpStepOutput out
    F, f = _lcp_arrays(N, return_lcp)
    cdef _Outputs o = _step_buffers(&out, p.n_v, p.n_b, N, F, f)
    cdef cnp.ndarray basis = np.zeros(N, dtype=np.intc)
    out.basis = <int *>cnp.PyArray_DATA(basis) if N else NULL
    if start is not None:
        _i(start, "start", (N,))
    cdef const int *sp = _idata(start) if start is not None and N else NULL
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_step_solve(&p, &s, sp, &out, &info, wp, nbytes)
    _recorded(&R)
    _check(rc)
    return _step_results(o, F, f, info) + (basis.astype(bool),)
