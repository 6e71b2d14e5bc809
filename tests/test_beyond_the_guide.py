"""One step past the guide: the names of Keras a student reaches for next
(`mt.keras`, `mt.optimizers`, `mt.losses`, `mt.layers.Sequential`,
`mt.layers.Dropout`) are not part of minitape, and each raises an
AttributeError that says what minitape covers and shows the training step the
course writes by hand (notebook 06). The code the messages show runs."""
import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitape as mt
from minitape import layers

ROOT = Path(__file__).resolve().parent.parent
NAMES = [(mt, "keras"), (mt, "optimizers"), (mt, "losses"),
         (mt.layers, "Sequential"), (mt.layers, "Dropout")]


@pytest.mark.parametrize("module, name", NAMES, ids=lambda x: getattr(x, "__name__", x))
def test_each_name_says_what_minitape_covers_and_how_to_train(module, name):
    with pytest.raises(AttributeError) as info:
        getattr(module, name)
    message = str(info.value)
    assert message.startswith(f"{module.__name__}.{name}: minitape has no tf.")
    assert "not Keras" in message and "notebook 06" in message
    assert "v.assign_sub(learning_rate * g)" in message
    assert not hasattr(module, name)  # hasattr and getattr(..., None) still work


def test_other_missing_names_stay_plain_attribute_errors():
    with pytest.raises(AttributeError, match="^module 'minitape' has no attribute 'nothing'$"):
        mt.nothing
    with pytest.raises(AttributeError, match="minitape's layers: Dense, BatchNormalization"):
        mt.layers.Conv2D


def test_the_notebook_and_section_the_message_names_exist():
    nb = json.loads((ROOT / "notebooks" / "06_higher_order_gradients.ipynb").read_text())
    section = re.search(r'notebook 06, "([^"]+)"', layers.TRAINING_BY_HAND).group(1)
    headings = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    training = [h for h in headings if re.search(rf"^## \d+\. {section}$", h, re.M)]
    assert training, f"notebook 06 has no section {section!r}"
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert any("assign_sub(learning_rate * g)" in "".join(c["source"]) for c in cells)


def test_the_training_step_the_message_shows_trains():
    code = textwrap.dedent(layers.TRAINING_BY_HAND.split(":\n", 1)[1])
    mt.random.set_seed(0)
    model = mt.layers.Dense(1)
    x = mt.random.normal([16, 3])
    target = mt.reduce_sum(x, axis=1, keepdims=True)
    namespace = dict(mt=mt, model=model, x=x, target=target, learning_rate=0.1)
    losses = []
    for _ in range(20):
        exec(code, namespace)
        losses.append(float(namespace["loss"]))
    assert losses[-1] < 0.5 * losses[0], losses


def test_the_dropout_mask_the_message_shows_works():
    mask_code = re.search(r"multiply by a mask, (.*?), while training",
                          layers.BEYOND_THE_GUIDE["Dropout"]).group(1)
    mt.random.set_seed(1)
    x = mt.ones([1000])
    mask = eval(mask_code, dict(mt=mt, x=x, rate=0.25))
    values = np.unique(mask.numpy())
    np.testing.assert_allclose(values, [0.0, 1 / 0.75], rtol=1e-6)
    assert 0.2 < float(mt.reduce_mean(mt.cast(mask == 0.0, mt.float32))) < 0.3
