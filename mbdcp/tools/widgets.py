r"""Interactive explorers of the worked examples (ipywidgets), with a static fallback.

Each function re-solves its example on every slider change and redraws:

- :func:`sphere` — the sphere of Trinkle (2003, section 4) slides, then rolls at :math:`t^* = 2v_0/(7\mu g)` (μ, h, v₀,
  number of friction directions);
- :func:`particle_and_wall` — the particle of Trinkle (notes, 2003), pp. 7-12, falling onto a fixed or moving wall;
- :func:`planar_friction` — one step of planar Coulomb friction, its sign case and contact state;
- :func:`painleve_rod` — the instantaneous model of a sliding rod: solved, or Lemke's ray (Painlevé);
- :func:`lemke_stepper` — Lemke's tableau pivot by pivot (:func:`lemke_tableaux`).

With ipywidgets installed and an IPython kernel running, each returns an :class:`Explorer`
(sliders over a figure; ``update(**values)`` is the callback the sliders use). Otherwise — or
with ``static=True``, or the environment variable ``MBDCP_WIDGETS=static`` (set when the teaching
notebooks are built, so their saved outputs show figures) — each returns a static
:class:`matplotlib.figure.Figure` drawn for the given values.
"""
import os

import numpy as np

import mbdcp
from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.contact_state import ContactState
from mbdcp.tools.examples import particle_above_wall, sphere_closed_form

__all__ = ["Explorer", "interactive", "lemke_stepper", "lemke_tableaux", "painleve_rod", "particle_and_wall",
           "planar_friction", "sphere"]

G = 9.81
_STATE_COLOURS = {ContactState.SEPARATING: "0.6", ContactState.STICKING: "tab:blue", ContactState.SLIDING: "tab:red"}


def interactive(static=None):
    """Whether the explorers use widgets: ``static`` (a bool) decides when given; otherwise True
    when ipywidgets imports, an IPython kernel runs and ``MBDCP_WIDGETS`` is not "static"."""
    if static is not None:
        return not val.flag("static", static)
    if os.environ.get("MBDCP_WIDGETS", "").strip().lower() in ("static", "0", "off", "no"):
        return False
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Explorer:
    """Sliders over a figure that is redrawn, after re-solving, on every change.

    ``controls``: name -> ipywidgets control; ``figure``: the matplotlib Figure; ``result``: what
    the last solve returned; ``widget``: the ipywidgets box (displayed when the explorer is the
    value of a notebook cell); :meth:`update` sets values and redraws.
    """

    def __init__(self, controls, draw, figsize=(9.0, 3.6)):
        import ipywidgets as w
        from matplotlib.figure import Figure

        self.controls, self._draw = dict(controls), draw
        self.figure = Figure(figsize=figsize)
        self.output = w.Output()
        self.widget = w.VBox([w.HBox(list(self.controls.values()), layout=w.Layout(flex_flow="row wrap")), self.output])
        self._busy = False
        for control in self.controls.values():
            control.observe(self._changed, names="value")
        self.result = None
        self.update()

    def values(self):
        """The current control values, by name."""
        return {name: c.value for name, c in self.controls.items()}

    def update(self, **values):
        """Set the named controls (each value within its control's range or options), re-solve,
        redraw and return the new result."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"update accepts {sorted(self.controls)}, got {name!r}")
            c = self.controls[name]
            options = getattr(c, "options", None)
            if options is not None:
                labels = [o[1] if isinstance(o, tuple) else o for o in options]
                if value not in labels:
                    raise ValueError(f"{name} must be one of {labels}, got {value!r}")
            else:
                val.scalar_in(name, value, c.min, c.max)
        self._busy = True  # one redraw for all the values, not one per control
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._busy = False
        return self._redraw()

    def _changed(self, change):
        if not self._busy:
            self._redraw()

    def _redraw(self):
        from IPython.display import clear_output, display

        self.figure.clf()
        self.result = self._draw(self.figure, **self.values())
        with self.output:
            clear_output(wait=True)
            display(self.figure)
        return self.result

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, and the figure as a PNG beside it: a notebook saved from a live kernel
        still shows the figure where no widget manager runs (a static page, offline)."""
        import base64
        import io

        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        png = io.BytesIO()
        self.figure.savefig(png, format="png")
        data["image/png"] = base64.b64encode(png.getvalue()).decode()
        return bundle


def _static(draw, values, figsize=(9.0, 3.6)):
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    draw(fig, **values)
    return fig


def _slider(kind, value, lo, hi, step, description):
    import ipywidgets as w

    cls = w.IntSlider if kind == "int" else w.FloatSlider
    return cls(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
               style={"description_width": "initial"})


def _in_range(name, x, lo, hi):
    return val.scalar_in(name, x, lo, hi)


# ---- the sphere of Trinkle (2003), section 4

def _sphere_data(mu, n_d):
    M = np.diag([1.0, 1.0, 1.0, 0.4, 0.4, 0.4])
    r = np.array([0.0, 0.0, -1.0])
    D = np.array([np.r_[d, np.cross(r, d)] for d in mbdcp.friction_basis([0, 0, 1], n_d).T]).T
    return M, np.array([[0.0, 0, 1, 0, 0, 0]]).T, D, np.ones((n_d, 1)), [mu]


def _sphere_solve(mu, h, v0, n_d, T=0.8):
    M, Wn, D, E, U = _sphere_data(mu, n_d)
    v, z = np.array([v0, 0, 0, 0, 0, 0.0]), 1.0
    vs, states = [v], []
    for _ in range(round(T / h)):
        res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=[0, 0, -G * h, 0, 0, 0], psi_n=[z - 1.0])
        v = res.v_next
        z += h * v[2]
        vs.append(v)
        states.append(res.contact_state[0])
    return {"t": h * np.arange(len(vs)), "v": np.array(vs), "contact_state": states, "t_star": 2 * v0 / (7 * mu * G)}


def _sphere_draw(fig, mu, h, v0, n_d):
    out = _sphere_solve(mu, h, v0, n_d)
    t, v = out["t"], out["v"]
    ax = fig.add_subplot(1, 1, 1)
    tt = np.linspace(0, t[-1], 300)
    vx, wy = sphere_closed_form(tt, v0=v0, mu=mu)
    ax.plot(tt, vx, "k:", label="$v_x$ exact")
    ax.plot(tt, wy, "k--", label=r"$\omega_y$ exact")
    colours = [_STATE_COLOURS[s] for s in out["contact_state"]]
    ax.scatter(t[1:], v[1:, 0], c=colours, marker="o", s=18, label="$v_x$ (colour: contact state)")
    ax.scatter(t[1:], v[1:, 4], c=colours, marker="s", s=18, label=r"$\omega_y$")
    ax.axvline(out["t_star"], color="0.7", lw=0.8)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("velocity")
    ax.set_title(f"red: sliding, blue: sticking (rolling); t* = 2 v0/(7 mu g) = {out['t_star']:.3f} s")
    ax.legend(fontsize="small", loc="center right")
    fig.tight_layout()
    return out


def sphere(mu=0.2, h=0.05, v0=2.0, n_d=4, *, static=None):
    """The sphere of Trinkle (2003), section 4, released sliding at v₀: slides, then rolls at t* = 2v₀/(7μg).

    Parameters
    ----------
    mu : float
        Friction coefficient in [0.05, 1].
    h : float
        Time step in [0.005, 0.2].
    v0 : float
        Initial speed in [0.1, 5].
    n_d : int
        Friction directions (4, 8, 12 or 16, from :func:`mbdcp.friction_basis`).
    static : bool, optional
        True for a static figure, False for widgets, None to decide (see :func:`interactive`).

    Returns
    -------
    Explorer or matplotlib.figure.Figure
        The result (``explorer.result``) is a dict: ``t``, ``v`` (steps + 1, 6), ``contact_state``
        per step, ``t_star``.
    """
    values = {"mu": _in_range("mu", mu, 0.05, 1.0), "h": _in_range("h", h, 0.005, 0.2),
              "v0": _in_range("v0", v0, 0.1, 5.0), "n_d": val.integer("n_d", n_d, 4, 16)}
    if values["n_d"] % 4:
        raise ValueError(f"n_d must be 4, 8, 12 or 16, got {n_d!r}")
    if not interactive(static):
        return _static(_sphere_draw, values)
    import ipywidgets as w

    return Explorer({"mu": _slider("float", mu, 0.05, 1.0, 0.05, "μ"), "h": _slider("float", h, 0.005, 0.2, 0.005, "h"),
                     "v0": _slider("float", v0, 0.1, 5.0, 0.1, "v₀"),
                     "n_d": w.Dropdown(options=[4, 8, 12, 16], value=n_d, description="directions")}, _sphere_draw)


# ---- the particle and the wall of Trinkle (notes, 2003), pp. 7-12

def _particle_draw(fig, v0, gap, wall_speed, h, steps=6):
    p_n, v = particle_above_wall(steps=steps, v0=v0, gap=gap, wall_speed=wall_speed, h=h)
    k = np.arange(steps + 1)
    x = np.r_[gap, gap + h * np.cumsum(v)]
    ax = fig.subplots(1, 2)
    ax[0].plot(h * k, x, "o-", label="particle")
    ax[0].plot(h * k, wall_speed * h * k, "k--", label="wall")
    ax[0].set_xlabel("t")
    ax[0].set_ylabel("height")
    ax[0].legend()
    ax[1].bar(k[1:], p_n)
    for i, p in enumerate(p_n):
        ax[1].annotate(f"{p:.2f}", (i + 1, p), ha="center", va="bottom", fontsize="small")
    ax[1].set_xlabel("step")
    ax[1].set_ylabel("$p_n$")
    ax[1].set_title(f"m = g = 1, h = {h:g}: v = " + ", ".join(f"{x:.2f}" for x in v[:4]) + ", …", fontsize="small")
    fig.tight_layout()
    return {"p_n": p_n, "v": v}


def particle_and_wall(v0=-4.0, gap=1.0, wall_speed=0.0, h=1.0, *, static=None):
    """The particle of Trinkle (notes, 2003), pp. 7-12 (m = g = 1), falling at v₀ onto a wall ``gap`` below that moves up at
    ``wall_speed``: heights and normal impulses :math:`p_n` of six steps of :func:`mbdcp.step`.

    Parameters
    ----------
    v0 : float
        Initial velocity in [-8, 2].
    gap : float
        Initial gap in [0, 3].
    wall_speed : float
        In [-1, 1].
    h : float
        Time step in [0.1, 2].
    static : bool, optional
        See :func:`sphere`.

    Returns
    -------
    Explorer or matplotlib.figure.Figure
        The result is a dict with ``p_n`` and ``v`` (end velocities), six of each.
    """
    values = {"v0": _in_range("v0", v0, -8.0, 2.0), "gap": _in_range("gap", gap, 0.0, 3.0),
              "wall_speed": _in_range("wall_speed", wall_speed, -1.0, 1.0), "h": _in_range("h", h, 0.1, 2.0)}
    if not interactive(static):
        return _static(_particle_draw, values)
    return Explorer({"v0": _slider("float", v0, -8.0, 2.0, 0.5, "v₀"), "gap": _slider("float", gap, 0.0, 3.0, 0.25, "gap"),
                     "wall_speed": _slider("float", wall_speed, -1.0, 1.0, 0.25, "wall speed"),
                     "h": _slider("float", h, 0.1, 2.0, 0.1, "h")}, _particle_draw)


# ---- planar friction (Trinkle (notes, 2003), pp. 14-17)

_CASES = [(1, 1, 1), (1, 1, 0), (1, 0, 1), (1, 0, 0), (0, 1, 1), (0, 1, 0), (0, 0, 1), (0, 0, 0)]


def _block(mu, v_x, push, lift, h=0.1):
    return mbdcp.step(np.eye(2), [[0.0], [1.0]], [[1.0, -1.0], [0.0, 0.0]], np.ones((2, 1)), [mu], [v_x, 0.0], h,
                      p_ext=[push, -G * h + lift], psi_n=[0.0])


def _planar_draw(fig, mu, v_x, push, lift):
    res = _block(mu, v_x, push, lift)
    pattern = tuple(int(x > 1e-10) for x in (res.beta[0], res.beta[1], res.sigma[0]))
    case = 1 + _CASES.index(pattern)
    state = res.contact_state[0]
    ax = fig.subplots(1, 2)
    names = ["$p_n$", r"$\beta_1$", r"$\beta_2$", r"$\sigma$", "$v_x^+$"]
    vals = [res.p_n[0], res.beta[0], res.beta[1], res.sigma[0], res.v_next[0]]
    ax[0].bar(names, vals, color=["0.5", "tab:green", "tab:purple", "tab:orange", _STATE_COLOURS[state]])
    ax[0].axhline(0, color="k", lw=0.5)
    ax[0].set_title(f"case {case}: (β₁, β₂, σ) signs {pattern} — {state.name}", fontsize="small")
    pushes = np.linspace(-1.0, 1.0, 81)
    friction = [np.subtract(*_block(mu, v_x, p, lift).beta) for p in pushes]
    ax[1].plot(pushes, friction)
    ax[1].plot([push], [res.beta[0] - res.beta[1]], "o", color=_STATE_COLOURS[state])
    ax[1].axhline(mu * (G * 0.1 - lift), color="0.6", ls=":")
    ax[1].axhline(-mu * (G * 0.1 - lift), color="0.6", ls=":")
    ax[1].set_xlabel("applied tangential impulse")
    ax[1].set_ylabel(r"friction impulse $\beta_1 - \beta_2$")
    fig.tight_layout()
    return {"result": res, "case": case, "contact_state": state}


def planar_friction(mu=0.5, v_x=0.0, push=0.1, lift=0.0, *, static=None):
    """One step (h = 0.1, g = 9.81) of a unit block on the floor with planar friction
    :math:`D = [\\hat t, -\\hat t]`: its impulses, the sign case of :math:`(\\beta_1, \\beta_2, \\sigma)`
    (notebook 03's eight cases), its contact state, and the friction impulse against the push.

    Parameters
    ----------
    mu : in [0, 1.5]; v_x : initial tangential velocity in [-3, 3]; push : applied tangential
        impulse in [-1, 1]; lift : applied upward impulse in [0, 2] (above m g h = 0.981 it flies).
    static : see :func:`sphere`.

    Returns
    -------
    Explorer or matplotlib.figure.Figure
        The result is a dict: ``result`` (:class:`~mbdcp.StepResult`), ``case`` (1-8),
        ``contact_state``.
    """
    values = {"mu": _in_range("mu", mu, 0.0, 1.5), "v_x": _in_range("v_x", v_x, -3.0, 3.0),
              "push": _in_range("push", push, -1.0, 1.0), "lift": _in_range("lift", lift, 0.0, 2.0)}
    if not interactive(static):
        return _static(_planar_draw, values)
    return Explorer({"mu": _slider("float", mu, 0.0, 1.5, 0.05, "μ"), "v_x": _slider("float", v_x, -3.0, 3.0, 0.1, "v_x"),
                     "push": _slider("float", push, -1.0, 1.0, 0.05, "push"),
                     "lift": _slider("float", lift, 0.0, 2.0, 0.1, "lift")}, _planar_draw)


# ---- Painlevé's rod (the instantaneous model of Trinkle 2003, section 2)

def _rod(theta, mu, m=1.0, l=1.0):
    M = np.diag([m, m, m * l * l / 3.0])
    Wn = np.array([[0.0], [1.0], [-l * np.cos(theta)]])
    t = np.array([1.0, 0.0, l * np.sin(theta)])
    return M, Wn, np.array([t, -t]).T, np.ones((2, 1)), [mu], np.array([-1.0, 0, 0]), np.array([0, -m * G, 0])


def _rod_draw(fig, theta, mu):
    th = np.radians(theta)
    res = mbdcp.instantaneous(*_rod(th, mu))
    A = 1 + 3 * np.cos(th) ** 2 - 3 * mu * np.sin(th) * np.cos(th)
    ax = fig.subplots(1, 2)
    x0 = np.array([0.0, 0.0])
    tip = x0 + 2 * np.array([np.cos(th), np.sin(th)])
    ax[0].plot([x0[0], tip[0]], [x0[1], tip[1]], lw=6, color="tab:orange", solid_capstyle="round")
    ax[0].axhline(0, color="k")
    ax[0].annotate("", xy=(-0.6, 0.15), xytext=(0.0, 0.15), arrowprops={"arrowstyle": "->"})
    if res.success:
        ax[0].annotate("", xy=(0, 0.1 * res.c_n[0]), xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": "tab:blue"})
    ax[0].set_xlim(-1, 2.5)
    ax[0].set_ylim(-0.3, 2.2)
    ax[0].set_aspect("equal")
    ax[0].set_title(f"{res.status.name}" + (f": c_n = {res.c_n[0]:.3f} = mg/A" if res.success else ": no solution"),
                    fontsize="small")
    thc = np.radians(np.linspace(1, 89, 300))
    ax[1].fill_between(np.degrees(thc), (1 + 3 * np.cos(thc) ** 2) / (3 * np.sin(thc) * np.cos(thc)), 3,
                       color="#f4a582", label="A < 0: Lemke's ray")
    ax[1].plot([theta], [mu], "ko")
    ax[1].set_ylim(0, 3)
    ax[1].set_xlim(0, 90)
    ax[1].set_xlabel(r"$\theta$ [deg]")
    ax[1].set_ylabel(r"$\mu$")
    ax[1].set_title(f"A = 1 + 3cos²θ − 3μ sinθ cosθ = {A:.3f}", fontsize="small")
    ax[1].legend(fontsize="small")
    fig.tight_layout()
    return {"result": res, "A": A}


def painleve_rod(theta=30.0, mu=0.3, *, static=None):
    """Painlevé's rod (the instantaneous model of Trinkle 2003, section 2): a rod of length 2 resting on its end at angle θ, sliding
    toward -x. The instantaneous model (:func:`mbdcp.instantaneous`) has the normal force
    :math:`c_n = mg/A`, :math:`A = 1 + 3\\cos^2\\theta - 3\\mu\\sin\\theta\\cos\\theta`, when A > 0,
    and no solution (Lemke's ray) when A < 0.

    Parameters
    ----------
    theta : angle in degrees in [1, 89]; mu : in [0, 3].
    static : see :func:`sphere`.

    Returns
    -------
    Explorer or matplotlib.figure.Figure
        The result is a dict: ``result`` (:class:`~mbdcp.InstantaneousResult`) and ``A``.
    """
    values = {"theta": _in_range("theta", theta, 1.0, 89.0), "mu": _in_range("mu", mu, 0.0, 3.0)}
    if not interactive(static):
        return _static(_rod_draw, values)
    return Explorer({"theta": _slider("float", theta, 1.0, 89.0, 1.0, "θ [deg]"),
                     "mu": _slider("float", mu, 0.0, 3.0, 0.05, "μ")}, _rod_draw)


# ---- Lemke's tableau, pivot by pivot

_MURTY = (np.array([[1.0, -1.0, -1.0, -1.0], [-1.0, 1.0, -1.0, -1.0], [1.0, 1.0, 2.0, 0.0], [1.0, 1.0, 0.0, 2.0]]),
          np.array([3.0, 5.0, -9.0, -5.0]))


def lemke_tableaux(M, q):
    """Lemke's tableau before the first pivot and after each pivot of :func:`mbdcp.lemke`.

    The tableau is :math:`[I, -M, -e \\mid q]` for :math:`w - Mz - e z_0 = q` with columns
    w1..wn, z1..zn, z0, q; each pivot of ``lemke(M, q, trace=True).trace`` (entering, leaving)
    is replayed by Gauss–Jordan elimination on the leaving variable's row and the entering
    variable's column, so the last column holds the basic variables' values.

    Returns
    -------
    dict with ``tableaux`` (list of (n, 2n + 2) arrays), ``basis`` (list of the row labels per
    tableau), ``columns`` (labels), ``trace`` (the pivots replayed: Lemke's last path, where it
    retried on another covering vector, up to a pivot whose unscaled tableau overflows) and
    ``result`` (the :class:`~mbdcp.LemkeResult`).

    >>> import numpy as np
    >>> t = lemke_tableaux(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-5.0, -6.0]))
    >>> t["trace"], t["basis"][-1]
    ([('z0', 'w2'), ('z2', 'w1'), ('z1', 'z0')], ['z2', 'z1'])
    >>> t["tableaux"][-1][:, -1].round(6).tolist()       # z2 = 7/3, z1 = 4/3 = M^-1 (5, 6)
    [2.333333, 1.333333]
    """
    M = val.as_array("M", M, 2)
    n = M.shape[0]
    if M.shape != (n, n) or n == 0:
        raise ValueError(f"M must be a non-empty square matrix, got shape {M.shape}")
    q = val.vector("q", q, n, symbol="n")
    res = mbdcp.lemke(M, q, trace=True)
    columns = [f"w{i + 1}" for i in range(n)] + [f"z{i + 1}" for i in range(n)] + ["z0", "q"]
    T = np.hstack([np.eye(n), -M, -np.ones((n, 1)), q[:, None]])
    basis = [f"w{i + 1}" for i in range(n)]
    tableaux, bases = [T.copy()], [list(basis)]
    # the last path Lemke took (z0 entering starts one: a retry on badly scaled or degenerate data),
    # up to a repair from another basis, which a tableau from the start cannot replay
    trace = list(res.trace or [])
    starts = [k for k, (enter, _) in enumerate(trace) if enter == "z0"]
    trace = trace[starts[-1] if starts else 0:]
    for k, (enter, leave) in enumerate(trace):
        if leave not in basis:
            trace = trace[:k]
            break
        r, c = basis.index(leave), columns.index(enter)
        T = T.copy()
        with np.errstate(all="ignore"):
            T[r] /= T[r, c]
            for i in range(n):
                if i != r:
                    T[i] -= T[i, c] * T[r]
        if not np.all(np.isfinite(T)):  # the plain elimination overflowed where Lemke's scaled one did not
            trace = trace[:k]
            break
        basis[r] = enter
        tableaux.append(T)  # T is a fresh copy for each pivot
        bases.append(list(basis))
    return {"tableaux": tableaux, "basis": bases, "columns": columns, "trace": trace, "result": res}


def _lemke_draw_one(ax, data, k):
    T, basis, cols = data["tableaux"][k], data["basis"][k], data["columns"]
    trace = data["trace"]
    cell = [[f"{x + 0.0:.3g}" for x in row] for row in T]  # + 0.0: no "-0"
    table = ax.table(cellText=cell, rowLabels=basis, colLabels=cols, loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    if k < len(trace):  # highlight the next pivot: entering column, leaving row
        enter, leave = trace[k]
        r, c = basis.index(leave), cols.index(enter)
        for i in range(len(basis)):
            table[i + 1, c].set_facecolor("#fde0c5")
        for j in range(len(cols)):
            table[r + 1, j].set_facecolor("#c6dbef")
        table[r + 1, c].set_facecolor("#f4a582")
        what = f"next pivot: {enter} enters, {leave} leaves"
    else:
        res = data["result"]
        what = f"done: {res.status.name}, z = {np.round(res.z, 4).tolist()}"
    ax.set_title(f"tableau after {k} pivot{'s' if k != 1 else ''} — {what}", fontsize="small")
    ax.axis("off")


def lemke_stepper(M=None, q=None, *, pivot=0, static=None):
    """Lemke's tableau pivot by pivot (default: Murty's 4 x 4 example 2.8 of ``python -m mbdcp
    demo lcp``); the next pivot's column (entering) and row (leaving) are highlighted.

    Parameters
    ----------
    M, q : the LCP (both or neither); pivot : the tableau shown first (0: before any pivot).
    static : see :func:`sphere`; the static figure shows every tableau, one under the other.

    Returns
    -------
    Explorer (slider ``pivot``; its result is the dict of :func:`lemke_tableaux` with ``pivot``)
    or matplotlib.figure.Figure.
    """
    if (M is None) != (q is None):
        raise ValueError("M and q must be given together (or neither, for Murty's example)")
    data = lemke_tableaux(*((M, q) if M is not None else _MURTY))
    k_max = len(data["tableaux"]) - 1
    pivot = val.integer("pivot", pivot, 0, k_max)
    n = data["tableaux"][0].shape[0]
    height = 0.35 * (n + 2)

    def draw(fig, pivot):
        _lemke_draw_one(fig.add_subplot(1, 1, 1), data, pivot)
        return dict(data, pivot=pivot)

    if not interactive(static):
        from matplotlib.figure import Figure

        fig = Figure(figsize=(9.0, height * (k_max + 1)))
        for k, ax in enumerate(fig.subplots(k_max + 1, 1, squeeze=False)[:, 0]):
            _lemke_draw_one(ax, data, k)
        fig.tight_layout()
        return fig
    import ipywidgets as w

    return Explorer({"pivot": w.IntSlider(value=pivot, min=0, max=k_max, description="pivot", continuous_update=False)},
                    draw, figsize=(9.0, height + 0.6))
