"""mbdcp: multibody dynamics with contact and friction as complementarity problems.

A C99 core with a thin Cython layer over NumPy arrays. Each formulation states itself in its
docstring, in the project's unified notation (the documentation's Formulations section gives it,
with the symbol each source paper uses for each quantity, and a chapter per model):

- :func:`lemke` — Lemke's method for LCP(M, q), verified results;
- :func:`step` — one Stewart–Trinkle / Anitescu–Potra time step (contacts, friction, joints);
- :func:`fixed_point`, :mod:`mbdcp.relax` — Anitescu & Hart's relaxations P1, P2, algorithms 1–3;
- :func:`full_rank_step`, :func:`full_rank_acceleration` — Peiret–Kövecses–Font-Llagunes full-rank friction LCP;
- :func:`ccp` — cone complementarity of Anitescu & Tasora (2010) (APGD, Jacobi, Gauss–Seidel), sparse;
- :func:`coulomb`, :func:`ccp_local` — Coulomb friction (FCLib's problem) and the CCP on the Delassus matrix W;
- :func:`instantaneous` — the acceleration-level model (Painlevé);
- :func:`compare` — one step with every formulation, as a table; :class:`ContactState` per contact;
- :mod:`mbdcp.mechanics` — rigid bodies, contacts and whole simulations;
- :mod:`mbdcp.study` — parameter studies (local cores or Dask) and performance profiles.
- :mod:`mbdcp.io` — FCLib (HDF5) and Siconos problem files.
- :mod:`mbdcp.derivatives` — exact derivatives (jvp, vjp) of LCP, step and CCP solutions.
- :mod:`mbdcp.widgets` — interactive explorers of the worked examples (ipywidgets; static figures otherwise).
"""
from mbdcp import batch, derivatives, io, relax
from mbdcp import study  # imports pandas and dask only when called
from mbdcp import widgets  # ipywidgets is imported only when an explorer is built
from mbdcp._version import __version__
from mbdcp.ccp import ccp
from mbdcp.compare import compare
from mbdcp.contact_state import ContactState
from mbdcp.coulomb import ccp_local, coulomb
from mbdcp.full_rank import full_rank_acceleration, full_rank_step
from mbdcp.instantaneous import instantaneous
from mbdcp.lemke import lcp_residual, lemke
from mbdcp.relax import fixed_point
from mbdcp.results import (CCPResult, CoulombResult, FixedPointResult, FullRankResult, InstantaneousResult, LCPData,
                           LemkeResult, LocalCCPResult, RelaxResult, StepResult)
from mbdcp.status import Status
from mbdcp.step import friction_basis, step

__all__ = [
    "Status",
    "ContactState",
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
    "compare",
    "instantaneous",
    "relax",
    "study",
    "io",
    "derivatives",
    "batch",
    "widgets",
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
