"""Trajectory.animate: frames match the trajectory, bodies are drawn where the trajectory puts
them, and a GIF is written without ffmpeg."""
import dataclasses

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.animation import FuncAnimation, PillowWriter

from mbdcp.mechanics import Body2D, Body3D, Line, Plane, Scene, disk_pile_scene, simulate

Image = pytest.importorskip("PIL.Image")
# animations built only to count or inspect their frames are never rendered: matplotlib warns
pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering anything")


@pytest.fixture(scope="module")
def box_run():
    e = np.array([np.cos(0.2), 0.6 * np.sin(0.2), 0.8 * np.sin(0.2), 0.0])
    box = Body3D(1.0, [0.0, 0.0, 0.7], quaternion=e, omega=[0.5, 1.0, 3.0], half_extents=[0.5, 0.5, 0.5],
                 inertia=[1.0, 2.0, 3.0])
    scene = Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=0.5, n_d=4, delta=0.05)
    return simulate(scene, 0.01, 0.4, progress=False), scene


@pytest.fixture(scope="module")
def pile_run():
    scene = disk_pile_scene(12, width=4)
    return simulate(scene, 0.01, 0.3, method="fixed_point", progress=False), scene


def frames(anim):
    return len(list(anim.new_frame_seq()))


@pytest.mark.parametrize("every", [1, 3, 7, 100])
def test_frame_count(box_run, every):
    tr, _ = box_run
    anim = tr.animate(every=every)
    assert isinstance(anim, FuncAnimation)
    assert frames(anim) == len(range(0, tr.steps + 1, every)) == -(-len(tr.times) // every)


@pytest.mark.parametrize("run, every, arrows", [("box_run", 8, True), ("pile_run", 6, True), ("pile_run", 10, False)])
def test_gif_has_one_frame_per_drawn_state(run, every, arrows, request, tmp_path):
    tr, _ = request.getfixturevalue(run)
    path = tmp_path / "motion.gif"
    tr.animate(every=every, arrows=arrows).save(path, writer=PillowWriter(fps=10))
    with Image.open(path) as im:
        assert im.n_frames == len(range(0, len(tr.times), every))


def test_bodies_drawn_at_their_positions(pile_run):
    tr, scene = pile_run
    anim = tr.animate(every=5, arrows=True)
    n = len(scene.bodies)
    for j, k in enumerate(range(0, len(tr.times), 5)):
        artists = anim._func(j)  # the frame's drawing function: patches first, one per disk
        centres = np.array([a.center for a in artists[:n]])
        assert np.allclose(centres, tr.positions[k].reshape(n, 3)[:, :2])
        forces = artists[n + 2]
        if k < tr.steps:  # one impulse segment per active contact of the step from state k
            assert len(forces.get_segments()) == tr.contacts[k]


def test_spheres_projected_and_box_outline(box_run):
    tr, _ = box_run
    anim = tr.animate(every=4)
    k = 4 * 5
    box = anim._func(5)[0]
    q = tr.positions[k]
    outline = box.get_xy()
    # the outline's centre of the corners' x-z extent is the box's centre projected on x-z
    assert np.allclose(0.5 * (outline.min(axis=0) + outline.max(axis=0)), q[[0, 2]], atol=1e-9)
    ball = Body3D(1.0, [0, 0, 1.0], velocity=[2.0, 0, 0], radius=1.0)
    tr2 = simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.2, delta=0.01), 0.05, 0.3, progress=False)
    disk = tr2.animate()._func(3)[0]
    assert np.allclose(disk.center, tr2.positions[3][[0, 2]]) and disk.radius == 1.0


def test_html_player(pile_run):
    tr, _ = pile_run
    page = tr.animate(every=15)._repr_html_()
    assert "<script" in page and "animation" in page.lower()


def test_scene_argument_and_validation(pile_run, box_run):
    tr, scene = pile_run
    bare = dataclasses.replace(tr, shapes=None)
    with pytest.raises(ValueError, match="scene"):
        bare.animate()
    assert frames(bare.animate(scene, every=10)) == len(range(0, len(tr.times), 10))
    with pytest.raises(ValueError, match="scene"):
        bare.animate(box_run[1])
    with pytest.raises(TypeError, match="scene"):
        tr.animate(scene="pile")
    with pytest.raises(ValueError, match="every"):
        tr.animate(every=0)
    with pytest.raises(ValueError, match="interval"):
        tr.animate(interval=-5)


def test_moving_wall_and_particles(tmp_path):
    # a particle (radius 0) on a rising floor: drawn as a dot, the floor follows its motion
    p = Body2D(1.0, [0.0, 0.0])
    scene = Scene([p], [Line([0, 0], [0, 1], velocity=[0, 0.5])], mu=0.3)
    tr = simulate(scene, 0.1, 1.0, progress=False)
    anim = tr.animate(every=5)
    artists = anim._func(2)
    wall = artists[-1]
    assert np.allclose(wall.get_ydata(), 0.5 * tr.times[10])
    dots = artists[1]
    assert np.allclose(np.c_[dots.get_xdata(), dots.get_ydata()], tr.positions[10][:2])
