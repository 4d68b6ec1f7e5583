r"""MuJoCo models (MJCF or URDF) stepped by mbdcp's solvers, with exact (rigid) contacts.

MuJoCo (Todorov, Erez & Tassa 2012) reads the model, computes its kinematics, mass matrix, smooth
forces, contacts and constraint rows; mbdcp solves each step as the time-stepping LCP of Stewart &
Trinkle (1996) and Anitescu & Potra (1997), written as in Trinkle (2003), eqs. 25–38 (or the
fixed-point relaxations, or the cone complementarity problem), instead of MuJoCo's soft, convex
contact model (Todorov 2014):

.. math::

   M v^{l+1} - W_b p_b - W_n p_n - D\beta - D_j\beta_j &= M v^l + p_{ext} \\
   W_b^T v^{l+1} + \Theta/h &= 0 \\
   0 \le p_n \perp W_n^T v^{l+1} + \Psi_n/h &\ge 0 \\
   0 \le \beta \perp D^T v^{l+1} + E\sigma &\ge 0, \qquad 0 \le \sigma \perp U p_n - E^T\beta \ge 0 \\
   0 \le \beta_j \perp D_j^T v^{l+1} + E_j\sigma_j &\ge 0, \qquad 0 \le \sigma_j \perp \beta_{max} - E_j^T\beta_j \ge 0

with :math:`M` MuJoCo's mass matrix, :math:`p_{ext} = h(\tau_{applied} + \tau_{actuator} +
\tau_{passive} - c(q, v))`, the contacts within the activation distance :math:`\delta` and the
joint and tendon limits in :math:`W_n` with their gaps :math:`\Psi_n`, the equality constraints
(connect, weld, joint, tendon) in :math:`W_b` with their errors :math:`\Theta`, and friction loss
as joint friction (Trinkle 2003, eq. 38). The positions then move by MuJoCo's ``mj_integratePos``.

- :func:`load` — a :class:`Model` from an MJCF or URDF file or string;
- :meth:`Model.problem` — the arrays of one step, for :func:`mbdcp.step` or any solver;
- :func:`simulate` — a whole run, as a :class:`MujocoTrajectory` (a :class:`mbdcp.mechanics.Trajectory`);
- :func:`compare`, :func:`plot_comparison`, :func:`run_mujoco` — beside MuJoCo's own ``mj_step``;
- :func:`from_scene`, :func:`scene_mjcf` — a :mod:`mbdcp.mechanics` scene as a MuJoCo model.

MuJoCo is optional (``pip install mbdcp[mujoco]``): importing this module does not import it; the
functions that need it raise an ImportError naming the extra. What the step does not model is
warned about once per model (:class:`NotMappedWarning`) and listed in the documentation's table.
"""
from mbdcp.mujoco._compare import compare, plot_comparison, run_mujoco
from mbdcp.mujoco._features import NotMappedWarning
from mbdcp.mujoco._model import Model, load
from mbdcp.mujoco._scene import from_scene, scene_mjcf
from mbdcp.mujoco._simulate import simulate
from mbdcp.mujoco._trajectory import MujocoTrajectory

__all__ = ["load", "Model", "simulate", "MujocoTrajectory", "compare", "plot_comparison", "run_mujoco", "NotMappedWarning",
           "from_scene", "scene_mjcf"]
