"""Drawing trajectories: the stick/slip timeline and animations (matplotlib, imported on use)."""
import functools

import numpy as np

from mbdcp.infrastructure import validate as val
from mbdcp.infrastructure.contact_state import ContactState
from mbdcp.mechanics.shapes import Shapes

__all__ = ["plot_series", "plot_contact_states", "animate"]

# white: no contact; then SEPARATING, STICKING, SLIDING
_STATE_COLOURS = ("white", "0.75", "tab:blue", "tab:red")


def new_axes(ax=None):
    """``ax`` itself, or the Axes of a new figure when it is None: a plotting helper called without
    ``ax`` never draws over the current figure (two helpers called in turn draw two figures)."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def plot_series(ax, t, series, ylabel):
    """Curves {label: values} against t into ``ax`` (a new figure when None), a legend when there
    are several; returns the Axes."""
    ax = new_axes(val.axes("ax", ax))
    for label, y in series.items():
        ax.plot(t, y, label=label)
    ax.set_xlabel("t")
    ax.set_ylabel(ylabel)
    if len(series) > 1:
        ax.legend()
    return ax


def plot_contact_states(tr, ax=None):
    """Stick/slip timeline of a trajectory (see :meth:`Trajectory.plot_contact_states`)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    ax = new_axes(val.axes("ax", ax))
    steps = len(tr.contact_states)
    rows = max((len(s) for s in tr.contact_states), default=0)
    grid = np.zeros((max(rows, 1), max(steps, 1)))
    for k, states in enumerate(tr.contact_states):
        grid[:len(states), k] = np.asarray(states, dtype=int) + 1
    t = tr.times
    extent = (t[0], t[steps] if steps else t[0] + 1.0, max(rows, 1) - 0.5, -0.5)
    ax.imshow(grid, cmap=ListedColormap(_STATE_COLOURS), vmin=-0.5, vmax=3.5, aspect="auto", interpolation="nearest",
              extent=extent)
    ax.set_xlabel("t (step from t - h to t)")
    ax.set_ylabel("active contact")
    ax.legend(handles=[Patch(color=c, label=s.name.lower()) for s, c in zip(ContactState, _STATE_COLOURS[1:])],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    return ax


def _check_every(every):
    if isinstance(every, (bool, np.bool_)) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ValueError(f"every must be a positive integer, got {every!r}")
    return int(every)


def _shapes(tr, scene):
    from mbdcp.mechanics.scene import Scene

    if scene is not None:
        if not isinstance(scene, Scene):
            raise TypeError(f"scene must be a mbdcp.mechanics.Scene or None, got {val.describe(scene)}")
        shapes = Shapes.of(scene)
    elif tr.shapes is not None:
        shapes = tr.shapes
    else:
        raise ValueError("scene is needed: this trajectory records no shapes")
    per_body = 3 if shapes.planar else 7
    if tr.positions.shape[1] != per_body * len(shapes.radius):
        raise ValueError(f"scene must have the trajectory's bodies: positions have {tr.positions.shape[1]} columns, "
                         f"{len(shapes.radius)} bodies need {per_body * len(shapes.radius)}")
    return shapes


def _frame_geometry(shapes, q):
    """Per body in the drawing plane: centres (n, 2), spokes (n, 2, 2) and box outlines (list)."""
    from mbdcp.mechanics.bodies import box_corners, quaternion_to_matrix

    n = len(shapes.radius)
    boxes = np.flatnonzero(shapes.half_extents[:, 0] > 0)
    if shapes.planar:
        Q = q.reshape(n, 3)
        c, th = Q[:, :2], Q[:, 2]
        tip = c + shapes.radius[:, None] * np.stack([np.cos(th), np.sin(th)], axis=1)
        e = np.stack([np.cos(th / 2), 0 * th, 0 * th, np.sin(th / 2)], axis=1)  # a turn about z
        corners = box_corners(shapes.half_extents[boxes], e[boxes])[:, :, :2] + c[boxes, None, :]
        return c, np.stack([c, tip], axis=1), {int(i): _hull(pts) for i, pts in zip(boxes, corners)}
    Q = q.reshape(n, 7)
    c = Q[:, [0, 2]]
    e = Q[:, 3:]
    R = quaternion_to_matrix(e)
    tip = c + shapes.radius[:, None] * R[:, [0, 2], 0]
    outlines = {}
    if boxes.size:
        corners = box_corners(shapes.half_extents[boxes], e[boxes])[:, :, [0, 2]] + c[boxes, None, :]
        for i, pts in zip(boxes, corners):
            outlines[int(i)] = _hull(pts)
    return c, np.stack([c, tip], axis=1), outlines


def _hull(pts):
    """Convex hull (counter-clockwise) of a few 2-D points (monotone chain)."""
    p = sorted(map(tuple, np.round(pts, 12)))
    if len(p) < 3:
        return np.array(p)

    def half(points):
        out = []
        for x in points:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (x[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (x[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(x)
        return out[:-1]

    return np.array(half(p) + half(p[::-1]))


def _wall_segment(point, normal, centre, span, planar):
    """The wall's trace in the drawing plane as a segment of length 2 span near centre (None if
    the plane is parallel to the drawing plane)."""
    if planar:
        n, p = normal, point
    else:
        n, p = normal[[0, 2]], point[[0, 2]]
        if np.linalg.norm(n) < 0.1:
            return None
        n = n / np.linalg.norm(n)
    d = np.array([-n[1], n[0]])
    foot = centre - ((centre - p) @ n) * n
    return np.array([foot - span * d, foot + span * d])


@functools.cache
def _animation_class():
    """A FuncAnimation that shows as a JavaScript player in Jupyter (matplotlib's default,
    rcParams["animation.html"] = "none", shows nothing) unless the rcParams ask for a format."""
    import matplotlib
    from matplotlib.animation import FuncAnimation

    class TrajectoryAnimation(FuncAnimation):
        __module__ = __name__

        def __repr__(self):
            return f"<TrajectoryAnimation: {len(list(self.new_frame_seq()))} frames>"

        def _repr_html_(self):
            if matplotlib.rcParams["animation.html"] in ("html5", "jshtml"):
                return super()._repr_html_()
            return self.to_jshtml()

    return TrajectoryAnimation


def animate(tr, scene=None, *, every=1, arrows=False, interval=None, figsize=(5.0, 4.0), dpi=72):
    """An animation of a trajectory (see :meth:`Trajectory.animate`)."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Circle, Polygon

    every = _check_every(every)
    arrows = val.flag("arrows", arrows)
    figsize = tuple(val.as_array("figsize", figsize, 1).tolist())
    if len(figsize) != 2 or not all(x > 0 for x in figsize):
        raise ValueError(f"figsize must be two positive numbers (inches), got {figsize}")
    dpi = val.positive_scalar("dpi", dpi)
    shapes = _shapes(tr, scene)
    if interval is None:
        dt = float(tr.times[1] - tr.times[0]) if len(tr.times) > 1 else 0.05
        interval = max(20.0, 1000.0 * dt * every)
    else:
        interval = val.positive_scalar("interval", interval)
    frames = list(range(0, len(tr.times), every))
    n = len(shapes.radius)
    geometry = [_frame_geometry(shapes, tr.positions[k]) for k in frames]

    # limits: every body over the frames shown, with a margin
    lo = np.min([g[0] - shapes.radius[:, None] for g in geometry], axis=(0, 1))
    hi = np.max([g[0] + shapes.radius[:, None] for g in geometry], axis=(0, 1))
    for g in geometry:
        for pts in g[2].values():
            lo, hi = np.minimum(lo, pts.min(axis=0)), np.maximum(hi, pts.max(axis=0))
    size = max(float(np.max(hi - lo)), 1e-3)
    lo, hi = lo - 0.15 * size, hi + 0.15 * size
    centre, span = 0.5 * (lo + hi), 2.0 * size

    fig, ax = plt.subplots(figsize=figsize, dpi=dpi)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y" if shapes.planar else "z")
    walls = [ax.plot([], [], color="0.3", lw=2)[0] for _ in shapes.walls]
    for outline in shapes.obstacles:  # fixed: drawn once, in the drawing plane
        pts = outline if shapes.planar else outline[:, [0, 2]]
        ax.add_patch(Polygon(_hull(pts) if len(pts) > 2 else pts, closed=len(pts) > 2, fc="0.75", ec="0.3", lw=2))
    c0, _, outlines0 = geometry[0]
    patches = {}
    for i in range(n):
        if i in outlines0:
            patches[i] = ax.add_patch(Polygon(outlines0[i], closed=True, fc="tab:orange", ec="k", alpha=0.8))
        elif shapes.radius[i] > 0:
            patches[i] = ax.add_patch(Circle(c0[i], shapes.radius[i], fc="tab:orange", ec="k", alpha=0.8))
    points = ax.plot([], [], "k.", ms=4)[0]  # particles
    spokes = ax.add_collection(LineCollection([], colors="k", lw=1))
    forces = ax.add_collection(LineCollection([], lw=2))
    label = ax.text(0.02, 0.96, "", transform=ax.transAxes, va="top")
    particles = np.flatnonzero((shapes.radius <= 0) & (shapes.half_extents[:, 0] <= 0))
    round_ = [i for i in range(n) if shapes.radius[i] > 0 and shapes.half_extents[i, 0] <= 0]
    p_max = max((float(np.max(p)) for p in tr.impulses if np.size(p)), default=0.0)
    scale = 0.3 * size / p_max if p_max > 0 else 0.0

    def draw(j):
        k = frames[j]
        c, spoke, outlines = geometry[j]
        for i, patch in patches.items():
            if i in outlines:
                patch.set_xy(outlines[i])
            else:
                patch.center = c[i]
        spokes.set_segments(spoke[round_])
        points.set_data(c[particles, 0], c[particles, 1])
        t = tr.times[k]
        for line, (p0, nrm, vel) in zip(walls, shapes.walls):
            seg = _wall_segment(p0 + (t - tr.times[0]) * vel, nrm, centre, span, shapes.planar)
            line.set_data(*(seg.T if seg is not None else ([], [])))
        segments, colours = [], []
        if arrows and k < len(tr.contact_points):
            pts, nrm, p_n = tr.contact_points[k], tr.contact_normals[k], np.asarray(tr.impulses[k])
            if not shapes.planar:
                pts, nrm = pts[:, [0, 2]], nrm[:, [0, 2]]
            segments = np.stack([pts, pts + scale * p_n[:, None] * nrm], axis=1)
            states = tr.contact_states[k] if k < len(tr.contact_states) else [ContactState.STICKING] * len(p_n)
            colours = [_STATE_COLOURS[int(s) + 1] for s in states]
        forces.set_segments(segments)
        forces.set_color(colours)
        label.set_text(f"t = {t:.3f}")
        return [*patches.values(), spokes, points, forces, label, *walls]

    anim = _animation_class()(fig, draw, frames=len(frames), interval=interval, blit=False, repeat=True)
    draw(0)
    plt.close(fig)  # the player shows it: no static copy of the first frame under the cell
    return anim
