"""TPUEstimator programs (rewrites/estimator/tpu.py): migrated like an Estimator when no TPU is used.

TPU programs trained on CPUs or GPUs (``use_tpu=False``) are TPUEstimator programs all the same:
``tpu.RunConfig`` with a ``TPUConfig``, batch sizes handed to the input functions as
``params["batch_size"]``, a ``TPUEstimatorSpec`` whose eval metrics are a ``(metric_fn,
tensors)`` pair, an optimizer wrapped in ``CrossShardOptimizer`` when a TPU is used.
"""

from __future__ import annotations

import pytest

from helpers import ALL_RULES
from test_estimator_programs import rules, run_one

PROGRAM = '''\
import tensorflow.compat.v1 as tf

flags = tf.app.flags
flags.DEFINE_bool("use_tpu", False, "Train on a TPU.")
flags.DEFINE_integer("batch_size", 8, "Examples per batch.")
FLAGS = flags.FLAGS
ROWS, LABELS = [[1.0, 2.0]] * 16, [0, 1] * 8


def input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices((ROWS, LABELS))
  return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def metric_fn(labels, logits):
  return {"accuracy": tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))}


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features, 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
  optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
  if params["use_tpu"]:
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def main(argv):
  config = tf.estimator.tpu.RunConfig(
      model_dir="/tmp/model", tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=10))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=FLAGS.use_tpu,
      train_batch_size=FLAGS.batch_size, eval_batch_size=4)
  estimator.train(input_fn=input_fn, max_steps=20)
  print(estimator.evaluate(input_fn=input_fn, steps=2))


if __name__ == "__main__":
  tf.app.run(main)
'''


def finding_on(result, rule: str, program: str) -> str:
    """The line of ``program`` the one ``rule`` finding points at."""
    [finding] = [f for f in result.findings if f.rule == rule]
    return program.splitlines()[finding.line - 1]


def test_tpu_estimator_trained_without_a_tpu_becomes_keras_with_its_batch_sizes():
    result = run_one(PROGRAM)
    code = result.source
    assert rules(result) == ["TFM301", "TFM305"]
    # The flag's default is what the migration assumes, and it says so where the flag is read.
    assert "use_tpu=FLAGS.use_tpu" in finding_on(result, "TFM305", PROGRAM)
    # Each input function gets its own batch size through params, as TPUEstimator gave it.
    assert 'dataset = input_fn(params={"batch_size": FLAGS.batch_size})' in code
    assert 'input_fn(params={"batch_size": 4}).repeat(), steps=2, return_dict=True' in code
    assert code.endswith('eval_result["global_step"] = int(model.optimizer.iterations)\n  print(eval_result)\n\n\n'
                         'if __name__ == "__main__":\n  tf.compat.v1.app.run(main)\n')  # the result printed, as TF1's
    # The (metric_fn, tensors) pair: a compile metric; CrossShardOptimizer only ever wrapped a TPU's optimizer.
    assert 'metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")]' in code
    assert "optimizer = keras.optimizers.legacy.Adam(learning_rate=0.01, epsilon=1e-08)" in code
    for gone in ("tpu", "TPU", "metric_fn", "CrossShard", "use_tpu"):
        assert gone not in code.replace('flags.DEFINE_bool("use_tpu", False, "Train on a TPU.")', ""), gone
    compile(code, "train.py", "exec")


def test_use_tpu_false_as_a_literal_needs_no_note():
    program = PROGRAM.replace("use_tpu=FLAGS.use_tpu", "use_tpu=False")
    assert rules(run_one(program)) == ["TFM301"]


def test_cross_shard_optimizer_used_unconditionally_is_the_optimizer_it_wraps():
    program = PROGRAM.replace('  if params["use_tpu"]:\n    optimizer = tf.tpu', "  optimizer = tf.tpu")
    assert program != PROGRAM
    assert run_one(program).source == run_one(PROGRAM).source


@pytest.mark.parametrize("before, after, where", [
    (" use_tpu=FLAGS.use_tpu,", "", "estimator = tf.estimator.tpu.TPUEstimator("),
    ("use_tpu=FLAGS.use_tpu", "use_tpu=True", "use_tpu=True"),
    ('flags.DEFINE_bool("use_tpu", False', 'flags.DEFINE_bool("use_tpu", True', "use_tpu=FLAGS.use_tpu"),
    ("eval_batch_size=4)", "eval_batch_size=4, embedding_config_spec=spec)", "embedding_config_spec=spec"),
], ids=["use_tpu left to its default", "use_tpu=True", "flag defaulting to a TPU", "TPU embeddings"])
def test_a_tpu_in_use_leaves_the_program_and_says_why(before, after, where):
    program = PROGRAM.replace(before, after)
    assert program != PROGRAM
    result = run_one(program)
    assert result.source == program
    assert rules(result) == ["TFM302"]
    assert where in finding_on(result, "TFM302", program)


def test_tfm305_switched_off_keeps_a_program_whose_flag_could_ask_for_a_tpu():
    result = run_one(PROGRAM, enabled=ALL_RULES - {"TFM305"})
    assert result.source == PROGRAM
    [finding] = result.findings
    assert finding.rule == "TFM302" and "it needs TFM305" in finding.message
