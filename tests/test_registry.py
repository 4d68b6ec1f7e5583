"""The table of formulations: every entry is what it says (its solver, result type and derivative),
compare and simulate read it, and a new formulation is one registration away from both."""
import numpy as np
import pytest
import surface_targets

import mbdcp
from mbdcp.derivatives import _layers, _native_step
from mbdcp.examples import sphere_on_plane
from mbdcp.formulations import registry
from mbdcp.mechanics.simulate import _scene_methods
from mbdcp.tools.compare import FORMULATIONS, tangent_pairs


def test_every_entry_solves_a_step_into_its_result_type():
    M, Wn, D, E, U = sphere_on_plane(0.2)
    v, h = np.array([2.0, 0, 0, 0, 0, 0]), 0.01
    table = mbdcp.compare(M, Wn, D, E, U, v, h, p_ext=[0, 0, -0.0981, 0, 0, 0])
    for f in registry.formulations():
        assert getattr(mbdcp, f.function.__name__) is f.function
        if f.derivative:
            assert callable(f.derivative_function())
        if f.pose is None:
            continue
        for name in tuple(f.variants) or (f.name,):
            call, note = f.pose(registry.StepInput(M, Wn, D, E, np.full(1, 0.2), v, h, {"p_ext": np.array(
                [0, 0, -0.0981, 0, 0, 0])}, *tangent_pairs(D, E)), f.variants.get(name, {}))
            res = call()
            assert isinstance(res, f.result) and res.success, name
            assert table.loc[name, "status"] == "SOLVED"


def test_compare_and_simulate_read_the_table():
    assert FORMULATIONS == registry.variants()
    assert set(_scene_methods()) == {"lcp", "fixed_point", "ccp"}
    with pytest.raises(ValueError, match="method must be one of"):
        from mbdcp.mechanics import Body3D, Scene, simulate

        simulate(Scene([Body3D(1.0, [0, 0, 1.0])]), 0.01, 0.01, method="full_rank", progress=False)


def test_a_new_formulation_is_one_registration():
    # a toy formulation (frictionless: the LCP without friction rows) shows up in compare at once
    def frictionless(M, Wn, D, E, U, v, h, **kw):
        return mbdcp.step(M, Wn, D[:, :0], E[:0], U, v, h, **kw)

    def pose(s, options):
        kw, note = s.modelled({"p_ext", "psi_n"})
        return (None if note else lambda: frictionless(s.M, s.Wn, s.D, s.E, s.mu, s.v, s.h, **kw)), note

    entry = registry.Formulation(name="frictionless", title="no friction", cite="Trinkle (2003)", function=frictionless,
                                 result=mbdcp.StepResult, derivative=None, contacts="directions",
                                 data=frozenset({"p_ext", "psi_n"}), options=frozenset(), pose=pose)
    registry.register(entry)
    try:
        M, Wn, D, E, U = sphere_on_plane(0.2)
        t = mbdcp.compare(M, Wn, D, E, U, [2.0, 0, 0, 0, 0, 0], 0.01, p_ext=[0, 0, -0.0981, 0, 0, 0],
                          formulations=["lcp", "frictionless"])
        assert t.loc["frictionless", "status"] == "SOLVED"
        assert t.loc["frictionless", "v_next"][0] == pytest.approx(2.0)  # no friction: keeps sliding
        assert t.loc["lcp", "v_next"][0] < 2.0
        with pytest.raises(ValueError, match="registered already"):
            registry.register(registry.Formulation(**{**entry.__dict__, "title": "again"}))
        # the bad-input sweep derives its target from the signature and the entry
        [target] = [t for t in surface_targets.formulation_targets(surface_targets.solver_targets())
                    if t.name == "mbdcp.frictionless"]
        assert target.positional == ("M", "Wn", "D", "E", "U", "v", "h")
        assert target.verify(target.valid_kw(), target.call(target.valid_kw())) is None
    finally:
        registry.unregister("frictionless")
    assert "frictionless" not in registry.variants()


def frictionless_stepper(scene, h, options, warm_start):
    """A scene stepper for the toy formulation below: mbdcp.step without friction rows."""
    def solve(a):
        res = mbdcp.step(a["M"], a["Wn"], a["D"][:, :0], a["E"][:0], a["U"], a["v"], h, p_ext=a["p_ext"],
                         psi_n=a["psi_n"])
        return res, res.p_n
    return solve


def test_simulate_steps_scenes_with_a_registered_stepper_and_its_algorithm_default():
    from mbdcp.mechanics import Body3D, Plane, Scene, simulate

    entry = registry.Formulation(name="frictionless_scenes", title="no friction", cite="Trinkle (2003)",
                                 function=mbdcp.step, result=mbdcp.StepResult, derivative=None, contacts="directions",
                                 data=frozenset(), options=frozenset(), pose=lambda s, o: (None, "scenes only"),
                                 stepper=f"{__name__}.frictionless_stepper", algorithm=("unused", "x", ("x", "y")))
    registry.register(entry)
    try:
        assert entry.scenes and "frictionless_scenes" in _scene_methods()
        ball = Body3D(1.0, [0, 0, 0.5], velocity=[2.0, 0, 0], radius=0.5)
        with pytest.raises(ValueError, match="algorithm must be one of"):
            simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])]), 0.01, 0.1, method="frictionless_scenes",
                     algorithm="z", progress=False)
        tr = simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])]), 0.01, 0.1, method="frictionless_scenes",
                      progress=False)
        assert tr.success and np.allclose(tr.velocities[:, 0], 2.0)  # no friction: it slides on
    finally:
        registry.unregister("frictionless_scenes")
    assert [f.name for f in registry.formulations() if f.stops] == ["lcp"]  # a failed Lemke step is no motion
    for f in registry.formulations():  # the table's own steppers resolve
        assert f.scenes == (f.name in ("lcp", "fixed_point", "ccp")) and (not f.scenes or callable(f.stepper_function()))


def test_the_layers_read_the_table():
    # mbdcp.jax and mbdcp.torch see every formulation with a layer, as its entry says
    layered = {f.layer.name: f for f in registry.formulations() if f.layer is not None}
    assert set(_layers.PROBLEMS) == {"lcp", *layered} == {"lcp", "step", "ccp"}
    for name, f in layered.items():
        p = _layers.PROBLEMS[name]
        assert p.function is f.function and p.result is f.result and p.derivative is f.derivative_function()
        assert p.outputs == f.layer.outputs and set(p.outputs) <= set(f.result.__dataclass_fields__)
    assert _layers.PROBLEMS["step"].outputs == _layers.StepOutput._fields
    assert _layers.PROBLEMS["step"].native is _native_step.vjp and _layers.PROBLEMS["step"].batch is _layers.step_batch
    assert _layers.PROBLEMS["ccp"].native is None and _layers.PROBLEMS["ccp"].batch is None
    assert _layers.PROBLEMS["ccp"].outputs == _layers.CCPOutput._fields
    with pytest.raises(ValueError, match="a layer needs a derivative"):
        registry.register(registry.Formulation(**{**layered["step"].__dict__, "name": "x", "derivative": None}))


def test_every_formulation_posing_a_step_has_a_surface_target():
    written = surface_targets.solver_targets()
    names = {t.name for t in written + surface_targets.formulation_targets(written)}
    assert all(f"mbdcp.{f.function.__name__}" in names for f in registry.formulations() if f.pose is not None)


@pytest.mark.parametrize("method", ["lcp", "ccp"])
def test_a_failed_step_stops_the_run_where_the_entry_says_so(method):
    from mbdcp.mechanics import Body3D, Plane, Scene, simulate

    ball = Body3D(1.0, [0, 0, 0.5], velocity=[2.0, 0, -1.0], radius=0.5)
    tr = simulate(Scene([ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.3, delta=0.1), 0.01, 0.05, method=method,
                  max_iter=1, progress=False)
    assert (tr.first_failure.step, tr.first_failure.reason) == (1, "solver")
    assert tr.steps == (0 if registry.formulation(method).stops else 5)
