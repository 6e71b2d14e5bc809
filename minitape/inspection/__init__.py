"""Looking inside a tape: its ops as an HTML table or text (`display`, which
Jupyter shows; `mt.display`), the backward walk one rule at a time as data
(`stepping`), and its graph drawn with matplotlib (`viz`).
"""
