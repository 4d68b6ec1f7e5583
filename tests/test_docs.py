"""The docstring examples run and print what they show."""
import doctest
import importlib

import pytest

import mbdcp


@pytest.mark.parametrize("name", ["mbdcp.lemke", "mbdcp.step", "mbdcp.relax", "mbdcp.full_rank", "mbdcp.instantaneous", "mbdcp.ccp"])
def test_docstring_examples(name):
    # importlib: the attribute mbdcp.lemke is the function, the module lives in sys.modules
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_api_names():
    for name in ["Status", "lemke", "lcp_residual", "step", "friction_basis", "__version__"]:
        assert hasattr(mbdcp, name)
    assert isinstance(mbdcp.__version__, str)


def test_demo_cli_json(tmp_path, monkeypatch, capsys):
    import json

    from mbdcp.__main__ import main

    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["demo"] == "sphere" and summary["max_error_vs_closed_form"] < 1e-12
    assert {"bodies", "steps", "seconds", "max_penetration", "final_kinetic_energy"} <= set(summary)
    assert (tmp_path / "sphere.png").stat().st_size > 1000
    for name in ["particle", "lcp"]:
        assert main(["demo", name, "--json", "--no-plot"]) == 0
        assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["demo"] == name
