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
import os
import shutil
import socket
import tempfile

import numpy as np
import keras
import tensorflow.compat.v1 as tf1
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

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


def restore_tf1_checkpoint(path, variables, optimizer):
  """Carry on from the TF1 checkpoint at `path`: its variables, optimizer slots and step."""
  # A checkpoint that does not fit (a variable missing or of another shape, slots of another
  # optimizer) is refused, naming what does not fit, before anything is assigned. TF1's
  # files are only read.
  # The variables each optimizer trains, and TF1's names of its slots of a variable {}, with
  # Keras' names of them.
  parts = [
      (variables, optimizer, {}),
  ]
  reader = tf.train.load_checkpoint(path)
  saved = reader.get_variable_to_shape_map()
  # TF1's name -> what holds it here: a variable's shards (or the variable), or the step
  # count of each optimizer.
  targets = {"global_step": [optimizer.iterations for _, optimizer, _ in parts]}
  unused = set()  # saved by TF1, not needed here
  for variables, optimizer, slots in parts:
    for name, variable in variables.items():
      shards = getattr(variable, "variables", [variable])  # a ShardedVariable's
      targets[name] = shards
      if not shards[0].trainable:
        continue
      for tf1_slot, slot in slots.items():
        # TF1 named a slot after its variable, or after the variable's one shard or its
        # handle: `<name>/part_0/Adagrad`, `<name>/t_0/Adagrad`.
        keys = [tf1_slot.format(f"{name}{tail}") for tail in ("", "/part_0", "/t_0")]
        key = next((key for key in keys if key in saved), keys[0])
        if slot is None:
          unused.add(key)
        else:
          targets[key] = [optimizer.add_slot(shard, slot) for shard in shards]
  problems = []
  for name, shards in targets.items():
    rows = sum(shard.shape[0] for shard in shards) if shards[0].shape.rank else None
    shape = [rows, *shards[0].shape[1:]] if rows is not None else []
    if name not in saved:
      problems.append(f"{name} is missing")
    elif saved[name] != shape:
      problems.append(f"{name} is {saved[name]} there, {shape} here")
  unknown = sorted(set(saved) - set(targets) - unused)
  problems += [f"{name} is not this program's" for name in unknown]
  if problems:
    raise ValueError(f"the TF1 checkpoint {path} does not fit this program: {'; '.join(problems)}")
  for name, shards in targets.items():
    value = reader.get_tensor(name)
    start = 0
    for shard in shards:
      if shard.shape.rank:
        shard.assign(value[start:start + shard.shape[0]])
        start += shard.shape[0]
      else:
        shard.assign(value)


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

  # What is fed is converted to the placeholders' dtypes, as TF1 converted it.
  @tf.function(input_signature=[
      tf.TensorSpec([None, NUM_FEATURES], tf1.float32),
      tf.TensorSpec([None, 1], tf1.float32),
  ])
  def train_step(x, y):
    """One run of TF1's train_op, on a worker."""
    def step(x, y):
      with tf.GradientTape() as tape:
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)
      variables = [weights, bias]
      optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
      return loss
    return strategy.run(step, args=(x, y))
  checkpoint_dir = flags.checkpoint_dir or tempfile.mkdtemp()

  checkpoint = tf.train.Checkpoint(optimizer=optimizer, weights=weights, bias=bias)
  manager = tf.train.CheckpointManager(
      checkpoint, os.path.join(checkpoint_dir, "tf2"), max_to_keep=5)
  # Carry on from the latest checkpoint: this program's own, or else the TF1 program's.
  tf1_checkpoint = tf.train.latest_checkpoint(checkpoint_dir)
  if manager.latest_checkpoint:
    checkpoint.restore(manager.latest_checkpoint)
  elif tf1_checkpoint:
    with strategy.scope():
      restore_tf1_checkpoint(tf1_checkpoint, {
          "weights": weights,
          "bias": bias,
      }, optimizer)

  i = 0
  scheduled_steps = int(optimizer.iterations)
  while scheduled_steps < flags.train_steps:
    batch_x, batch_y = next_batch(i)
    loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y))
    scheduled_steps += 1
    step = scheduled_steps
    print("step %d loss %s" % (step, loss_value.fetch()))
    i += 1
  coordinator.join()
  manager.save()

  if not flags.checkpoint_dir:
    shutil.rmtree(checkpoint_dir)


if __name__ == "__main__":
  main()
