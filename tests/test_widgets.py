"""mbdcp.widgets: every explorer builds, its callback re-solves (checked against the closed forms
of the worked examples), and without a widget frontend it returns a static figure."""
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.figure import Figure

import mbdcp
from mbdcp import ContactState, widgets

G = 9.81
EXPLORERS = ["sphere", "particle_and_wall", "planar_friction", "painleve_rod", "lemke_stepper"]


@pytest.mark.parametrize("name", EXPLORERS)
def test_static_fallback_is_a_figure(name, monkeypatch):
    fig = getattr(widgets, name)(static=True)
    assert isinstance(fig, Figure) and fig.axes
    # no kernel here: the automatic choice is static too, also when the environment asks for it
    assert isinstance(getattr(widgets, name)(), Figure)
    monkeypatch.setenv("MBDCP_WIDGETS", "static")
    assert widgets.interactive() is False


def test_no_ipywidgets_means_static(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    assert widgets.interactive() is False
    assert widgets.interactive(static=False) is True  # an explicit choice wins
    with pytest.raises(TypeError, match="static"):
        widgets.interactive(static="yes")


ipywidgets = pytest.importorskip("ipywidgets")


def build(name, **kw):
    ex = getattr(widgets, name)(static=False, **kw)
    assert isinstance(ex, widgets.Explorer) and isinstance(ex.widget, ipywidgets.VBox)
    assert ex.figure.axes and ex.result is not None
    return ex


def test_sphere_explorer_resolves():
    ex = build("sphere", h=0.02)
    for mu in (0.2, 0.5):
        out = ex.update(mu=mu)
        t_star = 2 * 2.0 / (7 * mu * G)
        assert out["t_star"] == pytest.approx(t_star)
        states = out["contact_state"]
        t_end = out["t"][1:]
        assert all(s == ContactState.SLIDING for s, t in zip(states, t_end) if t < t_star - 1e-9)
        assert all(s == ContactState.STICKING for s, t in zip(states, t_end) if t - 0.02 > t_star + 1e-9)
        # the closed form of Trinkle (2003), section 4 (exact for a direction along -x)
        vx, _ = mbdcp.examples.sphere_closed_form(out["t"], v0=2.0, mu=mu)
        assert np.allclose(out["v"][:, 0], vx, atol=1e-9)
    out = ex.update(n_d=8, v0=1.0)
    assert out["t_star"] == pytest.approx(2 * 1.0 / (7 * 0.5 * G)) and ex.values()["n_d"] == 8
    # the slider's own callback redraws with the new value
    ex.controls["mu"].value = 0.3
    assert ex.result["t_star"] == pytest.approx(2 * 1.0 / (7 * 0.3 * G))


def test_particle_explorer_resolves():
    ex = build("particle_and_wall")
    assert np.allclose(ex.result["p_n"], [4, 2, 1, 1, 1, 1])  # the tables of Trinkle (notes, 2003)
    out = ex.update(wall_speed=0.5)
    assert np.allclose(out["p_n"], [4.5, 2, 1, 1, 1, 1]) and np.allclose(out["v"], [-0.5] + [0.5] * 5)


def test_planar_friction_explorer_resolves():
    ex = build("planar_friction")
    assert ex.result["contact_state"] == ContactState.STICKING and ex.result["case"] == 6  # pushed +x below mu m g h: beta_2 holds it
    out = ex.update(v_x=2.0, push=0.0)
    assert out["contact_state"] == ContactState.SLIDING and out["case"] == 5
    assert out["result"].v_next[0] == pytest.approx(2.0 - 0.5 * G * 0.1)
    out = ex.update(lift=2.0)
    assert out["contact_state"] == ContactState.SEPARATING


def test_painleve_explorer_resolves():
    ex = build("painleve_rod")
    th = np.radians(30)
    A = 1 + 3 * np.cos(th) ** 2 - 3 * 0.3 * np.sin(th) * np.cos(th)
    assert ex.result["result"].success and ex.result["result"].c_n[0] == pytest.approx(G / A)
    out = ex.update(mu=3.0)
    assert out["A"] < 0 and out["result"].status == mbdcp.Status.RAY_TERMINATION


def test_lemke_stepper_replays_the_pivots():
    ex = build("lemke_stepper")
    data = ex.result
    res = data["result"]
    assert len(data["tableaux"]) == len(res.trace) + 1 and data["pivot"] == 0
    out = ex.update(pivot=len(res.trace))
    T, basis = out["tableaux"][-1], out["basis"][-1]
    z = np.zeros(4)
    for label, value in zip(basis, T[:, -1]):
        if label.startswith("z") and label != "z0":
            z[int(label[1:]) - 1] = value
    assert np.allclose(z, res.z) and "z0" not in basis
    # every tableau states the same equations: [I, -M, -e] x = q keeps its solution set
    M, q = widgets._MURTY
    for T in out["tableaux"]:
        x = np.r_[M @ res.z + q, res.z, 0.0]  # (w, z, z0) of the solution
        assert np.allclose(T[:, :-1] @ x, T[:, -1])


def test_update_validates():
    ex = build("planar_friction")
    with pytest.raises(ValueError, match="update accepts"):
        ex.update(gravity=1.0)
    with pytest.raises(ValueError, match="push"):
        ex.update(push=5.0)
    with pytest.raises(ValueError, match="mu"):
        widgets.planar_friction(mu=-1.0, static=True)
    with pytest.raises(ValueError, match="n_d"):
        widgets.sphere(n_d=5, static=True)
    with pytest.raises(ValueError, match="pivot"):
        widgets.lemke_stepper(pivot=99, static=True)
    with pytest.raises(ValueError, match="together"):
        widgets.lemke_stepper(M=np.eye(2), static=True)


def test_explorer_displays_as_its_widget():
    ex = build("painleve_rod")
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_docstring_examples():
    import doctest

    result = doctest.testmod(widgets, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
