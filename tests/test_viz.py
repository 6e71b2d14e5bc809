"""draw_tape: the recorded graph drawn with matplotlib alone."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

import minitape as mt  # noqa: E402
from minitape.inspection.viz import DX, draw_tape, layout_tape  # noqa: E402
from minitape.widgets.stepper import StepperState  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _chain():
    """The README example: a = 1; b = a + a; c = b + b, with a watched."""
    a = mt.constant(1.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        b = a + a
        c = b + b
    return tape, a, c


def _mixed():
    x = mt.Variable(3.0, name="x")
    a = mt.constant(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        y = x * x + mt.sin(a) * x * 2.0
        z = mt.reduce_sum(mt.stack([y, y]))
        mt.exp(a)  # recorded, but z does not depend on it
    return tape, x, a, z


def _texts(labels):
    return [t.get_text() for t in labels]


def test_one_node_per_recorded_op():
    tape, x, a, z = _mixed()
    ax = draw_tape(tape, z)
    layout = ax.minitape_layout
    ops = tape.operations
    assert len(layout.op_nodes) == len(ops) == 8
    assert [n.op for n in layout.op_nodes] == list(ops)
    assert [n.label for n in layout.op_nodes] == [op.type for op in ops]
    for i in range(len(ops)):
        assert isinstance(layout.artists[("op", i)], FancyBboxPatch)
        assert layout.artists[("op", i)] in ax.patches
    # every op's label is drawn
    drawn = [t.get_text() for t in ax.texts]
    for op in ops:
        assert op.type in drawn


def test_sources_target_constants_and_faded_ops():
    tape, x, a, z = _mixed()
    layout = draw_tape(tape, z).minitape_layout
    assert sorted(n.label for n in layout.of_kind("source")) == ["watched", "x:0"]
    assert [n.label for n in layout.of_kind("target")] == ["target"]
    assert [n.label for n in layout.of_kind("const")] == ["2.0"]
    # the op that made the target has the thick green border
    sum_key = ("op", 6)
    assert layout.artists[sum_key].get_linewidth() > layout.artists[("op", 0)].get_linewidth()
    # Exp does not lead to the target: faded
    exp = layout.nodes[("op", 7)]
    assert exp.label == "Exp" and exp.faded
    assert not any(n.faded for k, n in layout.nodes.items() if k[0] == "op" and k != ("op", 7))


def test_edges_are_tensors_labelled_with_shapes():
    tape, x, a, z = _mixed()
    ax = draw_tape(tape, z)
    layout = ax.minitape_layout
    n_inputs = sum(len(op.inputs) for op in tape.operations)
    assert len(layout.edges) == n_inputs + 1  # + the edge into the target
    assert len(layout.edge_artists) == len(layout.edges)
    pack_to_sum = [e for e in layout.edges if e.src == ("op", 5)]
    assert [e.shape for e in pack_to_sum] == ["(2,)"]
    assert "(2,)" in [t.get_text() for t in ax.texts]


def test_longest_path_layering():
    tape, a, c = _chain()
    layout = layout_tape(tape, c)
    cols = {k: n.layer for k, n in layout.nodes.items()}
    assert cols == {("source", a._id): 0, ("op", 0): 1, ("op", 1): 2, ("target", 0): 3}
    assert [n.x for n in layout.op_nodes] == [DX, 2 * DX]
    # an op is one column after the latest op it reads
    tape, x, a, z = _mixed()
    layout = layout_tape(tape, z)
    for e in layout.edges:
        src, dst = layout.nodes[e.src], layout.nodes[e.dst]
        assert dst.layer > src.layer
        assert len(e.via) == dst.layer - src.layer - 1  # a waypoint per skipped column
    for n in layout.op_nodes:
        reads = [layout.nodes[e.src].layer for e in layout.edges
                 if e.dst == n.key and e.src[0] == "op"]
        assert n.layer == 1 + max(reads, default=0)


def test_layout_is_deterministic_and_boxes_do_not_overlap():
    def positions():
        tape, x, a, z = _mixed()
        layout = layout_tape(tape, z)
        return [(k[0], n.label, round(n.x, 6), round(n.y, 6)) for k, n in layout.nodes.items()
                if k[0] != "dummy"]

    first = positions()
    assert first == positions()
    spots = [(x, y) for _, _, x, y in first]
    assert len(set(spots)) == len(spots)


def test_gradients_on_every_edge_from_a_backward_trace():
    tape, a, c = _chain()
    ax = draw_tape(tape, c, sources=a)
    layout = ax.minitape_layout
    grads = {(e.src[0], e.dst[0], e.index): e.grad for e in layout.edges}
    # d c / d a = 4: each of the two edges out of `a` carries 2, each edge of b carries 1
    assert [e.grad for e in layout.edges] == ["2.0", "2.0", "1.0", "1.0", "1.0"]
    assert grads[("op", "target", None)] == "1.0"
    assert float(tape.gradient(c, a)) == 4.0
    labels = [t for pair in layout.edge_labels for t in _texts(pair)]
    assert labels.count("grad 2.0") == 2 and labels.count("grad 1.0") == 3


def test_names_label_sources():
    tape, a, c = _chain()
    layout = draw_tape(tape, c, sources=a, names={"a": a}).minitape_layout
    assert [n.label for n in layout.of_kind("source")] == ["a"]


def test_gradients_from_a_dict_or_a_backward_pass():
    tape, x, a, z = _mixed()
    bp = tape.backward_pass(z, [x, a])
    bp.run()  # only the sources' gradients remain in bp.grads
    layout = draw_tape(tape, z, grads=bp).minitape_layout
    from_x = [e.grad for e in layout.edges if e.src == ("source", x._id)]
    assert from_x == ["15.64"] * 3  # x's whole gradient on each of its edges
    layout = draw_tape(tape, z, grads={z._id: mt.ones(())}).minitape_layout
    assert [e.grad for e in layout.edges if e.grad is not None] == ["1.0"]


def test_gradients_at_a_step_of_the_walk():
    tape, a, c = _chain()
    state = StepperState(tape, c, a)
    layout = draw_tape(tape, c, grads=state, step=0).minitape_layout
    assert [e.grad for e in layout.edges] == [None, None, None, None, "1.0"]
    layout = draw_tape(tape, c, grads=state, step=1).minitape_layout
    assert [e.grad for e in layout.edges] == [None, None, "1.0", "1.0", "1.0"]


def test_matrix_gradients_show_values_or_shapes():
    mt.random.set_seed(0)
    layer = mt.layers.Dense(2, activation=mt.nn.relu)
    x = mt.constant([[1.0, 2.0, 3.0]])
    with mt.GradientTape(persistent=True) as tape:
        loss = mt.reduce_mean(layer(x) ** 2)
    ax = draw_tape(tape, loss, sources=layer.trainable_variables)
    layout = ax.minitape_layout
    kernel = [e for e in layout.edges if e.src == ("source", layer.kernel._id)][0]
    assert kernel.shape == "(3, 2)" and kernel.grad == "(3, 2)"  # too big: its shape
    names = [n.label for n in layout.of_kind("source")]
    assert names == [layer.kernel.name, layer.bias.name]


def test_draws_into_a_given_axes_and_handles_odd_tapes():
    tape, a, c = _chain()
    fig, ax = plt.subplots()
    assert draw_tape(tape, ax=ax) is ax
    assert ax.minitape_layout.of_kind("target") == []
    with mt.GradientTape() as empty:
        pass
    assert draw_tape(empty).minitape_layout.op_nodes == []
    # the target is a watched source itself
    x = mt.constant(1.0)
    with mt.GradientTape() as t:
        t.watch(x)
    layout = draw_tape(t, x).minitape_layout
    assert [e.src[0] for e in layout.edges] == ["source"]
    with pytest.raises(ValueError, match="target"):
        draw_tape(tape, sources=a)


def test_long_chain_layout_without_recursion():
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(300):
            y = y * 1.0
    layout = layout_tape(tape, y)
    assert len(layout.op_nodes) == 300
    assert max(n.layer for n in layout.op_nodes) == 300


def test_readme_example_png(tmp_path):
    tape, a, c = _chain()
    ax = draw_tape(tape, c, sources=a)
    path = tmp_path / "chain.png"
    ax.figure.savefig(path, dpi=80)
    image = plt.imread(path)
    assert image.shape[0] > 100 and image.shape[1] > 300
    assert np.ptp(image[..., :3]) > 0.5  # something was drawn
