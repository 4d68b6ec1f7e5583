"""The benchmarks' tables as JSON (benchmarks/common.py, MBDCP_BENCH_JSON)."""
import importlib.util
import json
import os

import numpy as np

COMMON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "common.py")


def test_every_printed_table_is_written_as_json(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("bench_common_for_test", COMMON)
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    common.print_table(["name", "ms", "ratio", "ok"], [["a", np.float64(1.5), 0.25, np.bool_(True)], ["b", 2, "n/a", False]])
    common.print_table(["x"], [[np.int64(3)]])
    assert "ratio" in capsys.readouterr().out
    out = tmp_path / "bench.json"
    monkeypatch.setenv("MBDCP_BENCH_JSON", str(out))
    common._write_json()
    tables = json.loads(out.read_text())["tables"]
    assert tables[0] == {"headers": ["name", "ms", "ratio", "ok"], "rows": [["a", 1.5, 0.25, True], ["b", 2, "n/a", False]]}
    assert tables[1]["rows"] == [[3]]
