"""``forward_features(estimator, keys)`` -> those features beside a canned estimator's predictions.

``tf.contrib.estimator.forward_features`` (TF 1.x; gone with tf.contrib) wrapped an Estimator so that what it
predicted also held the named features, each as its input gave it: in ``predict`` (a key for batch prediction,
babyweight's), and in the exported ``predict`` signature, the one a canned head exports as a PredictOutput. The
wrapping statement goes with the Estimator; the generated ``predict_examples`` and ``export_saved_model`` add the
features (templates/predict_examples.py.j2, templates/export_saved_model.py.j2).

Before::

    estimator = tf.estimator.DNNRegressor(hidden_units=[8], feature_columns=columns)
    estimator = tf.contrib.estimator.forward_features(estimator, "key")

After (in ``predict_examples``, beside the predictor's predictions)::

    # forward_features: these features too, each as the input gave it.
    outputs = {**outputs, **{key: features[key] for key in ["key"]}}
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator.program import Model
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import bind_arguments, bound_values

FORWARD_FEATURES = {"contrib.estimator.forward_features"}
PARAMETERS = ("estimator", "keys", "sparse_default_values")


def wrapped(call: Value) -> cst.BaseExpression | None:
    """The Estimator a ``forward_features(...)`` call wraps (None: not such a call, or not readable)."""
    if not isinstance(call.node, cst.Call) or call.api() not in FORWARD_FEATURES:
        return None
    bound = bind_arguments(call.node, PARAMETERS)
    return bound["estimator"][1].value if bound and "estimator" in bound else None


def read(call: Value, model: Model, canned: str | None, values: Values) -> None:
    """The keys one forward_features call forwards, into ``model.forwarded``."""
    if canned is None:
        raise call.fail("forward_features of a custom Estimator is not migrated yet: add the features to its "
                        "model_fn's predictions (and its PREDICT export output) and run tf-migrate again")
    args = bound_values(call.node, PARAMETERS)
    if "sparse_default_values" in args:
        raise call.fail("forward_features(sparse_default_values=...) is not migrated yet")
    keys = values.constant(Value(args["keys"], call.place)) if "keys" in args else None
    keys = [keys] if isinstance(keys, str) else keys
    if not (isinstance(keys, (list, tuple)) and keys and all(isinstance(key, str) for key in keys)):
        raise call.fail("forward_features is migrated with its keys written out (a feature's key, or a list of "
                        "them); TF1 forwarded every feature without them")
    predicted = {key.strip('"') for key, _ in model.predictions or ()}
    clash = next((key for key in keys if key in predicted), None)
    if clash is not None:
        raise call.fail(f"forward_features of `{clash}`, which the estimator predicts already (TF1 refused it too)")
    model.forwarded += [key for key in keys if key not in model.forwarded]
