"""Build the teaching notebooks from their sources in notebooks/src/*.py.

A source is plain Python with cells separated by lines "# %%" (code) or "# %% [markdown]"
(markdown, every line starting with "# "). `python notebooks/build.py` writes notebooks/NAME.ipynb
for every source and executes it (use --no-execute to only convert). The kernel runs with
MBDCP_WIDGETS=static (unless set otherwise), so the saved outputs of the mbdcp.widgets explorers
are static figures that show without a widget frontend; run live, the notebooks show the widgets.

Every other widget output (the tqdm progress bars) is saved with a static fallback in the same
output bundle (add_widget_fallbacks): its final state as text/plain, and the last image an Output
widget inside it shows as image/png. Jupyter shows the widget; the documentation site, which loads
no widget manager (it works offline), and any viewer without the saved widget state show the fallback.
Use --fallbacks-only to add them to the committed notebooks without executing them.
"""
import argparse
import html
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


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_TAGS = re.compile(r"<[^>]*>")


def _plain(value):
    """Text of an HTML widget value: tags dropped, entities decoded, tqdm's figure spaces as spaces."""
    return html.unescape(_TAGS.sub("", str(value))).replace("\u2007", " ")


def _model(states, ref):
    if isinstance(ref, str) and ref.startswith("IPY_MODEL_"):
        ref = ref[len("IPY_MODEL_"):]
    return states.get(ref) if isinstance(ref, str) else None


def _hidden(states, state):
    layout = _model(states, state.get("layout")) or {}
    layout = layout.get("state", {})
    return layout.get("visibility") == "hidden" or layout.get("display") == "none"


def _widget_fallback(states, model_id, images, seen=None):
    """The final state of a widget (and of its children) as text; the images its Output widgets
    show are appended to ``images``."""
    seen = set() if seen is None else seen
    model = _model(states, model_id)
    if model is None or model_id in seen:
        return ""
    seen.add(model_id)
    name, state = model.get("model_name", ""), model.get("state", {})
    if _hidden(states, state):
        return ""
    description = _plain(state.get("description") or "").strip()
    children = state.get("children")
    if isinstance(children, list):  # boxes: HBox, VBox, Box, GridBox, Accordion, Tab, Stack
        texts = [_widget_fallback(states, c, images, seen).strip() for c in children]
        sep = " " if name in ("HBoxModel", "BoxModel", "GridBoxModel") else "\n"
        return sep.join(t for t in texts if t)
    if name == "OutputModel":
        texts = []
        for out in state.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                images.append(data["image/png"])
            elif out.get("output_type") == "stream":
                texts.append("".join(out.get("text", "")))
            elif "text/plain" in data:
                texts.append("".join(data["text/plain"]))
        return "\n".join(t.rstrip("\n") for t in texts)
    if name in ("FloatProgressModel", "IntProgressModel"):
        lo, hi, value = float(state.get("min", 0)), float(state.get("max", 100)), float(state.get("value", 0))
        frac = min(max((value - lo) / (hi - lo), 0.0), 1.0) if hi > lo else 0.0
        full = int(frac * 10 + 1e-9)
        bar = "|" + "\u2588" * full + " " * (10 - full) + "|"
        return f"{description} {bar}".strip()
    if name in ("HTMLModel", "HTMLMathModel", "LabelModel"):
        return f"{description} {_plain(state.get('value', ''))}".strip()
    if name == "ButtonModel":
        return f"[{description}]"
    if "index" in state and "_options_labels" in state:  # Dropdown, RadioButtons, Select, ToggleButtons
        labels, index = state["_options_labels"], state["index"]
        indices = index if isinstance(index, list) else [index]
        value = ", ".join(str(labels[i]) for i in indices if isinstance(i, int) and 0 <= i < len(labels))
    elif "value" in state:
        value = state["value"]
        value = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    else:
        return description
    return f"{description}: {value}" if description else value


def add_widget_fallbacks(nb):
    """Give every widget output of ``nb`` (executed, with its widget state saved in the notebook's
    metadata) a static fallback in the same bundle: text/plain from the widget's final state, and the
    last image/png of an Output widget inside it. Returns the number of outputs changed."""
    states = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    changed = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = out.get("data", {})
            view = data.get(WIDGET_VIEW)
            if not view or _model(states, view.get("model_id")) is None:
                continue
            images = []
            text = _widget_fallback(states, view["model_id"], images)
            before = dict(data)
            data["text/plain"] = text
            if images and not any(k.startswith("image/") for k in before):
                data["image/png"] = images[-1]
            changed += data != before
    return changed


def build(name, execute=True):
    with open(os.path.join(HERE, "src", name + ".py")) as fh:
        nb = nbformat.v4.new_notebook(cells=cells_from_source(fh.read()))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    if execute:
        from nbclient import NotebookClient

        os.environ.setdefault("MBDCP_WIDGETS", "static")  # inherited by the kernel
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": HERE}}).execute()
        add_widget_fallbacks(nb)
    nbformat.write(nb, os.path.join(HERE, name + ".ipynb"))
    return nb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--no-execute", action="store_true")
    ap.add_argument("--fallbacks-only", action="store_true",
                    help="only add the static fallbacks of the widget outputs to the executed notebooks NAME.ipynb")
    args = ap.parse_args()
    names = args.names or sorted(f[:-3] for f in os.listdir(os.path.join(HERE, "src")) if f.endswith(".py"))
    for name in names:
        if args.fallbacks_only:
            path = os.path.join(HERE, name + ".ipynb")
            nb = nbformat.read(path, as_version=4)
            changed = add_widget_fallbacks(nb)
            if changed:
                nbformat.write(nb, path)
            print(f"{name}: {changed} widget output(s) given a fallback")
            continue
        build(name, execute=not args.no_execute)
        print("built", name)


if __name__ == "__main__":
    main()
