"""The contacts MuJoCo's collision detection reports for a state, as the step's contacts: those
within the activation distance delta, each with its gap, unit normal, the points of the two
geoms it joins and its sliding friction coefficient."""
from dataclasses import dataclass

import numpy as np

__all__ = ["GeomContacts", "geom_contacts", "NO_CONTACTS"]


@dataclass
class GeomContacts:
    """Per contact: ``gap`` (n_c,) (MuJoCo's ``dist``: negative in penetration), ``frame`` (n_c, 3, 3)
    (MuJoCo's contact frame: the ``normal`` from geom1 to geom2, then two tangents), ``point``
    (n_c, 3) (MuJoCo's, halfway between the geoms), ``geom`` (n_c, 2), ``mu`` (n_c,) (MuJoCo's mixed
    sliding friction, ``friction[0]``; 0 for a frictionless contact, condim 1), ``row`` (n_c,) (its
    first row in MuJoCo's constraint Jacobian ``efc_J``: the normal's, then the tangents')."""

    gap: np.ndarray
    frame: np.ndarray
    point: np.ndarray
    geom: np.ndarray
    mu: np.ndarray
    row: np.ndarray
    frictionless: bool = False  # some contact has condim 1 (no tangent rows)

    def __len__(self):
        return len(self.gap)

    @property
    def normal(self):
        return self.frame[:, 0]


NO_CONTACTS = GeomContacts(np.zeros(0), np.zeros((0, 3, 3)), np.zeros((0, 3)), np.zeros((0, 2), dtype=np.int64),
                           np.zeros(0), np.zeros(0, dtype=np.int64))


def geom_contacts(d, delta, flex=False):
    """The contacts of ``d`` (after mj_collision and mj_makeConstraint) with gap <= delta that
    MuJoCo does not exclude (with ``flex``: between two geoms, a flex's contacts left out). Copies:
    MuJoCo reuses its arrays at the next collision."""
    if d.ncon == 0:
        return NO_CONTACTS
    con = d.contact
    dist = con.dist
    geom = con.geom if hasattr(con, "geom") else np.stack([con.geom1, con.geom2], axis=1)  # MuJoCo < 3.0
    keep = (dist <= delta) & (con.efc_address >= 0)  # rows in efc_J: not excluded by MuJoCo
    if flex:
        keep &= geom.min(axis=1) >= 0
    idx = np.flatnonzero(keep)
    if idx.size == 0:
        return NO_CONTACTS
    mu = con.friction[idx, 0]
    frictionless = con.dim[idx] == 1
    mu[frictionless] = 0.0
    return GeomContacts(dist[idx], con.frame[idx].reshape(-1, 3, 3), con.pos[idx], geom[idx].astype(np.int64), mu,
                        con.efc_address[idx].astype(np.int64), bool(frictionless.any()))
