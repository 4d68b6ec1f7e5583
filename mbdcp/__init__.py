"""mbdcp: multibody dynamics with contact and friction as complementarity problems.

A C99 core with a thin Cython layer. See DESIGN notes in the docstrings of
:func:`lemke` (Lemke's method) and :func:`step` (the Stewart–Trinkle /
Anitescu–Potra time-stepping LCP).
"""
from mbdcp.status import Status
from mbdcp.lemke import lemke, lcp_residual
from mbdcp.step import step, friction_basis
from mbdcp.results import (LemkeResult, StepResult, LCPData, RelaxResult, FixedPointResult,
                           FullRankResult, InstantaneousResult, CCPResult)
from mbdcp.full_rank import full_rank_step
from mbdcp.ccp import ccp
from mbdcp.instantaneous import instantaneous
from mbdcp import relax
from mbdcp.relax import fixed_point

__version__ = "0.1.0"

__all__ = [
    "Status",
    "lemke",
    "lcp_residual",
    "step",
    "friction_basis",
    "fixed_point",
    "full_rank_step",
    "ccp",
    "instantaneous",
    "relax",
    "LemkeResult",
    "StepResult",
    "LCPData",
    "RelaxResult",
    "FixedPointResult",
    "FullRankResult",
    "InstantaneousResult",
    "CCPResult",
    "__version__",
]
