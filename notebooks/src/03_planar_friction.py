# %% [markdown]
# # Planar friction: the eight sign cases
#
# Trinkle (notes, 2003), pp. 14–17, model planar Coulomb friction with two directions
# $D = [\hat t, -\hat t]$, $E = [1, 1]^T$ and a sliding-speed multiplier $\sigma$:
# $$0 \le \beta_1 \perp \hat t^Tv + \sigma \ge 0,\quad 0 \le \beta_2 \perp -\hat t^Tv + \sigma \ge 0,\quad
#   0 \le \sigma \perp \mu p_n - \beta_1 - \beta_2 \ge 0 .$$
# The signs of $(\beta_1, \beta_2, \sigma)$ give eight cases; one is inconsistent.
#
# **Which way is $\hat t$?** Here $\hat t = +x$. The notes write the particle's velocity as
# $(\dot x, \dot y) = (-v_t, v_n)$ (p. 13), i.e. their $\hat t$ points along $-x$. The case
# numbers are those of the notes (they follow the sign pattern), but the directions are mirrored:
# the notes' case 3, "right sliding" ($\beta_1, \sigma > 0$: moving toward $+x$, friction along
# their $\hat t = -x$), is a block sliding toward $-x$ below, and their case 5, "left sliding", one
# sliding toward $+x$.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp.testing import basic_solutions

G, h, mu = 9.81, 0.1, 0.5

def block(v, push=0.0, lift=0.0):
    M, Wn = np.eye(2), np.array([[0.0], [1.0]])
    D, E = np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1))
    return mbdcp.step(M, Wn, D, E, [mu], np.asarray(v, float), h, p_ext=[push, -G * h + lift], psi_n=[0.0],
                      return_lcp=True)

def case(res):
    pattern = tuple(int(x > 1e-10) for x in (res.beta[0], res.beta[1], res.sigma[0]))
    return 1 + [(1, 1, 1), (1, 1, 0), (1, 0, 1), (1, 0, 0), (0, 1, 1), (0, 1, 0), (0, 0, 1), (0, 0, 0)].index(pattern)

# %% [markdown]
# ## Each consistent case from a suitable input

# %%
inputs = {
    "slides toward -x": ((-2.0, 0.0), 0.0, 0.0),
    "sticks, pushed toward -x": ((0.0, 0.0), -0.1, 0.0),
    "slides toward +x": ((2.0, 0.0), 0.0, 0.0),
    "sticks, pushed toward +x": ((0.0, 0.0), 0.1, 0.0),
    "lifted off while sliding": ((2.0, 0.0), 0.0, 2.0),
    "rests, no tangential load": ((0.0, 0.0), 0.0, 0.0),
}
print(f"{'situation':28s} case  beta_1  beta_2  sigma   p_n     v_x")
for name, (v, push, lift) in inputs.items():
    r = block(v, push, lift)
    print(f"{name:28s} {case(r):4d}  {r.beta[0]:.3f}   {r.beta[1]:.3f}   {r.sigma[0]:.3f}  {r.p_n[0]:.3f}  {r.v_next[0]:.3f}")

# %% [markdown]
# **Case 1** ($\beta_1, \beta_2, \sigma > 0$) is inconsistent: the first two rows would give
# $\hat t^Tv = -\sigma = -\hat t^Tv$, so $\sigma = 0$. Enumerating every complementary basis of
# many random inputs never finds it. **Case 2** (both $\beta > 0$, $\sigma = 0$) is consistent:
# it shows up among the basic solutions below, and adding the same amount to $\beta_1$ and
# $\beta_2$ of a sticking solution leaves the LCP solved — friction impulses are not unique,
# velocities are. Lemke's method returns one of the solutions (above: cases 3–8).

# %%
rng = np.random.default_rng(0)
found = set()
for _ in range(200):
    r = block(rng.uniform(-2, 2, 2), rng.uniform(-1, 1))
    for z in basic_solutions(r.lcp.F, r.lcp.f):  # every basic solution, by enumeration
        found.add(tuple(int(x > 1e-9) for x in z[1:]))
print("sign patterns (beta_1, beta_2, sigma) among all basic solutions:", sorted(found))
print("case 1 found:", (1, 1, 1) in found)

# %% [markdown]
# ## The friction law it produces
#
# A block at rest pushed with a growing horizontal impulse: it sticks while the push is below
# $\mu m g h$ (friction matches the push) and slides beyond it (friction saturates).

# %%
pushes = np.linspace(-1.0, 1.0, 81)
friction, speed = [], []
for p in pushes:
    r = block((0.0, 0.0), p)
    friction.append(r.beta[0] - r.beta[1])
    speed.append(r.v_next[0])
fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
ax[0].plot(pushes, friction)
ax[0].axhline(mu * G * h, color="0.6", ls=":")
ax[0].axhline(-mu * G * h, color="0.6", ls=":")
ax[0].set_xlabel("applied tangential impulse")
ax[0].set_ylabel(r"friction impulse $\beta_1 - \beta_2$")
ax[1].plot(pushes, speed)
ax[1].set_xlabel("applied tangential impulse")
ax[1].set_ylabel("$v_x$ after the step")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Explore
#
# `mbdcp.widgets.planar_friction` re-solves and redraws as you move the sliders (μ, the initial tangential velocity, the push
# and a lift). The title names the sign case and the contact state.
# Without a widget frontend (and in the saved notebook) it shows a static figure for the
# default values instead.

# %%
mbdcp.widgets.planar_friction()
