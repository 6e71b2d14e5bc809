"""Interactive explorers and the backward stepper for the course notebooks.

Each submodule imports ipywidgets and matplotlib itself, so `import minitape`
stays NumPy-only. Import what you need from the submodule:

    from minitape.widgets.stepper import backward_stepper
"""
