"""mbdcp: multibody dynamics with contact and friction as complementarity problems.

A C99 core with a thin Cython layer over NumPy arrays. Each formulation states itself in its
docstring, in the project's unified notation (the documentation's Formulations section gives it,
with the symbol each source paper uses for each quantity, and a chapter per model):

- :func:`lemke` — Lemke's method for LCP(M, q), verified results;
- :func:`step` — one Stewart–Trinkle / Anitescu–Potra time step (contacts, friction, joints);
- :func:`fixed_point`, :mod:`mbdcp.relax` — Anitescu & Hart's relaxations P1, P2, algorithms 1–3;
- :func:`full_rank_step`, :func:`full_rank_acceleration` — Peiret–Kövecses–Font-Llagunes full-rank friction LCP;
- :func:`ccp` — cone complementarity of Anitescu & Tasora (2010), sparse: APGD, projected Jacobi and
  Gauss–Seidel, the interior-point method (``ipm``), the semismooth Newton method (``newton``) and
  ``auto`` (APGD, then the interior-point method);
- :func:`coulomb`, :func:`ccp_local` — Coulomb friction (FCLib's problem) and the CCP on the Delassus matrix W;
- :func:`instantaneous` — the acceleration-level model (Painlevé);
- :func:`compare` — one step with every formulation, as a table; :class:`ContactState` per contact;
- :mod:`mbdcp.mechanics` — rigid bodies, contacts and whole simulations;
- :mod:`mbdcp.study` — parameter studies (local cores or Dask) and performance profiles.
- :mod:`mbdcp.io` — FCLib (HDF5) and Siconos problem files.
- :mod:`mbdcp.derivatives` — exact derivatives (jvp, vjp) of LCP, step and CCP solutions.
- :mod:`mbdcp.widgets` — interactive explorers of the worked examples (ipywidgets; static figures otherwise).
"""
import importlib
import sys

from mbdcp._version import __version__
from mbdcp.formulations.ccp import ccp
from mbdcp.formulations.coulomb import ccp_local, coulomb
from mbdcp.formulations.full_rank import full_rank_acceleration, full_rank_step
from mbdcp.formulations.instantaneous import instantaneous
from mbdcp.formulations.lemke import lcp_residual, lemke
from mbdcp.formulations.relax import fixed_point
from mbdcp.formulations.step import friction_basis, step
from mbdcp.infrastructure.contact_state import ContactState
from mbdcp.infrastructure.results import (
    CCPResult,
    CoulombResult,
    FixedPointResult,
    FullRankResult,
    InstantaneousResult,
    LCPData,
    LemkeResult,
    LocalCCPResult,
    RelaxResult,
    StepResult,
)
from mbdcp.infrastructure.status import Status
from mbdcp.tools.compare import compare

# The modules users import as mbdcp.<name>, and the paths they had before the package was grouped by
# role: each name is the module itself (``import mbdcp.relax``, ``from mbdcp.io import read_fclib``).
_MODULES = {
    "relax": "mbdcp.formulations.relax", "batch": "mbdcp.tools.batch", "io": "mbdcp.tools.io",
    "study": "mbdcp.tools.study", "widgets": "mbdcp.tools.widgets", "examples": "mbdcp.tools.examples",
    "testing": "mbdcp.tools.testing", "demos": "mbdcp.tools.demos", "results": "mbdcp.infrastructure.results",
    "status": "mbdcp.infrastructure.status", "contact_state": "mbdcp.infrastructure.contact_state",
    "_core": "mbdcp.infrastructure._core", "_validate": "mbdcp.infrastructure.validate",
    "_problem": "mbdcp.infrastructure.problem", "_stabilization": "mbdcp.infrastructure.stabilization",
    "_crash": "mbdcp.formulations.crash",
}
# Modules whose name at mbdcp.* is a function: importable by their old path only.
_PATHS = {"lemke": "mbdcp.formulations.lemke", "step": "mbdcp.formulations.step", "ccp": "mbdcp.formulations.ccp",
          "coulomb": "mbdcp.formulations.coulomb", "full_rank": "mbdcp.formulations.full_rank",
          "instantaneous": "mbdcp.formulations.instantaneous", "compare": "mbdcp.tools.compare"}
for _name, _path in {**_MODULES, **_PATHS}.items():
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(_path)
    for _sub in [k for k in sys.modules if k.startswith(_path + ".")]:  # mbdcp.io.fclib: one module, two names
        sys.modules[f"{__name__}.{_name}" + _sub[len(_path):]] = sys.modules[_sub]
for _name in _MODULES:
    globals()[_name] = sys.modules[f"{__name__}.{_name}"]
from mbdcp import derivatives  # noqa: E402  (its modules import the formulations above)

del _name, _path, _sub

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
