"""The variables a trace reads and assigns, and which value each read saw.

A traced function reads variables and may assign them (`v.assign`,
`assign_add`, `assign_sub`). Every call must read and assign again, so a read
is not a constant: it becomes a read of the variable in the graph. But a read
is a snapshot: `y = v * 1.0; v.assign(0.0)` must leave y as v was. So for
each variable the trace assigns, each value it takes is kept with the
assignment that gave it, and a read of one of those values becomes an
Identity node where that value was current (`trace_graph.py` places it).

While tracing, the variable itself never changes: the values the assignments
give are the trace's own (`state.traced_values`), so another thread's
assignments made meanwhile are kept, as in TensorFlow.
"""


class TracedVariables(list):
    """The variables a trace read, in order: its entry in
    `state.variable_watchers`, which every variable read during the trace
    (trainable or not) reaches through `append`. It also keeps what the
    trace assigned, and the values that gave."""

    def __init__(self, parent=None):
        super().__init__()
        self.parent = parent   # the enclosing trace's (a custom gradient's trace reads them)
        self.by_id = {}        # id -> Variable read during the trace
        self.before = {}       # id -> (Variable, its value before the trace assigned it)
        # id(array) -> (array, the index in the trace's ops of the assignment
        # that made it, or None for the value before the trace's first assignment)
        self.versions = {}
        self._unsettled = []   # (variable, op index): the new value is not made yet

    def append(self, variable):
        """A read of `variable`."""
        super().append(variable)
        self.by_id[variable._id] = variable

    def find(self, tid):
        """The Variable with id `tid` read by this trace or an enclosing one, or None."""
        variables = self
        while variables is not None:
            v = variables.by_id.get(tid)
            if v is not None:
                return v
            variables = variables.parent
        return None

    def assigned(self, variable, index):
        """`variable` is assigned by the op at `index` of the trace's ops; the
        new value is made just after (see `settle`)."""
        if variable._id not in self.before:
            self.before[variable._id] = (variable, variable._value)
            self.versions[id(variable._value)] = (variable._value, None)
        self._unsettled.append((variable, index))

    def settle(self):
        """Note the values the assignments recorded so far gave their variables
        (an assignment changes the value just after telling the trace)."""
        for variable, index in self._unsettled:
            self.versions[id(variable._value)] = (variable._value, index)
        self._unsettled.clear()

    def version(self, variable, tensor):
        """Which value of `variable` (read by a trace) `tensor` holds: (array,
        index of the assignment that made it, None before the first), or
        None where this trace never assigns `variable` (a plain read)."""
        if variable._id not in self.before:
            return None
        return self.versions.get(id(tensor._value))
