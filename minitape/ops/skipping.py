"""Skipping inputs that lead nowhere: a rule computes only the gradients asked for.

The backward walk (`backward.ops_between`) knows which inputs of each op lie
on a path to a source; for an op with an input that does not (a constant, a
tensor the tape does not track), the rule sees `op.needs[i]` False for it, as
TensorFlow's rules see `skip_input_indices`. `x * 2.0` then computes the
gradient of x alone, and a weight matrix's gradient is not formed when only
the input's is wanted. The declaration machinery (`partials.py`,
`products.py`) asks once per rule; a rule never mentions it. Outside a walk
(forward mode from a gradient rule, a user calling a rule) every input is
needed.
"""
import operator

# For each input of an op, whether its gradient leads to a source (one attribute
# read: every rule asks).
needs = operator.attrgetter("needs")
