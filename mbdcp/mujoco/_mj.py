"""MuJoCo, imported when first needed (it is an optional dependency: ``pip install mbdcp[mujoco]``),
and the few calls whose signature changed between its versions."""
import importlib

INSTALL = "pip install mbdcp[mujoco]"


def mujoco():
    """The mujoco module; an ImportError naming the extra to install when it is missing."""
    try:
        return importlib.import_module("mujoco")
    except ImportError as exc:
        raise ImportError(f"mbdcp.mujoco needs MuJoCo (mujoco >= 3.1), which is not installed: {INSTALL}") from exc


def full_mass(mj):
    """fill(m, d, out): the dense mass matrix into ``out`` (n_v, n_v). MuJoCo 3.3 and later read it
    from the data, ``mj_fullM(m, d, out)``; earlier versions from ``d.qM``, ``mj_fullM(m, out, d.qM)``."""
    if "MjData" in (mj.mj_fullM.__doc__ or "").split("->")[0]:
        return lambda m, d, out: mj.mj_fullM(m, d, out)
    return lambda m, d, out: mj.mj_fullM(m, out, d.qM)


def kinematics(mj):
    """run(m, d): positions, centres of mass, flexes and tendons (mj_fwdKinematics where it exists)."""
    if hasattr(mj, "mj_fwdKinematics"):
        return mj.mj_fwdKinematics
    stages = [getattr(mj, name) for name in ("mj_kinematics", "mj_comPos", "mj_camlight", "mj_flex", "mj_tendon")
              if hasattr(mj, name)]

    def run(m, d):
        for stage in stages:
            stage(m, d)
    return run


def mass(mj):
    """run(m, d): the mass matrix and its factor (mj_makeM, or mj_crb before MuJoCo 3.2)."""
    make = getattr(mj, "mj_makeM", None) or mj.mj_crb

    def run(m, d):
        make(m, d)
        mj.mj_factorM(m, d)
    return run
