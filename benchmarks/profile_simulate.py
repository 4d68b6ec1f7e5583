"""Where simulate(method="ccp")'s time goes on a sphere pile, per step: the profile that
bench_ccp.py and bench_mujoco.py both print (one module, so neither imports the other)."""
import time

from common import print_table


def simulate_profile(n_spheres, h, steps):
    """Where simulate(method="ccp")'s time goes, per step [ms]: contact search, assembly, the C
    solver, M's block inverses and M^-1 P (C), mbdcp.ccp's Python around them, the state update,
    and the rest (warm start, recording, checks)."""
    import cProfile
    import pstats

    from mbdcp.infrastructure import _core
    from mbdcp.mechanics import simulate, sphere_pile_scene

    # the C calls, timed around them (cProfile does not see inside): the solver, and M's block
    # inverses with Q = M^-1 P that mbdcp.ccp computes before it
    names = {"ccp": "C solver", "block_spd_inverse": "C M^-1, M^-1 P", "block_times_csc": "C M^-1, M^-1 P"}
    originals, spent = {name: getattr(_core, name) for name in names}, dict.fromkeys(names.values(), 0.0)

    def timed(name):
        def call(*a):
            t = time.perf_counter()
            try:
                return originals[name](*a)
            finally:
                spent[names[name]] += time.perf_counter() - t
        return call

    scene = sphere_pile_scene(n_spheres)
    prof = cProfile.Profile()
    for name in names:
        setattr(_core, name, timed(name))
    try:
        t0 = time.perf_counter()
        prof.runcall(simulate, scene, h, steps * h, method="ccp", progress=False)
        total = time.perf_counter() - t0
    finally:
        for name, f in originals.items():
            setattr(_core, name, f)
    stats = pstats.Stats(prof).stats  # (file, line, name) -> (calls, calls, own, cumulative, callers)

    def cumulative(file_end, name):
        return sum(v[3] for (f, _, n), v in stats.items() if f.endswith(file_end) and n == name)

    parts = {"contact search": cumulative("scene.py", "contacts"), "assembly": cumulative("scene.py", "_assembled"),
             **spent, "mbdcp.ccp": cumulative("formulations/ccp.py", "_stepped"),
             "state update": cumulative("scene.py", "advanced") + cumulative("scene.py", "replace")}
    parts["mbdcp.ccp"] -= sum(spent.values())
    parts["rest"] = total - sum(parts.values())
    print(f"\nsimulate(method='ccp') on {n_spheres} spheres, profiled: {total / steps * 1e3:.2f} ms per step "
          "(under cProfile, which slows Python more than C)")
    print_table(list(parts), [[f"{v / steps * 1e3:.2f}" for v in parts.values()]])
