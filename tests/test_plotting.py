"""Plotting helpers given no ``ax`` draw into a figure of their own and return its Axes, so that two
helpers called in turn (``plot_energy()`` then ``plot_contact_states()``) draw two figures; given an
``ax`` they draw into it."""
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mbdcp.mechanics import Body3D, Plane, Scene, simulate  # noqa: E402

HELPERS = ("plot_energy", "plot_contact_states", "plot_penetration")


@pytest.fixture(scope="module")
def trajectory():
    ball = Body3D(1.0, [0, 0, 1.0], velocity=[2.0, 0, 0], radius=1.0)
    return simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.2, delta=0.01), 0.05, 0.3, progress=False)


def test_each_helper_without_ax_makes_its_own_figure(trajectory):
    plt.close("all")
    current = plt.figure()  # a figure the user was drawing into: the helpers must leave it alone
    current_ax = current.add_subplot()
    axes = [getattr(trajectory, name)() for name in HELPERS]
    figures = [ax.figure for ax in axes]
    assert all(isinstance(ax, matplotlib.axes.Axes) for ax in axes)
    assert len({id(f) for f in figures}) == len(HELPERS)  # one figure per call
    assert all(f is not current for f in figures)
    assert not current_ax.lines and not current_ax.images  # nothing drawn over the current figure
    assert axes[0].lines and axes[1].images and axes[2].lines  # each drew its own content
    plt.close("all")


def test_each_helper_draws_into_the_given_ax(trajectory):
    fig, ax = plt.subplots(1, len(HELPERS))
    for a, name in zip(ax, HELPERS):
        assert getattr(trajectory, name)(a) is a
    assert ax[0].lines and ax[1].images and ax[2].lines
    assert len(plt.get_fignums()) == 1
    plt.close("all")


def test_profile_plot_without_ax_makes_its_own_figure():
    from mbdcp import study

    prof = study.profile({"p": 1.0}, {"a": lambda x: x, "b": lambda x: x}, progress=False,
                         residual=lambda item, out: 0.0)
    plt.close("all")
    current = plt.figure()
    ax = prof.plot()
    assert ax.figure is not current and ax.lines
    plt.close("all")
