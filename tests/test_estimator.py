"""TFM301-302, TFM401: Estimator programs -> Keras + ParameterServerStrategy, or left whole with a reason."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest
from helpers import ALL_RULES, check_noop, run

SEED = '''\
import tempfile

import tensorflow.compat.v1 as tf1

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)


def _model_fn(features, labels, mode):
  logits = tf1.layers.Dense(1)(features)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
  optimizer = tf1.train.AdagradOptimizer(0.05)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


model_dir = tempfile.mkdtemp()
config = tf1.estimator.RunConfig(model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1)
estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)
train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn, max_steps=20)
eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn, steps=3)
eval_result, _ = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
print("eval loss: %s" % eval_result["loss"])
'''

# The metric reporting the SEED's loss as TF1 did: its eval input ends (rewrites/estimator/eval_loss.py).
EVAL_LOSS = 'TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none"))'


def flat(code: str) -> str:
    """Code with each run of whitespace one space, and none after an opening bracket."""
    return re.sub(r"([(\[]) ", r"\1", " ".join(code.split()))


# Rewrites that apply whether or not the Estimator program migrates: TF1 code runs with their output too.
STANDALONE_RULES = frozenset(rule for rule in ALL_RULES if rule.startswith("TFM2") or rule in ("TFM306", "TFM307"))
# Tier 1 alone: what keeps a model_fn from idiomatic Keras, which tier 2 (TFM310, tests/test_faithful.py) would
# otherwise keep as written.
TIER_1 = ALL_RULES - {"TFM310"}


def assert_left_whole_pointing_at(program: str, before: str, after: str, where: str) -> None:
    """``program`` with one edit is left byte-for-byte (but for the standalone rewrites: partitioners,
    numpy_input_fn), with one manual finding on the line holding ``where``."""
    source = program.replace(before, after)
    assert source != program
    result = run(source, enabled=TIER_1)
    assert result.source == run(source, enabled=STANDALONE_RULES).source
    (finding,) = [f for f in result.findings if f.rule not in STANDALONE_RULES | {"TFM107"}]  # TF1 cluster code
    assert finding.rule == "TFM302" and finding.safety == "manual"
    line = source.splitlines()[finding.line - 1]
    assert where in line, (finding, line)


@pytest.fixture(autouse=True)
def unwrapped_lines(monkeypatch):
    """Generated lines as one line each, however long, so tests can look for whole calls.
    (How long lines are wrapped: tests/test_templates.py and the generated examples.)"""
    import templates

    monkeypatch.setattr(templates, "WIDTH", 10_000)


def migrated(source: str, keras="tf_keras"):
    result = run(source, keras=keras)
    again = run(result.source, keras=keras)
    assert again.source == result.source, "a second run changes nothing"
    return result


def test_seed_program_becomes_keras_under_parameter_server_strategy():
    result = migrated(SEED)
    code = result.source
    assert "import tf_keras as keras" in code and "import tensorflow as tf" in code and "import os\n" in code
    assert "tf.distribute.experimental.ParameterServerStrategy(" in code
    assert "keras.utils.set_random_seed(42)" in code
    assert "dataset = _input_fn()\n" in code and "\neval_dataset = _eval_input_fn().repeat()\n" in code
    # The model_fn is, where it stood, the function building its compiled Keras model.
    assert "def _build_model(input_spec):" in code and code.index("def _eval_input_fn") < code.index("def _build")
    assert "keras.layers.Dense(units=1, name=\"dense\")" in code and "model.build(input_spec.shape)" in code
    assert "keras.optimizers.legacy.Adagrad(learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)" in code
    # The eval input ends: evaluate reports the mean of the batches' losses, as TF1 did.
    assert f"model.compile(optimizer, loss=keras.losses.MeanSquaredError(), metrics=[{EVAL_LOSS}])" in flat(code)
    assert code.index("class TF1EvalLoss(keras.metrics.Mean):") < code.index("def _build_model")
    assert "with strategy.scope():\n  model = _build_model(dataset.element_spec[0])\n" in code
    assert "steps_per_epoch=20" in code and "eval_result = model.evaluate(eval_dataset, steps=3" in code
    for gone in ("def _model_fn", "Estimator(", "RunConfig(", "TrainSpec", "EvalSpec", "train_and_evaluate"):
        assert gone not in code
    assert 'print("eval loss: %s" % eval_result["loss"])' in code  # the rest of the program stays
    assert "tensorflow.compat.v1 as tf1" in code  # the input functions still use it
    assert sorted(finding.rule for finding in result.findings) == ["TFM301", "TFM303"]  # the eval input does not repeat
    compile(code, "migrated.py", "exec")


def test_keras_option_chooses_how_generated_code_imports_keras():
    code = migrated(SEED, keras="tf.keras").source
    assert "from tensorflow import keras\n" in code and "tf_keras" not in code
    assert "keras.optimizers.legacy.Adagrad(" in code
    compile(code, "migrated.py", "exec")


KERAS_3_FALLBACK = ("\n\n# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.\n"
                    "if not keras.__version__.startswith(\"2.\"):\n  import tf_keras as keras\n\n")


def test_keras_auto_imports_the_keras_package_where_it_is_keras_2_and_else_tf_keras():
    """On TF 2.15 autograph converts all of tf_keras at the first fit (seconds at every start), not TensorFlow's
    own Keras 2; on TF 2.16+ the keras package is Keras 3, which ParameterServerStrategy cannot train."""
    code = migrated(SEED, keras="auto").source
    assert code.startswith("import os\nimport tempfile\nimport time\n\nimport keras\nimport tensorflow.compat.v1 as tf1\n"
                           "import tensorflow as tf" + KERAS_3_FALLBACK + "features = ")
    assert code.count("import tf_keras as keras") == 1 and "keras.optimizers.legacy.Adagrad(" in code
    compile(code, "migrated.py", "exec")


@pytest.mark.parametrize("imported", ["import keras\n", "import tf_keras as keras\n"])
def test_keras_auto_keeps_a_keras_2_import_of_the_module(imported):
    """`import keras` gets its fallback once; tf_keras is Keras 2 on every TensorFlow: kept as it is."""
    source = SEED.replace("import tempfile\n", "import tempfile\n\n" + imported)
    code = migrated(source, keras="auto").source
    assert code.count(imported) == 1 and code.count("import tf_keras as keras") == 1
    assert (KERAS_3_FALLBACK in code) == (imported == "import keras\n")


@pytest.mark.parametrize("keras, taken", [("tf_keras", "from tensorflow import keras\n"),
                                          ("tf.keras", "import tf_keras as keras\n"),
                                          ("auto", "from tensorflow import keras\n"),
                                          ("auto", "keras = None\n")])
def test_keras_bound_to_the_other_spelling_is_left_whole(keras, taken):
    source = SEED.replace("import tempfile\n", "import tempfile\n" + taken)
    result = run(source, keras=keras)
    assert result.source == source
    (finding,) = result.findings
    assert finding.rule == "TFM302" and "needs `keras`" in finding.message


def test_repeating_eval_input_has_no_eval_steps_finding():
    source = SEED.replace("((features, labels)).batch(1)", "((features, labels)).repeat().batch(1)")
    assert [finding.rule for finding in migrated(source).findings] == ["TFM301"]


def test_two_space_program_stays_two_space():
    assert "\n  model = keras.Sequential([" in migrated(SEED).source


@pytest.mark.parametrize(
    "imports, prefix",
    [
        ("import tensorflow as tf\n", "tf.compat.v1."),
        ("import tensorflow.compat.v1 as tf1\n", "tf1."),
        ("from tensorflow.compat import v1\n", "v1."),
    ],
    ids=["tf.compat.v1", "tf1 alias", "from compat import v1"],
)
def test_every_import_spelling(imports, prefix):
    source = SEED.replace("import tensorflow.compat.v1 as tf1\n", imports).replace("tf1.", prefix)
    result = migrated(source)
    assert "ParameterServerStrategy" in result.source and sorted(f.rule for f in result.findings) == ["TFM301", "TFM303"]


def test_from_estimator_import_spelling():
    source = SEED.replace("import tensorflow.compat.v1 as tf1\n",
                          "import tensorflow.compat.v1 as tf1\nfrom tensorflow.compat.v1 import estimator as est\n")
    source = source.replace("tf1.estimator.", "est.")
    assert "ParameterServerStrategy" in migrated(source).source


@pytest.mark.parametrize("binding", [
    "tf_estimator = tf1.estimator\n",
    "import tensorflow_estimator\ntf_estimator = tensorflow_estimator.estimator\n",
    "from tensorflow_estimator.python.estimator import estimator_lib as tf_estimator\n",
], ids=["alias of tf.estimator", "alias of the package's", "estimator_lib"])
def test_the_estimator_namespace_bound_to_a_name_of_its_own(binding):
    source = SEED.replace("import tensorflow.compat.v1 as tf1\n", "import tensorflow.compat.v1 as tf1\n" + binding)
    result = migrated(source.replace("tf1.estimator.", "tf_estimator."))
    assert "ParameterServerStrategy" in result.source and "tf_estimator" not in result.source


def test_numeric_piece_gets_its_own_finding():
    source = SEED.replace("tf1.train.AdagradOptimizer(0.05)", "tf1.train.MomentumOptimizer(learning_rate, 0.9)")
    source = source.replace("model_dir = tempfile.mkdtemp()", "model_dir = tempfile.mkdtemp()\nlearning_rate = 0.1")
    result = migrated(source)
    assert sorted(f.rule for f in result.findings) == ["TFM301", "TFM303", "TFM401"]


@pytest.mark.parametrize(
    "before, after, where",
    [
        ("  logits = tf1.layers.Dense(1)(features)\n",
         "  logits = tf1.cond(mode == 'train', lambda: features, lambda: features)\n", "logits = tf1.cond"),
        ("train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn, max_steps=20)",
         "train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn, max_steps=20, hooks=[hook])", "hook"),
        ("  logits = tf1.layers.Dense(1)(features)\n",
         "  logits = tf1.layers.Dense(config.num_worker_replicas)(features)\n", "config.num_worker_replicas"),
        ("print(\"eval loss", "print(estimator.config)\nprint(\"eval loss", "estimator.config"),
        ("config = tf1.estimator.RunConfig(model_dir=model_dir,",
         "config = tf1.estimator.RunConfig(train_distribute=strategy, model_dir=model_dir,", "train_distribute"),
        ("tf1.losses.mean_squared_error(labels=labels, predictions=logits)",
         "tf1.losses.mean_squared_error(labels=labels, predictions=logits, weights=w)", "tf1.losses"),
        ("EvalSpec(input_fn=_eval_input_fn, steps=3)", "EvalSpec(input_fn=_input_fn, steps=None)", "steps=None"),
        ("  return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)",
         "  return features, labels", "return features, labels"),
        ('eval_result["loss"]', 'eval_result["average_loss"]', "average_loss"),
        ("  logits = tf1.layers.Dense(1)(features)\n", "  logits = tf1.squeeze(tf1.layers.Dense(1)(features), axis=1)\n",
         "tf1.layers.Dense(1)(features)"),
    ],
    ids=["tf.cond in model_fn", "TrainSpec hooks", "model_fn reads config",
         "estimator used afterwards", "RunConfig train_distribute", "weighted loss", "eval until a repeating input ends",
         "input_fn returning tensors", "a result key not reported", "a layer inside a pure function"],
)
def test_unsupported_program_is_left_whole_with_a_manual_finding(before, after, where):
    assert_left_whole_pointing_at(SEED, before, after, where)


def test_eval_until_the_input_ends_counts_one_pass_of_it():
    result = migrated(SEED.replace("steps=3)", "steps=None)"))
    assert "eval_steps = int(eval_dataset.cardinality())" in result.source
    assert "model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)" in result.source
    assert "eval_dataset.repeat()" in result.source


@pytest.mark.parametrize("read", ['eval_result["global_step"]', "eval_result", 'eval_result.get("global_step")'])
def test_the_results_hold_the_step_where_the_program_may_read_it(read):
    result = migrated(SEED.replace('eval_result["loss"]', read))
    assert 'eval_result["global_step"] = int(model.optimizer.iterations)' in result.source


def test_the_results_get_no_step_the_program_does_not_read():
    assert "global_step" not in migrated(SEED).source.split("def strategy_for_this_task")[0]
    assert '["global_step"]' not in migrated(SEED).source


def test_an_evaluation_read_where_it_is_called_is_read_from_its_result():
    source = SEED.replace("eval_result, _ = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n"
                          'print("eval loss: %s" % eval_result["loss"])',
                          "estimator.train(_input_fn, max_steps=20)\n"
                          'print(estimator.evaluate(_eval_input_fn, steps=3)["global_step"])')
    result = migrated(source)
    body = result.source.split("restore_tf1_checkpoint(tf1_checkpoint, model)")[-1]
    assert dedent("""\
        eval_result = model.evaluate(_eval_input_fn().repeat(), steps=3, return_dict=True, verbose=2)
        # TF1's results held the step they were evaluated at.
        eval_result["global_step"] = int(model.optimizer.iterations)
        print(eval_result["global_step"])
        """) in body


@pytest.mark.parametrize("before, after", [
    ("def _model_fn(features, labels, mode):\n", "def _model_fn(features, labels, mode, config):\n  del config\n"),
    ("def _model_fn(features, labels, mode):\n", "def _model_fn(features, labels, mode):\n  pass\n"),
    ("  loss = tf1.losses", '  if mode == "infer":\n    return tf1.estimator.EstimatorSpec(mode, predictions=logits)\n'
                            "  loss = tf1.losses"),
    ("  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)",
     "  spec = tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n  return spec"),
    ("  loss = tf1.losses", '  if mode == tf1.estimator.ModeKeys.PREDICT:\n    raise NotImplementedError("no predict")\n'
                            "  loss = tf1.losses"),
    ("  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)",
     "  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n  raise AssertionError('unreached')"),
], ids=["del config", "pass", "mode compared with a string", "the spec held in a name", "PREDICT raises",
        "a raise after the return"])
def test_model_fn_shapes_that_change_nothing_the_model_computes(before, after):
    source = SEED.replace(before, after)
    assert source != SEED
    result = migrated(source)
    assert "model.fit(" in result.source and "_model_fn" not in result.source.replace("`_model_fn`", "")


def test_steps_on_an_input_that_ends_train_them_or_one_pass_whichever_is_shorter():
    source = SEED.replace("  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)",
                          "  return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)")
    code = migrated(source).source
    assert ("model.fit(dataset.repeat(), epochs=1, steps_per_epoch=min(20 - steps_done, train_batches),"
            in code)
    assert ">= 20:" not in code  # the evaluator cannot wait for a step training may never reach


FACTORY_INPUT = SEED.replace(
    "def _input_fn():\n  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)",
    "def make_input_fn(batch_size, num_epochs=None):\n  def _input_fn():\n"
    "    return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat(num_epochs).batch(batch_size)\n"
    "  return _input_fn").replace("TrainSpec(input_fn=_input_fn,", "TrainSpec(input_fn=make_input_fn(1),")


def test_a_repeat_count_left_at_its_default_by_the_call_is_read():
    assert FACTORY_INPUT != SEED
    code = migrated(FACTORY_INPUT).source
    assert "model.fit(dataset, epochs=1, steps_per_epoch=20 - steps_done," in code  # repeat(None): without end


def test_a_repeat_count_bound_by_the_mode_is_read_for_each_mode():
    """The Cloud ML samples' input_fn: `num_epochs = None` when training, 1 otherwise, then `repeat(num_epochs)`."""
    source = FACTORY_INPUT.replace(
        "def make_input_fn(batch_size, num_epochs=None):\n  def _input_fn():\n",
        "def make_input_fn(batch_size, mode=tf1.estimator.ModeKeys.TRAIN):\n  def _input_fn():\n"
        "    if mode == tf1.estimator.ModeKeys.TRAIN:\n      num_epochs = None  # indefinitely\n"
        "    else:\n      num_epochs = 1\n")
    assert source != FACTORY_INPUT
    code = migrated(source).source
    assert "model.fit(dataset, epochs=1, steps_per_epoch=20 - steps_done," in code  # repeat(None): without end
    tested = migrated(source.replace("ModeKeys.TRAIN):", "ModeKeys.EVAL):")).source
    assert "steps_per_epoch=min(20 - steps_done, train_batches)" in tested  # one pass: it ends


RUN_TIME_EPOCHS = FACTORY_INPUT.replace("make_input_fn(1),", "make_input_fn(1, num_epochs=EPOCHS),").replace(
    "import tempfile\n", "import os\nimport tempfile\n").replace(
    "model_dir = tempfile.mkdtemp()", 'model_dir = tempfile.mkdtemp()\nEPOCHS = int(os.environ["EPOCHS"]) or None').replace(
    'print("eval loss: %s" % eval_result["loss"])', 'print("trained to step", eval_result["global_step"])')


def test_a_repeat_count_known_only_when_the_program_runs_is_chosen_then(tmp_path):
    """`repeat(n)` of a number given at run time: TF1 stopped at the end of n passes (3 examples each) if it came
    before max_steps (20); n None repeats without end (then the cardinality is INFINITE_CARDINALITY)."""
    epochs, step = "2", 6
    code = migrated(RUN_TIME_EPOCHS).source
    assert ("steps_per_epoch=(20 - steps_done if train_batches == tf.data.INFINITE_CARDINALITY else "
            "min(20 - steps_done, train_batches))") in code
    (tmp_path / "train.py").write_text(code)
    env = {**{k: v for k, v in os.environ.items() if k != "TF_CONFIG"}, "EPOCHS": epochs, "TF_CPP_MIN_LOG_LEVEL": "3"}
    ran = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert f"trained to step {step}\n" in ran.stdout


def test_a_run_time_repeat_count_without_steps_trains_to_the_end_of_the_input(tmp_path):
    """No max_steps: TF1 trained to the end of n passes (3 examples each), or without end when n is None; the
    migrated program trains the same passes, and refuses to train without end (TF1 ran until stopped)."""
    source = RUN_TIME_EPOCHS.replace("TrainSpec(input_fn=make_input_fn(1, num_epochs=EPOCHS), max_steps=20)",
                                     "TrainSpec(input_fn=make_input_fn(1, num_epochs=EPOCHS))")
    assert source != RUN_TIME_EPOCHS
    code = migrated(source).source
    assert "if train_batches == tf.data.INFINITE_CARDINALITY:\n    raise ValueError(" in code
    (tmp_path / "train.py").write_text(code)
    environment = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    for epochs, step in (("2", 6), ("0", None)):
        ran = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                             env={**environment, "EPOCHS": epochs, "TF_CPP_MIN_LOG_LEVEL": "3"})
        if step is None:
            assert ran.returncode != 0 and "the training input repeats without end: TF1 trained until" in ran.stderr
        else:
            assert ran.returncode == 0, ran.stderr[-3000:]
            assert f"trained to step {step}\n" in ran.stdout



def test_max_steps_of_a_flag_that_may_be_none_trains_one_pass_then(tmp_path):
    """`max_steps=args.steps`, a flag whose default is None: without it TF1 trained to the end of the input (2 passes
    of 3 examples), with it to the step given or the end, whichever came first."""
    source = RUN_TIME_EPOCHS.replace("max_steps=20)", "max_steps=ARGS.steps)").replace(
        "EPOCHS = int(", "parser = argparse.ArgumentParser()\nparser.add_argument('--steps', type=int)\n"
                         "ARGS = parser.parse_args()\nEPOCHS = int(").replace("import os\n", "import argparse\nimport os\n")
    assert "max_steps=ARGS.steps" in source and "import argparse" in source
    code = migrated(source).source
    assert "  if train_steps is None:  # the default: TF1 trained one pass of the input\n" in code
    (tmp_path / "train.py").write_text(code)
    environment = {**{k: v for k, v in os.environ.items() if k != "TF_CONFIG"}, "EPOCHS": "2",
                   "TF_CPP_MIN_LOG_LEVEL": "3"}
    for arguments, step in (([], 6), (["--steps", "4"], 4)):  # model_dir: a new temporary folder each run
        ran = subprocess.run([sys.executable, "train.py", *arguments], cwd=tmp_path, capture_output=True, text=True,
                             timeout=600, env=environment)
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert f"trained to step {step}\n" in ran.stdout

def test_a_train_branch_returned_first_then_the_evaluation_spec():
    source = CLASSIFIER.replace('''  if mode == tf1.estimator.ModeKeys.EVAL:
    return tf1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

  optimizer = tf1.train.AdamOptimizer(learning_rate=0.01)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)''', '''  if mode == tf1.estimator.ModeKeys.TRAIN:
    optimizer = tf1.train.AdamOptimizer(learning_rate=0.01)
    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
    return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
  return tf1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)''')
    assert source != CLASSIFIER
    code = migrated(source).source
    assert 'metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")]' in code
    assert "TF1Adam(" in code


def test_features_read_by_key_inside_a_call_make_the_inputs_a_dict():
    source = CLASSIFIER.replace('tf1.layers.dense(features["x"], 16', 'tf1.layers.dense(tf1.concat([features["x"]], 1), 16')
    assert source != CLASSIFIER
    code = migrated(source).source
    assert "for name, spec in input_spec.items()}" in code and "input_spec.shape" not in code


def test_a_loop_that_only_writes_summaries_goes_with_them():
    source = SEED.replace("  loss = tf1.losses", '  for name in ["a", "b"]:\n    tf1.summary.scalar(name, logits[0, 0])\n'
                                                 "  loss = tf1.losses")
    result = migrated(source)
    assert "in [\"a\", \"b\"]" not in result.source and "summary" not in result.source
    assert sorted(f.rule for f in result.findings) == ["TFM301", "TFM303", "TFM402"]


def test_a_module_whose_tf_is_compat_v2_is_read_and_gets_tf2s_tf():
    source = re.sub(r"\btf1\.", "tf.compat.v1.", SEED).replace("import tensorflow.compat.v1 as tf1",
                                                                "import tensorflow.compat.v2 as tf")
    result = migrated(source)
    assert "import tensorflow as tf\n" in result.source and "compat.v2" not in result.source
    assert "model.fit(" in result.source


def test_model_fn_that_no_estimator_uses_is_reported_where_it_stands():
    source = SEED.split("\n\nmodel_dir = ")[0] + "\n"
    result = run(source)
    assert result.source == source
    [finding] = result.findings
    assert finding.rule == "TFM302" and "no Estimator among the files given uses it" in finding.message
    assert source.splitlines()[finding.line - 1].startswith("def _model_fn(")


def test_a_program_left_gets_a_finding_for_every_thing_that_stops_it():
    source = SEED.replace("  logits = tf1.layers.Dense(1)(features)\n",
                          "  logits = tf1.contrib.layers.batch_norm(features)\n  noise = tf1.random.normal([1])\n")
    source = source.replace("max_steps=20)", "max_steps=20, hooks=[hook])")
    result = run(source, enabled=TIER_1)
    assert result.source == run(source, enabled=STANDALONE_RULES).source
    lines = source.splitlines()
    found = sorted((lines[f.line - 1].strip()[:20], f.message.split(": ", 1)[1][:30])
                   for f in result.findings if f.rule == "TFM302")
    # The layer, the random op and the hook; not the loss that reads the layer's output, nor what follows.
    assert [line for line, _ in found] == ["logits = tf1.contrib", "noise = tf1.random.n", "train_spec = tf1.est"]


def test_a_loss_written_by_hand_is_named_as_one():
    source = SEED.replace("tf1.losses.mean_squared_error(labels=labels, predictions=logits)",
                          "tf1.reduce_mean(tf1.square(labels - logits))")
    [finding] = [f for f in run(source, enabled=TIER_1).findings if f.rule == "TFM302"]
    assert "minimize() of `loss`, which is not a tf.losses loss" in finding.message


def test_a_decay_schedule_on_the_global_step_held_in_a_name():
    source = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n"
                          "  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())",
                          "  step = tf1.train.get_global_step()\n"
                          "  rate = tf1.train.exponential_decay(0.05, step, 10, 0.5)\n"
                          "  optimizer = tf1.train.AdagradOptimizer(rate)\n"
                          "  train_op = optimizer.minimize(loss, global_step=step)")
    result = migrated(source)
    assert "ExponentialDecay(initial_learning_rate=0.05, decay_steps=10, decay_rate=0.5)" in result.source


def test_estimator_without_train_and_evaluate_is_reported():
    source = dedent("""\
        import tensorflow.compat.v1 as tf1
        estimator = tf1.estimator.Estimator(model_fn=model_fn)
        estimator.train(input_fn, max_steps=10)
        """)
    check_noop(source, findings=("TFM302",))


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\nmodel = tf.keras.Sequential()\n",
        "from mylib import train_and_evaluate\ntrain_and_evaluate(a, b, c)\n",
        "import tensorflow as tf\nEstimator = None\n",
    ],
)
def test_noop(source):
    check_noop(source)


PARTITIONED_LAYER = ('  with tf1.variable_scope("linear", partitioner=tf1.fixed_size_partitioner(2)):\n'
                     '    logits = tf1.layers.dense(features, 1)\n')


def test_variable_scope_partitioner_moves_onto_the_strategy():
    result = migrated(SEED.replace("  logits = tf1.layers.Dense(1)(features)\n", PARTITIONED_LAYER))
    assert ("variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))"
            in result.source)
    assert "variable_scope" not in result.source and "keras.layers.Dense(units=1, name=\"linear/dense\")" in result.source
    assert sorted(f.rule for f in result.findings) == ["TFM201", "TFM301", "TFM303"]


def test_two_different_partitioners_stay_manual():
    second = PARTITIONED_LAYER.replace("fixed_size_partitioner(2)", "fixed_size_partitioner(3)").replace(
        "logits = tf1.layers.dense(features, 1)", "logits = tf1.layers.dense(logits, 1)")
    source = SEED.replace("  logits = tf1.layers.Dense(1)(features)\n", PARTITIONED_LAYER + second)
    result = run(source, enabled=TIER_1)
    assert "ParameterServerStrategy" not in result.source
    assert "TFM302" in [f.rule for f in result.findings]


SCHEDULE = ("  learning_rate = tf1.train.exponential_decay(\n"
            "      0.1, tf1.train.get_global_step(), decay_steps=5, decay_rate=0.5, staircase=True)\n")


def test_learning_rate_schedule_on_the_global_step_becomes_a_keras_schedule():
    source = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n",
                          SCHEDULE + "  optimizer = tf1.train.GradientDescentOptimizer(learning_rate)\n")
    code = migrated(source).source
    assert ("optimizer = keras.optimizers.legacy.SGD(learning_rate=keras.optimizers.schedules.ExponentialDecay("
            "initial_learning_rate=0.1, decay_steps=5, decay_rate=0.5, staircase=True))") in code


@pytest.mark.parametrize(
    "schedule, optimizer, where",
    [
        (SCHEDULE.replace("tf1.train.get_global_step()", "step"), "GradientDescentOptimizer(learning_rate)",
         "exponential_decay"),
        ("  learning_rate = tf1.train.natural_exp_decay(0.1, tf1.train.get_global_step(), 5, rate)\n",
         "GradientDescentOptimizer(learning_rate)", "natural_exp_decay"),
    ],
    ids=["not the global step", "computed natural decay rate"],
)
def test_schedule_that_keras_cannot_follow_stays_manual(schedule, optimizer, where):
    source = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n",
                          schedule + f"  optimizer = tf1.train.{optimizer}\n")
    result = run(source, enabled=TIER_1)
    assert result.source == source
    (finding,) = result.findings
    assert finding.rule == "TFM302" and where in source.splitlines()[finding.line - 1]


def test_momentum_on_a_decaying_rate_gets_tf1s_update():
    source = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n",
                          SCHEDULE + "  optimizer = tf1.train.MomentumOptimizer(learning_rate, 0.9)\n")
    code = migrated(source).source
    assert "class TF1Momentum(keras.optimizers.legacy.SGD):" in code
    assert "tf.raw_ops.ResourceApplyMomentum(" in code
    assert ("optimizer = TF1Momentum(learning_rate=keras.optimizers.schedules.ExponentialDecay("
            "initial_learning_rate=0.1, decay_steps=5, decay_rate=0.5, staircase=True), momentum=0.9)") in code


def test_momentum_on_a_constant_rate_is_plain_keras_sgd():
    source = SEED.replace("tf1.train.AdagradOptimizer(0.05)", "tf1.train.MomentumOptimizer(0.05, 0.9)")
    code = migrated(source).source
    assert "TF1Momentum" not in code and "keras.optimizers.legacy.SGD(learning_rate=0.05, momentum=0.9)" in code


def test_minimize_chained_on_the_optimizer_call():
    source = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n  train_op = optimizer.minimize(",
                          "  train_op = tf1.train.AdagradOptimizer(0.05).minimize(")
    assert source != SEED
    assert migrated(source).source == migrated(SEED).source


def test_minimize_chained_without_the_global_step_stays_manual():
    chained = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n  train_op = optimizer.minimize(",
                           "  train_op = tf1.train.AdagradOptimizer(0.05).minimize(")
    assert_left_whole_pointing_at(chained, "minimize(loss, global_step=tf1.train.get_global_step())",
                                  "minimize(loss)", "minimize(loss)")


CLASSIFIER = '''\
import tensorflow.compat.v1 as tf1


def train_input_fn():
  dataset = tf1.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
  return dataset.shuffle(48).repeat().batch(16)


def eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices(({"x": eval_x}, eval_y)).repeat().batch(16)


def model_fn(features, labels, mode):
  net = tf1.layers.dense(features["x"], 16, activation=tf1.nn.relu)
  logits = tf1.layers.dense(net, 3)
  predicted_classes = tf1.argmax(logits, 1)

  if mode == tf1.estimator.ModeKeys.PREDICT:
    predictions = {"class_ids": predicted_classes[:, tf1.newaxis]}
    return tf1.estimator.EstimatorSpec(mode, predictions=predictions)

  loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  accuracy = tf1.metrics.accuracy(labels=labels, predictions=predicted_classes)
  metrics = {"accuracy": accuracy}

  if mode == tf1.estimator.ModeKeys.EVAL:
    return tf1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

  optimizer = tf1.train.AdamOptimizer(learning_rate=0.01)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


classifier = tf1.estimator.Estimator(model_fn=model_fn)
train_spec = tf1.estimator.TrainSpec(input_fn=train_input_fn, max_steps=30)
eval_spec = tf1.estimator.EvalSpec(input_fn=eval_input_fn, steps=1)
eval_result, _ = tf1.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
'''


def test_features_dict_mode_branches_and_metrics_become_a_functional_model():
    result = migrated(CLASSIFIER)
    code = result.source
    assert "def build_model(input_spec):" in code and "for name, spec in input_spec.items()}" in code
    assert 'net = keras.layers.Dense(units=16, activation="relu", name="dense")(features["x"])' in code
    assert 'logits = keras.layers.Dense(units=3, name="dense_1")(net)' in code
    assert "predicted_classes = tf1.argmax(logits, 1)" in code
    assert "model = keras.Model(inputs=features, outputs=logits)" in code
    assert "loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)" in code
    assert 'metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")]' in code
    assert "ModeKeys" not in code and "model.build" not in code and "checkpoint" not in code
    assert [f.rule for f in result.findings] == ["TFM301"]
    compile(code, "migrated.py", "exec")


@pytest.mark.parametrize(
    "before, after, where",
    [
        ("    return tf1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)\n",
         "    return tf1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)\n  else:\n    pass\n",
         "if mode == tf1.estimator.ModeKeys.EVAL"),
        ("predictions=predicted_classes)", "predictions=net)", "tf1.metrics.accuracy"),
        ("  predicted_classes = tf1.argmax(logits, 1)\n",
         "  predicted_classes = tf1.argmax(logits, 1)\n  noise = tf1.random.normal([3])\n", "tf1.random.normal"),
    ],
    ids=["mode branch with else", "metric on another tensor", "random op between layers"],
)
def test_functional_model_fn_left_whole_when_unsafe(before, after, where):
    assert_left_whole_pointing_at(CLASSIFIER, before, after, where)


CALLS = CLASSIFIER.replace(  # evaluated and predicted to the end of an input that ends, as TF1 would
    '{"x": eval_x}, eval_y)).repeat().batch(16)', '{"x": eval_x}, eval_y)).batch(16)').replace('''train_spec = tf1.estimator.TrainSpec(input_fn=train_input_fn, max_steps=30)
eval_spec = tf1.estimator.EvalSpec(input_fn=eval_input_fn, steps=1)
eval_result, _ = tf1.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
''', '''classifier.train(input_fn=train_input_fn, max_steps=30)

eval_result = classifier.evaluate(input_fn=eval_input_fn)
for prediction in classifier.predict(input_fn=eval_input_fn):
  print(prediction["class_ids"])
''')


def test_train_evaluate_and_predict_calls_become_fit_evaluate_and_a_predictor():
    result = migrated(CALLS)
    code = result.source
    assert "model.fit(dataset, epochs=1, steps_per_epoch=30, verbose=2)" in code
    assert "\n\neval_dataset = eval_input_fn()\n" in code  # the blank line before evaluate stays
    assert "eval_steps = int(eval_dataset.cardinality())" in code  # TF1 evaluated the whole input
    assert "model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)" in code
    assert 'predictor = keras.Model(inputs=features, outputs={\n      "class_ids": predicted_classes[:, tf1.newaxis],\n  })' in code
    assert "def predict_examples(predictor, dataset):" in code
    assert "for prediction in predict_examples(predictor, eval_input_fn()):" in code
    assert "classifier" not in code
    assert sorted(f.rule for f in result.findings) == ["TFM301"]  # the whole input, as TF1 read it


class _Tensor:
    def __init__(self, values):
        self.values = values

    def numpy(self):
        return self.values


def _generated(code: str, name: str):
    """The generated top-level function ``name`` of ``code``, run on its own."""
    start = code.index(f"def {name}(")
    end = code.find("\n\n\n", start)
    namespace: dict = {}
    exec(code[start:end if end != -1 else None], namespace)
    return namespace[name]


def test_predict_keys_and_batches_yield_what_tf1_yielded():
    code = migrated(CALLS.replace("classifier.predict(input_fn=eval_input_fn)", (
        "classifier.predict(input_fn=eval_input_fn, predict_keys='class_ids')")).replace(
        "  print(prediction[\"class_ids\"])\n", "  print(prediction[\"class_ids\"])\n"
        "batches = classifier.predict(eval_input_fn, predict_keys=['class_ids'], yield_single_examples=False)\n")).source
    assert "def predict_examples(predictor, dataset, keys=None, single_examples=True):" in code
    assert "for prediction in predict_examples(predictor, eval_input_fn(), keys=('class_ids',)):" in code
    assert ("batches = predict_examples(predictor, eval_input_fn(), keys=('class_ids',), single_examples=False)"
            in code)
    predict_examples = _generated(code, "predict_examples")
    predictor = lambda features, training: {"class_ids": _Tensor([[1], [2]]), "logits": _Tensor([[.1], [.2]])}
    dataset = [({"x": None}, None)] * 2
    assert list(predict_examples(predictor, dataset, keys=("class_ids",))) == [{"class_ids": [1]}, {"class_ids": [2]}] * 2
    assert list(predict_examples(predictor, dataset))[0] == {"class_ids": [1], "logits": [.1]}
    batches = list(predict_examples(predictor, dataset, keys=("class_ids",), single_examples=False))
    assert batches == [{"class_ids": [[1], [2]]}] * 2


def test_evaluate_with_steps_keeps_them():
    code = migrated(CALLS.replace("classifier.evaluate(input_fn=eval_input_fn)",
                                  "classifier.evaluate(input_fn=eval_input_fn, steps=2)")).source
    assert "model.evaluate(eval_input_fn().repeat(), steps=2, return_dict=True, verbose=2)" in code


@pytest.mark.parametrize(
    "before, after, where",
    [
        ("max_steps=30)", "max_steps=30, hooks=[hook])", "hook"),
        ("classifier.predict(input_fn=eval_input_fn)", "classifier.predict(input_fn=eval_input_fn, predict_keys=['x'])",
         "predict_keys"),
        ("  print(prediction[\"class_ids\"])\n", "  print(prediction[\"class_ids\"])\nprint(classifier.model_dir)\n",
         "classifier.model_dir"),
        ("classifier.train(input_fn=train_input_fn, max_steps=30)", "classifier.train(input_fn=train_input_fn)",
         "def train_input_fn"),
    ],
    ids=["train hooks", "predict keys", "estimator used otherwise", "train without steps"],
)
def test_estimator_calls_left_whole_when_unsafe(before, after, where):
    assert_left_whole_pointing_at(CALLS, before, after, where)


@pytest.mark.parametrize(
    "source",
    [
        "import tensorflow as tf\nclassifier = tf.estimator.DNNClassifier(hidden_units=[8], n_classes=3)\n",
        "from tensorflow.compat.v1 import estimator\nr = estimator.LinearRegressor(feature_columns=columns)\n",
        "import tensorflow_estimator as tfe\nr = tfe.estimator.BoostedTreesClassifier(columns, 1)\n",
    ],
    ids=["tf.estimator", "from compat.v1 import estimator", "tensorflow_estimator"],
)
def test_canned_estimator_is_reported_for_a_person(source):
    result = run(source)
    assert result.source == source
    (finding,) = result.findings
    assert finding.rule == "TFM302" and re.match(r"canned (estimator )?\w+ left as it is: ", finding.message), finding.message


def test_tensorflow_estimator_spelling_migrates():
    source = SEED.replace("import tensorflow.compat.v1 as tf1\n",
                          "import tensorflow.compat.v1 as tf1\nimport tensorflow_estimator as tfe\n")
    source = source.replace("tf1.estimator.", "tfe.estimator.")
    assert "ParameterServerStrategy" in migrated(source).source


def test_params_reach_the_model_as_they_reached_the_model_fn():
    source = SEED.replace("def _model_fn(features, labels, mode):", "def _model_fn(features, labels, mode, params):")
    source = source.replace("tf1.layers.Dense(1)(features)", 'tf1.layers.Dense(params["units"])(features)')
    source = source.replace("Estimator(model_fn=_model_fn, config=config)",
                            'Estimator(model_fn=_model_fn, config=config, params={"units": 1})')
    code = migrated(source).source
    assert "def _build_model(input_spec, params):" in code and 'keras.layers.Dense(units=params["units"], name="dense")' in code
    assert 'model = _build_model(dataset.element_spec[0], params={"units": 1})' in code


DROPOUT_BATCHNORM = (Path(__file__).resolve().parent.parent / "examples" / "dropout_batchnorm" / "train.py").read_text()


def test_dropout_and_batch_norm_in_train_mode_become_keras_layers():
    result = migrated(DROPOUT_BATCHNORM)
    assert ('      keras.layers.BatchNormalization(name="batch_normalization"),\n      keras.layers.Dropout(rate=0.2),\n'
            in result.source)
    assert "GraphKeys.UPDATE_OPS" not in result.source and "control_dependencies" not in result.source
    numeric = [f.message for f in result.findings if f.rule == "TFM401"]
    assert len(numeric) == 1 and "dropout masks are random" in numeric[0]


@pytest.mark.parametrize("before, after", [
    ("  training = mode == tf1.estimator.ModeKeys.TRAIN\n", ""),
    ("  training = mode == tf1.estimator.ModeKeys.TRAIN\n", "  training = (tf1.estimator.ModeKeys.TRAIN == mode)\n"),
], ids=["inline comparison", "reversed, in parentheses"])
def test_every_spelling_of_train_mode(before, after):
    source = DROPOUT_BATCHNORM.replace(before, after)
    if not after:
        source = source.replace("training=training", "training=(mode == tf1.estimator.ModeKeys.TRAIN)")
    assert 'keras.layers.BatchNormalization(name="batch_normalization")' in migrated(source).source


UPDATES_ATTACHED = ("  update_ops = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)\n"
                    "  with tf1.control_dependencies(update_ops):\n"
                    "    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())\n")


@pytest.mark.parametrize("replacement", [
    "  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())\n",
    UPDATES_ATTACHED.replace("    train_op", "  train_op").replace("  with tf1.control_dependencies(update_ops):\n", ""),
], ids=["no update ops", "update ops not attached"])
def test_batch_norm_without_its_updates_is_migrated_with_a_numeric_finding(replacement):
    source = DROPOUT_BATCHNORM.replace(UPDATES_ATTACHED, replacement)
    assert source != DROPOUT_BATCHNORM
    messages = [f.message for f in migrated(source).findings if f.rule == "TFM401"]
    assert any("never updated the moving mean and variance" in message for message in messages), messages


def test_update_ops_collected_before_the_batch_norm_hold_none_of_its_updates():
    collected_early = DROPOUT_BATCHNORM.replace("  update_ops = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)\n", "")
    collected_early = collected_early.replace("  training = mode", "  update_ops = tf1.get_collection("
                                                                  "tf1.GraphKeys.UPDATE_OPS)\n  training = mode")
    messages = [f.message for f in migrated(collected_early).findings if f.rule == "TFM401"]
    assert any("never updated the moving mean and variance" in message for message in messages), messages


@pytest.mark.parametrize("before, after, where", [
    ("hidden = tf1.layers.dropout(hidden, rate=0.2, training=training)",
     "hidden = tf1.layers.dropout(hidden, rate=0.2, training=is_training)", "is_training"),
    ("hidden = tf1.layers.batch_normalization(hidden, training=training)",
     "hidden = tf1.layers.batch_normalization(hidden)", "batch_normalization"),
    ("hidden = tf1.layers.dropout(hidden, rate=0.2, training=training)",
     "hidden = tf1.layers.dropout(hidden, rate=0.2, training=True)", "training=True"),
    ("    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())\n",
     "    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())\n    extra = tf1.no_op()\n",
     "control_dependencies"),
], ids=["training from elsewhere", "batch norm always in inference", "dropout always on", "more under the updates"])
def test_training_flags_that_are_not_the_train_mode_stay_manual(before, after, where):
    assert_left_whole_pointing_at(DROPOUT_BATCHNORM, before, after, where)


EMBEDDING = (Path(__file__).resolve().parent.parent / "examples" / "embedding" / "train.py").read_text()
EMBEDDING_LAYER = ('keras.layers.Embedding(input_dim=VOCABULARY, output_dim=WIDTH, '
                   'embeddings_initializer="glorot_uniform", name="embedding/table")(features["ids"])')


def test_partitioned_embedding_table_becomes_a_keras_embedding_sharded_by_the_strategy():
    result = migrated(EMBEDDING)
    code = result.source
    assert f"embedded = {EMBEDDING_LAYER}" in code and "bag = tf1.reduce_mean(embedded, axis=1)" in code
    assert "variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))" in code
    # The table is TF1's variable of its name; a TF1 checkpoint's rows of it are in "mod" order.
    assert '"embedding/table/embeddings": "embedding/table",' in code and 'mod_tables = ["embedding/table"]' in code
    assert "table = tf1.get_variable" not in code and "= tf1.nn.embedding_lookup" not in code
    rules = {f.rule: f.message for f in result.findings}
    assert '"mod"' in rules["TFM401"] and "every variable" in rules["TFM206"]


@pytest.mark.parametrize("before, after, rules", [
    ('features["ids"])', 'features["ids"], partition_strategy="div")', {"TFM201", "TFM206", "TFM301", "TFM303"}),
    ('  with tf1.variable_scope(\n      "embedding", partitioner=tf1.fixed_size_partitioner(2)):\n'
     '    table = tf1.get_variable("table", [VOCABULARY, WIDTH])\n',
     '  table = tf1.get_variable("table", [VOCABULARY, WIDTH])\n', {"TFM301", "TFM303"}),
    ('  with tf1.variable_scope(\n      "embedding", partitioner=tf1.fixed_size_partitioner(2)):\n'
     '    table = tf1.get_variable("table", [VOCABULARY, WIDTH])\n',
     '  table = tf1.get_variable(\n      "table", [VOCABULARY, WIDTH], partitioner=tf1.fixed_size_partitioner(2))\n',
     {"TFM201", "TFM206", "TFM301", "TFM303", "TFM401"}),
    ("import tensorflow.compat.v1 as tf1\n", "import tensorflow.compat.v1 as tf1\nfrom tensorflow.compat.v1 import nn\n",
     {"TFM201", "TFM206", "TFM301", "TFM303", "TFM401"}),
], ids=["div lookup", "not partitioned", "get_variable partitioner", "from compat.v1 import nn"])
def test_embedding_lookup_spellings(before, after, rules):
    source = EMBEDDING.replace(before, after)
    if "import nn" in after:
        source = source.replace("tf1.nn.embedding_lookup", "nn.embedding_lookup")
    assert source != EMBEDDING
    result = migrated(source)
    scoped = "tf1.variable_scope(" in source
    assert EMBEDDING_LAYER.replace("embedding/table", "embedding/table" if scoped else "table") in result.source
    assert {f.rule for f in result.findings} == rules
    assert ("mod_tables = " in result.source) == ("TFM401" in rules)  # the restore permutes "mod" tables only


@pytest.mark.parametrize("before, after, where", [
    ("  bag = tf1.reduce_mean(embedded, axis=1)\n", "  bag = tf1.reduce_mean(embedded, axis=1) + tf1.reduce_sum(table)\n",
     "tf1.reduce_sum(table)"),
    ('features["ids"])', 'features["ids"], max_norm=1.0)', "embedding_lookup"),
    ('tf1.get_variable("table", [VOCABULARY, WIDTH])', 'tf1.get_variable("table", [VOCABULARY, WIDTH], trainable=False)',
     "embedding_lookup"),
], ids=["table used in arithmetic", "max_norm", "not trainable"])
def test_embedding_tables_keras_cannot_express_stay_manual(before, after, where):
    assert_left_whole_pointing_at(EMBEDDING, before, after, where)


def test_findings_point_at_the_users_lines_after_an_earlier_rule_added_an_import():
    """The partitioner rule adds `import tensorflow as tf` above; later findings still count the file's own lines."""
    lines = EMBEDDING.splitlines()
    expected = {"TFM201": "fixed_size_partitioner", "TFM401": "embedding_lookup", "TFM206": "layers.dense",
                "TFM303": "EvalSpec", "TFM301": "train_and_evaluate"}
    for finding in run(EMBEDDING).findings:
        assert expected[finding.rule] in lines[finding.line - 1], finding


WHOLE_RUN = ("steps_done = int(model.optimizer.iterations)", "if steps_done < 20:",
             "model.fit(dataset, epochs=1, steps_per_epoch=20 - steps_done, callbacks=[save_checkpoint],")


@pytest.mark.parametrize("config, keep, saver", [
    ("", "max_to_keep=5", "CheckpointSaver(checkpoints, model.optimizer.iterations, secs=600)"),
    ("save_checkpoints_steps=5, keep_checkpoint_max=2, ", "max_to_keep=2", "CheckpointSaver(checkpoints, model.optimizer.iterations, steps=5)"),
    ("save_checkpoints_steps=3, ", "max_to_keep=5", "CheckpointSaver(checkpoints, model.optimizer.iterations, steps=3)"),
    ("save_checkpoints_steps=args.every, ", "max_to_keep=5", "CheckpointSaver(checkpoints, model.optimizer.iterations, steps=args.every)"),
    ("save_checkpoints_secs=60, keep_checkpoint_every_n_hours=2, ",
     "max_to_keep=5, keep_checkpoint_every_n_hours=2", "CheckpointSaver(checkpoints, model.optimizer.iterations, secs=60)"),
], ids=["default: every 600 s", "every 5 steps, keep 2", "steps not dividing max_steps", "steps from a flag",
        "on a timer, one kept every 2 hours"])
def test_run_config_checkpoints_are_saved_as_tf1_saved_them_and_resumed(config, keep, saver):
    source = SEED.replace("RunConfig(model_dir=model_dir,", f"RunConfig({config}model_dir=model_dir,")
    result = migrated(source.replace("model_dir = tempfile.mkdtemp()", "model_dir = tempfile.mkdtemp()\nargs = None"))
    assert all(line in result.source for line in WHOLE_RUN)
    assert ("tf.train.Checkpoint(model=model, optimizer=model.optimizer), os.path.join(model_dir, \"tf2\"), "
            f"{keep})") in result.source
    assert f"save_checkpoint = {saver}\n" in result.source
    assert "class CheckpointSaver(keras.callbacks.Callback):" in result.source
    # Its own checkpoints, or else TF1's in model_dir.
    assert ("tf1_checkpoint = tf.train.latest_checkpoint(model_dir)\n"
            "if checkpoints.latest_checkpoint:\n  checkpoints.restore_or_initialize()\nelif tf1_checkpoint:\n"
            "  with strategy.scope():\n    restore_tf1_checkpoint(tf1_checkpoint, model)\n") in result.source
    assert sorted(f.rule for f in result.findings) == ["TFM301", "TFM303"]  # and nothing on the cadence


@pytest.mark.parametrize("before, after", [
    ("RunConfig(model_dir=model_dir,", "RunConfig(model_dir=model_dir, save_checkpoints_steps=None, "
                                      "save_checkpoints_secs=None,"),
    ("RunConfig(model_dir=model_dir,", "RunConfig("),
], ids=["checkpoints switched off", "no model_dir"])
def test_no_checkpoints_where_tf1_wrote_none(before, after):
    code = migrated(SEED.replace(before, after)).source
    assert "CheckpointManager" not in code and "model.fit(dataset, epochs=1, steps_per_epoch=20, verbose=2)" in code


def layer_names(source: str) -> list[str]:
    """The names of the Keras layers of the migrated model: TF1's variable scopes of their variables."""
    code = migrated(source).source
    return re.findall(r'keras\.layers\.\w+\(.*name=(".*?"|f".*?" if .*? else ".*?")\)', code)


@pytest.mark.parametrize("warm_start", ['"/ckpt"', 'tf1.estimator.WarmStartSettings("/ckpt")',
                                        'tf1.estimator.WarmStartSettings("/ckpt", vars_to_warm_start=".*")'])
def test_warm_start_from_a_path_or_settings(warm_start):
    source = SEED.replace("Estimator(model_fn=_model_fn, config=config)",
                          f"Estimator(model_fn=_model_fn, config=config, warm_start_from={warm_start})")
    code = migrated(source).source
    assert 'warm_start = tf.train.load_checkpoint("/ckpt")' in code and "if int(model.optimizer.iterations) == 0:" in code
    assert ("  for name, variable in tf1_variables(model).items():\n"
            '    if getattr(variable, "variables", [variable])[0].trainable:\n'
            "      variable.assign(warm_start.get_tensor(name))\n") in code
    assert layer_names(source) == ['"dense"']


def test_warm_start_names_follow_tf1s_scopes_layer_names_and_switches():
    source = DROPOUT_BATCHNORM.replace(
        "  hidden = tf1.layers.dense(features, 32, activation=tf1.nn.relu)\n",
        '  with tf1.variable_scope("tower"):\n'
        '    hidden = tf1.layers.dense(features, 32, activation=tf1.nn.relu, use_bias=False)\n'
        '    hidden = tf1.layers.dense(hidden, 32, activation=tf1.nn.relu)\n').replace(
        "tf1.layers.batch_normalization(hidden, training=training)",
        "tf1.layers.batch_normalization(hidden, training=training, center=False)").replace(
        "predictions = tf1.layers.dense(hidden, 1)", 'predictions = tf1.layers.dense(hidden, 1, name="out")').replace(
        "estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)",
        'estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config, warm_start_from="/ckpt")')
    assert layer_names(source) == ['"tower/dense"', '"tower/dense_1"', '"batch_normalization"', '"out"']
    code = migrated(source).source
    assert "use_bias=False" in code and "center=False" in code  # no tower/dense/bias, no batch_normalization/beta


WARM_START_FROM_C = ("Estimator(model_fn=_model_fn, config=config)",
                     'Estimator(model_fn=_model_fn, config=config, warm_start_from="/c")')


@pytest.mark.parametrize("program, edits, where", [
    (SEED, [("Estimator(model_fn=_model_fn, config=config)", "Estimator(model_fn=_model_fn, config=config, "
             'warm_start_from=tf1.estimator.WarmStartSettings("/c", "dense/.*"))')], "WarmStartSettings"),
    (SEED, [WARM_START_FROM_C, ("tf1.layers.Dense(1)(features)", "tf1.layers.Dense(1, name=layer_name)(features)")],
     "warm_start_from"),
    (EMBEDDING, [WARM_START_FROM_C], "warm_start_from"),
], ids=["some variables", "computed layer name", "partitioned model"])
def test_warm_starts_that_cannot_be_written_stay_manual(program, edits, where):
    first, *rest = edits
    for before, after in rest:
        program = program.replace(before, after)
    assert_left_whole_pointing_at(program, *first, where)


TRAIN_SPEC_LINE = "train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn, max_steps=20)"


@pytest.mark.parametrize("hooks, fit", [
    ("[tf1.train.StopAtStepHook(last_step=10)]", "steps_per_epoch=10 - steps_done, callbacks=[save_checkpoint]"),
    ("[tf1.train.CheckpointSaverHook(model_dir, save_steps=5)]", "CheckpointSaver(checkpoints, model.optimizer.iterations, steps=5)\n"),
    ("train_hooks", "steps_per_epoch=10 - steps_done, callbacks=[save_checkpoint]"),
], ids=["StopAtStepHook", "CheckpointSaverHook", "module-level list"])
def test_train_spec_hooks_with_a_keras_counterpart(hooks, fit):
    source = SEED.replace(TRAIN_SPEC_LINE, TRAIN_SPEC_LINE.replace(")", f", hooks={hooks})"))
    if hooks == "train_hooks":
        source = source.replace("model_dir = tempfile.mkdtemp()\n", "model_dir = tempfile.mkdtemp()\n"
                                "train_hooks = [tf1.train.StopAtStepHook(last_step=10)]\n")
    result = migrated(source)
    assert fit in result.source and "SaverHook" not in result.source and "StopAtStepHook" not in result.source
    assert sorted(f.rule for f in result.findings) == ["TFM301", "TFM303"]


def test_train_steps_count_from_where_a_run_resumes():
    """train(steps=N) trains N more steps even after a checkpoint was restored; max_steps=N up to step N."""
    calls = CALLS.replace("classifier = tf1.estimator.Estimator(model_fn=model_fn)",
                          "classifier = tf1.estimator.Estimator(model_fn=model_fn, model_dir='/tmp/m')")
    code = migrated(calls.replace("max_steps=30", "steps=30")).source
    assert "model.fit(dataset, epochs=1, steps_per_epoch=30, callbacks=[save_checkpoint], verbose=2)" in code
    assert "steps_done" not in code and "steps_done" in migrated(calls).source


@pytest.mark.parametrize("hook, where", [
    ("tf1.train.LoggingTensorHook({'loss': 'loss'}, every_n_iter=10)", "LoggingTensorHook logs tensors"),
    ("tf1.train.StopAtStepHook(num_steps=10)", "counts from wherever a run resumed"),
    ("tf1.train.CheckpointSaverHook('/elsewhere', save_steps=5)", "RunConfig(save_checkpoints_steps=...)"),
    ("tf1.train.ProfilerHook(save_steps=10, output_dir='/p')", "profile_batch"),
    ("MyHook()", "rewrite it as a Keras callback"),
], ids=["LoggingTensorHook", "StopAtStepHook num_steps", "checkpoints elsewhere", "ProfilerHook", "custom"])
def test_other_hooks_stay_manual_saying_what_to_write(hook, where):
    source = SEED.replace(TRAIN_SPEC_LINE, TRAIN_SPEC_LINE.replace(")", f", hooks=[{hook}])"))
    result = run(source)
    assert result.source == source
    (finding,) = result.findings
    assert finding.rule == "TFM302" and where in finding.message
    assert hook.split("(")[0] in source.splitlines()[finding.line - 1]


def test_nan_tensor_hook_stays_manual_for_terminate_on_nan_fails_under_parameter_servers():
    source = SEED.replace("EstimatorSpec(mode, loss=loss, train_op=train_op)", "EstimatorSpec(mode, loss=loss, "
                          "train_op=train_op, training_hooks=[tf1.train.NanTensorHook(loss)])")
    (finding,) = run(source, enabled=TIER_1).findings
    assert finding.rule == "TFM302" and "RemoteValues" in finding.message


def test_tensorflow_estimator_internal_spellings_migrate():
    """What code inside TensorFlow's own repositories writes: the estimator modules by their internal paths."""
    source = SEED.replace("import tensorflow.compat.v1 as tf1\n", (
        "import tensorflow.compat.v1 as tf1\n"
        "from tensorflow_estimator.python.estimator import estimator as estimator_lib\n"
        "from tensorflow_estimator.python.estimator import model_fn as model_fn_lib\n"
        "from tensorflow_estimator.python.estimator import run_config, training\n"))
    for name, module in (("Estimator", "estimator_lib"), ("EstimatorSpec", "model_fn_lib"), ("RunConfig", "run_config"),
                         ("TrainSpec", "training"), ("EvalSpec", "training"), ("train_and_evaluate", "training")):
        source = source.replace(f"tf1.estimator.{name}(", f"{module}.{name}(")
    result = migrated(source)
    assert "ParameterServerStrategy" in result.source and "tensorflow_estimator" not in result.source


def test_tf1s_own_estimator_modules_migrate_too():
    """Before tensorflow_estimator (TF 1.12 and earlier) the Estimator lived in tensorflow.python.estimator: SageMaker's
    TF1 scripts import ModeKeys from there, a module TF 2 does not have."""
    source = SEED.replace("import tensorflow.compat.v1 as tf1\n", (
        "import tensorflow.compat.v1 as tf1\n"
        "from tensorflow.python.estimator.model_fn import ModeKeys as Modes\n"
        "from tensorflow.python.estimator import estimator as estimator_lib\n"))
    source = source.replace("tf1.estimator.Estimator(", "estimator_lib.Estimator(")
    assert source.count("estimator_lib.Estimator(") == 1
    source = source.replace("  loss = tf1.losses.mean_squared_error(", "  if mode == Modes.PREDICT:\n"
                            "    return tf1.estimator.EstimatorSpec(mode, predictions=logits)\n"
                            "  loss = tf1.losses.mean_squared_error(")
    result = migrated(source)
    assert "ParameterServerStrategy" in result.source and "tensorflow.python.estimator" not in result.source
    assert "Modes" not in result.source


CUSTOM_ESTIMATOR = (Path(__file__).resolve().parent / "parity_programs" / "custom_estimator_tf1.py").read_text()


def test_feature_columns_through_params_and_a_loop_of_layers():
    code = migrated(CUSTOM_ESTIMATOR).source
    assert ('  net = keras.layers.Concatenate()([\n      keras.layers.Flatten()(tf.cast(features[key], tf.float32))\n'
            '      for key in ("Petal", "SepalLength", "SepalWidth")])\n') in code
    # TF1 numbered the loop's layers: dense, dense_1, ...; the layer after it comes after all of them.
    assert ('  for index, units in enumerate(params["hidden_units"]):\n'
            '    net = keras.layers.Dense(units=units, activation="relu", name=f"dense_{index}" if index else "dense")(net)\n'
            ) in code


def test_one_numeric_column_is_flattened_alone():
    source = CUSTOM_ESTIMATOR.replace('params["feature_columns"]', '[tf.feature_column.numeric_column("SepalWidth")]')
    assert 'net = keras.layers.Flatten()(tf.cast(features["SepalWidth"], tf.float32))' in migrated(source).source


def test_a_layer_after_a_loop_is_numbered_after_the_loops():
    """Here the loop's values are known before the program runs (examples/trainer_package: at run time only)."""
    source = CUSTOM_ESTIMATOR.replace("model_fn=my_model, model_dir=model_dir,",
                                      "model_fn=my_model, model_dir=model_dir, warm_start_from='/c',")
    assert layer_names(source) == ['f"dense_{index}" if index else "dense"', '"dense_2"']


@pytest.mark.parametrize("before, after, where", [
    ('tf.feature_column.numeric_column(key="SepalWidth")',
     'tf.feature_column.categorical_column_with_identity("SepalWidth", 3)', "categorical_column_with_identity"),
    ('tf.feature_column.numeric_column(key="SepalWidth")',
     'tf.feature_column.numeric_column(key="SepalWidth", normalizer_fn=tf.math.log1p)', "normalizer_fn"),
    ("  for units in params[\"hidden_units\"]:\n    net = tf.compat.v1.layers.dense(net, units=units, activation=tf.nn.relu)\n",
     "  for units in params[\"hidden_units\"]:\n    net = tf.compat.v1.layers.dense(net, units=units)\n  else:\n    pass\n",
     "for units"),
], ids=["categorical column", "normalizer_fn", "for-else"])
def test_feature_columns_and_loops_keras_cannot_take_as_they_are_stay_manual(before, after, where):
    assert_left_whole_pointing_at(CUSTOM_ESTIMATOR, before, after, where)



MODEL_FN_DEF = "def _model_fn(features, labels, mode):"
ESTIMATOR_LINE = "estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)"


@pytest.mark.parametrize("definition, model_fn, expected", [
    ("def _model_fn(features, labels, mode, params, config):", "_model_fn",
     ("def _build_model(input_spec, params):", 'keras.layers.Dense(units=1, name="dense")',
      "model = _build_model(dataset.element_spec[0], params={})")),
    ("def _model_fn(features, labels, mode, units):", "functools.partial(_model_fn, units=1)",
     ("def _build_model(input_spec, units):", 'keras.layers.Dense(units=units, name="dense")',
      "model = _build_model(dataset.element_spec[0], units=1)")),
    ("class Model:\n  units = 1\n\n  def model_fn(self, features, labels, mode):", "builder.model_fn",
     ("  def build_model(self, input_spec):", 'keras.layers.Dense(units=self.units, name="dense")',
      "model = builder.build_model(dataset.element_spec[0])")),
    ("class Model:\n  units = 1\n\n  def __call__(this, features, labels, mode):", "builder",
     ("  def build_model(this, input_spec):", 'keras.layers.Dense(units=this.units, name="dense")',
      "model = builder.build_model(dataset.element_spec[0])")),
], ids=["params and config, unused", "functools.partial", "method", "callable object"])
def test_every_kind_of_model_fn(definition, model_fn, expected):
    """The model_fn stays where it is, a function, method or object, as the function building the Keras model."""
    body = original = SEED[SEED.index(MODEL_FN_DEF) + len(MODEL_FN_DEF):SEED.index("\n\n\nmodel_dir")]
    if definition.startswith("class"):
        self_name = "this" if "this" in definition else "self"
        body = "\n".join("  " + line if line else line for line in body.splitlines())
        body = body.replace("Dense(1)", f"Dense({self_name}.units)")
    elif "units" in definition:
        body = body.replace("Dense(1)", "Dense(units)")
    source = SEED.replace(MODEL_FN_DEF + original, definition + body).replace(
        ESTIMATOR_LINE, ("builder = Model()\n" if definition.startswith("class") else "") +
        ESTIMATOR_LINE.replace("model_fn=_model_fn", f"model_fn={model_fn}"))
    source = "import functools\n" + source
    result = migrated(source)
    assert "ParameterServerStrategy" in result.source
    assert all(line in result.source for line in expected), result.source
    if definition.startswith("class"):
        assert "class Model:" in result.source and "builder = Model()" in result.source
    compile(result.source, "migrated.py", "exec")


def wrapped_seed(call: str) -> str:
    """SEED with a `units` parameter, given to Estimator as `wrapped`, a function returning ``call``."""
    wrapper = f"def wrapped(features, labels, mode):\n  return {call}\n\n\n"
    return SEED.replace(MODEL_FN_DEF, "def _model_fn(features, labels, mode, units):").replace(
        "Dense(1)", "Dense(units)").replace(ESTIMATOR_LINE, wrapper + ESTIMATOR_LINE.replace("model_fn=_model_fn",
                                                                                             "model_fn=wrapped"))


def test_a_function_only_calling_the_model_fn_with_keywords_is_its_functools_partial():
    """As notebooks pick a net for a general model_fn (rewrites/estimator/model_fn_wrapper.py): the wrapper goes
    with the Estimator, and the build function takes the keyword."""
    code = migrated(wrapped_seed("_model_fn(features, labels, mode, units=1)")).source
    assert "def _build_model(input_spec, units):" in code and 'keras.layers.Dense(units=units, name="dense")' in code
    assert "model = _build_model(dataset.element_spec[0], units=1)" in code and "wrapped" not in code


@pytest.mark.parametrize("call", ["_model_fn(features, labels, mode, units=len(labels))",
                                  "_model_fn(features, labels, mode, units=1)\n\n\nprint(wrapped)",
                                  "_model_fn(features, mode=mode, labels=None, units=1)"],
                         ids=["a keyword of its arguments", "named elsewhere too", "not its own arguments"])
def test_a_wrapper_doing_more_is_read_as_the_model_fn(call):
    source = wrapped_seed(call)
    result = run(source)
    assert result.source == source
    assert [f.message for f in result.findings if f.rule == "TFM302"] == [
        "Estimator program left as it is: the model_fn must make a tf.train optimizer and minimize its loss with it"]


@pytest.mark.parametrize("model_fn, where", [
    ("functools.partial(_model_fn, 1)", "functools.partial"),
    ("Model().model_fn", "Model().model_fn"),
    ("other_module.model_fn", "other_module.model_fn"),
], ids=["partial with positional arguments", "object built inline", "model_fn from another module"])
def test_model_fns_that_cannot_be_read_stay_manual(model_fn, where):
    source = "import functools\n" + SEED.replace(ESTIMATOR_LINE, ESTIMATOR_LINE.replace("model_fn=_model_fn",
                                                                                       f"model_fn={model_fn}"))
    assert_left_whole_pointing_at(source, "import functools\n", "import functools\nimport other_module\n", where)



@pytest.mark.parametrize("before, after", [
    ("TrainSpec(input_fn=_input_fn, max_steps=20)", "TrainSpec(input_fn=_input_fn)"),
    ("TrainSpec(input_fn=_input_fn, max_steps=20)", "TrainSpec(input_fn=_input_fn, max_steps=None)"),
], ids=["no max_steps", "max_steps=None"])
def test_without_steps_an_input_that_ends_is_trained_one_pass(before, after):
    source = SEED.replace(before, after).replace(
        "((features, labels)).repeat().batch(1)", "((features, labels)).shuffle(3).batch(1)")
    code = migrated(source).source
    assert ("model.fit(dataset.repeat(), epochs=1, steps_per_epoch=train_batches, "
            "callbacks=[save_checkpoint], verbose=2)") in code
    assert "steps_done" not in code  # each run of the TF1 program trained one more pass


def test_without_steps_an_input_of_unknown_length_is_trained_one_pass_counted_when_the_program_runs():
    source = SEED.replace("TrainSpec(input_fn=_input_fn, max_steps=20)", "TrainSpec(input_fn=_input_fn)").replace(
        "((features, labels)).repeat().batch(1)", "((features, labels)).filter(lambda x, y: True).batch(1)")
    code = flat(migrated(source).source)
    assert "train_batches = int(dataset.reduce(0, lambda count, _: count + 1))" in code
    assert "INFINITE_CARDINALITY" not in code  # it visibly ends


def test_total_loss_of_one_loss_is_that_loss():
    source = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n",
                          "  total = tf1.losses.get_total_loss()\n  optimizer = tf1.train.AdagradOptimizer(0.05)\n")
    source = source.replace("optimizer.minimize(loss,", "optimizer.minimize(total,").replace(
        "EstimatorSpec(mode, loss=loss,", "EstimatorSpec(mode, loss=total,")
    assert "model.compile(optimizer, loss=keras.losses.MeanSquaredError()," in flat(migrated(source).source)


def test_total_loss_of_two_losses_stays_manual():
    source = SEED.replace("  optimizer = tf1.train.AdagradOptimizer(0.05)\n",
                          "  extra = tf1.losses.absolute_difference(labels=labels, predictions=logits)\n"
                          "  total = tf1.losses.get_total_loss()\n  optimizer = tf1.train.AdagradOptimizer(0.05)\n")
    source = source.replace("optimizer.minimize(loss,", "optimizer.minimize(total,").replace(
        "EstimatorSpec(mode, loss=loss,", "EstimatorSpec(mode, loss=total,")
    (finding,) = run(source, enabled=TIER_1).findings
    assert finding.rule == "TFM302" and "get_total_loss() of 2 tf.losses losses" in finding.message


BINARY = SEED.replace("tf1.losses.mean_squared_error(labels=labels, predictions=logits)",
                      "tf1.losses.sigmoid_cross_entropy(multi_class_labels=labels, logits=logits)").replace(
    "EstimatorSpec(mode, loss=loss, train_op=train_op)",
    'EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"auc": auc})').replace(
    "  optimizer = tf1.train.AdagradOptimizer(0.05)\n", "  auc = AUC\n  optimizer = tf1.train.AdagradOptimizer(0.05)\n")


@pytest.mark.parametrize("tf1, keras, numeric", [
    ("tf1.metrics.auc(labels, tf1.sigmoid(logits))", 'keras.metrics.AUC(from_logits=True, name="auc")', False),
    ("tf1.metrics.auc(labels=labels, predictions=tf1.nn.sigmoid(logits), num_thresholds=100)",
     'keras.metrics.AUC(num_thresholds=100, from_logits=True, name="auc")', False),
    ("tf1.metrics.auc(labels, tf1.sigmoid(logits), curve='PR', summation_method='careful_interpolation')",
     'keras.metrics.AUC(curve="PR", from_logits=True, name="auc")', False),
    ("tf1.metrics.auc(labels, tf1.sigmoid(logits), curve='PR')", 'keras.metrics.AUC(curve="PR", from_logits=True, '
     'name="auc")', True),
    ("tf1.metrics.auc(labels, logits, summation_method='minoring')",
     'keras.metrics.AUC(summation_method="minoring", name="auc")', False),
], ids=["ROC of the sigmoid", "keywords, thresholds", "careful PR", "trapezoidal PR", "of the output itself"])
def test_auc_becomes_a_keras_auc_metric(tf1, keras, numeric):
    result = migrated(BINARY.replace("auc = AUC", f"auc = {tf1}"))
    assert f"reduction=\"none\")), {keras}]" in flat(result.source)
    assert any(f.rule == "TFM401" and "PR curve" in f.message for f in result.findings) == numeric


@pytest.mark.parametrize("tf1", ["tf1.metrics.auc(labels, tf1.nn.softmax(logits))",
                                 "tf1.metrics.auc(labels, logits, weights=w)",
                                 "tf1.metrics.auc(labels, logits, curve=curve)"])
def test_auc_keras_cannot_compute_the_same_way_stays_manual(tf1):
    assert_left_whole_pointing_at(BINARY, "auc = AUC", f"auc = {tf1}", "tf1.metrics.auc")


@pytest.mark.parametrize("metric, message", [
    ("tf1.metrics.precision(labels, logits)", "non-zero prediction"),
    ("tf1.metrics.recall(labels, logits)", "non-zero prediction"),
    ("tf1.metrics.mean(logits)", "custom"),
    ("tf1.metrics.accuracy(labels, logits, weights=features)", "sample weights"),
])
def test_metrics_keras_counts_otherwise_stay_manual_saying_why(metric, message):
    source = BINARY.replace("auc = AUC", f"auc = {metric}")
    (finding,) = run(source, enabled=TIER_1).findings
    assert finding.rule == "TFM302" and message in finding.message and metric.split("(")[0] in source.splitlines()[finding.line - 1]


@pytest.mark.parametrize("metric, keras", [
    ("tf1.metrics.mean_squared_error(labels, logits)", 'keras.metrics.MeanSquaredError(name="m")'),
    ("tf1.metrics.root_mean_squared_error(labels=labels, predictions=logits)",
     'keras.metrics.RootMeanSquaredError(name="m")'),
    ("tf1.metrics.mean_absolute_error(labels, logits)", 'keras.metrics.MeanAbsoluteError(name="m")'),
    ("tf1.metrics.accuracy(labels, logits)", 'keras.metrics.Accuracy(name="m")'),
    ("tf1.metrics.accuracy(labels, logits, weights=2.0)", 'keras.metrics.Accuracy(name="m")'),
    # The mean of the batches' losses, as TF1 averaged them (Keras weighs a batch by its size).
    ("tf1.metrics.mean(loss)", 'TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none"), name="m")'),
])
def test_metrics_on_the_output(metric, keras):
    source = SEED.replace("EstimatorSpec(mode, loss=loss, train_op=train_op)",
                          'EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"m": m})').replace(
        "  optimizer = tf1.train.AdagradOptimizer(0.05)\n", f"  m = {metric}\n  optimizer = tf1.train.AdagradOptimizer(0.05)\n")
    assert f"metrics=[{EVAL_LOSS}, {keras}]" in flat(migrated(source).source)


def test_run_config_logging_and_eval_spec_timing_have_no_keras_counterpart_to_write():
    """Logging cadence and the evaluator's delays change no number: Keras logs every epoch (verbose=2), and the
    evaluator task evaluates the chief's checkpoints."""
    source = SEED.replace("log_step_count_steps=1)", "log_step_count_steps=1, save_summary_steps=10)").replace(
        "EvalSpec(input_fn=_eval_input_fn, steps=3)",
        'EvalSpec(input_fn=_eval_input_fn, steps=3, name="test", start_delay_secs=0, throttle_secs=60)')
    code = migrated(source).source
    assert "summary" not in code and "throttle" not in code and "ParameterServerStrategy" in code


@pytest.mark.parametrize("before, after, where", [
    ("RunConfig(model_dir=model_dir,", "RunConfig(train_distribute=strategy, model_dir=model_dir,", "train_distribute"),
    ("EstimatorSpec(mode, loss=loss, train_op=train_op)",
     "EstimatorSpec(mode, loss=loss, train_op=train_op, export_outputs=outputs)", "export_outputs"),
], ids=["train_distribute", "export_outputs"])
def test_estimator_pieces_with_no_safe_keras_counterpart_stay_manual(before, after, where):
    assert_left_whole_pointing_at(SEED, before, after, where)


CNN_MODEL_FN = """  images = tf1.reshape(features, [-1, 6, 6, 1])
  net = tf1.layers.conv2d(images, 4, 3, padding="same", activation=tf1.nn.relu)
  net = tf1.layers.max_pooling2d(net, 2, 2)
  net = tf1.layers.average_pooling2d(net, pool_size=3, strides=1, padding="same")
  net = tf1.layers.flatten(net)
  logits = tf1.layers.dense(net, 1)
"""


def test_convolutional_model_fn_keeps_tf1s_data_format_and_pooling_strides():
    source = SEED.replace("  logits = tf1.layers.Dense(1)(features)\n", CNN_MODEL_FN)
    source = source.replace("features = [[", "xs = [[").replace("((features, labels))", "((xs, labels))")
    code = migrated(source).source
    for layer in ('images = tf1.reshape(features, [-1, 6, 6, 1])',
                  'keras.layers.Conv2D(filters=4, kernel_size=3, padding="same", data_format="channels_last", '
                  'activation="relu", name="conv2d")(images)',
                  'keras.layers.MaxPooling2D(pool_size=2, strides=2, data_format="channels_last")(net)',
                  'keras.layers.AveragePooling2D(pool_size=3, strides=1, padding="same", data_format="channels_last")',
                  'keras.layers.Flatten(data_format="channels_last")(net)'):
        assert layer in code, layer


@pytest.mark.parametrize("before, after, where", [
    ("  logits = tf1.layers.Dense(1)(features)\n",
     "  logits = tf1.while_loop(lambda x: False, lambda x: x, [features])\n", "tf1.while_loop"),
    ("  logits = tf1.layers.Dense(1)(features)\n",
     '  w = tf1.get_variable("w", [2, 1])\n  logits = tf1.matmul(features, w)\n', "tf1.matmul"),
    ("  optimizer = tf1.train.AdagradOptimizer(0.05)\n",
     "  optimizer = tf1.train.SyncReplicasOptimizer(tf1.train.AdagradOptimizer(0.05), 2)\n", "SyncReplicasOptimizer"),
    ("tf1.layers.Dense(1)(features)", "tf1.layers.Dense(1, kernel_regularizer=tf1.keras.regularizers.l2(0.1))(features)",
     "kernel_regularizer"),
], ids=["while_loop", "get_variable arithmetic", "SyncReplicasOptimizer", "regularizer"])
def test_constructs_the_issue_names_as_unsafe_stay_manual(before, after, where):
    assert_left_whole_pointing_at(SEED, before, after, where)




@pytest.mark.parametrize("line, why", [
    ("  net = make_net(config=features)\n", "`make_net` in the model_fn"),
    ("  shards = config.num_ps_replicas\n", "config.num_ps_replicas: the ps tasks of the cluster"),
], ids=["a keyword named config", "num_ps_replicas"])
def test_what_stops_a_model_fn_taking_config_is_what_it_reads_of_it(line, why):
    source = SEED.replace("def _model_fn(features, labels, mode):\n",
                          "def _model_fn(features, labels, mode, config):\n" + line)
    assert source != SEED
    [finding] = [f for f in run(source, enabled=TIER_1).findings if f.rule == "TFM302"]
    assert why in finding.message and line.strip() in source.splitlines()[finding.line - 1]
    assert ("reads the RunConfig" in finding.message) == ("config." in line)


TRAIN_ONLY_MODEL_FN = ("  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)",
                       "  if mode == tf1.estimator.ModeKeys.TRAIN:\n"
                       "    return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n"
                       "  raise ValueError(f'{mode} is not served')")


def test_a_model_fn_raising_for_the_modes_train_does_not_serve_migrates_where_it_only_trains():
    source = SEED.replace(*TRAIN_ONLY_MODEL_FN).replace(
        "eval_result, _ = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n"
        'print("eval loss: %s" % eval_result["loss"])\n', "estimator.train(_input_fn, max_steps=20)\n")
    assert "raise ValueError" in source and "train_and_evaluate(" not in source
    assert "model.fit(" in migrated(source).source


def test_evaluating_with_a_model_fn_that_raises_for_eval_leaves_the_program():
    source = SEED.replace(*TRAIN_ONLY_MODEL_FN)
    assert source != SEED
    [finding] = [f for f in run(source).findings if f.rule == "TFM302"]
    assert "train_and_evaluate evaluates with a model_fn that raises for EVAL" in finding.message


STEPS_BY_FLAG = '''\
import argparse

import numpy as np
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--num_epochs", type=int, default=2)
parser.add_argument("--num_steps", type=int, help="overrides num_epochs")
parser.add_argument("--num_eval_steps", type=int)
args = parser.parse_args()


def model_fn(features, labels, mode):
    logits = tf.layers.dense(features["x"], 3)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss)


rng = np.random.RandomState(0)
train_data, train_labels = rng.rand(100, 4).astype(np.float32), rng.randint(0, 3, 100).astype(np.int32)
eval_data, eval_labels = rng.rand(30, 4).astype(np.float32), rng.randint(0, 3, 30).astype(np.int32)
classifier = tf.estimator.Estimator(model_fn=model_fn)
train_input_fn = tf.estimator.inputs.numpy_input_fn(
    x={"x": train_data}, y=train_labels, batch_size=16, num_epochs=args.num_epochs, shuffle=False)
eval_input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": eval_data}, y=eval_labels, batch_size=7, num_epochs=1,
                                                   shuffle=False)
classifier.train(input_fn=train_input_fn, steps=args.num_steps)
result = classifier.evaluate(input_fn=eval_input_fn, steps=args.num_eval_steps)
print("trained to step", result["global_step"])
'''


@pytest.mark.parametrize("flag, none_at_run_time", [
    ('"--num_steps", type=int, help="overrides num_epochs"', True),
    ('"--num_steps", type=int, default=None', True),
    ('"--num_steps", type=int, default=5', False),
    ('"--num_steps", type=int, required=True', False),
    ('"--steps", dest="num_steps", type=int', True),
], ids=["no default", "default None", "a default", "required", "dest"])
def test_steps_that_are_none_unless_the_program_is_given_them_train_one_pass_then(flag, none_at_run_time):
    source = STEPS_BY_FLAG.replace('"--num_steps", type=int, help="overrides num_epochs"', flag)
    code = run(source).source
    assert ("train_steps = args.num_steps\n" in code and "\nif train_steps is None:" in code) is none_at_run_time
    assert "eval_steps = args.num_eval_steps\nif eval_steps is None:" in code


@pytest.mark.tensorflow
def test_steps_none_by_default_train_and_evaluate_whole_passes_as_tf1_did(tmp_path):
    """Without --num_steps TF1 trained the input's 2 epochs (200 examples, batches of 16: 13 steps) and evaluated
    the whole eval input; with the flags, those numbers of batches."""
    (tmp_path / "train.py").write_text(run(STEPS_BY_FLAG).source)
    env = {**{k: v for k, v in os.environ.items() if k != "TF_CONFIG"}, "TF_CPP_MIN_LOG_LEVEL": "3"}
    for arguments, step, evaluated in (([], 13, 5), (["--num_steps", "3", "--num_eval_steps", "2"], 3, 2)):
        ran = subprocess.run([sys.executable, "train.py", *arguments], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=600)
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert f"trained to step {step}\n" in ran.stdout
        assert f"\n{evaluated}/{evaluated} - " in ran.stdout  # Keras' progress line of the evaluation's batches
