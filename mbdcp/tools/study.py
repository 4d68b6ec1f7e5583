r"""Parameter studies and performance profiles.

- :func:`run` evaluates ``func(**params)`` over a grid of parameters, on all local cores or on a
  Dask cluster, and returns one row per case in a pandas DataFrame; a failing case is reported in
  its row and never loses the others.
- :func:`profile` times solvers on a set of problems and builds the performance profile of
  Dolan & Moré (2002) as a :class:`Profile`.

pandas and dask are optional: ``pip install "mbdcp[study]"``. They are imported only when these
functions are called, so ``import mbdcp`` does not need them.
"""
import collections.abc
import itertools
import math
import numbers
import os
import sys
import time
import traceback
from dataclasses import dataclass
from functools import partial

import numpy as np

from mbdcp.infrastructure import validate as val

__all__ = ["Profile", "profile", "run"]

_RESERVED = ("time", "error")
_CRASHED = ("BrokenProcessPool: the worker process running this case died "
            "(os._exit, a fatal signal or out of memory); it was rerun alone and died again")


def _require(module):
    """Import pandas or distributed with an error telling what to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f'mbdcp.study needs {module.split(".")[0]}: pip install "mbdcp[study]" ({exc})') from None


# --------------------------------------------------------------------------------------------- grid


def _is_dataframe(x):
    # without importing pandas: a user who never installed it cannot be passing a DataFrame
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(x, pd.DataFrame)


def _check_names(names):
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"grid: parameter names must be strings usable as keywords of func, got {name!r}")
        if name in _RESERVED:
            raise ValueError(f"grid: a parameter may not be named {name!r} (a column of the result)")


def _cases(grid):
    """The list of cases (dicts of keyword arguments) and the ordered parameter names."""
    if _is_dataframe(grid):
        names = list(grid.columns)
        if len(set(names)) != len(names):
            raise ValueError(f"grid: the DataFrame has duplicate columns {names}")
        _check_names(names)
        return grid.to_dict("records"), names
    if isinstance(grid, collections.abc.Mapping):
        names = list(grid)
        _check_names(names)
        values = [_values(name, grid[name]) for name in names]
        if not names:
            return [], []
        cases = math.prod(len(v) for v in values)
        val.fits_in_memory("grid", f"{' x '.join(str(len(v)) for v in values)} = {cases} cases",
                           cases * (_CASE_BYTES + 100 * len(names)), "for the cases and their results")
        return [dict(zip(names, combo)) for combo in itertools.product(*values)], names
    if isinstance(grid, (list, tuple)):
        names = {}
        for k, case in enumerate(grid):
            if not isinstance(case, collections.abc.Mapping):
                raise TypeError(f"grid[{k}] must be a dict of parameters, got {val.describe(case)}")
            names.update(dict.fromkeys(case))
        _check_names(names)
        return [dict(case) for case in grid], list(names)
    raise TypeError("grid must be a dict of lists (Cartesian product), a list of dicts or a pandas DataFrame, "
                    f"got {val.describe(grid)}")


_CASE_BYTES = 1024  # a case's dict, its row of results and its future, at the least
_MAX_VALUES = 10 ** 7  # values taken from an iterator without a length before it counts as endless


def _values(name, v):
    """The values of one grid parameter as a list: sized collections are checked against memory
    before they are listed, iterators without a length are read up to a bound (an endless one is
    an error, not a hang)."""
    if isinstance(v, (str, bytes, collections.abc.Mapping, collections.abc.Set)) or not isinstance(
            v, collections.abc.Iterable) or (isinstance(v, np.ndarray) and v.ndim == 0):
        raise TypeError(f"grid[{name!r}] must be a list of values (the Cartesian product is taken), got {val.describe(v)}")
    if isinstance(v, collections.abc.Sized):
        try:
            n = len(v)
        except OverflowError:
            n = sys.maxsize
        val.fits_in_memory(f"grid[{name!r}]", f"{n} values", n * _CASE_BYTES, "for the cases")
        return list(v)
    bound = min(_MAX_VALUES, val.memory_bytes() // _CASE_BYTES)
    out = list(itertools.islice(v, bound + 1))
    if len(out) > bound:
        raise ValueError(f"grid[{name!r}] yields more than {bound} values (an endless iterator?): pass a list")
    return out


# ----------------------------------------------------------------------------------- one case


def _describe(exc):
    """'ValueError: message', as Python prints the last line of a traceback."""
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def _call_case(func, params):
    """Run one case: (results dict or None, error text or None, seconds). Never raises for func's
    errors, so that a failing case reaches the caller as data on every backend alike."""
    t0 = time.perf_counter()
    try:
        out = func(**params)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 (any error of func is data; sys.exit() must not end a worker)
        return None, _describe(exc), time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    if not isinstance(out, collections.abc.Mapping):
        return None, f"TypeError: func must return a dict of results, got {val.describe(out)}", seconds
    out = dict(out)
    bad = [k for k in out if not isinstance(k, str)]
    if bad:
        return None, f"TypeError: func returned non-string result names {bad}", seconds
    return out, None, seconds


_WORKER_FUNC = None
_WORKER_ERROR = None


def _init_worker(func, payload):
    global _WORKER_FUNC, _WORKER_ERROR
    if payload is not None:
        import pickle

        try:
            func = pickle.loads(payload)
        except Exception as exc:  # noqa: BLE001 (a failing initializer would break the pool: report it per case)
            _WORKER_ERROR = f"func could not be loaded in the worker process: {_describe(exc)}"
    _WORKER_FUNC = func


def _worker_call(params):
    if _WORKER_ERROR is not None:
        return None, _WORKER_ERROR, math.nan
    return _call_case(_WORKER_FUNC, params)


# ------------------------------------------------------------------------------------- backends


def _default_start_method():
    import multiprocessing as mp

    # fork lets functions defined in a notebook's __main__ (even lambdas) run in the workers
    # without pickling them; macOS lists fork but its system libraries are not fork-safe.
    if "fork" in mp.get_all_start_methods() and sys.platform != "darwin":
        return "fork"
    return None


def _pool_initargs(func, start_method):
    """Initializer arguments: the function itself under fork (inherited, never pickled), else
    its cloudpickle bytes (functions of __main__ and closures survive) when cloudpickle exists."""
    if start_method == "fork":
        return (func, None)
    try:
        import cloudpickle
    except ImportError:
        return (func, None)
    return (None, cloudpickle.dumps(func))


def _pool_pass(todo, params, workers, ctx, initargs, done):
    """Run ``params[i]`` for i in ``todo`` on a fresh process pool. At most ``2 * workers`` cases
    are in flight, so that when a worker dies only those are suspects. Returns (suspects, rest):
    the in-flight cases lost with the pool and those not yet submitted (both empty if it held)."""
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    todo = deque(todo)
    suspects = []
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=initargs)
    pending = {}
    try:
        while True:
            while not suspects and todo and len(pending) < 2 * workers:
                try:
                    pending[ex.submit(_worker_call, params[todo[0]])] = todo[0]
                except BrokenProcessPool:  # broke before a future told us: stop; this case is rerun alone
                    suspects.append(todo.popleft())
                    break
                todo.popleft()
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                i = pending.pop(f)
                try:
                    outcome = f.result()
                except BrokenProcessPool:
                    suspects.append(i)
                    continue
                except Exception as exc:  # noqa: BLE001 (func's own errors never get here: only pickling ones)
                    outcome = (None, f"sending the case to or its results from the worker failed: {_describe(exc)}",
                               math.nan)
                done(i, outcome)
    except BaseException:
        # Ctrl-C: stop the workers now rather than waiting for their running cases
        for proc in list((getattr(ex, "_processes", None) or {}).values()):
            proc.terminate()
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    return sorted(suspects), list(todo)


def _run_processes(func, params, n_workers, start_method, done):
    import multiprocessing as mp

    ctx = mp.get_context(start_method)
    initargs = _pool_initargs(func, ctx.get_start_method())
    todo = list(range(len(params)))
    while todo:
        suspects, todo = _pool_pass(todo, params, min(n_workers, len(todo)), ctx, initargs, done)
        for i in suspects:
            # alone in its own pool: if the pool breaks again, this case is the culprit
            if _pool_pass([i], params, 1, ctx, initargs, done)[0]:
                done(i, (None, _CRASHED, math.nan))


def _run_threads(func, params, n_workers, done):
    if n_workers == 1:
        for i, p in enumerate(params):
            done(i, _call_case(func, p))
        return
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=n_workers) as ex:
        futures = {ex.submit(_call_case, func, p): i for i, p in enumerate(params)}
        try:
            for f in as_completed(futures):
                done(futures[f], f.result())
        except BaseException:
            ex.shutdown(wait=False, cancel_futures=True)
            raise


def _run_dask(func, params, client, done):
    distributed = _require("distributed")

    name = getattr(func, "__name__", type(func).__name__)
    futures = client.map(partial(_call_case, func), params, pure=False, key=f"study-{name}")
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for f, out in distributed.as_completed(futures, with_results=True, raise_errors=False):
            if f.status != "finished":  # the worker died repeatedly (KilledWorker) or the task was cancelled
                try:
                    f.result()
                    out = (None, f"task ended with status {f.status}", math.nan)
                except BaseException as exc:  # noqa: BLE001 (KilledWorker, CancelledError...: data for this case)
                    out = (None, _describe(exc), math.nan)
            done(index[f.key], out)
    except BaseException:
        client.cancel(futures)
        raise


# ------------------------------------------------------------------------------------------ run


def run(func, grid, *, client=None, progress=True, n_workers=None, processes=True, start_method=None):
    """Run ``func(**params)`` for every case of a grid and tabulate the results.

    Parameters
    ----------
    func : callable
        ``func(**params) -> dict`` of named results (numbers, or any object: arrays go into
        object columns). An exception, or a return value that is not a dict, fails that case only.
    grid : dict of lists, list of dicts or pandas.DataFrame
        The cases. A dict of lists gives their Cartesian product (the last key varies fastest);
        a list of dicts or the rows of a DataFrame give the cases one by one. An empty grid
        (``{}``, ``[]``, a dict holding an empty list, a DataFrame without rows) gives an empty
        table.
        Parameter names must be identifiers other than ``time`` and ``error``.
    client : dask.distributed.Client, optional
        Run the cases on this cluster (``client.map``) instead of locally.
    progress : bool
        Show a tqdm progress bar (the results do not depend on it).
    n_workers : int, optional
        Local workers (default: every core this process may use). Ignored with ``client``.
    processes : bool
        Local workers are processes (default) or, if False, threads of this process (fine when
        func releases the GIL, as mbdcp's solvers do); ``processes=False, n_workers=1`` runs the
        cases one after another in this thread, e.g. to debug them.
    start_method : str, optional
        multiprocessing start method of the local processes. Default ``"fork"`` where it is safe
        (Linux): functions defined in a notebook, even lambdas, then work. Elsewhere (or with
        ``"spawn"``/``"forkserver"``) func is sent with cloudpickle when it is installed (it comes
        with dask), else it must be importable.

    Returns
    -------
    pandas.DataFrame
        One row per case in grid order (the index of a DataFrame grid is kept): the parameters,
        then the results (the union of the names the cases returned, in order of first
        appearance), ``time`` (seconds func took) and ``error``: None when the case succeeded
        (select the successes with ``df.error.isna()``), else the exception as Python prints it
        (``"ValueError: ..."``). A failed case has NaN results. A local worker process that dies
        is reported as the error of the case it was running; the other cases are rerun.
        On a Dask cluster the table is the same (the ``time`` values aside).

    Examples
    --------
    >>> import math
    >>> from mbdcp import study
    >>> def f(x, y):
    ...     return {"ratio": x / y}
    >>> df = study.run(f, {"x": [1.0, 2.0], "y": [1.0, 0.0]}, progress=False, processes=False, n_workers=1)
    >>> df[["x", "y", "ratio"]].values.tolist()
    [[1.0, 1.0, 1.0], [1.0, 0.0, nan], [2.0, 1.0, 2.0], [2.0, 0.0, nan]]
    >>> df["error"][1]
    'ZeroDivisionError: float division by zero'
    """
    pd = _require("pandas")
    val.callable_("func", func)
    progress, processes = val.flag("progress", progress), val.flag("processes", processes)
    if n_workers is None:
        n_workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    n_workers = val.integer("n_workers", n_workers, 1)
    if client is not None and not (hasattr(client, "map") and hasattr(client, "cancel")):
        raise TypeError(f"client must be a dask.distributed.Client, got {val.describe(client)}")
    if start_method is None:
        start_method = _default_start_method()
    else:
        import multiprocessing as mp

        start_method = val.choice("start_method", start_method, tuple(mp.get_all_start_methods()))
    params, names = _cases(grid)

    outcomes = [None] * len(params)
    bar = None
    if progress and params:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(params), desc=f"study ({getattr(func, '__name__', 'func')})", unit="case")

    def done(i, outcome):
        outcomes[i] = outcome
        if bar is not None:
            bar.update(1)

    try:
        if not params:
            pass
        elif client is not None:
            _run_dask(func, params, client, done)
        elif processes:
            _run_processes(func, params, n_workers, start_method, done)
        else:
            _run_threads(func, params, n_workers, done)
    finally:
        if bar is not None:
            bar.close()
    return _table(pd, grid, params, names, outcomes)


def _table(pd, grid, params, names, outcomes):
    reserved = set(names) | set(_RESERVED)
    for i, (res, err, sec) in enumerate(outcomes):
        clash = [k for k in res or () if k in reserved]
        if clash:
            outcomes[i] = (None, f"ValueError: func returned results named like parameters or columns {clash}", sec)
    results = {}
    for res, _, _ in outcomes:
        results.update(dict.fromkeys(res or ()))
    if _is_dataframe(grid):
        table = grid.copy()
    else:
        table = pd.DataFrame({n: pd.Series([p.get(n, math.nan) for p in params], dtype=_dtype(params, n))
                              for n in names}, index=pd.RangeIndex(len(params)))
    for key in results:
        values = [math.nan if res is None else res.get(key, math.nan) for res, _, _ in outcomes]
        table[key] = pd.Series(values, index=table.index, dtype=object if any(map(_nonscalar, values)) else None)
    table["time"] = pd.Series([sec for _, _, sec in outcomes], index=table.index, dtype=float)
    table["error"] = pd.Series([err for _, err, _ in outcomes], index=table.index, dtype=object)
    return table


def _nonscalar(x):
    return not (x is None or isinstance(x, (numbers.Number, str, bytes, np.generic)))


def _dtype(params, name):
    return object if any(_nonscalar(p.get(name)) for p in params) else None


# -------------------------------------------------------------------------------------- profile


@dataclass(frozen=True, eq=False, repr=False)
class Profile:
    """Performance profile of Dolan & Moré (2002); built by :func:`profile`.

    ``times``, ``residuals``, ``ratios`` and ``errors`` are DataFrames with one row per problem
    and one column per solver.

    Attributes
    ----------
    times : pandas.DataFrame
        :math:`t_{p,s}`: seconds (the fastest of ``repeat`` runs); ``inf`` where the run did not
        solve the problem.
    residuals : pandas.DataFrame
        The residual of each run (NaN where there is none).
    ratios : pandas.DataFrame
        Performance ratios :math:`r_{p,s} = t_{p,s} / \\min_{s'} t_{p,s'}`; ``inf`` where s did not
        solve p (the :math:`r_M` of the paper).
    errors : pandas.DataFrame
        Why a run does not count (exception, residual above ``tol``, ``success`` false), else None.
    tol : float
        The residual below which a run counts as solved.
    """

    times: object
    residuals: object
    ratios: object
    errors: object
    tol: float

    def rho(self, tau):
        r"""Fraction of the problems that each solver solves within a factor ``tau`` of the best:
        :math:`\rho_s(\tau) = |\{p : r_{p,s} \le \tau\}| / n_p`.

        A number ``tau`` gives a Series (one value per solver); an array gives a DataFrame (one
        row per ``tau``). :math:`\rho_s(1)` is the share of problems where s is the fastest,
        :math:`\rho_s(\infty)` the share it solves (failures, :math:`r_{p,s} = \infty`, never
        count).
        """
        pd = _require("pandas")
        t = val.as_array("tau", tau, finite=False)  # infinity is meaningful: rho(inf) is the share solved
        if t.ndim > 1:
            raise ValueError(f"tau must be a number or a 1-D array of numbers, got shape {t.shape}")
        r = self.ratios.to_numpy()
        # a failure (r = inf) never counts, so rho(inf) is the share solved: the paper's limit
        # of rho_s(tau) as tau -> r_M from below
        frac = (np.isfinite(r)[None, :, :] & (r[None, :, :] <= np.atleast_1d(t)[:, None, None])).mean(axis=1)
        if t.ndim == 0:
            return pd.Series(frac[0], index=self.ratios.columns, name=float(t))
        return pd.DataFrame(frac, index=pd.Index(t, name="tau"), columns=self.ratios.columns)

    def plot(self, ax=None, tau_max=None):
        """Draw :math:`\\rho_s(\\tau)` of every solver as a step function over a log2 ``tau`` axis
        (from 1 to ``tau_max``, default twice the largest finite ratio); returns the Axes."""
        if val.axes("ax", ax) is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        finite = self.ratios.to_numpy()[np.isfinite(self.ratios.to_numpy())]
        top = 2.0 * max(finite.max(initial=1.0), 1.0) if tau_max is None else \
            val.scalar_in("tau_max", tau_max, 1.0, np.inf, low_open=True, high_open=True)
        taus = np.unique(np.concatenate([[1.0, top], finite[(finite >= 1.0) & (finite <= top)]]))
        rho = self.rho(taus)
        for solver in rho.columns:
            ax.step(taus, rho[solver].to_numpy(), where="post", label=str(solver))
        ax.set_xscale("log", base=2)
        ax.set_xlim(1.0, top)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel(r"$\tau$ (time ratio to the fastest solver)")
        ax.set_ylabel(r"$\rho_s(\tau)$")
        ax.set_title(f"Performance profile ({len(self.ratios)} problems, tol = {self.tol:g})")
        ax.legend()
        return ax

    def __repr__(self):
        solved = np.isfinite(self.times.to_numpy()).sum(axis=0)
        per = ", ".join(f"{s}: {k}" for s, k in zip(self.times.columns, solved))
        return f"Profile({len(self.times)} problems, tol={self.tol:g}, solved: {per})"


def _field(out, name):
    if isinstance(out, collections.abc.Mapping):
        return out.get(name)
    return getattr(out, name, None)


MAX_REPEAT = 10 ** 6  # more runs per (problem, solver) than any timing needs


def _profile_inputs(problems, solvers, tol, residual, repeat, timer):
    """profile's arguments checked: (problems as a dict, solvers, tol, repeat, timer)."""
    if isinstance(problems, collections.abc.Mapping):
        problems = dict(problems)
    elif isinstance(problems, (list, tuple)):
        problems = dict(enumerate(problems))
    else:
        raise TypeError(f"problems must be a dict (name -> problem) or a list, got {val.describe(problems)}")
    if not problems:
        raise ValueError("problems must not be empty")
    if not isinstance(solvers, collections.abc.Mapping) or not solvers:
        raise TypeError(f"solvers must be a non-empty dict (name -> callable), got {val.describe(solvers)}")
    for name, s in solvers.items():
        val.callable_(f"solvers[{name!r}]", s)
    if residual is not None:
        val.callable_("residual", residual)
    timer = time.perf_counter if timer is None else val.callable_("timer", timer)
    return (problems, dict(solvers), val.nonnegative_scalar("tol", tol), val.integer("repeat", repeat, 1, MAX_REPEAT),
            timer)


def profile(problems, solvers, tol=1e-6, *, residual=None, repeat=1, timer=None, progress=True):
    r"""Time every solver on every problem and build the performance profile.

    Dolan & Moré (2002): with :math:`t_{p,s}` the time solver s takes on problem p, the
    performance ratio is :math:`r_{p,s} = t_{p,s} / \min\{t_{p,s'} : s' \in S\}`, set to
    :math:`r_M = \infty` when s does not solve p, and the profile of s is
    :math:`\rho_s(\tau) = |\{p \in P : r_{p,s} \le \tau\}| / n_p`: the probability that s is
    within a factor :math:`\tau` of the best solver. A problem no solver solves has
    :math:`r_{p,s} = \infty` for all s. (E. D. Dolan and J. J. Moré, Benchmarking optimization
    software with performance profiles, Math. Program. 91 (2002) 201–213.)

    The runs are serial (timings of concurrent runs would disturb each other).

    Parameters
    ----------
    problems : dict or list
        Problems by name (a list is named by position); each is passed as is to the solvers.
    solvers : dict
        ``name -> callable(problem)``, returning the solution: an object or dict with a
        ``residual`` and/or a ``success`` field.
    tol : float
        A run counts as *solved* when it raises nothing and its residual is finite and
        ``<= tol``. The residual is ``residual(problem, output)`` if that callable is given
        (to measure every solver by the same definition), else the output's ``residual``;
        if there is neither, the output's ``success`` decides. The solver's own ``success``
        is otherwise ignored: the common tolerance is what makes times comparable.
    residual : callable, optional
        ``residual(problem, output) -> float``.
    repeat : int
        Runs per (problem, solver); the time is the fastest, the residual that of the last run.
    timer : callable, optional
        Clock in seconds (default :func:`time.perf_counter`).
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    Profile

    Examples
    --------
    >>> import mbdcp
    >>> from mbdcp import study
    >>> problems = {"2x2": ([[2.0, 1.0], [1.0, 2.0]], [-5.0, -6.0]), "1x1": ([[1.0]], [-1.0])}
    >>> prof = study.profile(problems, {"lemke": lambda p: mbdcp.lemke(*p)}, tol=1e-12, progress=False)
    >>> prof.rho(1.0).tolist()     # a single solver is always the fastest
    [1.0]
    """
    pd = _require("pandas")
    problems, solvers, tol, repeat, timer = _profile_inputs(problems, solvers, tol, residual, repeat, timer)
    progress = val.flag("progress", progress)

    P, S = list(problems), list(solvers)
    times = np.full((len(P), len(S)), math.inf)
    resid = np.full((len(P), len(S)), math.nan)
    errors = np.full((len(P), len(S)), None, dtype=object)
    runs = [(i, j) for i in range(len(P)) for j in range(len(S))]
    if progress:
        from tqdm.auto import tqdm

        runs = tqdm(runs, desc="profile", unit="run")
    for i, j in runs:
        problem, solve = problems[P[i]], solvers[S[j]]
        best = math.inf
        try:
            for _ in range(int(repeat)):
                t0 = timer()
                out = solve(problem)
                best = min(best, timer() - t0)
            r = residual(problem, out) if residual is not None else _field(out, "residual")
            if r is not None:
                resid[i, j] = float(r)
                ok = bool(resid[i, j] <= tol)
                why = None if ok else f"residual {resid[i, j]:.3g} > tol {tol:g}"
            else:
                flag = _field(out, "success")
                if flag is None:
                    raise TypeError(f"the output of solvers[{S[j]!r}] has neither a residual nor a success field")
                ok = bool(flag)
                why = None if ok else "success is False"
        except Exception as exc:  # noqa: BLE001 (a solver that raises has not solved the problem)
            ok, why = False, _describe(exc)
        if ok:
            times[i, j] = best
        errors[i, j] = why
    # a run too fast for the clock (time 0) counts as the tiniest time: ties give 1, never 0 / 0
    clamped = np.maximum(times, np.finfo(float).tiny)
    with np.errstate(invalid="ignore"):
        ratios = clamped / clamped.min(axis=1, keepdims=True)
    ratios[~np.isfinite(times)] = math.inf
    frame = partial(pd.DataFrame, index=pd.Index(P, name="problem"), columns=pd.Index(S, name="solver"))
    return Profile(frame(times), frame(resid), frame(ratios), frame(errors, dtype=object), float(tol))
