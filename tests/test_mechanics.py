"""The rigid-body layer: conservation, resting contact, quaternions, the papers' examples."""
import numpy as np
import pytest

from mbdcp import Status
from mbdcp.examples import sphere_closed_form
from mbdcp.mechanics import Body2D, Body3D, Line, Plane, Scene, disk_pile_scene, simulate


def test_free_flight_conserves_momentum_and_energy():
    bodies = [Body3D(2.0, [0, 0, 5.0], velocity=[1.0, -2.0, 0.5], omega=[0.3, 0.1, -0.2], half_extents=[0.2, 0.3, 0.4]),
              Body3D(1.0, [3, 0, 5.0], velocity=[-1.0, 0.0, 0.0], radius=0.5)]
    scene = Scene(bodies, [], gravity=[0.0, 0.0, 0.0])
    E0 = scene.kinetic_energy()
    p0 = sum(b.mass * b.velocity for b in bodies)
    tr = simulate(scene, 0.01, 1.0, progress=False)
    assert tr.success and np.all(tr.contacts == 0)
    np.testing.assert_allclose(sum(b.mass * b.velocity for b in bodies), p0, atol=1e-12)  # round-off
    # a sphere's kinetic energy is exact; the box's rotational energy changes only through the
    # explicit gyroscopic term, by O(h)
    np.testing.assert_allclose(tr.kinetic_energy[-1], E0, rtol=5e-3)


def test_spinning_body_angular_momentum_with_gyroscopic_term():
    # A free asymmetric body spinning about its intermediate axis would tumble; about the major
    # axis it is stable: the world angular momentum J omega is conserved up to O(h).
    body = Body3D(1.0, [0, 0, 0], omega=[0.0, 0.0, 2.0], inertia=[1.0, 2.0, 3.0])
    body.omega = np.array([0.01, 0.02, 2.0])
    scene = Scene([body], [], gravity=[0, 0, 0])
    L0 = body.world_inertia() @ body.omega
    errs = []
    for h in (0.004, 0.002):
        b = Body3D(1.0, [0, 0, 0], omega=[0.01, 0.02, 2.0], inertia=[1.0, 2.0, 3.0])
        simulate(Scene([b], [], gravity=[0, 0, 0]), h, 2.0, progress=False)
        errs.append(np.linalg.norm(b.world_inertia() @ b.omega - L0) / np.linalg.norm(L0))
    assert errs[0] < 1e-2 and errs[1] < 0.6 * errs[0]  # first order in h
    # without the gyroscopic term the momentum would drift by much more
    assert scene.bodies[0] is body


def test_quaternion_stays_unit_and_box_comes_to_rest():
    e = np.array([np.cos(0.2), 0.6 * np.sin(0.2), 0.8 * np.sin(0.2), 0.0])
    box = Body3D(1.0, [0, 0, 1.0], quaternion=e, omega=[0.5, 1.0, 3.0], half_extents=[0.5, 0.5, 0.5],
                 inertia=[1, 2, 3])
    scene = Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=0.5, n_d=4, delta=0.05)
    tr = simulate(scene, 0.01, 6.0, progress=False)
    assert tr.success
    np.testing.assert_allclose(np.linalg.norm(tr.positions[:, 3:7], axis=1), 1.0, atol=1e-14)
    assert tr.kinetic_energy[-1] < 1e-20 and box.position[2] == pytest.approx(0.5, abs=1e-6)
    assert tr.max_penetration.max() < 1e-3


def test_resting_box_impulses_sum_to_weight():
    box = Body3D(2.0, [0.3, -0.2, 0.5], half_extents=[0.5, 0.5, 0.5], inertia=[1, 2, 3])
    scene = Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=0.5, n_d=4)
    h = 0.01
    tr = simulate(scene, h, 0.1, progress=False)
    for p_n in tr.impulses:
        assert len(p_n) == 4 and p_n.sum() == pytest.approx(2.0 * 9.81 * h, rel=1e-12)
    np.testing.assert_allclose(tr.velocities[-1], 0.0, atol=1e-12)


@pytest.mark.parametrize("method", ["lcp", "ccp"])
def test_sphere_rolls_as_the_closed_form(method):
    # Trinkle (2003), section 4: the sphere slides, then rolls at 5/7 v0. With the LCP and a direction along -x
    # the step is exact; the CCP (exact circular cone) lifts off while sliding (mu v_T).
    ball = Body3D(1.0, [0, 0, 1.0], velocity=[2.0, 0, 0], radius=1.0)
    scene = Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.2, n_d=4, delta=0.0 if method == "lcp" else 0.5)
    tr = simulate(scene, 0.01, 0.6, method=method, progress=False)
    vx, wy = sphere_closed_form(tr.times, v0=2.0, mu=0.2)
    if method == "lcp":
        np.testing.assert_allclose(tr.velocities[:, 0], vx, atol=1e-10)
        np.testing.assert_allclose(tr.velocities[:, 4], wy, atol=1e-10)
    else:
        assert tr.velocities[-1, 0] == pytest.approx(5 / 7 * 2.0, rel=0.05)


def test_particle_and_moving_wall_tables():
    # Trinkle (notes, 2003) through the mechanics layer: m = h = g = 1, v = -4, gap 1, wall moving up at 0.5.
    p = Body2D(1.0, [0.0, 1.0], velocity=[0.0, -4.0])
    scene = Scene([p], [Line([0, 0], [0, 1], velocity=[0, 0.5])], gravity=[0, -1.0], mu=0.0, n_d=0, delta=10.0)
    tr = simulate(scene, 1.0, 4.0, progress=False)
    np.testing.assert_allclose([x[0] for x in tr.impulses], [4.5, 2, 1, 1], atol=1e-12)
    np.testing.assert_allclose(tr.velocities[1:, 1], [-0.5, 0.5, 0.5, 0.5], atol=1e-12)


def test_disk_pile_steps_and_progress_bar_does_not_change_results():
    a = simulate(disk_pile_scene(20, width=5, seed=3), 0.01, 0.1, method="fixed_point", progress=False)
    b = simulate(disk_pile_scene(20, width=5, seed=3), 0.01, 0.1, method="fixed_point", progress=True)
    np.testing.assert_array_equal(a.positions, b.positions)
    assert a.contacts.max() > 0


def test_small_pile_settles():
    scene = disk_pile_scene(12, width=4, seed=1)
    tr = simulate(scene, 0.01, 2.0, method="lcp", progress=False)
    assert tr.kinetic_energy[-1] < 1e-3 * tr.kinetic_energy.max()
    assert tr.max_penetration[-20:].max() < 1e-3 * 0.5   # below 1e-3 of the radius once settled


def test_bad_scene_input():
    with pytest.raises(ValueError, match="mass must be positive"):
        Body2D(0.0, [0, 0])
    with pytest.raises(ValueError, match="position must have shape"):
        Body3D(1.0, [0, 0])
    with pytest.raises(ValueError, match="inertia must be"):
        Body3D(1.0, [0, 0, 0], inertia=[1, -1, 1])
    with pytest.raises(ValueError, match="normal must be a nonzero 3-vector"):
        Plane([0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="bodies must be all Body2D or all Body3D"):
        Scene([Body2D(1.0, [0, 0]), Body3D(1.0, [0, 0, 0])])
    with pytest.raises(ValueError, match="walls must be Line"):
        Scene([Body2D(1.0, [0, 0])], [Plane([0, 0, 0], [0, 0, 1])])
    with pytest.raises(ValueError, match="n_d must be a nonnegative even number"):
        Scene([Body3D(1.0, [0, 0, 0])], n_d=3)
    with pytest.raises(ValueError, match="method must be"):
        simulate(Scene([Body2D(1.0, [0, 0])]), 0.1, 1.0, method="euler", progress=False)
    with pytest.raises(ValueError, match="h must be positive"):
        simulate(Scene([Body2D(1.0, [0, 0])]), 0.0, 1.0, progress=False)


def test_136_disk_pile_settles_with_algorithm_3():
    # A 136-disk pile as in Anitescu & Hart (lecture): disks (radius about 0.5) collapse from a lattice into a packing.
    scene = disk_pile_scene(136, width=17)
    tr = simulate(scene, 0.02, 2.4, method="fixed_point", algorithm=3, progress=False)
    assert all(s == Status.SOLVED for s in tr.statuses)
    assert tr.max_penetration.max() < 1e-3 * 0.5 * 0.9       # below 1e-3 of the smallest radius
    ke = tr.kinetic_energy
    assert ke[-1] < 1e-2 * ke.max()                          # settled
    assert ke[-20:].mean() < ke[-40:-20].mean()              # and still decaying


def test_simulate_ccp_takes_the_solver_as_algorithm():
    from mbdcp.mechanics import simulate, sphere_pile_scene

    runs = {alg: simulate(sphere_pile_scene(12, width=3, seed=1), 0.01, 0.2, method="ccp", algorithm=alg,
                          progress=False, tol=1e-9) for alg in ("apgd", "newton")}
    for tr in runs.values():
        assert tr.success and all(s == Status.SOLVED for s in tr.statuses)
        assert tr.max_penetration.max() <= 1e-6
    np.testing.assert_allclose(runs["newton"].positions[-1], runs["apgd"].positions[-1], atol=1e-6)
    with pytest.raises(ValueError, match="algorithm must be 1, 2 or 3"):
        simulate(sphere_pile_scene(2, width=2), 0.01, 0.01, method="fixed_point", algorithm="newton", progress=False)
    with pytest.raises(TypeError, match="algorithm must be one of 'apgd'"):
        simulate(sphere_pile_scene(2, width=2), 0.01, 0.01, method="ccp", algorithm=3, progress=False)


def test_the_trajectory_records_each_steps_solver_iterations():
    from mbdcp.mechanics import sphere_pile_scene

    ball = Scene([Body3D(1.0, [0, 0, 0.3], radius=0.1)], [Plane([0, 0, 0], [0, 0, 1])])
    tr = simulate(ball, 0.01, 0.3, method="lcp", warm_start=False, progress=False)
    assert tr.iterations.shape == (30,) and tr.iterations.dtype.kind == "i"
    pushed = np.array([p.size > 0 and p.max() > 0 for p in tr.impulses])
    assert pushed.any() and not pushed.all()  # it falls, then lands
    # Lemke's pivots: none for a free flight, at least one for an impulse from a cold start
    assert np.all(tr.iterations[tr.contacts == 0] == 0) and np.all(tr.iterations[pushed] > 0)
    tr = simulate(sphere_pile_scene(8, width=2), 0.01, 0.2, method="ccp", max_iter=3, progress=False)
    unsolved = np.array([s != Status.SOLVED for s in tr.statuses])
    assert unsolved.any() and np.all(tr.iterations[unsolved] == 3) and np.all(tr.iterations <= 3)
