"""FCLib (the Frictional Contact Library) HDF5 files: :func:`read_fclib` and :func:`write_fclib`
(see :mod:`mbdcp.io` for the layout)."""
import os

import numpy as np
import scipy.sparse as sp

from mbdcp.infrastructure import validate as val
from mbdcp.tools.io._problems import _INT32_MAX, FclibFile, FormatError, GlobalProblem, LocalProblem, Solution, _symmetry

__all__ = ["read_fclib", "write_fclib"]

# ---------------------------------------------------------------- FCLib


def _h5py():
    try:
        import h5py
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("reading and writing FCLib files needs h5py: pip install mbdcp[fclib]") from None
    return h5py


# What a file may declare, against its size in bytes: a dataset at most EXPANSION times the file
# (HDF5 compression aside, a dataset is stored in the file), a matrix dimension at most
# EXPANSION / 8 times it (a dimension costs a pointer of 8 bytes in compressed storage). Checked
# before anything is allocated, so that a file of 100 bytes cannot ask for terabytes.
EXPANSION = 64


class _Reader:
    """Checked access to the datasets of one open HDF5 file; errors name the file and the field."""

    def __init__(self, h5, fname, nbytes):
        self.h5, self.fname = h5, fname
        self.max_bytes = EXPANSION * max(nbytes, 1024)
        self.max_size = self.max_bytes // 8

    def fail(self, path, msg):
        raise FormatError(f"{self.fname}: {path}: {msg}")

    def has(self, path):
        try:
            return path in self.h5
        except (OSError, RuntimeError, KeyError):
            return False

    def dataset(self, path):
        if not self.has(path):
            self.fail(path, "missing")
        try:
            obj = self.h5[path]
            if not isinstance(obj, _h5py().Dataset):
                self.fail(path, "is a group, expected a dataset")
            if obj.size * obj.dtype.itemsize > self.max_bytes:
                self.fail(path, f"declares {obj.size} values of {obj.dtype.itemsize} bytes, more than a file of "
                                f"this size can hold ({self.max_bytes // EXPANSION} bytes)")
            return obj[()]
        except FormatError:
            raise
        except (OSError, RuntimeError, KeyError, TypeError, ValueError) as exc:
            self.fail(path, f"cannot be read ({exc})")

    def integer(self, path):
        a = np.asarray(self.dataset(path))
        if not np.issubdtype(a.dtype, np.integer) or a.size != 1:
            self.fail(path, f"expected one integer, got {a.dtype} of shape {a.shape}")
        return int(a.reshape(-1)[0])

    def ints(self, path, n, exact=False):
        a = np.asarray(self.dataset(path))
        if not np.issubdtype(a.dtype, np.integer) or a.ndim != 1:
            self.fail(path, f"expected a 1-D integer array, got {a.dtype} of shape {a.shape}")
        if a.shape[0] < n or (exact and a.shape[0] != n):
            self.fail(path, f"has {a.shape[0]} entries, expected {n}")
        return a[:n]

    def floats(self, path, n, exact=True):
        a = np.asarray(self.dataset(path))
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)) or a.ndim != 1:
            self.fail(path, f"expected a 1-D float array, got {a.dtype} of shape {a.shape}")
        if a.shape[0] < n or (exact and a.shape[0] != n):
            self.fail(path, f"has {a.shape[0]} entries, expected {n}")
        a = a[:n].astype(np.float64)
        if not np.all(np.isfinite(a)):
            self.fail(path, f"non-finite value at index {int(np.flatnonzero(~np.isfinite(a))[0])}")
        return a

    def matrix(self, path):
        nzmax, m, n, nz = (self.integer(f"{path}/{k}") for k in ("nzmax", "m", "n", "nz"))
        if m < 0 or n < 0 or nzmax < 0:
            self.fail(path, f"negative size (m = {m}, n = {n}, nzmax = {nzmax})")
        if max(m, n) > self.max_size:
            self.fail(path, f"declares {m} x {n}, larger than a file of this size can describe "
                            f"(at most {self.max_size} rows or columns)")
        if nz >= 0:
            i, p = self.ints(f"{path}/i", nz), self.ints(f"{path}/p", nz)
            x = self.floats(f"{path}/x", nz, exact=False)
            self._bounds(f"{path}/i", i, m, "row")
            self._bounds(f"{path}/p", p, n, "column")
            return sp.coo_matrix((x, (i, p)), shape=(m, n)).tocsc()
        if nz not in (-1, -2):
            self.fail(path, f"nz = {nz} is not a known storage (>= 0 triplet, -1 CSC, -2 CSR)")
        outer, inner, kind = (n, m, "row") if nz == -1 else (m, n, "column")
        p = self.ints(f"{path}/p", outer + 1, exact=True)
        if p[0] != 0 or np.any(np.diff(p) < 0):
            self.fail(f"{path}/p", "pointers must start at 0 and never decrease")
        nnz = int(p[-1])
        i = self.ints(f"{path}/i", nnz)
        x = self.floats(f"{path}/x", nnz, exact=False)
        self._bounds(f"{path}/i", i, inner, kind)
        cls = sp.csc_matrix if nz == -1 else sp.csr_matrix
        A = cls((x, i.copy(), p.copy()), shape=(m, n))
        A.sum_duplicates()
        return A

    def _bounds(self, path, idx, size, kind):
        if idx.size and (idx.min() < 0 or idx.max() >= size):
            bad = idx[(idx < 0) | (idx >= size)][0]
            self.fail(path, f"{kind} index {bad} outside [0, {size})")

    def info(self, path):
        if not self.has(path):
            return None
        out = {}
        group = self.h5[path]
        try:
            for key, obj in group.items():
                if isinstance(obj, _h5py().Dataset):
                    out[key] = _plain(self.dataset(f"{path}/{key}"))
            for key, value in group.attrs.items():
                out[key] = _plain(value)
        except (OSError, RuntimeError) as exc:
            self.fail(path, f"cannot be read ({exc})")
        return out

    def solution(self, path, sizes):
        if not self.has(path):
            return None
        values = {}
        for name, n in sizes.items():
            if self.has(f"{path}/{name}") and n:
                values[name] = self.floats(f"{path}/{name}", n)
        return Solution(**values)


def _plain(value):
    """An HDF5 info value as what a problem's info holds: str, int, float, bool or numeric ndarray."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf":
            return value.reshape(-1)[0].item() if value.size == 1 else value
        if value.dtype.kind in "SUO":
            return "\n".join(str(_plain(v)) for v in value.reshape(-1))
    elif isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    elif isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def read_fclib(path):
    r"""Read an FCLib HDF5 file.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    FclibFile
        ``problem`` (:class:`LocalProblem` or :class:`GlobalProblem`), ``solution``
        (:class:`Solution` or None: a zero placeholder in the FCLib collection) and ``guesses``
        (tuple of Solution). See the module docstring for the layout and the conventions.

    Raises
    ------
    FormatError
        The file is not HDF5, or a field is missing, of the wrong size or type, or corrupted.
    FileNotFoundError

    Warns
    -----
    SymmetryWarning
        W or M stored as one triangle (completed by symmetry), or not symmetric.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, scipy.sparse as sp
    >>> from mbdcp.io import LocalProblem, read_fclib, write_fclib
    >>> p = LocalProblem(sp.identity(3, format="csr"), np.array([-1.0, 0.5, 0.0]), [0.3], 3)
    >>> path = os.path.join(tempfile.mkdtemp(), "one.hdf5")
    >>> write_fclib(path, p)
    >>> f = read_fclib(path)
    >>> f.problem.W.format, f.problem.n_contacts, f.problem.mu, f.solution
    ('csr', 1, array([0.3]), None)
    """
    h5py = _h5py()
    path = val.path("path", path)
    fname = os.path.basename(path)
    try:
        h5 = h5py.File(path, "r")
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FormatError(f"{fname}: not a readable HDF5 file ({exc})") from None
    with h5:
        try:
            return _read_fclib(_Reader(h5, fname, os.path.getsize(path)))
        except (OSError, RuntimeError, KeyError) as exc:  # damage the field checks did not meet first
            raise FormatError(f"{fname}: unreadable ({exc})") from None


def _read_fclib(rd):
    roots = [r for r in ("fclib_local", "fclib_global", "fclib_global_rolling") if rd.has(r)]
    if len(roots) != 1:
        raise FormatError(f"{rd.fname}: expected one of /fclib_local, /fclib_global, /fclib_global_rolling, "
                          f"found {roots or list(rd.h5.keys())}")
    root = "/" + roots[0]
    problem, sizes = (_read_local if root == "/fclib_local" else _read_global)(rd, root)
    solution = rd.solution("/solution", sizes)
    guesses = ()
    if rd.has("/guesses"):
        count = rd.integer("/guesses/number_of_guesses")
        if count < 0:
            rd.fail("/guesses/number_of_guesses", f"negative count {count}")
        for k in range(1, count + 1):
            if not rd.has(f"/guesses/{k}"):
                rd.fail(f"/guesses/{k}", f"missing (number_of_guesses = {count})")
        guesses = tuple(rd.solution(f"/guesses/{k}", sizes) for k in range(1, count + 1))
    return FclibFile(problem, solution, guesses)


def _read_spacedim(rd, root, allowed):
    d = rd.integer(f"{root}/spacedim")
    if d not in allowed:
        rd.fail(f"{root}/spacedim", f"{d} is not one of {allowed}")
    return d


def _checked(rd, root, cls, **fields):
    try:
        return cls(**fields)
    except (ValueError, TypeError) as exc:  # anything the field checks above let through
        rd.fail(root, str(exc))


def _read_local(rd, root):
    for extra in ("V", "R"):
        if rd.has(f"{root}/{extra}"):
            rd.fail(f"{root}/{extra}", "local problems with equality constraints (V, R, s) are not supported")
    d = _read_spacedim(rd, root, (2, 3))
    W = rd.matrix(f"{root}/W")
    m = W.shape[0]
    if W.shape[1] != m or m % d:
        rd.fail(f"{root}/W", f"shape {W.shape} is not square with a size divisible by spacedim = {d}")
    W = _symmetry(W, rd.fname, f"{root}/W")
    q = rd.floats(f"{root}/vectors/q", m)
    mu = _read_mu(rd, f"{root}/vectors/mu", m // d)
    p = _checked(rd, root, LocalProblem, W=W, q=q, mu=mu, spacedim=d, info=rd.info(f"{root}/info"))
    return p, {"v": 0, "u": m, "r": m, "l": 0}


def _read_mu(rd, path, nc):
    mu = rd.floats(path, nc)
    if mu.size and mu.min() < 0:
        rd.fail(path, f"negative friction coefficient {mu.min()}")
    return mu


def _read_global(rd, root):
    rolling = root.endswith("rolling")
    d = _read_spacedim(rd, root, (3, 5) if rolling else (2, 3))
    M = rd.matrix(f"{root}/M")
    n = M.shape[0]
    if M.shape[1] != n:
        rd.fail(f"{root}/M", f"shape {M.shape} is not square")
    M = _symmetry(M, rd.fname, f"{root}/M")
    H = rd.matrix(f"{root}/H")
    m = H.shape[1]
    if H.shape[0] != n or m % d:
        rd.fail(f"{root}/H", f"shape {H.shape} is not (n, spacedim * n_c) with n = {n}, spacedim = {d}")
    G = b = None
    if rd.has(f"{root}/G"):
        G = rd.matrix(f"{root}/G")
        if G.shape[0] != n:
            rd.fail(f"{root}/G", f"shape {G.shape} does not have n = {n} rows")
        b = rd.floats(f"{root}/vectors/b", G.shape[1])
    fields = {"M": M, "H": H, "G": G, "b": b, "spacedim": d, "f": rd.floats(f"{root}/vectors/f", n),
              "w": rd.floats(f"{root}/vectors/w", m), "mu": _read_mu(rd, f"{root}/vectors/mu", m // d),
              "info": rd.info(f"{root}/info")}
    if rolling:
        fields["mu_r"] = _read_mu(rd, f"{root}/vectors/mu_r", m // d)
    p = _checked(rd, root, GlobalProblem, **fields)
    return p, {"v": n, "u": m, "r": m, "l": 0 if G is None else G.shape[1]}


def _write_matrix(group, A, storage):
    storage = storage or ("csr" if A.format == "csr" else "csc")
    if max(A.shape) > _INT32_MAX or A.nnz > _INT32_MAX:
        raise ValueError(f"matrix of shape {A.shape} with {A.nnz} entries does not fit FCLib's 32-bit indices")
    if storage == "triplet":
        C = A.tocoo()
        nz, p, i, x = C.nnz, C.col, C.row, C.data
    else:
        C = A.tocsc() if storage == "csc" else A.tocsr()
        nz, p, i, x = (-1 if storage == "csc" else -2), C.indptr, C.indices, C.data
    for key, value in (("nzmax", A.nnz), ("m", A.shape[0]), ("n", A.shape[1]), ("nz", nz)):
        group.create_dataset(key, data=np.array([value], dtype=np.int32))
    group.create_dataset("p", data=np.asarray(p, dtype=np.int32))
    group.create_dataset("i", data=np.asarray(i, dtype=np.int32))
    group.create_dataset("x", data=np.asarray(x, dtype=np.float64))


def _write_info(group, info):
    for key, value in info.items():
        if isinstance(value, str):
            raw = value.encode("utf-8")
            # NUL-terminated fixed-length string, as the FCLib C library writes it
            group.create_dataset(key, data=np.array(raw, dtype=f"S{len(raw) + 1}"))
        else:
            group.attrs[key] = value


def _write_solution(group, s):
    for name in ("v", "u", "r", "l"):
        x = getattr(s, name)
        if x is not None and x.size:
            group.create_dataset(name, data=x)


def _check_solution(name, s, sizes):
    if s is None:
        return
    if not isinstance(s, Solution):
        raise TypeError(f"{name} must be a Solution, got {val.describe(s)}")
    for key, n in sizes.items():
        x = getattr(s, key)
        if x is not None and x.shape[0] != n:
            raise ValueError(f"{name}.{key} must have shape ({n},) for this problem, got {x.shape}")


def write_fclib(path, problem, solution=None, guesses=None, *, storage=None):
    """Write a problem (and optionally a solution and initial guesses) as an FCLib HDF5 file.

    The file is overwritten. Layout: ``/fclib_local`` or ``/fclib_global`` (``/fclib_global_rolling``
    when ``problem.mu_r`` is set) with ``spacedim``, the sparse matrix groups, ``vectors`` and
    ``info``; ``/solution``; ``/guesses/{number_of_guesses, 1, 2, ...}``. :func:`read_fclib` gives
    back bitwise-equal arrays.

    Parameters
    ----------
    path : str or os.PathLike
    problem : LocalProblem or GlobalProblem
    solution : Solution, optional
        Vector sizes: v (n, global only), u and r (m), l (p when G is given).
    guesses : sequence of Solution, optional
    storage : {None, "csc", "csr", "triplet"}
        Sparse storage of every matrix; None keeps each matrix's own (CSR as CSR, CSC as CSC).

    Examples
    --------
    See :func:`read_fclib`.
    """
    h5py = _h5py()
    path = val.path("path", path)
    storage = val.choice("storage", storage, ("csc", "csr", "triplet"), allow_none=True)
    if isinstance(problem, LocalProblem):
        m = problem.W.shape[0]
        sizes = {"v": 0, "u": m, "r": m, "l": 0}
        root = "fclib_local"
    elif isinstance(problem, GlobalProblem):
        m = problem.H.shape[1]
        sizes = {"v": problem.M.shape[0], "u": m, "r": m, "l": 0 if problem.G is None else problem.G.shape[1]}
        root = "fclib_global" if problem.mu_r is None else "fclib_global_rolling"
    else:
        raise TypeError(f"problem must be a LocalProblem or a GlobalProblem, got {val.describe(problem)}")
    if guesses is not None and not isinstance(guesses, (list, tuple)):
        raise TypeError(f"guesses must be a list of Solution, got {val.describe(guesses)}")
    guesses = () if guesses is None else tuple(guesses)
    _check_solution("solution", solution, sizes)
    for k, g in enumerate(guesses):
        _check_solution(f"guesses[{k}]", g, sizes)
    with h5py.File(path, "w") as h5:
        g = h5.create_group(root)
        g.create_dataset("spacedim", data=np.array([problem.spacedim], dtype=np.int32))
        vec = g.create_group("vectors")
        if root == "fclib_local":
            _write_matrix(g.create_group("W"), problem.W, storage)
            vec.create_dataset("q", data=problem.q)
        else:
            _write_matrix(g.create_group("M"), problem.M, storage)
            _write_matrix(g.create_group("H"), problem.H, storage)
            vec.create_dataset("f", data=problem.f)
            vec.create_dataset("w", data=problem.w)
            if problem.G is not None:
                _write_matrix(g.create_group("G"), problem.G, storage)
                vec.create_dataset("b", data=problem.b)
            if problem.mu_r is not None:
                vec.create_dataset("mu_r", data=problem.mu_r)
        vec.create_dataset("mu", data=problem.mu)
        if problem.info is not None:
            _write_info(g.create_group("info"), problem.info)
        if solution is not None:
            _write_solution(h5.create_group("solution"), solution)
        if guesses:
            gg = h5.create_group("guesses")
            gg.create_dataset("number_of_guesses", data=np.array([len(guesses)], dtype=np.int32))
            for k, s in enumerate(guesses, 1):
                _write_solution(gg.create_group(str(k)), s)


