"""The premade-estimator program of the TensorFlow 1 tutorials, on iris-like data.

A canned ``tf.estimator.DNNClassifier`` (v2: this module's ``tf`` is TF 2's) on four
numeric feature columns made in a loop over the data's keys, three classes, two hidden
layers of 10 units, built and driven in ``main(argv)`` under ``tf.compat.v1.app.run``
with its batch size and steps from argparse. The data are three Gaussian blobs drawn
with a fixed seed, in the shape of the iris CSV files.

Run: python examples/premade_iris/train.py [--batch_size 120] [--train_steps 20]
"""
import argparse
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

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", default=120, type=int, help="batch size")
parser.add_argument("--train_steps", default=20, type=int, help="number of training steps")

CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]


def load_data(seed=0):
  """(train_x, train_y), (test_x, test_y): dicts of feature columns and class ids."""
  rng = np.random.RandomState(seed)
  centres = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])
  labels = np.repeat(np.arange(3), 50)
  rows = (centres[labels] + rng.normal(scale=0.3, size=(150, 4))).astype(np.float32)
  order = rng.permutation(150)
  rows, labels = rows[order], labels[order]
  names = CSV_COLUMN_NAMES[:4]
  split = lambda part: ({name: part[0][:, i] for i, name in enumerate(names)}, part[1])
  return split((rows[:120], labels[:120])), split((rows[120:], labels[120:]))


def train_input_fn(features, labels, batch_size):
  dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
  return dataset.shuffle(1000).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size):
  dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
  return dataset.batch(batch_size)


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


def build_dnn_classifier_model(input_spec, feature_columns):
  """TF1's canned DNNClassifier as a Keras model, compiled as it trained."""
  features = {}
  for name, spec in input_spec.items():
    # Feature columns took a feature of one value per example as [batch, 1].
    shape = spec.shape[1:] if spec.shape.rank > 1 else [1]
    features[name] = keras.Input(shape=shape, dtype=spec.dtype, name=name)
  # input_layer: the numeric columns in name order, each flattened to float32.
  net = keras.layers.Concatenate()([
      keras.layers.Flatten()(tf.cast(features[column.key], tf.float32))
      for column in sorted(feature_columns, key=lambda column: column.name)])
  net = keras.layers.Dense(units=10, activation="relu", name="dnn/hiddenlayer_0")(net)
  net = keras.layers.Dense(units=10, activation="relu", name="dnn/hiddenlayer_1")(net)
  logits = keras.layers.Dense(units=3, name="dnn/logits")(net)
  model = keras.Model(inputs=features, outputs=logits)
  optimizer = keras.optimizers.legacy.Adagrad()
  model.compile(
      optimizer,
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=[
          TF1EvalLoss(
              keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")),
          keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
          keras.metrics.SparseCategoricalCrossentropy(from_logits=True, name="average_loss")])
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
  variables = {}
  for layer in model.submodules:
    for weight in ("kernel", "bias", "embeddings", "gamma", "beta", "moving_mean",
                   "moving_variance"):
      if getattr(layer, weight, None) is not None:
        variables[f"{layer.name}/{weight}"] = getattr(layer, weight)
  return variables


def restore_tf1_checkpoint(path, model):
  """Carry on from the TF1 checkpoint at `path`: its variables, optimizer slots and step."""
  # A checkpoint that does not fit (a variable missing or of another shape, slots of another
  # optimizer) is refused, naming what does not fit, before anything is assigned. TF1's
  # files are only read.
  # The variables each optimizer trains, and TF1's names of its slots of a variable {}, with
  # Keras' names of them.
  parts = [
      (tf1_variables(model), model.optimizer, {"training/Adagrad/{}/accumulator": "accumulator"}),
  ]
  reader = tf.train.load_checkpoint(path)
  saved = reader.get_variable_to_shape_map()
  # TF1's name -> what holds it here: a variable's shards (or the variable), or the step
  # count of each optimizer.
  targets = {"global_step": [optimizer.iterations for _, optimizer, _ in parts]}
  # Saved by TF1, not needed here.
  unused = {
      "training/Adagrad/decay",
      "training/Adagrad/iter",
      "training/Adagrad/learning_rate",
  }
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


def main(argv):
  args = parser.parse_args(argv[1:])
  (train_x, train_y), (test_x, test_y) = load_data()

  my_feature_columns = []
  for key in train_x.keys():
    my_feature_columns.append(tf.feature_column.numeric_column(key=key))

  model_dir = tempfile.mkdtemp()

  keras.utils.set_random_seed(7)
  task_type, strategy = strategy_for_this_task()

  dataset = train_input_fn(train_x, train_y, args.batch_size)

  with strategy.scope():
    model = build_dnn_classifier_model(dataset.element_spec[0], feature_columns=my_feature_columns)

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

  model.fit(
      dataset, epochs=1, steps_per_epoch=args.train_steps, callbacks=[save_checkpoint], verbose=2)

  eval_dataset = eval_input_fn(test_x, test_y, args.batch_size)
  # TF1 evaluated the whole input; ParameterServerStrategy needs it repeated and counted.
  eval_steps = int(eval_dataset.cardinality())
  if eval_steps == tf.data.UNKNOWN_CARDINALITY:  # known once read: files, filter, a v1 map
    eval_steps = int(eval_dataset.reduce(0, lambda count, _: count + 1))
  eval_dataset = eval_dataset.repeat()
  eval_result = model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)
  # TF1's results held the step they were evaluated at.
  eval_result["global_step"] = int(model.optimizer.iterations)
  print("eval accuracy: {accuracy:0.3f}, eval loss: {average_loss:0.4f}".format(**eval_result))
  shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  tf.compat.v1.app.run(main)
