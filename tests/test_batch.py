"""Batched Lemke solves and time steps: the same results, bit for bit, as one-by-one solves."""
import numpy as np
import pytest

import mbdcp
from mbdcp.examples import sphere_on_plane
from mbdcp.testing import LCP_CLASSES, infeasible_lcp, lcp_problem, random_scene, solves_lcp


def _same_lemke(batch, i, single):
    assert np.array_equal(batch.z[i], single.z)
    assert np.array_equal(batch.w[i], single.w)
    assert batch.status[i] == int(single.status)
    assert batch.success[i] == single.success
    assert batch.pivots[i] == single.pivots
    assert batch.residual[i] == single.residual
    assert np.array_equal(batch.basis[i], single.basis)


@pytest.mark.parametrize("kind", sorted(LCP_CLASSES))
@pytest.mark.parametrize("threads", [1, 2])
def test_lemke_batch_is_bit_identical_to_single_solves(kind, threads):
    rng = np.random.default_rng(7)
    n = 10 if kind != "frictional" else 14
    problems = [lcp_problem(kind, n, seed=rng) for _ in range(40)]
    n = min(len(q) for _, q in problems)
    problems = [(M, q) for M, q in problems if len(q) == n]
    Ms = np.array([M for M, _ in problems])
    qs = np.array([q for _, q in problems])
    res = mbdcp.batch.lemke(Ms, qs, threads=threads)
    assert len(res) == len(problems)
    for i, (M, q) in enumerate(problems):
        single = mbdcp.lemke(M, q)
        _same_lemke(res, i, single)
        if res.success[i]:
            assert solves_lcp(M, q, res.z[i])


def test_mixed_statuses_are_reported_per_instance():
    rng = np.random.default_rng(3)
    n = 8
    P = [lcp_problem("P", n, seed=rng) for _ in range(30)]
    ray = [infeasible_lcp(n, seed=rng) for _ in range(10)]
    Ms = np.array([M for M, _ in P + ray])
    qs = np.array([q for _, q in P + ray])
    order = rng.permutation(len(qs))
    Ms, qs = Ms[order], qs[order]
    res = mbdcp.batch.lemke(Ms, qs, threads=2)
    is_ray = order >= len(P)
    assert np.all(res.status[is_ray] == int(mbdcp.Status.RAY_TERMINATION))
    assert np.all(res.success[~is_ray])
    assert res.counts() == {"SOLVED": 30, "RAY_TERMINATION": 10}
    # a pivot limit ends some instances at MAX_ITERATIONS, the others still solve
    limited = mbdcp.batch.lemke(Ms, qs, max_iter=3)
    need = res.pivots > 3
    assert need.any() and (~need & ~is_ray).any()
    assert np.all(limited.status[need & ~is_ray] == int(mbdcp.Status.MAX_ITERATIONS))
    assert np.all(limited.success[~need & ~is_ray])
    for i in range(len(qs)):
        _same_lemke(limited, i, mbdcp.lemke(Ms[i], qs[i], max_iter=3))


def test_shared_matrix_and_per_instance_results():
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    qs = np.array([[-5.0, -6.0], [1.0, 1.0], [-1.0, 0.0]])
    res = mbdcp.batch.lemke(M, qs)
    for i, q in enumerate(qs):
        _same_lemke(res, i, mbdcp.lemke(M, q))
    one = res[0]
    assert isinstance(one, mbdcp.LemkeResult) and one.success
    np.testing.assert_allclose(one.z, [4 / 3, 7 / 3], rtol=1e-14)
    assert res.statuses == [mbdcp.Status.SOLVED] * 3
    assert "3 instances" in repr(res)


def test_threads_do_not_change_results():
    rng = np.random.default_rng(11)
    n, B = 12, 500
    A = rng.standard_normal((B, n, n))
    Ms = A @ A.transpose(0, 2, 1) + 0.1 * np.eye(n)
    qs = rng.standard_normal((B, n))
    one, two = mbdcp.batch.lemke(Ms, qs, threads=1), mbdcp.batch.lemke(Ms, qs, threads=2)
    for field in ("z", "w", "status", "pivots", "residual", "basis"):
        assert np.array_equal(getattr(one, field), getattr(two, field)), field
    assert one.success.all()


def test_empty_batches():
    res = mbdcp.batch.lemke(np.zeros((0, 3, 3)), np.zeros((0, 3)))
    assert len(res) == 0 and res.z.shape == (0, 3)
    res = mbdcp.batch.lemke(np.zeros((4, 0, 0)), np.zeros((4, 0)))
    assert res.success.tolist() == [True] * 4


@pytest.mark.parametrize("Ms, qs, match", [
    (np.eye(3)[None].repeat(2, 0), np.zeros((3, 3)), r"Ms must have shape \(B, n, n\) = \(3, 3, 3\)"),
    (np.eye(3), np.zeros(3), "qs must be 2-dimensional"),
    (np.ones((2, 3, 2)), np.zeros((2, 3)), "Ms must have shape"),
    (np.full((1, 2, 2), np.nan), np.zeros((1, 2)), "Ms must hold finite values"),
    (np.eye(2)[None], [[np.inf, 0.0]], "qs must hold finite values"),
])
def test_lemke_batch_rejects_bad_input(Ms, qs, match):
    with pytest.raises(ValueError, match=match):
        mbdcp.batch.lemke(Ms, qs)


def test_lemke_batch_rejects_bad_settings():
    with pytest.raises(ValueError, match="threads must be at least 1"):
        mbdcp.batch.lemke(np.eye(2), np.zeros((1, 2)), threads=0)
    with pytest.raises(TypeError, match="max_iter must be an integer"):
        mbdcp.batch.lemke(np.eye(2), np.zeros((1, 2)), max_iter=2.5)


def _same_step(batch, i, single):
    for field in ("v_next", "p_n", "beta", "sigma", "p_b", "beta_j", "sigma_j"):
        assert np.array_equal(getattr(batch, field)[i], getattr(single, field)), field
    assert batch.status[i] == int(single.status)
    assert batch.pivots[i] == single.pivots
    assert batch.residual[i] == single.residual


@pytest.mark.parametrize("threads", [1, 2])
def test_step_batch_is_bit_identical_to_single_steps(threads):
    sc = random_scene(3, 5, seed=4, n_d=(4, 4))
    rng = np.random.default_rng(5)
    B = 40
    vs = sc.v + 0.5 * rng.standard_normal((B, len(sc.v)))
    mus = rng.uniform(0.0, 1.0, (B, len(sc.U)))
    p_ext = sc.p_ext + 0.1 * rng.standard_normal((B, len(sc.v)))
    res = mbdcp.batch.step(sc.M, sc.Wn, sc.D, sc.E, mus, vs, sc.h, p_ext=p_ext, psi_n=sc.psi_n, threads=threads)
    assert res.success.all()
    for i in range(B):
        single = mbdcp.step(sc.M, sc.Wn, sc.D, sc.E, mus[i], vs[i], sc.h, p_ext=p_ext[i], psi_n=sc.psi_n)
        _same_step(res, i, single)
    assert isinstance(res[3], mbdcp.StepResult)
    np.testing.assert_array_equal(res[3].v_next, res.v_next[3])


def test_step_batch_sphere_over_time_steps_and_joints():
    M, Wn, D, E, U = sphere_on_plane(mu=0.2)
    hs = np.array([0.01, 0.05, 0.12, 0.3])
    p_ext = np.zeros((4, 6))
    p_ext[:, 2] = -9.81 * hs
    v = [2.0, 0, 0, 0, 0, 0]
    res = mbdcp.batch.step(M, Wn, D, E, U, v, hs, p_ext=p_ext, psi_n=[0.0])
    for i, h in enumerate(hs):
        _same_step(res, i, mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext[i], psi_n=[0.0]))
        # friction mu m g h slows the centre until it rolls at 5/7 v0 (the sphere of Trinkle 2003)
        assert res.v_next[i, 0] == pytest.approx(max(2.0 - 0.2 * 9.81 * h, 5 / 7 * 2.0), rel=1e-12)
    # a bilateral joint (the sphere kept at y = 0), shared by every instance
    Wb = np.zeros((6, 1))
    Wb[1, 0] = 1.0
    vs = np.array([[2.0, 1.0, 0, 0, 0, 0], [1.0, -1.0, 0, 0, 0, 0]])
    res = mbdcp.batch.step(M, Wn, D, E, U, vs, 0.1, p_ext=[0, 0, -0.981, 0, 0, 0], psi_n=[0.0], Wb=Wb, theta=[0.0])
    for i in range(2):
        single = mbdcp.step(M, Wn, D, E, U, vs[i], 0.1, p_ext=[0, 0, -0.981, 0, 0, 0], psi_n=[0.0], Wb=Wb,
                            theta=[0.0])
        _same_step(res, i, single)
        assert abs(res.v_next[i, 1]) < 1e-12


def test_step_batch_rejects_bad_input():
    M, Wn, D, E, U = sphere_on_plane(mu=0.2)
    v = np.zeros((3, 6))
    with pytest.raises(ValueError, match=r"the inputs' batch axes disagree: Wns has 2, vs has 3 instances"):
        mbdcp.batch.step(M, np.stack([Wn] * 2), D, E, U, v, 0.1)
    with pytest.raises(ValueError, match=r"instance 0: vs must have shape \(n_v,\) = \(6,\), got \(5,\)"):
        mbdcp.batch.step(M, Wn, D, E, U, np.zeros((3, 5)), 0.1)
    bad = np.stack([M] * 3)
    bad[2, 0, 0] = -1.0
    with pytest.raises(ValueError, match=r"Ms\[2\] must be symmetric positive definite"):
        mbdcp.batch.step(bad, Wn, D, E, U, v, 0.1)
    bad = np.stack([M] * 3)
    bad[1, 0, 1] = 0.5
    with pytest.raises(ValueError, match=r"Ms\[1\] must be symmetric"):
        mbdcp.batch.step(bad, Wn, D, E, U, v, 0.1)
    with pytest.raises(ValueError, match="Us must be nonnegative"):
        mbdcp.batch.step(M, Wn, D, E, [[0.2], [-0.1], [0.3]], v, 0.1)
    with pytest.raises(ValueError, match="h must be positive"):
        mbdcp.batch.step(M, Wn, D, E, U, v, [0.1, 0.0, 0.1])
    Es = np.stack([E] * 3)
    Es[1, 0, 0] = 2.0
    with pytest.raises(ValueError, match=r"Es\[1\] must have exactly one 1 in each row"):
        mbdcp.batch.step(M, Wn, D, Es, U, v, 0.1)
