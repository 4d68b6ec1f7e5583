# %% [markdown]
# # Coulomb friction on the FCLib collection
#
# The Frictional Contact Library (FCLib) stores one-step contact problems written by Siconos and
# LMGC90. Its *local* problem is posed on the Delassus matrix $W$ (for a global problem
# $Mv = Hr + f$, $u = H^Tv + w$ it is $W = H^TM^{-1}H$): find the reactions $r$ (per contact:
# normal, two tangents) with $u = Wr + q$ and, per contact $\alpha$,
#
# $$K^*_\alpha \ni \hat u_\alpha \perp r_\alpha \in K_\alpha,\qquad
#   \hat u_\alpha = u_\alpha + \mu_\alpha\|u_{T,\alpha}\|\,e_n,\qquad
#   K_\alpha = \{\|r_T\| \le \mu_\alpha r_n\},\ K^*_\alpha = \{u_n \ge \mu_\alpha\|u_T\|\}.$$
#
# De Saxcé's shift $\mu\|u_T\|$ makes this exactly Coulomb's law: per contact either take-off
# ($r = 0$, $u_n \ge 0$), stick ($u = 0$, $r \in K$) or slide ($u_n = 0$, $r_T = -\mu r_n u_T/\|u_T\|$).
# Drop the shift and it is the **cone complementarity problem** (CCP) of Anitescu & Tasora (2010)
# (notebook 09): convex, but it enforces $u_n \ge \mu\|u_T\|$ — a sliding body lifts off.
#
# `mbdcp.coulomb(W, q, mu)` solves the first, `mbdcp.ccp_local(W, q, mu)` the second. Both are
# judged by FCLib's residual $\|r - \Pi_K(r - \hat u)\|_2 / \|q\|_2$ (Acary, Brémond, Huber 2018;
# $\hat u = u$ for the CCP), which is zero exactly at a solution.

# %%
import glob
import os
import sys
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp import io
from mbdcp.formulations.coulomb import fc_residual, local_solve

G = 9.81

# %% [markdown]
# ## One contact, solved exactly
#
# Gauss–Seidel methods solve one contact at a time: $u = Ar + b$ with $A = W_{\alpha\alpha}$ (3×3)
# and $b$ collecting everything else. `local_solve` tries the three cases in turn. Take-off needs
# $b_n \ge 0$; stick is $r = -A^{-1}b$ if that lies in $K$. For sliding, write
# $r = r_n(1, \mu\cos t, \mu\sin t)$ and $u = \sigma(0, -\cos t, -\sin t)$: then
# $r_n w(t) - \sigma v(t) = -b$ with $w(t) = A(1, \mu\cos t, \mu\sin t)$, three equations in two
# unknowns, solvable exactly when
#
# $$g(t) = \det[w(t), v(t), b] = 0,$$
#
# a trigonometric polynomial of degree 2 in $t$: at most four candidate directions, each giving
# $(r_n, \sigma)$ linearly; the one with $r_n > 0$, $\sigma \ge 0$ is the solution.

# %%
A = np.array([[2.0, 0.3, -0.2], [0.3, 1.0, 0.25], [-0.2, 0.25, 1.5]])
b = np.array([-1.0, 0.9, -0.6])
mu = 0.4
r, case = local_solve(A, b, mu)
u = A @ r + b
print(f"case: {case};  r = {r.round(6)},  u = {u.round(6)}")
print(f"check: u_n = {u[0]:.1e},  ||r_T|| - mu r_n = {np.linalg.norm(r[1:]) - mu * r[0]:.1e},  "
      f"r_T . u_T / (||r_T|| ||u_T||) = {r[1:] @ u[1:] / np.linalg.norm(r[1:]) / np.linalg.norm(u[1:]):.6f}")

ts = np.linspace(0, 2 * np.pi, 721)
def g(t):
    w = A @ np.array([1.0, mu * np.cos(t), mu * np.sin(t)])
    v = np.array([0.0, -np.cos(t), -np.sin(t)])
    return np.linalg.det(np.array([w, v, b]))
gs = np.array([g(t) for t in ts])
fig, ax = plt.subplots(figsize=(7, 3.2))
ax.plot(ts, gs)
ax.axhline(0, color="k", lw=0.6)
t_sol = np.arctan2(r[2], r[1]) % (2 * np.pi)
ax.plot([t_sol], [g(t_sol)], "ro", label="the solution's direction")
ax.set_xlabel("friction direction angle t")
ax.set_ylabel("g(t)")
ax.legend()
ax.set_title("slide case: roots of det[w(t), v(t), b]")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The bowling ball: CCP against Coulomb on the same scene
#
# A sphere (radius 1, mass 1, inertia 2/5) released on the floor sliding at 3 m/s, μ = 0.3,
# h = 0.01. Each step is a global problem $Mv^{+} = Hr + f$ with $f = Mv + h\,(0, 0, -g)$, one
# contact whose columns in $H$ are normal, tangent x, tangent y, and $u = H^Tv^{+} + (\Phi/h, 0, 0)$.
# We hand it to `coulomb` and to `ccp_local` (both reduce it to $W = H^TM^{-1}H$). Coulomb keeps
# the sphere on the floor and slows it until it rolls at $t = 2v_0/(7\mu g)$ with $v_x = 5v_0/7$;
# the CCP lifts it off at $v_n = \mu\,v_T$ on the first step (Negrut, Serban & Tasora 2018,
# eq. 5d and the discussion after eq. 6).

# %%
mu_b, h, steps, v0 = 0.3, 0.01, 50, 3.0
Mb = np.diag([1.0, 1.0, 1.0, 0.4, 0.4, 0.4])
p = np.array([0.0, 0.0, -1.0])
H = np.array([np.r_[d, np.cross(p, d)] for d in np.eye(3)[[2, 0, 1]]]).T   # normal, t_x, t_y

def simulate(solver):
    v, z, rows = np.array([v0, 0, 0, 0, 0, 0]), 1.0, []
    for _ in range(steps):
        f = Mb @ v + h * np.array([0, 0, -G, 0, 0, 0])
        prob = io.GlobalProblem(Mb, H, f, [(z - 1.0) / h, 0.0, 0.0], [mu_b], 3)
        res = solver(prob, tol=1e-12)
        v = np.linalg.solve(Mb, H @ res.r + f)
        z += h * v[2]
        rows.append((v[0] - v[4], v[2], z - 1.0))   # slip v_x - omega_y r, normal speed, gap
    return np.array(rows)

runs = {"Coulomb (mbdcp.coulomb)": simulate(mbdcp.coulomb), "CCP (mbdcp.ccp_local)": simulate(mbdcp.ccp_local)}
t = h * np.arange(1, steps + 1)
fig, ax = plt.subplots(1, 3, figsize=(13, 3.5))
for name, data in runs.items():
    for k in range(3):
        ax[k].plot(t, data[:, k], label=name)
t_roll = 2 * v0 / (7 * mu_b * G)
ax[0].plot(t, np.maximum(v0 - 3.5 * mu_b * G * t, 0), "k:", lw=1, label="closed form (Coulomb)")
for a, title in zip(ax, ("slip velocity", "normal velocity $v_z$", "gap")):
    a.set_title(title)
    a.set_xlabel("t [s]")
ax[0].legend(fontsize=8)
plt.tight_layout()
plt.show()
coul, ccp = runs["Coulomb (mbdcp.coulomb)"], runs["CCP (mbdcp.ccp_local)"]
print(f"first step: CCP v_z = {ccp[0, 1]:.5f} = mu * slip = {mu_b * ccp[0, 0]:.5f};  Coulomb v_z = {coul[0, 1]:.1e}")
print(f"Coulomb starts rolling at t = {t[np.argmax(coul[:, 0] < 1e-9)]:.2f} s (closed form {t_roll:.3f} s)")

# %% [markdown]
# ## The FCLib problems
#
# Eight problems ship with the tests (Siconos and LMGC90 outputs, from a single contact to 286);
# the global ones are reduced to their local problem, the rolling-friction one (spacedim 5) has no
# local Coulomb problem and is left out. Each is solved by each method to a residual of $10^{-8}$:
#
# - `nsgs`: nonsmooth Gauss–Seidel with the exact local solve above;
# - `fixed_point`: the fixed point on $s = \mu\|u_T\|$ (Cadoux 2009; Acary et al. 2011): each iteration
#   solves the CCP with $q_n$ shifted by $s_k$, warm-started, by APGD; a fixed point is a Coulomb
#   solution;
# - `ccp apgd`, `ccp pgs`: the CCP relaxation (a different problem, for comparison of effort);
#
# and, when Debian's `python3-siconos` is installed, Siconos' `fc3d_nsgs` and `fc3d_nsn_ac`
# (Alart–Curnier semismooth Newton) on the same $W, q, \mu$, in a subprocess that times the
# solver call itself (when Siconos is missing, or cannot run, the notebook says so and leaves its
# columns out). Every residual below is recomputed by `fc_residual` from the returned $r$.

# %%
DATA = os.path.join("..", "tests", "data", "fclib")
problems = {}
for path in sorted(glob.glob(os.path.join(DATA, "*.hdf5"))):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # Capsules' asymmetric W, M stored as a triangle
        prob = io.read_fclib(path).problem
    if isinstance(prob, io.GlobalProblem):
        if prob.mu_r is not None:
            continue
        prob = prob.to_local()
    problems[os.path.basename(path).split("-i")[0].replace(".hdf5", "")[:20]] = prob
for name, prob in problems.items():
    W = prob.W.toarray()
    print(f"{name:22s} contacts {prob.n_contacts:4d}  mu {np.unique(prob.mu)}  "
          f"asymmetry {np.abs(W - W.T).max() / np.abs(W).max():.0e}")

# %%
TOL = 1e-8
solvers = {
    "nsgs": lambda p: mbdcp.coulomb(p.W, p.q, p.mu, method="nsgs", tol=TOL),
    "fixed_point": lambda p: mbdcp.coulomb(p.W, p.q, p.mu, method="fixed_point", tol=TOL),
    "ccp apgd": lambda p: mbdcp.ccp_local(p.W, p.q, p.mu, method="apgd", tol=TOL),
    "ccp pgs": lambda p: mbdcp.ccp_local(p.W, p.q, p.mu, method="pgs", tol=TOL),
}
results, seconds = {}, {}
for name, prob in problems.items():
    for s, solve in solvers.items():
        t0 = time.perf_counter()
        results[name, s] = solve(prob)
        seconds[name, s] = time.perf_counter() - t0

sys.path.insert(0, os.path.abspath(os.path.join("..", "peers")))
import subprocess  # noqa: E402

from siconos_peer import SICONOS_PYTHON, siconos_available, siconos_fc  # noqa: E402


def siconos_failure(exc):
    """One line saying why the Siconos subprocess failed (the last line of its error output)."""
    err = getattr(exc, "stderr", None) or b""
    lines = (err.decode(errors="replace") if isinstance(err, bytes) else str(err)).strip().splitlines()
    return lines[-1] if lines else f"{type(exc).__name__}: {exc}"


peers = []
if not siconos_available():
    print(f"Siconos is not installed for {SICONOS_PYTHON} (apt-get install python3-siconos): "
          "the comparison with it is skipped, its columns are left out")
else:
    for solver in ("nsgs", "nsn_ac"):
        try:
            out = siconos_fc([(p.W, p.q, p.mu) for p in problems.values()], solver, TOL, 10_000)
        except (subprocess.SubprocessError, OSError) as exc:   # e.g. SciPy missing for that Python
            print(f"Siconos {solver} could not run ({siconos_failure(exc)}): the comparison with it is "
                  "skipped, its column is left out")
            continue
        for (name, prob), o in zip(problems.items(), out):
            results[name, "siconos " + solver] = o
            seconds[name, "siconos " + solver] = o["seconds"]
        peers.append("siconos " + solver)
methods = list(solvers) + peers

residuals = {}
for name, prob in problems.items():
    for s in methods:
        residuals[name, s] = fc_residual(prob.W, prob.q, prob.mu, results[name, s]["r"] if s in peers else results[name, s].r,
                                         coulomb=not s.startswith("ccp"))
print(f"{'problem':22s}" + "".join(f"{s:>16s}" for s in methods))
for name in problems:
    cells = [f"{residuals[name, s]:9.1e} {1e3 * seconds[name, s]:5.0f}ms" for s in methods]
    print(f"{name:22s}" + "".join(f"{c:>16s}" for c in cells))
print("\n(residual, wall time; the CCP columns solve the relaxation, not the Coulomb problem)")

# %% [markdown]
# Gauss–Seidel — ours and Siconos' alike, to the same digits — stalls on `local_problem_test`
# (boxes stacked with μ = 0.7) near $2\cdot10^{-4}$ and on the 256-contact sphere box near
# $10^{-5}$. The fixed point gets through: its inner problems are convex CCPs, which APGD
# solves without stalling, and the shift $s_k$ settles in a few dozen iterations. On
# `LMGC_100_PR_PerioBox` Siconos stops on its own error measure, which there differs from
# FCLib's residual recomputed here. The histories on the stalling problem:

# %%
prob = problems["local_problem_test"]
gs_run = mbdcp.coulomb(prob, method="nsgs", tol=TOL, max_iter=5000)
fp_run = mbdcp.coulomb(prob, method="fixed_point", tol=TOL)
fig, ax = plt.subplots(1, 2, figsize=(11, 3.5))
ax[0].semilogy(gs_run.history)
ax[0].set_title(f"nsgs: {gs_run.status.name} after {gs_run.iterations} sweeps")
ax[0].set_xlabel("sweep")
ax[1].semilogy(np.arange(1, fp_run.iterations + 1), fp_run.history, "o-")
ax[1].set_title(f"fixed point: {fp_run.status.name}, {fp_run.iterations} CCP solves "
                f"({fp_run.inner_iterations} APGD steps)")
ax[1].set_xlabel("fixed-point iteration")
for a in ax:
    a.axhline(TOL, color="k", ls=":", lw=0.8)
    a.set_ylabel("FCLib residual")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Performance profile
#
# The profile of Dolan & Moré (2002) (`mbdcp.study.profile`) of the Coulomb solvers: $\rho_s(\tau)$ is the
# share of problems solver $s$ solves to $10^{-8}$ within $\tau$ times the fastest one's time.
# Siconos' times are those measured in its subprocess (the clock handed to `profile` adds them).

# %%
from mbdcp import study  # noqa: E402


class Clock:
    """perf_counter, plus the time a Siconos run took in its own process."""
    def __init__(self):
        self.extra = 0.0
    def __call__(self):
        return time.perf_counter() + self.extra

clock = Clock()

def replay(label):
    def solve(item):
        name, _ = item
        clock.extra += seconds[name, label]
        return results[name, label]
    return solve

coulomb_solvers = {
    "nsgs": lambda item: mbdcp.coulomb(item[1], method="nsgs", tol=TOL),
    "fixed_point": lambda item: mbdcp.coulomb(item[1], method="fixed_point", tol=TOL),
    **{label: replay(label) for label in peers},
}
prof = study.profile({name: (name, prob) for name, prob in problems.items()}, coulomb_solvers, tol=TOL,
                     residual=lambda item, out: fc_residual(item[1].W, item[1].q, item[1].mu,
                                                            out["r"] if isinstance(out, dict) else out.r),
                     timer=clock, progress=False)
print(prof)
ax = prof.plot()
plt.tight_layout()
plt.show()
