"""examples/ps_cluster/train.py as the distributed-TensorFlow tutorials wrote it: a ``tf.train.Supervisor``.

The same cluster, command line, graph, data and seeds; the loss written out by hand
(``tf.reduce_mean(tf.square(...))``, not ``tf.losses``); the chief's Supervisor
initialises the variables and keeps its checkpoints in ./train_logs; the loop runs
``while not sv.should_stop() and step < 1000``.

Run without arguments to start a local cluster of 1 ps + 1 worker on free ports,
both in this process, and train as its worker:
  python tests/parity_programs/ps_cluster_supervisor_tf1.py
"""
import argparse
import socket

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

NUM_FEATURES = 3
BATCH_SIZE = 8
LOGDIR = "train_logs"

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
  flags = parser.parse_args()

  local = not (flags.job_name or flags.ps_hosts or flags.worker_hosts)
  if local:
    flags.job_name = "worker"
    flags.ps_hosts = "localhost:%d" % free_port()
    flags.worker_hosts = "localhost:%d" % free_port()
  elif not (flags.job_name and flags.ps_hosts and flags.worker_hosts):
    parser.error("--job_name, --ps_hosts and --worker_hosts go together")

  cluster = tf.train.ClusterSpec({
      "ps": flags.ps_hosts.split(","),
      "worker": flags.worker_hosts.split(","),
  })
  if local:
    # This process serves the ps task too, in the background.
    tf.train.Server(cluster, job_name="ps", task_index=0)
  server = tf.train.Server(
      cluster, job_name=flags.job_name, task_index=flags.task_index)

  if flags.job_name == "ps":
    server.join()
    return

  is_chief = flags.task_index == 0
  tf.set_random_seed(42)
  with tf.device(tf.train.replica_device_setter(
      worker_device="/job:worker/task:%d" % flags.task_index,
      cluster=cluster)):
    x = tf.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    weights = tf.get_variable("weights", [NUM_FEATURES, 1])
    bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
    global_step = tf.train.get_or_create_global_step()

    loss = tf.reduce_mean(tf.square(y - (tf.matmul(x, weights) + bias)))
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=global_step)
    init_op = tf.global_variables_initializer()

  sv = tf.train.Supervisor(is_chief=is_chief, logdir=LOGDIR,
                           global_step=global_step, init_op=init_op,
                           saver=tf.train.Saver(), save_model_secs=600,
                           recovery_wait_secs=1)
  # Talk only to the ps tasks and this worker, not to the other workers.
  config = tf.ConfigProto(device_filters=[
      "/job:ps", "/job:worker/task:%d" % flags.task_index])
  with sv.managed_session(server.target, config=config) as sess:
    i = 0
    step = 0
    while not sv.should_stop() and step < 1000:
      batch_x, batch_y = next_batch(i)
      _, step, loss_value = sess.run(
          [train_op, global_step, loss], feed_dict={x: batch_x, y: batch_y})
      print("step %d loss %s" % (step, loss_value))
      i += 1
  sv.stop()


if __name__ == "__main__":
  main()
