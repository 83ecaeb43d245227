"""Distributed MNIST-like training with model replicas, shaped as TensorFlow's mnist_replica.py.

A softmax model with one hidden layer (model.py): its variables live on the ps
task, each worker builds the same graph under ``replica_device_setter``, feeds
its batches through placeholders and trains under a ``tf.train.Supervisor``
(``prepare_or_wait_for_session``), worker 0 as its chief, until the global step
it fetched reaches --train_steps; the chief then prints the validation cross
entropy. With --sync_replicas, SyncReplicasOptimizer aggregates
--replicas_to_aggregate gradients (default: one per worker) before each update.
The data are a small synthetic "mnist" made with numpy: nothing is downloaded.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/mnist_replica/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224
  python examples/mnist_replica/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224
  python examples/mnist_replica/train.py --job_name=worker --task_index=1 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224

Run without --ps_hosts / --worker_hosts to start a local cluster of 1 ps + 1
worker on free ports, both in this process, and train as its worker.
"""
import math
import os
import shutil
import socket
import tempfile

import numpy as np
import keras
import tensorflow as tf

import model

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

flags = tf.compat.v1.app.flags
flags.DEFINE_string("ps_hosts", "", "comma-separated host:port of the ps tasks")
flags.DEFINE_string("worker_hosts", "", "comma-separated host:port of the workers")
flags.DEFINE_string("job_name", "worker", "ps or worker")
flags.DEFINE_integer("task_index", 0, "index of the task in its job; 0 is the chief")
flags.DEFINE_integer("train_steps", 20, "the global step to train to")
flags.DEFINE_integer("batch_size", 32, "training batch size")
flags.DEFINE_float("learning_rate", 0.01, "learning rate")
flags.DEFINE_integer("hidden_units", 32, "units in the hidden layer")
flags.DEFINE_boolean("sync_replicas", False,
                     "aggregate the workers' gradients before each update")
flags.DEFINE_integer("replicas_to_aggregate", None,
                     "gradients to aggregate per update (default: the workers)")
FLAGS = flags.FLAGS

IMAGE_PIXELS = 8
NUM_CLASSES = 10


class DataSet(object):
  """Images and one-hot labels, served in order, batch after batch, from row `start` on."""

  def __init__(self, images, labels, start=0):
    self.images, self.labels = images, labels
    self._start = start

  def next_batch(self, batch_size):
    rows = np.arange(self._start, self._start + batch_size) % len(self.images)
    self._start = (self._start + batch_size) % len(self.images)
    return self.images[rows], self.labels[rows]


class Datasets(object):
  """What input_data.read_data_sets gives: .train and .validation."""

  def __init__(self, train, validation):
    self.train, self.validation = train, validation


def synthetic_mnist(start, seed=0):
  """10 noisy prototypes of 8x8 images: 512 training rows (the batches start at
  row `start`), 128 validation rows."""
  rng = np.random.RandomState(seed)
  prototypes = rng.uniform(size=(NUM_CLASSES, IMAGE_PIXELS * IMAGE_PIXELS))

  def rows(count, start=0):
    labels = rng.randint(NUM_CLASSES, size=count)
    images = prototypes[labels] + rng.normal(scale=0.3, size=(count, prototypes.shape[1]))
    return DataSet(np.clip(images, 0.0, 1.0).astype(np.float32),
                   np.eye(NUM_CLASSES, dtype=np.float32)[labels], start)

  return Datasets(rows(512, start), rows(128))


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
      (variables, optimizer, {"{}/Adam": "m", "{}/Adam_1": "v"}),
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
  # TF1's Adam kept the powers of beta1 and beta2 it had reached; TF1Adam keeps them too.
  targets["beta1_power"], targets["beta2_power"] = (
      [power] for power in optimizer.tf1_powers())
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


class TF1Adam(keras.optimizers.legacy.Adam):
  """Adam as TensorFlow 1's Adam optimizer computes it."""
  # TF1 keeps the powers of beta1 and beta2 its bias correction reads in two variables,
  # multiplied by beta1 and beta2 after each step; Keras computes them from the step count.
  # The float32 results differ in their last bits, and the trainings drift apart.

  def tf1_powers(self):
    """TF1's beta1_power and beta2_power, weights of this optimizer."""
    if not hasattr(self, "_tf1_powers"):
      with self._distribution_strategy_scope():
        self._tf1_powers = tuple(
            self.add_weight(
                name, shape=[], trainable=False,
                initializer=keras.initializers.Constant(self._serialize_hyperparameter(beta)),
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
            for name, beta in (("beta1_power", "beta_1"), ("beta2_power", "beta_2")))
    return self._tf1_powers

  def _create_all_weights(self, var_list):
    super()._create_all_weights(var_list)
    self.tf1_powers()

  def _prepare_local(self, var_device, var_dtype, apply_state):
    super()._prepare_local(var_device, var_dtype, apply_state)
    coefficients = apply_state[(var_device, var_dtype)]
    beta_1_power, beta_2_power = (tf.cast(power, var_dtype) for power in self.tf1_powers())
    coefficients.update(
        beta_1_power=beta_1_power, beta_2_power=beta_2_power,
        lr=coefficients["lr_t"] * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power))

  def _distributed_apply(self, distribution, grads_and_vars, apply_state, name):
    applied = super()._distributed_apply(distribution, grads_and_vars, apply_state, name)
    # After the step, which read them (in a tf.function, in the order written).
    for power, beta in zip(self.tf1_powers(), ("beta_1", "beta_2")):
      power.assign(power * self._get_hyper(beta, tf.float32))
    return applied


def main(unused_argv):
  # Each worker reads other batches: worker i's first is the i-th.
  mnist = synthetic_mnist(start=FLAGS.task_index * FLAGS.batch_size)
  local = not (FLAGS.ps_hosts or FLAGS.worker_hosts)
  if local:
    FLAGS.ps_hosts = "localhost:%d" % free_port()
    FLAGS.worker_hosts = "localhost:%d" % free_port()
  ps_spec = FLAGS.ps_hosts.split(",")
  worker_spec = FLAGS.worker_hosts.split(",")
  num_workers = len(worker_spec)
  cluster = tf.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
  if local:
    # This process serves the ps task too, in the background, until it exits.
    if not FLAGS.sync_replicas:
      tf.distribute.Server(cluster, job_name="ps", task_index=0)
  if not FLAGS.sync_replicas:
    server = tf.distribute.Server(
        cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps":
    if not FLAGS.sync_replicas:
      server.join()
    # Synchronous training keeps no variables on parameter servers: a ps task has nothing to serve.
    return

  is_chief = (FLAGS.task_index == 0)
  tf.random.set_seed(7)
  if FLAGS.sync_replicas:
    if FLAGS.replicas_to_aggregate is None:
      replicas_to_aggregate = num_workers
    else:
      replicas_to_aggregate = FLAGS.replicas_to_aggregate
    if replicas_to_aggregate != num_workers:
      raise ValueError(
          "replicas_to_aggregate=%d of %d workers: MultiWorkerMirroredStrategy averages "
          "the gradients of every worker each step, as SyncReplicasOptimizer did only for "
          "replicas_to_aggregate equal to the number of workers: migrate this configuration "
          "by hand" % (replicas_to_aggregate, num_workers))
    # Synchronous as SyncReplicasOptimizer was: workers all-reduce their gradients; no ps tasks.
    jobs = tf.train.ClusterSpec(cluster).as_dict()
    jobs.pop("ps", None)
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(jobs),
        task_type=FLAGS.job_name,
        task_id=FLAGS.task_index,
        rpc_layer="grpc")
    strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
    with strategy.scope():
      hid_w = tf.Variable(
          tf.random.truncated_normal(
              [IMAGE_PIXELS * IMAGE_PIXELS, FLAGS.hidden_units],
              stddev=1.0 / IMAGE_PIXELS),
          name="hid_w")
      hid_b = tf.Variable(tf.zeros([FLAGS.hidden_units]), name="hid_b")
      sm_w = tf.Variable(
          tf.random.truncated_normal(
              [FLAGS.hidden_units, NUM_CLASSES],
              stddev=1.0 / math.sqrt(FLAGS.hidden_units)),
          name="sm_w")
      sm_b = tf.Variable(tf.zeros([NUM_CLASSES]), name="sm_b")
      opt = TF1Adam(learning_rate=FLAGS.learning_rate, epsilon=1e-08)

    # What is fed is converted to the placeholders' dtypes, as TF1 converted it.
    @tf.function(input_signature=[
        tf.TensorSpec([None, IMAGE_PIXELS * IMAGE_PIXELS], tf.float32),
        tf.TensorSpec([None, NUM_CLASSES], tf.float32),
    ])
    def train_step(x, y_):
      """One run of TF1's train_op, on every worker at once."""
      def step(x, y_):
        with tf.GradientTape() as tape:
          y = model.inference(x, hid_w, hid_b, sm_w, sm_b)
          cross_entropy = model.loss(y, y_)
          # apply_gradients sums the gradients over the workers: of these shares, their average.
          scaled_loss = cross_entropy / strategy.num_replicas_in_sync
        variables = [hid_w, hid_b, sm_w, sm_b]
        opt.apply_gradients(zip(tape.gradient(scaled_loss, variables), variables))
        return cross_entropy
      return strategy.run(step, args=(x, y_))

    # What is fed is converted to the placeholders' dtypes, as TF1 converted it.
    @tf.function(input_signature=[
        tf.TensorSpec([None, IMAGE_PIXELS * IMAGE_PIXELS], tf.float32),
        tf.TensorSpec([None, NUM_CLASSES], tf.float32),
    ])
    def evaluate_graph(x, y_):
      """`cross_entropy` for these inputs, with the trained variables (on every worker)."""
      y = model.inference(x, hid_w, hid_b, sm_w, sm_b)
      cross_entropy = model.loss(y, y_)
      return cross_entropy
  else:
    if not is_chief:
      # TF1's chief drives the cluster's training now; the other workers serve it.
      server.join()
    # The coordinator joins the cluster on a port of its own: a chief task keeps its server.
    jobs = tf.train.ClusterSpec(cluster).as_dict()
    jobs.pop("chief", None)
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(jobs), rpc_layer="grpc")
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    with strategy.scope():
      hid_w = tf.Variable(
          tf.random.truncated_normal(
              [IMAGE_PIXELS * IMAGE_PIXELS, FLAGS.hidden_units],
              stddev=1.0 / IMAGE_PIXELS),
          name="hid_w")
      hid_b = tf.Variable(tf.zeros([FLAGS.hidden_units]), name="hid_b")
      sm_w = tf.Variable(
          tf.random.truncated_normal(
              [FLAGS.hidden_units, NUM_CLASSES],
              stddev=1.0 / math.sqrt(FLAGS.hidden_units)),
          name="sm_w")
      sm_b = tf.Variable(tf.zeros([NUM_CLASSES]), name="sm_b")
      opt = TF1Adam(learning_rate=FLAGS.learning_rate, epsilon=1e-08)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

    # What is fed is converted to the placeholders' dtypes, as TF1 converted it.
    @tf.function(input_signature=[
        tf.TensorSpec([None, IMAGE_PIXELS * IMAGE_PIXELS], tf.float32),
        tf.TensorSpec([None, NUM_CLASSES], tf.float32),
    ])
    def train_step(x, y_):
      """One run of TF1's train_op, on a worker."""
      def step(x, y_):
        with tf.GradientTape() as tape:
          y = model.inference(x, hid_w, hid_b, sm_w, sm_b)
          cross_entropy = model.loss(y, y_)
        variables = [hid_w, hid_b, sm_w, sm_b]
        opt.apply_gradients(zip(tape.gradient(cross_entropy, variables), variables))
        return cross_entropy
      return strategy.run(step, args=(x, y_))

    # What is fed is converted to the placeholders' dtypes, as TF1 converted it.
    @tf.function(input_signature=[
        tf.TensorSpec([None, IMAGE_PIXELS * IMAGE_PIXELS], tf.float32),
        tf.TensorSpec([None, NUM_CLASSES], tf.float32),
    ])
    def evaluate_graph(x, y_):
      """`cross_entropy` for these inputs, with the trained variables (on the chief)."""
      y = model.inference(x, hid_w, hid_b, sm_w, sm_b)
      cross_entropy = model.loss(y, y_)
      return cross_entropy

  train_dir = tempfile.mkdtemp()

  # The chief prepares the session; the other workers wait for it.
  if FLAGS.sync_replicas:
    checkpoint = tf.train.Checkpoint(optimizer=opt, hid_w=hid_w, hid_b=hid_b, sm_w=sm_w, sm_b=sm_b)
    # Every worker saves, a collective step; only the first worker's checkpoints are kept.
    manager = tf.train.CheckpointManager(
        checkpoint,
        os.path.join(train_dir, "tf2") if resolver.task_id == 0 else tempfile.mkdtemp(),
        max_to_keep=5)
    # Carry on from the latest checkpoint: this program's own, or else the TF1 program's.
    tf1_checkpoint = tf.train.latest_checkpoint(train_dir)
    if tf.train.latest_checkpoint(os.path.join(train_dir, "tf2")):
      checkpoint.restore(tf.train.latest_checkpoint(os.path.join(train_dir, "tf2")))
    elif tf1_checkpoint:
      with strategy.scope():
        restore_tf1_checkpoint(tf1_checkpoint, {
            "hid_w": hid_w,
            "hid_b": hid_b,
            "sm_w": sm_w,
            "sm_b": sm_b,
        }, opt)
  else:
    checkpoint = tf.train.Checkpoint(optimizer=opt, hid_w=hid_w, hid_b=hid_b, sm_w=sm_w, sm_b=sm_b)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(train_dir, "tf2"), max_to_keep=5)
    # Carry on from the latest checkpoint: this program's own, or else the TF1 program's.
    tf1_checkpoint = tf.train.latest_checkpoint(train_dir)
    if manager.latest_checkpoint:
      checkpoint.restore(manager.latest_checkpoint)
    elif tf1_checkpoint:
      with strategy.scope():
        restore_tf1_checkpoint(tf1_checkpoint, {
            "hid_w": hid_w,
            "hid_b": hid_b,
            "sm_w": sm_w,
            "sm_b": sm_b,
        }, opt)

  local_step = 0
  if FLAGS.sync_replicas:
    trained_steps = int(opt.iterations.numpy())
    while True:
      batch_xs, batch_ys = mnist.train.next_batch(FLAGS.batch_size)

      loss_value = train_step(batch_xs, batch_ys)
      trained_steps += 1
      step = trained_steps
      local_step += 1
      print("step %d loss %s" % (step, loss_value.numpy()))

      if step >= FLAGS.train_steps:
        break
  else:
    scheduled_steps = int(opt.iterations)
    while True:
      batch_xs, batch_ys = mnist.train.next_batch(FLAGS.batch_size)

      loss_value = coordinator.schedule(train_step, args=(batch_xs, batch_ys))
      scheduled_steps += 1
      step = scheduled_steps
      local_step += 1
      print("step %d loss %s" % (step, loss_value.fetch()))

      if step >= FLAGS.train_steps:
        break
    coordinator.join()
  manager.save()

  val_xent = evaluate_graph(mnist.validation.images, mnist.validation.labels).numpy()
  print("After %d training step(s), validation cross entropy = %g" %
        (FLAGS.train_steps, val_xent))
  shutil.rmtree(train_dir)


if __name__ == "__main__":
  tf.compat.v1.app.run()
