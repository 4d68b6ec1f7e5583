"""The public callables of mbdcp with a valid call each (see surface.py): solvers, batch,
derivatives, layers, io, study, mechanics, widgets, examples and testing helpers."""
import inspect
import os

import numpy as np
import scipy.sparse as sp
from surface import (
    OMIT,
    TINY,
    TOL,
    A,
    Arg,
    Fresh,
    Target,
    balance_ok,
    check_ccp,
    check_finite,
    check_lcp,
    check_step,
    check_success_finite,
    jacobian,
    momentum_ok,
    nonfinite,
    opt,
    pairs_ok,
    solved_check,
)

import mbdcp
from mbdcp.formulations import registry

M6 = np.diag([1.0, 1.0, 1.0, 0.4, 0.4, 0.4])
WN = np.array([[0.0, 0, 1, 0, 0, 0]]).T
D4 = np.array([[1.0, -1, 0, 0], [0, 0, 1, -1], [0, 0, 0, 0], [0, 0, 1, -1], [-1, 1, 0, 0], [0, 0, 0, 0]])
E4 = np.ones((4, 1))
U1 = np.array([0.2])
V6 = np.array([2.0, 0, 0, 0, 0, 0.1])
H = 0.05
P6 = np.array([0, 0, -9.81 * H, 0, 0, 0])
WT = np.array([[1.0, 0, 0, 0, -1, 0], [0, 1, 0, 1, 0, 0]]).T
WB = np.array([[0.0, 1, 0, 0, 0, 0]]).T
DJ = np.array([[0.0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, -1]]).T
EJ = np.ones((2, 1))
K6 = np.array([0, 0, -9.81, 0, 0, 0])
LCP_M = np.array([[2.0, 1.0], [1.0, 2.0]])
LCP_Q = np.array([-5.0, -6.0])

# valid but extreme masses: solved, or a status or message that says why (never a LinAlgError)
MASS_EXTREMES = (("mass ratio 1e30", np.diag([1e30, 1e30, 1e30, 0.4, 0.4, 0.4]), "accept"),
                 ("condition 1e16", np.diag([1.0, 1.0, 1.0, 1e-16, 1e-16, 1e-16]), "accept"),
                 ("condition 1e20", np.diag([1.0, 1.0, 1.0, 1e-20, 1e-20, 1e-20]), "accept"),
                 ("not SPD", np.diag([1.0, 1.0, 1.0, -1.0, 1.0, 1.0]), "refuse"),
                 ("not symmetric", M6 + np.triu(np.ones((6, 6)), 1), "refuse"))


def arr(name, valid, domain="real", optional=False, **kw):
    return Arg(name, "array", valid, domain, optional, **kw)


def num(name, valid=OMIT, domain="pos", optional=False, **kw):
    return Arg(name, "scalar", valid, domain, optional, **kw)


def integer(name, valid=OMIT, domain=1, optional=False, **kw):
    return Arg(name, "int", valid, domain, optional, **kw)


def option(name, choices, valid=OMIT, optional=False):
    return Arg(name, "option", valid, tuple(choices), optional)


def flag(name, valid=OMIT):
    return Arg(name, "flag", valid, "any", True)


def obj(name, valid=OMIT, optional=False, wrong=(), aliases=()):
    return Arg(name, "object", valid, "any", optional, aliases=aliases, wrong=tuple(wrong))


COEFFICIENT_FORMS = ("0-d", "column")  # a scalar for all contacts, diag(mu) of one contact


def coefficients(name, valid=U1):
    return Arg(name, "array", valid, "nonneg", valid_too=COEFFICIENT_FORMS)


def lemke_opts():
    return [num("tol", domain="open01", optional=True), integer("max_iter", optional=True)]


def correction():
    return [num("max_correction_speed", optional=True), num("baumgarte", domain="unit")]


def contact_args(mass=True):
    """M, Wn, D, E, U, v of the sphere of Trinkle (2003), section 4."""
    out = [arr("M", M6, extremes=MASS_EXTREMES)] if mass else []
    return out + [arr("Wn", WN), arr("D", D4), arr("E", E4, "grouping"), coefficients("U"), arr("v", V6)]


def step_keywords(joints=True, surfaces=True, friction=True):
    out = [arr("p_ext", P6, optional=True), arr("psi_n", np.zeros(1), optional=True)]
    if surfaces:
        out += [arr("dpsi_n", np.zeros(1), optional=True), arr("dpsi_f", np.zeros(4), optional=True)]
    if joints:
        out += [arr("Wb", WB, optional="either"), arr("theta", np.zeros(1), optional=True),
                arr("dtheta", np.zeros(1), optional=True)]
    if friction:
        out += [arr("Dj", DJ, optional="either"), arr("Ej", EJ, "grouping", optional="either"),
                arr("beta_max", np.array([0.1]), "nonneg", optional="either")]
    return out


STEP_POS = ("M", "Wn", "D", "E", "U", "v", "h")


# ---------------------------------------------------------------- checks of specific results

def check_lemke(kw, res):
    if not res.success:
        return None
    return check_lcp(kw["M"], kw["q"], res.z)


@solved_check
def check_fixed_point(kw, res):
    """A converged fixed point: finite, p_n >= 0, momentum balanced (no joint friction)."""
    M, Wn, D, v = A(kw["M"]), A(kw["Wn"]), A(kw["D"]), A(kw["v"])
    n_v = M.shape[0]
    Wb, p_ext = jacobian(kw, "Wb", n_v), opt(kw, "p_ext", n_v)
    impulses = [p_ext, Wn @ A(res.p_n), D @ A(res.beta), Wb @ A(res.p_b)]
    if not momentum_ok(M, A(res.v_next), v, impulses) or np.any(
            A(res.p_n) < -TOL * max(float(np.abs(A(res.p_n)).max(initial=0)), TINY)):
        return "SOLVED but the momentum balance or p_n >= 0 fails"
    return None


@solved_check
def check_full_rank(kw, res):
    M, Wn, Wt, v, h = A(kw["M"]), A(kw["Wn"]), A(kw["Wt"]), A(kw["v"]), float(kw["h"])
    n_v, n_c = Wn.shape
    p_ext, psi = opt(kw, "p_ext", n_v), opt(kw, "psi_n", n_c)
    vn, pn = A(res.v_next), A(res.p_n)
    if not momentum_ok(M, vn, v, [p_ext, Wn @ pn, Wt @ A(res.p_t).ravel()], 1e-5):
        return "SOLVED but the momentum balance fails"
    vel = max(float(np.abs(vn).max(initial=0)), float(np.abs(v).max(initial=0)))
    if not pairs_ok(pn, Wn.T @ vn + psi / h, np.abs(Wn.T).sum(axis=1) * vel + np.abs(psi / h), 1e-5):
        return "SOLVED but p_n is not complementary to the normal velocity"
    return None


@solved_check
def check_full_rank_acceleration(kw, res):
    M, Wn, Wt, k = A(kw["M"]), A(kw["Wn"]), A(kw["Wt"]), A(kw["k"])
    if not balance_ok([M @ A(res.a), -k, -Wn @ A(res.c_n), -Wt @ A(res.c_t).ravel()], 1e-5):
        return "SOLVED but M a = k + Wn c_n + Wt c_t fails"
    return None


@solved_check
def check_instantaneous(kw, res):
    c_n = A(res.c_n)
    if np.any(c_n < -TOL * max(float(np.abs(c_n).max(initial=0)), TINY)):
        return "SOLVED with a negative normal force"
    return None


def check_friction_basis(kw, res):
    n = A(kw["normal"])
    n = n / np.sqrt(np.sum((n / np.abs(n).max()) ** 2)) / np.abs(n).max()
    R = A(res)
    if not np.all(np.isfinite(R)):
        return "non-finite directions"
    if R.shape[1] and (np.abs(n @ R).max() > 1e-12 or np.abs(np.sqrt((R * R).sum(axis=0)) - 1).max() > 1e-12):
        return "directions not unit or not tangent to the normal"
    return None


def check_rotation(kw, res):
    R = A(res)
    if not np.all(np.isfinite(R)):
        return "non-finite rotation"
    Rt = np.swapaxes(R, -1, -2)
    if np.abs(R @ Rt - np.eye(3)).max() > 1e-12 or np.any(np.abs(np.linalg.det(R.astype(float)) - 1) > 1e-12):
        return "not a rotation matrix"
    return None


def check_batch_lemke(kw, res):
    Ms, qs = np.asarray(A(kw["Ms"]), dtype=float), np.asarray(A(kw["qs"]), dtype=float)
    for i in np.flatnonzero(res.success)[:20]:
        bad = check_lcp(Ms if Ms.ndim == 2 else Ms[min(i, len(Ms) - 1)], qs[i], res.z[i])
        if bad:
            return f"instance {i}: {bad}"
    return None


_BATCH_NAMES = {"Ms": "M", "Wns": "Wn", "Ds": "D", "Es": "E", "Us": "U", "vs": "v"}
_BATCH_NDIM = {"M": 2, "Wn": 2, "D": 2, "E": 2, "U": 1, "v": 1, "h": 0, "p_ext": 1, "psi_n": 1, "dpsi_n": 1,
               "dpsi_f": 1, "Wb": 2, "theta": 1, "dtheta": 1, "Dj": 2, "Ej": 2, "beta_max": 1}


def check_batch_step(kw, res):
    for i in np.flatnonzero(res.success)[:10]:
        one = {}
        for k, x in kw.items():
            name = _BATCH_NAMES.get(k, k)
            if name not in _BATCH_NDIM or x is None or x is OMIT:
                continue
            a = A(x)
            one[name] = a[min(i, len(a) - 1)] if a.ndim == _BATCH_NDIM[name] + 1 else a
        bad = check_step(one, res[i])
        if bad:
            return f"instance {i}: {bad}"
    return None


def check_compare(kw, table):
    rows = table.reset_index().to_dict("records") if hasattr(table, "reset_index") else list(table)
    for r in rows:
        if r["success"]:
            for col in ("v_next", "p_n", "dissipated_energy"):
                if nonfinite(np.asarray(r[col], dtype=float)) or not np.all(np.isfinite(np.asarray(r[col], float))):
                    return f"row {r['formulation']}: success with a non-finite {col}"
    return None


def solver_targets():
    fb = Arg("normal", "array", np.array([0.0, 0.0, 1.0]),
             extremes=(("[1e300]*3", [1e300] * 3, "accept"), ("[1e-300]*3", [1e-300] * 3, "accept"),
                       ("denormal", [5e-324, 0, 0], "accept"), ("zero", [0.0, 0, 0], "refuse")))
    return [
        Target("mbdcp.lemke", mbdcp.lemke, [arr("M", LCP_M), arr("q", LCP_Q)] + lemke_opts()
               + [flag("trace"), obj("basis", optional=True, wrong=(("floats", np.ones(2)), ("short", np.ones(1, bool))))],
               ("M", "q"), check_lemke),
        Target("mbdcp.lcp_residual", mbdcp.lcp_residual, [arr("M", LCP_M), arr("q", LCP_Q), arr("z", np.ones(2))],
               ("M", "q", "z"), check_finite),
        Target("mbdcp.step", mbdcp.step, contact_args() + [num("h", H)] + step_keywords()
               + [option("method", ("lemke",)), *lemke_opts(), flag("return_lcp"),
                  obj("warm_start", optional=True, wrong=(("floats", np.ones(4)),)), *correction()], STEP_POS,
               check_step),
        Target("mbdcp.fixed_point", mbdcp.fixed_point, contact_args() + [num("h", H)] + step_keywords(False, False, False)
               + [arr("Wb", WB, optional="either"), arr("theta", np.zeros(1), optional=True),
                  integer("algorithm", domain=(1, 3)), num("tol"), integer("max_iter"), *correction(),
                  obj("warm_start", optional=True), option("crash", ("ccp",), optional=True)], STEP_POS,
               check_fixed_point),
        Target("mbdcp.relax.p1", mbdcp.relax.p1, contact_args() + [num("h", H), arr("gamma", np.zeros(1))]
               + step_keywords(False, False, False) + lemke_opts() + [flag("return_lcp")], STEP_POS + ("gamma",),
               check_fixed_point),
        Target("mbdcp.relax.p2", mbdcp.relax.p2, contact_args() + [num("h", H), arr("lam", np.zeros(1), "nonneg")]
               + step_keywords(False, False, False) + lemke_opts(), STEP_POS + ("lam",), check_fixed_point),
        Target("mbdcp.relax.sliding_speed", mbdcp.relax.sliding_speed, [arr("D", D4), arr("E", E4, "grouping"),
                                                                        arr("v", V6)], ("D", "E", "v"), check_finite),
        Target("mbdcp.full_rank_step", mbdcp.full_rank_step,
               [arr("M", M6, extremes=MASS_EXTREMES), arr("Wn", WN), arr("Wt", WT), coefficients("mu"),
                arr("v", V6), num("h", H), integer("n_d"), num("rho", optional=True), arr("p_ext", P6, optional=True),
                arr("psi_n", np.zeros(1), optional=True), *lemke_opts(), flag("return_lcp"),
                num("compliance", domain="nonneg", optional=True)],
               ("M", "Wn", "Wt", "mu", "v", "h"), check_full_rank),
        Target("mbdcp.full_rank_acceleration", mbdcp.full_rank_acceleration,
               [arr("M", M6, extremes=MASS_EXTREMES), arr("Wn", WN), arr("Wt", WT), coefficients("mu"),
                arr("v", np.zeros(6)), arr("k", K6), integer("n_d"), num("rho", optional=True),
                arr("dWn_v", np.zeros(1), optional=True), arr("dWt_v", np.zeros(2), optional=True), num("slide_tol"),
                *lemke_opts()], ("M", "Wn", "Wt", "mu", "v", "k"), check_full_rank_acceleration),
        Target("mbdcp.ccp", mbdcp.ccp,
               [arr("M", M6, extremes=MASS_EXTREMES + (("denormal", M6 * 5e-324, "either"),), valid_too=("3-d",)),
                arr("Wn", WN),
                arr("Wt", WT), coefficients("mu"), arr("v", V6), num("h", H), arr("p_ext", P6, optional=True),
                arr("psi_n", np.zeros(1), optional=True), arr("Wb", WB, optional="either"),
                arr("theta", np.zeros(1), optional=True), option("method", ("apgd", "pjacobi", "pgs")), num("tol"),
                integer("max_iter"), obj("warm_start", optional=True), num("omega", domain=("range", 5e-324, 1.999),
                                                                           optional=True),
                *correction(), arr("dpsi_t", np.zeros(2), optional=True)],
               ("M", "Wn", "Wt", "mu", "v", "h"), check_ccp),
        Target("mbdcp.instantaneous", mbdcp.instantaneous,
               contact_args()[:5] + [arr("v", np.zeros(6)), arr("k", K6), arr("dWn_v", np.zeros(1), optional=True),
                                     arr("dD_v", np.zeros(4), optional=True), num("slide_tol"), *lemke_opts(),
                                     arr("Wb", WB, optional="either"), arr("dWb_v", np.zeros(1), optional=True)],
               ("M", "Wn", "D", "E", "U", "v", "k"), check_instantaneous),
        Target("mbdcp.friction_basis", mbdcp.friction_basis, [fb, integer("n_d", 4, domain=0)], ("normal", "n_d"),
               check_friction_basis),
        Target("mbdcp.coulomb", mbdcp.coulomb, [arr("W", np.eye(3)), arr("q", np.array([-1.0, 2, 0])),
                                                coefficients("mu", np.array([0.5])),
                                                option("method", ("fixed_point", "nsgs")), num("tol"),
                                                integer("max_iter", optional=True), option("inner", ("apgd", "pgs")),
                                                integer("spacedim", domain=(2, 3))],
               ("W", "q", "mu"), check_success_finite),
        Target("mbdcp.ccp_local", mbdcp.ccp_local, [arr("W", np.eye(3)), arr("q", np.array([-1.0, 2, 0])),
                                                    coefficients("mu", np.array([0.5])),
                                                    option("method", ("apgd", "pgs")), num("tol"),
                                                    integer("max_iter", optional=True)],
               ("W", "q", "mu"), check_success_finite),
        Target("mbdcp.compare", mbdcp.compare, contact_args() + [num("h", H), arr("p_ext", P6, optional=True),
                                                                  arr("psi_n", np.zeros(1), optional=True),
                                                                  obj("formulations", optional=True,
                                                                      wrong=(("5", 5), ("['nope']", ["nope"]))),
                                                                  obj("options", optional=True,
                                                                      wrong=(("list", [1]), ("bad key", {"x": {}})))],
               STEP_POS, check_compare),
        Target("mbdcp.tools.compare.tangent_pairs", mbdcp.tools.compare.tangent_pairs,
               [arr("D", D4, valid_too=("extra row",)), arr("E", E4, "grouping")], ("D", "E"), check_finite),
        Target("mbdcp.formulations.ccp.mass_inverse", mbdcp.formulations.ccp.mass_inverse,
               [arr("M", M6, extremes=MASS_EXTREMES, valid_too=("3-d",))], ("M",), check_finite),
        Target("mbdcp.formulations.ccp.cone_jacobian", mbdcp.formulations.ccp.cone_jacobian,
               [arr("Wn", WN), arr("Wt", WT), arr("Wb", WB, optional=True, valid_too=("extra column",))], ("Wn", "Wt"),
               check_finite),
        Target("mbdcp.formulations.full_rank.tangent_directions", mbdcp.formulations.full_rank.tangent_directions,
               [integer("n_d", 2)], ("n_d",), check_finite),
    ]


def _data_args():
    """Every problem datum and common option of a time step by name, as a formulation takes it
    (the sphere of Trinkle (2003), section 4; Wt its tangent pairs)."""
    out = contact_args() + step_keywords() + [num("h", H), coefficients("mu"), arr("Wt", WT),
                                              arr("dpsi_t", np.zeros(2), optional=True), *lemke_opts(),
                                              obj("warm_start", optional=True), *correction()]
    return {a.name: a for a in out}


def formulation_target(f):
    """The target of a registered formulation's solver, derived from its signature and its entry:
    its positional problem data and the keywords it models (:func:`_data_args`), the option
    ``algorithm`` names with its choices; keywords of no known name are left out of the sweep."""
    known = _data_args()
    if f.algorithm is not None:
        key, _, choices = f.algorithm
        known[key] = (option(key, choices) if all(isinstance(c, str) for c in choices)
                      else integer(key, domain=(min(choices), max(choices))))
    args, positional = [], []
    for p in inspect.signature(f.function).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (p.name not in known and p.default is not p.empty):
            continue
        if p.name not in known:
            raise ValueError(f"{f.name}: no valid value known for its argument {p.name}; write its target by hand")
        args.append(known[p.name])
        if p.default is p.empty:
            positional.append(p.name)
    return Target(f"mbdcp.{f.function.__name__}", f.function, args, tuple(positional), check_success_finite)


def formulation_targets(written):
    """A derived target (:func:`formulation_target`) for every registered formulation that poses a
    time step and has no target among ``written`` (those written by hand, with their own checks)."""
    names = {t.name for t in written}
    return [formulation_target(f) for f in registry.formulations()
            if f.pose is not None and f"mbdcp.{f.function.__name__}" not in names]


BATCH_FORMS = ("3-d", "column")  # an input with a leading batch axis of 1


def batch_targets():
    Ms, qs = np.stack([LCP_M] * 3), np.stack([LCP_Q, -LCP_Q, LCP_Q * 0.5])
    vs = np.stack([V6, V6 * 0.5, V6 * 0])
    batch_lemke = Target("mbdcp.batch.lemke", mbdcp.batch.lemke, [arr("Ms", Ms), arr("qs", qs), *lemke_opts(),
                                                                  integer("threads", optional=True)],
                         ("Ms", "qs"), check_batch_lemke)
    step_args = [arr("Ms", M6, extremes=MASS_EXTREMES), arr("Wns", WN), arr("Ds", D4), arr("Es", E4, "grouping"),
                 coefficients("Us"), arr("vs", vs), num("h", H)] + step_keywords() + lemke_opts() \
        + [integer("threads", optional=True)]
    for a in step_args:  # a leading batch axis of 1 (or of B for the velocities) is valid
        a.valid_too += BATCH_FORMS + (("extra row",) if a.name == "vs" else ())
    batch_step = Target("mbdcp.batch.step", mbdcp.batch.step, step_args, ("Ms", "Wns", "Ds", "Es", "Us", "vs", "h"),
                        check_batch_step)

    def index(i):
        return mbdcp.batch.lemke(Ms, qs)[i]
    return [batch_lemke, batch_step,
            Target("BatchLemkeResult[i]", index, [Arg("i", "int", 1, (-3, 2))], ("i",), check_finite)]


# ---------------------------------------------------------------- derivatives and layers

def _lcp_res():
    return mbdcp.lemke(LCP_M, LCP_Q)


def _step_data():
    return {"M": M6, "Wn": WN, "D": D4, "E": E4, "U": U1, "v": V6, "h": H, "p_ext": P6, "psi_n": np.zeros(1)}


def _ccp_data():
    return {"M": M6, "Wn": WN, "Wt": WT, "mu": U1, "v": V6, "h": H, "p_ext": P6, "psi_n": np.zeros(1)}


_SOLVE = object()  # res left out: the derivative's target solves its own data first


def check_derivative(kw, res):
    """A derivative's fields finite; its margin a number >= 0 (infinity: no pair decided)."""
    bad = nonfinite({k: getattr(res, k, None) for k in res.__dataclass_fields__ if k != "margin"})
    margin = getattr(res, "margin", 0.0)
    if bad or not margin >= 0:
        return f"non-finite {bad}" if bad else f"margin {margin}"
    return None


def _derivative(solve, derive, n_pos):
    """derive(*data, res, **keywords) with res solved from the same data unless given (so that a
    bad datum reaches the derivative as data, not as a result of other data)."""
    def call(*args, res=_SOLVE, degenerate_tol=1e-9, **kw):
        if res is _SOLVE:
            res = solve(*args[:n_pos], **kw)
        return derive(*args[:n_pos], res, degenerate_tol=degenerate_tol, **kw)
    return call


def derivative_targets():
    d = mbdcp.derivatives
    wrong_res = (("a StepResult", Fresh(lambda: mbdcp.step(**_step_data()))), ("5", 5))
    res = obj("res", wrong=wrong_res)
    tol = num("degenerate_tol", 1e-9)

    def lcp_jvp(dM=None, dq=None):
        return d.lcp(LCP_M, LCP_Q, _lcp_res()).jvp(dM=dM, dq=dq)

    def lcp_vjp(gz):
        return d.lcp(LCP_M, LCP_Q, _lcp_res()).vjp(gz)

    def step_jvp(**t):
        return d.step(**_step_data(), res=mbdcp.step(**_step_data())).jvp(**t)

    def step_vjp(**g):
        return d.step(**_step_data(), res=mbdcp.step(**_step_data())).vjp(**g)
    out = [
        Target("mbdcp.derivatives.lcp", _derivative(lambda M, q: mbdcp.lemke(M, q), d.lcp, 2),
               [arr("M", LCP_M), arr("q", LCP_Q), res, tol], ("M", "q"), check_derivative),
        Target("LCPDerivative.jvp", lcp_jvp, [arr("dM", np.eye(2), optional=True), arr("dq", np.ones(2), optional=True)],
               (), check_finite),
        Target("LCPDerivative.vjp", lcp_vjp, [arr("gz", np.ones(2))], ("gz",), check_finite),
        Target("mbdcp.derivatives.step", _derivative(mbdcp.step, d.step, 7),
               contact_args() + [num("h", H), obj("res", wrong=wrong_res[1:]), arr("p_ext", P6, optional=True),
                                 arr("psi_n", np.zeros(1), optional=True),
                                 tol], STEP_POS, check_derivative),
        Target("StepDerivative.jvp", step_jvp, [arr("U", np.ones(1), optional=True, valid_too=COEFFICIENT_FORMS),
                                               arr("v", np.ones(6), optional=True),
                                               num("h", 1.0, "any", optional=True)], (), check_finite),
        Target("StepDerivative.vjp", step_vjp, [arr("v_next", np.ones(6), optional=True),
                                               arr("p_n", np.ones(1), optional=True)], (), check_finite),
        Target("mbdcp.derivatives.ccp", _derivative(lambda *a, **k: mbdcp.ccp(*a, **k, tol=1e-12), d.ccp, 6),
               [arr("M", M6), arr("Wn", WN), arr("Wt", WT), coefficients("mu"), arr("v", V6), num("h", H), res,
                arr("p_ext", P6, optional=True), arr("psi_n", np.zeros(1), optional=True), tol],
               ("M", "Wn", "Wt", "mu", "v", "h"), check_derivative),
    ]
    for t in out:  # res is solved from the data here: a message about res is one about that data
        if t.name.startswith("mbdcp.derivatives."):
            for a in t.args:
                if a.name != "res":
                    a.aliases += ("res",)
    return out


def _jax_lcp(M, q):
    import jax

    jax.config.update("jax_enable_x64", True)
    import mbdcp.jax

    return np.asarray(mbdcp.jax.lcp(M, q))


def _torch_lcp(M, q):
    import mbdcp.torch

    return mbdcp.torch.lcp(M, q).numpy()


def layer_targets():
    def check(kw, z):
        return check_lcp(kw["M"], kw["q"], z)
    return [Target("mbdcp.jax.lcp", _jax_lcp, [arr("M", LCP_M), arr("q", LCP_Q)], ("M", "q"), check, slow=True),
            Target("mbdcp.torch.lcp", _torch_lcp, [arr("M", LCP_M), arr("q", LCP_Q)], ("M", "q"), check, slow=True)]


# ---------------------------------------------------------------- io

def _write(path, text):
    with open(path, "w") as fh:
        fh.write(text)
    return path


def io_files(tmp):
    """Valid and malformed problem files in the directory tmp: {name: path}."""
    from mbdcp import io

    f = {"missing": os.path.join(tmp, "missing.dat"), "directory": tmp,
         "empty": _write(os.path.join(tmp, "empty.dat"), ""),
         "garbage": _write(os.path.join(tmp, "garbage.dat"), "hello world ;; 1 2 three\n"),
         "lcp": _write(os.path.join(tmp, "lcp.dat"), "2\n0\n2\n2\n2 2\n1 2\n3 4\n-1 -1\n"),
         "lcp_huge": _write(os.path.join(tmp, "huge.dat"), "1000000000000\n0\n1000000000000\n1000000000000\n1\n"),
         "mlcp": _write(os.path.join(tmp, "mlcp.dat"), "0 1\n1\n1\n2\n1\n1\n1\n1\n-1\n"),
         "fc": _write(os.path.join(tmp, "fc.dat"), "3\n1\n0\n3\n3\n3 3\n1 0 0\n0 1 0\n0 0 1\n-1 2 0\n0.5\n"),
         "fc_huge": _write(os.path.join(tmp, "fc_huge.dat"), "3\n100000000000\n0\n1 1\n"),
         "binary": os.path.join(tmp, "junk.hdf5"), "fclib": os.path.join(tmp, "local.hdf5"),
         "fclib_huge": os.path.join(tmp, "huge.hdf5")}
    with open(f["binary"], "wb") as fh:
        fh.write(bytes(range(256)) * 4)
    problem = io.LocalProblem(sp.eye(3, format="csr"), [-1.0, 2.0, 0.0], [0.5], 3)
    io.write_fclib(f["fclib"], problem)
    io.write_fclib(f["fclib_huge"], problem)
    import h5py

    with h5py.File(f["fclib_huge"], "r+") as h5:
        for key, value in (("m", 10 ** 9), ("n", 10 ** 9)):
            del h5[f"fclib_local/W/{key}"]
            h5[f"fclib_local/W/{key}"] = np.array([value], dtype=np.int64)
    return f


ANY_LENGTH = ("one more", "one less")  # a Solution's vectors have the length of their problem


def io_targets(tmp):
    from mbdcp import io

    f = io_files(tmp)
    bad_paths = tuple((name, f[name]) for name in ("missing", "directory", "empty", "garbage", "binary")) \
        + (("int", 5), ("bytes path", os.fsencode(f["missing"])))
    local = Fresh(lambda: io.LocalProblem(sp.eye(3, format="csr"), [-1.0, 2.0, 0.0], [0.5], 3))

    def path(valid, *extra):
        return Arg("path", "path", valid, "any", wrong=bad_paths + extra)

    def read_back(kw, res):
        got = io.read_fclib(kw["path"]).problem
        return None if np.array_equal(got.q, kw["problem"].q) else "the file does not read back"
    return [
        Target("mbdcp.io.read_siconos_lcp", io.read_siconos_lcp, [path(f["lcp"], ("huge size", f["lcp_huge"]))],
               ("path",), check_finite),
        Target("mbdcp.io.read_siconos_mlcp", io.read_siconos_mlcp, [path(f["mlcp"], ("lcp file", f["lcp_huge"]))],
               ("path",), check_finite),
        Target("mbdcp.io.read_siconos_fc", io.read_siconos_fc, [path(f["fc"], ("huge size", f["fc_huge"])),
                                                                option("kind", ("local", "global"), optional=True)],
               ("path",), check_finite),
        Target("mbdcp.io.read_fclib", io.read_fclib, [path(f["fclib"], ("huge size", f["fclib_huge"]),
                                                            ("siconos text", f["lcp"]))], ("path",), check_finite),
        Target("mbdcp.io.write_fclib", io.write_fclib,
               [Arg("path", "path", os.path.join(tmp, "out.hdf5"), "any",
                    wrong=(("directory", tmp), ("int", 5), ("no such dir", os.path.join(tmp, "no", "x.hdf5"))),
                    valid_too=("str 'abc'",)),
                obj("problem", local, wrong=(("5", 5),)), obj("solution", optional=True, wrong=(("5", 5),)),
                obj("guesses", optional=True, wrong=(("5", 5), ("[5]", [5]))),
                option("storage", ("csc", "csr", "triplet"), optional=True)], ("path", "problem"), read_back),
        Target("mbdcp.io.LocalProblem", io.LocalProblem,
               [arr("W", np.eye(3), extremes=(("empty sparse 1e10", sp.coo_matrix((10 ** 10, 10 ** 10))),)),
                arr("q", np.array([-1.0, 2, 0])), arr("mu", np.array([0.5]), "nonneg"),
                integer("spacedim", 3, domain=(2, 3)),
                Arg("info", "object", OMIT, "any", True, wrong=(("list", [1]),), valid_too=("dict",))],
               ("W", "q", "mu", "spacedim"), check_finite),
        Target("mbdcp.io.GlobalProblem", io.GlobalProblem,
               [arr("M", np.eye(3), extremes=(("empty sparse 1e10", sp.coo_matrix((10 ** 10, 10 ** 10))),)),
                arr("H", np.eye(3)), arr("f", np.zeros(3)), arr("w", np.zeros(3)), arr("mu", np.array([0.5]), "nonneg"),
                integer("spacedim", 3, domain=(2, 3))], ("M", "H", "f", "w", "mu", "spacedim"), check_finite),
        Target("mbdcp.io.Solution", io.Solution, [arr("v", np.zeros(3), optional=True, valid_too=ANY_LENGTH),
                                                  arr("r", np.zeros(3), optional=True, valid_too=ANY_LENGTH)], (),
               check_finite),
        Target("mbdcp.io.MLCPProblem", io.MLCPProblem,
               [arr("A", np.eye(1)), arr("B", np.eye(1)), arr("C", np.ones((1, 1))), arr("D", np.ones((1, 1))),
                arr("a", np.ones(1)), arr("b", -np.ones(1))], ("A", "B", "C", "D", "a", "b"), check_finite),
    ]


# ---------------------------------------------------------------- study

def _case(x, y=1.0):
    return {"ratio": x / y}


def _solver(problem):
    return mbdcp.lemke(*problem)


def study_targets():
    from mbdcp import study

    problems = {"2x2": (LCP_M, LCP_Q), "1x1": ([[1.0]], [-1.0])}

    def profile_of():
        return study.profile(problems, {"lemke": _solver}, progress=False)

    def rho(tau):
        return profile_of().rho(tau)

    def plot(ax=None, tau_max=None):
        return profile_of().plot(ax=ax, tau_max=tau_max)
    grid_wrong = (("range(10**12)", {"x": range(10 ** 12)}), ("endless", {"x": _endless()}),
                  ("huge product", {"x": list(range(10 ** 4)), "y": list(range(10 ** 4)), "z": list(range(10 ** 4))}),
                  ("bad name", {"not an identifier": [1]}), ("list of ints", [1, 2]))
    return [
        Target("mbdcp.study.run", study.run,
               [obj("func", _case, wrong=(("5", 5),)), obj("grid", {"x": [1.0, 2.0]}, wrong=grid_wrong),
                obj("client", optional=True, wrong=(("5", 5),)), flag("progress", False),
                integer("n_workers", 1, optional=True), flag("processes", False),
                option("start_method", ("fork", "spawn", "forkserver"), optional=True)], ("func", "grid"), None),
        Target("mbdcp.study.profile", study.profile,
               [Arg("problems", "object", problems, "any", wrong=(("5", 5), ("empty", {})), valid_too=("dict", "list of str")),
                obj("solvers", {"lemke": _solver}, wrong=(("5", 5), ("not callable", {"x": 5}))),
                num("tol", 1e-6, "nonneg"), obj("residual", optional=True, wrong=(("5", 5),)),
                integer("repeat"), obj("timer", optional=True, wrong=(("5", 5),)), flag("progress", False)],
               ("problems", "solvers"), None),
        Target("Profile.rho", rho, [num("tau", 1.0, "any", valid_too=("inf", "2 values", "empty list"))], ("tau",),
               check_finite),
        Target("Profile.plot", plot, [obj("ax", optional=True, wrong=(("'x'", "x"),)),
                                      num("tau_max", domain=("range", 1.0000001, 1e300), optional=True)], (), None),
    ]


def _endless():
    k = 0
    while True:
        yield k
        k += 1


# ---------------------------------------------------------------- mechanics

def _mech():
    from mbdcp import mechanics

    return mechanics


def check_body(kw, b):
    bad = nonfinite({k: getattr(b, k) for k, _ in b._fields()})
    if bad:
        return f"non-finite field {bad}"
    if not b.mass > 0 or np.any(np.asarray(b.inertia) <= 0) and np.ndim(b.inertia) < 2:
        return "mass or inertia not positive"
    if hasattr(b, "quaternion") and abs(np.linalg.norm(b.quaternion) - 1) > 1e-12:
        return "quaternion not of unit norm"
    if np.ndim(b.inertia) == 2 and np.linalg.eigvalsh(b.inertia).min() <= 0:
        return "inertia not positive definite"
    return None


def check_wall(kw, w):
    if nonfinite({"point": w.point, "normal": w.normal, "velocity": w.velocity}) or abs(np.linalg.norm(w.normal) - 1) > 1e-12:
        return "a wall with a non-finite or non-unit normal"
    return None


def check_scene(kw, scene):
    s = scene if isinstance(scene, _mech().Scene) else None
    if s is None:
        return None
    f = s.fields()
    bad = nonfinite(dict(f))
    if bad:
        return f"non-finite {bad}"
    if np.any(f["mass"] <= 0) or not np.isfinite(s.kinetic_energy()) or s.kinetic_energy() < 0:
        return "a body with mass <= 0 or a negative kinetic energy"
    if f["position"].ndim != 2 or f["position"].dtype.kind != "f":
        return "positions of the wrong shape or type"
    return None


def check_pile(kw, scene):
    bad = check_scene(kw, scene)
    if bad:
        return bad
    f = scene.fields()
    low = f["position"][:, -1] - f["radius"]
    if np.any(low < -1e-9):
        return "a body starts below the floor"
    return None


def _sphere(**kw):
    m = _mech()
    return m.Body3D(1.0, [0, 0, 0.5], radius=0.5, **kw)


def _scene(**kw):
    m = _mech()
    return m.Scene([_sphere(velocity=(1.0, 0, 0))], [m.Plane([0, 0, 0], [0, 0, 1])], **kw)


def _trajectory():
    return _mech().simulate(_scene(), 0.01, 0.05, progress=False)


def check_trajectory(kw, tr):
    if tr.success:
        for name in ("positions", "velocities", "kinetic_energy", "potential_energy", "max_penetration"):
            if not np.all(np.isfinite(getattr(tr, name))):
                return f"success with a non-finite {name}"
    return None


def body_targets():
    m = _mech()
    vec3 = {"extremes": (("1e300", [1e300] * 3, "either"),)}
    unit_wrong = (("zero", [0.0, 0, 0, 0]), ("[1e300, 1e300, 0, 0]", [1e300, 1e300, 0, 0], "accept"),
                  ("[1e-300, 0, 0, 0]", [1e-300, 0, 0, 0], "accept"), ("denormal", [5e-324, 0, 0, 0], "accept"))
    normal_wrong = (("zero", [0.0, 0, 0]), ("[1e300]*3", [1e300] * 3, "accept"), ("[1e-300, 0, 0]", [1e-300, 0, 0], "accept"))
    return [
        Target("mechanics.Body2D", m.Body2D, [num("mass", 1.0), arr("position", np.zeros(2)), num("theta", 0.0, "real"),
                                             arr("velocity", np.zeros(2)), num("omega", 0.0, "real"),
                                             num("radius", 0.5, "nonneg"), num("inertia", optional=True)],
               ("mass", "position"), check_body),
        Target("mechanics.Body3D", m.Body3D, [num("mass", 1.0), arr("position", np.zeros(3), **vec3),
                                             Arg("quaternion", "array", np.array([1.0, 0, 0, 0]), wrong=unit_wrong),
                                             arr("velocity", np.zeros(3)), arr("omega", np.zeros(3)),
                                             # a box: radius 0.0 with half_extents (both positive is refused), so
                                             # each argument is swept, and a positive radius meets that refusal
                                             num("radius", 0.0, "nonneg"), arr("half_extents", np.full(3, 0.5), "pos", optional=True),
                                             arr("inertia", np.ones(3), "pos", optional=True,
                                                 wrong=(("not SPD", -np.eye(3)), ("wrong shape", np.ones(2))))],
               ("mass", "position"), check_body),
        Target("mechanics.Plane", m.Plane, [arr("point", np.zeros(3)),
                                            Arg("normal", "array", np.array([0.0, 0, 1]), wrong=normal_wrong),
                                            arr("velocity", np.zeros(3))], ("point", "normal"), check_wall),
        Target("mechanics.Line", m.Line, [arr("point", np.zeros(2)), arr("normal", np.array([0.0, 1])),
                                          arr("velocity", np.zeros(2))], ("point", "normal"), check_wall),
        Target("mechanics.quaternion_to_matrix", m.quaternion_to_matrix,
               [Arg("e", "array", np.array([1.0, 0, 0, 0]), wrong=unit_wrong[:1] + (("[2, 0, 0, 0]", [2.0, 0, 0, 0], "either"),)
                    + unit_wrong[1:], valid_too=("3-d",))], ("e",), check_rotation),
        Target("mechanics.B_matrix", m.B_matrix, [arr("e", np.array([1.0, 0, 0, 0]), valid_too=("3-d",))], ("e",),
               check_finite),
        Target("mechanics.Pin", lambda a, b=None, point=None: m.Pin(a, b, point),
               [obj("a", Fresh(_sphere), wrong=(("5", 5), ("Body2D then Body3D", Fresh(lambda: m.Body2D(1.0, [0, 0]))))),
                obj("b", optional=True, wrong=(("5", 5), ("Body2D", Fresh(lambda: m.Body2D(1.0, [0, 0]))))),
                arr("point", np.zeros(3), optional=True)], ("a",), check_finite),
    ]


def scene_targets():
    m = _mech()
    sphere = Fresh(lambda: [_sphere()])
    scene_args = [obj("bodies", sphere, wrong=(("5", 5), ("a body", Fresh(_sphere)), ("[Plane]", [m.Plane([0, 0, 0], [0, 0, 1])]),
                                                ("empty", []), ("generator", Fresh(lambda: (b for b in [_sphere()]))))),
                  obj("walls", Fresh(lambda: [m.Plane([0, 0, 0], [0, 0, 1])]), optional=False,
                      wrong=(("5", 5), ("a Line", Fresh(lambda: [m.Line([0, 0], [0, 1])])))),
                  arr("gravity", np.array([0, 0, -9.81]), optional=True, wrong=(("short", [0.0, -9.81]),)), num("mu", 0.5, "nonneg"),
                  integer("n_d", 4, domain=0, optional=True), num("delta", domain="nonneg", optional=True),
                  obj("joints", Fresh(list), wrong=(("Pin class", m.Pin), ("5", 5)))]

    def method(name):
        def call(*args, **kw):
            return getattr(_scene(), name)(*args, **kw)
        return call

    def update(new):
        s = _scene()
        s.update(new)
        return s

    def setter(name):
        def call(value):
            s = _scene()
            setattr(s, name, value)
            return s
        return call
    update_wrong = (("position 'abc'", {"position": "abc"}), ("NaN position", {"position": np.full((1, 3), np.nan)}),
                    ("unknown key", {"colour": np.zeros(1)}), ("negative mass", {"mass": np.array([-1.0])}),
                    ("wrong shape", {"position": np.zeros((2, 3))}), ("5", 5))
    return [
        Target("mechanics.Scene", m.Scene, scene_args, ("bodies",), check_scene),
        Target("Scene.assemble", method("assemble"),
               [num("h", 0.01), flag("sparse"), obj("contacts", optional=True, wrong=(("5", 5),)),
                option("form", ("dense", "sparse", "blocks"), optional=True),
                obj("parts", ("Wn", "D", "Wt"), wrong=(("['X']", ["X"]), ("5", 5)))], ("h",), check_finite),
        Target("Scene.joint_jacobian", method("joint_jacobian"), [flag("sparse")], (), check_finite),
        Target("Scene.max_penetration", method("max_penetration"), [obj("contacts", optional=True, wrong=(("5", 5),))],
               (), check_finite),
        Target("Scene.advanced", method("advanced"), [arr("v", np.zeros(6)), num("h", 0.01)], ("v", "h"), check_finite),
        Target("Scene.update", update, [obj("new", {"position": np.zeros((1, 3))}, wrong=update_wrong)], ("new",),
               check_scene),
        Target("Scene.mu=", setter("mu"), [num("value", 0.5, "nonneg")], ("value",), check_scene),
        Target("Scene.delta=", setter("delta"), [num("value", 0.1, "nonneg")], ("value",), check_scene),
        Target("Scene.n_d=", setter("n_d"), [integer("value", 4, domain=0)], ("value",), check_scene),
        Target("Scene.gravity=", setter("gravity"), [arr("value", np.array([0, 0, -9.81]))], ("value",), check_scene),
    ]


def _value_names(t):
    """Setter targets name the attribute in their messages, not 'value'."""
    if t.name.endswith("="):
        t.args[0].aliases = (t.name.split(".")[1][:-1],)
    return t


def simulate_targets():
    m = _mech()
    sim_args = [obj("scene", Fresh(_scene), wrong=(("5", 5), ("a body", Fresh(_sphere)))), num("h", 0.01),
                num("T", 0.05, extremes=(("T = 1e10", 1e10, "either"),)),
                option("method", tuple(f.name for f in registry.formulations() if f.scenes)), flag("progress", False),
                integer("algorithm", domain=(1, 3)), num("tol", domain="open01", optional=True),
                integer("max_iter", optional=True), num("max_penetration", domain="nonneg", optional=True, valid_too=("inf",)),
                flag("warm_start"), *correction()]

    def traj(name):
        def call(**kw):
            return getattr(_trajectory(), name)(**kw)
        return call
    ax = obj("ax", optional=True, wrong=(("'x'", "x"), ("5", 5)))
    return [
        Target("mechanics.simulate", m.simulate, sim_args, ("scene", "h", "T"), check_trajectory, slow=True),
        Target("Trajectory.plot_energy", traj("plot_energy"), [ax], (), None, slow=True),
        Target("Trajectory.plot_contact_states", traj("plot_contact_states"), [ax], (), None, slow=True),
        Target("Trajectory.plot_penetration", traj("plot_penetration"), [ax], (), None, slow=True),
        Target("Trajectory.animate", traj("animate"),
               [obj("scene", optional=True, wrong=(("5", 5),)), integer("every"), flag("arrows"),
                num("interval", optional=True), arr("figsize", np.array([5.0, 4.0])), num("dpi", 72.0)], (), None,
               slow=True),
        Target("mechanics.disk_pile_scene", m.disk_pile_scene,
               [integer("n_disks", 4), integer("width", 2), num("radius", 0.5), num("mu", 0.3, "nonneg"),
                integer("seed", 0, domain=0, optional=True), num("delta", 0.1, "nonneg", optional=True)], (), check_pile,
               slow=True),
        Target("mechanics.sphere_pile_scene", m.sphere_pile_scene,
               [integer("n_spheres", 4), integer("width", 2), num("radius", 0.5), num("mu", 0.3, "nonneg"),
                integer("seed", 0, domain=0, optional=True), num("delta", 0.1, "nonneg", optional=True)], (), check_pile,
               slow=True),
    ]


# ---------------------------------------------------------------- widgets, examples, testing

def widget_targets():
    from mbdcp import widgets as w

    static = flag("static", True)

    def rng(name, valid, lo, hi):
        return num(name, valid, ("range", lo, hi))
    return [
        Target("widgets.sphere", w.sphere, [rng("mu", 0.2, 0.05, 1.0), rng("h", 0.05, 0.005, 0.2),
                                            rng("v0", 2.0, 0.1, 5.0), Arg("n_d", "int", 4, (4, 16)), static], (), None,
               slow=True),
        Target("widgets.particle_and_wall", w.particle_and_wall,
               [rng("v0", -4.0, -8.0, 2.0), rng("gap", 1.0, 0.0, 3.0), rng("wall_speed", 0.0, -1.0, 1.0),
                rng("h", 1.0, 0.1, 2.0), static], (), None, slow=True),
        Target("widgets.planar_friction", w.planar_friction,
               [rng("mu", 0.5, 0.0, 1.5), rng("v_x", 0.0, -3.0, 3.0), rng("push", 0.1, -1.0, 1.0),
                rng("lift", 0.0, 0.0, 2.0), static], (), None, slow=True),
        Target("widgets.painleve_rod", w.painleve_rod, [rng("theta", 30.0, 1.0, 89.0), rng("mu", 0.3, 0.0, 3.0), static],
               (), None, slow=True),
        Target("widgets.lemke_stepper", w.lemke_stepper,
               [arr("M", LCP_M, optional="either"), arr("q", LCP_Q, optional="either"), integer("pivot", 0, domain=(0, 3)),
                static],
               (), None, slow=True),
        Target("widgets.lemke_tableaux", w.lemke_tableaux, [arr("M", LCP_M), arr("q", LCP_Q)], ("M", "q"), check_finite),
        Target("widgets.interactive", w.interactive, [flag("static", True)], (), None),
    ]


def example_targets():
    from mbdcp import examples as ex

    def n(name, valid, domain="pos"):
        return num(name, valid, domain)
    return [
        Target("examples.sphere_on_plane", ex.sphere_on_plane, [n("mu", 0.2, "nonneg"), n("m", 1.0), n("r", 1.0)], (),
               check_finite),
        Target("examples.sphere_closed_form", ex.sphere_closed_form,
               [arr("t", np.linspace(0, 1, 5), "nonneg", valid_too=("3-d", "0-d", "one more", "column", "one less")),
                n("v0", 2.0, "real"), n("mu", 0.2), n("g", 9.81), n("r", 1.0)],
               ("t",), check_finite),
        Target("examples.simulate_sphere", ex.simulate_sphere, [n("h", 0.12), n("T", 0.6), n("v0", 2.0, "real"),
                                                                n("mu", 0.2, "nonneg"), n("g", 9.81, "real")], (),
               check_finite),
        Target("examples.particle_above_wall", ex.particle_above_wall,
               [integer("steps", 6, domain=0), n("v0", -4.0, "real"), n("gap", 1.0, "real"), n("wall_speed", 0.0, "real"),
                n("m", 1.0), n("h", 1.0), n("g", 1.0, "real")], (), check_finite),
        Target("examples.euler_table", ex.euler_table, [integer("steps", 3), n("F", 1.0, "real"), n("m", 1.0), n("h", 1.0),
                                                        n("q0", 0.0, "real"), n("v0", 0.0, "real")], (), check_finite),
        Target("examples.parts_seating", ex.parts_seating,
               [arr("p_ext", -np.ones(3)), arr("psi_n", np.ones(3)), arr("Wn", ex.SEATING_WN), n("h", 1.0),
                n("tol", 1e-9)], ("p_ext", "psi_n"), check_finite),
        Target("examples.bead_on_wire", ex.bead_on_wire, [n("theta0", 0.5, "real"), n("length", 1.0), n("h", 0.01),
                                                          n("T", 0.05), n("m", 1.0), n("g", 9.81, "real")], (),
               check_finite),
        Target("examples.slider_with_joint_friction", ex.slider_with_joint_friction,
               [n("force", 1.0, "real"), n("c_max", 0.5, "nonneg"), n("v0", 0.0, "real"), n("h", 0.01), n("T", 0.05),
                n("m", 1.0)], ("force", "c_max"), check_finite),
        Target("examples.box_on_belt", ex.box_on_belt, [n("belt_speed", 1.0, "real"), n("mu", 0.3, "nonneg"),
                                                        n("v0", 0.0, "real"), n("h", 0.01), n("T", 0.05), n("m", 1.0),
                                                        n("g", 9.81, "real")], (), check_finite),
    ]


def check_spd(kw, M):
    M = np.asarray(M, dtype=float)
    if not np.all(np.isfinite(M)) or np.abs(M - M.T).max(initial=0) > 1e-8 * np.abs(M).max(initial=1):
        return "not a finite symmetric matrix"
    if M.size and np.linalg.eigvalsh(M).min() <= 0:
        return "not positive definite"
    return None


def testing_targets():
    from mbdcp import testing as t

    seed = integer("seed", 0, domain=0, optional=True)
    sizes = (("10**6", 10 ** 6, "either"),)
    return [
        Target("testing.random_spd", t.random_spd, [integer("n", 3, extremes=sizes), seed, num("cond", 100.0,
                                                                                             ("range", 1.0, 1e300))],
               ("n",), check_spd),
        Target("testing.lcp_with_solution", t.lcp_with_solution, [arr("M", LCP_M), seed,
                                                                  num("frac_active", 0.5, ("range", 0.0, 1.0))],
               ("M",), check_finite),
        Target("testing.random_scene", t.random_scene,
               [integer("n_bodies", 2, extremes=sizes), integer("n_contacts", 2, domain=0, extremes=sizes), seed,
                arr("n_d", np.array([2, 8])), arr("mu", np.array([0.0, 1.0]), "nonneg"),
                num("ground_fraction", 0.5, ("range", 0.0, 1.0)), num("h", 0.01), arr("gap", np.array([0.0, 0.01]))],
               ("n_bodies", "n_contacts"), check_finite),
        Target("testing.disk_pile", t.disk_pile, [integer("n_disks", 4, extremes=sizes), seed, num("radius", 0.5),
                                                  num("jitter", 0.02, ("range", 0.0, 0.99)), num("delta", 0.05, "nonneg"),
                                                  num("speed", 0.5, "nonneg"), num("h", 0.01), num("mu", 0.2, "nonneg")],
               ("n_disks",), check_finite),
        Target("testing.granular_pile", t.granular_pile,
               [integer("n_bodies", 3, extremes=sizes), integer("n_contacts", 3, domain=0, extremes=sizes), seed,
                arr("mu", np.array([0.1, 0.6]), "nonneg"), num("h", 0.01), flag("sparse"),
                option("pairs", ("neighbours", "random"))], ("n_bodies", "n_contacts"), check_finite),
        Target("testing.solves_lcp", t.solves_lcp, [arr("M", LCP_M), arr("q", LCP_Q), arr("z", np.array([4 / 3, 7 / 3])),
                                                    num("tol", 1e-8, "nonneg")], ("M", "q", "z"), None),
        Target("testing.lcp_problem", t.lcp_problem, [option("kind", ("P", "PSD", "copositive", "degenerate", "frictional"),
                                                             "P"), integer("n", 4, extremes=sizes), seed],
               ("kind", "n"), check_finite),
        Target("testing.infeasible_lcp", t.infeasible_lcp, [integer("n", 4, domain=2, extremes=sizes), seed], ("n",),
               check_finite),
        Target("testing.scaled_lcp", t.scaled_lcp, [arr("M", LCP_M), arr("q", LCP_Q),
                                                    option("how", ("none", "diagonal", "symmetric", "global"), "diagonal"),
                                                    seed], ("M", "q", "how"), check_finite),
        Target("testing.spread_lcp", t.spread_lcp, [integer("n", 4, extremes=sizes), seed, integer("rows", 10, domain=0),
                                                    integer("values", 12, domain=0)], ("n",), check_finite),
        Target("testing.basic_solutions", lambda F, f, tol=1e-10: list(t.basic_solutions(F, f, tol)),
               [arr("F", LCP_M, extremes=(("n = 40", np.eye(40), "either"),)), arr("f", LCP_Q), num("tol", 1e-10, "nonneg")],
               ("F", "f"), check_finite),
    ]


def targets(tmp):
    """Every target of the sweep (io files are written into the directory tmp)."""
    solvers = solver_targets()
    out = (solvers + formulation_targets(solvers) + batch_targets() + derivative_targets() + layer_targets() + io_targets(tmp)
           + study_targets() + body_targets() + scene_targets() + simulate_targets() + widget_targets()
           + example_targets() + testing_targets())
    return [_value_names(t) for t in out]
