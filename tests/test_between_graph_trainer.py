"""The cloudml-samples trainers' shape: task.py's Trainer trains between graphs, the graph built by functions of
the program's other modules (model.py, util.py), which name no Estimator. The run groups those modules with the
program's driver (migrator/scanning.py), so a function of theirs building the graph's input is migrated with it.
The Trainer's loop keeps the global step its run fetched in an attribute, `self.global_step = session.run([...])[0]`
(runs.py): the migrated loop counts its steps into it as into a name."""

from __future__ import annotations

import re

import pytest
from helpers import run
from test_between_graph_graph_block import LEFT
from test_between_graph_input_modules import MODEL, TASK
from test_between_graph_local import TRAINER

from migrator.engine import program_groups
from rewrites import RULES

# The census fixture with no Estimator word in it: cloudml-samples' util.read_examples.
READER = MODEL.replace("input_fn", "read_examples")
DRIVER = TASK.replace("model.input_fn", "model.read_examples")


def test_a_between_graph_driver_is_grouped_with_the_modules_it_imports():
    assert READER != MODEL and DRIVER != TASK and "input_fn" not in READER + DRIVER
    texts = {"trainer/__init__.py": "", "trainer/model.py": READER, "trainer/task.py": DRIVER,
             "trainer/other.py": "import tensorflow as tf\n\nX = tf.constant(1)\n"}
    groups = sorted(map(sorted, program_groups(texts, RULES)))
    assert groups == [["trainer/__init__.py"], ["trainer/model.py", "trainer/task.py"], ["trainer/other.py"]]


def test_the_input_function_of_a_module_naming_no_estimator_is_migrated_with_the_driver(tmp_path, cli):
    folder = tmp_path / "trainer"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "model.py").write_text(READER)
    (folder / "task.py").write_text(DRIVER)
    code, out, _ = cli("trainer")
    assert "TFM104" not in out, out
    task, model = (folder / "task.py").read_text(), (folder / "model.py").read_text()
    assert "ClusterCoordinator(strategy)" in task and "dataset = (model.read_examples(" in task
    assert "get_next" not in model and "make_one_shot_iterator" not in model


TRAINER_LOOP = """\
      step = 0
      while not sv.should_stop() and step < 20:
        _, step, loss_value = session.run([train_op, global_step, loss], feed_dict={x: FEATURES, y: LABELS})
        print("step %d loss %.6f" % (step, loss_value))
"""
# cloudml-samples' loop: the step kept in an attribute, the one result kept of the run's fetches.
KEPT_STEP = TRAINER.replace(TRAINER_LOOP, """\
      self.global_step = 0
      while not sv.should_stop() and self.global_step < 20:
        self.global_step = session.run([global_step, train_op], feed_dict={x: FEATURES, y: LABELS})[0]
        print("step %d" % self.global_step)
""")
UNPACKED_STEP = TRAINER.replace(TRAINER_LOOP, """\
      self.global_step = 0
      while not sv.should_stop() and self.global_step < 20:
        _, self.global_step, loss_value = session.run([train_op, global_step, loss],
                                                      feed_dict={x: FEATURES, y: LABELS})
        print("step %d loss %.6f" % (self.global_step, loss_value))
""")
STEPS = [str(step) for step in range(1, 21)]


@pytest.mark.parametrize("source", [KEPT_STEP, UNPACKED_STEP], ids=["indexed", "unpacked"])
def test_the_global_step_kept_in_an_attribute_counts_the_steps(source):
    assert source != TRAINER
    result = run(source)
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    migrated = result.source
    assert migrated.count("      while self.global_step < 20:\n") == 2
    assert "        self.global_step = scheduled_steps\n" in migrated
    assert "        self.global_step = trained_steps\n" in migrated
    assert "session.run" not in migrated and "[0]" not in migrated
    (note,) = [f for f in result.findings if f.rule == "TFM106"]
    assert "stopping at `not sv.should_stop() and self.global_step < 20`" in note.message


@pytest.mark.parametrize("source, why", [
    (UNPACKED_STEP.replace("_, self.global_step, loss_value = session.run(", "_, step, self.loss = session.run(")
     .replace("loss_value))", "self.loss))"),
     "run() assigns a result to `self.loss`: only the global step's may be kept in an attribute (the step's other "
     "results are fetched where the loop reads them by name)"),
    (KEPT_STEP.replace("train_op], feed_dict={x: FEATURES, y: LABELS})[0]", "train_op], feed_dict={x: FEATURES, "
                                                                            "y: LABELS})[2]"),
     "run()'s one result kept must be one of its list of fetches, assigned to a name"),
], ids=["loss-in-an-attribute", "index-out-of-the-fetches"])
def test_other_kept_results_leave_the_program(source, why):
    result = run(source)
    assert "Strategy" not in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "session.run(" in source.splitlines()[finding.line - 1]
    assert finding.message == LEFT + why


@pytest.mark.tensorflow
def test_the_trainer_keeping_its_step_in_an_attribute_trains_as_tf1_did(tmp_path):
    from test_examples import run_command

    (tmp_path / "tf1.py").write_text(KEPT_STEP)
    (tmp_path / "tf2.py").write_text(run(KEPT_STEP).source)
    old, new = (run_command([str(tmp_path / name)]) for name in ("tf1.py", "tf2.py"))
    for done in (old, new):
        assert done.returncode == 0, done.stderr[-3000:]
    assert re.findall(r"step (\d+)", new.stdout) == STEPS
    assert re.findall(r"step (\d+)", old.stdout)[-1] == "20"


# cloudml-samples' graph: the Saver and the summaries held in attributes, given to the Supervisor.
GRAPH_END = "        init_op = tf.global_variables_initializer()\n"
HELD = TRAINER.replace(GRAPH_END, GRAPH_END + "        self.saver = tf.train.Saver()\n"
                       "        self.summary_op = tf.summary.merge_all()\n").replace(
    "init_op=init_op, global_step=global_step)", "init_op=init_op, global_step=global_step,\n"
    "                             saver=self.saver, summary_op=None)")
# Its input read from the trainer's attributes too: `self`, whose attribute the graph sets, is no tensor.
HELD_INPUT = HELD.replace('''        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
''', '''        dataset = tf.data.Dataset.from_tensor_slices((self.features, self.labels)).repeat().batch(4)
        x, y = tf.data.make_one_shot_iterator(dataset).get_next()
''').replace(", feed_dict={x: FEATURES, y: LABELS})", ")").replace(
    "    self.task_index = task_index\n",
    "    self.task_index = task_index\n    self.features, self.labels = FEATURES, LABELS\n")


@pytest.mark.parametrize("source", [HELD, HELD_INPUT], ids=["placeholders", "input-reading-self"])
def test_what_serves_the_session_held_in_attributes_goes_with_it(source):
    assert len({source, HELD, TRAINER}) == 3 - (source is HELD)
    result = run(source)
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    for gone in ("self.saver", "self.summary_op", "Saver", "merge_all", "Supervisor"):
        assert gone not in result.source, gone
    assert "coordinator.schedule(train_step" in result.source


def test_what_serves_the_session_used_by_another_method_leaves_the_program():
    source = HELD.replace("    sv.stop()\n", "    sv.stop()\n\n  def save(self, session):\n"
                          "    self.saver.save(session, \"/tmp/trainer\")\n")
    result = run(source)
    assert "Strategy" not in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1] == "    self.saver.save(session, \"/tmp/trainer\")"
    assert finding.message == LEFT + ("`self.saver` serves a TF1 session, and `save` uses it besides the session's "
                                      "arguments: the migrated program has no TF1 session; migrate that use by hand")


@pytest.mark.tensorflow
def test_the_trainer_holding_its_saver_trains_as_tf1_did(tmp_path):
    from test_examples import run_command

    (tmp_path / "tf1.py").write_text(HELD_INPUT)
    (tmp_path / "tf2.py").write_text(run(HELD_INPUT).source)
    old, new = (run_command([str(tmp_path / name)]) for name in ("tf1.py", "tf2.py"))
    for done in (old, new):
        assert done.returncode == 0, done.stderr[-3000:]
    losses = [re.findall(r"step (\d+) loss (\S+)", done.stdout) for done in (old, new)]
    assert [step for step, _ in losses[1]] == STEPS
    assert losses[0] == losses[1]
