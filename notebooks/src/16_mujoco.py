# %% [markdown]
# # A MuJoCo model with exact contacts
#
# `mbdcp.mujoco` steps a MuJoCo model (MJCF or URDF) with mbdcp's solvers. MuJoCo (Todorov, Erez &
# Tassa 2012) reads the model and computes, at each state, the mass matrix $M$, the forces, the
# contacts and the rows of the joints' limits and equality constraints; mbdcp solves the step as the
# time-stepping LCP of Trinkle (2003) — rigid contacts, Coulomb friction on a polygon of $n_d$
# directions — where MuJoCo's own step uses soft, convex contacts (Todorov 2014). It needs
# `pip install "mbdcp[mujoco]"`.
#
# The model here, written as an MJCF string: a box on a plane inclined by $\alpha = 30°$ (a MuJoCo
# plane is infinite: this one passes 1 m above the origin and runs down under the floor towards
# $+x$), a stack of three boxes and a ball, all with $\mu = 0.3$.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp
import mbdcp.mujoco as mm

MJCF = """
<mujoco model="three scenes">
  <option timestep="0.005"/>
  <default><geom friction="0.3"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="10 10 0.1"/>
    <geom name="slope" type="plane" size="2 1 0.1" pos="-3 0 1" euler="0 30 0"/>
    <body name="slider" pos="-2.95 0 1.0866025403784439" euler="0 30 0">
      <freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/>
    </body>
    <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body pos="0 0 0.5"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body name="ball" pos="2 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
</mujoco>
"""
model = mm.load(MJCF)
model.mj_data.qvel[-6] = 1.0  # the ball slides at 1 m/s along x
print(model)
print("not mapped:", model.not_mapped or "nothing")

# %% [markdown]
# ## One step by hand
#
# `model.problem()` gives the arrays of one step at a state (by default `mj_data`'s) under the names
# of `mbdcp.step`: the contacts within the activation distance $\delta$ (here 10 % of the smallest
# box, 1 cm) as the columns of $W_n$ with their gaps $\Psi_n$, four friction directions each in $D$,
# $U = \mathrm{diag}(\mu)$, and $p_{ext} = h(\tau_{passive} - c(q, v))$, gravity included.

# %%
p = model.problem()
print({name: (None if a is None else np.shape(a)) for name, a in p.items()})
res = mbdcp.step(**p)
print(res.status.name, "| normal impulses:", res.p_n.round(5))
print("the floor and the boxes carry the stack's weight 3 m g h =", 3 * 9.81 * model.timestep)

# %% [markdown]
# ## A run
#
# `simulate` steps the model from `mj_data`'s state and returns a trajectory: `qpos` and `qvel` per
# time, energies, penetration and contact states. The slider's speed grows at exactly
# $g(\sin\alpha - \mu\cos\alpha)$, the stack stays where it is to the last bit, and the ball slides
# until it rolls at $\tfrac57 v_0$.

# %%
traj = mm.simulate(model, 1.0, progress=False)
print("success:", traj.success, "| deepest penetration:", traj.max_penetration.max())
a = 9.81 * (np.sin(np.pi / 6) - 0.3 * np.cos(np.pi / 6))
slider = np.linalg.norm(traj.velocities[:, 0:3], axis=1)
print("slider's acceleration:", (np.diff(slider) / model.timestep).round(9)[[0, -1]], " exact:", round(a, 9))
print("stack's largest displacement:", np.abs(traj.positions[:, 7:28] - traj.positions[0, 7:28]).max())
print("ball's final speed:", traj.velocities[-1, 24], " 5/7 v0 =", 5 / 7)

fig, ax = plt.subplots(1, 3, figsize=(13, 3.4))
ax[0].plot(traj.times, slider, label="slider (mbdcp)")
ax[0].plot(traj.times, a * traj.times, "k:", label=r"$g(\sin\alpha - \mu\cos\alpha)\,t$")
ax[0].plot(traj.times, traj.velocities[:, 24], label="ball $v_x$")
ax[0].set_xlabel("t [s]")
ax[0].set_ylabel("speed [m/s]")
ax[0].legend()
traj.plot_energy(ax[1])
traj.plot_contact_states(ax[2])
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Beside MuJoCo's own step
#
# `compare` runs MuJoCo's `mj_step` on the model as it is (soft contacts with time constant
# `solref[0]` = 0.02 s, pyramidal cones) and mbdcp's methods from the same state, as a table (pandas).
# MuJoCo's bodies sink into each other and into the floor (here by up to 1.7 mm); mbdcp's do not.
# The largest difference of the positions is the slider's orientation (a quaternion component): on
# its soft contacts MuJoCo's box rocks as it slides.

# %%
table = mm.compare(model, 1.0, methods=("lcp", "ccp"))
print(table.drop(columns="trajectory").to_string(float_format=lambda x: f"{x:.3g}"))

fig, ax = plt.subplots(1, 2, figsize=(11, 3.4))
mm.plot_comparison(table, "penetration", ax=ax[0])
mm.plot_comparison(table, "qpos", coordinate=23, ax=ax[1])  # the stack's top box: its height
ax[1].set_ylabel("top box height [m]")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## MuJoCo's contacts stiffen towards mbdcp's
#
# MuJoCo's contact is a spring-damper of time constant `solref[0]`, at least two time steps. With the
# slider alone on its slope and $h$ = 0.5 ms, MuJoCo's slide approaches mbdcp's exact one as that
# constant shrinks: the difference is made at the start, while the soft contact takes the box's
# weight and the box rocks on it, and shrinks with the spring's time constant.

# %%
import copy
import warnings

SLOPE = """<mujoco><option timestep="0.0005"/><worldbody>
  <geom type="plane" size="2 1 0.1" euler="0 30 0" friction="0.3"/>
  <body pos="0.05 0 0.08660254037844387" euler="0 30 0"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"
    friction="0.3"/></body></worldbody></mujoco>"""
slope = mm.load(SLOPE)
downhill = np.array([np.cos(np.pi / 6), 0.0, -np.sin(np.pi / 6)])
exact = mm.simulate(slope, 0.3, progress=False)
fig, ax = plt.subplots(figsize=(6, 3.4))
for tc in [0.08, 0.02, 0.005, 0.0025]:
    soft = copy.deepcopy(slope.mj_model)
    soft.geom_solref[:, 0] = tc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mm.NotMappedWarning)  # solref is MuJoCo's, not mbdcp's
        ref = mm.run_mujoco(mm.load(soft), 0.3)
    gap = (ref.positions[:, 0:3] - exact.positions[:, 0:3]) @ downhill
    ax.plot(ref.times, 1e3 * gap, label=f"solref[0] = {tc} s")
    print(f"solref[0] = {tc:6}: largest distance from mbdcp's slide along the slope {np.abs(gap).max():.2e} m, "
          f"deepest penetration {ref.max_penetration.max():.1e} m")
ax.set_xlabel("t [s]")
ax.set_ylabel("MuJoCo - mbdcp, downhill [mm]")
ax.legend()
plt.show()
