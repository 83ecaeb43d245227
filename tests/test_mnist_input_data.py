"""TFM007: the TF1 tutorials' MNIST reader -> read_mnist(), the same arrays from Keras' copy of MNIST."""

from __future__ import annotations

import types

import numpy as np
import pytest
from helpers import run

IMPORTS = "import tensorflow.compat.v1 as tf\nfrom tensorflow.examples.tutorials.mnist import input_data\n\n"
READS = "print(mnist.train.images.shape, mnist.validation.labels[:3], mnist.test.num_examples)\n"


@pytest.mark.parametrize("call, kept", [
    ('input_data.read_data_sets("/tmp/mnist")', 'read_mnist("/tmp/mnist")'),
    ('input_data.read_data_sets("/tmp/mnist", one_hot=True)', 'read_mnist("/tmp/mnist", one_hot=True)'),
    ("input_data.read_data_sets(FLAGS.data_dir, False, True, tf.float32, False, 1000, seed=3)",
     "read_mnist(FLAGS.data_dir, one_hot=True, reshape=False, validation_size=1000)"),
    ("input_data.read_data_sets(train_dir=args.data, fake_data=False, validation_size=0)",
     "read_mnist(args.data, validation_size=0)"),
], ids=["defaults", "one_hot", "positional", "keywords"])
def test_a_reader_whose_arrays_are_read_becomes_read_mnist(call, kept):
    result = run(IMPORTS + f"mnist = {call}\n" + READS)
    assert f"\n\nmnist = {kept}\n" + READS in result.source
    assert "from tensorflow.examples" not in result.source and result.source.count("def read_mnist(") == 1
    assert [finding.rule for finding in result.findings] == ["TFM007"]


def test_the_reader_goes_before_the_statement_holding_the_first_call():
    source = IMPORTS + "def main():\n    mnist = input_data.read_data_sets('data')\n    " + READS + "\n\nmain()\n"
    result = run(source)
    assert result.source.index("def read_mnist(") < result.source.index("def main():")
    assert "    mnist = read_mnist('data')\n" in result.source


def test_a_reader_called_before_the_module_imports_tensorflow_gets_the_import_first():
    """TensorFlow-Examples' notebooks read MNIST in a cell before the one importing TensorFlow: TF1's reader did not
    need it, read_mnist does."""
    source = ("from tensorflow.examples.tutorials.mnist import input_data\n"
              "mnist = input_data.read_data_sets('/tmp/data/', one_hot=True)\n\nimport tensorflow as tf\n"
              "import numpy as np\n\nx = tf.placeholder(tf.float32, [None, 784])\nimages = mnist.train.images\n")
    code = run(source).source
    for line in ("import tensorflow as tf\n", "import numpy as np\n", "import types\n"):
        assert code.count(line) == 1 and code.index(line) < code.index("mnist = read_mnist("), line
    assert code.index("import tensorflow as tf") < code.index("def read_mnist(") < code.index("mnist = read_mnist(")


@pytest.mark.parametrize("code", [
    "mnist = input_data.read_data_sets('d')\nbatch = mnist.train.next_batch(100, fake_data=True)\n",
    "mnist = input_data.read_data_sets('d')\nbatches = mnist.train.next_batch\n",
    "mnist = input_data.read_data_sets('d')\ntrain(mnist)\n",
    "mnist = input_data.read_data_sets('d')\ntrain = mnist.train\n",
    "mnist = input_data.read_data_sets('d', fake_data=True)\n" + READS,
    "mnist = input_data.read_data_sets('d', dtype=tf.uint8)\n" + READS,
    "mnist = input_data.read_data_sets('d', source_url=URL)\n" + READS,
    "mnist = input_data.read_data_sets('d', one_hot=hot())\n" + READS,
    "mnist = input_data.read_data_sets('d')\nmnist = load()\n",
    "train = input_data.read_data_sets('d').train\n",
    "np = 3\nmnist = input_data.read_data_sets('d')\n" + READS,
], ids=["next_batch of fake data", "next_batch held", "passed whole", "a split held", "fake data", "uint8",
        "another source", "one_hot computed",
        "bound twice", "not bound", "np something else"])
def test_what_the_arrays_cannot_stand_for_stays_and_tfm003_names_the_import(code):
    source = IMPORTS + code
    result = run(source)
    assert result.source == source
    assert [finding.rule for finding in result.findings] == ["TFM003"]


def test_a_reader_called_in_both_branches_of_an_if_after_none_becomes_read_mnist_in_both():
    """Azure's mnist_replica: worker 0 reads (downloads) first, the others wait for it, then read too."""
    source = IMPORTS + ("mnist = None\nif chief:\n    mnist = input_data.read_data_sets('d', one_hot=True)\n"
                        "else:\n    wait()\n    mnist = input_data.read_data_sets('d', one_hot=True)\n") + READS
    result = run(source)
    assert result.source.count("    mnist = read_mnist('d', one_hot=True)\n") == 2 and "mnist = None\n" in result.source
    assert [finding.rule for finding in result.findings] == ["TFM007", "TFM007"]


def test_a_module_with_its_own_read_mnist_gets_the_reader_under_another_name():
    source = IMPORTS + "def read_mnist(images, labels):\n    return images, labels\n\n\n" \
        "mnist = input_data.read_data_sets('d')\ninputs = read_mnist(mnist.train.images, mnist.train.labels)\n"
    result = run(source)
    assert "def read_mnist_data_sets(train_dir, one_hot=False" in result.source
    assert "mnist = read_mnist_data_sets('d')\ninputs = read_mnist(mnist.train.images, mnist.train.labels)\n" \
        in result.source
    assert [finding.rule for finding in result.findings] == ["TFM007"]


# -- the arrays TF1's reader gave ----------------------------------------------------------------------------------

def tf1_read_data_sets(train, test, one_hot, reshape, validation_size):
    """What TF1's read_data_sets (tensorflow/contrib/learn/python/learn/datasets/mnist.py, TF 1.15) returned, step
    by step: extract_images gives uint8 [N, 28, 28, 1], extract_labels uint8 digits (dense_to_one_hot: float64
    rows); the validation set is the first validation_size training examples; DataSet reshapes to [N, 784] when
    reshape, then for float32 does astype(float32) and multiply(images, 1.0 / 255.0)."""
    def data_set(images, labels):
        images = images[..., np.newaxis]
        if reshape:
            images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
        images = np.multiply(images.astype(np.float32), 1.0 / 255.0)
        if one_hot:
            one_hot_labels = np.zeros((labels.shape[0], 10))
            one_hot_labels.flat[np.arange(labels.shape[0]) * 10 + labels.ravel()] = 1
            labels = one_hot_labels
        return images, labels, len(images)

    (train_images, train_labels), (test_images, test_labels) = train, test
    return {"train": data_set(train_images[validation_size:], train_labels[validation_size:]),
            "validation": data_set(train_images[:validation_size], train_labels[:validation_size]),
            "test": data_set(test_images, test_labels)}


@pytest.mark.parametrize("one_hot, reshape, validation_size", [
    (False, True, 5000), (True, True, 5000), (True, False, 5000), (False, False, 7),
], ids=["defaults", "one_hot", "one_hot, not reshaped", "digits, not reshaped, 7 held out"])
def test_read_mnist_gives_tf1s_arrays_bit_for_bit(one_hot, reshape, validation_size, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    random = np.random.default_rng(0)
    train = (random.integers(0, 256, (5020, 28, 28), dtype=np.uint8), random.integers(0, 10, 5020, dtype=np.uint8))
    test = (random.integers(0, 256, (30, 28, 28), dtype=np.uint8), random.integers(0, 10, 30, dtype=np.uint8))
    migrated = run(IMPORTS + "mnist = input_data.read_data_sets('d', one_hot=ONE_HOT, reshape=RESHAPE, "
                             "validation_size=VALIDATION)\n" + READS).source
    namespace = {"tf2": types.SimpleNamespace(keras=types.SimpleNamespace(datasets=types.SimpleNamespace(
        mnist=types.SimpleNamespace(load_data=lambda: (train, test))))), "print": lambda *_: None,
        "ONE_HOT": one_hot, "RESHAPE": reshape, "VALIDATION": validation_size}
    exec(migrated.replace("import tensorflow as tf2\n", "").replace("import tensorflow.compat.v1 as tf\n", ""),
         namespace)
    expected = tf1_read_data_sets(train, test, one_hot, reshape, validation_size)
    for split, (images, labels, count) in expected.items():
        got = getattr(namespace["mnist"], split)
        assert got.images.dtype == images.dtype and got.images.shape == images.shape
        assert got.images.tobytes() == images.tobytes()
        assert got.labels.dtype == labels.dtype and np.array_equal(got.labels, labels)
        assert got.num_examples == count
    assert (tmp_path / "d").is_dir()  # TF1's reader made its train_dir: programs write there after reading


def test_a_read_mnist_the_module_imports_is_not_shadowed():
    source = IMPORTS.replace("\n\n", "\nfrom data import read_mnist\n\n") + \
        "mnist = input_data.read_data_sets('d')\ninputs = read_mnist(mnist.train.images)\n"
    result = run(source)
    assert "def read_mnist_data_sets(" in result.source and "from data import read_mnist\n" in result.source


# -- next_batch -----------------------------------------------------------------------------------------------------

class TF1DataSet:
    """TF 1.15's DataSet (tensorflow/contrib/learn/python/learn/datasets/mnist.py) as it batched real data, line
    for line: its constructor seeds numpy with the reader's seed (get_seed(seed)[1] without a graph seed)."""

    def __init__(self, images, labels, seed):
        np.random.seed(seed)
        self._images, self._labels, self._num_examples = images, labels, len(images)
        self._epochs_completed = self._index_in_epoch = 0

    def next_batch(self, batch_size, shuffle=True):
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            perm0 = np.arange(self._num_examples)
            np.random.shuffle(perm0)
            self._images, self._labels = self._images[perm0], self._labels[perm0]
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest_num_examples = self._num_examples - start
            images_rest_part = self._images[start:self._num_examples]
            labels_rest_part = self._labels[start:self._num_examples]
            if shuffle:
                perm = np.arange(self._num_examples)
                np.random.shuffle(perm)
                self._images, self._labels = self._images[perm], self._labels[perm]
            start = 0
            self._index_in_epoch = batch_size - rest_num_examples
            end = self._index_in_epoch
            return (np.concatenate((images_rest_part, self._images[start:end]), axis=0),
                    np.concatenate((labels_rest_part, self._labels[start:end]), axis=0))
        self._index_in_epoch += batch_size
        end = self._index_in_epoch
        return self._images[start:end], self._labels[start:end]


BATCHES = "batches = [mnist.train.next_batch(BATCH, shuffle=SHUFFLE) for _ in range(9)]\n"


def test_next_batch_makes_each_split_a_data_set_batching_as_tf1s():
    result = run(IMPORTS + "mnist = input_data.read_data_sets('d', one_hot=True, seed=3)\n" + BATCHES + READS)
    assert "mnist = read_mnist('d', one_hot=True, seed=3)\n" in result.source and "class MnistDataSet:" in result.source
    assert [finding.rule for finding in result.findings] == ["TFM007"]


@pytest.mark.parametrize("batch, shuffle", [(7, True), (7, False), (20, True)],
                         ids=["across epochs", "not shuffled", "a whole epoch a batch"])
def test_next_batch_gives_tf1s_batches_bit_for_bit(batch, shuffle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    random = np.random.default_rng(1)
    train = (random.integers(0, 256, (25, 28, 28), dtype=np.uint8), random.integers(0, 10, 25, dtype=np.uint8))
    test = (random.integers(0, 256, (4, 28, 28), dtype=np.uint8), random.integers(0, 10, 4, dtype=np.uint8))
    migrated = run(IMPORTS + "mnist = input_data.read_data_sets('d', validation_size=5, seed=11)\n" + BATCHES).source
    namespace = {"tf2": types.SimpleNamespace(keras=types.SimpleNamespace(datasets=types.SimpleNamespace(
        mnist=types.SimpleNamespace(load_data=lambda: (train, test))))), "BATCH": batch, "SHUFFLE": shuffle}
    exec(migrated.replace("import tensorflow as tf2\n", "").replace("import tensorflow.compat.v1 as tf\n", ""),
         namespace)
    arrays = tf1_read_data_sets(train, test, False, True, 5)
    splits = [TF1DataSet(*arrays[split][:2], 11) for split in ("train", "validation", "test")]
    expected = [splits[0].next_batch(batch, shuffle) for _ in range(9)]
    for (images, labels), (tf1_images, tf1_labels) in zip(namespace["batches"], expected, strict=True):
        assert images.tobytes() == tf1_images.tobytes() and np.array_equal(labels, tf1_labels)
