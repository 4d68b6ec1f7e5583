"""mbdcp.study: parameter studies (local processes, threads, Dask) and performance profiles."""
import itertools
import math
import os

import numpy as np
import pytest

import mbdcp
from mbdcp.examples import simulate_sphere, sphere_closed_form
from mbdcp.testing import granular_pile

pd = pytest.importorskip("pandas")
study = pytest.importorskip("mbdcp.study")

G, H = 9.81, 0.12


# Module-level functions: the Dask workers import them from this module.

def power(x, k):
    return {"y": x ** k, "even": k % 2 == 0}


def sphere(mu, v0):
    """The sliding sphere of Trinkle (2003) time-stepped by mbdcp.step; mu < 0 is rejected."""
    t, v, p_n, _ = simulate_sphere(h=H, T=0.6, v0=v0, mu=mu, g=G)
    vx, wy = sphere_closed_form(t, v0=v0, mu=mu, g=G)
    return {"vx_end": v[-1, 0], "wy_end": v[-1, 4], "err": max(np.abs(v[:, 0] - vx).max(), np.abs(v[:, 4] - wy).max()),
            "p_n": p_n}


def fragile(x):
    if x == 2:
        raise ValueError("x = 2 is not allowed")
    if x == 3:
        return [x]  # not a dict
    return {"sq": x * x, "half": x / 2}


def crash(x):
    if x in (1, 4):
        os._exit(7)  # kills the worker process without any exception
    return {"y": 10 * x}


SPHERE_GRID = {"mu": [-0.1, 0.2, 0.5], "v0": [1.0, 2.0]}


def check_sphere_table(df):
    assert list(df.columns) == ["mu", "v0", "vx_end", "wy_end", "err", "p_n", "time", "error"]
    assert list(zip(df.mu, df.v0)) == list(itertools.product(*SPHERE_GRID.values()))
    bad = df.mu < 0
    assert df.error[bad].str.startswith("ValueError: mu must be nonnegative").all()
    assert df.loc[bad, ["vx_end", "wy_end", "err"]].isna().all().all() and df.p_n[bad].isna().all()
    good = df[~bad]
    assert good.error.isna().all() and (good.time > 0).all()
    for row in good.itertuples():
        direct = sphere(row.mu, row.v0)
        assert row.vx_end == direct["vx_end"] and row.wy_end == direct["wy_end"]
        # and the closed form of the paper (the step reproduces it exactly up to rounding)
        vx, wy = sphere_closed_form(0.6, v0=row.v0, mu=row.mu, g=G)
        np.testing.assert_allclose([row.vx_end, row.wy_end], [vx, wy], rtol=1e-12)
        assert row.err < 1e-12
        np.testing.assert_allclose(row.p_n, np.full(5, G * H), rtol=1e-12)  # m g h per step: no bounce


# ---------------------------------------------------------------------------------------- grids


def test_docstring_examples():
    import doctest

    result = doctest.testmod(study, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_import_mbdcp_does_not_import_pandas_or_dask():
    import subprocess
    import sys

    code = "import sys, mbdcp, mbdcp.study; print(sorted({'pandas', 'dask', 'distributed'} & set(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(mbdcp.__file__)))  # this mbdcp
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


def test_dict_grid_is_the_cartesian_product_in_order():
    grid = {"x": [1.5, -2.0, 3.0], "k": [0, 1, 2, 3]}
    df = study.run(power, grid, progress=False, n_workers=2)
    assert list(df.columns) == ["x", "k", "y", "even", "time", "error"]
    assert len(df) == 12 and list(df.index) == list(range(12))
    assert list(zip(df.x, df.k)) == list(itertools.product(grid["x"], grid["k"]))
    np.testing.assert_array_equal(df.y, [x ** k for x, k in itertools.product(grid["x"], grid["k"])])
    assert df.even.tolist() == [k % 2 == 0 for _, k in itertools.product(grid["x"], grid["k"])]
    assert df.error.isna().all() and (df.time >= 0).all()


def test_list_of_dicts_and_dataframe_grids():
    cases = [{"x": 2.0, "k": 3}, {"x": -1.0, "k": 2}, {"x": 0.5, "k": 1}]
    a = study.run(power, cases, progress=False, n_workers=2)
    assert a.x.tolist() == [2.0, -1.0, 0.5] and a.y.tolist() == [8.0, 1.0, 0.5]
    frame = pd.DataFrame(cases, index=["p", "q", "r"])
    b = study.run(power, frame, progress=False, processes=False, n_workers=2)
    assert list(b.index) == ["p", "q", "r"]  # the grid's index is kept
    pd.testing.assert_frame_equal(a.drop(columns="time").set_axis(["p", "q", "r"]), b.drop(columns="time"))


def test_list_of_dicts_with_different_keys():
    df = study.run(fragile, [{"x": 1}, {}], progress=False, processes=False, n_workers=1)
    assert df.sq.tolist()[0] == 1 and math.isnan(df.sq[1])
    assert "missing 1 required positional argument: 'x'" in df.error[1]


def test_empty_grid_gives_empty_table():
    for grid, params in [({"x": [], "k": [1, 2]}, ["x", "k"]), ({}, []), ([], []),
                         (pd.DataFrame({"x": [], "k": []}), ["x", "k"])]:
        df = study.run(power, grid, progress=False)
        assert len(df) == 0 and list(df.columns) == params + ["time", "error"]


@pytest.mark.parametrize("grid, exc, words", [
    ("x=1", TypeError, "grid must be a dict of lists"),
    (None, TypeError, "grid must be"),
    ({"x": 3}, TypeError, "grid['x'] must be a list"),
    ({"x": "abc"}, TypeError, "grid['x'] must be a list"),
    ({"x": np.float64(1.0)}, TypeError, "grid['x'] must be a list"),
    ([{"x": 1}, 2], TypeError, "grid[1] must be a dict"),
    ({"time": [1, 2]}, ValueError, "grid: a parameter may not be named 'time'"),
    ([{"not a name": 1}], TypeError, "grid: parameter names"),
])
def test_bad_grid_is_rejected(grid, exc, words):
    with pytest.raises(exc) as info:
        study.run(power, grid, progress=False)
    assert words in str(info.value)


def test_missing_pandas_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    with pytest.raises(ImportError, match=r'pip install "mbdcp\[study\]"'):
        study.run(power, {"x": [1], "k": [1]})


def test_bad_arguments_are_rejected():
    with pytest.raises(TypeError, match="func must be callable"):
        study.run(3, {"x": [1]})
    with pytest.raises(ValueError, match="n_workers must be at least 1"):
        study.run(power, {"x": [1], "k": [1]}, n_workers=0)
    with pytest.raises(TypeError, match="n_workers must be an integer"):
        study.run(power, {"x": [1], "k": [1]}, n_workers=1.5)
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        study.run(power, {"x": [1], "k": [1]}, client="tcp://nowhere")
    with pytest.raises(ValueError, match="start_method must be one of"):
        study.run(power, {"x": [1], "k": [1]}, start_method="teleport")


# ------------------------------------------------------------------------------ results, failures


def test_real_mbdcp_study_matches_direct_calls_and_closed_form():
    check_sphere_table(study.run(sphere, SPHERE_GRID, progress=False, n_workers=2))


@pytest.mark.parametrize("backend", [{"n_workers": 2}, {"processes": False, "n_workers": 2},
                                     {"processes": False, "n_workers": 1}], ids=["processes", "threads", "serial"])
def test_a_failing_case_keeps_the_others(backend):
    df = study.run(fragile, {"x": [0, 1, 2, 3, 4]}, progress=False, **backend)
    assert list(df.columns) == ["x", "sq", "half", "time", "error"]
    assert df.sq.tolist()[:2] + df.sq.tolist()[4:] == [0, 1, 16]
    assert df.half[[0, 1, 4]].tolist() == [0.0, 0.5, 2.0]
    assert df.loc[[2, 3], ["sq", "half"]].isna().all().all()
    assert df.error[2] == "ValueError: x = 2 is not allowed"
    assert df.error[3] == "TypeError: func must return a dict of results, got a list"
    assert df.error[[0, 1, 4]].isna().all()


def test_a_dying_worker_loses_only_its_case():
    df = study.run(crash, {"x": list(range(8))}, progress=False, n_workers=2)
    ok = [0, 2, 3, 5, 6, 7]
    assert df.y[ok].tolist() == [10 * x for x in ok] and df.error[ok].isna().all()
    assert df.loc[[1, 4], ["y", "time"]].isna().all().all()
    assert df.error[[1, 4]].str.startswith("BrokenProcessPool").all()


def test_a_result_that_cannot_be_sent_back_fails_its_case_only():
    df = study.run(lambda x: {"y": (lambda: x) if x == 1 else x}, {"x": [0, 1, 2]}, progress=False, n_workers=2)
    assert df.y[[0, 2]].tolist() == [0, 2] and math.isnan(df.y[1])
    assert df.error[1].startswith("sending the case to or its results from the worker failed")


def test_result_named_like_a_parameter_is_an_error():
    df = study.run(lambda x: {"x": 2 * x, "z": x}, {"x": [1, 2]}, progress=False)
    assert df.error.str.contains("named like parameters").all() and "z" not in df.columns


def test_spawned_workers_run_a_closure():
    # what a notebook on macOS/Windows needs: func pickled by value (cloudpickle), not by name
    scale = 3.0
    df = study.run(lambda x: {"y": scale * x}, {"x": [1.0, 2.0, 5.0]}, progress=False, n_workers=2,
                   start_method="spawn")
    assert df.y.tolist() == [3.0, 6.0, 15.0] and df.error.isna().all()


def test_progress_bar_only_when_asked(capfd):
    study.run(power, {"x": [1.0, 2.0], "k": [1, 2, 3]}, progress=False, n_workers=2)
    assert capfd.readouterr() == ("", "")
    study.run(power, {"x": [1.0, 2.0], "k": [1, 2, 3]}, progress=True, n_workers=2)
    out = capfd.readouterr()
    assert "6/6" in out.err and out.out == ""


# ------------------------------------------------------------------------------------------ Dask


@pytest.fixture(scope="module")
def local_sphere_table():
    # computed before the cluster starts: the local path forks, best done with no extra threads
    return study.run(sphere, SPHERE_GRID, progress=False, n_workers=2)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def test_dask_gives_the_same_table_as_the_local_path(local_sphere_table, client):
    remote = study.run(sphere, SPHERE_GRID, client=client, progress=False)
    check_sphere_table(remote)
    pd.testing.assert_frame_equal(remote.drop(columns="time"), local_sphere_table.drop(columns="time"))
    assert remote.time[remote.error.isna()].gt(0).all()


def test_dask_failing_cases(client):
    local = study.run(fragile, {"x": [0, 1, 2, 3, 4]}, progress=False, processes=False, n_workers=1)
    remote = study.run(fragile, {"x": [0, 1, 2, 3, 4]}, client=client, progress=False)
    pd.testing.assert_frame_equal(remote.drop(columns="time"), local.drop(columns="time"))


# --------------------------------------------------------------------------------------- profile


class FakeClock:
    """A clock that only the fake solvers advance: exact, known times."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def fake_solvers(clock, table):
    """table[problem][solver] = (seconds, output) or an exception to raise."""
    def make(s):
        def solve(p):
            spec = table[p][s]
            if isinstance(spec, Exception):
                raise spec
            clock.now += spec[0]
            return spec[1]
        return solve
    return {s: make(s) for s in ("A", "B", "C")}


OK = {"residual": 0.0}
TABLE = {
    "p1": {"A": (1.0, OK), "B": (2.0, OK), "C": (4.0, OK)},
    "p2": {"A": (3.0, OK), "B": (1.0, {"residual": 1e-9}), "C": (0.5, {"residual": 1e-3})},  # C too inaccurate
    "p3": {"A": RuntimeError("diverged"), "B": (1.0, {"success": False}), "C": (1.0, {"residual": math.nan})},
    "p4": {"A": (2.0, OK), "B": (2.0, {"success": True}), "C": (1.0, OK)},
}


def test_profile_ratios_and_rho_by_hand():
    clock = FakeClock()
    prof = study.profile({p: p for p in TABLE}, fake_solvers(clock, TABLE), tol=1e-6, timer=clock, progress=False)
    inf = math.inf
    assert prof.times.to_numpy().tolist() == [[1, 2, 4], [3, 1, inf], [inf, inf, inf], [2, 2, 1]]
    # r_{p,s} = t_{p,s} / min_s t_{p,s}; r = inf for a failure and for a problem nobody solves
    assert prof.ratios.to_numpy().tolist() == [[1, 2, 4], [3, 1, inf], [inf, inf, inf], [2, 2, 1]]
    assert list(prof.ratios.index) == ["p1", "p2", "p3", "p4"] and list(prof.ratios.columns) == ["A", "B", "C"]
    expected = {1.0: [1, 1, 1], 1.5: [1, 1, 1], 2.0: [2, 3, 1], 3.0: [3, 3, 1], 4.0: [3, 3, 2], inf: [3, 3, 2],
                0.5: [0, 0, 0]}
    for tau, counts in expected.items():
        assert prof.rho(tau).tolist() == [c / 4 for c in counts], tau
    table = prof.rho([1.0, 2.0, 4.0])
    assert table.to_numpy().tolist() == [[0.25, 0.25, 0.25], [0.5, 0.75, 0.25], [0.75, 0.75, 0.5]]
    assert prof.errors.loc["p3", "A"] == "RuntimeError: diverged"
    assert prof.errors.loc["p3", "B"] == "success is False"
    assert prof.errors.loc["p2", "C"].startswith("residual 0.001 > tol")
    assert prof.errors.loc["p3", "C"].startswith("residual nan")
    assert prof.errors.loc["p1"].isna().all()
    assert prof.residuals.loc["p2", "B"] == 1e-9 and math.isnan(prof.residuals.loc["p4", "B"])
    assert "4 problems" in repr(prof) and "A: 3" in repr(prof) and "C: 2" in repr(prof)


def test_profile_repeat_keeps_the_fastest_and_residual_callable_overrides():
    clock, durations = FakeClock(), iter([5.0, 1.0, 3.0, 2.0, 2.0, 2.0])

    def slow_then_fast(p):
        clock.now += next(durations)
        return {"residual": 1.0}  # wrong on purpose: the residual callable below decides

    prof = study.profile({"a": 0, "b": 0}, {"s": slow_then_fast}, tol=1e-8, repeat=3, timer=clock, progress=False,
                         residual=lambda problem, out: 0.0)
    assert prof.times["s"].tolist() == [1.0, 2.0]
    frozen = study.profile({"a": 0}, {"s": lambda p: {"residual": 0.0}, "t": lambda p: {"residual": 0.0}},
                           timer=lambda: 7.0, progress=False)  # a clock too coarse to see the runs
    assert frozen.times.to_numpy().tolist() == [[0.0, 0.0]] and frozen.ratios.to_numpy().tolist() == [[1.0, 1.0]]
    with pytest.raises(ValueError, match="tol must be"):
        study.profile({"a": 0}, {"s": slow_then_fast}, tol=-1.0)
    with pytest.raises(ValueError, match="repeat must be"):
        study.profile({"a": 0}, {"s": slow_then_fast}, repeat=0)
    with pytest.raises(TypeError, match=r"solvers\['s'\] must be callable"):
        study.profile({"a": 0}, {"s": 1})
    with pytest.raises(ValueError, match="problems must not be empty"):
        study.profile({}, {"s": slow_then_fast})
    with pytest.raises(ValueError, match="tau must hold numbers"):
        prof.rho(math.nan)


def test_profile_of_two_ccp_methods_end_to_end():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = {f"pile{n}": granular_pile(n, 2 * n, seed=n) for n in (10, 20, 30)}
    tol = 1e-8
    limit = {"apgd": 2000, "pjacobi": 60}  # Jacobi with a tight iteration limit fails on some piles
    solvers = {m: (lambda p, m=m: mbdcp.ccp(**p, method=m, tol=tol, max_iter=limit[m])) for m in limit}
    prof = study.profile(problems, solvers, tol=tol, progress=False)
    solved = {(p, m): mbdcp.ccp(**problems[p], method=m, tol=tol, max_iter=limit[m]).residual <= tol
              for p in problems for m in solvers}
    assert 0 < sum(solved.values()) < len(solved)  # both branches are exercised
    for (p, m), ok in solved.items():
        assert np.isfinite(prof.times.loc[p, m]) == ok and (prof.errors.loc[p, m] is None) == ok
        assert (prof.times.loc[p, m] > 0) if ok else np.isinf(prof.ratios.loc[p, m])
    finite = prof.ratios.to_numpy()[np.isfinite(prof.ratios.to_numpy())]
    assert finite.min() >= 1.0
    for p in problems:
        if any(solved[p, m] for m in solvers):
            assert prof.ratios.loc[p].min() == 1.0  # the fastest solver of p has ratio 1
    for m in solvers:
        assert prof.rho(math.inf)[m] == np.mean([solved[p, m] for p in problems])
    fig, ax = plt.subplots()
    assert prof.plot(ax) is ax
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["apgd", "pjacobi"]
    for ln, m in zip(lines, solvers):
        x, y = ln.get_data()
        assert x[0] == 1.0 and np.all(np.diff(y) >= 0) and y[-1] == prof.rho(math.inf)[m]
        assert y[0] == prof.rho(1.0)[m]
    assert ax.get_xscale() == "log"
    plt.close(fig)
