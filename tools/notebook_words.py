"""How long each notebook's prose is: words in its Markdown cells.

    python -m tools.notebook_words            # every notebook, with the limit

A notebook teaches like JAX's Autodiff Cookbook: a short paragraph, the code,
one check. Its prose (every word of its Markdown cells, math and code spans
included, less the launch badges and HTML comments) stays at or under LIMIT
words; tests/test_notebook_form.py holds every notebook to it.
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LIMIT = 1200
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_WORD = re.compile(r"\w+")
BADGE_CELL_ID = "launch-badges"


def prose_words(text):
    """The words of Markdown `text` (runs of letters, digits and _), comments aside."""
    return len(_WORD.findall(_COMMENT.sub(" ", text)))


def notebook_words(path):
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return sum(prose_words("".join(c["source"])) for c in cells
               if c["cell_type"] == "markdown" and c.get("id") != BADGE_CELL_ID)


def main(paths=None):
    over = 0
    for path in [Path(p) for p in paths] if paths else NOTEBOOKS:
        n = notebook_words(path)
        over += n > LIMIT
        print(f"{path.name:48} {n:5d} words{'  over ' + str(LIMIT) if n > LIMIT else ''}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
