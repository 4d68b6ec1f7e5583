"""Lemke's method: checked by definition, against exact arithmetic, closed forms and Siconos."""
import dataclasses
import json
import os
import threading
from fractions import Fraction

import numpy as np
import pytest
from conftest import HERE, check_lcp
from exact_lemke import exact_lemke

import mbdcp
from mbdcp import Status, _core
from mbdcp.testing import lcp_with_solution, random_spd, stewart_trinkle_lcp


def _load(name):
    with open(os.path.join(HERE, "data", name)) as fh:
        return json.load(fh)


SICONOS = _load("lcp_reference_solutions.json")
LITERATURE = {k: v for k, v in _load("lcp_literature_cases.json").items() if not v.get("covering_vector_d")}


def test_status_matches_c_constants():
    assert [s.value for s in Status] == [_core.SOLVED, _core.RAY_TERMINATION, _core.MAX_ITERATIONS,
                                         _core.NUMERICAL_ERROR, _core.INTERRUPTED] == [0, 1, 2, 3, 4]
    assert all(isinstance(s.message, str) and s.message for s in Status)


@pytest.mark.parametrize("name", sorted(SICONOS))
def test_siconos_collection_matches_exact_lexicographic_lemke(name):
    case = SICONOS[name]
    M, q = np.array(case["M_row_major"]), np.array(case["q"])
    res = mbdcp.lemke(M, q)
    if case["lexicographic_lemke_status"] == "ok":
        assert res.success and res.status == Status.SOLVED
        check_lcp(M, q, res.z, res.w)
        np.testing.assert_allclose(res.z, case["z_lex_lemke"], atol=1e-9 * max(1, np.abs(q).max()))
    else:
        assert not res.success and res.status == Status.RAY_TERMINATION
    # Same path as exact arithmetic: pivots counted after the initial one there. A ray without an
    # infeasibility certificate is retried with another covering vector, which adds pivots.
    expected = int(case["lexicographic_lemke_pivots_after_initial"])
    if res.success or res.certificate is not None:
        assert res.pivots - 1 == expected
    else:
        assert res.pivots - 1 > expected


@pytest.mark.parametrize("name", sorted(LITERATURE))
def test_literature_cases(name):
    case = LITERATURE[name]
    M, q = np.array(case["M_row_major"], float), np.array(case["q"], float)
    res = mbdcp.lemke(M, q)
    if case["lexicographic_lemke_status"] == "ok":
        assert res.success
        check_lcp(M, q, res.z, res.w)
        np.testing.assert_allclose(res.z, case["z_lex_lemke"], atol=1e-9 * max(1, np.abs(q).max()))
        assert res.pivots - 1 == case["pivots_after_initial"]
    else:
        _check_after_exact_ray(M, q, res, case["pivots_after_initial"] + 1)


def _check_after_exact_ray(M, q, res, exact_pivots):
    """Where exact Lemke (covering vector e) ends on a ray, mbdcp takes the same path, and then,
    the ray not certifying infeasibility, retries with another covering vector: a ray again,
    or a solution (verified)."""
    assert res.pivots > exact_pivots or res.certificate is not None
    if res.success:
        check_lcp(M, q, res.z, res.w)
    else:
        assert res.status == Status.RAY_TERMINATION
    if res.certificate is not None:  # Farkas: y >= 0, M^T y <= 0, q^T y < 0 proves infeasibility
        y = res.certificate
        assert y.min() >= 0 and (np.asarray(M).T @ y).max() <= 1e-9 * np.abs(M).max() and q @ y < 0


def test_murty_exponential_example_takes_2n_pivots():
    # lcp_exp_murty2 (n = 6): 2^6 pivots, the worst case of Lemke's method.
    case = SICONOS["lcp_exp_murty2"]
    res = mbdcp.lemke(case["M_row_major"], case["q"])
    assert res.success and res.pivots == 64


@pytest.mark.parametrize("seed", range(25))
def test_random_spd_p_matrix_unique_solution(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    M = random_spd(n, rng, cond=1e3)
    q, z, w = lcp_with_solution(M, rng)
    res = mbdcp.lemke(M, q)
    assert res.success
    check_lcp(M, q, res.z, res.w)
    np.testing.assert_allclose(res.z, z, atol=1e-8)  # a P-matrix LCP has exactly one solution
    assert res.residual == pytest.approx(mbdcp.lcp_residual(M, q, res.z))


@pytest.mark.parametrize("seed", range(25))
def test_random_nonsymmetric_positive_definite(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 50))
    S = rng.standard_normal((n, n))
    M = random_spd(n, rng, cond=50) + (S - S.T)  # x^T M x > 0: a P-matrix, not symmetric
    q, z, _ = lcp_with_solution(M, rng)
    res = mbdcp.lemke(M, q)
    assert res.success
    check_lcp(M, q, res.z, res.w)
    np.testing.assert_allclose(res.z, z, atol=1e-8)


@pytest.mark.parametrize("seed", range(30))
def test_degenerate_integer_problems_follow_exact_path(seed):
    # Small integer data with repeated q entries: many ratio ties at every step.
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(2, 9))
    M = rng.integers(-2, 4, (n, n)).astype(float)
    q = rng.choice([-2.0, -1.0, 0.0, 1.0], n)
    status, pivots, z, trace = exact_lemke(M.astype(int).tolist(), q.astype(int).tolist(), max_pivots=500)
    res = mbdcp.lemke(M, q, trace=True, max_iter=500)
    if status == "ok":
        assert res.success
        np.testing.assert_allclose(res.z, [float(x) for x in z], atol=1e-9)
        assert res.pivots == pivots
    elif status == "ray":
        _check_after_exact_ray(M, q, res, pivots)
        name = lambda v: "z0" if v == 2 * n else (f"w{v + 1}" if v < n else f"z{v - n + 1}")  # noqa: E731
        assert res.trace[:pivots] == [(name(a), name(b)) for a, b in trace]  # the same path up to the ray
    if res.success:
        check_lcp(M, q, res.z, res.w)


def test_kostreva_cycling_example_terminates():
    case = LITERATURE["Kostreva_Ex_1"]
    res = mbdcp.lemke(case["M_row_major"], case["q"])
    assert res.success and np.allclose(res.z, 1 / 3)


def test_trivial_exit_for_nonnegative_q():
    res = mbdcp.lemke(np.array([[-5.0, 2.0], [1.0, -3.0]]), [0.0, 2.0], trace=True)
    assert res.success and res.pivots == 0 and res.trace == []
    assert np.array_equal(res.z, [0, 0]) and np.array_equal(res.w, [0, 2])


def test_ray_termination_on_infeasible_copositive_plus():
    # M is positive semidefinite (copositive-plus); w1 + w2 = -2 < 0 for every z: infeasible.
    M = np.array([[1.0, -1.0], [-1.0, 1.0]])
    res = mbdcp.lemke(M, [-1.0, -1.0])
    assert res.status == Status.RAY_TERMINATION and not res.success
    # The zero matrix is copositive-plus; with q < 0 no z helps.
    res = mbdcp.lemke(np.zeros((5, 5)), -np.ones(5))
    assert res.status == Status.RAY_TERMINATION


def test_infeasible_negative_scalar_is_not_success():
    # Siconos 4.4.0 lcp_lexicolemke reports success here.
    res = mbdcp.lemke([[-1.0]], [-1.0])
    assert not res.success and res.status == Status.RAY_TERMINATION


def test_pivot_limit_is_a_status():
    case = SICONOS["lcp_exp_murty2"]
    res = mbdcp.lemke(case["M_row_major"], case["q"], max_iter=10)
    assert res.status == Status.MAX_ITERATIONS and not res.success and res.pivots == 10


def test_trace_names_and_chain():
    M = np.array([[1.0, -1.0, -1.0, -1.0], [-1.0, 1.0, -1.0, -1.0], [1.0, 1.0, 2.0, 0.0], [1.0, 1.0, 0.0, 2.0]])
    q = np.array([3.0, 5.0, -9.0, -5.0])
    res = mbdcp.lemke(M, q, trace=True)
    assert res.success and len(res.trace) == res.pivots
    assert res.trace[0] == ("z0", "w3") and res.pivots == 5
    assert res.trace[-1][1] == "z0"
    for (_, left), (came, _) in zip(res.trace, res.trace[1:]):
        assert came == ("z" if left[0] == "w" else "w") + left[1:]  # the complement enters next
    status, pivots, _, exact_trace = exact_lemke(M.tolist(), q.tolist())
    n = 4
    names = ["w%d" % (i + 1) for i in range(n)] + ["z%d" % (i + 1) for i in range(n)] + ["z0"]
    assert res.trace == [(names[a], names[b]) for a, b in exact_trace]


@pytest.mark.parametrize("seed", range(40))
def test_never_claims_success_on_a_non_solution(seed):
    # Arbitrary matrices: Lemke may fail, but "success" must always be a solution.
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(1, 12))
    M = rng.standard_normal((n, n)) * rng.choice([1e-3, 1.0, 1e3])
    q = rng.standard_normal(n)
    res = mbdcp.lemke(M, q)
    if res.success:
        check_lcp(M, q, res.z, res.w, tol=1e-8)
    else:
        assert res.status in (Status.RAY_TERMINATION, Status.MAX_ITERATIONS, Status.NUMERICAL_ERROR)


@pytest.mark.parametrize("seed", range(10))
def test_stewart_trinkle_lcps_solved(seed):
    F, f = stewart_trinkle_lcp(5, 12, seed=seed)
    res = mbdcp.lemke(F, f)
    assert res.success
    check_lcp(F, f, res.z, res.w)


def test_any_layout_and_read_only_input(rng):
    M = random_spd(6, rng)
    q, z, _ = lcp_with_solution(M, rng)
    ref = mbdcp.lemke(M, q).z
    Mf = np.asfortranarray(M)
    Mro = M.copy()
    Mro.setflags(write=False)
    qro = q.copy()
    qro.setflags(write=False)
    big = np.zeros((12, 12))
    big[::2, ::2] = M
    for Mx, qx in [(Mf, q), (Mro, qro), (big[::2, ::2], np.repeat(q, 2)[::2]), (M.tolist(), q.tolist()),
                   (M.astype(np.float32).astype(np.float64), q)]:
        np.testing.assert_allclose(mbdcp.lemke(Mx, qx).z, ref, atol=1e-6)
    assert np.array_equal(Mro, M) and np.array_equal(qro, q)  # inputs untouched
    assert mbdcp.lemke(np.eye(2, dtype=int), np.array([-1, -2])).success


def test_fast_path_result_is_the_validating_paths(rng):
    """Plain float64 input takes the fast path (its result built in Cython, field by field); a list
    takes the validating path. Same fields, same values, whatever the status."""
    M = random_spd(5, rng)
    cases = [(M, lcp_with_solution(M, rng)[0], {}), (-np.eye(2), -np.ones(2), {}), (M, -np.ones(5), {"max_iter": 1})]
    for M_, q_, kw in cases:
        fast, slow = mbdcp.lemke(M_, q_, **kw), mbdcp.lemke(M_.tolist(), q_.tolist(), **kw)
        names = [f.name for f in dataclasses.fields(mbdcp.LemkeResult)]
        assert sorted(vars(fast)) == sorted(vars(slow)) == sorted(names)
        for name in names:
            a, b = getattr(fast, name), getattr(slow, name)
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, name
    assert {mbdcp.lemke(*c[:2], **c[2]).status for c in cases} == {Status.SOLVED, Status.RAY_TERMINATION,
                                                                    Status.MAX_ITERATIONS}


def test_empty_problem():
    res = mbdcp.lemke(np.zeros((0, 0)), np.zeros(0))
    assert res.success and res.z.shape == (0,)


@pytest.mark.parametrize(
    "M, q, kwargs, exc, words",
    [
        ([[1.0, 0.0]], [1.0], {}, ValueError, "M must have shape"),
        (np.eye(2), [1.0, 2.0, 3.0], {}, ValueError, "q must have shape (n,) = (2,), got (3,) (M is n x n)"),
        (np.eye(2), [[1.0, 2.0]], {}, ValueError, "q must be 1-dimensional"),
        (np.eye(2), [np.nan, 1.0], {}, ValueError, "q must hold finite"),
        ([[np.inf, 0], [0, 1]], [1.0, 1.0], {}, ValueError, "M must hold finite"),
        (np.eye(2), ["a", "b"], {}, TypeError, "q must hold real numbers"),
        (np.eye(2) * 1j, [1.0, 1.0], {}, TypeError, "M must be real"),
        (None, [1.0], {}, TypeError, "M is required"),
        (np.eye(1), [1.0], {"max_iter": 0}, ValueError, "max_iter"),
        (np.eye(1), [1.0], {"max_iter": 2.5}, TypeError, "max_iter"),
        (np.eye(1), [1.0], {"tol": -1.0}, ValueError, "tol"),
        (np.eye(1), [1.0], {"tol": 2.0}, ValueError, "tol"),
        (np.eye(1), [1.0], {"tol": "x"}, TypeError, "tol"),
    ],
)
def test_bad_input(M, q, kwargs, exc, words):
    with pytest.raises(exc, match=None) as info:
        mbdcp.lemke(M, q, **kwargs)
    assert words in str(info.value)


def test_lcp_residual_by_definition():
    M = np.array([[1.0, 2.0], [0.0, 1.0]])
    assert mbdcp.lcp_residual(M, [-1.0, 1.0], [1.0, 0.0]) == 0.0
    assert mbdcp.lcp_residual(M, [-1.0, 1.0], [2.0, 0.0]) == pytest.approx(1.0)  # w1 = 1, z1 = 2
    assert mbdcp.lcp_residual(M, [-1.0, 1.0], [0.0, 0.0]) == pytest.approx(1.0)  # w1 = -1
    with pytest.raises(ValueError, match="z must have shape"):
        mbdcp.lcp_residual(M, [1.0, 1.0], [1.0])


def test_threads_release_the_gil_and_agree():
    rng = np.random.default_rng(7)
    problems = []
    for _ in range(8):
        M = random_spd(150, rng)
        problems.append((M, lcp_with_solution(M, rng)[0]))
    serial = [mbdcp.lemke(M, q).z for M, q in problems]
    results = {}

    def work(k):
        for j, (M, q) in enumerate(problems):
            results[(k, j)] = mbdcp.lemke(M, q).z

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (k, j), z in results.items():
        assert np.array_equal(z, serial[j])  # deterministic, bit for bit


def test_gil_released_during_solve():
    # While one thread solves a large LCP, another thread keeps running Python code.
    rng = np.random.default_rng(3)
    M = random_spd(500, rng)
    q = lcp_with_solution(M, rng)[0]
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)

    t = threading.Thread(target=ticker)
    t.start()
    res = mbdcp.lemke(M, q)
    done.set()
    t.join()
    assert res.success and len(ticks) > 100


def test_exact_oracle_agrees_on_simple_case():
    # The oracle itself: Murty's 2 x 2 example has the closed-form solution (4/3, 7/3).
    status, pivots, z, _ = exact_lemke([[2, 1], [1, 2]], [-5, -6])
    assert status == "ok" and z == [Fraction(4, 3), Fraction(7, 3)]


@pytest.mark.skipif(not __import__("siconos_peer").siconos_available(), reason="Siconos not installed")
def test_agrees_with_siconos_on_spd_problems():
    from siconos_peer import siconos_lcp

    rng = np.random.default_rng(11)
    problems = []
    for n in (5, 20, 60):
        M = random_spd(n, rng, cond=100)
        problems.append((M, lcp_with_solution(M, rng)[0]))
    for (M, q), (z, w, info, _) in zip(problems, siconos_lcp(problems)):
        assert info == 0
        np.testing.assert_allclose(mbdcp.lemke(M, q).z, z, atol=1e-8)


@pytest.mark.parametrize("name", ["pile136_lcp_cycle.npz", "pile136_lcp_cycle38.npz"])
def test_a_path_that_cycles_in_rounding_is_solved_on_a_perturbed_q(name):
    """The full Stewart–Trinkle LCPs (1220 variables) of a settling 136-disk pile, steps 37 and 38
    of the warm-started bench run: Lemke's paths, ties decided in rounding, meet a basis twice
    (step 37's first repeated 38 pivots from pivot 2649; once it ran to the limit of 122,100, 4
    minutes) or end on a basis whose point fails. A basis met twice ends a path early, and a path
    on q + 1e-12 max|q| v, whose gaps rounding cannot hide, solves them; the answer is checked
    against the given q."""
    d = np.load(os.path.join(HERE, "data", name))
    F, f = d["F"], d["f"]
    res = mbdcp.lemke(F, f)
    assert res.pivots < 10 * F.shape[0], res.pivots
    assert res.status == Status.SOLVED, res.status
    check_lcp(F, f, res.z, res.w)


@pytest.mark.parametrize("name", ["capsule_at_rest_lcp.npz", "capsule_struck_lcp.npz"])
def test_degenerate_lcps_of_a_capsule_are_solved(name):
    """Two Stewart–Trinkle LCPs of mbdcp.mujoco steps of a capsule on the floor (two contacts on one
    line, 4 friction directions each): at rest beside a box, its friction rows holding +-2e-33 that
    rounding left in its velocity (36 variables, rank 23); struck by a spinning sphere (18
    variables, rank 14). Every path, its ties decided in rounding, cycled or ended on a failing
    point; the rounding-level entries set to zero, and a perturbed q solved on its own, give bases
    that solve the given q. Checked row by row at each row's own scale, in extended precision."""
    d = np.load(os.path.join(HERE, "data", name))
    F, f = d["F"], d["f"]
    res = mbdcp.lemke(F, f)
    assert res.status == Status.SOLVED, res.status
    z, Fl = res.z.astype(np.longdouble), F.astype(np.longdouble)
    w = Fl @ z + f.astype(np.longdouble)
    scale = np.abs(Fl) @ np.abs(z) + np.abs(f.astype(np.longdouble))
    assert z.min() >= 0 and np.all(w >= -1e-12 * scale)
    assert np.all(np.minimum(z, w) <= 1e-12 * scale)


# The reduced LCP of a step of Trinkle (2003)'s sphere rolling with 8 friction directions: its friction
# rows hold +-1.08e-16, what the rounding of a tangential speed of 1.43 - 1.43 left (the data's own scale is
# 1.43). At each q_i's own scale no solution within the tolerance is reached; with the magnitudes of q's
# terms given, each row is judged at the scale of its data, and the answer is that of the step.
_ROLLING_F = np.array(
    [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
     [0.0, 3.4999999999999996, 2.4748737341529163, 0.0, -2.474873734152916,
      -3.4999999999999996, -2.4748737341529163, 0.0, 2.4748737341529154, 1.0],
     [0.0, 2.4748737341529163, 3.5, 2.474873734152916, 0.0,
      -2.474873734152916, -3.5, -2.4748737341529163, 0.0, 1.0],
     [0.0, 0.0, 2.474873734152916, 3.4999999999999996, 2.4748737341529163,
      0.0, -2.474873734152916, -3.4999999999999996, -2.4748737341529163, 1.0],
     [0.0, -2.474873734152916, 0.0, 2.4748737341529163, 3.4999999999999996,
      2.4748737341529163, 0.0, -2.4748737341529154, -3.499999999999999, 1.0],
     [0.0, -3.4999999999999996, -2.474873734152916, 0.0, 2.4748737341529163,
      3.4999999999999996, 2.474873734152916, 0.0, -2.474873734152916, 1.0],
     [0.0, -2.4748737341529163, -3.5, -2.474873734152916, 0.0,
      2.474873734152916, 3.5, 2.4748737341529163, 0.0, 1.0],
     [0.0, 0.0, -2.4748737341529163, -3.4999999999999996, -2.4748737341529154,
      0.0, 2.4748737341529163, 3.4999999999999996, 2.474873734152916, 1.0],
     [0.0, 2.4748737341529154, 0.0, -2.4748737341529163, -3.499999999999999,
      -2.474873734152916, 0.0, 2.474873734152916, 3.499999999999999, 1.0],
     [0.2, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, 0.0]])
_ROLLING_F_Q = np.array([-1.1772, 0.0, 0.0, 1.0824788652243491e-16, 0.0, 0.0, 0.0, -1.0824788652243491e-16, 0.0, 0.0])


def test_q_scale_judges_rows_at_the_scale_of_their_data():
    plain = mbdcp.lemke(_ROLLING_F, _ROLLING_F_Q)
    assert not plain.success and plain.residual > 0.1  # row 7 fails by a whole 1e-16 of its own 1e-16
    q_scale = np.where(np.arange(10) == 0, 1.1772, 1.43)  # the terms of f: |W^T||v|, |W^T M^-1||p_ext|
    q_scale[9] = 0.0
    res = mbdcp.lemke(_ROLLING_F, _ROLLING_F_Q, q_scale=q_scale)
    assert res.success and res.residual <= 1e-9
    assert res.z[0] == pytest.approx(1.1772, rel=1e-12) and np.all(res.z[1:] <= 1e-15)  # rolls: no friction
    with pytest.raises(ValueError, match="q_scale must be nonnegative"):
        mbdcp.lemke(_ROLLING_F, _ROLLING_F_Q, q_scale=-q_scale)
    with pytest.raises(ValueError, match="q_scale"):
        mbdcp.lemke(_ROLLING_F, _ROLLING_F_Q, q_scale=q_scale[:3])
