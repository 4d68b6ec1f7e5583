"""How each of mbdcp's methods solves one step of a MuJoCo model: solve(arrays) -> (result,
normal impulses, iterations), with the last step's answer as the next one's warm start."""
import mbdcp
from mbdcp.mujoco._warm import LemkeBasis, carried_impulses

__all__ = ["METHODS", "stepper"]

METHODS = ("lcp", "fixed_point", "ccp")


def _lcp(n_d, options, warm_start):
    """mbdcp.step (Lemke's method), each step from the last step's basis."""
    basis = LemkeBasis() if warm_start else None

    def solve(a):
        args = a.step_arguments()
        sizes = (len(a.contacts), n_d, a.rows.Dj.shape[1], a.rows.Ej.shape[1])
        hint = basis.hint(a.keys, *sizes) if basis else None
        res = mbdcp.step(**args, warm_start=hint, **options)
        if basis:
            basis.keep(a.keys, *sizes, res.basis)
        return res, res.p_n, res.pivots
    return solve


def _fixed_point(n_d, options, warm_start):
    """mbdcp.fixed_point (Anitescu & Hart 2004), from a cold start each step."""

    def solve(a):
        r = a.rows
        joints = r.Wb.shape[1] > 0
        res = mbdcp.fixed_point(a.M, a.Wn, a.D, a.E, a.U, a.v, a.h, p_ext=a.p_ext, psi_n=a.psi_n,
                                Wb=r.Wb if joints else None, theta=r.theta if joints else None, **options)
        return res, res.p_n, res.iterations
    return solve


def _ccp(n_d, options, warm_start):
    """mbdcp.ccp, each contact's impulse starting from its last value."""
    last = {}

    def solve(a):
        r = a.rows
        joints = r.Wb.shape[1] > 0
        start = carried_impulses(last["keys"], last["gamma"], a.keys) if last else None
        res = mbdcp.ccp(a.M, a.Wn, a.Wt, a.U, a.v, a.h, p_ext=a.p_ext, psi_n=a.psi_n, Wb=r.Wb if joints else None,
                        theta=r.theta if joints else None, warm_start=start, **options)
        if warm_start:
            last.update(keys=a.keys, gamma=res.gamma)
        return res, res.gamma[:, 0], res.iterations
    return solve


def stepper(method, n_d, algorithm, tol, max_iter, warm_start, correction):
    """solve(arrays) of the method, its options given only when set (the solvers' own defaults
    otherwise); ``correction``: max_correction_speed and baumgarte."""
    options = dict(correction)
    if tol is not None:
        options["tol"] = tol
    if max_iter is not None:
        options["max_iter"] = max_iter
    if algorithm is not None:
        options["algorithm" if method == "fixed_point" else "method"] = algorithm
    return {"lcp": _lcp, "fixed_point": _fixed_point, "ccp": _ccp}[method](n_d, options, warm_start)
