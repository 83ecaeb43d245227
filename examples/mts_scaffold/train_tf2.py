"""A TF1 parameter-server program reading a CSV file through queue runners.

The shape of the TF1 distributed trainers built on MonitoredTrainingSession:
flags give the cluster and the role; each worker builds the graph with
``replica_device_setter``, its batches read from a CSV file by a queue-runner
input (``string_input_producer``, ``TextLineReader``, ``decode_csv``,
``tf.train.batch``), and trains under ``MonitoredTrainingSession`` with a
``Scaffold`` whose ``Saver`` keeps the last 3 checkpoints, a ``StopAtStepHook``
and, on the chief (worker 0), a ``SummarySaverHook``. The CSV file is written
to a temporary folder, with the checkpoints and summaries, removed at the end.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/mts_scaffold/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223
  python examples/mts_scaffold/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223

Run without --ps_hosts / --worker_hosts to start a local cluster of 1 ps + 1 worker
on free ports, both in this process, and train as its worker.
"""
import os
import shutil
import socket
import tempfile

import numpy as np
import keras
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

flags = tf.compat.v1.app.flags
flags.DEFINE_string("ps_hosts", "", "comma-separated host:port of the ps tasks")
flags.DEFINE_string("worker_hosts", "", "comma-separated host:port of the workers")
flags.DEFINE_string("job_name", "worker", "ps or worker")
flags.DEFINE_integer("task_index", 0, "index of the task in its job")
flags.DEFINE_integer("train_steps", 20, "the global step to train to")
flags.DEFINE_string("data_dir", "", "where the CSV file is written (a temporary folder when empty)")
FLAGS = flags.FLAGS

NUM_FEATURES = 3
BATCH_SIZE = 8


def write_csv(folder):
  """y = x . [1, -2, 0.5] + 0.3 + noise, 40 rows of `x0,x1,x2,y`."""
  rng = np.random.RandomState(3)
  x = rng.normal(size=(40, NUM_FEATURES))
  y = x.dot([1.0, -2.0, 0.5]) + 0.3 + rng.normal(scale=0.1, size=40)
  path = os.path.join(folder, "train.csv")
  with open(path, "w") as f:
    for row, label in zip(x, y):
      f.write(",".join("%.6f" % v for v in [*row, label]) + "\n")
  return path


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


def main(_):
  local = not (FLAGS.ps_hosts or FLAGS.worker_hosts)
  if local:
    FLAGS.ps_hosts = "localhost:%d" % free_port()
    FLAGS.worker_hosts = "localhost:%d" % free_port()
  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","),
                                  "worker": FLAGS.worker_hosts.split(",")})
  if local:
    # This process serves the ps task too, in the background.
    tf.distribute.Server(cluster, job_name="ps", task_index=0)
  server = tf.distribute.Server(cluster, job_name=FLAGS.job_name,
                           task_index=FLAGS.task_index)

  if FLAGS.job_name == "ps":
    server.join()
    return

  data_dir = FLAGS.data_dir or tempfile.mkdtemp()
  csv_path = write_csv(data_dir)
  tf.random.set_seed(5)
  if not (FLAGS.task_index == 0):
    # TF1's chief drives the cluster's training now; the other workers serve it.
    server.join()
  # The coordinator joins the cluster on a port of its own: a chief task keeps its server.
  jobs = tf.train.ClusterSpec(cluster).as_dict()
  jobs.pop("chief", None)
  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
      tf.train.ClusterSpec(jobs), rpc_layer="grpc")
  strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)

  def dataset_fn():
    """TF1's input pipeline, on each worker."""
    # One reader thread, the file names in order: the same batches every run.
    files = tf.data.Dataset.from_tensor_slices([csv_path])
    def make_example(line):
      columns = tf.compat.v1.decode_csv(line, record_defaults=[[0.0]] * (NUM_FEATURES + 1))
      features = tf.stack(columns[:NUM_FEATURES])
      label = tf.stack(columns[NUM_FEATURES:])
      return features, label
    dataset = (tf.data.TextLineDataset(files)
      .repeat()
      .map(make_example)
      .batch(BATCH_SIZE, drop_remainder=True))
    return dataset

  with strategy.scope():
    weights = tf.Variable(
        tf.compat.v1.glorot_uniform_initializer()([NUM_FEATURES, 1]), name="weights")
    bias = tf.Variable(tf.compat.v1.zeros_initializer()([1]), name="bias")
    optimizer = keras.optimizers.legacy.SGD(learning_rate=0.05)
  coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
  per_worker_iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))

  @tf.function
  def train_step(iterator):
    """One run of TF1's train_op, on a worker."""
    def step(x, y):
      with tf.GradientTape() as tape:
        loss = tf.compat.v1.losses.mean_squared_error(y, tf.matmul(x, weights) + bias)
      variables = [weights, bias]
      optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
      return loss
    return strategy.run(step, args=next(iterator))

  checkpoint_dir = os.path.join(data_dir, "checkpoints")

  checkpoint = tf.train.Checkpoint(optimizer=optimizer, weights=weights, bias=bias)
  manager = tf.train.CheckpointManager(
      checkpoint, os.path.join(checkpoint_dir, "tf2"), max_to_keep=3)
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

  scheduled_steps = int(optimizer.iterations)
  while scheduled_steps < FLAGS.train_steps:
    loss_value = coordinator.schedule(train_step, args=(per_worker_iterator,))
    scheduled_steps += 1
    step = scheduled_steps
    print("step %d loss %s" % (step, loss_value.fetch()))
  coordinator.join()
  manager.save()

  if not FLAGS.data_dir:
    shutil.rmtree(data_dir)


if __name__ == "__main__":
  tf.compat.v1.app.run()
