"""The gap seen by the stabilisation term Ψ/h of the time-stepping formulations.

A penetration Ψ_i < 0 is removed in one step by default: the contact row asks for a normal
velocity of at least -Ψ_i/h, which for a small h or a deep penetration launches the bodies apart
(a sphere that sank 6 mm at h = 0.002 would leave at 3 m/s). Negrut, Serban & Tasora (2018)
suggest capping that correction velocity (discussion of their eq. 6); a Baumgarte factor b in (0, 1] removes only the fraction b of
the penetration per step. The gap used is then

    Ψ̃_i = Ψ_i                                 if Ψ_i >= 0 (a gap is never changed),
    Ψ̃_i = max(b Ψ_i, -h v_max)                if Ψ_i < 0,

so that the correction velocity -Ψ̃_i/h is at most v_max.
"""
from typing import NamedTuple

import numpy as np

from mbdcp.infrastructure import validate as val

__all__ = ["settings", "corrected", "differentiable", "Chain"]


def settings(max_correction_speed, baumgarte):
    """Validated (v_max or None, b)."""
    if max_correction_speed is not None:
        max_correction_speed = val.positive_scalar("max_correction_speed", max_correction_speed)
    return max_correction_speed, val.scalar_in("baumgarte", baumgarte, 0.0, 1.0, low_open=True)


def corrected(name, psi, h, max_correction_speed, baumgarte):
    """Ψ̃ for the gaps ``psi`` (array_like or None) at step h, the settings validated; ``psi`` itself
    when no correction is asked for (the defaults: no cap, b = 1)."""
    return differentiable(name, psi, h, max_correction_speed, baumgarte)[0]


def differentiable(name, psi, h, max_correction_speed, baumgarte):
    """(Ψ̃, its :class:`Chain` or None when Ψ̃ is Ψ)."""
    if max_correction_speed is None and type(baumgarte) is float and baumgarte == 1.0:
        return psi, None  # the common case, checked first: nothing to validate or change
    v_max, b = settings(max_correction_speed, baumgarte)
    if psi is None or (v_max is None and b == 1.0):
        return psi, None
    psi = val.as_array(name, psi, 1)
    h = val.positive_scalar("h", h)
    psi_tilde = psi.copy()
    pen = psi < 0
    psi_tilde[pen] = b * psi[pen]
    slope = np.where(pen, b, 1.0)
    rate = np.zeros_like(psi)
    if v_max is not None:
        psi_tilde[pen] = np.maximum(psi_tilde[pen], -h * v_max)
        # one-sided at the kink b psi = -h v_max: the side of the formula that holds there
        capped = pen & (psi_tilde == -h * v_max) & (b * psi < psi_tilde)
        slope[capped] = 0.0
        rate[capped] = -v_max
    return psi_tilde, Chain(slope, rate)


class Chain(NamedTuple):
    """dΨ̃/dΨ (``slope``) and dΨ̃/dh (``rate``) per row, for derivatives through the correction."""

    slope: np.ndarray
    rate: np.ndarray

    def tangent(self, t_psi, t_h):
        """The tangent of Ψ̃ from those of Ψ (or None) and h (or None); None when both are."""
        if t_psi is None and not t_h:
            return None
        return (0.0 if t_psi is None else self.slope * t_psi) + self.rate * (t_h or 0.0)

    def pullback(self, g_psi_tilde, g_h):
        """(gradient for Ψ, gradient for h) from those for Ψ̃ and h."""
        return g_psi_tilde * self.slope, g_h + float(g_psi_tilde @ self.rate)
