# %% [markdown]
# # Gradients in JAX and PyTorch: fitting friction and mass by gradient descent
#
# `mbdcp.jax` and `mbdcp.torch` turn the contact solvers into differentiable functions of the
# two frameworks: `step`, `ccp` and `lcp` solve with the C core and differentiate the verified
# solution exactly (the implicit function theorem on its active set, `mbdcp.derivatives`). A loop
# over `step` is then a differentiable simulator, and a loss written in JAX or PyTorch gets exact
# gradients through the whole trajectory, contact geometry included.
#
# The notebook [11_identification](11_identification.ipynb) fits the same kind of parameters
# with NumPy, chaining `jvp`s by hand and calling `scipy.optimize.least_squares`. Here the
# frameworks do the chaining: we write the simulation once, as ordinary JAX or PyTorch code, and
# fit the friction coefficient $\mu$ and the mass $m$ of a box from a noisy measured trajectory
# by gradient descent (optax's Adam in JAX when optax is installed, `torch.optim.Adam` in
# PyTorch).
#
# **The scene.** A planar box (half extents 0.4 × 0.15 m) stands on the floor on its two bottom
# corners. A known push $F_k = 6 + 0.3k$ N acts 0.3 m above its centre. Configuration
# $q = (x, y, \theta)$, velocity $v = (\dot x, \dot y, \omega)$, $M = \mathrm{diag}(m, m, J)$
# with $J = m(w^2 + \ell^2)/12$. Corner $i$ sits at $r_i = R(\theta)b_i$ from the centre; its
# gap is $\psi_i = y + r_{i,y}$, its normal column $(0, 1, r_{i,x})$ and its friction columns
# $\pm(1, 0, -r_{i,y})$: all functions of $q$, written in the framework, so the gradient also
# flows through the geometry. Each step is the Stewart–Trinkle LCP (Trinkle (2003)):
#
# $$v_{k+1} = \mathrm{step}(M(m), W_n(q_k), D(q_k), \mu, v_k, h;\ p_{ext}(m, F_k), \psi(q_k)),\qquad
#   q_{k+1} = q_k + h\,v_{k+1}.$$
#
# The box slides on both corners, then tips onto its front corner: the trajectory depends on
# $\mu$ (the friction decelerates it and tips it) and on $m$ (the push is a known force).

# %%
import os

# the systems of each step are tiny (3 velocities): BLAS threads only add wake-up latency
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import time
import warnings

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch

jax.config.update("jax_enable_x64", True)  # mbdcp.jax computes in float64
import mbdcp.jax
import mbdcp.torch

G, H, STEPS = 9.81, 0.01, 50
HALF = np.array([0.4, 0.15])
CORNERS = np.array([[-HALF[0], -HALF[1]], [HALF[0], -HALF[1]]])
E = np.kron(np.eye(2), np.ones((2, 1)))  # two friction directions per corner
PUSH = 6.0 + 0.3 * np.arange(STEPS)  # N, known
LEVER = 0.3  # the push acts this far above the centre
Q0 = np.array([0.0, HALF[1], 0.0])  # at rest on the floor
INERTIA = ((2 * HALF) ** 2).sum() / 12  # J / m


def rollout_jax(mu, m):
    """Configurations q_0..q_STEPS (STEPS + 1, 3) of the box, in JAX."""
    M = jnp.diag(jnp.stack([m, m, m * INERTIA]))
    q, v = jnp.asarray(Q0), jnp.zeros(3)
    qs = [q]
    for k in range(STEPS):
        c, s = jnp.cos(q[2]), jnp.sin(q[2])
        rx = CORNERS[:, 0] * c - CORNERS[:, 1] * s
        ry = CORNERS[:, 0] * s + CORNERS[:, 1] * c
        Wn = jnp.stack([jnp.zeros(2), jnp.ones(2), rx])
        t = jnp.stack([jnp.ones(2), jnp.zeros(2), -ry])
        D = jnp.stack([t[:, 0], -t[:, 0], t[:, 1], -t[:, 1]], axis=1)
        p_ext = H * jnp.stack([PUSH[k], -m * G, -LEVER * PUSH[k]])
        v = mbdcp.jax.step(M, Wn, D, E, mu, v, H, p_ext=p_ext, psi_n=q[1] + ry)
        q = q + H * v
        qs.append(q)
    return jnp.stack(qs)


MU_TRUE, M_TRUE = 0.3, 1.2
SIGMA = np.array([0.002, 0.002, 0.005])  # measurement noise: 2 mm, 2 mm, 0.005 rad
truth = np.asarray(rollout_jax(MU_TRUE, M_TRUE))
measured = truth + SIGMA * np.random.default_rng(15).standard_normal(truth.shape)
times = H * np.arange(STEPS + 1)

fig, ax = plt.subplots(1, 2, figsize=(13, 3.4))
for k in range(0, STEPS + 1, 5):
    x, y, th = truth[k]
    R = np.array([[np.cos(th), np.sin(th)], [-np.sin(th), np.cos(th)]])
    pts = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]]) * HALF @ R + [x, y]
    ax[0].plot(pts[:, 0], pts[:, 1], color=plt.cm.viridis(k / STEPS), lw=1)
ax[0].axhline(0, color="k", lw=0.8)
ax[0].set_aspect("equal")
ax[0].set_title("the box every 0.05 s (dark: early)")
for i, name in enumerate(["x [m]", "y [m]", r"$\theta$ [rad]"]):
    ax[1].plot(times, measured[:, i], ".", ms=3, label=f"{name} measured")
    ax[1].plot(times, truth[:, i], "k", lw=0.8)
ax[1].set_xlabel("t [s]")
ax[1].legend(ncol=3, fontsize=8)
ax[1].set_title("measured (dots) and true (lines) trajectory")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The loss and its gradient in JAX
#
# The loss is the mean squared residual, each coordinate divided by its noise level. The
# parameters are optimised in logarithms, $p = (\log\mu, \log m)$, so that both stay positive
# and have comparable scales. `jax.jit(jax.value_and_grad(loss))` compiles the whole rollout
# and its reverse pass: each step's solve and each step's vector-Jacobian product is a host
# callback into mbdcp. The gradient is checked against central differences of the loss.
#
# At the start ($\mu = 0.6$, $m = 2$) the push is too weak to move the box for the first steps:
# both corners stick, and how the friction splits between them is not unique. Lemke's solution is
# a vertex that puts one corner exactly at the edge of its friction cone, a degenerate point: the
# gradient there is that of the sticking piece (the box stays at rest for small changes), and a
# `DegenerateWarning` names the corner. Below, such warnings are collected and counted.

# %%
def loss_jax(p):
    traj = rollout_jax(jnp.exp(p[0]), jnp.exp(p[1]))
    return jnp.mean(((traj - measured) / SIGMA) ** 2)


value_and_grad = jax.jit(jax.value_and_grad(loss_jax))
p0 = np.log([0.6, 2.0])  # the start: mu = 0.6, m = 2
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", mbdcp.jax.DegenerateWarning)
    t0 = time.perf_counter()
    f0, g0 = value_and_grad(p0)
    t1 = time.perf_counter()
    f0, g0 = value_and_grad(p0)
    t2 = time.perf_counter()
print(f"{len(caught)} warnings, e.g. {caught[0].message}" if caught else "no degenerate point")
eps = 1e-6
fd = [(loss_jax(p0 + eps * e) - loss_jax(p0 - eps * e)) / (2 * eps) for e in np.eye(2)]
print(f"loss {float(f0):.3f}, gradient {np.asarray(g0)}, central differences {np.asarray(fd)}")
print(f"compile + first call {t1 - t0:.2f} s, then {1e3 * (t2 - t1):.1f} ms per loss and gradient "
      f"({STEPS} steps forward and back)")

# %% [markdown]
# ## Gradient descent in JAX
#
# Adam (optax) for 300 iterations with step 0.1 in the log-parameters; without optax, the same
# Adam update written out.


# %%
try:
    import optax
except ImportError:
    optax = None


def adam_jax(p, steps=300, lr=0.1):
    history = []
    if optax is not None:
        opt = optax.adam(lr)
        state = opt.init(p)
    else:
        m1, m2 = np.zeros_like(p), np.zeros_like(p)
    for i in range(steps):
        f, g = value_and_grad(p)
        history.append(float(f))
        if optax is not None:
            updates, state = opt.update(g, state)
            p = optax.apply_updates(p, updates)
        else:  # Adam by hand (Kingma & Ba 2015)
            m1 = 0.9 * m1 + 0.1 * np.asarray(g)
            m2 = 0.999 * m2 + 0.001 * np.asarray(g) ** 2
            p = p - lr * (m1 / (1 - 0.9 ** (i + 1))) / (np.sqrt(m2 / (1 - 0.999 ** (i + 1))) + 1e-8)
    return np.asarray(p), history


t0 = time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", mbdcp.jax.DegenerateWarning)
    p_jax, hist_jax = adam_jax(jnp.asarray(p0))
print(f"JAX ({'optax' if optax else 'plain'} Adam): mu = {np.exp(p_jax[0]):.4f}, m = {np.exp(p_jax[1]):.4f}, "
      f"final loss {hist_jax[-1]:.3f} ({time.perf_counter() - t0:.1f} s); true mu = {MU_TRUE}, m = {M_TRUE}")
print(f"{len(caught)} DegenerateWarnings over the 300 iterations (steps where a corner sat at a kink)")

# %% [markdown]
# ## The same in PyTorch
#
# `mbdcp.torch.step` is a `torch.autograd.Function`: the rollout is ordinary PyTorch code on
# float64 tensors, `loss.backward()` runs the reverse pass, and `torch.optim.Adam` updates the
# parameters. The first gradient equals JAX's.

# %%
F64 = torch.float64
CORNERS_T = torch.tensor(CORNERS, dtype=F64)
measured_t, sigma_t = torch.tensor(measured, dtype=F64), torch.tensor(SIGMA, dtype=F64)


def rollout_torch(mu, m):
    M = torch.diag(torch.stack([m, m, m * INERTIA]))
    q, v = torch.tensor(Q0, dtype=F64), torch.zeros(3, dtype=F64)
    zeros, ones = torch.zeros(2, dtype=F64), torch.ones(2, dtype=F64)
    qs = [q]
    for k in range(STEPS):
        c, s = torch.cos(q[2]), torch.sin(q[2])
        rx = CORNERS_T[:, 0] * c - CORNERS_T[:, 1] * s
        ry = CORNERS_T[:, 0] * s + CORNERS_T[:, 1] * c
        Wn = torch.stack([zeros, ones, rx])
        t = torch.stack([ones, zeros, -ry])
        D = torch.stack([t[:, 0], -t[:, 0], t[:, 1], -t[:, 1]], dim=1)
        push = torch.tensor(PUSH[k], dtype=F64)
        p_ext = H * torch.stack([push, -m * G, -LEVER * push])
        v = mbdcp.torch.step(M, Wn, D, E, mu, v, H, p_ext=p_ext, psi_n=q[1] + ry)
        q = q + H * v
        qs.append(q)
    return torch.stack(qs)


def loss_torch(p):
    traj = rollout_torch(torch.exp(p[0]), torch.exp(p[1]))
    return torch.mean(((traj - measured_t) / sigma_t) ** 2)


warnings.simplefilter("ignore", mbdcp.torch.DegenerateWarning)  # counted above for JAX: the same points
p = torch.tensor(p0, dtype=F64, requires_grad=True)
loss_torch(p).backward()
print("first gradient: PyTorch", p.grad.numpy(), " JAX", np.asarray(g0))

p = torch.tensor(p0, dtype=F64, requires_grad=True)
opt = torch.optim.Adam([p], lr=0.1)
hist_torch = []
t0 = time.perf_counter()
for i in range(300):
    opt.zero_grad()
    loss = loss_torch(p)
    loss.backward()
    opt.step()
    hist_torch.append(loss.item())
p_torch = p.detach().numpy()
print(f"PyTorch (torch.optim.Adam): mu = {np.exp(p_torch[0]):.4f}, m = {np.exp(p_torch[1]):.4f}, "
      f"final loss {hist_torch[-1]:.3f} ({time.perf_counter() - t0:.1f} s)")

# %% [markdown]
# ## Results
#
# Both fits follow the same path (the same gradients, the same optimiser) and end near the
# true values. With this noise the loss at the true parameters is about 1 (each residual is one
# standard deviation on average); the fits reach it. The valley is long and narrow: friction
# decelerates the box by $\mu g$ and the push accelerates it by $F/m$, so $\mu$ and $m$ trade
# against each other, and only the tipping separates them.

# %%
fitted = np.asarray(rollout_jax(*np.exp(p_jax)))
fitted_t = rollout_torch(*torch.exp(torch.tensor(p_torch, dtype=F64))).detach().numpy()
start = np.asarray(rollout_jax(*np.exp(p0)))
print(f"loss at the true parameters: {float(loss_jax(np.log([MU_TRUE, M_TRUE]))):.3f}")
fig, ax = plt.subplots(1, 3, figsize=(14, 3.6))
ax[0].semilogy(hist_jax, label="JAX + optax" if optax else "JAX")
ax[0].semilogy(hist_torch, "--", label="PyTorch")
ax[0].set_xlabel("iteration")
ax[0].set_title("loss")
ax[0].legend()
for i, (name, a) in enumerate([("x [m]", ax[1]), (r"$\theta$ [rad]", ax[2])]):
    j = 0 if i == 0 else 2
    a.plot(times, measured[:, j], "k.", ms=3, label="measured")
    a.plot(times, start[:, j], color="0.6", label=r"start ($\mu$ = 0.6, m = 2)")
    a.plot(times, fitted[:, j], lw=2, label="fitted (JAX)")
    a.plot(times, fitted_t[:, j], "--", lw=1.5, label="fitted (PyTorch)")
    a.set_xlabel("t [s]")
    a.set_title(name)
ax[2].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## The loss along μ, with `jax.vmap`
#
# `jax.vmap` maps the rollout over a grid of $\mu$: each time step is then one call of
# `mbdcp.batch.step` for the whole grid. With the mass at its fitted value, the loss and its
# exact slope along $\mu$. The landscape is piecewise smooth: where the step at which the box
# tips changes, it has kinks. There a gradient is the derivative on the side documented in
# `mbdcp.derivatives`, and a solution exactly at a kink (a grazing corner, a corner exactly at
# the edge of its friction cone) raises a `DegenerateWarning` naming the contact.

# %%
mus = np.linspace(0.1, 0.6, 41)


def loss_mu(mu):
    return loss_jax(jnp.stack([jnp.log(mu), p_jax[1]]))


t0 = time.perf_counter()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", mbdcp.jax.DegenerateWarning)
    losses, slopes = jax.jit(jax.vmap(jax.value_and_grad(loss_mu)))(mus)
print(f"{mus.size} losses and slopes in {time.perf_counter() - t0:.1f} s (compile included); "
      f"{len(caught)} degenerate-point warnings")
fig, ax = plt.subplots(figsize=(7, 3.6))
ax.semilogy(mus, losses, lw=1.5, label="loss")
for i in range(0, mus.size, 5):
    span = np.linspace(mus[i] - 0.02, mus[i] + 0.02, 5)
    ax.semilogy(span, losses[i] * np.exp(slopes[i] / losses[i] * (span - mus[i])), "r-", lw=1)
ax.axvline(MU_TRUE, color="k", ls=":", label=r"true $\mu$")
ax.set_xlabel(r"$\mu$")
ax.set_title(r"loss along $\mu$ (exact tangents in red)")
ax.legend()
plt.tight_layout()
plt.show()
