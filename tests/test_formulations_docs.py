"""The Formulations chapters of the documentation: their examples run and print what they show, and
the non-convex two-contact example of Anitescu & Hart (lecture), slide "Nonconvex solution set", is
checked by definition — the pairs the docs and notebook 10 use are solutions, their averages are not,
and the slide's first pair as printed (p_n = mgh/2 each, beta = 0, lambda = 1) is not one either."""
import doctest
import glob
import os

import numpy as np
import pytest

import mbdcp

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")
CHAPTERS = sorted(glob.glob(os.path.join(DOCS, "formulations", "*.rst")))


@pytest.mark.parametrize("path", CHAPTERS, ids=[os.path.basename(p) for p in CHAPTERS])
def test_chapter_examples_run(path):
    result = doctest.testfile(path, module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_chapters_with_examples_have_them():
    attempted = {os.path.basename(p): doctest.testfile(p, module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE,
                                                       verbose=False, report=False).attempted for p in CHAPTERS}
    assert attempted["fixed_point.rst"] >= 10 and attempted["time_stepping.rst"] >= 5


# ---- the two-contact example: a body that does not rotate rests on the floor (v = 0, M = I, gaps 0)
# at two contacts with the normal +y, each with the friction directions +x, -x

MU, H = 0.3, 0.01
MGH = 1.0 * 9.81 * H
WN = np.array([[0.0, 0.0], [1.0, 1.0]])
D = np.array([[1.0, -1.0, 1.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
E = np.kron(np.eye(2), np.ones((2, 1)))
P_EXT = np.array([0.0, -MGH])

A = (np.array([MGH, 0.0]), np.zeros(4), np.array([0.0, 1.0]))      # contact 1 carries the weight
B = (np.array([0.0, MGH]), np.zeros(4), np.array([1.0, 0.0]))      # contact 2 carries it
C = (np.array([MGH, MGH]) / 2, np.array([0.0, MU * MGH / 2, MU * MGH / 2, 0.0]), np.zeros(2))  # squeeze
PRINTED = (np.array([MGH, MGH]) / 2, np.zeros(4), np.ones(2))     # the slide's first pair, as printed


def mean(s, t):
    return tuple((a + b) / 2 for a, b in zip(s, t))


def conditions(p_n, beta, lam, v=np.zeros(2)):
    """The largest violation of each condition of the step (Trinkle 2003, eqs. 25, 32, 37), by definition."""
    rows = {"normal": WN.T @ v, "friction": D.T @ v + E @ lam, "cone": MU * p_n - E.T @ beta}
    return {
        "momentum": np.abs(v - WN @ p_n - D @ beta - P_EXT).max(),
        "signs": -min(0.0, min(x.min() for x in (p_n, beta, lam, *rows.values()))),
        "p_n * normal": np.abs(p_n * rows["normal"]).max(),
        "beta * friction": np.abs(beta * rows["friction"]).max(),
        "lam * cone": np.abs(lam * rows["cone"]).max(),
    }


def lcp_violation(p_n, beta, lam):
    """The same candidate checked on mbdcp.step's reduced LCP: max |min(z, F z + f)|."""
    res = mbdcp.step(np.eye(2), WN, D, E, [MU, MU], [0.0, 0.0], H, p_ext=P_EXT, psi_n=[0.0, 0.0], return_lcp=True)
    z = np.concatenate([p_n, beta, lam])
    return np.abs(np.minimum(z, res.lcp.F @ z + res.lcp.f)).max()


@pytest.mark.parametrize("name, pair", [("A", A), ("B", B), ("C", C)])
def test_the_pairs_used_are_solutions(name, pair):
    assert max(conditions(*pair).values()) < 1e-15
    assert lcp_violation(*pair) < 1e-14


def test_the_printed_pair_is_not_a_solution():
    c = conditions(*PRINTED)
    # with v = 0 and beta = 0 the cone row is mu m g h / 2 > 0, which forces lambda = 0
    assert c["lam * cone"] == pytest.approx(MU * MGH / 2)
    assert max(v for k, v in c.items() if k != "lam * cone") < 1e-15
    assert lcp_violation(*PRINTED) == pytest.approx(MU * MGH / 2)


def test_the_averages_violate_complementarity():
    ab, ac = conditions(*mean(A, B)), conditions(*mean(A, C))
    assert ab["lam * cone"] == pytest.approx(MU * MGH / 4)           # lambda = 1/2 with slack mu mgh/2
    assert ac["beta * friction"] == pytest.approx(MU * MGH / 8)      # beta_1^(2) = mu mgh/4 against lambda^(2) = 1/2
    for c in (ab, ac):
        assert c["momentum"] < 1e-15 and c["signs"] == 0.0           # feasible: only complementarity fails
    assert lcp_violation(*mean(A, B)) > 1e-3 and lcp_violation(*mean(A, C)) > 1e-3


def test_the_docs_and_notebook_10_use_these_pairs():
    with open(os.path.join(DOCS, "formulations", "fixed_point.rst"), encoding="utf-8") as fh:
        chapter = fh.read()
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "notebooks", "src", "10_fixed_point.py")
    with open(src, encoding="utf-8") as fh:
        notebook = fh.read().replace("mhg", "mgh")  # the notebook writes m h g as the slide does
    for text in (chapter, notebook):
        assert "A = (np.array([mgh, 0.0]), np.zeros(4), np.array([0.0, 1.0]))" in text
        assert "B = (np.array([0.0, mgh]), np.zeros(4), np.array([1.0, 0.0]))" in text
        assert "C = (np.array([mgh, mgh]) / 2, np.array([0.0, mu * mgh / 2, mu * mgh / 2, 0.0]), np.zeros(2))" in text
    assert "is not a solution as printed" in chapter
