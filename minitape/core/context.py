"""What is active in this thread: the tapes that record, the watchers of variables,
and what the ops computed now belong to. Every op consults this, so it is kept
tiny; each thread has its own, so tapes in one thread never see another's ops.
"""
from _thread import _local  # threading.local, without `import threading` (1% of NumPy's)


class _ThreadState(_local):
    def __init__(self):
        self.tapes = []              # GradientTapes recording now, outermost first
        self.variable_watchers = []  # lists that collect the variables read (custom_gradient)
        self.value_readers = []      # traces, told of each value read as a Python value
        self.derivative = None       # None, or "adjoint" (gradient call), "tangent" (JVP rule)
        self.traced_values = None    # while tracing: variable id -> the value the trace gave it


state = _ThreadState()


def variable_accessed(variable):
    """Called whenever an op reads a Variable: tapes may watch it automatically."""
    for tape in state.tapes:
        if tape._watch_accessed_variables and variable.trainable:
            tape._watch_variable(variable)
    for seen in state.variable_watchers:
        if not any(v is variable for v in seen):
            seen.append(variable)


def variable_assigned(variable, value, mode):
    """Called by Variable.assign/assign_add/assign_sub just before the value
    changes: a function being traced (mt.function) records the assignment."""
    for tape in state.tapes:
        tape._variable_assigned(variable, value, mode)  # (recording.Recorder)


def value_read(tensor):
    """`int(t)`, `t.numpy()`, `np.asarray(t)`, `x[t]`: a trace holds for this value only."""
    for reader in state.value_readers:
        reader(tensor)
