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
from mbdcp.testing import infeasible_lcp, lcp_problem, random_scene, scaled_lcp, solves_lcp  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None)
TOL = 1e-8  # the check (NumPy, not the C core's) is 10x looser than the solver's own (1e-9)
CLASSES = ["P", "PSD", "copositive", "degenerate", "frictional"]


@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1), cls=st.sampled_from(CLASSES),
       how=st.sampled_from(["none", "diagonal", "symmetric", "global"]), n=st.integers(1, 60))
def test_solvable_lcps(seed, cls, how, n):
    rng = np.random.default_rng(seed)
    M, q = scaled_lcp(*lcp_problem(cls, n, rng), how, rng)
    res = mbdcp.lemke(M, q)
    if res.success:
        assert solves_lcp(M, q, res.z, TOL), "SOLVED on a non-solution"
    if cls in ("P", "frictional"):  # Lemke always solves these (P-matrix; Stewart-Trinkle)
        assert res.success, f"a {cls} LCP ended on {res.status.name}"
    if cls != "frictional" and how != "diagonal":  # copositive-plus and solvable: never a ray
        assert res.status != Status.RAY_TERMINATION
    assert res.certificate is None  # solvable: an infeasibility certificate would be false


@SETTINGS
@given(seed=st.integers(0, 2 ** 32 - 1), how=st.sampled_from(["none", "diagonal", "symmetric", "global"]),
       n=st.integers(2, 40))
def test_infeasible_monotone_lcps(seed, how, n):
    rng = np.random.default_rng(seed)
    M, q = scaled_lcp(*infeasible_lcp(n, rng), how, rng)
    res = mbdcp.lemke(M, q)
    assert not res.success
    if how != "diagonal":  # copositive-plus: the ray proves infeasibility
        assert res.status == Status.RAY_TERMINATION and res.certificate is not None
    if res.certificate is not None:
        c = res.certificate
        assert c.min() >= 0 and q @ c < 0
        # a ray's certificate holds at tol = 1e-9; one read off a huge cancelling answer (an
        # infeasible LCP that rounding almost solved), at sqrt(tol) (mbdcp.lemke)
        assert np.all(M.T @ c <= np.sqrt(1e-9) * (np.abs(M).T @ c))


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
    # original units; a scene without penetration always has a solution (Anitescu & Potra 1997; Trinkle 2003, section 3.2).
    s, S, a, data, kw = _scene_in_units(seed, mass, length)
    ref = mbdcp.step(*s.args(), **s.kwargs())
    res = mbdcp.step(*data, **kw, return_lcp=True)
    assert res.success and ref.success
    assert solves_lcp(res.lcp.F, res.lcp.f, res.lcp.z, TOL)
    np.testing.assert_allclose(res.v_next * S, ref.v_next, rtol=1e-6, atol=1e-7 * np.abs(ref.v_next).max(initial=1.0))
