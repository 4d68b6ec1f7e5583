"""The rows MuJoCo makes for a state, other than its contacts, as the step's data: equality
constraints as joints (W_b, Θ), joint and tendon friction loss as joint friction (D_j, E_j,
β_max; Trinkle 2003, eq. 38) and joint and tendon limits as frictionless unilateral contacts
(columns of W_n with their gaps)."""
from dataclasses import dataclass

import numpy as np

__all__ = ["ConstraintRows", "constraint_rows", "no_rows", "non_contact_rows"]

# MuJoCo's mjtConstraint
EQUALITY, FRICTION_DOF, FRICTION_TENDON, LIMIT_JOINT, LIMIT_TENDON = 0, 1, 2, 3, 4


@dataclass
class ConstraintRows:
    """Wb (n_v, n_b), theta (n_b,); Dj (n_v, 2 n_j), Ej (2 n_j, n_j), friction_loss (n_j,) (forces);
    limits (n_l, n_v): the rows of the limits' gaps, limit_gap (n_l,), limit_kind (n_l, 3): per limit
    (constraint type, joint or tendon id, side) to follow it from step to step. Absent parts have
    no rows."""

    Wb: np.ndarray
    theta: np.ndarray
    Dj: np.ndarray
    Ej: np.ndarray
    friction_loss: np.ndarray
    limits: np.ndarray
    limit_gap: np.ndarray
    limit_kind: np.ndarray


def non_contact_rows(d):
    """How many of MuJoCo's constraint rows precede the contacts' (equalities, friction loss, limits)."""
    if hasattr(d, "nl"):
        return d.ne + d.nf + d.nl
    return int(np.count_nonzero(d.efc_type[:d.nefc] <= LIMIT_TENDON))


def no_rows(nv):
    """The rows of a state without equality, friction loss or limits."""
    return ConstraintRows(np.zeros((nv, 0)), np.zeros(0), np.zeros((nv, 0)), np.zeros((0, 0)), np.zeros(0),
                          np.zeros((0, nv)), np.zeros(0), np.zeros((0, 3), dtype=np.int64))


def constraint_rows(d, J):
    """The rows of MuJoCo's constraints other than contacts in ``d`` (J: its dense ``efc_J``).

    An equality's row J with position error e (``efc_pos``) is the joint equation
    :math:`J v^{l+1} + e/h = 0`; a limit's row, the derivative of its distance to the limit
    (``efc_pos``), is a contact normal with that gap; a friction-loss row J gives the direction pair
    :math:`\\pm J^T` with the largest force ``efc_frictionloss``."""
    nefc, nv = J.shape
    kind = d.efc_type[:nefc]
    pos = d.efc_pos[:nefc]
    eq = kind == EQUALITY
    fr = (kind == FRICTION_DOF) | (kind == FRICTION_TENDON)
    lim = (kind == LIMIT_JOINT) | (kind == LIMIT_TENDON)
    Jf = J[fr]
    n_j = Jf.shape[0]
    Dj = np.empty((nv, 2 * n_j))
    Dj[:, 0::2], Dj[:, 1::2] = Jf.T, -Jf.T
    Ej = np.zeros((2 * n_j, n_j))
    Ej[np.arange(2 * n_j), np.arange(2 * n_j) // 2] = 1.0
    limits = J[lim]
    side = (limits.sum(axis=1) < 0).astype(np.int64)
    limit_kind = np.stack([kind[lim].astype(np.int64), d.efc_id[:nefc][lim].astype(np.int64), side], axis=1)
    return ConstraintRows(Wb=np.ascontiguousarray(J[eq].T), theta=pos[eq], Dj=Dj, Ej=Ej,
                          friction_loss=d.efc_frictionloss[:nefc][fr], limits=limits, limit_gap=pos[lim],
                          limit_kind=limit_kind)
