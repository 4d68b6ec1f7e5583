"""No false failures on steps that always have a solution.

With M symmetric positive definite, gaps >= 0 and no joints, the time-stepping LCP of Stewart &
Trinkle (1996) / Anitescu & Potra (1997) always has a solution that Lemke's method finds (Trinkle
2003, section 3.2): a step not reported SOLVED is a false failure. Rolling contacts are where such
failures hide: the tangential velocity of a rolling contact is the rounding left by 1.43 - 1.43,
and a row judged at that scale instead of the scale of the terms that formed it fails the
verification. Friction directions computed with np.cos/np.sin carry 6e-17 of a quarter turn, which
puts such noise on every direction orthogonal to the motion.

1. Trinkle's (2003, section 4) sphere released sliding, for several direction counts, directions
   from friction_basis and from raw cos/sin, several headings: every step SOLVED (mbdcp.step and
   the three fixed-point algorithms) and the closed form (slides, then rolls at 5/7 v0).
2. Invariances (hypothesis): a rotation of the scene, a change of units, a reordering of the
   contacts or of the directions leave every status SOLVED and v_next transformed accordingly.
3. Every entry point on the rolling sphere and on a box sliding to rest.
4. Random solvable steps: SOLVED, and the answer checked by definition in exact arithmetic.
"""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import mbdcp
from mbdcp.mechanics import Body3D, Plane, Scene, simulate

SOLVED = mbdcp.Status.SOLVED
E_Z = np.array([0.0, 0.0, 1.0])

# Trinkle (2003), section 4
H, MU, G, V0 = 0.12, 0.2, 9.81, 2.0
STEPS = 25
# the step after which the sphere rolls: t* = 2 v0 / (7 mu g) = 0.291 s, inside step 3
K_ROLL = int(np.ceil(2.0 * V0 / (7.0 * MU * G) / H))
# a heading that is no friction direction for any n_d used here (fixed: the tests are reproducible)
RANDOM_ANGLE = float(np.random.default_rng(2003).uniform(0.0, 2.0 * np.pi))
ANGLES = {"0": 0.0, "pi/2": np.pi / 2, "pi/4": np.pi / 4, "random": RANDOM_ANGLE}
N_DS = (4, 6, 8, 12, 16)

HYPOTHESIS = {"max_examples": 30, "deadline": None, "derandomize": True, "database": None,
              "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much]}


# ---------------------------------------------------------------------------------------------
# Scenes built from their geometry
# ---------------------------------------------------------------------------------------------

def raw_directions(n_d, t1=(1.0, 0.0, 0.0), t2=(0.0, 1.0, 0.0)):
    """n_d directions cos(2 pi k / n_d) t1 + sin(2 pi k / n_d) t2 as a user writes them: the
    quarter turns are not exact (cos(pi/2) = 6e-17), opposite directions not exact opposites."""
    a = 2.0 * np.pi * np.arange(n_d) / n_d
    return np.outer(t1, np.cos(a)) + np.outer(t2, np.sin(a))


def directions(n_d, noisy, normal=E_Z):
    if not noisy:
        return mbdcp.friction_basis(normal, n_d)
    # the tangent pair friction_basis uses (t1 from the world axis least aligned with n), so that
    # only the rounding of cos and sin differs
    n = np.asarray(normal, float)
    t1 = np.eye(3)[np.argmin(np.abs(n))] - n[np.argmin(np.abs(n))] * n
    t1 /= np.linalg.norm(t1)
    return raw_directions(n_d, t1, np.cross(n, t1))


def contact_columns(points, normals, dirs):
    """Wn, D, E of contacts of one body with the world: contact i at `points[i]` (relative to the
    centre) with normal `normals[i]` and friction directions `dirs[i]` (3, n_d_i); v = (v, omega)."""
    Wn = np.array([np.r_[n, np.cross(p, n)] for p, n in zip(points, normals)]).T.reshape(6, len(points))
    D = np.array([np.r_[d, np.cross(p, d)] for p, ds in zip(points, dirs) for d in ds.T]).T
    E = np.zeros((D.shape[1], len(points)))
    row = 0
    for j, ds in enumerate(dirs):
        E[row:row + ds.shape[1], j] = 1.0
        row += ds.shape[1]
    return Wn, D.reshape(6, -1), E


def sphere(n_d, noisy, mu=MU, m=1.0, r=1.0):
    """Trinkle's sphere on the plane z = 0: M, Wn, D, E, U."""
    M = np.diag([m, m, m, 0.4 * m * r * r, 0.4 * m * r * r, 0.4 * m * r * r])
    Wn, D, E = contact_columns([[0.0, 0.0, -r]], [E_Z], [directions(n_d, noisy)])
    return M, Wn, D, E, np.array([mu])


def box(n_d, noisy, mu=0.4, m=1.0, a=(0.5, 0.3, 0.2)):
    """A box (half extents a) on its four bottom corners on the plane z = 0 (four contacts, three
    independent normal rows: the impulses are not unique, v_next is)."""
    a = np.asarray(a, float)
    corners = [[sx * a[0], sy * a[1], -a[2]] for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    inertia = m / 3.0 * np.array([a[1] ** 2 + a[2] ** 2, a[0] ** 2 + a[2] ** 2, a[0] ** 2 + a[1] ** 2])
    M = np.diag(np.r_[m, m, m, inertia])
    Wn, D, E = contact_columns(corners, [E_Z] * 4, [directions(n_d, noisy)] * 4)
    return M, Wn, D, E, np.full(4, mu)


def heading(angle):
    return np.array([np.cos(angle), np.sin(angle), 0.0])


def rolling_velocity(angle, v0=V0, r=1.0):
    """(v, omega) of the sphere rolling at 5/7 v0 along `angle` (angular momentum about the contact
    point is conserved: the friction impulse acts there, gravity and the normal pass through it)."""
    d = heading(angle)
    return np.r_[5.0 / 7.0 * v0 * d, 5.0 / 7.0 * v0 / r * np.cross(E_Z, d)]


def sphere_run(solve, angle, steps=STEPS):
    """Feed v_next back for `steps` steps; returns the statuses and the velocities after each step."""
    v = np.r_[V0 * heading(angle), 0.0, 0.0, 0.0]
    statuses, vs = [], []
    for _ in range(steps):
        res = solve(v)
        statuses.append(res.status)
        v = np.asarray(res.v_next, float)
        vs.append(v)
    return statuses, np.array(vs)


def step_solver(name, M, Wn, D, E, U, h=H, g=G):
    p_ext = np.array([0.0, 0.0, -g * h, 0.0, 0.0, 0.0])
    if name == "step":
        return lambda v: mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=[0.0])
    algorithm = int(name[-1])
    return lambda v: mbdcp.fixed_point(M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=[0.0], algorithm=algorithm)


def is_friction_direction(angle, n_d):
    """True when the heading is one of the n_d directions (then the slide is along a direction and
    the closed form holds step by step)."""
    k = angle / (2.0 * np.pi) * n_d
    return abs(k - round(k)) < 1e-12


# ---------------------------------------------------------------------------------------------
# 1. Trinkle's sphere, sliding then rolling
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("solver", ["step", "fixed_point1", "fixed_point2", "fixed_point3"])
@pytest.mark.parametrize("angle", list(ANGLES), ids=list(ANGLES))
@pytest.mark.parametrize("noisy", [False, True], ids=["friction_basis", "raw_cos_sin"])
@pytest.mark.parametrize("n_d", N_DS)
def test_trinkle_sphere_rolls_without_false_failures(n_d, noisy, angle, solver):
    a = ANGLES[angle]
    # Lemke's answer is exact up to rounding; the fixed point stops at its tolerance (1e-10)
    atol = 1e-12 if solver == "step" else 1e-8
    M, Wn, D, E, U = sphere(n_d, noisy)
    statuses, vs = sphere_run(step_solver(solver, M, Wn, D, E, U), a)
    bad = [(k, s.name) for k, s in enumerate(statuses) if s != SOLVED]
    assert not bad, f"steps not SOLVED (step index, status): {bad}"

    # once it rolls it keeps rolling at 5/7 v0 along its heading, whatever the friction polygon
    roll = rolling_velocity(a)
    err = np.abs(vs - roll).max(axis=1)
    assert err[-1] < 1e-6, f"v after {STEPS} steps: {vs[-1]}, rolling: {roll}"
    first = int(np.argmax(err < 1e-6))
    assert np.all(err[first:] < 1e-6), f"left the rolling motion after step {first}: {err[first:].max()}"
    assert np.abs(vs[:, 2]).max() < atol, "the sphere left the plane"

    if is_friction_direction(a, n_d) and solver != "fixed_point3":
        # it slides along a friction direction: the closed form of Trinkle (2003), step by step
        # (algorithm 3, one relaxation round, is documented to be exact only once nothing slides)
        t = H * np.arange(1, STEPS + 1)
        vx, wy = mbdcp.examples.sphere_closed_form(t, v0=V0, mu=MU, g=G)
        d = heading(a)
        np.testing.assert_allclose(vs[:, :3] @ d, vx, rtol=0, atol=atol)
        np.testing.assert_allclose(vs[:, 3:] @ np.cross(E_Z, d), wy, rtol=0, atol=atol)
        assert first == K_ROLL - 1, f"rolls from step {first + 1}, the closed form from step {K_ROLL}"


# ---------------------------------------------------------------------------------------------
# 2. Invariances
# ---------------------------------------------------------------------------------------------

def scene_problem(kind, n_d, noisy, angle, speed, m=1.0, L=1.0, T=1.0):
    """One of three scenes with lengths in units of L, masses of m, times of T: the sphere sliding
    (r = L), the box resting, the box sliding. Returns (M, Wn, D, E, U), v, h, p_ext, psi_n."""
    g, h = G * L / T ** 2, 0.08 * T
    if kind == "sphere":
        data = sphere(n_d, noisy, mu=MU, m=m, r=L)
    else:
        data = box(n_d, noisy, mu=0.4, m=m, a=L * np.array([0.5, 0.3, 0.2]))
        if kind == "box_rest":
            speed = 0.0
    v = np.r_[speed * L / T * heading(angle), 0.0, 0.0, 0.0]
    n_c = data[1].shape[1]
    return data, v, h, np.array([0.0, 0.0, -m * g * h, 0.0, 0.0, 0.0]), np.zeros(n_c)


def run_steps(data, v, h, p_ext, psi_n, steps=12):
    M, Wn, D, E, U = data
    statuses, vs = [], []
    for _ in range(steps):
        res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=psi_n)
        statuses.append(res.status)
        v = res.v_next
        vs.append(v)
    return statuses, np.array(vs)


def rotation(q):
    q = np.asarray(q, float) / np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


scenes = st.fixed_dictionaries({
    "kind": st.sampled_from(["sphere", "box_rest", "box_slide"]),
    "n_d": st.sampled_from(N_DS),
    "noisy": st.booleans(),
    "angle": st.one_of(st.sampled_from(list(ANGLES.values())), st.floats(0.0, 2.0 * np.pi)),
    "speed": st.floats(0.05, 3.0),
})


def assert_all_solved(statuses, what):
    bad = [(k, s.name) for k, s in enumerate(statuses) if s != SOLVED]
    assert not bad, f"{what}: steps not SOLVED (step index, status): {bad}"


def assert_close(actual, expected, scale, what):
    err = np.abs(np.asarray(actual) - np.asarray(expected)).max() / scale
    assert err <= 1e-9, f"{what}: relative difference {err:.3g}"


@settings(**HYPOTHESIS)
@given(scene=scenes, q=st.tuples(*[st.floats(-1.0, 1.0)] * 4))
# Trinkle's sphere rolling along an axis, where steps ended on NUMERICAL_ERROR
@example(scene={"kind": "sphere", "n_d": 8, "noisy": False, "angle": 0.0, "speed": 2.0}, q=(0.9, 0.1, -0.3, 0.2))
@example(scene={"kind": "sphere", "n_d": 8, "noisy": True, "angle": np.pi / 2, "speed": 2.0}, q=(0.9, 0.1, -0.3, 0.2))
def test_rotating_the_scene_rotates_the_answer(scene, q):
    assume(np.linalg.norm(q) > 0.1)
    R = rotation(q)
    Q = np.kron(np.eye(2), R)  # v = (v, omega): both rotate with R
    (M, Wn, D, E, U), v, h, p_ext, psi_n = scene_problem(**scene)
    statuses, vs = run_steps((M, Wn, D, E, U), v, h, p_ext, psi_n)
    # normal R e_z, directions R d, gravity along -R e_z, inertia R I R^T
    rot_statuses, rot_vs = run_steps((Q @ M @ Q.T, Q @ Wn, Q @ D, E, U), Q @ v, h, Q @ p_ext, psi_n)
    assert_all_solved(statuses, "unrotated")
    assert_all_solved(rot_statuses, "rotated")
    scale = max(np.abs(v).max(), G * h)
    assert_close(rot_vs, vs @ Q.T, scale, "v_next of the rotated scene against R v_next")


@settings(**HYPOTHESIS)
@given(scene=scenes, log_L=st.floats(-3.0, 3.0), log_m=st.floats(-3.0, 3.0), log_T=st.floats(-3.0, 3.0))
# Trinkle's sphere rolling along an axis, where steps ended on NUMERICAL_ERROR
@example(scene={"kind": "sphere", "n_d": 8, "noisy": False, "angle": 0.0, "speed": 2.0}, log_L=-2.0, log_m=1.5, log_T=0.7)
@example(scene={"kind": "sphere", "n_d": 8, "noisy": True, "angle": np.pi / 2, "speed": 2.0}, log_L=-2.0, log_m=1.5, log_T=0.7)
def test_changing_units_scales_the_answer(scene, log_L, log_m, log_T):
    L, m, T = 10.0 ** log_L, 10.0 ** log_m, 10.0 ** log_T
    problem = scene_problem(**scene)
    statuses, vs = run_steps(*problem)
    # the same scene measured in other units: positions by L, masses by m, times by T, so
    # v by L/T, omega by 1/T, impulses by m L/T, M by m (translation) and m L^2 (rotation)
    scaled = scene_problem(**scene, m=m, L=L, T=T)
    scaled_statuses, scaled_vs = run_steps(*scaled)
    assert_all_solved(statuses, "SI units")
    assert_all_solved(scaled_statuses, f"units L = {L:.3g}, m = {m:.3g}, T = {T:.3g}")
    S = np.r_[[L / T] * 3, [1.0 / T] * 3]
    scale = max(np.abs(problem[1]).max(), G * problem[2])
    assert_close(scaled_vs / S, vs, scale, "v_next in the new units, converted back")


@settings(**HYPOTHESIS)
@given(scene=scenes, order_seed=st.integers(0, 2 ** 32 - 1))
# Trinkle's sphere rolling along an axis, where steps ended on NUMERICAL_ERROR
@example(scene={"kind": "sphere", "n_d": 8, "noisy": False, "angle": 0.0, "speed": 2.0}, order_seed=7)
@example(scene={"kind": "sphere", "n_d": 8, "noisy": True, "angle": np.pi / 2, "speed": 2.0}, order_seed=7)
def test_reordering_contacts_and_directions_changes_nothing(scene, order_seed):
    (M, Wn, D, E, U), v, h, p_ext, psi_n = scene_problem(**scene)
    n_c, n_d = Wn.shape[1], scene["n_d"]
    rng = np.random.default_rng(order_seed)
    contacts = rng.permutation(n_c)
    # contact j's directions, in an order of their own
    columns = np.concatenate([j * n_d + rng.permutation(n_d) for j in contacts])
    statuses, vs = run_steps((M, Wn, D, E, U), v, h, p_ext, psi_n)
    perm_statuses, perm_vs = run_steps((M, Wn[:, contacts], D[:, columns], E[np.ix_(columns, contacts)],
                                        U[contacts]), v, h, p_ext, psi_n[contacts])
    assert_all_solved(statuses, "original order")
    assert_all_solved(perm_statuses, "reordered")
    assert_close(perm_vs, vs, max(np.abs(v).max(), G * h), "v_next after reordering")


# ---------------------------------------------------------------------------------------------
# 3. Every entry point on the rolling sphere (n_d = 8), and simulations
# ---------------------------------------------------------------------------------------------

ENTRY_ANGLES = {"0": 0.0, "pi/4": np.pi / 4, "random": RANDOM_ANGLE}


@pytest.mark.parametrize("n_d", [4, 8])
@pytest.mark.parametrize("angle", list(ENTRY_ANGLES), ids=list(ENTRY_ANGLES))
@pytest.mark.parametrize("pair", ["axes", "raw_turned"])
def test_full_rank_step_rolls(pair, angle, n_d):
    a = ENTRY_ANGLES[angle]
    M, Wn, _, _, _ = sphere(8, False)
    # the tangent pair (u, w) at the contact; "raw_turned": turned by the random angle with raw cos/sin
    b = 0.0 if pair == "axes" else RANDOM_ANGLE
    u, w = np.array([np.cos(b), np.sin(b), 0.0]), np.array([-np.sin(b), np.cos(b), 0.0])
    _, Wt, _ = contact_columns([[0.0, 0.0, -1.0]], [E_Z], [np.array([u, w]).T])
    p_ext = np.array([0.0, 0.0, -G * H, 0.0, 0.0, 0.0])
    statuses, vs = sphere_run(
        lambda v: mbdcp.full_rank_step(M, Wn, Wt, MU, v, H, n_d=n_d, p_ext=p_ext, psi_n=[0.0]), a)
    assert_all_solved(statuses, "full_rank_step")
    np.testing.assert_allclose(vs[-1], rolling_velocity(a), rtol=0, atol=1e-6)


@pytest.mark.parametrize("noisy", [False, True], ids=["friction_basis", "raw_cos_sin"])
@pytest.mark.parametrize("angle", list(ENTRY_ANGLES), ids=list(ENTRY_ANGLES))
def test_instantaneous_on_the_rolling_sphere(angle, noisy):
    a = ENTRY_ANGLES[angle]
    M, Wn, D, E, U = sphere(8, noisy)
    # the rolling state the time stepping reaches, rounding included
    statuses, vs = sphere_run(step_solver("step", M, Wn, D, E, U), a)
    assert_all_solved(statuses, "step")
    k = [0.0, 0.0, -G, 0.0, 0.0, 0.0]
    for v, what in ((vs[-1], "stepped"), (rolling_velocity(a), "exact")):
        res = mbdcp.instantaneous(M, Wn, D, E, U, v, k)
        assert res.status == SOLVED, f"{what} rolling state: {res.status.name}"
        assert not res.sliding[0]
        np.testing.assert_allclose(res.c_n, [G], rtol=1e-12)
        np.testing.assert_allclose(res.a, 0.0, atol=1e-9 * G)  # rolling on a plane: no acceleration
    # released sliding along a friction direction: the friction force mu m g opposes the slide
    res = mbdcp.instantaneous(M, Wn, D, E, U, np.r_[V0, 0.0, 0.0, 0.0, 0.0, 0.0], k)
    assert res.status == SOLVED and res.sliding[0]
    np.testing.assert_allclose(res.a, [-MU * G, 0, 0, 0, 2.5 * MU * G, 0], atol=1e-9 * G)


def test_batch_step_on_rolling_spheres():
    M, Wn, D, E, _ = sphere(8, False)
    headings = [0.0, np.pi / 2, np.pi / 4, RANDOM_ANGLE, np.pi, 5.0]
    mus = np.array([[0.2], [0.2], [0.2], [0.2], [0.5], [1.0]])
    B = len(headings)
    vs = np.array([np.r_[V0 * heading(a), 0.0, 0.0, 0.0] for a in headings])
    p_ext = [0.0, 0.0, -G * H, 0.0, 0.0, 0.0]
    for k in range(STEPS):
        res = mbdcp.batch.step(np.array([M] * B), Wn, D, E, mus, vs, H, p_ext=p_ext, psi_n=[0.0])
        assert res.success.all(), f"step {k}: statuses {res.status.tolist()}"
        for i in range(B):  # each instance is the single step, bit for bit
            one = mbdcp.step(M, Wn, D, E, mus[i], vs[i], H, p_ext=p_ext, psi_n=[0.0])
            assert one.status == SOLVED
            np.testing.assert_array_equal(res.v_next[i], one.v_next)
        vs = res.v_next
    for i, a in enumerate(headings):
        np.testing.assert_allclose(vs[i], rolling_velocity(a), rtol=0, atol=1e-6)


@pytest.mark.parametrize("noisy", [False, True], ids=["friction_basis", "raw_cos_sin"])
def test_derivatives_of_the_rolling_and_sliding_steps(noisy):
    M, Wn, D, E, U = sphere(8, noisy)
    p_ext = np.array([0.0, 0.0, -G * H, 0.0, 0.0, 0.0])
    _, vs = sphere_run(step_solver("step", M, Wn, D, E, U), 0.0)
    for v, mode in ((vs[-1], "sticking"), (np.r_[V0, 0.0, 0.0, 0.0, 0.0, 0.0], "sliding")):
        res = mbdcp.step(M, Wn, D, E, U, v, H, p_ext=p_ext, psi_n=[0.0])
        assert res.status == SOLVED, f"{mode} step: {res.status.name}"
        d = mbdcp.derivatives.step(M, Wn, D, E, U, v, H, res, p_ext=p_ext, psi_n=[0.0])  # raises unless SOLVED
        assert list(d.mode) == [mode]
        dv = d.jvp(U=[1.0])["v_next"]
        assert np.all(np.isfinite(dv))
        if mode == "sticking":  # rolling needs no friction: mu does not matter
            np.testing.assert_allclose(dv, 0.0, atol=1e-12)
        else:  # sliding: friction mu m g h slows it, and spins it up
            np.testing.assert_allclose(dv, [-G * H, 0, 0, 0, 2.5 * G * H, 0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["lcp", "fixed_point", "ccp"])
def test_simulated_sphere_rolls(method):
    ball = Body3D(1.0, [0, 0, 0.5], velocity=[0, 1, 0], radius=0.5)
    traj = simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.3, n_d=8), h=0.01, T=2.0, method=method,
                    progress=False)
    assert traj.success, traj.first_failure
    assert all(s == SOLVED for s in traj.statuses)
    # rolling at 5/7 of the release speed, omega_x = -v_y / r
    np.testing.assert_allclose(traj.velocities[-1], [0, 5 / 7, 0, -10 / 7, 0, 0], rtol=0, atol=1e-6)


@pytest.mark.parametrize("method, algorithm", [("lcp", None), ("fixed_point", 2), ("fixed_point", 3), ("ccp", None)],
                         ids=["lcp", "fixed_point2", "fixed_point3", "ccp"])
@pytest.mark.parametrize("n_d", [8, 16])
@pytest.mark.parametrize("axis", [0, 1], ids=["+x", "+y"])
def test_simulated_box_slides_to_rest(axis, n_d, method, algorithm):
    speed, mu = 3.0, 0.3
    box_body = Body3D(1.0, [0, 0, 0.5], velocity=speed * np.eye(3)[axis], half_extents=[0.5] * 3)
    traj = simulate(Scene([box_body], [Plane([0, 0, 0], [0, 0, 1])], mu=mu, n_d=n_d), h=0.01, T=2.0,
                    method=method, algorithm=algorithm, progress=False)
    assert traj.success, traj.first_failure
    assert all(s == SOLVED for s in traj.statuses)
    # at rest after about 1 s (the CCP's iterates to its tolerance)
    np.testing.assert_allclose(traj.velocities[-1], 0.0, atol=1e-9 if method != "ccp" else 1e-6)
    if algorithm == 3:
        return  # one relaxation round: documented exact only while nothing slides, not a slide's distance
    # it stops after about v^2 / (2 mu g) along its axis, nowhere else, without turning
    travelled = traj.positions[-1][:3] - [0, 0, 0.5]
    assert travelled[axis] == pytest.approx(speed ** 2 / (2 * mu * 9.81), rel=0.02)
    assert abs(travelled[1 - axis]) < 1e-9 and abs(travelled[2]) < 1e-3
    np.testing.assert_allclose(np.abs(traj.positions[-1][3:]), [1, 0, 0, 0], atol=1e-9)


# ---------------------------------------------------------------------------------------------
# 4. Random solvable steps, checked by definition
# ---------------------------------------------------------------------------------------------

def random_step(n_bodies, n_c, n_d, noisy, round_bodies, load, seed):
    """A step with SPD M (per body a mass and an inertia tensor), n_c contacts on random normals
    (half of them world axes) at random points, each with the world or (two bodies) between the
    bodies, mu in [0, 1], gaps >= 0.

    round_bodies: each contact point on the normal through the body's centre, as on a sphere, and
    the inertia unturned: a friction row then gets nothing from the normal impulse
    (D^T M^-1 Wn = 0), so only its own velocity terms set its scale.

    load "random": random v and p_ext, some gaps exactly 0, others open. "rolling": every contact
    closed and at rest up to rounding (v with its contact velocities projected out: the bodies may
    still roll and spin), pressed by p_ext along the normals, pushed besides in ways the contacts
    do not feel: rows whose terms cancel to 1e-16, as on a rolling sphere. "pressed": the contacts
    closed and pressed along their normals only (as gravity presses a body on a floor), v with
    some components exactly zero or only one: a motion along the axes, which a few steps bring to
    rest or to rolling."""
    rng = np.random.default_rng(seed)
    n_v = 6 * n_bodies
    M = np.zeros((n_v, n_v))
    for b in range(n_bodies):
        m = 10.0 ** rng.uniform(-1, 1)
        R = np.eye(3) if round_bodies else rotation(rng.standard_normal(4))
        M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = m * np.eye(3)
        M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = R @ np.diag(m * 10.0 ** rng.uniform(-1.5, 0.5, 3)) @ R.T
    Wn, D = np.zeros((n_v, n_c)), np.zeros((n_v, n_c * n_d))
    for j in range(n_c):
        if rng.random() < 0.5:  # a world axis: directions from cos and sin then hold 6e-17 entries
            n = rng.choice([-1.0, 1.0]) * np.eye(3)[rng.integers(3)]
        else:
            n = rng.standard_normal(3)
            n /= np.linalg.norm(n)
        dirs = directions(n_d, noisy, n)
        pair = rng.integers(n_bodies + (n_bodies > 1))  # body b with the world, or (last) body 0 on body 1
        bodies = [(pair, 1.0)] if pair < n_bodies else [(0, 1.0), (1, -1.0)]
        for b, sign in bodies:
            r = -sign * rng.uniform(0.1, 1.0) * n if round_bodies else rng.uniform(-1, 1, 3)
            Wn[6 * b:6 * b + 6, j] = sign * np.r_[n, np.cross(r, n)]
            D[6 * b:6 * b + 6, j * n_d:(j + 1) * n_d] = sign * np.vstack([dirs, np.cross(r, dirs.T).T])
    E = np.kron(np.eye(n_c), np.ones((n_d, 1)))
    U = rng.uniform(0, 1, n_c)
    h = 10.0 ** rng.uniform(-3, -1)
    v = rng.standard_normal(n_v) * 10.0 ** rng.uniform(-1, 1)
    p_ext = rng.standard_normal(n_v) * h * 10.0 ** rng.uniform(-1, 1.5)
    psi_n = np.where(rng.random(n_c) < 0.5, 0.0, rng.uniform(0, 0.1, n_c) * h)
    press = -Wn @ rng.uniform(0.5, 2.0, n_c) * h * 10.0
    if load == "rolling":
        J = np.hstack([Wn, D])
        v = v - J @ np.linalg.lstsq(J, v, rcond=None)[0]
        Minv_J = np.linalg.solve(M, J)
        p_ext = press + p_ext - J @ np.linalg.lstsq(J.T @ Minv_J, Minv_J.T @ p_ext, rcond=None)[0]
        psi_n = np.zeros(n_c)
    elif load == "pressed":
        h = 10.0 ** rng.uniform(-2, -1)
        if rng.random() < 0.5:  # one component only: a slide or a spin about one axis
            v = np.eye(n_v)[rng.integers(n_v)] * rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-1, 0.5)
        else:
            v = np.where(rng.random(n_v) < 0.5, 0.0, v)
        p_ext, psi_n = press, np.zeros(n_c)
    return M, Wn, D, E, U, v, h, p_ext, psi_n


def exact_rows(A, x):
    """A x and |A| |x| in exact rational arithmetic (floats are dyadic rationals)."""
    xs = [Fraction(float(t)) for t in x]
    Ax, AbsAx = [], []
    for row in np.asarray(A, float):
        terms = [Fraction(float(a)) * t for a, t in zip(row, xs) if a != 0.0]
        Ax.append(sum(terms, Fraction(0)))
        AbsAx.append(float(sum((abs(t) for t in terms), Fraction(0))))
    return Ax, np.array(AbsAx)


def check_pairs(z, w, w_scale, z_scale, tol, what):
    """z >= 0, w >= -tol w_scale, and per row min(z / z_scale, |w| / w_scale) <= tol: each side
    judged at the size of its own quantity (an impulse, a velocity), never at its own rounding."""
    z = np.array([float(t) for t in z])
    w = np.array([float(t) for t in w])
    tiny = np.finfo(float).tiny
    w_scale, z_scale = np.maximum(w_scale, tiny), np.maximum(z_scale, tiny)
    bad = np.flatnonzero(z < 0)
    assert bad.size == 0, f"{what}: negative z at rows {bad.tolist()}: {z[bad]}"
    bad = np.flatnonzero(w < -tol * w_scale)
    assert bad.size == 0, f"{what}: w below -tol at rows {bad.tolist()}: {(w / w_scale)[bad]}"
    gap = np.minimum(z / z_scale, np.abs(w) / w_scale)
    bad = np.flatnonzero(gap > tol)
    assert bad.size == 0, f"{what}: complementarity violated at rows {bad.tolist()}: {gap[bad]}"


def verify_step(M, Wn, D, E, U, v, h, p_ext, psi_n, res, tol=1e-7):
    """The step's answer by definition, in exact arithmetic: the reduced LCP(F, f) it reports, and
    the mixed LCP of the step itself (with v_next, not trusting the reduction)."""
    assert res.status == SOLVED, f"{res.status.name}, residual {res.residual:.3g}"
    n_c, m = Wn.shape[1], D.shape[1]
    W = np.hstack([Wn, D])
    vn = res.v_next

    # the reduced LCP(F, f) in z = (p_n, beta, sigma), w = F z + f computed exactly
    F, f, z = res.lcp.F, res.lcp.f, res.lcp.z
    np.testing.assert_array_equal(z, np.r_[res.p_n, res.beta, res.sigma])
    Fz, absFz = exact_rows(F, z)
    w = [a + Fraction(float(b)) for a, b in zip(Fz, f)]
    # each row at the scale of the terms that formed it: |F||z| + |f| and the data summed into f
    data = np.abs(W.T) @ np.abs(v) + np.abs(W.T @ np.linalg.inv(M)) @ np.abs(p_ext) + np.r_[psi_n / h, np.zeros(m)]
    scale = absFz + np.abs(f) + np.r_[data, np.zeros(n_c)]
    # z's side: impulses (p_n, beta) at the momentum's size, sigma (a sliding speed) at the speeds'
    impulse = max(np.abs(M @ v).max(), np.abs(M @ vn).max(), np.abs(p_ext).max(), np.abs(z[:n_c + m]).max())
    velocity = max(np.abs(v).max(), np.abs(vn).max(), np.abs(np.linalg.solve(M, p_ext)).max(), (psi_n / h).max())
    z_scale = np.r_[np.full(n_c + m, impulse), np.full(n_c, velocity)]
    check_pairs(z, w, scale, z_scale, tol, "reduced LCP")

    # the mixed LCP: M v_next = M v + p_ext + Wn p_n + D beta, and the three complementarities
    pn, beta, sigma = res.p_n, res.beta, res.sigma
    lhs, abs_lhs = exact_rows(np.hstack([M, -M, -Wn, -D, -np.eye(len(v))]), np.r_[vn, v, pn, beta, p_ext])
    momentum = np.array([float(t) for t in lhs])
    assert np.all(np.abs(momentum) <= tol * abs_lhs), f"M v_next - M v - Wn p_n - D beta - p_ext = {momentum}"
    wn, abs_wn = exact_rows(np.hstack([Wn.T, np.eye(n_c) / h]), np.r_[vn, psi_n])
    wd, abs_wd = exact_rows(np.hstack([D.T, E]), np.r_[vn, sigma])
    ws, abs_ws = exact_rows(np.hstack([np.diag(U), -E.T]), np.r_[pn, beta])
    # v_next = M^-1 (M v + p_ext + Wn p_n + D beta) is exact to the rounding of the problem's
    # speeds, not of each component: a direction's 6e-17 entries (noise of the data) meet
    # velocities of that size; each row is judged at its |w_i|-row times the problem's speed
    motion = max(velocity, np.abs(np.linalg.solve(M, W @ np.r_[pn, beta])).max())
    speed = np.abs(W.T).sum(axis=1) * motion
    check_pairs(pn, wn, abs_wn + speed[:n_c] + psi_n / h, impulse, tol, "normal rows")
    check_pairs(beta, wd, abs_wd + speed[n_c:], impulse, tol, "friction rows")
    check_pairs(sigma, ws, abs_ws, velocity, tol, "cone rows")


random_steps = st.fixed_dictionaries({
    "n_bodies": st.integers(1, 2),
    "n_c": st.integers(1, 4),
    "n_d": st.sampled_from([3, 4, 5, 6, 8]),
    "noisy": st.booleans(),
    "round_bodies": st.booleans(),
    "load": st.sampled_from(["random", "rolling", "pressed"]),
    "seed": st.integers(0, 2 ** 32 - 1),
})


@settings(**HYPOTHESIS)
@given(problem=random_steps)
def test_random_solvable_steps_are_solved_and_verified(problem):
    M, Wn, D, E, U, v, h, p_ext, psi_n = random_step(**problem)
    res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=psi_n, return_lcp=True)
    verify_step(M, Wn, D, E, U, v, h, p_ext, psi_n, res)


@settings(**HYPOTHESIS)
@given(problem=random_steps.map(lambda p: {**p, "load": "pressed"}))
# round bodies set sliding along an axis and left to roll: steps that ended on NUMERICAL_ERROR while
# rows of f were judged at their own scale
@example(problem={"n_bodies": 1, "n_c": 1, "n_d": 8, "noisy": True, "round_bodies": True, "load": "pressed", "seed": 3})
@example(problem={"n_bodies": 1, "n_c": 1, "n_d": 8, "noisy": False, "round_bodies": True, "load": "pressed", "seed": 20})
@example(problem={"n_bodies": 2, "n_c": 2, "n_d": 6, "noisy": True, "round_bodies": True, "load": "pressed", "seed": 50})
def test_random_solvable_runs_are_solved_and_verified(problem):
    # v_next fed back under a steady load: slides end in sticking or rolling, where the contact
    # rows are left with the rounding of the previous steps
    M, Wn, D, E, U, v, h, p_ext, psi_n = random_step(**problem)
    for k in range(12):
        res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=psi_n, return_lcp=True)
        try:
            verify_step(M, Wn, D, E, U, v, h, p_ext, psi_n, res)
        except AssertionError as e:
            raise AssertionError(f"step {k}: {e}") from None
        v = res.v_next
