# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin wrappers over the mbdcp C core.

Every function here takes C-contiguous float64 arrays that the public layer
(``mbdcp/*.py``) has already validated, calls the C core with the GIL released,
and returns plain values; the public layer builds the result objects.
"""
import numpy as np
cimport numpy as cnp

from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pythread cimport PyThread_get_thread_ident

from mbdcp.infrastructure._core cimport *

cdef extern from "Python.h":
    int PyErr_CheckSignals()  # declared without `except`: a raised KeyboardInterrupt stays pending
    void *PyErr_Occurred()

cnp.import_array()

SOLVED = MBDCP_SOLVED
RAY_TERMINATION = MBDCP_RAY_TERMINATION
MAX_ITERATIONS = MBDCP_MAX_ITERATIONS
NUMERICAL_ERROR = MBDCP_NUMERICAL_ERROR
INTERRUPTED = MBDCP_INTERRUPTED

ERR_NOT_POSDEF = MBDCP_ERR_NOT_POSDEF
ERR_RANK_DEFICIENT = MBDCP_ERR_RANK_DEFICIENT
ERR_DATA = MBDCP_ERR_DATA
ERR_NONFINITE = MBDCP_ERR_NONFINITE

SYMMETRY_RTOL = MBDCP_SYMMETRY_RTOL
# the step derivative's rank decisions (step_vjp.h), for mbdcp.derivatives.step and the JAX rule
VJP_RANK_CUT = MBDCP_VJP_RANK_CUT
VJP_TIE = MBDCP_VJP_TIE
VJP_MARGIN = MBDCP_VJP_MARGIN


class CoreError(ValueError):
    """A C call rejected its arguments; ``code`` is the MbdcpReturn value."""

    def __init__(self, int code, str message):
        super().__init__(message)
        self.code = code


def status_message(int status):
    return mbdcp_status_message(<MbdcpStatus>status).decode()


cdef inline void _check(MbdcpReturn rc) except *:
    if rc != MBDCP_OK:
        raise CoreError(rc, mbdcp_return_message(rc).decode())


cdef inline const double *_ptr(const double[::1] a):
    return &a[0] if a is not None and a.shape[0] > 0 else NULL


cdef inline const double *_ptr2(const double[:, ::1] a):
    return &a[0, 0] if a is not None and a.shape[0] > 0 and a.shape[1] > 0 else NULL


cdef inline double *_out(cnp.ndarray a):
    """The data of an output array this wrapper allocated (float64, C-contiguous)."""
    return <double *>cnp.PyArray_DATA(a)


cdef enum:
    _LINE = 128  # bytes: a cache line, or two (adjacent-line prefetch)


cdef inline cnp.ndarray _workspace(size_t nbytes):
    """One solver's workspace of nbytes, aligned for doubles."""
    return np.empty(nbytes // 8 + 1)


cdef inline cnp.ndarray _part_workspace(size_t nbytes):
    """The workspace of a batch part (nbytes from _on_lines): the parts run side by side on threads,
    and a workspace sharing a cache line with another's slows both (false sharing)."""
    return _workspace(nbytes + 2 * _LINE)


cdef inline void *_on_lines(cnp.ndarray work):
    """The first cache-line boundary inside a _part_workspace: its nbytes share no line with others."""
    return <void *>((<size_t>cnp.PyArray_DATA(work) + _LINE) & ~(<size_t>_LINE - 1))


# ---- the shapes of what the wrappers pass to C -----------------------------------------------
# The public layer validates its arguments; these wrappers are reachable from Python too, so each
# one also checks every count and length it passes on: a wrong call raises, never reads out of
# bounds. -1 stands for any length.

cdef int _array(object a, str name, int typenum, tuple shape, bint optional) except -1:
    if not isinstance(a, np.ndarray):
        raise TypeError(f"internal call: {name} must be an ndarray, got {type(a).__name__}")
    cdef cnp.ndarray x = <cnp.ndarray>a
    if optional and cnp.PyArray_SIZE(x) == 0:
        return 0
    cdef int ndim = len(shape), k
    cdef bint ok = (cnp.PyArray_TYPE(x) == typenum and cnp.PyArray_IS_C_CONTIGUOUS(x) and cnp.PyArray_ISNOTSWAPPED(x)
                    and cnp.PyArray_ISALIGNED(x) and cnp.PyArray_NDIM(x) == ndim)
    for k in range(ndim if ok else 0):  # C-level comparisons: this runs on every call of a step
        want = <Py_ssize_t>shape[k]
        if want >= 0 and cnp.PyArray_DIM(x, k) != want:
            ok = False
    if ok:
        return 0
    if cnp.PyArray_TYPE(x) != typenum or not cnp.PyArray_IS_C_CONTIGUOUS(x) or not cnp.PyArray_ISNOTSWAPPED(x) \
            or not cnp.PyArray_ISALIGNED(x):
        raise TypeError(f"internal call: {name} must be an aligned, native, C-contiguous "
                        f"{'float64' if typenum == cnp.NPY_DOUBLE else 'int32'} array")
    raise ValueError(f"internal call: {name} must have shape {tuple('any' if d < 0 else d for d in shape)}, "
                     f"got {np.shape(a)}")


cdef inline int _f(object a, str name, tuple shape, bint optional=False) except -1:
    return _array(a, name, cnp.NPY_DOUBLE, shape, optional)


cdef inline int _i(object a, str name, tuple shape, bint optional=False) except -1:
    return _array(a, name, cnp.NPY_INT, shape, optional)


cdef int _compressed(object ptr, object ind, object val, str name, Py_ssize_t n_outer, Py_ssize_t n_inner) except -1:
    """A compressed sparse matrix (CSC or CSR) whose pointers, indices and values agree."""
    _i(ptr, name + " pointers", (n_outer + 1,))
    cdef const int *p = <const int *>cnp.PyArray_DATA(<cnp.ndarray>ptr)
    cdef Py_ssize_t k
    if p[0] != 0:
        raise ValueError(f"internal call: {name} pointers must start at 0")
    for k in range(n_outer):
        if p[k + 1] < p[k]:
            raise ValueError(f"internal call: {name} pointers must not decrease")
    _i(ind, name + " indices", (p[n_outer],), p[n_outer] == 0)
    _f(val, name + " values", (p[n_outer],), p[n_outer] == 0)
    cdef const int *q = <const int *>cnp.PyArray_DATA(<cnp.ndarray>ind)
    for k in range(p[n_outer]):
        if q[k] < 0 or q[k] >= n_inner:
            raise ValueError(f"internal call: {name} index {q[k]} outside [0, {n_inner})")
    return 0


# ---- monitor: pivot traces and residual histories of any length, and Ctrl-C ---------------

cdef struct Recorder:
    long check_every     # look for a pending signal (Ctrl-C) every so many calls
    long count           # calls since the last look
    int interrupted
    int signals          # called on the main thread: look for signals (other threads cannot see them)
    const int *stop      # NULL, or a flag another thread sets to stop this solve (batch parts)
    int keep_pairs       # record (entering, leaving) of pivots (calls with entering >= 0)
    int keep_values      # record the value of iterations (calls with entering < 0)
    int nomem
    int *pairs
    double *values
    Py_ssize_t n_pairs, cap_pairs, n_values, cap_values


cdef inline int _poll(Recorder *R) noexcept nogil:
    """1 if the solve must stop: interrupted already, stopped by another thread, or Ctrl-C pending."""
    if R.interrupted or (R.stop != NULL and R.stop[0]):
        R.interrupted = 1
        return 1
    R.count += 1
    if R.signals and R.count >= R.check_every:  # a count, not a modulo: this runs at every pivot
        R.count = 0
        with gil:
            if PyErr_CheckSignals() != 0:
                R.interrupted = 1
                return 1
    return 0


cdef int _record(void *ctx, mbdcp_int it, mbdcp_int a, mbdcp_int b, double value) noexcept nogil:
    cdef Recorder *R = <Recorder *>ctx
    cdef void *p
    if R.keep_pairs and a >= 0:
        if R.n_pairs == R.cap_pairs:
            p = realloc(R.pairs, 2 * (2 * R.cap_pairs + 64) * sizeof(int))
            if p == NULL:
                R.nomem = 1
                return 1
            R.pairs = <int *>p
            R.cap_pairs = 2 * R.cap_pairs + 64
        R.pairs[2 * R.n_pairs] = a
        R.pairs[2 * R.n_pairs + 1] = b
        R.n_pairs += 1
    if R.keep_values and a < 0:
        if R.n_values == R.cap_values:
            p = realloc(R.values, (2 * R.cap_values + 64) * sizeof(double))
            if p == NULL:
                R.nomem = 1
                return 1
            R.values = <double *>p
            R.cap_values = 2 * R.cap_values + 64
        R.values[R.n_values] = value
        R.n_values += 1
    return _poll(R)


import threading as _threading

cdef unsigned long _MAIN = _threading.main_thread().ident  # signals reach this thread only


cdef MbdcpMonitor _monitor(Recorder *R, double cost, bint pairs, bint values, stop=None) except *:
    """A monitor that records what is asked and looks for Ctrl-C about every 1e7 flops (``cost``:
    flops per call) on the main thread; ``stop``: None or an int32 array whose first entry another
    thread sets to stop the solve."""
    memset(R, 0, sizeof(Recorder))
    R.check_every = max(1, <long>(1e7 / max(cost, 1.0)))
    R.keep_pairs = pairs
    R.keep_values = values
    R.signals = PyThread_get_thread_ident() == _MAIN
    if stop is not None:
        _i(stop, "stop", (1,))
        R.stop = <const int *>cnp.PyArray_DATA(<cnp.ndarray>stop)
    cdef MbdcpMonitor m
    m.fn = _record
    m.ctx = R
    return m


cdef int _reraise() except -1:
    return -1  # the exception PyErr_CheckSignals raised is pending


cdef tuple _recorded(Recorder *R):
    """(pairs (k, 2) int array or None, values (k,) array or None); frees the buffers and raises
    what interrupted the solver."""
    pairs = values = None
    try:
        if R.interrupted:
            if PyErr_Occurred() != NULL:
                _reraise()
            raise KeyboardInterrupt
        if R.nomem:
            raise MemoryError("no memory left for the solver's trace or history")
        if R.keep_pairs:
            pairs = np.empty((R.n_pairs, 2), dtype=np.intc)
            if R.n_pairs:
                memcpy(<void *>cnp.PyArray_DATA(pairs), R.pairs, 2 * R.n_pairs * sizeof(int))
        if R.keep_values:
            values = np.empty(R.n_values)
            if R.n_values:
                memcpy(<void *>cnp.PyArray_DATA(values), R.values, R.n_values * sizeof(double))
    finally:
        free(R.pairs)
        free(R.values)
        R.pairs = NULL
        R.values = NULL
    return pairs, values


cdef dict _defaults():
    """The C core's default settings, the one source of every default the Python layer shows."""
    cdef MbdcpLemkeSettings ls
    cdef MbdcpFixedPointSettings fs
    cdef MbdcpCcpSettings cs
    cdef MbdcpFcSettings qs
    mbdcp_lemke_default_settings(&ls)
    mbdcp_fixed_point_default_settings(&fs)
    mbdcp_ccp_default_settings(&cs)
    mbdcp_fc_default_settings(&qs)
    return {
        "lemke": {"tol": ls.tol, "pivot_tol": ls.pivot_tol, "refine": ls.refine},
        "fixed_point": {"algorithm": fs.algorithm, "tol": fs.tol, "max_iter": fs.max_iter},
        "ccp": {"tol": cs.tol, "max_iter": cs.max_iter},
        "fc": {"tol": qs.tol, "max_iter": qs.max_iter, "inner_max_iter": qs.inner_max_iter,
               "outer_max_iter": MBDCP_FC_OUTER_MAX_ITER},
    }


DEFAULTS = _defaults()


cdef MbdcpLemkeSettings _lemke_settings(int max_pivots, double tol) except *:
    cdef MbdcpLemkeSettings s
    cdef const char *msg = NULL
    mbdcp_lemke_default_settings(&s)
    s.max_pivots = max_pivots
    if tol > 0:
        s.tol = tol
    if mbdcp_lemke_check_settings(&s, &msg) != MBDCP_OK:
        raise ValueError(msg.decode())
    return s


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
    settings: (degenerate_tol, rcond_min, opposite_rtol, geometry). gradients: a dict (v, p_ext, U,
    psi_n, h, and M, Wn, D if wanted) when outcome is 0 (decided), else None."""
    M, Wn, D, E, mu, v, h, p_ext, psi_n = step
    cdef MbdcpStepProblem p
    if not _plain_step(&p, M, Wn, D, E, mu, v, h, p_ext, psi_n):
        raise ValueError("step_vjp takes the contiguous float64 arrays of a plain step, of fitting shapes")
    cdef MbdcpStepVectors x = _step_vectors(&p, solution), ct = _step_vectors(&p, cotangents)
    cdef MbdcpStepVjpSettings s
    s.degenerate_tol, s.rcond_min, s.opposite_rtol, s.geometry = settings
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


cdef tuple _ccp_run(MbdcpCcpProblem *pr, MbdcpCcpSettings *s, cnp.ndarray nu, cnp.ndarray u, double cost):
    """(history, info) of one mbdcp_ccp_solve from nu (when s.warm_start) into nu, u."""
    cdef Recorder R
    cdef const char *msg = NULL
    s.monitor = _monitor(&R, cost, False, True)
    if mbdcp_ccp_check_settings(s, &msg) != MBDCP_OK:
        raise ValueError(msg.decode())
    cdef MbdcpCcpInfo info
    cdef size_t nbytes = mbdcp_ccp_solve_workspace_size(pr, s)
    cdef cnp.ndarray work = _workspace(nbytes)
    cdef void *wp = cnp.PyArray_DATA(work)
    cdef double *nup = _out(nu)
    cdef double *up = _out(u)
    cdef MbdcpReturn rc
    with nogil:
        rc = mbdcp_ccp_solve(pr, s, nup, up, &info, wp, nbytes)
    _, hist = _recorded(&R)
    _check(rc)
    return hist, info


def ccp(int n_v, int n_c, int n_b, cnp.ndarray P_ptr, cnp.ndarray P_ind, cnp.ndarray P_val,
        cnp.ndarray Q_ptr, cnp.ndarray Q_ind, cnp.ndarray Q_val, cnp.ndarray mu, cnp.ndarray p,
        method, double tol, int max_iter, double omega, cnp.ndarray nu0, M=None, int budget=0):
    """(nu, u, history, status, iterations, residual, polished, finished, certificate, budget); nu0 is
    None or the warm start; method a key of CCP_METHODS (any str, np.str_ included); M (ipm, auto):
    (indptr, indices, data) of M in CSC, both triangles, a function that returns them (called only
    if the interior-point method runs), or None. auto with budget > 0 (an earlier like problem's,
    see mbdcp_ccp_auto_budget) runs APGD for that many iterations and analyses the pattern only if
    it has not converged, then continues as auto would (ipm from APGD's point); the budget returned
    is the one given, or the one this pattern's analysis gives (0 or less: none)."""
    if n_v < 1 or n_c < 0 or n_b < 0:
        raise ValueError(f"internal call: n_v = {n_v}, n_c = {n_c}, n_b = {n_b} out of range")
    cdef Py_ssize_t cols = 3 * <Py_ssize_t>n_c + n_b
    _compressed(P_ptr, P_ind, P_val, "P", cols, n_v)
    _compressed(Q_ptr, Q_ind, Q_val, "Q", cols, n_v)
    _f(mu, "mu", (n_c,), n_c == 0)
    _f(p, "p", (cols,), cols == 0)
    if nu0 is not None and np.shape(nu0) != (cols,):
        raise ValueError(f"internal call: nu0 must have shape ({cols},), got {np.shape(nu0)}")
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
    cdef bint lazy = M is not None and s.method == MBDCP_CCP_AUTO and budget > 0
    if M is not None and s.method in (MBDCP_CCP_IPM, MBDCP_CCP_AUTO) and not lazy:
        M = _analyse(&pr, &s, M, n_v)
        budget = mbdcp_ccp_auto_budget(&pr, &s)
    elif lazy:  # APGD alone for the budget: the pattern is analysed only if it does not converge
        s.method = MBDCP_CCP_APGD
        s.max_iter = min(budget, max_iter)
    cost = 20.0 * (P_val.shape[0] + Q_val.shape[0]) + 1.0
    nu = np.zeros(cols) if nu0 is None else np.array(nu0, dtype=np.float64)
    u = np.zeros(n_v)
    hist, info = _ccp_run(&pr, &s, nu, u, cost)
    if lazy and info["status"] not in (MBDCP_SOLVED, MBDCP_INTERRUPTED) and info["iterations"] < max_iter:
        done = info["iterations"]
        M = _analyse(&pr, &s, M, n_v)
        s.method = MBDCP_CCP_IPM  # what auto does after its budget: the interior-point method from APGD's point
        s.warm_start = 1
        s.max_iter = max_iter - done
        more, info = _ccp_run(&pr, &s, nu, u, cost)
        hist = np.concatenate((hist, more))
        info["iterations"] += done
    return (nu, u, hist, <int>info["status"], info["iterations"], info["residual"], bool(info["polished"]),
            _CCP_METHOD_NAMES[<int>info["finished"]], _CCP_CERTIFICATES[<int>info["certificate"]], budget)


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


# ---------------------------------------------------------------- batches (batch.h)

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
