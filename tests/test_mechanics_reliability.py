"""Property-based: random small scenes in mixed units (masses 1e-3..1e3, lengths 1e-3..1e2)
stepped with the LCP and the CCP never crash, and a step reported SOLVED satisfies its
conditions by definition on the assembled matrices, componentwise, with tolerances scaled by
the data row by row (the solver's own flag is never trusted)."""
import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import mbdcp
from mbdcp.mechanics import Body2D, Body3D, Line, Plane, Scene, simulate

try:
    import mujoco  # noqa: F401  (the contacts of boxes with other bodies)
    HAVE_MUJOCO = True
except ImportError:
    HAVE_MUJOCO = False

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _u(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def _vec(draw, n, lo, hi):
    return np.array([draw(_u(lo, hi)) for _ in range(n)])


@st.composite
def scenes(draw):
    """A recipe (dict) for a scene of 1-4 disks/particles/boxes (2-D) or spheres/particles/boxes
    (3-D) of scene length L, each with its own mass, over a floor and maybe a tilted wall."""
    planar, L = draw(st.booleans()), 10.0 ** draw(_u(-3, 2))
    dim = 2 if planar else 3
    bodies = []
    for _ in range(draw(st.integers(1, 4))):
        b = dict(mass=10.0 ** draw(_u(-3, 3)), position=L * np.r_[_vec(draw, dim - 1, -1.5, 1.5), draw(_u(-0.3, 2.0))],
                 velocity=L * _vec(draw, dim, -20, 20), radius=L * draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])))
        if planar:
            b.update(theta=draw(_u(-3, 3)), omega=draw(_u(-20, 20)))
            if HAVE_MUJOCO and draw(st.booleans()):  # a plane box (its pairs need MuJoCo's collision functions)
                b.update(half_extents=L * _vec(draw, 2, 0.05, 1.0), radius=0.0)
        else:
            e = _vec(draw, 4, -1, 1)
            assume(np.linalg.norm(e) > 0.1)
            b.update(quaternion=e, omega=_vec(draw, 3, -20, 20))
            if draw(st.booleans()):  # a box (a Body3D is a sphere, a box or a particle, never two)
                b.update(half_extents=L * _vec(draw, 3, 0.05, 1.0), radius=0.0)
        bodies.append(b)
    walls = [(np.zeros(dim), np.eye(dim)[-1])]
    if draw(st.booleans()):
        walls.append((L * np.r_[1.5, np.zeros(dim - 1)], np.r_[-1.0, _vec(draw, dim - 1, -0.5, 0.5)]))
    n_d = draw(st.sampled_from([0, 2] if planar else [0, 2, 4, 6]))
    return dict(planar=planar, bodies=bodies, walls=walls, mu=draw(_u(0, 1)), n_d=n_d, delta=L * draw(_u(0, 0.5)),
                h=10.0 ** draw(_u(-4, -1)))


def build(spec):
    Body, Wall = (Body2D, Line) if spec["planar"] else (Body3D, Plane)
    bodies = [Body(**b) for b in spec["bodies"]]
    return Scene(bodies, [Wall(p, n) for p, n in spec["walls"]], mu=spec["mu"], n_d=spec["n_d"], delta=spec["delta"])


def coincident(spec):
    round_ = [b["position"] for b in spec["bodies"] if "half_extents" not in b]
    return any(np.array_equal(p, q) for i, p in enumerate(round_) for q in round_[i + 1:])


def box_gaps(spec):
    """The gaps of the bounding spheres (a box's of radius |half_extents|) of each box and each
    other body of a recipe, with the round-off allowed in them."""
    pos = [b["position"] for b in spec["bodies"]]
    bound = [np.linalg.norm(b["half_extents"]) if "half_extents" in b else b["radius"] for b in spec["bodies"]]
    return [(np.linalg.norm(pos[i] - pos[j]) - bound[i] - bound[j],
             1e-12 * (np.linalg.norm(pos[i]) + np.linalg.norm(pos[j]) + bound[i] + bound[j] + spec["delta"]))
            for i, b in enumerate(spec["bodies"]) if "half_extents" in b for j in range(len(pos)) if j != i]


def build_unless_refused(spec):
    """The scene, or None when Scene refuses it as documented: without MuJoCo, a box within reach
    of another body (whose contacts only MuJoCo's collision functions make). Checked both ways
    against the gaps by definition; any other exception propagates."""
    try:
        scene = build(spec)
    except ValueError as exc:
        if "may touch" not in str(exc) or HAVE_MUJOCO:
            raise
        assert any(gap <= spec["delta"] + slack for gap, slack in box_gaps(spec)), f"refused, no box in reach: {exc}"
        return None
    if not HAVE_MUJOCO:
        assert all(gap > spec["delta"] - slack for gap, slack in box_gaps(spec)), "a box within reach was not refused"
    return scene


def check_complementary(z, w, z_scale, w_scale, tol, what, floor=0.0):
    """0 <= z perp w >= 0 componentwise: z to tol * z_scale, w to tol * (w_scale + floor) (per
    row; ``floor``: see check_lcp_step)."""
    w_scale = w_scale + floor
    assert np.all(z >= -tol * z_scale), f"{what}: negative impulse {z.min()}"
    assert np.all(w >= -tol * w_scale), f"{what}: violated row {np.min(w / np.maximum(w_scale, 1e-300))}"
    assert np.all(np.minimum(z / z_scale, w / np.maximum(w_scale, 1e-300)) <= tol), f"{what}: not complementary"


def per_body(scale, dof):
    """Each row's scale raised to the largest of its body's rows (M^-1 mixes a body's rows)."""
    return np.repeat(scale.reshape(-1, dof).max(axis=1), dof)


def check_lcp_step(a, res, h, dof, tol=1e-7):
    """The Stewart–Trinkle step's conditions (mbdcp.step's docstring) by definition."""
    M, Wn, D, E, mu, v, p_ext = a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], a["p_ext"]
    vn, pn, beta, sigma = res.v_next, res.p_n, res.beta, res.sigma
    terms = [M @ vn, -(M @ v), -p_ext, -(Wn @ pn), -(D @ beta)]
    scale = (np.abs(M) @ np.abs(vn) + np.abs(M) @ np.abs(v) + np.abs(p_ext) + np.abs(Wn) @ np.abs(pn)
             + np.abs(D) @ np.abs(beta))
    assert np.all(np.abs(sum(terms)) <= tol * per_body(scale, dof)), "momentum balance violated"
    if not pn.size:
        return
    # the size of the terms cancelling in v_next, row by row: the scale of each velocity row
    v_mag = np.abs(np.linalg.inv(M)) @ scale
    z_scale = max(np.abs(pn).max(), np.abs(beta).max(initial=0), np.abs(p_ext).max(), 1e-300)
    w_n = Wn.T @ vn + a["psi_n"] / h + a["dpsi_n"]
    n_scale = np.abs(Wn.T) @ v_mag + np.abs(a["psi_n"] / h) + np.abs(a["dpsi_n"])
    f_scale = np.abs(D.T) @ v_mag + np.abs(a["dpsi_f"]) + E @ np.abs(sigma)
    # Lemke decides signs to round-off of the whole LCP, not of each row: velocity rows get a
    # floor of 1e-8 times the largest velocity row (1e-15 relative at tol = 1e-7)
    floor = 1e-8 * max(n_scale.max(), f_scale.max(initial=0))
    check_complementary(pn, w_n, z_scale, n_scale, tol, "normal", floor)
    if beta.size:
        check_complementary(beta, D.T @ vn + a["dpsi_f"] + E @ sigma, z_scale, f_scale, tol, "friction", floor)
        # the friction-cone rows are differences of impulses: their round-off is relative to z_scale
        v_scale = max(np.abs(sigma).max(), floor * 1e8, 1e-300)
        check_complementary(sigma, mu * pn - E.T @ beta, v_scale, mu * np.abs(pn) + E.T @ np.abs(beta) + z_scale, tol,
                            "friction cone")


def check_ccp_step(a, res, h, dof, solver_tol, margin=1e3):
    """The CCP's conditions (mbdcp.ccp's docstring) by definition: momentum, gamma in K,
    d = P^T v_next + (phi/h, 0, 0) in K*, gamma . d = 0 per contact, within margin * the
    solver's relative tolerance."""
    M = sla.block_diag(*a["M"])
    Wn, Wt = a["Wn"].toarray(), a["Wt"].toarray()
    v, p_ext, vn, g, mu = a["v"], a["p_ext"], res.v_next, res.gamma, a["U"]
    n_c = g.shape[0]
    terms = [M @ vn, -(M @ v), -p_ext, -(Wn @ g[:, 0]), -(Wt @ g[:, 1:].ravel())]
    scale = (np.abs(M) @ np.abs(vn) + np.abs(M) @ np.abs(v) + np.abs(p_ext) + np.abs(Wn) @ np.abs(g[:, 0])
             + np.abs(Wt) @ np.abs(g[:, 1:].ravel()))
    assert np.all(np.abs(sum(terms)) <= 1e-9 * per_body(scale, dof)), "momentum balance violated"
    if not n_c:
        return
    phi = a["psi_n"] + h * a["dpsi_n"]
    P = np.empty((M.shape[0], 3 * n_c))
    P[:, 0::3], P[:, 1::3], P[:, 2::3] = Wn, Wt[:, 0::2], Wt[:, 1::2]
    p = P.T @ (v + np.linalg.solve(M, p_ext))
    p[0::3] += phi / h
    lam = np.linalg.eigvalsh(P.T @ np.linalg.solve(M, P)).max()
    p_inf = max(np.abs(p).max(), 1e-300)
    eps_d, eps_g = margin * solver_tol * p_inf, margin * solver_tol * p_inf / max(lam, 1e-300)
    d = (P.T @ vn).reshape(n_c, 3)
    d[:, 0] += phi / h
    gt, dt = np.linalg.norm(g[:, 1:], axis=1), np.linalg.norm(d[:, 1:], axis=1)
    assert np.all(g[:, 0] >= -eps_g) and np.all(gt <= mu * g[:, 0] + eps_g), "gamma outside the friction cone"
    assert np.all(d[:, 0] >= mu * dt - eps_d), "d outside the dual cone"
    bound = np.linalg.norm(g, axis=1) * eps_d + np.linalg.norm(d, axis=1) * eps_g
    assert np.all(np.abs(np.einsum("ij,ij->i", g, d)) <= bound), "gamma and d not complementary"


def _solve(method, a, h, tol):
    if method == "lcp":
        return mbdcp.step(a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], h, p_ext=a["p_ext"], psi_n=a["psi_n"],
                          dpsi_n=a["dpsi_n"], dpsi_f=a["dpsi_f"])
    return mbdcp.ccp(a["M"], a["Wn"], a["Wt"], a["U"], a["v"], h, p_ext=a["p_ext"], psi_n=a["psi_n"] + h * a["dpsi_n"], tol=tol,
                     max_iter=100_000)


@pytest.mark.parametrize("method", ["lcp", "ccp"])
@SETTINGS
@given(spec=scenes())
def test_random_scene_steps_are_solutions_when_solved(method, spec):
    h, tol = spec["h"], 1e-10
    scene = build_unless_refused(spec)
    if scene is None:  # a box within reach of another body: refused, nothing to step
        event("refused: a box within reach of another body")
        return
    if coincident(spec):
        with pytest.raises(ValueError, match="coincident centres"):
            scene.contacts()
        return
    a = scene.assemble(h, form="dense" if method == "lcp" else "blocks")
    res = _solve(method, a, h, tol)
    if res.status == mbdcp.Status.SOLVED:
        dof = 3 if spec["planar"] else 6
        (check_lcp_step(a, res, h, dof) if method == "lcp" else check_ccp_step(a, res, h, dof, tol))
    tr = simulate(build(spec), h, 3 * h, method=method, progress=False, tol=1e-8)
    assert tr.steps <= 3 and np.all(np.isfinite(tr.positions)) and np.all(np.isfinite(tr.velocities))
    assert tr.success == (tr.first_failure is None)
    if tr.first_failure is not None and tr.first_failure.reason == "unsupported pair":
        assert not HAVE_MUJOCO and box_gaps(spec)  # a box moved within reach of another body
    if tr.finite and tr.penetration_ok and all(s == mbdcp.Status.SOLVED for s in tr.statuses):
        assert tr.success or tr.first_failure.reason in ("coincident", "unsupported pair")
    else:
        assert not tr.success


def _wedged(point_a, point_b, delta, h):
    """A 1e-3 kg disk (radius 0.5) overlapping two 1 kg point masses, on the floor against a wall,
    mu = 0.97: friction wedges it, and the impulses (~1e4 times |p|) cancel in d."""
    point = dict(mass=1.0, velocity=np.zeros(2), radius=0.0, theta=0.0, omega=0.0)
    return dict(planar=True, bodies=[{**point, "position": np.array(point_a), "omega": 1.0},
                                     dict(point, mass=1e-3, position=np.array([1.0, 0.0]), radius=0.5),
                                     {**point, "position": np.array(point_b)}],
                walls=[(np.zeros(2), np.array([0.0, 1.0])), (np.array([1.5, 0.0]), np.array([-1.0, 0.0]))],
                mu=0.96875, n_d=0, delta=delta, h=h)


# found by CI (2026-11-23): after 1e5 iterations APGD's answer passed only the componentwise test,
# which the final status alone checked; it is now MAX_ITERATIONS, the normwise test being unmet
@pytest.mark.parametrize("spec", [_wedged([1.0625, 0.375], [0.625, 0.0], 0.0, 0.01),
                                  _wedged([0.0, 1.0], [0.0, 0.0], 0.5, 0.1)], ids=["h0.01", "h0.1"])
def test_a_wedged_light_disk_is_solved_only_if_it_is_a_solution(spec):
    h, tol = spec["h"], 1e-10
    a = build(spec).assemble(h, form="blocks")
    res = _solve("ccp", a, h, tol)
    assert res.success == (res.residual <= tol)
    if res.success:
        check_ccp_step(a, res, h, 3, tol)
    else:
        assert res.status == mbdcp.Status.MAX_ITERATIONS and np.all(np.isfinite(res.gamma))
    # the problem is hard (N's range spans 1e4, impulses 1e4 |p|): APGD meets 1e-4, and that is a solution
    loose = _solve("ccp", a, h, 1e-4)
    assert loose.success and loose.residual <= 1e-4
    check_ccp_step(a, loose, h, 3, 1e-4)


# found by the property test above (a development run, 2026-11-26): with mu = 2.2e-309 the
# interior-point method's standard-cone coordinates d_n / mu overflowed and "auto" (simulate's
# default) returned NaN velocities, which simulate then raised on instead of recording
def test_a_subnormal_friction_coefficient_is_solved_and_a_non_finite_step_is_recorded(monkeypatch):
    point = {"velocity": np.zeros(2), "theta": 0.0, "omega": 0.0}
    bodies = [(1.0, [1.0, 0.0], 1.0), (1e-3, [0.0, 0.5], 0.1), (1.0, [0.0, 1.0], 0.0), (1e3, [0.0, 0.0], 1.0)]
    spec = {"planar": True, "mu": 2.225073858507203e-309, "n_d": 0, "delta": 0.0, "h": 0.1,
            "bodies": [{**point, "mass": m, "position": np.array(x), "radius": r} for m, x, r in bodies],
            "walls": [(np.zeros(2), np.array([0.0, 1.0])), (np.array([1.5, 0.0]), np.array([-1.0, 0.0]))]}
    h, tol = spec["h"], 1e-10
    a = build(spec).assemble(h, form="blocks")
    for method in ("ipm", "auto"):
        res = mbdcp.ccp(a["M"], a["Wn"], a["Wt"], a["U"], a["v"], h, p_ext=a["p_ext"], psi_n=a["psi_n"] + h * a["dpsi_n"],
                        tol=tol, method=method)
        assert res.success and np.all(np.isfinite(res.v_next)), method
        check_ccp_step(a, res, h, 3, tol)
    tr = simulate(build(spec), h, 3 * h, method="ccp", progress=False, tol=1e-8)
    assert tr.steps == 3 and all(s == mbdcp.Status.SOLVED for s in tr.statuses)
    # a solver answer that is not finite ends the run with a failure, as a status would
    from mbdcp.formulations import ccp as formulation
    stepped = formulation._stepped

    def broken(*args, **kwargs):
        res = stepped(*args, **kwargs)
        res.v_next[:] = np.nan
        return res

    monkeypatch.setattr(formulation, "_stepped", broken)
    tr = simulate(build(spec), h, 3 * h, method="ccp", progress=False, tol=1e-8)
    assert not tr.success and not tr.finite and tr.steps == 0  # (its first failure: the initial penetration)
