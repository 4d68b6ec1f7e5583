"""mbdcp.mujoco: MuJoCo models (MJCF, URDF) stepped by mbdcp's solvers, on the models of
tests/models (written for these tests; nothing is downloaded). MuJoCo is optional: without it the
module is skipped."""
import copy
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import mbdcp
import mbdcp.mujoco as mm
from mbdcp.mechanics import Body3D, Plane, Scene, simulate
from mbdcp.mechanics.assembly import friction_directions

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
G = 9.81


def path(name):
    return os.path.join(MODELS, name)


def model_with(name, **fields):
    """A Model of tests/models/<name> after setting MjModel fields (name: array or (index, value))."""
    mj = mujoco.MjModel.from_xml_path(path(name))
    for field, value in fields.items():
        getattr(mj, field)[...] = value
    return mm.load(mj)


# ---- the module is optional, and so is its import

def test_importing_mbdcp_or_mbdcp_mujoco_does_not_import_mujoco():
    code = "import sys, mbdcp, mbdcp.mujoco; assert 'mujoco' not in sys.modules, 'mujoco imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(MODELS))


def test_without_mujoco_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco now raises ImportError
    with pytest.raises(ImportError, match=r"pip install mbdcp\[mujoco\]"):
        mm.load(path("sphere.xml"))


# ---- one step's arrays

def test_a_box_resting_on_the_floor_is_held_with_positive_normal_impulses():
    model = mm.load("""<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
        <body pos="0 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1" mass="2"/></body></worldbody></mujoco>""")
    p = model.problem()
    assert set(p) == {"M", "Wn", "D", "E", "U", "v", "h", "p_ext", "psi_n", "Wb", "theta", "Dj", "Ej", "beta_max"}
    assert p["Wn"].shape == (6, 4) and p["D"].shape == (6, 16) and p["Wb"] is None and p["Dj"] is None
    np.testing.assert_array_equal(p["Wn"][2], 1.0)  # the floor pushes the box up: n from the floor (geom1) to it
    res = mbdcp.step(**p)
    # p_n > 0 where the box is held (four corners on a plane: which carry it is not unique)
    assert res.success and np.all(res.p_n >= 0) and np.count_nonzero(res.p_n) >= 2
    np.testing.assert_allclose(res.p_n.sum(), 2 * G * p["h"], rtol=1e-12)
    assert np.all(res.v_next == 0.0)
    tr = mm.simulate(model, 1.0, progress=False)
    assert tr.success and np.all(tr.positions == tr.positions[0])


def test_contact_columns_are_the_bodies_jacobians_at_the_contact_point():
    # a tilted, spinning box touching another box and the floor: MuJoCo's mj_jac at each contact point
    model = mm.load("""<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
        <body pos="0 0 0.1"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
        <body pos="0.03 0.01 0.302" euler="4 3 10"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
        </worldbody></mujoco>""")
    qvel = np.random.default_rng(3).normal(size=12)
    p = model.problem(qvel=qvel, n_d=6)
    a = model._assembler
    c, m, d = a.arrays(p["h"], 6).contacts, a.m, a.d
    assert len(c) >= 5 and {tuple(g) for g in c.geom} == {(0, 1), (1, 2)}
    free = qvel + np.linalg.solve(p["M"], p["p_ext"])  # the motion without friction
    rels = []
    for i in range(len(c)):
        b1, b2 = m.geom_bodyid[c.geom[i]]
        J = []
        for b in (b1, b2):
            jac = np.zeros((3, m.nv))
            mujoco.mj_jac(m, d, jac, None, c.point[i], b)
            J.append(jac)
        rels.append(J[1] - J[0])
    slip = np.array([rel @ free for rel in rels])  # the directions face the slip of geom 2 against geom 1
    dirs = friction_directions(c.normal, 6, slip=slip, slip_scale=np.abs(slip).sum(axis=1))
    for i, rel in enumerate(rels):
        np.testing.assert_allclose(p["Wn"][:, i], c.normal[i] @ rel, atol=1e-14)
        np.testing.assert_allclose(p["D"][:, 6 * i:6 * i + 6], rel.T @ dirs[i], atol=1e-14)
    assert np.all(p["E"].sum(axis=0) == 6) and np.all(p["U"] == 1.0)


# ---- the scenes

@pytest.mark.parametrize("mu", [0.3, 0.7])
def test_a_box_on_a_30_degree_slope_slides_exactly_or_sticks(mu):
    model = model_with("slope_box.xml", geom_friction=np.array([mu, 0.005, 0.0001]))
    tr = mm.simulate(model, 0.5, progress=False)
    assert tr.success and np.all(tr.contacts == 4)
    speed = np.linalg.norm(tr.velocities[:, :3], axis=1)
    if mu == 0.3:  # a = g (sin 30 - mu cos 30)
        a = G * (0.5 - mu * np.cos(np.pi / 6))
        assert abs(a - 2.356287) < 1e-6
        np.testing.assert_allclose(np.diff(speed) / model.timestep, a, rtol=0, atol=1e-6)
        np.testing.assert_allclose(tr.velocities[:, 3:], 0.0, atol=1e-12)  # no tipping
    else:  # tan 30 = 0.577 < 0.7: it sticks
        assert np.all(tr.velocities == 0.0) and np.all(tr.positions == tr.positions[0])


def test_a_stack_of_five_boxes_stays_at_rest_for_ten_seconds():
    model = mm.load(path("box_stack.xml"))
    tr = mm.simulate(model, 10.0, progress=False)  # 1000 steps
    assert tr.success and all(s == mbdcp.Status.SOLVED for s in tr.statuses)
    assert np.all(tr.contacts == 20)
    assert np.abs(tr.positions - tr.positions[0]).max() <= 1e-9
    weight = 5 * G * model.timestep
    np.testing.assert_allclose([p[:4].sum() for p in tr.impulses], weight, rtol=1e-12)  # the floor carries all


def test_trinkles_sphere_slides_then_rolls_at_five_sevenths():
    model = mm.load(path("sphere.xml"))
    model.mj_data.qvel[0] = 2.0
    tr = mm.simulate(model, 1.0, progress=False)
    assert tr.success
    t_star = 2 * 2.0 / (7 * 0.2 * G)  # Trinkle (2003), section 4
    rolling = tr.times > t_star + model.timestep
    np.testing.assert_allclose(tr.velocities[rolling, 0], 5 / 7 * 2.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tr.velocities[rolling, 4], 5 / 7 * 2.0, rtol=0, atol=1e-12)  # omega_y r = v_x
    sliding = tr.times < t_star - model.timestep
    np.testing.assert_allclose(tr.velocities[sliding, 0], 2.0 - 0.2 * G * tr.times[sliding], atol=1e-12)
    assert tr.max_penetration.max() == 0.0 and np.all(tr.positions[:, 2] == 1.0)


def test_a_double_pendulum_never_passes_its_joint_limit():
    model = mm.load(path("pendulum.xml"))
    tr = mm.simulate(model, 2.0, progress=False)
    assert tr.success
    limit = np.deg2rad(45.0)
    elbow = tr.positions[:, 1]
    assert np.abs(elbow).max() <= limit + 1e-12
    assert np.sum(np.abs(elbow) > limit - 1e-9) > 5  # it reaches the limit and is held there
    problem = model.problem(qpos=[0.0, limit - 0.01], qvel=[0.0, 1.0])
    assert problem["Wn"].shape == (2, 1) and problem["U"][0] == 0.0  # the limit: a frictionless contact
    np.testing.assert_allclose(problem["psi_n"], 0.01)
    np.testing.assert_array_equal(problem["Wn"][:, 0], [0.0, -1.0])  # the gap 45 deg - q shrinks as q grows


def test_a_ball_rolls_off_the_table_edge_and_lands_on_the_floor():
    model = mm.load(path("table.xml"))
    model.mj_data.qvel[[0, 4]] = [1.0, 10.0]  # rolling at 1 m/s (r = 0.1)
    tr = mm.simulate(model, 1.2, progress=False)
    assert tr.success and all(s == mbdcp.Status.SOLVED for s in tr.statuses)
    x, z = tr.positions[:, 0], tr.positions[:, 2]
    on_table = x < -0.1
    np.testing.assert_allclose(z[on_table], 1.1, atol=1e-12)
    np.testing.assert_allclose(tr.velocities[on_table, 0], 1.0, atol=1e-12)  # rolls without slipping
    falling = (x > 0.0) & (z > 0.2)
    assert falling.sum() > 20 and np.all(np.diff(z[falling]) <= 1e-12)  # past the edge it falls
    assert abs(z[-1] - 0.1) < 1e-3 and x[-1] > 0.3  # and lands on the floor beyond the table
    assert tr.max_penetration.max() < model.penetration_tolerance


def test_a_urdf_arm_falls_as_mujoco_moves_it_without_contacts():
    model = mm.load(path("arm.urdf"))
    assert model.nv == 3 and model.mj_model.ngeom == 0
    tr = mm.simulate(model, 0.5, progress=False)
    ref = mm.run_mujoco(model, 0.5)
    assert tr.success and np.all(tr.contacts == 0)
    assert np.abs(tr.positions - ref.positions).max() < 1e-6
    assert np.abs(tr.velocities - ref.velocities).max() < 1e-6
    assert np.ptp(tr.positions[:, 0]) > 0.5  # it did swing


def test_a_ragdoll_lands_with_every_step_solved_and_no_penetration():
    # 20 bodies, 16 hinges and 4 balls with limits, friction loss at the knees; 0.4 s (200 steps)
    # with delta = 1 cm, more than the ragdoll falls in a step (about 0.8 m/s x 2 ms)
    model = mm.load(path("ragdoll.xml"))
    assert model.mj_model.nbody - 1 == 20
    tr = mm.simulate(model, 0.4, h=0.002, delta=0.01, progress=False)
    assert tr.success and all(s == mbdcp.Status.SOLVED for s in tr.statuses)
    assert tr.contacts.max() > 10 and tr.max_penetration.max() <= 1e-6


def test_mujoco_approaches_mbdcp_as_its_contact_time_constant_shrinks():
    # the sliding box; MuJoCo's solref[0] must be at least 2 h
    h, T = 0.0005, 0.3
    mj = mujoco.MjModel.from_xml_path(path("slope_box.xml"))
    mj.opt.timestep = h
    exact = mm.simulate(mm.load(mj), T, progress=False)
    downhill = np.array([-np.cos(np.pi / 6), 0.0, np.sin(np.pi / 6)])
    errors = []
    for timeconst in (0.04, 0.01, 0.0025):
        soft = copy.deepcopy(mj)
        soft.geom_solref[:, 0] = timeconst
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mm.NotMappedWarning)  # its solref is not mbdcp's
            ref = mm.run_mujoco(mm.load(soft), T)
        errors.append(np.abs((ref.positions[:, :3] - exact.positions[:, :3]) @ downhill).max())
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.5 * errors[0]


# ---- the rest of what is mapped

CONNECT = """<mujoco><option timestep="0.005"/><worldbody>
  <body name="rod" pos="0.25 0 1"><freejoint/><geom type="capsule" fromto="-0.25 0 0 0.25 0 0" size="0.02" mass="1"
    contype="0" conaffinity="0"/></body></worldbody>
  <equality><connect body1="rod" body2="world" anchor="-0.25 0 0"/></equality></mujoco>"""
HINGED = """<mujoco><option timestep="0.005"/><worldbody>
  <body name="rod" pos="0.25 0 1"><joint type="ball" pos="-0.25 0 0"/><geom type="capsule" fromto="-0.25 0 0 0.25 0 0"
    size="0.02" mass="1" contype="0" conaffinity="0"/></body></worldbody></mujoco>"""


def test_a_connect_constraint_holds_the_rod_as_a_ball_joint_does():
    connected, hinged = mm.load(CONNECT), mm.load(HINGED)
    p = connected.problem()
    assert p["Wb"].shape == (6, 3) and np.allclose(p["theta"], 0.0)
    a = mm.simulate(connected, 0.5, progress=False)
    b = mm.simulate(hinged, 0.5, progress=False)
    assert a.success and b.success
    tip = []
    for q in a.positions:  # the anchor, body point (-0.25, 0, 0), stays at the origin of the world
        R = np.empty(9)
        mujoco.mju_quat2Mat(R, q[3:7])
        tip.append(q[:3] + R.reshape(3, 3) @ [-0.25, 0.0, 0.0])
    assert np.abs(np.array(tip) - [0.0, 0.0, 1.0]).max() < 1e-3
    np.testing.assert_allclose(a.positions[:, 3:7], b.positions, atol=0.02)  # the same swing


def test_a_weld_keeps_two_boxes_together():
    model = mm.load("""<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
      <body name="a" pos="0 0 0.3"><freejoint/><geom type="box" size=".1 .1 .1"/></body>
      <body name="b" pos="0.2 0 0.3"><freejoint/><geom type="box" size=".1 .1 .1" contype="0" conaffinity="0"/></body>
      </worldbody><equality><weld body1="a" body2="b"/></equality></mujoco>""")
    model.mj_data.qvel[:6] = [0.5, 0.0, 0.0, 0.0, 0.0, 2.0]
    tr = mm.simulate(model, 0.5, progress=False)
    assert tr.success
    offset = tr.positions[:, 7:10] - tr.positions[:, 0:3]
    np.testing.assert_allclose(np.linalg.norm(offset, axis=1), 0.2, atol=2e-3)
    np.testing.assert_allclose(tr.positions[:, 3:7], tr.positions[:, 10:14], atol=1e-2)


def test_joint_friction_loss_holds_a_joint_until_its_torque_exceeds_it():
    xml = """<mujoco><option timestep="0.01"/><worldbody><body pos="0 0 1">
      <joint type="hinge" axis="0 1 0" frictionloss="{f}"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02"
      mass="1" contype="0" conaffinity="0"/></body></worldbody></mujoco>"""
    torque = 1.0 * G * 0.25  # the rod's weight about the hinge, horizontal
    held = mm.load(xml.format(f=1.05 * torque))
    p = held.problem()
    np.testing.assert_array_equal(p["Dj"], [[1.0, -1.0]])
    np.testing.assert_array_equal(p["Ej"], [[1.0], [1.0]])
    np.testing.assert_allclose(p["beta_max"], 1.05 * torque * 0.01)
    assert np.all(mm.simulate(held, 0.5, progress=False).positions == 0.0)
    assert np.abs(mm.simulate(mm.load(xml.format(f=0.95 * torque)), 0.5, progress=False).positions).max() > 0.01
    with pytest.raises(ValueError, match="joint friction"):
        mm.simulate(held, 0.1, method="ccp", progress=False)


def test_a_tendon_limit_is_a_rope():
    # a weight on a 0.5 m spatial tendon from a fixed site: it falls until the tendon is taut, then swings
    model = mm.load("""<mujoco><option timestep="0.005"/><worldbody><site name="top" pos="0 0 2"/>
      <body pos="0.3 0 1.8"><freejoint/><geom size="0.05" mass="1" contype="0" conaffinity="0"/><site name="hook"/>
      </body></worldbody><tendon><spatial limited="true" range="0 0.5"><site site="top"/><site site="hook"/>
      </spatial></tendon></mujoco>""")
    tr = mm.simulate(model, 1.0, progress=False)
    length = np.linalg.norm(tr.positions[:, :3] - [0.0, 0.0, 2.0], axis=1)
    assert tr.success and length[0] < 0.37
    assert np.abs(length[100:] - 0.5).max() < 2e-3  # taut (the length is linearised over a step: h^2 v^2 / L)
    p = model.problem(qpos=tr.positions[100], qvel=tr.velocities[100])
    assert p["Wn"].shape == (6, 1) and p["U"][0] == 0.0 and abs(p["psi_n"][0]) < 2e-3


def test_actuators_act_through_ctrl_constant_or_callable():
    xml = """<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody><body>
      <joint name="x" type="slide" axis="1 0 0"/><geom size="0.1" mass="2" contype="0" conaffinity="0"/></body>
      </worldbody><actuator><motor joint="x" gear="1"/></actuator></mujoco>"""
    model = mm.load(xml)
    tr = mm.simulate(model, 0.5, ctrl=[4.0], progress=False)
    np.testing.assert_allclose(np.diff(tr.velocities[:, 0]) / 0.01, 2.0, atol=1e-12)  # a = F / m
    seen = []
    tr = mm.simulate(model, 0.1, ctrl=lambda t, q, v: seen.append(t) or [4.0 if t < 0.05 else 0.0], progress=False)
    np.testing.assert_allclose(tr.velocities[-1, 0], 0.1, atol=1e-12)  # five steps pushed
    assert seen[:3] == pytest.approx([0.0, 0.01, 0.02])
    with pytest.raises(ValueError, match=r"ctrl\(t, qpos, qvel\)"):
        mm.simulate(model, 0.1, ctrl=lambda t, q, v: [1.0, 2.0], progress=False)


def test_one_scene_gives_one_trajectory_either_way():
    # a box released sliding on the floor and a sphere rolling, as mechanics scenes and as MJCF
    box = Body3D(1.0, [0, 0, 0.5], velocity=[1.0, 0.5, 0.0], half_extents=[0.5, 0.5, 0.5], inertia=[1 / 6] * 3)
    ball = Body3D(1.0, [3.0, 0, 1.0], velocity=[2.0, 0, 0], radius=1.0)
    traj = simulate(Scene([box, ball], [Plane([0, 0, 0], [0, 0, 1])], mu=0.3), h=0.01, T=0.5, progress=False)
    model = mm.load("""<mujoco><option timestep="0.01"/><worldbody><geom type="plane" size="9 9 .1" friction="0.3"/>
      <body pos="0 0 0.5"><freejoint/><geom type="box" size=".5 .5 .5" mass="1" friction="0.3"/></body>
      <body pos="3 0 1"><freejoint/><geom type="sphere" size="1" mass="1" friction="0.3"/></body>
      </worldbody></mujoco>""")
    model.mj_data.qvel[[0, 1, 6]] = [1.0, 0.5, 2.0]
    assert model.delta == traj.penetration_tolerance == 0.05  # the same rules
    tr = mm.simulate(model, 0.5, progress=False)
    np.testing.assert_allclose(tr.velocities, traj.velocities, atol=1e-12)
    np.testing.assert_allclose(tr.positions[:, [0, 1, 2, 7, 8, 9]], traj.positions[:, [0, 1, 2, 7, 8, 9]], atol=1e-12)


def test_every_method_steps_a_model_and_warm_starts_change_nothing():
    model = mm.load(path("sphere.xml"))
    model.mj_data.qvel[0] = 2.0
    cold = mm.simulate(model, 0.5, warm_start=False, progress=False)
    warm = mm.simulate(model, 0.5, progress=False)
    np.testing.assert_allclose(cold.velocities, warm.velocities, rtol=0, atol=1e-14)
    for method in ("fixed_point", "ccp"):
        tr = mm.simulate(model, 0.5, method=method, progress=False)
        assert tr.success
        np.testing.assert_allclose(tr.velocities[-1, [0, 4]], 5 / 7 * 2.0, atol=1e-3)
    frictionless = mm.simulate(model, 0.5, n_d=0, progress=False)  # no friction directions: it slides on
    assert frictionless.success and np.all(frictionless.velocities[:, 0] == 2.0)


# ---- what is not mapped, checks, results

def test_what_is_not_mapped_is_warned_once_naming_it():
    xml = """<mujoco><worldbody><geom type="plane" size="5 5 .1" condim="6" solref="0.01 1"/>
      <body pos="0 0 1"><freejoint/><geom size="0.1"/></body></worldbody></mujoco>"""
    with pytest.warns(mm.NotMappedWarning, match=r"torsional and rolling friction.*geom_solref") as record:
        model = mm.load(xml)
    assert len(record) == 1 and len(model.not_mapped) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mm.load(path("sphere.xml"))  # nothing to warn about
        mm.simulate(model, 0.02, progress=False)  # warned once per Model, at load


def test_bad_inputs_are_refused_naming_the_argument():
    model = mm.load(path("sphere.xml"))
    with pytest.raises(TypeError, match="path_or_xml"):
        mm.load(42)
    with pytest.raises(ValueError, match="path_or_xml.*no such file"):
        mm.load(path("missing.xml"))
    with pytest.raises(ValueError, match="path_or_xml: MuJoCo could not load"):
        mm.load("<mujoco><worldbody><geom type='nonsense'/></worldbody></mujoco>")
    with pytest.raises(TypeError, match="model must be a mbdcp.mujoco.Model"):
        mm.simulate(model.mj_model, 1.0)
    cases = [(dict(T=-1.0), "T must be nonnegative"), (dict(T=0.001), "T must be at least h"),
             (dict(T=1.0, method="newton"), "method must be one of"), (dict(T=1.0, n_d=3), "n_d must be"),
             (dict(T=1.0, qpos=[0, 0, 1]), r"qpos must have shape \(nq,\) = \(7,\)"),
             (dict(T=1.0, qvel=np.ones(7)), "qvel must have shape"), (dict(T=1.0, h=0.0), "h must be positive"),
             (dict(T=1.0, delta=-1.0), "delta must be nonnegative"), (dict(T=1.0, algorithm=2), "algorithm is for")]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            mm.simulate(model, progress=False, **kwargs)
    with pytest.raises(ValueError, match="ctrl must have shape"):
        model.problem(ctrl=[1.0])


def test_the_trajectory_plots_and_says_it_cannot_animate(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model = mm.load(path("table.xml"))
    model.mj_data.qvel[0] = 1.0
    tr = mm.simulate(model, 0.1, progress=False)
    assert isinstance(tr, mbdcp.mechanics.Trajectory) and isinstance(tr, mm.MujocoTrajectory)
    assert tr.positions.shape == (21, 7) and tr.velocities.shape == (21, 6) and len(tr.statuses) == 20
    assert len(tr.contact_states) == 20 and tr.contact_states[-1][0] in tuple(mbdcp.ContactState)
    for plot in (tr.plot_energy, tr.plot_penetration, tr.plot_contact_states):
        assert plot() is not None
    with pytest.raises(NotImplementedError, match="mujoco.Renderer"):
        tr.animate()
    plt.close("all")


def test_compare_puts_mbdcp_beside_mujoco():
    pytest.importorskip("pandas")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model = mm.load(path("sphere.xml"))
    model.mj_data.qvel[0] = 2.0
    table = mm.compare(model, 0.3, methods=("lcp", "ccp"))
    assert list(table.index) == ["mujoco", "lcp", "ccp"]
    for column in ("engine", "seconds_per_step", "time_ratio", "solver_share", "max_penetration", "energy_change",
                   "max_qpos_difference", "success", "trajectory"):
        assert column in table.columns
    assert table.loc["mujoco", "time_ratio"] == 1.0 and table.loc["lcp", "max_penetration"] == 0.0
    assert table.loc["lcp", "max_qpos_difference"] < 0.05  # MuJoCo's soft sphere follows closely
    for quantity in ("energy", "penetration", "qvel"):
        assert mm.plot_comparison(table, quantity, coordinate=0) is not None
    with pytest.raises(ValueError, match="quantity"):
        mm.plot_comparison(table, "speed")
    plt.close("all")


def test_a_capsule_sliding_to_rest_beside_a_box_has_every_step_solved():
    """A capsule dropped 7 cm while moving along its axis at 1 m/s lands (mu = 1, MuJoCo's larger of
    the pair's coefficients: the landing impulse, mu m sqrt(2 g 0.07) > m 1 m/s, stops it at once)
    while a box dropped 5 cm rests beside it. At rest, its friction rows hold the 1e-33 that rounding
    leaves in its velocity, signs that decide the degenerate LCP's ties: every step must still be
    SOLVED, the capsule where it landed and the box where it fell."""
    model = mm.load("""<mujoco><option timestep="0.005"/>
      <asset><mesh name="cube" vertex="-.1 -.1 -.1 .1 -.1 -.1 -.1 .1 -.1 .1 .1 -.1 -.1 -.1 .1 .1 -.1 .1 -.1 .1 .1 .1 .1 .1"/></asset>
      <worldbody><geom type="plane" size="5 5 .1" friction="0.6"/>
        <body pos="0 0 0.12"><freejoint/><geom type="capsule" size="0.05 0.1" euler="0 90 0" condim="6"/></body>
        <body pos="1.5 0 0.15"><freejoint/><geom type="mesh" mesh="cube"/></body>
      </worldbody></mujoco>""")
    qvel = np.zeros(model.nv)
    qvel[0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # condim 6: torsional and rolling friction are not mapped (warned)
        tr = mm.simulate(model, 0.5, qvel=qvel, progress=False)
    assert tr.success and all(s == mbdcp.Status.SOLVED for s in tr.statuses) and len(tr.statuses) == 100
    flight, h = 1.0 * np.sqrt(2 * 0.07 / 9.81), 0.005
    assert abs(tr.positions[-1, 0] - flight) <= 2 * h * 1.0  # landing found within two steps' travel
    np.testing.assert_allclose(tr.positions[-1, 7:10], [1.5, 0.0, 0.1], atol=1e-6)
