"""The gap seen by the stabilisation term Ψ/h of the time-stepping formulations.

A penetration Ψ_i < 0 is removed in one step by default: the contact row asks for a normal
velocity of at least -Ψ_i/h, which for a small h or a deep penetration launches the bodies apart
(a sphere that sank 6 mm at h = 0.002 would leave at 3 m/s). Seed 004 (section 3) suggests
capping that correction velocity; a Baumgarte factor b in (0, 1] removes only the fraction b of
the penetration per step. The gap used is then

    Ψ̃_i = Ψ_i                                 if Ψ_i >= 0 (a gap is never changed),
    Ψ̃_i = max(b Ψ_i, -h v_max)                if Ψ_i < 0,

so that the correction velocity -Ψ̃_i/h is at most v_max.
"""
import numbers

import numpy as np

from mbdcp import _validate as val


def settings(max_correction_speed, baumgarte):
    """Validated (v_max or None, b)."""
    if max_correction_speed is not None:
        max_correction_speed = val.positive_scalar("max_correction_speed", max_correction_speed)
    if isinstance(baumgarte, (bool, np.bool_)) or not isinstance(baumgarte, numbers.Real):
        raise TypeError(f"baumgarte must be a real number, got {type(baumgarte).__name__}")
    if not 0.0 < float(baumgarte) <= 1.0:
        raise ValueError(f"baumgarte must be in (0, 1], got {baumgarte}")
    return max_correction_speed, float(baumgarte)


def active(max_correction_speed, baumgarte):
    return max_correction_speed is not None or baumgarte != 1.0


def gap(name, psi, h, max_correction_speed, baumgarte):
    """Ψ̃ for the gaps ``psi`` (validated 1-D array or None) at step h (validated)."""
    if psi is None:
        return None
    psi = val.as_array(name, psi, 1)
    pen = psi < 0
    if not pen.any():
        return psi
    out = psi.copy()
    out[pen] = baumgarte * psi[pen]
    if max_correction_speed is not None:
        out[pen] = np.maximum(out[pen], -h * max_correction_speed)
    return out


def chain(psi, psi_tilde, h, max_correction_speed, baumgarte):
    """(dΨ̃/dΨ, dΨ̃/dh) per row, for derivatives through the correction (one-sided at the kinks
    Ψ = 0 and bΨ = -h v_max: the side of the formula that holds there is used)."""
    slope = np.where(psi < 0, baumgarte, 1.0)
    rate = np.zeros_like(psi)
    if max_correction_speed is not None:
        capped = (psi < 0) & (psi_tilde == -h * max_correction_speed) & (baumgarte * psi < psi_tilde)
        slope[capped] = 0.0
        rate[capped] = -max_correction_speed
    return slope, rate
