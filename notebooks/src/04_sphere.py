# %% [markdown]
# # A sphere slides, then rolls (Trinkle 2003, section 4)
#
# A uniform sphere ($m = r = 1$, $I = 2/5$) is released on the plane $z = 0$ sliding at
# $v_0 = 2$ along $x$, with $\mu = 0.2$. Friction $\mu mg$ decelerates it and spins it up until
# the contact point stops slipping at
# $$t^* = \frac{2v_0}{7\mu g} \approx 0.291,$$
# after which it rolls with $v_x = r\omega_y = \tfrac57 v_0$. With a friction direction along
# $-x$ and a linear gap, the time-stepping LCP reproduces this at every step, for any $h$.

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp.examples import simulate_sphere, sphere_closed_form, sphere_on_plane

G = 9.81

# %% [markdown]
# ## The LCP of one step (Trinkle 2003, eq. 48)

# %%
M, Wn, D, E, U = sphere_on_plane()
res = mbdcp.step(M, Wn, D, E, U, [2.0, 0, 0, 0, 0, 0], 0.12, p_ext=[0, 0, -G * 0.12, 0, 0, 0], psi_n=[0.0],
                 return_lcp=True)
np.set_printoptions(precision=3, suppress=True)
print("z = (p_n, beta_1..4, sigma)\nF =\n", res.lcp.F, "\nf =", res.lcp.f)

# %% [markdown]
# ## Velocities and forces against the closed form (figures 8 and 9 of the paper)

# %%
h = 0.12
t, v, p_n, beta = simulate_sphere(h=h, T=0.6)
tt = np.linspace(0, 0.6, 300)
vx, wy = sphere_closed_form(tt)
fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
ax[0].plot(tt, vx, "k:", label="$v_x$ exact")
ax[0].plot(tt, wy, "k--", label=r"$\omega_y$ exact")
ax[0].plot(t, v[:, 0], "o", label="$v_x$")
ax[0].plot(t, v[:, 4], "s", label=r"$\omega_y$")
ax[0].set_xlabel("t")
ax[0].set_title("velocities, h = 0.12")
ax[0].legend()
friction = (beta[:, 0] - beta[:, 1]) / h  # force along +x
exact_f = np.where(tt < 2 * 2.0 / (7 * 0.2 * G), -0.2 * G, 0.0)
ax[1].plot(tt, exact_f, "k:", label="friction force exact")
ax[1].step(t[1:], friction, where="post", label="friction force (beta / h)")
ax[1].step(t[1:], p_n / h, where="post", label="normal force (p_n / h)")
ax[1].set_xlabel("t")
ax[1].set_title("forces")
ax[1].legend()
plt.tight_layout()
plt.show()
vx_s, wy_s = sphere_closed_form(t)
print("largest velocity error at the steps:", max(np.abs(v[:, 0] - vx_s).max(), np.abs(v[:, 4] - wy_s).max()))

# %% [markdown]
# ## Rotated friction directions and convergence
#
# With $n_d$ directions that do not contain $-x$ (here rotated by half the spacing), the
# polygonal cone under-approximates the circle: sliding straight along $x$ meets the middle of
# an edge of the polygon, between the two directions at $\pm\pi/n_d$ from $-x$, and the
# friction force against the motion is $\cos(\pi/n_d)$ times its Coulomb value $\mu m g$. The
# error in $v_x$ at $t = 0.2$ (still sliding) therefore does not vanish as $h \to 0$; it falls like
# $1 - \cos(\pi/n_d)$ as directions are added. Unrotated, as in Trinkle (2003), section 4, one
# direction points along $-x$: the motion meets a corner of the polygon, which lies on the
# circle, and the force is Coulomb's (the discrete solution is then exact, as above).

# %%
def run(h, n_d, T=0.2):
    r = np.array([0.0, 0.0, -1.0])

    def col(d):
        return np.r_[d, np.cross(r, d)]

    ang = np.pi * (2 * np.arange(n_d) + 1) / n_d  # rotated: none along -x
    dirs = np.array([np.cos(ang), np.sin(ang), np.zeros(n_d)])
    D = np.array([col(d) for d in dirs.T]).T
    v = np.array([2.0, 0, 0, 0, 0, 0])
    for _ in range(int(round(T / h))):
        v = mbdcp.step(M, Wn, D, np.ones((n_d, 1)), [0.2], v, h, p_ext=[0, 0, -G * h, 0, 0, 0], psi_n=[0.0]).v_next
    return v[0]

exact = sphere_closed_form(0.2)[0]
hs = [0.05, 0.02, 0.01, 0.005]
fig, ax = plt.subplots(1, 2, figsize=(11, 3.6))
for n_d in (4, 8, 16):
    ax[0].plot(hs, [abs(run(h, n_d) - exact) for h in hs], "o-", label=f"$n_d$ = {n_d}")
ax[0].set_xscale("log")
ax[0].set_yscale("log")
ax[0].set_xlabel("h")
ax[0].set_ylabel("$|v_x - v_x^{exact}|$ at t = 0.2")
ax[0].legend()
nds = np.array([4, 6, 8, 12, 16, 24, 32])
errs = [abs(run(0.01, n) - exact) for n in nds]
ax[1].loglog(nds, errs, "o-", label="error, h = 0.01")
ax[1].loglog(nds, 0.2 * G * 0.2 * (1 - np.cos(np.pi / nds)), "k:", label=r"$\mu g t\,(1-\cos(\pi/n_d))$")
ax[1].set_xlabel("friction directions $n_d$")
ax[1].legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Explore
#
# `mbdcp.widgets.sphere` re-solves and redraws as you move the sliders (μ, h, v₀ and the number of friction
# directions). Markers are coloured by the step's contact state: the switch from red to blue is at t*.
# Without a widget frontend (and in the saved notebook) it shows a static figure for the
# default values instead.

# %%
mbdcp.widgets.sphere()
