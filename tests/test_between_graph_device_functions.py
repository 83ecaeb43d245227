"""TFM103 where a function of the program makes the graph's device setter and the server, returning both:
`device, target = device_and_target()` before `with tf.device(device):` (device_functions.py)."""

from __future__ import annotations

import re

import pytest
from helpers import run
from test_between_graph_sessions import _cluster, _hosts

# The shape of tensorflow/ecosystem's docker and YARN MNIST trainers: flags of the cluster, a function starting the
# server (the ps joins there) and returning the device setter with the target, a single-machine run when no job is
# given; the graph placed with what it returns, a MonitoredTrainingSession on the target.
PROGRAM = '''import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string("job_name", None, "ps or worker")
flags.DEFINE_integer("task_index", 0, "task")
flags.DEFINE_string("ps_hosts", "", "ps")
flags.DEFINE_string("worker_hosts", "", "workers")
FLAGS = flags.FLAGS


def placement_and_master():
  # Without a job, one process trains.
  if FLAGS.job_name is None:
    print("local run")
    return (None, "")

  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps":
    server.join()

  worker = "/job:worker/task:%d" % FLAGS.task_index
  # Variables on the ps tasks.
  return (
      tf.train.replica_device_setter(worker_device=worker, cluster=cluster),
      server.target,
  )


def main(_):
  placement, master = placement_and_master()
  with tf.device(placement):
    w = tf.Variable(tf.zeros([2, 1]), name="w")
    global_step = tf.train.get_or_create_global_step()
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.ones([4, 2]), w) - 1.0))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
  hooks = [tf.train.StopAtStepHook(last_step=10)]
  with tf.train.MonitoredTrainingSession(master=master, is_chief=(FLAGS.task_index == 0), hooks=hooks) as sess:
    while not sess.should_stop():
      sess.run(train_op)
  print("trained")


if __name__ == "__main__":
  tf.app.run()
'''


def migrated(source: str) -> str:
    result = run(source)
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert run(result.source).source == result.source, "a second run changes nothing"
    compile(result.source, "migrated.py", "exec")
    return result


def test_the_function_returns_its_server_and_the_graph_becomes_the_strategys():
    result = migrated(PROGRAM)
    code = result.source
    for line in ("  server = placement_and_master()\n  if not (FLAGS.task_index == 0):\n",
                 "    server.join()\n\n  return server\n\n\n",
                 "  jobs = tf.train.ClusterSpec(server.server_def.cluster).as_dict()\n",
                 '    raise ValueError("the migrated program trains on a cluster: start it as a ps or worker '
                 'task")\n',
                 "  coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)\n"):
        assert line in code, code
    assert "replica_device_setter" not in code and "worker =" not in code and "Variables on the ps" not in code
    notes = [f.message for f in result.findings if f.rule == "TFM103"]
    assert any("the single-machine run `placement_and_master()` chose where `FLAGS.job_name is None` raises" in note
               for note in notes), notes


def test_a_master_other_than_the_returned_target_is_named():
    source = PROGRAM.replace("MonitoredTrainingSession(master=master,", "MonitoredTrainingSession(master=FLAGS.master,")
    (finding,) = [f for f in run(source).findings if f.rule == "TFM104"]
    assert "the session's master is not `master`, the target `placement_and_master()` returns" in finding.message


def test_a_server_the_function_does_not_join_on_the_ps_is_named():
    source = PROGRAM.replace('  if FLAGS.job_name == "ps":\n    server.join()\n', "")
    (finding,) = [f for f in run(source).findings if f.rule == "TFM104"]
    assert "`server`, the server `placement_and_master()` starts, is not joined there" in finding.message


def test_the_server_name_taken_where_the_graph_is_is_named():
    source = PROGRAM.replace('  print("trained")', '  server = None\n  print("trained", server)')
    (finding,) = [f for f in run(source).findings if f.rule == "TFM104"]
    assert "the migrated program binds `server`" in finding.message, finding.message


@pytest.mark.tensorflow
def test_the_migrated_program_trains_as_ps_and_two_workers(tmp_path):
    program = tmp_path / "tf2.py"
    program.write_text(migrated(PROGRAM).source)
    ps, workers = _hosts()
    flags = [f"--ps_hosts={ps}", f"--worker_hosts={workers}"]
    (chief,) = _cluster(tmp_path, [[str(program), "--job_name=ps", "--task_index=0", *flags],
                                   [str(program), "--job_name=worker", "--task_index=1", *flags]],
                        [[str(program), "--job_name=worker", "--task_index=0", *flags]])
    assert re.findall("trained", chief) == ["trained"], chief
