"""Fuzzing the loader: thousands of damaged copies of a real saved model.

Each copy is truncated, bit-flipped, or edited field by field (values replaced,
fields swapped, deleted, renamed, duplicated, lists shuffled, arrays changed).
Every one must either load and run (forward and backward through every saved
trace) or raise `mt.saved_model.LoadError` from the loader's own checks; never
any other exception, never the loader's catch-all, never a hang. The mutator is
a seeded `random.Random`, so a failure names a case that can be replayed.
"""
import copy
import io
import json
import os
import random
import signal
import sys
import time

import numpy as np
import pytest
from test_saved_model_hostile import (
    broadcast_chain,
    einsum_model,
    matmul_chain,
    model,
    node,
    spec,
)

import minitape as mt
from minitape import nest
from minitape import saved_model as sm
from minitape.core.tensor import Tensor

fn_module = sys.modules["minitape.functions.function"]  # the module: mt.function is the decorator

SEED = int(os.environ.get("MINITAPE_FUZZ_SEED", "20261122"))
CASES = int(os.environ.get("MINITAPE_FUZZ_CASES", "2000"))
CASE_SECONDS = 10   # a case taking longer counts as a hang


@mt.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return mt.clip_by_norm(dy, 0.5)
    return y, backward


class FuzzModel(mt.Module):
    """Touches most op types, a custom gradient with a variable and a captured
    intermediate, a polymorphic signature, Python arguments, nested outputs, a
    gradient taken inside a function and a variable assignment."""

    def __init__(self):
        super().__init__()
        mt.random.set_seed(0)
        self.dense = mt.layers.Dense(4, activation=mt.relu)
        self.dense.build((None, 3))
        self.dense.built = True
        self.w = mt.Variable([1.0, -2.0, 0.5], name="w")
        self.k = mt.Variable(2, trainable=False, name="k")

    @mt.function(input_signature=[mt.TensorSpec([None, 3]), mt.TensorSpec([])])
    def __call__(self, x, s):
        h = mt.concat([self.dense(x), x * self.w], axis=1)
        h = mt.where(h > 0.1, h, h * 0.5)
        z = clip_gradients(mt.reduce_sum(h, axis=1) * s)
        t = mt.transpose(mt.stack([h[:, 0], h[:, 1]]))
        e = mt.einsum("bi,bj->b", h, h)
        r = mt.reshape(mt.pad(x, [[0, 0], [1, 1]], constant_values=2.0), [-1, 5, 1])
        return {"z": z, "t": t, "e": mt.cast(e, mt.float64),
                "r": mt.reduce_mean(r, axis=[1, 2]), "m": mt.reduce_max(x, axis=0)}

    @mt.function(input_signature=[mt.TensorSpec(None)])
    def any_shape(self, x):
        return clip_gradients(mt.reduce_sum(x * x) * 0.5 + x)

    @mt.function
    def scaled(self, x, power=2):
        w = self.w

        @mt.custom_gradient
        def exp_scaled(y):
            e = mt.exp(y)

            def grad(dy, variables):
                return dy * e * float(power), [mt.zeros_like(w)]
            return e * mt.reduce_sum(w), grad
        return [exp_scaled(x) ** power, mt.sqrt(mt.abs(x) + 1.0), None]

    @mt.function
    def slope(self, x):
        self.k.assign_add(1)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.reduce_sum(mt.sin(x) * mt.sigmoid(x))
        return tape.gradient(y, x), mt.cast(self.k, mt.float32) * mt.tanh(x)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    fuzz_model = FuzzModel()
    x = mt.constant([0.5, -1.0])
    fuzz_model.scaled(x)
    fuzz_model.scaled(x, 3)
    fuzz_model.slope(x)
    path = tmp_path_factory.mktemp("fuzz") / "base"
    mt.saved_model.save(fuzz_model, path)
    json_bytes = (path / sm.JSON_NAME).read_bytes()
    npz_bytes = (path / sm.NPZ_NAME).read_bytes()
    with np.load(path / sm.NPZ_NAME, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    return json_bytes, npz_bytes, arrays, path


# --- mutations ---------------------------------------------------------------------

def flip_bits(data, rng):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def truncate(data, rng):
    return data[:rng.randrange(len(data))]


def slots(doc):
    """Every (container, key) pair in the document."""
    found, stack = [], [doc]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node)) \
            if isinstance(node, list) else []
        for k in keys:
            found.append((node, k))
            stack.append(node[k])
    return found


SPECIAL = [None, True, False, 0, 1, -1, 2, 3, 13, 2 ** 31, 2 ** 63, 10 ** 30, -10 ** 9,
           1.5, -0.0, "", "t0", "t1", "t999", "v0", "v99", "c0", "n0", "n9", "...",
           "float64", "int32", "bool", "object", "IdentityN", "MatMul", "Reshape",
           "POSITIONAL_ONLY", "VAR_POSITIONAL", "KEYWORD_ONLY", [], {}, [0], [[1, 2]],
           [None], {"slice": [0, None, -1]}, {"input": 0}, {"value": 7}, {"list": []},
           {"dict": {"a": None}}, {"shape": [], "dtype": "float32"}, {"object": 0},
           {"variable": 0}, {"function": 0}]


def random_value(all_slots, rng):
    if rng.random() < 0.5:
        return copy.deepcopy(rng.choice(SPECIAL))
    container, key = rng.choice(all_slots)
    return copy.deepcopy(container[key])


def replace(all_slots, rng):
    container, key = rng.choice(all_slots)
    container[key] = random_value(all_slots, rng)


def swap(all_slots, rng):
    (c1, k1), (c2, k2) = rng.choice(all_slots), rng.choice(all_slots)
    a, b = copy.deepcopy(c1[k1]), copy.deepcopy(c2[k2])
    c1[k1] = b
    c2[k2] = a


def delete(all_slots, rng):
    container, key = rng.choice(all_slots)
    del container[key]


def duplicate(all_slots, rng):
    container, key = rng.choice(all_slots)
    if isinstance(container, list):
        container.insert(rng.randrange(len(container) + 1), copy.deepcopy(container[key]))
    else:
        names = [k for c, k in all_slots if isinstance(c, dict)]
        container[rng.choice(names + ["extra"])] = copy.deepcopy(container[key])


def rename(all_slots, rng):
    dicts = [(c, k) for c, k in all_slots if isinstance(c, dict)]
    container, key = rng.choice(dicts)
    container[rng.choice([k for _, k in dicts])] = container.pop(key)


def shuffle(all_slots, rng):
    lists = [c[k] for c, k in all_slots if isinstance(c[k], list) and len(c[k]) > 1]
    if lists:
        rng.shuffle(rng.choice(lists))


def nudge(all_slots, rng):
    ints = [(c, k) for c, k in all_slots if type(c[k]) is int]
    if ints:
        c, k = rng.choice(ints)
        c[k] = rng.choice([c[k] + 1, c[k] - 1, c[k] * 2, 0, -1, c[k] + 13,
                           c[k] * 4096, 1 << rng.randrange(12, 40)])


EDITS = [replace, replace, swap, swap, delete, duplicate, rename, shuffle, nudge, nudge]


def edit_json(json_bytes, rng):
    doc = json.loads(json_bytes)
    for _ in range(rng.randint(1, 3)):
        all_slots = slots(doc)
        if not all_slots:
            break
        rng.choice(EDITS)(all_slots, rng)
    return json.dumps(doc).encode()


def edit_arrays(arrays, rng):
    arrays = dict(arrays)
    name = rng.choice(sorted(arrays))
    how = rng.randrange(6)
    if how == 0:
        arrays[name] = arrays[name].astype(rng.choice(["float64", "int32", "bool", "complex64"]))
    elif how == 1:
        arrays[name] = np.append(arrays[name], 1)
    elif how == 2:
        del arrays[name]
    elif how == 3:
        arrays["extra"] = np.zeros(2)
    elif how == 4:
        arrays[name] = np.array([{"pickled": 1}], dtype=object)
    else:
        arrays[name] = np.full(arrays[name].shape, np.nan).astype(arrays[name].dtype)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


# --- hand-made hostile models: cost bombs, allocation bombs ------------------------

def bomb(rng):
    """A small JSON asking for a random amount of work or memory, from harmless
    to absurd (sizes log-uniform up to 2^30), and an npz that fits it or not."""
    n = int(2 ** rng.uniform(0, rng.choice([8, 16, 30])))
    family = rng.choice(["einsum", "matmul", "broadcast", "input", "variables", "zip"])
    arrays = None
    if family == "einsum":
        doc = einsum_model(n)
    elif family == "matmul":
        doc = matmul_chain(n)
    elif family == "broadcast":
        doc = broadcast_chain(n)
    elif family == "input":
        dtype = rng.choice(["bool", "float32", "complex128"])
        doc = model([spec([n, rng.choice([1, 1 << 10, 1 << 20])], dtype)],
                    [node("Identity", ["t0"], [n], dtype)])
    else:
        count = rng.randint(1, 4)
        doc = model([spec([])], [node("Neg", ["t0"], [])], [spec([n], "float64")] * count)
        arrays = {f"v{i}": np.zeros(min(n, 1 << 16)) for i in range(count)}
        if family == "zip":  # entries that claim or hold more than declared
            arrays[f"v{rng.randrange(count)}"] = np.zeros(rng.choice([n + 1, 1 << 20]))
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **(arrays or {}))
    return json.dumps(doc).encode(), buffer.getvalue(), f"bomb {family} {n}"


def mutate(base, rng):
    json_bytes, npz_bytes, arrays, _ = base
    kind = rng.choices(["truncate json", "truncate npz", "flip json", "flip npz",
                        "edit json", "edit arrays", "bomb", "special file"],
                       weights=[8, 4, 14, 8, 50, 8, 6, 2])[0]
    if kind == "truncate json":
        return truncate(json_bytes, rng), npz_bytes, kind
    if kind == "truncate npz":
        return json_bytes, truncate(npz_bytes, rng), kind
    if kind == "flip json":
        return flip_bits(json_bytes, rng), npz_bytes, kind
    if kind == "flip npz":
        return json_bytes, flip_bits(npz_bytes, rng), kind
    if kind == "edit json":
        return edit_json(json_bytes, rng), npz_bytes, kind
    if kind == "bomb":
        return bomb(rng)
    if kind == "special file":
        return json_bytes, npz_bytes, kind
    return json_bytes, edit_arrays(arrays, rng), kind


SPECIAL_FILES = ["link to /etc/passwd", "link to /dev/zero", "link to the base model",
                 "dangling link", "fifo", "directory", "empty"]


def clear(path):
    """Empty the model directory without following any link in it."""
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def place(path, json_bytes, npz_bytes, kind, base_dir, rng):
    """Write a case into `path`; a special-file case puts a link, a FIFO, a
    directory or an empty file in place of one of the two files."""
    clear(path)
    (path / sm.JSON_NAME).write_bytes(json_bytes)
    (path / sm.NPZ_NAME).write_bytes(npz_bytes)
    if kind != "special file":
        return kind
    name = rng.choice([sm.JSON_NAME, sm.NPZ_NAME])
    special = rng.choice(SPECIAL_FILES if hasattr(os, "mkfifo") else SPECIAL_FILES[:-3])
    os.unlink(path / name)
    target = {"link to /etc/passwd": "/etc/passwd", "link to /dev/zero": "/dev/zero",
              "link to the base model": base_dir / name,
              "dangling link": path / "nothing"}.get(special)
    if target is not None:
        os.symlink(target, path / name)
    elif special == "fifo":
        os.mkfifo(path / name)
    elif special == "directory":
        os.mkdir(path / name)
    else:
        (path / name).write_bytes(b"")
    return f"{name} is a {special}"


# --- running a loaded copy ------------------------------------------------------------------

def loaded_functions(root):
    found, seen, stack = [], set(), [root]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, sm.loaded.LoadedFunction):
            found.append(item)
        elif isinstance(item, sm.loaded.LoadedObject):
            stack.extend(vars(item).values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def exercise(loaded):
    """Call every saved trace with its own arguments, under a tape, and take
    gradients with respect to the inputs and the trainable variables."""
    for fn in loaded_functions(loaded):
        for concrete in fn.concrete_functions():
            graph = concrete.graph
            tensors = [Tensor(np.linspace(-1, 1, int(np.prod(s.shape))).reshape(s.shape)
                              .astype(s.dtype)) for s in graph.inputs]
            args, kwargs = sm.call_arguments(fn._signature, graph.args, tensors)
            # The loader worked out every node's spec without running anything:
            # running it gives exactly those specs.
            fn_module.run_graph(graph, tensors, check=True)
            sources = [t for t in tensors if t.dtype.kind == "f"]
            with mt.GradientTape(persistent=True) as tape:
                tape.watch(sources)
                out = fn(*args, **kwargs)
            targets = [t for t in nest.flatten(out)
                       if isinstance(t, Tensor) and t.dtype.kind == "f"]
            if not targets:
                continue
            try:
                tape.gradient(targets, sources + list(loaded.trainable_variables))
            except LookupError as e:   # a gradient whose graph was not saved
                assert "No gradient defined for operation" in str(e)


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def test_saved_model_loads_undamaged(base, tmp_path):
    path = tmp_path / "m"
    path.mkdir()
    (path / sm.JSON_NAME).write_bytes(base[0])
    (path / sm.NPZ_NAME).write_bytes(base[1])
    exercise(mt.saved_model.load(path))


def test_damaged_saved_models_load_or_raise_load_error(base, tmp_path):
    rng = random.Random(SEED)
    path = tmp_path / "m"
    path.mkdir()
    outcomes = {"loaded": 0, "rejected": 0}
    slowest = (0.0, None)
    use_alarm = hasattr(signal, "setitimer")
    if use_alarm:
        previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        with np.errstate(all="ignore"):
            for case in range(CASES):
                json_bytes, npz_bytes, kind = mutate(base, rng)
                kind = place(path, json_bytes, npz_bytes, kind, base[3], rng)
                where = f"case {case} ({kind}, seed {SEED})"
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
                try:
                    start = time.perf_counter()
                    try:
                        loaded = mt.saved_model.load(path)
                    except sm.LoadError as e:
                        message = str(e)
                        assert sm.format.UNEXPECTED not in message, f"{where}: {e}"
                        assert message.startswith((f"{path}: {sm.JSON_NAME}: ",
                                                   f"{path}: {sm.NPZ_NAME}: ")), \
                            f"{where}: names no file: {e}"
                        outcomes["rejected"] += 1
                        continue
                    finally:
                        seconds = time.perf_counter() - start
                        slowest = max(slowest, (seconds, where))
                    if not kind.startswith("bomb"):  # a bomb that loads may run long
                        exercise(loaded)
                    outcomes["loaded"] += 1
                except Hang:
                    pytest.fail(f"{where}: took more than {CASE_SECONDS} s")
                except Exception as e:
                    raise AssertionError(f"{where}: {type(e).__name__}: {e}") from e
                finally:
                    if use_alarm:
                        signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, previous)
        clear(path)
    report(outcomes, slowest)
    # Both paths were exercised: many copies rejected, and a good number that
    # still made sense loaded and ran.
    assert outcomes["rejected"] > CASES // 2 and outcomes["loaded"] > CASES // 50, outcomes


def report(outcomes, slowest):
    """With MINITAPE_FUZZ_REPORT=file, write the figures of this run there
    (benchmarks/saved_model_fuzz.py runs it in a fresh process for the peak RSS)."""
    file = os.environ.get("MINITAPE_FUZZ_REPORT")
    if not file:
        return
    peak = None
    if os.path.exists("/proc/self/status"):
        with open("/proc/self/status") as f:
            peak = next((line.split()[1] for line in f if line.startswith("VmHWM:")), None)
    with open(file, "w") as f:
        json.dump({"cases": CASES, "seed": SEED, **outcomes, "other exceptions": 0,
                   "slowest load seconds": round(slowest[0], 4), "slowest case": slowest[1],
                   "peak RSS KiB": None if peak is None else int(peak)}, f, indent=1)
