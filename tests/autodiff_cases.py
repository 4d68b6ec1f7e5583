"""Problems and NumPy references shared by the derivative tests (tests/test_derivatives.py,
tests/test_autodiff.py) and the layers' (tests/test_jax.py, tests/test_torch.py).

Scenes whose active set is stable under a central-difference step (no degenerate pair, a margin
no difference step can cross), directions of change that stay on the solution's piece, and the
references the layers are checked against: central differences of mbdcp.step / mbdcp.ccp /
mbdcp.lemke themselves, closed forms, and NumPy rollouts.
"""
import numpy as np

import mbdcp
from mbdcp.examples import sphere_on_plane
from mbdcp.testing import granular_pile, random_scene

G = 9.81
STEP_ARGS = ("M", "Wn", "D", "E", "U", "v", "h")
CCP_ARGS = ("M", "Wn", "Wt", "mu", "v", "h")
LCP_ARGS = ("M", "q")
FD_EPS = 1e-6  # relative central-difference step
FD_RTOL = 1e-6


# ---- scenes ----------------------------------------------------------------------------------

def _scene_data(s, **extra):
    data = dict(zip(STEP_ARGS, s.args()))
    data.update(s.kwargs())
    data.update(extra)
    data["U"] = np.asarray(data["U"], float)
    return data


def sliding(seed):
    return _scene_data(random_scene(3, 6, seed=seed, n_d=(4, 8)))


def sticking(seed):
    """Slow bodies with much friction and moving surfaces (dpsi_n, dpsi_f)."""
    rng = np.random.default_rng(seed)
    s = random_scene(2, 4, seed=seed, n_d=(4, 8), mu=(0.8, 1.5))
    s.v *= 0.02
    n_c = s.Wn.shape[1]
    return _scene_data(s, dpsi_n=0.01 * rng.uniform(size=n_c), dpsi_f=s.D.T @ (0.01 * rng.standard_normal(s.M.shape[0])))


def joints(seed):
    """Two bodies with two bilateral joints (Wb, theta, dtheta)."""
    rng = np.random.default_rng(seed)
    s = random_scene(2, 4, seed=seed, n_d=(4, 4), mu=(0.2, 1.0))
    s.v *= 0.2
    Wb = np.zeros((s.M.shape[0], 2))
    Wb[[0, 6], 0] = [1.0, -1.0]
    Wb[[5, 11], 1] = [0.3, 1.0]
    return _scene_data(s, Wb=Wb, theta=1e-3 * rng.standard_normal(2), dtheta=0.01 * rng.standard_normal(2))


def joint_friction(seed):
    """The joints scene with dry friction in two joints (Dj, Ej, beta_max)."""
    data = joints(seed)
    rng = np.random.default_rng(1000 + seed)
    g = np.zeros((data["M"].shape[0], 2))
    g[3, 0], g[9, 0] = 1.0, -1.0
    g[4, 1] = 1.0
    data.update(Dj=np.hstack([g[:, :1], -g[:, :1], g[:, 1:], -g[:, 1:]]), Ej=np.kron(np.eye(2), np.ones((2, 1))),
                beta_max=rng.choice([1e-3, 1.0], 2))
    return data


SCENES = {"sliding": sliding, "sticking": sticking, "joints": joints, "joint-friction": joint_friction}


def split(data, names):
    """(positional arguments in order, keywords) of a data dict."""
    return [data[k] for k in names], {k: v for k, v in data.items() if k not in names}


def solve_step(data, **options):
    args, kw = split(data, STEP_ARGS)
    res = mbdcp.step(*args, **kw, **options)
    assert res.success, res.message
    return res


def stable(make, count, start=0):
    """The first ``count`` scenes from seed ``start`` without degenerate pairs and with a margin no
    difference step can cross."""
    out = []
    for seed in range(start, start + 200):
        data = make(seed)
        args, kw = split(data, STEP_ARGS)
        res = mbdcp.step(*args, **kw)
        if not res.success:
            continue
        d = mbdcp.derivatives.step(*args, res, **kw)
        if d.degenerate.size or d.margin < 1e-4 or d.indeterminate:
            continue
        out.append(data)
        if len(out) == count:
            return out
    raise AssertionError(f"only {len(out)} stable scenes")


def frame_tangent(rng, D, E):
    """A change of D keeping each contact's directions in their plane (what moving frames do): at a
    sticking contact with dependent directions other changes leave the solution's piece."""
    T = np.zeros_like(D)
    own = np.argmax(E, axis=1)
    for c in range(E.shape[1]):
        k = np.flatnonzero(own == c)
        if k.size == 0:
            continue
        _, s, Vt = np.linalg.svd(D[:, k], full_matrices=False)
        r = int(np.sum(s > 1e-12 * s[0]))
        T[:, k] = rng.standard_normal((D.shape[0], r)) @ (s[:r, None] * Vt[:r])
    return T


def step_tangents(rng, data):
    """A random direction of change for every differentiable input of a step (M symmetric)."""
    t = {}
    for k, x in data.items():
        x = np.asarray(x, float)
        scale = max(np.abs(x).max(initial=0.0), 1.0)
        if k in ("E", "Ej"):
            continue
        if k == "h":
            t[k] = 0.3 * float(x)
        elif k == "M":
            a = rng.standard_normal(x.shape) * scale
            t[k] = 0.5 * (a + a.T)
        elif k in ("D", "Dj"):
            t[k] = frame_tangent(rng, x, data["E" if k == "D" else "Ej"])
        elif k == "dpsi_f":
            t[k] = np.asarray(data["D"]).T @ rng.standard_normal(data["M"].shape[0])
        elif k in ("psi_n", "theta"):
            t[k] = rng.standard_normal(x.shape) * max(np.abs(x).max(initial=0.0), data["h"])
        else:
            t[k] = rng.standard_normal(x.shape) * scale
    return t


def output_weights(rng, res, names):
    """Random output gradients g_k (the loss is sum_k <g_k, output_k>)."""
    return {o: rng.standard_normal(np.shape(getattr(res, o))) for o in names}


def loss(res, weights):
    return sum(float(np.sum(w * getattr(res, o))) for o, w in weights.items())


def central_difference(solve, data, tangents, weights, eps=FD_EPS):
    """d/ds of sum_k <g_k, output_k(data + s t)> at s = 0, by central differences of ``solve``."""
    def at(s):
        return loss(solve({k: (np.asarray(v, float) + s * eps * tangents[k] if k in tangents else v)
                           for k, v in data.items()}), weights)
    return (at(1.0) - at(-1.0)) / (2 * eps)


def directional(grads, tangents):
    """<gradient, tangent> summed over the inputs."""
    return sum(float(np.sum(np.asarray(grads[k]) * t)) for k, t in tangents.items())


# ---- LCP and CCP -----------------------------------------------------------------------------

def planted_lcp(n, seed):
    """A positive definite LCP with a planted solution: z = max(r, 0), w = max(-r, 0), no pair
    within 0.5 of degeneracy."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n) + 0.3 * (A - A.T)  # positive definite, not symmetric
    r = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
    z, w = np.maximum(r, 0), np.maximum(-r, 0)
    return {"M": M, "q": w - M @ z}, z


def solve_lcp(data):
    res = mbdcp.lemke(data["M"], data["q"])
    assert res.success
    return res


def ccp_particle(mu=0.5, v0=1.0):
    """A unit particle sliding on the floor (Anitescu & Tasora's CCP): v_x = (v0 - mu g h) / (1 + mu^2)."""
    return {"M": np.eye(3), "Wn": np.array([[0.0], [0.0], [1.0]]), "Wt": np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]),
            "mu": np.array([mu]), "v": np.array([v0, 0.0, 0.0]), "h": 0.01, "p_ext": np.array([0.0, 0.0, -0.0981])}


def ccp_pile(seed):
    """A small dense pile (6 spheres, 6 contacts) for the CCP, with surface velocities dpsi_t."""
    g = granular_pile(6, 6, seed=seed, sparse=False)
    g["v"] = 0.3 * g["v"]
    g["psi_n"] = 0.1 * g["psi_n"]
    g["M"] = np.asarray(g["M"].toarray() if hasattr(g["M"], "toarray") else g["M"])
    n_c = g["Wn"].shape[1]
    g["dpsi_t"] = 0.01 * np.random.default_rng(seed).standard_normal((n_c, 2))
    return g


CCP_SOLVE = {"tol": 1e-14, "max_iter": 100_000, "method": "pgs"}


def unconverged_ccp():
    """(arguments, keywords) of a CCP solve of the sliding particle given too few iterations to
    converge: the layers must raise naming MAX_ITERATIONS."""
    args, kw = split(ccp_particle(), CCP_ARGS)
    return args, dict(kw, tol=1e-15, max_iter=2)


def planar_particle():
    """(M, Wn, D, E, h) of a unit particle on the floor y = 0 with planar friction (D = [t, -t])."""
    return np.eye(2), np.array([[0.0], [1.0]]), np.array([[1.0, -1.0], [0.0, 0.0]]), np.ones((2, 1)), 0.1


def solve_ccp(data):
    args, kw = split(data, CCP_ARGS)
    res = mbdcp.ccp(*args, **kw, **CCP_SOLVE)
    assert res.success, res.message
    return res


def stable_piles(count):
    out = []
    for seed in range(60):
        data = ccp_pile(seed)
        args, kw = split(data, CCP_ARGS)
        res = mbdcp.ccp(*args, **kw, **CCP_SOLVE)
        if not res.success:
            continue
        d = mbdcp.derivatives.ccp(*args, res, **kw)
        if d.degenerate.size or d.margin < 1e-4 or len(set(d.mode)) < 2:
            continue
        out.append(data)
        if len(out) == count:
            return out
    raise AssertionError(f"only {len(out)} stable piles")


def ccp_tangents(rng, data):
    t = {}
    for k, x in data.items():
        x = np.asarray(x, float)
        scale = max(np.abs(x).max(initial=0.0), 1.0)
        if k == "h":
            t[k] = 0.3 * float(x)
        elif k == "M":
            a = np.diag(rng.standard_normal(x.shape[0])) * scale  # keeps M's block structure
            t[k] = a
        elif k in ("psi_n",):
            t[k] = 0.1 * rng.standard_normal(x.shape) * max(np.abs(x).max(initial=0.0), data["h"])
        else:
            t[k] = rng.standard_normal(x.shape) * scale
    return t


# ---- rollouts --------------------------------------------------------------------------------

SPHERE_H, SPHERE_STEPS, SPHERE_V0 = 0.01, 20, 2.0  # 0.2 s of sliding, before t* = 2 v0 / (7 mu g) = 0.29 s


def sphere_data():
    """The sphere of Trinkle (2003) on the plane z = 0, without mu: (M, Wn, D, E)."""
    return sphere_on_plane()[:4]


def sphere_closed_form_gradient(steps=SPHERE_STEPS, h=SPHERE_H):
    """d v_x(T) / d mu while the sphere slides: each step removes mu g h."""
    return -steps * G * h


BOX_HALF = np.array([0.4, 0.15])  # half width, half height
BOX_H, BOX_STEPS = 0.01, 40
BOX_PUSH_HEIGHT = 0.3  # the push acts this far above the centre: the box slides, then tips onto its front corner


def box_push(k):
    """The known push on the box at step k (N), ramped up."""
    return 6.0 + 0.3 * k


def box_contacts(q):
    """Wn (3, 2), D (3, 4), gaps (2,) of the two bottom corners of the planar box at q = (x, y, theta)."""
    c, s = np.cos(q[2]), np.sin(q[2])
    b = np.array([[-BOX_HALF[0], -BOX_HALF[1]], [BOX_HALF[0], -BOX_HALF[1]]])
    rx = b[:, 0] * c - b[:, 1] * s
    ry = b[:, 0] * s + b[:, 1] * c
    Wn = np.stack([np.zeros(2), np.ones(2), rx])
    t = np.stack([np.ones(2), np.zeros(2), -ry])
    D = np.stack([t[:, 0], -t[:, 0], t[:, 1], -t[:, 1]], axis=1)
    return Wn, D, q[1] + ry


BOX_E = np.kron(np.eye(2), np.ones((2, 1)))
BOX_Q0 = np.array([0.0, BOX_HALF[1], 0.0])


def box_rollout(mu, m, steps=BOX_STEPS):
    """x(T) of the box pushed across the plane from rest, in NumPy with mbdcp.step."""
    J = m * ((2 * BOX_HALF) ** 2).sum() / 12
    M = np.diag([m, m, J])
    q, v = BOX_Q0.copy(), np.zeros(3)
    for k in range(steps):
        Wn, D, gaps = box_contacts(q)
        F = box_push(k)
        p_ext = BOX_H * np.array([F, -m * G, -BOX_PUSH_HEIGHT * F])
        res = mbdcp.step(M, Wn, D, BOX_E, mu, v, BOX_H, p_ext=p_ext, psi_n=gaps)
        assert res.success
        v = res.v_next
        q = q + BOX_H * v
    return q


def box_fd(mu, m, eps=1e-6):
    """Central differences of the final state (x, y, theta) in mu and m."""
    dmu = (box_rollout(mu + eps, m) - box_rollout(mu - eps, m)) / (2 * eps)
    dm = (box_rollout(mu, m + eps) - box_rollout(mu, m - eps)) / (2 * eps)
    return dmu, dm


def rolling_sphere(n_d=8):
    """Trinkle (2003, section 4)'s sphere (m = r = 1, mu = 0.2, h = 0.12, v0 = 2 along x) with n_d
    directions from cos and sin (cos(pi/2) = 6e-17): (M, Wn, D, E, U, v0, h, p_ext, psi_n). Fed its
    own v_next it slides, then rolls at 5/7 v0; every step has a solution (the rounding-level
    friction rows once ended NUMERICAL_ERROR)."""
    a = 2.0 * np.pi * np.arange(n_d) / n_d
    t = np.stack([np.cos(a), np.sin(a), 0.0 * a])  # tangents at the contact point (0, 0, -1)
    D = np.vstack([t, np.cross([0.0, 0.0, -1.0], t.T).T])
    M = np.diag([1.0, 1.0, 1.0, 0.4, 0.4, 0.4])
    Wn = np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T
    h = 0.12
    return M, Wn, D, np.ones((n_d, 1)), 0.2, np.array([2.0, 0, 0, 0, 0, 0]), h, np.array([0, 0, -9.81 * h, 0, 0, 0]), np.zeros(1)
