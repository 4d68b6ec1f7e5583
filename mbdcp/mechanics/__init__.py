r"""A small rigid-body layer: bodies, shapes, contact generation and the time-stepping loop.

Planar bodies have velocities :math:`(\dot x, \dot y, \omega)` and :math:`M = \mathrm{diag}(m, m, J)`;
a contact at offset :math:`r` from the centre of mass with unit normal :math:`\hat n` (pointing
into the body) contributes the column :math:`(\hat n, (r \times \hat n)_z)`.

Spatial bodies (Trinkle (notes, 2003), spatial part; the documentation's chapter "Rigid bodies")
have configuration :math:`q = (x, e)` with a unit quaternion :math:`e`, velocities
:math:`v = (\dot x, \omega)` with :math:`\omega` in the world frame, :math:`\dot q = G(q)v`, :math:`G = \mathrm{blockdiag}(I_3, B(e))`,

.. math::  B(e) = \tfrac12\begin{bmatrix} -e_1 & -e_2 & -e_3 \\ e_0 & e_3 & -e_2 \\
                                       -e_3 & e_0 & e_1 \\ e_2 & -e_1 & e_0 \end{bmatrix},

world inertia :math:`J = R J_B R^T`, gyroscopic impulse :math:`-h\,\omega \times J\omega`, and the
quaternion renormalised after each step. A contact column is :math:`(\hat n, r \times \hat n)`;
the other body of a pair gets the negated vector at its own offset.

Contacts are generated for every pair of shapes: disks, spheres and particles with walls and with
each other, boxes' corners with walls (mbdcp's own code), and every pair involving a box (2-D or
3-D) or a fixed obstacle (:class:`Block`, :class:`Segment`) from MuJoCo's collision functions.
Pairs closer than the activation distance ``delta`` (Negrut, Serban & Tasora 2018, discussion of
eq. 6) enter the step with their gap :math:`\Psi_n` (stabilisation :math:`\Psi_n/h`). Walls may
move with a prescribed velocity (``dpsi_n``, ``dpsi_f``).

A :class:`Scene` keeps its bodies' fields as arrays (one row per body) and the bodies read and
write their rows, so a step's contacts, assembly, energies and update are computed for all
bodies at once (NumPy, and the compiled core for the pair search and the Jacobian columns).
Modules: ``bodies`` (bodies and quaternions), ``walls``, ``obstacles``, ``collide`` (MuJoCo's
contacts), ``contacts`` (broad phase on a hashed uniform grid), ``assembly`` (M blocks,
Jacobians), ``scene``, ``simulate`` (the loop and :class:`Trajectory`), ``steppers`` (a formulation's
step after step), ``warm`` (what a step carries to the next), ``scenes`` (ready-made piles),
``checks`` (field validation).
"""
from mbdcp.mechanics.bodies import B_matrix, Body2D, Body3D, quaternion_to_matrix
from mbdcp.mechanics.contacts import Contact, Contacts
from mbdcp.mechanics.joints import Pin
from mbdcp.mechanics.obstacles import Block, Segment
from mbdcp.mechanics.scene import Scene
from mbdcp.mechanics.scenes import disk_pile_scene, sphere_pile_scene
from mbdcp.mechanics.simulate import Failure, Trajectory, simulate
from mbdcp.mechanics.walls import Line, Plane

__all__ = ["Body2D", "Body3D", "Line", "Plane", "Block", "Segment", "Scene", "Trajectory", "Failure", "simulate",
           "quaternion_to_matrix", "B_matrix", "Contact", "Contacts", "Pin", "disk_pile_scene", "sphere_pile_scene"]
