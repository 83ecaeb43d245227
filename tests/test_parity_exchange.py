"""The batches the old side records and both sides replay: any size, the last one short too, strings included."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

from helpers import run_isolated  # noqa: E402

from migrator.parity.exchange import Exchange  # noqa: E402


def test_batches_of_different_sizes_come_back_as_they_were(tmp_path):
    batches = [({"x": np.ones((32, 3), np.float32) * i, "word": np.array([b"a"] * 32, dtype=object)},
                np.full((32, 1), i, np.float32)) for i in range(6)]
    batches.append(({"x": np.zeros((8, 3), np.float32), "word": np.array([b"bb"] * 8, dtype=object)},
                    np.zeros((8, 1), np.float32)))  # 200 rows in batches of 32
    exchange = Exchange(tmp_path)
    exchange.write_batches("eval.npz", batches)
    read, count = exchange.read_batches("eval.npz")
    assert count == 7 and [len(features["x"]) for features, _ in read] == [32] * 6 + [8]
    for (features, labels), (old_features, old_labels) in zip(read, batches):
        np.testing.assert_array_equal(features["x"], old_features["x"])
        np.testing.assert_array_equal(labels, old_labels)
        assert list(features["word"]) == list(old_features["word"].astype(bytes))


def test_batches_of_one_size_stay_stacked(tmp_path):
    batches = [(np.full((4, 2), i, np.float32), np.full((4,), i, np.int64)) for i in range(3)]
    exchange = Exchange(tmp_path)
    exchange.write_batches("train.npz", batches)
    (features, labels), count = exchange.read_batches("train.npz")
    assert count == 3 and features.shape == (3, 4, 2) and labels.shape == (3, 4)


def sparse_batch(rows: int, width: int, seed: int):
    """What Session.run gives for a SparseTensor (VarLen parsing): a namedtuple of indices, values, dense_shape."""
    from collections import namedtuple

    value = namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])
    rng = np.random.RandomState(seed)
    lengths = rng.randint(0, width + 1, size=rows)
    indices = np.array([[row, column] for row in range(rows) for column in range(lengths[row])], np.int64)
    return value(indices.reshape(-1, 2), rng.randint(0, 9, size=len(indices)).astype(np.int64),
                 np.array([rows, lengths.max()], np.int64))


def ragged_batch(rows: int, seed: int):
    from collections import namedtuple

    value = namedtuple("RaggedTensorValue", ["flat_values", "nested_row_splits"])
    lengths = np.random.RandomState(seed).randint(0, 4, size=rows)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return value(np.arange(splits[-1], dtype=np.float32), (splits,))


def test_sparse_and_ragged_features_come_back_as_they_were(tmp_path):
    batches = [({"ids": sparse_batch(size, 5, i), "words": ragged_batch(size, i), "x": np.ones((size, 2))},
                np.zeros(size)) for i, size in enumerate([4, 4, 3])]
    exchange = Exchange(tmp_path)
    exchange.write_batches("train.npz", batches)
    read, count = exchange.read_batches("train.npz")
    assert count == 3 and len(read) == 3
    for (features, labels), (old, old_labels) in zip(read, batches):
        for field in ("indices", "values", "dense_shape"):
            np.testing.assert_array_equal(getattr(features["ids"], field), getattr(old["ids"], field))
        np.testing.assert_array_equal(features["words"].flat_values, old["words"].flat_values)
        np.testing.assert_array_equal(features["words"].nested_row_splits[0], old["words"].nested_row_splits[0])
        np.testing.assert_array_equal(features["x"], old["x"])
        np.testing.assert_array_equal(labels, old_labels)


@pytest.mark.tensorflow
def test_replayed_sparse_and_ragged_features_are_tensors_of_their_kind(tmp_path):
    """As TF1's input gave them: a VarLen feature parsed into a SparseTensor, a RaggedTensor, strings."""
    pytest.importorskip("tensorflow")
    run_isolated(replayed_as_recorded, tmp_path)


def replayed_as_recorded(tmp_path) -> None:
    import tensorflow as tf
    from migrator.parity.exchange import dataset_of

    def input_fn():
        def parse(i):
            ids = tf.sparse.from_dense(tf.reshape(tf.range(i % 3 + 1, dtype=tf.int64), [1, -1]))
            words = tf.range(i % 2 + 1, dtype=tf.float32)  # of two lengths: batched as ragged rows
            return {"ids": tf.sparse.reshape(ids, [-1]), "words": words, "name": tf.strings.as_string(i)}, i

        return tf.data.Dataset.range(10).map(parse).apply(tf.data.experimental.dense_to_ragged_batch(4))  # 4, 4, 2

    with tf.Graph().as_default():
        element = tf.compat.v1.data.make_one_shot_iterator(input_fn()).get_next()
        with tf.compat.v1.Session() as session:
            batches = [session.run(element) for _ in range(3)]
    exchange = Exchange(tmp_path)
    exchange.write_batches("eval.npz", batches)
    replayed = list(dataset_of(tf, exchange.read_batches("eval.npz")[0]))
    expected = list(input_fn())
    assert len(replayed) == len(expected) == 3
    for (features, labels), (old, old_labels) in zip(replayed, expected):
        assert isinstance(features["ids"], tf.SparseTensor) and isinstance(features["words"], tf.RaggedTensor)
        np.testing.assert_array_equal(tf.sparse.to_dense(features["ids"]), tf.sparse.to_dense(old["ids"]))
        assert features["words"].to_list() == old["words"].to_list()
        assert features["name"].numpy().tolist() == old["name"].numpy().tolist()
        np.testing.assert_array_equal(labels, old_labels)
