"""Modules and layers: `mt.Module`, `mt.layers.Dense`, `mt.layers.BatchNormalization`.

A Module finds its variables by looking at its attributes (and at modules,
lists and dicts stored there), in the order they were set.

These are the layers the guide differentiates, and no more: Keras's models,
optimizers, losses and other layers are not part of minitape. A name a
student reaches for next (`mt.layers.Sequential`, `mt.layers.Dropout`,
`mt.keras`, `mt.optimizers`, `mt.losses`) raises an AttributeError that says
so and shows the training step the course writes by hand (`beyond_the_guide`).
"""
import numpy as np

from . import random as _random
from .ops.elementwise import sqrt, tanh
from .ops.matmul_and_solve import matmul
from .ops.activations import elu, relu, sigmoid, softmax, softplus
from .ops.reductions import reduce_mean
from .ops.operands import convert_to_tensor
from .core.tensor import Variable


class Module:
    """A container of variables and sub-modules (TensorFlow's `tf.Module`)."""

    def __init__(self, name=None):
        self._name = name or _snake(type(self).__name__)

    @property
    def name(self):
        return getattr(self, "_name", _snake(type(self).__name__))

    @property
    def variables(self):
        return tuple(self._collect(lambda v: True))

    @property
    def trainable_variables(self):
        return tuple(self._collect(lambda v: v.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._collect(lambda v: not v.trainable))

    @property
    def submodules(self):
        found, stack = [], list(reversed(_children(self)))
        while stack:
            item = stack.pop()
            if isinstance(item, Module) and not any(item is m for m in found):
                found.append(item)
                stack.extend(reversed(_children(item)))
        return tuple(found)

    def _collect(self, keep):
        found, seen, stack = [], set(), list(reversed(_children(self)))
        while stack:  # depth first, in attribute order, without recursion
            item = stack.pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, Variable):
                if keep(item):
                    found.append(item)
            elif isinstance(item, Module):
                stack.extend(reversed(_children(item)))
        return found


def _children(obj):
    """Variables and modules directly inside obj (through lists, tuples, dicts)."""
    out, stack = [], [v for k, v in reversed(list(vars(obj).items()))
                      if not k.startswith("__")]
    while stack:
        item = stack.pop()
        if isinstance(item, (Variable, Module)):
            out.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
    return out


def _snake(name):
    return "".join("_" + c.lower() if c.isupper() and i else c.lower()
                   for i, c in enumerate(name))


# Keras's names for activations: `Dense(2, activation='relu')`. 'linear' (and
# None) is the identity.
ACTIVATIONS = {"relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
               "softplus": softplus, "elu": elu, "linear": None}


def get_activation(activation):
    """An activation given by name (Keras's 'relu', ...), as a function, or None."""
    if activation is None or callable(activation):
        return activation
    if isinstance(activation, str):
        if activation in ACTIVATIONS:
            return ACTIVATIONS[activation]
        raise ValueError(f"Unknown activation {activation!r}; the known names are "
                         f"{sorted(ACTIVATIONS)} (or pass a function, or None)")
    raise TypeError(f"activation must be a name, a function or None, got "
                    f"{type(activation).__name__} {activation!r}")


class Layer(Module):
    """A module that builds its variables when it first sees an input shape:
    on the first call, or earlier through `layer.build(input_shape)` (as Keras
    does), so that the variables exist before the first call and that call
    uses them. `layer.built` says whether that has happened.
    """

    _counts = {}

    def __init__(self, name=None):
        if name is None:
            base = _snake(type(self).__name__)
            n = Layer._counts.get(base, 0)
            Layer._counts[base] = n + 1
            name = base if n == 0 else f"{base}_{n}"
        super().__init__(name)
        self.built = False

    def build(self, input_shape):
        """Create the variables for inputs of `input_shape` (a tuple or list; a
        leading None, the batch size, is allowed). Subclasses create their
        variables and then call this, which marks the layer built."""
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        x = convert_to_tensor(inputs)
        if not self.built:
            self.build(x.shape)
        return self.call(x, *args, **kwargs)


class Dense(Layer):
    """activation(x @ kernel + bias), with a Glorot-uniform kernel drawn from
    the seeded generator (`mt.random.set_seed`) and a zero bias. `activation`
    is a function, None, or a Keras name ('relu', 'sigmoid', 'tanh',
    'softmax', 'softplus', 'elu', 'linear')."""

    def __init__(self, units, activation=None, use_bias=True, name=None):
        if isinstance(units, bool) or not isinstance(units, (int, np.integer)) \
                or units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        super().__init__(name)
        self.units = int(units)
        self.activation = get_activation(activation)
        self.use_bias = use_bias

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 1 or input_shape[-1] is None:
            raise ValueError(f"Dense {self.name}: needs inputs of rank >= 1 with a known "
                             f"last dimension, got shape {input_shape}")
        fan_in = int(input_shape[-1])
        limit = np.sqrt(6.0 / (fan_in + self.units))
        values = _random.generator().uniform(-limit, limit, (fan_in, self.units))
        self.kernel = Variable(values.astype(np.float32), name=f"{self.name}/kernel")
        if self.use_bias:
            self.bias = Variable(np.zeros(self.units, np.float32), name=f"{self.name}/bias")
        super().build(input_shape)

    def call(self, x):
        if x.shape[-1] != self.kernel.shape[0]:
            raise ValueError(f"Dense {self.name}: expected inputs with last dimension "
                             f"{self.kernel.shape[0]}, got shape {x.shape}")
        y = matmul(x, self.kernel) if x.ndim >= 2 else matmul(x[None], self.kernel)[0]
        if self.use_bias:
            y = y + self.bias
        return self.activation(y) if self.activation is not None else y


class BatchNormalization(Layer):
    """Normalise each feature over the batch (training=True) or with the moving
    averages (training=False), then scale by gamma and shift by beta.

    In training mode every output depends on every example in the batch: the
    guide uses this to show what `batch_jacobian` gets wrong.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, name=None):
        super().__init__(name)
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 1 or input_shape[self.axis] is None:
            raise ValueError(f"BatchNormalization {self.name}: needs a known size along "
                             f"axis {self.axis}, got input shape {input_shape}")
        n = int(input_shape[self.axis])
        self.gamma = Variable(np.ones(n, np.float32), name=f"{self.name}/gamma")
        self.beta = Variable(np.zeros(n, np.float32), name=f"{self.name}/beta")
        self.moving_mean = Variable(np.zeros(n, np.float32), trainable=False,
                                    name=f"{self.name}/moving_mean")
        self.moving_variance = Variable(np.ones(n, np.float32), trainable=False,
                                        name=f"{self.name}/moving_variance")
        super().build(input_shape)

    def call(self, x, training=False):
        axes = [i for i in range(x.ndim) if i != self.axis % x.ndim]
        if training:
            mean = reduce_mean(x, axis=axes)
            centred = x - mean
            variance = reduce_mean(centred * centred, axis=axes)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean.numpy() * m + mean.numpy() * (1 - m))
            self.moving_variance.assign(self.moving_variance.numpy() * m
                                        + variance.numpy() * (1 - m))
        else:
            centred = x - self.moving_mean
            variance = self.moving_variance
        return centred / sqrt(variance + self.epsilon) * self.gamma + self.beta



# --- names of Keras that minitape leaves out -----------------------------------------

TRAINING_BY_HAND = """\
minitape is TensorFlow's tape and what the guide differentiates (the ops, mt.layers.Dense
and BatchNormalization, mt.Module), not Keras. The course trains by hand
(notebook 06, "Training with the penalty"):
    with mt.GradientTape() as tape:
        loss = mt.reduce_mean((model(x) - target) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    for v, g in zip(model.trainable_variables, grads):
        v.assign_sub(learning_rate * g)"""

# name -> what to write instead (TensorFlow's name first)
BEYOND_THE_GUIDE = {
    "keras": "tf.keras: write mt.layers for tf.keras.layers (Dense, BatchNormalization) and "
             "make a model an mt.Module",
    "optimizers": "tf.optimizers: a step of gradient descent is v.assign_sub(learning_rate * g)",
    "losses": "tf.losses: write the loss with ops, e.g. mt.reduce_mean((y - target) ** 2), "
              "or use mt.nn.l2_loss and mt.nn.softmax_cross_entropy_with_logits",
    "Sequential": "tf.keras.Sequential: call the layers in turn (for layer in layers: "
                  "x = layer(x)) in an mt.Module that keeps them in a list",
    "Dropout": "tf.keras.layers.Dropout: multiply by a mask, "
               "mt.cast(mt.random.uniform(x.shape) >= rate, x.dtype) / (1 - rate), "
               "while training",
}


def beyond_the_guide(module, name):
    """The AttributeError for `module.name`: for a name of BEYOND_THE_GUIDE,
    what minitape covers and how the course trains instead."""
    if name not in BEYOND_THE_GUIDE:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return AttributeError(f"{module}.{name}: minitape has no {BEYOND_THE_GUIDE[name]}.\n"
                          f"{TRAINING_BY_HAND}")


def __getattr__(name):
    """`mt.layers.Sequential` and `mt.layers.Dropout`: the error says what to do."""
    if name in ("Sequential", "Dropout"):
        raise beyond_the_guide(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (minitape's layers: "
                         f"Dense, BatchNormalization; its container: mt.Module)")
