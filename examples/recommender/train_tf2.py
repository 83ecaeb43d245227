"""A recommender model_fn with partitioned embedding tables, as parameter-server programs had them.

Users and items each get an embedding table made by ``get_variable`` in a
``variable_scope`` partitioned by ``fixed_size_partitioner(2)``: on a cluster
TF1 put each table's two shards on the two ps tasks, and ``embedding_lookup``
read ids "mod" over them (id i in shard i % 2). The model scores a (user, item)
pair from the two vectors, their product and a small dense layer; squared
error, Adagrad. The data is 12 users, 16 items and a hidden taste for each.

Run: python examples/recommender/train.py [--train-steps N]
"""
import argparse
import importlib.metadata
import os
import random
import shutil
import tempfile
import time

import numpy as np

# The model_fn's TF1 layers run in Keras 2: where Keras is 3 (TensorFlow 2.16 and later),
# tf.keras and tf.compat.v1.layers are Keras 2 only with TF_USE_LEGACY_KERAS set first.
if importlib.metadata.version("keras").startswith("3."):
  os.environ["TF_USE_LEGACY_KERAS"] = "1"

import keras
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

NUM_USERS, NUM_ITEMS = 12, 16
BATCH_SIZE = 32

rng = np.random.RandomState(3)
user_taste = rng.normal(size=(NUM_USERS, 3))
item_taste = rng.normal(size=(NUM_ITEMS, 3))


def ratings(count):
  users = rng.randint(NUM_USERS, size=count)
  items = rng.randint(NUM_ITEMS, size=count)
  scores = (user_taste[users] * item_taste[items]).sum(axis=1) + 0.1 * rng.normal(size=count)
  return {"user": users.astype(np.int64), "item": items.astype(np.int64)}, scores.astype(np.float32)


train_features, train_scores = ratings(256)
eval_features, eval_scores = ratings(64)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices((train_features, train_scores))
  return dataset.shuffle(256, seed=1).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((eval_features, eval_scores)).batch(BATCH_SIZE)


def model_fn(features, labels, mode, params):
  with tf.compat.v1.variable_scope(
      "embeddings", partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)):
    users = tf.compat.v1.get_variable("users", [NUM_USERS, params["dimension"]],
                            initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.5))
    items = tf.compat.v1.get_variable("items", [NUM_ITEMS, params["dimension"]],
                            initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.5))
  user_vectors = tf.nn.embedding_lookup(users, features["user"])
  item_vectors = tf.nn.embedding_lookup(items, features["item"])
  affinity = tf.compat.v1.reduce_sum(user_vectors * item_vectors, axis=1)
  hidden = tf.compat.v1.layers.dense(tf.concat([user_vectors, item_vectors], axis=1), 8,
                           activation=tf.nn.relu, name="hidden")
  correction = tf.compat.v1.layers.dense(hidden, 1, name="correction")
  score = affinity + tf.compat.v1.squeeze(correction, axis=1)

  if mode == "infer":
    return {
        "predictions": {"score": score}, "export_outputs": {"serving_default": {"score": score}}}
  loss = tf.compat.v1.losses.mean_squared_error(labels, score)
  if mode == "eval":
    metrics = {"rmse": (labels, score)}
    return {"loss": loss, "metrics": metrics}
  return {"loss": loss}


class TF1Partitioner(tf.distribute.experimental.partitioners.Partitioner):
  """ParameterServerStrategy's variable_partitioner: shards the tables the model_fn partitioned."""
  # Each by the TF1 partitioner that split it; every other variable stays whole (TF1's
  # variables run in Keras cannot be sharded).
  tf1_partitioner = None  # TF1's, while the Keras model makes a table

  def __call__(self, shape, dtype, axis=0):
    if TF1Partitioner.tf1_partitioner is None:
      return [1] * len(shape)
    return TF1Partitioner.tf1_partitioner(shape=shape, dtype=dtype)


class ModelFnModel(keras.Model):
  """The TF1 model_fn `model_fn`, run as written inside Keras."""
  # tf.compat.v1.keras.utils.track_tf1_style_variables tracks the variables, layers and
  # regularizers the model_fn's code makes, by their TF1 names, so TF1's checkpoints fit.

  def __init__(self, params):
    super().__init__()
    self.params = params
    # The tables the model_fn partitioned, by their TF1 names: Keras' weights, sharded.
    self.tables = {}
    # The mean of the batches' losses, as TF1 reported it.
    self.loss_tracker = keras.metrics.Mean(name="loss")
    # eval_metric_ops: Keras metrics of the tensors the model_fn gives them.
    self.tf1_metrics = {
        "rmse": keras.metrics.RootMeanSquaredError(name="rmse"),
    }

  @property
  def metrics(self):
    return [self.loss_tracker, *self.tf1_metrics.values()]

  @tf.compat.v1.keras.utils.track_tf1_style_variables
  def call(self, inputs, training=False):
    features, labels = inputs
    # Entered again at each call, TF1's scope names unnamed layers as the first call did
    # (`dense`, not `dense_1`): as TF1 named them, once, in its graph.
    with tf.compat.v1.variable_scope(
            tf.compat.v1.get_variable_scope(), custom_getter=self.tf1_variable):
      return model_fn(features, labels, "train" if training else "eval", self.params)

  def tf1_variable(self, getter, name, partitioner=None, **kwargs):
    """The custom getter of the variables the model_fn's code makes."""
    # Those it partitions (its embedding tables) are Keras weights, sharded by the strategy
    # as TF1 split them; the others are TF1's, made by `getter`.
    if partitioner is None:
      variable = getter(name, **kwargs)
    elif name not in self.tables:
      TF1Partitioner.tf1_partitioner = partitioner
      try:
        variable = self.tables[name] = self.add_weight(name, **{
            key: kwargs[key] for key in
            ("shape", "dtype", "initializer", "regularizer", "trainable", "constraint")})
      finally:
        TF1Partitioner.tf1_partitioner = None
    else:
      variable = self.tables[name]
    return variable

  def tf1_loss(self, results):
    return results["loss"]

  def train_step(self, data):
    with tf.GradientTape() as tape:
      loss = self.tf1_loss(self(data, training=True))
    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
    self.loss_tracker.update_state(loss)
    return {"loss": self.loss_tracker.result()}

  def test_step(self, data):
    results = self(data, training=False)
    self.loss_tracker.update_state(self.tf1_loss(results))
    for key, metric in self.tf1_metrics.items():
      metric.update_state(*results["metrics"][key])
    return {metric.name: metric.result() for metric in self.metrics}


def build_model(dataset, params):
  """The TF1 model_fn `model_fn` as a Keras model, compiled with its optimizer."""
  model = ModelFnModel(params)
  model(next(iter(dataset)))  # the model_fn's code makes its variables
  model.compile(
      keras.optimizers.legacy.Adagrad(
          learning_rate=params["learning_rate"], initial_accumulator_value=0.1, epsilon=1e-30))
  return model


def strategy_for_this_task():
  """This task's type in the TF_CONFIG cluster, and the strategy it trains with."""
  # ps and worker tasks serve the chief and never return; an evaluator evaluates beside
  # the cluster. Without TF_CONFIG the program trains locally with the default strategy,
  # as the TF1 program did.
  resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
  if not resolver.cluster_spec().jobs:
    return None, tf.distribute.get_strategy()
  if resolver.task_type == "evaluator":
    return resolver.task_type, tf.distribute.get_strategy()
  # The cluster that trains: not the evaluator, which runs no server (the chief would
  # wait for it forever, tensorflow/tensorflow#46169).
  jobs = resolver.cluster_spec().as_dict()
  jobs.pop("evaluator", None)
  # TF1's RunConfig took a `master` task (a TFJob's Master) as the chief, the one name
  # ParameterServerStrategy knows.
  task_type = "chief" if resolver.task_type == "master" else resolver.task_type
  if "master" in jobs:
    jobs["chief"] = jobs.pop("master")
  cluster = tf.train.ClusterSpec(jobs)
  if task_type in ("ps", "worker"):
    server = tf.distribute.Server(
        cluster,
        job_name=task_type,
        task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc",
        start=True)
    server.join()
  return task_type, tf.distribute.experimental.ParameterServerStrategy(
      tf.distribute.cluster_resolver.SimpleClusterResolver(
          cluster,
          task_type=task_type,
          task_id=resolver.task_id,
          rpc_layer=resolver.rpc_layer),
      variable_partitioner=TF1Partitioner())


def tf1_variables(model):
  """The model's variables by their TF1 names, which the model_fn's own code gives them."""
  # Its tables whole, not their shards; not the metrics' variables.
  kept = {id(variable) for metric in model.metrics for variable in metric.variables}
  kept |= {id(shard) for table in model.tables.values()
           for shard in getattr(table, "variables", [table])}
  return {**{variable.name.split(":")[0]: variable for variable in model.weights
             if id(variable) not in kept}, **model.tables}


def restore_tf1_checkpoint(path, model):
  """Carry on from the TF1 checkpoint at `path`: its variables, optimizer slots and step."""
  # A checkpoint that does not fit (a variable missing or of another shape, slots of another
  # optimizer) is refused, naming what does not fit, before anything is assigned. TF1's
  # files are only read.
  # The variables each optimizer trains, and TF1's names of its slots of a variable {}, with
  # Keras' names of them.
  parts = [
      (tf1_variables(model), model.optimizer, {"{}/Adagrad": "accumulator"}),
  ]
  # TF1 looked these tables up "mod": id i in row i // n of shard i % n. Here ids are rows.
  mod_tables = [*model.tables]
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
  # The shards TF1 saved a table in: its checkpoint lists each one.
  slices = reader.debug_string().splitlines()
  tf1_shards = {table: sum(line.startswith(f"\0{table}\0".encode()) for line in slices)
                for table in mod_tables}
  for name, shards in targets.items():
    value = reader.get_tensor(name)
    count = next((tf1_shards[table] for table in mod_tables
                  if name == table or name.startswith(f"{table}/")), 1)
    if count > 1:
      size, extra = divmod(len(value), count)
      value = value[[i % count * size + min(i % count, extra) + i // count
                     for i in range(len(value))]]
    start = 0
    for shard in shards:
      if shard.shape.rank:
        shard.assign(value[start:start + shard.shape[0]])
        start += shard.shape[0]
      else:
        shard.assign(value)


class CheckpointSaver(keras.callbacks.Callback):
  """Saves RunConfig's checkpoints as TF1 did, numbered by the `step` counter."""
  # Every `steps` steps or `secs` seconds of training, and at its end.

  def __init__(self, manager, step, steps=None, secs=None):
    super().__init__()
    self.manager, self.step, self.steps, self.secs = manager, step, steps, secs
    # A batch-level callback that ParameterServerStrategy accepts: it reads no logs.
    self._supports_tf_logs = True

  def on_train_begin(self, logs=None):
    self.batches, self.saved, self.saved_at = 0, 0, time.time()

  def on_train_batch_begin(self, batch, logs=None):
    self.first = batch  # with steps_per_execution, one call covers several steps

  def on_train_batch_end(self, batch, logs=None):
    self.batches += batch - self.first + 1
    if (self.steps and self.batches - self.saved >= self.steps) or (
            self.secs and time.time() - self.saved_at >= self.secs):
      self.save()

  def on_train_end(self, logs=None):
    self.save()

  def save(self):
    strategy = self.model.distribute_strategy
    if isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
      # The steps scheduled so far run first: the checkpoint holds the step it is numbered by.
      tf.distribute.experimental.coordinator.ClusterCoordinator(strategy).join()
    self.manager.save(checkpoint_number=self.step)
    self.saved, self.saved_at = self.batches, time.time()


def restore_shard_slots(path, checkpoint, variables):
  """Restore the optimizer's slots of the `variables` split in shards from this program's
    checkpoint at `path`: ParameterServerStrategy restores none into shards
    (keras-team/tf-keras#838), though every layout saves them, whole."""
  view = tf.train.CheckpointView(path)
  reader = tf.train.load_checkpoint(path)
  # Each object's key in the checkpoint: the names leading to it from the root, escaped.
  keys = {0: ""}
  for node in view.descendants():
    for name, child in view.children(node).items():
      escaped = name.replace(".", "..").replace("/", ".S")
      keys.setdefault(child, f"{keys[node]}/{escaped}" if keys[node] else escaped)
  slots = f"/.OPTIMIZER_SLOT/{keys[view.children(0)['optimizer']]}/"
  sharded = {id(variable) for variable in variables if hasattr(variable, "variables")}
  for node, variable in view.match(checkpoint).items():
    if id(variable) not in sharded:
      continue
    prefix = keys[node] + slots
    for key in reader.get_variable_to_shape_map():
      if key.startswith(prefix):
        slot, value, start = key[len(prefix):].split("/")[0], reader.get_tensor(key), 0
        for shard in variable.variables:
          size = shard.shape[0]
          checkpoint.optimizer.add_slot(shard, slot).assign(value[start:start + size])
          start += size


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=30)
  args = parser.parse_args()

  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  model_dir = tempfile.mkdtemp()

  keras.utils.set_random_seed(42)
  task_type, strategy = strategy_for_this_task()

  dataset = train_input_fn()

  with strategy.scope():
    model = build_model(dataset, params={"dimension": 4, "learning_rate": 0.5})

  # RunConfig's checkpoints in model_dir/tf2: every 10 steps and at the end, the last 2 kept.
  checkpoints = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model, optimizer=model.optimizer),
      os.path.join(model_dir, "tf2"),
      max_to_keep=2)
  save_checkpoint = CheckpointSaver(checkpoints, model.optimizer.iterations, steps=10)
  # Carry on from the latest checkpoint as TF1 did: this program's own, or else the TF1
  # program's in model_dir (whose files stay as they are).
  tf1_checkpoint = tf.train.latest_checkpoint(model_dir)
  if checkpoints.latest_checkpoint:
    checkpoints.restore_or_initialize()
    with strategy.scope():
      restore_shard_slots(
          checkpoints.latest_checkpoint, checkpoints.checkpoint, tf1_variables(model).values())
  elif tf1_checkpoint:
    with strategy.scope():
      restore_tf1_checkpoint(tf1_checkpoint, model)

  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer.iterations)
  if steps_done < args.train_steps:
    model.fit(
        dataset,
        epochs=1,
        steps_per_epoch=args.train_steps - steps_done,
        callbacks=[save_checkpoint],
        verbose=2)
  eval_dataset = eval_input_fn()
  # TF1 evaluated the whole input; ParameterServerStrategy needs it repeated and counted.
  eval_steps = int(eval_dataset.cardinality())
  if eval_steps == tf.data.UNKNOWN_CARDINALITY:  # known once read: files, filter, a v1 map
    eval_steps = int(eval_dataset.reduce(0, lambda count, _: count + 1))
  eval_dataset = eval_dataset.repeat()
  result = model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)
  print("eval rmse: %s loss: %s" % (result["rmse"], result["loss"]))
  shutil.rmtree(model_dir)


if __name__ == "__main__":
  main()
