"""TFM103 on a trainer that trains on the cluster or, without one, in its own process (the cloudml-samples trainers:
`if self.cluster:` the server, its target, the replica_device_setter and a config, `else:` none of them): migrated,
the program chooses as TF1 did, ParameterServerStrategy's coordinator on the cluster, the default strategy in the
process without (local.py). Another device, or other names, in the `else:` leave the program with a TFM104."""

from __future__ import annotations

import re

import pytest
from helpers import run
from ports import free_port
from test_between_graph_graph_block import LEFT, LOCAL_TOO

# A trainer of the cloudml-samples shape, run by flags: as ps + workers, or without them, in its own process.
TRAINER = """\
import argparse

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

FEATURES = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5], [-2.0, 1.0]], np.float32)
LABELS = FEATURES.dot([[2.0], [-1.0]]).astype(np.float32)


class Trainer(object):

  def __init__(self, cluster, task_index):
    self.cluster = cluster
    self.task_index = task_index

  def run_training(self):
    if self.cluster:
      server = tf.train.Server(self.cluster, job_name="worker", task_index=self.task_index)
      target = server.target
      device_fn = tf.train.replica_device_setter(cluster=self.cluster)
      device_filters = ["/job:ps", "/job:worker/task:%d" % self.task_index]
      config = tf.ConfigProto(device_filters=device_filters)
    else:
      target = ""
      device_fn = ""
      config = None
    with tf.Graph().as_default() as graph:
      with tf.device(device_fn):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(tf.zeros([2, 1]))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
        init_op = tf.global_variables_initializer()
    sv = tf.train.Supervisor(graph, is_chief=self.task_index == 0, init_op=init_op, global_step=global_step)
    with sv.managed_session(target, config=config) as session:
      step = 0
      while not sv.should_stop() and step < 20:
        _, step, loss_value = session.run([train_op, global_step, loss], feed_dict={x: FEATURES, y: LABELS})
        print("step %d loss %.6f" % (step, loss_value))
    sv.stop()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--job_name")
  parser.add_argument("--task_index", type=int, default=0)
  parser.add_argument("--ps_hosts", default="")
  parser.add_argument("--worker_hosts", default="")
  flags = parser.parse_args()
  if not flags.job_name:
    Trainer(None, 0).run_training()
    return
  cluster = tf.train.ClusterSpec({"ps": flags.ps_hosts.split(","), "worker": flags.worker_hosts.split(",")})
  if flags.job_name == "ps":
    tf.train.Server(cluster, job_name="ps", task_index=flags.task_index).join()
  else:
    Trainer(cluster, flags.task_index).run_training()


if __name__ == "__main__":
  main()
"""
CLUSTER_BRANCH = ("      target = server.target\n"
                  "      device_fn = tf.train.replica_device_setter(cluster=self.cluster)\n")
LOCAL_BRANCH = "      target = \"\"\n      device_fn = \"\"\n      config = None\n"
STEPS = [str(step) for step in range(1, 21)]


@pytest.mark.parametrize("source", [LOCAL_TOO, TRAINER], ids=["device-only", "server-target-config"])
def test_training_without_a_cluster_too_is_migrated_under_the_same_test(source):
    result = run(source)
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    (training,) = [f for f in result.findings if f.rule == "TFM103" and "between-graph training" in f.message]
    assert training.message.endswith("; without a cluster (`self.cluster` false), the same model trains in this "
                                     "process, as TF1's local session trained it: its variables made in the default "
                                     "strategy's scope, each step run in turn")
    migrated = result.source
    for gone in ("device_fn", "target", "config", "device_filters", "replica_device_setter", "Supervisor", "= ''",
                 '= ""'):
        assert gone not in migrated, gone
    assert ("server = tf.distribute.Server(" in migrated) == (source is TRAINER)
    assert migrated.count("    if self.cluster:\n") == 2 + (source is TRAINER)  # the graph's, the loop's (the server)
    assert migrated.count("    else:\n") == 2
    assert migrated.count("strategy = tf.distribute.get_strategy()") == 1
    assert "ParameterServerStrategy(resolver)" in migrated
    assert "coordinator.schedule(train_step" in migrated and re.search(r"^ +(\w+ = )?train_step\(", migrated, re.M)


@pytest.mark.parametrize("source, at, why", [
    (TRAINER.replace(LOCAL_BRANCH, LOCAL_BRANCH.replace('device_fn = \"\"', 'device_fn = \"/cpu:0\"')),
     "      with tf.device(device_fn):", "the graph's device `device_fn` is a replica_device_setter in one "
     "branch and `\"/cpu:0\"` in another, where the program trains without the cluster: only training on the cluster "
     "is migrated; migrate the program by hand"),
    (TRAINER.replace(LOCAL_BRANCH, LOCAL_BRANCH + "      steps = 10\n"),
     "      with tf.device(device_fn):", "the graph's device `device_fn` is a replica_device_setter in one "
     "branch and `\"\"` in another, where the program trains without the cluster: only training on the cluster is "
     "migrated; migrate the program by hand"),
    (TRAINER.replace("    sv.stop()\n", "    sv.stop()\n    print(target)\n"), "    print(target)",
     "`target`, bound to nothing where the program trains without a cluster, is used besides placing the graph and "
     "opening its session: migrate that use by hand"),
    (TRAINER.replace("minimize(loss, global_step=global_step)", "minimize(loss, global_step=global_step)\n"
                     "        sync = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.05), 2)"),
     "      with tf.device(device_fn):", "a SyncReplicasOptimizer in a program that also trains without a cluster: "
     "migrate the program by hand"),
], ids=["another-device", "else-binding-more", "target-used-elsewhere", "sync-replicas"])
def test_an_else_doing_more_than_unbinding_the_cluster_leaves_the_program(source, at, why):
    result = run(source)
    assert "replica_device_setter" in result.source and "Strategy" not in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1] == at
    assert finding.message == LEFT + why


@pytest.mark.tensorflow
def test_without_a_cluster_the_migrated_trainer_trains_as_tf1_did_in_its_process(tmp_path):
    from test_examples import run_command

    (tmp_path / "tf1.py").write_text(TRAINER)
    (tmp_path / "tf2.py").write_text(run(TRAINER).source)
    old, new = (run_command([str(tmp_path / name)]) for name in ("tf1.py", "tf2.py"))
    for done in (old, new):
        assert done.returncode == 0, done.stderr[-3000:]
    losses = [re.findall(r"step (\d+) loss (\S+)", done.stdout) for done in (old, new)]
    assert [step for step, _ in losses[1]] == STEPS
    assert losses[0] == losses[1]


@pytest.mark.tensorflow
def test_on_a_cluster_the_migrated_trainer_runs_as_ps_and_two_workers(tmp_path):
    from test_examples import run_as_cluster

    (tmp_path / "tf2.py").write_text(run(TRAINER).source)
    chief = run_as_cluster(str(tmp_path / "tf2.py"), 2, tmp_path)
    assert chief.returncode == 0, chief.stderr[-3000:]
    assert re.findall(r"step (\d+) loss", chief.stdout) == STEPS


# The trainer as Cloud ML Engine ran it: its task and cluster in TF_CONFIG, the chief a `master` job.
MAIN = TRAINER[TRAINER.index("def main():"):TRAINER.index('if __name__ == "__main__":')]
MASTER_TRAINER = TRAINER.replace("import argparse\n", "import json\nimport os\n").replace(MAIN, '''\
def main():
  env = json.loads(os.environ.get("TF_CONFIG", "{}"))
  task = env.get("task") or {"type": "master", "index": 0}
  cluster = tf.train.ClusterSpec(env["cluster"]) if env.get("cluster") else None
  if task["type"] == "ps":
    tf.train.Server(cluster, job_name="ps", task_index=task["index"]).join()
  else:
    Trainer(cluster, task["index"], task["type"]).run_training()


''').replace("  def __init__(self, cluster, task_index):\n",
             "  def __init__(self, cluster, task_index, task_type):\n    self.task_type = task_type\n").replace(
    'job_name="worker", task_index=self.task_index', "job_name=self.task_type, task_index=self.task_index").replace(
    "is_chief=self.task_index == 0", 'is_chief=self.task_type == "master"')


def test_a_chief_named_master_is_the_coordinator_and_leaves_the_strategy_s_cluster():
    assert 'jobs.pop("master", None)' in run(MASTER_TRAINER).source
    assert 'jobs.pop("master", None)' not in run(TRAINER).source


@pytest.mark.tensorflow
def test_a_cluster_of_a_master_ps_and_two_workers_in_tf_config_runs_the_migrated_trainer(tmp_path):
    import json
    import os
    import subprocess
    import sys


    program = tmp_path / "tf2.py"
    program.write_text(run(MASTER_TRAINER).source)
    hosts = [f"127.0.0.1:{free_port()}" for _ in range(4)]
    cluster = {"master": hosts[:1], "ps": hosts[1:2], "worker": hosts[2:]}

    def environment(job, index):
        env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
        return {**env, "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})}

    serving = [subprocess.Popen([sys.executable, str(program)], env=environment(job, index), cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for job, index in [("ps", 0), ("worker", 0), ("worker", 1)]]
    try:
        chief = subprocess.run([sys.executable, str(program)], env=environment("master", 0), cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
        assert all(task.poll() is None for task in serving)  # serving, not crashed
    finally:
        for task in serving:
            task.kill()
            task.wait()
    assert chief.returncode == 0, chief.stderr[-3000:]
    assert re.findall(r"step (\d+) loss", chief.stdout) == STEPS


# TF 0.12's newer API tried first in the graph, the older one its fallback (the cloudml-samples trainers).
INITIALIZER = "        init_op = tf.global_variables_initializer()\n"
TRIED = ("        try:\n          init_op = tf.global_variables_initializer()\n"
         "        except AttributeError:\n          init_op = tf.initialize_all_variables()\n")


def test_a_newer_api_tried_before_an_older_one_is_read_as_the_newer():
    assert INITIALIZER in TRAINER
    result = run(TRAINER.replace(INITIALIZER, TRIED))
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    assert result.source == run(TRAINER).source


@pytest.mark.parametrize("source", [
    TRAINER.replace(INITIALIZER, TRIED.replace("AttributeError", "ValueError")),
    TRAINER.replace(INITIALIZER, TRIED.replace("          init_op = tf.initialize_all_variables()",
                                               "          init = tf.initialize_all_variables()")),
], ids=["another-exception", "another-name"])
def test_another_try_in_the_graph_leaves_the_program(source):
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1] == "        try:"
    assert finding.message == LEFT + "`try:` in the graph: only assignments are migrated"


# The trainer reading a tf.data input that ends (no repeat): TF1's session stopped there, on the cluster or not.
PLACEHOLDERS = ("        x = tf.placeholder(tf.float32, [None, 2])\n"
                "        y = tf.placeholder(tf.float32, [None, 1])\n")
DATASET = ("        dataset = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(1)\n"
           "        x, y = tf.data.make_one_shot_iterator(dataset).get_next()\n")
ENDING = TRAINER.replace(PLACEHOLDERS, DATASET).replace(", feed_dict={x: FEATURES, y: LABELS})", ")")


def test_an_input_that_ends_stops_the_loop_there_without_a_cluster_too():
    assert PLACEHOLDERS in TRAINER and "feed_dict" not in ENDING
    migrated = run(ENDING).source
    assert migrated.count("    except tf.errors.OutOfRangeError:  # TF1's session stopped there too\n") == 2


@pytest.mark.tensorflow
def test_without_a_cluster_the_migrated_trainer_stops_where_its_input_ends_as_tf1_did(tmp_path):
    from test_examples import run_command

    (tmp_path / "tf1.py").write_text(ENDING)
    (tmp_path / "tf2.py").write_text(run(ENDING).source)
    old, new = (run_command([str(tmp_path / name)]) for name in ("tf1.py", "tf2.py"))
    for done in (old, new):
        assert done.returncode == 0, done.stderr[-3000:]
    losses = [re.findall(r"step (\d+) loss (\S+)", done.stdout) for done in (old, new)]
    assert [step for step, _ in losses[1]] == ["1", "2", "3", "4"]
    assert losses[0] == losses[1]
