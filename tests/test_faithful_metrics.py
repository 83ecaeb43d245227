"""Tier 2 (rewrites/estimator/faithful_metrics.py): eval_metric_ops of `tf.metrics.precision`, `recall` and `auc` in a
model_fn kept as written become Keras' Precision, Recall and AUC of the same tensors. Precision and Recall count a
prediction positive above 0 (TF1: when it is not 0, the same for class ids, booleans and probabilities), AUC sums by
interpolation (TF1's careful_interpolation; its default trapezoidal sum differs a little): findings say so."""

from __future__ import annotations

import pytest
from helpers import run, tf1_and_migrated_evaluations
from test_faithful import EVALUATED, PROGRAM


PRECISION = ('    metrics = {"accuracy": accuracy, "mean_logit": tf.metrics.mean(logits)}\n',
             '    positive, predicted = tf.equal(labels, 1), tf.equal(tf.argmax(logits, 1), 1)\n'
             '    metrics = {"accuracy": accuracy, "mean_logit": tf.metrics.mean(logits),\n'
             '               "precision": tf.metrics.precision(labels=positive, predictions=predicted),\n'
             '               "recall": tf.metrics.recall(labels=positive, predictions=predicted),\n'
             '               "auc": tf.metrics.auc(positive, tf.nn.softmax(logits)[:, 1], num_thresholds=50,\n'
             '                                     summation_method="careful_interpolation")}\n')
PRINTED = ('  print("eval loss: %s, accuracy %s, mean logit %s" % (metrics["loss"], metrics["accuracy"], '
           'metrics["mean_logit"]))\n',
           '  print("eval precision %s, recall %s, auc %s" % (metrics["precision"], metrics["recall"], '
           'metrics["auc"]))\n')


# tf.layers.dense under TF 2.15 draws its default kernel initializer's seed anew each run, tf_random_seed or not:
# seeded here, TF1's training lands on the same weights every run, so the guard below holds or fails every time.
SEEDED = ('activation=tf.nn.relu, name=', 'activation=tf.nn.relu,\n                          '
                                          'kernel_initializer=tf.glorot_uniform_initializer(seed=index), name=')


def with_precision() -> str:
    source = PROGRAM.read_text()
    for before, after in (PRECISION, PRINTED, SEEDED):
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    return source


def test_precision_and_recall_become_keras_metrics_counting_positives_above_zero():
    result = run(with_precision())
    assert 'keras.metrics.Precision(thresholds=0.0, name="precision")' in result.source
    assert 'keras.metrics.Recall(thresholds=0.0, name="recall")' in result.source
    assert '"precision": (positive, predicted)' in result.source
    notes = [f.message for f in result.findings if "counts a prediction positive above 0" in f.message]
    assert len(notes) == 2 and notes[0].startswith("tf.metrics.precision -> keras.metrics.Precision")


@pytest.mark.tensorflow
def test_precision_recall_and_auc_of_tf1s_checkpoint_are_tf1s(tmp_path):
    """The TF1 program trains and evaluates; the migrated one, on the same model_dir, restores that checkpoint,
    trains no more and evaluates: the same precision, recall and AUC."""
    printed = tf1_and_migrated_evaluations(tmp_path, with_precision(),
                                           r"eval precision (\S+), recall (\S+), auc (\S+)$")
    assert printed[1] == pytest.approx(printed[0], rel=1e-6)
    assert 0 < printed[0][0] < 1 or 0 < printed[0][1] < 1  # a count that could differ
    assert 0.5 < printed[0][2] < 1


AUC = {
    "TF1's default sum": ("tf.metrics.auc(labels, probabilities)", 'keras.metrics.AUC(name="auc")', True),
    "careful_interpolation": ('tf.metrics.auc(labels, probabilities, summation_method="careful_interpolation")',
                              'keras.metrics.AUC(name="auc")', False),
    "its arguments": ('tf.metrics.auc(labels, probabilities, num_thresholds=20, curve="PR", summation_method="minoring")',
                      'keras.metrics.AUC(num_thresholds=20, curve="PR", summation_method="minoring", name="auc")',
                      False),
}


@pytest.mark.parametrize("metric, keras, differs", AUC.values(), ids=AUC)
def test_auc_becomes_keras_auc_saying_where_the_sum_differs(metric, keras, differs):
    source = PROGRAM.read_text().replace('"mean_logit": tf.metrics.mean(logits)', f'"auc": {metric}').replace(
        "    accuracy = ", "    probabilities = tf.nn.softmax(logits)[:, 1]\n    accuracy = ").replace(
        'metrics["mean_logit"]', 'metrics["auc"]')
    result = run(source)
    assert keras in result.source and '"auc": (labels, probabilities)' in result.source
    assert any("trapezoidal sum gives a slightly different value" in f.message for f in result.findings) == differs


def test_auc_of_a_summation_method_read_at_run_time_leaves_the_program():
    source = PROGRAM.read_text().replace('"mean_logit": tf.metrics.mean(logits)',
                                         '"auc": tf.metrics.auc(labels, logits, summation_method=params["sum"])')
    result = run(source)
    assert "ModelFnModel" not in result.source
    assert any("summation_method that is not a literal TF1 name" in f.message for f in result.findings)


def test_a_metric_also_written_to_a_summary_is_migrated_and_the_summary_goes():
    """`tf.summary.scalar("accuracy", accuracy[1])` beside eval_metric_ops: TF1 wrote it to model_dir's events; the
    summary goes (tier 2 drops summaries on lines of their own) and the metric is Keras' Accuracy all the same."""
    before = "predictions=tf.argmax(logits, 1))\n"
    source = PROGRAM.read_text()
    assert source.count(before) == 1
    result = run(source.replace(before, before + '    tf.summary.scalar("accuracy", accuracy[1])\n'))
    assert "ModelFnModel" in result.source and "tf.summary.scalar" not in result.source
    assert any(f.message.startswith('`tf.summary.scalar("accuracy", accuracy[1])` goes') for f in result.findings)


PER_CLASS = ('"mean_logit": tf.metrics.mean(logits)',
             '"per_class": tf.metrics.mean_per_class_accuracy(labels, tf.argmax(logits, 1), params["classes"])')


def test_mean_per_class_accuracy_becomes_the_generated_metric_class_keras_lacks():
    """Keras has no mean per-class accuracy: the migrated module defines TF1MeanPerClassAccuracy (TF1's count,
    per class) and the model makes it with TF1's num_classes."""
    result = run(PROGRAM.read_text().replace(*PER_CLASS).replace('metrics["mean_logit"]', 'metrics["per_class"]')
                 .replace('"hidden_units": [16, 8],', '"hidden_units": [16, 8], "classes": 3,'))
    assert "class TF1MeanPerClassAccuracy(keras.metrics.Metric):" in result.source
    assert result.source.index("class TF1MeanPerClassAccuracy") < result.source.index("class ModelFnModel")
    assert '"per_class": TF1MeanPerClassAccuracy(num_classes=params["classes"], name="per_class")' in result.source
    assert '"per_class": (labels, tf.compat.v1.argmax(logits, 1))' in result.source


def test_mean_per_class_accuracy_of_a_class_count_the_model_fn_computes_leaves_the_program():
    source = PROGRAM.read_text().replace(*PER_CLASS).replace('params["classes"])', "classes)").replace(
        "  training = ", "  classes = 3\n  training = ").replace('metrics["mean_logit"]', 'metrics["per_class"]')
    result = run(source)
    assert "ModelFnModel" not in result.source
    assert any("read from `classes`, which the model_fn computes" in f.message for f in result.findings)


def tf1_value(session, value, update, feed):
    """TF1's metric after one more batch."""
    session.run(update, feed)
    return session.run(value)


def assert_counts_as(metric, batches, tf1, rel):
    """The Keras metric fed the same batches: TF1's value after each (values that tell counts apart), and 0 once
    reset."""
    values = []
    for batch in batches:
        metric.update_state(*batch)
        values.append(float(metric.result()))
    assert values == pytest.approx(tf1, rel=rel)
    assert 0 < tf1[-1] < 1
    metric.reset_state()
    assert float(metric.result()) == 0.0


@pytest.mark.tensorflow
def test_the_generated_per_class_metric_counts_as_tf1s_over_batches_with_weights():
    """The generated class and TF1's tf.metrics.mean_per_class_accuracy, fed the same three batches of labels,
    predictions (2-D, as multi-label programs give them: flattened) and weights: the same value after each."""
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    from templates import render

    namespace = {"tf": tf, "keras": keras}
    exec(render("tf1_mean_per_class_accuracy.py.j2"), namespace)
    metric = namespace["TF1MeanPerClassAccuracy"](num_classes=4, name="per_class")
    rng = np.random.RandomState(7)
    batches = [(rng.randint(3, size=(5, 2)), rng.randint(4, size=(5, 2)).astype(np.float32),
                rng.uniform(size=(5, 2)).astype(np.float32)) for _ in range(3)]
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        labels, predictions, weights = (tf.compat.v1.placeholder(dtype, [None, 2])
                                        for dtype in (tf.int64, tf.float32, tf.float32))
        value, update = tf.compat.v1.metrics.mean_per_class_accuracy(labels, predictions, 4, weights=weights)
        session.run(tf.compat.v1.local_variables_initializer())
        tf1 = [tf1_value(session, value, update, dict(zip((labels, predictions, weights), batch)))
               for batch in batches]
    assert len(set(np.round(tf1, 6))) == 3
    assert_counts_as(metric, batches, tf1, rel=1e-6)


AT_K = ('"mean_logit": tf.metrics.mean(logits)',
        '"map_at_2": tf.metrics.average_precision_at_k(labels=labels, predictions=logits, k=params["top_k"])')


def test_average_precision_at_k_becomes_the_generated_metric_class_keras_lacks():
    result = run(PROGRAM.read_text().replace(*AT_K).replace('metrics["mean_logit"]', 'metrics["map_at_2"]')
                 .replace('"hidden_units": [16, 8],', '"hidden_units": [16, 8], "top_k": 2,'))
    assert "class TF1AveragePrecisionAtK(keras.metrics.Metric):" in result.source
    assert '"map_at_2": TF1AveragePrecisionAtK(k=params["top_k"], name="map_at_2")' in result.source
    assert '"map_at_2": (labels, logits)' in result.source


# labels, predictions: a row's labels as class ids (one a row, several, or one a row given whole as TF1's odd
# programs give it: the rows' predicted classes against their labels, both of rank 1), one out of range.
AT_K_SHAPES = {"one label a row": ((6,), (6, 5), 2), "labels a row": ((6, 3), (6, 5), 3),
               "rank 1 both": ((6,), (6,), 2), "weighted": ((6, 2), (6, 5), 4)}


@pytest.mark.tensorflow
@pytest.mark.parametrize("labels_shape, predictions_shape, k", AT_K_SHAPES.values(), ids=AT_K_SHAPES)
def test_the_generated_average_precision_at_k_counts_as_tf1s(labels_shape, predictions_shape, k):
    """The generated class and TF1's tf.metrics.average_precision_at_k, fed the same three batches: the same value
    after each."""
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    from templates import render

    namespace = {"tf": tf, "keras": keras}
    exec(render("tf1_average_precision_at_k.py.j2"), namespace)
    metric = namespace["TF1AveragePrecisionAtK"](k=k, name="map")
    rng = np.random.RandomState(3)
    weighted = len(labels_shape) == 2 and labels_shape[1] == 2
    batches = []
    for _ in range(3):
        labels = rng.randint(5, size=labels_shape).astype(np.int64)
        if len(labels_shape) == 2:
            labels[0, -1] = 5  # outside the 5 classes: counts for none
        if len(predictions_shape) == 1:
            predictions = rng.randint(5, size=predictions_shape).astype(np.int64)
        else:
            predictions = rng.uniform(size=predictions_shape).astype(np.float32)
        weights = rng.uniform(size=labels_shape[:1]).astype(np.float32) if weighted else None
        batches.append((labels, predictions, weights))
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        labels = tf.compat.v1.placeholder(tf.int64, labels_shape)
        predictions = tf.compat.v1.placeholder(batches[0][1].dtype, predictions_shape)
        weights = tf.compat.v1.placeholder(tf.float32, labels_shape[:1]) if weighted else None
        value, update = tf.compat.v1.metrics.average_precision_at_k(labels, predictions, k, weights=weights)
        session.run(tf.compat.v1.local_variables_initializer())
        tf1 = [tf1_value(session, value, update, {labels: batch[0], predictions: batch[1],
                                                  **({weights: batch[2]} if weighted else {})})
               for batch in batches]
    assert len(set(np.round(tf1, 6))) > 1
    assert_counts_as(metric, batches, tf1, rel=1e-12)


# Metrics a helper of the module computes (a course's `loss, rmse = compute_errors(...)`, `same_as_last(...)`).
HELPERS = '''def scores(labels, logits):
  predicted = tf.argmax(logits, 1)
  if logits.shape[1] == 3:
    accuracy = tf.metrics.accuracy(labels=labels, predictions=predicted)
    return predicted, accuracy
  else:
    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits[:, :3], 1))
    return predicted, accuracy


def logit_mean(logits):
  return tf.metrics.mean(logits)


def model_fn('''
IN_HELPERS = (("def model_fn(", HELPERS),
              ("    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, 1))\n",
               "    _, accuracy = scores(labels, logits)\n"),
              ('"mean_logit": tf.metrics.mean(logits)', '"mean_logit": logit_mean(logits)'))


def with_helpers(source: str) -> str:
    for before, after in IN_HELPERS:
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    return source


def test_metrics_a_helper_computes_become_the_tensors_it_gives_the_keras_metrics():
    result = run(with_helpers(PROGRAM.read_text()))
    assert "ModelFnModel" in result.source, [f.message for f in result.findings]
    assert "  return (logits,)\n" in result.source
    assert "    accuracy = (labels, predicted)\n    return predicted, accuracy\n" in result.source
    assert "    accuracy = (labels, tf.compat.v1.argmax(logits[:, :3], 1))\n" in result.source
    assert '"accuracy": keras.metrics.Accuracy(name="accuracy")' in result.source
    assert '"mean_logit": keras.metrics.Mean(name="mean_logit")' in result.source


HELPERS_LEFT = {
    "called elsewhere too": (("\ndef main():", "\nprint(logit_mean)\n\n\ndef main():"), "also called elsewhere"),
    "two metrics for one key": (
        ("    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits[:, :3], 1))",
         "    accuracy = tf.metrics.mean(logits)"), "is one of two metrics"),
    "the metric read besides": (("    _, accuracy = scores(labels, logits)\n",
                                 "    _, accuracy = scores(labels, logits)\n    print(accuracy)\n"),
                                "read besides eval_metric_ops"),
}


@pytest.mark.parametrize("case", sorted(HELPERS_LEFT))
def test_metrics_of_helpers_the_migration_cannot_follow_leave_the_program(case):
    (before, after), why = HELPERS_LEFT[case]
    source = with_helpers(PROGRAM.read_text())
    assert source.count(before) == 1
    source = source.replace(before, after)
    result = run(source)
    assert result.source == source
    assert any(why in f.message for f in result.findings), [f.message for f in result.findings]


@pytest.mark.tensorflow
def test_metrics_of_helpers_evaluate_tf1s_checkpoint_as_tf1_did(tmp_path):
    """The TF1 program trains and evaluates; the migrated one, on the same model_dir, restores that checkpoint,
    trains no more and evaluates: the same loss, accuracy and mean logit."""
    printed = tf1_and_migrated_evaluations(tmp_path, with_helpers(PROGRAM.read_text()), EVALUATED)
    assert printed[1] == pytest.approx(printed[0], rel=1e-5)
    assert 0 < printed[0][1] < 1


COSINE = ('"mean_logit": tf.metrics.mean(logits)',
          '"cosine": tf.metrics.mean_cosine_distance(labels=tf.nn.l2_normalize(tf.one_hot(labels, 3), axis=1), '
          'predictions=tf.nn.l2_normalize(logits, axis=1), dim=1)')


def test_mean_cosine_distance_becomes_the_generated_metric_class_keras_lacks():
    result = run(PROGRAM.read_text().replace(*COSINE).replace('metrics["mean_logit"]', 'metrics["cosine"]'))
    assert "class TF1MeanCosineDistance(keras.metrics.Mean):" in result.source
    assert '"cosine": TF1MeanCosineDistance(dim=1, name="cosine")' in result.source
    assert '"cosine": (tf.nn.l2_normalize(tf.one_hot(labels, 3), axis=1), tf.nn.l2_normalize(logits, axis=1))' \
        in result.source


@pytest.mark.tensorflow
@pytest.mark.parametrize("dim, weighted", [(1, False), (1, True), (0, False)])
def test_the_generated_mean_cosine_distance_counts_as_tf1s(dim, weighted):
    """The generated class and TF1's tf.metrics.mean_cosine_distance, fed the same three batches of unit vectors
    (along ``dim``): the same value after each, and 1 once reset (TF1's with no batch)."""
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    from templates import render

    namespace = {"tf": tf, "keras": keras}
    exec(render("tf1_mean_cosine_distance.py.j2"), namespace)
    metric = namespace["TF1MeanCosineDistance"](dim=dim, name="cosine")
    rng = np.random.RandomState(5)
    shape, weights_shape = (6, 4), ((6, 1) if dim == 1 else (1, 4))

    def unit(values):
        return values / np.linalg.norm(values, axis=dim, keepdims=True)

    batches = [(unit(rng.normal(size=shape)), unit(rng.normal(size=shape)),
                rng.uniform(size=weights_shape) if weighted else None) for _ in range(3)]
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        labels = tf.compat.v1.placeholder(tf.float64, shape)
        predictions = tf.compat.v1.placeholder(tf.float64, shape)
        weights = tf.compat.v1.placeholder(tf.float64, weights_shape) if weighted else None
        value, update = tf.compat.v1.metrics.mean_cosine_distance(labels, predictions, dim, weights=weights)
        session.run(tf.compat.v1.local_variables_initializer())
        tf1 = [tf1_value(session, value, update, {labels: batch[0], predictions: batch[1],
                                                  **({weights: batch[2]} if weighted else {})})
               for batch in batches]
    values = []
    for batch in batches:
        metric.update_state(*batch)
        values.append(float(metric.result()))
    assert len(set(np.round(tf1, 6))) == 3
    assert values == pytest.approx(tf1, rel=1e-6)
    metric.reset_state()
    assert float(metric.result()) == 1.0
