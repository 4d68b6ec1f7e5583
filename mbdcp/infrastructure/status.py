"""Solver status shared by every mbdcp solver."""
import enum

from mbdcp.infrastructure import _core

__all__ = ["Status"]


class Status(enum.IntEnum):
    """Outcome of a solver run (the C core's ``MbdcpStatus``).

    A solver that runs never raises for its outcome: it returns a result whose
    ``status`` is one of these and whose ``success`` is ``status == SOLVED``.
    """

    SOLVED = _core.SOLVED
    """The result was verified to satisfy the problem's conditions."""
    RAY_TERMINATION = _core.RAY_TERMINATION
    """Lemke: no blocking variable (the LCP is infeasible if its matrix is copositive-plus).
    :func:`mbdcp.coulomb`, :func:`mbdcp.ccp_local` and :func:`mbdcp.ccp`: no solution exists (the
    result holds a certificate) or none was found because the iterates grew without bound (the
    message says which)."""
    MAX_ITERATIONS = _core.MAX_ITERATIONS
    """The pivot or iteration limit was reached."""
    NUMERICAL_ERROR = _core.NUMERICAL_ERROR
    """Singular pivot, breakdown, non-finite values, or a result that failed verification."""
    INTERRUPTED = _core.INTERRUPTED
    """The solve was interrupted (Ctrl-C); the Python functions raise KeyboardInterrupt instead."""

    @property
    def message(self) -> str:
        return _core.status_message(int(self))
