"""Result objects: frozen dataclasses with named fields, ``success``, ``status``, ``message`` first."""
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np

from mbdcp.status import Status


def _repr_array(a):
    return np.array2string(np.asarray(a), precision=6, threshold=12, edgeitems=3, suppress_small=True)


class _Result:
    """Shared behaviour: a readable repr listing the fields."""

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for name in self.__dataclass_fields__:
            val = getattr(self, name)
            if isinstance(val, np.ndarray):
                val = _repr_array(val)
            elif isinstance(val, Status):
                val = val.name
            elif isinstance(val, list) and len(val) > 8:
                val = f"[{', '.join(map(str, val[:8]))}, ... ({len(val)} items)]"
            lines.append(f"    {name}={val},")
        lines.append(")")
        return "\n".join(lines)


@dataclass(frozen=True, repr=False)
class LemkeResult(_Result):
    """Result of :func:`mbdcp.lemke` for LCP(M, q): z >= 0, w = M z + q >= 0, z.w = 0."""

    success: bool
    status: Status
    message: str
    z: np.ndarray
    w: np.ndarray
    pivots: int
    residual: float
    trace: Optional[List[Tuple[str, str]]] = None
    basis: Optional[np.ndarray] = None
    certificate: Optional[np.ndarray] = None
    warm_started: bool = False


@dataclass(frozen=True, repr=False)
class LCPData(_Result):
    """The standard LCP(F, f) a time step solved, and its solution z with w = F z + f."""

    F: np.ndarray
    f: np.ndarray
    z: np.ndarray
    w: np.ndarray


@dataclass(frozen=True, repr=False)
class StepResult(_Result):
    """Result of one time step (:func:`mbdcp.step`)."""

    success: bool
    status: Status
    message: str
    v_next: np.ndarray
    p_n: np.ndarray
    beta: np.ndarray
    sigma: np.ndarray
    p_b: np.ndarray
    beta_j: np.ndarray
    sigma_j: np.ndarray
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)
    basis: Optional[np.ndarray] = None  # Lemke's final basis of the reduced LCP (True: z_i basic)


@dataclass(frozen=True, repr=False)
class RelaxResult(_Result):
    """Result of one relaxed subproblem (:func:`mbdcp.relax.p1`, :func:`mbdcp.relax.p2`)."""

    success: bool
    status: Status
    message: str
    v_next: np.ndarray
    p_n: np.ndarray
    beta: np.ndarray
    lam: np.ndarray
    p_b: np.ndarray
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)


@dataclass(frozen=True, repr=False)
class FixedPointResult(_Result):
    """Result of :func:`mbdcp.fixed_point` (Anitescu–Potra algorithms 1, 2, 3)."""

    success: bool
    status: Status
    message: str
    v_next: np.ndarray
    p_n: np.ndarray
    beta: np.ndarray
    lam: np.ndarray
    p_b: np.ndarray
    iterations: int
    converged: bool
    history: np.ndarray
    pivots: int
    algorithm: int


@dataclass(frozen=True, repr=False)
class FullRankResult(_Result):
    """Result of :func:`mbdcp.full_rank_step` (full-rank discretized friction)."""

    success: bool
    status: Status
    message: str
    v_next: np.ndarray
    p_n: np.ndarray
    p_t: np.ndarray
    kappa_plus: np.ndarray
    kappa_minus: np.ndarray
    rho: float
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)


@dataclass(frozen=True, repr=False)
class InstantaneousResult(_Result):
    """Result of :func:`mbdcp.instantaneous` (acceleration-level contact model)."""

    success: bool
    status: Status
    message: str
    a: np.ndarray
    c_n: np.ndarray
    beta: np.ndarray
    sigma: np.ndarray
    sliding: np.ndarray
    pivots: int
    residual: float
    lcp: Optional[LCPData] = field(default=None)


@dataclass(frozen=True, repr=False)
class CCPResult(_Result):
    """Result of :func:`mbdcp.ccp` (cone complementarity problem)."""

    success: bool
    status: Status
    message: str
    gamma: np.ndarray
    p_b: np.ndarray
    v_next: np.ndarray
    iterations: int
    residual: float
    history: np.ndarray
    method: str


@dataclass(frozen=True, repr=False)
class CoulombResult(_Result):
    """Result of :func:`mbdcp.coulomb` (Coulomb friction on the Delassus matrix, FCLib's local problem).

    ``r`` (3 n_c,): reactions, per contact normal then tangents; ``u`` = W r + q (without de Saxcé's
    shift); ``residual``: :math:`\\|r - \\Pi_K(r - \\hat u)\\|_2 / \\|q\\|_2` with
    :math:`\\hat u = u + \\mu\\|u_T\\| e_n`; ``iterations``: sweeps (nsgs) or fixed-point iterations;
    ``inner_iterations``: the CCP solves' iterations (fixed_point); ``local_failures``: local solves
    where no case could be verified; ``history``: the residual after each iteration."""

    success: bool
    status: Status
    message: str
    r: np.ndarray
    u: np.ndarray
    residual: float
    iterations: int
    history: np.ndarray
    method: str
    inner_iterations: int = 0
    local_failures: int = 0


@dataclass(frozen=True, repr=False)
class LocalCCPResult(_Result):
    """Result of :func:`mbdcp.ccp_local` (the cone complementarity problem on the Delassus matrix).

    Fields as :class:`CoulombResult`, with the residual :math:`\\|r - \\Pi_K(r - u)\\|_2 / \\|q\\|_2`."""

    success: bool
    status: Status
    message: str
    r: np.ndarray
    u: np.ndarray
    residual: float
    iterations: int
    history: np.ndarray
    method: str
    inner_iterations: int = 0
    local_failures: int = 0
