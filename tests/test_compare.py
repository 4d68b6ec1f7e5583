"""mbdcp.compare: every row is that formulation's own result; the table's derived columns follow
their definitions."""
import sys

import numpy as np
import pytest

import mbdcp
from mbdcp.examples import sphere_on_plane
from mbdcp.tools.compare import FORMULATIONS, Comparison, tangent_pairs

G = 9.81


def sphere(v0=2.0, mu=0.2, h=0.12, gap=0.0):
    M, Wn, D, E, U = sphere_on_plane(mu)
    return (M, Wn, D, E, U, np.array([v0, 0, 0, 0, 0, 0.0]), h), {"p_ext": np.array([0, 0, -G * h, 0, 0, 0]),
                                                                 "psi_n": [gap]}


def own_results(args, kw):
    M, Wn, D, _E, U, v, h = args
    Wt = D[:, [0, 2]]  # the sphere's D is (+x, -x, +y, -y)
    return {
        "lcp": mbdcp.step(*args, **kw),
        **{f"fixed_point_{a}": mbdcp.fixed_point(*args, algorithm=a, **kw) for a in (1, 2, 3)},
        "full_rank": mbdcp.full_rank_step(M, Wn, Wt, U, v, h, n_d=2, **kw),
        "ccp": mbdcp.ccp(M, Wn, Wt, U, v, h, p_ext=kw["p_ext"], psi_n=kw["psi_n"], tol=1e-10),
    }


@pytest.mark.parametrize("v0, mu, h", [(2.0, 0.2, 0.12), (0.3, 0.5, 0.01), (0.0, 0.3, 0.05)])
def test_rows_reproduce_each_formulation(v0, mu, h):
    args, kw = sphere(v0, mu, h)
    table = mbdcp.compare(*args, **kw)
    assert list(table.index) == list(FORMULATIONS)
    own = own_results(args, kw)
    ref = own["lcp"].v_next
    for name, res in own.items():
        row = table.loc[name]
        assert row["status"] == res.status.name and row["success"] == res.success
        assert np.array_equal(row["v_next"], res.v_next), name  # bitwise: the same call
        p_n = res.gamma[:, 0] if name == "ccp" else res.p_n
        assert np.array_equal(row["p_n"], p_n), name
        assert list(row["contact_state"]) == list(res.contact_state)
        assert row["v_next_diff"] == np.abs(res.v_next - ref).max()
        M, v = args[0], args[5]
        e = 0.5 * v @ M @ v - 0.5 * res.v_next @ M @ res.v_next + 0.5 * kw["p_ext"] @ (v + res.v_next)
        assert row["dissipated_energy"] == pytest.approx(e, rel=1e-12, abs=1e-15)
        assert row["lift_off_speed"] == (args[1].T @ res.v_next).max()
        assert row["seconds"] > 0


def test_sphere_table_physics():
    # the sphere of Trinkle (2003): the LCP, the converged fixed points and the full-rank model agree; the
    # CCP lifts off at mu times the slip (Negrut et al. 2018); sliding dissipates energy
    mu = 0.2
    args, kw = sphere(2.0, mu, 0.12)
    t = mbdcp.compare(*args, **kw)
    for name in ("fixed_point_1", "fixed_point_2", "full_rank"):
        assert t.loc[name, "v_next_diff"] < 1e-9
    ccp_v = t.loc["ccp", "v_next"]
    assert t.loc["ccp", "lift_off_speed"] == pytest.approx(mu * (ccp_v[0] - ccp_v[4]), rel=1e-6)
    assert abs(t.loc["lcp", "lift_off_speed"]) < 1e-12
    assert (t["dissipated_energy"] > 0).all()
    assert all(s[0] == mbdcp.ContactState.SLIDING for s in t["contact_state"])


def test_free_body_dissipates_nothing():
    # a sphere 1 m above the plane: no impulse, and the energy balance closes exactly
    args, kw = sphere(2.0, 0.2, 0.01, gap=1.0)
    t = mbdcp.compare(*args, **kw)
    assert np.allclose(t["dissipated_energy"].to_numpy(dtype=float), 0.0, atol=1e-13)
    assert all(s[0] == mbdcp.ContactState.SEPARATING for s in t["contact_state"])


def test_records_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    args, kw = sphere()
    records = mbdcp.compare(*args, **kw)
    assert isinstance(records, Comparison) and isinstance(records, list)
    assert [r["formulation"] for r in records] == list(FORMULATIONS)
    own = own_results(args, kw)
    for r in records:
        assert np.array_equal(r["v_next"], own[r["formulation"]].v_next)
    page = records._repr_html_()
    assert page.startswith("<table>") and all(f"<td>{f}</td>" in page for f in FORMULATIONS)


def test_selection_and_options():
    args, kw = sphere()
    t = mbdcp.compare(*args, formulations=["ccp", "fixed_point_3"], options={"ccp": {"tol": 1e-6}}, **kw)
    assert list(t.index) == ["ccp", "fixed_point_3"]
    M, Wn, D, _E, U, v, h = args
    res = mbdcp.ccp(M, Wn, D[:, [0, 2]], U, v, h, p_ext=kw["p_ext"], psi_n=kw["psi_n"], tol=1e-6)
    assert np.array_equal(t.loc["ccp", "v_next"], res.v_next)
    assert np.isfinite(t.loc["ccp", "v_next_diff"])  # the LCP is solved as the reference anyway


def test_unsupported_data_skips_rows():
    n = np.array([0, 0, 1.0])
    D = mbdcp.friction_basis(n, 8)
    base = (np.eye(3), n[:, None], D, np.ones((8, 1)), [0.3], [1.0, 0.5, 0], 0.1)
    t = mbdcp.compare(*base, p_ext=[0, 0, -0.981], dpsi_f=np.full(8, 0.1))
    assert t.loc["lcp", "status"] == "SOLVED"
    for name in FORMULATIONS[1:]:
        assert t.loc[name, "status"] == "SKIPPED" and "dpsi_f" in t.loc[name, "note"]
    # zero data change nothing: dropped, every row solved
    t = mbdcp.compare(*base, p_ext=[0, 0, -0.981], dpsi_f=np.zeros(8))
    assert (t["status"] == "SOLVED").all()
    # moving floor: the CCP gets phi = psi_n + h dpsi_n and matches its own call
    t = mbdcp.compare(*base, p_ext=[0, 0, -0.981], psi_n=[0.01], dpsi_n=[-0.2])
    Wt, _, _ = tangent_pairs(D, np.ones((8, 1)))
    res = mbdcp.ccp(np.eye(3), n[:, None], Wt, [0.3], [1.0, 0.5, 0], 0.1, p_ext=[0, 0, -0.981], psi_n=[0.01 - 0.02], tol=1e-10)
    assert np.array_equal(t.loc["ccp", "v_next"], res.v_next)
    assert t.loc["full_rank", "status"] == "SKIPPED"  # it has no moving surfaces


@pytest.mark.parametrize("n_d", [4, 8, 12])
def test_tangent_pairs_of_friction_basis(n_d):
    normal = np.array([0.3, -0.2, 0.9])
    B = mbdcp.friction_basis(normal, n_d)
    Wt, nd, note = tangent_pairs(np.vstack([B, np.zeros((3, n_d))]), np.ones((n_d, 1)))
    u, w = Wt[:3, 0], Wt[:3, 1]
    assert note == "" and nd.tolist() == [n_d]
    assert np.allclose([u @ u, w @ w, u @ w, u @ normal, w @ normal], [1, 1, 0, 0, 0], atol=1e-12)


def test_tangent_pairs_other_layouts():
    E2 = np.ones((2, 1))
    Wt, _, note = tangent_pairs([[1.0, -1.0], [0.0, 0.0]], E2)  # planar
    assert note == "" and Wt.tolist() == [[1.0, 0.0], [0.0, 0.0]]
    Wt, _, note = tangent_pairs([[1.0, 0.5], [0.0, 1.0]], E2)  # not opposite
    assert Wt is None and "contact 0" in note
    Wt, nd, note = tangent_pairs(np.zeros((3, 0)), np.zeros((0, 2)))  # frictionless
    assert Wt.shape == (3, 4) and not Wt.any() and nd.tolist() == [0, 0]


def test_planar_block_skips_full_rank_only():
    t = mbdcp.compare(np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], np.ones((2, 1)), [0.5], [2.0, 0.0], 0.1,
                      p_ext=[0, -0.981], psi_n=[0.0])
    assert t.loc["full_rank", "status"] == "SKIPPED"
    assert (t.drop(index="full_rank")["status"] == "SOLVED").all()
    assert t.loc["lcp", "v_next"][0] == pytest.approx(2.0 - 0.5 * 0.981)


def test_inputs_are_validated():
    args, kw = sphere()
    with pytest.raises(ValueError, match="formulations"):
        mbdcp.compare(*args, formulations=["lemke"], **kw)
    with pytest.raises(ValueError, match="keywords"):
        mbdcp.compare(*args, gravity=1.0, **kw)
    with pytest.raises(ValueError, match="options"):
        mbdcp.compare(*args, options={"ccp": {"tolerance": 1}}, **kw)
    with pytest.raises(ValueError, match="h"):
        mbdcp.compare(*args[:6], -1.0, **kw)
    with pytest.raises(ValueError, match="Wn"):
        mbdcp.compare(args[0], np.ones((5, 1)), *args[2:], **kw)


def test_docstring_examples():
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("mbdcp.compare"), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
