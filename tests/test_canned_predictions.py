"""A canned estimator's predict, migrated: each key its head yielded, computed by the Keras code TFM309 writes from
the same logits, equals what TensorFlow Estimator's head gives (multi-class, binary, with a label vocabulary,
regression)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from rewrites.estimator.heads import head_predictions

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "tf_keras")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, tf_keras)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

LOGITS = {3: np.array([[0.5, 2.0, -1.0], [1.0, 1.0, 0.0], [-3.0, -2.0, -2.5]], np.float32),
          1: np.array([[0.7], [-0.2], [0.0]], np.float32)}


def tf1_head(kind: str, units: int, vocabulary):
    from tensorflow_estimator.python.estimator.head import binary_class_head, multi_class_head, regression_head

    if kind == "regression":
        return regression_head.RegressionHead(label_dimension=units)
    if units == 1:
        return binary_class_head.BinaryClassHead(label_vocabulary=vocabulary)
    return multi_class_head.MultiClassHead(n_classes=units, label_vocabulary=vocabulary)


@pytest.mark.parametrize("kind, units, vocabulary", [
    ("classifier", 3, None), ("classifier", 3, ["setosa", "versicolor", "virginica"]),
    ("classifier", 1, None), ("classifier", 1, ["no", "yes"]), ("regression", 1, None), ("regression", 3, None),
], ids=["multi-class", "multi-class, vocabulary", "binary", "binary, vocabulary", "regression", "regression of 3"])
def test_each_prediction_is_what_the_head_gave(kind, units, vocabulary):
    import tensorflow as tf
    import tf_keras as keras

    logits = keras.Input(shape=(units,))
    written = head_predictions(kind == "classifier", units, vocabulary)
    outputs = {eval(key): eval(code, {"tf": tf, "keras": keras, "logits": logits}) for key, code in written}
    keras_predictions = keras.Model(inputs=logits, outputs=outputs)(LOGITS[units])
    tf1_predictions = tf1_head(kind, units, vocabulary).predictions(tf.constant(LOGITS[units]))
    assert set(outputs) == set(tf1_predictions)
    for key, value in keras_predictions.items():
        expected = tf1_predictions[key].numpy()
        assert value.dtype == expected.dtype and value.shape == expected.shape, (key, value, expected)
        assert (value.numpy() == expected).all(), (key, value, expected)
