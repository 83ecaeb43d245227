"""`tf-migrate parity`: right migrations pass, wrong ones are caught, nothing is left behind.

Each test trains real programs on the reference environment (the parity extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import GENERATED_EXAMPLES

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
    # Wrong migrations.
    "ps_cluster_tf2_wrong_lr": Variant(EXAMPLES / "ps_cluster" / "train_tf2.py", (("SGD(learning_rate=0.1)",
                                                                                   "SGD(learning_rate=0.2)"),)),
    "rmsprop_tf2_zero_slots": Variant(EXAMPLES / "rmsprop" / "train_tf2.py", ((RMSPROP_ONES_SLOTS, ""),)),
    "regression_tf2_wrong_lr": Variant(REGRESSION_TF2, (("learning_rate=0.05,", "learning_rate=0.1,"),)),
    "regression_tf2_wrong_loss": Variant(REGRESSION_TF2, (("losses.MeanSquaredError()", "losses.MeanAbsoluteError()"),)),
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
        ("keras.layers.BatchNormalization()", "keras.layers.BatchNormalization(momentum=0.9)"),)),
    "classifier_tf2_dropped_layer": Variant(EXAMPLES / "classifier" / "train_tf2.py", (
        ('  net = keras.layers.Dense(units=16, activation="relu")(features["x"])\n'
         '  logits = keras.layers.Dense(units=NUM_CLASSES)(net)',
         '  logits = keras.layers.Dense(units=NUM_CLASSES)(features["x"])'),)),
}


def program(name: str | Path, folder: Path) -> Path:
    """A path as it is; tests/parity_programs/NAME.py; or the variant NAME written into ``folder``."""
    if isinstance(name, Path):
        return name
    return VARIANTS[name].write(folder, name) if name in VARIANTS else PROGRAMS / f"{name}.py"


def parity(old: Path, new: Path, *options: str, tmpdir: Path | None = None, timeout: float = 600):
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.run([TF_MIGRATE, "parity", str(old), str(new), *options], capture_output=True, text=True,
                          env=env, timeout=timeout)


def assert_parity(result) -> None:
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    assert "PARITY" in result.stdout


def assert_mismatch(result, first_step: int | None = None) -> None:
    assert result.returncode == 1, result.stdout + result.stderr[-4000:]
    assert "MISMATCH" in result.stdout
    if first_step is not None:
        assert f"diverge from step {first_step} " in result.stdout, result.stdout


# -- right migrations pass at the default tolerance --------------------------------


@pytest.mark.parametrize("example", GENERATED_EXAMPLES)
def test_tf2_counterpart_of_each_example_passes(example, tmp_path):
    report = tmp_path / "report.json"
    result = parity(EXAMPLES / example / "train.py", EXAMPLES / example / "train_tf2.py", "--json", str(report))
    assert_parity(result)
    data = json.loads(report.read_text())
    assert data["verdict"] == "parity" and len(data["old"]["losses"]) == data["steps"] == 20
    assert data["old"]["losses"] != data["old"]["losses"][:1] * 20, "the losses move: something was trained"
    assert data["eval"]["ok"] and data["variables"] and all(v["ok"] for v in data["variables"])


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
    assert "for units in params[\"hidden_units\"]:" in new.read_text()
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
    ],
    ids=["learning rate", "loss", "momentum on a decaying rate", "adam epsilon", "rmsprop slots", "between-graph lr"],
)
def test_wrong_migration_is_a_mismatch_naming_the_first_diverging_step(old, new, first_step, tmp_path):
    assert_mismatch(parity(program(old, tmp_path), program(new, tmp_path)), first_step)


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


def test_missing_interpreter_is_a_usage_error(tmp_path):
    result = parity(REGRESSION_TF1, REGRESSION_TF2, "--old-python", str(tmp_path / "python9"))
    assert result.returncode == 2 and f"--old-python {tmp_path / 'python9'}: not an executable" in result.stderr


def listening_ports() -> set[int]:
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "0A":  # LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def side_processes(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and "migrator.parity" in cmdline:
            found.append(int(pid))
    return found


def test_ctrl_c_leaves_no_process_port_or_folder(tmp_path):
    before = listening_ports()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("TF_CONFIG", None)
    parent = subprocess.Popen([TF_MIGRATE, "parity", str(EXAMPLES / "partitioned" / "train.py"),
                               str(EXAMPLES / "partitioned" / "train_tf2.py")], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (listening_ports() - before) and time.monotonic() < deadline:  # the new side's cluster is up
        time.sleep(0.2)
    assert listening_ports() - before, "the in-process cluster never started"
    assert side_processes(str(tmp_path)), "both sides are running"
    parent.send_signal(signal.SIGINT)
    _, err = parent.communicate(timeout=60)
    assert parent.returncode == 130 and "interrupted" in err
    assert side_processes(str(tmp_path)) == []
    assert listening_ports() - before == set()
    assert list(tmp_path.iterdir()) == []
