"""The trajectory of a MuJoCo model: a :class:`mbdcp.mechanics.Trajectory` whose rows are MuJoCo's
coordinates (qpos, qvel), which :meth:`~mbdcp.mechanics.Trajectory.animate` cannot draw."""
import collections.abc
from dataclasses import dataclass

from mbdcp.mechanics import Trajectory

__all__ = ["MujocoTrajectory", "ContactStates"]


class ContactStates(collections.abc.Sequence):
    """Per step, the :class:`~mbdcp.ContactState` of each contact between geoms, classified when
    first read (from the step's result, kept for that) rather than during the run."""

    def __init__(self, results, counts):
        self._results, self._counts, self._states = results, counts, {}

    def __len__(self):
        return len(self._results)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        k = range(len(self))[k]
        if k not in self._states:
            self._states[k] = list(self._results[k].contact_state[:self._counts[k]])
        return self._states[k]

    def __repr__(self):
        return f"ContactStates({len(self)} steps)"


@dataclass(frozen=True, repr=False)
class MujocoTrajectory(Trajectory):
    """A :class:`~mbdcp.mechanics.Trajectory` of a MuJoCo model (:func:`mbdcp.mujoco.simulate`).

    ``positions`` holds ``qpos`` per time (n_q columns: a free joint's position and unit quaternion,
    a ball joint's quaternion, a hinge's angle or a slide's displacement, in the model's order),
    ``velocities`` ``qvel`` (n_v columns: a free joint's linear velocity in the world frame and
    angular velocity in the body's frame). ``impulses``, ``contact_states``, ``contact_points``
    and ``contact_normals`` are those of the contacts between geoms (not of the limits);
    ``contacts`` counts them; a normal points from MuJoCo's geom1 to geom2. ``max_penetration`` is
    the deepest penetration of two geoms. The energies and :meth:`plot_energy`,
    :meth:`plot_penetration`, :meth:`plot_contact_states` are as for any trajectory; ``shapes`` is
    None and :meth:`animate` is not supported (draw the positions with MuJoCo's own renderer,
    ``mujoco.Renderer``, or its viewer).
    """

    def animate(self, *args, **kwargs):
        """Not supported for MuJoCo models: raises NotImplementedError saying what to use instead."""
        raise NotImplementedError("animate draws mbdcp.mechanics scenes only; a MuJoCo model's trajectory has no shapes: "
                                  "render its positions (qpos per row) with mujoco.Renderer or mujoco.viewer")
