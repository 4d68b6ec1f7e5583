r"""Derivatives of the solution of LCP(M, q) by the implicit function theorem."""
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from mbdcp.derivatives._common import DEGENERATE_TOL, _Repr, dense_tangent, finite_result, lu_factor, lu_solve
from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.results import LemkeResult
from mbdcp.infrastructure.status import Status

__all__ = ["LCPDerivative", "LCPGradient", "lcp"]

#: an active block this close to singular (reciprocal condition number) has no derivative (the C
#: core's, step_vjp.h: one definition for every derivative and the three rules of the step's)
RCOND_MIN = _core.DEFAULTS["step_vjp"]["rcond_min"]
_TINY = float(np.finfo(float).tiny)


class LCPGradient(NamedTuple):
    """Gradients of a scalar loss with respect to M (n, n) and q (n,)."""

    M: np.ndarray
    q: np.ndarray


@dataclass(frozen=True, repr=False)
class LCPDerivative(_Repr):
    r"""The derivative of a solution z of LCP(M, q) (built by :func:`lcp`).

    Fields: ``z``, ``w`` (the solution, w recomputed as M z + q); ``active`` (bool, True where z_i
    is free and w_i = 0 is kept); ``degenerate`` (indices with z_i = w_i = 0 within tolerance);
    ``margin`` (the smallest relative distance of a nondegenerate pair from degeneracy: data
    changes well below it keep the active set; infinity when every pair is degenerate).
    """

    z: np.ndarray
    w: np.ndarray
    active: np.ndarray
    degenerate: np.ndarray
    margin: float
    _M: np.ndarray = field(repr=False)
    _idx: np.ndarray = field(repr=False)
    _lu: tuple = field(repr=False)

    @property
    def dz_dq(self):
        """The (n, n) Jacobian dz/dq: -(M_aa)^-1 on the active rows and columns, zero elsewhere."""
        n, a = self.z.shape[0], self._idx
        J = np.zeros((n, n))
        if a.size:
            J[np.ix_(a, a)] = -lu_solve(self._lu, np.eye(a.size))
        return J

    def jvp(self, dM=None, dq=None):
        """dz for a change (dM, dq) of the data (either may be None): solves
        M_aa dz_a = -(dq_a + dM_a. z), dz = 0 off the active set."""
        n = self.z.shape[0]
        dM = dense_tangent("dM", dM, (n, n))
        dq = dense_tangent("dq", dq, (n,))
        dz = np.zeros(n)
        a = self._idx
        if a.size == 0:
            return dz
        rhs = np.zeros(a.size)
        if dq is not None:
            rhs += dq[a]
        if dM is not None:
            rhs += dM[a][:, a] @ self.z[a]
        dz[a] = -lu_solve(self._lu, rhs)
        return finite_result(dz, [k for k, x in (("dM", dM), ("dq", dq)) if x is not None])

    def vjp(self, gz, *, _wanted=None):
        """Gradients (M, q) of the loss <gz, z>: gq_a = -(M_aa)^-T gz_a, gM = gq z^T."""
        # _wanted (private, for the differentiable layers): without "M", gM (n x n) is not formed (None)
        n = self.z.shape[0]
        if gz is None:
            raise TypeError("gz (the gradient of the loss with respect to z) is required, got None")
        gz = dense_tangent("gz", gz, (n,))
        gq = np.zeros(n)
        a = self._idx
        if a.size:
            gq[a] = -lu_solve(self._lu, gz[a], trans=1)
        gM = np.outer(gq, self.z) if _wanted is None or "M" in _wanted else None
        finite_result({"M": gM, "q": gq}, ["gz"])
        return LCPGradient(M=gM, q=gq)


def lcp(M, q, res, *, degenerate_tol=DEGENERATE_TOL):
    r"""Derivative of the solution of LCP(M, q) found by :func:`mbdcp.lemke`.

    At a solution z with w = Mz + q the pairs split into active (:math:`z_i > 0`, :math:`w_i = 0`),
    inactive (:math:`z_i = 0`, :math:`w_i > 0`) and degenerate (:math:`z_i = w_i = 0`). Keeping the
    active set :math:`\alpha` fixed, the implicit function theorem applied to
    :math:`M_{\alpha\alpha} z_\alpha + q_\alpha = 0`, :math:`z_{\bar\alpha} = 0` gives

    .. math::  dz_\alpha = -M_{\alpha\alpha}^{-1}(dq_\alpha + dM_{\alpha\cdot}\, z),\qquad dz_{\bar\alpha} = 0.

    A pair counts as zero when it is at most ``degenerate_tol`` times its row's scale
    :math:`|q_i| + \sum_j |M_{ij}||z_j|` (the componentwise scale of Lemke's verification).

    **Degenerate pairs** (reported in ``degenerate``): there the solution has a kink and only
    one-sided derivatives exist. The one returned is that of the piece of Lemke's final basis: if
    :math:`z_i` is basic (``res.basis[i]``) the pair is treated as active (w_i = 0 kept; exact for
    changes under which the basic solution stays feasible, i.e. :math:`dz_i \ge 0`), otherwise as
    inactive (:math:`z_i = 0` kept; exact when :math:`dw_i \ge 0`). Without a basis degenerate
    pairs are treated as inactive. If the active block is singular (the solution is not locally
    unique) a ValueError is raised rather than a number returned.

    Parameters
    ----------
    M : array_like, shape (n, n)
        The LCP matrix.
    q : array_like, shape (n,)
        The LCP vector.
    res : LemkeResult
        A SOLVED result of ``mbdcp.lemke(M, q)``.
    degenerate_tol : float
        Relative tolerance deciding z_i = 0 and w_i = 0.

    Returns
    -------
    LCPDerivative
        ``dz_dq``, ``jvp(dM=None, dq=None)``, ``vjp(gz) -> (M, q)``, ``degenerate``, ``active``.

    Examples
    --------
    >>> import numpy as np, mbdcp
    >>> M, q = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-5.0, 6.0])
    >>> d = mbdcp.derivatives.lcp(M, q, mbdcp.lemke(M, q))   # z = (2.5, 0): only z_1 active
    >>> d.dz_dq.tolist(), d.degenerate.tolist()
    ([[-0.5, 0.0], [0.0, 0.0]], [])
    >>> d.vjp([1.0, 0.0]).q.tolist()
    [-0.5, 0.0]
    """
    q = val.as_array("q", q, 1)
    n = q.shape[0]
    M = val.matrix("M", M, (n, n))
    if not isinstance(res, LemkeResult):
        raise TypeError(f"res must be the LemkeResult of mbdcp.lemke(M, q), got {val.describe(res)}")
    if res.status != Status.SOLVED:
        raise ValueError(f"res must be a SOLVED result of mbdcp.lemke(M, q), got status {res.status.name}: "
                         "an unsolved LCP has no solution to differentiate")
    z = np.ascontiguousarray(res.z, dtype=np.float64)
    if z.shape != (n,):
        raise ValueError(f"res.z has shape {z.shape} but M, q have n = {n}: res belongs to another problem")
    tol = val.positive_scalar("degenerate_tol", degenerate_tol)
    w = M @ z + q
    scale = np.abs(q) + np.abs(M) @ np.abs(z)
    # mbdcp.lcp_residual's C loop on the arrays checked above
    if _core.lcp_residual(M, q, z) > 1e3 * tol * max(scale.max(initial=0.0), _TINY):
        raise ValueError("res does not solve LCP(M, q) (min(z, Mz + q) is not zero): it belongs to other data")
    thr = tol * scale
    zpos, wpos = z > thr, w > thr
    deg = ~zpos & ~wpos
    basis = getattr(res, "basis", None)
    if basis is not None and np.shape(basis) == (n,):
        active = zpos | (deg & np.asarray(basis, dtype=bool))
    else:
        active = zpos
    decided = ~deg
    ratios = np.where(zpos, z, w)
    ratios = ratios / np.maximum(scale, _TINY) if deg.size and not deg.any() else \
        ratios[decided] / np.maximum(scale[decided], _TINY)
    margin = float(ratios.min()) if ratios.size else np.inf
    idx = active.nonzero()[0]
    lu = None
    if idx.size:
        lu, piv, rcond = lu_factor(M[idx][:, idx])  # LAPACK directly: no warning to filter when singular
        lu = (lu, piv)
        if not rcond > RCOND_MIN:
            raise ValueError(f"M restricted to the active set of res is singular (reciprocal condition {rcond:.1e}): "
                             "the solution is not locally unique, so it has no derivative")
    return LCPDerivative(z=z.copy(), w=w, active=active, degenerate=deg.nonzero()[0], margin=margin,
                         _M=M, _idx=idx, _lu=lu)
