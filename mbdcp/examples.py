"""Worked examples of the source papers, as data and closed forms.

- :func:`sphere_on_plane`: Trinkle (2003; seed 000 section 4), a unit sphere
  sliding then rolling on a plane, and :func:`sphere_closed_form`.
- :func:`particle_above_wall`: the particle tables of Trinkle's notes (seed 002 pp. 7-12).
"""
import numpy as np

import mbdcp

__all__ = ["sphere_on_plane", "sphere_closed_form", "simulate_sphere", "particle_above_wall"]


def sphere_on_plane(mu=0.2, m=1.0, r=1.0):
    """M, Wn, D, E, U of a uniform sphere (radius r, mass m) touching the plane z = 0.

    v = (v_x, v_y, v_z, w_x, w_y, w_z); inertia 2/5 m r^2; four friction directions
    along +x, -x, +y, -y at the contact point (0, 0, -r) relative to the centre (the
    D of seed 000 eq. 47).
    """
    inertia = 0.4 * m * r * r
    M = np.diag([m, m, m, inertia, inertia, inertia])
    Wn = np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T
    D = np.array([
        [1.0, -1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, -1.0],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, r, -r],
        [-r, r, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ])
    E = np.ones((4, 1))
    return M, Wn, D, E, np.array([mu])


def sphere_closed_form(t, v0=2.0, mu=0.2, g=9.81, r=1.0):
    """Exact (v_x, w_y) of the sphere released sliding at v0 along x (seed 000 section 4):
    it slides until t* = 2 v0 / (7 mu g), then rolls with v_x = r w_y = 5/7 v0."""
    t = np.asarray(t, dtype=float)
    t_star = 2.0 * v0 / (7.0 * mu * g)
    ts = np.minimum(t, t_star)
    vx = v0 - mu * g * ts
    wy = 2.5 * mu * g * ts / r
    return vx, wy


def simulate_sphere(h=0.12, T=0.6, v0=2.0, mu=0.2, g=9.81):
    """Time-step the sphere with :func:`mbdcp.step`: returns times, velocities (steps+1, 6),
    normal impulses and friction impulses (steps, 4)."""
    M, Wn, D, E, U = sphere_on_plane(mu)
    steps = int(round(T / h))
    v = np.array([v0, 0.0, 0.0, 0.0, 0.0, 0.0])
    z = 1.0  # height of the centre: the gap is z - r
    p_ext = np.array([0.0, 0.0, -g * h, 0.0, 0.0, 0.0])
    vs, pn, beta = [v], [], []
    for _ in range(steps):
        res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=[z - 1.0])
        if not res.success:
            raise RuntimeError(f"sphere step failed: {res.message}")
        v = res.v_next
        z += h * v[2]
        vs.append(v)
        pn.append(res.p_n[0])
        beta.append(res.beta)
    return np.arange(steps + 1) * h, np.array(vs), np.array(pn), np.array(beta)


def particle_above_wall(steps=6, v0=-4.0, gap=1.0, wall_speed=0.0, m=1.0, h=1.0, g=1.0):
    """The 1-D particle falling onto a wall (seed 002): gap, velocity and p_n per step.

    The wall moves up at ``wall_speed``, so the gap's time derivative from the wall is
    dpsi_n = -wall_speed. Returns arrays p_n (steps,) and v (steps,) of the end velocities.
    """
    M, Wn = np.array([[m]]), np.array([[1.0]])
    D, E = np.zeros((1, 0)), np.zeros((0, 1))
    v, psi = np.array([v0]), gap
    pns, vs = [], []
    for _ in range(steps):
        res = mbdcp.step(M, Wn, D, E, [0.0], v, h, p_ext=[-m * g * h], psi_n=[psi], dpsi_n=[-wall_speed])
        v = res.v_next
        psi += h * (v[0] - wall_speed)
        pns.append(res.p_n[0])
        vs.append(v[0])
    return np.array(pns), np.array(vs)
