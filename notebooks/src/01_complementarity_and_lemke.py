# %% [markdown]
# # Complementarity and Lemke's method
#
# A **linear complementarity problem** LCP(M, q) asks for $z$ with
# $$z \ge 0,\qquad w = Mz + q \ge 0,\qquad z^Tw = 0 .$$
# Each pair $(z_i, w_i)$ is *complementary*: one of them is zero. Contact is the physical
# example: a gap $w_i$ and a contact force $z_i$ are both nonnegative and at most one is positive.
#
# Geometrically, LCP(M, q) has a solution with support $J$ when $q$ lies in the
# **complementary cone** spanned by the columns $e_i$ ($i \notin J$) and $-M_i$ ($i \in J$).

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp

# %% [markdown]
# ## The complementary cones of a 2 × 2 LCP
#
# For a P-matrix the four cones cover the plane without overlapping: every $q$ has exactly one
# solution. Below, $M = \begin{bmatrix}2 & 1\\ 1 & 2\end{bmatrix}$ and $q = (-5, -6)$.

# %%
M = np.array([[2.0, 1.0], [1.0, 2.0]])
q = np.array([-5.0, -6.0])
cols = {"w1": np.array([1.0, 0.0]), "w2": np.array([0.0, 1.0]), "z1": -M[:, 0], "z2": -M[:, 1]}
cones = [("w1", "w2"), ("z1", "w2"), ("w1", "z2"), ("z1", "z2")]
fig, ax = plt.subplots(figsize=(5, 5))
colors = ["#d1e5f0", "#fddbc7", "#d9f0d3", "#e7d4e8"]
for (a, b), c in zip(cones, colors):
    pts = np.array([[0, 0], 40 * cols[a] / np.linalg.norm(cols[a]), 40 * cols[b] / np.linalg.norm(cols[b])])
    ax.fill(pts[:, 0], pts[:, 1], color=c, label=f"cone({a}, {b})")
for name, vec in cols.items():
    ax.annotate(name, 4 * vec / np.linalg.norm(vec))
ax.plot(*q, "k*", ms=12, label="q")
ax.set_xlim(-10, 10)
ax.set_ylim(-10, 10)
ax.axhline(0, color="k", lw=0.5)
ax.axvline(0, color="k", lw=0.5)
ax.set_aspect("equal")
ax.legend(loc="upper right", fontsize=8)
plt.show()
res = mbdcp.lemke(M, q, trace=True)
print(res.status.name, "z =", res.z, "w =", res.w)

# %% [markdown]
# ## Lemke's method, step by step
#
# Lemke adds an artificial variable $z_0$ and a covering vector $e$: $w = Mz + q + e z_0$.
# With $z_0 = -\min_i q_i$ the point $z = 0$ is feasible. Each pivot brings in the complement
# of the variable that just left; the path ends when $z_0$ leaves (a solution) or when the
# entering variable can grow forever (ray termination). Degenerate ties are broken by the
# lexicographic rule, so the method never cycles. Murty's (1988) example 2.8 (4 × 4):

# %%
M = np.array([[1.0, -1.0, -1.0, -1.0], [-1.0, 1.0, -1.0, -1.0], [1.0, 1.0, 2.0, 0.0], [1.0, 1.0, 0.0, 2.0]])
q = np.array([3.0, 5.0, -9.0, -5.0])
res = mbdcp.lemke(M, q, trace=True)
for k, (enter, leave) in enumerate(res.trace, 1):
    print(f"pivot {k}: {enter:>3s} enters, {leave:>3s} leaves")
print(res.status.name, "z =", res.z, " residual", res.residual)

# %% [markdown]
# The value of $z_0$ along the path: we re-solve with growing pivot limits and read the
# last basic point (a teaching device; the solver reports the final point only).

# %%
z0 = []
for k in range(1, res.pivots + 1):
    partial = mbdcp.lemke(M, q, max_iter=k)
    w = M @ partial.z + q
    z0.append(max(0.0, -np.min(w)))
plt.figure(figsize=(5, 3))
plt.plot(range(1, res.pivots + 1), z0, "o-")
plt.xlabel("pivot")
plt.ylabel(r"infeasibility $\max(0, -\min_i w_i)$")
plt.title("Lemke's path to a solution")
plt.show()

# %% [markdown]
# ## Ray termination
#
# When $M$ is copositive-plus (positive semidefinite matrices, for example), ray termination
# *proves* that the LCP has no solution. Here $w_1 + w_2 = -2$ for every $z$:

# %%
res = mbdcp.lemke([[1.0, -1.0], [-1.0, 1.0]], [-1.0, -1.0], trace=True)
print(res.status.name, "-", res.message)
print("trace:", res.trace)
res = mbdcp.lemke([[-1.0]], [-1.0])
print("M = [[-1]], q = [-1]:", res.status.name, "(success =", res.success, ")")

# %% [markdown]
# mbdcp marks a result successful only after checking it by definition, each row at its own
# scale: $w = Mz + q$ is recomputed and, with $s_i = (|M|\,|z|)_i + |q_i|$ the size of the
# terms that make up $w_i$, every row must have $z_i \ge 0$, $w_i \ge -\tau s_i$ and, where
# $z_i > 0$, $w_i \le \tau s_i$. `res.residual` is the worst row's violation over its own scale,
# $\max_i r_i/s_i$ with $r_i = \max(-w_i, 0)$, or $|w_i|$ where $z_i > 0$: the smallest $\tau$
# at which every row passes (0 at an exact solution, and unchanged by a change of units).
# `mbdcp.lcp_residual(M, q, z)` gives the unscaled $\max_i |\min(z_i, w_i)|$.

# %% [markdown]
# ## Explore
#
# `mbdcp.widgets.lemke_stepper` re-solves and redraws as you move the sliders (the pivot number).
# The next pivot's entering column and leaving row are highlighted.
# Without a widget frontend (and in the saved notebook) it shows a static figure for the
# default values instead.

# %%
mbdcp.widgets.lemke_stepper()
