"""Every teaching notebook runs from top to bottom without errors and shows at least one plot."""
import glob
import importlib.util
import os

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "notebooks", "*.ipynb")))
# notebooks that need optional extras run only where those are installed
NEEDS = {"15_gradients.ipynb": ("jax", "torch")}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    missing = [m for m in NEEDS.get(os.path.basename(path), ()) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (pip install 'mbdcp[jax,torch]')")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(path)}})
    client.execute()  # raises CellExecutionError on any failing cell
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if "image/png" in o.get("data", {})]
    assert images, "a teaching notebook shows at least one plot"
    assert any(c.cell_type == "markdown" for c in nb.cells)


def test_notebook_sources_match(tmp_path):
    # notebooks/*.ipynb are built from notebooks/src/*.py; each source has its notebook
    src = glob.glob(os.path.join(os.path.dirname(__file__), "..", "notebooks", "src", "*.py"))
    names = {os.path.basename(p)[:-3] for p in src}
    assert names == {os.path.basename(p)[:-6] for p in NOTEBOOKS}
