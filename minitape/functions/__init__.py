"""Traced functions (`mt.function`): a Python function run once on placeholders
and kept as a graph (`tracing`), which trace serves a call (`signatures`), one
trace and how a call runs it (`concrete`), an input_signature's traces
(`signature_traces`), and the decorator over them (`function`).
"""
