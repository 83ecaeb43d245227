"""``forward_features(estimator, keys)`` -> those features beside a canned estimator's predictions.

``tf.contrib.estimator.forward_features`` (TF 1.x; gone with tf.contrib) wrapped an Estimator so that what it
predicted also held the named features, each as its input gave it: in ``predict`` (a key for batch prediction,
babyweight's), and in the exported ``predict`` signature, the one a canned head exports as a PredictOutput. The
wrapping statement goes with the Estimator; the generated ``predict_examples`` and ``export_saved_model`` add the
features (templates/predict_examples.py.j2, templates/export_saved_model.py.j2).

A wrapper of the program's own doing the same (forwarded_by_hand.py) is read alike, with one difference TF1 had:
it added the features after the canned head had made its export outputs (a PredictOutput copies the predictions),
so they were in ``predict`` only, not in any exported signature (measured with tensorflow_estimator 2.15). The
wrapping statement goes, and the wrapper with it where nothing else uses it.

Before::

    estimator = tf.estimator.DNNRegressor(hidden_units=[8], feature_columns=columns)
    estimator = tf.contrib.estimator.forward_features(estimator, "key")

After (in ``predict_examples``, beside the predictor's predictions)::

    # forward_features: these features too, each as the input gave it.
    outputs = {**outputs, **{key: features[key] for key in ["key"]}}
"""

from __future__ import annotations

import libcst as cst

from rewrites.estimator.forwarded_by_hand import Wrapping, wrapping
from rewrites.estimator.program import Model
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import bind_arguments, bound_values

FORWARD_FEATURES = {"contrib.estimator.forward_features"}
PARAMETERS = ("estimator", "keys", "sparse_default_values")
# Why a forward_features is not migrated: (contrib's, the program's own).
WHY_NOT = {
    "custom": ("forward_features of a custom Estimator is not migrated yet: add the features to its model_fn's "
               "predictions (and its PREDICT export output) and run tf-migrate again",
               "{own} of a custom Estimator, is not migrated yet: add the features to the predictions its model_fn "
               "returns (its export_outputs without them: TF1 exported none) and run tf-migrate again"),
    "clash": ("forward_features of `{key}`, which the estimator predicts already (TF1 refused it too)",
              "{own} forwards `{key}`, which the estimator predicts already: TF1 replaced that prediction by the "
              "feature, which the migration does not do"),
}


def wrapped(value: Value) -> Value | None:
    """The Estimator a ``forward_features(...)`` call wraps, or the one a program's own wrapper was called with
    (``value``: the Estimator that wrapper returns); None: neither, or not readable."""
    if isinstance(value.node, cst.Call) and value.api() in FORWARD_FEATURES:
        bound = bind_arguments(value.node, PARAMETERS)
        return Value(bound["estimator"][1].value, value.place) if bound and "estimator" in bound else None
    by_hand = wrapping(value)
    return by_hand.arguments.get(by_hand.wrapper.estimator) if by_hand is not None else None


def calls(trail: list) -> list[Value]:
    """The forward_features a pipeline's Estimator passed through (see ``wrapped``), each once, in order."""
    found: dict[int, Value] = {}
    for step in trail:
        by_hand = wrapping(step) if isinstance(step, Value) else None
        if by_hand is not None:
            found.setdefault(id(by_hand.call.node), step)
        elif isinstance(step, Value) and isinstance(step.node, cst.Call) and step.api() in FORWARD_FEATURES:
            found.setdefault(id(step.node), step)
    return list(found.values())


def read(value: Value, model: Model, canned: str | None, values: Values) -> None:
    """The keys one forward_features forwards, into ``model.forwarded`` (and ``model.forwarded_exported``)."""
    by_hand = wrapping(value)
    call = by_hand.call if by_hand is not None else value
    own = f"`{by_hand.wrapper.function.name.value}(...)`, the program's own forward_features," if by_hand else ""
    if canned is None:
        raise call.fail(WHY_NOT["custom"][bool(by_hand)].format(own=own))
    keys = _own_keys(by_hand, own, values) if by_hand is not None else _contrib_keys(call, values)
    predicted = {key.strip('"') for key, _ in model.predictions or ()}
    clash = next((key for key in keys if key in predicted), None)
    if clash is not None:
        raise call.fail(WHY_NOT["clash"][bool(by_hand)].format(own=own, key=clash))
    model.forwarded += [key for key in keys if key not in model.forwarded]
    if by_hand is None:  # the program's own wrapper added them after the head had made its export outputs
        model.forwarded_exported += [key for key in keys if key not in model.forwarded_exported]


def _contrib_keys(call: Value, values: Values) -> list[str]:
    args = bound_values(call.node, PARAMETERS)
    if "sparse_default_values" in args:
        raise call.fail("forward_features(sparse_default_values=...) is not migrated yet")
    keys = values.constant(Value(args["keys"], call.place)) if "keys" in args else None
    keys = [keys] if isinstance(keys, str) else keys
    if not _written_out(keys):
        raise call.fail("forward_features is migrated with its keys written out (a feature's key, or a list of "
                        "them); TF1 forwarded every feature without them")
    return list(keys)


def _own_keys(by_hand: Wrapping, own: str, values: Values) -> list[str]:
    wrapper = by_hand.wrapper
    given = by_hand.arguments.get(wrapper.keys)
    keys = values.constant(given) if given is not None else None
    keys = keys if wrapper.loop else [keys] if isinstance(keys, str) else None
    if not _written_out(keys):
        what = "a list of features' keys" if wrapper.loop else "a feature's key"
        raise by_hand.call.fail(f"{own} is migrated with its `{wrapper.keys}` written out ({what})")
    return list(keys)


def _written_out(keys: object) -> bool:
    return isinstance(keys, (list, tuple)) and bool(keys) and all(isinstance(key, str) for key in keys)
