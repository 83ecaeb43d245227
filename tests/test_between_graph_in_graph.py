"""In-graph programs (rewrites/between_graph/in_graph.py): the chief places ops on the cluster's tasks and runs them
in a plain tf.Session on its server's target while the other tasks join their server. TF2's chief connects to the
cluster as its own task and runs the ops eagerly; the other tasks make their server where they join it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from textwrap import dedent

import pytest
from helpers import run
from ports import free_port

LEFT = "between-graph program left as it is: "

# TF_CONFIG names the task; the chief's function builds the graph on every task and runs it on the server's target.
TF_CONFIG_PROGRAM = """\
import json
import os

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def compute(server, cluster):
  with tf.Graph().as_default():
    products = []
    for job in sorted(cluster):
      for index in range(len(cluster[job])):
        with tf.device("/job:%s/task:%d" % (job, index)):
          x = tf.constant([[1.0, 2.0], [3.0, 4.0]]) * (index + 1)
          products.append(tf.matmul(x, x))
    init = tf.global_variables_initializer()
    if server:
      master = server.target
    else:
      master = ""
    with tf.Session(master, config=tf.ConfigProto(allow_soft_placement=True)) as sess:
      sess.run(init)
      for product in products:
        print("product:", sess.run(product).tolist())
      ends = sess.run([products[0], products[-1]])
      print("ends:", [end.tolist() for end in ends])
      print("all:", [product.sum() for product in sess.run(products)])


def main():
  config = json.loads(os.environ.get("TF_CONFIG", "{}"))
  cluster = config.get("cluster", {})
  task = config.get("task", {})
  server = None
  device_fn = tf.train.replica_device_setter()
  if cluster:
    server_def = tf.train.ServerDef(cluster=tf.train.ClusterSpec(cluster).as_cluster_def(),
                                    job_name=task["type"], task_index=task["index"], protocol="grpc")
    # This task's server.
    server = tf.train.Server(server_def)
    device_fn = tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=server_def.cluster)
  if task.get("type") in ("ps", "worker"):
    server.join()
  else:
    with tf.device(device_fn):
      compute(server, cluster)


if __name__ == "__main__":
  main()
"""

TF_CONFIG_MIGRATED = """\
import json
import os

import tensorflow as tf


def compute(server, cluster):
  products = []
  for job in sorted(cluster):
    for index in range(len(cluster[job])):
      with tf.device("/job:%s/task:%d" % (job, index)):
        x = tf.compat.v1.constant([[1.0, 2.0], [3.0, 4.0]]) * (index + 1)
        products.append(tf.matmul(x, x))
  if server:
    master = server.target
  else:
    master = ""
  for product in products:
    print("product:", product.numpy().tolist())
  ends = [products[0].numpy(), products[-1].numpy()]
  print("ends:", [end.tolist() for end in ends])
  print("all:", [product.sum() for product in [tensor.numpy() for tensor in products]])


def main():
  config = json.loads(os.environ.get("TF_CONFIG", "{}"))
  cluster = config.get("cluster", {})
  task = config.get("task", {})
  server = None
  device_fn = None
  if cluster:
    server_def = tf.train.ServerDef(cluster=tf.train.ClusterSpec(cluster).as_cluster_def(),
                                    job_name=task["type"], task_index=task["index"], protocol="grpc")
    device_fn = "/job:worker/task:0"
  if task.get("type") in ("ps", "worker"):
    # This task's server.
    server = tf.distribute.Server(server_def)
    server.join()
  else:
    # TF1's chief ran the graph in a session on its server: TF2's connects to the cluster as its own task.
    if cluster:
      tf.config.experimental_connect_to_cluster(
          tf.train.ClusterSpec(server_def.cluster),
          job_name=server_def.job_name,
          task_index=server_def.task_index,
          protocol=server_def.protocol)
    tf.config.set_soft_device_placement(True)
    with tf.device(device_fn):
      compute(server, cluster)


if __name__ == "__main__":
  main()
"""

# Flags name the task; worker 0 is the chief, and builds and runs the graph where it branches.
FLAGS_PROGRAM = """\
import argparse

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

parser = argparse.ArgumentParser()
parser.add_argument("--ps_hosts")
parser.add_argument("--worker_hosts")
parser.add_argument("--job_name")
parser.add_argument("--task_index", type=int, default=0)
FLAGS, _ = parser.parse_known_args()


def main():
  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps" or FLAGS.task_index > 0:
    server.join()
  else:
    with tf.device("/job:ps/task:0"):
      halves = tf.fill([3], 0.5)
    with tf.device("/job:worker/task:1"):
      total = tf.reduce_sum(halves * tf.range(3.0))
    with tf.Session(server.target) as sess:
      print("total:", sess.run(total))


if __name__ == "__main__":
  main()
"""

FLAGS_MIGRATED_MAIN = """\
def main():
  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
  if FLAGS.job_name == "ps" or FLAGS.task_index > 0:
    server = tf.distribute.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    server.join()
  else:
    # TF1's chief ran the graph in a session on its server: TF2's connects to the cluster as its own task.
    tf.config.experimental_connect_to_cluster(
        cluster,
        job_name=FLAGS.job_name,
        task_index=FLAGS.task_index)
    with tf.device("/job:ps/task:0"):
      halves = tf.fill([3], 0.5)
    with tf.device("/job:worker/task:1"):
      total = tf.compat.v1.reduce_sum(halves * tf.range(3.0))
    print("total:", total.numpy())
"""

IN_GRAPH = ("in-graph program -> the chief connects to the cluster (tf.config.experimental_connect_to_cluster) and "
            "runs the ops eagerly on the tasks named; the other tasks serve; the chief starts no Server of its own")
PLAIN = ("a plain `tf.Session` runs the cluster's graph: only a MonitoredTrainingSession or a Supervisor's session, or "
         "an in-graph program (ops placed on the tasks, no variables) run by the chief, is migrated; ")


def test_tf_config_program():
    result = run(TF_CONFIG_PROGRAM)
    assert result.source == TF_CONFIG_MIGRATED
    cluster_findings = [(f.rule, f.message) for f in result.findings if f.rule in ("TFM103", "TFM104", "TFM107")]
    assert cluster_findings == [("TFM103", IN_GRAPH)]


def test_flags_program():
    result = run(FLAGS_PROGRAM)
    assert FLAGS_MIGRATED_MAIN in result.source
    assert "import tensorflow as tf\n" in result.source and "disable_v2_behavior" not in result.source
    assert [f.rule for f in result.findings if f.rule in ("TFM103", "TFM104", "TFM107")] == ["TFM103"]


@pytest.mark.parametrize("old, new, where, why", [
    ("halves = tf.fill([3], 0.5)", "halves = tf.Variable(tf.fill([3], 0.5))", "tf.Variable(",
     "`tf.Variable` is not a stateless op of the graph (no variables, optimizers, placeholders, random ops or Keras "
     "are); migrate it by hand"),
    ("halves = tf.fill([3], 0.5)", "halves = tf.random_uniform([3])", "tf.random_uniform(",
     "`tf.random_uniform` is not a stateless op of the graph (no variables, optimizers, placeholders, random ops or "
     "Keras are); migrate it by hand"),
    ('print("total:", sess.run(total))', 'print("total:", sess.run(total, feed_dict={}))', "sess.run(total, ",
     "`sess` is used besides `sess.run(tensors)`: migrate it by hand"),
    ("with tf.Session(server.target) as sess:", "sess = tf.Session(server.target)\n    if True:",
     "tf.Session(server.target)", "only `with tf.Session(...) as sess:` is read; migrate the program by hand"),
    ("server.join()", "pass", "server = tf.train.Server(",
     "the tasks that do not run the session must `server.join()` in the branches of one `if`; migrate the program "
     "by hand"),
    ("halves = tf.fill([3], 0.5)", "halves = shapes.halves(3)", "shapes.halves(",
     "`shapes.halves` of `shapes` may make variables the migration cannot see; migrate the program by hand"),
    ("  server = tf.train.Server(", "  cluster = tf.train.ClusterSpec(cluster.as_dict())\n  server = tf.train.Server(",
     None, "`cluster` is bound more than once where the server is made: what it is where the tasks "
     "serve and the chief connects is not read; migrate the program by hand"),
], ids=["variable", "random", "feed", "not-with", "no-join", "imported", "rebound"])
def test_left_with_its_reason(old, new, where, why):
    source = FLAGS_PROGRAM.replace(old, new).replace("import argparse\n", "import argparse\n\nimport shapes\n")
    result = run(source)
    assert "experimental_connect_to_cluster" not in result.source and "tf.Session(server.target)" in result.source
    left = [f for f in result.findings if f.rule == "TFM104"]
    assert [f.message for f in left] == [LEFT + PLAIN + why]
    # Where it starts (None: on the Server's line, whose columns are of the code TFM101 renamed it in).
    line = source.splitlines()[left[0].line - 1]
    assert line[left[0].col - 1:].startswith(where) if where else "tf.train.Server(cluster" in line


def _launch(program: str, tasks: list[tuple[dict, list[str]]], tmp_path, name: str) -> str:
    """Runs ``program`` once per task (environment, arguments), the last the chief; the chief's stdout."""
    path = tmp_path / name
    path.write_text(program)
    base = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    base.update(CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2")
    processes = [subprocess.Popen([sys.executable, str(path), *arguments], env={**base, **environment},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for environment, arguments in tasks]
    try:
        out, err = processes[-1].communicate(timeout=180)
    finally:
        for process in processes[:-1]:
            process.kill()
            process.wait()
    assert processes[-1].returncode == 0, err[-3000:]
    return out


def _tf_config_tasks():
    ports = [free_port() for _ in range(3)]
    cluster = {job: [f"127.0.0.1:{port}"] for job, port in zip(("chief", "ps", "worker"), ports)}
    return [({"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": job, "index": 0}})}, [])
            for job in ("ps", "worker", "chief")]


def _flag_tasks():
    hosts = [f"127.0.0.1:{free_port()}" for _ in range(3)]
    flags = [f"--ps_hosts={hosts[0]}", f"--worker_hosts={hosts[1]},{hosts[2]}"]
    return [({}, [*flags, "--job_name=ps"]), ({}, [*flags, "--job_name=worker", "--task_index=1"]),
            ({}, [*flags, "--job_name=worker", "--task_index=0"])]


@pytest.mark.tensorflow
@pytest.mark.parametrize("program, tasks", [(TF_CONFIG_PROGRAM, _tf_config_tasks), (FLAGS_PROGRAM, _flag_tasks)],
                         ids=["tf-config", "flags"])
def test_migrated_chief_prints_what_tf1_printed(program, tasks, tmp_path):
    migrated = run(program).source
    assert "experimental_connect_to_cluster" in migrated
    tf1 = _launch(dedent(program), tasks(), tmp_path, "tf1.py")
    tf2 = _launch(migrated, tasks(), tmp_path, "tf2.py")
    assert tf1.strip() and tf2 == tf1
