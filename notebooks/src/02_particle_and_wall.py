# %% [markdown]
# # A particle and a wall: the time-stepping LCP by hand
#
# Trinkle (notes, 2003), pp. 7–12: a particle of mass $m = 1$ falls at $v = -4$ toward a
# wall 1 away, with $h = g = 1$. One step solves
# $$m(v^{l+1} - v^l) = -mgh + p_n,\qquad 0 \le p_n \perp \Psi_n/h + \partial_t\Psi_n + v^{l+1} \ge 0 .$$
# The term $\Psi_n/h$ lets the particle close the gap in one step but not cross it.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp.examples import particle_above_wall

# %% [markdown]
# ## Fixed wall: $p_n = 4, 2, 1, 1, \dots$ and $v = -1, 0, 0, \dots$

# %%
p_n, v = particle_above_wall(steps=6)
print("p_n:", p_n)
print("v:  ", v)
assert np.allclose(p_n, [4, 2, 1, 1, 1, 1]) and np.allclose(v, [-1, 0, 0, 0, 0, 0])

# %% [markdown]
# Step 1 by hand: without contact $v^{1} = -4 - 1 = -5$, but the constraint demands
# $1/1 + v^1 \ge 0$, so $p_n = 4$ and $v^1 = -1$ — the particle lands exactly on the wall.
# Step 2: gap 0, so $v^2 \ge 0$: $p_n = 2$ stops it. Afterwards $p_n = mgh = 1$ carries its weight.

# %% [markdown]
# ## Moving wall (up at 0.5): $p_n = 4.5, 2, 1, \dots$ and $v = -0.5, 0.5, 0.5, \dots$
#
# The gap changes by the wall's motion too: $\partial_t\Psi_n = -0.5$.

# %%
p_n_m, v_m = particle_above_wall(steps=6, wall_speed=0.5)
print("p_n:", p_n_m)
print("v:  ", v_m)
assert np.allclose(p_n_m, [4.5, 2, 1, 1, 1, 1]) and np.allclose(v_m, [-0.5, 0.5, 0.5, 0.5, 0.5, 0.5])

# %%
steps = np.arange(7)
x_fixed = np.r_[1.0, 1.0 + np.cumsum(v)]
x_moving = np.r_[1.0, 1.0 + np.cumsum(v_m)]
wall_moving = 0.5 * steps
fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
ax[0].plot(steps, x_fixed, "o-", label="particle, fixed wall")
ax[0].plot(steps, x_moving, "s-", label="particle, moving wall")
ax[0].plot(steps, np.zeros(7), "k--", label="fixed wall")
ax[0].plot(steps, wall_moving, "k:", label="moving wall")
ax[0].set_xlabel("step")
ax[0].set_ylabel("height")
ax[0].legend()
ax[1].bar(steps[1:] - 0.2, p_n, width=0.4, label="fixed wall")
ax[1].bar(steps[1:] + 0.2, p_n_m, width=0.4, label="moving wall")
ax[1].set_xlabel("step")
ax[1].set_ylabel("$p_n$")
ax[1].legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# The same through the general API, with the reduced LCP it solved:

# %%
res = mbdcp.step(np.eye(1), np.eye(1), np.zeros((1, 0)), np.zeros((0, 1)), [0.0], [-4.0], 1.0,
                 p_ext=[-1.0], psi_n=[1.0], return_lcp=True)
print("F =", res.lcp.F, " f =", res.lcp.f, " z =", res.lcp.z, " w =", res.lcp.w)

# %% [markdown]
# ## Explore
#
# `mbdcp.widgets.particle_and_wall` re-solves and redraws as you move the sliders
# (the initial velocity, the gap, the wall's speed and h).
# Without a widget frontend (and in the saved notebook) it shows a static figure for the
# default values instead.

# %%
mbdcp.widgets.particle_and_wall()
