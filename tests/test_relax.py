"""The relaxations of Anitescu & Hart (2004): subproblems by definition, agreement with the LCP, convergence."""
import os

import numpy as np
import pytest
from conftest import check_lcp

import mbdcp
from mbdcp import Status
from mbdcp.testing import random_scene

G = 9.81


def box_on_floor(mu, v=(0, 0, 0, 0, 0, 0), push=(0.0, 0.0), h=0.01, n_d=4):
    """A unit cube (m = 1, J = diag(1, 2, 3) as in Trinkle (notes, 2003)) resting on four corners."""
    M = np.diag([1.0, 1.0, 1.0, 1.0, 2.0, 3.0])
    corners = [np.array([sx, sy, -0.5]) for sx in (-0.5, 0.5) for sy in (-0.5, 0.5)]
    n = np.array([0.0, 0.0, 1.0])
    dirs = mbdcp.friction_basis(n, n_d)
    Wn = np.array([np.r_[n, np.cross(r, n)] for r in corners]).T
    D = np.array([np.r_[d, np.cross(r, d)] for r in corners for d in dirs.T]).T
    E = np.kron(np.eye(4), np.ones((n_d, 1)))
    p_ext = np.array([push[0] * h, push[1] * h, -G * h, 0, 0, 0])
    return (M, Wn, D, E, np.full(4, mu), np.asarray(v, float), h), dict(p_ext=p_ext, psi_n=np.zeros(4))


def sliding_block(mu, speed=1.0, h=0.01):
    """A planar particle sliding on the floor: v = (x', y')."""
    M, Wn = np.eye(2), np.array([[0.0], [1.0]])
    D, E = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    return (M, Wn, D, E, [mu], np.array([speed, 0.0]), h), dict(p_ext=[0.0, -G * h], psi_n=[0.0])


def check_p1(res, M, Wn, D, E, mu, v, h, gamma, p_ext, psi_n, tol=1e-9):
    mu = np.asarray(mu, float)
    vn = res.v_next
    np.testing.assert_allclose(M @ vn - Wn @ res.p_n - D @ res.beta, M @ v + p_ext, atol=tol)
    for a, b in [(res.p_n, Wn.T @ vn + psi_n / h - mu * res.lam + gamma),
                 (res.beta, D.T @ vn + E @ res.lam), (res.lam, mu * res.p_n - E.T @ res.beta)]:
        assert a.min() >= -tol and b.min() >= -tol and np.abs(a * b).max() <= tol


def check_p2(res, M, Wn, D, E, v, h, lam, p_ext, psi_n, tol=1e-9):
    vn = res.v_next
    np.testing.assert_allclose(M @ vn - Wn @ res.p_n - D @ res.beta, M @ v + p_ext, atol=tol)
    for a, b in [(res.p_n, Wn.T @ vn + psi_n / h), (res.beta, D.T @ vn + E @ lam)]:
        assert a.min() >= -tol and b.min() >= -tol and np.abs(a * b).max() <= tol


@pytest.mark.parametrize("seed", range(15))
def test_p1_and_p2_solve_their_problems(seed):
    s = random_scene(3, 6, seed)
    gamma = np.random.default_rng(seed).uniform(0, 1, 6)
    r1 = mbdcp.relax.p1(*s.args(), gamma, **s.kwargs())
    assert r1.success
    check_p1(r1, s.M, s.Wn, s.D, s.E, s.U, s.v, s.h, gamma, s.p_ext, s.psi_n)
    lam = mbdcp.relax.sliding_speed(s.D, s.E, r1.v_next)
    r2 = mbdcp.relax.p2(*s.args(), lam, **s.kwargs())
    assert r2.success
    check_p2(r2, s.M, s.Wn, s.D, s.E, s.v, s.h, lam, s.p_ext, s.psi_n)
    np.testing.assert_array_equal(r2.lam, lam)


@pytest.mark.parametrize("seed", range(15))
def test_p1_p2_at_lcp_solution_reproduce_velocity(seed):
    s = random_scene(3, 6, 100 + seed)
    ref = mbdcp.step(*s.args(), **s.kwargs())
    assert ref.success
    r1 = mbdcp.relax.p1(*s.args(), s.U * ref.sigma, **s.kwargs())
    r2 = mbdcp.relax.p2(*s.args(), ref.sigma, **s.kwargs())
    scale = max(1.0, np.abs(ref.v_next).max())
    np.testing.assert_allclose(r1.v_next, ref.v_next, atol=1e-8 * scale)
    np.testing.assert_allclose(r2.v_next, ref.v_next, atol=1e-8 * scale)


def test_p1_is_monotone_skew_coupling():
    args, kw = box_on_floor(0.3)
    res = mbdcp.relax.p1(*args, np.zeros(4), **kw, return_lcp=True)
    F = res.lcp.F
    nw = 4 + 16
    np.testing.assert_allclose(F[:nw, nw:], -F[nw:, :nw].T)  # skew-symmetric coupling
    sym = 0.5 * (F + F.T)
    assert np.linalg.eigvalsh(sym).min() >= -1e-12          # F + F^T is PSD: monotone


def test_sliding_speed_definition():
    D = np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 1.0]])
    E = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(mbdcp.relax.sliding_speed(D, E, [2.0, -3.0]), [2.0, 3.0])
    np.testing.assert_allclose(mbdcp.relax.sliding_speed(D, E, [0.0, 3.0]), [0.0, 0.0])


@pytest.mark.parametrize("algorithm", [1, 2])
@pytest.mark.parametrize("case", ["box_push", "block"] + [f"scene{k}" for k in range(12)])
def test_small_mu_converges_to_step(algorithm, case):
    # Regular configurations with a unique velocity: independent contact normals.
    if case == "box_push":
        args, kw = box_on_floor(0.05, push=(3.0, 0.0))   # four corners, but sliding straight
    elif case == "block":
        args, kw = sliding_block(0.05)
    else:
        rng = np.random.default_rng(int(case[5:]))
        while True:
            s = random_scene(3, 4, rng, mu=(0.0, 0.1))
            if np.linalg.matrix_rank(s.Wn) == s.Wn.shape[1]:
                break
        args, kw = s.args(), s.kwargs()
    ref = mbdcp.step(*args, **kw)
    res = mbdcp.fixed_point(*args, **kw, algorithm=algorithm, tol=1e-12, max_iter=200)
    assert res.converged and res.success and res.status == Status.SOLVED
    np.testing.assert_allclose(res.v_next, ref.v_next, atol=1e-8 * max(1, np.abs(ref.v_next).max()))
    assert len(res.history) == res.iterations


def test_limit_solves_the_original_lcp_when_velocity_is_not_unique():
    # Four coplanar corners are statically indeterminate: the normal impulses can be
    # redistributed, and with friction mu p_n per contact the velocity of a sliding, spinning
    # box is then not unique. Algorithm 1's limit is still a solution of the original LCP.
    args, kw = box_on_floor(0.05, v=(2.0, 1.0, 0, 0, 0, 1.0))
    M, Wn, D, E, U, v, h = args
    res = mbdcp.fixed_point(*args, **kw, algorithm=1, tol=1e-13, max_iter=300)
    assert res.converged
    assert _mixed_lcp_ok(M, Wn, D, E, U, v, h, kw["p_ext"], res.p_n, res.beta, res.lam, res.v_next, tol=1e-10)
    ref = mbdcp.step(*args, **kw)
    assert _mixed_lcp_ok(M, Wn, D, E, U, v, h, kw["p_ext"], ref.p_n, ref.beta, ref.sigma, ref.v_next, tol=1e-10)
    assert np.abs(res.v_next - ref.v_next).max() > 1e-4  # two different velocities, both solutions


@pytest.mark.parametrize("algorithm", [1, 2])
def test_linear_convergence_rate(algorithm):
    args, kw = box_on_floor(0.1, v=(1.0, 0.5, 0, 0, 0, 0.3))
    res = mbdcp.fixed_point(*args, **kw, algorithm=algorithm, tol=1e-14, max_iter=200)
    hist = res.history[1:]
    hist = hist[hist > 1e-13]
    assert len(hist) >= 3
    rates = hist[1:] / hist[:-1]
    assert np.all(rates < 1.0)                     # geometric decrease
    rate = np.exp(np.polyfit(np.arange(len(hist)), np.log(hist), 1)[0])
    assert rate < 0.5                              # and fast for mu = 0.1


def test_algorithm_3_exact_when_nothing_slides():
    args, kw = box_on_floor(0.5, push=(1.0, 0.5))  # a small push: the box sticks
    ref = mbdcp.step(*args, **kw)
    res = mbdcp.fixed_point(*args, **kw, algorithm=3)
    assert res.iterations == 1 and res.success
    np.testing.assert_allclose(res.v_next, ref.v_next, atol=1e-12)
    np.testing.assert_allclose(res.v_next, 0.0, atol=1e-12)


def test_algorithm_3_error_shrinks_with_mu():
    mus = np.array([0.4, 0.2, 0.1, 0.05, 0.025])
    errors = []
    for mu in mus:
        args, kw = box_on_floor(mu, v=(1.0, 0.5, 0, 0, 0, 0.3))
        ref = mbdcp.step(*args, **kw).v_next
        errors.append(np.abs(mbdcp.fixed_point(*args, **kw, algorithm=3).v_next - ref).max())
    errors = np.array(errors)
    slope = np.polyfit(np.log(mus), np.log(errors), 1)[0]
    assert np.all(np.diff(errors) < 0)
    assert slope >= 0.95                          # ||v - v3|| <= L ||U lam||: at least linear in mu
    assert np.all(errors <= 1.0 * mus)            # with a modest constant here


def test_non_convergence_is_a_status():
    # A sliding, spinning box with mu = 2 needs about 70 iterations; stopped at 5 it says so.
    args, kw = box_on_floor(2.0, v=(2.0, 1.0, 0, 0, 0, 1.0))
    res = mbdcp.fixed_point(*args, **kw, algorithm=1, max_iter=5, tol=1e-14)
    assert not res.converged and res.iterations == 5 and len(res.history) == 5
    assert res.status == Status.MAX_ITERATIONS and not res.success
    assert np.all(np.isfinite(res.v_next))


def _mixed_lcp_ok(M, Wn, D, E, mu, v, h, p_ext, p_n, beta, lam, vn, tol=1e-12):
    if np.abs(M @ vn - Wn @ p_n - D @ beta - M @ v - p_ext).max() > tol:
        return False
    for a, b in [(p_n, Wn.T @ vn), (beta, D.T @ vn + E @ lam), (lam, mu * p_n - E.T @ beta)]:
        if a.min() < -tol or b.min() < -tol or np.abs(a * b).max() > tol:
            return False
    return True


def test_nonconvex_solution_set():
    """The example of Anitescu & Hart (lecture), "Nonconvex solution set": a body at rest on two contacts, two solutions with v = 0.

    The seed lists (p_n = mhg/2 each, beta = 0, lam = 1) as a solution, but with v = 0 and
    beta = 0 the row 0 <= lam _|_ mu p_n - E^T beta forces lam = 0 wherever p_n > 0 (a
    transcription slip). A consistent pair with the same point, lam > 0 where p_n = 0:
      A: p_n = (mhg, 0), beta = 0, lam = (0, 1);
      B: p_n = (0, mhg), beta = 0, lam = (1, 0).
    Both have v = 0; their average has lam > 0 where mu p_n - E^T beta > 0."""
    m, h, mu = 1.0, 0.01, 0.3
    M, Wn = m * np.eye(2), np.array([[0.0, 0.0], [1.0, 1.0]])   # two coincident floor contacts
    D = np.array([[1.0, -1.0, 1.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
    E = np.kron(np.eye(2), np.ones((2, 1)))
    v, p_ext = np.zeros(2), np.array([0.0, -m * G * h])
    U = np.array([mu, mu])
    mhg = m * G * h
    A = (np.array([mhg, 0.0]), np.zeros(4), np.array([0.0, 1.0]))
    B = (np.array([0.0, mhg]), np.zeros(4), np.array([1.0, 0.0]))
    avg = tuple(0.5 * (a + b) for a, b in zip(A, B))
    for sol in (A, B):
        assert _mixed_lcp_ok(M, Wn, D, E, U, v, h, p_ext, *sol, np.zeros(2))
    assert not _mixed_lcp_ok(M, Wn, D, E, U, v, h, p_ext, *avg, np.zeros(2))
    # The seed's squeezing solution: friction at the cone's edge pushing in opposite directions.
    C = (np.array([mhg, mhg]) / 2, np.array([0.0, mu * mhg / 2, mu * mhg / 2, 0.0]), np.zeros(2))
    assert _mixed_lcp_ok(M, Wn, D, E, U, v, h, p_ext, *C, np.zeros(2))
    # mbdcp.step finds one of the solutions; its velocity is the unique v = 0.
    res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext)
    assert res.success and np.allclose(res.v_next, 0, atol=1e-14)
    assert _mixed_lcp_ok(M, Wn, D, E, U, v, h, p_ext, res.p_n, res.beta, res.sigma, res.v_next)


def test_joints_in_fixed_point():
    # A block on the floor held by a vertical rail joint (x = 0): only y motion, friction idle.
    M, Wn = np.eye(2), np.array([[0.0], [1.0]])
    D, E = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    Wb = np.array([[1.0], [0.0]])
    res = mbdcp.fixed_point(M, Wn, D, E, [0.5], [1.0, 0.0], 0.01, p_ext=[0.0, -G * 0.01], Wb=Wb)
    assert res.success
    np.testing.assert_allclose(res.v_next, 0.0, atol=1e-12)
    assert res.p_b[0] == pytest.approx(-1.0)


@pytest.mark.parametrize("kwargs, exc, words", [
    (dict(algorithm=4), ValueError, "algorithm must be 1, 2 or 3"),
    (dict(tol=0.0), ValueError, "tol must be positive"),
    (dict(max_iter=0), ValueError, "max_iter must be at least 1"),
    (dict(max_iter=None), TypeError, "max_iter must be an integer"),
])
def test_fixed_point_bad_input(kwargs, exc, words):
    args, kw = sliding_block(0.1)
    with pytest.raises(exc) as info:
        mbdcp.fixed_point(*args, **kw, **kwargs)
    assert words in str(info.value)


def test_relax_bad_input():
    args, kw = sliding_block(0.1)
    with pytest.raises(ValueError, match="gamma must have shape"):
        mbdcp.relax.p1(*args, [0.0, 0.0], **kw)
    with pytest.raises(ValueError, match="lam must be nonnegative"):
        mbdcp.relax.p2(*args, [-1.0], **kw)
    with pytest.raises(ValueError, match="E must have exactly one 1"):
        mbdcp.relax.sliding_speed(np.eye(2), [[1.0], [0.0]], [0.0, 0.0])


@pytest.mark.parametrize("algorithm", [1, 2, 3])
@pytest.mark.parametrize("mu", [0.05, 0.2, 0.5])
def test_the_crash_basis_gives_the_cold_answer_in_fewer_pivots(mu, algorithm, monkeypatch):
    """The default first P1/P2 bases guessed from a loose CCP solve (136 planar contacts, P1 of
    544 variables) change the pivots, not the answer: the same velocity as a cold start, each
    subproblem verified by Lemke as before (the Lemke path, which the crash serves: the sparse
    solves turned off)."""
    from mbdcp.formulations import relax as relax_module
    from mbdcp.testing import disk_pile

    monkeypatch.setattr(relax_module, "SPARSE_MIN_SIZE", 10**9)
    s = disk_pile(50, seed=50, mu=mu)
    cold = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=algorithm, crash=None, max_iter=100)
    guessed = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=algorithm, max_iter=100)
    assert cold.status == guessed.status == Status.SOLVED
    # the same outer iterations but for one: the two starts' iterates differ by ~1e-10 (their inner
    # LCPs pivot differently) and the step sizes sit at tol = 1e-10 near the end (1.6e-10 and 2.9e-10
    # at the 30th), so one start may stop an iteration earlier (30 against 31 at mu = 0.5 and
    # algorithm 2 on one machine, the same count on another)
    assert abs(guessed.iterations - cold.iterations) <= 1
    np.testing.assert_allclose(guessed.v_next, cold.v_next, rtol=0, atol=1e-9 * np.abs(cold.v_next).max())
    assert guessed.pivots < 0.6 * cold.pivots   # 483 -> 124 for algorithm 3 at mu = 0.05


def test_a_hint_the_sparse_solves_could_not_finish_from_gives_way_to_the_crash_basis(monkeypatch):
    """Where the sparse solves end without a verified point (here made to), Lemke starts from the
    crash basis, not from the warm start: on a compacting 2,000-disk pile the last step's basis
    cost Lemke as many pivots as a cold start (7,706, 482 s) where the guess cost 2,275 (90 s).
    The same start as without a hint, so the same pivots and answer."""
    from mbdcp.formulations import relax as relax_module
    from mbdcp.testing import disk_pile

    gave_up = []
    monkeypatch.setattr(relax_module, "_sparse", lambda *a: gave_up.append(1))
    s = disk_pile(50, seed=50, mu=0.2)
    m, n_c = s.args()[3].shape
    hint = np.ones(2 * n_c + m, dtype=bool)   # every z basic: a basis far from the answer
    guessed = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=3)
    hinted = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=3, warm_start=hint)
    assert len(gave_up) == 2 and guessed.status == hinted.status == Status.SOLVED
    assert hinted.pivots == guessed.pivots
    np.testing.assert_array_equal(hinted.v_next, guessed.v_next)
    # the same hint where the sparse solves do not apply (P1 below SPARSE_MIN_SIZE) is still used
    monkeypatch.setattr(relax_module, "SPARSE_MIN_SIZE", 10**9)
    kept = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=3, warm_start=hint)
    assert kept.status == Status.SOLVED and kept.pivots != guessed.pivots


def test_the_crash_basis_of_a_spatial_pile_with_four_directions():
    """Sphere contacts with directions +-t1, +-t2 (mechanics.assemble's four): the CCP's two
    tangent columns are t1 and t2; the guessed start gives the cold answer in fewer pivots of the
    Lemke solves it starts (fixed_point's answer where its sparse subproblems find none; this
    pile's they find, so the Lemke solves are called directly here)."""
    from mbdcp.formulations.crash import crash_basis
    from mbdcp.infrastructure import _core
    from mbdcp.infrastructure.problem import call_core
    from mbdcp.mechanics import simulate, sphere_pile_scene
    from mbdcp.relax import _data

    scene = sphere_pile_scene(64, width=4)
    simulate(scene, 0.01, 0.4, progress=False, method="ccp")
    a = scene.assemble(0.01)
    args, kw = (a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], 0.01), dict(p_ext=a["p_ext"], psi_n=a["psi_n"])
    d = _data(*args, kw["p_ext"], kw["psi_n"], None, None, None)  # what fixed_point validates
    p1, p2 = crash_basis(d)
    n_c, m = a["Wn"].shape[1], a["D"].shape[1]
    assert m == 4 * n_c and p1.shape == (2 * n_c + m,) and p2.shape == (n_c + m,)
    tol, max_iter = _core.DEFAULTS["fixed_point"]["tol"], _core.DEFAULTS["fixed_point"]["max_iter"]
    cold = call_core(_core.fixed_point, d, 3, tol, max_iter, None, None)
    guessed = call_core(_core.fixed_point, d, 3, tol, max_iter, p1, p2)
    assert Status(cold[6]) == Status.SOLVED and Status(guessed[6]) == Status.SOLVED
    np.testing.assert_allclose(guessed[0], cold[0], rtol=0, atol=1e-9 * np.abs(cold[0]).max())
    assert guessed[9] < 0.6 * cold[9]
    sparse = mbdcp.fixed_point(*args, **kw, algorithm=3)  # the sparse subproblems' answer: the same velocity
    np.testing.assert_allclose(sparse.v_next, cold[0], rtol=0, atol=1e-9 * np.abs(cold[0]).max())


def test_no_crash_basis_where_it_does_not_apply():
    """Random scenes (2 to 8 directions per contact, not opposite pairs), small problems and
    joints get no guess: the cold start's pivots exactly."""
    from mbdcp.formulations.crash import crash_basis
    from mbdcp.relax import _data

    s = random_scene(20, 60, seed=3)
    d = _data(*s.args(), s.kwargs()["p_ext"], s.kwargs()["psi_n"], None, None, None)
    assert crash_basis(d) == (None, None)
    a = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=3)
    b = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=3, crash=None)
    assert a.pivots == b.pivots and np.array_equal(a.v_next, b.v_next)
    with pytest.raises(ValueError, match="crash"):
        mbdcp.fixed_point(*s.args(), **s.kwargs(), crash="apgd")


@pytest.mark.parametrize("name", ["p2_singular_50_1000.npz", "p2_singular_75_1002.npz"])
def test_singular_p2_lcps_are_solved(name):
    """P2 LCPs recorded from the stress runs below (tests/data/README.md): F is singular positive
    semidefinite (each contact's two opposite directions) and both of Lemke's paths break down
    in rounding (NUMERICAL_ERROR). The last path on F + eps I (eps 1e-11 of each row) solves
    them, verified against the given F."""
    d = np.load(os.path.join(os.path.dirname(__file__), "data", name))
    F, f = d["F"], d["f"]
    assert np.array_equal(F, F.T) and np.linalg.eigvalsh(F).min() > -1e-12 * np.abs(F).max()
    assert np.linalg.matrix_rank(F) < F.shape[0]
    res = mbdcp.lemke(F, f)
    assert res.status == Status.SOLVED, res.status
    check_lcp(F, f, res.z, res.w)


@pytest.mark.parametrize("n, seed", [(50, 1000), (75, 1002)])
def test_stress_runs_whose_p2_was_singular_are_solved(n, seed):
    """Disk piles thrown at 2 m/s (bench_relax's stress runs): algorithm 2 from the crash basis
    passed a singular P2 on its way (iterations 26 and 23 before Lemke's warm start covered every
    row; the recorded LCPs above). It converges, with the velocity of the cold-started run."""
    from mbdcp.testing import disk_pile

    s = disk_pile(n, seed=seed, mu=0.2, speed=2.0)
    res = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=2, tol=1e-8, max_iter=100)
    assert res.status == Status.SOLVED and res.converged
    ref = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=2, tol=1e-8, max_iter=100, crash=None)
    np.testing.assert_allclose(res.v_next, ref.v_next, rtol=0, atol=1e-6 * np.abs(ref.v_next).max())


def _satisfies_its_lcp(d, p_n, beta, lam, v_next, cone):
    """(p_n, beta) and lam solve P2(lam) (cone False) or, with lam as P1's multipliers, P1(0) (cone
    True) of the CompressedStep d by definition, row by row at each row's scale, in extended
    precision, with v_next = v_free + M^-1 W z (M diagonal here, so M^-1 is exact to rounding)."""
    n_v, n_c, m = d.sizes
    X = np.longdouble
    assert np.array_equal(d.Mi, np.arange(n_v))  # each row of M's lower triangle is its diagonal
    Minv, col = 1.0 / d.Mx.astype(X), np.repeat(np.arange(n_c + m), np.diff(d.Wp))
    Wx, absWx = d.Wx.astype(X), np.abs(d.Wx).astype(X)

    def W_times(x, vals):  # W x (or |W| x), W by columns in (Wp, Wi, Wx)
        y = np.zeros(n_v, dtype=X)
        np.add.at(y, d.Wi, vals * x[col])
        return y

    def Wt_times(y, vals):  # W^T y (or |W|^T y)
        out = np.zeros(n_c + m, dtype=X)
        np.add.at(out, col, vals * y[d.Wi])
        return out

    z, lam = np.concatenate([p_n, beta]).astype(X), lam.astype(X)
    v_free = d.v.astype(X) + Minv * d.p_ext.astype(X)
    v_plus = v_free + Minv * W_times(z, Wx)
    # P2: lam fixed, in the directions' rows; P1: also -mu lam in the normal rows (a monotone LCP)
    normal = d.psi_n.astype(X) / X(d.h) - (d.mu.astype(X) * lam if cone else 0)
    e = np.concatenate([normal, lam[d.contact]])
    w = Wt_times(v_plus, Wx) + e
    # each row's scale: |W|^T |v_free| + |W|^T M^-1 |W| z + |e|
    scale = Wt_times(np.abs(v_free), absWx) + Wt_times(Minv * W_times(z, absWx), absWx) + np.abs(e)
    if cone:
        scale[:n_c] += d.mu * lam  # P1's cone rows: mu p_n - E^T beta >= 0, complementary to lam
        grouped = np.zeros(n_c, dtype=X)
        np.add.at(grouped, d.contact, z[n_c:])  # E^T beta
        mu_pn = d.mu.astype(X) * z[:n_c]
        z, w = np.concatenate([z, lam]), np.concatenate([w, mu_pn - grouped])
        scale = np.concatenate([scale, mu_pn + grouped])
    assert z.min() >= 0 and np.all(w >= -1e-9 * scale)
    assert np.all(np.where(z > 0, w, 0) <= 1e-9 * scale)
    np.testing.assert_allclose(v_next, v_plus.astype(float), rtol=0, atol=1e-12 * np.abs(v_next).max())


@pytest.mark.parametrize("name", ["forming_pile_2000_p1.npz", "forming_pile_2000_p2.npz"])
def test_the_proximal_rounds_solve_steps_of_a_2000_disk_pile(name):
    """Steps of a 2,000-disk pile forming from its lattice (tests/data/README.md) whose subproblems
    the proximal rounds left without a verified point, so that they went to Lemke (140 s each):
    P1's rounds (first file) cycled among bases with hundreds of negative entries while lam had no
    proximal term, and P2's (second) ended on a point with basic entries negative within rounding,
    which the verified point clamps to zero (a row they carry failed by 1.7e-11 at a scale of 2.7e-3,
    round after round). Both are solved sparsely now, with the simulation's hints and cold. P1's
    answer (algorithm 1, one iteration; P1's multipliers are Λ(v) where lam is basic, each contact's
    directions coming in opposite pairs, and zero elsewhere) and algorithm 3's (P2 at lam = Λ(v))
    satisfy their LCPs by definition."""
    from mbdcp.formulations.relax import _sparse
    from mbdcp.infrastructure.problem import CompressedStep

    f = np.load(os.path.join(os.path.dirname(__file__), "data", name))
    d = CompressedStep(**{k: float(f[k]) if k == "h" else f[k] for k in (
        "Mp", "Mi", "Mx", "Wp", "Wi", "Wx", "contact", "mu", "v", "h", "p_ext", "psi_n")})
    for hints in ((f["basis_p1"], f["basis_p2"]), (None, None)):
        first = _sparse(d, 1, 1e-10, 1, hints[0], None)  # P1 alone
        out = _sparse(d, 3, 1e-10, 100, *hints)
        assert first is not None and out is not None  # no step for Lemke
        v1, _, p_n1, beta1, lam = first[:5]
        basic_lam = first[11][d.sizes[1] + d.sizes[2]:]  # P1's final basis: x, then lam
        _satisfies_its_lcp(d, p_n1, beta1, np.where(basic_lam, lam, 0.0), v1, cone=True)
        _satisfies_its_lcp(d, out[2], out[3], lam, out[0], cone=False)


@pytest.mark.parametrize("mu", [0.1, 0.4])
def test_fixed_point_iterates_are_the_subproblems_called_one_by_one(mu):
    """Algorithm 2 inside the core (the contact rows' right-hand side formed once per run, Gamma
    and E lam added per iteration) against its iteration written out with relax.p1, relax.p2 and
    sliding_speed, each call forming its problem afresh (Anitescu & Hart 2004, algorithm 2): the
    same velocity after every number of iterations, each subproblem verified by its definition."""
    s = random_scene(6, 5, seed=11, mu=(mu, mu))
    args, kw = s.args(), s.kwargs()
    M, Wn, D, E, U, v, h = args
    p_ext, psi_n = kw["p_ext"], kw["psi_n"]
    gamma = np.zeros(Wn.shape[1])
    for k in range(1, 5):
        r1 = mbdcp.relax.p1(*args, gamma, **kw)
        check_p1(r1, M, Wn, D, E, U, v, h, gamma, p_ext, psi_n)
        lam = mbdcp.relax.sliding_speed(D, E, r1.v_next)
        r2 = mbdcp.relax.p2(*args, lam, **kw)
        check_p2(r2, M, Wn, D, E, v, h, lam, p_ext, psi_n)
        gamma = np.asarray(U) * mbdcp.relax.sliding_speed(D, E, r2.v_next)
        res = mbdcp.fixed_point(*args, **kw, algorithm=2, max_iter=k, crash=None)
        assert res.iterations == k
        np.testing.assert_allclose(res.v_next, r2.v_next, rtol=0, atol=1e-10 * max(1.0, np.abs(r2.v_next).max()))


def _forming_pile(name):
    """A step of a 500-disk pile forming from its lattice (tests/data/README.md) as sparse matrices."""
    import scipy.sparse as sp

    d = np.load(os.path.join(os.path.dirname(__file__), "data", name))
    n_v, n_c, m = d["v"].shape[0], d["mu"].shape[0], d["contact"].shape[0]
    L = sp.csr_matrix((d["Mx"], d["Mi"], d["Mp"]), shape=(n_v, n_v))
    M = (L + L.T - sp.diags(L.diagonal())).tocsr()
    W = sp.csc_matrix((d["Wx"], d["Wi"], d["Wp"]), shape=(n_v, n_c + m))
    E = sp.csr_matrix((np.ones(m), (np.arange(m), d["contact"])), shape=(m, n_c))
    return M, W[:, :n_c], W[:, n_c:], E, d["mu"], d["v"], float(d["h"]), d["p_ext"], d["psi_n"]


@pytest.mark.parametrize("name", ["forming_pile_p1.npz", "forming_pile_p2.npz"])
def test_the_proximal_rounds_solve_what_the_active_set_steps_do_not(name):
    """Steps of a forming pile whose P1 (first file) or P2 (second) the active-set steps left
    without a verified point (more contact rows than velocities: G singular, the impulses not
    unique), so that the step went to Lemke's method: the proximal rounds solve both sparsely.
    Algorithm 3's velocity is that of P1 then P2 by dense Lemke, and its impulses satisfy P2 by
    definition, row by row at each row's scale, in extended precision; algorithms 1 and 2 converge."""
    from mbdcp.formulations.relax import _sparse
    from mbdcp.infrastructure.problem import compressed_step

    M, Wn, D, E, mu, v, h, p_ext, psi_n = _forming_pile(name)
    d = compressed_step(M, Wn, D, E, mu, v, h, p_ext, psi_n)
    for algorithm in (1, 2, 3):
        assert _sparse(d, algorithm, 1e-10, 100, None, None) is not None  # no step for Lemke
    res = mbdcp.fixed_point(M, Wn, D, E, mu, v, h, p_ext=p_ext, psi_n=psi_n, algorithm=3)
    assert res.status == Status.SOLVED
    Md, Wnd, Dd, Ed = (A.toarray() for A in (M, Wn, D, E))
    first = mbdcp.relax.p1(Md, Wnd, Dd, Ed, mu, v, h, np.zeros(mu.shape[0]), p_ext=p_ext, psi_n=psi_n)
    lam = mbdcp.relax.sliding_speed(Dd, Ed, first.v_next)
    ref = mbdcp.relax.p2(Md, Wnd, Dd, Ed, mu, v, h, lam, p_ext=p_ext, psi_n=psi_n)
    assert first.success and ref.success
    np.testing.assert_allclose(res.v_next, ref.v_next, rtol=0, atol=1e-9 * np.abs(ref.v_next).max())
    # P2(lam) by definition, its velocity v+ = v_free + M^-1 W z: 0 <= z = (p_n, beta) _|_ w >= 0,
    # w = W^T v+ + (psi_n / h, E lam); each row at the scale of its terms
    X = np.longdouble
    W, z = np.hstack([Wnd, Dd]), np.concatenate([res.p_n, res.beta]).astype(X)
    Minv_W = np.linalg.solve(Md, W)
    v_free = v + np.linalg.solve(Md, p_ext)
    G, e = (W.T @ Minv_W).astype(X), np.concatenate([psi_n / h, Ed @ lam]).astype(X)
    w = W.T.astype(X) @ v_free.astype(X) + G @ z + e
    scale = np.abs(W.T) @ np.abs(v_free) + np.abs(G) @ z + np.abs(e)
    assert z.min() >= 0 and np.all(w >= -1e-9 * scale)
    assert np.all(np.where(z > 0, w, 0) <= 1e-9 * scale)
    np.testing.assert_allclose(res.v_next, v_free + Minv_W @ z.astype(float), rtol=0, atol=1e-12 * np.abs(v_free).max())
    for algorithm in (1, 2):
        res = mbdcp.fixed_point(M, Wn, D, E, mu, v, h, p_ext=p_ext, psi_n=psi_n, algorithm=algorithm)
        assert res.status == Status.SOLVED and res.converged
