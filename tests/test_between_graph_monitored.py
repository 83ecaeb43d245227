"""TFM103 on MonitoredTrainingSession options: a Scaffold (its Saver's options, the initializers TF1 made by
default, its summary_op), hooks and chief_only_hooks; and a queue-runner input in the graph (TFM008's tf.data
pipeline, moved into the per-worker dataset function). examples/mts_scaffold runs and proves them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run
from test_between_graph_shapes import manual, migrated

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PS_CLUSTER = (EXAMPLES / "ps_cluster" / "train.py").read_text()
MTS_SCAFFOLD = (EXAMPLES / "mts_scaffold" / "train.py").read_text()
OPENING = "checkpoint_dir=checkpoint_dir, config=config, hooks=hooks) as sess:"


def with_arguments(arguments: str, source: str = PS_CLUSTER) -> str:
    changed = source.replace(OPENING, f"checkpoint_dir=checkpoint_dir, config=config, hooks=hooks,\n      {arguments}"
                                      ") as sess:")
    assert changed != source
    return changed


def findings(result) -> list[tuple[str, str]]:
    return [(f.rule, f.message) for f in result.findings if f.rule in ("TFM108", "TFM109")]


def test_a_scaffold_of_default_initializers_and_a_saver_keeps_as_many_checkpoints():
    result = migrated(with_arguments(
        "scaffold=tf1.train.Scaffold(init_op=tf1.group(tf1.global_variables_initializer(), "
        "tf1.local_variables_initializer()), ready_op=tf1.report_uninitialized_variables(), "
        "saver=tf1.train.Saver(max_to_keep=3, keep_checkpoint_every_n_hours=2, sharded=True))"))
    assert ('  manager = tf.train.CheckpointManager(\n      checkpoint,\n      os.path.join(checkpoint_dir, "tf2"),\n'
            "      max_to_keep=3,\n      keep_checkpoint_every_n_hours=2)\n") in result.source
    assert "Scaffold" not in result.source and "Saver" not in result.source


def test_a_scaffold_and_chief_only_hooks_in_names_go_with_the_session_and_summaries_get_their_finding():
    source = with_arguments("scaffold=scaffold, chief_only_hooks=chief_hooks").replace(
        "  hooks = [", "  saver = tf1.train.Saver(max_to_keep=2)\n"
                     "  scaffold = tf1.train.Scaffold(saver=saver, summary_op=tf1.summary.merge_all())\n"
                     "  chief_hooks = [tf1.train.SummarySaverHook(save_steps=5, output_dir=checkpoint_dir,\n"
                     "                                            summary_op=tf1.summary.merge_all()),\n"
                     "                 tf1.train.CheckpointSaverHook(checkpoint_dir, save_steps=10, saver=saver)]\n"
                     "  hooks = [")
    result = migrated(source)
    assert "max_to_keep=2)\n" in result.source
    assert not any(name in result.source for name in ("scaffold", "chief_hooks", "saver ="))
    rules = [rule for rule, _ in findings(result)]
    assert rules == ["TFM109", "TFM109", "TFM108"], findings(result)
    assert "Scaffold(summary_op=...) wrote TF1's summaries" in findings(result)[0][1]
    assert "SummarySaverHook wrote TF1's summaries" in findings(result)[1][1]


def test_the_checkpoint_folder_only_the_session_reads_stays_for_the_checkpoint_manager():
    source = PS_CLUSTER.replace("  if not flags.checkpoint_dir:\n    shutil.rmtree(checkpoint_dir)\n", "").replace(
        "checkpoint_dir = flags.checkpoint_dir or tempfile.mkdtemp()", "checkpoint_dir = tempfile.mkdtemp()")
    result = migrated(source)
    assert "  checkpoint_dir = tempfile.mkdtemp()\n" in result.source


@pytest.mark.parametrize("arguments, where, why", [
    ("scaffold=tf1.train.Scaffold(init_fn=lambda scaffold, sess: None)", "scaffold=",
     "Scaffold(init_fn=...) is not migrated"),
    ("scaffold=tf1.train.Scaffold(local_init_op=tf1.tables_initializer())", "scaffold=",
     "Scaffold(local_init_op=...) is not migrated"),
    ("scaffold=tf1.train.Scaffold(saver=tf1.train.Saver(var_list=[weights]))", "scaffold=",
     "Saver(var_list=...) is not migrated"),
    ("scaffold=tf1.train.Scaffold(summary_op=tf1.summary.scalar(\"w\", 1.0))", "scaffold=",
     "Scaffold(summary_op=...) is not migrated"),
    ("chief_only_hooks=[tf1.train.LoggingTensorHook({\"loss\": loss}, every_n_iter=10)]", "chief_only_hooks=",
     "a chief-only hook other than SummarySaverHook and CheckpointSaverHook"),
    ("chief_only_hooks=[tf1.train.StopAtStepHook(last_step=10)]", "chief_only_hooks=",
     "a chief-only hook other than"),
    ("chief_only_hooks=[tf1.train.CheckpointSaverHook(\"/tmp/other\", save_steps=10)]", "chief_only_hooks=",
     "a CheckpointSaverHook into another folder than the session's checkpoint_dir"),
], ids=["init_fn", "tables", "saver of some variables", "a summary op of its own", "logging hook",
        "chief-only stop", "checkpoints elsewhere"])
def test_scaffolds_and_chief_only_hooks_not_migrated_exactly_are_left_with_the_reason(arguments, where, why):
    line, message = manual(with_arguments(arguments))
    assert where in line and why in message, (line, message)


def test_a_hook_class_of_the_program_is_named_in_the_reason():
    source = with_arguments("").replace("hooks = [", "hooks = [StepPrinter(), ").replace(
        "def free_port():", "class StepPrinter(tf1.train.SessionRunHook):\n  pass\n\n\ndef free_port():")
    line, message = manual(source)
    assert "StepPrinter()" in line and "`StepPrinter`: a hook other than StopAtStepHook" in message, message


# -- a queue-runner input in the graph ----------------------------------------------------------------


def test_a_queue_runner_input_in_the_graph_becomes_the_per_worker_dataset():
    result = migrated(MTS_SCAFFOLD)
    assert ('  def dataset_fn():\n    """TF1\'s input pipeline, on each worker."""\n'
            "    # One reader thread, the file names in order: the same batches every run.\n"
            "    files = tf.data.Dataset.from_tensor_slices([csv_path])\n    def make_example(line):\n"
            "      columns = tf.compat.v1.decode_csv(line, record_defaults=[[0.0]] * (NUM_FEATURES + 1))\n"
            "      features = tf.stack(columns[:NUM_FEATURES])\n      label = tf.stack(columns[NUM_FEATURES:])\n"
            "      return features, label\n    dataset = (tf.data.TextLineDataset(files)\n      .repeat()\n"
            "      .map(make_example)\n      .batch(BATCH_SIZE, drop_remainder=True))\n    return dataset\n"
            ) in result.source
    assert "    loss_value = coordinator.schedule(train_step, args=(per_worker_iterator,))\n" in result.source
    assert [f.message for f in result.findings if f.rule == "TFM008"] == [
        "queue-runner input pipeline -> tf.data: the same records in the same order"]


def test_a_shuffled_queue_input_migrates_with_the_finding_that_its_order_differs():
    source = MTS_SCAFFOLD.replace("tf.train.batch([features, label], batch_size=BATCH_SIZE, num_threads=1)",
                                  "tf.train.shuffle_batch([features, label], batch_size=BATCH_SIZE, capacity=40, "
                                  "min_after_dequeue=20, seed=3)")
    result = migrated(source)
    assert "      .shuffle(20, seed=3)\n" in result.source
    (note,) = [f.message for f in result.findings if f.rule == "TFM008"]
    assert "whose random order is not TF1's" in note


def test_a_queue_read_again_in_the_graph_is_left_with_the_reason():
    source = MTS_SCAFFOLD.replace("    tf.summary.scalar(\"loss\", loss)\n",
                                  "    tf.summary.scalar(\"loss\", loss)\n    rows = tf.size(files)\n")
    line, message = manual(source)
    assert "reader.read(files)" in line and "TFM008" not in {f.rule for f in run(source).findings}, message


SUPERVISOR = (EXAMPLES / "supervisor_flags" / "train.py").read_text()
DATASET = """      dataset = tf.data.Dataset.from_tensor_slices((train_x, train_y))
      dataset = dataset.batch(BATCH_SIZE).repeat()
      x, y = dataset.make_one_shot_iterator().get_next()
"""
PIPELINE = """      rows = tf.data.Dataset.from_tensor_slices((train_x, train_y))
      x, y = tf.data.make_one_shot_iterator(rows.batch(BATCH_SIZE).repeat()).get_next()
"""


def test_an_iterator_of_a_pipeline_written_in_its_call_reads_the_dataset_the_pipeline_makes():
    result = migrated(SUPERVISOR.replace(DATASET, PIPELINE))
    assert ('      rows = tf.data.Dataset.from_tensor_slices((train_x, train_y))\n'
            "      dataset = rows.batch(BATCH_SIZE).repeat()\n      return dataset\n") in result.source


def test_the_graph_reading_what_its_input_pipeline_binds_is_left_with_the_reason():
    line, message = manual(SUPERVISOR.replace(DATASET, PIPELINE + "      count = rows.cardinality()\n"))
    assert "rows = tf.data.Dataset" in line and "`rows` is part of the graph's input" in message, (line, message)


# -- a chief-only hook of the program's own evaluating when the session ends ------------------------------------

END_HOOK = """  class LossAtEndHook(tf1.train.SessionRunHook):
    def end(self, session):
      # TF1 ran this once, on the chief, just before the session closed.
      final_loss = session.run(loss, {x: train_x, y: train_y})
      print("final loss %s" % final_loss)

  hooks = ["""


def with_end_hook(body: str | None = None) -> str:
    hook = END_HOOK if body is None else END_HOOK.split("    def end")[0] + body + "\n  hooks = ["
    return with_arguments("chief_only_hooks=[LossAtEndHook()]").replace("  hooks = [", hook)


def test_a_chief_only_hook_evaluating_at_the_end_runs_on_the_chief_after_the_loop():
    result = migrated(with_end_hook())
    assert ("  manager.save()\n  final_loss = evaluate_graph(train_x, train_y).numpy()\n"
            '  print("final loss %s" % final_loss)\n') in result.source
    assert "LossAtEndHook" not in result.source and "session" not in result.source
    assert any(f.rule == "TFM103" and "`LossAtEndHook`, a chief-only hook TF1 ran when the session ended"
               in f.message for f in result.findings)


@pytest.mark.parametrize("body, where, why", [
    ("    def end(self, session):\n      done = session.run(train_op, {x: train_x, y: train_y})\n", "train_op",
     "a tensor the graph computes is evaluated"),
    ("    def end(self, session):\n      self.loss = session.run(loss, {x: train_x, y: train_y})\n",
     "self.loss", "`LossAtEndHook.end`: a hook of the module is migrated"),
    ("    def end(self, session):\n      open('loss', 'w').write(str(session.run(loss, {x: train_x, y: train_y})))\n",
     "open(", "`LossAtEndHook.end`: a hook of the module is migrated"),
    ("    def begin(self):\n      pass\n\n    def end(self, session):\n      print(session.run(loss))\n",
     "LossAtEndHook()", "`LossAtEndHook`: a hook of the module is migrated"),
], ids=["the train op", "kept on the hook", "written to a file", "another method"])
def test_a_chief_only_hook_of_the_program_doing_anything_else_is_left_with_the_reason(body, where, why):
    line, message = manual(with_end_hook(body))
    assert where in line and why in message, (line, message)


@pytest.mark.tensorflow
def test_the_hooks_evaluation_runs_after_the_migrated_training(tmp_path):
    (tmp_path / "train.py").write_text(with_end_hook())
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    tf_migrate = str(Path(sys.executable).parent / "tf-migrate")
    migrate = subprocess.run([tf_migrate, "--out", "out", "train.py"], cwd=tmp_path, capture_output=True, env=env)
    assert migrate.returncode == 0, migrate.stderr
    done = subprocess.run([sys.executable, "out/train.py"], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"final loss [0-9.]+\Z", done.stdout.strip()), done.stdout[-1000:]
