"""Reliability of Lemke's method and of the time step on badly scaled and degenerate data.

Property-based (hypothesis): problem classes with a planted solution, so that "solvable" is known,
each also under random diagonal row/column scalings (1e-8..1e8) and global scalings
(1e-12..1e12). Asserted: no crash; a SOLVED result passes a componentwise check written here
(independent of the solver's own); P-matrix LCPs are always SOLVED; a solvable LCP with a
copositive-plus matrix never ends on a ray; an infeasible one is never SOLVED, and its ray comes
with a Farkas certificate when the matrix is copositive-plus.
"""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import mbdcp  # noqa: E402
from mbdcp import Status  # noqa: E402
from mbdcp.testing import random_scene, random_spd  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None)
TOL = 1e-8  # the check here is 10x looser than the solver's own verification (1e-9)


def solves(M, q, z, tol=TOL):
    """z solves LCP(M, q) componentwise: each row judged against the magnitude of its own terms,
    s_i = |q_i| + sum_j |M_ij z_j|, up to a floor of a few rounding errors of the largest row."""
    M, q, z = np.asarray(M), np.asarray(q), np.asarray(z)
    if not np.all(np.isfinite(z)) or z.min(initial=0.0) < 0:
        return False
    w = M @ z + q
    s = np.abs(q) + np.abs(M) @ z
    slack = tol * s + 8 * len(q) * np.finfo(float).eps * s.max(initial=0.0)
    if np.any(w < -slack):
        return False
    for j in np.flatnonzero((z > 0) & (w > slack)):  # w_j is not zero: z_j must be negligible in every row
        if np.any(np.abs(M[:, j]) * z[j] > slack):
            return False
    return True


def planted(rng, M, integer=False):
    """q with a known solution: z = max(r, 0), w = max(-r, 0), q = w - M z."""
    n = len(M)
    if integer:
        z = np.where(rng.uniform(size=n) < 0.5, rng.integers(0, 3, n), 0).astype(float)
        w = np.where((z == 0) & (rng.uniform(size=n) < 0.5), rng.integers(0, 3, n), 0).astype(float)
    else:
        r = rng.standard_normal(n)
        z, w = np.maximum(r, 0.0), np.maximum(-r, 0.0)
    return w - M @ z


def p_matrix(rng, n):
    """SPD (condition up to 1e6) plus a skew part: positive definite, hence a P-matrix."""
    K = rng.standard_normal((n, n))
    return random_spd(n, rng, cond=10 ** rng.uniform(0, 6)) + rng.uniform(0, 1) * (K - K.T)


def psd(rng, n):
    """Low-rank PSD plus a skew part: monotone, copositive-plus."""
    B = rng.standard_normal((n, int(rng.integers(1, n + 1))))
    K = rng.standard_normal((n, n))
    return B @ B.T + rng.uniform(0, 1) * (K - K.T)


def copositive(rng, n):
    """Nonnegative with a positive diagonal: strictly copositive."""
    M = rng.uniform(0, 1, (n, n)) * (rng.uniform(size=(n, n)) < 0.5)
    M[np.diag_indices(n)] = rng.uniform(0.1, 2.0, n)
    return M


def degenerate(rng, n):
    """Integer B B^T of low rank: many exact ratio ties at every pivot."""
    B = rng.integers(-2, 3, (n, int(rng.integers(1, 10)))).astype(float)
    return B @ B.T


CLASSES = {"P": p_matrix, "PSD": psd, "copositive": copositive, "degenerate": degenerate}


def scaled(rng, M, q, how):
    n = len(q)
    if how == "diagonal":
        r, c = 10 ** rng.uniform(-8, 8, n), 10 ** rng.uniform(-8, 8, n)
        return r[:, None] * M * c[None, :], r * q
    if how == "symmetric":  # keeps PSD and copositivity
        d = 10 ** rng.uniform(-8, 8, n)
        return d[:, None] * M * d[None, :], d * q
    if how == "global":
        a = 10 ** rng.uniform(-12, 12)
        return a * M, a * q
    return M, q


@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1), cls=st.sampled_from(sorted(CLASSES)),
       how=st.sampled_from(["none", "diagonal", "symmetric", "global"]), n=st.integers(1, 60))
def test_solvable_lcps(seed, cls, how, n):
    rng = np.random.default_rng(seed)
    M = CLASSES[cls](rng, n)
    M, q = scaled(rng, M, planted(rng, M, integer=cls == "degenerate"), how)
    res = mbdcp.lemke(M, q)
    if res.success:
        assert solves(M, q, res.z), "SOLVED on a non-solution"
    if cls == "P":
        assert res.success, f"a P-matrix LCP ended on {res.status.name}"
    if how in ("none", "symmetric", "global"):  # still copositive-plus, and solvable: never a ray
        assert res.status != Status.RAY_TERMINATION
    assert res.status != Status.RAY_TERMINATION or res.certificate is None  # solvable: no certificate


@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1), how=st.sampled_from(["none", "diagonal", "symmetric", "global"]),
       n=st.integers(2, 40))
def test_infeasible_monotone_lcps(seed, how, n):
    # M = B B^T with B^T y = 0 for some y >= 0, and q^T y < 0: infeasible by Farkas
    rng = np.random.default_rng(seed)
    y = np.where(rng.uniform(size=n) < 0.5, rng.uniform(0, 1, n), 0.0)
    y[rng.integers(n)] = 1.0
    B = rng.standard_normal((n, int(rng.integers(1, n))))
    B -= np.outer(y, y @ B) / (y @ y)
    q = rng.standard_normal(n)
    q -= y * (q @ y + rng.uniform(0.1, 1.0)) / (y @ y)
    M, q = scaled(rng, B @ B.T, q, how)
    res = mbdcp.lemke(M, q)
    assert not res.success
    if how != "diagonal":  # copositive-plus: the ray proves infeasibility
        assert res.status == Status.RAY_TERMINATION and res.certificate is not None
    if res.certificate is not None:
        c = res.certificate
        assert c.min() >= 0 and q @ c < 0
        assert np.all(M.T @ c <= 1e-8 * (np.abs(M).T @ c) + 1e-12 * np.abs(M).max())


def _scene_in_units(seed, mass, length):
    """A random spatial scene in other units. With generalized velocities v = S v' (linear parts
    scaled by the length unit, angular ones not) and impulses p = a p' (a = mass * length), the
    step's data become M' = S M S / a, p_ext' = S p_ext / a, Wn' = S Wn, D' = S D, v' = v / S, and
    the solution maps to v_next' = v_next / S, p_n' = p_n / a, beta' = beta / a, sigma' = sigma."""
    s = random_scene(int(1 + seed % 3), int(2 + seed % 9), seed=seed)
    S = np.ones(s.M.shape[0])
    for b in range(len(S) // 6):
        S[6 * b:6 * b + 3] = length
    a = mass * length
    data = (S[:, None] * s.M * S[None, :] / a, S[:, None] * s.Wn, S[:, None] * s.D, s.E, s.U, s.v / S, s.h)
    return s, S, a, data, {"p_ext": S * s.p_ext / a, "psi_n": s.psi_n}


@SETTINGS
@given(seed=st.integers(0, 10_000), mass=st.floats(1e-3, 1e3), length=st.floats(1e-3, 1e2))
def test_step_in_mixed_units(seed, mass, length):
    # Every SOLVED result satisfies its LCP componentwise and gives the same motion as in the
    # original units; a scene without penetration always has a solution (DESIGN.md section 1).
    s, S, a, data, kw = _scene_in_units(seed, mass, length)
    ref = mbdcp.step(*s.args(), **s.kwargs())
    res = mbdcp.step(*data, **kw, return_lcp=True)
    assert res.success and ref.success
    assert solves(res.lcp.F, res.lcp.f, res.lcp.z)
    np.testing.assert_allclose(res.v_next * S, ref.v_next, rtol=1e-6, atol=1e-7 * np.abs(ref.v_next).max(initial=1.0))
