"""Siconos numerics text files (``.dat``): LCP, MLCP and friction-contact problems (see
:mod:`mbdcp.io` for the format)."""
import os

import numpy as np
import scipy.sparse as sp

from mbdcp.infrastructure import validate as val
from mbdcp.tools.io._problems import FormatError, GlobalProblem, LCPProblem, LocalProblem, MLCPProblem, _symmetry

__all__ = ["read_siconos_fc", "read_siconos_lcp", "read_siconos_mlcp"]

# ---------------------------------------------------------------- Siconos text files


class _Tokens:
    """Whitespace-separated tokens of a text file, consumed in order; errors name file and field."""

    def __init__(self, path):
        path = val.path("path", path)
        self.fname = os.path.basename(path)
        with open(path, "rb") as fh:
            self.toks = fh.read().decode("latin-1").split()
        self.pos = 0

    def fail(self, fieldname, msg):
        raise FormatError(f"{self.fname}: {fieldname}: {msg}")

    def _take(self, count, fieldname, what):
        if count < 0:
            self.fail(fieldname, f"negative count {count}")
        toks = self.toks[self.pos:self.pos + count]
        if len(toks) < count:
            self.fail(fieldname, f"expected {count} {what}, the file ends after {len(toks)}")
        self.pos += count
        return toks

    def ints(self, count, fieldname):
        out = []
        for t in self._take(count, fieldname, "integers"):
            try:
                out.append(int(t))
            except ValueError:
                self.fail(fieldname, f"expected an integer, got {t!r}")
        return out

    def int(self, fieldname, low=None):
        k = self.ints(1, fieldname)[0]
        if low is not None and k < low:
            self.fail(fieldname, f"must be at least {low}, got {k}")
        return k

    def size(self, fieldname, factor=1):
        """A dimension (>= 0): checked against the file before anything is allocated, since each
        row or column of a problem comes with at least one value (of q, of a block), factor
        values per unit of the dimension declared."""
        k = self.int(fieldname, 0)
        if k * factor > len(self.toks):
            self.fail(fieldname, f"declares {k}, more than a file of {len(self.toks)} numbers can hold")
        return k

    def floats(self, count, fieldname):
        toks = self._take(count, fieldname, "numbers")
        try:
            a = np.array(toks, dtype=np.float64)
        except ValueError:
            for t in toks:
                try:
                    float(t)
                except ValueError:
                    self.fail(fieldname, f"expected a number, got {t!r}")
        if not np.all(np.isfinite(a)):
            self.fail(fieldname, f"non-finite value {toks[int(np.flatnonzero(~np.isfinite(a))[0])]!r}")
        return a

    def peek_ints(self, count):
        """The next count tokens as integers, or None if they are not all integers."""
        toks = self.toks[self.pos:self.pos + count]
        try:
            return [int(t) for t in toks] if len(toks) == count else None
        except ValueError:
            return None

    def rest(self):
        return " ".join(self.toks[self.pos:])


def _read_nm(tok, name):
    """A Siconos matrix block: dense ndarray (storage 0) or CSR (storage 1, sparse-block)."""
    storage = tok.int(f"{name}: storage type")
    rows, cols = tok.size(f"{name}: rows"), tok.size(f"{name}: columns")
    if storage == 0:
        r2, c2 = tok.int(f"{name}: rows"), tok.int(f"{name}: columns")
        if (r2, c2) != (rows, cols):
            tok.fail(name, f"dense header {r2} x {c2} does not repeat the size {rows} x {cols}")
        # Siconos dense matrices are column-major: each printed line of a square matrix is a column
        return tok.floats(rows * cols, f"{name}: values").reshape((rows, cols), order="F")
    if storage == 1:
        return _read_sbm(tok, name, rows, cols)
    if storage == 2:
        tok.fail(name, "storage type 2 (sparse) is not supported; only 0 (dense) and 1 (sparse-block)")
    tok.fail(name, f"storage type {storage} is not known (0 dense, 1 sparse-block, 2 sparse)")


def _boundaries(tok, name, which, count, total):
    ends = tok.ints(count, f"{name}: {which} block boundaries")
    if count and (ends[0] <= 0 or any(b <= a for a, b in zip(ends, ends[1:])) or ends[-1] != total):
        tok.fail(name, f"{which} block boundaries {ends} must increase strictly up to {total}")
    if not count and total:
        tok.fail(name, f"no {which} blocks for a size of {total}")
    return [0] + ends


def _read_sbm(tok, name, rows, cols):
    """Siconos sparse-block matrix: nbblocks, block rows/cols counts, their cumulative sizes,
    filled1 and filled2, the block-row pointers (index1) and block-column indices (index2),
    then for each block its number and values, column-major."""
    nblocks = tok.size(f"{name}: number of blocks")
    nbr, nbc = tok.size(f"{name}: block rows"), tok.size(f"{name}: block columns")
    row_b = _boundaries(tok, name, "row", nbr, rows)
    col_b = _boundaries(tok, name, "column", nbc, cols)
    filled1, filled2 = tok.int(f"{name}: filled1", 1), tok.int(f"{name}: filled2", 0)
    if filled1 > nbr + 1 or filled2 != nblocks:
        tok.fail(name, f"filled1 = {filled1}, filled2 = {filled2} do not fit {nbr} block rows and {nblocks} blocks")
    index1 = tok.ints(filled1, f"{name}: block-row pointers")
    index2 = tok.ints(filled2, f"{name}: block-column indices")
    if index1[0] != 0 or any(b < a for a, b in zip(index1, index1[1:])) or index1[-1] != nblocks:
        tok.fail(name, f"block-row pointers {index1} must go from 0 to {nblocks} without decreasing")
    if any(not 0 <= c < nbc for c in index2):
        tok.fail(name, f"block-column indices {index2} outside [0, {nbc})")
    r_idx, c_idx, vals = [], [], []
    for br in range(filled1 - 1):
        row_cols = index2[index1[br]:index1[br + 1]]
        if any(b <= a for a, b in zip(row_cols, row_cols[1:])):
            tok.fail(name, f"block row {br}: block columns {row_cols} must increase strictly")
        nr = row_b[br + 1] - row_b[br]
        for j in range(index1[br], index1[br + 1]):
            number = tok.int(f"{name}: block {j} number")
            if number != j:
                tok.fail(name, f"block {j} is numbered {number}")
            bc = index2[j]
            nc = col_b[bc + 1] - col_b[bc]
            block = tok.floats(nr * nc, f"{name}: block {j} values").reshape((nr, nc), order="F")
            rr, cc = np.meshgrid(np.arange(row_b[br], row_b[br + 1]), np.arange(col_b[bc], col_b[bc + 1]), indexing="ij")
            r_idx.append(rr.ravel())
            c_idx.append(cc.ravel())
            vals.append(block.ravel())
    if not vals:
        return sp.csr_matrix((rows, cols))
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(r_idx), np.concatenate(c_idx))), shape=(rows, cols))
    A.eliminate_zeros()  # the zeros inside dense blocks, as for a dense matrix block
    return A


# A sparse-block matrix is returned dense (LCP, MLCP) only up to this many entries, or EXPANSION
# times the numbers in the file if that is more: memory stays bounded by the file's size.
DENSE_ENTRIES = 1 << 24
EXPANSION = 64


def _dense(A, tok, name):
    if not sp.issparse(A):
        return A
    if A.shape[0] * A.shape[1] > max(DENSE_ENTRIES, EXPANSION * len(tok.toks)):
        tok.fail(name, f"a sparse {A.shape[0]} x {A.shape[1]} matrix, too large to return dense from a file of "
                       f"{len(tok.toks)} numbers")
    return A.toarray()


def read_siconos_lcp(path):
    """Read a Siconos LCP file: ``n``, a matrix block (dense or sparse-block), ``q``.

    Returns
    -------
    LCPProblem
        ``(M, q)``: M a dense (n, n) ndarray (column-major in the file), q (n,).

    Examples
    --------
    >>> import os, tempfile
    >>> from mbdcp.io import read_siconos_lcp
    >>> path = os.path.join(tempfile.mkdtemp(), "lcp.dat")
    >>> _ = open(path, "w").write("2\\n0\\n2\\n2\\n2 2\\n1 2\\n3 4\\n-1 -1\\n")
    >>> M, q = read_siconos_lcp(path)   # each printed line is a column of M
    >>> M
    array([[1., 3.],
           [2., 4.]])
    """
    tok = _Tokens(path)
    n = tok.size("n")
    M = np.ascontiguousarray(_dense(_read_nm(tok, "M"), tok, "M"))
    if M.shape != (n, n):
        tok.fail("M", f"shape {M.shape}, expected ({n}, {n})")
    q = tok.floats(n, "q")
    for a in (M, q):
        a.setflags(write=False)
    return LCPProblem(M, q)


def read_siconos_mlcp(path):
    """Read a Siconos MLCP file.

    Format: two flags (storage 1: block layout and a matrix block M with q; storage 2: the blocks
    A, B, C, D row by row, then a, b), ``n`` (equality rows), ``m`` (complementarity rows); with
    storage 1, the row-block boundaries, which blocks are complementarity rows (1) or equalities
    (0), M (column-major when dense) and q. When both are present they must agree exactly.

    Returns
    -------
    MLCPProblem

    Raises
    ------
    FormatError
        Also for a rectangular M (more equality rows than free unknowns, as in Siconos'
        ``Rectangular_mlcp.dat``, whose q has fewer values than M has rows), and for equality
        rows placed after complementarity rows.
    """
    tok = _Tokens(path)
    st1, st2 = tok.int("storage type 1 flag"), tok.int("storage type 2 flag")
    if st1 not in (0, 1) or st2 not in (0, 1) or not (st1 or st2):
        tok.fail("storage flags", f"({st1}, {st2}): each must be 0 or 1, one at least 1")
    n, m = tok.size("n"), tok.size("m")
    from1 = from2 = None
    if st1:
        bounds = [tok.int("blocksRows")]
        while bounds[-1] < n + m:
            if len(bounds) > n + m + 1:
                tok.fail("blocksRows", f"{bounds[:8]}... does not reach n + m = {n + m}")
            bounds.append(tok.int("blocksRows"))
        if bounds[0] != 0 or bounds[-1] != n + m or any(b <= a for a, b in zip(bounds, bounds[1:])):
            tok.fail("blocksRows", f"{bounds} must increase strictly from 0 to n + m = {n + m}")
        is_comp = tok.ints(len(bounds) - 1, "blocksIsComp")
        M = _dense(_read_nm(tok, "M"), tok, "M")
        q = tok.floats(M.shape[1], "q")  # Siconos writes as many q values as M has columns
        if M.shape != (n + m, n + m):
            tok.fail("M", f"shape {M.shape}: only square MLCPs with n + m = {n + m} rows and columns are supported")
        comp_rows = [r for k, c in enumerate(is_comp) if c for r in range(bounds[k], bounds[k + 1])]
        if comp_rows != list(range(n, n + m)):
            tok.fail("blocksIsComp", f"{is_comp} over {bounds}: the m = {m} complementarity rows must be the last ones")
        from1 = (M[:n, :n], M[n:, n:], M[:n, n:], M[n:, :n], q[:n], q[n:])
    if st2:
        from2 = tuple(tok.floats(r * c, name).reshape(r, c) for name, r, c in
                      (("A", n, n), ("B", m, m), ("C", n, m), ("D", m, n))) + (tok.floats(n, "a"), tok.floats(m, "b"))
    if from1 is not None and from2 is not None:
        for name, x1, x2 in zip("ABCDab", from1, from2):
            if not np.array_equal(x1, x2):
                tok.fail(name, "storage 2 disagrees with the block of M, q in storage 1")
    return MLCPProblem(*(from2 if from2 is not None else from1))


def read_siconos_fc(path, kind=None):
    r"""Read a Siconos friction-contact file (local ``FC2D``/``FC3D`` or global ``GFC3D``).

    Local: ``d``, ``nc``, W (d·nc square), q (d·nc), μ (nc) — :math:`\hat u = W r + q +
    [\mu\|u_T\|, 0, 0]`. Global: ``d``, ``nc``, M (n×n), H (n×d·nc), q (n), b (d·nc), μ (nc) —
    :math:`M v = q + H r`, :math:`u = H^T v + b`, returned as :class:`GlobalProblem` with ``f = q``,
    ``w = b``. Trailing text becomes ``info["comment"]``.

    Parameters
    ----------
    path : str or os.PathLike
    kind : {None, "local", "global"}
        None tells them apart by the file: a second matrix block after the first means global.

    Returns
    -------
    LocalProblem or GlobalProblem
        Matrices as CSR (dense and sparse-block storage both read).

    Warns
    -----
    SymmetryWarning
        W (local) or M (global) not symmetric.
    """
    kind = val.choice("kind", kind, ("local", "global"), allow_none=True)
    tok = _Tokens(path)
    d = tok.int("d")
    if d not in (2, 3):
        tok.fail("d", f"{d} is not 2 or 3")
    nc = tok.size("nc", d)
    first = sp.csr_matrix(_read_nm(tok, {"local": "W", "global": "M", None: "W or M"}[kind]))
    if kind is None:
        head = tok.peek_ints(3)
        # a global file goes on with H's header: storage type, n rows, d*nc columns
        kind = "global" if head is not None and head[0] in (0, 1, 2) and head[1:] == [first.shape[0], d * nc] else "local"
    if kind == "local":
        if first.shape != (d * nc, d * nc):
            tok.fail("W", f"shape {first.shape}, expected d*nc = {d * nc} square")
        W = _symmetry(first, tok.fname, "W", complete=False)
        q = tok.floats(d * nc, "q")
        mu = tok.floats(nc, "mu")
        if mu.size and mu.min() < 0:
            tok.fail("mu", f"negative friction coefficient {mu.min()}")
        rest = tok.rest()
        return LocalProblem(W, q, mu, d, info={"comment": rest} if rest else None)
    n = first.shape[0]
    if first.shape != (n, n):
        tok.fail("M", f"shape {first.shape} is not square")
    M = _symmetry(first, tok.fname, "M", complete=False)
    H = sp.csr_matrix(_read_nm(tok, "H"))
    if H.shape != (n, d * nc):
        tok.fail("H", f"shape {H.shape}, expected (n, d*nc) = ({n}, {d * nc})")
    f = tok.floats(n, "q")
    w = tok.floats(d * nc, "b")
    mu = tok.floats(nc, "mu")
    if mu.size and mu.min() < 0:
        tok.fail("mu", f"negative friction coefficient {mu.min()}")
    rest = tok.rest()
    return GlobalProblem(M, H, f, w, mu, d, info={"comment": rest} if rest else None)
