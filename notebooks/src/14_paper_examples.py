# %% [markdown]
# # The papers' remaining examples: Euler, parts seating, joints, belts
#
# Examples and forms of the source papers that the other notebooks do not show:
#
# 1. explicit against semi-implicit Euler (Trinkle (notes, 2003), p. 3);
# 2. frictionless parts seating and the point pushed into a corner (Trinkle (notes, 2003),
#    pp. 29–30), with the notes' inequality on the applied impulse shown to be necessary but not
#    sufficient;
# 3. bilateral joints and joint friction in the instantaneous model (Trinkle 2003, eqs. 19 and 23);
# 4. a bead on a wire, a slider with dry joint friction (Trinkle 2003, eqs. 16 and 38) and a box on
#    a conveyor belt, time-stepped with `mbdcp.step` (Trinkle (notes, 2003), pp. 21–22);
# 5. the conveyor belt in the cone complementarity problem, `mbdcp.ccp(..., dpsi_t=...)`;
# 6. the full-rank model at acceleration level (Peiret et al., eq. 8);
# 7. the stabilisation term without a bounce; 8. joints in scenes and redundant constraints.
#
# Every section compares with the numbers printed in the source or with a closed form. The
# formulations are stated, with their sources, in the documentation's Formulations section.

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy.special import ellipk

import mbdcp
from mbdcp import examples as ex

G = 9.81
np.set_printoptions(precision=4, suppress=True)
NO_CONTACTS = (np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((0, 0)), np.zeros(0))

# %% [markdown]
# ## 1. Explicit against semi-implicit Euler (Trinkle (notes, 2003), p. 3)
#
# For $\dot v = F/m$, $\dot q = v$ the notes compare
#
# * explicit Euler, $v^{l+1} = v^l + hF/m$, $q^{l+1} = q^l + hv^l$ — "delayed response";
# * semi-implicit Euler, $q^{l+1} = q^l + hv^{l+1}$ — "extra fast response", the scheme of every
#   time-stepping method here ($q^{l+1} - q^l = hGv^{l+1}$, Trinkle 2003, eq. 26).
#
# `euler_table` computes the semi-implicit column with `mbdcp.step` (a step without contacts).
# With $F = m = h = 1$ from rest the notes print $q = 0, 0, 1, 3$ and $q = 0, 1, 3, 6$.

# %%
tab = ex.euler_table()
notes = {"q explicit": [0, 0, 1, 3], "v explicit": [0, 1, 2, 3], "q semi-implicit": [0, 1, 3, 6], "v semi-implicit": [0, 1, 2, 3]}
ours = {"q explicit": tab.q_explicit, "v explicit": tab.v_explicit, "q semi-implicit": tab.q_semi_implicit,
        "v semi-implicit": tab.v_semi_implicit}
print(f"{'column':>16}  {'notes, p. 3':>14}  {'mbdcp':>18}")
for name, printed in notes.items():
    print(f"{name:>16}  {printed!s:>14}  {ours[name].tolist()!s:>18}")
    assert ours[name].tolist() == printed
print("exact q = t^2/2:", tab.q_exact.tolist(), "= mean of the two columns")

# %%
fine = ex.euler_table(steps=30, h=0.1)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(fine.t, fine.q_exact, "k-", label="exact $t^2/2$")
ax.plot(fine.t, fine.q_explicit, "o", ms=3, label="explicit (delayed)")
ax.plot(fine.t, fine.q_semi_implicit, "s", ms=3, label="semi-implicit (extra fast)")
ax.set_xlabel("t")
ax.set_ylabel("q")
ax.legend()
ax.set_title("constant force, h = 0.1")
plt.show()
print("position error at t = 3:", fine.q_explicit[-1] - fine.q_exact[-1], fine.q_semi_implicit[-1] - fine.q_exact[-1],
      "(= -+ F h t / 2m: first order)")

# %% [markdown]
# ## 2. Frictionless parts seating (Trinkle (notes, 2003), pp. 29–30)
#
# *Determine the impulse to apply to cause contact at all three points.* A planar part,
# $v = (v_x, v_y, \omega)$, $M = I$, at rest, $h = 1$, touches a wall (contact 1) and a floor
# at two points (contacts 2, 3; the third with unit moment arm):
# $$W_n = \begin{bmatrix} 1&0&0\\0&1&1\\0&0&1\end{bmatrix}.$$
# Closing every contact in one step ($\rho_n = W_n^Tv^{l+1} + \Psi_n/h = 0$) needs
# $$p_n = -W_n^{-1}p_{ext} - W_n^{-1}W_n^{-T}\Psi_n \ge 0,$$
# the exact condition. The notes multiply by $W_n$ and obtain the polytope
# $$p_{ext} \le \begin{bmatrix}-\Psi_{1n}\\-\Psi_{2n}\\ \Psi_{2n} - \Psi_{3n}\end{bmatrix}.$$
# Multiplying by $W_n \ge 0$ keeps the inequality, but the way back needs $W_n^{-1} \ge 0$, which
# fails here ($W_n^{-1}$ has a $-1$): the polytope is **necessary, not sufficient**.

# %%
psi = np.array([1.0, 1.0, 1.0])
res = ex.parts_seating([-1.0, -1.0, -1.0], psi)
print("notes' bound on p_ext   :", res.seed_bound + 0.0, " p_ext = [-1 -1 -1] satisfies it:", res.seed_inequality)
print("p_n needed to close all :", res.p_n_required + 0.0, " (contact 2 would have to pull)")
print("mbdcp.step: p_n =", res.p_n, " gaps after the step =", res.gaps_after, " seated:", res.seated)
good = ex.parts_seating([-2.0, -2.0, -1.0], psi)
print("p_ext = [-2 -2 -1]: p_n =", good.p_n, " gaps after =", good.gaps_after, " seated:", good.seated)

# %% [markdown]
# The slice $p_x = -2$ of the $p_{ext}$ space, for gaps $\Psi_n = (1, 1, 1)$: each point is one
# `mbdcp.step`; the notes' polytope is the lower-left quadrant $p_y \le -1$, $p_z \le 0$. The part
# seats only in the wedge above the diagonal, $p_z \ge p_y + 1$ (that is $p_{n,2} \ge 0$): pushed
# with a more negative moment it tilts, and contact 2 stays open.

# %%
py, pz = np.meshgrid(np.linspace(-4, 1, 61), np.linspace(-4, 2, 61))
seated = np.zeros(py.shape, dtype=bool)
for idx in np.ndindex(py.shape):
    seated[idx] = ex.parts_seating([-2.0, py[idx], pz[idx]], psi).seated
fig, ax = plt.subplots(figsize=(5.5, 4.5))
ax.scatter(py[seated], pz[seated], s=6, c="tab:green", label="seated (mbdcp.step)")
ax.scatter(py[~seated], pz[~seated], s=6, c="lightgray", label="not seated")
ax.plot([-1, -1, -4], [-4, 0, 0], "r-", lw=2, label="notes' bound $p_{ext} \\leq b$")
ax.plot([-4, -1], [-3, 0], "b--", lw=2, label="exact: $p_{n,2} = 0$")
ax.set_xlabel("$p_y$")
ax.set_ylabel("$p_z$ (moment)")
ax.legend(loc="upper right", fontsize=8)
ax.set_title("parts seating, $p_x = -2$, $\\Psi_n = (1,1,1)$")
plt.show()
inside = (py <= -1) & (pz <= 0)
print(f"grid points inside the notes' bound: {inside.sum()}, of which seated: {(inside & seated).sum()}; "
      f"seated outside it: {(seated & ~inside).sum()}")

# %% [markdown]
# **The point pushed into a corner** ($W_n = M = I$): the bound
# $p_{ext} \le (-\psi_{1n}/h, -\psi_{2n}/h)$ is then exact, because $W_n^{-1} = I \ge 0$.

# %%
rng = np.random.default_rng(0)
agree = 0
for _ in range(500):
    gaps, p = rng.uniform(0.1, 2, 2), rng.uniform(-4, 1, 2)
    r = ex.parts_seating(p, gaps, Wn=np.eye(2), h=0.5)
    agree += r.seed_inequality == r.seated
print(f"corner: the notes' inequality decides seating in {agree} of 500 random pushes")

# %% [markdown]
# ## 3. Joints in the instantaneous model (Trinkle 2003, eqs. 19, 23)
#
# A bilateral joint $\Theta(q) = 0$ adds a free force $W_bc_b$ and the acceleration-level equation
# $W_b^Ta + k_b = 0$ with $k_b = \dot W_b^Tv + \dots$ (eq. 19). `mbdcp.instantaneous(..., Wb=, dWb_v=)`
# eliminates it with $S = W_b^TM^{-1}W_b$. A pendulum bob pinned at distance $l$:
# $W_b = q/l$, $k_b = |v|^2/l$; the rod pulls with $m(g\cos\theta + \omega^2 l)$.

# %%
m, length, w = 1.0, 1.5, 2.0
thetas = np.linspace(-np.pi, np.pi, 73)
tension = []
for th in thetas:
    q = length * np.array([np.sin(th), -np.cos(th)])
    v = w * length * np.array([np.cos(th), np.sin(th)])
    r = mbdcp.instantaneous(m * np.eye(2), *NO_CONTACTS, v, [0.0, -m * G], Wb=(q / length)[:, None], dWb_v=[v @ v / length])
    tension.append(-r.c_b[0])
closed = m * (G * np.cos(thetas) + w * w * length)
print("max |tension - m(g cos(th) + w^2 l)| =", np.abs(np.array(tension) - closed).max())

# %% [markdown]
# Joint dry friction (eqs. 16, 18, 23): a block on a horizontal rail ($W_b = e_y$) with friction of
# at most $c_{max}$ along the rail. At rest it stays while $|F| \le c_{max}$ (the acceleration-level
# law of eq. 23 picks $a = 0$), otherwise it accelerates at $(F - c_{max}\,\mathrm{sign}F)/m$;
# sliding, friction is $c_{max}$ against the motion.

# %%
forces = np.linspace(-5, 5, 101)
rail = {"Wb": [[0.0], [1.0]], "Dj": [[1.0, -1.0], [0.0, 0.0]], "Ej": [[1.0], [1.0]], "beta_max": [2.0]}
acc_rest = [mbdcp.instantaneous(np.eye(2), *NO_CONTACTS, [0.0, 0.0], [F, -G], **rail).a[0] for F in forces]
acc_moving = [mbdcp.instantaneous(np.eye(2), *NO_CONTACTS, [0.3, 0.0], [F, -G], **rail).a[0] for F in forces]
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
axes[0].plot(thetas, closed, "k-", label="$m(g\\cos\\theta + \\omega^2 l)$")
axes[0].plot(thetas, tension, "o", ms=3, label="$-c_b$, instantaneous")
axes[0].set_xlabel("$\\theta$")
axes[0].set_ylabel("rod tension")
axes[0].legend(fontsize=8)
axes[1].plot(forces, acc_rest, label="at rest")
axes[1].plot(forces, acc_moving, "--", label="sliding at +0.3")
axes[1].set_xlabel("applied force F")
axes[1].set_ylabel("acceleration")
axes[1].legend(fontsize=8)
axes[1].set_title("rail with $c_{max} = 2$")
plt.tight_layout()
plt.show()
expected_rest = np.where(np.abs(forces) <= 2.0, 0.0, forces - 2.0 * np.sign(forces))
print("max deviation from the closed forms:", np.abs(acc_rest - expected_rest).max(),
      np.abs(np.array(acc_moving) - (forces - 2.0)).max())

# %% [markdown]
# ## 4. Wire, joint friction and conveyor belt with `mbdcp.step`
#
# **A bead on a circular wire** (Trinkle (notes, 2003), p. 22: "$\Theta(q,t) = 0$, e.g. a particle moves on a
# wire"): $\Theta = |q| - l$, $W_b = q/|q|$, and $\Theta/h$ in the step removes the drift. It is a
# pendulum: its period is $4\sqrt{l/g}\,K(\sin^2(\theta_0/2))$ for any amplitude, and the wire pulls
# with $mg(3 - 2\cos\theta_0)$ at the bottom.

# %%
th0, h = 0.5, 1e-3
bead = ex.bead_on_wire(theta0=th0, h=h, T=3.0)
x = bead.q[:, 0]
down = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))
crossings = bead.t[down] + x[down] / (x[down] - x[down + 1]) * h
print("period: step", np.diff(crossings)[0], " exact", 4 * np.sqrt(1 / G) * ellipk(np.sin(th0 / 2) ** 2))
print("pull at the bottom: step", -bead.impulses[down[0], 0] / h, " exact", G * (3 - 2 * np.cos(th0)))
print("largest distance from the wire:", np.abs(np.linalg.norm(bead.q, axis=1) - 1).max())

# %% [markdown]
# **A slider with dry joint friction** ($D_j = [e_x, -e_x]$, $\beta_{max} = hc_{max}$): pushed with
# $F = 3 > c_{max} = 2$ it accelerates at $(F - c_{max})/m$; launched at 1 m/s without a push it
# stops after $mv_0/c_{max}$ and then sticks; pushed with $F = 1.5 < c_{max}$ it never moves.
#
# **A box on a conveyor belt** (Trinkle (notes, 2003), p. 21: the moving surface enters only the LCP's vector,
# $\partial_t\Psi_f = -D^T(Ve_x)$): dropped at rest on a belt at $V = 1$ m/s it accelerates at
# $\mu g$ until it moves with the belt.

# %%
slide = ex.slider_with_joint_friction(3.0, 2.0, T=1.0)
stop = ex.slider_with_joint_friction(0.0, 2.0, v0=1.0, T=1.0)
stick = ex.slider_with_joint_friction(1.5, 2.0, T=1.0)
belt = ex.box_on_belt(belt_speed=1.0, mu=0.3, T=0.6)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.5))
axes[0].plot(bead.t, np.arctan2(bead.q[:, 0], -bead.q[:, 1]))
axes[0].set_xlabel("t")
axes[0].set_ylabel("angle on the wire")
axes[0].set_title("bead on a circular wire")
for traj, label, exact in [(slide, "F = 3", slide.t), (stop, "F = 0, v0 = 1", np.maximum(1 - 2 * stop.t, 0)),
                           (stick, "F = 1.5", 0 * stick.t)]:
    axes[1].plot(traj.t, traj.v[:, 0], "o", ms=2, label=label)
    axes[1].plot(traj.t, exact, "k-", lw=0.8)
axes[1].set_xlabel("t")
axes[1].set_ylabel("$v_x$")
axes[1].legend(fontsize=8)
axes[1].set_title("slider, $c_{max} = 2$")
axes[2].plot(belt.t, belt.v[:, 0], "o", ms=2, label="mbdcp.step")
axes[2].plot(belt.t, np.minimum(0.3 * G * belt.t, 1.0), "k-", lw=0.8, label="$\\min(\\mu g t, V)$")
axes[2].set_xlabel("t")
axes[2].set_ylabel("$v_x$")
axes[2].legend(fontsize=8)
axes[2].set_title("box on a belt")
plt.tight_layout()
plt.show()
print("largest deviations from the closed forms:", np.abs(slide.v[:, 0] - slide.t).max(),
      np.abs(stop.v[:, 0] - np.maximum(1 - 2 * stop.t, 0)).max(), np.abs(stick.v).max(),
      np.abs(belt.v[:, 0] - np.minimum(0.3 * G * belt.t, 1.0)).max())

# %% [markdown]
# ## 5. The conveyor belt in the cone complementarity problem
#
# `mbdcp.ccp(..., dpsi_t=...)` adds, per contact, the surface term $\partial_t\Phi_t$ to the
# tangential velocity, as `dpsi_f` does for `mbdcp.step`; a belt moving at $V$ along $u$ has
# `dpsi_t = (-V, 0)`. The CCP's relaxed cone makes a sliding contact separate at $\mu$ times the
# sliding speed (the artifact discussed by Negrut, Serban & Tasora 2018 after their eq. 6), so
# the box hops first; it still ends moving with the belt.

# %%
V, h, mu = 1.0, 0.01, 0.3
M3, Wn3, Wt3 = np.eye(3), [[0.0], [0.0], [1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
v, z, rows = np.zeros(3), 0.0, []
for l in range(60):
    r = mbdcp.ccp(M3, Wn3, Wt3, mu, v, h, p_ext=[0, 0, -G * h], psi_n=[z], dpsi_t=[[-V, 0.0]], tol=1e-12)
    v = r.v_next
    z += h * v[2]
    rows.append((h * (l + 1), v[0], z))
rows = np.array(rows)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(rows[:, 0], rows[:, 1], label="$v_x$ (CCP)")
ax.plot(rows[:, 0], 100 * rows[:, 2], label="height x 100")
ax.axhline(V, color="k", lw=0.8, ls=":")
ax.set_xlabel("t")
ax.legend()
ax.set_title("box on a belt, mbdcp.ccp")
plt.show()
print("final velocity", v, " (belt speed", V, ")")

# %% [markdown]
# ## 6. The full-rank model at acceleration level (Peiret et al., eq. 8)
#
# `mbdcp.full_rank_acceleration` solves eq. 8 of Peiret et al. — unknowns $(\dot v, \lambda_t, \lambda_n,
# \kappa_+, \kappa_-)$ with the velocity-product terms $\dot J_t v$, $\dot J_n v$ — by eliminating
# $\dot v$ and $\lambda_t$. A particle released on a 30° incline: it sticks while $\mu \ge \tan 30°$,
# otherwise starts down at $g(\sin 30° - \mu\cos 30°)$, whatever the number of directions and the
# phantom inertia. A particle sliding along the inside of a vertical ring needs the $\dot J_n v =
# -u^2/R$ term: the ring pushes with $m(g\cos\theta + u^2/R)$.

# %%
alpha = np.radians(30)
n = np.array([-np.sin(alpha), 0.0, np.cos(alpha)])
u = np.array([np.cos(alpha), 0.0, np.sin(alpha)])
Wn_i, Wt_i = n[:, None], np.array([u, [0.0, 1.0, 0.0]]).T
for mu in (0.3, 0.5, 0.6):
    for n_d in (2, 5):
        r = mbdcp.full_rank_acceleration(np.eye(3), Wn_i, Wt_i, mu, np.zeros(3), [0.0, 0.0, -G], n_d=n_d)
        print(f"mu = {mu}, n_d = {n_d}: down-slope acceleration {-r.a @ u:.6f}, "
              f"closed form {max(G * (np.sin(alpha) - mu * np.cos(alpha)), 0):.6f}")
R, speed = 0.5, 2.0
r = mbdcp.full_rank_acceleration(np.eye(2), [[0.0], [1.0]], [[1.0, 0.0], [0.0, 0.0]], 0.0, [speed, 0.0], [0.0, -G],
                                 dWn_v=[-speed ** 2 / R])
print("ring, bottom: c_n =", r.c_n[0], " m(g + u^2/R) =", G + speed ** 2 / R)

# %% [markdown]
# ## 7. No bounce from stabilisation
#
# The stabilisation term $\Psi_n/h$ removes a penetration in one step. A contact seen only once the
# bodies overlap ($\delta = 0$) is therefore pushed apart at $-\Psi_n/h$, and a sphere dropped 1 m
# bounces although the model is perfectly inelastic. Two cures: an activation distance $\delta > 0$
# (the contact is active before the bodies touch, the default of `Scene`: 10 % of the smallest
# body), and a cap on the correction speed (`max_correction_speed`, with an optional Baumgarte
# factor). Negrut, Serban & Tasora (2018) suggest both in their discussion of eq. 6.

# %%
from mbdcp.mechanics import Body2D, Body3D, Pin, Plane, Scene, simulate


def drop(h, **kw):
    scene_kw = {k: kw.pop(k) for k in ("delta",) if k in kw}
    scene = Scene([Body3D(1.0, [0, 0, 1.5], radius=0.5)], [Plane([0, 0, 0], [0, 0, 1])], mu=0.3, **scene_kw)
    tr = simulate(scene, h, 1.5, progress=False, **kw)
    return tr.times, tr.positions[:, 2] - 0.5


fig, ax = plt.subplots(1, 2, figsize=(10, 3.5), sharey=True)
for a, h in zip(ax, (0.01, 0.002)):
    for label, kw in (("delta = 0", dict(delta=0.0)), ("delta = 0, cap 0.1 m/s", dict(delta=0.0, max_correction_speed=0.1)),
                      ("default delta", {})):
        t, gap = drop(h, **kw)
        first = np.argmax(gap <= 1e-6)
        a.plot(t, gap, label=f"{label}: rebound {gap[first:].max():.3f} m")
    a.set_title(f"sphere dropped 1 m, h = {h}")
    a.set_xlabel("t [s]")
    a.legend(fontsize=8)
ax[0].set_ylabel("gap [m]")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 8. Joints in scenes and redundant constraints
#
# `mechanics.Pin` holds a point of a body at a point of another body or of the world (Trinkle
# 2003, eq. 28 divided by $h$: $W_b^T v^{l+1} + \Theta/h = 0$). A disk pinned 1 m from its centre swings with the period
# $T = 2\pi\sqrt{I_{pivot}/(mgl)}\,(1 + \theta_0^2/16)$. The same pin given twice is a redundant
# (rigid-loop) constraint: `mbdcp.step` solves it on an independent subset, with the same motion.
# A box resting on four corners has redundant *contacts* for the full-rank model; its tangential
# relation is made compliant (`compliance`) and the answer equals the Stewart–Trinkle step.

# %%
l, th0 = 1.0, np.radians(10.0)
bob = Body2D(1.0, [l * np.sin(th0), -l * np.cos(th0)], radius=0.1)
tr = simulate(Scene([bob], joints=[Pin(bob, None, [0.0, 0.0])]), 0.001, 4.0, progress=False)
angle = np.degrees(np.arctan2(tr.positions[:, 0], -tr.positions[:, 1]))
s = np.sign(tr.positions[:, 0])
cross = np.flatnonzero(s[:-1] != s[1:])
period = 2 * np.mean(np.diff(tr.times[cross]))
exact = 2 * np.pi * np.sqrt((0.005 + l * l) / (G * l)) * (1 + th0 ** 2 / 16)
plt.figure(figsize=(6, 3))
plt.plot(tr.times, angle)
plt.xlabel("t [s]")
plt.ylabel("angle [deg]")
plt.title("a pinned disk")
plt.show()
print(f"period {period:.4f} s, closed form {exact:.4f} s; pin drift {np.abs(np.hypot(*tr.positions[:, :2].T) - l).max():.1e}")

# the pin twice: the same motion
M3 = np.diag([1.0, 1.0, 1 / 3])
pin = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
args = (M3, np.zeros((3, 0)), np.zeros((3, 0)), np.zeros((0, 0)), [], [0.0, 0.0, -0.5], 0.01)
once = mbdcp.step(*args, Wb=pin, p_ext=[0.0, -0.0981, 0.0])
twice = mbdcp.step(*args, Wb=np.hstack([pin, pin]), p_ext=[0.0, -0.0981, 0.0])
print("pin once :", once.v_next, "\npin twice:", twice.v_next, " p_b =", twice.p_b)

# a box on four corners in the full-rank model
corners = [np.array([sx, sy, -0.5]) for sx in (-0.5, 0.5) for sy in (-0.5, 0.5)]
col = lambda r, d: np.r_[d, np.cross(r, d)]  # noqa: E731
Wn4 = np.array([col(r, [0, 0, 1.0]) for r in corners]).T
Wt4 = np.array([col(r, d) for r in corners for d in ([1.0, 0, 0], [0, 1.0, 0])]).T
Mb, hb = np.diag([2.0, 2, 2, 1, 2, 3]), 0.01
for push in (9.0, 20.0):
    p_ext = np.array([push * hb, 0, -2 * G * hb, 0, 0, 0])
    fr = mbdcp.full_rank_step(Mb, Wn4, Wt4, 0.5, np.zeros(6), hb, n_d=4, p_ext=p_ext, psi_n=np.zeros(4))
    print(f"push {push}: full rank v_x = {fr.v_next[0]:.6f} (compliance {fr.compliance:.1e}), "
          f"closed form {max(0.0, hb * (push / 2 - 0.5 * G)):.6f}")
