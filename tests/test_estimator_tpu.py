"""TPUEstimator programs (rewrites/estimator/tpu.py): migrated like an Estimator when no TPU is used.

TPU programs trained on CPUs or GPUs (``use_tpu=False``) are TPUEstimator programs all the same:
``tpu.RunConfig`` with a ``TPUConfig``, batch sizes handed to the input functions as
``params["batch_size"]``, a ``TPUEstimatorSpec`` whose eval metrics are a ``(metric_fn,
tensors)`` pair, an optimizer wrapped in ``CrossShardOptimizer`` when a TPU is used.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

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
    assert "optimizer = TF1Adam(learning_rate=0.01, epsilon=1e-08)" in code
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


def test_tpu_embeddings_leave_the_program_and_say_why():
    program = PROGRAM.replace("eval_batch_size=4)", "eval_batch_size=4, embedding_config_spec=spec)")
    result = run_one(program)
    assert result.source == program
    assert rules(result) == ["TFM302"]
    assert "embedding_config_spec=spec" in finding_on(result, "TFM302", program)


# -- a TPU in use: the strategy picked at run time ------------------------------------------------------

NAMED = PROGRAM.replace(
    'flags.DEFINE_bool("use_tpu", False, "Train on a TPU.")\n',
    'flags.DEFINE_bool("use_tpu", False, "Train on a TPU.")\n'
    'flags.DEFINE_string("tpu", None, "The TPU to train on: its name or grpc:// address.")\n'
    'flags.DEFINE_string("tpu_zone", None, "The TPU\'s zone.")\n'
    'flags.DEFINE_integer("iterations_per_loop", 10, "Steps a TPU runs per call of the host.")\n'
    'flags.DEFINE_string("model_dir", "/tmp/model", "Checkpoints.")\n',
).replace(
    "  config = tf.estimator.tpu.RunConfig(\n"
    '      model_dir="/tmp/model", tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=10))\n',
    "  resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu, zone=FLAGS.tpu_zone)\n"
    "  config = tf.estimator.tpu.RunConfig(\n"
    "      cluster=resolver, model_dir=FLAGS.model_dir,\n"
    "      tpu_config=tf.estimator.tpu.TPUConfig(\n"
    "          iterations_per_loop=10, num_shards=8, per_host_input_for_training=True))\n",
)
TPU_PATH = (
    "  if tpu:\n"
    "    # Generated by tf-migrate, not verified by it (it was tested without a TPU).\n"
    "    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu{location})\n"
    "    tf.config.experimental_connect_to_cluster(resolver)\n"
    "    tf.tpu.experimental.initialize_tpu_system(resolver)\n"
    "    return None, tf.distribute.TPUStrategy(resolver)\n"
    "\n"
    "  # ps and worker tasks serve the chief and never return;")


def test_use_tpu_true_trains_with_tpu_strategy_on_the_tpu_named_else_as_every_migrated_program():
    assert NAMED != PROGRAM
    program = NAMED.replace("use_tpu=FLAGS.use_tpu", "use_tpu=True")
    result = run_one(program)
    code = result.source
    assert rules(result) == ["TFM301", "TFM305"]
    # The TPU the TF1 program's TPUClusterResolver named, and its zone, reach the strategy.
    assert "def strategy_for_this_task(tpu, zone=None):\n" in code
    assert TPU_PATH.format(location=", zone=zone") in code
    assert "  task_type, strategy = strategy_for_this_task(FLAGS.tpu, zone=FLAGS.tpu_zone)\n" in code
    # Without one: TF_CONFIG's ParameterServerStrategy, or local, as every migrated program.
    assert "tf.distribute.experimental.ParameterServerStrategy(" in code
    # iterations_per_loop: Keras runs as many steps per call; the batch sizes stay global.
    assert "      steps_per_execution=10)\n" in code
    assert 'dataset = input_fn(params={"batch_size": FLAGS.batch_size})' in code
    for gone in ("TPUEstimator", "RunConfig(", "TPUConfig", "CrossShard", "num_shards", "use_tpu=", "resolver = tf."
                 "distribute.cluster_resolver.TPUClusterResolver(FLAGS"):
        assert gone not in code, gone
    message = next(f.message for f in result.findings if f.rule == "TFM305")
    assert "use_tpu=True" in finding_on(result, "TFM305", program)
    assert "TPUStrategy on the TPU `FLAGS.tpu` names (generated, not verified here" in message
    assert "else the CPU/GPU path, the one verified" in message
    assert "iterations_per_loop -> compile(steps_per_execution=10)" in message
    compile(code, "train.py", "exec")


def test_use_tpu_by_default_and_the_tpu_named_by_master():
    program = NAMED.replace(" use_tpu=FLAGS.use_tpu,", "").replace("cluster=resolver", "master=FLAGS.tpu")
    result = run_one(program)
    code = result.source
    assert rules(result) == ["TFM301", "TFM305"]
    assert "estimator = tf.estimator.tpu.TPUEstimator(" in finding_on(result, "TFM305", program)
    assert "def strategy_for_this_task(tpu):\n" in code and TPU_PATH.format(location="") in code
    assert "  task_type, strategy = strategy_for_this_task(FLAGS.tpu)\n" in code
    assert "steps_per_execution=10)" in code
    compile(code, "train.py", "exec")


def test_a_resolver_made_only_when_asked_for_names_the_tpu_and_stays():
    """`resolver = None; if FLAGS.use_tpu and FLAGS.tpu: resolver = TPUClusterResolver(...)`, as BERT has it."""
    made = ("  resolver = None\n  if FLAGS.use_tpu and FLAGS.tpu:\n"
            "    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu, zone=FLAGS.tpu_zone)\n")
    program = NAMED.replace("use_tpu=FLAGS.use_tpu", "use_tpu=True").replace(
        "  resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu, zone=FLAGS.tpu_zone)\n", made)
    result = run_one(program)
    assert rules(result) == ["TFM301", "TFM305"]
    assert made + "\n  task_type, strategy = strategy_for_this_task(FLAGS.tpu, zone=FLAGS.tpu_zone)\n" in result.source
    compile(result.source, "train.py", "exec")


TPU_FLAG = NAMED.replace('flags.DEFINE_bool("use_tpu", False', 'flags.DEFINE_bool("use_tpu", True').replace(
    "iterations_per_loop=10,", "iterations_per_loop=FLAGS.iterations_per_loop,").replace(
    "cluster=resolver, ", "").replace(
    "  resolver = tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu, zone=FLAGS.tpu_zone)\n", "")


def test_use_tpu_from_a_flag_defaulting_to_true_still_decides_at_run_time():
    assert TPU_FLAG.count("FLAGS.iterations_per_loop") == 1 and "TPUClusterResolver" not in TPU_FLAG
    result = run_one(TPU_FLAG)
    code = result.source
    assert rules(result) == ["TFM301", "TFM305"]
    assert "use_tpu=FLAGS.use_tpu" in finding_on(result, "TFM305", TPU_FLAG)
    # The tpu flag beside use_tpu names the TPU, which the program trains on when use_tpu is true.
    assert "  task_type, strategy = strategy_for_this_task(FLAGS.tpu if FLAGS.use_tpu else None)\n" in code
    assert TPU_PATH.format(location="") in code
    # The flag's value reaches compile through the build function.
    assert "def build_model(input_spec, params, steps_per_execution):\n" in code
    assert "      steps_per_execution=steps_per_execution)\n" in code
    assert ('params={"batch_size": FLAGS.batch_size},\n'
            "        steps_per_execution=FLAGS.iterations_per_loop)\n") in code
    message = next(f.message for f in result.findings if f.rule == "TFM305")
    assert "`FLAGS.tpu` names when `FLAGS.use_tpu` is true (generated, not verified here" in message
    compile(code, "train.py", "exec")


@pytest.mark.parametrize("before, after", [
    ("use_tpu=FLAGS.use_tpu", "use_tpu=True"),
    (" use_tpu=FLAGS.use_tpu,", ""),
    ('flags.DEFINE_bool("use_tpu", False', 'flags.DEFINE_bool("use_tpu", True'),
], ids=["use_tpu=True", "use_tpu left to its default", "flag defaulting to a TPU"])
def test_a_tpu_in_use_but_named_nowhere_trains_on_cpu_and_gpu_workers_and_says_so(before, after):
    program = PROGRAM.replace(before, after)
    assert program != PROGRAM
    result = run_one(program)
    assert rules(result) == ["TFM301", "TFM305"]
    message = next(f.message for f in result.findings if f.rule == "TFM305")
    assert "the program names no TPU" in message and "name the TPU and run tf-migrate again" in message
    assert "TPUStrategy" not in result.source and "strategy_for_this_task()" in result.source


@pytest.mark.parametrize("before, after, named", [
    ('  optimizer = tf.train.AdamOptimizer(learning_rate=0.01)\n',
     '  if params["use_tpu"]:\n    logits = tf.tpu.outside_compilation(tf.identity, logits)\n'
     '  optimizer = tf.train.AdamOptimizer(learning_rate=0.01)\n', "tpu.outside_compilation"),
    ("  logits = tf.layers.dense(features, 2)\n",
     '  if params["use_tpu"]:\n    with tf.tpu.bfloat16_scope():\n      logits = tf.layers.dense(features, 2)\n'
     "  else:\n    logits = tf.layers.dense(features, 2)\n", "tpu.bfloat16_scope"),
    ("num_shards=8,", "num_cores_per_replica=2,", "num_cores_per_replica"),
], ids=["outside_compilation", "bfloat16_scope", "model parallelism"])
def test_what_only_a_tpu_runs_leaves_the_program_naming_it(before, after, named):
    program = NAMED.replace(before, after).replace("use_tpu=FLAGS.use_tpu", "use_tpu=True")
    assert NAMED.replace(before, after) != NAMED
    result = run_one(program)
    assert result.source == program
    assert rules(result) == ["TFM302"]
    assert named in next(f.message for f in result.findings)


@pytest.mark.tensorflow
@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs the parity extra")
def test_the_cpu_path_of_a_tpu_program_trains_with_steps_per_execution(tmp_path):
    """No TPU named on the command line: the local strategy trains the 20 steps, 10 per execution."""
    script = tmp_path / "train.py"
    script.write_text(run_one(TPU_FLAG).source.replace(
        "  eval_result[\"global_step\"] = int(model.optimizer.iterations)\n",
        "  eval_result[\"global_step\"] = int(model.optimizer.iterations)\n"
        "  print(\"steps per execution:\", int(model._steps_per_execution))\n"))
    environment = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    done = subprocess.run([sys.executable, str(script), f"--model_dir={tmp_path / 'model'}"], capture_output=True,
                          text=True, timeout=300, env=environment, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'global_step': 20" in done.stdout and "steps per execution: 10" in done.stdout
    assert (tmp_path / "model" / "tf2" / "checkpoint").exists()


def test_tfm305_switched_off_keeps_a_program_whose_flag_could_ask_for_a_tpu():
    result = run_one(PROGRAM, enabled=ALL_RULES - {"TFM305"})
    assert result.source == PROGRAM
    [finding] = result.findings
    assert finding.rule == "TFM302" and "it needs TFM305" in finding.message


def test_a_tpu_model_fn_tier_1_cannot_translate_is_left_with_both_tiers_reasons():
    before = "  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)\n"
    program = PROGRAM.replace(before, "  loss = tf.nn.l2_loss(logits - tf.one_hot(labels, 2))\n")
    assert program != PROGRAM
    result = run_one(program)
    assert result.source == program
    messages = [f.message for f in result.findings if f.rule == "TFM302"]
    assert any("`nn.l2_loss` in the model_fn: no Keras translation yet" in m for m in messages), messages
    assert any("a TPUEstimator's model_fn is not kept as written (tier 2) yet" in m for m in messages), messages
