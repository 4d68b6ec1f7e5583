"""Every citation in the documentation, the package's docstrings, the notebooks, the README, the
benchmarks and the C headers resolves to an entry of docs/bibliography.rst, and nothing in the
tracked tree points at files outside the project.

A citation is "Author (YEAR" / "Author (notes, YEAR" / "(Author YEAR" / "Author, Author & Author
YEAR" (authors joined by ",", "&", "and" or an en dash, optionally "et al."), "Author (lecture" or
"Author (extended abstract" for the two undated works, and "Author et al." alone; it resolves when
the bibliography has an entry whose first author and year (or qualifier) match.
"""
import ast
import glob
import json
import os
import re
import subprocess

import pytest

import mbdcp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIBLIOGRAPHY = os.path.join(ROOT, "docs", "bibliography.rst")

_NAME = r"(?:(?:de|van|von) )?[A-Z][^\W\d_]*(?:-[A-Z][^\W\d_]*)?"
_GROUP = rf"{_NAME}(?:(?:, | & | and |–){_NAME})*(?: et al\.)?"
# "Trinkle (2003", "Trinkle (notes, 2003", "Glocker's (2001", "Trinkle 2003", "Acary, Brémond, Huber 2018"
_DATED = re.compile(rf"({_GROUP})(?:'s|’s)?(?: \((?:notes, )?|,? )((?:1[89]|20)\d\d)\b")
_UNDATED = re.compile(rf"({_GROUP}) \((lecture|extended abstract)\b")
_ET_AL = re.compile(rf"({_NAME}) et al\.")
_TERM = re.compile(r"^(\S.*) \(([^()]+)\)\s*$")

# built piece by piece so that this file does not match what it looks for
_OUTSIDE = re.compile("|".join(["se" "ed ?0", "se" r"eds?/", "DESI" r"GN\.md"]), re.IGNORECASE)


def first_author(authors):
    """The first author's surname: the last word of the first name of the list ("de Avila
    Belbute-Peres, Smith" -> "Belbute-Peres"; "Stewart–Trinkle" -> "Stewart")."""
    first = re.split(r",|&| and |–| et al", authors)[0]
    return first.split()[-1]


def bibliography():
    """{(first author, year or qualifier)} of the terms of docs/bibliography.rst's definition lists."""
    keys = set()
    with open(BIBLIOGRAPHY, encoding="utf-8") as fh:
        lines = fh.read().splitlines() + [""]
    for line, following in zip(lines, lines[1:]):
        m = _TERM.match(line)
        if m and following.startswith("   ") and following.strip():
            qualifier = m.group(2).split(",")[-1].strip()
            keys.add((first_author(m.group(1)), qualifier))
    return keys


def flat(text):
    """The text on one line: comment markers at line starts ("#", " * ", "//") and line breaks removed,
    so that a citation broken over two lines of a comment is still one citation."""
    text = re.sub(r"\n[ \t]*(?:#+|\*|//)[ \t]?", "\n", text)
    return re.sub(r"\s+", " ", text)


def citations(text):
    """[(cited text, first author, year or qualifier)] of a text; qualifier None for "X et al."."""
    text = flat(text)
    found = [(m.group(0), first_author(m.group(1)), m.group(2)) for m in _DATED.finditer(text)]
    found += [(m.group(0), first_author(m.group(1)), m.group(2)) for m in _UNDATED.finditer(text)]
    found += [(m.group(0), first_author(m.group(1)), None) for m in _ET_AL.finditer(text)]
    return found


def docstrings(path):
    """Every docstring of a Python source file (module, classes, functions, methods)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    return "\n\n".join(filter(None, (ast.get_docstring(n, clean=False) for n in nodes)))


def notebook_text(path):
    with open(path, encoding="utf-8") as fh:
        nb = json.load(fh)
    return "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"])


def sources():
    """{name: text} of everything whose citations must resolve."""
    texts = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.rst")) + glob.glob(os.path.join(ROOT, "docs", "*", "*.rst"))):
        rel = os.path.relpath(path, ROOT)
        if rel == os.path.join("docs", "bibliography.rst") or rel.split(os.sep)[1] in ("api", "notebooks", "_build"):
            continue
        with open(path, encoding="utf-8") as fh:
            texts[rel] = fh.read()
    package = os.path.dirname(mbdcp.__file__)
    for path in sorted(glob.glob(os.path.join(package, "**", "*.py"), recursive=True)):
        texts[os.path.relpath(path, ROOT)] = docstrings(path)
    for path in sorted(glob.glob(os.path.join(ROOT, "notebooks", "src", "*.py"))
                       + glob.glob(os.path.join(ROOT, "benchmarks", "*.py"))
                       + glob.glob(os.path.join(ROOT, "csrc", "include", "mbdcp", "*.h"))
                       + [os.path.join(ROOT, "README.md")]):
        with open(path, encoding="utf-8") as fh:
            texts[os.path.relpath(path, ROOT)] = fh.read()
    for path in sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))):
        texts[os.path.relpath(path, ROOT)] = notebook_text(path)
    return texts


def unresolved(texts, keys):
    authors = {a for a, _ in keys}
    bad = []
    for name, text in texts.items():
        for cited, author, key in citations(text):
            ok = author in authors if key is None else (author, key) in keys
            if not ok:
                bad.append(f"{name}: {cited!r}")
    return bad


def test_the_bibliography_has_the_works_the_formulations_come_from():
    keys = bibliography()
    for key in [("Trinkle", "2003"), ("Anitescu", "2004"),
                ("Anitescu", "lecture"), ("Peiret", "extended abstract"), ("Negrut", "2018"), ("Stewart", "1996"),
                ("Anitescu", "1997"), ("Anitescu", "2010"), ("Tasora", "2011"), ("Lemke", "1965"), ("Cottle", "1992"),
                ("Mazhar", "2015"), ("Melanz", "2017"), ("Tasora", "2021"), ("Acary", "2018"), ("Todorov", "2012"),
                ("Amos", "2017"), ("Agrawal", "2019"), ("Belbute-Peres", "2018"), ("Glocker", "2001"),
                ("Todorov", "2014"), ("Anitescu", "2006"), ("Murty", "1988"), ("Saxcé", "1991"),
                ("Mangoni", "2018")]:
        assert key in keys, key


def test_every_bibliography_entry_is_cited():
    # an entry nothing cites is a reading list, not a bibliography (an uncited 2001 entry was found once)
    cited, by_author = set(), set()
    for text in sources().values():
        for _, author, key in citations(text):
            cited.add((author, key))
            by_author.add(author if key is None else None)  # "Peiret et al." cites Peiret's entries
    uncited = sorted(k for k in bibliography() - cited if k[0] not in by_author)
    assert uncited == [], uncited


def test_the_citation_parser_finds_and_rejects():
    keys = bibliography()
    text = ("as Trinkle (2003, eq. 40) and (Stewart & Trinkle 1996; Anitescu–Potra 1997) show; Trinkle (notes, "
            "2003), p. 7; Anitescu & Hart (lecture), slide 3; Mazhar et al. 2015; Peiret et al.; Glocker's (2001)")
    found = citations(text)
    assert {(a, k) for _, a, k in found} == {("Trinkle", "2003"), ("Stewart", "1996"), ("Anitescu", "1997"),
                                            ("Anitescu", "lecture"), ("Mazhar", "2015"), ("Mazhar", None),
                                            ("Peiret", None), ("Glocker", "2001")}
    assert citations("(Trinkle, Pang,\n# Sudarsky & Lo 1997)")[0][1:] == ("Trinkle", "1997")
    assert unresolved({"t": text}, keys) == []
    wrong = "Trinkle, Tzitzouris & Pang (2002), Anitescu & Tasora 2011, Smith et al. and Hart (1999)"
    assert len(unresolved({"t": wrong}, keys)) == 4


def test_every_citation_resolves_to_the_bibliography():
    texts = sources()
    assert any(name.endswith(".ipynb") for name in texts) and any(name.startswith("mbdcp") for name in texts)
    assert sum(len(citations(t)) for t in texts.values()) > 100
    assert unresolved(texts, bibliography()) == []


def tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [os.path.join(ROOT, p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "build", "_build", "api", "__pycache__"}
        return [os.path.join(d, f) for d, dirs, files in os.walk(ROOT)
                for f in files if not dirs.__setitem__(slice(None), [x for x in dirs if x not in skip])]


def test_nothing_points_outside_the_project():
    hits = []
    for path in tracked_files():
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        hits += [f"{os.path.relpath(path, ROOT)}: {m.group(0)!r}" for m in _OUTSIDE.finditer(text)]
    assert hits == []


@pytest.mark.parametrize("text", ["see se" "ed 000", "DESI" "GN.md section 1", "Se" "ed 004's cap", "in se" "eds/x"])
def test_the_outside_pattern_matches(text):
    assert _OUTSIDE.search(text)
