"""The table of formulations: name -> how a time step is posed and solved, the result type and the
derivative. :func:`mbdcp.compare`, :func:`mbdcp.mechanics.simulate` and the docs' table of
formulations read it, as SciPy's ``minimize(method=...)`` reads its table of methods; adding a
formulation is one module that registers itself here, and its tests.

A formulation poses one time step of a contact scene given as the data of :func:`mbdcp.step`
(``M, Wn, D, E, mu, v, h`` and the keywords it models) through its ``pose`` function:
``pose(step, options) -> (call, note)``, where ``step`` is a :class:`StepInput` and ``call()``
solves, or ``call`` is None and ``note`` says why the formulation cannot pose that step.
"""
import importlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from mbdcp.infrastructure.problem import ContactData

__all__ = ["Formulation", "Layer", "StepInput", "register", "unregister", "formulation", "formulations", "variants", "STEP_DATA"]

# The problem data of a time step beyond (M, Wn, D, E, U, v, h): the keywords of mbdcp.step.
STEP_DATA = ("p_ext", "psi_n", "dpsi_n", "dpsi_f", "Wb", "theta", "dtheta", "Dj", "Ej", "beta_max")


@dataclass(slots=True)
class StepInput(ContactData):
    """One time step, validated (:func:`mbdcp.step`'s contact data, h and ``keywords``: the other
    problem data given, as validated arrays), and what other formulations need of it: ``Wt`` (the
    tangent pairs of D's directions, or None with ``wt_note`` saying why) and ``n_d`` (directions
    per contact)."""

    h: float
    keywords: dict
    Wt: Optional[np.ndarray] = None
    n_d: Optional[np.ndarray] = None
    wt_note: str = ""

    def modelled(self, data):
        """(the keywords a formulation that models ``data`` takes, a note naming the given data it
        does not model, "" when none)."""
        given = {k for k, x in self.keywords.items() if x is not None and np.any(x != 0)}
        missing = sorted(given - set(data))
        return ({k: x for k, x in self.keywords.items() if k in data and x is not None},
                f"this formulation does not model {', '.join(missing)}" if missing else "")


@dataclass(frozen=True)
class Layer:
    """A formulation seen as a differentiable layer of :mod:`mbdcp.jax` and :mod:`mbdcp.torch`
    (``mbdcp.<layer>.<name>``): what :mod:`mbdcp.derivatives._layers` reads of it.

    name
        The layer function's name (``"step"`` for the formulation ``"lcp"``).
    positional, keywords, combinatorial
        Its inputs by name: positional, the array keywords (differentiable), and the groupings
        among them (no derivative, zero gradient).
    outputs, output_forms
        The result fields it returns, in order, and each one's shape in dimension symbols
        (``("n_c", 3)``; ``n_v``, ``n_c``, ``m``, ``n_b``, ``m_j``, ``n_j`` are read from the inputs).
    extras, extra_forms
        The result fields its derivative needs beyond the outputs (carried beside them), and their
        shapes.
    filler
        The other fields of a result rebuilt from the outputs, with placeholder values (its
        derivative does not read them).
    derivative_options
        Options its derivative takes too (the others only drive the solver).
    anchor
        The input whose dimensions tell a batch apart from one problem (PyTorch).
    native, batch
        Optional faster paths, as dotted names: ``native(arrays, options, outs, cots, wanted)``
        gives the gradients by input name (or None: the derivative then), ``batch(problem, inst,
        layout, options)`` the stacked (outputs, extras, statuses) of a batch (or None: solved
        instance by instance then); see :mod:`mbdcp.derivatives._layers`.
    """

    name: str
    positional: tuple
    keywords: tuple
    outputs: tuple
    output_forms: tuple
    derivative_options: tuple
    anchor: str = "v"
    combinatorial: tuple = ()
    extras: tuple = ()
    extra_forms: tuple = ()
    filler: dict = field(default_factory=dict)
    native: Optional[str] = None
    batch: Optional[str] = None

    def native_function(self):
        """The native path (``native``), or None."""
        return _named(self.native)

    def batch_function(self):
        """The batch path (``batch``), or None."""
        return _named(self.batch)


@dataclass(frozen=True)
class Formulation:
    """One entry of the table.

    name, title, cite
        Its key, a one-line description and where it comes from (author, year, equations).
    function
        The public solver (``mbdcp.step``, ``mbdcp.ccp``, ...).
    result
        The result type it returns.
    derivative
        The dotted name of its derivative in :mod:`mbdcp.derivatives`, or None.
    contacts
        How it takes friction: ``"directions"`` (D, E: a polygonal cone), ``"pairs"`` (Wt: a
        tangent pair per contact), or None when it poses no time step (the instantaneous model,
        the Coulomb problem on a Delassus matrix).
    data, options
        The problem data of a time step it models (:data:`STEP_DATA`), and its solver options.
    pose
        ``pose(step, options) -> (call, note)`` (see the module docstring), or None.
    variants
        Names under which it runs with fixed options, e.g. ``{"fixed_point_1": {"algorithm": 1}}``.
    stepper
        The dotted name of its scene stepper (a factory in :mod:`mbdcp.mechanics.steppers`), when
        :func:`mbdcp.mechanics.simulate` steps scenes with it (``method=name``); else None.
    algorithm
        ``(keyword, default, choices)``: the solver option that simulate's ``algorithm=`` sets, its
        default there and its choices; None when it has none.
    defaults
        Options per use that differ from the solver's own defaults: ``{"compare": {...}}``.
    stops
        Whether a step not SOLVED stops a run of :func:`mbdcp.mechanics.simulate` (and of
        :func:`mbdcp.mujoco.simulate`): its solver then leaves no motion to go on with (Lemke's last
        basic point); else the run goes on with the solver's last iterate and records the status.
    layer
        How :mod:`mbdcp.jax` and :mod:`mbdcp.torch` see it (a :class:`Layer`, with a derivative),
        or None.
    scene_form
        How :func:`mbdcp.mechanics.simulate` assembles M and the Jacobians for its stepper
        (:data:`mbdcp.mechanics.assembly.FORMS`); None: by ``contacts`` (dense for "directions",
        blocks for "pairs").
    """

    name: str
    title: str
    cite: str
    function: Callable
    result: type
    derivative: Optional[str]
    contacts: Optional[str]
    data: frozenset
    options: frozenset
    pose: Optional[Callable]
    variants: dict = field(default_factory=dict)
    stepper: Optional[str] = None
    algorithm: Optional[tuple] = None
    defaults: dict = field(default_factory=dict)
    stops: bool = False
    layer: Optional[Layer] = None
    scene_form: Optional[str] = None

    @property
    def scenes(self):
        """Whether :func:`mbdcp.mechanics.simulate` steps scenes with it."""
        return self.stepper is not None

    def derivative_function(self):
        """The derivative (``mbdcp.derivatives.<name>``), or None."""
        return _named(self.derivative)

    def stepper_function(self):
        """The scene stepper (``mbdcp.mechanics.steppers.<name>``), or None."""
        return _named(self.stepper)


def _named(dotted):
    """The object of a dotted name (imported when asked: the modules it lives in import this one)."""
    if dotted is None:
        return None
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


_TABLE = {}


def register(entry):
    """Add a formulation to the table (each formulation's module does, once, at import)."""
    if not isinstance(entry, Formulation):
        raise TypeError(f"register takes a Formulation, got {type(entry).__name__}")
    if entry.contacts not in ("directions", "pairs", None) or (entry.pose is None) != (entry.contacts is None):
        raise ValueError(f"{entry.name}: contacts must be 'directions' or 'pairs' with a pose, or None without")
    if entry.layer is not None and entry.derivative is None:
        raise ValueError(f"{entry.name}: a layer needs a derivative")
    if entry.name in _TABLE and _TABLE[entry.name] is not entry:
        raise ValueError(f"a formulation named {entry.name!r} is registered already")
    _TABLE[entry.name] = entry
    return entry


def unregister(name):
    """Remove a formulation from the table (for a plugin's or a test's own entries)."""
    _TABLE.pop(name)


def formulations():
    """The registered formulations, in the order they were registered (a tuple of Formulation)."""
    return tuple(_TABLE.values())


def formulation(name):
    """The formulation of that name, or of that variant (a ValueError names the choices)."""
    for entry in _TABLE.values():
        if name == entry.name or name in entry.variants:
            return entry
    raise ValueError(f"formulation must be one of {variants()}, got {name!r}")


def variants():
    """Every name under which a formulation poses a time step (its variants, or its own name), in
    table order."""
    return tuple(n for entry in _TABLE.values() if entry.pose for n in (tuple(entry.variants) or (entry.name,)))
