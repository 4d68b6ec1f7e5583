"""The reverse mode of a plain time step (:func:`mbdcp.step` without joints, moving surfaces or gap
correction) in the C core, for the backward passes of :mod:`mbdcp.jax` and :mod:`mbdcp.torch`.

It is :func:`mbdcp.derivatives.step`'s vjp where that derivative is one linear system (contacts
separated, sliding or sticking; the imposed rows independent; see ``step_vjp.h``), from the same
data with the same thresholds, without building the derivative object. Everywhere else (a
degenerate point, a dependent sticking row, a near-singular system, ...) :func:`vjp` returns None
and the caller takes :func:`mbdcp.derivatives.step`, which warns naming the contacts or raises.
"""
import numpy as np

from mbdcp.derivatives._common import DEGENERATE_TOL, GEOMETRY
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val

# a plain step's inputs, and the options that leave it plain (the solver's, and the derivative's
# at their defaults: see plain())
INPUTS = ("M", "Wn", "D", "E", "U", "v", "h", "p_ext", "psi_n")
OPTIONS = ("max_iter", "tol", "degenerate_tol", "method", "baumgarte", "max_correction_speed")
_INPUTS, _OPTIONS = frozenset(INPUTS), frozenset(OPTIONS)
_MATRICES = ("M", "Wn", "D")


def plain(names, options):
    """True for a step with inputs of these names and these options that is plain: Lemke's
    solution, no joints, moving surfaces or gap correction."""
    if not _INPUTS.issuperset(names) or not _OPTIONS.issuperset(options):
        return False
    return (options.get("method", "lemke") == "lemke" and options.get("max_correction_speed") is None
            and options.get("baumgarte", 1.0) == 1.0)


def _f64(x):
    return None if x is None else np.ascontiguousarray(x, dtype=np.float64)


def vjp(arrays, options, outs, cots, wanted):
    """Gradients by input name (those in ``wanted``, but E) of sum_k <cots[k], outs[k]> at the
    solution ``outs`` (v_next, p_n, beta, sigma first) of the step with inputs ``arrays`` (by name),
    checked by its solve; U's gradient per contact, h's a float. None where the C rule does not
    decide (the step is not plain, U is a matrix, or the point is not one linear system's)."""
    if not plain(arrays, options) or np.ndim(arrays["U"]) > 1:
        return None
    U = arrays["U"]
    mu = _f64(U) if np.ndim(U) == 1 else np.full(np.shape(arrays["Wn"])[1], float(U))  # a scalar: each contact's
    tol = val.positive_scalar("degenerate_tol", options.get("degenerate_tol", DEGENERATE_TOL))
    step = (*(_f64(arrays[k]) for k in ("M", "Wn", "D", "E")), mu, _f64(arrays["v"]), float(arrays["h"]),
            _f64(arrays.get("p_ext")), _f64(arrays.get("psi_n")))
    cots = tuple(_f64(c) for c in cots[:4]) + (None,) * (4 - min(len(cots), 4))
    geometry = not GEOMETRY.isdisjoint(wanted)  # the full derivative tells whether they hold a dependence
    # the other thresholds are the C core's own (step_vjp.h), as mbdcp.derivatives.step reads them
    _, grads = _core.step_vjp(step, tuple(_f64(x) for x in outs[:4]), cots, (tol, geometry),
                              *(m in wanted for m in _MATRICES))
    return grads
