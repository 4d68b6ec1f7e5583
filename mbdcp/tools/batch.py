"""Many problems of one shape at once: batched Lemke solves and time steps.

Each instance is solved by the same C routine as a single call (:func:`mbdcp.lemke`,
:func:`mbdcp.step`), so the results are bit for bit those of one-by-one solves, with the same
verified-success rule per instance. The loop over instances runs in C with the GIL released;
a batch is split into contiguous parts solved on threads (one workspace each).
"""
import os
import re
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Optional

import numpy as np

from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.deprecated import renamed
from mbdcp.infrastructure.problem import StepProblem, overflow_error, step_data
from mbdcp.infrastructure.results import LemkeResult, StepResult
from mbdcp.infrastructure.status import Status

__all__ = ["lemke", "step", "BatchLemkeResult", "BatchStepResult"]

_STATUS = tuple(Status)
_MIN_PART = 16  # instances per thread below which a thread costs more than it saves


def _threads(threads, B):
    if threads is None:
        try:
            threads = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            threads = os.cpu_count() or 1
    else:
        threads = val.positive_int("threads", threads, allow_none=False)
    return max(1, min(threads, B // _MIN_PART))


def _parts(B, k):
    """k contiguous (first, count) parts of range(B), sizes differing by at most one."""
    edges = np.linspace(0, B, k + 1).astype(int)
    return [(int(a), int(b - a)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _run(fn, B, threads):
    """fn(first, count, stop) over the parts: the last part on the calling thread, the others on the
    pool's threads (one hand-off fewer than a pool running every part while the caller waits).
    Ctrl-C reaches only the main thread: its own part stops, it sets ``stop``, which the other
    parts' C loops poll, waits for them to end and raises; no thread keeps running."""
    parts = _parts(B, _threads(threads, B))
    if len(parts) <= 1:
        return [fn(*part, None) for part in parts]
    stop = np.zeros(1, dtype=np.intc)
    futures = [_pool(len(parts) - 1).submit(fn, first, count, stop) for first, count in parts[:-1]]
    last = error = None
    try:
        try:
            last = fn(*parts[-1], stop)
        except Exception as e:  # raised after the other parts' errors: theirs name earlier instances
            error = e
        while wait(futures, timeout=0.05).not_done:  # a short wait: the main thread sees Ctrl-C
            pass
    except BaseException:
        stop[0] = 1
        wait(futures)
        raise
    results = [f.result() for f in futures]
    if error is not None:
        raise error
    return results + [last]


_POOL = []  # one thread pool, kept: starting threads per call costs more than a small batch


def _pool(k):
    if not _POOL or _POOL[0]._max_workers < k:
        if _POOL:
            _POOL.pop().shutdown(wait=False)
        _POOL.append(ThreadPoolExecutor(max_workers=k, thread_name_prefix="mbdcp-batch"))
    return _POOL[0]


class _Batch:
    """Shared behaviour of the batch results: length, per-instance results, a summary."""

    def __len__(self):
        return len(self.status)

    @property
    def statuses(self):
        """The status of every instance as :class:`mbdcp.Status` members."""
        return [_STATUS[s] for s in self.status]

    def counts(self):
        """How many instances ended in each status, e.g. ``{'SOLVED': 998, 'RAY_TERMINATION': 2}``."""
        codes, counts = np.unique(self.status, return_counts=True)
        return {_STATUS[c].name: int(k) for c, k in zip(codes, counts)}

    def __repr__(self):
        return f"{type(self).__name__}({len(self)} instances: {self.counts()})"


@dataclass(frozen=True, repr=False)
class BatchLemkeResult(_Batch):
    """Results of :func:`mbdcp.batch.lemke`, row i for instance i.

    Attributes
    ----------
    z, w : ndarray, shape (B, n)
        The solutions and :math:`w = M z + q` (on a failure, the last basic point reached).
    status : ndarray of int32, shape (B,)
        :class:`mbdcp.Status` codes (``statuses`` gives the members).
    success : ndarray of bool, shape (B,)
        True where the instance is SOLVED (verified componentwise, as :func:`mbdcp.lemke`).
    pivots : ndarray of int32, shape (B,)
    residual : ndarray, shape (B,)
        The worst row's ratio per instance (see :class:`mbdcp.LemkeResult`).
    basis : ndarray of bool, shape (B, n)
        Lemke's final basis per instance (True where :math:`z_i` is basic).
    """

    z: np.ndarray
    w: np.ndarray
    status: np.ndarray
    success: np.ndarray
    pivots: np.ndarray
    residual: np.ndarray
    basis: np.ndarray

    def __getitem__(self, i):
        """Instance i as a :class:`mbdcp.LemkeResult`."""
        i = _instance(i, len(self.status))
        s = _STATUS[self.status[i]]
        return LemkeResult(success=s == Status.SOLVED, status=s, message=s.message, z=self.z[i].copy(),
                           w=self.w[i].copy(), pivots=int(self.pivots[i]), residual=float(self.residual[i]),
                           basis=self.basis[i].copy())


def _instance(i, B):
    """The index i of one of B instances (negative from the end), checked."""
    i = val.integer("i", i)
    if not -B <= i < B:
        raise IndexError(f"instance index i = {i} is out of range for a batch of B = {B}")
    return i % B


@renamed(max_pivots="max_iter")
def lemke(Ms, qs, *, max_iter=None, tol=None, threads=None):
    r"""Solve B linear complementarity problems LCP(M_i, q_i) of size n by Lemke's method.

    For each instance find :math:`z_i \ge 0` with :math:`w_i = M_i z_i + q_i \ge 0` and
    :math:`z_i^T w_i = 0`, exactly as :func:`mbdcp.lemke` would (same pivoting, same
    componentwise verification, bit-identical results), in one C loop with the GIL released,
    split over ``threads`` threads. One instance on a ray or at the pivot limit is reported in
    its own ``status``; it does not stop the others.

    Parameters
    ----------
    Ms : array_like, shape (B, n, n) or (n, n)
        The matrices; a single (n, n) matrix is shared by every instance.
    qs : array_like, shape (B, n)
    max_iter : int, optional
        Pivot limit per instance (default ``100 * (n + 1)``; ``max_pivots`` is its deprecated name).
    tol : float, optional
        Relative verification tolerance (default 1e-9).
    threads : int, optional
        Threads to split the batch over (default: the cores this process may use; small
        batches use fewer).

    Returns
    -------
    BatchLemkeResult
        ``z``, ``w`` (B, n), ``status``, ``success``, ``pivots``, ``residual`` (B,), ``basis``;
        ``res[i]`` is instance i as a :class:`mbdcp.LemkeResult`.

    Examples
    --------
    >>> import numpy as np, mbdcp
    >>> M = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> res = mbdcp.batch.lemke(M, [[-5.0, -6.0], [1.0, 1.0], [-1.0, 0.0]])
    >>> res.success.tolist(), res.z.round(4).tolist()
    ([True, True, True], [[1.3333, 2.3333], [0.0, 0.0], [0.5, 0.0]])
    """
    qs = val.as_array("qs", qs, 2, finite=None)  # the C loop checks every instance (see part)
    B, n = qs.shape
    Ms = val.as_array("Ms", Ms, finite=None)
    if Ms.ndim == 2:
        Ms = Ms[None]
    if Ms.ndim != 3 or Ms.shape[1:] != (n, n) or Ms.shape[0] not in (1, B):
        raise ValueError(f"Ms must have shape (B, n, n) = ({B}, {n}, {n}) or (n, n) = ({n}, {n}) "
                         f"(qs is B x n), got {Ms.shape}")
    max_iter, tol = val.lemke_settings(max_iter, tol)
    _threads(threads, B)
    val.fits_in_memory("B", f"{B} instances (qs has B rows)", B * (21 * n + 16), "for the results")
    z, w = np.zeros((B, n)), np.zeros((B, n))
    basis = np.zeros((B, n), dtype=np.intc)
    status = np.full(B, int(Status.SOLVED), dtype=np.intc)  # n = 0: every instance is solved
    pivots = np.zeros(B, dtype=np.intc)
    residual = np.zeros(B)

    def part(first, count, stop):
        try:
            _core.lemke_batch(Ms, qs, first, count, max_iter, tol, z, w, basis, status, pivots, residual,
                              stop)
        except _core.CoreError as e:
            if e.code != _core.ERR_NONFINITE:
                raise
            i = e.instance
            name, k = ("qs", i) if not np.isfinite(qs[i]).all() else ("Ms", i if len(Ms) > 1 else 0)
            raise ValueError(f"{name} must hold finite values (found NaN or infinity in {name}[{k}])") from None

    _run(part, B, threads)
    return BatchLemkeResult(z=z, w=w, status=status, success=status == int(Status.SOLVED), pivots=pivots,
                            residual=residual, basis=basis.astype(bool))


@dataclass(frozen=True, repr=False)
class BatchStepResult(_Batch):
    """Results of :func:`mbdcp.batch.step`, row i for instance i (the fields of
    :class:`mbdcp.StepResult` with a leading batch axis).

    Attributes
    ----------
    v_next : ndarray, shape (B, n_v)
    p_n, sigma : ndarray, shape (B, n_c)
    beta : ndarray, shape (B, m)
    p_b : ndarray, shape (B, n_b)
    beta_j : ndarray, shape (B, m_j)
    sigma_j : ndarray, shape (B, n_j)
    status : ndarray of int32, shape (B,)
    success : ndarray of bool, shape (B,)
    pivots : ndarray of int32, shape (B,)
    residual : ndarray, shape (B,)
        Of each instance's reduced LCP.
    z, w : ndarray, shape (B, N)
        The reduced LCP's unknowns :math:`(p_n, \\beta, \\beta_j, \\sigma, \\sigma_j)` and
        :math:`w = F z + f`.
    """

    success: np.ndarray
    status: np.ndarray
    pivots: np.ndarray
    residual: np.ndarray
    v_next: np.ndarray
    p_b: np.ndarray
    p_n: np.ndarray
    beta: np.ndarray
    sigma: np.ndarray
    beta_j: np.ndarray
    sigma_j: np.ndarray
    z: Optional[np.ndarray] = None
    w: Optional[np.ndarray] = None

    def __getitem__(self, i):
        """Instance i as a :class:`mbdcp.StepResult`."""
        i = _instance(i, len(self.status))
        s = _STATUS[self.status[i]]
        return StepResult(success=s == Status.SOLVED, status=s, message=s.message, v_next=self.v_next[i].copy(),
                          p_n=self.p_n[i].copy(), beta=self.beta[i].copy(), sigma=self.sigma[i].copy(),
                          p_b=self.p_b[i].copy(), beta_j=self.beta_j[i].copy(), sigma_j=self.sigma_j[i].copy(),
                          pivots=int(self.pivots[i]), residual=float(self.residual[i]))


# step's inputs in the C problem's order (StepProblem.ARRAYS, with the batch's names); h is apart
_STEP_INPUTS = ("Ms", "Wns", "Ds", "Es", "Us", "vs", "p_ext", "psi_n", "dpsi_n", "dpsi_f", "Wb", "theta",
                "dtheta", "Dj", "Ej", "beta_max")


def _batch_axis(name, x, B, ndim):
    """(B or 1, ...) view of an input given per instance (ndim + 1 dimensions) or shared (ndim)."""
    a = val.as_array(name, x)
    if a.ndim == ndim:
        return a[None]
    if a.ndim == ndim + 1 and a.shape[0] in (1, B):
        return a
    raise ValueError(f"{name} must have {ndim + 1} dimensions with a leading batch axis of B = {B} "
                     f"(the batch has B instances), or {ndim} (one value shared by all), got shape {a.shape}")


@renamed(max_pivots="max_iter")
def step(Ms, Wns, Ds, Es, Us, vs, h, *, p_ext=None, psi_n=None, dpsi_n=None, dpsi_f=None, Wb=None, theta=None,
         dtheta=None, Dj=None, Ej=None, beta_max=None, max_iter=None, tol=None, threads=None):
    r"""B time steps of the Stewart–Trinkle / Anitescu–Potra LCP for scenes of equal shape.

    Each instance is the mixed LCP of :func:`mbdcp.step` (same reduction to LCP(F, f), same
    Lemke solve, bit-identical results), solved in one C loop with the GIL released and split
    over ``threads`` threads.

    Parameters
    ----------
    Ms : array_like, shape (B, n_v, n_v)
        Mass matrices (symmetric positive definite).
    Wns : array_like, shape (B, n_v, n_c)
    Ds : array_like, shape (B, n_v, m)
    Es : array_like, shape (B, m, n_c)
    Us : array_like
        Friction coefficients: scalar, (n_c,) or (B, n_c).
    vs : array_like, shape (B, n_v)
    h : float or array_like, shape (B,)
        Time step(s) > 0.
    p_ext, psi_n, dpsi_n, dpsi_f, Wb, theta, dtheta, Dj, Ej, beta_max : array_like, optional
        As in :func:`mbdcp.step`, each per instance (a leading batch axis of B) or shared.
    max_iter, tol : optional
        Lemke's pivot limit and verification tolerance, per instance (``max_pivots`` is the
        deprecated name of ``max_iter``).
    threads : int, optional
        Threads to split the batch over (default: the cores this process may use).

    Every argument but ``Ms`` may also be given without the batch axis, shared by all
    instances (e.g. one ``Wn`` for a scene stepped from B initial velocities).

    Returns
    -------
    BatchStepResult
        The fields of :class:`mbdcp.StepResult` with a leading batch axis; ``res[i]`` is
        instance i as a StepResult.

    Examples
    --------
    A unit particle on the ground, pushed sideways at three speeds (μ = 0.5, h = 0.1):

    >>> import numpy as np, mbdcp
    >>> res = mbdcp.batch.step(np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], [[1.0], [1.0]],
    ...                        0.5, [[0.1, 0.0], [0.4, 0.0], [1.0, 0.0]], 0.1, p_ext=[0.0, -0.981])
    >>> res.success.tolist(), res.v_next[:, 0].round(4).tolist()
    ([True, True, True], [0.0, 0.0, 0.5095])
    """
    # instance dimensions of each input; one more dimension is the batch axis
    inputs = dict(Ms=(Ms, 2), Wns=(Wns, 2), Ds=(Ds, 2), Es=(Es, 2), Us=(Us, 1), vs=(vs, 1), p_ext=(p_ext, 1),
                  psi_n=(psi_n, 1), dpsi_n=(dpsi_n, 1), dpsi_f=(dpsi_f, 1), Wb=(Wb, 2), theta=(theta, 1),
                  dtheta=(dtheta, 1), Dj=(Dj, 2), Ej=(Ej, 2), beta_max=(beta_max, 1), h=(h, 0))
    given, hs, B = _batch_inputs(inputs)
    arrays, shapes = _instance_arrays(given, hs)
    n_v, n_c, m = shapes["Ms"][0], shapes["Wns"][1], shapes["Ds"][1]
    n_b, m_j, n_j = shapes["Wb"][1], shapes["Dj"][1], shapes["Ej"][1]
    dims = (n_v, n_c, m, n_b, m_j, n_j)
    N = 2 * n_c + m + m_j + n_j
    max_iter, tol = val.lemke_settings(max_iter, tol)
    _threads(threads, B)
    val.fits_in_memory("B", f"{B} instances", B * (8 * (n_v + n_b + 2 * N) + 16), "for the results")
    v_next, p_b = np.zeros((B, n_v)), np.zeros((B, n_b))
    z, w = np.zeros((B, N)), np.zeros((B, N))
    status = np.zeros(B, dtype=np.intc)
    pivots = np.zeros(B, dtype=np.intc)
    residual = np.zeros(B)
    arrays = tuple(arrays)

    def part(first, count, stop):
        return _core.step_batch(arrays, dims, hs, first, count, max_iter, tol,
                                v_next, p_b, z, w, status, pivots, residual, stop)

    for failed in _run(part, B, threads):
        if failed is not None:
            raise _instance_error(arrays, hs, *failed)
    o = (0, n_c, n_c + m, n_c + m + m_j, 2 * n_c + m + m_j, N)
    return BatchStepResult(v_next=v_next, p_n=z[:, o[0]:o[1]], beta=z[:, o[1]:o[2]], sigma=z[:, o[3]:o[4]], p_b=p_b,
                           beta_j=z[:, o[2]:o[3]], sigma_j=z[:, o[4]:o[5]], status=status,
                           success=status == int(Status.SOLVED), pivots=pivots, residual=residual, z=z, w=w)


def _batch_names(message):
    """A message of mbdcp.step's validation in the batch's names (M -> Ms, ..., v -> vs)."""
    return re.sub(r"\b(M|Wn|D|E|U|v)\b(?! is)", r"\1s", message)


def _batch_inputs(inputs):
    """({name: array with a leading batch axis of 1 or B, or None}, h per instance, B) of the
    inputs {name: (value, instance dimensions)}."""
    arrays = {k: (None if x is None else val.as_array(k, x)) for k, (x, _) in inputs.items()}
    for k in ("Ms", "Wns", "Ds", "Es", "Us", "vs", "h"):
        if arrays[k] is None:
            raise TypeError(f"{k} is required, got None")
    batched = {k: a.shape[0] for k, a in arrays.items() if a is not None and a.ndim == inputs[k][1] + 1}
    sizes = set(batched.values()) - {1}
    if len(sizes) > 1:  # name every input with a batch axis: which one is wrong only the caller knows
        raise ValueError("the inputs' batch axes disagree: " + ", ".join(f"{k} has {b}" for k, b in batched.items())
                         + " instances (each input has a leading batch axis of B or 1, or none: shared)")
    B = max([1, *sizes])
    if arrays["Us"].ndim == 0:
        arrays["Us"] = np.full(np.shape(arrays["Wns"])[-1:], float(arrays["Us"]))
    given = {k: (None if a is None else _batch_axis(k, a, B, inputs[k][1])) for k, a in arrays.items()}
    hs = given.pop("h").reshape(-1)
    if np.any(hs <= 0):
        raise ValueError("h must be positive")
    return given, hs, B


def _instance_arrays(given, hs):
    """The inputs in the C problem's order, each (1 or B, instance shape...), and the instance
    shapes. Instance 0 goes through mbdcp.step's validation (shapes, symmetry, E's structure,
    mu >= 0, joint data), which fixes the shape; the batch is then checked array-wise against it."""
    first = {k: (None if a is None else a[0]) for k, a in given.items()}
    try:
        d0 = step_data(first["Ms"], first["Wns"], first["Ds"], first["Es"], first["Us"], first["vs"], float(hs[0]),
                       *(first[k] for k in ("p_ext", "psi_n", "dpsi_n", "dpsi_f", "Wb", "theta", "dtheta", "Dj",
                                            "Ej", "beta_max")))
    except ValueError as exc:  # name the batch's arguments, not step's
        raise ValueError("instance 0: " + _batch_names(str(exc))) from None
    shapes = dict(zip(_STEP_INPUTS, [np.shape(x) for x in d0.arrays().values()]))
    arrays = []
    for name in _STEP_INPUTS:
        a = given[name]
        if a is None:
            arrays.append(np.zeros((1, 0)))
            continue
        if a.shape[1:] != shapes[name]:
            raise ValueError(f"{name} must have instance shape {shapes[name]} (instance 0 fixes the shape), "
                             f"got {a.shape[1:]}")
        arrays.append(np.ascontiguousarray(a))
    _check_batch(dict(zip(_STEP_INPUTS, arrays)), shapes)
    return arrays, shapes


def _instance_error(arrays, hs, i, code):
    """The ValueError for instance i, which the C core refused with ``code``."""
    if code == _core.ERR_NOT_POSDEF:
        return ValueError(f"Ms[{i}] must be symmetric positive definite (its Cholesky factorization failed)")
    if code == _core.ERR_RANK_DEFICIENT:
        return ValueError(f"Wb of instance {i} must have full column rank (redundant joints: "
                          "mbdcp.step solves them on an independent subset)")
    one = {name: a[min(i, len(a) - 1)] for name, a in zip(StepProblem.ARRAYS, arrays)}
    one["h"] = float(hs[min(i, len(hs) - 1)])
    return ValueError(f"instance {i}: " + _batch_names(str(overflow_error(one))))


def _check_batch(a, shapes):
    """Array-wise checks of every instance (instance 0 passed step's own validation)."""
    M = a["Ms"]
    scale = np.abs(M).max(axis=(1, 2))
    bad = np.flatnonzero(np.abs(M - M.transpose(0, 2, 1)).max(axis=(1, 2)) > val.SYMMETRY_RTOL * scale)
    if bad.size:
        raise ValueError(f"Ms[{bad[0]}] must be symmetric")
    if np.any(a["Us"] < 0):
        raise ValueError(f"Us must be nonnegative (friction coefficients mu_j >= 0); instance "
                         f"{np.flatnonzero((a['Us'] < 0).any(axis=1))[0]} is not")
    for name in ("Es", "Ej"):
        E = a[name]
        if E.shape[0] > 1 and E.size and np.any(E != E[:1]):
            # the grouping must be each instance's own valid one: compare against a per-instance check
            for i in np.flatnonzero(np.any(E != E[:1], axis=(1, 2))):
                val.grouping(f"{name}[{i}]", E[i], E.shape[1], E.shape[2])
    if a["beta_max"].size and np.any(a["beta_max"] < 0):
        raise ValueError("beta_max must be nonnegative")
