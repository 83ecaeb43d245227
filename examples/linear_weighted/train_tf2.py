"""A canned LinearRegressor with example weights, as TF1 programs under compat.v1 wrote it.

``build_estimator()`` makes a ``tf.estimator.LinearRegressor`` (v1: this module's ``tf`` is
``tensorflow.compat.v1``) on numeric, bucketized, vocabulary-list, hash-bucket and crossed
columns, ``weight_column="weight"``; ``main`` trains it for ``--train_steps`` under
``tf.app.run`` with ``tf.app.flags`` and evaluates it. The data are house prices drawn with a
fixed seed, each example weighted by how many sales it stands for.

Run: python examples/linear_weighted/train.py [--train_steps 20]
"""
import os
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

tf.compat.v1.app.flags.DEFINE_integer("train_steps", 20, "steps to train")
tf.compat.v1.app.flags.DEFINE_integer("batch_size", 32, "examples per batch")
FLAGS = tf.compat.v1.app.flags.FLAGS

AREAS = ["inland", "near bay", "near ocean", "island"]


def load_data(rows, seed):
  rng = np.random.RandomState(seed)
  rooms = rng.uniform(1.0, 8.0, size=(rows, 1)).astype(np.float32)
  age = rng.uniform(1.0, 50.0, size=(rows, 1)).astype(np.float32)
  area = rng.choice(AREAS + ["unknown"], size=(rows, 1))
  zip_code = rng.choice(["9%04d" % i for i in range(40)], size=(rows, 1))
  noise = rng.normal(scale=0.1, size=(rows, 1))
  price = 0.3 * rooms + 0.01 * age + (area == "near ocean") + noise
  weight = rng.randint(1, 4, size=(rows, 1)).astype(np.float32)
  features = {"rooms": rooms, "age": age, "area": area, "zip": zip_code, "weight": weight}
  return features, price.astype(np.float32)


def train_input_fn():
  features, price = load_data(256, seed=1)
  dataset = tf.data.Dataset.from_tensor_slices((features, price))
  return dataset.shuffle(256, seed=5).repeat().batch(FLAGS.batch_size)


def eval_input_fn():
  features, price = load_data(64, seed=2)
  return tf.data.Dataset.from_tensor_slices((features, price)).batch(FLAGS.batch_size)


class TF1EvalLoss(keras.metrics.Mean):
  """The loss as TF1's Estimator reported it: each batch's loss, averaged over the batches."""
  # Keras averages its own loss over the examples, so a short last batch weighs less there
  # than in TF1. Named `loss`, this metric is the loss that fit and evaluate report.

  def __init__(self, per_example, summed=False, weight=1.0, name="loss"):
    super().__init__(name=name)
    # The batch's loss is reduced here: under a strategy, a Keras loss object reduces over
    # the batch only in compile's own loop.
    self.per_example, self.summed, self.weight = per_example, summed, weight

  def update_state(self, y_true, y_pred, sample_weight=None):
    losses = self.per_example(y_true, y_pred, sample_weight)
    batch_loss = tf.reduce_sum(losses) if self.summed else tf.reduce_mean(losses)
    return super().update_state(self.weight * batch_loss)


def build_linear_regressor_model(input_spec):
  """TF1's canned LinearRegressor as a Keras model, compiled as it trained."""
  features = {}
  for name, spec in input_spec.items():
    # Feature columns took a feature of one value per example as [batch, 1].
    shape = spec.shape[1:] if spec.shape.rank > 1 else [1]
    features[name] = keras.Input(shape=shape, dtype=spec.dtype, name=name)
  # linear_model: in name order, each column's weights, summed, and a bias.
  age_values = tf.cast(features["age"], tf.float32)
  age_buckets = keras.layers.Discretization(bin_boundaries=[10.0, 20.0, 30.0, 40.0])(age_values)
  age_bucketized_counts = keras.layers.CategoryEncoding(
      num_tokens=5, output_mode="count")(age_buckets)
  age_bucketized_weighted = keras.layers.Dense(
      units=1,
      use_bias=False,
      kernel_initializer="zeros",
      name="age_bucketized_weights")(age_bucketized_counts)
  age_bucketized_X_area_crossed = keras.layers.HashedCrossing(num_bins=32)(
      (age_buckets, features["area"]))
  age_bucketized_X_area_counts = keras.layers.CategoryEncoding(
      num_tokens=32, output_mode="count")(age_bucketized_X_area_crossed)
  age_bucketized_X_area_weighted = keras.layers.Dense(
      units=1,
      use_bias=False,
      kernel_initializer="zeros",
      name="age_bucketized_X_area_weights")(age_bucketized_X_area_counts)
  area_counts = keras.layers.StringLookup(
      vocabulary=["inland", "near bay", "near ocean", "island"],
      num_oov_indices=1,
      mask_token="",
      output_mode="count")(features["area"])[:, 1:]
  area_weighted = keras.layers.Dense(
      units=1, use_bias=False, kernel_initializer="zeros", name="area_weights")(area_counts)
  rooms = keras.layers.Flatten()(tf.cast(features["rooms"], tf.float32))
  rooms_weighted = keras.layers.Dense(
      units=1, use_bias=False, kernel_initializer="zeros", name="rooms_weights")(rooms)
  # TF1 drops "": hashed here into one bucket more, cut off.
  zip_hashed = tf.where(
      features["zip"] == "",
      tf.constant(16, tf.int64),
      keras.layers.Hashing(num_bins=16)(features["zip"]))
  zip_counts = keras.layers.CategoryEncoding(
      num_tokens=17, output_mode="count")(zip_hashed)[:, :-1]
  zip_weighted = keras.layers.Dense(
      units=1, use_bias=True, kernel_initializer="zeros", name="zip_weights")(zip_counts)
  logits = keras.layers.Add()([
      age_bucketized_weighted,
      age_bucketized_X_area_weighted,
      area_weighted,
      rooms_weighted,
      zip_weighted])
  model = keras.Model(inputs=features, outputs=logits)
  optimizer = keras.optimizers.legacy.Ftrl(learning_rate=0.2)
  model.compile(
      optimizer,
      loss=keras.losses.MeanSquaredError(reduction="sum"),
      weighted_metrics=[
          TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none"), summed=True),
          keras.metrics.MeanSquaredError(name="average_loss")])
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
      variable_partitioner=None)


def tf1_variables(model):
  """The model's variables by their TF1 names: its layers are named after TF1's scopes."""
  # But for these, which their Keras layers name otherwise.
  renamed = {
      "age_bucketized_weights/kernel": "linear/linear_model/age_bucketized/weights",
      "age_bucketized_X_area_weights/kernel":
          "linear/linear_model/age_bucketized_X_area/weights",
      "area_weights/kernel": "linear/linear_model/area/weights",
      "rooms_weights/kernel": "linear/linear_model/rooms/weights",
      "zip_weights/kernel": "linear/linear_model/zip/weights",
      "zip_weights/bias": "linear/linear_model/bias_weights",
  }
  variables = {}
  for layer in model.submodules:
    for weight in ("kernel", "bias", "embeddings", "gamma", "beta", "moving_mean",
                   "moving_variance"):
      if getattr(layer, weight, None) is not None:
        name = f"{layer.name}/{weight}"
        variables[renamed.get(name, name)] = getattr(layer, weight)
  return variables


def restore_tf1_checkpoint(path, model):
  """Carry on from the TF1 checkpoint at `path`: its variables, optimizer slots and step."""
  # A checkpoint that does not fit (a variable missing or of another shape, slots of another
  # optimizer) is refused, naming what does not fit, before anything is assigned. TF1's
  # files are only read.
  # The variables each optimizer trains, and TF1's names of its slots of a variable {}, with
  # Keras' names of them.
  parts = [
      (tf1_variables(model), model.optimizer, {"{}/Ftrl": "accumulator", "{}/Ftrl_1": "linear"}),
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


def main(_):
  model_dir = tempfile.mkdtemp()

  keras.utils.set_random_seed(11)
  task_type, strategy = strategy_for_this_task()

  dataset = train_input_fn().map(lambda features, labels: (features, labels, features["weight"]))

  with strategy.scope():
    model = build_linear_regressor_model(dataset.element_spec[0])

  # RunConfig's checkpoints in model_dir/tf2: every 600 seconds and at the end, the last 5 kept.
  checkpoints = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model, optimizer=model.optimizer),
      os.path.join(model_dir, "tf2"),
      max_to_keep=5)
  save_checkpoint = CheckpointSaver(checkpoints, model.optimizer.iterations, secs=600)
  # Carry on from the latest checkpoint as TF1 did: this program's own, or else the TF1
  # program's in model_dir (whose files stay as they are).
  tf1_checkpoint = tf.train.latest_checkpoint(model_dir)
  if checkpoints.latest_checkpoint:
    checkpoints.restore_or_initialize()
  elif tf1_checkpoint:
    with strategy.scope():
      restore_tf1_checkpoint(tf1_checkpoint, model)

  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer.iterations)
  if steps_done < FLAGS.train_steps:
    model.fit(
        dataset,
        epochs=1,
        steps_per_epoch=FLAGS.train_steps - steps_done,
        callbacks=[save_checkpoint],
        verbose=2)
  eval_dataset = eval_input_fn().map(
      lambda features, labels: (features, labels, features["weight"]))
  # TF1 evaluated the whole input; ParameterServerStrategy needs it repeated and counted.
  eval_steps = int(eval_dataset.cardinality())
  if eval_steps == tf.data.UNKNOWN_CARDINALITY:  # known once read: files, filter, a v1 map
    eval_steps = int(eval_dataset.reduce(0, lambda count, _: count + 1))
  eval_dataset = eval_dataset.repeat()
  result = model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)
  print("eval loss: %.4f, eval average_loss: %.4f" % (result["loss"], result["average_loss"]))
  shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  tf.compat.v1.app.run()
