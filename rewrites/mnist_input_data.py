"""TFM007: the TF1 tutorials' MNIST reader, read from Keras' copy of MNIST.

TFM007 mnist-tutorial-data

What it does: `mnist = input_data.read_data_sets(train_dir, one_hot=..., reshape=..., validation_size=...)`
(`tensorflow.examples.tutorials.mnist`) becomes `mnist = read_mnist(...)` with the same arguments, and the module
gains `read_mnist` (`read_mnist_data_sets` where it has a `read_mnist`), which makes train_dir as TF1's reader did
(programs write there after reading) and builds what TF1's
reader returned from `tf.keras.datasets.mnist.load_data()`: `train`, `validation` and `test`, each with `images`
(float32, scaled to [0, 1] as TF1 scaled them, 784 values a row, or 28x28x1 with reshape=False), `labels` (the
digits, or one-hot float64 rows with one_hot=True) and `num_examples`; the first validation_size training examples
are the validation set, as in TF1. It is done when the program reads only those (`mnist.train.images`,
`mnist.test.labels[:n]`, ...) and takes batches with `next_batch(batch_size[, shuffle])`: then each split is a
`MnistDataSet`, written in the module too, whose `next_batch` gives the batches TF1's gave (shuffled each epoch with
numpy's global random state, which the reader seeds with `seed` as TF1's did).
Why: TensorFlow 2 has no `tensorflow.examples.tutorials`, so a program that imports it cannot start; that reader
was the input of many TF1 Estimator and cluster programs.
What may differ: where the data are kept: Keras downloads its copy of MNIST (mnist.npz, the same images and labels
in the same order) to ~/.keras/datasets, not into train_dir. The shuffling of a program that set TF's graph-level
seed before reading (TF1's reader then seeded numpy with it; read_mnist seeds with `seed` alone). `fake_data`, a
dtype other than float32, a `source_url`, `next_batch` held rather than called, or the result passed on whole
stay, and TFM003 reports the import.

Before:

    import numpy as np
    import tensorflow.compat.v1 as tf
    from tensorflow.examples.tutorials.mnist import input_data

    mnist = input_data.read_data_sets("/tmp/mnist", one_hot=True)
    images = tf.placeholder(tf.float32, [None, 784])
    print(np.mean(mnist.train.images), mnist.test.labels[:3])

After:

    import numpy as np
    import tensorflow.compat.v1 as tf
    import os
    import types
    import tensorflow as tf2


    def read_mnist(train_dir, one_hot=False, reshape=True, validation_size=5000):
        \"\"\"MNIST as input_data.read_data_sets, the TF1 tutorials' reader, gave it.\"\"\"
        os.makedirs(train_dir, exist_ok=True)  # TF1's reader made it, to download into
        (train_images, train_labels), (test_images, test_labels) = tf2.keras.datasets.mnist.load_data()

        def data_set(images, labels):
            images = images.reshape(len(images), 784) if reshape else images[..., np.newaxis]
            return types.SimpleNamespace(
                images=images.astype(np.float32) * (1.0 / 255.0),
                labels=np.eye(10)[labels] if one_hot else labels,
                num_examples=len(images))

        return types.SimpleNamespace(
            train=data_set(train_images[validation_size:], train_labels[validation_size:]),
            validation=data_set(train_images[:validation_size], train_labels[:validation_size]),
            test=data_set(test_images, test_labels))


    mnist = read_mnist("/tmp/mnist", one_hot=True)
    images = tf.placeholder(tf.float32, [None, 784])
    print(np.mean(mnist.train.images), mnist.test.labels[:3])

Finding:

    5:9: TFM007 [numeric] `input_data.read_data_sets` -> `read_mnist()`, written in this module: TF1's MNIST arrays
    from tf.keras.datasets.mnist.load_data(), kept in ~/.keras/datasets rather than the train_dir
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from rewrites.base import TFCodemod
from rewrites.syntax import Bindings, bind_arguments, is_name, is_read_only, source, subtree, with_blank_lines

RULE = "TFM007"
READER = "examples.tutorials.mnist.input_data.read_data_sets"
PARAMETERS = ("train_dir", "fake_data", "one_hot", "dtype", "reshape", "validation_size", "seed", "source_url")
KEPT = ("one_hot", "reshape", "validation_size")  # seed only seeded next_batch's shuffling
SPLITS, FIELDS = frozenset({"train", "validation", "test"}), frozenset({"images", "labels", "num_examples"})
FUNCTIONS = ("read_mnist", "read_mnist_data_sets", "mnist_data_sets")  # the first the module does not bind
IMPORTS = (("numpy", "np"), ("types", "types"), ("os", "os"))  # what read_mnist reads: (module, name bound)
DATA_SET = "MnistDataSet"  # the class of a split whose next_batch the program calls
NEXT_BATCH = ("batch_size", "fake_data", "shuffle")

DEFINITION = '''
def {function}(train_dir, one_hot=False, reshape=True, validation_size=5000):
    """MNIST as input_data.read_data_sets, the TF1 tutorials' reader, gave it."""
    os.makedirs(train_dir, exist_ok=True)  # TF1's reader made it, to download into
    (train_images, train_labels), (test_images, test_labels) = {tf}.keras.datasets.mnist.load_data()

    def data_set(images, labels):
        images = images.reshape(len(images), 784) if reshape else images[..., np.newaxis]
        return types.SimpleNamespace(
            images=images.astype(np.float32) * (1.0 / 255.0),
            labels=np.eye(10)[labels] if one_hot else labels,
            num_examples=len(images))

    return types.SimpleNamespace(
        train=data_set(train_images[validation_size:], train_labels[validation_size:]),
        validation=data_set(train_images[:validation_size], train_labels[:validation_size]),
        test=data_set(test_images, test_labels))
'''

# TF1's DataSet.next_batch: the first call shuffles, an epoch's last batch takes its rest and the next epoch's
# first rows, each epoch shuffled anew with numpy's global random state, which the reader seeded.
BATCHES = '''
class MnistDataSet:
    """A split of MNIST as TF1's reader gave it: its arrays, and next_batch as TF1's computed it."""

    def __init__(self, images, labels, seed):
        np.random.seed(seed)
        self.images, self.labels, self.num_examples = images, labels, len(images)
        self.epochs_completed, self._index_in_epoch = 0, 0

    def _shuffle(self):
        order = np.random.permutation(self.num_examples)
        self.images, self.labels = self.images[order], self.labels[order]

    def next_batch(self, batch_size, shuffle=True):
        start = self._index_in_epoch
        if self.epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self.num_examples:
            self._index_in_epoch += batch_size
            return self.images[start:self._index_in_epoch], self.labels[start:self._index_in_epoch]
        self.epochs_completed += 1
        images, labels = self.images[start:], self.labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - len(images)
        return (np.concatenate((images, self.images[:self._index_in_epoch])),
                np.concatenate((labels, self.labels[:self._index_in_epoch])))


def {function}(train_dir, one_hot=False, reshape=True, validation_size=5000, seed=None):
    """MNIST as input_data.read_data_sets, the TF1 tutorials' reader, gave it."""
    os.makedirs(train_dir, exist_ok=True)  # TF1's reader made it, to download into
    (train_images, train_labels), (test_images, test_labels) = {tf}.keras.datasets.mnist.load_data()

    def data_set(images, labels):
        images = images.reshape(len(images), 784) if reshape else images[..., np.newaxis]
        return MnistDataSet(images.astype(np.float32) * (1.0 / 255.0), np.eye(10)[labels] if one_hot else labels,
                            seed)

    return types.SimpleNamespace(
        train=data_set(train_images[validation_size:], train_labels[validation_size:]),
        validation=data_set(train_images[:validation_size], train_labels[:validation_size]),
        test=data_set(test_images, test_labels))
'''


class Rewrite(TFCodemod):
    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._bindings = Bindings()
        node.visit(self._bindings)
        self._reader_imports = self._imported_as(node)
        self._readers = {id(call): found for call, found in self._calls(node)}
        self._rewritten: set[int] = set()
        self._batches = False

    def _calls(self, module: cst.Module):
        """(call, its kept arguments as code) for each `name = read_data_sets(...)` whose result is only read as
        `name.<split>.<field>`."""
        self._function = next((name for name in FUNCTIONS if name not in self._bindings.written), None)
        names = {name for name in ("np", "types", "os") if self._bindings.counts[name]}
        if self._function is None or names - self._reader_imports:
            return
        for node in subtree(module):
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and len(node.targets) == 1 \
                    and isinstance(node.targets[0].target, cst.Name) and self.api(node.value.func) == READER:
                name = node.targets[0].target.value
                batches = _batched(module, name)
                kept = self._kept(node.value, batches)
                if kept is not None and self._bound_only_to_readers(module, name) and _only_read_as_data(module, name) \
                        and not (batches and DATA_SET in self._bindings.written):
                    yield node.value, (kept, bool(batches))

    def _bound_only_to_readers(self, module: cst.Module, name: str) -> bool:
        """Is ``name`` bound only by `name = read_data_sets(...)` (in one place, or in the branches of an `if`)
        and `name = None`?"""
        values = [node.value for node in subtree(module) if isinstance(node, cst.Assign)
                  and any(is_name(target.target, name) for target in node.targets)]
        return len(values) == self._bindings.counts[name] and all(
            is_name(value, "None") or isinstance(value, cst.Call) and self.api(value.func) == READER
            for value in values)

    @staticmethod
    def _imported_as(module: cst.Module) -> set[str]:
        """Of np and types, those the module binds by `import numpy as np` / `import types` (any others are
        something else)."""
        found = set()
        for node in subtree(module):
            if isinstance(node, cst.Import):
                for alias in node.names:
                    bound = alias.evaluated_alias or alias.evaluated_name
                    if (alias.evaluated_name, bound) in IMPORTS:
                        found.add(bound)
        return found

    def _kept(self, call: cst.Call, batches) -> list[str] | None:
        """The arguments read_mnist takes (the seed too where the program takes batches: it seeded their
        shuffling), or None where TF1's reader gave something else."""
        kept = (*KEPT, "seed") if batches else KEPT
        bound = bind_arguments(call, PARAMETERS)
        if bound is None or "source_url" in bound or "train_dir" not in bound:
            return None
        if "fake_data" in bound and source(bound["fake_data"][1].value) != "False":
            return None
        if "dtype" in bound and self.api(bound["dtype"][1].value) not in ("float32", "dtypes.float32"):
            return None
        if not all(is_read_only(bound[name][1].value) for name in kept if name in bound) or batches is None:
            return None
        return [source(bound["train_dir"][1].value),
                *(f"{name}={source(bound[name][1].value)}" for name in kept if name in bound)]

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        kept, batches = self._readers.get(id(original), (None, False))
        if kept is None or not self.wants(RULE, original):
            return updated
        self._rewritten.add(id(original))
        self._batches |= batches
        for module, name in IMPORTS:
            if name not in self._reader_imports:  # an import the module has already may come after the call: moved
                AddImportsVisitor.add_needed_import(self.context, module, asname=name if name != module else None)
        self._tf = source(self.tf2("keras"))[: -len(".keras")]
        return self.replace(RULE, original, cst.parse_expression(f"{self._function}({', '.join(kept)})"),
                            f"`{source(original.func)}` -> `{self._function}()`, written in this module: TF1's MNIST "
                            "arrays from tf.keras.datasets.mnist.load_data(), kept in ~/.keras/datasets rather than "
                            "the train_dir")

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self._rewritten:
            return super().leave_Module(original_node, updated_node)
        body = list(updated_node.body)
        index = next(i for i, statement in enumerate(original_node.body)
                     if any(id(node) in self._rewritten for node in subtree(statement)))
        code = (BATCHES if self._batches else DEFINITION).format(tf=self._tf, function=self._function).lstrip()
        definitions = [with_blank_lines(statement, 2) for statement in cst.parse_module(code).body]
        body[index] = with_blank_lines(body[index], 2)
        body[index:index] = definitions
        index += len(definitions) - 1
        # The reader runs before the module imports what it reads (a notebook's first cell): those imports first.
        later = _imports_binding(body[index + 1:], {self._tf.split(".")[0]: "tensorflow", "np": "numpy", "os": "os",
                                                    "types": "types"})
        for statement in later:
            body.remove(statement)
        body[index:index] = [statement.with_changes(leading_lines=()) for statement in later]
        return super().leave_Module(original_node, updated_node.with_changes(body=body))


def _imports_binding(statements: list, names: dict[str, str]) -> list[cst.SimpleStatementLine]:
    """Those of ``statements`` that are a line of one `import`, binding a name of ``names`` to its module."""
    found = []
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(
                statement.body[0], cst.Import) and len(statement.body[0].names) == 1:
            alias = statement.body[0].names[0]
            bound = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
            if names.get(bound) == alias.evaluated_name.split(".")[0]:
                found.append(statement)
    return found


def _only_read_as_data(module: cst.Module, name: str) -> bool:
    """Is every read of ``name`` `name.train.images`-like (a split, then one of its arrays)?"""
    allowed = set()  # the names of attributes, imports and the assignment bind nothing
    for node in subtree(module):
        if isinstance(node, cst.Attribute):
            allowed.add(id(node.attr))
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            allowed.update(id(inner) for inner in subtree(node))
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            allowed.add(id(node.targets[0].target))
        if isinstance(node, cst.Attribute) and node.attr.value in {*FIELDS, "next_batch"}:
            split = node.value
            if isinstance(split, cst.Attribute) and split.attr.value in SPLITS and isinstance(split.value, cst.Name) \
                    and split.value.value == name:
                allowed.add(id(split.value))
    return all(id(node) in allowed for node in subtree(module) if isinstance(node, cst.Name) and node.value == name)


def _batched(module: cst.Module, name: str) -> list | None:
    """The `name.<split>.next_batch(...)` calls of the module ([] for none), or None where one is not TF1's
    real-data batches of the given size (fake_data, arguments not read)."""
    calls = []
    for node in subtree(module):
        func = node.func if isinstance(node, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value == "next_batch" and _is_split_of(func.value, name):
            bound = bind_arguments(node, NEXT_BATCH)
            if bound is None or "fake_data" in bound and source(bound["fake_data"][1].value) != "False":
                return None
            calls.append(node)
    found = {id(call.func) for call in calls}
    for node in subtree(module):  # `batches = mnist.train.next_batch` held, not called: not read here
        if isinstance(node, cst.Attribute) and node.attr.value == "next_batch" and id(node) not in found \
                and _is_split_of(node.value, name):
            return None
    return calls


def _is_split_of(node, name: str) -> bool:
    """`name.train`, `name.validation`, `name.test`"""
    return isinstance(node, cst.Attribute) and node.attr.value in SPLITS and is_name(node.value, name)
