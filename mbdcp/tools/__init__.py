"""What users build on the formulations: batches (:mod:`mbdcp.batch`), parameter studies
(:mod:`mbdcp.study`), side-by-side comparisons (:func:`mbdcp.compare`), problem files
(:mod:`mbdcp.io`), interactive explorers (:mod:`mbdcp.widgets`), demos, worked examples
(:mod:`mbdcp.examples`) and random test problems (:mod:`mbdcp.testing`). Each is imported as
``mbdcp.<name>``."""

__all__ = []  # the names live at mbdcp.* (see above)
