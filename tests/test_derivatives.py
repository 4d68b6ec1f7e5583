"""mbdcp.derivatives: implicit-function derivatives of LCP, step and CCP solutions.

Checked against central finite differences of the solvers themselves on problems whose active set
is stable under the difference step, against closed forms (the sphere of Trinkle 2003, the CCP's
sliding particle), for adjoint consistency <g, jvp(t)> = <vjp(g), t>, and at degenerate points
against one-sided differences (the piece used must be exact on its side and differ on the other).
"""
import dataclasses
import doctest
import importlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from autodiff_cases import frame_tangent, planar_particle
from autodiff_cases import joint_friction as joint_friction_scene
from autodiff_cases import joints as joint_scene
from autodiff_cases import sliding as sliding_scene
from autodiff_cases import sticking as sticking_scene

import mbdcp
from mbdcp import Status
from mbdcp.examples import sphere_on_plane
from mbdcp.testing import granular_pile, random_spd

G = 9.81
FD_EPS = 1e-6      # relative central-difference step (tangents are scaled to their input)
FD_RTOL = 1e-6     # the bound for derivative vs finite difference
ADJ_RTOL = 1e-11   # adjoint identity: round-off only
STEP_ARGS = ("M", "Wn", "D", "E", "U", "v", "h")
CCP_ARGS = ("M", "Wn", "Wt", "mu", "v", "h")


def rel_err(fd, an, floor):
    fd, an = np.asarray(fd, float), np.asarray(an, float)
    return float(np.abs(fd - an).max(initial=0.0) / max(np.abs(an).max(initial=0.0), np.abs(fd).max(initial=0.0), floor))


def noise_floor(tangents, solution):
    """Below this, differences are noise: a central difference of outputs of size |x| carries
    round-off of about 1e-16 |x| / FD_EPS = 1e-10 |x|."""
    size = max(np.abs(x).max(initial=0.0) for x in solution.values())
    return max(1e-9 * max(np.abs(x).max(initial=0.0) for x in tangents.values()), 1e-3 * size, 1e-300)


def scaled(rng, x, floor=1.0):
    """A random tangent for x, scaled like x (or like floor when x is zero)."""
    if sp.issparse(x):
        t = x.copy().tocsc()
        t.data = rng.standard_normal(t.data.size) * max(abs(x).max(), floor)
        return t
    x = np.asarray(x, float)
    return rng.standard_normal(x.shape) * max(np.abs(x).max(initial=0.0), floor)


def as_dense(x):
    return x.toarray() if sp.issparse(x) else np.asarray(x)


def sym(rng, M):
    t = scaled(rng, M)
    return 0.5 * (t + t.T)


def solve_step(data):
    res = mbdcp.step(*[data[k] for k in STEP_ARGS], **{k: v for k, v in data.items() if k not in STEP_ARGS})
    assert res.success, res.message
    return res


def step_derivative(data, res=None):
    res = solve_step(data) if res is None else res
    return mbdcp.derivatives.step(*[data[k] for k in STEP_ARGS], res,
                                  **{k: v for k, v in data.items() if k not in STEP_ARGS}), res


def step_fd(data, tangents, eps=FD_EPS):
    def at(s):
        d = dict(data)
        for k, t in tangents.items():
            d[k] = data.get(k, 0.0) + s * eps * t
        return solve_step(d)
    return at(1.0), at(-1.0)


def contact_forces(data, beta):
    """Generalized friction impulse of every contact (unique even where the split among
    directions is not)."""
    own = np.argmax(data["E"], axis=1)
    return np.stack([data["D"][:, own == c] @ beta[own == c] for c in range(data["E"].shape[1])], axis=1)


def check_step_fd(data, tangents, compare_beta=True, outputs=("v_next", "p_n", "sigma", "p_b", "sigma_j")):
    d, res = step_derivative(data)
    j = d.jvp(**tangents)
    rp, rm = step_fd(data, tangents)
    fd = {o: (getattr(rp, o) - getattr(rm, o)) / (2 * FD_EPS) for o in ("v_next", "p_n", "sigma", "p_b", "beta",
                                                                           "beta_j", "sigma_j")}
    floor = noise_floor(j, {o: getattr(res, o) for o in ("v_next", "p_n", "beta")})
    for o in outputs:
        assert rel_err(fd[o], j[o], floor) <= FD_RTOL, (o, rel_err(fd[o], j[o], floor))
    if outputs == ("v_next",):
        return d
    assert rel_err(contact_forces(data, fd["beta"]), contact_forces(data, j["beta"]), floor) <= FD_RTOL
    if compare_beta:
        assert rel_err(fd["beta"], j["beta"], floor) <= FD_RTOL
        assert rel_err(fd["beta_j"], j["beta_j"], floor) <= FD_RTOL
    return d


def check_step_adjoint(d, data, rng):
    inputs = d._d["inputs"]
    tangents = {k: (1.3 if k == "h" else scaled(rng, data[k] if k in data else d._d[k])) for k in inputs}
    tangents["M"] = sym(rng, data["M"])
    tangents["U"] = rng.standard_normal(data["Wn"].shape[1])
    with warnings.catch_warnings():  # unstructured D tangents may leave a sticking piece: the identity still holds
        warnings.simplefilter("ignore", RuntimeWarning)
        j = d.jvp(**tangents)
    g = {o: rng.standard_normal(np.shape(x)) for o, x in j.items()}
    grads = d.vjp(**g)
    lhs = sum(float(np.sum(g[o] * j[o])) for o in j)
    rhs = sum(float(np.sum(np.asarray(grads[k]) * np.asarray(t))) for k, t in tangents.items())
    assert set(grads) == set(inputs)
    assert abs(lhs - rhs) <= ADJ_RTOL * max(abs(lhs), 1.0), (lhs, rhs)


# ---- LCP ---------------------------------------------------------------------------------------

def planted_lcp(n, seed, symmetric=True, margin=0.5):
    rng = np.random.default_rng(seed)
    M = random_spd(n, rng, cond=20.0)
    if not symmetric:
        K = rng.standard_normal((n, n))
        M = M + 0.5 * (K - K.T)  # positive definite, not symmetric: still a P-matrix
    r = rng.choice([-1.0, 1.0], n) * rng.uniform(margin, 2.0, n)
    z, w = np.maximum(r, 0), np.maximum(-r, 0)
    return M, w - M @ z, z


@pytest.mark.parametrize("seed", range(6))
def test_lcp_matches_central_differences(seed):
    n = 5 + seed
    M, q, z = planted_lcp(n, seed, symmetric=seed % 2 == 0)
    d = mbdcp.derivatives.lcp(M, q, mbdcp.lemke(M, q))
    assert d.degenerate.size == 0 and d.margin > 1e-3
    np.testing.assert_array_equal(d.active, z > 0)
    rng = np.random.default_rng(100 + seed)
    dM, dq = scaled(rng, M), scaled(rng, q)
    zp = mbdcp.lemke(M + FD_EPS * dM, q + FD_EPS * dq).z
    zm = mbdcp.lemke(M - FD_EPS * dM, q - FD_EPS * dq).z
    assert rel_err((zp - zm) / (2 * FD_EPS), d.jvp(dM=dM, dq=dq), 1e-12) <= FD_RTOL
    J = d.dz_dq
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1e-6
        col = (mbdcp.lemke(M, q + e).z - mbdcp.lemke(M, q - e).z) / 2e-6
        assert rel_err(col, J[:, i], 1e-3) <= FD_RTOL  # floor: the columns of inactive q_i are zero


def test_lcp_vjp_is_adjoint_of_jvp(rng):
    M, q, _ = planted_lcp(8, 3, symmetric=False)
    d = mbdcp.derivatives.lcp(M, q, mbdcp.lemke(M, q))
    dM, dq, gz = rng.standard_normal((8, 8)), rng.standard_normal(8), rng.standard_normal(8)
    gM, gq = d.vjp(gz)
    lhs, rhs = gz @ d.jvp(dM=dM, dq=dq), np.sum(gM * dM) + gq @ dq
    assert abs(lhs - rhs) <= ADJ_RTOL * abs(lhs)
    np.testing.assert_allclose(d.vjp(gz).q, d.dz_dq.T @ gz, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(d.jvp(), np.zeros(8))


def test_lcp_degenerate_pair_is_reported_and_one_sided():
    rng = np.random.default_rng(5)
    M = random_spd(6, rng, cond=10.0)
    r = np.array([1.0, -1.0, 0.0, 1.5, -0.7, 0.8])  # pair 2: z_2 = w_2 = 0
    z, w = np.maximum(r, 0), np.maximum(-r, 0)
    q = w - M @ z
    res = mbdcp.lemke(M, q)
    d = mbdcp.derivatives.lcp(M, q, res)
    assert d.degenerate.tolist() == [2]
    assert d.active[2] == bool(res.basis[2])
    # the piece kept: active (w_2 = 0 kept) is exact when z_2 grows, i.e. q_2 decreases; inactive
    # (z_2 = 0 kept) is exact when w_2 grows, i.e. q_2 increases
    good = -1.0 if d.active[2] else 1.0
    for sign, exact in ((good, True), (-good, False)):
        dq = np.zeros(6)
        dq[2] = sign
        one_sided = (mbdcp.lemke(M, q + 1e-6 * dq).z - z) / 1e-6
        an = d.jvp(dq=dq)
        # a one-sided difference over 1e-6 carries round-off of about 1e-16 |z| / 1e-6
        noise = 1e-9 * np.abs(z).max()
        err = np.abs(one_sided - an).max()
        assert (err <= FD_RTOL * np.abs(an).max() + noise) == exact, (sign, err)


def test_lcp_singular_active_block_raises():
    M, q = np.ones((2, 2)), -np.ones(2)  # solutions z_1 + z_2 = 1: not locally unique
    res = mbdcp.lemke(M, q)
    fake = dataclasses.replace(res, z=np.array([0.5, 0.5]), w=np.zeros(2), basis=None)
    with pytest.raises(ValueError, match="singular"):
        mbdcp.derivatives.lcp(M, q, fake)


def test_lcp_bad_input():
    M, q, _ = planted_lcp(4, 0)
    res = mbdcp.lemke(M, q)
    ray = mbdcp.lemke([[-1.0]], [-1.0])
    assert ray.status == Status.RAY_TERMINATION
    with pytest.raises(ValueError, match="res"):
        mbdcp.derivatives.lcp([[-1.0]], [-1.0], ray)
    with pytest.raises(ValueError, match="res"):
        mbdcp.derivatives.lcp(M, q + 1.0, res)
    with pytest.raises(ValueError, match="res"):
        mbdcp.derivatives.lcp(M[:3, :3], q[:3], res)
    with pytest.raises(TypeError, match="res"):
        mbdcp.derivatives.lcp(M, q, res.z)
    with pytest.raises(ValueError, match="M"):
        mbdcp.derivatives.lcp(M[:3], q, res)
    d = mbdcp.derivatives.lcp(M, q, res)
    with pytest.raises(ValueError, match="dq"):
        d.jvp(dq=np.ones(3))
    with pytest.raises(ValueError, match="dM"):
        d.jvp(dM=np.ones((4, 3)))
    with pytest.raises(ValueError, match="gz"):
        d.vjp(np.ones(5))


# ---- step: the sphere of Trinkle (2003) ----------------------------------------------------------

@pytest.mark.parametrize("mu, h, v0", [(0.2, 0.01, 2.0), (0.5, 0.05, 3.0), (0.1, 0.12, 2.0)])
def test_step_sphere_closed_form(mu, h, v0):
    # sliding: v_x = v0 - mu g h, w_y = 5/2 mu g h / r (r = 1), exactly, for one step
    M, Wn, D, E, U = sphere_on_plane(mu)
    v = np.array([v0, 0, 0, 0, 0, 0])
    p = np.array([0, 0, -G * h, 0, 0, 0])
    res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p, psi_n=[0.0])
    d = mbdcp.derivatives.step(M, Wn, D, E, U, v, h, res, p_ext=p, psi_n=[0.0])
    assert d.mode.tolist() == ["sliding"] and d.degenerate.size == 0
    dv = d.jvp(U=[1.0])["v_next"]
    np.testing.assert_allclose(dv[[0, 4]], [-G * h, 2.5 * G * h], rtol=1e-13)
    # d/dh with p_ext = -g h e_z (its tangent -g e_z given), d/dg through p_ext, d/dv0
    np.testing.assert_allclose(d.jvp(h=1.0, p_ext=[0, 0, -G, 0, 0, 0])["v_next"][0], -mu * G, rtol=1e-13)
    np.testing.assert_allclose(d.jvp(p_ext=[0, 0, -h, 0, 0, 0])["v_next"][0], -mu * h, rtol=1e-13)
    np.testing.assert_allclose(d.jvp(v=np.eye(6)[0])["v_next"][0], 1.0, rtol=1e-13)
    g = d.vjp(v_next=np.eye(6)[0])
    np.testing.assert_allclose([g["U"][0], g["v"][0], g["p_ext"][2] * -G], [-G * h, 1.0, -mu * G], rtol=1e-13)
    np.testing.assert_allclose(d.jacobian("v_next", "U")[:, 0], dv, rtol=1e-14)


def test_step_sphere_chained_steps():
    # while it slides, v_x after k steps is v0 - k mu g h: forward mode through k steps gives -k g h
    mu, h, k = 0.2, 0.02, 6
    M, Wn, D, E, U = sphere_on_plane(mu)
    v, p = np.array([2.0, 0, 0, 0, 0, 0]), np.array([0, 0, -G * h, 0, 0, 0])
    tv = np.zeros(6)
    for _ in range(k):
        res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p, psi_n=[0.0])
        tv = mbdcp.derivatives.step(M, Wn, D, E, U, v, h, res, p_ext=p, psi_n=[0.0]).jvp(U=[1.0], v=tv)["v_next"]
        v = res.v_next
    np.testing.assert_allclose(tv[0], -k * G * h, rtol=1e-12)


# ---- step: random scenes -----------------------------------------------------------------------

def stable_scenes(make, count, want_modes=()):
    """The first `count` scenes (by seed) without degenerate pairs and with a margin that no finite
    difference step can cross."""
    out, seen = [], set()
    for seed in range(200):
        data = make(seed)
        res = mbdcp.step(*[data[k] for k in STEP_ARGS], **{k: v for k, v in data.items() if k not in STEP_ARGS})
        if not res.success:
            continue
        d, _ = step_derivative(data, res)
        if d.degenerate.size or d.margin < 1e-4:
            continue
        out.append(data)
        seen.update(d.mode.tolist() + d.joint_mode.tolist())
        if len(out) >= count and seen >= set(want_modes):
            return out, seen
    raise AssertionError(f"not enough stable scenes: {len(out)}, modes {seen}")


def input_tangents(rng, data, d, other):
    """A random tangent for every input of the derivative d: h by 30 %, M symmetric, the others
    from other(k)."""
    t = {}
    for k in d._d["inputs"]:
        if k == "h":
            t[k] = 0.3 * data["h"]
        elif k == "M":
            t[k] = sym(rng, data["M"])
        else:
            t[k] = other(k)
    return t


def all_tangents(rng, data, d):
    def other(k):
        if k in ("D", "Dj"):
            return frame_tangent(rng, data[k], data["E" if k == "D" else "Ej"])
        if k == "dpsi_f":
            return data["D"].T @ scaled(rng, data["v"])
        if k in ("psi_n", "theta"):
            return scaled(rng, d._d[k], floor=data["h"])
        if k in ("U", "beta_max"):
            return scaled(rng, d._d["beta_max"] if k == "beta_max" else np.asarray(data["U"], float))
        return scaled(rng, d._d[k])
    return input_tangents(rng, data, d, other)


@pytest.mark.parametrize("make, modes", [(sliding_scene, ("separated", "sliding")),
                                         (sticking_scene, ("sticking", "separated"))], ids=["sliding", "sticking"])
def test_step_random_scenes_match_central_differences(make, modes, rng):
    scenes, _ = stable_scenes(make, 4, modes)
    for data in scenes:
        d, _ = step_derivative(data)
        for k, t in all_tangents(rng, data, d).items():  # one input at a time, then all together
            check_step_fd(data, {k: t}, compare_beta="sticking" not in d.mode)
        check_step_fd(data, all_tangents(rng, data, d), compare_beta="sticking" not in d.mode)
        check_step_adjoint(d, data, rng)


@pytest.mark.parametrize("make, modes", [(joint_scene, ("sliding",)),
                                         (joint_friction_scene, ("sticking", "sliding"))],
                         ids=["joints", "joint-friction"])
def test_step_joints_match_central_differences(make, modes, rng):
    scenes, _ = stable_scenes(make, 3, modes)
    for data in scenes:
        d, _ = step_derivative(data)
        if make is joint_friction_scene:
            assert d.joint_mode.size == 2
        stick = "sticking" in d.mode.tolist() + d.joint_mode.tolist()
        for k, t in all_tangents(rng, data, d).items():
            check_step_fd(data, {k: t}, compare_beta=not stick)
        check_step_adjoint(d, data, rng)


def test_step_joint_friction_modes_seen():
    modes = set()
    for seed in range(40):
        data = joint_friction_scene(seed)
        res = mbdcp.step(*[data[k] for k in STEP_ARGS], **{k: v for k, v in data.items() if k not in STEP_ARGS})
        if res.success:
            modes.update(step_derivative(data, res)[0].joint_mode.tolist())
    assert modes == {"sticking", "sliding"}


def test_step_adjoint_holds_for_any_tangent(rng):
    data = sticking_scene(3)
    d, _ = step_derivative(data)
    # unstructured tangents too: the identity is linear algebra, whatever the piece
    tangents = {k: (0.7 if k == "h" else rng.standard_normal(np.shape(d._d[k] if k != "U" else data["U"])))
                for k in d._d["inputs"]}
    tangents["M"] = tangents["M"] + tangents["M"].T  # the M gradient is the symmetric one
    j = d.jvp(**tangents)
    g = {o: rng.standard_normal(np.shape(x)) for o, x in j.items()}
    grads = d.vjp(**g)
    lhs = sum(float(np.sum(g[o] * j[o])) for o in j)
    rhs = sum(float(np.sum(grads[k] * t)) for k, t in tangents.items())
    assert abs(lhs - rhs) <= ADJ_RTOL * abs(lhs)


def test_step_jacobian_matches_jvp(rng):
    data = sliding_scene(0)
    d, _ = step_derivative(data)
    J = d.jacobian("v_next", "v")
    t = rng.standard_normal(J.shape[1])
    np.testing.assert_allclose(J @ t, d.jvp(v=t)["v_next"], rtol=1e-12, atol=1e-14)
    Jm = d.jacobian("p_n", "M")
    assert Jm.shape == (data["Wn"].shape[1],) + data["M"].shape


# ---- step: degenerate points -------------------------------------------------------------------

def particle_2d(mu=0.5, push=0.0, weight=1.0, psi=0.0):
    """A unit particle on the floor y = 0 with planar friction (D = [t, -t])."""
    M, Wn, D, E, h = planar_particle()
    return {"M": M, "Wn": Wn, "D": D, "E": E, "U": np.array([mu]), "v": np.zeros(2), "h": h,
            "p_ext": np.array([push * G * h, -weight * G * h]), "psi_n": np.array([psi])}


def one_sided(data, tangents, eps=1e-7):
    base = solve_step(data)
    d = dict(data)
    for k, t in tangents.items():
        d[k] = data[k] + eps * np.asarray(t)
    return (solve_step(d).v_next - base.v_next) / eps


def test_step_grazing_contact_is_reported_one_sided():
    data = particle_2d(weight=0.0)  # at rest, touching, no load: p_n = w_n = 0
    d, _ = step_derivative(data)
    # and, at rest, its sliding-speed multiplier sigma = max(0, max_k -d_k^T v) sits at the max's kink
    assert d.degenerate.tolist() == [0, 3] and d.degenerate_kind == ("grazing", "sigma")
    assert d.degenerate_contacts.tolist() == [0] and d.mode.tolist() == ["separated"]
    up, down = np.array([0.0, 0.1]), np.array([0.0, -0.1])
    # convention: separated, exact when the contact opens
    np.testing.assert_allclose(d.jvp(p_ext=up)["v_next"], one_sided(data, {"p_ext": up}), atol=1e-9)
    assert np.abs(d.jvp(p_ext=down)["v_next"] - one_sided(data, {"p_ext": down})).max() > 1e-3


def test_step_stick_slip_boundary_is_reported_one_sided():
    data = particle_2d(mu=0.5, push=0.5)  # pushed with exactly mu m g: friction at the cone's edge
    d, _ = step_derivative(data)
    assert d.degenerate_kind == ("stick-slip",)
    assert d.degenerate.tolist() == [1 + 2]  # sigma of contact 0 in z = (p_n, beta, sigma)
    assert d.mode.tolist() == ["sticking"]
    # convention: sticking, exact when the impulse moves into the cone (mu up), not when it leaves
    np.testing.assert_allclose(d.jvp(U=[1.0])["v_next"], one_sided(data, {"U": [1.0]}), atol=1e-9)
    assert np.abs(d.jvp(U=[-1.0])["v_next"] - one_sided(data, {"U": [-1.0]})).max() > 1e-3


def test_step_frictionless_contact_without_directions():
    data = particle_2d()
    data.update(D=np.zeros((2, 0)), E=np.zeros((0, 1)), U=np.array([0.0]), v=np.array([1.0, -0.5]))
    d = check_step_fd(data, {"v": np.array([0.3, -0.2]), "psi_n": np.array([0.01])})
    assert d.degenerate.size == 0


def planar_box(theta=0.0, push=0.2, mu=0.5, v=(0.0, 0.0, 0.0)):
    """A planar box (half extents 0.4 x 0.15, m = 1) standing on its two bottom corners, pushed
    sideways: four columns (two normals, two friction directions) for three velocities."""
    c, s_ = np.cos(theta), np.sin(theta)
    r = np.array([[-0.4, -0.15], [0.4, -0.15]]) @ np.array([[c, s_], [-s_, c]])
    h = 0.01
    Wn = np.stack([np.zeros(2), np.ones(2), r[:, 0]])
    t = np.stack([np.ones(2), np.zeros(2), -r[:, 1]])
    D = np.repeat(t, 2, axis=1) * np.tile([1.0, -1.0], 2)
    return {"M": np.diag([1.0, 1.0, (0.8 ** 2 + 0.3 ** 2) / 12]), "Wn": Wn, "D": D,
            "E": np.kron(np.eye(2), np.ones((2, 1))), "U": np.full(2, mu), "v": np.array(v, float), "h": h,
            "p_ext": np.array([push * G * h, -G * h, 0.0]), "psi_n": -r[:, 1] - 0.15}


def test_step_statically_indeterminate_box(rng):
    # resting on two sticking corners: the friction split (and with it, once the box tilts, the
    # normal split) is not unique, v_next is; its derivative must exist and match differences
    # (Lemke may pick another split on each side of a difference, so impulses are not compared)
    data = planar_box()
    d, res = step_derivative(data)
    assert d.mode.tolist() == ["sticking", "sticking"] and d.degenerate.size == 0
    assert d.indeterminate == bool(np.all(res.beta[[1, 3]] > 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for k in ("v", "p_ext", "U", "M"):
            t = sym(rng, data["M"]) if k == "M" else 1e-2 * rng.standard_normal(np.shape(data[k]))
            check_step_fd(data, {k: t}, outputs=("v_next",))
        # a small rotation of the box moves Wn, D and the gaps together
        e = 1e-6
        a, b = planar_box(theta=e), planar_box(theta=-e)
        tangent = {k: (a[k] - b[k]) / (2 * e) for k in ("Wn", "D", "psi_n")}
        check_step_fd(data, tangent, outputs=("v_next",))
    # another solution with the same v_next: the friction shared by both corners (their -t columns
    # coincide while the box is flat); its active rows are dependent, one is held
    beta = np.zeros(4)
    beta[[1, 3]] = res.beta[[1, 3]].sum() / 2
    shared = dataclasses.replace(res, beta=beta)
    d2, _ = step_derivative(data, shared)
    assert d2.indeterminate and d2.degenerate.size == 0
    t = {"p_ext": 1e-2 * rng.standard_normal(3), "v": 1e-2 * rng.standard_normal(3)}
    np.testing.assert_allclose(d2.jvp(**t)["v_next"], d.jvp(**t)["v_next"], atol=1e-12)
    np.testing.assert_allclose(d2.jvp(**tangent)["v_next"], d.jvp(**tangent)["v_next"], atol=1e-9)


def test_step_warns_when_a_tangent_breaks_dependent_directions():
    data = joint_friction_scene(1)
    d, _ = step_derivative(data)
    assert d.joint_mode.tolist() == ["sticking", "sticking"] and d._d["unused"]
    t = np.zeros_like(data["Dj"])
    t[:, 0] = 1.0  # one direction of an opposite pair moves alone
    with pytest.warns(RuntimeWarning, match="one-sided"):
        d.jvp(Dj=t)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        d.jvp(Dj=frame_tangent(np.random.default_rng(0), data["Dj"], data["Ej"]))


# ---- step: input checking ----------------------------------------------------------------------

def test_step_bad_input():
    data = sliding_scene(0)
    d, res = step_derivative(data)
    args = [data[k] for k in STEP_ARGS]
    kw = {k: v for k, v in data.items() if k not in STEP_ARGS}
    failed = dataclasses.replace(res, status=Status.MAX_ITERATIONS, success=False)
    with pytest.raises(ValueError, match="res"):
        mbdcp.derivatives.step(*args, failed, **kw)
    with pytest.raises(ValueError, match="res"):
        mbdcp.derivatives.step(*args[:5], args[5] + 1.0, args[6], res, **kw)
    with pytest.raises(TypeError, match="res"):
        mbdcp.derivatives.step(*args, res.v_next, **kw)
    with pytest.raises(TypeError, match="psin"):
        mbdcp.derivatives.step(*args, res, psin=1.0, **kw)
    mbdcp.derivatives.step(*args, res, method="lemke", return_lcp=True, **kw)  # solver keywords are fine
    with pytest.raises(ValueError, match="Wn"):
        mbdcp.derivatives.step(args[0], args[1][:-1], *args[2:], res, **kw)
    with pytest.raises(ValueError, match="E"):
        d.jvp(E=np.ones_like(data["E"]))
    with pytest.raises(TypeError, match="Wb"):
        d.jvp(Wb=np.ones((data["M"].shape[0], 1)))  # no joints in this step
    with pytest.raises(TypeError, match="q"):
        d.jvp(q=1.0)
    with pytest.raises(ValueError, match="v"):
        d.jvp(v=np.ones(3))
    with pytest.raises(ValueError, match="v_next"):
        d.vjp(v_next=np.ones(3))
    with pytest.raises(ValueError, match="of"):
        d.jacobian("w", "v")


# ---- CCP ---------------------------------------------------------------------------------------

def solve_ccp(data):
    res = mbdcp.ccp(**data, tol=1e-14, max_iter=100_000, method="pgs")
    assert res.success, res.message
    return res


def ccp_derivative(data, res=None):
    res = solve_ccp(data) if res is None else res
    return mbdcp.derivatives.ccp(*[data[k] for k in CCP_ARGS], res,
                                 **{k: v for k, v in data.items() if k not in CCP_ARGS})


def check_ccp_fd(data, tangents):
    d = ccp_derivative(data)
    j = d.jvp(**tangents)

    def at(s):
        dd = dict(data)
        for k, t in tangents.items():
            dd[k] = data[k] + s * FD_EPS * t
        return solve_ccp(dd)
    rp, rm = at(1.0), at(-1.0)
    floor = noise_floor(j, {o: d._d[o] for o in ("v_next", "gamma")})
    for o in ("v_next", "gamma", "p_b"):
        fd = (getattr(rp, o) - getattr(rm, o)) / (2 * FD_EPS)
        assert rel_err(fd, j[o], floor) <= FD_RTOL, (o, tangents.keys(), rel_err(fd, j[o], floor))


def ccp_tangents(rng, data, d):
    def other(k):
        if k in ("psi_n", "theta"):
            return scaled(rng, d._d[k], floor=data["h"]) * 0.1
        return scaled(rng, data[k] if k in data else d._d[k])
    return input_tangents(rng, data, d, other)


def pile(seed, joints=False):
    g = granular_pile(6, 6, seed=seed, sparse=seed % 2 == 0)
    g["v"] = 0.3 * g["v"]
    g["psi_n"] = 0.1 * g["psi_n"]
    if joints:
        rng = np.random.default_rng(seed)
        Wb = np.zeros((36, 2))
        Wb[[0, 6], 0] = [1.0, -1.0]
        Wb[[13, 3], 1] = [1.0, 0.5]
        g.update(Wb=sp.csc_matrix(Wb) if seed % 2 == 0 else Wb, theta=1e-3 * rng.standard_normal(2),
                 dtheta=0.01 * rng.standard_normal(2))
    return g


def stable_piles(count, joints=False):
    out, seen = [], set()
    for seed in range(60):
        data = pile(seed, joints)
        res = mbdcp.ccp(**data, tol=1e-14, max_iter=100_000, method="pgs")
        if not res.success:
            continue
        try:
            d = ccp_derivative(data, res)
        except ValueError:  # duplicated ground contacts on one sphere: impulses not unique
            continue
        if d.degenerate.size or d.margin < 1e-3:
            continue
        out.append(data)
        seen.update(d.mode.tolist())
        if len(out) >= count and seen >= {"sliding", "sticking", "separated"}:
            return out
    raise AssertionError(f"not enough stable piles: {len(out)}, modes {seen}")


def test_ccp_sliding_particle_closed_form():
    # v_x = (1 - mu g h) / (1 + mu^2) (the normal row is d_n = mu |v_t|: the CCP relaxation)
    mu, gh = 0.5, 0.0981
    data = {"M": np.eye(3), "Wn": [[0.0], [0.0], [1.0]], "Wt": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], "mu": mu,
            "v": np.array([1.0, 0.0, 0.0]), "h": 0.01, "p_ext": np.array([0, 0, -gh])}
    d = ccp_derivative(data)
    exact = -(gh * (1 + mu ** 2) + 2 * mu * (1 - mu * gh)) / (1 + mu ** 2) ** 2
    assert d.mode.tolist() == ["sliding"]
    np.testing.assert_allclose(d.jvp(mu=1.0)["v_next"][0], exact, rtol=1e-12)
    np.testing.assert_allclose(d.vjp(v_next=[1.0, 0, 0])["mu"][0], exact, rtol=1e-12)
    # d v_x / d(g h) = -mu / (1 + mu^2)
    np.testing.assert_allclose(d.jvp(p_ext=[0, 0, 1.0])["v_next"][0], mu / (1 + mu ** 2), rtol=1e-12)


@pytest.mark.parametrize("joints", [False, True], ids=["contacts", "joints"])
def test_ccp_random_piles_match_central_differences(joints, rng):
    for data in stable_piles(3, joints):
        d = ccp_derivative(data)
        tangents = ccp_tangents(rng, data, d)
        for k, t in tangents.items():
            check_ccp_fd(data, {k: t})
        check_ccp_fd(data, tangents)
        j = d.jvp(**tangents)
        g = {o: rng.standard_normal(np.shape(x)) for o, x in j.items()}
        grads = d.vjp(**g)
        lhs = sum(float(np.sum(g[o] * j[o])) for o in j)
        rhs = sum(float(np.sum(as_dense(grads[k]) * as_dense(t))) for k, t in tangents.items())
        assert abs(lhs - rhs) <= ADJ_RTOL * abs(lhs)


def test_ccp_sparse_inputs_get_sparse_gradients():
    data = pile(2, joints=True)
    assert sp.issparse(data["M"]) and sp.issparse(data["Wn"])
    d = ccp_derivative(data)
    grads = d.vjp(v_next=np.ones(36))
    for k in ("M", "Wn", "Wt", "Wb"):
        assert sp.issparse(grads[k]), k
        a, b = sp.csc_matrix(grads[k]), sp.csc_matrix(data[k])
        b.sum_duplicates()
        np.testing.assert_array_equal(a.indptr, b.indptr)
        np.testing.assert_array_equal(a.indices, b.indices)
    dense = {k: (x.toarray() if sp.issparse(x) else x) for k, x in data.items()}
    gd = ccp_derivative(dense).vjp(v_next=np.ones(36))
    for k in ("M", "Wn", "Wt", "Wb"):
        assert isinstance(gd[k], np.ndarray)
        pattern = sp.csc_matrix(data[k]).toarray() != 0
        np.testing.assert_allclose(grads[k].toarray()[pattern], gd[k][pattern], rtol=1e-9, atol=1e-12)


def test_ccp_degenerate_contacts_are_reported():
    base = {"M": np.eye(3), "Wn": [[0.0], [0.0], [1.0]], "Wt": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], "mu": 0.5,
            "v": np.zeros(3), "h": 0.1}
    d = ccp_derivative(dict(base, p_ext=np.zeros(3)))  # resting without load: gamma = 0, d = 0 (the apex)
    assert d.degenerate.tolist() == [0] and d.degenerate_kind == ("grazing",)
    d = ccp_derivative(dict(base, p_ext=np.array([0.5 * G * 0.1, 0.0, -G * 0.1])))  # pushed at exactly mu m g
    assert d.degenerate_kind == ("stick-slip",) and d.mode.tolist() == ["sticking"]
    # sticking is exact when mu grows: the particle stays put
    np.testing.assert_allclose(d.jvp(mu=1.0)["v_next"], 0.0, atol=1e-12)
    d = ccp_derivative(dict(base, p_ext=np.array([0.2 * G * 0.1, 0.0, -G * 0.1])))
    assert d.degenerate.size == 0 and d.mode.tolist() == ["sticking"]


def test_ccp_bad_input():
    data = pile(2)
    res = solve_ccp(data)
    args = [data[k] for k in CCP_ARGS]
    kw = {k: v for k, v in data.items() if k not in CCP_ARGS}
    with pytest.raises(ValueError, match="res"):
        mbdcp.derivatives.ccp(*args, dataclasses.replace(res, status=Status.MAX_ITERATIONS, success=False), **kw)
    with pytest.raises(ValueError, match="res"):
        mbdcp.derivatives.ccp(*args[:4], args[4] + 1.0, args[5], res, **kw)
    with pytest.raises(TypeError, match="res"):
        mbdcp.derivatives.ccp(*args, None, **kw)
    with pytest.raises(ValueError, match="Wt"):
        mbdcp.derivatives.ccp(args[0], args[1], args[2][:, :-1], *args[3:], res, **kw)
    mbdcp.derivatives.ccp(*args, res, method="apgd", tol=1e-3, **kw)  # solver keywords are ignored
    d = mbdcp.derivatives.ccp(*args, res, **kw)
    with pytest.raises(ValueError, match="Wn"):
        d.jvp(Wn=np.ones((3, 3)))
    with pytest.raises(TypeError, match="theta"):
        d.jvp(theta=np.ones(1))  # no joints in this step
    with pytest.raises(ValueError, match="gamma"):
        d.vjp(gamma=np.ones(6))


# ---- documentation -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mbdcp.derivatives.lcp", "mbdcp.derivatives.step", "mbdcp.derivatives.ccp"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_names():
    for name in ("lcp", "step", "ccp"):
        assert callable(getattr(mbdcp.derivatives, name))
    assert "derivatives" in mbdcp.__all__


@pytest.mark.parametrize("tiny", [1e-16, 1e-20])
def test_an_ill_conditioned_mass_matrix_is_named_as_the_cause(tiny):
    # the sphere with rotational inertia tiny: the step solves, its derivative's system is singular
    # in double precision because of M, and the message says so (not "dependent constraints")
    from mbdcp.examples import sphere_on_plane

    _, Wn, D, E, mu = sphere_on_plane()
    M = np.diag([1.0, 1.0, 1.0, tiny, tiny, tiny])
    v, h, p_ext = np.array([1.0, 0, 0, 0, 0, 0]), 0.01, np.array([0, 0, -0.0981, 0, 0, 0])
    res = mbdcp.step(M, Wn, D, E, mu, v, h, p_ext=p_ext)
    assert res.success
    with pytest.raises(ValueError, match=r"M is too ill-conditioned .* at least 1\.0e\+(16|20)"):
        mbdcp.derivatives.step(M, Wn, D, E, mu, v, h, res, p_ext=p_ext)
