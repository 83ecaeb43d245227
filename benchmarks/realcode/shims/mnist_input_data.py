"""The TF1 tutorials' MNIST reader (``tensorflow.examples.tutorials.mnist.input_data``), reading the stand-in file.

TF1's ``read_data_sets(train_dir, ...)`` downloaded MNIST's four files into train_dir and returned ``train``,
``validation`` (the first validation_size training examples) and ``test``; each a DataSet of ``images`` (float32 in
[0, 1], 784 values a row, or 28x28x1 with reshape=False), ``labels`` (digits, or one-hot rows) and ``num_examples``,
whose ``next_batch`` walks the examples in an order shuffled each epoch (a batch crossing an epoch's end takes the
rest of that epoch and the start of the next). Here the arrays come from the stand-in file named by REALCODE_MNIST
(``mnist.npz`` by default, Keras' layout: x_train, y_train, x_test, y_test), in the current folder; train_dir is made,
as TF1 made it, and left empty.
"""
import collections
import os

import numpy

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def load_stand_in(path=None):
    """``(x_train, y_train), (x_test, y_test)`` from the stand-in file, as Keras' ``mnist.load_data()`` gives them."""
    with numpy.load(os.environ.get("REALCODE_MNIST", "mnist.npz")) as data:
        return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])


def dense_to_one_hot(labels, num_classes=10):
    one_hot = numpy.zeros((labels.shape[0], num_classes))
    one_hot.flat[numpy.arange(labels.shape[0]) * num_classes + labels.ravel()] = 1
    return one_hot


class DataSet:
    def __init__(self, images, labels, reshape=True):
        images = images[..., numpy.newaxis]
        if reshape:
            images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
        self.images = numpy.multiply(images.astype(numpy.float32), 1.0 / 255.0)
        self.labels = labels
        self.num_examples = images.shape[0]
        self.epochs_completed = 0
        self._index_in_epoch = 0

    def _shuffle(self):
        order = numpy.random.permutation(self.num_examples)
        self.images, self.labels = self.images[order], self.labels[order]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        start = self._index_in_epoch
        if self.epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size <= self.num_examples:
            self._index_in_epoch += batch_size
            return self.images[start:self._index_in_epoch], self.labels[start:self._index_in_epoch]
        self.epochs_completed += 1
        rest_images, rest_labels = self.images[start:], self.labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - len(rest_images)
        return (numpy.concatenate((rest_images, self.images[:self._index_in_epoch])),
                numpy.concatenate((rest_labels, self.labels[:self._index_in_epoch])))


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=None, reshape=True, validation_size=5000,
                   seed=None, source_url=None):
    if fake_data or (dtype is not None and getattr(dtype, "name", dtype) != "float32"):
        raise NotImplementedError("the stand-in reader gives float32 images of the stand-in data only")
    os.makedirs(train_dir, exist_ok=True)
    if seed is not None:
        numpy.random.seed(seed)
    (train_images, train_labels), (test_images, test_labels) = load_stand_in()
    if one_hot:
        train_labels, test_labels = dense_to_one_hot(train_labels), dense_to_one_hot(test_labels)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. Received: {validation_size}.")
    return Datasets(train=DataSet(train_images[validation_size:], train_labels[validation_size:], reshape),
                    validation=DataSet(train_images[:validation_size], train_labels[:validation_size], reshape),
                    test=DataSet(test_images, test_labels, reshape))
