"""The fixed-point algorithms' sparse active-set subproblem solves (mbdcp/relax_sparse.h) against
their definitions and against the Lemke-based path (Anitescu & Hart 2004, algorithms 1-3)."""
import numpy as np
import pytest

import mbdcp
from mbdcp import Status
from mbdcp.formulations.relax import _data
from mbdcp.infrastructure import _core
from mbdcp.infrastructure.problem import compressed_step
from mbdcp.mechanics import disk_pile_scene

PILES = [(n, mu) for n in (12, 30, 75) for mu in (0.05, 0.2, 0.5)]


def moving_pile(n, mu, seed, sigma=1.5, h=0.01):
    """disk_pile_scene's contacts with velocities drawn with sigma (benchmarks/bench_relax.py)."""
    a = disk_pile_scene(n, mu=mu, seed=seed).assemble(h)
    v = sigma * np.random.default_rng(seed + 1).standard_normal(a["v"].shape)
    return (a["M"], a["Wn"], a["D"], a["E"], a["U"], v, h), {"p_ext": a["p_ext"], "psi_n": a["psi_n"]}


def problem(args, kw):
    return _data(*args, kw["p_ext"], kw["psi_n"], None, None, None)


def solves_lcp(F, f, z, tol=1e-9):
    """z solves LCP(F, f) by definition, in extended precision: each row's violation at most tol
    times its scale |F||z| + |f|."""
    F, f, z = (np.asarray(a, dtype=np.longdouble) for a in (F, f, z))
    w = F @ z + f
    s = np.abs(F) @ np.abs(z) + np.abs(f)
    bad = np.maximum(-w, 0) + np.where(z > 0, np.maximum(w, 0), 0)
    return z.min() >= 0 and bool(np.all(bad <= tol * s))


@pytest.mark.parametrize("n, mu", PILES)
@pytest.mark.parametrize("algorithm", [1, 2, 3])
def test_velocities_equal_the_lemke_path(n, mu, algorithm):
    """Where the sparse solves verify every subproblem, the algorithm's velocity is the
    Lemke-based path's (P1's and P2's velocities are unique); otherwise the status says so."""
    args, kw = moving_pile(n, mu, seed=n)
    d = problem(args, kw)
    sparse = _core.fixed_point_sparse(d, algorithm, 1e-8, 100)
    lemke = _core.fixed_point(d, algorithm, 1e-8, 100)
    status = Status(sparse[6])
    assert status in (Status.SOLVED, Status.MAX_ITERATIONS, Status.NUMERICAL_ERROR)
    if status != Status.NUMERICAL_ERROR:
        assert sparse[7] == lemke[7]  # iterations
        scale = max(1.0, np.abs(lemke[0]).max())
        np.testing.assert_allclose(sparse[0], lemke[0], rtol=0, atol=1e-8 * scale)


def test_most_benchmark_piles_are_solved_sparsely():
    solved = sum(Status(_core.fixed_point_sparse(problem(*moving_pile(n, mu, seed=n)), 3, 1e-8, 100)[6])
                 == Status.SOLVED for n, mu in PILES)
    assert solved >= len(PILES) - 2


@pytest.mark.parametrize("n, mu", [(30, 0.05), (75, 0.2), (75, 0.5)])
def test_p1_and_p2_answers_satisfy_their_subproblems(n, mu):
    """Algorithm 1 with one iteration returns P1(0)'s (p_n, beta) and v, algorithm 3 P2(Lambda(v))'s:
    checked against the dense LCPs of mbdcp.relax.p1 / p2 by definition (lam = Lambda(v) for P1)."""
    args, kw = moving_pile(n, mu, seed=n)
    d = problem(args, kw)
    n_c = args[1].shape[1]
    one = _core.fixed_point_sparse(d, 1, 1e-8, 1)
    if Status(one[6]) == Status.NUMERICAL_ERROR:
        pytest.skip("no sparse point (the Lemke path answers)")
    lcp1 = mbdcp.relax.p1(*args, np.zeros(n_c), **kw, return_lcp=True).lcp
    assert solves_lcp(lcp1.F, lcp1.f, np.concatenate([one[2], one[3], one[4]]))
    three = _core.fixed_point_sparse(d, 3, 1e-8, 100)
    if Status(three[6]) == Status.SOLVED:
        lcp2 = mbdcp.relax.p2(*args, one[4], **kw, return_lcp=True).lcp
        assert solves_lcp(lcp2.F, lcp2.f, np.concatenate([three[2], three[3]]))


@pytest.mark.parametrize("algorithm", [1, 2, 3])
def test_fixed_point_falls_back_to_lemke_with_the_same_answer(algorithm):
    """mbdcp.fixed_point (sparse first, Lemke where a subproblem fails) against the Lemke path,
    on resting piles where the active-set steps may not find the basis."""
    for n, mu in ((30, 0.5), (75, 0.05)):
        s = mbdcp.testing.disk_pile(n, seed=n, mu=mu)
        res = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=algorithm, tol=1e-8)
        lemke = _core.fixed_point(problem(s.args(), s.kwargs()), algorithm, 1e-8, 100)
        assert res.status == Status(lemke[6])
        np.testing.assert_allclose(res.v_next, lemke[0], rtol=0, atol=1e-8 * max(1.0, np.abs(lemke[0]).max()))


@pytest.mark.parametrize("n, mu", [(30, 0.2), (75, 0.5), (90, 0.2), (120, 0.5)])
@pytest.mark.parametrize("algorithm", [1, 2, 3])
def test_sparse_inputs_give_the_dense_inputs_answer(n, mu, algorithm, monkeypatch):
    """scipy.sparse M, Wn, D, E (Scene.assemble(sparse=True)) are solved in compressed storage from
    COMPRESS_MIN_VELOCITIES velocities on, never made dense, and made dense below it (compressing
    costs more than the solve there), with the answer of the same step given as arrays (the same
    entries, so the same factors: bit for bit)."""
    from mbdcp.formulations import relax as relax_module

    scene = disk_pile_scene(n, mu=mu, seed=n)
    a, s = scene.assemble(0.01), scene.assemble(0.01, sparse=True)
    v = 1.5 * np.random.default_rng(n + 1).standard_normal(a["v"].shape)
    kw = {"p_ext": a["p_ext"], "psi_n": a["psi_n"], "algorithm": algorithm, "tol": 1e-8, "max_iter": 100}
    dense = mbdcp.fixed_point(a["M"], a["Wn"], a["D"], a["E"], a["U"], v, 0.01, **kw)
    compressed = []
    monkeypatch.setattr(relax_module, "compressed_step", lambda *x: compressed.append(1) or compressed_step(*x))
    sparse = mbdcp.fixed_point(s["M"], s["Wn"], s["D"], s["E"], s["U"], v, 0.01, **kw)
    assert bool(compressed) == (v.shape[0] >= relax_module.COMPRESS_MIN_VELOCITIES)
    assert sparse.status == dense.status
    for name in ("v_next", "p_n", "beta", "lam", "cone_slack", "basis", "basis_p2"):
        np.testing.assert_array_equal(getattr(sparse, name), getattr(dense, name), err_msg=name)


def test_compressed_step_checks_sparse_inputs_as_step_data_does():
    import scipy.sparse as sp

    args, kw = moving_pile(100, 0.2, seed=100)  # 300 velocities: compressed (COMPRESS_MIN_VELOCITIES)
    M, Wn, D, E, U, v, h = args
    fp = mbdcp.fixed_point
    with pytest.raises(ValueError, match="M must be symmetric"):
        fp(sp.csr_matrix(M + np.triu(np.ones_like(M), 1)), Wn, D, E, U, v, h, **kw)
    with pytest.raises(ValueError, match="M must be symmetric positive definite"):
        fp(sp.csr_matrix(M - 2 * np.diag(np.diag(M))), Wn, D, E, U, v, h, **kw)
    with pytest.raises(ValueError, match=r"Wn must have shape \(n_v, n_c\)"):
        fp(sp.csr_matrix(M), sp.csc_matrix(Wn[1:]), D, E, U, v, h, **kw)
    with pytest.raises(ValueError, match="E must have exactly one 1"):
        fp(sp.csr_matrix(M), Wn, D, sp.csr_matrix(2 * E), U, v, h, **kw)
    with pytest.raises(ValueError, match="E must group"):
        fp(sp.csr_matrix(M), Wn, D, sp.csr_matrix(E[::-1]), U, v, h, **kw)
    with pytest.raises(ValueError, match="must hold finite values"):
        fp(sp.csr_matrix(M), sp.csc_matrix(np.where(Wn != 0, np.inf, 0)), D, E, U, v, h, **kw)
    with pytest.raises(ValueError, match="U must be nonnegative"):
        fp(sp.csr_matrix(M), Wn, D, E, -U, v, h, **kw)


def test_sparse_inputs_fall_back_to_lemke_with_the_dense_answer(monkeypatch):
    """Where the sparse solves give no verified point, the step is made dense for Lemke's path."""
    import scipy.sparse as sp

    from mbdcp.formulations import relax as relax_module

    args, kw = moving_pile(30, 0.2, seed=30)
    dense = mbdcp.fixed_point(*args, **kw, algorithm=2, tol=1e-8)
    monkeypatch.setattr(relax_module, "_sparse", lambda *a: None)
    M, Wn, D, E, *rest = args
    sparse = mbdcp.fixed_point(sp.csr_matrix(M), sp.csc_matrix(Wn), sp.csc_matrix(D), sp.csr_matrix(E), *rest, **kw,
                               algorithm=2, tol=1e-8)
    assert sparse.status == Status.SOLVED
    np.testing.assert_allclose(sparse.v_next, dense.v_next, rtol=0, atol=1e-8 * max(1.0, np.abs(dense.v_next).max()))
