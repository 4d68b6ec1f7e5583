"""Lemke's complementary pivoting method for the standard LCP (Lemke 1965; Cottle, Pang & Stone 1992, chapter 4)."""
import numpy as np

from mbdcp.infrastructure import _core
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.deprecated import renamed_value
from mbdcp.infrastructure.results import LemkeResult

__all__ = ["lemke", "lcp_residual"]


def _name(var, n):
    if var == 2 * n:
        return "z0"
    return f"w{var + 1}" if var < n else f"z{var - n + 1}"


def lemke(M, q, *, max_iter=None, tol=None, trace=False, basis=None, q_scale=None, max_pivots=None):
    r"""Solve the linear complementarity problem LCP(M, q) by Lemke's method.

    Find :math:`z` such that

    .. math::  z \ge 0, \qquad w = M z + q \ge 0, \qquad z^T w = 0.

    Complementary pivoting on :math:`[I, -M, -e]` with the covering vector
    :math:`e = (1, \dots, 1)` and an artificial variable :math:`z_0`
    (Lemke 1965). Degenerate ties are broken by the lexicographic minimum-ratio
    rule, so the method cannot cycle, and :math:`z_0` leaves whenever it ties for
    the minimum ratio. The method ends when :math:`z_0` leaves the basis (a
    solution) or when the entering variable is unblocked (ray termination: if
    :math:`M` is copositive-plus this proves the LCP infeasible). If
    :math:`q \ge 0`, :math:`z = 0` is returned without pivoting.

    A result is marked ``success`` only after verification row by row, each row at its own
    scale: with :math:`w = Mz + q` recomputed from the returned :math:`z` and
    :math:`s_i = (|M||z|)_i + |q_i|`, the magnitude of the terms that make up :math:`w_i`,

    .. math::  z_i \ge 0, \qquad w_i \ge -tol \cdot s_i, \qquad
               z_i = 0 \ \text{or}\ w_i \le tol \cdot s_i \qquad \text{for every row } i.

    The rule is invariant under any positive scaling of rows and columns (a change of units):
    a small row beside a huge one is judged at its own scale, and the only absolute floor is the
    subnormal range. It is tested with ``tol`` reduced by the rounding bound of a row sum,
    :math:`2(n + 2)\epsilon`, so that it holds for the exact :math:`w`. A verified answer that is
    also a certificate of infeasibility (an infeasible LCP whose huge :math:`z` hides a negative
    :math:`w_i` under the tolerance its own size sets) is reported as ``RAY_TERMINATION`` with
    that certificate: :math:`y \ge 0`, :math:`(M^T y)_j \le \tau (|M|^T y)_j` and
    :math:`q^T y < -\tau |q|^T y`, with :math:`\tau` = ``tol`` for a certificate read off a ray
    and :math:`\sqrt{tol}` for one read off such an answer (whose terms cancel by more than
    :math:`10^6`; rounding leaves its direction a component of about :math:`10^{-5}` outside the
    null space). A point that fails is ``NUMERICAL_ERROR`` (or ``MAX_ITERATIONS``) with the worst
    row named in ``message``.

    Parameters
    ----------
    M : array_like, shape (n, n)
        The LCP matrix (any real matrix; Lemke is guaranteed for copositive-plus,
        P- and many other classes).
    q : array_like, shape (n,)
    max_iter : int, optional
        Pivot limit (default ``100 * (n + 1)``); reaching it gives status
        ``MAX_ITERATIONS``. (``max_pivots``, its old name, is deprecated.)
    tol : float, optional
        Relative verification tolerance of every row, in (0, 1) (default 1e-9; the rule above).
    trace : bool
        Record the (entering, leaving) variable of every pivot, for teaching.
    basis : ndarray of bool, shape (n,), or LemkeResult, optional
        Warm start: True where :math:`z_i` should start basic (e.g. ``res.basis`` of a
        neighbouring problem). The hint's basis is factored; if its basic solution is not
        feasible, :math:`z_0` repairs it with the covering vector :math:`B e` (the cold start
        on the hint's principal pivot transform). A singular or useless hint falls back to the
        cold start: a wrong hint costs time, never the answer.
    q_scale : array_like, shape (n,), optional
        The magnitudes of the terms that were summed into ``q`` (nonnegative), when ``q`` was
        computed: row :math:`i` is then judged at :math:`s_i = (|M||z|)_i + \max(|q_i|,
        \mathrm{q\_scale}_i)`, so that a :math:`q_i` of :math:`10^{-16}` left by the rounding of
        terms of size 1 counts as the rounding it is, as Lemke's pivoting counts it (a time step's
        LCP is judged so, with :math:`|W^T||v|` and :math:`|W^T M^{-1}||p_{ext}|`; see
        :func:`mbdcp.step`). Default: each :math:`q_i` is its own scale.
    max_pivots : int, optional
        Deprecated name of ``max_iter`` (a DeprecationWarning).

    Returns
    -------
    LemkeResult
        ``z``, ``w``, ``status``, ``success``, ``message``, ``pivots`` (the initial
        pivot that brings in :math:`z_0` included), ``residual`` (the worst row's ratio: the
        largest violation of a row over :math:`s_i`, the smallest ``tol`` at which the rows
        pass; 0 for an exact solution) and ``trace``: a list such as
        ``[("z0", "w2"), ("z2", "w4"), ("z4", "z0")]``, where each step brings in
        the complement of what the previous one took out. Also ``basis`` (True where
        :math:`z_i` is basic at the end, for a warm start), ``warm_started`` (the answer came
        from the hint) and ``certificate`` (after a ray: :math:`y \ge 0` with
        :math:`M^T y \le 0`, :math:`q^T y < 0`, proving infeasibility; else None).

    Examples
    --------
    >>> import mbdcp
    >>> res = mbdcp.lemke([[2.0, 1.0], [1.0, 2.0]], [-5.0, -6.0], trace=True)
    >>> res.success, res.z.round(6).tolist(), res.trace
    (True, [1.333333, 2.333333], [('z0', 'w2'), ('z2', 'w1'), ('z1', 'z0')])
    """
    if max_pivots is not None:
        max_iter = renamed_value("lemke", "max_pivots", max_pivots, "max_iter", max_iter is not None)
    if trace is False and basis is None and q_scale is None:
        fast = _core.lemke_plain(M, q, max_iter or 0, tol or 0.0) if _plain_settings(max_iter, tol) else None
        if fast is not None:
            return fast
    M = val.as_array("M", M, 2)
    n = M.shape[0]
    M = val.matrix("M", M, (n, n), ("n", "n"))
    q = val.vector("q", q, n, symbol="n")
    max_iter, tol = val.lemke_settings(max_iter, tol)
    trace = val.flag("trace", trace)
    if q_scale is not None:
        q_scale = val.vector("q_scale", q_scale, n, symbol="n")
        if np.any(q_scale < 0):
            raise ValueError(f"q_scale must be nonnegative (the magnitudes of q's terms), got min {q_scale.min():g}")
    start = None
    if basis is not None:
        if isinstance(basis, LemkeResult):
            basis = basis.basis
        start = np.asarray(basis) if isinstance(basis, (np.ndarray, list, tuple)) else None
        if start is None or start.dtype != bool or start.shape != (n,):
            raise ValueError(f"basis must be a boolean array of shape (n,) = ({n},) (True where z_i is basic), "
                             f"or a LemkeResult; got {val.describe(basis)}")
        start = start.astype(np.intc)
    z, w, status, pivots, residual, tr, basis_out, certificate, _, warm, worst = _core.lemke(
        M, q, max_iter, tol, bool(trace), start, q_scale)
    names = [(_name(a, n), _name(b, n)) for a, b in tr] if trace else None
    return _core.lemke_result(z, w, status, pivots, residual, basis_out, certificate, worst, names, warm)


def _plain_settings(max_iter, tol):
    """Settings the fast path can take as they are (anything else is validated first)."""
    return (max_iter is None or (type(max_iter) is int and 0 < max_iter < 2 ** 31)) and \
        (tol is None or (type(tol) is float and 0.0 < tol < 1.0))


def lcp_residual(M, q, z):
    r"""The natural residual :math:`\max_i |\min(z_i, (Mz + q)_i)|` of LCP(M, q) at ``z``.

    It is zero exactly at a solution (a negative :math:`z_i` or :math:`w_i`
    counts with its magnitude).

    >>> import mbdcp
    >>> mbdcp.lcp_residual([[1.0]], [-1.0], [1.0])
    0.0
    """
    M = val.as_array("M", M, 2)
    n = M.shape[0]
    M = val.matrix("M", M, (n, n), ("n", "n"))
    q = val.vector("q", q, n, symbol="n")
    z = val.vector("z", z, n, symbol="n")
    return float(_core.lcp_residual(M, q, z))
