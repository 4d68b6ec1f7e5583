# %% [markdown]
# # Full-rank friction and Painlevé's paradox
#
# Two formulations that complement the Stewart–Trinkle time step:
#
# 1. **Full-rank discretized friction** (Peiret, Kövecses & Font-Llagunes, eqs. 1–8). The
#    polygonal friction cone of `mbdcp.step` uses opposite direction pairs $d, -d$, whose
#    columns are dependent: the LCP matrix is rank deficient even when no contact is
#    redundant. Glocker's (2001) discretized friction model discretizes the pre-sliding
#    tangential *acceleration* instead, $\dot u_t = \sum_j e_j(\kappa_{j+} - \kappa_{j-})$ with
#    $e_j$ evenly spaced in $[0, \pi)$; Peiret et al.'s contribution is the *phantom inertia*
#    $\rho$ that couples the two saturations of each direction,
#    $$\sigma_{j-} = \mu p_n + e_j^T p_t + \rho\kappa_{j-} \perp \kappa_{j+}, \qquad
#      \sigma_{j+} = \mu p_n - e_j^T p_t + \rho\kappa_{j+} \perp \kappa_{j-}$$
#    (written here for the time step, where $\kappa_\pm$ discretize the sliding velocity and
#    $p$ are impulses: `mbdcp.full_rank_step` applies the paper's acceleration-level model at
#    velocity level). The LCP in $(p_n, \kappa_+, \kappa_-)$ has full rank *if the contact forces
#    are not redundant* (Peiret et al., after eq. 8; a box on four coplanar corners is redundant);
#    $\rho$ does not change the motion ($\kappa_{j+}$ and $\kappa_{j-}$ are never both positive).
# 2. **The instantaneous model** (Trinkle 2003, section 2): forces and accelerations at one
#    instant. It can have no solution — Painlevé's paradox (Painlevé 1895; Trinkle 2003,
#    section 2.2) — which is why time-stepping is used.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp

G = 9.81
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Rank of the two lead matrices as the number of directions grows
#
# A unit sphere on the plane $z = 0$ ($M = \mathrm{diag}(1,1,1,0.4,0.4,0.4)$, contact at
# $(0,0,-1)$). Stewart–Trinkle with $2k$ directions (opposite pairs) against the full-rank
# model with $k$ directions in $[0,\pi)$: both LCPs have $1 + 2k$ (plus one) unknowns.

# %%
M = mbdcp.examples.sphere_on_plane()[0]
col = mbdcp.examples.sphere_columns  # the columns (d, r x d) of directions d at the contact
Wn = col([[0.0, 0.0, 1.0]])
Wt = col([[1.0, 0, 0], [0, 1.0, 0]])
v, h = np.array([1.0, 0.5, 0, 0, 0, 0]), 0.01
p_ext = np.array([0, 0, -G * h, 0, 0, 0])
rows = []
for k in range(1, 9):
    D = col(mbdcp.friction_basis([0, 0, 1], 2 * k).T)
    st = mbdcp.step(M, Wn, D, np.ones((2 * k, 1)), [0.3], v, h, p_ext=p_ext, return_lcp=True)
    fr = mbdcp.full_rank_step(M, Wn, Wt, 0.3, v, h, n_d=k, p_ext=p_ext, return_lcp=True)
    rows.append((k, st.lcp.F.shape[0], np.linalg.matrix_rank(st.lcp.F), fr.lcp.F.shape[0],
                 np.linalg.matrix_rank(fr.lcp.F)))
rows = np.array(rows)
print(" k  ST size  ST rank  FR size  FR rank")
for row in rows:
    print("%2d %8d %8d %8d %8d" % tuple(row))
plt.figure(figsize=(5.5, 3.6))
plt.plot(rows[:, 0], rows[:, 1] - rows[:, 2], "o-", label="Stewart–Trinkle: size − rank")
plt.plot(rows[:, 0], rows[:, 3] - rows[:, 4], "s-", label="full-rank model: size − rank")
plt.xlabel("directions k (ST uses 2k in opposite pairs)")
plt.ylabel("rank deficiency")
plt.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The phantom inertia does not change the motion
#
# The same sliding sphere for $\rho$ over ten orders of magnitude: the velocity is the same;
# the default $\rho$ is the mean diagonal of $E^T S^{-1}E$ (the mass one direction sees).

# %%
rhos = np.logspace(-4, 6, 11)
vels = np.array([mbdcp.full_rank_step(M, Wn, Wt, 0.3, v, h, n_d=4, p_ext=p_ext, rho=rho).v_next
                 for rho in rhos])
default = mbdcp.full_rank_step(M, Wn, Wt, 0.3, v, h, n_d=4, p_ext=p_ext)
print("default rho =", default.rho)
print("largest difference of v_next across rho:", np.abs(vels - vels[0]).max())
res = mbdcp.full_rank_step(M, Wn, Wt, 0.3, v, h, n_d=4, p_ext=p_ext, rho=1e3)
print("kappa_plus  =", res.kappa_plus.ravel())
print("kappa_minus =", res.kappa_minus.ravel(), "(never both positive in one direction)")

# %% [markdown]
# ## A particle on an incline
#
# A unit particle on a plane tilted by $\theta$: it sticks when $\tan\theta < \mu$ and
# otherwise slides, gaining $h g(\sin\theta - \mu\cos\theta)$ along the slope per step.

# %%
mu, h = 0.4, 0.01
thetas = np.radians(np.linspace(0, 60, 61))
speed, exact = [], []
for th in thetas:
    n = np.array([-np.sin(th), 0.0, np.cos(th)])
    u = np.array([np.cos(th), 0.0, np.sin(th)])
    res = mbdcp.full_rank_step(np.eye(3), n[:, None], np.array([u, [0, 1.0, 0]]).T, mu, np.zeros(3), h,
                               p_ext=[0, 0, -G * h])
    speed.append(-res.v_next @ u)
    exact.append(max(0.0, h * G * (np.sin(th) - mu * np.cos(th))))
plt.figure(figsize=(5.5, 3.6))
plt.plot(np.degrees(thetas), exact, "k-", label=r"$\max(0, hg(\sin\theta - \mu\cos\theta))$")
plt.plot(np.degrees(thetas), speed, "o", ms=3, label="full_rank_step")
plt.axvline(np.degrees(np.arctan(mu)), color="0.6", ls=":", label=r"$\tan\theta = \mu$")
plt.xlabel(r"$\theta$ [deg]")
plt.ylabel("speed down the slope after one step")
plt.legend()
plt.tight_layout()
plt.show()
print("largest difference from the closed form:", np.abs(np.array(speed) - np.array(exact)).max())

# %% [markdown]
# ## Painlevé's paradox
#
# A rod of length $2l$ rests on its lower end at angle $\theta$ and slides toward $-x$. The
# normal acceleration of the end is $a_n = -g + A\,c_n/m$ with
# $$A = 1 + 3\cos^2\theta - 3\mu\sin\theta\cos\theta .$$
# For $A > 0$ the LCP has the solution $c_n = mg/A$; for $A < 0$ it has none (a rod sliding this
# way cannot stay in contact and cannot leave it) and Lemke's method ends on a ray.

# %%
def rod(theta, mu, m=1.0, l=1.0):
    M = np.diag([m, m, m * l * l / 3.0])
    Wn = np.array([[0.0], [1.0], [-l * np.cos(theta)]])
    t = np.array([1.0, 0.0, l * np.sin(theta)])
    return M, Wn, np.array([t, -t]).T, np.ones((2, 1)), [mu], np.array([-1.0, 0, 0]), np.array([0, -m * G, 0])

res = mbdcp.instantaneous(*rod(np.radians(30), 0.3))
print("theta = 30 deg, mu = 0.3:", res.status.name, "c_n =", res.c_n[0],
      " m g / A =", G / (1 + 3 * np.cos(np.radians(30)) ** 2 - 3 * 0.3 * np.sin(np.radians(30)) * np.cos(np.radians(30))))
res = mbdcp.instantaneous(*rod(np.radians(30), 3.0))
print("theta = 30 deg, mu = 3:  ", res.status.name)

th_grid = np.radians(np.linspace(1, 89, 89))
mu_grid = np.linspace(0.0, 3.0, 61)
solved = np.array([[mbdcp.instantaneous(*rod(th, mu)).success for th in th_grid] for mu in mu_grid])
TH, MU = np.meshgrid(np.degrees(th_grid), mu_grid)
plt.figure(figsize=(6, 4))
plt.contourf(TH, MU, solved, levels=[-0.5, 0.5, 1.5], colors=["#f4a582", "#92c5de"])
thc = np.radians(np.linspace(1, 89, 300))
plt.plot(np.degrees(thc), (1 + 3 * np.cos(thc) ** 2) / (3 * np.sin(thc) * np.cos(thc)), "k--",
         label="A = 0")
plt.ylim(0, 3)
plt.xlabel(r"$\theta$ [deg]")
plt.ylabel(r"$\mu$")
plt.title("Lemke: solved (blue) / ray termination (orange)")
plt.legend()
plt.tight_layout()
plt.show()
A = 1 + 3 * np.cos(th_grid) ** 2 - 3 * mu_grid[:, None] * np.sin(th_grid) * np.cos(th_grid)
print("grid points where Lemke's outcome disagrees with sign(A):", int(np.sum(solved != (A > 0))))

# %% [markdown]
# ## Explore
#
# `mbdcp.widgets.painleve_rod` re-solves and redraws as you move the sliders (θ and μ).
# Cross the dashed curve A = 0 and Lemke ends on a ray.
# Without a widget frontend (and in the saved notebook) it shows a static figure for the
# default values instead.

# %%
mbdcp.widgets.painleve_rod()
