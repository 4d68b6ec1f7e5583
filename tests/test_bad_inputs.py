"""Bad and extreme input to the public surface, classified as benchmarks/sweep_inputs.py does
(tests/surface.py): every call must return a result that passes its check by definition ("ok") or
raise a ValueError/TypeError naming the argument in our words ("clear"); never another exception,
a message that names another argument or leaks NumPy's words, a valid value refused, a result
that fails its check, a crash or a hang. Each case runs in its own forked child with a memory cap,
so a size declared but not held cannot take the machine down.

Two sets: the cases of each kind of failure found by the first sweep (one test per kind), and a
fixed sample of the whole sweep (every STRIDE-th case of the callables that are quick in-process).
"""
import pytest
import surface
import surface_targets

GOOD = ("ok", "clear")
MEMORY = 4 << 30  # bytes of address space per child
TIMEOUT = 60.0
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # the np.matrix cases
STRIDE = 9  # the sample: one case in STRIDE, all callables but the slow ones (simulate, plots...)

# The cases of each kind of failure the first sweep found, named as tests/surface.py and
# tests/surface_targets.py label them: "callable | argument (* for any) | value label" under each kind.
_KINDS_TABLE = """
complex input truncated:
    mbdcp.ccp | M | complex sparse
    mbdcp.ccp | Wn | complex sparse
    mbdcp.ccp | Wt | complex sparse
    mbdcp.step | M | complex dtype
    mbdcp.lemke | q | complex
overflow and underflow in helpers:
    mbdcp.friction_basis | normal | [1e300]*3
    mbdcp.friction_basis | normal | [1e-300]*3
    mechanics.Body3D | quaternion | [1e300, 1e300, 0, 0]
    mechanics.Body3D | quaternion | [1e-300, 0, 0, 0]
    mechanics.Plane | normal | x 1e300
    mbdcp.full_rank_acceleration | Wt | x 1e300
unchecked helpers and objects:
    mechanics.quaternion_to_matrix | * | nan entry
    mechanics.quaternion_to_matrix | * | [2, 0, 0, 0]
    Scene.update | * | position 'abc'
    Scene.update | * | NaN position
    Scene.update | * | unknown key
    Scene.update | * | negative mass
    Scene.assemble | form | 'bogus'
    mbdcp.derivatives.lcp | res | a StepResult
options checked when given:
    mbdcp.step | baumgarte | bool True
    mbdcp.step | max_iter | 0
    mbdcp.step | return_lcp | 'no'
    mbdcp.ccp | method | array of the name
    mbdcp.fixed_point | algorithm | 10000000000
sizes declared but not held:
    mbdcp.friction_basis | n_d | 1000000000000
    mbdcp.full_rank_step | n_d | 1000000000000
    mbdcp.io.LocalProblem | W | empty sparse 1e10
    mbdcp.study.run | * | range(10**12)
    mbdcp.study.run | * | endless
finite data overflowing inside C:
    mbdcp.step | Wn | x 1e300
    mbdcp.step | D | x 1e300
    mbdcp.fixed_point | Wn | x 1e300
    mbdcp.full_rank_step | Wn | x 1e300
    mbdcp.batch.step | Wns | x 1e300
    mbdcp.ccp | M | denormal
missing type checks:
    mechanics.Scene | * | None
    mechanics.Scene | * | a body
    mbdcp.compare | formulations | 5
    Profile.plot | ax | str 'abc'
the argument named in our words:
    mbdcp.batch.step | vs | extra column
    mbdcp.derivatives.lcp | q | one less
    mbdcp.instantaneous | Wn | x 1e300
    mbdcp.step | M | strings
    mbdcp.step | M | ragged
valid input accepted:
    mbdcp.step | M | np.matrix
    mbdcp.lemke | M | np.matrix
    mbdcp.step | M | condition 1e20
    mbdcp.step | M | mass ratio 1e30
    mbdcp.ccp | M | condition 1e16
widgets:
    widgets.sphere | * | str 'abc'
    widgets.sphere | * | complex
    widgets.sphere | * | Decimal
    widgets.painleve_rod | * | Decimal
"""


def _kinds(table):
    kinds, kind = {}, None
    for line in table.strip().splitlines():
        if not line.startswith(" "):
            kind = line.rstrip(":")
            kinds[kind] = []
        else:
            name, arg, label = (part.strip() for part in line.split(" | "))
            kinds[kind].append((name, None if arg == "*" else arg, label))
    return kinds


KINDS = _kinds(_KINDS_TABLE)


@pytest.fixture(scope="module")
def all_cases(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("surface")
    return str(tmp), list(surface.cases(surface_targets.targets(str(tmp))))


def _run(cases, tmp, monkeypatch):
    monkeypatch.chdir(tmp)  # a call given a relative path writes there
    return surface.run_forked(cases, 2, TIMEOUT, MEMORY, progress=False)


def _failures(results):
    return [f"[{g}] {t.name}({arg.name if arg else ''} = {label}): {detail}"
            for (t, arg, label, _, _), g, detail, _ in results if g not in GOOD]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_of_failure_found_by_the_sweep(kind, all_cases, monkeypatch):
    tmp, cases = all_cases
    chosen = []
    for name, arg, label in KINDS[kind]:
        found = [c for c in cases if c[0].name == name and c[2] == label and (arg is None or (c[1] and c[1].name == arg))]
        assert found, f"no case {name}({arg} = {label}) in the surface"
        chosen += found
    results = _run(chosen, tmp, monkeypatch)
    assert not _failures(results), "\n".join(_failures(results))


def test_a_sample_of_the_sweep(all_cases, monkeypatch):
    tmp, cases = all_cases
    quick = [c for c in cases if not c[0].slow]
    sample = quick[::STRIDE]
    results = _run(sample, tmp, monkeypatch)
    groups = {g for _, g, _, _ in results}
    assert "clear" in groups and "ok" in groups  # the sample holds both valid and bad calls
    assert not _failures(results), "\n".join(_failures(results))


# ---------------------------------------------------------------- property-based: drawn values

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
np = pytest.importorskip("numpy")


def _array_arguments(tmp):
    """(target, arg) of the quick callables whose argument is an array with a valid ndarray value."""
    out = []
    for t in surface_targets.targets(tmp):
        for a in t.args:
            if not t.slow and a.kind == "array" and isinstance(surface.realize(a.valid), np.ndarray):
                out.append((t, a))
    return out


@st.composite
def _drawn_value(draw, valid):
    """A value drawn around a valid array: entries rescaled over the whole float64 range, one entry
    replaced by any float (NaN, infinities, subnormals), a row more or less, or another dtype."""
    x = np.array(valid, dtype=float, copy=True)
    how = draw(st.sampled_from(["rescale", "entry", "shape", "dtype"]))
    if how == "rescale" and x.size:
        e = draw(st.lists(st.integers(-320, 320), min_size=x.size, max_size=x.size))
        with np.errstate(over="ignore", under="ignore"):
            return x * 10.0 ** np.reshape(np.array(e, dtype=float), x.shape)
    if how == "entry" and x.size:
        i = draw(st.integers(0, x.size - 1))
        x.flat[i] = draw(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True))
        return x
    if how == "shape" and x.ndim:
        return x[:-1] if draw(st.booleans()) and x.shape[0] > 1 else np.concatenate([x, x[:1]])
    dtype = draw(st.sampled_from([np.int64, np.float32, np.complex128, np.bool_, object]))
    return x.astype(dtype)


@hypothesis.settings(max_examples=100, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_drawn_values_give_a_verified_result_or_a_clear_error(data, tmp_path_factory):
    # every call either returns a result that passes its check by definition or raises a
    # ValueError/TypeError naming the argument; never anything else (each call in a forked child)
    tmp = str(tmp_path_factory.getbasetemp())
    target, arg = data.draw(st.sampled_from(_array_arguments(tmp)), label="argument")
    value = data.draw(_drawn_value(surface.realize(arg.valid)), label="value")
    [(_, group, detail, _)] = surface.run_forked([(target, arg, "drawn", value, "either")], 1, TIMEOUT, MEMORY,
                                                 progress=False)
    assert group in GOOD, f"[{group}] {target.name}({arg.name} = {value!r}): {detail}"
