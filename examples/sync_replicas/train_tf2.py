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
import keras
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

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

  if flags.job_name == "ps":
    # Synchronous training keeps no variables on parameter servers: a ps task has nothing to serve.
    return
  tf.random.set_seed(7)
  # Synchronous as SyncReplicasOptimizer was: workers all-reduce their gradients; no ps tasks.
  jobs = tf.train.ClusterSpec(cluster).as_dict()
  jobs.pop("ps", None)
  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
      tf.train.ClusterSpec(jobs),
      task_type=flags.job_name,
      task_id=flags.task_index,
      rpc_layer="grpc")
  strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
  with strategy.scope():
    weights = tf.Variable(
        tf.compat.v1.glorot_uniform_initializer()([NUM_FEATURES, 1]), name="weights")
    bias = tf.Variable(tf.compat.v1.zeros_initializer()([1]), name="bias")
    optimizer = keras.optimizers.legacy.SGD(learning_rate=0.05, momentum=0.9)

  # What is fed is converted to the placeholders' dtypes, as TF1 converted it.
  @tf.function(input_signature=[
      tf.TensorSpec([None, NUM_FEATURES], tf.float32),
      tf.TensorSpec([None, 1], tf.float32),
  ])
  def train_step(x, y):
    """One run of TF1's train_op, on every worker at once."""
    def step(x, y):
      with tf.GradientTape() as tape:
        loss = tf.compat.v1.reduce_mean(tf.square(tf.matmul(x, weights) + bias - y))
        # apply_gradients sums the gradients over the workers: of these shares, their average.
        scaled_loss = loss / strategy.num_replicas_in_sync
      variables = [weights, bias]
      optimizer.apply_gradients(zip(tape.gradient(scaled_loss, variables), variables))
      return loss
    return strategy.run(step, args=(x, y))

  # stop_grace_period_secs: the chief's queue runner waits for gradients that
  # no longer come until the session closes; do not wait the default 2 minutes.
  i = 0
  trained_steps = int(optimizer.iterations.numpy())
  while trained_steps < TRAIN_STEPS:
    batch_x, batch_y = next_batch(i, flags.task_index, num_workers)
    loss_value = train_step(batch_x, batch_y)
    trained_steps += 1
    step = trained_steps
    print("step %d loss %s" % (step, loss_value.numpy()))
    i += 1


if __name__ == "__main__":
  main()
