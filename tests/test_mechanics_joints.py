"""Pins in scenes: pendulums against their closed forms, joint drift, contacts with joints."""
import numpy as np
import pytest

from mbdcp.mechanics import Body2D, Body3D, Line, Pin, Scene, simulate

G = 9.81


def _period(times, x):
    s = np.sign(x)
    cross = np.flatnonzero(s[:-1] != s[1:])
    return 2 * np.mean(np.diff(times[cross]))


@pytest.mark.parametrize("method", ["lcp", "fixed_point", "ccp"])
def test_planar_pendulum_period(method):
    # a disk (m = 1, r = 0.1, I = m r^2 / 2) on a pin 1 m above its centre, released at 10 degrees:
    # T = 2 pi sqrt(I_pivot / (m g l)) (1 + theta0^2 / 16) to second order in the amplitude
    l, th0 = 1.0, np.radians(10.0)
    bob = Body2D(1.0, [l * np.sin(th0), -l * np.cos(th0)], radius=0.1)
    tr = simulate(Scene([bob], joints=[Pin(bob, None, [0.0, 0.0])]), 0.001, 4.0, method=method, progress=False)
    assert tr.success
    exact = 2 * np.pi * np.sqrt((0.005 + l * l) / (G * l)) * (1 + th0 ** 2 / 16)
    assert _period(tr.times, tr.positions[:, 0]) == pytest.approx(exact, rel=2e-3)
    radius = np.hypot(tr.positions[:, 0], tr.positions[:, 1])
    assert np.abs(radius - l).max() < 1e-6  # the pin holds (the drift is removed at every step)


def test_double_pendulum_of_spheres_keeps_its_pins():
    # two spheres chained by ball joints, swinging in 3-D: every pin holds, the energy stays within
    # 3 % of its start (the semi-implicit scheme with drift removal) and ends below it
    a = Body3D(1.0, [1.0, 0.0, 0.0], radius=0.1)
    b = Body3D(1.0, [2.0, 0.0, 0.3], radius=0.1)
    scene = Scene([a, b], joints=[Pin(a, None, [0.0, 0.0, 0.0]), Pin(a, b, [1.5, 0.0, 0.15])])
    tr = simulate(scene, 0.002, 2.0, progress=False)
    assert tr.success
    Wb, theta = scene.joint_jacobian()
    # the drift left by the last position update (first order in h) is removed at the next step
    assert Wb.shape == (12, 6) and np.abs(theta).max() < 0.05 * 0.002
    energy = tr.kinetic_energy + tr.potential_energy
    assert np.abs(energy - energy[0]).max() < 0.03 * abs(energy[0])
    assert energy[-1] < energy[0]


def test_pinned_bar_resting_on_the_floor():
    # a disk pinned to the world at its rim, resting on the floor: the floor and the pin share the
    # weight; with mu = 0 nothing moves
    disk = Body2D(2.0, [0.0, 0.5], radius=0.5)
    scene = Scene([disk], [Line([0.0, 0.0], [0.0, 1.0])], mu=0.0, joints=[Pin(disk, None, [0.5, 0.5])])
    tr = simulate(scene, 0.01, 0.5, progress=False)
    assert tr.success
    np.testing.assert_allclose(tr.positions[-1], [0.0, 0.5, 0.0], atol=1e-9)
    np.testing.assert_allclose(tr.velocities[-1], 0.0, atol=1e-9)


def test_joint_validation():
    a = Body2D(1.0, [0.0, 0.0])
    with pytest.raises(TypeError, match="a must be a Body2D or Body3D"):
        Pin("a")
    with pytest.raises(TypeError, match="b must be None"):
        Pin(a, Body3D(1.0, [0, 0, 0]))
    with pytest.raises(ValueError, match="a pin joins two different bodies"):
        Pin(a, a)
    with pytest.raises(ValueError, match="point must"):
        Pin(a, None, [0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match=r"joints\[0\] must be a Pin"):
        Scene([a], joints=["pin"])
    with pytest.raises(ValueError, match="not in this scene"):
        Scene([a], joints=[Pin(Body2D(1.0, [1.0, 0.0]), None, [0.0, 0.0])])
