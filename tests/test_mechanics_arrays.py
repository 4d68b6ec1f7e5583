"""The rigid-body layer as arrays: bodies as views, contacts and assembly by definition, the
block-diagonal mass inverse, validation, and trajectories that report failure."""
import doctest
import importlib
import itertools

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

import mbdcp
from mbdcp.formulations.ccp import mass_inverse
from mbdcp.mechanics import Body2D, Body3D, Line, Plane, Scene, disk_pile_scene, quaternion_to_matrix, simulate, sphere_pile_scene


def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _random_spheres(n, seed, box=False):
    rng = np.random.default_rng(seed)
    bodies = [Body3D(rng.uniform(0.5, 2), rng.uniform(0, 3, 3), quaternion=rng.standard_normal(4),
                     velocity=rng.standard_normal(3), omega=rng.standard_normal(3), radius=rng.uniform(0.2, 0.5),
                     inertia=[1.0, 2.0, 2.5]) for _ in range(n)]
    if box:  # a box has contacts with walls only, so a scene keeps it out of reach of the other bodies:
        # its centre is >= 3 from every sphere centre (in [0, 3]^3), for any seed, more than its bounding
        # radius (0.71) + a sphere's radius (< 0.5) + delta (0.3); it stands on the floor
        bodies.insert(n // 2, Body3D(2.0, [1.5, -3.0, 0.3], quaternion=[0.9, 0.1, 0.3, 0.2], half_extents=[0.3, 0.4, 0.5]))
    walls = [Plane([0, 0, 0], [0, 0, 1]), Plane([3, 0, 0], [-1, 0.2, 0], velocity=[-0.5, 0.1, 0])]
    return Scene(bodies, walls, mu=0.4, n_d=6, delta=0.3)


@pytest.mark.parametrize("name", ["mbdcp.mechanics.bodies", "mbdcp.mechanics.scene", "mbdcp.mechanics.simulate"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_bodies_are_views_of_the_scene_arrays():
    a, b = Body3D(1.0, [0, 0, 1.0]), Body3D(2.0, [3, 0, 1.0], radius=0.5)
    scene = Scene([a, b], [])
    f = scene.fields()
    assert f["position"].shape == (2, 3) and f["mass"].tolist() == [1.0, 2.0]
    b.velocity = [1.0, 2.0, 3.0]
    assert f["velocity"][1].tolist() == [1.0, 2.0, 3.0]
    b.position[0] = 4.0                                   # in place, through the view
    assert f["position"][1, 0] == 4.0
    held = a.position
    simulate(scene, 0.1, 0.2, progress=False)
    assert held[2] == 1.0 and a.position[2] < 1.0         # a held array keeps its values; the body moves
    assert b.position[0] == pytest.approx(4.0 + 0.2 * 1.0)


def test_a_body_belongs_to_the_last_scene_built_with_it():
    body = Body2D(1.0, [0, 0])
    old = Scene([body])
    new = Scene([body])
    assert new.fields()["position"].shape == (1, 2)
    with pytest.raises(ValueError, match="put into a newer Scene"):
        old.contacts()
    with pytest.raises(ValueError, match="distinct"):
        Scene([body, body])


def test_rotations_and_b_matrix_vectorised_agree_with_one_at_a_time():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((5, 4))
    E /= np.linalg.norm(E, axis=1)[:, None]
    R = quaternion_to_matrix(E)
    for e, Rk in zip(E, R):
        np.testing.assert_array_equal(quaternion_to_matrix(e), Rk)
        np.testing.assert_allclose(Rk @ Rk.T, np.eye(3), atol=1e-14)
        assert np.linalg.det(Rk) == pytest.approx(1.0)
    B = mbdcp.mechanics.B_matrix(E)
    np.testing.assert_allclose(np.swapaxes(B, 1, 2) @ B, np.broadcast_to(np.eye(3) / 4, (5, 3, 3)), atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_contacts_are_exactly_the_pairs_within_delta(seed):
    scene = _random_spheres(40, seed, box=True)
    f, delta = scene.fields(), scene.delta
    c = scene.contacts()
    # by definition, over all pairs and walls (the box, index 20, has contacts with walls only: it
    # is kept out of reach of the spheres, a scene refusing a box within reach of another body)
    want_walls = []
    for i in range(40 + 1):
        for w, wall in enumerate(scene.walls):
            body = scene.bodies[i]
            pts = body.position + body.corners() if body.half_extents is not None else [body.position - body.radius * wall.normal]
            for k, p in enumerate(pts):
                if (p - wall.point) @ wall.normal <= delta:
                    want_walls.append((i, w, k))
    gap = lambda i, j: np.linalg.norm(f["position"][i] - f["position"][j]) - f["radius"][i] - f["radius"][j]  # noqa: E731
    want_pairs = [(i, j) for i, j in itertools.combinations(range(41), 2) if 20 not in (i, j) and gap(i, j) <= delta]
    n_w = len(want_walls)
    assert len(c) == n_w + len(want_pairs) and len(want_pairs) > 10 and 20 in [i for i, _, _ in want_walls]
    assert c.a[:n_w].tolist() == [i for i, _, _ in want_walls] and np.all(c.b[:n_w] == -1)
    assert list(zip(c.a[n_w:].tolist(), c.b[n_w:].tolist())) == want_pairs
    for k in range(n_w, len(c)):
        ct = c[k]
        d = f["position"][ct.a] - f["position"][ct.b]
        np.testing.assert_allclose(ct.normal, d / np.linalg.norm(d), rtol=1e-15)
        assert ct.gap == pytest.approx(np.linalg.norm(d) - f["radius"][ct.a] - f["radius"][ct.b], abs=1e-14)
        np.testing.assert_allclose(ct.point, f["position"][ct.b] + f["radius"][ct.b] * ct.normal, rtol=1e-15)
    for k, (i, w, _) in enumerate(want_walls):
        assert c[k].gap == pytest.approx((c.point[k] - scene.walls[w].point) @ scene.walls[w].normal, abs=1e-14)
        np.testing.assert_array_equal(c.wall_velocity[k], scene.walls[w].velocity)


@pytest.mark.parametrize("Body, dim", [(Body3D, 3), (Body2D, 2)])
def test_crowded_contacts_are_every_pair_within_delta(Body, dim):
    """Thirty overlapping bodies touch about twenty others each, more pairs than the contact search
    first makes room for (six per body): it searches again, and misses none."""
    rng = np.random.default_rng(5)
    pos = rng.uniform(0.0, 1.0, (30, dim))
    scene = Scene([Body(1.0, p, radius=0.4) for p in pos])
    want = [(i, j) for i, j in itertools.combinations(range(30), 2) if np.linalg.norm(pos[i] - pos[j]) - 0.8 <= scene.delta]
    c = scene.contacts()
    assert len(want) > 6 * 30 + 8
    assert list(zip(c.a.tolist(), c.b.tolist())) == want


def test_coincident_centres_are_a_clear_error():
    bodies = [Body3D(1.0, [0, 0, 1.0], radius=0.5), Body3D(1.0, [3, 0, 1.0], radius=0.5), Body3D(1.0, [0, 0, 1.0], radius=0.2)]
    with pytest.raises(ValueError, match=r"bodies 0 and 2 have coincident centres"):
        Scene(bodies, [Plane([0, 0, 0], [0, 0, 1])]).contacts()
    with pytest.raises(ValueError, match=r"bodies 0 and 1 have coincident centres"):
        simulate(Scene([Body2D(1.0, [1, 1]), Body2D(1.0, [1, 1])]), 0.01, 0.1, progress=False)


def test_assembly_by_definition():
    scene = _random_spheres(12, 3, box=True)
    h = 0.01
    a = scene.assemble(h)
    c, g, n_d = a["contacts"], scene.gravity, scene.n_d
    assert len(c) > 5 and np.any(c.b >= 0)
    Wn, D = np.zeros((scene.n_v, len(c))), np.zeros((scene.n_v, n_d * len(c)))
    M = sla.block_diag(*[b.mass_matrix() for b in scene.bodies])
    free = (a["v"] + np.linalg.solve(M, a["p_ext"])).reshape(-1, 6)  # the motion without friction
    sliding = 0
    for k in range(len(c)):
        ct = c[k]
        at = lambda i: free[i, :3] + _cross(free[i, 3:], ct.point - scene.bodies[i].position)  # noqa: E731, B023
        slip = at(ct.a) - (ct.wall_velocity if ct.b is None else at(ct.b))
        slip = slip - (slip @ ct.normal) * ct.normal
        dirs = mbdcp.friction_basis(ct.normal, n_d)
        if np.linalg.norm(slip) > 1e-6:  # the first direction opposes the slip
            t1 = -slip / np.linalg.norm(slip)
            angle = 2 * np.pi * np.arange(n_d) / n_d
            dirs, sliding = np.outer(t1, np.cos(angle)) + np.outer(_cross(ct.normal, t1), np.sin(angle)), sliding + 1
        for body, sign in ((ct.a, 1.0), (ct.b, -1.0)):
            if body is None:
                continue
            r, o = ct.point - scene.bodies[body].position, 6 * body
            Wn[o:o + 6, k] = sign * np.r_[ct.normal, _cross(r, ct.normal)]
            for j in range(n_d):
                D[o:o + 6, n_d * k + j] = sign * np.r_[dirs[:, j], _cross(r, dirs[:, j])]
        assert a["dpsi_n"][k] == pytest.approx(-ct.normal @ ct.wall_velocity, abs=1e-15)
        np.testing.assert_allclose(a["dpsi_f"][n_d * k:n_d * (k + 1)], -dirs.T @ ct.wall_velocity, atol=1e-15)
    np.testing.assert_allclose(a["Wn"], Wn, atol=1e-15)
    np.testing.assert_allclose(a["D"], D, atol=1e-15)
    np.testing.assert_array_equal(a["E"], np.kron(np.eye(len(c)), np.ones((n_d, 1))))
    np.testing.assert_array_equal(a["psi_n"], c.gap)
    assert sliding > 0
    np.testing.assert_allclose(a["M"], M, atol=1e-15)
    for i, b in enumerate(scene.bodies):
        J = b.world_inertia()
        np.testing.assert_allclose(a["p_ext"][6 * i:6 * i + 6], h * np.r_[b.mass * g, -_cross(b.omega, J @ b.omega)], atol=1e-15)
        np.testing.assert_array_equal(a["v"][6 * i:6 * i + 6], np.r_[b.velocity, b.omega])
    # the sparse and block forms hold the same matrices; list-of-Contact input gives the same
    s = scene.assemble(h, sparse=True, contacts=list(c))
    blocks = scene.assemble(h, form="blocks")
    for k in ("M", "Wn", "D", "E", "Wt"):
        np.testing.assert_array_equal(s[k].toarray(), a[k])
    np.testing.assert_array_equal(sla.block_diag(*blocks["M"]), a["M"])
    # Wt: the first two of the four friction directions
    for k in range(len(c)):
        four = mbdcp.friction_basis(c.normal[k], 4)
        np.testing.assert_allclose(a["Wt"][6 * c.a[k]:6 * c.a[k] + 3, 2 * k:2 * k + 2], four[:, :2], atol=1e-15)


def test_planar_assembly_by_definition():
    scene = disk_pile_scene(30, width=6, seed=2)
    for b in scene.bodies:
        b.position = b.position * [1.0, 0.97]    # pressed together: disk-disk contacts
    a = scene.assemble(0.01)
    c = a["contacts"]
    assert np.sum(c.b >= 0) > 10
    for k in range(len(c)):
        ct = c[k]
        t = np.array([-ct.normal[1], ct.normal[0]])
        for body, sign in ((ct.a, 1.0), (ct.b, -1.0)):
            if body is not None:
                r, o = ct.point - scene.bodies[body].position, 3 * body
                n_col = np.r_[ct.normal, r[0] * ct.normal[1] - r[1] * ct.normal[0]]
                t_col = np.r_[t, r[0] * t[1] - r[1] * t[0]]
                np.testing.assert_allclose(a["Wn"][o:o + 3, k], sign * n_col, atol=1e-15)
                np.testing.assert_allclose(a["D"][o:o + 3, 2 * k:2 * k + 2], sign * np.c_[t_col, -t_col], atol=1e-15)
                np.testing.assert_allclose(a["Wt"][o:o + 3, 2 * k:2 * k + 2], sign * np.c_[t_col, np.zeros(3)], atol=1e-15)


def test_energies_by_definition():
    scene = _random_spheres(8, 4, box=True)
    ke = sum(0.5 * b.v() @ b.mass_matrix() @ b.v() for b in scene.bodies)
    pe = -sum(b.mass * scene.gravity @ b.position for b in scene.bodies)
    assert scene.kinetic_energy() == pytest.approx(ke, rel=1e-14)
    assert scene.potential_energy() == pytest.approx(pe, rel=1e-14)


def test_two_spheres_collide_plastically():
    # closed form: equal spheres meeting head-on with gap 0 (mu = 0, no gravity) stop in one
    # step with p_n = m v
    a, b = Body3D(2.0, [0, 0, 0], velocity=[1.0, 0, 0], radius=0.5), Body3D(2.0, [1.0, 0, 0], velocity=[-1.0, 0, 0], radius=0.5)
    tr = simulate(Scene([a, b], gravity=[0, 0, 0], mu=0.0), 0.01, 0.01, progress=False)
    assert tr.success and tr.impulses[0].tolist() == pytest.approx([2.0], abs=1e-14)
    np.testing.assert_allclose(tr.velocities[-1], 0.0, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# mass_inverse and ccp with M as diagonal blocks

def test_mass_inverse_of_blocks_and_of_sparse_with_mixed_block_sizes():
    rng = np.random.default_rng(5)
    blocks = rng.standard_normal((7, 6, 6))
    blocks = blocks @ np.swapaxes(blocks, 1, 2) + 6 * np.eye(6)
    inv = mass_inverse(blocks).toarray()
    np.testing.assert_allclose(inv @ sla.block_diag(*blocks), np.eye(42), atol=1e-12)
    mixed = [np.array([[2.0]]), blocks[0], np.diag([1.0, 3.0]), blocks[1][:3, :3], np.array([[5.0]])]
    S = sp.block_diag(mixed, format="csr")
    np.testing.assert_allclose(mass_inverse(S).toarray() @ S.toarray(), np.eye(S.shape[0]), atol=1e-12)


@pytest.mark.parametrize("change, error, words", [
    (lambda B: B.__setitem__((2, 0, 1), B[2, 0, 1] + 1.0), ValueError, "M must be symmetric (diagonal block 2 is not)"),
    (lambda B: B.__setitem__((1, 3, 3), -1.0), ValueError, "M must be symmetric positive definite (diagonal block 1"),
    (lambda B: B.__setitem__((0, 0, 0), np.nan), ValueError, "M must hold finite values"),
])
def test_mass_inverse_rejects_bad_blocks(change, error, words):
    B = np.broadcast_to(np.diag([1.0, 1, 1, 2, 2, 2]), (3, 6, 6)).copy()
    change(B)
    with pytest.raises(error) as info:
        mass_inverse(B)
    assert words in str(info.value)
    with pytest.raises(ValueError, match="shape"):
        mass_inverse(np.ones((2, 3, 2)))


def test_ccp_with_block_mass_matches_sparse_mass():
    scene = sphere_pile_scene(64, width=4, delta=0.15)
    a = scene.assemble(0.05, form="blocks", parts=("Wn", "Wt"))
    S = scene.assemble(0.05, sparse=True, parts=())["M"]
    kw = dict(p_ext=a["p_ext"], psi_n=a["psi_n"], tol=1e-10, max_iter=100_000)
    x = mbdcp.ccp(a["M"], a["Wn"], a["Wt"], a["U"], a["v"] - 1.0, 0.05, **kw)
    y = mbdcp.ccp(S, a["Wn"], a["Wt"], a["U"], a["v"] - 1.0, 0.05, **kw)
    assert x.success and len(a["contacts"]) > 50
    np.testing.assert_allclose(x.v_next, y.v_next, atol=1e-10)


@pytest.mark.parametrize("box", [False, True])
def test_simulates_ccp_step_is_mbdcp_ccp_on_the_assembled_jacobians(box):
    """simulate's CCP step (P assembled as CSC arrays, solved without re-checking) poses and solves
    the very problem mbdcp.ccp gets from Wn and Wt: the same P, entry for entry, and the same bits."""
    from mbdcp.formulations import ccp as formulation

    scene = _random_spheres(12, 5, box=box)
    a = scene.assemble(0.01, form="blocks", parts=("Wn", "Wt"))
    lean = importlib.import_module("mbdcp.mechanics.assembly").assemble(
        scene.fields(), scene.planar, scene.gravity, scene.mu, scene.n_d, 0.01, a["contacts"], "blocks", ("P",))
    assert len(a["contacts"]) > 5 and "dpsi_f" not in lean
    ptr, ind, val = lean["P"]
    P = formulation.cone_jacobian(a["Wn"], a["Wt"])
    assert ptr.tolist() == P.indptr.tolist() and ind.tolist() == P.indices.tolist() and np.array_equal(val, P.data)
    dense, c, pos = P.toarray(), a["contacts"], scene.fields()["position"]
    for i in range(len(c)):  # by definition: per end (a, then b negated) the direction and its moment
        d = dense[6 * c.a[i]:6 * c.a[i] + 3, 3 * i:3 * i + 3]
        np.testing.assert_allclose(d[:, 0], c.normal[i], atol=1e-15)
        np.testing.assert_allclose(d.T @ d, np.eye(3), atol=1e-12)
        expect = np.zeros((scene.n_v, 3))
        for body, sign in ((c.a[i], 1.0), (c.b[i], -1.0)):
            if body >= 0:
                r = c.point[i] - pos[body]
                expect[6 * body:6 * body + 6] += sign * np.vstack([d, np.array([_cross(r, col) for col in d.T]).T])
        np.testing.assert_allclose(dense[:, 3 * i:3 * i + 3], expect, atol=1e-12)
    psi = a["psi_n"] + 0.01 * a["dpsi_n"]
    start = np.abs(np.random.default_rng(1).standard_normal((len(a["contacts"]), 3)))
    x = formulation._stepped(lean["M"], lean["P"], lean["U"], lean["v"], 0.01, lean["p_ext"], psi, start, tol=1e-8)
    y = mbdcp.ccp(a["M"], a["Wn"], a["Wt"], a["U"], a["v"], 0.01, p_ext=a["p_ext"], psi_n=psi, warm_start=start, tol=1e-8)
    args, kwargs = formulation._as_call(lean["M"], lean["P"], lean["U"], lean["v"], 0.01, lean["p_ext"], psi, start, tol=1e-8)
    z = mbdcp.ccp(*args, **kwargs)
    assert x.success and x.iterations == y.iterations == z.iterations
    for r in (y, z):
        assert np.array_equal(x.gamma, r.gamma) and np.array_equal(x.v_next, r.v_next)
        assert np.array_equal(x.contact_velocity, r.contact_velocity) and x.residual == r.residual


def test_auto_keeps_an_analysed_steps_budget_for_like_steps():
    """simulate's "auto" keeps the APGD budget of an analysed step (plan) for the next steps whose
    contacts number within 10 %: the first step analyses its pattern and keeps its budget; with a
    kept budget APGD converges within, the step is APGD's own solve (the same bits, no analysis);
    with one it does not, the step hands over as auto does (the interior-point method from APGD's
    point) and is solved; a step with 20 % more contacts is analysed afresh."""
    from mbdcp.formulations import ccp as formulation

    scene = _random_spheres(12, 5, box=True)
    a = scene.assemble(0.01, form="blocks", parts=("Wn", "Wt"))
    lean = importlib.import_module("mbdcp.mechanics.assembly").assemble(
        scene.fields(), scene.planar, scene.gravity, scene.mu, scene.n_d, 0.01, a["contacts"], "blocks", ("P",))
    args = (lean["M"], lean["P"], lean["U"], lean["v"], 0.01, lean["p_ext"], a["psi_n"] + 0.01 * a["dpsi_n"])
    n_c = len(a["contacts"])
    plan = {}
    first = formulation._stepped(*args, method="auto", tol=1e-10, plan=plan)
    apgd = formulation._stepped(*args, method="apgd", tol=1e-10)
    assert first.success and apgd.success and plan["n_c"] == n_c
    assert max(50, apgd.iterations) < plan["budget"] <= formulation._core.DEFAULTS["ccp"]["max_iter"]
    kept = formulation._stepped(*args, method="auto", tol=1e-10, plan=plan)
    assert kept.finished == "apgd" and kept.iterations == apgd.iterations
    assert np.array_equal(kept.gamma, apgd.gamma) and np.array_equal(kept.history, apgd.history)
    short = {"n_c": n_c, "budget": apgd.iterations // 3}
    handed = formulation._stepped(*args, method="auto", tol=1e-10, plan=short)
    assert short == {"n_c": n_c, "budget": apgd.iterations // 3}  # kept as it was
    assert handed.success and handed.iterations > short["budget"] and len(handed.history) == handed.iterations
    b = short["budget"]  # APGD's iterations first, then the interior-point method's
    assert np.array_equal(handed.history[:b], apgd.history[:b]) and not np.array_equal(handed.gamma, apgd.gamma)
    np.testing.assert_allclose(handed.v_next, apgd.v_next, atol=1e-7)
    far = {"n_c": round(n_c / 1.2), "budget": 7}
    formulation._stepped(*args, method="auto", tol=1e-10, plan=far)
    assert far == plan


def test_block_inverse_times_a_sparse_matrix_is_the_product():
    from mbdcp.infrastructure import _core
    rng = np.random.default_rng(8)
    blocks = rng.standard_normal((9, 6, 6))
    blocks = blocks @ np.swapaxes(blocks, 1, 2) + 6 * np.eye(6)
    inv, rc, bad = _core.block_spd_inverse(blocks)
    assert rc == 0 and bad == -1
    np.testing.assert_allclose(inv, np.linalg.inv(blocks), rtol=1e-12, atol=1e-14)
    P = sp.random(54, 40, density=0.08, format="csc", random_state=3)
    P.sort_indices()
    arrays = (P.indptr.astype(np.intc), P.indices.astype(np.intc), P.data)
    Q = sp.csc_matrix((lambda p, i, v: (v, i, p))(*_core.block_times_csc(inv, 40, *arrays)), shape=(54, 40))
    np.testing.assert_allclose(Q.toarray(), sla.block_diag(*inv) @ P.toarray(), rtol=1e-12, atol=1e-14)
    empty = sp.csc_matrix((54, 3))
    ptr, ind, val = _core.block_times_csc(inv, 3, empty.indptr.astype(np.intc), empty.indices.astype(np.intc), empty.data)
    assert ptr.tolist() == [0, 0, 0, 0] and ind.size == val.size == 0


def test_transpose_times_is_the_product_with_the_transpose():
    """_core.transpose_times (P^T v of the CCP's P in CSC arrays): column by column in index order,
    so the same bits as scipy's CSR product with P^T; empty columns give 0; a bad index is refused."""
    from mbdcp.infrastructure import _core
    P = sp.hstack([sp.random(54, 40, density=0.08, random_state=4), sp.csc_matrix((54, 2))], format="csc")
    P.sort_indices()
    arrays = (P.indptr.astype(np.intc), P.indices.astype(np.intc), P.data)
    x = np.random.default_rng(2).standard_normal(54)
    y = _core.transpose_times(*arrays, x)
    assert np.array_equal(y, sp.csr_matrix((P.data, P.indices, P.indptr), shape=(42, 54)) @ x)
    assert y[-2:].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(y, P.toarray().T @ x, rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="index"):
        _core.transpose_times(arrays[0], np.full_like(arrays[1], 54), arrays[2], x)


def test_contact_keys_follow_contacts_across_steps_and_number_a_box_corners():
    from mbdcp.mechanics.warm import contact_keys as _contact_keys
    from mbdcp.mechanics.warm import match as _match
    box = Body3D(1.0, [0, 0, 0.49], half_extents=[0.5, 0.5, 0.5])
    balls = [Body3D(1.0, [3, 0, 0.5], radius=0.5), Body3D(1.0, [3, 0, 1.5], radius=0.5)]
    scene = Scene([box, *balls], [Plane([0, 0, 0], [0, 0, 1])], delta=0.05)
    keys = _contact_keys(scene.contacts())
    # four corners on the floor, a ball on the floor, a ball on that ball: six different keys
    assert len(keys) == 6 and len({tuple(k) for k in keys}) == 6
    assert sorted(keys[:, -1].tolist()) == [0, 0, 0, 1, 2, 3]
    shuffled = keys[[3, 0, 5, 2]]
    assert _match(keys, shuffled).tolist() == [3, 0, 5, 2]
    new = np.vstack([shuffled, [[7, 8, 0, 0, 0, 0]]])
    assert _match(shuffled, new).tolist() == [0, 1, 2, 3, -1]
    assert _match(keys[:0], keys).tolist() == [-1] * 6


# ---------------------------------------------------------------------------------------------
# validation

@pytest.mark.parametrize("make, error, words", [
    (lambda: Body2D(1.0, [0, 0], theta=np.nan), ValueError, "theta must be finite"),
    (lambda: Body2D(1.0, [0, 0], omega=np.inf), ValueError, "omega must be finite"),
    (lambda: Body2D(1.0, [0, 0], radius=-1.0), ValueError, "radius must be nonnegative"),
    (lambda: Body2D(1.0, [0, 0], inertia=0.0), ValueError, "inertia must be positive"),
    (lambda: Body2D("1", [0, 0]), TypeError, "mass must be a positive real number"),
    (lambda: Body2D(True, [0, 0]), TypeError, "mass must be a positive real number"),
    (lambda: Body2D(np.inf, [0, 0]), ValueError, "mass must be positive and finite"),
    (lambda: Body3D(1.0, [0, 0, 0], radius=np.nan), ValueError, "radius must be nonnegative and finite"),
    (lambda: Body3D(1.0, [0, 0, 0], radius=-1), ValueError, "radius must be nonnegative"),
    (lambda: Body3D(1.0, [0, 0, np.nan]), ValueError, "position must hold finite values"),
    (lambda: Body3D(1.0, [0, 0, 0], velocity=[0, 0]), ValueError, "velocity must have shape"),
    (lambda: Body3D(1.0, [0, 0, 0], omega=[0, np.inf, 0]), ValueError, "omega must hold finite values"),
    (lambda: Body3D(1.0, [0, 0, 0], quaternion=[0, 0, 0, 0]), ValueError, "quaternion must be a nonzero 4-vector"),
    (lambda: Body3D(1.0, [0, 0, 0], half_extents=[1, 0, 1]), ValueError, "half_extents must be positive"),
    (lambda: Body3D(1.0, [0, 0, 0], inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), ValueError, "inertia must be"),
    (lambda: Body3D(1.0, [0, 0, 0], inertia=[1, np.nan, 1]), ValueError, "inertia must hold finite values"),
    (lambda: Plane([0, 0, 0], [0, 0, np.nan]), ValueError, "normal must hold finite values"),
    (lambda: Line([0, 0], [0, 1], velocity=[np.inf, 0]), ValueError, "velocity must hold finite values"),
    (lambda: Scene([Body2D(1.0, [0, 0])], mu=np.inf), ValueError, "mu must be nonnegative and finite"),
    (lambda: Scene([Body2D(1.0, [0, 0])], mu=-0.1), ValueError, "mu must be nonnegative"),
    (lambda: Scene([Body2D(1.0, [0, 0])], delta=np.nan), ValueError, "delta must be nonnegative and finite"),
    (lambda: Scene([Body2D(1.0, [0, 0])], gravity=[0, np.inf]), ValueError, "gravity must hold finite values"),
    (lambda: Scene([Body2D(1.0, [0, 0])], gravity=[0, 0, -9.81]), ValueError, "gravity must have shape"),
    (lambda: Scene([Body3D(1.0, [0, 0, 0])], n_d=4.0), TypeError, "n_d must be an integer"),
    (lambda: Scene([Body2D(1.0, [0, 0])], n_d=4), ValueError, "n_d must be 0 or 2"),
    (lambda: Scene(["a body"]), TypeError, "bodies[0] must be a Body2D or Body3D"),
    (lambda: Scene([]), ValueError, "bodies must hold at least one body"),
])
def test_every_field_is_validated(make, error, words):
    with pytest.raises(error) as info:
        make()
    assert words in str(info.value)


def test_fields_set_later_are_validated_too():
    body = Body3D(1.0, [0, 0, 0], radius=0.5)
    scene = Scene([body])
    with pytest.raises(ValueError, match="radius must be nonnegative"):
        body.radius = np.nan
    with pytest.raises(ValueError, match="mu must be nonnegative"):
        scene.mu = np.inf
    body.position[2] = np.nan                                   # in place, past the setter
    with pytest.raises(ValueError, match=r"bodies\[0\].position must be finite"):
        simulate(scene, 0.01, 0.1, progress=False)


# ---------------------------------------------------------------------------------------------
# trajectories that report failure

def _box_drop(delta=0.05):
    return Scene([Body3D(1.0, [0, 0, 1.0], half_extents=[0.5, 0.5, 0.5])], [Plane([0, 0, 0], [0, 0, 1])], delta=delta)


def test_a_box_sinking_9_m_in_one_step_is_not_a_success():
    tr = simulate(_box_drop(), 1.0, 3.0, progress=False)
    assert all(s == mbdcp.Status.SOLVED for s in tr.statuses) and tr.finite
    assert tr.max_penetration[1] == pytest.approx(9.31) and tr.penetration_tolerance == 0.05
    assert not tr.penetration_ok and not tr.success
    assert (tr.first_failure.step, tr.first_failure.reason) == (1, "penetration")
    assert "delta = 0.05, given" in tr.first_failure.message  # the message names the cause
    loose = simulate(_box_drop(), 1.0, 3.0, progress=False, max_penetration=np.inf)
    assert loose.success and loose.first_failure is None
    with pytest.raises(ValueError, match="max_penetration must be nonnegative"):
        simulate(_box_drop(), 1.0, 3.0, progress=False, max_penetration=np.nan)


def test_default_penetration_tolerance_is_a_tenth_of_the_smallest_size():
    scene = Scene([Body3D(1.0, [0, 0, 5], radius=0.3), Body3D(1.0, [3, 0, 5], half_extents=[1, 0.2, 1]), Body3D(1.0, [6, 0, 5])])
    assert simulate(scene, 0.01, 0.01, progress=False).penetration_tolerance == pytest.approx(0.02)
    assert simulate(Scene([Body2D(1.0, [0, 5])]), 0.01, 0.01, progress=False).penetration_tolerance == np.inf


def test_a_non_finite_state_stops_the_run():
    ball = Body3D(1.0, [0, 0, 0], velocity=[1e308, 0, 0], radius=0.5)
    scene = Scene([ball], gravity=[0, 0, 0])
    tr = simulate(scene, 10.0, 50.0, progress=False)
    assert not tr.finite and not tr.success and tr.steps == 0
    assert (tr.first_failure.step, tr.first_failure.reason) == (1, "non-finite")
    assert ball.position.tolist() == [0.0, 0.0, 0.0] and np.all(np.isfinite(tr.positions))


def test_an_unsolved_step_is_not_a_success():
    ball = Body3D(1.0, [0, 0, 0.5], velocity=[2.0, 0, -1.0], radius=0.5)
    scene = Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.3, delta=0.1)
    tr = simulate(scene, 0.01, 0.05, method="ccp", tol=1e-14, max_iter=2, progress=False)
    assert tr.finite and tr.penetration_ok and not tr.success
    assert tr.first_failure.reason == "solver" and "MAX_ITERATIONS" in tr.first_failure.message


def test_moving_walls_the_solvers_cannot_take_are_refused_before_stepping():
    ball = Body2D(1.0, [0, 5.0], radius=0.5)
    with pytest.raises(ValueError, match="fixed walls only"):
        simulate(Scene([ball], [Line([0, 0], [0, 1], velocity=[0, 0.1])]), 0.01, 1.0, method="fixed_point", progress=False)
    ball = Body3D(1.0, [0, 0, 5.0], radius=0.5)
    with pytest.raises(ValueError, match="moving along their normal only"):
        simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1], velocity=[0.1, 0, 0])]), 0.01, 1.0, method="ccp", progress=False)
    tr = simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1], velocity=[0, 0, 0.1])]), 0.01, 0.1, method="ccp", progress=False)
    assert tr.success
