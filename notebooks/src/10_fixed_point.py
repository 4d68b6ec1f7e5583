# %% [markdown]
# # Fixed-point iterations for frictional contact (Anitescu & Hart)
#
# The Stewart–Trinkle / Anitescu–Potra time-stepping LCP (`mbdcp.step`) has a non-monotone
# matrix: its solution set can be non-convex. Interior-point methods work for the frictionless
# problem, but "their applicability to the problem with friction depends on the convexity of the
# solution set", and their efficiency "may be problematic" for any $\mu > 0$ (Anitescu & Hart,
# lecture, slides "Solving the LCP" and "Nonconvex solution set"). Anitescu & Hart (2004) relax
# the LCP into two **convex** problems and iterate between them. (These relaxations are sometimes
# called "Anitescu–Potra", after the LCP of Anitescu & Potra (1997) that they relax; the method
# is Anitescu and Hart's.)
#
# With $M v^{l+1} - W_n p_n - D\beta = M v^l + p_{ext}$ eliminated, the original problem is
#
# $$0 \le p_n \perp W_n^T v^{l+1} + \Psi_n/h \ge 0,\quad
#   0 \le \beta \perp D^T v^{l+1} + E\lambda \ge 0,\quad
#   0 \le \lambda \perp U p_n - E^T\beta \ge 0 .$$
#
# **P1(Γ)** adds $-U\lambda + \Gamma$ to the normal row: the coupling between $(p_n,\beta)$ and
# $\lambda$ becomes skew-symmetric and the LCP monotone. With $\Gamma = U\lambda$ it is the
# original problem.
#
# **P2(λ)** drops the friction-cone row and fixes the sliding speeds $\lambda$: a convex QP.
#
# **Λ(v)**: $\lambda_j = \max_i(-d_i^T v)$ over contact $j$'s directions.
#
# | algorithm | iteration | guarantee |
# |---|---|---|
# | 1 | $v = P_1(\Gamma)$, $\lambda = \Lambda(v)$, $\Gamma = U\lambda$ | linear convergence for small $\mu$, regular configuration |
# | 2 | $v = P_1(\Gamma)$, $\lambda=\Lambda(v)$, $v = P_2(\lambda)$, $\lambda = \Lambda(v)$, $\Gamma = U\lambda$ | same; every iterate non-penetrating and dissipative |
# | 3 | algorithm 2, one pass | exact if no contact is in motion (all contacts at once); $\|v - v^3\| \le L\|U\lambda\|$ where the friction cone is uniformly pointed over the μ considered |
#
# (The guarantees are the slides' "Convergence results for fixed point iterations" and
# "Algorithm 3"; "regular" means the Mangasarian–Fromovitz condition: the configuration can be
# disassembled.)

# %%
import matplotlib.pyplot as plt
import numpy as np

import mbdcp
from mbdcp.testing import disk_pile

np.set_printoptions(precision=4, suppress=True, linewidth=110)
G = 9.81

# %% [markdown]
# ## P1 and P2 written out for a two-contact example
#
# A planar bar (mass 1, length 2, $J = 1/3$) lies on the floor on its two ends and slides to the
# right at 1 m/s while spinning slowly. Velocities $(\dot x, \dot y, \omega)$; each end has one
# normal and two friction directions $(\hat t, -\hat t)$.

# %%
def bar(mu=0.3, v=(1.0, 0.0, 0.2), h=0.05):
    M = np.diag([1.0, 1.0, 1.0 / 3.0])
    ends = [np.array([-1.0, 0.0]), np.array([1.0, 0.0])]

    def col(r, d):
        return np.array([d[0], d[1], r[0] * d[1] - r[1] * d[0]])

    n, t = np.array([0.0, 1.0]), np.array([1.0, 0.0])
    Wn = np.array([col(r, n) for r in ends]).T
    D = np.array([col(r, s * t) for r in ends for s in (1, -1)]).T
    E = np.kron(np.eye(2), np.ones((2, 1)))
    return (M, Wn, D, E, np.full(2, mu), np.array(v), h), dict(p_ext=[0.0, -G * h, 0.0], psi_n=np.zeros(2))

args, kw = bar()
r1 = mbdcp.relax.p1(*args, np.zeros(2), **kw, return_lcp=True)
print("P1(0): unknowns (p_n1, p_n2, beta_1..4, lam_1, lam_2); F =")
print(r1.lcp.F)
print("coupling block (rows p_n, beta; columns lam) = -(transpose of rows lam):",
      np.allclose(r1.lcp.F[:6, 6:], -r1.lcp.F[6:, :6].T))
print("symmetric part positive semidefinite:", np.linalg.eigvalsh(r1.lcp.F + r1.lcp.F.T).min() >= -1e-12)
lam = mbdcp.relax.sliding_speed(args[2], args[3], r1.v_next)
r2 = mbdcp.relax.p2(*args, lam, **kw, return_lcp=True)
print("\nP2(lam) with lam = Lambda(v_P1) =", lam, "; F (symmetric PSD) =")
print(r2.lcp.F)
print("f =", r2.lcp.f)

# %% [markdown]
# P1 with $\Gamma = 0$ lets a sliding contact lift off at $\mu\lambda$ (its normal row reads
# $W_n^Tv \ge \mu\lambda$); P2 restores non-penetration but has no friction bound. The iteration
# settles both:

# %%
ref = mbdcp.step(*args, **kw)
for alg in (1, 2, 3):
    res = mbdcp.fixed_point(*args, **kw, algorithm=alg, tol=1e-12)
    print(f"algorithm {alg}: {res.iterations:2d} iterations, v = {res.v_next}, "
          f"|v - v_lemke| = {np.abs(res.v_next - ref.v_next).max():.1e}")
print("Lemke on the full LCP:       v =", ref.v_next)

# %% [markdown]
# ## Convergence as μ grows
#
# A pile of 12 disks with 30 contacts and random velocities (about 2 m/s): the history
# $\|v_k - v_{k-1}\|_\infty$ decreases geometrically. The rate degrades towards 1 as $\mu$ grows;
# for $\mu = 2$ and 3 the iteration does not reach the tolerance within 300 iterations (the
# result then has `converged == False` and status `MAX_ITERATIONS`).

# %%
mus = [0.05, 0.2, 0.5, 1.0, 2.0, 3.0]
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
rates = {}
for ax, alg in zip(axes, (1, 2)):
    for mu in mus:
        s = disk_pile(12, seed=1, mu=mu, speed=2.0)
        res = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=alg, tol=1e-12, max_iter=300)
        hist = res.history[1:]
        ax.semilogy(np.arange(2, len(hist) + 2), np.maximum(hist, 1e-16),
                    label=f"μ = {mu}" + ("" if res.converged else " (no convergence)"))
        k = np.arange(len(hist))[hist > 1e-13]
        rates[(alg, mu)] = np.exp(np.polyfit(k, np.log(hist[k]), 1)[0]) if len(k) > 2 else np.nan
    ax.set_title(f"algorithm {alg}")
    ax.set_xlabel("iteration k")
    ax.legend(fontsize=8)
axes[0].set_ylabel(r"$\|v_k - v_{k-1}\|_\infty$")
plt.tight_layout()
plt.show()
for (alg, mu), rate in rates.items():
    print(f"algorithm {alg}, mu = {mu}: estimated rate {rate:.3f}")
s = disk_pile(12, seed=1, mu=3.0, speed=2.0)
res = mbdcp.fixed_point(*s.args(), **s.kwargs(), algorithm=1, tol=1e-12, max_iter=300)
print(res.status.name, res.converged, res.iterations)

# %% [markdown]
# Algorithm 2's history can flatten near $10^{-11}$ (μ = 0.2 above) instead of reaching the
# tolerance $10^{-12}$: its P2 subproblems have a singular matrix (opposite friction
# directions give exactly dependent columns) and Lemke's method solves them to about that
# accuracy. With the default `tol=1e-10` such runs converge; a dedicated convex QP solver for
# P2 would remove the floor.

# %% [markdown]
# ## The non-convex solution set
#
# A block at rest on two coincident floor contacts (same normal), the example of Anitescu & Hart
# (lecture), slide "Nonconvex solution set". The points A, B and C below all solve the LCP with
# $v = 0$ (C, friction at the cone's edge squeezing the block, is the slide's second solution);
# the averages of A and B and of A and C do not: (A + B)/2 has $\lambda > 0$ at contacts where
# $\mu p_n - E^T\beta > 0$, and (A + C)/2 violates $\beta_1^{(2)} \perp \lambda^{(2)}$, the
# condition the slide names.
#
# The slide's first solution, "$p_n = mhg/2$ each, $\beta = 0$, $\lambda = 1$", is not one as
# printed: with $v = 0$ and $\beta = 0$ the row $0 \le \lambda \perp \mu p_n - E^T\beta$
# forces $\lambda = 0$ wherever $p_n > 0$ — it is checked below too.

# %%
m, h, mu = 1.0, 0.01, 0.3
M, Wn = np.eye(2), np.array([[0.0, 0.0], [1.0, 1.0]])
D = np.array([[1.0, -1.0, 1.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
E = np.kron(np.eye(2), np.ones((2, 1)))
U, p_ext, mhg = np.array([mu, mu]), np.array([0.0, -G * h]), m * G * h

def violations(p_n, beta, lam, v=np.zeros(2)):
    rows = {"momentum": M @ v - Wn @ p_n - D @ beta - p_ext,
            "p_n * (Wn^T v)": p_n * (Wn.T @ v),
            "beta * (D^T v + E lam)": beta * (D.T @ v + E @ lam),
            "lam * (mu p_n - E^T beta)": lam * (U * p_n - E.T @ beta)}
    return {k: float(np.abs(r).max()) for k, r in rows.items()}

A = (np.array([mhg, 0.0]), np.zeros(4), np.array([0.0, 1.0]))
B = (np.array([0.0, mhg]), np.zeros(4), np.array([1.0, 0.0]))
C = (np.array([mhg, mhg]) / 2, np.array([0.0, mu * mhg / 2, mu * mhg / 2, 0.0]), np.zeros(2))


def mean(s, t):
    return tuple((a + b) / 2 for a, b in zip(s, t))


printed = (np.array([mhg, mhg]) / 2, np.zeros(4), np.ones(2))
for name, sol in [("A", A), ("B", B), ("C (squeeze)", C), ("(A + B)/2", mean(A, B)), ("(A + C)/2", mean(A, C)),
                  ("slide's 1st", printed)]:
    print(f"{name:12s}", {k: f"{x:.2e}" for k, x in violations(*sol).items()})

# %% [markdown]
# ## Algorithm 3: error against μ
#
# One pass of algorithm 2 is exact when no contact is in motion, and its error is bounded by
# $L\|U\lambda\|$ where $\mu$ ranges over a set on which the friction cone is uniformly pointed
# (the slides' condition; not a bound in general). On the sliding bar the measured error falls at
# least linearly as $\mu \to 0$ (here faster: about $\mu^2$, because the lift-off of P1 changes
# the normal impulse by $O(\mu)$ and friction by $O(\mu^2)$).

# %%
mus = np.geomspace(0.01, 1.0, 12)
errors = []
for mu in mus:
    args, kw = bar(mu=mu, v=(1.0, 0.0, 0.5))
    ref = mbdcp.step(*args, **kw).v_next
    errors.append(np.abs(mbdcp.fixed_point(*args, **kw, algorithm=3).v_next - ref).max())
errors = np.array(errors)
slope = np.polyfit(np.log(mus[:6]), np.log(errors[:6]), 1)[0]
plt.figure(figsize=(5, 3.6))
plt.loglog(mus, errors, "o-", label="algorithm 3")
plt.loglog(mus, errors[0] * (mus / mus[0]), "k:", label="slope 1")
plt.xlabel("μ")
plt.ylabel(r"$\|v^3 - v_{LCP}\|_\infty$")
plt.legend()
plt.title(f"small-μ slope ≈ {slope:.2f}")
plt.tight_layout()
plt.show()
args, kw = bar(mu=0.5, v=(0.0, 0.0, 0.0))
kw["p_ext"] = [0.1 * 0.05, -G * 0.05, 0.0]  # a push well inside the cone: nothing slides
print("sticking bar, algorithm 3 vs Lemke:",
      np.abs(mbdcp.fixed_point(*args, **kw, algorithm=3).v_next - mbdcp.step(*args, **kw).v_next).max())
