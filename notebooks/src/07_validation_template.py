# %% [markdown]
# # A validation study template: sweeping μ and h
#
# A pattern for validating a contact model against a closed form: sweep the parameters, measure
# an error, and read off the convergence order. Here the sliding sphere of Trinkle (2003), section 4. Its
# velocities are exact *at the time steps*; its position, advanced by
# $x^{l+1} = x^l + h\,v^{l+1}$, is a Riemann sum of the exact velocity, so the position error at
# a fixed time is first order in $h$.
#
# Closed form: $x(t) = v_0t - \tfrac12\mu g t^2$ until $t^* = 2v_0/(7\mu g)$, then
# $x(t^*) + \tfrac57 v_0 (t - t^*)$.

# %%
import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import tqdm

from mbdcp.examples import simulate_sphere

G, T, v0 = 9.81, 0.6, 2.0

def x_exact(t, mu):
    ts = 2 * v0 / (7 * mu * G)
    if t <= ts:
        return v0 * t - 0.5 * mu * G * t * t
    return v0 * ts - 0.5 * mu * G * ts * ts + 5 / 7 * v0 * (t - ts)

def x_simulated(h, mu):
    t, v, _, _ = simulate_sphere(h=h, T=T, v0=v0, mu=mu)
    return h * v[1:, 0].sum()

mus = [0.1, 0.2, 0.4]
hs = np.array([0.04, 0.02, 0.01, 0.005, 0.0025])
errors = {mu: [abs(x_simulated(h, mu) - x_exact(T, mu)) for h in hs] for mu in tqdm(mus, desc="mu")}

# %%
plt.figure(figsize=(5.5, 4))
for mu in mus:
    e = np.array(errors[mu])
    order = np.polyfit(np.log(hs), np.log(e), 1)[0]
    plt.loglog(hs, e, "o-", label=f"μ = {mu} (order {order:.2f})")
plt.loglog(hs, 0.5 * hs, "k:", label="slope 1")
plt.xlabel("h")
plt.ylabel(r"$|x_h(0.6) - x(0.6)|$")
plt.legend()
plt.title("position error against step size")
plt.tight_layout()
plt.show()

# %% [markdown]
# Replace `x_simulated` by any measurement of a simulation (an energy, a contact force, a
# rolling onset) and `x_exact` by a reference solution to reuse the study.
