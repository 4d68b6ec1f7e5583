"""Build the teaching notebooks from their sources in notebooks/src/*.py.

A source is plain Python with cells separated by lines "# %%" (code) or "# %% [markdown]"
(markdown, every line starting with "# "). `python notebooks/build.py` writes notebooks/NAME.ipynb
for every source and executes it (use --no-execute to only convert). The kernel runs with
MBDCP_WIDGETS=static (unless set otherwise), so the saved outputs of the mbdcp.widgets explorers
are static figures that show without a widget frontend; run live, the notebooks show the widgets.
"""
import argparse
import os
import re

import nbformat

HERE = os.path.dirname(os.path.abspath(__file__))


def cells_from_source(text):
    cells = []
    for block in re.split(r"^# %%", text, flags=re.M)[1:]:
        header, _, body = block.partition("\n")
        body = body.strip("\n")
        if "[markdown]" in header:
            lines = [ln[2:] if ln.startswith("# ") else ln.lstrip("#") for ln in body.splitlines()]
            cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
        else:
            cells.append(nbformat.v4.new_code_cell(body))
    return cells


def build(name, execute=True):
    with open(os.path.join(HERE, "src", name + ".py")) as fh:
        nb = nbformat.v4.new_notebook(cells=cells_from_source(fh.read()))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    if execute:
        from nbclient import NotebookClient

        os.environ.setdefault("MBDCP_WIDGETS", "static")  # inherited by the kernel
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": HERE}}).execute()
    nbformat.write(nb, os.path.join(HERE, name + ".ipynb"))
    return nb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--no-execute", action="store_true")
    args = ap.parse_args()
    names = args.names or sorted(f[:-3] for f in os.listdir(os.path.join(HERE, "src")) if f.endswith(".py"))
    for name in names:
        build(name, execute=not args.no_execute)
        print("built", name)


if __name__ == "__main__":
    main()
