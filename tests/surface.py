"""The public surface as data, for the bad-input sweep (benchmarks/sweep_inputs.py) and the
property-based tests (tests/test_bad_inputs.py): every argument of every public function with its
kind, a valid value and its range; the bad or extreme values each kind gets; and how a call's
outcome is classified.

Outcomes (``classify``):

- ``ok``: a result that passes its check by definition (solutions verified, helpers' outputs
  finite and consistent), or an accepted value that is valid;
- ``clear``: a ValueError or TypeError whose message names the argument and leaks no internals;
- ``unclear``: any other exception, a message that does not name the argument or leaks NumPy's,
  SciPy's or the C core's words, and a valid value refused;
- ``garbage``: a result that fails its check (SOLVED but not a solution, NaN or infinity in it), a
  value that is invalid by the documented contract accepted silently, or complex input truncated.
"""
import collections
import functools
import json
import math
import os
import re
import resource
import select
import sys
import time
import warnings
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

OMIT = object()  # an argument left out of the valid call (its default is used)


class Fresh:
    """A valid value made anew for every call (bodies, scenes and results are mutable or bound)."""

    def __init__(self, make):
        self.make = make


def realize(x):
    return x.make() if isinstance(x, Fresh) else x


@dataclass
class Arg:
    """One argument. ``kind``: array, scalar, int, option, flag, object, callable, path, any.
    ``domain``: for scalars and array entries "real", "pos", "nonneg", "unit" ((0, 1]), "open01",
    ("range", lo, hi) or "any" (no bound); for ints the least valid value (or (lo, hi)); for
    options the tuple of choices. ``optional``: None is valid. ``aliases``: other names a message
    may use for it. ``wrong`` / ``extremes``: extra (label, value[, expect]) cases of this argument;
    ``valid_too``: labels of the generic bad values that are valid for this argument (a scalar
    friction coefficient, a batch axis...): "either" for them."""

    name: str
    kind: str
    valid: object = OMIT
    domain: object = "real"
    optional: bool = False
    aliases: tuple = ()
    wrong: tuple = ()
    extremes: tuple = ()
    valid_too: tuple = ()


@dataclass
class Target:
    """A public callable: ``fn(*positional, **keywords)`` (``fn`` may build a fresh object and call
    its method), its arguments, and ``verify(kw, result) -> None or the reason it is garbage``."""

    name: str
    fn: object
    args: list
    positional: tuple = ()
    verify: object = None
    slow: bool = False  # skipped by the in-process property tests

    def call(self, kw):
        pos = [kw[n] for n in self.positional]
        rest = {k: v for k, v in kw.items() if k not in self.positional and v is not OMIT}
        return self.fn(*pos, **rest)

    def valid_kw(self):
        return {a.name: realize(a.valid) for a in self.args if a.valid is not OMIT or a.name in self.positional}


# ---------------------------------------------------------------- the bad values of each kind

def _universal(arg):
    """Values wrong for every kind but "any"."""
    out = [("str 'abc'", "abc"), ("dict", {"a": 1}), ("list of str", ["a", "b"]), ("complex", 1 + 2j)]
    if not (arg.kind == "array" and arg.optional):
        out += [("set", {1, 2}), ("Decimal", Decimal("1.5")), ("object()", object())]
    if arg.kind != "flag":  # a flag's booleans and None are its own cases
        out += [("bool True", True), ("None", None, {True: "accept", False: "refuse"}.get(arg.optional, "either"))]
    return out


def _in_domain(x, domain):
    if not math.isfinite(x):
        return False
    if domain == "pos":
        return x > 0
    if domain == "nonneg":
        return x >= 0
    if domain == "unit":
        return 0 < x <= 1
    if domain == "open01":
        return 0 < x < 1
    if isinstance(domain, tuple) and domain[0] == "range":
        return domain[1] <= x <= domain[2]
    return True


def _scalar_values(arg):
    d = arg.domain
    nums = [-1.0, 0.0, 1e-300, 5e-324, 1e300, float(10 ** 12)]
    out = [(f"{x!r}", x, "either" if _in_domain(x, d) else "refuse") for x in nums]
    out += [("nan", float("nan"), "refuse"), ("inf", float("inf"), "refuse"),
            ("10**400", 10 ** 400, "refuse"), ("Fraction(1, 3)", Fraction(1, 3), "either" if _in_domain(1 / 3, d) else "refuse")]
    v = arg.valid
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        out += [("np.float64(valid)", np.float64(v), "accept"), ("1-d array", np.array([float(v)]), "either"),
                ("2 values", np.array([float(v)] * 2), "refuse"), ("empty list", [], "refuse")]
    return out


def _int_values(arg):
    lo, hi = arg.domain if isinstance(arg.domain, tuple) else (arg.domain, None)

    def ok(k):
        return k >= lo and (hi is None or k <= hi)
    out = [(repr(k), k, "either" if ok(k) else "refuse") for k in (-1, 0, 1, 10 ** 10, 10 ** 12)]
    out += [("10**100", 10 ** 100, "either" if hi is None else "refuse"), ("2.5", 2.5, "refuse"),
            ("2.0", 2.0, "either"), ("'3'", "3", "refuse"), ("nan", float("nan"), "refuse"),
            ("inf", float("inf"), "refuse"), ("int array", np.array([2]), "refuse")]
    if isinstance(arg.valid, int) and not isinstance(arg.valid, bool):
        out.append(("np.int64(valid)", np.int64(arg.valid), "accept"))
    return out


def _option_values(arg):
    v = arg.valid if isinstance(arg.valid, str) else arg.domain[0]
    return [("'bogus'", "bogus", "refuse"), ("''", "", "refuse"), ("array of the name", np.array([v]), "refuse"),
            ("list of the name", [v], "refuse"), ("7", 7, "refuse"), ("bytes", v.encode(), "refuse"),
            ("upper case", v.upper(), "either"), ("np.str_", np.str_(v), "accept")]


def _flag_values(arg):
    return [("'yes'", "yes", "refuse"), ("'no'", "no", "refuse"), ("array of 2", np.array([True, False]), "refuse"),
            ("np.bool_", np.bool_(True), "accept"), ("2", 2, "either"), ("0", 0, "either"), ("None", None, "either")]


def _shapes(a):
    """Wrong shapes of a valid array a."""
    out = [("3-d", a[None] if a.ndim >= 2 else a[None, None]), ("0-d", np.array(1.0))]
    if a.ndim == 2:
        out += [("extra row", np.vstack([a, np.ones((1, a.shape[1]))])),
                ("extra column", np.hstack([a, np.ones((a.shape[0], 1))])), ("1-d ravel", a.ravel())]
        if a.shape[0] != a.shape[1]:
            out.append(("transposed", a.T.copy()))
    elif a.ndim == 1:
        out += [("one more", np.r_[a, 1.0]), ("column", a[:, None].copy())]
        if a.size > 1:
            out.append(("one less", a[:-1].copy()))
    return out


def _array_values(arg):
    a = np.asarray(realize(arg.valid), dtype=float) if arg.valid is not OMIT else None
    if a is None or a.ndim == 0:
        return []
    scaled = "refuse" if arg.domain == "grouping" else "either"
    neg = "refuse" if arg.domain in ("nonneg", "pos", "grouping") and np.any(a > 0) else "either"
    nan = a.copy()
    if a.size:
        nan.flat[0] = np.nan
    out = [("list", a.tolist(), "accept"), ("complex", a + 1j, "refuse"), ("strings", a.astype(str), "refuse"),
           ("x 1e300", a * 1e300, scaled), ("x 5e-324", a * 5e-324, scaled), ("negated", -a, neg)]
    if a.size:
        out.append(("nan entry", nan, "refuse"))
    out += [(label, x, "refuse") for label, x in _shapes(a)]
    if arg.optional:  # secondary data: the conversions above cover what is shared with the main arrays
        return out
    inf = a.copy()
    if a.size:
        inf.flat[-1] = np.inf
        out.append(("inf entry", inf, "refuse"))
    out += [("float32", a.astype(np.float32), "either"), ("read-only Fortran", _readonly(np.asfortranarray(a)), "accept"),
            ("complex dtype", a.astype(complex), "refuse"), ("bool", np.ones(a.shape, dtype=bool), "refuse"),
            ("object None", np.full(a.shape, None, dtype=object), "refuse"),
            ("huge ints", (np.ones(a.shape, dtype=object) * 10 ** 400).tolist(), "refuse"),
            ("x 1e-300", a * 1e-300, scaled)]
    if a.ndim == 2:
        out += [("np.matrix", np.matrix(a), "accept"), ("sparse", sp.csr_matrix(a), "either"),
                ("complex sparse", sp.csr_matrix(a + 1j), "refuse"),
                ("ragged", [list(r) for r in a.tolist()][:1] + [[1.0] * (a.shape[1] + 1)] * max(a.shape[0] - 1, 1),
                 "refuse")]
    else:
        out.append(("ragged", [[1.0, 2.0], [3.0]], "refuse"))
    return out


def _readonly(a):
    b = a.copy(order="A")
    b.setflags(write=False)
    return b


_KIND_VALUES = {"scalar": _scalar_values, "int": _int_values, "option": _option_values, "flag": _flag_values,
                "array": _array_values}


def bad_values(arg):
    """(label, value, expect) for an argument: expect "refuse" (only a clear error is right),
    "accept" (a valid value: only a verified result is right) or "either"."""
    if arg.kind == "any":
        return [tuple(x) + ("either",) * (3 - len(x)) for x in arg.extremes]
    out = [x for x in _universal(arg)]
    out += _KIND_VALUES.get(arg.kind, lambda a: [("5", 5)])(arg)
    out += list(arg.wrong) + list(arg.extremes)
    out = [(x[0], x[1], x[2] if len(x) > 2 else "refuse") for x in out]
    return [(label, v, "either" if label in arg.valid_too else e) for label, v, e in out]


def cases(targets):
    """Every (target, argument, label, value, expect) of the sweep, the valid call first."""
    for t in targets:
        yield t, None, "valid call", None, "accept"
        for arg in t.args:
            for label, value, expect in bad_values(arg):
                yield t, arg, label, value, expect


# ---------------------------------------------------------------- classification

# words of NumPy, SciPy, Python or the C core that a user cannot act on
LEAKS = ("could not convert", "truth value of an array", "unhashable", "ufunc", "LinAlgError", "not iterable",
         "has no attribute", "not subscriptable", "code 7", "CoreError", "setting an array element",
         "inhomogeneous", "invalid literal", "NoneType", "object of type", "unsupported operand",
         "only length-1", "only integer scalar", "cannot be interpreted as an integer", "argument must be",
         "Cholesky failed for", "index out of", "not supported between", "internal call")


def names_arg(message, names):
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", message) for n in names)


def error_group(exc_type, message, names, kind="array"):
    """"clear" or "unclear" for an exception raised by a call with a bad ``names[0]``."""
    import numpy.linalg

    from mbdcp.infrastructure import _core

    allowed = (ValueError, TypeError) + ((OSError,) if kind == "path" else ()) + ((IndexError,) if names[0] == "i" else ())
    if exc_type.__name__ == "SolveError":  # the layers' documented outcome of an unsolved problem: a status
        return "clear"
    if not issubclass(exc_type, allowed) or issubclass(exc_type, (numpy.linalg.LinAlgError, _core.CoreError)):
        return "unclear"
    if any(w in message for w in LEAKS) or not names_arg(message, names):
        return "unclear"
    return "clear"


def run_case(target, arg, value, expect):
    """Run one case in this process: (group, detail). group: ok, clear, unclear, refused (a valid
    value refused: unclear), garbage."""
    kw = target.valid_kw()
    names = (arg.name,) + arg.aliases if arg is not None else ("",)
    if arg is not None and arg.kind == "path" and isinstance(value, (str, bytes)):
        names += (os.path.basename(os.fsdecode(value)) or "path",)  # a file error names the file
    if arg is not None:
        kw[arg.name] = value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = target.call(kw)
        except Exception as exc:  # noqa: BLE001 (classified)
            text = f"{type(exc).__name__}: {exc}"
            if expect == "accept":
                return "refused", text
            return error_group(type(exc), str(exc), names, arg.kind if arg else ""), text
        complex_warning = [w for w in caught if "ComplexWarning" in type(w.message).__name__
                           or "imaginary part" in str(w.message)]
        reason = "complex input truncated to its real part" if complex_warning else None
        if reason is None and target.verify is not None:
            try:
                reason = target.verify(kw, result)
            except Exception as exc:  # noqa: BLE001 (the check itself met garbage)
                reason = f"the check failed: {type(exc).__name__}: {exc}"
        if reason is None and expect == "refuse":
            reason = "an invalid value was accepted"
        return ("garbage", reason) if reason else ("ok", "")


# ---------------------------------------------------------------- each case in its own child process

def _child(case, fd, memory):
    """Run one case and write its (group, detail) to fd; never returns."""
    target, arg, _label, value, expect = case
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        group, detail = run_case(target, arg, realize(value), expect)
    except BaseException as exc:  # noqa: BLE001 (SystemExit, KeyboardInterrupt: an unclear end too)
        group, detail = "unclear", f"{type(exc).__name__}: {exc}"
    try:
        os.write(fd, json.dumps([group, str(detail)[:400]]).encode())
    finally:
        os._exit(0)


def _start(case, memory):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _child(case, w, memory)
    os.close(w)
    return pid, r


def _finish(pid, fd, killed):
    data = b""
    while not killed:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    if killed:
        return "hang", "no result within the timeout"
    if not data:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        return "crash", f"the child died (signal {sig}, status {status})"
    return tuple(json.loads(data))


def run_forked(cases, jobs, timeout, memory, progress=True):
    """[(case, group, detail, seconds)] in the order of ``cases``: each case run in a forked child
    (``memory`` bytes of address space, killed after ``timeout`` seconds: "hang"; dead: "crash"),
    ``jobs`` children at a time."""
    results = [None] * len(cases)
    running = {}  # fd -> (index, pid, start)
    todo = collections.deque(range(len(cases)))
    done = 0
    while todo or running:
        while todo and len(running) < jobs:
            i = todo.popleft()
            pid, fd = _start(cases[i], memory)
            running[fd] = (i, pid, time.monotonic())
        ready, _, _ = select.select(list(running), [], [], 0.5)
        now = time.monotonic()
        for fd in list(running):
            i, pid, t0 = running[fd]
            late = now - t0 > timeout
            if fd not in ready and not late:
                continue
            if late and fd not in ready:
                os.kill(pid, 9)  # the child this sweep started
            del running[fd]
            group, detail = _finish(pid, fd, late and fd not in ready)
            results[i] = (cases[i], group, detail, now - t0)
            done += 1
            if progress and done % 500 == 0:
                print(f"  {done}/{len(cases)} calls", file=sys.stderr, flush=True)
    return results



# ---------------------------------------------------------------- checks of results by definition

TOL = 1e-6
TINY = 1e-300
FLOOR = 1e-305  # below the normal range float64 has too few digits for a relative check


def A(x):
    """x as a longdouble array (the checks' own arithmetic: the 80-bit exponent range holds the
    products of extreme data exactly enough)."""
    if sp.issparse(x):
        x = x.toarray()
    return np.asarray(np.asarray(x, dtype=np.float64), dtype=np.longdouble)


def nonfinite(x, path="result", depth=0):
    """The path of the first NaN or infinity in a result (dataclasses, dicts, sequences, arrays)."""
    if depth > 4 or x is None or isinstance(x, (str, bytes, bool)):
        return None
    if isinstance(x, (float, np.floating)):
        return None if np.isfinite(x) else path
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc" and not np.all(np.isfinite(x)):
            return path
        return None
    if sp.issparse(x):
        return nonfinite(x.data, path, depth + 1)
    if hasattr(x, "__dataclass_fields__"):
        items = [(k, getattr(x, k, None)) for k in x.__dataclass_fields__]
    elif isinstance(x, dict):
        items = list(x.items())
    elif isinstance(x, (list, tuple)):
        items = list(enumerate(x[:50]))
    else:
        return None
    for k, v in items:
        bad = nonfinite(v, f"{path}.{k}", depth + 1)
        if bad:
            return bad
    return None


def pairs_ok(z, w, sw, tol=TOL):
    """0 <= z ⊥ w >= 0 row by row: z at the scale of the largest z, w at its row's scale sw."""
    sz = max(float(np.max(np.abs(z), initial=0.0)), TINY)
    sw = np.maximum(sw, FLOOR / tol)
    return bool(np.all(z >= -tol * sz) and np.all(w >= -tol * sw) and np.all((z <= tol * sz) | (w <= tol * sw)))


def balance_ok(terms, tol=TOL, extra=0):
    """sum(terms) = 0 row by row, relative to sum |terms| (+ ``extra``: the rounding scale of terms
    computed from a result)."""
    total = sum(terms)
    scale = sum(np.abs(t) for t in terms) + extra
    return bool(np.all(np.abs(total) <= tol * scale + FLOOR))


def momentum_ok(M, vn, v, impulses, tol=TOL):
    """M (vn - v) = the sum of ``impulses`` row by row, at the scale of |M| times the largest
    velocity (vn carries rounding relative to it) and of the impulses."""
    vel = np.full(M.shape[0], max(float(np.abs(vn).max(initial=0)), float(np.abs(v).max(initial=0))),
                  dtype=np.longdouble)
    return balance_ok([M @ vn, -M @ v] + [-x for x in impulses], tol, np.abs(M) @ vel)


def mu_of(U, n_c):
    u = A(U)
    if u.ndim == 0:
        return np.full(n_c, u)
    return np.diag(u) if u.ndim == 2 else u


def corrected_gap(kw, psi, h):
    """Ψ̃ of the penetration correction (baumgarte b, max_correction_speed) as the docs state it."""
    b = float(kw.get("baumgarte", 1.0) if kw.get("baumgarte", OMIT) is not OMIT else 1.0)
    vmax = kw.get("max_correction_speed")
    vmax = None if vmax is OMIT else vmax
    out = np.where(psi < 0, b * psi, psi)
    if vmax is not None:
        out = np.where(psi < 0, np.maximum(out, -h * float(vmax)), out)
    return out


def given(kw, name):
    """Whether the argument ``name`` was passed (not left out, not None)."""
    x = kw.get(name, OMIT)
    return x is not None and x is not OMIT


def opt(kw, name, shape):
    return A(kw[name]).reshape(shape) if given(kw, name) else np.zeros(shape, dtype=np.longdouble)


def jacobian(kw, name, n_v):
    return A(kw[name]) if given(kw, name) else np.zeros((n_v, 0), dtype=np.longdouble)


def check_step(kw, res, tol=TOL):
    """A SOLVED StepResult of mbdcp.step's data ``kw`` solves the step by definition (Trinkle
    2003, eqs. 25–38): momentum, then each complementarity pair."""
    from mbdcp import Status

    if not res.success:
        return "success is False with status SOLVED" if res.status == Status.SOLVED else None
    bad = nonfinite(res)
    if bad:
        return f"SOLVED with a non-finite {bad}"
    M, Wn, D, E = A(kw["M"]), A(kw["Wn"]), A(kw["D"]), A(kw["E"])
    n_v, n_c, m = M.shape[0], Wn.shape[1], D.shape[1]
    mu, v, h = mu_of(kw["U"], n_c), A(kw["v"]), float(np.asarray(kw["h"], dtype=float))
    Wb, Dj = jacobian(kw, "Wb", n_v), jacobian(kw, "Dj", n_v)
    n_b, m_j = Wb.shape[1], Dj.shape[1]
    Ej = A(kw["Ej"]) if m_j else np.zeros((0, 0))
    vn, pn, beta, sigma = A(res.v_next), A(res.p_n), A(res.beta), A(res.sigma)
    pb, bj, sj = A(res.p_b), A(res.beta_j), A(res.sigma_j)
    p_ext = opt(kw, "p_ext", n_v)
    # vn carries rounding relative to the largest velocity and to the velocity changes it sums
    # (M^-1 times each impulse: a body at rest under gravity ends at 1e-17, not 0): M vn and J^T vn
    # are judged at that scale
    with np.errstate(all="ignore"):
        parts = [M @ v, p_ext, Wn @ pn, D @ beta, Wb @ pb, Dj @ bj]
        change = np.abs(np.linalg.inv(np.asarray(M, dtype=float))) @ sum(np.abs(np.asarray(x, dtype=float)) for x in parts)
    vel = np.full(n_v, max(float(np.abs(vn).max(initial=0)), float(np.abs(v).max(initial=0)),
                           float(np.nan_to_num(change, posinf=0.0).max(initial=0))), dtype=np.longdouble)
    if not momentum_ok(M, vn, v, [p_ext, Wn @ pn, D @ beta, Wb @ pb, Dj @ bj], tol):
        return "SOLVED but the momentum balance fails"
    psi = corrected_gap(kw, opt(kw, "psi_n", n_c), h) / h
    dpsi_n, dpsi_f = opt(kw, "dpsi_n", n_c), opt(kw, "dpsi_f", m)
    rows = [(pn, Wn, [psi, dpsi_n], "p_n"), (beta, D, [dpsi_f, E @ sigma], "beta"),
            (sigma, None, [mu * pn, -E.T @ beta], "sigma"), (bj, Dj, [Ej @ sj], "beta_j"),
            (sj, None, [opt(kw, "beta_max", Ej.shape[1]), -Ej.T @ bj], "sigma_j")]
    for z, J, terms, name in rows:
        speed = [] if J is None else [J.T @ vn]
        extra = 0 if J is None else np.abs(J.T) @ vel
        if z.size and not pairs_ok(z, sum(speed + terms), sum(np.abs(t) for t in speed + terms) + extra, tol):
            return f"SOLVED but {name} is not complementary to its row"
    if n_b and not balance_ok([Wb.T @ vn, opt(kw, "theta", n_b) / h, opt(kw, "dtheta", n_b)], tol, np.abs(Wb.T) @ vel):
        return "SOLVED but the joint rows fail"
    return None


def check_lcp(M, q, z, tol=TOL):
    M, q, z = A(M), A(q), A(z)
    if not np.all(np.isfinite(z)):
        return "SOLVED with a non-finite z"
    w = M @ z + q
    s = np.abs(q) + np.abs(M) @ np.abs(z)
    ok = np.all(z >= 0) and np.all(w >= -tol * s - FLOOR) and np.all((z == 0) | (w <= tol * s + FLOOR))
    return None if ok else "SOLVED but z does not solve the LCP"


def check_success_finite(kw, res):
    """Any result: a success holds no NaN or infinity (an unsuccessful one says why in its status)."""
    ok = getattr(res, "success", True)
    if isinstance(ok, np.ndarray):
        ok = bool(ok.any())
    if ok:
        bad = nonfinite(res)
        if bad:
            return f"success with a non-finite {bad}"
    return None


def solved_check(check):
    """A check of a solver's result by definition, run only on a success (after
    check_success_finite: any result with success must be finite; an unsuccessful one says why)."""
    @functools.wraps(check)
    def run(kw, res, *args):
        bad = check_success_finite(kw, res)
        return bad if bad or not res.success else check(kw, res, *args)
    return run


def check_finite(kw, res):
    bad = nonfinite(res)
    return f"non-finite {bad}" if bad else None


def dense_mass(M):
    """M as a dense longdouble matrix from dense, sparse or diagonal blocks (n, k, k)."""
    a = A(M)
    if a.ndim == 3:
        n, k, _ = a.shape
        out = np.zeros((n * k, n * k), dtype=np.longdouble)
        for i in range(n):
            out[i * k:(i + 1) * k, i * k:(i + 1) * k] = a[i]
        return out
    return a


@solved_check
def check_ccp(kw, res, tol=1e-5):
    """A SOLVED CCPResult: finite, impulses in the cone, momentum balanced."""
    g = A(res.gamma)
    mu = mu_of(kw["mu"], g.shape[0])
    scale = max(float(np.abs(g).max(initial=0.0)), TINY)
    if np.any(g[:, 0] < -tol * scale) or np.any(np.hypot(g[:, 1], g[:, 2]) > mu * g[:, 0] + tol * scale):
        return "SOLVED with an impulse outside the friction cone"
    M, Wn, Wt, v = dense_mass(kw["M"]), A(kw["Wn"]), A(kw["Wt"]), A(kw["v"])
    Wb = jacobian(kw, "Wb", M.shape[0])
    p_ext = opt(kw, "p_ext", M.shape[0])
    if not momentum_ok(M, A(res.v_next), v, [p_ext, Wn @ g[:, 0], Wt @ g[:, 1:].ravel(), Wb @ A(res.p_b)], 1e-5):
        return "SOLVED but the momentum balance fails"
    return None
