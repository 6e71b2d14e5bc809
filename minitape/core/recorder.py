"""What the engine asks of a recorder: anything in `context.state.tapes`.

TensorFlow's tape.h declares what the engine needs of a tape from the outside;
`Recorder` is minitape's. GradientTape (`tape.py`), ForwardAccumulator
(`autodiff.py`) and a function's trace (`functions/tracing.py`) are recorders: `record`
(`tape_entries.py`) hands each the ops that read what it tracks, and the ops and
rules ask it what kind of recorder it is, never by looking for private names.
"""


class Recorder:
    """What the engine asks of a recorder in `state.tapes` (what TensorFlow's
    tape.h asks of a tape from the outside). A subclass sets, per instance:

    `_ops`       where `record` appends each op it keeps (a list, or a list-like
                 that acts on each op: forward mode pushes tangents)
    `_producer`  tracked tensor id -> the op that made it (None: a watched source)

    and says, by these class attributes, what kind of recorder it is:
    """

    _watch_accessed_variables = False  # an op reading a trainable variable watches it
    is_trace = False        # a trace of a function (tracing.py): it keeps ops with no
    #                         inputs (random draws) too, and the rules' NaN masks
    pushes_tangents = False  # forward mode (autodiff.ForwardAccumulator)
    unmasked = False        # a rule runs on zeros that stand for any direction here
    #                         (tangents.jvp_from_gradient): no zero-times-inf mask fires

    def _watch_variable(self, variable):
        """Track `variable` (asked when `_watch_accessed_variables`)."""

    def _variable_assigned(self, variable, value, mode):
        """Told just before `variable` changes (a trace records the assignment)."""
