# %% [markdown]
# # Cone complementarity versus the LCP
#
# The Stewart–Trinkle LCP (`mbdcp.step`) solves Coulomb friction with a polygonal cone. It is
# not monotone, and pivoting costs grow quickly with the number of contacts. The cone
# complementarity problem keeps the exact circular cone instead: Coulomb's law discretized in
# time on that cone is a *nonlinear* complementarity problem (Negrut, Serban & Tasora 2018,
# eq. 5 without its relaxation term), and Anitescu & Tasora (2010) and Tasora & Anitescu (2011)
# relax that problem — not the polygonal LCP — into a **cone complementarity problem**, a convex
# QP over second-order cones, the method behind Project Chrono (Negrut et al. 2018, eqs. 7–11):
#
# $$\min_\nu\ \tfrac12\nu^T N\nu + p^T\nu \quad\text{s.t.}\quad
#   \gamma_i \in K_i = \{\gamma_n \ge 0,\ \|\gamma_t\| \le \mu_i\gamma_n\},
#   \qquad N = P^TM^{-1}P .$$
#
# Its optimality conditions, $K_i \ni \gamma_i \perp d_i \in K_i^*$ with $d = N\nu + p$, enforce
# $0 \le \gamma_n \perp \Phi/h + v_n - \mu v_T \ge 0$ instead of $v_n \ge 0$: a convex
# problem, unique velocities, iterative solvers that scale linearly — and a sliding body that
# separates at normal speed $\mu v_T$.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp.testing import granular_pile

G = 9.81

# %% [markdown]
# ## The same scene as LCP and as CCP
#
# A sphere (radius 1) released sliding at 3 m/s on the floor. The LCP uses 8 friction
# directions; the CCP the exact circular cone. On its first step the CCP sphere leaves the
# floor at $\mu v_T$, flies, lands, and keeps a small artificial gap while it slides (the
# enforced condition is $\Phi/h + v_n \ge \mu v_T$); the LCP sphere stays on the floor. Both
# start rolling at about the same time.

# %%
mu, h, steps = 0.3, 0.01, 60
M = mbdcp.examples.sphere_on_plane()[0]
col = mbdcp.examples.sphere_columns  # the columns (d, r x d) of directions d at the contact
Wn = col([[0.0, 0.0, 1.0]])
Wt = col([[1.0, 0, 0], [0, 1.0, 0]])
D = col(mbdcp.friction_basis([0, 0, 1], 8).T)
E = np.ones((8, 1))
p_ext = np.array([0, 0, -G * h, 0, 0, 0])

def run(kind):
    v, z = np.array([3.0, 0, 0, 0, 0, 0]), 1.0
    out = []
    for _ in range(steps):
        gap = z - 1.0
        if kind == "lcp":
            v = mbdcp.step(M, Wn, D, E, [mu], v, h, p_ext=p_ext, psi_n=[gap]).v_next
        else:
            v = mbdcp.ccp(M, Wn, Wt, mu, v, h, p_ext=p_ext, psi_n=[gap], tol=1e-12).v_next
        z += h * v[2]
        out.append((v[0], v[2], v[0] - v[4], z - 1.0))
    return np.array(out)

lcp, ccp_run = run("lcp"), run("ccp")
t = h * np.arange(1, steps + 1)
fig, ax = plt.subplots(1, 3, figsize=(13, 3.6))
for data, name in ((lcp, "LCP (mbdcp.step)"), (ccp_run, "CCP (mbdcp.ccp)")):
    ax[0].plot(t, data[:, 2], label=name)
    ax[1].plot(t, data[:, 1], label=name)
    ax[2].plot(t, data[:, 3], label=name)
ax[0].set_title("slip velocity $v_x - \\omega_y r$")
ax[1].set_title("normal velocity $v_z$")
ax[2].set_title("height of the lowest point")
for a in ax:
    a.set_xlabel("t [s]")
    a.legend()
plt.tight_layout()
plt.show()
print(f"first step: CCP v_z = {ccp_run[0, 1]:.5f} = mu * slip = {mu * ccp_run[0, 2]:.5f}; "
      f"LCP v_z = {lcp[0, 1]:.1e}")

# %% [markdown]
# ## Every formulation on one step: `mbdcp.compare`
#
# `mbdcp.compare(M, Wn, D, E, U, v, h, **data)` runs the same step with Stewart–Trinkle
# (Lemke), the algorithms 1–3 of Anitescu & Hart (2004), the full-rank model and the CCP (building the tangent
# pairs $W_t$ from the friction directions $D$) and tabulates them. The sphere sliding at 3 m/s
# from contact: the LCP, the converged fixed points and the full-rank model agree; algorithm 3
# (one iteration) differs from them, since the sphere slides (it is exact only when no contact is
# in motion); the CCP lifts off at $\mu v_T$, which takes a
# normal impulse several times $mgh$ — and with it a friction impulse that many times larger, so
# it dissipates more energy in this step. Dissipated energy: $\tfrac12 v^TMv - \tfrac12 {v^{l+1}}^TMv^{l+1} +
# \tfrac12 p_{ext}^T(v + v^{l+1})$.

# %%
table = mbdcp.compare(M, Wn, D, E, [mu], [3.0, 0, 0, 0, 0, 0], h, p_ext=p_ext, psi_n=[0.0])
table.drop(columns=["v_next", "note"])

# %% [markdown]
# ## The "bowling ball" artifact
#
# For one step of a sphere sliding at speed $v_T$ the CCP gives exactly $v_n = \mu v_T$
# (Negrut et al. 2018, eq. 5d; the artifact is discussed after their eq. 6 and was shown by
# Mazhar et al. 2015): the lift-off speed grows linearly with both.

# %%
speeds = np.linspace(0.5, 5, 10)
fig, ax = plt.subplots(figsize=(5, 3.6))
for mu_ in (0.1, 0.3, 0.6):
    vn, vt = [], []
    for s in speeds:
        res = mbdcp.ccp(M, Wn, Wt, mu_, [s, 0, 0, 0, 0, 0], h, p_ext=p_ext, tol=1e-12)
        vt.append(np.linalg.norm(Wt.T @ res.v_next))
        vn.append((Wn.T @ res.v_next)[0])
    ax.plot(vt, vn, "o", label=f"μ = {mu_}")
    ax.plot(vt, mu_ * np.array(vt), "k:", lw=0.8)
ax.set_xlabel("tangential speed after the step $v_T$")
ax.set_ylabel("normal speed $v_n$")
ax.legend()
ax.set_title("CCP: $v_n = \\mu v_T$ (dotted)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Convergence of the three iterative methods
#
# A random granular pile (400 spheres, 800 contacts). APGD (Nesterov's accelerated projected
# gradient with adaptive step and restart, Mazhar et al. 2015), projected Jacobi (relaxation
# 0.3) and projected Gauss–Seidel (each contact's 3×3 local cone problem solved in turn). The
# residual $\|\nu - \Pi_K(\nu - (N\nu + p)/L)\|_\infty L/\|p\|_\infty$ is zero exactly at a
# solution.

# %%
d = granular_pile(400, 800, seed=4)
fig, ax = plt.subplots(figsize=(6, 4))
final = {}
for method in ("apgd", "pjacobi", "pgs"):
    res = mbdcp.ccp(**d, method=method, tol=1e-10, max_iter=3000)
    ax.semilogy(np.arange(1, len(res.history) + 1), res.history, label=f"{method} ({res.iterations} it)")
    final[method] = res
ax.set_xlabel("iteration")
ax.set_ylabel("relative residual")
ax.legend()
plt.tight_layout()
plt.show()
for m, res in final.items():
    print(f"{m:8s} {res.status.name:15s} iterations {res.iterations:5d} residual {res.residual:.1e}")
print("largest velocity difference between the methods:",
      max(np.abs(final[m].v_next - final["apgd"].v_next).max() for m in final))

# %% [markdown]
# ## Warm starting
#
# In a simulation, the previous step's impulses are an excellent first guess:

# %%
cold = mbdcp.ccp(**d, tol=1e-8)
d2 = dict(d, v=d["v"] * 1.01)
warm = mbdcp.ccp(**d2, tol=1e-8, warm_start=cold)
again = mbdcp.ccp(**d2, tol=1e-8)
print(f"cold start: {again.iterations} iterations; warm start from the previous solve: {warm.iterations}")
