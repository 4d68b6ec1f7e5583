"""What every formulation stands on: the binding to the C core (``_core``), input validation
(:mod:`~mbdcp.infrastructure.validate`), the validated problem data (:mod:`~mbdcp.infrastructure.problem`),
the gap correction (:mod:`~mbdcp.infrastructure.stabilization`), result objects
(:mod:`~mbdcp.infrastructure.results`), statuses (:mod:`~mbdcp.infrastructure.status`) and contact states
(:mod:`~mbdcp.infrastructure.contact_state`). Nothing here is imported from ``mbdcp.*`` by users but
:class:`mbdcp.Status`, :class:`mbdcp.ContactState` and the result classes."""

__all__ = []  # the names live at mbdcp.* (see above)
