# %% [markdown]
# # Boxes, tables and shelves: every shape pair in contact
#
# `mbdcp.mechanics` finds the contacts of round bodies (disks, spheres, particles) with each other
# and of every body with walls itself; every other pair — a box with a box, a sphere, a disk or a
# particle, and any body with a fixed obstacle of finite size (`Block`: a table, a step;
# `Segment`: a shelf in the plane) — comes from MuJoCo's collision functions (Todorov, Erez &
# Tassa 2012), which return for each pair up to eight points with their gap and normal. The step is
# the time-stepping LCP of Stewart & Trinkle (1996) in the notation of Trinkle (2003): contacts are
# rigid and every step marked SOLVED satisfies its complementarity problem. It needs
# `pip install "mbdcp[mujoco]"`.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp.mechanics import Block, Body2D, Body3D, Line, Plane, Scene, Segment, simulate

FLOOR = [Plane([0, 0, 0], [0, 0, 1])]

# %% [markdown]
# ## Five stacked boxes stay at rest
#
# Each box rests on the one below on four corner contacts (the corners of the overlap of the two
# faces). The floor carries the weight of all five: its four normal impulses sum to $5 m g h$ at
# every step, and no box moves.

# %%
boxes = [Body3D(1.0, [0, 0, 0.1 + 0.2 * k], half_extents=[0.1, 0.1, 0.1]) for k in range(5)]
stack = simulate(Scene(boxes, FLOOR, mu=0.5), h=0.01, T=2.0, progress=False)
print("success:", stack.success, "| contacts per step:", set(stack.contacts.tolist()))
print("largest drift of a position (m):", np.abs(stack.positions - stack.positions[0]).max())
print("floor's impulses / (5 m g h):", sum(stack.impulses[-1][:4]) / (5 * 9.81 * 0.01))

# %% [markdown]
# ## A ball rolls off a table
#
# The table is a `Block` (a fixed box); the ball rolls on it at 1 m/s, pivots about its edge, flies
# and lands on the floor. In flight its height falls as $-g t^2/2$; it never enters the table or
# the floor.

# %%
ball = Body3D(1.0, [-0.5, 0, 1.1], radius=0.1, velocity=[1.0, 0, 0], omega=[0, 10.0, 0])
table = Block([-1.0, 0, 0.5], [1.0, 1.0, 0.5])
roll = simulate(Scene([ball], FLOOR + [table], mu=0.5), h=0.005, T=1.2, progress=False)
print("success:", roll.success, "| deepest penetration:", roll.max_penetration.max())
fig, ax = plt.subplots(figsize=(6, 3))
ax.add_patch(plt.Rectangle((-2, 0), 2, 1, color="0.8"))
ax.plot(roll.positions[:, 0], roll.positions[:, 2], label="centre of the ball")
ax.set(xlabel="x (m)", ylabel="z (m)", aspect="equal", xlim=(-1, 1.2), ylim=(0, 1.3))
ax.legend()
plt.show()

# %% [markdown]
# ## Friction that faces the slip
#
# A friction polygon fixed in the world gives a box sliding between two of its directions the
# friction of an edge: smaller and turned, so the box drifts sideways. mbdcp turns each contact's
# polygon so that its first direction opposes the contact's slip in the motion without friction:
# a box launched in any direction slides straight and stops after $v_0^2 / (2 \mu g)$, as Coulomb's
# law says.

# %%
fig, ax = plt.subplots(figsize=(4, 4))
for degrees in range(0, 360, 30):
    u = np.array([np.cos(np.radians(degrees)), np.sin(np.radians(degrees)), 0.0])
    box = Body3D(1.0, [0, 0, 0.1], quaternion=[np.cos(0.2), 0, 0, np.sin(0.2)], velocity=2.0 * u,
                 half_extents=[0.1, 0.1, 0.1])
    tr = simulate(Scene([box], FLOOR, mu=0.4), h=0.01, T=0.6, progress=False)
    ax.plot(tr.positions[:, 0], tr.positions[:, 1], "o-", ms=2)
ax.add_patch(plt.Circle((0, 0), 2.0 ** 2 / (2 * 0.4 * 9.81), fill=False, ls="--", color="k"))
ax.set(xlabel="x (m)", ylabel="y (m)", aspect="equal", title="stopping distance v0²/(2μg), dashed")
plt.show()

# %% [markdown]
# ## In the plane: a tower of boxes, a shelf and a disk
#
# A `Body2D` with `half_extents` is a box of the plane. Here a disk slides off a shelf (a
# `Segment`) and knocks a tower of three boxes over.

# %%
tower = [Body2D(1.0, [1.5, 0.25 + 0.5 * k], half_extents=[0.1, 0.25]) for k in range(3)]
disk = Body2D(2.0, [-0.5, 1.6], radius=0.15, velocity=[3.0, 0.0])
shelf = Segment([-1.0, 1.45], [0.2, 1.45])
scene = Scene(tower + [disk], [Line([0, 0], [0, 1]), shelf], mu=0.4)
knock = simulate(scene, h=0.005, T=1.5, progress=False)
print("success:", knock.success, "| every step SOLVED:", all(s == mbdcp.Status.SOLVED for s in knock.statuses))
knock.animate(scene, every=6)
