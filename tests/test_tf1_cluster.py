"""TFM107: no TF1 cluster code is left without a finding at its line, whatever the program's shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ALL_RULES, run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SUPERVISOR_IN_A_CLASS = '''import tensorflow as tf

FLAGS = tf.app.flags.FLAGS


class Trainer(object):
  def run_training(self, cluster, server):
    device_fn = tf.train.replica_device_setter(ps_device="/job:ps", cluster=cluster)
    with tf.device(device_fn):
      self.build_graph()
    sv = tf.train.Supervisor(is_chief=FLAGS.task_index == 0, logdir=FLAGS.logdir)
    with sv.managed_session(server.target) as session:
      while not sv.should_stop():
        session.run(self.train_op)


def main(_):
  cluster = tf.train.ClusterSpec({"ps": ["h:1"], "worker": ["h:2"]})
  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps":
    server.join()
  else:
    Trainer().run_training(cluster, server)


if __name__ == "__main__":
  tf.app.run()
'''


def findings_by_line(source: str, enabled=ALL_RULES) -> dict[str, list[str]]:
    """The TFM107 findings: the rest of the line from each one's column -> their messages."""
    result = run(source, enabled)
    assert result.source == run(source, enabled - {"TFM107"}).source, "TFM107 changes no code"
    lines = source.splitlines()
    found: dict[str, list[str]] = {}
    for finding in result.findings:
        if finding.rule == "TFM107":
            found.setdefault(lines[finding.line - 1][finding.col - 1:], []).append(finding.message)
    return found


def at(found: dict[str, list[str]], *starts: str) -> list[list[str]]:
    """The messages of the findings at code starting with each of ``starts``, one finding each."""
    messages = []
    for start in starts:
        (key,) = [key for key in found if key.startswith(start)]
        messages.append(found[key])
    return messages


def test_each_use_of_tf1_cluster_code_left_gets_a_finding_at_its_column():
    found = findings_by_line(SUPERVISOR_IN_A_CLASS)
    assert len(found) == 6, found
    [setter], [device], [supervisor], [spec], [server], [join] = at(
        found, "tf.train.replica_device_setter(", '"/job:ps", cluster', "tf.train.Supervisor(", "tf.train.ClusterSpec(",
        "tf.train.Server(", "join()")
    assert setter.startswith("replica_device_setter left as TF1: the program around it is not migrated")
    assert "create them in strategy.scope()" in setter and "placed on the ps tasks by the strategy" in device
    assert "ClusterCoordinator" in supervisor and "CheckpointManager" in supervisor
    assert spec.startswith("ClusterSpec of TF1 cluster code: ") and "serves" in server and "server.join()" in join


@pytest.mark.parametrize("imports, prefix", [
    ("import tensorflow as tf\n", "tf."),
    ("import tensorflow.compat.v1 as tf\n", "tf."),
    ("import tensorflow as tf\ntf = tf.compat.v1\n", "tf."),
    ("from tensorflow.compat import v1 as tf\n", "tf."),
    ("import tensorflow as tf\n", "tf.compat.v1."),
    ("from tensorflow.compat.v1 import train\n", ""),
], ids=["tf", "compat.v1 as tf", "tf = tf.compat.v1", "from compat import v1", "tf.compat.v1.X", "from train"])
def test_every_spelling_of_a_sync_replicas_optimizer_is_found(imports, prefix):
    source = (f"{imports}\ndef optimizer(workers):\n"
              f"  return {prefix}train.SyncReplicasOptimizer({prefix}train.GradientDescentOptimizer(0.1), workers)\n")
    [[message]] = at(findings_by_line(source), f"{prefix}train.SyncReplicasOptimizer(")
    assert "MultiWorkerMirroredStrategy" in message


def test_a_device_string_naming_the_ps_job():
    source = ('import tensorflow as tf\n\ndef variables(i):\n  with tf.device("/job:ps/task:%d" % i):\n'
              '    return tf.Variable(0.0)\n\ndef local(i):\n  with tf.device(f"/job:ps/task:{i}"):\n'
              '    return tf.Variable(1.0)\n')
    found = findings_by_line(source)
    assert len(found) == 2 and at(found, '"/job:ps/task:%d" % i', '/job:ps/task:{i}"')


def test_a_docstring_that_shows_a_ps_device_is_not_one():
    """tensorflow/python/framework/test_util.py's create_local_cluster documents `tf.device("/job:ps/task:0")`."""
    source = ('import tensorflow as tf\n\ndef create_local_cluster(num_ps):\n'
              '  """Example:\n\n  with tf.device("/job:ps/task:0"):\n    ...\n  """\n'
              '  "/job:ps" f"/job:ps/task:{num_ps}"\n  return tf.device("/job:ps/task:0")\n')
    assert [finding.line for finding in run(source).findings] == [10]


@pytest.mark.parametrize("example", ["ps_cluster", "supervisor_flags"])
def test_a_migrated_program_leaves_no_tf1_cluster_code_to_report(example):
    result = run((EXAMPLES / example / "train.py").read_text())
    assert "TFM103" in {f.rule for f in result.findings}
    assert not [f for f in result.findings if f.rule == "TFM107"]


def test_a_ps_launcher_that_only_serves_is_tf2_as_it_stands():
    source = ('import tensorflow as tf\n\ncluster = tf.train.ClusterSpec({"ps": ["h:1"]})\n'
              'tf.train.Server(cluster, job_name="ps", task_index=0).join()\n')
    assert findings_by_line(source) == {}


def test_a_program_left_by_tfm103_is_reported_at_each_use_besides_the_reason():
    """A MonitoredTrainingSession with a hook TFM103 does not migrate: the TFM104 reason, and TFM107 at each use."""
    source = (EXAMPLES / "ps_cluster" / "train.py").read_text().replace(
        "hooks = [tf1.train.StopAtStepHook(last_step=flags.train_steps)]",
        "hooks = [tf1.train.StopAtStepHook(last_step=flags.train_steps), tf1.train.LoggingTensorHook([loss], 5)]")
    rules = [f.rule for f in run(source).findings]
    assert rules.count("TFM104") == 1
    assert at(findings_by_line(source), "tf1.train.replica_device_setter(", "tf1.train.MonitoredTrainingSession(",
              '"/job:ps", "/job:worker')


def test_ignoring_tfm107_switches_the_findings_off():
    assert findings_by_line(SUPERVISOR_IN_A_CLASS, ALL_RULES - {"TFM107"}) == {}
