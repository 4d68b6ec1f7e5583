"""The short paths of mbdcp.derivatives against the plain NumPy / SciPy computations they replace.

Each helper is checked against its definition written directly (loops, scipy.linalg.qr, argmax
over a grouping matrix) on random and tied data, so a faster path cannot drift from the
reference: bit for bit where it only reorders exact operations (minima, selections, the same
LAPACK calls), and the derivative objects built from them against central differences.
"""
import importlib

import autodiff_cases as C
import numpy as np
import pytest
import scipy.linalg as sla

import mbdcp
from mbdcp.derivatives import _common
from mbdcp.infrastructure import validate as val

step_module = importlib.import_module("mbdcp.derivatives.step")


def grouping(counts):
    """A grouping matrix E with counts[c] consecutive rows for group c."""
    E = np.zeros((sum(counts), len(counts)))
    E[np.arange(sum(counts)), np.repeat(np.arange(len(counts)), counts)] = 1.0
    return E


def group_min_reference(w, own, n_g):
    """Per group: min, first minimiser, min of the rest (inf and -1 for an empty group)."""
    w1, arg, w2 = np.full(n_g, np.inf), np.full(n_g, -1), np.full(n_g, np.inf)
    for g in range(n_g):
        k = np.flatnonzero(own == g)
        if k.size == 0:
            continue
        j = k[np.argmin(w[k])]
        w1[g], arg[g] = w[j], j
        rest = w[k[k != j]]
        w2[g] = rest.min() if rest.size else np.inf
    return w1, arg, w2


@pytest.mark.parametrize("counts", [[4, 4, 4], [1, 1], [2, 2, 2, 2], [3, 1, 4], [0, 2, 3], [2, 0], [5]])
def test_group_minimum_of_uniform_and_ragged_groups(counts, rng):
    E = grouping(counts)
    n_g = len(counts)
    own, has, first, k = _common.groups(E, n_g)
    np.testing.assert_array_equal(own, np.argmax(E, axis=1))
    np.testing.assert_array_equal(has, np.asarray(counts) > 0)
    assert k == (counts[0] if len(set(counts)) == 1 else 0)
    for trial in range(20):
        # ties (a group's minimum attained twice) a third of the time
        w = rng.integers(0, 3, E.shape[0]).astype(float) if trial % 3 == 0 else rng.standard_normal(E.shape[0])
        got = step_module._group_min(w, own, n_g, has, first, k)
        for a, b in zip(got, group_min_reference(w, own, n_g)):
            np.testing.assert_array_equal(a, b)


def pivoted_qr_reference(R):
    q, r, piv = sla.qr(R, mode="economic", pivoting=True, check_finite=False)
    return q, np.abs(np.diag(r)), piv


@pytest.mark.parametrize("shape", [(6, 3), (6, 6), (3, 6), (8, 1), (1, 4)])
def test_pivoted_qr_is_scipys(shape, rng):
    for rank_deficient in (False, True):
        R = rng.standard_normal(shape)
        if rank_deficient and shape[1] > 1:
            R[:, -1] = R[:, 0] - 2.0 * R[:, 1 % shape[1]]
        q, diag, piv = step_module._pivoted_qr(R, True)
        q0, diag0, piv0 = pivoted_qr_reference(R)
        np.testing.assert_array_equal(q, q0)
        np.testing.assert_array_equal(diag, diag0)
        np.testing.assert_array_equal(piv, piv0)
        none, diag1, piv1 = step_module._pivoted_qr(R, False)
        assert none is None
        np.testing.assert_array_equal(diag1, diag0)
        np.testing.assert_array_equal(piv1, piv0)


def opposite_pairs_reference(cols):
    k = cols.shape[1]
    scale = np.abs(cols).max(initial=0.0)
    return all(any(np.abs(cols[:, i] + cols[:, j]).max() <= val.OPPOSITE_RTOL * scale for j in range(k) if j != i)
               for i in range(k))


def test_opposite_pairs_by_definition(rng):
    for k in range(0, 7):
        for _ in range(10):
            cols = rng.standard_normal((5, k))
            if k >= 2 and rng.uniform() < 0.7:  # some or all columns with their negatives
                half = cols[:, : k // 2]
                cols[:, k // 2: 2 * (k // 2)] = -half * (1.0 + 1e-15 * rng.standard_normal(half.shape))
            assert step_module._opposite_pairs(cols) == opposite_pairs_reference(cols)


def test_dense_tangent_takes_broadcast_and_zero_dimensional_arrays():
    g = np.broadcast_to(np.array([2.0]), (4,))  # stride 0, as PyTorch's gradient of a sum
    out = _common.dense_tangent("gz", g, (4,))
    assert out.flags.c_contiguous and out.tolist() == [2.0] * 4
    assert _common.dense_tangent("h", np.array(0.5), ()) == 0.5 and type(_common.dense_tangent("h", np.array(0.5), ())) is float
    with pytest.raises(ValueError, match="gz must hold finite values"):
        _common.dense_tangent("gz", np.array([1.0, np.nan]), (2,))
    with pytest.raises(ValueError, match=r"gz must have shape \(3,\)"):
        _common.dense_tangent("gz", np.zeros(4), (3,))


def test_vjp_overflow_is_still_named(rng):
    data = C.stable(C.sliding, 1)[0]
    args, kw = C.split(data, C.STEP_ARGS)
    d = mbdcp.derivatives.step(*args, C.solve_step(data), **kw)
    with pytest.raises(ValueError, match="v_next: the derivative overflows float64"), np.errstate(all="ignore"):
        d.vjp(v_next=np.full(len(data["v"]), 1e308))
    M, q = np.eye(2), np.array([-1e10, -1.0])
    dl = mbdcp.derivatives.lcp(M, q, mbdcp.lemke(M, q))
    with pytest.raises(ValueError, match="gz: the derivative overflows float64"), np.errstate(all="ignore"):
        dl.vjp([1e300, 0.0])  # gM = gq z^T: 1e300 * 1e10
    assert dl.vjp([1e300, 0.0], _wanted=frozenset("q")).M is None  # gq alone is finite


def test_lcp_derivative_rejects_another_problems_solution():
    M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-5.0, 6.0])
    res = mbdcp.lemke(M, q)
    with pytest.raises(ValueError, match="res does not solve LCP"):
        mbdcp.derivatives.lcp(M, q + 1.0, res)


def test_uniform_and_ragged_friction_give_the_same_gradients(rng):
    # the same contacts with their directions doubled: the uniform (n_c, k) path and the ragged one
    data = C.stable(C.sliding, 1)[0]
    res = C.solve_step(data)
    args, kw = C.split(data, C.STEP_ARGS)
    g = rng.standard_normal(len(data["v"]))
    d = mbdcp.derivatives.step(*args, res, **kw)
    assert d._d["n_c"] > 1
    # every contact's directions repeated: the step and its v_next gradient do not change
    D, E = data["D"], data["E"]
    D2 = np.hstack([D[:, np.flatnonzero(E[:, c])].repeat(2, axis=1) for c in range(E.shape[1])])
    counts = (2 * E.sum(axis=0)).astype(int)
    E2 = grouping(counts)
    data2 = dict(data, D=D2, E=E2)
    res2 = C.solve_step(data2)
    np.testing.assert_allclose(res2.v_next, res.v_next, rtol=1e-10, atol=1e-12)
    d2 = mbdcp.derivatives.step(*C.split(data2, C.STEP_ARGS)[0], res2, **kw)
    for name in ("v", "U", "p_ext", "M"):
        np.testing.assert_allclose(d2.vjp(v_next=g)[name], d.vjp(v_next=g)[name], rtol=1e-8, atol=1e-10)
