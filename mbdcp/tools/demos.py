"""Demos run by ``python -m mbdcp demo NAME``: each prints a short report and returns a
summary dict (printed as one JSON line with ``--json``)."""
import time

import numpy as np

import mbdcp
from mbdcp.tools.examples import particle_above_wall, simulate_sphere, sphere_closed_form, sphere_on_plane

__all__ = ["demo_sphere", "demo_particle", "demo_lcp", "demo_box", "demo_pile2d", "demo_pile3d"]


def demo_sphere(out, plot=True):
    """Trinkle (2003), section 4: a unit sphere released sliding at 2 m/s on a plane (mu = 0.2)
    slides, then rolls at 5/7 of its speed; the time-stepping LCP matches the closed form."""
    h, T, v0, mu = 0.12, 0.6, 2.0, 0.2
    t0 = time.perf_counter()
    t, v, p_n, beta = simulate_sphere(h=h, T=T, v0=v0, mu=mu)
    seconds = time.perf_counter() - t0
    vx, wy = sphere_closed_form(t, v0=v0, mu=mu)
    out("Sphere on a plane (Trinkle 2003, section 4): h = 0.12, mu = 0.2, v0 = 2")
    out(f"sliding ends at t* = 2 v0 / (7 mu g) = {2 * v0 / (7 * mu * 9.81):.4f} s; then v_x = w_y = 5/7 v0")
    out(f"{'t':>6} {'v_x':>10} {'w_y':>10} {'v_x exact':>10} {'w_y exact':>10} {'p_n':>8}")
    for k in range(len(t)):
        pn = f"{p_n[k - 1]:8.4f}" if k else f"{'':8}"
        out(f"{t[k]:6.2f} {v[k, 0]:10.6f} {v[k, 4]:10.6f} {vx[k]:10.6f} {wy[k]:10.6f} {pn}")
    err = float(max(np.abs(v[:, 0] - vx).max(), np.abs(v[:, 4] - wy).max()))
    out(f"largest difference from the closed form: {err:.1e}")
    M = sphere_on_plane(mu)[0]
    summary = {
        "demo": "sphere", "bodies": 1, "steps": len(t) - 1, "seconds": seconds, "max_penetration": 0.0,
        "final_kinetic_energy": float(0.5 * v[-1] @ M @ v[-1]), "max_error_vs_closed_form": err,
    }
    if plot:
        summary["figure"] = _plot_sphere(t, v, v0, mu)
        out(f"wrote {summary['figure']}")
    return summary


def _plot_sphere(t, v, v0, mu, path="sphere.png"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tt = np.linspace(0, t[-1], 400)
    vx, wy = sphere_closed_form(tt, v0=v0, mu=mu)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.plot(tt, vx, "k:", label="$v_x$ exact")
    ax.plot(tt, wy, "k--", label=r"$\omega_y$ exact")
    ax.plot(t, v[:, 0], "o", label="$v_x$ (mbdcp.step)")
    ax.plot(t, v[:, 4], "s", label=r"$\omega_y$ (mbdcp.step)")
    ax.axvline(2 * v0 / (7 * mu * 9.81), color="0.7", lw=0.8)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("velocity")
    ax.set_title("Sphere slides, then rolls (h = 0.12)")
    ax.legend(loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def demo_particle(out, plot=True):
    """Trinkle (notes, 2003), pp. 7-12: a particle (m = h = g = 1) falls at 4 onto a wall 1 away, fixed or moving up at 0.5."""
    t0 = time.perf_counter()
    fixed, v_fixed = particle_above_wall()
    moving, v_moving = particle_above_wall(wall_speed=0.5)
    seconds = time.perf_counter() - t0
    out("Particle above a wall (Trinkle's notes): m = h = g = 1, v = -4, gap 1")
    out(f"{'step':>4} {'p_n fixed':>10} {'v fixed':>8} {'p_n moving':>11} {'v moving':>9}")
    for k in range(len(fixed)):
        out(f"{k + 1:4d} {fixed[k]:10.4f} {v_fixed[k]:8.4f} {moving[k]:11.4f} {v_moving[k]:9.4f}")
    return {"demo": "particle", "bodies": 1, "steps": 2 * len(fixed), "seconds": seconds,
            "max_penetration": 0.0, "final_kinetic_energy": 0.5 * float(v_fixed[-1] ** 2)}


def demo_lcp(out, plot=True):
    """Murty's (1988) example 2.8 (4 x 4) solved by Lemke's method, with its pivot sequence."""
    M = np.array([[1.0, -1.0, -1.0, -1.0], [-1.0, 1.0, -1.0, -1.0], [1.0, 1.0, 2.0, 0.0], [1.0, 1.0, 0.0, 2.0]])
    q = np.array([3.0, 5.0, -9.0, -5.0])
    t0 = time.perf_counter()
    res = mbdcp.lemke(M, q, trace=True)
    seconds = time.perf_counter() - t0
    out("LCP(M, q): find z >= 0 with w = M z + q >= 0 and z.w = 0")
    out(f"M = {M.tolist()}, q = {q.tolist()}")
    for k, (enter, leave) in enumerate(res.trace):
        out(f"  pivot {k + 1}: {enter} enters, {leave} leaves")
    out(f"status {res.status.name}: z = {np.round(res.z, 6).tolist()}, w = {np.round(res.w, 6).tolist()}")
    return {"demo": "lcp", "bodies": 0, "steps": 1, "seconds": seconds, "max_penetration": 0.0,
            "final_kinetic_energy": 0.0, "pivots": res.pivots, "success": bool(res.success)}


def _simulation_summary(name, scene, tr, out):
    out(f"{tr.steps} steps in {tr.seconds:.2f} s ({tr.steps / max(tr.seconds, 1e-9):.1f} steps/s); "
        f"largest penetration {tr.max_penetration.max():.2e}; final kinetic energy {tr.kinetic_energy[-1]:.3e}")
    failed = sum(s != mbdcp.Status.SOLVED for s in tr.statuses)
    if failed:
        out(f"{failed} step(s) ended with a solver status other than SOLVED (kept the last iterate)")
    return {"demo": name, "bodies": len(scene.bodies), "steps": tr.steps, "seconds": tr.seconds,
            "max_penetration": float(tr.max_penetration.max()),
            "final_kinetic_energy": float(tr.kinetic_energy[-1]), "unsolved_steps": int(failed)}


def demo_box(out, plot=True):
    """Trinkle (notes, 2003), spatial part: a box (m = 1, J_B = diag(1, 2, 3)) dropped with a spin comes to rest on the floor."""
    from mbdcp.mechanics import Body3D, Plane, Scene, simulate

    e = np.array([np.cos(0.2), 0.6 * np.sin(0.2), 0.8 * np.sin(0.2), 0.0])
    box = Body3D(1.0, [0.0, 0.0, 1.0], quaternion=e, omega=[0.5, 1.0, 3.0], half_extents=[0.5, 0.5, 0.5],
                 inertia=[1.0, 2.0, 3.0])
    scene = Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=0.5, n_d=4, delta=0.05)
    out("Box on the floor (Trinkle's notes): m = 1, J_B = diag(1, 2, 3), dropped from z = 1 spinning")
    tr = simulate(scene, 0.01, 6.0, method="lcp", progress=False)
    for k in range(0, tr.steps + 1, 100):
        out(f"  t = {tr.times[k]:4.1f}  z = {tr.positions[k, 2]:.4f}  kinetic energy = {tr.kinetic_energy[k]:.4e}"
            f"  |e| = {np.linalg.norm(tr.positions[k, 3:7]):.12f}")
    return _simulation_summary("box", scene, tr, out)


def demo_pile2d(out, plot=True):
    """136 disks dropped into a box settle, stepped with algorithm 3 of Anitescu & Hart (2004), as in their lecture."""
    from mbdcp.mechanics import disk_pile_scene, simulate

    scene = disk_pile_scene(136)
    out("136 disks in a box, h = 0.01: 200 steps of algorithm 3 as the pile settles from the lattice")
    out("(one P1 and one P2 solve per step, each warm-started from the last step's Lemke basis)")
    tr = simulate(scene, 0.01, 2.0, method="fixed_point", algorithm=3, progress=True)
    for k in range(0, tr.steps + 1, 50):
        out(f"  t = {tr.times[k]:4.2f}  contacts = {tr.contacts[max(k - 1, 0)]:3d}  kinetic energy = {tr.kinetic_energy[k]:.4e}")
    return _simulation_summary("pile2d", scene, tr, out)


def demo_pile3d(out, plot=True):
    """500 spheres dropped into a box, stepped as a cone complementarity problem (simulate's default
    solver "auto": APGD, which settles every step of this pile)."""
    from mbdcp.mechanics import simulate, sphere_pile_scene

    scene = sphere_pile_scene(500)
    out("500 spheres in a box, h = 0.01, 60 steps of the CCP (solver auto: APGD here), activation distance 0.1")
    tr = simulate(scene, 0.01, 0.6, method="ccp", tol=1e-6, progress=True)
    return _simulation_summary("pile3d", scene, tr, out)


DEMOS = {"sphere": demo_sphere, "particle": demo_particle, "box": demo_box, "pile2d": demo_pile2d,
         "pile3d": demo_pile3d, "lcp": demo_lcp}
