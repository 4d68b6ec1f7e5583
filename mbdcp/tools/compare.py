r"""One time step with every formulation, side by side (:func:`compare`)."""
import collections.abc
import html
import time

import numpy as np

from mbdcp.formulations import registry
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.problem import contact_data

__all__ = ["FORMULATIONS", "Comparison", "compare", "tangent_pairs"]

FORMULATIONS = registry.variants()  # the names the built-in formulations pose a time step under
# compare's own settings of a formulation (the CCP is an iteration: tighter than its default)
_COLUMNS = ("formulation", "status", "success", "v_next_diff", "p_n", "contact_state", "dissipated_energy",
            "lift_off_speed", "seconds", "iterations", "note", "v_next")


def tangent_pairs(D, E):
    """The tangent pair (u_i, w_i) of each contact from Stewart–Trinkle friction directions.

    A contact's directions (its columns of D, marked by E) are recognised when they are

    - n_d = 4k evenly spaced directions :math:`d_j = \\cos(2\\pi j/n_d)\\,u + \\sin(2\\pi j/n_d)\\,w`
      (the layout of :func:`mbdcp.friction_basis`): u = d_0, w = d_{n_d/4};
    - four directions in opposite pairs (u, -u, w, -w), as in :func:`mbdcp.examples.sphere_on_plane`;
    - two opposite directions (t, -t) (planar friction): u = t, w = 0;
    - none (frictionless): u = w = 0.

    u and w are assumed orthogonal unit directions in the tangent plane (they are for both layouts).

    Parameters
    ----------
    D : array_like, shape (n_v, m)
        Friction directions.
    E : array_like, shape (m, n_c)
        Their grouping by contact.

    Returns
    -------
    Wt : ndarray, shape (n_v, 2 n_c), or None
        (u_i, w_i) in columns 2i, 2i+1; None when a contact's directions have none of these layouts.
    n_d : ndarray, shape (n_c,)
        The directions per contact.
    note : str
        Why Wt is None ("" otherwise).

    >>> import numpy as np
    >>> Wt, n_d, note = tangent_pairs([[1.0, -1.0, 0, 0], [0, 0, 1.0, -1.0]], np.ones((4, 1)))
    >>> Wt.tolist(), n_d.tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [4])
    """
    D = val.as_array("D", D, 2)
    E = val.grouping("E", E, D.shape[1], None, ("m", "n_c"))
    n_v, n_c = D.shape[0], E.shape[1]
    Wt = np.zeros((n_v, 2 * n_c))
    n_d = np.zeros(n_c, dtype=int)
    for i in range(n_c):
        C = D[:, np.flatnonzero(E[:, i])]
        k = C.shape[1]
        n_d[i] = k
        atol = val.OPPOSITE_RTOL * max(1.0, float(np.abs(C).max(initial=0.0)))

        def close(a, b, atol=atol):
            return np.allclose(a, b, rtol=0.0, atol=atol)
        if k == 0:
            continue
        if k == 2 and close(C[:, 1], -C[:, 0]):
            Wt[:, 2 * i] = C[:, 0]
            continue
        if k % 4 == 0:
            ang = 2 * np.pi * np.arange(k) / k
            u, w = C[:, 0], C[:, k // 4]
            if close(C, np.outer(u, np.cos(ang)) + np.outer(w, np.sin(ang))):
                Wt[:, 2 * i], Wt[:, 2 * i + 1] = u, w
                continue
        if k == 4 and close(C[:, 1], -C[:, 0]) and close(C[:, 3], -C[:, 2]):
            Wt[:, 2 * i], Wt[:, 2 * i + 1] = C[:, 0], C[:, 2]
            continue
        return None, n_d, (f"contact {i}'s {k} friction directions are neither evenly spaced in multiples of 4 "
                           "(friction_basis) nor opposite pairs (u, -u, w, -w) or (t, -t)")
    return Wt, n_d, ""


def _energy(M, v, start):
    """1/2 v^T M v, or with ``start`` = (v0, p_ext) that minus the work 1/2 p_ext^T (v0 + v), computed
    on data scaled by their largest entry so that no intermediate overflows; a ValueError naming
    the data when the value itself is beyond the float64 range."""
    vs = [v] if start is None else [v, *start]
    s = max(float(np.abs(x).max(initial=0.0)) for x in vs) or 1.0
    e = 0.5 * float((v / s) @ M @ (v / s))
    if start is not None and start[1].size:
        e -= 0.5 * float((start[1] / s) @ ((start[0] + v) / s))
    with np.errstate(over="ignore"):
        e *= s * s
    if not np.isfinite(e):
        raise ValueError(f"the kinetic energies of this step overflow float64 (M up to {np.abs(M).max():.3g}, v, "
                         f"v_next or p_ext up to {s:.3g}); compare reports them: rescale the data (change units)")
    return e


class Comparison(list):
    """The records of :func:`compare` (a list of dicts, one per formulation) when pandas is not
    installed; shows as an HTML table in Jupyter."""

    def _repr_html_(self):
        def cell(x):
            if isinstance(x, float):
                return f"{x:.4g}"
            if isinstance(x, np.ndarray):
                return np.array2string(x, precision=4, threshold=6, edgeitems=2, separator=", ")
            return str(x)
        head = "".join(f"<th>{html.escape(c)}</th>" for c in _COLUMNS)
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(cell(r.get(c)))}</td>" for c in _COLUMNS) + "</tr>" for r in self)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _check_formulations(names):
    known = registry.variants()
    if names is None:
        return known
    if isinstance(names, str):
        names = (names,)
    try:
        names = tuple(names)
    except TypeError:
        raise TypeError(f"formulations must be a name or a sequence of names among {known}, "
                        f"got {val.describe(names)}") from None
    bad = [f for f in names if not isinstance(f, str) or f not in known]
    if bad or not names:
        raise ValueError(f"formulations must be a non-empty selection of {known}, got {names!r}")
    return names


def _check_options(options):
    if options is None:
        return {}
    if not isinstance(options, collections.abc.Mapping):
        raise TypeError(f"options must be a dict of dicts keyed by formulation family, got {val.describe(options)}")
    options = dict(options)
    families = {f.name: f.options for f in registry.formulations() if f.pose}
    for family, opts in options.items():
        if not isinstance(family, str) or family not in families:
            raise ValueError(f"options keys must be among {sorted(families)}, got {family!r}")
        if not isinstance(opts, collections.abc.Mapping):
            raise TypeError(f"options[{family!r}] must be a dict of solver settings, got {val.describe(opts)}")
        extra = set(opts) - families[family]
        if extra:
            raise ValueError(f"options[{family!r}] accepts {sorted(families[family])}, got {sorted(extra)}")
    return options


def compare(M, Wn, D, E, U, v, h, *, formulations=None, options=None, **keywords):
    r"""One time step with every formulation, as a table.

    Runs the step :math:`(M, W_n, D, E, U, v, h)` with

    - ``"lcp"``: Stewart–Trinkle / Anitescu–Potra by Lemke's method (:func:`mbdcp.step`), the reference;
    - ``"fixed_point_1"``, ``"fixed_point_2"``, ``"fixed_point_3"``: Anitescu & Hart's (2004) algorithms 1–3
      (:func:`mbdcp.fixed_point`);
    - ``"full_rank"``: the full-rank model of Peiret et al. (:func:`mbdcp.full_rank_step`) with
      :math:`W_t` from :func:`tangent_pairs` and ``n_d`` = half the directions per contact. Its
      polygon differs from Stewart–Trinkle's for every ``n_d``: the slabs
      :math:`|e_j^T p_t| \le \mu p_n` cut out a :math:`2n_d`-gon circumscribed about the circle of
      radius :math:`\mu p_n` (its edges touch the circle), while the convex hull of the
      :math:`\mu p_n d_j` is inscribed in it (its corners lie on the circle): the two bound the
      friction alike only where a corner of the inner one touches the outer one (along the
      :math:`\pm e_j`, when the directions coincide), and differ in every other direction;
    - ``"ccp"``: the cone complementarity problem (:func:`mbdcp.ccp`, circular cone) with the same
      :math:`W_t` (a planar contact gets w = 0).

    Keywords are the problem data of :func:`mbdcp.step` (``p_ext``, ``psi_n``, ``dpsi_n``,
    ``dpsi_f``, ``Wb``, ``theta``, ``dtheta``, ``Dj``, ``Ej``, ``beta_max``). Each formulation gets
    those it models (the CCP gets the gap :math:`\Psi_n + h\,\partial_t\Psi_n` as ``psi_n``); data it
    does not model are dropped when absent or zero, and otherwise the row is skipped (status
    ``"SKIPPED"`` and a ``note``) rather than solving another problem. Likewise ``full_rank`` and
    ``ccp`` are skipped when :math:`W_t` cannot be built from D (and ``full_rank`` when a contact
    has no 2-D tangent plane or the contacts' direction counts differ).

    Parameters
    ----------
    M, Wn, D, E, U, v, h : array_like and float
        The step's data, as in :func:`mbdcp.step`.
    formulations : sequence of str, optional
        Names among ``FORMULATIONS`` (default: all); ``"lcp"`` is always solved, as the reference.
    options : dict, optional
        Solver settings per family (a dict of dicts keyed by "ccp", "fixed_point", "full_rank"),
        e.g. ``{"ccp": {"tol": 1e-12}}``; defaults: the CCP with ``tol=1e-10``, the others their
        own defaults.
    \*\*keywords
        The rest of the problem data (p_ext, psi_n, Wb, ...), as in :func:`mbdcp.step`.

    Returns
    -------
    pandas.DataFrame (when pandas is installed; index: formulation) or :class:`Comparison`
    (a list of dict records with an HTML repr). Columns:

    - ``status`` (the :class:`~mbdcp.Status` name, or ``"SKIPPED"``), ``success``;
    - ``v_next_diff``: :math:`\|v^{l+1} - v^{l+1}_{LCP}\|_\infty` (NaN when either is missing);
    - ``p_n`` (n_c,) normal impulses (:math:`\gamma_n` for the CCP), ``contact_state`` (n_c,);
    - ``dissipated_energy``: :math:`\tfrac12 (v^TMv - {v^{l+1}}^TMv^{l+1} + p_{ext}^T(v + v^{l+1}))`,
      the kinetic energy lost beyond the work of
      :math:`p_{ext}` (exactly 0 for a free body; it includes the work of the stabilisation
      :math:`\Psi_n/h` and of joints, so it can be negative);
    - ``lift_off_speed``: :math:`\max_j (W_n^T v^{l+1} + \partial_t\Psi_n)_j`, the largest normal
      separation speed (the CCP's "bowling ball" shows here); NaN without contacts;
    - ``seconds`` (the solver call), ``iterations`` (pivots for Lemke and the full-rank model,
      fixed-point iterations, CCP iterations), ``note``, ``v_next``.

    Examples
    --------
    >>> import numpy as np, mbdcp
    >>> from mbdcp.examples import sphere_on_plane
    >>> M, Wn, D, E, U = sphere_on_plane(0.2)
    >>> t = mbdcp.compare(M, Wn, D, E, U, [2.0, 0, 0, 0, 0, 0], 0.01, p_ext=[0, 0, -0.0981, 0, 0, 0])
    >>> [str(s[0]) for s in t["contact_state"]]
    ['SLIDING', 'SLIDING', 'SLIDING', 'SLIDING', 'SLIDING', 'SLIDING']
    """
    c = contact_data(M, Wn, D, E, U, v)
    M, Wn, D, E, mu, v = c.M, c.Wn, c.D, c.E, c.mu, c.v
    h = val.positive_scalar("h", h)
    names = _check_formulations(formulations)
    options = _check_options(options)
    unknown = set(keywords) - set(registry.STEP_DATA)
    if unknown:
        raise ValueError(f"keywords must be problem data of mbdcp.step {registry.STEP_DATA}, got {sorted(unknown)}")
    n_v, n_c = M.shape[0], Wn.shape[1]
    p_ext = val.vector("p_ext", keywords.get("p_ext"), n_v, optional=True, symbol="n_v")
    dpsi_n = val.vector("dpsi_n", keywords.get("dpsi_n"), n_c, optional=True, symbol="n_c")
    keywords = {k: val.as_array(k, x) for k, x in keywords.items() if x is not None}  # the shapes: each formulation's
    Wt, n_d, wt_note = tangent_pairs(D, E)
    s = registry.StepInput(M, Wn, D, E, mu, v, h, keywords, Wt, n_d, wt_note)

    def run(name):
        """(result or None, seconds, note)."""
        entry = registry.formulation(name)
        opts = {**entry.defaults.get("compare", {}), **entry.variants.get(name, {}), **options.get(entry.name, {})}
        call, note = entry.pose(s, opts)
        if call is None:
            return None, float("nan"), note
        t0 = time.perf_counter()
        try:
            res = call()
        except ValueError as exc:  # data derived for this formulation (Wt from D) it cannot take: its row says why
            if name == "lcp":
                raise
            return None, float("nan"), f"not solved: {exc}"
        return res, time.perf_counter() - t0, ""

    energy0 = _energy(M, v, None)
    rows, reference = [], None
    for name in ("lcp",) + tuple(f for f in names if f != "lcp"):
        res, seconds, note = run(name)
        row = {"formulation": name, "status": "SKIPPED", "success": False, "v_next_diff": np.nan, "p_n": None,
               "contact_state": None, "dissipated_energy": np.nan, "lift_off_speed": np.nan, "seconds": seconds,
               "iterations": None, "note": note, "v_next": None}
        if res is not None:
            vn = res.v_next
            if name == "lcp" and res.success:
                reference = vn
            normal = Wn.T @ vn + (dpsi_n if dpsi_n.size else 0.0)
            row.update(status=res.status.name, success=bool(res.success),
                       v_next_diff=float(np.abs(vn - reference).max(initial=0.0)) if reference is not None else np.nan,
                       p_n=res.gamma[:, 0].copy() if name == "ccp" else res.p_n.copy(), contact_state=res.contact_state,
                       dissipated_energy=energy0 - _energy(M, vn, (v, p_ext)),
                       lift_off_speed=float(normal.max()) if n_c else np.nan,
                       iterations=int(getattr(res, "iterations", getattr(res, "pivots", 0))), v_next=vn)
        if name == "lcp" and "lcp" not in names:
            continue
        rows.append(row)
    try:
        import pandas as pd
    except ImportError:
        return Comparison(rows)
    table = pd.DataFrame(rows, columns=list(_COLUMNS)).set_index("formulation")
    table["iterations"] = table["iterations"].astype("Int64")  # missing for skipped rows, integers otherwise
    return table
