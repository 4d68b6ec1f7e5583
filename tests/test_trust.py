"""A result marked SOLVED is a solution row by row, each row at its own scale, in any units; an
infeasible LCP is never SOLVED; every P-matrix LCP is SOLVED at any row and column scaling; a wrong
call of the private wrappers raises instead of reading out of bounds.

Every verdict here is computed from the returned z in extended precision (np.longdouble), by the
definition: z_i >= 0, w_i >= -tol s_i, and z_i = 0 or w_i <= tol s_i, with w = M z + q and
s = |M||z| + |q| row by row (no global floor). Each random family has its own seeds.
"""
import numpy as np
import pytest

import mbdcp
from mbdcp import Status, _core
from mbdcp.testing import certifies_infeasibility, infeasible_lcp, lcp_problem, random_spd, solves_lcp, spread_lcp

TOL = 1e-9  # the default verification tolerance of Lemke


def row_local_solution(M, q, z, tol=TOL):
    return solves_lcp(M, q, z, tol)


# ---------------------------------------------------------------- row-local acceptance


def test_a_small_row_beside_a_huge_one_is_judged_at_its_own_scale():
    res = mbdcp.lemke(np.eye(2), [-1e10, -1e-5])
    assert res.success and row_local_solution(np.eye(2), [-1e10, -1e-5], res.z)
    np.testing.assert_array_equal(res.z, [1e10, 1e-5])


def test_a_tiny_infeasible_row_is_not_hidden_by_a_huge_one():
    M, q = np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([-1e8, -1e-8])
    res = mbdcp.lemke(M, q)
    assert res.status == Status.RAY_TERMINATION
    assert certifies_infeasibility(M, q, res.certificate)


def test_the_residual_is_the_worst_rows_ratio_and_a_failure_names_the_row():
    M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-5.0, -6.0])
    assert mbdcp.lemke(M, q).residual <= TOL
    cut = mbdcp.lemke(M, q, max_iter=1)  # z0 still basic: the last point is z = 0, w = q
    w = M @ cut.z + q
    s = np.abs(M) @ cut.z + np.abs(q)
    ratio = (np.maximum(-w, 0) + np.where(cut.z > 0, np.maximum(w, 0), 0)) / s
    assert cut.status == Status.MAX_ITERATIONS and cut.residual == pytest.approx(ratio.max()) and ratio.max() > 0
    assert f"row {int(ratio.argmax())} is violated by" in cut.message


@pytest.mark.parametrize("block", range(4))
def test_every_solved_answer_holds_row_by_row(block):
    # 2,000 LCPs with rows over twenty orders of magnitude (500 per block)
    false, solved = [], 0
    for k in range(500):
        rng = np.random.default_rng(29_000 + 500 * block + k)
        M, q = spread_lcp(int(rng.integers(2, 31)), rng)
        res = mbdcp.lemke(M, q)
        if res.success:
            solved += 1
            if not row_local_solution(M, q, res.z):
                false.append(k)
    assert not false, f"false SOLVED: {false[:10]}"
    # P-matrices, one solution each; with values over 24 orders of magnitude a few Lemke paths
    # break down in rounding (ties decided at the largest value's scale) and say so
    assert solved >= 460


@pytest.mark.parametrize("seed", range(6))
def test_box_drop_steps_are_solutions_row_by_row(seed):
    # the time-stepping LCPs that mbdcp.step assembles for a box tumbling onto the floor (rows of
    # a resting contact are rounding noise of the others) hold row by row as step returns them
    from mbdcp.mechanics import Body3D, Plane, Scene, simulate

    rng = np.random.default_rng(seed)
    q = rng.standard_normal(4)
    box = Body3D(1.0, [0, 0, rng.uniform(0.6, 1.2)], quaternion=q / np.linalg.norm(q), velocity=rng.uniform(-1, 1, 3),
                 omega=rng.uniform(-3, 3, 3), half_extents=[0.5, 0.3, 0.2])
    checked = []
    step = mbdcp.step

    def checking(*a, **k):
        res = step(*a, **{**k, "return_lcp": True})
        if res.success:
            checked.append(row_local_solution(res.lcp.F, res.lcp.f, res.lcp.z))
        return res

    mbdcp.step = checking
    try:
        tr = simulate(Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=rng.uniform(0.1, 0.8), n_d=8, delta=0.02),
                      0.005, 0.6, method="lcp", progress=False)
    finally:
        mbdcp.step = step
    assert tr.success and len(checked) == tr.steps and all(checked)


# ---------------------------------------------------------------- infeasible: never SOLVED


@pytest.mark.parametrize("block", range(4))
def test_infeasible_monotone_lcps_are_never_solved(block):
    # M = B B^T with B^T d = 0 for some d >= 0 and q^T d < 0: no solution; 2,000 instances of
    # sizes 4..50 with data scaled over 1e-3..1e3 (globally or symmetrically, which keeps M PSD)
    for k in range(500):
        rng = np.random.default_rng(31_000 + 500 * block + k)
        M, q = infeasible_lcp(int(rng.integers(4, 51)), rng)
        d = 10 ** rng.uniform(-3, 3, len(q)) if rng.uniform() < 0.5 else np.full(len(q), 10 ** rng.uniform(-3, 3))
        M, q = d[:, None] * M * d[None, :], d * q
        res = mbdcp.lemke(M, q)
        assert not res.success, f"instance {k}: SOLVED"
        assert res.status == Status.RAY_TERMINATION, f"instance {k}: {res.status.name}"
        # a certificate found on a ray holds at tol; one read off a huge cancelling answer, at sqrt(tol)
        assert certifies_infeasibility(M, q, res.certificate, np.sqrt(TOL)), f"instance {k}: the certificate does not hold"


# ---------------------------------------------------------------- P-matrices: always SOLVED


@pytest.mark.parametrize("lo, hi", [(-6, 6), (-8, 8)])
def test_every_p_matrix_lcp_is_solved_at_any_scaling(lo, hi):
    for k in range(1000):
        rng = np.random.default_rng(37_000 + 1000 * hi + k)
        n = int(rng.integers(2, 41))
        M, q = lcp_problem("P", n, rng)
        r, c = 10 ** rng.uniform(lo, hi, n), 10 ** rng.uniform(lo, hi, n)
        M, q = r[:, None] * M * c[None, :], r * q
        res = mbdcp.lemke(M, q)
        assert res.success, f"instance {k} (n = {n}): {res.message}"
        assert row_local_solution(M, q, res.z), f"instance {k}"


# ---------------------------------------------------------------- private wrappers


def _lemke_batch_args(B=3, n=4, count=3, **over):
    a = dict(Ms=np.tile(np.eye(n), (B, 1, 1)), qs=-np.ones((B, n)), first=0, count=count, max_iter=0, tol=0.0,
             z=np.zeros((B, n)), w=np.zeros((B, n)), basis=np.zeros((B, n), np.intc), status=np.zeros(B, np.intc),
             pivots=np.zeros(B, np.intc), residual=np.zeros(B))
    a.update(over)
    return list(a.values())


def _step_problem(**change):
    """A StepProblem of one particle on the ground with two friction directions, changed."""
    from mbdcp.infrastructure.problem import StepProblem

    fields = dict(M=np.eye(3), Wn=np.array([[0.0], [1.0], [0.0]]), D=np.array([[1.0, -1.0], [0, 0], [0, 0]]),
                  E=np.ones((2, 1)), mu=np.array([0.5]), v=np.zeros(3), h=0.1)
    return StepProblem(**{**fields, **change})


WRONG_CALLS = {
    "lemke: q longer than M": lambda: _core.lemke(np.eye(2), -np.ones(3), 0, 0.0, False, None),
    "lemke: short start": lambda: _core.lemke(np.eye(3), -np.ones(3), 0, 0.0, False, np.ones(2, np.intc)),
    "lcp_residual: short z": lambda: _core.lcp_residual(np.eye(3), np.ones(3), np.ones(2)),
    "lcp_verify: long z": lambda: _core.lcp_verify(np.eye(3), np.ones(3), np.ones(5), 1e-9),
    "lemke_batch: count past the arrays": lambda: _core.lemke_batch(*_lemke_batch_args(count=10)),
    "lemke_batch: negative first": lambda: _core.lemke_batch(*_lemke_batch_args(first=-1, count=1)),
    "lemke_batch: short outputs": lambda: _core.lemke_batch(*_lemke_batch_args(z=np.zeros((2, 4)))),
    "lemke_batch: Ms of another size": lambda: _core.lemke_batch(*_lemke_batch_args(Ms=np.tile(np.eye(5), (3, 1, 1)))),
    "sliding_speed: E of another height": lambda: _core.sliding_speed(np.zeros((3, 4)), np.ones((2, 1)), np.zeros(3)),
    "cone_project: two entries": lambda: _core.cone_project(0.5, np.zeros(2)),
    "fc_local: 2 x 2": lambda: _core.fc_local(np.eye(2), np.zeros(2), 0.5, True, None),
    "asymmetry: not square": lambda: _core.asymmetry(np.zeros((2, 3))),
    "block_spd_inverse: not square blocks": lambda: _core.block_spd_inverse(np.zeros((2, 3, 4))),
    "ccp: pointers past the indices": lambda: _core.ccp(
        3, 1, 0, np.array([0, 1, 2, 9], np.intc), np.array([0, 1, 2], np.intc), np.ones(3),
        np.array([0, 1, 2, 3], np.intc), np.array([0, 1, 2], np.intc), np.ones(3), np.ones(1), np.zeros(3),
        "apgd", 1e-8, 10, 1.0, None),
    "ccp: row index out of range": lambda: _core.ccp(
        3, 1, 0, np.array([0, 1, 2, 3], np.intc), np.array([0, 1, 7], np.intc), np.ones(3),
        np.array([0, 1, 2, 3], np.intc), np.array([0, 1, 2], np.intc), np.ones(3), np.ones(1), np.zeros(3),
        "apgd", 1e-8, 10, 1.0, None),
    "fc_solve: W pointers of another size": lambda: _core.fc_solve(
        True, 1, 3, np.array([0, 1, 2], np.intc), np.array([0, 1], np.intc), np.ones(2), None, np.zeros(3),
        np.ones(1), "nsgs", "apgd", 1e-8, 10, 10, None),
    "step: Wn 1-D": lambda: _core.step(_step_problem(Wn=np.zeros(3)), 0, 0.0, False),
    "step: v too short": lambda: _core.step(_step_problem(v=np.zeros(2)), 0, 0.0, False),
    "step: float32 M": lambda: _core.step(_step_problem(M=np.eye(3, dtype=np.float32)), 0, 0.0, False),
    "step: E of another height": lambda: _core.step(_step_problem(E=np.ones((3, 1))), 0, 0.0, False),
    "step: short warm start": lambda: _core.step(_step_problem(), 0, 0.0, False, np.ones(1, np.intc)),
    "relax: gamma too long": lambda: _core.relax(1, _step_problem(), np.zeros(3), 0, 0.0, False),
}


@pytest.mark.parametrize("name", sorted(WRONG_CALLS))
def test_private_wrappers_check_what_they_pass_to_c(name):
    with pytest.raises((ValueError, TypeError), match="internal call"):
        WRONG_CALLS[name]()


# ---------------------------------------------------------------- extreme values


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1e160, 1e300, 5e-324])
def test_results_never_hold_inf_or_nan(scale):
    rng = np.random.default_rng(3)
    M = random_spd(6, rng)
    q = rng.standard_normal(6)
    res = mbdcp.lemke(M * scale, q * scale)
    assert np.all(np.isfinite(res.z)) and np.all(np.isfinite(res.w)) and np.isfinite(res.residual)
    if res.success:
        assert row_local_solution(M * scale, q * scale, res.z)
