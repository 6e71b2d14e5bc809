"""Maintainers' tools for the course notebooks (not part of the minitape package).

    python -m tools.colab               # write the Colab install cell into every notebook
    python -m tools.rebuild_notebooks   # re-execute notebooks, store outputs and widget state
"""
