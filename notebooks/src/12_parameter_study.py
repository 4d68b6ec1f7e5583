# %% [markdown]
# # Parameter studies: many problems at once, on one machine or many
#
# A validation study solves the same model over a grid of parameters. mbdcp gives three tools:
#
# - `mbdcp.study.run(func, grid)` runs `func(**params) -> dict` over a grid and returns a pandas
#   DataFrame, one row per case (a failing case is an `error` entry, never a lost study). Locally it
#   uses every core; given a `dask.distributed.Client` it runs on that cluster.
# - `mbdcp.batch.step` steps many scenes of equal shape in one C loop (bit for bit what
#   `mbdcp.step` gives one by one), so a whole grid advances together.
# - `mbdcp.batch.lemke` solves many LCPs of one size the same way.
#
# We study the sphere of Trinkle (2003, section 4): released sliding at $v_0$
# on a plane with friction $\mu$, it slides until
# $$t^* = \frac{2 v_0}{7 \mu g}$$
# and then rolls. How well does the time-stepping LCP reproduce $t^*$ as a function of the step $h$?
# Then we map where Painlevé's rod has an acceleration-level solution.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp import study
from mbdcp.examples import sphere_on_plane

G = 9.81


def roll_time(mu, h, v0):
    """First time at which the contact point of the time-stepped sphere stops slipping."""
    if mu == 0:
        raise ValueError("without friction the sphere slides for ever")
    M, Wn, D, E, U = sphere_on_plane(mu)
    v = np.array([v0, 0.0, 0.0, 0.0, 0.0, 0.0])
    p_ext = np.array([0.0, 0.0, -G * h, 0.0, 0.0, 0.0])
    t, t_end = 0.0, 3 * 2 * v0 / (7 * mu * G)
    while t < t_end:
        res = mbdcp.step(M, Wn, D, E, U, v, h, p_ext=p_ext, psi_n=[0.0])
        if not res.success:
            raise RuntimeError(res.message)
        v, t = res.v_next, t + h
        if abs(v[0] - v[4]) < 1e-9 * v0:  # slip speed of the contact point (r = 1)
            return {"t_roll": t, "t_exact": 2 * v0 / (7 * mu * G), "steps": int(round(t / h))}
    raise RuntimeError("the sphere did not start rolling")


roll_time(0.2, 0.01, 2.0)

# %% [markdown]
# ## The grid, run locally
#
# A dict of lists is the Cartesian product of its values. The bar shows progress; each case runs in
# a worker process. One case is made to fail on purpose ($\mu = 0$: the sphere never rolls) to show
# that the others are kept.

# %%
grid = {"mu": [0.0, 0.1, 0.2, 0.4, 0.6], "h": [0.002, 0.005, 0.01, 0.02, 0.05], "v0": [1.0, 2.0, 4.0]}
t0 = time.perf_counter()
df = study.run(roll_time, grid)
print(f"{len(df)} cases in {time.perf_counter() - t0:.2f} s")
df.head()

# %%
print(df.error.dropna().unique())
ok = df[df.error.isna()].copy()
ok["rel_error"] = (ok.t_roll - ok.t_exact) / ok.t_exact
# the time-stepped sphere starts rolling within one step of t* (the step that contains t*)
print("cases where t_roll is not in [t*, t* + h]:",
      int(((ok.t_roll < ok.t_exact - 1e-12) | (ok.t_roll > ok.t_exact + ok.h + 1e-12)).sum()))

# %%
fig, ax = plt.subplots(1, 2, figsize=(10, 4))
for mu, g in ok[ok.v0 == 2.0].groupby("mu"):
    ax[0].loglog(g.h, g.rel_error.abs() + 1e-16, "o-", label=f"μ = {mu}")
ax[0].loglog(ok.h.unique(), 2 * ok.h.unique(), "k--", label="slope 1")
ax[0].set_xlabel("h [s]")
ax[0].set_ylabel("|t_roll - t*| / t*")
ax[0].set_title("v0 = 2 m/s: first-order in h")
ax[0].legend()
ax[1].scatter(ok.t_exact, ok.t_roll, c=np.log10(ok.h), cmap="viridis")
lim = [0, ok.t_exact.max() * 1.1]
ax[1].plot(lim, lim, "k--", lw=1)
ax[1].set_xlabel("closed form t* [s]")
ax[1].set_ylabel("time-stepping t_roll [s]")
ax[1].set_title("every case (colour: log10 h)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The same grid on a Dask cluster
#
# `client=` sends the cases to a `dask.distributed` cluster with `client.map`. A `LocalCluster`
# stands in for a real one here; with the address of a scheduler on many machines, the notebook is
# unchanged. The table is the same as the local one (timings aside).

# %%
from dask.distributed import Client, LocalCluster

with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
    df_dask = study.run(roll_time, grid, client=client, progress=False)
cols = ["mu", "h", "v0", "t_roll", "t_exact", "steps", "error"]
print("Dask table equals the local table:", df_dask[cols].equals(df[cols]))

# %% [markdown]
# ## The whole grid in one batch
#
# All cases with $\mu > 0$ have the same shape (6 velocities, one contact, four friction
# directions), so `mbdcp.batch.step` can advance all of them at once, each with its own $\mu$, $h$
# and velocity. Each instance gets exactly the bits `mbdcp.step` would give.

# %%
cases = ok[["mu", "h", "v0"]].to_numpy()
M, Wn, D, E, _ = sphere_on_plane()
B = len(cases)
v = np.zeros((B, 6))
v[:, 0] = cases[:, 2]
mus, hs = cases[:, :1].copy(), cases[:, 1].copy()
p_ext = np.zeros((B, 6))
p_ext[:, 2] = -G * hs
t = np.zeros(B)
t_roll = np.full(B, np.nan)
t0 = time.perf_counter()
while np.isnan(t_roll).any():
    res = mbdcp.batch.step(M, Wn, D, E, mus, v, hs, p_ext=p_ext, psi_n=[0.0])
    assert res.success.all(), res.counts()
    v, t = res.v_next, t + hs
    rolling = np.isnan(t_roll) & (np.abs(v[:, 0] - v[:, 4]) < 1e-9 * cases[:, 2])
    t_roll[rolling] = t[rolling]
print(f"{B} sphere simulations in one batch: {time.perf_counter() - t0:.2f} s")
print("largest difference from the per-case study:", np.abs(t_roll - ok.t_roll.to_numpy()).max())

# %% [markdown]
# ## Painlevé's map
#
# A rod of length $2l$ slides on its lower end at angle $\theta$. At the acceleration level its
# normal contact force solves an LCP only when
# $$A = 1 + 3\cos^2\theta - 3\mu\sin\theta\cos\theta > 0 ;$$
# for $A < 0$ there is none (Painlevé's paradox) and Lemke's method must end on a ray. A study over
# $(\theta, \mu)$ maps it; the result is the status of every case.

# %%
def rod(theta, mu, m=1.0, l=1.0):
    M = np.diag([m, m, m * l * l / 3.0])
    Wn = np.array([[0.0], [1.0], [-l * np.cos(theta)]])
    tt = np.array([1.0, 0.0, l * np.sin(theta)])
    return M, Wn, np.array([tt, -tt]).T, np.ones((2, 1)), [mu], np.array([-1.0, 0, 0]), np.array([0, -m * G, 0])


def painleve(theta_deg, mu):
    res = mbdcp.instantaneous(*rod(np.radians(theta_deg), mu))
    return {"status": res.status.name, "c_n": res.c_n[0] if res.success else np.nan}


pgrid = {"theta_deg": list(np.linspace(2, 88, 44)), "mu": list(np.linspace(0.0, 3.0, 31))}
dp = study.run(painleve, pgrid)
th, mu = np.radians(dp.theta_deg), dp.mu
A = 1 + 3 * np.cos(th) ** 2 - 3 * mu * np.sin(th) * np.cos(th)
print(dp.status.value_counts().to_dict())
print("cases where the status disagrees with sign(A):", int(((dp.status == "SOLVED") != (A > 0)).sum()))

# %%
fig, ax = plt.subplots(figsize=(6, 4))
solved = dp.status == "SOLVED"
ax.scatter(dp.theta_deg[solved], dp.mu[solved], s=8, c="#4393c3", label="solved")
ax.scatter(dp.theta_deg[~solved], dp.mu[~solved], s=8, c="#d6604d", label="no solution (ray)")
thc = np.radians(np.linspace(2, 88, 300))
ax.plot(np.degrees(thc), (1 + 3 * np.cos(thc) ** 2) / (3 * np.sin(thc) * np.cos(thc)), "k--", label="A = 0")
ax.set_ylim(0, 3)
ax.set_xlabel(r"$\theta$ [deg]")
ax.set_ylabel(r"$\mu$")
ax.legend(loc="upper right")
ax.set_title("Painlevé's rod: where the acceleration LCP is solvable")
plt.tight_layout()
plt.show()
