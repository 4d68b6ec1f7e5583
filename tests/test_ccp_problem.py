"""The CCP's data checked once (CcpProblem: the solver, its derivative and the layers read it), the
C core's AUTO plan, and mbdcp.ccp's short way into C."""
import dataclasses
import doctest
import importlib
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mbdcp
from mbdcp.derivatives import _layers as ad
from mbdcp.formulations import ccp as formulation
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import problem as pb
from mbdcp.testing import granular_pile


def pile(seed, sparse=None, **extra):
    g = granular_pile(6, 6, seed=seed, sparse=seed % 2 == 0 if sparse is None else sparse)
    g["v"] = 0.3 * g["v"]
    g["psi_n"] = 0.1 * g["psi_n"]
    g.update(extra)
    return g


def split(data):
    args = [data[k] for k in ("M", "Wn", "Wt", "mu", "v", "h")]
    return args, {k: v for k, v in data.items() if k not in ("M", "Wn", "Wt", "mu", "v", "h")}


def test_mbdcp_ccp_reaches_c_in_four_frames(monkeypatch):
    """mbdcp.ccp -> _solve -> _run_core -> _core.ccp: the frames between the call and the C core
    (a small solve's time is mostly its Python calls)."""
    depth = []
    inner = _core.ccp

    def spy(*args):
        f, n = sys._getframe(1), 1
        while f is not None and f.f_code is not formulation.ccp.__code__:
            f, n = f.f_back, n + 1
        depth.append(n + 1 if f is not None else None)  # the frames from mbdcp.ccp's to the C call's
        return inner(*args)

    monkeypatch.setattr(_core, "ccp", spy)
    data = pile(1)
    for method in ("apgd", "auto", "ipm"):
        mbdcp.ccp(**data, method=method)
    assert depth == [4, 4, 4]


def test_ccp_data_is_what_the_solver_and_the_derivative_read():
    """One check of the data: P built once (cone_jacobian's columns), the corrected gap with its
    chain, absent vectors empty, the names given sparse; the derivative's form keeps M as given
    (no inverse) and refuses M as diagonal blocks, whose gradient would have another shape."""
    rng = np.random.default_rng(3)
    data = pile(2, Wb=rng.standard_normal((36, 2)), theta=1e-3 * rng.standard_normal(2))
    args, kw = split(data)
    pr = pb.ccp_data(*args, **kw, max_correction_speed=0.5, baumgarte=0.5)
    P = pb.cone_jacobian(data["Wn"], data["Wt"], data["Wb"])
    P.sort_indices()
    for a, b in zip(pr.P, (P.indptr, P.indices, P.data)):
        np.testing.assert_array_equal(a, b)
    assert pr.P[0].dtype == pr.P[1].dtype == np.intc and pr.sizes == (36, data["Wn"].shape[1], 2)
    assert pr.psi_chain is not None and pr.dtheta.size == 0 and pr.dpsi_t is None
    assert pr.sparse == {"M", "Wn", "Wt"} and sp.issparse(pr.Minv)
    pen = data["psi_n"] < 0
    np.testing.assert_array_equal(pr.psi_n[~pen], data["psi_n"][~pen])
    assert np.all(pr.psi_n[pen] >= -data["h"] * 0.5) and np.all(pr.psi_n[pen] > data["psi_n"][pen])
    np.testing.assert_array_equal(pr.mass_matrix().toarray(), data["M"].toarray())
    lean = pb.ccp_data(*args, **kw, invert=False)
    assert lean.Minv is None and lean.psi_chain is None and lean.blocks is None
    np.testing.assert_array_equal(lean.psi_n, kw["psi_n"])
    blocks = np.stack([2.0 * np.eye(6)] * 6)
    by_blocks = pb.ccp_data(blocks, *args[1:], **kw)
    assert by_blocks.blocks.shape == by_blocks.Minv.shape == (6, 6, 6) and np.all(by_blocks.Minv == 0.5 * np.eye(6))
    with pytest.raises(ValueError, match="M must be 2-dimensional"):
        pb.ccp_data(blocks, *args[1:], **kw, invert=False)
    with pytest.raises(ValueError, match="dpsi_t"):
        pb.ccp_data(*args, **kw, dpsi_t=np.zeros(3))


def test_a_result_carries_its_problem_to_the_derivative(monkeypatch):
    """The layers' derivative at a result of mbdcp.ccp reads the problem the result carries: the
    data are checked once (in the forward solve), and the gradients are the ones the derivative of
    the checked data gives. A result changed by dataclasses.replace carries none: its derivative
    checks the data it is given."""
    calls = []
    inner = pb.ccp_data

    def counted(*a, **k):
        calls.append(k.get("invert", True))
        return inner(*a, **k)

    monkeypatch.setattr(formulation, "ccp_data", counted)
    monkeypatch.setattr(sys.modules["mbdcp.derivatives.ccp"], "ccp_data", counted)
    problem = ad.PROBLEMS["ccp"]
    assert problem.at is sys.modules["mbdcp.derivatives.ccp"].at
    for seed, extra in ((3, {}), (4, {"max_correction_speed": 0.2})):
        data = pile(seed, sparse=False)  # the layers' arrays are dense
        arrays = {k: v for k, v in data.items()}
        call_args = ad.arguments(problem, arrays)
        options = dict(tol=1e-13, max_iter=100_000, method="pgs", **extra)
        solver_options, derivative_options = ad.split_options(problem, options)
        calls.clear()
        res = ad.solve(problem, *call_args, solver_options)
        cots = [np.ones(36), np.ones((data["Wn"].shape[1], 3)), np.zeros(0)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ad.DegenerateWarning)
            got = ad.backward_one(problem, arrays, call_args, res, derivative_options, cots, list(arrays))
            assert calls == [True]  # the forward solve's check only
            bare = dataclasses.replace(res)  # no problem carried: the data checked again
            want = ad.backward_one(problem, arrays, call_args, bare, derivative_options, cots, list(arrays))
        assert calls == [True, False]
        for g, w in zip(got, want):
            g, w = (x.toarray() if sp.issparse(x) else np.asarray(x) for x in (g, w))
            np.testing.assert_array_equal(g, w)


def test_the_plan_is_the_c_cores():
    """_core.ccp hands the kept plan to C and returns the one to keep: AUTO's own after an analysis
    ((mbdcp_ccp_auto_budget's budget, n_c)), the one given when it serves or the method is not
    AUTO; a plan without M (whose analysis C may ask for) is refused."""
    data = pile(5)
    pr = pb.ccp_data(*split(data)[0], **split(data)[1])
    Qm = pb._csc_arrays(sp.csc_matrix(pr.Minv @ pr.P_matrix()))
    p = _core.transpose_times(*pr.P, pr.v)
    p[0::3] += pr.psi_n / pr.h

    def run(method, plan):
        return _core.ccp(*pr.sizes, *pr.P, *Qm, pr.mu, p, method, 1e-10, 10_000, 0.0, None, pr.mass_csc, plan)

    own = run("auto", None)
    assert own[-1][1] == pr.n_c and 50 <= own[-1][0] <= 2500
    assert run("auto", own[-1])[-1] == own[-1] and run("apgd", (7, 3))[-1] == (7, 3)
    far = run("auto", (7, 10 * pr.n_c))  # does not serve: analysed afresh
    assert far[-1] == own[-1] and far[4] == own[4]
    short = run("auto", (3, pr.n_c))  # serves, too short: APGD's 3 iterations, then the interior-point method
    assert short[-1] == (3, pr.n_c) and short[3] == 0 and short[4] > 3 and len(short[2]) == short[4]
    with pytest.raises(ValueError, match="internal call"):
        _core.ccp(*pr.sizes, *pr.P, *Qm, pr.mu, p, "auto", 1e-10, 100, 0.0, None, None, (3, pr.n_c))


def test_problem_module_examples():
    result = doctest.testmod(importlib.import_module("mbdcp.infrastructure.problem"), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
