r"""Read and write friction-contact and complementarity problems in the formats of other projects.

**FCLib** (the Frictional Contact Library, HDF5 files, read and written with ``h5py``, the
``fclib`` extra). :func:`read_fclib` returns an :class:`FclibFile` with three fields:

- ``problem``: a :class:`LocalProblem` (group ``/fclib_local``): find :math:`r, u \in \mathbb{R}^m`
  with :math:`\hat u = W r + q + [\mu_\alpha \|u_{T,\alpha}\|, 0, 0]_\alpha` and
  :math:`C^*_\mu \ni \hat u \perp r \in C_\mu` per contact :math:`\alpha` (the Coulomb problem, not
  its cone relaxation); or a :class:`GlobalProblem` (``/fclib_global``): :math:`M v = H r + G\lambda + f`,
  :math:`G^T v + b = 0`, :math:`u = H^T v + w`, the same cone complementarity on :math:`(u, r)`.
  ``/fclib_global_rolling`` (rolling friction: spacedim 5 = normal, two tangents, two rolling
  components) gives a GlobalProblem whose ``mu_r`` holds the rolling coefficients.
- ``solution``: the :class:`Solution` ``(v, u, r, l)`` of ``/solution``, or None. In the files of
  the FCLib collection it is a zero placeholder, not a solution.
- ``guesses``: a tuple of Solution from ``/guesses/1``, ``/guesses/2``, ...

Sparse matrices are CSparse-style groups ``{nzmax, m, n, nz, p, i, x}``: ``nz >= 0`` triplet with
``i`` the row and ``p`` the column indices (as the files are written, although fclib.h's comment says
the reverse), ``nz = -1`` compressed columns, ``nz = -2`` compressed rows. They come back as
``scipy.sparse`` matrices: CSR when stored by rows, CSC otherwise, duplicates summed, explicit zeros
kept. A square M or W stored as one triangle only (CubeH8, LMGC_GlobalFrictionContactProblem00046:
FE mass matrices) is completed by symmetry and a :class:`SymmetryWarning` says so; a full one that
is not symmetric (Capsules' W, 1e-3 relative; Chute's M, 1.5e-6) is returned as stored, with a
SymmetryWarning. Problem information (``/…/info``: title, description, math_info and any
attributes) becomes the problem's ``info`` dict; matrix information (conditioning...) is not read.
:func:`write_fclib` writes the standard layout (the same as the FCLib C library), in each matrix's
own storage or the one asked for; reading the file back gives bitwise-equal arrays.

**Siconos numerics text files** (``.dat``). A matrix block is a storage type (0 dense, 1
sparse-block, 2 sparse), rows and cols; dense values are listed **column by column** (each printed
line of a square matrix is a column); sparse-block matrices list block-row/column boundaries,
block indices and each block's values, also column-major. Storage 2 is not supported
(:class:`FormatError`). Text after the data is a comment.

- :func:`read_siconos_lcp`: ``n``, M, q -> ``(M, q)`` (an :class:`LCPProblem`), M dense.
- :func:`read_siconos_mlcp` -> :class:`MLCPProblem` ``(A, B, C, D, a, b)``.
- :func:`read_siconos_fc`: local ``d, nc, W, q, mu`` -> LocalProblem; global (``GFC3D``)
  ``d, nc, M, H, q, b, mu`` for :math:`M v = q + H r`, :math:`u = H^T v + b` -> GlobalProblem with
  ``f = q`` and ``w = b`` (FCLib's :math:`b` belongs to equality constraints, absent here).

A malformed or truncated file raises :class:`FormatError` (a ValueError) naming the file and the
field, e.g. ``Box_Stacks.hdf5: /fclib_global/M: nz = -3 is not a known storage``.
"""
from mbdcp.tools.io._problems import (
           FclibFile,
           FormatError,
           GlobalProblem,
           LCPProblem,
           LocalProblem,
           MLCPProblem,
           Solution,
           SymmetryWarning,
)
from mbdcp.tools.io.fclib import read_fclib, write_fclib
from mbdcp.tools.io.siconos import read_siconos_fc, read_siconos_lcp, read_siconos_mlcp

__all__ = ["FclibFile", "FormatError", "GlobalProblem", "LCPProblem", "LocalProblem", "MLCPProblem", "Solution",
           "SymmetryWarning", "read_fclib", "read_siconos_fc", "read_siconos_lcp", "read_siconos_mlcp", "write_fclib"]
