"""mbdcp: multibody dynamics with contact and friction as complementarity problems.

A C99 core with a thin Cython layer over NumPy arrays. Each formulation states itself, in the
papers' notation, in its docstring:

- :func:`lemke` — Lemke's method for LCP(M, q), verified results;
- :func:`step` — one Stewart–Trinkle / Anitescu–Potra time step (contacts, friction, joints);
- :func:`fixed_point`, :mod:`mbdcp.relax` — Anitescu–Potra relaxations P1, P2, algorithms 1–3;
- :func:`full_rank_step`, :func:`full_rank_acceleration` — Peiret–Kövecses–Font-Llagunes full-rank friction LCP;
- :func:`ccp` — Anitescu–Tasora cone complementarity (APGD, Jacobi, Gauss–Seidel), sparse;
- :func:`coulomb`, :func:`ccp_local` — Coulomb friction (FCLib's problem) and the CCP on the Delassus matrix W;
- :func:`instantaneous` — the acceleration-level model (Painlevé);
- :mod:`mbdcp.mechanics` — rigid bodies, contacts and whole simulations;
- :mod:`mbdcp.study` — parameter studies (local cores or Dask) and performance profiles.
- :mod:`mbdcp.io` — FCLib (HDF5) and Siconos problem files.
- :mod:`mbdcp.derivatives` — exact derivatives (jvp, vjp) of LCP, step and CCP solutions.
"""
from mbdcp.status import Status
from mbdcp.lemke import lemke, lcp_residual
from mbdcp.step import step, friction_basis
from mbdcp.results import (LemkeResult, StepResult, LCPData, RelaxResult, FixedPointResult,
                           FullRankResult, InstantaneousResult, CCPResult, CoulombResult, LocalCCPResult)
from mbdcp.full_rank import full_rank_step, full_rank_acceleration
from mbdcp.ccp import ccp
from mbdcp.coulomb import coulomb, ccp_local
from mbdcp.instantaneous import instantaneous
from mbdcp import relax
from mbdcp import study  # imports pandas and dask only when called
from mbdcp import io
from mbdcp import derivatives
from mbdcp import batch
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
    "full_rank_acceleration",
    "ccp",
    "coulomb",
    "ccp_local",
    "instantaneous",
    "relax",
    "study",
    "io",
    "derivatives",
    "batch",
    "LemkeResult",
    "StepResult",
    "LCPData",
    "RelaxResult",
    "FixedPointResult",
    "FullRankResult",
    "InstantaneousResult",
    "CCPResult",
    "CoulombResult",
    "LocalCCPResult",
    "__version__",
]
