"""Synchronous between-graph training with SyncReplicasOptimizer on a TensorFlow 1 cluster.

Every task runs this program with its own --job_name and --task_index. The ps
task holds the variables; each worker builds the same graph and computes the
gradients of its own batch, and SyncReplicasOptimizer applies their average
once every worker has sent one: one update of the global step per round.
Worker 0 is the chief: it initialises the variables and aggregates.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/sync_replicas/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224
  python examples/sync_replicas/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224
  python examples/sync_replicas/train.py --job_name=worker --task_index=1 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224

Run without arguments to start a local cluster of 1 ps + 1 worker on free
ports, both in this process, and train as its worker.
"""
import argparse
import socket

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

NUM_FEATURES = 4
BATCH_SIZE = 8
TRAIN_STEPS = 20

# y = x . [1, -2, 0.5, 3] - 1 + noise, 64 rows.
rng = np.random.RandomState(1)
train_x = rng.normal(size=(64, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot([[1.0], [-2.0], [0.5], [3.0]]) - 1.0
           + rng.normal(scale=0.1, size=(64, 1))).astype(np.float32)


def next_batch(i, task_index, num_workers):
  """Worker task_index's batch of round i: the workers read different rows."""
  start = ((i * num_workers + task_index) * BATCH_SIZE) % len(train_x)
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
  flags = parser.parse_args()

  local = not (flags.job_name or flags.ps_hosts or flags.worker_hosts)
  if local:
    flags.job_name = "worker"
    flags.ps_hosts = "localhost:%d" % free_port()
    flags.worker_hosts = "localhost:%d" % free_port()
  elif not (flags.job_name and flags.ps_hosts and flags.worker_hosts):
    parser.error("--job_name, --ps_hosts and --worker_hosts go together")

  ps_hosts = flags.ps_hosts.split(",")
  worker_hosts = flags.worker_hosts.split(",")
  num_workers = len(worker_hosts)
  cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
  if local:
    # This process serves the ps task too, in the background, until it exits.
    tf.train.Server(cluster, job_name="ps", task_index=0)
  server = tf.train.Server(
      cluster, job_name=flags.job_name, task_index=flags.task_index)

  if flags.job_name == "ps":
    server.join()
    return

  is_chief = flags.task_index == 0
  tf.set_random_seed(7)
  with tf.device(tf.train.replica_device_setter(
      worker_device="/job:worker/task:%d" % flags.task_index,
      cluster=cluster)):
    x = tf.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    weights = tf.get_variable("weights", [NUM_FEATURES, 1])
    bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
    global_step = tf.train.get_or_create_global_step()

    loss = tf.reduce_mean(tf.square(tf.matmul(x, weights) + bias - y))
    optimizer = tf.train.SyncReplicasOptimizer(
        tf.train.MomentumOptimizer(0.05, momentum=0.9),
        replicas_to_aggregate=num_workers, total_num_replicas=num_workers)
    train_op = optimizer.minimize(loss, global_step=global_step)

  hooks = [optimizer.make_session_run_hook(is_chief, num_tokens=0),
           tf.train.StopAtStepHook(last_step=TRAIN_STEPS)]
  # stop_grace_period_secs: the chief's queue runner waits for gradients that
  # no longer come until the session closes; do not wait the default 2 minutes.
  with tf.train.MonitoredTrainingSession(
      master=server.target, is_chief=is_chief, hooks=hooks,
      stop_grace_period_secs=1) as sess:
    i = 0
    while not sess.should_stop():
      batch_x, batch_y = next_batch(i, flags.task_index, num_workers)
      _, step, loss_value = sess.run(
          [train_op, global_step, loss], feed_dict={x: batch_x, y: batch_y})
      print("step %d loss %s" % (step, loss_value))
      i += 1


if __name__ == "__main__":
  main()
