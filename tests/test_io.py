"""mbdcp.io: FCLib HDF5 and Siconos .dat problem files.

Checked against the data's own description (tests/data/README.md, the shared data README), a
plain entry-by-entry reading of the raw HDF5 datasets, the JSON reference of the Siconos LCPs
(written row-major), dense/sparse-block twins of the same problem, Siconos' own reader (when
installed) and the definition of the local problem of a global one.
"""
import doctest
import glob
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mbdcp
from mbdcp import io
from mbdcp.io import FormatError, GlobalProblem, LocalProblem, MLCPProblem, Solution, SymmetryWarning

h5py = pytest.importorskip("h5py")

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
SHARED = os.path.join(HERE, "..", "..", "shared", "data")  # beside the checkouts: the large files stay there


def data_file(*parts):
    """A test data file: the copy in tests/data, else the shared data, else skip."""
    for root in (DATA, SHARED):
        path = os.path.join(root, *parts)
        if os.path.exists(path):
            return path
    pytest.skip(f"{os.path.join(*parts)} not available")


# The README table: kind, spacedim, contacts, the set of mu values (μ of Box_Stacks, CubeH8 and
# LMGC_Global, and Chute's spacedim 5 with μ 1 and rolling μ_r 0.1, come from the files' headers).
FCLIB = {
    "local_problem_test.hdf5": ("local", 3, 48, {0.7}),
    "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5": ("local", 3, 60, {0.3, 0.5}),
    "Capsules-i125-1213.hdf5": ("local", 3, 286, {0.7}),
    "Box_Stacks-i0122-82-5.hdf5": ("global", 3, 82, {0.3}),
    "spheres-in-a-box-98-i10000-256-10.hdf5": ("global", 3, 256, {0.1}),
    "CubeH8.hdf5": ("global", 3, 1, {0.3}),
    "LMGC_GlobalFrictionContactProblem00046.hdf5": ("global", 3, 9, {0.3}),
    "Chute-ndof-768-nc-4-3.hdf5": ("global", 5, 4, {1.0}),
}
# What reading each file should report: asymmetric W/M, or M stored as its upper triangle.
SYMMETRY = {"Capsules-i125-1213.hdf5": "not symmetric", "Chute-ndof-768-nc-4-3.hdf5": "not symmetric",
            "CubeH8.hdf5": "upper triangle", "LMGC_GlobalFrictionContactProblem00046.hdf5": "upper triangle"}


def read_quiet(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymmetryWarning)
        return io.read_fclib(path)


def fclib(name):
    return read_quiet(data_file("fclib", name))


def raw_dense(group):
    """The matrix of a CSparse-style group, entry by entry, from the README's description."""
    m, n, nz = (int(group[k][0]) for k in ("m", "n", "nz"))
    p, i, x = group["p"][()], group["i"][()], group["x"][()]
    A = np.zeros((m, n))
    if nz >= 0:
        for k in range(nz):
            A[i[k], p[k]] += x[k]
    else:
        for outer in range(len(p) - 1):
            for k in range(p[outer], p[outer + 1]):
                if nz == -1:
                    A[i[k], outer] += x[k]
                else:
                    A[outer, i[k]] += x[k]
    return A


# ---------------------------------------------------------------- FCLib: the shipped files


@pytest.mark.parametrize("name", sorted(FCLIB))
def test_fclib_files_read_as_documented(name):
    kind, d, nc, mus = FCLIB[name]
    f = fclib(name)
    p = f.problem
    assert isinstance(p, LocalProblem if kind == "local" else GlobalProblem)
    assert p.spacedim == d and p.n_contacts == nc and set(p.mu.tolist()) == mus
    assert p.mu.shape == (nc,) and p.info["title"]
    if kind == "local":
        assert p.W.shape == (d * nc, d * nc) and p.q.shape == (d * nc,) and p.W.format in ("csr", "csc")
    else:
        n = p.M.shape[0]
        assert p.M.shape == (n, n) and p.H.shape == (n, d * nc) and p.f.shape == (n,) and p.w.shape == (d * nc,)
    sizes = {"v": 0 if kind == "local" else p.M.shape[0], "u": d * nc, "r": d * nc}
    for s in ((f.solution,) if f.solution is not None else ()) + f.guesses:
        for key, size in sizes.items():
            assert getattr(s, key) is None if size == 0 else getattr(s, key).shape == (size,)
    if f.solution is not None:  # the README: zero placeholders, not solutions
        assert not f.solution.r.any()


def test_fclib_readme_facts():
    box = fclib("Box_Stacks-i0122-82-5.hdf5").problem
    assert box.M.shape == (450, 450) and box.H.shape == (450, 246)
    assert sp.triu(box.M, 1).nnz == 0 and sp.tril(box.M, -1).nnz == 0  # diagonal M
    chute = fclib("Chute-ndof-768-nc-4-3.hdf5").problem
    assert np.array_equal(chute.mu_r, [0.1] * 4)
    assert [len(fclib(n).guesses) for n in ("local_problem_test.hdf5", "Capsules-i125-1213.hdf5", "CubeH8.hdf5")] == [1, 1, 0]


@pytest.mark.parametrize("name", sorted(FCLIB))
def test_fclib_matrices_match_the_raw_datasets(name):
    p = fclib(name).problem
    root = {"local": "fclib_local", "global": "fclib_global"}[FCLIB[name][0]]
    with h5py.File(data_file("fclib", name)) as h5:
        root = root if root in h5 else root + "_rolling"
        for key in ("W",) if FCLIB[name][0] == "local" else ("M", "H"):
            A = raw_dense(h5[f"{root}/{key}"])
            if SYMMETRY.get(name) == "upper triangle" and key == "M":
                assert not np.tril(A, -1).any()
                A = A + np.triu(A, 1).T
            assert np.array_equal(getattr(p, key).toarray(), A)
        q = "q" if "W" in h5[root] else "f"
        assert np.array_equal(getattr(p, q), h5[f"{root}/vectors/{q}"][()])


def test_fclib_triplet_indices_are_rows_then_columns():
    # fclib.h's comment calls p the row indices of a triplet; in the files they cannot be.
    with h5py.File(data_file("fclib", "Box_Stacks-i0122-82-5.hdf5")) as h5:
        H = h5["fclib_global/H"]
        assert H["i"][()].max() >= H["n"][0] > H["p"][()].max()


@pytest.mark.parametrize("name", sorted(FCLIB))
def test_fclib_symmetry_warnings(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = io.read_fclib(data_file("fclib", name)).problem
    messages = [str(w.message) for w in caught if issubclass(w.category, SymmetryWarning)]
    if name in SYMMETRY:
        assert len(messages) == 1 and SYMMETRY[name] in messages[0] and messages[0].startswith(name)
    else:
        assert messages == []
    A = p.W if isinstance(p, LocalProblem) else p.M
    asym = abs(A - A.T).max() / abs(A).max()
    assert (asym > 1e-10) == (SYMMETRY.get(name) == "not symmetric")


@pytest.mark.parametrize("name", ["CubeH8.hdf5", "LMGC_GlobalFrictionContactProblem00046.hdf5"])
def test_fclib_upper_triangle_completed_to_a_positive_definite_mass_matrix(name):
    M = fclib(name).problem.M.toarray()
    assert np.array_equal(M, M.T)
    np.linalg.cholesky(M)


# ---------------------------------------------------------------- FCLib: writing


def assert_same_sparse(A, B):
    assert A.format == B.format and A.shape == B.shape and A.data.dtype == B.data.dtype == np.float64
    assert np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices)
    assert np.array_equal(A.data, B.data)  # bitwise: float64 -> HDF5 -> float64 is exact


def assert_same_vector(a, b):
    assert (a is None) == (b is None)
    if a is not None:
        assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b)


def assert_same_info(a, b):
    assert (a is None) == (b is None)
    if a is not None:
        assert a.keys() == b.keys()
        for k in a:
            assert type(a[k]) is type(b[k]) and np.array_equal(a[k], b[k])


def assert_same_problem(p, r):
    assert type(p) is type(r) and p.spacedim == r.spacedim
    for key in ("W", "M", "H", "G"):
        A, B = getattr(p, key, None), getattr(r, key, None)
        assert (A is None) == (B is None)
        if A is not None:
            assert_same_sparse(A, B)
    for key in ("q", "f", "w", "b", "mu", "mu_r"):
        assert_same_vector(getattr(p, key, None), getattr(r, key, None))
    assert_same_info(p.info, r.info)


def assert_same_solution(s, t):
    assert (s is None) == (t is None)
    if s is not None:
        for key in "vurl":
            assert_same_vector(getattr(s, key), getattr(t, key))


@pytest.mark.parametrize("name", sorted(FCLIB))
def test_fclib_round_trip_is_exact(name, tmp_path):
    f = fclib(name)
    path = tmp_path / "copy.hdf5"
    io.write_fclib(path, f.problem, f.solution, f.guesses)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = io.read_fclib(path)
    # an asymmetric matrix stays so; a completed triangle is now stored in full
    assert len(caught) == (SYMMETRY.get(name) == "not symmetric")
    assert_same_problem(f.problem, g.problem)
    assert_same_solution(f.solution, g.solution)
    assert len(f.guesses) == len(g.guesses)
    for s, t in zip(f.guesses, g.guesses):
        assert_same_solution(s, t)


def test_fclib_written_layout_is_the_standard_one(tmp_path):
    f = fclib("Chute-ndof-768-nc-4-3.hdf5")
    io.write_fclib(tmp_path / "c.hdf5", f.problem, f.solution)
    with h5py.File(tmp_path / "c.hdf5") as h5:
        g = h5["fclib_global_rolling"]
        assert g["spacedim"].dtype == np.int32 and g["spacedim"][()].tolist() == [5]
        assert sorted(g["M"]) == ["i", "m", "n", "nz", "nzmax", "p", "x"] and g["M/nz"][()].tolist() == [-1]
        assert sorted(g["vectors"]) == ["f", "mu", "mu_r", "w"]
        assert g["info/title"][()] == b"Chute with rolling friction"
        assert g["info/title"].dtype.itemsize == len("Chute with rolling friction") + 1  # NUL-terminated, as fclib.c
        assert sorted(h5["solution"]) == ["r", "u", "v"]


@pytest.fixture
def local_problem():
    rng = np.random.default_rng(7)
    A = sp.random(6, 6, density=0.5, random_state=rng, format="csr")
    W = (A @ A.T + sp.identity(6)).tocsr()
    W[0, 5] = 0.0  # an explicit zero: kept through every storage
    W[5, 0] = 0.0
    return LocalProblem(W, rng.standard_normal(6), [0.2, 0.4], 3, info={"title": "t", "count": 3, "x": 0.5})


@pytest.mark.parametrize("storage, nz, fmt", [("csc", -1, "csc"), ("csr", -2, "csr"), ("triplet", None, "csc")])
def test_fclib_every_storage_kind(local_problem, tmp_path, storage, nz, fmt):
    p = local_problem
    path = tmp_path / f"{storage}.hdf5"
    guess = Solution(u=np.arange(6.0), r=np.ones(6))
    io.write_fclib(path, p, guesses=[guess, guess], storage=storage)
    with h5py.File(path) as h5:
        stored = int(h5["fclib_local/W/nz"][0])
        assert stored == (p.W.nnz if nz is None else nz)
        assert np.array_equal(raw_dense(h5["fclib_local/W"]), p.W.toarray())
    f = io.read_fclib(path)
    W = f.problem.W
    assert W.format == fmt and W.nnz == p.W.nnz  # the explicit zero survives
    expected = p.W.tocsc() if fmt == "csc" else p.W
    assert_same_sparse(W, expected)
    assert len(f.guesses) == 2 and np.array_equal(f.guesses[1].u, np.arange(6.0)) and f.solution is None
    assert f.problem.info == {"title": "t", "count": 3, "x": 0.5}


def test_fclib_global_with_equality_constraints_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    M = sp.diags(rng.uniform(1, 2, 5)).tocsc()
    H = sp.random(5, 6, density=0.6, random_state=rng, format="csc")
    G = sp.random(5, 2, density=0.8, random_state=rng, format="csr")
    p = GlobalProblem(M, H, rng.standard_normal(5), rng.standard_normal(6), [0.1, 0.2, 0.3], 2, G=G,
                      b=rng.standard_normal(2))
    s = Solution(v=rng.standard_normal(5), u=rng.standard_normal(6), r=rng.standard_normal(6), l=rng.standard_normal(2))
    io.write_fclib(tmp_path / "g.hdf5", p, s)
    f = io.read_fclib(tmp_path / "g.hdf5")
    assert_same_problem(p, f.problem)
    assert_same_solution(s, f.solution)
    assert f.problem.G.format == "csr" and f.problem.info is None and f.guesses == ()


def test_fclib_hand_written_storages_are_canonicalised(tmp_path):
    # a triplet with a repeated entry (summed) and a CSC with unsorted row indices
    path = tmp_path / "hand.hdf5"
    with h5py.File(path, "w") as h5:
        g = h5.create_group("fclib_local")
        g["spacedim"] = np.array([2], np.int32)
        W = g.create_group("W")
        for k, v in {"nzmax": 5, "m": 2, "n": 2, "nz": 5}.items():
            W[k] = np.array([v], np.int32)
        W["i"] = np.array([0, 1, 0, 1, 0], np.int32)
        W["p"] = np.array([0, 1, 1, 0, 0], np.int32)
        W["x"] = np.array([1.0, 2.0, 3.0, 4.0, 0.5])
        g["vectors/q"] = np.array([-1.0, 0.0])
        g["vectors/mu"] = np.array([0.5])
    with pytest.warns(SymmetryWarning, match="not symmetric"):
        p = io.read_fclib(path).problem
    assert np.array_equal(p.W.toarray(), [[1.5, 3.0], [4.0, 2.0]]) and p.W.has_canonical_format
    with h5py.File(path, "r+") as h5:
        W = h5["fclib_local/W"]
        for key, value in {"nz": [-1], "nzmax": [4], "p": [0, 2, 4], "i": [1, 0, 1, 0], "x": [4.0, 1.0, 2.0, 3.0]}.items():
            del W[key]
            W[key] = np.array(value, np.float64 if key == "x" else np.int32)
    with pytest.warns(SymmetryWarning, match="not symmetric"):
        p = io.read_fclib(path).problem
    assert p.W.format == "csc" and p.W.has_sorted_indices
    assert np.array_equal(p.W.toarray(), [[1.0, 3.0], [4.0, 2.0]])


# ---------------------------------------------------------------- FCLib: bad files


@pytest.fixture
def good_file(tmp_path):
    W = sp.csr_matrix(np.array([[2.0, 1, 0], [1, 3, 0], [0, 0, 1]]))
    path = tmp_path / "good.hdf5"
    io.write_fclib(path, LocalProblem(W, [-1.0, 0.0, 0.0], [0.5], 3), guesses=[Solution(u=np.zeros(3), r=np.zeros(3))])
    return path


def replace(path, key, value):
    with h5py.File(path, "r+") as h5:
        del h5[key]
        if value is not None:
            h5[key] = value


@pytest.mark.parametrize("key, value, message", [
    ("fclib_local/vectors/q", None, "/fclib_local/vectors/q: missing"),
    ("fclib_local/vectors/q", np.zeros(2), "/fclib_local/vectors/q: has 2 entries, expected 3"),
    ("fclib_local/vectors/q", np.array([0.0, np.nan, 1.0]), "/fclib_local/vectors/q: non-finite value at index 1"),
    ("fclib_local/vectors/mu", np.array([-0.5]), "/fclib_local/vectors/mu: negative friction coefficient"),
    ("fclib_local/W/nz", np.array([-3], np.int32), "/fclib_local/W: nz = -3 is not a known storage"),
    ("fclib_local/W/nz", np.array([1.5]), "/fclib_local/W/nz: expected one integer"),
    ("fclib_local/W/i", np.array([0, 1, 0, 7, 2], np.int32), "/fclib_local/W/i: column index 7 outside [0, 3)"),
    ("fclib_local/W/p", np.array([0, 2, 1, 5], np.int32), "/fclib_local/W/p: pointers must start at 0 and never decrease"),
    ("fclib_local/W/p", np.array([0, 2, 4], np.int32), "/fclib_local/W/p: has 3 entries, expected 4"),
    ("fclib_local/W/x", np.array([1.0, 2.0]), "/fclib_local/W/x: has 2 entries, expected 5"),
    ("fclib_local/W/n", np.array([4], np.int32), "/fclib_local/W: shape (3, 4) is not square"),
    ("fclib_local/spacedim", np.array([4], np.int32), "/fclib_local/spacedim: 4 is not one of (2, 3)"),
    ("fclib_local/W/x", None, "/fclib_local/W/x: missing"),
    ("guesses/number_of_guesses", np.array([2], np.int32), "/guesses/2: missing"),
    ("fclib_local", None, "expected one of /fclib_local"),
])
def test_fclib_bad_field_names_file_and_field(good_file, key, value, message):
    replace(good_file, key, value)
    with pytest.raises(FormatError) as exc:
        read_quiet(good_file)
    assert str(exc.value).startswith("good.hdf5: ") and message in str(exc.value)


def test_fclib_group_where_a_dataset_belongs(good_file):
    replace(good_file, "fclib_local/W/x", None)
    with h5py.File(good_file, "r+") as h5:
        h5["fclib_local/W"].create_group("x")
    with pytest.raises(FormatError, match=r"good.hdf5: /fclib_local/W/x: is a group"):
        io.read_fclib(good_file)


def test_fclib_info_values_of_other_writers(good_file):
    with h5py.File(good_file, "r+") as h5:
        info = h5["fclib_local"].create_group("info")
        info["title"] = np.bytes_(b"caf\xc3\xa9")
        info.attrs["lines"] = np.array([b"a", b"b"])
        info.attrs["dofs"] = np.array([606], np.int32)
        info.attrs["sizes"] = np.array([1.5, 2.5])
        info.attrs["z"] = np.complex128(1 + 2j)
    got = io.read_fclib(good_file).problem.info
    assert got["title"] == "café" and got["lines"] == "a\nb" and got["dofs"] == 606 and type(got["dofs"]) is int
    assert np.array_equal(got["sizes"], [1.5, 2.5]) and got["z"] == "(1+2j)"


def test_fclib_unsupported_local_equality_constraints(good_file):
    with h5py.File(good_file, "r+") as h5:
        h5["fclib_local"].create_group("R")
    with pytest.raises(FormatError, match=r"/fclib_local/R: local problems with equality constraints"):
        io.read_fclib(good_file)


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.6, 0.9, 0.99])
def test_fclib_truncated_files(fraction, tmp_path):
    src = data_file("fclib", "local_problem_test.hdf5")
    data = pathlib.Path(src).read_bytes()
    path = tmp_path / "cut.hdf5"
    path.write_bytes(data[:int(len(data) * fraction)])
    with pytest.raises(FormatError, match=r"^cut\.hdf5: "):
        read_quiet(path)


def test_fclib_not_hdf5_and_missing(tmp_path):
    (tmp_path / "text.hdf5").write_text("3\n1\n")
    with pytest.raises(FormatError, match=r"text.hdf5: not a readable HDF5 file"):
        io.read_fclib(tmp_path / "text.hdf5")
    with pytest.raises(FileNotFoundError):
        io.read_fclib(tmp_path / "absent.hdf5")


def test_write_fclib_checks_its_arguments(local_problem, tmp_path):
    with pytest.raises(ValueError, match="storage must be"):
        io.write_fclib(tmp_path / "x.hdf5", local_problem, storage="coo")
    with pytest.raises(TypeError, match="problem must be a LocalProblem or a GlobalProblem"):
        io.write_fclib(tmp_path / "x.hdf5", {"W": 1})
    with pytest.raises(ValueError, match=r"solution.u must have shape \(6,\)"):
        io.write_fclib(tmp_path / "x.hdf5", local_problem, Solution(u=np.zeros(5)))
    with pytest.raises(TypeError, match=r"guesses\[0\] must be a Solution"):
        io.write_fclib(tmp_path / "x.hdf5", local_problem, guesses=[np.zeros(6)])
    assert not (tmp_path / "x.hdf5").exists()  # nothing written before the checks pass


# ---------------------------------------------------------------- problem objects


def test_problem_objects_validate_and_freeze():
    W = np.eye(3)
    q = np.array([-1.0, 0.0, 0.0])
    p = LocalProblem(W, q, [0.3], 3)
    assert p.W.format == "csc" and p.n_contacts == 1
    q[0] = 5.0  # the problem holds its own copy
    assert p.q[0] == -1.0 and not p.q.flags.writeable
    with pytest.raises(AttributeError):
        p.q = q
    with pytest.raises(ValueError, match="W must be square"):
        LocalProblem(np.eye(4)[:, :3], np.zeros(4), [0.3], 2)
    with pytest.raises(ValueError, match=r"q must have shape \(m,\) = \(3,\)"):
        LocalProblem(W, np.zeros(2), [0.3], 3)
    with pytest.raises(ValueError, match="mu must be nonnegative"):
        LocalProblem(W, q, [-0.3], 3)
    with pytest.raises(ValueError, match="spacedim must be one of"):
        LocalProblem(np.eye(4), np.zeros(4), [0.3], 4)
    with pytest.raises(ValueError, match="W must hold finite values"):
        LocalProblem(sp.csr_matrix(np.diag([1.0, np.inf, 1.0])), q, [0.3], 3)
    with pytest.raises(ValueError, match="G and b must be given together"):
        GlobalProblem(np.eye(3), np.eye(3), q, q, [0.3], 3, G=np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"H must have shape \(n, spacedim \* n_c\)"):
        GlobalProblem(np.eye(3), np.eye(2), q, q, [0.3], 3)
    with pytest.raises(ValueError, match=r"spacedim must be one of \(2, 3\)"):
        GlobalProblem(np.eye(5), np.eye(5), np.zeros(5), np.zeros(5), [0.3], 5)  # 5 needs mu_r (rolling)
    assert GlobalProblem(np.eye(5), np.eye(5), np.zeros(5), np.zeros(5), [0.3], 5, mu_r=[0.1]).n_contacts == 1
    with pytest.raises(TypeError, match="info must be a dict"):
        LocalProblem(W, q, [0.3], 3, info="title")
    with pytest.raises(ValueError, match=r"C must have shape \(n, m\) = \(1, 2\)"):
        MLCPProblem(np.eye(1), np.eye(2), np.zeros((2, 1)), np.zeros((2, 1)), [0.0], [0.0, 0.0])


def test_package_import_does_not_need_h5py():
    code = "import sys, mbdcp; mbdcp.io.read_fclib; assert 'h5py' not in sys.modules"
    root = os.path.dirname(os.path.dirname(os.path.abspath(mbdcp.__file__)))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


def test_docstring_examples():
    results = [doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
               for mod in (io, io.fclib, io.siconos, io._problems)]
    assert sum(r.attempted for r in results) > 0 and sum(r.failed for r in results) == 0


# ---------------------------------------------------------------- global -> local


def check_local_of_global(g, rtol):
    """W r + q equals u = H^T v + w with M v = H r + f, for random r (the definition)."""
    loc = g.to_local()
    rng = np.random.default_rng(11)
    M, H = g.M.toarray(), g.H.toarray()
    for _ in range(3):
        r = rng.standard_normal(H.shape[1])
        v = np.linalg.solve(M, H @ r + g.f)
        u = H.T @ v + g.w
        np.testing.assert_allclose(loc.W @ r + loc.q, u, rtol=0, atol=rtol * np.abs(u).max())
    np.testing.assert_allclose(loc.W.toarray(), H.T @ np.linalg.solve(M, H), rtol=0, atol=rtol * abs(loc.W).max())
    assert loc.spacedim == g.spacedim and np.array_equal(loc.mu, g.mu)
    return loc


@pytest.mark.parametrize("name", ["Box_Stacks-i0122-82-5.hdf5", "CubeH8.hdf5", "LMGC_GlobalFrictionContactProblem00046.hdf5",
                                  "spheres-in-a-box-98-i10000-256-10.hdf5"])
def test_global_fclib_to_local_by_definition(name):
    loc = check_local_of_global(fclib(name).problem, 1e-9)
    W = loc.W.toarray()
    assert np.linalg.eigvalsh((W + W.T) / 2).min() >= -1e-10 * np.abs(W).max()  # Delassus: PSD


def test_to_local_refuses_what_it_cannot_reduce():
    with pytest.raises(ValueError, match="rolling"):
        fclib("Chute-ndof-768-nc-4-3.hdf5").problem.to_local()
    g = GlobalProblem(np.diag([1.0, 0.0, 1.0]), np.eye(3), np.zeros(3), np.zeros(3), [0.1], 3)
    with pytest.raises(ValueError, match="M is singular"):
        g.to_local()


def test_siconos_global_file_maps_to_the_fclib_convention():
    # GFC3D_Example1: M (sparse-block) and H = I, M v = q + H r, u = H^T v + b
    g = io.read_siconos_fc(data_file("siconos", "FrictionContact", "GFC3D_Example1.dat"))
    assert isinstance(g, GlobalProblem)
    assert np.array_equal(g.H.toarray(), np.eye(3)) and np.array_equal(g.w, [-2.5, -10.0, -5.5])
    loc = check_local_of_global(g, 1e-12)
    np.testing.assert_allclose(loc.W.toarray(), np.linalg.inv(g.M.toarray()), rtol=1e-12)


# ---------------------------------------------------------------- Siconos LCP


def siconos_files(kind):
    files = sorted(glob.glob(os.path.join(DATA, "siconos", kind, "*.dat")))
    return files or sorted(glob.glob(os.path.join(SHARED, "siconos", kind, "*.dat")))


def lcp_reference():
    import json

    with open(data_file("lcp_reference_solutions.json")) as fh:
        return json.load(fh)


def test_siconos_lcp_files_match_the_row_major_reference():
    ref = lcp_reference()
    files = {os.path.basename(f)[:-4]: f for f in siconos_files("LCP")}
    assert len(files) == 20 and len(ref) == 17 and set(ref) <= set(files)
    for name, case in ref.items():
        M, q = io.read_siconos_lcp(files[name])
        assert isinstance(M, np.ndarray) and M.shape == (case["n"], case["n"])
        assert np.array_equal(M, np.array(case["M_row_major"], dtype=float)), name
        assert np.array_equal(q, np.array(case["q"], dtype=float)), name
    # read row-major, Murty's example would be its transpose (and solve in 1 pivot instead of 64)
    M, _ = io.read_siconos_lcp(files["lcp_exp_murty2"])
    assert not np.array_equal(M, M.T) and M[0, 1] == 2 and M[1, 0] == 0


@pytest.mark.parametrize("dense", ["lcp_ortiz", "lcp_deudeu", "lcp_trivial"])
def test_siconos_sparse_block_lcp_equals_its_dense_twin(dense):
    A = io.read_siconos_lcp(data_file("siconos", "LCP", f"{dense}.dat"))
    B = io.read_siconos_lcp(data_file("siconos", "LCP", f"{dense}_block.dat"))
    assert np.array_equal(A.M, B.M) and np.array_equal(A.q, B.q)
    assert not np.array_equal(A.M, np.diag(np.diag(A.M))) or dense == "lcp_trivial"


def test_siconos_fc_sparse_block_equals_its_dense_twin():
    A = io.read_siconos_fc(data_file("siconos", "FrictionContact", "FC3D_Example1.dat"))
    B = io.read_siconos_fc(data_file("siconos", "FrictionContact", "FC3D_Example1_SBM.dat"))
    assert_same_sparse(A.W, B.W)
    assert np.array_equal(A.q, B.q) and np.array_equal(A.mu, B.mu)


# ---------------------------------------------------------------- Siconos MLCP and friction contact


MLCP_SIZES = {"PDSym": (3, 4), "PD": (3, 4), "RCD": (2, 1), "RLCD": (6, 2), "deudeu": (1, 1), "diodeBridge": (3, 4),
              "m2n1": (1, 2), "m3n2": (2, 3), "relay2": (4, 2), "relay3": (4, 2)}


def test_siconos_mlcp_files():
    files = siconos_files("MLCP")
    assert len(files) == 11
    for path in files:
        name = os.path.basename(path)[:-len("_mlcp.dat")]
        if name == "Rectangular":
            continue
        p = io.read_siconos_mlcp(path)  # the reader also checks storage 1 against storage 2
        assert (p.n, p.m) == MLCP_SIZES[name]
        assert p.M.shape == (p.n + p.m,) * 2 and np.array_equal(p.q, np.concatenate([p.a, p.b]))
        assert np.array_equal(p.M[:p.n, p.n:], p.C) and np.array_equal(p.M[p.n:, :p.n], p.D)
    # deudeu: the storage-1 matrix printed column by column is [[1, -1], [0, 1]]
    p = io.read_siconos_mlcp(data_file("siconos", "MLCP", "deudeu_mlcp.dat"))
    assert np.array_equal(p.M, [[1.0, -1.0], [0.0, 1.0]]) and np.array_equal(p.q, [-1.0, 1.0])


def test_siconos_rectangular_mlcp_is_refused_clearly():
    # its M is 3 x 2 and Siconos wrote only 2 values of q: not a complete problem
    with pytest.raises(FormatError, match=r"Rectangular_mlcp.dat: M: shape \(3, 2\)"):
        io.read_siconos_mlcp(data_file("siconos", "MLCP", "Rectangular_mlcp.dat"))


FC_EXPECTED = {  # d, nc, mu (from the file headers), global?
    "Confeti-ex13-4contact-Fc3D-SBM": (3, 4, 0.04, False), "FC2D_SliderCrankLagrangian00000": (2, 2, 0.01, False),
    "FC2D_SliderCrankLagrangian00001": (2, 2, 0.01, False), "FC3D_Example1": (3, 3, 0.1, False),
    "FC3D_Example1_SBM": (3, 3, 0.1, False), "FrictionContact3D_1c": (3, 1, 0.1, False),
    "FrictionContact3D_RR_1c": (3, 1, 0.6, False), "FrictionContactProblem00031": (2, 11, 0.9, False),
    "FrictionContactProblem00394": (2, 6, 0.9, False), "GFC3D_Example0": (3, 1, 0.1, True),
    "GFC3D_Example00": (3, 1, 0.1, True), "GFC3D_Example1": (3, 1, 0.5, True), "Rover1039": (3, 4, 0.7, False),
    "Rover11035": (3, 1, 0.7, False), "Rover4396": (3, 2, 0.7, False),
}


def test_siconos_fc_files():
    files = siconos_files("FrictionContact")
    assert len(files) == 15
    for path in files:
        name = os.path.basename(path)[:-4]
        d, nc, mu, is_global = FC_EXPECTED[name]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            p = io.read_siconos_fc(path)
            again = io.read_siconos_fc(path, kind="global" if is_global else "local")
        assert isinstance(p, GlobalProblem if is_global else LocalProblem), name
        assert p.spacedim == d and p.n_contacts == nc and np.array_equal(p.mu, [mu] * nc)
        A = (p.M if is_global else p.W).toarray()
        asymmetric = np.abs(A - A.T).max() > 1e-10 * np.abs(A).max()
        assert asymmetric == any(issubclass(w.category, SymmetryWarning) for w in caught), name
        # the kind is found from the file; saying it gives the same problem
        assert np.array_equal((again.M if is_global else again.W).toarray(), A)


# ---------------------------------------------------------------- Siconos as a peer reader


@pytest.fixture(scope="module")
def siconos():
    from siconos_peer import siconos_available

    if not siconos_available():
        pytest.skip("Siconos not installed")
    from siconos_reader import siconos_read

    return siconos_read


def test_siconos_reads_the_lcp_files_as_we_do(siconos):
    files = siconos_files("LCP")
    for path, ref in zip(files, siconos("lcp", files)):
        M, q = io.read_siconos_lcp(path)
        assert np.array_equal(M, ref["M"]) and np.array_equal(q, ref["q"]), path


def test_siconos_reads_the_mlcp_files_as_we_do(siconos):
    files = [f for f in siconos_files("MLCP") if "Rectangular" not in f]
    for path, ref in zip(files, siconos("mlcp", files)):
        p = io.read_siconos_mlcp(path)
        assert np.array_equal(p.M, ref["M"]) and np.array_equal(p.q, ref["q"]), path


def test_siconos_reads_the_fc_files_as_we_do(siconos):
    files = siconos_files("FrictionContact")
    local = [f for f in files if not os.path.basename(f).startswith("GFC")]
    glob_ = [f for f in files if os.path.basename(f).startswith("GFC")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SymmetryWarning)
        for path, ref in zip(local, siconos("fc", local)):
            p = io.read_siconos_fc(path)
            assert np.array_equal(p.W.toarray(), ref["W"]) and np.array_equal(p.q, ref["q"]), path
            assert np.array_equal(p.mu, ref["mu"]) and p.spacedim == int(ref["d"])
        for path, ref in zip(glob_, siconos("gfc", glob_)):
            p = io.read_siconos_fc(path)
            assert np.array_equal(p.M.toarray(), ref["M"]) and np.array_equal(p.H.toarray(), ref["H"]), path
            assert np.array_equal(p.f, ref["q"]) and np.array_equal(p.w, ref["b"]) and np.array_equal(p.mu, ref["mu"])


# ---------------------------------------------------------------- Siconos: bad and truncated files


READERS = {"LCP": io.read_siconos_lcp, "MLCP": io.read_siconos_mlcp, "FrictionContact": io.read_siconos_fc}


def reads_prefix(read, path, tokens, k):
    """Whether the first k tokens of a file make a readable file; a failure must be a FormatError naming it."""
    path.write_text("\n".join(tokens[:k]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SymmetryWarning)
            read(path)
        return True
    except FormatError as exc:
        assert str(exc).startswith(f"{path.name}: "), str(exc)
        return False


@pytest.mark.parametrize("kind", sorted(READERS))
def test_siconos_truncated_files(kind, tmp_path):
    """Every shipped file cut before its last needed number raises FormatError naming it."""
    read = READERS[kind]
    for src in siconos_files(kind):
        if "Rectangular" in src:
            continue
        tokens = pathlib.Path(src).read_text(encoding="latin-1").split()
        path = tmp_path / os.path.basename(src)
        needed = len(tokens)
        while reads_prefix(read, path, tokens, needed - 1):  # trailing comment tokens are optional
            needed -= 1
        assert reads_prefix(read, path, tokens, needed)
        for k in sorted({0, 1, 2, needed // 3, needed // 2, needed - 2, needed - 1}):
            if 0 <= k < needed:
                assert not reads_prefix(read, path, tokens, k), (path.name, k)


def write(tmp_path, text, name="bad.dat"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ("2\n0\n2\n2\n2 2\n1 0\n0 1\n-1", "bad.dat: q: expected 2 numbers, the file ends after 1"),
    ("2\n0\n2\n2\n2 2\n1 0\n0", "bad.dat: M: values: expected 4 numbers, the file ends after 3"),
    ("2\n2\n2\n2\n", "bad.dat: M: storage type 2 (sparse) is not supported"),
    ("2\n5\n2\n2\n", "bad.dat: M: storage type 5 is not known"),
    ("2\n0\n2\n2\n2 3\n", "bad.dat: M: dense header 2 x 3 does not repeat the size 2 x 2"),
    ("2\n0\n2\n2\n2 2\n1 0 0 1x\n1 1", "bad.dat: M: values: expected a number, got '1x'"),
    ("2\n0\n2\n2\n2 2\n1 0 0 nan\n1 1", "bad.dat: M: values: non-finite value 'nan'"),
    ("two\n", "bad.dat: n: expected an integer, got 'two'"),
    ("3\n0\n2\n2\n2 2\n1 0 0 1\n1 1", "bad.dat: M: shape (2, 2), expected (3, 3)"),
])
def test_siconos_lcp_bad_text(tmp_path, text, message):
    with pytest.raises(FormatError) as exc:
        io.read_siconos_lcp(write(tmp_path, text))
    assert message in str(exc.value)


def test_siconos_sparse_block_inconsistencies(tmp_path):
    tokens = pathlib.Path(data_file("siconos", "FrictionContact", "FC3D_Example1_SBM.dat")).read_text().split()
    # d, nc, storage, 9 x 9, 3 blocks on 3 x 3 block rows/columns, boundaries (3 6 9) twice,
    # filled1 = 4, filled2 = 3, block-row pointers (0 1 2 3), block columns (0 1 2), then block 0
    assert tokens[8:11] == ["3", "6", "9"] and tokens[23] == "0" and tokens[33] == "1"
    bad = tokens.copy()
    bad[33] = "2"
    with pytest.raises(FormatError, match=r"bad.dat: W or M: block 1 is numbered 2"):
        io.read_siconos_fc(write(tmp_path, " ".join(bad)))
    bad = tokens.copy()
    bad[8:11] = ["3", "9", "6"]
    with pytest.raises(FormatError, match=r"bad.dat: W or M: row block boundaries \[3, 9, 6\] must increase strictly up to 9"):
        io.read_siconos_fc(write(tmp_path, " ".join(bad)))
    bad = tokens.copy()
    bad[20] = "5"
    with pytest.raises(FormatError, match=r"block-column indices \[5, 1, 2\] outside \[0, 3\)"):
        io.read_siconos_fc(write(tmp_path, " ".join(bad)))


def test_siconos_mlcp_disagreeing_storages(tmp_path):
    lines = pathlib.Path(data_file("siconos", "MLCP", "deudeu_mlcp.dat")).read_text().split("\n")
    # flags, n, m, blocksRows, blocksIsComp, M (2 columns), q on one line, then A
    assert lines[12].split() == ["-1.000000000000000000000000e+00", "1.000000000000000000000000e+00"]
    lines[13] = "2.0"
    with pytest.raises(FormatError, match=r"bad.dat: A: storage 2 disagrees"):
        io.read_siconos_mlcp(write(tmp_path, "\n".join(lines)))


def test_siconos_fc_bad_values(tmp_path):
    with pytest.raises(FormatError, match=r"bad.dat: d: 4 is not 2 or 3"):
        io.read_siconos_fc(write(tmp_path, "4\n1\n"))
    text = "3\n1\n0\n3\n3\n3 3\n1 0 0 0 1 0 0 0 1\n-1 0 0\n-0.5\n"
    with pytest.raises(FormatError, match=r"bad.dat: mu: negative friction coefficient -0.5"):
        io.read_siconos_fc(write(tmp_path, text))
    with pytest.raises(ValueError, match="kind must be"):
        io.read_siconos_fc(write(tmp_path, text), kind="both")


def test_data_copies_are_the_shared_files():
    shared = os.path.join(SHARED, "fclib")
    if not os.path.isdir(shared):
        pytest.skip("shared data not available")
    for path in glob.glob(os.path.join(shared, "*.hdf5")):
        copy = os.path.join(DATA, "fclib", os.path.basename(path))
        if os.path.getsize(path) < 2 * 2**20:
            assert os.path.exists(copy) and pathlib.Path(copy).read_bytes() == pathlib.Path(path).read_bytes()


# ---------------------------------------------------------------- size bombs: declared, not held


def _bounded(read, path, message):
    """read(path) raises a FormatError naming the field within a second, allocating little."""
    import time
    import tracemalloc

    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(FormatError, match=message):
            read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - t0 < 1.0
    assert peak < 64 * 1024 * 1024, peak


@pytest.mark.parametrize("key", ["fclib_local/W/m", "fclib_local/W/n"])
def test_fclib_matrix_declaring_a_huge_size(good_file, key):
    with h5py.File(good_file, "r+") as h5:
        for k in ("m", "n"):
            del h5[f"fclib_local/W/{k}"]
            h5[f"fclib_local/W/{k}"] = np.array([900_000_000_000], np.int64)
        del h5["fclib_local/W/nz"]
        h5["fclib_local/W/nz"] = np.array([0], np.int32)
    _bounded(io.read_fclib, good_file, "/fclib_local/W: declares 900000000000 x 900000000000")


def test_fclib_dataset_declaring_more_than_the_file_holds(good_file):
    with h5py.File(good_file, "r+") as h5:
        del h5["fclib_local/vectors/q"]
        h5.create_dataset("fclib_local/vectors/q", shape=(10 ** 9,), dtype="f8", chunks=(10 ** 6,), compression="gzip")
    _bounded(io.read_fclib, good_file, "/fclib_local/vectors/q: declares 1000000000 values")


SICONOS_BOMBS = {
    # n, then a sparse-block M of 3e11 x 3e11 with no block
    "lcp": (io.read_siconos_lcp, "300000000000\n1 300000000000 300000000000\n0 1 1 300000000000 300000000000 2 0 0 0\n",
            "n: declares 300000000000"),
    "lcp_block": (io.read_siconos_lcp, "2\n1 300000000000 300000000000\n0 1 1 300000000000 300000000000 2 0 0 0\n",
                  "M: rows: declares 300000000000"),
    "fc": (io.read_siconos_fc, "3\n100000000000\n1 300000000000 300000000000\n0 1 1 300000000000 300000000000 2 0 0 0\n",
           "nc: declares 100000000000"),
    "mlcp": (io.read_siconos_mlcp, "0 1\n300000000000 2\n", "n: declares 300000000000"),
    # a sparse-block matrix held in few numbers whose dense form would need 8 * 1e10 bytes
    "dense": (io.read_siconos_lcp, "100000\n1 100000 100000\n0 1 1 100000 100000 2 0\n" + " 0" * 100_000 + "\n",
              "too large to return dense"),
}


@pytest.mark.parametrize("kind", sorted(SICONOS_BOMBS))
def test_siconos_headers_declaring_huge_sizes(kind, tmp_path):
    read, text, message = SICONOS_BOMBS[kind]
    path = tmp_path / f"{kind}.dat"
    path.write_text(text)
    _bounded(read, path, message)


@pytest.mark.parametrize("cut", [1, 5, 9, 20, 40])
def test_siconos_truncated_headers(cut, tmp_path):
    text = "2\n1 2 2\n1 1 1 2 2 2 1 0 0\n0\n2 1 1 2\n-1 -1\n"
    path = tmp_path / "cut.dat"
    path.write_text(text[:cut])
    with pytest.raises(FormatError, match="cut.dat: "):
        io.read_siconos_lcp(path)


def test_problem_objects_check_a_sparse_size_before_converting():
    huge = sp.coo_matrix((9 * 10 ** 11, 9 * 10 ** 11))
    with pytest.raises(ValueError, match=r"q must have shape \(m,\) = \(900000000000,\)"):
        LocalProblem(huge, [0.0, 0.0, 0.0], [0.5], 3)
    with pytest.raises(ValueError, match=r"M must have shape \(n, n\) = \(3, 3\)"):
        GlobalProblem(huge, sp.coo_matrix((3, 3)), np.zeros(3), np.zeros(3), [0.5], 3)
