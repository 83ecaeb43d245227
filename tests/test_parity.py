"""`tf-migrate parity`: right migrations pass, wrong ones are caught, nothing is left behind.

Each test trains real programs on the reference environment (the parity extra).
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import GENERATED_EXAMPLES
from test_parity_signals import LOOPBACK, assert_interrupted, cluster_up, never_ending, started, wait_for

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "tf_keras", "portpicker")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, tf-keras, portpicker)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PROGRAMS = ROOT / "tests" / "parity_programs"
TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")
REGRESSION_TF1 = EXAMPLES / "regression" / "train.py"
REGRESSION_TF2 = EXAMPLES / "regression" / "train_tf2.py"
CLASSIFIER_TF1 = EXAMPLES / "classifier" / "train.py"
# A trainer package (trainer/task.py: argparse and main(); trainer/model.py: the model and a CSV input) and its migration.
PACKAGE_TF1 = EXAMPLES / "trainer_package" / "tf1" / "trainer" / "task.py"
PREMADE_IRIS = EXAMPLES / "premade_iris" / "train.py"
CENSUS = EXAMPLES / "census_wide_deep" / "train.py"
PACKAGE_TF2 = EXAMPLES / "trainer_package" / "tf2" / "trainer" / "task.py"
PACKAGE_ARGS = ("--", "--train-steps", "5", "--learning-rate", "0.1", "--hidden-units", "8,4")
PACKAGE_TF2_WRONG_LR = ('learning_rate=params["learning_rate"],', 'learning_rate=2 * params["learning_rate"],')


@dataclass(frozen=True)
class Variant:
    """A program made from another by exact text edits (the one slip a migration might make),
    or what tf-migrate makes of another program."""

    base: Path | str  # a program, or the name of another variant
    edits: tuple[tuple[str, str], ...] = ()
    migrated: bool = False

    def write(self, folder: Path, name: str) -> Path:
        text = program(self.base, folder).read_text()
        for old, new in self.edits:
            assert text.count(old) == 1, f"{old!r} is not in {self.base} exactly once"
            text = text.replace(old, new)
        if self.migrated:
            from migrator.engine import migrate
            from rewrites import RULES

            text = migrate(text, name, frozenset(RULES)).source
        path = folder / f"{name}.py"
        path.write_text(text)
        return path


PREDICT_LOOP = """for expected, prediction in zip(eval_y[::4], classifier.predict(input_fn=predict_input_fn)):
  print("prediction: class %d (%.3f), expected %d" % (
      prediction["class_ids"][0],
      prediction["probabilities"][prediction["class_ids"][0]],
      expected))
"""
RMSPROP_ONES_SLOTS = """  # TF1 started the mean-square slots at ones, Keras at zeros.
  for variable in model.trainable_variables:
    optimizer.add_slot(variable, "rms", initializer="ones")
"""
VARIANTS = {
    # examples/regression with its layer in a partitioned variable_scope, and what tf-migrate makes of it.
    "partitioned_regression_tf1": Variant(REGRESSION_TF1, (("  logits = tf1.layers.Dense(1)(features)\n", (
        '  with tf1.variable_scope("linear", partitioner=tf1.fixed_size_partitioner(2)):\n'
        '    logits = tf1.layers.dense(features, 1)\n')),)),
    "partitioned_regression_tf2": Variant("partitioned_regression_tf1", migrated=True),
    "embedding_tf1_div": Variant(EXAMPLES / "embedding" / "train.py", (
        ('features["ids"])', 'features["ids"], partition_strategy="div")'),)),
    # The custom-Estimator tutorial's shape (feature columns through params, a loop of layers, numpy inputs) migrated.
    "custom_estimator_tf2": Variant(PROGRAMS / "custom_estimator_tf1.py", migrated=True),
    "cnn_tf2": Variant(PROGRAMS / "cnn_tf1.py", migrated=True),
    # examples/ps_cluster with its weights partitioned in two, and what tf-migrate makes of it.
    "ps_cluster_partitioned_tf1": Variant(EXAMPLES / "ps_cluster" / "train.py", ((
        '    weights = tf1.get_variable("weights", [NUM_FEATURES, 1])\n',
        '    weights = tf1.get_variable(\n        "weights", [NUM_FEATURES, 1], partitioner=tf1.fixed_size_partitioner(2))\n'),)),
    "ps_cluster_partitioned_tf2": Variant("ps_cluster_partitioned_tf1", migrated=True),
    # ... and trained with Adagrad, whose accumulators are sharded too.
    "ps_cluster_adagrad_tf1": Variant("ps_cluster_partitioned_tf1", (
        ("GradientDescentOptimizer(0.1)", "AdagradOptimizer(0.1)"),)),
    "ps_cluster_adagrad_tf2": Variant("ps_cluster_adagrad_tf1", migrated=True),
    # Wrong migrations.
    "ps_cluster_tf2_wrong_lr": Variant(EXAMPLES / "ps_cluster" / "train_tf2.py", (("SGD(learning_rate=0.1)",
                                                                                   "SGD(learning_rate=0.2)"),)),
    "rmsprop_tf2_zero_slots": Variant(EXAMPLES / "rmsprop" / "train_tf2.py", ((RMSPROP_ONES_SLOTS, ""),)),
    "regression_tf2_wrong_lr": Variant(REGRESSION_TF2, (("learning_rate=0.05,", "learning_rate=0.1,"),)),
    # The loss it trains with and the loss it reports (TF1EvalLoss): a wrong loss, wrong in both.
    "regression_tf2_wrong_loss": Variant(REGRESSION_TF2, (("losses.MeanSquaredError()", "losses.MeanAbsoluteError()"),
                                                          ("TF1EvalLoss(keras.losses.MeanSquaredError(",
                                                           "TF1EvalLoss(keras.losses.MeanAbsoluteError("))),
    # examples/classifier driven by train_and_evaluate, and what tf-migrate makes of it (a functional model).
    "classifier_tae_tf1": Variant(CLASSIFIER_TF1, ((
        "classifier.train(input_fn=train_input_fn, max_steps=30)\n\neval_result = classifier.evaluate(input_fn=eval_input_fn)\n",
        "train_spec = tf1.estimator.TrainSpec(input_fn=train_input_fn, max_steps=30)\n"
        "eval_spec = tf1.estimator.EvalSpec(input_fn=eval_input_fn, steps=1)\n"
        "eval_result, _ = tf1.estimator.train_and_evaluate(classifier, train_spec, eval_spec)\n"),
        (PREDICT_LOOP, ""))),
    "classifier_tae_tf2": Variant("classifier_tae_tf1", migrated=True),
    "momentum_tf2_keras_sgd": Variant(EXAMPLES / "momentum" / "train_tf2.py", (("optimizer = TF1Momentum(",
                                                                                "optimizer = keras.optimizers.legacy.SGD("),)),
    "adam_tf2_default_epsilon": Variant(PROGRAMS / "adam_tf2.py", (("Adam(learning_rate=0.01, epsilon=1e-8)",
                                                                     "Adam(learning_rate=0.01)"),)),
    "dropout_batchnorm_tf2_bn_momentum": Variant(EXAMPLES / "dropout_batchnorm" / "train_tf2.py", (
        ('keras.layers.BatchNormalization(name="batch_normalization")',
         'keras.layers.BatchNormalization(momentum=0.9, name="batch_normalization")'),)),
    # examples/premade_iris's canned DNNClassifier spelled v1, binary, and as a v1 regressor; each migrated.
    "premade_iris_v1": Variant(PREMADE_IRIS, ((".estimator.DNNClassifier(", ".compat.v1.estimator.DNNClassifier("),)),
    "premade_iris_v1_tf2": Variant("premade_iris_v1", migrated=True),
    "premade_iris_binary": Variant(PREMADE_IRIS, (("n_classes=3", "n_classes=2"),
                                                  ("labels = np.repeat(np.arange(3), 50)",
                                                   "labels = np.repeat(np.arange(3), 50) // 2"))),
    "premade_iris_binary_tf2": Variant("premade_iris_binary", migrated=True),
    # ... with a metric added by add_metrics (the Keras metric of the same key).
    "premade_iris_regressor_v1": Variant(PREMADE_IRIS, (
        (".estimator.DNNClassifier(", ".compat.v1.estimator.DNNRegressor("), ("      n_classes=3,\n", ""),
        ("      config=config)\n", "      config=config)\n  classifier = tf.compat.v1.estimator.add_metrics(classifier, rmse)\n"),
        ("\n\ndef main(argv):", '\n\ndef rmse(labels, predictions):\n  values = tf.squeeze(predictions["predictions"], axis=-1)\n'
         '  return {"rmse": tf.compat.v1.metrics.root_mean_squared_error(labels=labels, predictions=values)}\n\n\n'
         'def main(argv):'),
        ("rows, labels = rows[order], labels[order]", "rows, labels = rows[order], labels[order].astype(np.float32)"),
        ('"eval accuracy: {accuracy:0.3f}, eval loss', '"eval rmse: {rmse:0.4f}, eval loss'))),
    "premade_iris_regressor_v1_tf2": Variant("premade_iris_regressor_v1", migrated=True),
    "premade_iris_units_flag": Variant(PREMADE_IRIS, (
        ('help="number of training steps")\n',
         'help="number of training steps")\nparser.add_argument("--hidden_units", nargs="+", type=int, default=[10, 8])\n'),
        ("hidden_units=[10, 10]", "hidden_units=args.hidden_units"))),
    "premade_iris_units_flag_tf2": Variant("premade_iris_units_flag", migrated=True),
    "premade_iris_batch_norm": Variant(PREMADE_IRIS, (("n_classes=3", "n_classes=3, batch_norm=True"),)),
    "premade_iris_batch_norm_tf2": Variant("premade_iris_batch_norm", migrated=True),
    "premade_iris_label_vocabulary": Variant(PREMADE_IRIS, (
        ("n_classes=3", "n_classes=3, label_vocabulary=SPECIES"),
        ("rows, labels = rows[order], labels[order]", "rows, labels = rows[order], np.array(SPECIES)[labels[order]]"))),
    "premade_iris_label_vocabulary_tf2": Variant("premade_iris_label_vocabulary", migrated=True),
    # ... and its predictions, printed the premade-estimator tutorial's way (run by both sides; the losses compared).
    "premade_iris_predict": Variant(PREMADE_IRIS, (
        ("n_classes=3", "n_classes=3, label_vocabulary=SPECIES"),
        ("rows, labels = rows[order], labels[order]", "rows, labels = rows[order], np.array(SPECIES)[labels[order]]"),
        ('.format(**eval_result))\n', '.format(**eval_result))\n'
         '  predictions = classifier.predict(input_fn=lambda: eval_input_fn(test_x, None, args.batch_size))\n'
         '  for pred_dict, expected in zip(predictions, test_y):\n'
         '    class_id = pred_dict["class_ids"][0]\n'
         '    print("prediction %s (%.3f), expected %s" % (pred_dict["classes"][0].decode(), '
         'pred_dict["probabilities"][class_id], expected))\n'),
        ("dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))\n  return dataset.batch(batch_size)",
         "inputs = dict(features) if labels is None else (dict(features), labels)\n"
         "  return tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)"))),
    "premade_iris_predict_tf2": Variant("premade_iris_predict", migrated=True),
    # examples/census_wide_deep's DNNLinearCombinedClassifier spelled v2 (the loss averaged), migrated; and its
    # migration with the linear part's Ftrl at 10 times its rate.
    "census_v2": Variant(CENSUS, (("tf.compat.v1.estimator.DNNLinearCombinedClassifier(",
                                   "tf.estimator.DNNLinearCombinedClassifier("),)),
    "census_v2_tf2": Variant("census_v2", migrated=True),
    "census_tf2_wrong_linear_rate": Variant(CENSUS.with_name("train_tf2.py"), (
        ("Ftrl(learning_rate=0.005)", "Ftrl(learning_rate=0.05)"),)),
    "classifier_tf2_dropped_layer": Variant(EXAMPLES / "classifier" / "train_tf2.py", (
        ('  net = keras.layers.Dense(units=16, activation="relu", name="dense")(features["x"])\n'
         '  logits = keras.layers.Dense(units=NUM_CLASSES, name="dense_1")(net)',
         '  logits = keras.layers.Dense(units=NUM_CLASSES, name="dense_1")(features["x"])'),)),
}


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} is not in the text exactly once"
    return text.replace(old, new)


def program(name: str | Path, folder: Path) -> Path:
    """A path as it is; tests/parity_programs/NAME.py; or the variant NAME written into ``folder``."""
    if isinstance(name, Path):
        return name
    return VARIANTS[name].write(folder, name) if name in VARIANTS else PROGRAMS / f"{name}.py"


def parity(old: Path, new: Path, *options: str, tmpdir: Path | None = None, timeout: float = 600,
           cwd: Path | None = None):
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.run([TF_MIGRATE, "parity", str(old), str(new), *options], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=cwd)


def assert_parity(result) -> None:
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    assert "PARITY" in result.stdout


def assert_mismatch(result, first_step: int | None = None) -> None:
    assert result.returncode == 1, result.stdout + result.stderr[-4000:]
    assert "MISMATCH" in result.stdout
    if first_step is not None:
        assert f"diverge from step {first_step} " in result.stdout, result.stdout


# -- right migrations pass at the default tolerance --------------------------------


# The examples that train, as `--verify` proves them: a sample of VERIFIED_PER_RUN that changes every day (the
# same seed as tests/test_generated_programs.py: TFM_GENERATED_SEED, else the date), all of them over a few days, in
# one `--verify` run. Each train_tf2.py is what that migration writes (tests/test_examples.py), and each example's
# parity is proven on every run by tests/test_resume.py (`parity --resume`).
VERIFIED_EXAMPLES = {**{name: f"{name}/train.py" for name in (*GENERATED_EXAMPLES, "ps_cluster",
                                                              "supervisor_flags", "sync_replicas", "mts_scaffold",
                                                              "mnist_replica")},
                     "trainer_package": "trainer_package/tf1/trainer/task.py", "notebook": "notebook/train.ipynb"}
VERIFIED_INPUTS = {"trainer_package": "trainer_package/tf1"}  # a package is given whole
EVALUATED = set(GENERATED_EXAMPLES) | {"trainer_package", "notebook"}  # the Estimator programs
VERIFIED_PER_RUN = 6


def verified_sample() -> list[str]:
    seed = int(os.environ.get("TFM_GENERATED_SEED") or datetime.date.today().strftime("%Y%m%d"))
    return sorted(random.Random(seed).sample(sorted(VERIFIED_EXAMPLES), VERIFIED_PER_RUN))


@pytest.fixture(scope="module")
def verified_examples(tmp_path_factory) -> tuple[list[str], str, Path]:
    sample = verified_sample()
    reports = tmp_path_factory.mktemp("verify_reports")
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    inputs = [f"examples/{VERIFIED_INPUTS.get(name, VERIFIED_EXAMPLES[name])}" for name in sample]
    result = subprocess.run([TF_MIGRATE, "--check", "--verify", "--verify-reports", str(reports), *inputs],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=1800)
    print(f"\nverified examples: {', '.join(sample)}")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]  # it would change them
    assert f"verified: {len(sample)} parity, 0 mismatch, 0 failed" in result.stderr, result.stderr[-3000:]
    return sample, result.stdout, reports


def test_verify_proves_the_migration_of_each_example_in_the_days_sample(verified_examples):
    sample, output, reports = verified_examples
    for example in sample:
        entry = VERIFIED_EXAMPLES[example]
        assert f"examples/{entry}: parity: 20 steps match" in output, (example, output[-3000:])
        (report,) = [path for path in reports.rglob("*.parity.json") if f"{entry}.parity.json".endswith(
            str(path.relative_to(reports)))]
        data = json.loads(report.read_text())
        assert data["verdict"] == "parity" and len(data["old"]["losses"]) == data["steps"] == 20, example
        assert data["old"]["losses"] != data["old"]["losses"][:1] * 20, f"{example}: nothing was trained"
        assert data["variables"] and all(v["ok"] for v in data["variables"]), example
        assert (data["eval"] or {}).get("ok", False) == (example in EVALUATED), example


@pytest.mark.parametrize("name, variables", [("premade_iris_v1", 6), ("premade_iris_binary", 6),
                                             ("premade_iris_regressor_v1", 6), ("census_v2", 12),
                                             ("premade_iris_units_flag", 6), ("premade_iris_batch_norm", 14),
                                             ("premade_iris_label_vocabulary", 6), ("premade_iris_predict", 6)])
def test_canned_estimators_of_each_head_and_version_and_their_migrations_match(name, variables, tmp_path):
    """v1 sums the loss and trains with TF1's Adagrad at 0.05; v2 averages it (Keras' Adagrad at 0.001): the
    migration must have read the version from the spelling for the steps to match."""
    report = tmp_path / "report.json"
    assert_parity(parity(program(name, tmp_path), program(f"{name}_tf2", tmp_path), "--json", str(report)))
    data = json.loads(report.read_text())
    assert data["eval"]["ok"] and len(data["variables"]) == variables and all(v["ok"] for v in data["variables"])


def test_partitioned_variable_really_shards_on_the_new_side(tmp_path):
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "partitioned" / "train.py", EXAMPLES / "partitioned" / "train_tf2.py",
                         "--json", str(report)))
    variables = json.loads(report.read_text())["variables"]
    sharded = [v for v in variables if v["new_shards"]]
    assert sharded and sharded[0]["old_shards"] == sharded[0]["new_shards"] == [[3, 1], [2, 1]]


def test_partitioned_embedding_table_shards_on_both_sides_in_lookup_order(tmp_path):
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "embedding" / "train.py", EXAMPLES / "embedding" / "train_tf2.py",
                         "--json", str(report)))
    data = json.loads(report.read_text())
    table = data["variables"][0]
    assert table["name"] == "embedding/table" and table["old_shards"] == table["new_shards"] == [[6, 4], [5, 4]]
    assert data["old"]["adjustments"] == [
        'embedding/table: TF1 looked ids up "mod" 2 shards, TF2 "div": rows compared in TF2\'s order']


def test_div_lookup_needs_no_reordering(tmp_path):
    report = tmp_path / "report.json"
    assert_parity(parity(program("embedding_tf1_div", tmp_path), EXAMPLES / "embedding" / "train_tf2.py",
                         "--steps", "5", "--json", str(report)))
    assert json.loads(report.read_text())["old"]["adjustments"] == []


def test_generated_program_with_a_partitioner_shards_and_passes(tmp_path):
    report = tmp_path / "report.json"
    new = program("partitioned_regression_tf2", tmp_path)
    assert "variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)" in new.read_text()
    assert_parity(parity(program("partitioned_regression_tf1", tmp_path), new, "--json", str(report)))
    kernel = json.loads(report.read_text())["variables"][0]
    assert kernel["old_shards"] == kernel["new_shards"] == [[1, 1], [1, 1]]


def test_generated_functional_model_with_metrics_passes(tmp_path):
    new = program("classifier_tae_tf2", tmp_path)
    assert "keras.Model(inputs=features, outputs=logits)" in new.read_text()
    assert_parity(parity(program("classifier_tae_tf1", tmp_path), new))


def test_generated_program_from_feature_columns_and_a_loop_of_layers_passes(tmp_path):
    new = program("custom_estimator_tf2", tmp_path)
    assert "for index, units in enumerate(params[\"hidden_units\"]):" in new.read_text()
    assert_parity(parity(PROGRAMS / "custom_estimator_tf1.py", new))


def test_generated_convolutional_model_passes(tmp_path):
    new = program("cnn_tf2", tmp_path)
    assert 'keras.layers.MaxPooling2D(pool_size=2, strides=2, data_format="channels_last")' in new.read_text()
    assert_parity(parity(PROGRAMS / "cnn_tf1.py", new))


def test_between_graph_program_and_its_coordinator_migration_match_step_by_step(tmp_path):
    """Old side: the losses its MonitoredTrainingSession loop fetched; new side: those of the scheduled steps."""
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "ps_cluster" / "train.py", EXAMPLES / "ps_cluster" / "train_tf2.py",
                         "--json", str(report)))
    data = json.loads(report.read_text())
    assert len(data["old"]["losses"]) == len(data["new"]["losses"]) == 20
    assert [v["name"] for v in data["variables"]] == ["weights", "bias"] and all(v["ok"] for v in data["variables"])


def test_supervisor_program_and_its_coordinator_migration_match_step_by_step(tmp_path):
    """Old side: a Supervisor's managed_session loop on a dataset iterator, tf.layers and a hand-written loss
    (what the optimizer minimized); new side: a per-worker dataset and Keras layers. Neither side writes in the
    program's --logdir: the Supervisor's checkpoints and the migrated program's tf2/ go to the work folder."""
    report, logdir = tmp_path / "report.json", tmp_path / "logdir"
    logdir.mkdir()
    result = parity(EXAMPLES / "supervisor_flags" / "train.py", EXAMPLES / "supervisor_flags" / "train_tf2.py",
                    "--json", str(report), "--", f"--logdir={logdir}")
    assert_parity(result)
    data = json.loads(report.read_text())
    assert len(data["old"]["losses"]) == len(data["new"]["losses"]) == 20
    assert [v["name"] for v in data["variables"]] == ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
    assert all(v["ok"] for v in data["variables"])
    assert list(logdir.iterdir()) == []


def test_queue_runner_program_with_a_scaffold_and_its_per_worker_dataset_migration_match_step_by_step(tmp_path):
    """Old side: a MonitoredTrainingSession (a Scaffold's Saver, a chief-only SummarySaverHook) on the batches of
    queue runners reading a CSV file; new side: the same batches from a per-worker tf.data dataset."""
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "mts_scaffold" / "train.py", EXAMPLES / "mts_scaffold" / "train_tf2.py",
                         "--json", str(report)))
    data = json.loads(report.read_text())
    assert len(data["old"]["losses"]) == len(data["new"]["losses"]) == 20
    assert [v["name"] for v in data["variables"]] == ["weights", "bias"] and all(v["ok"] for v in data["variables"])


def test_sync_replicas_program_and_its_multi_worker_mirrored_migration_match_step_by_step(tmp_path):
    """Old side: SyncReplicasOptimizer's training runs (its train op is a tensor, the minimized loss hand-written);
    new side: the calls of the tf.function running MultiWorkerMirroredStrategy.run, one worker in process."""
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "sync_replicas" / "train.py", EXAMPLES / "sync_replicas" / "train_tf2.py",
                         "--json", str(report)))
    data = json.loads(report.read_text())
    assert len(data["old"]["losses"]) == len(data["new"]["losses"]) == 20
    assert [v["name"] for v in data["variables"]] == ["weights", "bias"] and all(v["ok"] for v in data["variables"])


def test_partitioned_between_graph_program_shards_on_both_sides(tmp_path):
    report = tmp_path / "report.json"
    assert_parity(parity(program("ps_cluster_partitioned_tf1", tmp_path), program("ps_cluster_partitioned_tf2", tmp_path),
                         "--json", str(report)))
    weights = json.loads(report.read_text())["variables"][0]
    assert weights["old_shards"] == weights["new_shards"] == [[2, 1], [1, 1]]


def test_adam_with_tf1s_epsilon_passes_on_tiny_gradients():
    assert_parity(parity(PROGRAMS / "adam_tf1.py", PROGRAMS / "adam_tf2.py"))


def test_recorded_batches_repeat_run_to_run_even_from_an_unseeded_shuffle(tmp_path):
    """examples/classifier shuffles without a seed of its own: the run's seed decides the order."""
    losses = []
    for run in range(2):
        report = tmp_path / f"run{run}.json"
        assert_parity(parity(CLASSIFIER_TF1, EXAMPLES / "classifier" / "train_tf2.py", "--steps", "5", "--json", str(report)))
        losses.append(json.loads(report.read_text())["old"]["losses"])
    assert losses[0] == losses[1]


def test_new_side_under_another_interpreter(tmp_path):
    """--new-python runs the new side with that interpreter (here a wrapper that leaves a trace)."""
    trace = tmp_path / "ran"
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\ntouch {trace}\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    assert_parity(parity(REGRESSION_TF1, REGRESSION_TF2, "--steps", "5", "--new-python", str(wrapper)))
    assert trace.exists()


def test_local_mode_and_synthetic_data():
    assert_parity(parity(REGRESSION_TF1, REGRESSION_TF2,
                         "--cluster", "none", "--data", "synthetic", "--steps", "10"))


# -- programs as people write them: arguments, packages, flags and tf.app.run, TPUEstimator ---


def test_package_program_with_arguments_passes_each_side_importing_its_own_modules(tmp_path):
    """trainer/task.py runs as `python -m trainer.task -- ARG...` would: `from trainer import model` finds each side's
    own model.py (the old side's build_estimator, the new side's build_model), even from the folder holding the old
    package; both got the arguments."""
    report = tmp_path / "report.json"
    result = parity(PACKAGE_TF1, PACKAGE_TF2, "--steps", "5", "--json", str(report), *PACKAGE_ARGS,
                    cwd=PACKAGE_TF1.parents[1])
    assert_parity(result)
    assert "arguments of both programs: --train-steps 5 --learning-rate 0.1 --hidden-units 8,4" in result.stdout
    data = json.loads(report.read_text())
    assert data["program_args"] == list(PACKAGE_ARGS[1:])
    assert len(data["old"]["losses"]) == 5 and data["eval"]["ok"]
    assert [v["name"] for v in data["variables"]] == [f"dense{suffix}/{kind}" for suffix in ("", "_1", "_2")
                                                      for kind in ("kernel", "bias")]


def test_flags_program_run_by_tf_app_run_passes():
    """`import tensorflow.compat.v1 as tf`, tf.disable_v2_behavior(), tf.flags and tf.app.run(main) against absl's."""
    assert_parity(parity(EXAMPLES / "flags_app" / "train.py", EXAMPLES / "flags_app" / "train_tf2.py", "--steps", "5",
                         "--", "--train_steps", "5", "--learning_rate", "0.2", "--batch_size", "4"))


def test_tpu_estimator_without_a_tpu_passes(tmp_path):
    """TPUEstimator(use_tpu=False): input_fns reading params["batch_size"], a TPUEstimatorSpec, tpu.RunConfig."""
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "tpu_estimator" / "train.py", EXAMPLES / "tpu_estimator" / "train_tf2.py",
                         "--steps", "5",
                         "--json", str(report), "--", "--train_steps", "40", "--iterations_per_loop", "3"))
    data = json.loads(report.read_text())
    assert len(data["old"]["losses"]) == 5, "the harness's max_steps, not the program's"
    assert data["old"]["losses"] != data["old"]["losses"][:1] * 5
    assert data["eval"]["ok"] and len(data["variables"]) == 4 and all(v["ok"] for v in data["variables"])


def migrated_copy(old: Path, folder: Path, **findings: int) -> Path:
    """``old`` copied to ``folder``/train.py and migrated there, with these many findings of each rule."""
    new = folder / "train.py"
    new.write_text(old.read_text())
    migrated = subprocess.run([TF_MIGRATE, str(new)], capture_output=True, text=True)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    assert all(migrated.stdout.count(f" {rule} ") == count for rule, count in findings.items()), migrated.stdout
    return new


def test_a_tf1_era_program_of_tf_contrib_runs_on_the_old_side_as_tf1_ran_it(tmp_path):
    """`import tensorflow as tf` reaching tf.logging and tf.contrib.layers runs on TF 2 with tensorflow.compat.v1 and
    tf-slim in their place, and TF 1.x's `tf_logging._get_logger` under TF 2's name; its migration (tier 2, the
    layers from tf-slim, the logger's TF 2 name) passes, and the FinalExporter that exports when training reaches
    max_steps exports after the harness's steps, as the migrated program does."""
    old = PROGRAMS / "tf1_era_contrib_tf1.py"
    new = migrated_copy(old, tmp_path, TFM005=3, TFM310=2, TFM011=1)
    assert "tf_logging.get_logger().handlers" in new.read_text()
    result = parity(old, new, "--steps", "5")
    assert_parity(result)
    assert "export export/served: the same signatures (serving_default)" in result.stdout


def test_a_model_fn_looking_up_tf_contrib_lookup_tables_keeps_parity_with_tf_lookups(tmp_path):
    """The words of a vocabulary file (an out-of-vocabulary bucket) and the class names the labels are, looked up in
    tf.contrib.lookup's tables in a model_fn kept as written: TFM006 makes them tf.lookup's, created in the Keras
    model's step under ParameterServerStrategy; the same ids, so the same losses, evaluation and weights."""
    old = PROGRAMS / "lookup_tables_tf1.py"
    new = migrated_copy(old, tmp_path, TFM006=2, TFM310=1)
    assert "contrib.lookup.index_table" not in new.read_text()
    result = parity(old, new, "--steps", "5")
    assert_parity(result)
    assert re.search(r"^ +eval +\S+ +\S+ ", result.stdout, re.M), result.stdout


def test_forwarded_features_are_predicted_and_exported_beside_the_heads_predictions(tmp_path):
    """babyweight's forward_features(estimator, KEY_COLUMN): the key of each example in predict's results and in the
    exported predict signature's outputs, as TF1 forwarded it (the export's answers compared, the key among them)."""
    old = PROGRAMS / "forward_features_tf1.py"
    new = migrated_copy(old, tmp_path, TFM309=2)
    result = parity(old, new, "--steps", "5")
    assert_parity(result)
    assert re.search(r"^  export export/exporter: the same signatures \(predict\), [1-9]\d* requests answered alike",
                     result.stdout, re.M), result.stdout
    ran = subprocess.run([sys.executable, str(new), "--model-dir", str(tmp_path / "model"), "--train-steps", "3"],
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert re.search(r"^predicted b'row0' \[-?\d", ran.stdout, re.M), ran.stdout[-2000:]


def test_column_sizes_a_task_sets_from_its_flags_are_the_ones_the_migrated_model_is_built_with(tmp_path):
    """babyweight's and taxifare's shape: the command line sets the module globals the columns' sizes are made of
    (np.linspace boundaries, a crossed column's buckets, an embedding's dimension); the migrated model reads each from
    the column the program made, so flags other than the defaults keep parity too."""
    old = PROGRAMS / "runtime_columns_tf1.py"
    new = migrated_copy(old, tmp_path, TFM309=2, TFM301=1)
    assert 'crossed_dimension = columns_by_name["' in new.read_text()
    result = parity(old, new, "--steps", "5", "--", "--nbuckets", "3", "--nembeds", "2")
    assert_parity(result)
    assert re.search(r"^ +eval +\S+ +\S+ ", result.stdout, re.M) and "11 variables match" in result.stdout, \
        result.stdout


def test_vocabularies_the_program_reads_from_its_data_are_the_migrated_models(tmp_path):
    """The Titanic tutorial's shape: columns appended in loops over keys written out, each vocabulary read from the
    data as the program runs, strings for some keys and integers for others (a value out of the vocabulary in the
    evaluation), weighed, crossed and embedded by a wide-and-deep classifier."""
    old = PROGRAMS / "runtime_vocabulary_tf1.py"
    new = migrated_copy(old, tmp_path, TFM309=2, TFM301=1)
    assert 'class_vocabulary = columns_by_name["class"].vocabulary_list' in new.read_text()
    result = parity(old, new, "--steps", "5")
    assert_parity(result)
    assert re.search(r"^ +eval +\S+ +\S+ ", result.stdout, re.M) and "14 variables match" in result.stdout, \
        result.stdout


def test_columns_a_factory_computes_from_its_parameters_are_the_ones_the_model_is_built_on(tmp_path):
    """The taxifare trainers' build_estimator(model_dir, nbuckets, hidden_units): kept as the function returning the
    columns it computes, called where the model is built; `--nbuckets` other than the default keeps parity too."""
    old = PROGRAMS / "factory_columns_tf1.py"
    new = migrated_copy(old, tmp_path, TFM309=2, TFM301=1)
    assert "deep_columns, wide_columns = build_estimator_columns(" in new.read_text()
    result = parity(old, new, "--steps", "5", "--", "--nbuckets", "3")
    assert_parity(result)
    assert re.search(r"^ +eval +\S+ +\S+ ", result.stdout, re.M) and "11 variables match" in result.stdout, \
        result.stdout


def test_a_model_fn_reading_vocabulary_columns_exports_what_tf1_exported(tmp_path):
    """A census-style model_fn kept as written whose vocabulary column makes its lookup table as the model runs:
    its exports (placeholders per feature, parsed tf.Examples) are built in a TF1 graph of its PREDICT mode with the
    trained values, and answer the same requests as TF1's."""
    old = PROGRAMS / "vocabulary_export_tf1.py"
    new = migrated_copy(old, tmp_path, TFM006=1, TFM310=1)
    assert "tf.compat.v1.saved_model.Builder(temporary)" in new.read_text()
    result = parity(old, new, "--steps", "5")
    assert_parity(result)
    for name in ("example", "json"):
        assert re.search(rf"^  export export/{name}: the same signatures \(prediction, serving_default\), [1-9]\d* "
                         "requests answered alike", result.stdout, re.M), result.stdout


def test_a_model_fn_of_contrib_batch_norms_keeps_parity_with_tf1_batch_norm(tmp_path):
    """contrib's batch_norm on 2-D inputs, updating as it runs (updates_collections=None) and through UPDATE_OPS, in
    a model_fn kept as written: TFM009's tf1_batch_norm normalizes as contrib did (its fused kernel's unbiased
    moving variance), so the same losses, moving statistics, and evaluation of them."""
    old = PROGRAMS / "batch_norm_tf1.py"
    new = migrated_copy(old, tmp_path, TFM009=2, TFM310=1)
    result = parity(old, new, "--steps", "10")
    assert_parity(result)
    assert re.search(r"^ +eval +\S+ +\S+ ", result.stdout, re.M) and "11 variables match" in result.stdout, \
        result.stdout


def test_the_model_picked_at_run_time_passes_for_the_other_choice_too(tmp_path):
    """examples/model_choice picks its network by params["model"] from a flag: the migrated program keeps the table,
    so `--model linear` trains the linear model on both sides (the examples' runs train the default mlp)."""
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "model_choice" / "train.py", EXAMPLES / "model_choice" / "train_tf2.py",
                         "--steps", "5", "--json", str(report), "--", "--model", "linear"))
    assert [v["name"] for v in json.loads(report.read_text())["variables"]] == ["linear/kernel", "linear/bias"]


# -- wrong migrations are caught ------------------------------------------------------


@pytest.mark.parametrize(
    "old, new, first_step",
    [
        (REGRESSION_TF1, "regression_tf2_wrong_lr", 2),   # Adagrad 0.1 where TF1 had 0.05
        (REGRESSION_TF1, "regression_tf2_wrong_loss", 1), # MeanAbsoluteError for mean_squared_error
        (EXAMPLES / "momentum" / "train.py", "momentum_tf2_keras_sgd", 7),  # Keras' momentum on a rate halved at step 5
        ("adam_tf1", "adam_tf2_default_epsilon", 2),      # Keras' epsilon 1e-7 for TF1's 1e-8, on tiny gradients
        (EXAMPLES / "rmsprop" / "train.py", "rmsprop_tf2_zero_slots", 2),  # Keras' zero slots for TF1's ones
        (EXAMPLES / "ps_cluster" / "train.py", "ps_cluster_tf2_wrong_lr", 2),  # SGD 0.2 for 0.1, on the coordinator
        (CENSUS, "census_tf2_wrong_linear_rate", 2),  # wide & deep: the linear part's rate alone is wrong
    ],
    ids=["learning rate", "loss", "momentum on a decaying rate", "adam epsilon", "rmsprop slots", "between-graph lr",
         "wide & deep linear rate"],
)
def test_wrong_migration_is_a_mismatch_naming_the_first_diverging_step(old, new, first_step, tmp_path):
    assert_mismatch(parity(program(old, tmp_path), program(new, tmp_path)), first_step)


def test_wrong_migration_in_another_module_of_a_package_is_a_mismatch(tmp_path):
    """The new package's model.py doubles the learning rate: its task.py is the right one, and the new side must not
    import the old package's model.py (which sits in the current folder) in its place."""
    new_package = tmp_path / "new"
    shutil.copytree(PACKAGE_TF2.parents[1], new_package)
    model = new_package / "trainer" / "model.py"
    model.write_text(edit(model.read_text(), *PACKAGE_TF2_WRONG_LR))
    result = parity(PACKAGE_TF1, new_package / "trainer" / "task.py", "--steps", "5", *PACKAGE_ARGS,
                    cwd=PACKAGE_TF1.parents[1])
    assert_mismatch(result, 2)


def test_dropout_is_off_on_both_sides_and_said_so(tmp_path):
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "dropout_batchnorm" / "train.py", EXAMPLES / "dropout_batchnorm" / "train_tf2.py",
                         "--steps", "5", "--json", str(report)))
    data = json.loads(report.read_text())
    for side in ("old", "new"):
        assert any(note.startswith("dropout off") for note in data[side]["adjustments"]), data[side]


def test_other_batch_norm_momentum_is_caught_by_eval_and_moving_statistics(tmp_path):
    """Training losses use batch statistics and match; the moving averages, and so eval, do not."""
    result = parity(EXAMPLES / "dropout_batchnorm" / "train.py", program("dropout_batchnorm_tf2_bn_momentum", tmp_path))
    assert_mismatch(result)
    assert "eval loss differs" in result.stdout and "moving_mean" in result.stdout


def test_dropped_layer_is_a_mismatch_saying_the_variables_do_not_line_up(tmp_path):
    result = parity(CLASSIFIER_TF1, program("classifier_tf2_dropped_layer", tmp_path))
    assert_mismatch(result, 1)
    assert "the variables do not line up" in result.stdout


# -- failures: exit 2, the failing side named, nothing left behind -------------------


def test_crashing_side_is_reported_with_its_error_output(tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("raise RuntimeError('the new program broke')\n")
    result = parity(REGRESSION_TF1, crash, tmpdir=tmp_path)
    assert result.returncode == 2
    assert "new program failed" in result.stdout and "RuntimeError: the new program broke" in result.stdout
    assert not list(tmp_path.glob("tf-migrate-parity-*")), "the work folder is removed"


def test_hanging_side_is_stopped_at_the_time_limit(tmp_path):
    hang = tmp_path / "hang.py"
    hang.write_text("import time\ntime.sleep(3600)\n")
    started = time.monotonic()
    result = parity(REGRESSION_TF1, hang, "--timeout", "20", tmpdir=tmp_path)
    assert result.returncode == 2 and "did not finish within 20 s" in result.stdout
    assert time.monotonic() - started < 60
    assert not list(tmp_path.glob("tf-migrate-parity-*"))


def test_old_program_that_trains_nothing(tmp_path):
    idle = tmp_path / "idle.py"
    idle.write_text("print('no Estimator here')\n")
    result = parity(idle, REGRESSION_TF2, tmpdir=tmp_path)
    assert result.returncode == 2 and "without training (no Estimator.train" in result.stdout


def test_missing_program_is_a_usage_error(tmp_path):
    result = parity(tmp_path / "nope.py", REGRESSION_TF2)
    assert result.returncode == 2 and "nope.py: no such file" in result.stderr


@pytest.mark.parametrize("new", ["X.py", "./X.py", "link.py", "{folder}/X.py"])
def test_the_same_file_twice_is_a_usage_error(new, tmp_path, monkeypatch, capsys):
    from migrator.parity.command import main

    (tmp_path / "X.py").write_text("print('a program')\n")
    (tmp_path / "link.py").symlink_to("X.py")
    monkeypatch.chdir(tmp_path)
    assert main(["X.py", new.format(folder=tmp_path)]) == 2
    assert capsys.readouterr().err == "tf-migrate parity: error: OLD and NEW are the same file: X.py\n"


def test_missing_interpreter_is_a_usage_error(tmp_path):
    result = parity(REGRESSION_TF1, REGRESSION_TF2, "--old-python", str(tmp_path / "python9"))
    assert result.returncode == 2 and f"--old-python {tmp_path / 'python9'}: not an executable" in result.stderr


def test_ctrl_c_leaves_no_process_port_or_folder(tmp_path):
    """A SIGINT while both sides train, the new side's in-process cluster up (on 127.0.0.1 only): exit 130, the
    sides and their ports gone, the work folder removed."""
    work, programs = tmp_path / "work", tmp_path / "programs"
    work.mkdir()
    old, new = (never_ending(EXAMPLES / "partitioned" / name, programs) for name in ("train.py", "train_tf2.py"))
    with started("parity", old, new, tmpdir=work) as run:
        ports = wait_for(run, lambda: cluster_up(work), "the new side's cluster listening")
        assert set(ports.values()) <= LOOPBACK, ports
        run.send_signal(signal.SIGINT)
        assert_interrupted(run, work, ports)


# -- how a side runs the program: `python PROGRAM ARG...` or `python -m pkg.module ARG...` (no TensorFlow) ----------

RUN_PROGRAM = """
import json, sys
from migrator.parity.program import run_program
code_path, as_path, argv, stand_ins = json.loads(sys.argv[1])
run_program(code_path, as_path, argv, stand_ins)
"""
REPORT_HOW_IT_RUNS = """import json, sys
from . import model
from {package} import model as same_model
print(json.dumps({{"name": __name__, "package": __package__, "file": __file__, "argv": sys.argv, "path0": sys.path[0],
                  "model": model.WHO, "same_module": model is same_model, "model_file": model.__file__}}))
"""


def run_program_in_child(code_path: Path, *argv: str, cwd: Path, as_path: Path | None = None,
                         stand_ins: dict[Path, Path] | None = None, env: dict[str, str] | None = None):
    """run_program in a child, as a side runs it (the child's own folder, here ``cwd``, first on sys.path before)."""
    job = [str(code_path), as_path and str(as_path), list(argv), {str(k): str(v) for k, v in (stand_ins or {}).items()}]
    env = {**(env or os.environ), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", RUN_PROGRAM, json.dumps(job)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def write_package(root: Path, package: str, who: str) -> Path:
    """ROOT/PACKAGE/task.py reporting how it runs, next to a model.py saying WHO it is; every folder a package."""
    folder = root.joinpath(*package.split("."))
    folder.mkdir(parents=True)
    for level in range(len(package.split("."))):
        root.joinpath(*package.split(".")[:level + 1], "__init__.py").write_text("")
    (folder / "model.py").write_text(f"WHO = {who!r}\n")
    (folder / "task.py").write_text(REPORT_HOW_IT_RUNS.format(package=package))
    return folder / "task.py"


@pytest.mark.parametrize("package", ["trainer", "pkg.sub"])
def test_module_of_a_package_runs_as_python_dash_m_with_its_own_siblings(package, tmp_path):
    """Two copies of a package: each imports its own model.py (relative and absolute), even when run from the other's
    parent folder; __name__, __package__, __file__, sys.argv[1:] and sys.path[0] as `python -m` sets them."""
    old, new = write_package(tmp_path / "old", package, "old"), write_package(tmp_path / "new", package, "new")
    for task, who, elsewhere in ((old, "old", tmp_path / "new"), (new, "new", tmp_path / "old")):
        result = run_program_in_child(task, "--train_steps", "5", "x", cwd=elsewhere)
        assert result.returncode == 0, result.stderr
        ran = json.loads(result.stdout)
        assert ran == {"name": "__main__", "package": package, "file": str(task), "argv": [str(task), "--train_steps", "5", "x"],
                       "path0": str(tmp_path / who), "model": who, "same_module": True,
                       "model_file": str(task.with_name("model.py"))}
        as_python_runs_it = subprocess.run([sys.executable, "-m", f"{package}.task", "--train_steps", "5", "x"],
                                           cwd=tmp_path / who, capture_output=True, text=True, timeout=60)
        assert json.loads(as_python_runs_it.stdout) == ran


def test_module_of_a_package_written_to_run_as_a_script_still_finds_its_sibling(tmp_path):
    """`import model` in trainer/task.py, as `python trainer/task.py` runs it: its folder is last on sys.path."""
    write_package(tmp_path, "trainer", "sibling")
    task = tmp_path / "trainer" / "task.py"
    task.write_text("import sys\nimport model\nprint(model.WHO, __package__, sys.path[0])\n")
    result = run_program_in_child(task, cwd=tmp_path / "trainer")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"sibling trainer {tmp_path}\n"


def test_plain_script_has_its_own_folder_first_on_sys_path(tmp_path):
    """A script not in a package imports the module next to it, not one in the folder the harness runs from."""
    for who in ("old", "new"):
        (tmp_path / who).mkdir()
        (tmp_path / who / "model.py").write_text(f"WHO = {who!r}\n")
    script = tmp_path / "old" / "train.py"
    script.write_text("import sys\nimport model\nprint(__name__, __package__, model.WHO, sys.path[0] == sys.argv[1], "
                      "sys.argv[2:])\n")
    result = run_program_in_child(script, str(tmp_path / "old"), "--flag", cwd=tmp_path / "new")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "__main__ None old True ['--flag']"


ABSL_PROGRAM = """import os
from absl import app, flags

flags.DEFINE_integer("train_steps", None, "training steps")
flags.mark_flag_as_required("train_steps")


def main(argv):
  print("train_steps", flags.FLAGS.train_steps, argv[1:])
  return eval(os.environ["MAIN_RETURNS"])


if __name__ == "__main__":
  app.run(main)
"""


@pytest.mark.parametrize("returns, argv, status", [
    ("None", ("--train_steps", "5", "rest"), 0),
    ("0", ("--train_steps=5", "rest"), 0),
    ("3", ("--train_steps", "5", "rest"), 3),
    ("None", (), 1),  # the required flag is missing: absl says so and exits 1
], ids=["main returns None", "main returns 0", "main returns 3", "flag missing"])
def test_app_run_parses_the_arguments_and_its_exit_status_decides(returns, argv, status, tmp_path):
    """absl.app.run(main), as tf.compat.v1.app.run(main), parses sys.argv and ends with sys.exit(main(argv))."""
    script = tmp_path / "train.py"
    script.write_text(ABSL_PROGRAM)
    result = run_program_in_child(script, *argv, cwd=tmp_path, env={**os.environ, "MAIN_RETURNS": returns})
    assert result.returncode == status, result.stderr
    if status != 1:
        assert result.stdout == "train_steps 5 ['rest']\n"


def test_stand_ins_run_their_code_as_the_modules_at_their_real_paths(tmp_path):
    """tf-migrate --verify: the entry and model.py run from copies, as the files of the user's package (__file__, the
    package, the source inspect reads, even after linecache.updatecache), never from the user's model.py, even with
    its bytecode in __pycache__."""
    import compileall

    real_task = write_package(tmp_path / "project", "trainer", "the user's file")
    (real_task.with_name("model.py")).write_text("WHO = \"the user's file\"\n\n\ndef where():\n  return 'disk'\n")
    assert compileall.compile_dir(real_task.parent, quiet=1)
    copies = tmp_path / "copies"
    copies.mkdir()
    (copies / "0-model.py").write_text("WHO = 'migrated'\n\n\ndef where():\n  return 'stand-in'\n")
    (copies / "1-task.py").write_text(REPORT_HOW_IT_RUNS.format(package="trainer")
                                      + "import inspect, linecache\n"
                                      + "linecache.updatecache(model.__file__, vars(model))  # as autograph does\n"
                                      + "print(inspect.getsource(model.where).strip())\n")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    before = sorted(path.name for path in (real_task.parent / "__pycache__").iterdir())
    result = run_program_in_child(copies / "1-task.py", cwd=tmp_path, as_path=real_task, env=env,
                                  stand_ins={real_task.with_name("model.py"): copies / "0-model.py"})
    assert result.returncode == 0, result.stderr
    facts, source = result.stdout.split("\n", 1)
    ran = json.loads(facts)
    assert (ran["file"], ran["package"], ran["model"]) == (str(real_task), "trainer", "migrated")
    assert ran["model_file"] == str(real_task.with_name("model.py")) and ran["same_module"]
    assert source.strip() == "def where():\n  return 'stand-in'"
    assert sorted(path.name for path in (real_task.parent / "__pycache__").iterdir()) == before


def test_a_program_training_a_second_model_is_compared_on_its_first(tmp_path):
    """A notebook trains, evaluates and exports one model, then another under the same name: the harness compares
    the first model's steps, evaluation and export on both sides, and nothing of the second (untrained there)."""
    old = PROGRAMS / "trains_twice_tf1.py"
    new = tmp_path / "train.py"
    new.write_text(old.read_text())
    migrated = subprocess.run([TF_MIGRATE, str(new)], capture_output=True, text=True)
    assert migrated.returncode == 0 and migrated.stdout.count("TFM309") >= 2, migrated.stdout
    assert "DNNRegressor(" not in new.read_text()
    result = parity(old, new, "--steps", "5")
    assert_parity(result)
    assert re.search(r"^ +eval +\S+ +\S+ ", result.stdout, re.M), result.stdout
    assert result.stdout.count("export export/exporter: the same signatures") == 1, result.stdout


@pytest.mark.parametrize("mode", [[], ["--sync_replicas"]], ids=["asynchronous", "sync_replicas"])
def test_mnist_replica_and_its_migration_match_step_by_step_in_either_mode(tmp_path, mode):
    """Old side: placeholders fed from next_batch, a Supervisor, the graph's net in model.py, SyncReplicasOptimizer
    where --sync_replicas; new side: the strategy the same flag chooses, the net still model.py's."""
    report = tmp_path / "report.json"
    assert_parity(parity(EXAMPLES / "mnist_replica" / "train.py", EXAMPLES / "mnist_replica" / "train_tf2.py",
                         "--json", str(report), "--", *mode))
    data = json.loads(report.read_text())
    assert len(data["new"]["losses"]) == 20 and all(v["ok"] for v in data["variables"])
