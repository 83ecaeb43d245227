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


def test_a_wide_and_deep_predictor_gives_the_trained_model_s_logits():
    """The predictor of a combined estimator sums the linear and DNN logits as WideDeepModel (trained, proven by
    parity) does, on the same weights."""
    import tensorflow as tf
    from test_estimator_canned import COMBINED, PREDICT
    from test_estimator_programs import run_one

    code = run_one(COMBINED.replace(*PREDICT)).source
    build = code[code.index("def build_dnn_linear_combined_classifier_model"):code.index("def strategy_for_this_task")]
    namespace: dict = {}
    exec("import math\nimport tensorflow as tf\nimport tf_keras as keras\n\n" + build, namespace)
    features = {"age": np.array([[20.0], [50.0], [30.0]], np.float32),
                "education": np.array([["Masters"], ["Bachelors"], ["PhD"]]),
                "occupation": np.array([["a"], ["b"], ["c"]])}
    tf.random.set_seed(0)
    model, predictor = namespace["build_dnn_linear_combined_classifier_model"](
        tf.data.Dataset.from_tensor_slices(features).batch(3).element_spec)
    for weight in model.weights:  # the linear part starts at zeros: make both parts count
        weight.assign(tf.random.normal(weight.shape, seed=1))
    logits = model(features).numpy()
    assert np.abs(model.linear_model(features).numpy()).max() > 0.1
    np.testing.assert_array_equal(predictor(features)["logits"].numpy(), logits)
    np.testing.assert_array_equal(predictor(features)["class_ids"].numpy()[:, 0], logits.argmax(axis=-1))
