r"""One step's arguments from the scene's arrays, in one vectorised pass.

Planar bodies have :math:`v = (\dot x, \dot y, \omega)`, :math:`M = \mathrm{diag}(m, m, J)` and a
direction :math:`\hat d` applied at offset :math:`r` from the centre contributes the column
:math:`(\hat d, (r \times \hat d)_z)`; spatial bodies have :math:`v = (\dot x, \omega)`,
:math:`M = \mathrm{blockdiag}(m I_3, R J_B R^T)`, the column :math:`(\hat d, r \times \hat d)` and
the gyroscopic impulse :math:`-h\,\omega \times J\omega`. The other body of a pair gets the
negated column at its own offset. Friction directions are those of :func:`mbdcp.friction_basis`
(3-D) or :math:`\pm t` with :math:`t = (-n_y, n_x)` (2-D); the CCP's tangent pair is the first
two of the four 3-D directions, or :math:`(t, 0)` in 2-D.
"""
import numpy as np
import scipy.sparse as sp

from mbdcp.formulations.step import unit_circle
from mbdcp.infrastructure import _core
from mbdcp.mechanics.bodies import rotation_matrix

FORMS = ("dense", "sparse", "blocks")  # how assemble returns M and the Jacobians

__all__ = ["FORMS", "world_inertia", "mass_blocks", "velocity", "applied_impulse", "kinetic_energy", "friction_directions",
           "SLIP_ROUNDING", "free_slip", "assemble"]


def world_inertia(fields):
    """World-frame inertias R J_B R^T, (n, 3, 3)."""
    R = rotation_matrix(fields["quaternion"])
    return R @ fields["inertia"] @ np.swapaxes(R, 1, 2)


def mass_blocks(fields, planar, J=None):
    """The diagonal blocks of M, one per body: (n, 3, 3) or (n, 6, 6)."""
    m = fields["mass"]
    k = 3 if planar else 6
    blocks = np.zeros((m.size, k, k))
    idx = np.arange(2 if planar else 3)
    blocks[:, idx, idx] = m[:, None]
    if planar:
        blocks[:, 2, 2] = fields["inertia"]
    else:
        blocks[:, 3:, 3:] = world_inertia(fields) if J is None else J
    return blocks


def velocity(fields, planar):
    """The generalised velocity v, body after body."""
    omega = fields["omega"][:, None] if planar else fields["omega"]
    return np.concatenate([fields["velocity"], omega], axis=1).ravel()


def applied_impulse(fields, planar, gravity, h, J=None):
    """h times gravity and, for spatial bodies, the gyroscopic term -omega x J omega."""
    force = fields["mass"][:, None] * gravity
    if planar:
        torque = np.zeros((force.shape[0], 1))
    else:
        w = fields["omega"]
        J = world_inertia(fields) if J is None else J
        Jw = np.einsum("nij,nj->ni", J, w)
        torque = -np.stack([w[:, 1] * Jw[:, 2] - w[:, 2] * Jw[:, 1], w[:, 2] * Jw[:, 0] - w[:, 0] * Jw[:, 2],
                            w[:, 0] * Jw[:, 1] - w[:, 1] * Jw[:, 0]], axis=1)  # omega x J omega
    return (h * np.concatenate([force, torque], axis=1)).ravel()


def kinetic_energy(fields, planar, J=None):
    v, w, m = fields["velocity"], fields["omega"], fields["mass"]
    if planar:
        rot = fields["inertia"] * w * w
    else:
        J = world_inertia(fields) if J is None else J
        rot = np.einsum("ni,nij,nj->n", w, J, w)
    return 0.5 * float(np.sum(m * np.einsum("ni,ni->n", v, v) + rot))


def friction_directions(normals, n_d, count=None, slip=None, slip_scale=None):
    """n_d unit directions (n, 3, n_d) in each tangent plane, as :func:`mbdcp.friction_basis`; with
    ``count``, only the first ``count`` of them (n, 3, count).

    With ``slip`` (n, 3), the relative velocity each contact would have without friction, and its
    ``slip_scale`` (n,), the magnitude of its terms: where the tangential slip exceeds its rounding
    (:data:`SLIP_ROUNDING` of its scale), the first direction opposes it, so that a sliding contact meets the full friction
    mu p_n against its motion whatever its direction (the polygon's vertex, not an edge, faces the
    slip); elsewhere (no slip beyond rounding) the directions start from the world axis least
    aligned with the normal."""
    c, s = unit_circle(n_d)
    n = np.ascontiguousarray(normals, dtype=np.float64)
    if slip is not None:
        slip = np.ascontiguousarray(slip, dtype=np.float64)
        slip_scale = np.ascontiguousarray(slip_scale, dtype=np.float64)
    return _core.friction_directions(n, slip, slip_scale, SLIP_ROUNDING, np.ascontiguousarray(c[:count]),
                                     np.ascontiguousarray(s[:count]))


def free_slip(blocks, v, p_ext, ends, contacts):
    """(slip (n_c, 3), scale (n_c,)): the relative velocity of body a against b (or the wall) at
    each contact after the step's applied impulse alone, v + M^-1 p_ext, and the magnitude of its
    terms (the rounding it may carry is below 1e-16 of it)."""
    n, k = blocks.shape[0], blocks.shape[1]
    free = (v + np.linalg.solve(blocks, p_ext.reshape(n, k, 1))[..., 0].ravel()).reshape(n, k)
    lin, ang = free[:, :3], free[:, 3:]
    a, b = contacts.a, contacts.b
    pair = b >= 0
    end_b = np.where(pair, b, a)

    def point_velocity(body, r):
        w = ang[body]
        return lin[body] + np.cross(w, r), np.linalg.norm(lin[body], axis=1) + np.linalg.norm(w, axis=1) * np.linalg.norm(r, axis=1)

    va, sa = point_velocity(a, ends.r[:, 0])
    vb, sb = point_velocity(end_b, ends.r[:, 1])
    vb = np.where(pair[:, None], vb, contacts.wall_velocity)
    sb = np.where(pair, sb, np.linalg.norm(contacts.wall_velocity, axis=1))
    return va - vb, sa + sb


SLIP_ROUNDING = 1e-9  # a slip below this fraction of its terms' magnitude is rounding, not a direction


class _Ends:
    """The bodies touching each contact: a and, for a pair, b (-1 for a wall), with the offsets r
    of the contact point from their centres."""

    def __init__(self, contacts, pos, dof):
        self.body = np.ascontiguousarray(np.stack([contacts.a, contacts.b], axis=1), dtype=np.intc)  # (n_c, 2)
        ends = np.where(contacts.b >= 0, contacts.b, contacts.a)
        self.r = np.ascontiguousarray(np.stack([contacts.point - pos[contacts.a], contacts.point - pos[ends]], axis=1))
        self.n_v = pos.shape[0] * dof

    def jacobian(self, dirs, dense=False):
        """The columns of K directions per contact (dirs: (n_c, dim, K)), contact after contact:
        an (n_v, K n_c) array, or a CSC matrix built directly in its storage (per column, body
        a's rows then body b's; a < b for pairs)."""
        n_c, _, K = dirs.shape
        indptr, rows, vals = self.csc(dirs)
        if not dense:
            return sp.csc_matrix((vals, rows, indptr), shape=(self.n_v, K * n_c))
        W = np.zeros((self.n_v, K * n_c))
        W[rows, np.repeat(np.arange(K * n_c), np.diff(indptr))] = vals
        return W

    def csc(self, dirs):
        """The CSC arrays (indptr, indices: int32; data) of :meth:`jacobian`, indices sorted: per
        end the direction d and its moment r x d about the centre (body b's negated)."""
        return _core.contact_columns(self.body, self.r, np.ascontiguousarray(dirs, dtype=np.float64), self.n_v)


def assemble(fields, planar, gravity, mu, n_d, h, contacts, form="dense", parts=("Wn", "D", "Wt"), J=None):
    """Arguments of one step: a dict with M, Wn, D, E, U, Wt, v, p_ext, psi_n, dpsi_n, dpsi_f and
    the contacts. ``form``: "dense" (NumPy arrays), "sparse" (scipy.sparse; M block diagonal)
    or "blocks" (sparse Jacobians and M as its diagonal blocks (n, k, k)). Only the Jacobians in
    ``parts`` are built (E goes with D); "P" is the CCP's [n_1 u_1 w_1 ...] (the columns of Wn and Wt
    interleaved, :func:`mbdcp.formulations.ccp.cone_jacobian`) as CSC arrays (indptr, indices, data),
    whatever the form; with "P" alone the friction directions D are not built, nor dpsi_f. ``J``: the
    world inertias (:func:`world_inertia`) of these fields, if already known."""
    dof = 3 if planar else 6
    J = None if planar else world_inertia(fields) if J is None else J
    blocks = mass_blocks(fields, planar, J)
    n_c, n_v = len(contacts), blocks.shape[0] * dof
    normal = contacts.normal
    cone_only = tuple(parts) == ("P",)  # the CCP's step: no D
    if planar:
        t = np.stack([-normal[:, 1], normal[:, 0]], axis=1)[:, :, None]
        dirs, pair = np.concatenate([t, -t], axis=2)[:, :, :n_d], np.concatenate([t, np.zeros_like(t)], axis=2)
    elif cone_only:
        dirs, pair = None, friction_directions(normal, 4, 2)
    ends = _Ends(contacts, fields["position"], dof)
    v, p_ext = velocity(fields, planar), applied_impulse(fields, planar, gravity, h, J)
    if not planar and not cone_only:
        slip, scale = free_slip(blocks, v, p_ext, ends, contacts)
        dirs, pair = friction_directions(normal, n_d, slip=slip, slip_scale=scale), friction_directions(normal, 4, 2)
    out = dict(U=np.full(n_c, float(mu)), v=v, p_ext=p_ext,
               psi_n=contacts.gap.copy(), dpsi_n=-np.einsum("ij,ij->i", normal, contacts.wall_velocity), contacts=contacts)
    if not cone_only:
        out["dpsi_f"] = -np.einsum("cdk,cd->ck", dirs, contacts.wall_velocity).ravel()
    dense = form == "dense"
    mats = {}
    if "Wn" in parts:
        mats["Wn"] = ends.jacobian(normal[:, :, None], dense)
    if "D" in parts:
        mats["D"] = ends.jacobian(dirs, dense)
        mats["E"] = sp.csc_matrix((np.ones(n_c * n_d), np.arange(n_c * n_d), n_d * np.arange(n_c + 1)), shape=(n_c * n_d, n_c))
        mats["E"] = mats["E"].toarray() if dense else mats["E"]
    if "Wt" in parts:
        mats["Wt"] = ends.jacobian(pair, dense)
    if "P" in parts:
        mats["P"] = ends.csc(np.concatenate([normal[:, :, None], pair], axis=2))
    n = blocks.shape[0]
    if dense:
        M = np.zeros((n_v, n_v))
        M.reshape(n, dof, n, dof)[np.arange(n), :, np.arange(n), :] = blocks
    elif form == "sparse":
        M = sp.bsr_matrix((blocks, np.arange(n), np.arange(n + 1)), shape=(n_v, n_v)).tocsr()
        M.eliminate_zeros()
    else:
        M = blocks
    out.update(mats, M=M)
    return out
