"""What of a MuJoCo model the mbdcp step does not model: found once per model and warned about in
one :class:`NotMappedWarning` naming each feature (the documentation's table lists them all)."""
import warnings

import numpy as np

__all__ = ["NotMappedWarning", "not_mapped", "warn_not_mapped"]


class NotMappedWarning(UserWarning):
    """A feature of a MuJoCo model that :mod:`mbdcp.mujoco` does not map to the time-stepping LCP."""


def _differs(values, default):
    """True when some row of ``values`` (n, k) is not ``default`` (k,)."""
    values = np.asarray(values, dtype=float)
    return values.size > 0 and not np.allclose(values.reshape(len(values), -1), default)


def _soft_parameters(mj, m):
    """The names of the soft-constraint parameters set to other than MuJoCo's defaults."""
    solref, solimp = np.zeros(2), np.zeros(5)
    mj.mj_defaultSolRefImp(solref, solimp)
    refs = ("geom_solref", "pair_solref", "jnt_solref", "dof_solref", "eq_solref", "tendon_solref_lim", "tendon_solref_fri")
    imps = ("geom_solimp", "pair_solimp", "jnt_solimp", "dof_solimp", "eq_solimp", "tendon_solimp_lim", "tendon_solimp_fri")
    found = [name for name in refs if hasattr(m, name) and _differs(getattr(m, name), solref)]
    found += [name for name in imps if hasattr(m, name) and _differs(getattr(m, name), solimp)]
    if hasattr(m, "pair_solreffriction") and _differs(m.pair_solreffriction, np.zeros(2)):
        found.append("pair_solreffriction")
    if _differs(m.geom_solmix, np.ones(1)):
        found.append("geom_solmix")
    if m.opt.impratio != 1.0:
        found.append("opt.impratio")
    return found


def not_mapped(mj, m):
    """[(feature, what mbdcp does instead)] for the MuJoCo model ``m`` (an MjModel)."""
    found = []
    condim = np.r_[m.geom_condim, m.pair_dim if m.npair else []]
    if np.any(condim > 3):
        found.append(("torsional and rolling friction (condim 4 or 6)", "only the sliding friction is modelled"))
    soft = _soft_parameters(mj, m)
    if soft:
        found.append((f"soft-constraint parameters ({', '.join(soft)})", "contacts, limits and joints are rigid"))
    margins = [m.geom_margin, m.geom_gap] + ([m.pair_margin, m.pair_gap] if m.npair else [])
    if any(np.any(np.asarray(x) != 0) for x in margins):
        found.append(("contact margin and gap", "replaced by the activation distance delta"))
    if m.nflex:
        found.append(("flexible bodies (flex)", "their contacts are left out"))
    if m.na:
        found.append(("actuator activation states (act)", "held at their values at the start"))
    if m.opt.integrator != int(mj.mjtIntegrator.mjINT_EULER):
        name = mj.mjtIntegrator(m.opt.integrator).name
        found.append((f"the integrator ({name})", "mbdcp's time-stepping (semi-implicit Euler) is used"))
    if m.opt.enableflags & int(mj.mjtEnableBit.mjENBL_OVERRIDE):
        found.append(("contact override (opt.o_margin, o_solref, o_solimp, o_friction)", "ignored"))
    return found


def warn_not_mapped(found, stacklevel=3):
    """One NotMappedWarning naming every feature of ``found`` (nothing when it is empty)."""
    if found:
        listed = "; ".join(f"{feature}: {instead}" for feature, instead in found)
        warnings.warn(f"mbdcp.mujoco does not map these features of the model: {listed} (see the table in the "
                      "documentation of mbdcp.mujoco)", NotMappedWarning, stacklevel=stacklevel)
