"""How a registered formulation steps a scene (:func:`mbdcp.mechanics.simulate`), each a factory
``stepper(scene, h, options, warm_start) -> solve`` named by the formulation's registry entry
(``Formulation.stepper``); ``solve(args) -> (result, normal impulses)`` solves one step's arguments
(:meth:`mbdcp.mechanics.Scene.assemble`), starting from the last step's answer where it can."""
from types import SimpleNamespace

import numpy as np

import mbdcp
from mbdcp.formulations import ccp as ccp_module
from mbdcp.mechanics.warm import carried, contact_keys, directions_per_contact, key_hash, match, sorted_hashes

__all__ = ["lcp", "fixed_point", "ccp"]


def lcp(scene, h, options, warm_start):
    """solve(args) of mbdcp.step, each step starting from the last step's Lemke basis."""
    last = {}  # the previous step's contact keys and Lemke basis

    def solve(a):
        keys, k = contact_keys(a["contacts"]), directions_per_contact(a["E"])
        res = mbdcp.step(a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], h, p_ext=a["p_ext"], psi_n=a["psi_n"],
                         dpsi_n=a["dpsi_n"], dpsi_f=a["dpsi_f"], warm_start=carried(last, "basis", keys, k, 3),
                         Wb=a.get("Wb"), theta=a.get("theta"), **options)
        if warm_start:
            last.update(keys=keys, k=k, basis=res.basis)
        return res, res.p_n
    return solve


def fixed_point(scene, h, options, warm_start):
    """solve(args) of mbdcp.fixed_point, each step's first P1 and P2 from the last step's bases."""
    if any(np.any(w.velocity) for w in scene.walls):
        raise ValueError("method 'fixed_point' supports fixed walls only")
    last = {}

    def solve(a):
        keys, k = contact_keys(a["contacts"]), directions_per_contact(a["E"])
        hint = SimpleNamespace(basis=carried(last, "basis", keys, k, 3), basis_p2=carried(last, "basis_p2", keys, k, 2))
        res = mbdcp.fixed_point(a["M"], a["Wn"], a["D"], a["E"], a["U"], a["v"], h, p_ext=a["p_ext"], psi_n=a["psi_n"],
                                Wb=a.get("Wb"), theta=a.get("theta"), warm_start=hint, **options)
        if warm_start:
            last.update(keys=keys, k=k, basis=res.basis, basis_p2=res.basis_p2)
        return res, res.p_n
    return solve


def ccp(scene, h, options, warm_start):
    """solve(args) of mbdcp.ccp, each contact's impulse starting from its last value."""
    for w in (w for w in scene.walls if np.any(w.velocity)):  # lines and planes: obstacles are fixed
        if np.linalg.norm(w.velocity - (w.velocity @ w.normal) * w.normal) > 1e-12 * np.linalg.norm(w.velocity):
            raise ValueError("method 'ccp' supports walls moving along their normal only")
    last = {}  # the previous step's contact keys and impulses: a settled pile starts near its answer
    plan = {}  # what the solver keeps from step to step (auto's budget)

    def solve(a):
        keys = contact_keys(a["contacts"])
        hashes = key_hash(keys)
        start = None
        if warm_start and last:
            start = np.zeros((len(keys), 3))
            idx = match(last["keys"], keys, last["sorted"], hashes)
            start[idx >= 0] = last["gamma"][idx[idx >= 0]]
        # the step's own arrays, checked when the scene and simulate's options were: mbdcp.ccp's
        # solve without checking them again
        res = ccp_module._stepped(a["M"], a["P"], a["U"], a["v"], h, a["p_ext"], a["psi_n"] + h * a["dpsi_n"], start,
                                  a.get("Wb"), a.get("theta"), plan=plan, **options)
        if warm_start:
            last.update(keys=keys, sorted=sorted_hashes(keys, hashes), gamma=res.gamma)
        return res, res.gamma[:, 0]
    return solve
