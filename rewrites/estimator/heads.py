"""A canned estimator's head as Keras code on its logits: the loss, the metrics it reported in evaluate (and
those Keras has no counterpart for), and what it predicted. Used by canned.py."""

from __future__ import annotations


def head_predictions(classifier: bool, units: int, vocabulary: list[str] | None) -> list[tuple[str, str]]:
    """What the head's predict yielded, as Keras code on ``logits``: its keys and values, each per example as TF1
    gave it."""
    if not classifier:
        return [('"predictions"', "logits")]
    if units > 1:
        probabilities, class_ids = [("\"probabilities\"", "tf.nn.softmax(logits)")], "tf.argmax(logits, axis=-1)[:, None]"
    else:
        probabilities = [('"logistic"', "tf.sigmoid(logits)"),
                         ('"probabilities"', "tf.nn.softmax(tf.concat([tf.zeros_like(logits), logits], axis=-1))")]
        class_ids = "tf.cast(logits > 0, tf.int64)"
    classes = (f"tf.gather(tf.constant({vocabulary!r}), {class_ids})".replace("'", '"') if vocabulary else
               f"tf.strings.as_string({class_ids})")
    every = "[tf.shape(logits)[0], 1]"  # all_class_ids and all_classes: the same row for every example
    all_ids = f"tf.tile(tf.range({max(units, 2)})[None, :], {every})"
    all_classes = (f"tf.tile(tf.constant([{vocabulary!r}]), {every})".replace("'", '"') if vocabulary else
                   f"tf.strings.as_string({all_ids})")
    return [('"logits"', "logits"), *probabilities, ('"class_ids"', class_ids), ('"classes"', classes),
            ('"all_class_ids"', all_ids), ('"all_classes"', all_classes)]


def head_signatures(classifier: bool, units: int) -> list[tuple[str, str, dict[str, str] | None]]:
    """The signatures the head exported: (name, method, each output's prediction key; None: every prediction).
    A classify or regress signature was exported only for a serving function of serialized tf.Examples."""
    if not classifier:
        regress = ("regress", {"outputs": "predictions"})
        return [("serving_default", *regress), ("regression", *regress), ("predict", "predict", None)]
    classify = ("classify", {"classes": "all_classes", "scores": "probabilities"})
    binary = [("regression", "regress", {"outputs": "logistic"})] if units == 1 else []
    return [("serving_default", *classify), ("classification", *classify), *binary, ("predict", "predict", None)]


def head(classifier: bool, units: int, reduction: str | None) -> tuple[str, list[str], str]:
    """The head's loss and metrics as Keras code, and the metrics TF1 reported that Keras does not."""
    arguments = "from_logits=True" + (f", reduction={reduction}" if reduction else "")
    if classifier and units > 1:
        return (f"keras.losses.SparseCategoricalCrossentropy({arguments})",
                ['keras.metrics.SparseCategoricalAccuracy(name="accuracy")',
                 'keras.metrics.SparseCategoricalCrossentropy(from_logits=True, name="average_loss")'], "")
    if classifier:
        return (f"keras.losses.BinaryCrossentropy({arguments})",
                ['keras.metrics.BinaryAccuracy(threshold=0.0, name="accuracy")',
                 'keras.metrics.BinaryCrossentropy(from_logits=True, name="average_loss")',
                 'keras.metrics.AUC(from_logits=True, name="auc")'],
                "accuracy_baseline, auc_precision_recall, label/mean, precision, prediction/mean and recall")
    regression = f"reduction={reduction}" if reduction else ""
    return (f"keras.losses.MeanSquaredError({regression})",
            ['keras.metrics.MeanSquaredError(name="average_loss")'], "label/mean and prediction/mean")
