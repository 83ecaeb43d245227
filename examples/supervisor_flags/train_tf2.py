"""A TF1 parameter-server program in the shape of the distributed-TensorFlow tutorials.

tf.app.flags give the cluster and the role, ``main(_)`` runs under ``tf.app.run()``;
each worker builds the graph with ``replica_device_setter`` (its batches from a
``tf.data`` iterator, its layers from ``tf.layers``) and trains under a
``tf.train.Supervisor``, worker 0 as its chief, the checkpoints in --logdir.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/supervisor_flags/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223
  python examples/supervisor_flags/train.py --job_name=worker --task_index=0 \
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
flags.DEFINE_integer("train_steps", 20, "steps this worker trains for")
flags.DEFINE_integer("log_every", 1, "print the loss every this many steps")
flags.DEFINE_string("logdir", "", "checkpoints (a temporary folder when empty)")
FLAGS = flags.FLAGS

NUM_FEATURES = 4
HIDDEN = 8
BATCH_SIZE = 16

# Two classes, 64 rows: the label says whether x . w > 0.
rng = np.random.RandomState(1)
train_x = rng.normal(size=(64, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot([1.0, -2.0, 0.5, 1.5]) > 0).astype(np.int64)


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
  elif FLAGS.job_name == "worker":
    is_chief = FLAGS.task_index == 0
    logdir = FLAGS.logdir or tempfile.mkdtemp()
    tf.random.set_seed(7)
    if not is_chief:
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
      dataset = tf.data.Dataset.from_tensor_slices((train_x, train_y))
      dataset = dataset.batch(BATCH_SIZE).repeat()
      return dataset

    x_spec, y_spec = dataset_fn().element_spec  # the shapes the layers are built for
    with strategy.scope():
      hidden_layer = keras.layers.Dense(units=HIDDEN, activation="relu")
      hidden_layer.build(x_spec.shape)
      logits_layer = keras.layers.Dense(units=2)
      logits_layer.build(hidden_layer.compute_output_shape(x_spec.shape))
      optimizer = TF1Adam(learning_rate=0.01, epsilon=1e-08)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    per_worker_iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))

    @tf.function
    def train_step(iterator):
      """One run of TF1's train_op, on a worker."""
      def step(x, y):
        with tf.GradientTape() as tape:
          hidden = hidden_layer(x)
          logits = logits_layer(hidden)
          loss = tf.compat.v1.reduce_mean(
              tf.compat.v1.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        variables = [*hidden_layer.trainable_variables, *logits_layer.trainable_variables]
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
      return strategy.run(step, args=next(iterator))

    checkpoint = tf.train.Checkpoint(
        optimizer=optimizer, hidden_layer=hidden_layer, logits_layer=logits_layer)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(logdir, "tf2"), max_to_keep=5)
    # Carry on from the latest checkpoint: this program's own, or else the TF1 program's.
    tf1_checkpoint = tf.train.latest_checkpoint(logdir)
    if manager.latest_checkpoint:
      checkpoint.restore(manager.latest_checkpoint)
    elif tf1_checkpoint:
      with strategy.scope():
        restore_tf1_checkpoint(tf1_checkpoint, {
            "dense/kernel": hidden_layer.kernel,
            "dense/bias": hidden_layer.bias,
            "dense_1/kernel": logits_layer.kernel,
            "dense_1/bias": logits_layer.bias,
        }, optimizer)

    local_step = 0
    scheduled_steps = int(optimizer.iterations)
    while local_step < FLAGS.train_steps:
      loss_value = coordinator.schedule(train_step, args=(per_worker_iterator,))
      scheduled_steps += 1
      step = scheduled_steps
      if local_step % FLAGS.log_every == 0:
        print("step %d loss %s" % (step, loss_value.fetch()))
      local_step += 1
    coordinator.join()
    manager.save()
    if not FLAGS.logdir:
      shutil.rmtree(logdir)


if __name__ == "__main__":
  tf.compat.v1.app.run()
