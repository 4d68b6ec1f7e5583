"""Warm starts from a basis hint: Lemke, a time step, the fixed-point algorithms and simulate.

A hint changes the work, never the answer: a good hint is solved directly (no pivot), a wrong,
infeasible or singular one falls back to pivoting, and every result is verified by definition.
"""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import check_lcp

import mbdcp
from mbdcp import Status
from mbdcp.mechanics import disk_pile_scene, simulate
from mbdcp.testing import disk_pile, lcp_with_solution, random_spd


@pytest.mark.parametrize("seed", range(10))
def test_lemke_hint_from_its_own_basis_costs_no_pivot(seed):
    M = random_spd(12, seed=seed)
    q, z, _ = lcp_with_solution(M, seed=seed)
    cold = mbdcp.lemke(M, q)
    warm = mbdcp.lemke(M, q, basis=cold)
    assert cold.success and warm.success and warm.warm_started
    assert warm.pivots == 0
    np.testing.assert_allclose(warm.z, z, atol=1e-10)  # a P-matrix: one solution
    np.testing.assert_allclose(warm.z, cold.z, atol=1e-12)
    np.testing.assert_array_equal(warm.basis, cold.basis)
    check_lcp(M, q, warm.z, warm.w)


@pytest.mark.parametrize("seed", range(10))
def test_wrong_and_infeasible_hints_are_harmless(seed):
    rng = np.random.default_rng(seed)
    M = random_spd(10, seed=seed)
    q, z, _ = lcp_with_solution(M, seed=seed)
    cold = mbdcp.lemke(M, q)
    for hint in (rng.random(10) < 0.5, np.ones(10, bool), np.zeros(10, bool), ~cold.basis):
        res = mbdcp.lemke(M, q, basis=hint)
        assert res.success
        np.testing.assert_allclose(res.z, z, atol=1e-9)
        check_lcp(M, q, res.z, res.w)


def test_singular_hint_falls_back():
    # z_0 and z_1 basic: M_SS = [[1, 1], [1, 1]] is singular; Lemke still solves from cold
    M = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    q = np.array([-1.0, -1.0, -2.0])
    res = mbdcp.lemke(M, q, basis=np.array([True, True, False]))
    assert res.success
    check_lcp(M, q, res.z, res.w)


def test_a_neighbouring_problem_reuses_the_basis():
    """q perturbed a little: the old basis is still optimal, solved without a pivot."""
    M = random_spd(15, seed=3)
    q, _, _ = lcp_with_solution(M, seed=3)
    cold = mbdcp.lemke(M, q)
    q2 = q + 1e-6 * np.random.default_rng(0).standard_normal(15)
    warm = mbdcp.lemke(M, q2, basis=cold)
    assert warm.success and warm.pivots == 0
    check_lcp(M, q2, warm.z, warm.w)
    np.testing.assert_allclose(warm.z, mbdcp.lemke(M, q2).z, atol=1e-10)


@pytest.mark.parametrize("n", [12, 30])
def test_step_warm_start_same_velocity(n):
    s = disk_pile(n, seed=n)
    cold = mbdcp.step(*s.args(), **s.kwargs())
    warm = mbdcp.step(*s.args(), **s.kwargs(), warm_start=cold)
    assert cold.success and warm.success and warm.pivots == 0
    np.testing.assert_allclose(warm.v_next, cold.v_next, atol=1e-10)
    # a hint of another size is ignored
    other = mbdcp.step(*s.args(), **s.kwargs(), warm_start=np.ones(3, bool))
    np.testing.assert_allclose(other.v_next, cold.v_next, atol=1e-10)
    with pytest.raises(TypeError, match="warm_start"):
        mbdcp.step(*s.args(), **s.kwargs(), warm_start=np.ones(3))


@pytest.mark.parametrize("algorithm", [1, 2, 3])
def test_fixed_point_warm_start_same_answer(algorithm, monkeypatch):
    """Lemke's path (the sparse solves turned off: they count bases, one per P1 or P2 solve of an
    outer iteration at least, where the hint saves pivots)."""
    from mbdcp.formulations import relax as relax_module

    monkeypatch.setattr(relax_module, "SPARSE_MIN_SIZE", 10**9)
    s = disk_pile(30, seed=30, mu=0.2)
    cold = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=algorithm, crash=None)
    assert cold.basis.shape == (2 * s.Wn.shape[1] + s.D.shape[1],)
    assert cold.basis_p2.shape == (s.Wn.shape[1] + s.D.shape[1],)
    warm = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=algorithm, warm_start=cold)
    assert cold.success and warm.success
    assert warm.pivots < cold.pivots
    np.testing.assert_allclose(warm.v_next, cold.v_next, atol=1e-9)
    # P1 has the layout of the step's LCP (p_n, beta, lam = sigma): a step's basis starts it too
    step = mbdcp.step(*s.args(), **s.kwargs())
    from_step = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=algorithm, warm_start=step)
    np.testing.assert_allclose(from_step.v_next, cold.v_next, atol=1e-9)


def test_fixed_point_wrong_hints_are_harmless():
    s = disk_pile(12, seed=12, mu=0.5)
    cold = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=2)
    rng = np.random.default_rng(1)
    for k in range(5):
        hint = rng.random(cold.basis.shape[0]) < 0.5
        res = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=2, warm_start=hint)
        assert res.status == Status.SOLVED
        np.testing.assert_allclose(res.v_next, cold.v_next, atol=1e-8)


def test_simulate_carries_the_basis_across_changing_contacts(monkeypatch):
    """A pile that settles: contacts appear and vanish, the carried basis keeps the answer and
    saves pivots."""
    runs, pivots = {}, {}
    step = mbdcp.step
    for warm in (True, False):
        counted = []

        def counting(*args, **kwargs):
            res = step(*args, **kwargs)
            counted.append(res.pivots)
            return res

        monkeypatch.setattr(mbdcp, "step", counting)
        tr = simulate(disk_pile_scene(30, width=6), 0.01, 0.4, method="lcp", progress=False, warm_start=warm)
        assert tr.success
        runs[warm], pivots[warm] = tr, sum(counted)
    assert len(set(runs[True].contacts.tolist())) > 1  # the contact set changed
    np.testing.assert_allclose(runs[True].positions, runs[False].positions, atol=1e-7)
    assert pivots[True] < 0.5 * pivots[False]


def test_simulate_fixed_point_warm_equals_cold():
    runs = [simulate(disk_pile_scene(30, width=6), 0.01, 0.3, method="fixed_point", algorithm=3, progress=False,
                     warm_start=warm) for warm in (True, False)]
    assert all(tr.success for tr in runs)
    np.testing.assert_allclose(runs[0].positions, runs[1].positions, atol=1e-7)


def test_a_warm_started_settling_step_matches_the_cold_one():
    """A recorded algorithm 3 step of the settling 136-disk pile, warm-started from the last
    step's bases: once this hint led Lemke into a basis singular in double, whose point (friction
    impulses of 1e19, speeds of 1e6) passed the componentwise test scaled by |M||z| and blew
    the pile apart. P1 and P2 have one velocity each, so warm and cold must agree on it."""
    d = np.load(Path(__file__).parent / "data" / "pile136_step333.npz")
    args = (np.diag(d["Mdiag"]), d["Wn"], d["D"], d["E"], d["U"], d["v"], float(d["h"]))
    kw = dict(p_ext=d["p_ext"], psi_n=d["psi_n"], algorithm=3)
    cold = mbdcp.fixed_point(*args, **kw)
    warm = mbdcp.fixed_point(*args, **kw, warm_start=SimpleNamespace(basis=d["basis"], basis_p2=d["basis_p2"]))
    assert cold.success and warm.success
    scale = max(1.0, np.abs(cold.v_next).max())
    assert np.abs(warm.v_next - cold.v_next).max() <= 1e-8 * scale
    assert np.abs(warm.v_next).max() < 2.0  # disks dropped from under 7 m: no speed near 1e6
