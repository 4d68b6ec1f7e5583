"""Every pair of bodies gets contacts or is refused: without MuJoCo, whose collision functions
make the contacts of a box with another body, a scene in which a box may touch another body is a
ValueError naming the pair (when built, updated, or when a step brings them within reach), never a
run that lets them pass through each other. (tests/test_mechanics_shapes.py: the same scenes with
MuJoCo.)"""
import sys

import numpy as np
import pytest

import mbdcp
from mbdcp.mechanics import Body2D, Body3D, Line, Plane, Scene, simulate

FLOOR = [Plane([0, 0, 0], [0, 0, 1])]
CUBE = [0.5, 0.5, 0.5]


def _box(z, x=0.0, **kw):
    return Body3D(1.0, [x, 0.0, z], half_extents=CUBE, **kw)


@pytest.fixture
def no_mujoco(monkeypatch):
    """A machine without MuJoCo: importing it fails."""
    monkeypatch.setitem(sys.modules, "mujoco", None)


def test_three_stacked_boxes_are_refused_naming_the_pair(no_mujoco):
    with pytest.raises(ValueError, match=r"bodies 0 \(box\) and 1 \(box\) may touch.*box-box contacts come from MuJoCo.*pip install"):
        Scene([_box(0.5), _box(1.5), _box(2.5)], FLOOR)


@pytest.mark.parametrize("radius, kind", [(0.5, "sphere"), (0.0, "particle")])
def test_a_round_body_on_a_box_is_refused_naming_the_pair(radius, kind, no_mujoco):
    on_top = Body3D(1.0, [0.0, 0.0, 1.0 + radius], radius=radius)
    with pytest.raises(ValueError, match=rf"bodies 0 \({kind}\) and 1 \(box\) may touch.*box-{kind} contacts come from MuJoCo"):
        Scene([on_top, _box(0.5)], FLOOR)


def test_the_first_pair_in_reach_is_named(no_mujoco):
    far = Body3D(1.0, [9.0, 0.0, 0.5], radius=0.5)
    with pytest.raises(ValueError, match=r"bodies 1 \(box\) and 2 \(sphere\)"):
        Scene([far, _box(0.5), Body3D(1.0, [0.0, 0.0, 1.6], radius=0.5), _box(0.5, x=1.05)], FLOOR)


def test_a_sphere_thrown_at_a_box_stops_the_run_with_the_pair_named(no_mujoco):
    ball = Body3D(1.0, [3.0, 0.0, 0.5], velocity=[-10.0, 0.0, 0.0], radius=0.5)
    scene = Scene([_box(0.5), ball], FLOOR)  # apart at first: accepted
    tr = simulate(scene, 0.01, 0.3, progress=False)  # a failure recorded, not a silent pass-through
    assert not tr.success
    assert tr.first_failure.reason == "unsupported pair"
    assert "bodies 0 (box) and 1 (sphere) may touch" in tr.first_failure.message


def test_update_and_setters_cannot_bring_in_an_unsupported_pair(no_mujoco):
    box, ball = _box(0.5), Body3D(1.0, [5.0, 0.0, 0.5], radius=0.5)
    scene = Scene([box, ball], FLOOR)
    with pytest.raises(ValueError, match=r"new: bodies 0 \(box\) and 1 \(sphere\) may touch"):
        scene.update({"position": np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 1.5]])})
    assert ball.position.tolist() == [5.0, 0.0, 0.5]  # refused before any change
    ball.position = [0.0, 0.0, 1.5]  # a body's own setter: caught by the next contact search
    with pytest.raises(ValueError, match=r"bodies 0 \(box\) and 1 \(sphere\) may touch"):
        scene.contacts()


def test_a_body_is_a_sphere_or_a_box_not_both():
    with pytest.raises(ValueError, match="radius and half_extents.*not both"):
        Body3D(1.0, [0, 0, 0], radius=0.5, half_extents=CUBE)
    box, ball = _box(0.5), Body3D(1.0, [0, 0, 0], radius=0.5)
    with pytest.raises(ValueError, match="radius and half_extents"):
        box.radius = 0.2
    with pytest.raises(ValueError, match="radius and half_extents"):
        ball.half_extents = CUBE
    assert box.radius == 0.0 and ball.half_extents is None  # unchanged
    scene = Scene([Body3D(1.0, [0, 0, 0.5], radius=0.5)], FLOOR)
    with pytest.raises(ValueError, match=r"new: body 0: radius and half_extents"):
        scene.update({"half_extents": np.array([CUBE])})
    assert Body3D(1.0, [0, 0, 0], radius=0.0, half_extents=CUBE).half_extents.tolist() == CUBE  # radius 0: a box


def _solved(tr):
    return tr.success and tr.steps > 0 and all(s == mbdcp.Status.SOLVED for s in tr.statuses)


def test_supported_scenes_still_simulate_with_every_step_solved():
    spheres = [Body3D(1.0, [0, 0, 0.5], radius=0.5), Body3D(1.0, [0.1, 0, 1.5], radius=0.5),
               Body3D(1.0, [2.0, 0, 0.01])]  # a sphere on a sphere, a particle: every pair has contacts
    tr = simulate(Scene(spheres, FLOOR), 0.01, 0.1, progress=False)
    assert _solved(tr) and tr.contacts[-1] == 3  # two on the floor, one sphere on the other
    assert _solved(simulate(Scene([_box(0.49)], FLOOR), 0.01, 0.1, progress=False))
    # a box and a sphere resting far apart: no pair in reach, so the scene is sound and accepted
    apart = Scene([_box(0.49), Body3D(1.0, [4.0, 0, 0.5], radius=0.5)], FLOOR)
    assert _solved(simulate(apart, 0.01, 0.1, progress=False))
    disks = [Body2D(1.0, [0, 0.5], radius=0.5), Body2D(1.0, [0, 1.55], radius=0.5), Body2D(1.0, [2, 0])]
    assert _solved(simulate(Scene(disks, [Line([0, 0], [0, 1])]), 0.01, 0.1, progress=False))
