"""Drawing what a tape recorded, with matplotlib alone (no graphviz).

    ax = draw_tape(tape, target)                      # the recorded graph
    ax = draw_tape(tape, target, sources=[x])         # ... with every gradient

Op nodes are boxes labelled with the op type (and their index in the tape's
table); edges are the tensors flowing between them, labelled with their
shapes. Watched sources are orange, the target green (its op has a green
border), values no tape tracks (constants) grey and dashed. Ops the target
does not depend on are faded.

The layout is computed here, simply and deterministically (a small Sugiyama
layout):
1. Columns by longest path: an op's column is one more than the latest column
   among the ops it reads; a source or constant sits just before its first
   reader, the target just after its op.
2. An edge that skips columns gets an invisible waypoint in each column it
   crosses, so it is routed between boxes instead of through them.
3. Rows within each column by barycenters: nodes are sorted by the average row
   of their neighbours, sweeping forwards, backwards and forwards again (ties
   by creation order).
`layout_tape` returns this as plain data; `draw_tape` draws it.

Gradients: pass `sources=` to trace the backward walk (with the same iterator
`tape.gradient` uses, through `StepperState`) and label every edge with the
gradient its consumer's rule sent back along it; or pass `grads=`, either a
dict from tensor id to gradient (e.g. a BackwardPass's `.grads`; the engine
frees each intermediate gradient once used, so after a full walk only the
sources' remain) or a `StepperState` (with `step=k` to draw step k).
"""
import numpy as np

from .. import nest
from .display import shape_text, tensor_names, value_text
from .stepping import StepperState

# Geometry in data units; one unit is drawn as SCALE inches.
DX, DY = 3.0, 1.15      # column and row spacing
W, H = 1.3, 0.56         # box size
SCALE = 0.72
LABEL_AT = 0.55          # an edge's labels sit this far along it
FONT = 9                 # node label size (shrunk for long names)

_OP = dict(face="#dceaf7", edge="#2f6690")
_SOURCE = dict(face="#fde0c0", edge="#c8741a")
_CONST = dict(face="#eeeeee", edge="#9a9a9a")
_TARGET = dict(face="#d4efd4", edge="#2e8b57")
_EDGE = "#555555"
_GRAD = "#b03a2e"


class Node:
    """A box of the drawing (an op, a watched source, a constant, a target),
    or an invisible waypoint ('dummy') of an edge that skips columns."""

    def __init__(self, key, kind, label="", sublabel="", layer=0, order=0, op=None):
        self.key, self.kind, self.label, self.sublabel = key, kind, label, sublabel
        self.layer, self.order, self.op = layer, order, op
        self.x = self.y = 0.0
        self.w, self.h = {"op": (W, H), "source": (W, H), "dummy": (0.0, 0.0)}.get(
            kind, (W * 0.85, H * 0.8))
        self.faded = False

    def __repr__(self):
        return (f"<Node {self.kind} {self.label!r} column={self.layer} "
                f"at ({self.x:.2f}, {self.y:.2f})>")


class Edge:
    """A tensor going from node `src` to node `dst` (keys) through the waypoints
    `via`; `index` is its input position on the consuming op (None when `dst`
    is a target)."""

    def __init__(self, src, dst, tensor, index):
        self.src, self.dst, self.tensor, self.index = src, dst, tensor, index
        self.shape = shape_text(tensor.shape)
        self.via = []
        self.rad = 0.0                 # bend, for edges joining the same two boxes
        self.src_dy = self.dst_dy = 0.0  # where it leaves and enters the boxes
        self.grad = None               # its gradient as text, after a backward pass

    def __repr__(self):
        return f"<Edge {self.src} -> {self.dst} {self.shape}>"


class TapeLayout:
    """Nodes (key -> Node) and edges of a tape's recorded graph, positioned.

    Keys: ('op', i) for the i-th recorded op, ('source', tensor id),
    ('const', tensor id), ('target', j), ('dummy', edge number, column). After
    `draw_tape`, `artists` maps each drawn node's key to its box patch,
    `edge_artists` holds one arrow per edge and `edge_labels` its label texts.
    """

    def __init__(self, nodes, edges):
        self.nodes, self.edges = nodes, edges
        self.artists, self.edge_artists, self.edge_labels = {}, [], []

    def of_kind(self, kind):
        return [n for n in self.nodes.values() if n.kind == kind]

    @property
    def op_nodes(self):
        """One node per recorded op, in recording order."""
        return self.of_kind("op")


def layout_tape(tape, target=None, constants=True, names=None):
    """Place the tape's recorded graph in columns and rows (no drawing).
    `names={'x': x}` labels sources by your names."""
    ops = tape.operations
    names = tensor_names(tape, names)
    producer = tape._producer
    nodes, edges = {}, []
    op_key = {op.seq: ("op", i) for i, op in enumerate(ops)}

    def add(node):
        node.order = len(nodes)
        nodes[node.key] = node
        return node

    def node_of(t):
        """The key of the node a tensor comes from (None: an untracked value)."""
        if t._id not in producer:
            return None
        p = producer[t._id]
        return ("source", t._id) if p is None else op_key[p.seq]

    # 1. Columns.
    for w in tape._watched:
        kind = "variable" if hasattr(w, "assign") else "tensor"
        add(Node(("source", w._id), "source", names[w._id], kind, layer=0))
    for i, op in enumerate(ops):
        layer = 1 + max([nodes[k].layer for k in map(node_of, op.inputs)
                         if k is not None and k[0] == "op"], default=0)
        sub = f"#{i}" if op.name == op.type else f"#{i} {op.name}"
        add(Node(("op", i), "op", op.type, sub, layer, op=op))
        for j, x in enumerate(op.inputs):
            src = node_of(x)
            if src is None:
                if not constants:
                    continue
                src = ("const", x._id)
                if src not in nodes:
                    v = value_text(x._value, small=1)
                    add(Node(src, "const", "const" if v is None else v, "constant",
                             layer=layer - 1))
            edges.append(Edge(src, ("op", i), x, j))
    first_reader = {}
    for e in edges:
        first_reader[e.src] = min(first_reader.get(e.src, 10**9), nodes[e.dst].layer)
    for key, layer in first_reader.items():
        if key[0] in ("source", "const"):
            nodes[key].layer = layer - 1

    targets = [] if target is None else nest.flatten(target)
    last = max((n.layer for n in nodes.values()), default=0)
    for j, t in enumerate(targets):
        src = node_of(t)
        layer = last + 1 if src is None else nodes[src].layer + 1
        key = ("target", j)
        add(Node(key, "target", "target" if len(targets) == 1 else f"target {j}",
                 "", layer))
        if src is not None:
            edges.append(Edge(src, key, t, None))

    if targets:  # fade the ops the targets do not depend on
        preds, needed = {}, set()
        for e in edges:
            preds.setdefault(e.dst, []).append(e.src)
        stack = [("target", j) for j in range(len(targets))]
        while stack:
            k = stack.pop()
            if k not in needed:
                needed.add(k)
                stack.extend(preds.get(k, ()))
        for k, n in nodes.items():
            n.faded = k[0] in ("op", "const") and k not in needed

    # 2. Waypoints for edges that skip columns.
    for number, e in enumerate(edges):
        a, b = nodes[e.src], nodes[e.dst]
        for layer in range(a.layer + 1, b.layer):
            d = add(Node(("dummy", number, layer), "dummy", layer=layer))
            d.faded = a.faded or b.faded
            e.via.append(d.key)

    # 3. Rows, then where each edge leaves and enters its boxes.
    _order_rows(nodes, edges)
    _place_ports(nodes, edges)
    return TapeLayout(nodes, edges)


def _hops(e):
    """The consecutive node pairs along an edge, waypoints included."""
    path = [e.src] + e.via + [e.dst]
    return list(zip(path, path[1:]))


def _order_rows(nodes, edges):
    """Rows within each column: barycenter sweeps (forwards, backwards,
    forwards), ties broken by creation order, so the result is deterministic."""
    columns = {}
    for n in sorted(nodes.values(), key=lambda n: n.order):
        columns.setdefault(n.layer, []).append(n)
    preds, succs = {}, {}
    for e in edges:
        for a, b in _hops(e):
            preds.setdefault(b, []).append(a)
            succs.setdefault(a, []).append(b)
    row = {}

    def number(col):
        for r, n in enumerate(col):
            row[n.key] = r - (len(col) - 1) / 2

    for col in columns.values():
        number(col)
    layers = sorted(columns)
    for sweep, neighbours in ((layers[1:], preds), (layers[-2::-1], succs),
                              (layers[1:], preds)):
        for layer in sweep:
            col = columns[layer]

            def bary(n):
                near = [row[k] for k in neighbours.get(n.key, ())]
                return sum(near) / len(near) if near else row[n.key]

            col.sort(key=lambda n: (bary(n), n.order))
            number(col)
    for n in nodes.values():
        n.x, n.y = n.layer * DX, -row[n.key] * DY


def _place_ports(nodes, edges):
    """Spread the edges leaving and entering each box, and bend the ones that
    join the same two boxes, so no two edges are drawn on top of each other."""
    outgoing, incoming, pairs = {}, {}, {}
    for e in edges:
        outgoing.setdefault(e.src, []).append(e)
        incoming.setdefault(e.dst, []).append(e)
        if not e.via:
            pairs.setdefault((e.src, e.dst), []).append(e)
    for key, es in outgoing.items():
        first = lambda e: nodes[(e.via or [e.dst])[0]]  # noqa: E731
        es = sorted(es, key=lambda e: (-first(e).y, e.index or 0))
        for j, e in enumerate(es):
            e.src_dy = _spread(j, len(es), nodes[key].h)
    for key, es in incoming.items():
        es = sorted(es, key=lambda e: e.index or 0)
        for j, e in enumerate(es):
            e.dst_dy = _spread(j, len(es), nodes[key].h)
    for es in pairs.values():
        for j, e in enumerate(es):
            e.rad = 0.0 if len(es) == 1 else 0.34 * (j - (len(es) - 1) / 2)


def _spread(j, m, h):
    step = min(0.2, 0.8 * h / max(m, 1))
    return -(j - (m - 1) / 2) * step


def _gradient_texts(layout, grads, step):
    """Label each edge with its gradient: what the consumer's rule sent back
    along it when known (a StepperState), else the tensor's gradient."""
    if grads is None:
        return
    if hasattr(grads, "edge_gradients") and hasattr(grads, "known"):
        tensors, per_edge = grads.known(step), grads.edge_gradients(step)
    else:
        tensors = getattr(grads, "grads", grads)  # a BackwardPass or a dict
        per_edge = None
    for e in layout.edges:
        if per_edge is not None and e.index is not None:
            g = per_edge.get((layout.nodes[e.dst].op.seq, e.index))
        else:
            g = tensors.get(e.tensor._id)
        if g is not None:
            value = np.asarray(getattr(g, "_value", g))
            text = value_text(value, small=3)
            e.grad = text if text is not None else shape_text(value.shape)


def _point_on_edge(start, end, rad, t):
    """The point at parameter t on matplotlib's arc3 curve (a quadratic Bezier
    whose control point is the midpoint pushed sideways by rad * length)."""
    (x0, y0), (x2, y2) = start, end
    cx = (x0 + x2) / 2 + rad * (y2 - y0)
    cy = (y0 + y2) / 2 - rad * (x2 - x0)
    a, b, c = (1 - t) ** 2, 2 * t * (1 - t), t ** 2
    return a * x0 + b * cx + c * x2, a * y0 + b * cy + c * y2


def _smooth_path(points):
    """A path through the middles of the hops, bending at each waypoint (a
    quadratic B-spline), with straight ends at the boxes."""
    from matplotlib.path import Path  # lazy: matplotlib only when drawing

    verts, codes = [points[0]], [Path.MOVETO]
    mids = [((x0 + x1) / 2, (y0 + y1) / 2) for (x0, y0), (x1, y1) in zip(points, points[1:])]
    verts.append(mids[0])
    codes.append(Path.LINETO)
    for corner, mid in zip(points[1:-1], mids[1:]):
        verts += [corner, mid]
        codes += [Path.CURVE3, Path.CURVE3]
    verts.append(points[-1])
    codes.append(Path.LINETO)
    return Path(verts, codes)


_CHAR_W = 7.5 * 0.62 / 72 / SCALE   # width of a label character, in data units
_LINE_H = 7.5 * 1.35 / 72 / SCALE   # height of a label line
_SPOTS = (LABEL_AT, 0.4, 0.7, 0.3, 0.8, 0.2)


def _label_spot(points, rad, lines, taken):
    """Where to put an edge's labels: the first spot along the edge (first hop
    first) whose box overlaps no box or label placed so far, else the
    least-crowded one. Returns (x, y, box)."""
    w = max(len(t) for t in lines) * _CHAR_W + 0.08
    above, below = _LINE_H + 0.04, (len(lines) - 1) * _LINE_H + 0.04
    best = None
    hops = list(zip(points, points[1:]))
    if len(hops) == 1:
        spots = [(0, t) for t in _SPOTS]
    else:  # a route passes through each hop's middle and is straight at its ends
        spots = ([(0, 0.5), (0, 0.35), (0, 0.2)] + [(i, 0.5) for i in range(1, len(hops))]
                 + [(len(hops) - 1, 0.7)])
    for i, t in spots:
        p, q = hops[i]
        x, y = _point_on_edge(p, q, rad if len(hops) == 1 else 0.0, t)
        rect = (x - w / 2, y - below, x + w / 2, y + above)
        overlap = sum(_overlap(rect, r) for r in taken)
        if best is None or overlap < best[0] - 1e-9:
            best = (overlap, x, y, rect)
        if overlap == 0:
            return x, y, rect
    return best[1:]


def _overlap(r, s):
    dx = min(r[2], s[2]) - max(r[0], s[0])
    dy = min(r[3], s[3]) - max(r[1], s[1])
    return dx * dy if dx > 0 and dy > 0 else 0.0


def draw_tape(tape, target=None, grads=None, ax=None, sources=None, step=None,
              constants=True, legend=True, names=None):
    """Draw the graph `tape` recorded; returns the matplotlib Axes.

    `target` marks the target (and fades ops it does not depend on). Gradients
    on the edges come from `sources=` (the backward walk is traced here) or
    `grads=` (see the module docstring); `step=k` with a StepperState draws the
    state after k rules ran. `names={'x': x}` labels sources by your names;
    `constants=False` leaves out untracked inputs. The layout (a TapeLayout)
    is `ax.minitape_layout`.
    """
    # lazy: matplotlib only when drawing (the layout above needs none)
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

    if grads is None and sources is not None:
        if target is None:
            raise ValueError("draw_tape: pass the target along with the sources")
        grads = StepperState(tape, target, sources, names=names).run_all()
    layout = layout_tape(tape, target, constants, names)
    _gradient_texts(layout, grads, step)
    nodes = layout.nodes

    xs = [n.x for n in nodes.values()] or [0.0]
    ys = [n.y for n in nodes.values()] or [0.0]
    x0, x1 = min(xs) - W / 2 - 0.3, max(xs) + W / 2 + 0.3
    y0, y1 = min(ys) - H / 2 - 0.5, max(ys) + H / 2 + 0.45
    if ax is None:
        width = min(18.0, max(3.5, (x1 - x0) * SCALE))
        height = min(12.0, max(2.2, (y1 - y0) * SCALE + (0.4 if legend else 0)))
        _, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.axis("off")

    makes_target = {e.src for e in layout.edges if e.dst[0] == "target"}
    for key, n in nodes.items():
        if n.kind == "dummy":
            continue
        style = {"op": _OP, "source": _SOURCE, "const": _CONST, "target": _TARGET}[n.kind]
        edge_color, lw = style["edge"], 1.3
        if n.kind == "op" and key in makes_target:
            edge_color, lw = _TARGET["edge"], 2.4
        alpha = 0.35 if n.faded else 1.0
        patch = FancyBboxPatch((n.x - n.w / 2, n.y - n.h / 2), n.w, n.h,
                               boxstyle="round,pad=0.02,rounding_size=0.12",
                               facecolor=style["face"], edgecolor=edge_color, linewidth=lw,
                               linestyle="--" if n.kind == "const" else "-",
                               alpha=alpha, zorder=2)
        ax.add_patch(patch)
        layout.artists[key] = patch
        # Shrink long names to fit the box (a bold character is up to ~0.7 em wide).
        size = max(5.5, min(FONT, n.w * SCALE * 72 * 0.9 / (0.7 * max(len(n.label), 1))))
        ax.text(n.x, n.y + (0.07 if n.sublabel else 0), n.label, ha="center",
                va="center", fontsize=size, alpha=alpha, zorder=3,
                fontweight="normal" if n.kind == "const" else "bold")
        if n.sublabel:
            ax.text(n.x, n.y - 0.15, n.sublabel, ha="center", va="center", fontsize=7,
                    color="#444444", alpha=alpha, zorder=3)

    box = dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85)
    taken = [(n.x - n.w / 2, n.y - n.h / 2, n.x + n.w / 2, n.y + n.h / 2)
             for n in nodes.values() if n.kind != "dummy"]
    for e in layout.edges:
        a, b = nodes[e.src], nodes[e.dst]
        points = ([(a.x + a.w / 2, a.y + e.src_dy)]
                  + [(nodes[k].x, nodes[k].y) for k in e.via]
                  + [(b.x - b.w / 2, b.y + e.dst_dy)])
        alpha = 0.35 if (a.faded or b.faded) else 1.0
        style = dict(arrowstyle="-|>", color=_EDGE, lw=1.1, shrinkA=0, shrinkB=0,
                     mutation_scale=11, alpha=alpha, zorder=1)
        if e.via:  # a smooth route through the waypoints
            arrow = FancyArrowPatch(path=_smooth_path(points), **style)
        else:
            arrow = FancyArrowPatch(points[0], points[1],
                                    connectionstyle=f"arc3,rad={e.rad}", **style)
        ax.add_patch(arrow)
        layout.edge_artists.append(arrow)
        # Labels: shape above, gradient below, at the first free spot along the edge.
        lines = [e.shape] + ([f"grad {e.grad}"] if e.grad is not None else [])
        mx, my, rect = _label_spot(points, e.rad, lines, taken)
        taken.append(rect)
        labels = [ax.text(mx, my + 0.02, e.shape, ha="center", va="bottom", fontsize=7.5,
                          color="#333333", bbox=box, zorder=4, alpha=alpha)]
        if e.grad is not None:
            labels.append(ax.text(mx, my - 0.02, lines[1], ha="center", va="top",
                                  fontsize=7.5, color=_GRAD, fontweight="bold", bbox=box,
                                  zorder=4))
        layout.edge_labels.append(labels)

    if legend:
        handles = [Patch(facecolor=_SOURCE["face"], edgecolor=_SOURCE["edge"],
                         label="watched source"),
                   Patch(facecolor=_OP["face"], edgecolor=_OP["edge"], label="recorded op")]
        if target is not None:
            handles.append(Patch(facecolor=_TARGET["face"], edgecolor=_TARGET["edge"],
                                 label="target"))
        if layout.of_kind("const"):
            handles.append(Patch(facecolor=_CONST["face"], edgecolor=_CONST["edge"],
                                 linestyle="--", label="constant (not tracked)"))
        handles.append(Line2D([], [], color=_EDGE, label="tensor (shape)"))
        if any(e.grad is not None for e in layout.edges):
            handles.append(Line2D([], [], color=_GRAD, lw=0, marker="$g$",
                                  label="gradient sent back"))
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  ncol=len(handles), frameon=False, fontsize=7.5, handlelength=1.4,
                  columnspacing=1.0)
    ax.minitape_layout = layout
    return ax
