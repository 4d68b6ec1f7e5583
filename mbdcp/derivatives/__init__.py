r"""Exact derivatives of complementarity solutions by the implicit function theorem.

At a solution, the complementary pairs split into active ones (impulse free, complementary row
kept at zero) and inactive ones (impulse kept at zero). Holding that split, the solution is a
smooth function of the data, and its derivative solves one linear system: factored once per
derivative object, so each forward (``jvp``) or reverse (``vjp``) product costs one solve.

- :func:`lcp` — z of LCP(M, q) from :func:`mbdcp.lemke`: ``dz_dq``, ``jvp(dM, dq)``, ``vjp(gz)``;
- :func:`step` — one time step of :func:`mbdcp.step`, in every input (contacts, friction, joints,
  moving surfaces, joint friction): ``jvp(**tangents)``, ``vjp(v_next=..., ...)``;
- :func:`ccp` — one step of :func:`mbdcp.ccp` (cone complementarity), sparse inputs kept sparse.

Where a pair is degenerate (z_i = w_i = 0: a contact exactly grazing, exactly at the edge of the
friction cone, at the cone's apex) the solution has a kink: the derivative returned is the
one-sided derivative of a documented piece, and such points are listed in ``degenerate``.
"""
from mbdcp.derivatives.ccp import CCPDerivative, ccp
from mbdcp.derivatives.lcp import LCPDerivative, LCPGradient, lcp
from mbdcp.derivatives.step import StepDerivative, step

__all__ = ["CCPDerivative", "LCPDerivative", "LCPGradient", "StepDerivative", "ccp", "lcp", "step"]
