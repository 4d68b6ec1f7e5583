"""Contact states (SEPARATING / STICKING / SLIDING) of every time-step formulation, checked on the
worked examples against their closed forms and against the kinematics of the solution."""

import numpy as np
import pytest

import mbdcp
from mbdcp import ContactState
from mbdcp.examples import sphere_on_plane
from mbdcp.infrastructure.results import StepResult

G = 9.81
SEP, STICK, SLIDE = ContactState.SEPARATING, ContactState.STICKING, ContactState.SLIDING


def test_enum_values_and_names():
    assert [int(s) for s in ContactState] == [0, 1, 2]
    assert [s.name for s in ContactState] == ["SEPARATING", "STICKING", "SLIDING"]
    assert "ContactState" in mbdcp.__all__ and mbdcp.ContactState is ContactState


# ---- the sphere of Trinkle (2003): slides until t* = 2 v0 / (7 mu g), then rolls (sticks)

def sphere_solvers(mu):
    """name -> one step (v, gap, h) -> result, for the four formulations on the sphere. The
    full-rank model and the CCP get the tangent pair (x, y) of the sphere's D (+x, -x, +y, -y)."""
    M, Wn, D, E, U = sphere_on_plane(mu)
    Wt = D[:, [0, 2]]

    def kw(h):
        return {"p_ext": np.array([0, 0, -G * h, 0, 0, 0])}
    return {
        "lcp": lambda v, gap, h: mbdcp.step(M, Wn, D, E, U, v, h, psi_n=[gap], **kw(h)),
        "fixed_point_1": lambda v, gap, h: mbdcp.fixed_point(M, Wn, D, E, U, v, h, psi_n=[gap], algorithm=1, **kw(h)),
        "fixed_point_2": lambda v, gap, h: mbdcp.fixed_point(M, Wn, D, E, U, v, h, psi_n=[gap], algorithm=2, **kw(h)),
        "fixed_point_3": lambda v, gap, h: mbdcp.fixed_point(M, Wn, D, E, U, v, h, psi_n=[gap], algorithm=3, **kw(h)),
        "full_rank": lambda v, gap, h: mbdcp.full_rank_step(M, Wn, Wt, U, v, h, psi_n=[gap], **kw(h)),
        "ccp": lambda v, gap, h: mbdcp.ccp(M, Wn, Wt, U, v, h, psi_n=[gap], tol=1e-12, **kw(h)),
    }


def expected_sphere_states(h, steps, v0, mu):
    """SLIDING for steps ending before t*, STICKING for those starting after it; None (either) for
    the step containing t*."""
    t_star = 2 * v0 / (7 * mu * G)
    out = []
    for k in range(1, steps + 1):
        out.append(SLIDE if k * h < t_star - 1e-12 else STICK if (k - 1) * h > t_star + 1e-12 else None)
    return out


@pytest.mark.parametrize("name", ["lcp", "fixed_point_1", "fixed_point_2", "fixed_point_3", "full_rank", "ccp"])
@pytest.mark.parametrize("h, v0, mu", [(0.12, 2.0, 0.2), (0.01, 1.0, 0.5), (0.05, 3.0, 0.3)])
def test_sphere_slides_then_rolls(name, h, v0, mu):
    solve_lcp, solve = sphere_solvers(mu)["lcp"], sphere_solvers(mu)[name]
    steps = int(np.ceil(2.5 * (2 * v0 / (7 * mu * G)) / h)) + 2
    v, z = np.array([v0, 0, 0, 0, 0, 0.0]), 1.0
    got = []
    for _ in range(steps):
        res = solve(v, z - 1.0, h)
        assert res.success
        got.append(res.contact_state[0])
        # the CCP lifts a sliding sphere off (the bowling-ball artifact), so every formulation is
        # evaluated along the LCP's motion, which is the closed form (Trinkle 2003)
        v = solve_lcp(v, z - 1.0, h).v_next
        z += h * v[2]
    want = expected_sphere_states(h, steps, v0, mu)
    assert STICK in want and SLIDE in want
    for k, (g, w) in enumerate(zip(got, want)):
        if w is not None:
            assert g == w, f"step {k + 1}: {g!r}, expected {w!r}"
        else:
            assert g in (SLIDE, STICK)


@pytest.mark.parametrize("name", ["lcp", "fixed_point_2", "full_rank"])
def test_sphere_own_motion(name):
    # formulations that keep the sphere on the plane, stepped with their own velocities
    h, v0, mu = 0.12, 2.0, 0.2
    solve = sphere_solvers(mu)[name]
    v, z, got = np.array([v0, 0, 0, 0, 0, 0.0]), 1.0, []
    for _ in range(6):
        res = solve(v, z - 1.0, h)
        v = res.v_next
        z += h * v[2]
        got.append(res.contact_state[0])
    for g, w in zip(got, expected_sphere_states(h, 6, v0, mu)):
        assert w is None or g == w


def test_sphere_simulated_scene_records_states():
    from mbdcp.mechanics import Body3D, Plane, Scene, simulate

    h, v0, mu = 0.02, 2.0, 0.2
    ball = Body3D(1.0, [0, 0, 1.0], velocity=[v0, 0, 0], radius=1.0)
    tr = simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=mu, n_d=4, delta=0.01), h, 0.6, progress=False)
    assert tr.success and len(tr.contact_states) == tr.steps
    assert all(len(s) == c for s, c in zip(tr.contact_states, tr.contacts))
    got = [s[0] if len(s) else None for s in tr.contact_states]
    for k, (g, w) in enumerate(zip(got, expected_sphere_states(h, tr.steps, v0, mu))):
        if w is not None:
            assert g == w, f"step {k + 1}"
    assert [len(p) for p in tr.contact_points] == list(tr.contacts)


def test_plot_contact_states_draws_the_timeline():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mbdcp.mechanics import Body3D, Plane, Scene, simulate

    ball = Body3D(1.0, [0, 0, 1.0], velocity=[2.0, 0, 0], radius=1.0)
    tr = simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.2, delta=0.01), 0.05, 0.6, progress=False)
    fig, ax = plt.subplots()
    assert tr.plot_contact_states(ax) is ax
    img = ax.get_images()[0].get_array()
    assert img.shape == (1, tr.steps)
    # colour index = state + 1: sliding (3) first, sticking (2) at the end
    assert img[0, 0] == 3 and img[0, -1] == 2
    plt.close(fig)


# ---- a particle on an incline: sticks for tan(theta) < mu, slides for tan(theta) > mu

def incline_results(theta, mu, h=0.01):
    n = np.array([-np.sin(theta), 0, np.cos(theta)])
    u, w = np.array([np.cos(theta), 0, np.sin(theta)]), np.array([0.0, 1, 0])
    M, Wn, Wt = np.eye(3), n[:, None], np.array([u, w]).T
    D, E = np.array([u, w, -u, -w]).T, np.ones((4, 1))
    v, kw = np.zeros(3), {"p_ext": [0, 0, -G * h], "psi_n": [0.0]}
    return {
        "lcp": mbdcp.step(M, Wn, D, E, [mu], v, h, **kw),
        "fixed_point": mbdcp.fixed_point(M, Wn, D, E, [mu], v, h, algorithm=2, **kw),
        "full_rank": mbdcp.full_rank_step(M, Wn, Wt, mu, v, h, **kw),
        "ccp": mbdcp.ccp(M, Wn, Wt, mu, v, h, p_ext=kw["p_ext"], psi_n=[0.0], tol=1e-12),
    }, u


@pytest.mark.parametrize("theta_deg, mu", [(10, 0.3), (20, 0.5), (30, 0.6), (16, 0.3)])
def test_incline_sticks_below_the_friction_angle(theta_deg, mu):
    assert np.tan(np.radians(theta_deg)) < mu
    results, _ = incline_results(np.radians(theta_deg), mu)
    for name, res in results.items():
        assert res.contact_state.tolist() == [STICK], name


@pytest.mark.parametrize("theta_deg, mu", [(20, 0.3), (35, 0.5), (45, 0.9), (17, 0.3)])
def test_incline_slides_above_the_friction_angle(theta_deg, mu):
    th = np.radians(theta_deg)
    assert np.tan(th) > mu
    results, u = incline_results(th, mu)
    for name, res in results.items():
        assert res.contact_state.tolist() == [SLIDE], name
        assert -res.v_next @ u > 0  # it moves down the slope


# ---- the bowling ball and a body moving away

def test_bowling_ball_slides_in_every_formulation():
    # Negrut et al. (2018): a ball sliding at 3 m/s; the CCP lifts it off at mu v_T, yet it carries a normal
    # impulse and slides (its state is not SEPARATING)
    mu, h = 0.3, 0.01
    solvers = sphere_solvers(mu)
    v = np.array([3.0, 0, 0, 0, 0, 0])
    for name, solve in solvers.items():
        res = solve(v, 0.0, h)
        assert res.contact_state.tolist() == [SLIDE], name
    ccp = solvers["ccp"](v, 0.0, h)
    slip = ccp.v_next[0] - ccp.v_next[4]
    assert ccp.v_next[2] == pytest.approx(mu * slip, rel=1e-6) and ccp.v_next[2] > 0


@pytest.mark.parametrize("vz", [0.5, 3.0])
def test_body_moving_away_separates(vz):
    mu, h = 0.3, 0.01
    for name, solve in sphere_solvers(mu).items():
        res = solve(np.array([1.0, 0, vz, 0, 0, 0]), 0.0, h)
        assert res.contact_state.tolist() == [SEP], name
        p_n = res.gamma[:, 0] if name == "ccp" else res.p_n
        assert p_n[0] <= 1e-12


def test_resting_contact_sticks_and_a_gap_separates():
    # a sphere at rest on the plane sticks; one resting 0.5 above it separates
    for name, solve in sphere_solvers(0.2).items():
        assert solve(np.zeros(6), 0.0, 0.01).contact_state.tolist() == [STICK], name
        assert solve(np.zeros(6), 0.5, 0.01).contact_state.tolist() == [SEP], name


# ---- the planar friction cases of notebook 03

MU, H = 0.5, 0.1
M2, WN2 = np.eye(2), np.array([[0.0], [1.0]])
D2, E2 = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))


def block(v, push=0.0, lift=0.0):
    return mbdcp.step(M2, WN2, D2, E2, [MU], np.asarray(v, float), H, p_ext=[push, -G * H + lift], psi_n=[0.0],
                      return_lcp=True)


@pytest.mark.parametrize("v, push, lift, state", [
    ((-2.0, 0.0), 0.0, 0.0, SLIDE),   # slides toward -x
    ((0.0, 0.0), -0.1, 0.0, STICK),   # sticks, pushed toward -x
    ((2.0, 0.0), 0.0, 0.0, SLIDE),    # slides toward +x
    ((0.0, 0.0), 0.1, 0.0, STICK),    # sticks, pushed toward +x
    ((2.0, 0.0), 0.0, 2.0, SEP),      # lifted off while sliding
    ((0.0, 0.0), 0.0, 0.0, STICK),    # rests, no tangential load
])
def test_notebook_situations(v, push, lift, state):
    assert block(v, push, lift).contact_state.tolist() == [state]


def basic_solutions(res):
    """Every complementary basic solution z of the block's reduced LCP (as notebook 03 enumerates)."""
    return mbdcp.testing.basic_solutions(res.lcp.F, res.lcp.f)


def test_eight_planar_cases():
    # every sign pattern of (beta_1, beta_2, sigma) found among all solutions gets the state the
    # notebook gives it, and that state agrees with the motion: SLIDING iff loaded and v_x != 0
    rng = np.random.default_rng(0)
    cases = {}
    # case 8 needs no tangential load at all: two such inputs (resting, and lifted off), then random ones
    inputs = [(np.array([0.0, 0.0]), 0.0, 0.0), (np.array([0.0, 1.0]), 0.0, 2.0)]
    inputs += [(rng.uniform(-2, 2, 2), rng.uniform(-1, 1), rng.choice([0.0, 0.0, 2.0])) for _ in range(300)]
    for v, push, lift in inputs:
        res = block(v, push, lift)
        for z in basic_solutions(res):
            p_n, beta, sigma = z[:1], z[1:3], z[3:]
            v_next = v + np.array([push, -G * H + lift]) + WN2 @ p_n + D2 @ beta
            r = StepResult(success=True, status=mbdcp.Status.SOLVED, message="", v_next=v_next, p_n=p_n, beta=beta,
                           sigma=sigma, p_b=np.zeros(0), beta_j=np.zeros(0), sigma_j=np.zeros(0), pivots=0, residual=0.0,
                           cone_slack=MU * p_n - E2.T @ beta)
            pattern = tuple(int(x > 1e-9) for x in (beta[0], beta[1], sigma[0]))
            case = 1 + [(1, 1, 1), (1, 1, 0), (1, 0, 1), (1, 0, 0), (0, 1, 1), (0, 1, 0), (0, 0, 1), (0, 0, 0)].index(pattern)
            state = r.contact_state[0]
            loaded = p_n[0] > 1e-9
            kinematic = SEP if not loaded else SLIDE if abs(v_next[0]) > 1e-9 else STICK
            assert state == kinematic, (case, z, v_next)
            want = {2: STICK, 3: SLIDE, 4: STICK, 5: SLIDE, 6: STICK, 7: SEP}.get(case, STICK if loaded else SEP)
            assert state == want, (case, z)
            cases.setdefault(case, set()).add(state)
    assert 1 not in cases  # the inconsistent case
    assert set(cases) == {2, 3, 4, 5, 6, 7, 8}
    assert cases[8] == {STICK, SEP}  # rests under load, or flies


def test_classify_validates():
    from mbdcp.infrastructure.contact_state import classify

    with pytest.raises(ValueError, match="slip"):
        classify([1.0, 2.0], [0.0], p_tol=0.0, slip_tol=0.0)
    with pytest.raises(ValueError, match="p_tol"):
        classify([1.0], [0.0], p_tol=-1.0, slip_tol=0.0)
    with pytest.raises(ValueError, match="p_n"):
        classify([[1.0]], [[0.0]], p_tol=0.0, slip_tol=0.0)


def test_tolerance_is_relative_to_the_solution():
    # the same problem in other units (impulses scaled by 1e-6): the same states
    M, Wn, D, E, U = sphere_on_plane(0.2)
    for scale in (1.0, 1e-6, 1e6):
        res = mbdcp.step(scale * M, Wn, D, E, U, [2.0, 0, 0, 0, 0, 0], 0.01, p_ext=scale * np.array([0, 0, -G * 0.01, 0, 0, 0]),
                         psi_n=[0.0])
        assert res.contact_state.tolist() == [SLIDE]
        res = mbdcp.step(scale * M, Wn, D, E, U, np.zeros(6), 0.01, p_ext=scale * np.array([0, 0, -G * 0.01, 0, 0, 0]),
                         psi_n=[0.0])
        assert res.contact_state.tolist() == [STICK]


def test_docstring_examples():
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("mbdcp.contact_state"), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
