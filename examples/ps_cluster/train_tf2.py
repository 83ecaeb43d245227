"""Between-graph replicated training on a TensorFlow 1 parameter-server cluster.

Every task runs this program with its own --job_name and --task_index. The ps
tasks hold the variables and serve them (``server.join()``); each worker builds
the same graph, with ``replica_device_setter`` placing the variables on the ps
tasks, and trains a small linear model with ``MonitoredTrainingSession``;
worker 0 is the chief and initialises the variables.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/ps_cluster/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223
  python examples/ps_cluster/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223

Run without arguments to start a local cluster of 1 ps + 1 worker on free
ports, both in this process, and train as its worker.
"""
import argparse
import socket

import numpy as np
import tensorflow.compat.v1 as tf1
import tensorflow as tf
import tf_keras as keras

NUM_FEATURES = 3
BATCH_SIZE = 8
TRAIN_STEPS = 20

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
    # This process serves the ps task too: a Server runs in the background
    # until the process exits (TF1 servers cannot be stopped).
    tf.distribute.Server(cluster, job_name="ps", task_index=0)
  server = tf.distribute.Server(
      cluster, job_name=flags.job_name, task_index=flags.task_index)

  if flags.job_name == "ps":
    server.join()
    return

  tf.random.set_seed(42)
  if not (flags.task_index == 0):
    # TF1's chief drives the cluster's training now; the other workers serve it.
    server.join()
  # The coordinator joins the cluster on a port of its own: a chief task keeps its server.
  jobs = tf.train.ClusterSpec(cluster).as_dict()
  jobs.pop("chief", None)
  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
      tf.train.ClusterSpec(jobs), rpc_layer="grpc")
  strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
  with strategy.scope():
    weights = tf.Variable(
        tf.compat.v1.glorot_uniform_initializer()([NUM_FEATURES, 1]), name="weights")
    bias = tf.Variable(tf1.zeros_initializer()([1]), name="bias")
    optimizer = keras.optimizers.legacy.SGD(learning_rate=0.1)
  coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

  @tf.function
  def train_step(x, y):
    """One run of TF1's train_op, on a worker."""
    def step(x, y):
      with tf.GradientTape() as tape:
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)
      variables = [weights, bias]
      optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
      return loss
    return strategy.run(step, args=(x, y))

  i = 0
  scheduled_steps = int(optimizer.iterations)
  while scheduled_steps < TRAIN_STEPS:
    batch_x, batch_y = next_batch(i)
    loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y))
    scheduled_steps += 1
    step = scheduled_steps
    print("step %d loss %s" % (step, loss_value.fetch()))
    i += 1
  coordinator.join()


if __name__ == "__main__":
  main()
