"""Between-graph replicated training on a TensorFlow 1 parameter-server cluster.

Every task runs this program with its own --job_name and --task_index. The ps
tasks hold the variables and serve them (``server.join()``); each worker builds
the same graph, with ``replica_device_setter`` placing the variables on the ps
tasks, and trains a small linear model with ``MonitoredTrainingSession``;
worker 0 is the chief: it initialises the variables and writes checkpoints to
--checkpoint_dir (a temporary folder when not given), which a run resumes from.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/ps_cluster/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223
  python examples/ps_cluster/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223

Run without arguments to start a local cluster of 1 ps + 1 worker on free
ports, both in this process, and train as its worker.
"""
import argparse
import shutil
import socket
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf1

tf1.disable_eager_execution()

NUM_FEATURES = 3
BATCH_SIZE = 8

# y = x . [2, -1, 0.5] + 1 + noise, 32 rows.
rng = np.random.RandomState(0)
train_x = rng.normal(size=(32, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot([[2.0], [-1.0], [0.5]]) + 1.0
           + rng.normal(scale=0.1, size=(32, 1))).astype(np.float32)


def next_batch(i):
  start = (i * BATCH_SIZE) % len(train_x)
  return train_x[start:start + BATCH_SIZE], train_y[start:start + BATCH_SIZE]


def free_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--job_name", choices=["ps", "worker"])
  parser.add_argument("--task_index", type=int, default=0)
  parser.add_argument("--ps_hosts", default="", help="comma-separated host:port")
  parser.add_argument("--worker_hosts", default="", help="comma-separated host:port")
  parser.add_argument("--train_steps", type=int, default=20, help="the global step to train to")
  parser.add_argument("--checkpoint_dir", default="",
                      help="checkpoints (a temporary folder when empty)")
  flags = parser.parse_args()

  local = not (flags.job_name or flags.ps_hosts or flags.worker_hosts)
  if local:
    flags.job_name = "worker"
    flags.ps_hosts = "localhost:%d" % free_port()
    flags.worker_hosts = "localhost:%d" % free_port()
  elif not (flags.job_name and flags.ps_hosts and flags.worker_hosts):
    parser.error("--job_name, --ps_hosts and --worker_hosts go together")

  cluster = tf1.train.ClusterSpec({
      "ps": flags.ps_hosts.split(","),
      "worker": flags.worker_hosts.split(","),
  })
  if local:
    # This process serves the ps task too: a Server runs in the background
    # until the process exits (TF1 servers cannot be stopped).
    tf1.train.Server(cluster, job_name="ps", task_index=0)
  server = tf1.train.Server(
      cluster, job_name=flags.job_name, task_index=flags.task_index)

  if flags.job_name == "ps":
    server.join()
    return

  tf1.set_random_seed(42)
  with tf1.device(tf1.train.replica_device_setter(
      worker_device="/job:worker/task:%d" % flags.task_index,
      cluster=cluster)):
    x = tf1.placeholder(tf1.float32, [None, NUM_FEATURES], name="x")
    y = tf1.placeholder(tf1.float32, [None, 1], name="y")
    weights = tf1.get_variable("weights", [NUM_FEATURES, 1])
    bias = tf1.get_variable("bias", [1], initializer=tf1.zeros_initializer())
    global_step = tf1.train.get_or_create_global_step()

    loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)
    optimizer = tf1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=global_step)

  # Talk only to the ps tasks and this worker, not to the other workers.
  config = tf1.ConfigProto(device_filters=[
      "/job:ps", "/job:worker/task:%d" % flags.task_index])
  checkpoint_dir = flags.checkpoint_dir or tempfile.mkdtemp()
  hooks = [tf1.train.StopAtStepHook(last_step=flags.train_steps)]
  with tf1.train.MonitoredTrainingSession(
      master=server.target, is_chief=(flags.task_index == 0),
      checkpoint_dir=checkpoint_dir, config=config, hooks=hooks) as sess:
    i = 0
    while not sess.should_stop():
      batch_x, batch_y = next_batch(i)
      _, step, loss_value = sess.run(
          [train_op, global_step, loss], feed_dict={x: batch_x, y: batch_y})
      print("step %d loss %s" % (step, loss_value))
      i += 1

  if not flags.checkpoint_dir:
    shutil.rmtree(checkpoint_dir)


if __name__ == "__main__":
  main()
