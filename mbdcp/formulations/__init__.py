"""The formulations, one module each, every one registered once in :mod:`mbdcp.formulations.registry`:
Lemke's method (:mod:`~mbdcp.formulations.lemke`), the time-stepping LCP (:mod:`~mbdcp.formulations.step`),
its fixed-point relaxations (:mod:`~mbdcp.formulations.relax`, with the crash basis of
:mod:`~mbdcp.formulations.crash`), the full-rank friction LCP (:mod:`~mbdcp.formulations.full_rank`),
the instantaneous model (:mod:`~mbdcp.formulations.instantaneous`), the cone complementarity problem
(:mod:`~mbdcp.formulations.ccp`) and the Coulomb problem (:mod:`~mbdcp.formulations.coulomb`). Their
public names are at ``mbdcp.*``."""

# the table's order, which compare's rows and the docs' table follow
from mbdcp.formulations import step, relax, full_rank, ccp, instantaneous, coulomb  # noqa: E402,F401,I001

__all__ = []  # the names live at mbdcp.* (see above)
