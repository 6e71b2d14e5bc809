"""Saved models: `mt.saved_model.save`, `load`, `SaveOptions` and `LoadError`.

A saved model is a directory with two files (minitape/saved_model/FORMAT.md
describes every field):

- `saved_model.json`: the format version, the object tree (attributes that
  hold variables, modules and functions), the functions (their parameters,
  input signatures and traces), every graph (input specs, op nodes with their
  attributes and output specs, the output structure), the traced gradient
  graphs of custom gradients, and the names, shapes and dtypes of variables and
  constants.
- `variables.npz`: the values: array `v<i>` for variable i, `c<i>` for constant i.

The package's rooms, bottom up: `limits` (the numbers both sides check),
`format` (names, versions and the JSON fields with their checkers), `files`
(reading the two files safely), `checks` (a graph's shapes, dtypes and cost,
worked out without running it), `loaded` (what `load` returns), `reader`
(`load`) and `writer` (`save`).
"""
from .checks import check_graph  # noqa: F401
from .format import FORMAT, FORMAT_VERSION, JSON_NAME, NPZ_NAME, LoadError  # noqa: F401
from .limits import (MAX_ARRAY_BYTES, MAX_DEPTH, MAX_GRAPH_BYTES,  # noqa: F401
                     MAX_GRAPH_WORK, MAX_INT_DIGITS, MAX_JSON_BYTES, MAX_JSON_ITEMS,
                     MAX_NODES, MAX_RANK, MAX_TENSOR_BYTES)
from .loaded import call_arguments  # noqa: F401
from .reader import load  # noqa: F401
from .writer import SaveOptions, save  # noqa: F401

__all__ = ["save", "load", "SaveOptions", "LoadError"]
