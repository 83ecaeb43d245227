"""The batches the old side records and both sides replay: any size, the last one short too, strings included."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")

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
