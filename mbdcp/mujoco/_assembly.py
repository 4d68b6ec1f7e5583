r"""One state of a MuJoCo model as the data of one time step of mbdcp (Trinkle 2003, eqs. 25–38).

MuJoCo (Todorov, Erez & Tassa 2012) computes, on a private copy of the model, the state's
kinematics, mass matrix :math:`M` (``mj_fullM``), smooth forces (``qfrc_smooth``: applied,
actuator and passive forces less the bias :math:`c(q, v)`), its contacts (``mj_collision``, every
geom's margin set to the activation distance :math:`\delta`) and the rows of its constraints
(``mj_makeConstraint``, with elliptic cones: per contact the rows :math:`n^T(J_{b_2} - J_{b_1})`,
:math:`t_1^T(J_{b_2} - J_{b_1})`, :math:`t_2^T(J_{b_2} - J_{b_1})` of its frame at its point, the
translational Jacobians of the two geoms' bodies). The step then reads

.. math::  p_{ext} = h\,(\tau_{applied} + \tau_{actuator} + \tau_{passive} - c(q, v)),

a contact's normal column is its normal row, its n_d friction directions :math:`d_k` those of
:func:`mbdcp.friction_basis` about n (written in the frame's tangents: column
:math:`(d_k\cdot t_1)\,J_{t_1}^T + (d_k\cdot t_2)\,J_{t_2}^T`), :math:`\Psi_n` MuJoCo's distance
and U its sliding friction; limits, equalities and friction loss come from :mod:`._rows`.
"""
import copy
from dataclasses import dataclass
from typing import Optional

import numpy as np

from mbdcp.formulations.step import unit_circle
from mbdcp.infrastructure import _core
from mbdcp.mechanics.assembly import SLIP_ROUNDING
from mbdcp.mechanics.scene import step_reach
from mbdcp.mujoco import _mj
from mbdcp.mujoco._contacts import GeomContacts, geom_contacts
from mbdcp.mujoco._rows import ConstraintRows, constraint_rows, no_rows, non_contact_rows

__all__ = ["Assembler", "StepArrays", "ROTATION_DELTA"]

ROTATION_DELTA = 0.1  # rad: a hinge's or ball's limit row is active within this (plus 2 h |rate|) of it
_TINY_MARGIN = 1e-12  # m: MuJoCo keeps a contact when its distance is below the margin, strictly


@dataclass
class StepArrays:
    """The data of one step (the arguments of :func:`mbdcp.step`, W_t for :func:`mbdcp.ccp`) and
    what the loop records: the geom contacts (the first ``len(contacts)`` columns of Wn; the limits
    follow), ``keys`` (one int64 per column of Wn, the same for the same contact at the next step)
    and the potential energy."""

    M: np.ndarray
    Wn: np.ndarray
    D: Optional[np.ndarray]
    E: Optional[np.ndarray]
    Wt: Optional[np.ndarray]
    U: np.ndarray
    v: np.ndarray
    h: float
    p_ext: np.ndarray
    psi_n: np.ndarray
    rows: ConstraintRows
    contacts: GeomContacts
    keys: np.ndarray
    potential: float

    def step_arguments(self):
        """{name: value} of :func:`mbdcp.step` (absent joints and joint friction as None)."""
        r = self.rows
        joints, friction = r.Wb.shape[1] > 0, r.Dj.shape[1] > 0
        return dict(M=self.M, Wn=self.Wn, D=self.D, E=self.E, U=self.U, v=self.v, h=self.h, p_ext=self.p_ext,
                    psi_n=self.psi_n, Wb=r.Wb if joints else None, theta=r.theta if joints else None,
                    Dj=r.Dj if friction else None, Ej=r.Ej if friction else None,
                    beta_max=self.h * r.friction_loss if friction else None)


class Assembler:
    """Runs MuJoCo's stages on a private copy of ``model`` (an MjModel; the user's is never
    changed) and assembles the step's arrays of a state."""

    def __init__(self, mj, model):
        self.mj, self.m = mj, copy.deepcopy(model)
        m = self.m
        m.opt.jacobian = int(mj.mjtJacobian.mjJAC_DENSE)  # rows read directly
        m.opt.cone = int(mj.mjtCone.mjCONE_ELLIPTIC)  # a contact's rows: normal, then tangents
        if hasattr(mj.mjtEnableBit, "mjENBL_SLEEP"):  # every body's stages computed, none put to sleep
            m.opt.enableflags &= ~int(mj.mjtEnableBit.mjENBL_SLEEP)
        m.geom_gap[:] = 0.0
        if m.npair:
            m.pair_gap[:] = 0.0
        self.d = mj.MjData(m)
        self._limits(mj, model)
        self.fill_mass, self.kinematics, self.mass = _mj.full_mass(mj), _mj.kinematics(mj), _mj.mass(mj)
        self.code_base = max(m.ngeom, m.njnt, m.ntendon) + 8
        self.delta, self.cache = None, {}
        self.grow_from = None  # a default delta, grown in each run to what the bodies can close in a step
        self.geom_body, self.g = np.array(m.geom_bodyid, dtype=np.intc), float(np.linalg.norm(m.opt.gravity))
        self.geom_root = np.array(m.body_rootid, dtype=np.intc)[self.geom_body]
        self.flex, self.no_rows = bool(m.nflex), no_rows(m.nv)

    def _limits(self, mj, model):
        """The limited joints, their margins and the dofs whose speed widens their activation."""
        m, types = self.m, mj.mjtJoint
        limited = np.asarray(m.jnt_limited, dtype=bool) & (m.jnt_type != int(types.mjJNT_FREE))
        self.limited = np.flatnonzero(limited)
        self.user_jnt_margin = np.array(model.jnt_margin[limited], dtype=float)
        self.user_tendon_margin = np.array(model.tendon_margin, dtype=float)
        kind, adr = m.jnt_type[limited], m.jnt_dofadr[limited]
        ball = kind == int(types.mjJNT_BALL)
        self.limit_dofs = adr[:, None] + np.where(ball[:, None], np.arange(3), 0)
        self.limit_weight = np.where(ball[:, None], 1.0, np.array([1.0, 0.0, 0.0]))
        self.limit_slide = kind == int(types.mjJNT_SLIDE)

    def set_delta(self, delta):
        """Contacts (and tendon limits) become active within delta."""
        if delta != self.delta:
            m = self.m
            m.geom_margin[:] = max(delta, _TINY_MARGIN)
            if m.npair:
                m.pair_margin[:] = max(delta, _TINY_MARGIN)
            if m.ntendon:
                m.tendon_margin[:] = self.user_tendon_margin + delta
            self.delta = delta

    def reach(self, h):
        """The distance two geoms can close in a step of length h: h (2 s + |g| h), s the largest
        speed of a point of a geom (its body's speed about the subtree's centre, |v| + |omega| times
        the arm), the rule of :meth:`mbdcp.mechanics.Scene.activation_distance`."""
        mj, m, d = self.mj, self.m, self.d
        if m.ngeom == 0:
            return 0.0
        mj.mj_comVel(m, d)  # cvel: about the root's subtree centre of mass
        s = _core.fastest_point(self.geom_body, self.geom_root, d.cvel, d.geom_xpos, d.subtree_com, m.geom_rbound)
        return step_reach(h, s, self.g)

    def run(self, qpos, qvel, ctrl, h, t):
        """MuJoCo's stages on the state (qpos, qvel) with controls ``ctrl`` at time t."""
        mj, m, d = self.mj, self.m, self.d
        d.qpos[:], d.qvel[:], d.time = qpos, qvel, t
        if m.nu:
            d.ctrl[:] = ctrl
        if self.limited.size:  # a limit is active within its margin, delta (or 0.1 rad) and 2 h |rate|
            rate = np.sqrt(np.einsum("jk,jk->j", self.limit_weight, np.asarray(qvel)[self.limit_dofs] ** 2))
            near = np.where(self.limit_slide, self.delta, ROTATION_DELTA)
            m.jnt_margin[self.limited] = self.user_jnt_margin + near + 2.0 * h * rate
        self.kinematics(m, d)
        self.mass(m, d)
        if self.grow_from is not None:
            self.set_delta(max(self.grow_from, self.reach(h)))
        mj.mj_collision(m, d)
        mj.mj_makeConstraint(m, d)
        mj.mj_transmission(m, d)
        mj.mj_fwdVelocity(m, d)
        mj.mj_fwdActuation(m, d)
        mj.mj_fwdAcceleration(m, d)
        mj.mj_energyPos(m, d)

    def arrays(self, h, n_d, pairs=False):
        """The StepArrays of the state last :meth:`run`: friction directions D, E (n_d per
        contact), or with ``pairs`` the tangent pairs Wt of :func:`mbdcp.ccp`."""
        m, d = self.m, self.d
        nv, nefc = m.nv, d.nefc
        M = np.empty((nv, nv))
        self.fill_mass(m, d, M)
        J = d.efc_J.reshape(-1)[:nefc * nv].reshape(nefc, nv)
        c = geom_contacts(d, self.delta, self.code_base, self.flex)
        other = non_contact_rows(d)  # MuJoCo's rows: equalities, friction loss, limits, then contacts
        rows = constraint_rows(d, J[:other]) if other else self.no_rows
        n_c, n_l = len(c), len(rows.limit_gap)
        K = 2 if pairs else n_d
        free = None
        if not pairs:  # the motion without friction, v + h M^-1 qfrc_smooth (MuJoCo's factor of M)
            free = np.empty((1, nv))
            self.mj.mj_solveM(m, d, free, d.qfrc_smooth.reshape(1, nv))
            free = d.qvel + h * free[0]
        Wn, T = np.empty((nv, n_c + n_l)), np.empty((nv, n_c * K))
        cos_k, sin_k = self._circle(4 if pairs else n_d, K)
        _core.frame_contact_columns(J, c.row, c.rows, c.frame, free, cos_k, sin_k, SLIP_ROUNDING, Wn, T)
        if n_l:  # the limits: frictionless, after the contacts
            Wn[:, n_c:] = rows.limits.T
            if pairs:
                T = np.concatenate([T, np.zeros((nv, 2 * n_l))], axis=1)
        return StepArrays(M=M, Wn=Wn, D=None if pairs else T, E=None if pairs else self._grouping(n_c, n_l, K),
                          Wt=T if pairs else None, U=np.concatenate([c.mu, np.zeros(n_l)]) if n_l else c.mu,
                          v=d.qvel.copy(), h=h, p_ext=h * d.qfrc_smooth,
                          psi_n=np.concatenate([c.gap, rows.limit_gap]) if n_l else c.gap,
                          rows=rows, contacts=c, keys=self._keys(c, rows), potential=float(d.energy[0]))

    def _circle(self, n_d, K):
        """cos and sin of the first K of n_d friction directions (:func:`mbdcp.formulations.step.unit_circle`):
        with ``pairs`` the CCP's tangent pair, the first two of four."""
        key = ("circle", n_d, K)
        if key not in self.cache:
            c, s = unit_circle(n_d)
            self.cache[key] = (np.ascontiguousarray(c[:K]), np.ascontiguousarray(s[:K]))
        return self.cache[key]

    def _grouping(self, n_c, n_l, K):
        """E (n_c K, n_c + n_l): K directions per contact, none for the limits (cached, read-only)."""
        key = ("E", n_c, n_l, K)
        E = self.cache.get(key)
        if E is None:
            if len(self.cache) > 64:
                self.cache.clear()
            E = np.zeros((n_c * K, n_c + n_l))
            E[np.arange(n_c * K), np.arange(n_c * K) // max(K, 1)] = 1.0
            E.setflags(write=False)
            self.cache[key] = E
        return E

    def _keys(self, c, rows):
        """One int64 per column of Wn that a contact keeps from step to step: a contact's
        (:class:`GeomContacts` ``key``); a limit's constraint type, joint or tendon, and side."""
        if not len(rows.limit_gap):
            return c.key
        k, G = rows.limit_kind, self.code_base
        return np.concatenate([c.key, ((k[:, 0] + self.m.ngeom) * G + k[:, 1]) * 64 + k[:, 2]])
