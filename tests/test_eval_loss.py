"""The loss a migrated program reports is TF1's: each batch's loss averaged over the batches
(rewrites/estimator/eval_loss.py, templates/tf1_eval_loss.py.j2). Keras weighs each batch by its size: with a short
last eval batch the two differ (issue 29: 0.01479 against 0.01581 on 200 rows in batches of 32)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run, run_isolated
from test_estimator import EVAL_LOSS, SEED, flat

REPEATING_EVAL = SEED.replace("return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)",
                              "return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)")


def main_finding(result) -> str:
    (message,) = [f.message for f in result.findings if f.rule == "TFM301"]
    return message


def test_an_eval_input_that_ends_reports_the_mean_of_the_batches_losses():
    result = run(SEED)
    assert f"metrics=[{EVAL_LOSS}]" in flat(result.source)
    assert "per example" not in main_finding(result)


def test_an_eval_input_that_repeats_has_only_full_batches_and_keeps_keras_loss():
    assert REPEATING_EVAL != SEED
    result = run(REPEATING_EVAL)
    assert "TF1EvalLoss" not in result.source and "metrics=" not in result.source
    assert "ParameterServerStrategy" in result.source and "per example" not in main_finding(result)


def test_a_scalar_weight_of_the_loss_weighs_the_reported_loss_too():
    source = SEED.replace("predictions=logits)", "predictions=logits, weights=2.0)")
    code = flat(run(source).source)
    assert "loss_weights=[2.0]" in code
    assert 'TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none"), weight=2.0)' in code


def test_a_loss_summed_over_the_batch_is_summed_per_batch():
    """A v1 canned estimator summed its loss over the batch."""
    source = SEED.replace("estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)",
                          'columns = [tf1.feature_column.numeric_column("x", shape=[2])]\n'
                          "estimator = tf1.estimator.DNNRegressor([4], columns, config=config)").replace(
        "from_tensor_slices((features, labels))", 'from_tensor_slices(({"x": features}, labels))')
    code = flat(run(source).source)
    assert "loss=keras.losses.MeanSquaredError(reduction=\"sum\")" in code
    assert 'TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none"), summed=True)' in code


def test_a_module_with_its_own_tf1_eval_loss_is_left_saying_why():
    source = SEED.replace("\n\ndef _model_fn", "\n\nclass TF1EvalLoss:\n  pass\n\n\ndef _model_fn")
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM302"]
    assert "`TF1EvalLoss`" in finding.message and "already uses" in finding.message


@pytest.mark.tensorflow
def test_the_metric_is_the_mean_of_the_batches_losses_under_a_strategy():
    """200 examples in batches of 32: six full batches and one of 8, evaluated under a strategy (where a Keras loss
    object reduces over the batch only in compile's own loop): averaged, summed, and with example weights."""
    run_isolated(evaluated_as_tf1, [("sum_over_batch_size", False), ("sum", False), ("sum_over_batch_size", True)])


def evaluated_as_tf1(cases: list[tuple[str, bool]]) -> None:
    for reduction, weighted in cases:
        evaluated_as_tf1_with(reduction, weighted)


def evaluated_as_tf1_with(reduction: str, weighted: bool) -> None:
    import tensorflow as tf
    import tf_keras as keras

    from templates import render

    keras.utils.set_random_seed(0)  # the Dense layer's weights too: how far Keras' own mean is from TF1's depends on them
    namespace = {"tf": tf, "keras": keras}
    exec(render("tf1_eval_loss.py.j2"), namespace)
    rng = np.random.RandomState(0)
    x, y, w = rng.normal(size=(200, 2)).astype("float32"), rng.normal(size=(200, 1)).astype("float32"), \
        rng.uniform(size=(200, 1)).astype("float32")
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
        inputs = keras.Input((2,))
        model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
        metric = namespace["TF1EvalLoss"](keras.losses.MeanSquaredError(reduction="none"), summed=reduction == "sum",
                                          weight=3.0)
        model.compile("sgd", loss=keras.losses.MeanSquaredError(reduction=reduction), loss_weights=[3.0],
                      **{"weighted_metrics" if weighted else "metrics": [metric]})
    data = tf.data.Dataset.from_tensor_slices((x, y, w) if weighted else (x, y)).batch(32)
    reported = model.evaluate(data, return_dict=True, verbose=0)["loss"]
    errors = (model.predict(x, verbose=0) - y) ** 2 * (w if weighted else 1)
    batches = [errors[start:start + 32] for start in range(0, 200, 32)]
    tf1_loss = 3.0 * np.mean([batch.sum() if reduction == "sum" else batch.mean() for batch in batches])
    # Keras' own: each batch's loss weighted by its size.
    keras_loss = 3.0 * (sum(len(b) * b.sum() for b in batches) / 200 if reduction == "sum" else errors.mean())
    assert reported == pytest.approx(tf1_loss, rel=1e-5)
    assert abs(tf1_loss - keras_loss) > 1e-3 * tf1_loss  # what Keras alone reports differs
