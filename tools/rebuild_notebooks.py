"""Rebuild the stored outputs of the course notebooks, in one command.

    python -m tools.rebuild_notebooks                  # every notebook in notebooks/
    python -m tools.rebuild_notebooks notebooks/07_jacobians.ipynb -j 1

For each notebook:

1. write the launch badges and the Colab install cell (`tools.colab`);
2. execute it top to bottom in a fresh kernel (nbclient, like `jupyter nbconvert
   --execute`), with `record_timing=False` and `store_widget_state=True` (the
   state of every widget, read in step 3), and join the pieces of printed
   text that arrived one after another into one output;
3. freeze each explorer: in cells tagged `nbval-ignore-output`, the explorer's
   outputs (its one-line note and its widget view, `widgets.compat.explorer`)
   become one static picture: the HTML or images its first state showed,
   under the caption "explorer, as first drawn (run the notebook to move
   it)". The widget state is then dropped from the notebook. So every viewer
   (JupyterLab trusted or not, GitHub, nbviewer) shows a picture, never an
   inert control (JupyterLab marks those with a red broken-link icon) or a
   dangling view, until the kernel runs the cell and the live explorer
   replaces the picture;
4. strip volatile metadata with `nbstripout --keep-output --keep-count --keep-id`
   (cell ids stay: the badge cell is known by its id).

Notebooks run in parallel (`-j`, default 2); each in its own kernel, with
notebooks/ as the working directory. A notebook whose run raises is left
unchanged (the error is printed, and the exit status is 1); the others are
still rebuilt. Then `python -m pytest notebooks/` must
pass (nbval compares the stored outputs with a fresh run).
"""
import argparse
import base64
import html
import multiprocessing
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from minitape.widgets.compat import NOTE_CLASS, NOTE_TEXT
from tools import colab
from tools.kernels import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"  # as minitape.widgets.compat
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
IGNORE_OUTPUT = "nbval-ignore-output"  # the cell tag nbval reads: an explorer's cell
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
FALLBACK_CAPTION = "explorer, as first drawn (run the notebook to move it)"


def widget_state(nb):
    """The saved widget models, {model_id: model}, or {} if none were saved."""
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _model_ids(value):
    """Model ids referenced as 'IPY_MODEL_<id>' anywhere in a widget's state."""
    if isinstance(value, str):
        return [value[len("IPY_MODEL_"):]] if value.startswith("IPY_MODEL_") else []
    if isinstance(value, dict):
        return [i for v in value.values() for i in _model_ids(v)]
    if isinstance(value, (list, tuple)):
        return [i for v in value for i in _model_ids(v)]
    return []


def reachable_models(state, model_id):
    """The model and every model it references, depth first, each once."""
    order, stack, seen = [], [model_id], set()
    while stack:
        mid = stack.pop()
        if mid in seen or mid not in state:
            continue
        seen.add(mid)
        order.append(state[mid])
        stack.extend(reversed(_model_ids(state[mid].get("state", {}))))
    return order


def _controls_text(models):
    parts = []
    for m in models:
        s = m.get("state", {})
        if "value" in s and s.get("description") and not m["model_name"].startswith("HTML"):
            parts.append(f"{s['description']} = {s['value']}")
    return ", ".join(parts)


def fallback_html(state, model_id):
    """HTML showing what the widget `model_id` first drew: the images and HTML
    of its Output widgets and its HTML widgets, with its controls' values.
    None when it drew nothing static."""
    models = reachable_models(state, model_id)
    controls = _controls_text(models)
    alt = html.escape(f"plot of the explorer, as first drawn ({controls or 'its first state'})",
                      quote=True)
    pieces = []
    for m in models:
        s = m.get("state", {})
        if m["model_name"] == "OutputModel":
            for out in s.get("outputs", []):
                data = out.get("data", {})
                if "image/png" in data:
                    png = data["image/png"]
                    png = "".join(png) if isinstance(png, list) else png
                    base64.b64decode(png, validate=True)
                    pieces.append(f'<img alt="{alt}" src="data:image/png;base64,{png.strip()}"/>')
                elif "text/html" in data:
                    h = data["text/html"]
                    pieces.append("".join(h) if isinstance(h, list) else h)
                elif out.get("output_type") == "stream":
                    pieces.append(f"<pre>{html.escape(''.join(out.get('text', '')))}</pre>")
        elif m["model_name"] == "HTMLModel" and s.get("value"):
            pieces.append(s["value"])
    if not pieces:
        return None
    caption = FALLBACK_CAPTION + (f": {html.escape(controls)}" if controls else "")
    return (f'<div class="minitape-explorer-fallback"><div style="font-style: italic; '
            f'opacity: 0.7;">{caption}</div>{"".join(pieces)}</div>')


def _is_note(out):
    """The one-line note `widgets.compat.explorer` displays above an explorer."""
    return NOTE_CLASS in "".join(out.get("data", {}).get("text/html", ""))


def freeze_explorers(nb):
    """Replace each explorer's outputs (note and widget view) in cells tagged
    `nbval-ignore-output` (nbval's own tag) by a static picture of its first state (or, when
    it drew nothing static, by the note's text), and drop the saved widget
    state. Returns how many explorers were frozen."""
    state = widget_state(nb)
    frozen = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or IGNORE_OUTPUT not in cell.get("metadata", {}).get(
                "tags", []):
            continue
        outputs = []
        for out in cell.get("outputs", []):
            if _is_note(out):
                continue
            view = out.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                outputs.append(out)
                continue
            picture = fallback_html(state, view["model_id"]) or (
                f'<div class="minitape-explorer-fallback">{html.escape(NOTE_TEXT)}</div>')
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"text/html": picture,
                                     "text/plain": FALLBACK_CAPTION}})
            frozen += 1
        cell["outputs"] = outputs
    nb.get("metadata", {}).pop("widgets", None)
    return frozen


def coalesce_streams(nb):
    """One output per run of printed text: a print the kernel flushed in two
    pieces comes back as two stream outputs, which would change the stored
    notebook from one rebuild to the next."""
    for cell in nb.cells:
        merged = []
        for out in cell.get("outputs", []):
            if merged and out.get("output_type") == "stream" and \
                    merged[-1].get("output_type") == "stream" and \
                    merged[-1].get("name") == out.get("name"):
                merged[-1]["text"] = "".join(merged[-1]["text"]) + "".join(out["text"])
            else:
                merged.append(out)
        if "outputs" in cell:
            cell["outputs"] = merged


def rebuild(path, timeout=600):
    """Steps 1-3 for one notebook (step 4 runs on all of them at the end)."""
    import nbformat

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    colab.set_cells(nb, path.name)  # the badge cell and the Colab cell
    nb = nbformat.from_dict(nb)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            record_timing=False, store_widget_state=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    coalesce_streams(nb)
    frozen = freeze_explorers(nb)
    # the name JupyterLab writes back on save, so saving changes nothing
    nb.metadata["kernelspec"] = dict(nb.metadata.get("kernelspec", {}), **KERNELSPEC)
    nbformat.write(nbformat.from_dict(nb), path)
    return f"{path.name}: executed, {frozen} explorer(s) stored as pictures"


STRIP_OPTIONS = ["--keep-output", "--keep-count", "--keep-id"]  # ids: stable, named


def strip(paths):
    subprocess.run([sys.executable, "-m", "nbstripout", *STRIP_OPTIONS, *map(str, paths)],
                   check=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to rebuild (default: notebooks/*.ipynb)")
    parser.add_argument("-j", "--jobs", type=int, default=2,
                        help="notebooks executed at once (default 2)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    rebuilt, failed = [], []
    # "spawn": a fresh interpreter per worker (forking a process that runs threads,
    # as pytest or Jupyter do, can leave a worker stuck on a lock held at the fork).
    with ProcessPoolExecutor(max_workers=max(1, args.jobs),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {path: pool.submit(rebuild, path, args.timeout) for path in paths}
        for path, future in futures.items():
            try:
                print(future.result(), flush=True)
                rebuilt.append(path)
            except Exception as exc:  # a cell raised: that notebook stays as it was
                failed.append(path)
                print(f"FAILED {Path(path).name} (left unchanged): {exc}", flush=True)
    if rebuilt:
        strip(rebuilt)
    if failed:
        print("not rebuilt: " + ", ".join(Path(p).name for p in failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
