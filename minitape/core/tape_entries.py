"""Tape entries: every op, once computed, is offered to the tapes active in this thread.

Each active tape keeps the op if an input is something it tracks (a watched
tensor or variable, or an op's output it recorded) and then tracks the outputs,
so it holds exactly the ops downstream of what it watches, in order. An op with
no inputs (a random draw) goes to traces alone (`is_trace`), which replay it.

A recorder is anything in `context.state.tapes`: a `recorder.Recorder` says
what the engine asks of one (GradientTape, ForwardAccumulator and traces are).
"""
from .context import state
from .tensor import new_id


class AllInputs:
    """`needs` of an op outside any backward walk: every input needs a gradient."""

    def __getitem__(self, i):
        return True


ALL_INPUTS = AllInputs()


class Operation:
    """One recorded call of an op: its type, inputs, outputs and attributes.

    Gradient rules read `op.inputs`, `op.outputs` and `op.get_attr(name)`.
    """

    __slots__ = ("type", "name", "inputs", "outputs", "attrs", "seq")
    # needs[i] is False when input i leads to no source, so a rule may skip that
    # gradient (TensorFlow's `skip_input_indices`). A recorded op is shared by
    # every walk (and thread), so it never changes: all True (see `with_needs`).
    needs = ALL_INPUTS

    def __init__(self, op_type, inputs, outputs, attrs=None, name=None):
        self.type = op_type
        self.name = name or op_type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        # creation order, a topological order of all ops: the id of the first
        # output (made after every input), so an op keeps no number of its own
        self.seq = outputs[0]._id if outputs else new_id()

    def get_attr(self, name):
        if not self.attrs or name not in self.attrs:
            raise ValueError(f"Operation '{self.name}' (type {self.type}) has no attr "
                             f"named {name!r}; it has {sorted(self.attrs or ())}")
        return self.attrs[name]

    def with_needs(self, needs):
        """This op as one backward walk's rule sees it, with `needs` saying which
        inputs lead to a source in that walk: a copy, so walks never share flags."""
        op = _InWalk.__new__(_InWalk)
        op.type, op.name, op.inputs, op.outputs = self.type, self.name, self.inputs, self.outputs
        op.attrs, op.seq, op.needs = self.attrs, self.seq, needs
        return op

    def __repr__(self):
        ins = ", ".join(str(x.shape) for x in self.inputs)
        outs = ", ".join(str(y.shape) for y in self.outputs)
        return f"<Operation {self.name!r} type={self.type} inputs=[{ins}] outputs=[{outs}]>"


class _InWalk(Operation):
    __slots__ = ("needs",)  # an Operation with its own `needs` (`with_needs`)


def record(op_type, inputs, outputs, attrs=None, name=None, tapes=None):
    """Give a finished op to every active tape (`tapes`: the caller has read
    `state.tapes` already) that tracks one of its inputs."""
    op = None
    for tape in state.tapes if tapes is None else tapes:
        producer = tape._producer
        for x in inputs:
            if x._id in producer:
                break
        else:
            if inputs or not tape.is_trace:
                continue
        if op is None:
            op = Operation(op_type, inputs, outputs, attrs, name)
        tape._ops.append(op)
        for y in outputs:
            producer[y._id] = op
    return op
