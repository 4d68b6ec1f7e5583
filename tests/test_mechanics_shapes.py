"""Every shape pair in contact: boxes with boxes, spheres and particles, in 3-D and in the plane,
and bodies against fixed obstacles (Block, Segment), their contacts from MuJoCo's collision
functions. Gaps are checked against their definitions (the distance of a point to a box, the
separating axes of two boxes), scenes against closed forms and against mbdcp.mujoco."""
import os
import sys

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import mbdcp
from mbdcp.mechanics import Block, Body2D, Body3D, Line, Plane, Scene, Segment, quaternion_to_matrix, simulate

G = 9.81
FLOOR3, FLOOR2 = [Plane([0, 0, 0], [0, 0, 1])], [Line([0, 0], [0, 1])]
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


def _solved(tr):
    return tr.success and tr.steps > 0 and all(s == mbdcp.Status.SOLVED for s in tr.statuses)


def _random_quaternion(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


# ---- the gaps, by their definitions

def _point_box_distance(x, centre, R, half):
    """Signed distance of the point x to a box (negative inside: minus the depth)."""
    local = R.T @ (x - centre)
    outside = np.maximum(np.abs(local) - half, 0.0)
    return np.linalg.norm(outside) if np.any(outside > 0) else float(np.max(np.abs(local) - half))


@pytest.mark.parametrize("seed", range(5))
def test_sphere_and_particle_gaps_to_a_box_are_their_distances(seed):
    rng = np.random.default_rng(seed)
    e = _random_quaternion(rng)
    half = rng.uniform(0.2, 1.0, 3)
    R = quaternion_to_matrix(e)
    for _ in range(20):
        r = rng.choice([0.0, rng.uniform(0.05, 0.5)])
        x = R @ (rng.uniform(-1.3, 1.3, 3) * (half + r + 0.1))
        scene = Scene([Body3D(1.0, [0, 0, 0], quaternion=e, half_extents=half), Body3D(1.0, x, radius=r)],
                      gravity=[0, 0, 0], delta=0.1)
        c = scene.contacts()
        gap = _point_box_distance(x, np.zeros(3), R, half) - r
        if gap <= 0.1 - 1e-9 and gap > -min(half.min(), 0.05):  # within reach, not deep inside
            assert len(c) == 1, (gap, len(c))
            assert c.gap[0] == pytest.approx(gap, abs=1e-9)
            assert (c.a[0], c.b[0]) == (0, 1)
            # the normal points into a (the box), from the sphere's centre towards the box
            assert np.dot(c.normal[0], x) < 0 and np.linalg.norm(c.normal[0]) == pytest.approx(1.0)
        elif gap > 0.1 + 1e-9:
            assert len(c) == 0


def _separation(ca, Ra, ha, cb, Rb, hb):
    """The largest gap between the two boxes' projections over the 15 separating axes: positive
    when they are apart (a lower bound of their distance), negative when they overlap."""
    axes = [Ra[:, i] for i in range(3)] + [Rb[:, i] for i in range(3)]
    axes += [np.cross(Ra[:, i], Rb[:, j]) for i in range(3) for j in range(3)]
    best = -np.inf
    for u in axes:
        n = np.linalg.norm(u)
        if n < 1e-9:
            continue
        u = u / n
        ra, rb = np.abs(Ra.T @ u) @ ha, np.abs(Rb.T @ u) @ hb
        best = max(best, abs((cb - ca) @ u) - ra - rb)
    return best


@pytest.mark.parametrize("seed", range(5))
def test_two_boxes_have_contacts_exactly_when_they_are_within_reach(seed):
    rng = np.random.default_rng(100 + seed)
    delta = 0.05
    for _ in range(30):
        ea, eb = _random_quaternion(rng), _random_quaternion(rng)
        ha, hb = rng.uniform(0.2, 0.6, 3), rng.uniform(0.2, 0.6, 3)
        cb = rng.uniform(-1.2, 1.2, 3)
        scene = Scene([Body3D(1.0, [0, 0, 0], quaternion=ea, half_extents=ha),
                       Body3D(1.0, cb, quaternion=eb, half_extents=hb)], gravity=[0, 0, 0], delta=delta)
        c = scene.contacts()
        Ra, Rb = quaternion_to_matrix(ea), quaternion_to_matrix(eb)
        sep = _separation(np.zeros(3), Ra, ha, cb, Rb, hb)
        corners_b = cb + (np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * hb) @ Rb.T
        inside = min(_point_box_distance(p, np.zeros(3), Ra, ha) for p in corners_b)
        if sep > delta + 1e-9:
            assert len(c) == 0, sep
        if inside <= delta - 1e-9 and inside > -0.1:  # a corner of b within reach of a's faces
            assert len(c) >= 1 and c.gap.min() <= inside + 1e-9
        for k in range(len(c)):  # apart: each gap at least their distance, itself at least sep
            assert (sep <= 0 or c.gap[k] >= sep - 1e-9) and np.linalg.norm(c.normal[k]) == pytest.approx(1.0)


# ---- scenes against closed forms

def test_five_stacked_boxes_rest_for_ten_seconds_as_in_mbdcp_mujoco():
    import mbdcp.mujoco as mm

    boxes = [Body3D(1.0, [0, 0, 0.1 + 0.2 * k], half_extents=[0.1, 0.1, 0.1]) for k in range(5)]
    tr = simulate(Scene(boxes, FLOOR3, mu=0.5), 0.01, 10.0, progress=False)
    assert _solved(tr) and np.all(tr.contacts == 20)
    assert np.abs(tr.positions - tr.positions[0]).max() <= 1e-9
    ref = mm.simulate(mm.load(os.path.join(MODELS, "box_stack.xml")), 10.0, progress=False)
    np.testing.assert_allclose(tr.positions, ref.positions, rtol=0, atol=1e-9)


def test_a_box_on_a_box_turned_45_degrees_rests_on_its_overlap():
    turned = [np.cos(np.pi / 8), 0, 0, np.sin(np.pi / 8)]
    boxes = [Body3D(1.0, [0, 0, 0.5], half_extents=[0.5, 0.5, 0.5]),
             Body3D(1.0, [0, 0, 1.5], quaternion=turned, half_extents=[0.5, 0.5, 0.5])]
    scene = Scene(boxes, FLOOR3)
    c = scene.contacts()
    top = c.b == 1
    assert top.sum() >= 4 and np.allclose(c.gap[top], 0.0, atol=1e-12)  # the octagon of the two squares
    tr = simulate(scene, 0.01, 1.0, progress=False)
    assert _solved(tr) and np.abs(tr.positions - tr.positions[0]).max() <= 1e-9


def test_a_sphere_thrown_at_a_box_stops_at_its_face():
    box = Body3D(1.0, [0.0, 0.0, 0.5], half_extents=[0.5, 0.5, 0.5])
    ball = Body3D(1.0, [3.0, 0.0, 0.5], velocity=[-10.0, 0.0, 0.0], radius=0.5)
    tr = simulate(Scene([box, ball], FLOOR3, mu=0.0), 0.01, 0.5, progress=False)
    assert _solved(tr) and tr.max_penetration.max() <= 1e-9
    apart = tr.positions[:, 7] - tr.positions[:, 0]
    assert apart.min() >= 1.0 - 1e-9  # never into the box: plastic impact, the two move on together
    np.testing.assert_allclose(tr.velocities[-1][[0, 6]], [-5.0, -5.0], atol=1e-9)  # momentum shared


def test_a_particle_rests_on_a_box_top():
    box = Body3D(2.0, [0, 0, 0.5], half_extents=[0.5, 0.5, 0.5])
    dot = Body3D(1.0, [0.2, 0.1, 1.0])
    tr = simulate(Scene([box, dot], FLOOR3), 0.01, 0.5, progress=False)
    assert _solved(tr) and np.abs(tr.positions - tr.positions[0]).max() <= 1e-9


def test_a_plane_box_slides_down_a_30_degree_line_exactly():
    s, c = np.sin(np.pi / 6), np.cos(np.pi / 6)
    n = np.array([-s, c])  # the incline through the origin
    box = Body2D(1.0, 0.5 * n, theta=np.pi / 6, half_extents=[0.5, 0.5])
    tr = simulate(Scene([box], [Line([0, 0], n)], mu=0.3, delta=0.01), 0.01, 0.5, progress=False)
    assert _solved(tr)
    speed = np.linalg.norm(tr.velocities[:, :2], axis=1)
    np.testing.assert_allclose(np.diff(speed) / 0.01, G * (s - 0.3 * c), rtol=0, atol=1e-9)


def test_three_plane_boxes_stack_at_rest_and_a_disk_rests_on_them():
    bodies = [Body2D(1.0, [0, 0.5 + k], half_extents=[0.5, 0.5]) for k in range(3)] + [Body2D(1.0, [0.2, 3.3], radius=0.3)]
    tr = simulate(Scene(bodies, FLOOR2), 0.01, 2.0, progress=False)
    assert _solved(tr) and np.all(tr.contacts == 7)  # 2 floor, 2 + 2 box-box, 1 disk
    assert np.abs(tr.positions - tr.positions[0]).max() <= 1e-9


# ---- fixed obstacles

def _roll_off(planar):
    """A ball rolling at 1 m/s towards the edge of a 1 m table, x = 0, then the floor."""
    if planar:
        ball = Body2D(1.0, [-0.5, 1.1], radius=0.1, velocity=[1.0, 0.0], omega=-10.0)
        return Scene([ball], FLOOR2 + [Block([-1.0, 0.5], [1.0, 0.5])], mu=0.5)
    ball = Body3D(1.0, [-0.5, 0, 1.1], radius=0.1, velocity=[1.0, 0, 0], omega=[0, 10.0, 0])
    return Scene([ball], FLOOR3 + [Block([-1.0, 0, 0.5], [1.0, 1.0, 0.5])], mu=0.5)


@pytest.mark.parametrize("planar", [True, False])
def test_a_ball_rolls_off_a_table_edge_and_lands_on_the_floor(planar):
    tr = simulate(_roll_off(planar), 0.005, 1.5, progress=False)
    assert _solved(tr) and tr.max_penetration.max() <= 1e-6
    height = tr.positions[:, 1 if planar else 2]
    x = tr.positions[:, 0]
    rolling = x < 0
    assert np.allclose(height[rolling], 1.1, atol=1e-9)  # on the table until the edge
    assert height[-1] == pytest.approx(0.1, abs=1e-9) and x[-1] > 0.4  # on the floor, beyond the table
    # in free flight (no contact), the height falls as g: constant second differences
    free = np.flatnonzero(tr.contacts == 0)
    free = free[(free > 1) & np.isin(free - 1, free) & np.isin(free - 2, free)]
    assert free.size > 10
    np.testing.assert_allclose((height[free] - 2 * height[free - 1] + height[free - 2]) / 0.005 ** 2, -G, atol=1e-6)


def test_a_disk_on_a_segment_rests_then_falls_off_its_end():
    shelf = Segment([-1.0, 1.0], [0.0, 1.0])
    resting = Scene([Body2D(1.0, [-0.5, 1.2], radius=0.2)], [shelf] + FLOOR2)
    tr = simulate(resting, 0.01, 0.5, progress=False)
    assert _solved(tr) and np.abs(tr.positions - tr.positions[0]).max() <= 1e-9
    sliding = Scene([Body2D(1.0, [-0.5, 1.2], radius=0.2, velocity=[2.0, 0.0])], [shelf] + FLOOR2, mu=0.0)
    tr = simulate(sliding, 0.01, 1.5, progress=False)
    assert _solved(tr) and tr.positions[-1, 1] == pytest.approx(0.2, abs=1e-9) and tr.positions[-1, 0] > 0.5


def test_a_sphere_under_a_block_is_pushed_by_neither_and_a_box_sits_on_a_step():
    step = Block([0.0, 0.0, 0.25], [1.0, 1.0, 0.25])
    box = Body3D(1.0, [0.5, 0.0, 0.75], half_extents=[0.25, 0.25, 0.25])
    tr = simulate(Scene([box], FLOOR3 + [step]), 0.01, 1.0, progress=False)
    assert _solved(tr) and np.all(tr.contacts[1:] == 4) and np.abs(tr.positions - tr.positions[0]).max() <= 1e-9


def test_obstacles_are_checked_and_need_mujoco(monkeypatch):
    with pytest.raises(ValueError, match="half_extents must be positive"):
        Block([0, 0], [1.0, 0.0])
    with pytest.raises(ValueError, match="distinct"):
        Segment([1, 1], [1, 1])
    with pytest.raises(ValueError, match="walls must be Plane or Block"):
        Scene([Body3D(1.0, [0, 0, 1])], [Block([0, 0], [1, 1])])
    with pytest.raises(ValueError, match="walls must be Line, Block"):
        Scene([Body2D(1.0, [0, 1])], [Block([0, 0, 0], [1, 1, 1])])
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ImportError, match=r"mbdcp\[mujoco\]"):
        Scene([Body2D(1.0, [0, 1])], [Segment([0, 0], [1, 0])])
