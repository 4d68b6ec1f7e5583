# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin wrappers over the mbdcp C core, one extension module: the shared helpers here, the wrappers
of each family of the core in the ``_core_*.pxi`` files included at the end.

Every function takes C-contiguous float64 arrays that the public layer
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
VJP_NORM_FLOOR = MBDCP_VJP_NORM_FLOOR
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
    cdef MbdcpStepVjpSettings vs
    mbdcp_lemke_default_settings(&ls)
    mbdcp_fixed_point_default_settings(&fs)
    mbdcp_ccp_default_settings(&cs)
    mbdcp_fc_default_settings(&qs)
    mbdcp_step_vjp_default_settings(&vs)
    return {
        "lemke": {"tol": ls.tol, "pivot_tol": ls.pivot_tol, "refine": ls.refine},
        "fixed_point": {"algorithm": fs.algorithm, "tol": fs.tol, "max_iter": fs.max_iter},
        "ccp": {"tol": cs.tol, "max_iter": cs.max_iter},
        "fc": {"tol": qs.tol, "max_iter": qs.max_iter, "inner_max_iter": qs.inner_max_iter,
               "outer_max_iter": MBDCP_FC_OUTER_MAX_ITER},
        # the step derivative's thresholds, also the defaults of mbdcp.derivatives
        "step_vjp": {"degenerate_tol": vs.degenerate_tol, "rcond_min": vs.rcond_min, "opposite_rtol": vs.opposite_rtol},
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


# ---- the wrappers, one file per family of the C core ---------------------------------------
include "_core_lemke.pxi"
include "_core_relax.pxi"
include "_core_full_rank.pxi"
include "_core_ccp.pxi"
include "_core_contacts.pxi"
include "_core_checks.pxi"
include "_core_coulomb.pxi"
include "_core_batch.pxi"
