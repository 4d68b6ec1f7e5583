"""The README's code runs as written (its blocks in order, one namespace)."""
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    with open(README) as fh:
        blocks = re.findall(r"```python\n(.*?)```", fh.read(), flags=re.S)
    assert len(blocks) >= 2
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["traj"].success


def test_quick_start_has_the_two_commands():
    with open(README) as fh:
        text = fh.read()
    quick = text.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", quick, flags=re.S)[0].strip().splitlines()
    assert commands == ['pip install . && python -m mbdcp demo', 'pip install ".[test]" && python -m pytest']
