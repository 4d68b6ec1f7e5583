# Included by _core.pyx (one extension module): the full-rank friction LCP (full_rank.h).


def full_rank_step(cnp.ndarray M, cnp.ndarray Wn, cnp.ndarray Wt, cnp.ndarray mu, cnp.ndarray v,
                   double h, int n_d, double rho, cnp.ndarray p_ext, cnp.ndarray psi_n, bint return_lcp,
                   double compliance=-1.0, int max_pivots=0, double tol=0.0):
    """(v_next, p_t, z, w, F, f, rho_used, status, pivots, residual, compliance_used)."""
    _f(M, "M", (-1, -1))
    _f(Wn, "Wn", (M.shape[0], -1))
    cdef Py_ssize_t nv_ = M.shape[0], nc_ = Wn.shape[1]
    for a, name, shape, optional in ((M, "M", (nv_, nv_), False), (Wt, "Wt", (nv_, 2 * nc_), nc_ == 0),
                                     (mu, "mu", (nc_,), nc_ == 0), (v, "v", (nv_,), False),
                                     (p_ext, "p_ext", (nv_,), True), (psi_n, "psi_n", (nc_,), True)):
        _f(a, name, shape, optional)
    cdef MbdcpFullRankProblem p
    p.n_v = M.shape[0]
    p.n_c = Wn.shape[1]
    p.n_d = n_d
    p.h = h
    p.M = _data(M)
    p.Wn = _data(Wn)
    p.Wt = _data(Wt)
    p.mu = _data(mu)
    p.v = _data(v)
    p.p_ext = _data(p_ext)
    p.psi_n = _data(psi_n)
    p.rho = rho
    p.compliance = compliance
    cdef MbdcpLemkeSettings s = _lemke_settings(max_pivots, tol)
    cdef MbdcpLemkeInfo info
    cdef mbdcp_int N = mbdcp_full_rank_lcp_size(&p)
    cdef Recorder R
    s.monitor = _monitor(&R, 4.0 * N * N, False, False)
    cdef size_t nbytes = mbdcp_full_rank_workspace_size(&p)
    cdef _Outputs o = _Outputs((p.n_v, 2 * p.n_c, N, N))
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef MbdcpFullRankOutput out
    out.v_next = o.ptr(0)
    out.p_t = o.ptr(1)
    out.z = o.ptr(2)
    out.w = o.ptr(3)
    F, f = _lcp_arrays(N, return_lcp)
    out.F = _ptr_or_null(F)
    out.f = _ptr_or_null(f)
    out.compliance_used = 0.0
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_full_rank_step(&p, &s, &out, &info, wp, nbytes)
    _recorded(&R)
    _check(rc)
    return tuple(o.views()) + (F, f, out.rho_used, <int>info.status, info.pivots, info.residual,
                               out.compliance_used)


# name -> value of each CCP method, in the order of their values (ccp.h's MBDCP_CCP_METHOD_LIST)
CCP_METHODS = {mbdcp_ccp_method_name(<MbdcpCcpMethod>i).decode(): i for i in range(MBDCP_CCP_METHOD_COUNT)}
_CCP_METHOD_NAMES = tuple(CCP_METHODS)
_CCP_CERTIFICATES = {MBDCP_CCP_NO_CERTIFICATE: None, MBDCP_CCP_CERT_DIRECTION: "direction", MBDCP_CCP_DIVERGED: "diverged"}
