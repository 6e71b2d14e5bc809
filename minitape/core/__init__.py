"""The reverse-mode core, read first and in this order (docs/engine.md): what is
active in this thread (`context`), values (`tensor`), every op offered to the tapes
(`tape_entries`), op type -> gradient rule (`registry`), and the backward walk
(`backward`); `recorder` declares what they ask of a recorder (a tape, a trace, a
forward accumulator), as TensorFlow's tape.h does. The core imports no op.
"""
