# %% [markdown]
# # A box on the floor: spatial bodies and quaternions
#
# Trinkle (notes, 2003), spatial part: a box with $m = 1$ and body-frame inertia
# $J_B = \mathrm{diag}(1, 2, 3)$ is dropped spinning onto the floor. Its configuration is
# $q = (x, e)$ with a unit quaternion $e$; its velocity $v = (\dot x, \omega)$ with $\omega$ in
# the world frame; $\dot q = G(q)v$ with
# $$B(e) = \tfrac12\begin{bmatrix} -e_1 & -e_2 & -e_3 \\ e_0 & e_3 & -e_2 \\ -e_3 & e_0 & e_1 \\ e_2 & -e_1 & e_0 \end{bmatrix}$$
# (for a unit quaternion $B^TB = I_3/4$), the world inertia $J = RJ_BR^T$ and the gyroscopic
# impulse $-h\,\omega\times J\omega$. Its four bottom corners are the contacts.

# %%
import matplotlib.pyplot as plt
import numpy as np

from mbdcp.mechanics import B_matrix, Body3D, Plane, Scene, simulate

e = np.array([np.cos(0.2), 0.6 * np.sin(0.2), 0.8 * np.sin(0.2), 0.0])
print("B(e)^T B(e) =\n", (B_matrix(e).T @ B_matrix(e)).round(12))

# %%
box = Body3D(1.0, [0.0, 0.0, 1.0], quaternion=e, omega=[0.5, 1.0, 3.0], half_extents=[0.5, 0.5, 0.5],
             inertia=[1.0, 2.0, 3.0])
scene = Scene([box], [Plane([0, 0, 0], [0, 0, 1])], mu=0.5, n_d=4, delta=0.05)
traj = simulate(scene, 0.01, 6.0, method="lcp")
print("all steps solved:", traj.success, "| final position", box.position.round(4))

# %%
fig, ax = plt.subplots(1, 3, figsize=(13, 3.6))
ax[0].plot(traj.times, traj.positions[:, 2])
ax[0].set_title("height of the centre")
ax[0].set_xlabel("t")
traj.plot_energy(ax[1])
ax[1].set_title("energy")
ax[2].plot(traj.times[1:], traj.contacts, label="active contacts")
ax[2].plot(traj.times, 1e12 * (np.linalg.norm(traj.positions[:, 3:7], axis=1) - 1), label=r"$10^{12}(\|e\| - 1)$")
ax[2].set_xlabel("t")
ax[2].legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# At rest the four corner impulses carry the weight: $\sum p_n = mgh$.

# %%
print("sum of the last step's p_n:", traj.impulses[-1].sum(), " m g h =", 9.81 * 0.01)
print("largest penetration over the run:", traj.max_penetration.max())

# %% [markdown]
# ## Which corners stick, slide or separate
#
# Every step's result gives each contact a state (`res.contact_state`, one of
# `mbdcp.ContactState.SEPARATING / STICKING / SLIDING`): separating when its normal impulse
# vanishes, sliding when it carries load with a nonzero sliding speed $\sigma$ (friction on the
# cone boundary), sticking otherwise. `simulate` keeps them per step; the timeline shows one
# row per active contact (its place in the step's contact list).

# %%
fig, ax = plt.subplots(figsize=(10, 2.6))
traj.plot_contact_states(ax)
ax.set_title("corner contacts of the box")
plt.tight_layout()
plt.show()
final = traj.contact_states[-1]
print("last step:", list(final))

# %% [markdown]
# ## Watching it
#
# `traj.animate()` draws the box projected on the $x$–$z$ plane (every 30th state here); with
# `arrows=True` each corner's normal impulse is a segment coloured by its state (blue sticking,
# red sliding). In Jupyter it plays inline; `anim.save("box.gif",
# writer=matplotlib.animation.PillowWriter(fps=10))` writes a GIF without ffmpeg.

# %%
traj.animate(every=30, arrows=True, figsize=(4.0, 3.0), dpi=50)
