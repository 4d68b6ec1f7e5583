"""Bad input to every public function: a ValueError or TypeError that names the argument, never a
crash, never an answer computed from garbage. One table of valid calls, one list of corruptions."""
import numpy as np
import pytest

import mbdcp
from mbdcp.examples import sphere_on_plane

M6, WN, D4, E4, U1 = sphere_on_plane(mu=0.2)
H = 0.12
V6 = np.array([2.0, 0, 0, 0, 0, 0.1])
P6 = np.array([0, 0, -9.81 * H, 0, 0, 0])
WT = np.array([[1.0, 0, 0, 0, -1.0, 0], [0, 1.0, 0, 1.0, 0, 0]]).T
WB = np.array([[0.0, 1.0, 0, 0, 0, 0]]).T
DJ = np.array([[0.0, 0, 0, 0, 0, 1.0], [0.0, 0, 0, 0, 0, -1.0]]).T
EJ = np.array([[1.0], [1.0]])

# name -> (function, positional argument names, keyword arguments, {argument: valid value})
CALLS = {
    "lemke": (mbdcp.lemke, ["M", "q"], {}, {"M": np.array([[2.0, 1.0], [1.0, 2.0]]), "q": np.array([-5.0, -6.0])}),
    "lcp_residual": (mbdcp.lcp_residual, ["M", "q", "z"], {},
                     {"M": np.eye(2), "q": np.array([-1.0, 1.0]), "z": np.array([1.0, 0.0])}),
    "step": (mbdcp.step, ["M", "Wn", "D", "E", "U", "v", "h"],
             ["p_ext", "psi_n", "dpsi_n", "dpsi_f", "Wb", "theta", "dtheta", "Dj", "Ej", "beta_max"],
             {"M": M6, "Wn": WN, "D": D4, "E": E4, "U": U1, "v": V6, "h": H, "p_ext": P6, "psi_n": np.zeros(1),
              "dpsi_n": np.zeros(1), "dpsi_f": np.zeros(4), "Wb": WB, "theta": np.zeros(1), "dtheta": np.zeros(1),
              "Dj": DJ, "Ej": EJ, "beta_max": np.array([0.1])}),
    "fixed_point": (mbdcp.fixed_point, ["M", "Wn", "D", "E", "U", "v", "h"], ["p_ext", "psi_n", "Wb", "theta", "dtheta"],
                    {"M": M6, "Wn": WN, "D": D4, "E": E4, "U": U1, "v": V6, "h": H, "p_ext": P6, "psi_n": np.zeros(1),
                     "Wb": WB, "theta": np.zeros(1), "dtheta": np.zeros(1)}),
    "relax.p1": (mbdcp.relax.p1, ["M", "Wn", "D", "E", "U", "v", "h", "gamma"], ["p_ext", "psi_n"],
                 {"M": M6, "Wn": WN, "D": D4, "E": E4, "U": U1, "v": V6, "h": H, "gamma": np.zeros(1), "p_ext": P6,
                  "psi_n": np.zeros(1)}),
    "relax.p2": (mbdcp.relax.p2, ["M", "Wn", "D", "E", "U", "v", "h", "lam"], ["p_ext", "psi_n"],
                 {"M": M6, "Wn": WN, "D": D4, "E": E4, "U": U1, "v": V6, "h": H, "lam": np.zeros(1), "p_ext": P6,
                  "psi_n": np.zeros(1)}),
    "sliding_speed": (mbdcp.relax.sliding_speed, ["D", "E", "v"], {}, {"D": D4, "E": E4, "v": V6}),
    "full_rank_step": (mbdcp.full_rank_step, ["M", "Wn", "Wt", "mu", "v", "h"], ["p_ext", "psi_n"],
                       {"M": M6, "Wn": WN, "Wt": WT, "mu": np.array([0.2]), "v": V6, "h": H, "p_ext": P6,
                        "psi_n": np.zeros(1)}),
    "ccp": (mbdcp.ccp, ["M", "Wn", "Wt", "mu", "v", "h"], ["p_ext", "psi_n", "Wb", "theta", "dtheta", "warm_start"],
            {"M": M6, "Wn": WN, "Wt": WT, "mu": np.array([0.2]), "v": V6, "h": H, "p_ext": P6, "psi_n": np.zeros(1),
             "Wb": WB, "theta": np.zeros(1), "dtheta": np.zeros(1), "warm_start": np.zeros((1, 3))}),
    "instantaneous": (mbdcp.instantaneous, ["M", "Wn", "D", "E", "U", "v", "k"], ["dWn_v", "dD_v"],
                      {"M": M6, "Wn": WN, "D": D4, "E": E4, "U": U1, "v": np.zeros(6), "k": np.array([0, 0, -9.81, 0, 0, 0.0]),
                       "dWn_v": np.zeros(1), "dD_v": np.zeros(4)}),
    "friction_basis": (mbdcp.friction_basis, ["normal"], {}, {"normal": np.array([0.0, 0.0, 1.0])}),
}


def _call(name, **changes):
    fn, positional, keywords, valid = CALLS[name]
    args = {**valid, **changes}
    return fn(*[args[a] for a in positional], **{k: args[k] for k in keywords}, **({"n_d": 4} if name == "friction_basis" else {}))


def _corruptions(a):
    """(label, bad value) pairs for a valid array argument a."""
    a = np.asarray(a, dtype=float)
    out = [
        ("nan", np.where(np.ones_like(a, bool), np.nan, a) if a.ndim else np.nan),
        ("inf", np.full_like(a, np.inf) if a.ndim else np.inf),
        ("string", "abc"),
        ("complex", a.astype(complex) + 1j),
        ("bool", np.ones(a.shape, dtype=bool)),
        ("object with None", np.array([None] * max(a.size, 1), dtype=object).reshape(a.shape or (1,))),
        ("datetime", np.full(a.shape or (1,), np.datetime64("2026-01-01"))),
        ("huge int", (np.full(a.shape, 1, dtype=object) * 10 ** 400).tolist() if a.ndim else 10 ** 400),
        ("dict", {"a": 1}),
    ]
    if a.ndim >= 1:
        ragged = [list(r) for r in a.tolist()] if a.ndim == 2 else [[x] for x in a.tolist()]
        ragged[0] = ragged[0] + [1.0]
        out += [("extra row", np.vstack([a, a[:1]]) if a.ndim == 2 else np.r_[a, 1.0]),
                ("ragged", ragged),
                ("3-D", a[None, ...] if a.ndim == 2 else a[None, None, :])]
        if a.shape[-1] > 0 and a.ndim == 2:
            out.append(("extra column", np.hstack([a, a[:, :1]])))
    return out


CASES = [(name, arg, label, bad) for name, (_, pos, kw, valid) in CALLS.items() for arg in list(pos) + list(kw)
         if not np.isscalar(valid[arg]) for label, bad in _corruptions(valid[arg])
         if not (name == "ccp" and arg == "M" and label == "3-D")]  # ccp reads a 3-D M as its diagonal blocks


@pytest.mark.parametrize("name,arg,label,bad", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
def test_bad_argument_is_named(name, arg, label, bad):
    with pytest.raises((ValueError, TypeError)) as info:
        _call(name, **{arg: bad})
    assert arg in str(info.value), f"message does not name {arg!r}: {info.value}"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_valid_calls_and_any_byte_order_or_layout(name):
    ref = _call(name)
    _, pos, kw, valid = CALLS[name]
    for arg in list(pos) + list(kw):
        value = valid[arg]
        if np.isscalar(value):
            continue
        for var in (np.asarray(value).astype(">f8"), np.asfortranarray(value), np.asarray(value).tolist(),
                    _unaligned(value)):
            _assert_same(ref, _call(name, **{arg: var}))


def _unaligned(a):
    """A copy of a whose data start at an odd address."""
    a = np.asarray(a, dtype=np.float64)
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    raw[1:] = np.frombuffer(a.tobytes(), dtype=np.uint8)
    out = np.frombuffer(raw.data, dtype=np.float64, count=a.size, offset=1).reshape(a.shape)
    assert not out.flags.aligned or a.size == 0
    return out


def _assert_same(a, b):
    if isinstance(a, (float, np.ndarray)):
        np.testing.assert_array_equal(a, b)
        return
    for field in ("z", "v_next", "gamma", "a"):
        if hasattr(a, field):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    if hasattr(a, "status"):
        assert a.status == b.status


def test_big_endian_fast_path_of_step_is_not_garbage():
    ref = mbdcp.step(M6, WN, D4, E4, U1, V6, H, p_ext=P6, psi_n=np.zeros(1))
    be = [np.asarray(x).astype(">f8") for x in (M6, WN, D4, E4, U1, V6, P6, np.zeros(1))]
    res = mbdcp.step(*be[:6], H, p_ext=be[6], psi_n=be[7])
    np.testing.assert_array_equal(res.v_next, ref.v_next)


@pytest.mark.parametrize("bad", [True, "0.1", None, np.nan, -1.0, 0.0, 1j])
def test_bad_time_step_is_named(bad):
    with pytest.raises((ValueError, TypeError), match="h"):
        _call("step", h=bad)


SCALARS = [("step", "h", {}), ("lemke", "tol", {}), ("lemke", "max_iter", {}), ("ccp", "tol", {}),
           ("ccp", "max_iter", {}), ("ccp", "omega", {}), ("fixed_point", "tol", {}), ("fixed_point", "max_iter", {}),
           ("full_rank_step", "rho", {}), ("full_rank_step", "n_d", {}), ("instantaneous", "slide_tol", {})]


@pytest.mark.parametrize("name,arg,_", SCALARS)
@pytest.mark.parametrize("bad", [True, "1", None, np.nan, np.inf, -1, 10 ** 400, 1j, [1.0]],
                         ids=["bool", "str", "None", "nan", "inf", "negative", "huge", "complex", "list"])
def test_bad_scalar_is_named(name, arg, _, bad):
    fn, pos, kw, valid = CALLS[name]
    if bad is None and arg not in pos:
        return  # None selects the default
    with pytest.raises((ValueError, TypeError)) as info:
        fn(*[valid[a] for a in pos], **{k: valid[k] for k in kw if k not in (arg,)}, **{arg: bad})
    assert arg in str(info.value)
