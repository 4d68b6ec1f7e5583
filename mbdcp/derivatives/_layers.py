"""What the differentiable layers :mod:`mbdcp.jax` and :mod:`mbdcp.torch` share, in NumPy only.

Each layer call is one *problem* (``lcp``, or a registered formulation's :class:`Layer
<mbdcp.formulations.registry.Layer>`: ``step``, ``ccp``; :data:`PROBLEMS`) with its inputs by name: the
positional arrays and the array keywords (all differentiable but the groupings E, Ej), plus
*options* (solver settings, the stabilisation settings, ``degenerate_tol``). Here:

- :func:`forward` solves on the host, one problem or a batch (extra leading axes; mapped onto
  :mod:`mbdcp.batch` where it solves the same problem, else a loop), and raises
  :class:`SolveError` naming the status when a solve does not end SOLVED;
- :func:`backward` builds :mod:`mbdcp.derivatives` objects on the returned solutions and pulls
  the output gradients back to every input, warning (:class:`DegenerateWarning`) with the
  contacts when a solution is at a kink.

The frameworks only convert arrays and register these two functions with their autodiff. A layer
that keeps Python state between its passes (PyTorch's ``ctx``) can instead keep the forward's own
result object: :func:`solve` for one problem, then :func:`backward_one` on that object (no result
rebuilt from the outputs).
"""
import math
import sys
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

import mbdcp
from mbdcp import derivatives
from mbdcp.derivatives._common import GEOMETRY
from mbdcp.formulations import registry
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.deprecated import renamed_keywords
from mbdcp.infrastructure.results import LemkeResult
from mbdcp.infrastructure.status import Status
from mbdcp.tools import batch as _batch

__all__ = [
    "PROBLEMS",
    "CCPOutput",
    "DegenerateWarning",
    "SolveError",
    "StepOutput",
    "arguments",
    "backward",
    "backward_one",
    "derivative",
    "forward",
    "output_shapes",
    "positional",
    "solve",
    "split_keywords",
    "split_options",
    "torch_batch_ndims",
]


class SolveError(RuntimeError):
    """A solve inside a differentiable layer did not end SOLVED, so there is no solution to
    return or differentiate. ``status`` is the :class:`mbdcp.Status`; ``instance`` the index of
    the failing problem in a batch (None for a single problem)."""

    def __init__(self, message, status, instance=None):
        super().__init__(message)
        self.status = status
        self.instance = instance


class DegenerateWarning(RuntimeWarning):
    """A gradient was taken at a degenerate solution (a kink: a grazing contact, a contact at the
    edge of its friction cone, ...). The gradient is the one-sided derivative documented in
    :mod:`mbdcp.derivatives`; the message names the contacts. Also for a step's gradient in the gaps
    or constraint directions where active rows dropped as dependent tie contacts together
    (``StepDerivative.dependent_contacts``): that gradient holds their dependence, exact only for
    changes that keep it."""


class StepOutput(NamedTuple):
    """Every output of a time step (``full_output=True`` of ``step``), as in :class:`mbdcp.StepResult`."""

    v_next: object
    p_n: object
    beta: object
    sigma: object
    p_b: object
    beta_j: object
    sigma_j: object


class CCPOutput(NamedTuple):
    """Every output of a CCP step (``full_output=True`` of ``ccp``), as in :class:`mbdcp.CCPResult`."""

    v_next: object
    gamma: object
    p_b: object


@dataclass(frozen=True)
class Problem:
    """A solver seen as a layer: inputs by name, outputs, and which options its derivative takes
    (the fields of :class:`mbdcp.formulations.registry.Layer`, with the solver, its result type and
    derivative, and the faster paths resolved)."""

    name: str
    positional: tuple
    keywords: tuple  # array keywords (differentiable unless combinatorial)
    combinatorial: tuple  # groupings: no derivative, zero gradient
    outputs: tuple
    derivative_options: tuple  # options the derivative needs too (the rest only drive the solver)
    anchor: str  # the input whose dimensions tell a batch apart from one problem (torch)
    output_forms: tuple  # the shape of each output of one problem, in dimension symbols
    extras: tuple = ()  # result fields the derivative needs beyond the outputs
    extra_forms: tuple = ()
    filler: tuple = ()  # (field, placeholder) of the other fields of a result rebuilt from outputs
    function: object = None  # the solver
    result: object = None  # its result type
    derivative: object = None
    native: object = None  # native(arrays, options, outs, cots, wanted) -> gradients or None
    batch: object = None  # batch(problem, inst, lay, options) -> (outputs, extras, status) or None
    # at(validated problem, res, **derivative-only options) -> the derivative, for a result that carries
    # the problem it solved (a CCPResult of mbdcp.ccp: ``_problem``): its data are not checked again
    at: object = None

    @property
    def out_ndim(self):
        """Dimensions of each output of one problem."""
        return tuple(len(f) for f in self.output_forms)

    @property
    def extra_ndim(self):
        """And of each extra."""
        return tuple(len(f) for f in self.extra_forms)


_DERIVATIVE_ONLY = ("degenerate_tol",)
# dimensions of one problem's input (U, mu, h, dpsi_t are judged apart: several forms)
_NDIM = {"M": 2, "q": 1, "Wn": 2, "D": 2, "E": 2, "v": 1, "p_ext": 1, "psi_n": 1, "dpsi_n": 1, "dpsi_f": 1, "Wb": 2,
         "theta": 1, "dtheta": 1, "Dj": 2, "Ej": 2, "beta_max": 1, "Wt": 2}
# the renamed keywords of the solvers (mbdcp.infrastructure.deprecated), accepted here too
_RENAMED = {"max_pivots": "max_iter", "solver": "method", "phi": "psi_n", "dphi_t": "dpsi_t"}


def split_keywords(problem, kwargs):
    """(array keywords given, options): None-valued array keywords are dropped (absent)."""
    arrays, options = {}, {}
    if not kwargs.keys().isdisjoint(_RENAMED):
        kwargs = renamed_keywords(problem.name, kwargs, _RENAMED)
    for key, value in kwargs.items():
        if key in problem.keywords:
            if value is not None:
                arrays[key] = value
        else:
            options[key] = value
    return arrays, options


def _fail(problem, status, instance=None, count=1):
    status = Status(status)
    where = "" if instance is None else f" at instance {instance} of the batch" + (
        f" ({count} instances failed)" if count > 1 else "")
    raise SolveError(f"mbdcp.{problem.name} ended with status {status.name}{where} ({status.message}): no solution "
                     "to return or differentiate", status, instance)


# ---- one problem ----------------------------------------------------------------------------

def arguments(problem, a):
    """The positional arguments (:func:`positional`) and the array keywords of a step or a CCP
    step (M, q of an LCP), from its inputs by name: what :func:`solve` and :func:`derivative` take."""
    args = positional(problem, [a[k] for k in problem.positional])
    if not problem.keywords or len(a) == len(args):
        return args, {}
    return args, {k: x for k, x in a.items() if k in problem.keywords}


def positional(problem, args):
    """The positional inputs ``args`` (a list, in order) as the solver takes them: h (last) a float
    when it is a scalar (in a new list then)."""
    if problem.positional[-1] == "h" and type(args[-1]) is not float and np.ndim(args[-1]) == 0:
        args = [*args[:-1], float(args[-1])]
    return args


def split_options(problem, options):
    """(the solver's options, the derivative's options) of a layer call's ``options``."""
    if not options:
        return {}, {}
    return ({k: v for k, v in options.items() if k not in _DERIVATIVE_ONLY},
            {k: v for k, v in options.items() if k in problem.derivative_options})


def solve(problem, args, kw, solver_options, instance=None):
    """The result object of one problem (mbdcp.lemke, mbdcp.step or mbdcp.ccp on the inputs
    ``args``, ``kw`` of :func:`arguments`); SolveError naming the status unless it is SOLVED."""
    res = problem.function(*args, **kw, **solver_options)
    if res.status != Status.SOLVED:
        _fail(problem, res.status, instance)
    return res


def _solve_one(problem, a, options, instance=None):
    """(outputs, extras) of one problem: extras carry what the derivative needs beyond the outputs."""
    res = solve(problem, *arguments(problem, a), split_options(problem, options)[0], instance)
    return (tuple(getattr(res, o) for o in problem.outputs),
            tuple(np.asarray(getattr(res, e), dtype=np.float64) for e in problem.extras))


def derivative(problem, args, kw, res, derivative_options):
    """The mbdcp.derivatives object at ``res``, the result object of :func:`solve` (or one built
    from a forward pass's outputs) for the inputs ``args``, ``kw`` of :func:`arguments`: from the
    validated problem ``res`` carries when it does (the solve's own; the correction's options are in
    it), else from the inputs."""
    carried = getattr(res, "_problem", None)
    if carried is not None and problem.at is not None:
        return problem.at(carried, res, **{k: v for k, v in derivative_options.items() if k in _DERIVATIVE_ONLY})
    return problem.derivative(*args, res, **kw, **derivative_options)


def _derivative(problem, a, outs, extras, options):
    """The mbdcp.derivatives object at a solution the forward pass returned (as outputs, extras)."""
    solved = {"success": True, "status": Status.SOLVED, "message": Status.SOLVED.message}
    if problem.name == "lcp":
        M, q = np.asarray(a["M"], dtype=np.float64), np.asarray(a["q"], dtype=np.float64)
        z = np.asarray(outs[0], dtype=np.float64)
        res = LemkeResult(**solved, z=z, w=M @ z + q, pivots=0, residual=0.0, basis=np.asarray(extras[0]) > 0.5)
    else:  # the outputs and extras (a 0-d extra as a float), placeholders for the rest
        res = problem.result(**solved, **dict(zip(problem.outputs, outs)), **dict(problem.filler),
                             **{e: float(x) if np.ndim(x) == 0 else np.asarray(x) for e, x in zip(problem.extras, extras)})
    return derivative(problem, *arguments(problem, a), res, split_options(problem, options)[1])


def _vjp(problem, d, cots, wanted=None):
    """Gradients by input name for the output gradients ``cots`` (None: zero): of every input, or
    at least of those named in ``wanted`` (a set)."""
    if problem.name == "lcp":
        g = d.vjp(np.zeros(d.z.shape) if cots[0] is None else cots[0], _wanted=wanted)
        return {"M": g.M, "q": g.q}
    if wanted is not None and hasattr(d, "_vjp"):  # the outputs in order, absent ones None
        return d._vjp(tuple(cots) + (None,) * (len(problem.outputs) - len(cots)), wanted)
    return d.vjp(**{o: c for o, c in zip(problem.outputs, cots) if c is not None})


def _fit(problem, name, g, shape):
    """A gradient in the shape its input was given: U or mu as a scalar (summed), a vector or a
    diagonal matrix; h as a scalar; a flat or (n_c, 2) dpsi_t."""
    if type(g) is np.ndarray and g.shape == shape and name not in problem.combinatorial:
        return g  # the common case: the derivative's own float64 array
    if g is None or name in problem.combinatorial:
        return np.zeros(shape)
    if type(g) is not np.ndarray or g.dtype != np.float64:  # h's gradient is a float
        g = np.asarray(g, dtype=np.float64)
    if g.shape == shape:
        return g
    if name in ("U", "mu") and len(shape) == 0:
        return np.asarray(g.sum())
    if name in ("U", "mu") and len(shape) == 2:
        return np.diag(g)
    return g.reshape(shape)


def _degenerate_note(problem, d, wanted=()):
    """'contacts [..] (kinds)' for a derivative at a kink, and for a step's gradients in the
    inputs ``wanted`` that hold a dependence of active rows; or None."""
    tied, dependent = None, getattr(d, "dependent_contacts", None)
    if dependent is not None and dependent.size and not GEOMETRY.isdisjoint(wanted):
        tied = (f"contacts {dependent.tolist()} (rows dropped as dependent: the gradient in "
                f"{', '.join(sorted(GEOMETRY.intersection(wanted)))} holds their dependence, exact only for "
                "changes that keep it)")
    if d.degenerate.size == 0:
        return tied
    if problem.name == "lcp":
        return f"pairs z_i = w_i = 0 at {d.degenerate.tolist()}"
    kinds = ", ".join(sorted(set(d.degenerate_kind)))
    contacts = getattr(d, "degenerate_contacts", d.degenerate)
    kink = f"joint friction ({kinds})" if contacts.size == 0 else f"contacts {contacts.tolist()} ({kinds})"
    return kink if tied is None else f"{kink}; {tied}"


def _warn(layer, problem, notes):
    """One DegenerateWarning for the (instance, note) pairs of a backward pass."""
    notes = [(i, n) for i, n in notes if n is not None]
    if not notes:
        return
    parts = [n if i is None else f"instance {i}: {n}" for i, n in notes[:5]]
    more = f"; and {len(notes) - 5} more instances" if len(notes) > 5 else ""
    warnings.warn(f"{layer}.{problem.name}: the solution is at a degenerate point ({'; '.join(parts)}{more}); the "
                  f"gradient is the one-sided derivative documented in mbdcp.derivatives.{problem.name}, or the one "
                  "that holds the dependence named", DegenerateWarning, stacklevel=3)


# ---- batches: extra leading axes ------------------------------------------------------------

@dataclass(frozen=True)
class _Layout:
    """A batch: its shape (the extra leading axes, broadcast), size, and the shared arrays."""

    shape: tuple
    size: int
    shared: dict  # name -> True when one array serves every instance


def _layout(arrays, base_ndim):
    """The batch of named arrays whose instance dimensions are ``base_ndim`` (None: one problem)."""
    if base_ndim is None:
        return None
    leads = {}
    for name, a in arrays.items():
        extra = np.ndim(a) - base_ndim[name]
        if extra < 0:
            raise ValueError(f"{name} has {np.ndim(a)} dimensions, fewer than one problem's {base_ndim[name]}")
        leads[name] = np.shape(a)[:extra]
    try:
        shape = np.broadcast_shapes(*leads.values())
    except ValueError:
        raise ValueError("the batch axes of the inputs do not agree: " +
                         ", ".join(f"{n} {lead}" for n, lead in leads.items() if lead)) from None
    if not shape:
        return None
    return _Layout(shape, math.prod(shape), {n: math.prod(lead) == 1 for n, lead in leads.items()})


def _instances(arrays, base_ndim, lay):
    """Each array as one shared instance (batch axes dropped) or stacked (size, ...) per instance."""
    out = {}
    for name, a in arrays.items():
        a = np.asarray(a)
        base = a.shape[a.ndim - base_ndim[name]:]
        if lay.shared[name]:
            out[name] = a.reshape(base)
        else:
            out[name] = np.broadcast_to(a, lay.shape + base).reshape((lay.size,) + base)
    return out


def _pick(stacked, lay, i):
    return {n: (a if lay.shared[n] else a[i]) for n, a in stacked.items()}


def _solve_batch(problem, inst, lay, options):
    """Stacked (outputs, extras) of a batch; a failed instance raises SolveError."""
    if problem.name == "lcp" and set(options) <= {"max_iter", "tol"}:  # mbdcp.batch solves what mbdcp.lemke solves
        q = inst["q"] if not lay.shared["q"] else np.broadcast_to(inst["q"], (lay.size,) + inst["q"].shape)
        res = _batch.lemke(inst["M"], q, **options)
        batched = (res.z,), (res.basis.astype(np.float64),), res.status
    else:
        batched = problem.batch(problem, inst, lay, options) if problem.batch is not None else None
    if batched is not None:
        outs, extras, status = batched
        bad = np.flatnonzero(status != int(Status.SOLVED))
        if bad.size:
            _fail(problem, status[bad[0]], int(bad[0]), bad.size)
        return outs, extras
    per = [_solve_one(problem, _pick(inst, lay, i), options, instance=i) for i in range(lay.size)]
    return tuple(np.stack(x) for x in zip(*(o for o, _ in per))), tuple(np.stack(x) for x in zip(*(e for _, e in per)))


def step_batch(problem, inst, lay, options):
    """(outputs, extras, statuses) of a batch of steps by :func:`mbdcp.batch.step`, which solves
    exactly what mbdcp.step solves with Lemke's method, for these options; else None."""
    if not set(options) <= {"max_iter", "tol", "method"} or options.get("method", "lemke") != "lemke":
        return None
    a = dict(inst)
    U, per = np.asarray(a["U"]), not lay.shared["U"]
    if U.ndim == 2 + per:  # diagonal matrices: mbdcp.batch takes mu
        a["U"] = np.diagonal(U, axis1=-2, axis2=-1)
    elif U.ndim == per == 1:  # one scalar per instance: the same mu for every contact
        a["U"] = np.repeat(U[:, None], np.shape(a["Wn"])[-1], axis=1)
    kw = {k: a[k] for k in problem.keywords if k in a}
    res = _batch.step(a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], a["h"], **kw,
                      **{k: v for k, v in options.items() if k != "method"})
    return tuple(getattr(res, o) for o in problem.outputs), (), res.status


def forward(problem, arrays, options, base_ndim=None):
    """Solve: ``arrays`` by input name (NumPy), ``options`` for the solver (and derivative).

    ``base_ndim`` (name -> dimensions of one problem's input) marks extra leading axes as batch
    axes (broadcast against each other; size-1 axes mean shared); None means one problem.
    Returns (outputs, extras): NumPy arrays, with the batch axes in front for a batch.
    """
    lay = _layout(arrays, base_ndim)
    if lay is None:
        return _solve_one(problem, arrays, options)
    outs, extras = _solve_batch(problem, _instances(arrays, base_ndim, lay), lay, options)
    return (tuple(o.reshape(lay.shape + o.shape[1:]) for o in outs),
            tuple(e.reshape(lay.shape + e.shape[1:]) for e in extras))


def backward(problem, arrays, options, outs, extras, cots, base_ndim=None, reduce=True, layer="mbdcp", wanted=None):
    """Gradients by input name of sum_k <cots[k], outs[k]> (a cotangent None is zero), for the
    inputs named in ``wanted`` (default: all).

    One problem: each gradient has its input's shape. A batch (``base_ndim`` as for
    :func:`forward`; the cotangents may carry batch axes of their own, as in a Jacobian built by
    mapping a vjp): with ``reduce`` each gradient has its input's shape (an input shared by the
    batch gets the sum over instances, as in PyTorch), without it every gradient has the batch
    axes in front (one per instance, as ``jax.vmap`` expects of a callback).
    """
    wanted = list(arrays) if wanted is None else wanted
    if base_ndim is None:
        native = _native(problem, arrays, options, outs, cots, wanted)
        if native is not None:
            return native
        return _gradients(problem, _derivative(problem, arrays, outs, extras, options), arrays, cots, wanted, layer)
    # inputs, outputs, extras and cotangents: each may carry batch axes or not
    named, base = dict(arrays), dict(base_ndim)
    for kind, values, ndims in (("out", outs, problem.out_ndim), ("extra", extras, problem.extra_ndim),
                                ("cot", cots, problem.out_ndim)):
        for i, (x, k) in enumerate(zip(values, ndims)):
            if x is not None:
                named[f"{kind}:{i}"], base[f"{kind}:{i}"] = x, k
    lay = _layout(named, base)
    if lay is None:  # one problem after all
        return backward(problem, arrays, options, outs, extras, cots, None, reduce, layer, wanted)
    inst = _instances(named, base, lay)
    # one derivative serves every instance when only the cotangents vary (a Jacobian by mapped vjps)
    per_problem = not all(lay.shared[n] for n in named if not n.startswith("cot:"))
    grads = {n: np.zeros((lay.size,) + (inst[n].shape if lay.shared[n] else inst[n].shape[1:])) for n in wanted}
    notes, d, need = [], None, frozenset(wanted)
    for i in range(lay.size):
        x = _pick(inst, lay, i)
        g = _native(problem, {n: x[n] for n in arrays}, options, [x[f"out:{k}"] for k in range(len(outs))],
                    [x.get(f"cot:{k}") for k in range(len(cots))], wanted)
        if g is not None:
            for n in wanted:
                grads[n][i] = g[n]
            continue
        if d is None or per_problem:
            d = _derivative(problem, {n: x[n] for n in arrays}, [x[f"out:{k}"] for k in range(len(outs))],
                            [x[f"extra:{k}"] for k in range(len(extras))], options)
            notes.append((i if per_problem else None, _degenerate_note(problem, d, need)))
        g = _vjp(problem, d, [x.get(f"cot:{k}") for k in range(len(cots))], need)
        for n in wanted:
            grads[n][i] = _fit(problem, n, g.get(n), grads[n].shape[1:])
    _warn(layer, problem, notes)
    out = {}
    for n in wanted:
        full = grads[n].reshape(lay.shape + grads[n].shape[1:])
        out[n] = _sum_to(full, np.shape(arrays[n])) if reduce else full
    return out


def backward_one(problem, arrays, call_args, res, options, cots, wanted, layer="mbdcp"):
    """:func:`backward` of one problem at ``res``, the result object :func:`solve` returned in the
    forward pass for ``call_args`` = (args, kw) of :func:`arguments` (nothing rebuilt or
    re-split): the gradients of the inputs named in ``wanted``, in that order, each in the shape of
    its input in ``arrays``; ``options`` are the derivative's (:func:`split_options`)."""
    grads = None
    if problem.native is not None:
        grads = _native(problem, arrays, options, tuple(getattr(res, o) for o in problem.outputs), cots, wanted)
    if grads is None:
        grads = _gradients(problem, derivative(problem, *call_args, res, options), arrays, cots, wanted, layer)
    return [grads[n] for n in wanted]


def _native(problem, arrays, options, outs, cots, wanted):
    """The gradients of one problem by its native path (a plain step's:
    :mod:`mbdcp.derivatives._native_step`, in the C core) in the inputs' shapes, or None: no
    native path, or a point it leaves to :mod:`mbdcp.derivatives`."""
    g = problem.native(arrays, options, outs, cots, wanted) if problem.native is not None else None
    if g is None:
        return None
    return {n: _fit(problem, n, g.get(n), np.shape(arrays[n])) for n in wanted}


def _gradients(problem, d, arrays, cots, wanted, layer):
    """The gradients of one problem at its derivative ``d`` (a warning first at a kink), each in its
    input's shape."""
    _warn(layer, problem, [(None, _degenerate_note(problem, d, wanted))])
    g = _vjp(problem, d, cots, frozenset(wanted))
    return {n: _fit(problem, n, g.get(n), np.shape(arrays[n])) for n in wanted}


def _sum_to(g, shape):
    """g summed over the axes broadcasting added or stretched, to ``shape``."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead > 0 else g
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return (g.sum(axis=axes, keepdims=True) if axes else g).reshape(shape)


# ---- shapes ---------------------------------------------------------------------------------

def output_shapes(problem, shapes):
    """(output shapes, extra shapes) of one problem with inputs of the given shapes (by name);
    ValueError naming an argument whose shape does not fit the others."""
    def dim(name, axis, default=0):
        return shapes[name][axis] if name in shapes and len(shapes[name]) > axis else default

    if problem.name == "lcp":
        n = dim("q", 0)
        if shapes["M"] != (n, n):
            raise ValueError(f"M must have shape (n, n) = ({n}, {n}) (q has n = {n}), got {shapes['M']}")
        return ((n,),), ((n,),)
    n_v = dim("v", 0)
    for name in ("M", "Wn", "D", "Wt", "Wb", "Dj", "p_ext"):
        if name in shapes and (len(shapes[name]) < 1 or shapes[name][0] != n_v):
            raise ValueError(f"{name} must have n_v = {n_v} rows (the length of v), got shape {shapes[name]}")
    n_c = dim("Wn", 1)
    n_b = dim("Wb", 1)
    m, m_j = dim("D", 1), dim("Dj", 1)
    n_j = dim("Ej", 1, default=int(np.prod(shapes.get("beta_max", (0,)))))
    dims = {"n_v": n_v, "n_c": n_c, "m": m, "n_b": n_b, "m_j": m_j, "n_j": n_j, "2 n_c": 2 * n_c, "2": 2}
    _check_shapes(shapes, dims)
    return (tuple(tuple(dims.get(d, d) for d in f) for f in problem.output_forms),
            tuple(tuple(dims.get(d, d) for d in f) for f in problem.extra_forms))


# the shapes mbdcp.step and mbdcp.ccp accept, by input name: each form a tuple of dimension symbols
_FORMS = {"M": [("n_v", "n_v")], "v": [("n_v",)], "h": [()], "E": [("m", "n_c")], "U": [(), ("n_c",), ("n_c", "n_c")],
          "mu": [(), ("n_c",)], "Wt": [("n_v", "2 n_c")], "psi_n": [("n_c",)], "dpsi_n": [("n_c",)],
          "dpsi_f": [("m",)], "theta": [("n_b",)], "dtheta": [("n_b",)], "Ej": [("m_j", "n_j")],
          "beta_max": [("n_j",)], "dpsi_t": [("2 n_c",), ("n_c", "2")]}


def _check_shapes(shapes, dims):
    """The ValueError of mbdcp.step and mbdcp.ccp (validate's message, saying which input fixed each
    dimension) for the first input whose shape is none of its forms, from the shapes alone (as
    under jax.jit); ``dims``: each symbol's size."""
    def text(t):
        return "(" + ", ".join(map(str, t)) + ("," if len(t) == 1 else "") + ")"
    for name, shape in shapes.items():
        forms = _FORMS.get(name, ())
        sizes = [tuple(dims[d] for d in f) for f in forms]
        if forms and tuple(shape) not in sizes:
            want = " or ".join(f"{text(f)} = {text(z)}" if f else "()" for f, z in zip(forms, sizes))
            raise val._shape_error(name, want, tuple(shape), [d for f in forms for d in f], None)


def torch_batch_ndims(problem, shapes):
    """Instance dimensions by name when the anchor (v, or q of an LCP) has a leading batch axis,
    else None. U and mu: 0-d or 1-d are shared, (B, n_c) or (B, n_c, n_c) per instance; h: a
    scalar or (B,); dpsi_t: (2 n_c,) or (n_c, 2) shared, (B, 2 n_c) or (B, n_c, 2) per instance;
    the others have one dimension more than for one problem when given per instance."""
    anchor = shapes[problem.anchor]
    if len(anchor) != _NDIM[problem.anchor] + 1:
        return None
    B = anchor[0]
    n_c = shapes["Wn"][-1] if "Wn" in shapes else 0
    base = {}
    for name, shape in shapes.items():
        if name in ("U", "mu"):
            per = len(shape) >= 2
            base[name] = len(shape) - per
        elif name == "h":
            base[name], per = 0, len(shape) == 1
        elif name == "dpsi_t":
            per = len(shape) == 3 or (len(shape) == 2 and tuple(shape) != (n_c, 2))
            base[name] = len(shape) - per
        else:
            if len(shape) not in (_NDIM[name], _NDIM[name] + 1):
                raise ValueError(f"{name} must have {_NDIM[name]} dimensions, or {_NDIM[name] + 1} with a leading "
                                 f"batch axis of B = {B} ({problem.anchor} is batched), got shape {tuple(shape)}")
            per = len(shape) == _NDIM[name] + 1
            base[name] = _NDIM[name]
        if per and shape[0] != B:
            raise ValueError(f"{name} has a leading batch axis of {shape[0]}, but {problem.anchor} has B = {B}")
    if problem.name == "lcp" and tuple(shapes["M"][-2:]) != (anchor[1], anchor[1]):
        n = anchor[1]
        raise ValueError(f"q of shape {tuple(anchor)} is read as a batch of B = {B} problems of size n = {n}, so M must "
                         f"have shape (n, n) = ({n}, {n}) or (B, n, n) = ({B}, {n}, {n}), got {tuple(shapes['M'])}; "
                         "for one problem, q has shape (n,)")
    return base


def _problem(entry):
    """The Problem of a registered formulation with a layer; its derivative's module may define
    ``at`` (see :attr:`Problem.at`)."""
    spec = entry.layer
    d = entry.derivative_function()
    return Problem(spec.name, spec.positional, tuple(spec.keywords), spec.combinatorial, spec.outputs,
                   spec.derivative_options, spec.anchor, spec.output_forms, spec.extras, spec.extra_forms,
                   tuple(spec.filler.items()), entry.function, entry.result, d, spec.native_function(),
                   spec.batch_function(), getattr(sys.modules.get(getattr(d, "__module__", None)), "at", None))


# the LCP (mbdcp.lemke: not a time step's formulation), then every registered formulation with a
# layer (made last: a formulation's batch path may live in this module)
PROBLEMS = {"lcp": Problem("lcp", ("M", "q"), (), (), ("z",), ("degenerate_tol",), "q", (("n",),), ("basis",),
                           (("n",),), function=mbdcp.lemke, result=LemkeResult, derivative=derivatives.lcp)}
PROBLEMS.update((f.layer.name, _problem(f)) for f in registry.formulations() if f.layer is not None)
