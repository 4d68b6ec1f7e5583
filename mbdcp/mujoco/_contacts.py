"""The contacts MuJoCo's collision detection reports for a state, as the step's contacts: those
within the activation distance delta, each with its gap, unit normal, the points of the two
geoms it joins, its sliding friction coefficient and a key that follows it from step to step."""
from dataclasses import dataclass

import numpy as np

from mbdcp.infrastructure import _core

__all__ = ["GeomContacts", "geom_contacts", "NO_CONTACTS"]


@dataclass
class GeomContacts:
    """Per contact: ``gap`` (n_c,) (MuJoCo's ``dist``: negative in penetration), ``mu`` (n_c,)
    (MuJoCo's mixed sliding friction, ``friction[0]``; 0 for a frictionless contact, condim 1),
    ``row`` (n_c,) (its first row in MuJoCo's constraint Jacobian ``efc_J``: the normal's, then the
    tangents'), ``rows`` (n_c,) (its rows there: its condim), ``geom`` (n_c, 2), ``frame`` (n_c, 3, 3)
    (MuJoCo's contact frame: the ``normal`` from geom1 to geom2, then two tangents), ``point``
    (n_c, 3) (MuJoCo's, halfway between the geoms) and ``key`` (n_c,) int64: its geoms and rank
    among their contacts (MuJoCo reports a pair's contacts together), the same for the same
    contact at the next step."""

    gap: np.ndarray
    mu: np.ndarray
    row: np.ndarray
    rows: np.ndarray
    geom: np.ndarray
    frame: np.ndarray
    point: np.ndarray
    key: np.ndarray

    def __len__(self):
        return len(self.gap)

    @property
    def normal(self):
        return self.frame[:, 0]


NO_CONTACTS = GeomContacts(np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.intc), np.zeros(0, dtype=np.intc),
                           np.zeros((0, 2), dtype=np.intc), np.zeros((0, 3, 3)), np.zeros((0, 3)),
                           np.zeros(0, dtype=np.int64))


def geom_contacts(d, delta, code_base, flex=False):
    """The contacts of ``d`` (after mj_collision and mj_makeConstraint) with gap <= delta that
    MuJoCo does not exclude (with ``flex``: between two geoms, a flex's contacts left out), their
    keys coded with ``code_base`` (above every geom id). Copies: MuJoCo reuses its arrays at the
    next collision."""
    if d.ncon == 0:
        return NO_CONTACTS
    con = d.contact
    return GeomContacts(*_core.frame_contacts(con.dist, con.efc_address, con.geom, con.dim, con.friction, con.frame,
                                              con.pos, delta, flex, code_base))
