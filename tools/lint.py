"""The house rules (CONTRIBUTING.md, "House rules"), all four at once; exits 1 on any finding.

    python tools/lint.py

1. ruff on the Python and the notebooks (rules and line length: pyproject.toml [tool.ruff]);
2. cython-lint on the Cython (pyproject.toml [tool.cython-lint]);
3. lizard on the C: each function's cyclomatic complexity and length within the limits of
   pyproject.toml [tool.mbdcp-lint];
4. the C format: no tab, no trailing blank, no carriage return, one newline at the end of the
   file, lines no longer than the Python's ([tool.ruff] line-length).

The tools' versions are pinned in tools/lint-requirements.txt. A tool is taken from beside this
interpreter (a virtual environment's bin/) first, then from PATH.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
    PYPROJECT = tomllib.load(f)
RULES = PYPROJECT["tool"]["mbdcp-lint"]
LINE_LENGTH = PYPROJECT["tool"]["ruff"]["line-length"]
FINDING = re.compile(r"^\S.*:\d+:(\d+:)? ")


def tool(name):
    here = os.path.join(os.path.dirname(sys.executable), name)
    found = here if os.access(here, os.X_OK) else shutil.which(name)
    if found is None:
        sys.exit(f"lint: {name} not found (pip install -r tools/lint-requirements.txt)")
    return found


def run(args):
    """The findings of one tool: its output's lines that name a file and a line; a tool that fails
    without naming any counts as one finding."""
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    lines = (proc.stdout + proc.stderr).splitlines()
    findings = [ln for ln in lines if FINDING.match(ln)]
    if proc.returncode != 0 and not findings:
        findings = lines or [f"{args[0]} exited with {proc.returncode}"]
    return findings


def c_files():
    found = (p for d in RULES["c-paths"] for ext in ("c", "h")
             for p in glob.glob(os.path.join(d, "**", "*." + ext), recursive=True))
    return sorted(p for p in found if "build" not in p.split(os.sep))  # tests/c/build: the test binaries


def c_format(paths):
    findings = []
    for path in paths:
        with open(os.path.join(ROOT, path), "rb") as f:
            data = f.read()
        text = data.decode("utf-8")
        if not data.endswith(b"\n"):
            findings.append(f"{path}:{text.count(chr(10)) + 1}: no newline at the end of the file")
        elif data.endswith(b"\n\n"):
            findings.append(f"{path}:{text.count(chr(10))}: blank lines at the end of the file")
        for number, line in enumerate(text.split("\n"), 1):
            if "\t" in line:
                findings.append(f"{path}:{number}: a tab (indent with spaces)")
            if "\r" in line:
                findings.append(f"{path}:{number}: a carriage return")
            elif line != line.rstrip():
                findings.append(f"{path}:{number}: trailing blank")
            if len(line) > LINE_LENGTH:
                findings.append(f"{path}:{number}: line too long ({len(line)} > {LINE_LENGTH})")
    return findings


def main():
    os.chdir(ROOT)
    sources = c_files()
    cython = sorted(glob.glob("mbdcp/**/*.pyx", recursive=True) + glob.glob("mbdcp/**/*.pxd", recursive=True)
                    + glob.glob("mbdcp/**/*.pxi", recursive=True))
    checks = [
        ("ruff", lambda: run([tool("ruff"), "check", "--quiet", "--output-format", "concise", "."])),
        ("cython-lint", lambda: run([tool("cython-lint"), *cython])),
        ("lizard", lambda: run([tool("lizard"), "--languages", "c", "--warnings_only",
                                "--CCN", str(RULES["c-max-ccn"]), "--length", str(RULES["c-max-length"]),
                                *sources])),
        ("C format", lambda: c_format(sources)),
    ]
    total = 0
    for name, check in checks:
        findings = check()
        total += len(findings)
        print(f"== {name}: {len(findings)} finding{'' if len(findings) == 1 else 's'}")
        for line in findings:
            print(line)
    print(f"lint: {total} finding{'' if total == 1 else 's'}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
