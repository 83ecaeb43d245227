"""Census income, wide & deep: a canned DNNLinearCombinedClassifier as the TF 1.x tutorial wrote it.

The program writes its own census-like CSV (age, education, occupation, hours, income bracket),
reads it back with ``TextLineDataset`` + ``decode_csv``, and trains a
``tf.compat.v1.estimator.DNNLinearCombinedClassifier`` (v1, what TF 1.x's ``tf.estimator`` was):
the wide part on bucketized, vocabulary-list, hash-bucket and crossed columns, the deep part on a
numeric column, an indicator column and an embedding column. ``build_estimator()`` makes it,
``main`` trains it for ``--train_steps`` and evaluates it.

Run: python examples/census_wide_deep/train.py [--train_steps 20]
"""
import argparse
import math
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

CSV_COLUMNS = ["age", "education", "occupation", "hours_per_week", "income_bracket"]
CSV_DEFAULTS = [[0.0], [""], [""], [0.0], [""]]
EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]
OCCUPATIONS = ["Tech-support", "Sales", "Exec-managerial", "Craft-repair", "Farming-fishing",
               "Adm-clerical"]

parser = argparse.ArgumentParser()
parser.add_argument("--train_steps", type=int, default=20)
parser.add_argument("--batch_size", type=int, default=32)


def write_census_csv(path, rows, seed):
  """A census-like CSV: some educations outside the vocabulary, some occupations empty."""
  rng = np.random.RandomState(seed)
  with open(path, "w") as f:
    for _ in range(rows):
      age = rng.randint(17, 80)
      education = rng.choice(EDUCATION + ["Preschool"])
      occupation = rng.choice(OCCUPATIONS + [""])
      hours = rng.randint(10, 70)
      score = (education in ("Masters", "Doctorate")) + (hours > 45) + (age > 40) + rng.normal()
      rich = score > 1.5
      f.write("%d,%s,%s,%d,%s\n" % (age, education, occupation, hours, ">50K" if rich else "<=50K"))


def input_fn(data_file, num_epochs, shuffle, batch_size):
  def parse_csv(value):
    columns = tf.io.decode_csv(value, record_defaults=CSV_DEFAULTS)
    features = dict(zip(CSV_COLUMNS, columns))
    labels = features.pop("income_bracket")
    return features, tf.equal(labels, ">50K")

  dataset = tf.data.TextLineDataset(data_file)
  if shuffle:
    dataset = dataset.shuffle(buffer_size=1000, seed=3)
  dataset = dataset.map(parse_csv)
  return dataset.repeat(num_epochs).batch(batch_size)


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


def build_dnn_linear_combined_classifier_model(input_spec):
  """TF1's canned DNNLinearCombinedClassifier as a Keras model, compiled as it trained."""
  features = {}
  for name, spec in input_spec.items():
    # Feature columns took a feature of one value per example as [batch, 1].
    shape = spec.shape[1:] if spec.shape.rank > 1 else [1]
    features[name] = keras.Input(shape=shape, dtype=spec.dtype, name=name)
  # input_layer: the feature columns in name order, each as TF1 made it.
  education_indicator = keras.layers.StringLookup(
      vocabulary=["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"],
      num_oov_indices=1,
      mask_token="",
      output_mode="count")(features["education"])[:, 1:]
  hours_per_week = keras.layers.Flatten()(tf.cast(features["hours_per_week"], tf.float32))
  # TF1 drops "": hashed here into one bucket more, cut off.
  occupation_hashed = tf.where(
      features["occupation"] == "",
      tf.constant(20, tf.int64),
      keras.layers.Hashing(num_bins=20)(features["occupation"]))
  occupation_counts = keras.layers.CategoryEncoding(
      num_tokens=21, output_mode="count")(occupation_hashed)[:, :-1]
  occupation_rows = keras.layers.Dense(
      units=4,
      use_bias=False,
      kernel_initializer=keras.initializers.TruncatedNormal(stddev=1 / math.sqrt(4)),
      name="occupation_embedding")(occupation_counts)
  # combiner="mean": over the ids of the example (none: zeros, as in TF1)
  occupation_embedding = occupation_rows / tf.maximum(
      tf.reduce_sum(occupation_counts, axis=1, keepdims=True), 1.0)
  net = keras.layers.Concatenate()([education_indicator, hours_per_week, occupation_embedding])
  net = keras.layers.Dense(units=16, activation="relu", name="dnn/hiddenlayer_0")(net)
  net = keras.layers.Dense(units=8, activation="relu", name="dnn/hiddenlayer_1")(net)
  dnn_logits = keras.layers.Dense(units=1, name="dnn/logits")(net)
  # linear_model: in name order, each column's weights, summed, and a bias.
  age_values = tf.cast(features["age"], tf.float32)
  age_buckets = keras.layers.Discretization(
      bin_boundaries=[18.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0, 65.0])(age_values)
  age_bucketized_counts = keras.layers.CategoryEncoding(
      num_tokens=11, output_mode="count")(age_buckets)
  age_bucketized_weighted = keras.layers.Dense(
      units=1,
      use_bias=False,
      kernel_initializer="zeros",
      name="age_bucketized_weights")(age_bucketized_counts)
  age_bucketized_X_education_crossed = keras.layers.HashedCrossing(num_bins=50)(
      (age_buckets, features["education"]))
  age_bucketized_X_education_counts = keras.layers.CategoryEncoding(
      num_tokens=50, output_mode="count")(age_bucketized_X_education_crossed)
  age_bucketized_X_education_weighted = keras.layers.Dense(
      units=1,
      use_bias=False,
      kernel_initializer="zeros",
      name="age_bucketized_X_education_weights")(age_bucketized_X_education_counts)
  education_weighted = keras.layers.Dense(
      units=1,
      use_bias=False,
      kernel_initializer="zeros",
      name="education_weights")(education_indicator)
  occupation_weighted = keras.layers.Dense(
      units=1,
      use_bias=True,
      kernel_initializer="zeros",
      name="occupation_weights")(occupation_counts)
  linear_logits = keras.layers.Add()([
      age_bucketized_weighted,
      age_bucketized_X_education_weighted,
      education_weighted,
      occupation_weighted])
  linear_model = keras.Model(inputs=features, outputs=linear_logits)
  dnn_model = keras.Model(inputs=features, outputs=dnn_logits)
  # Their logits summed, each part trained by its own optimizer, as TF1's combined estimator did.
  model = keras.experimental.WideDeepModel(linear_model, dnn_model)
  linear_optimizer = keras.optimizers.legacy.Ftrl(learning_rate=0.005)
  dnn_optimizer = keras.optimizers.legacy.Adagrad(
      learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-30)
  model.compile(
      [linear_optimizer, dnn_optimizer],
      loss=keras.losses.BinaryCrossentropy(from_logits=True, reduction="sum"),
      metrics=[
          TF1EvalLoss(
              keras.losses.BinaryCrossentropy(from_logits=True, reduction="none"), summed=True),
          keras.metrics.BinaryAccuracy(threshold=0.0, name="accuracy"),
          keras.metrics.BinaryCrossentropy(from_logits=True, name="average_loss"),
          keras.metrics.AUC(from_logits=True, name="auc")])
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
      "occupation_embedding/kernel":
          "dnn/input_from_feature_columns/input_layer/occupation_embedding/embedding_weights",
      "age_bucketized_weights/kernel": "linear/linear_model/age_bucketized/weights",
      "age_bucketized_X_education_weights/kernel":
          "linear/linear_model/age_bucketized_X_education/weights",
      "education_weights/kernel": "linear/linear_model/education/weights",
      "occupation_weights/kernel": "linear/linear_model/occupation/weights",
      "occupation_weights/bias": "linear/linear_model/bias_weights",
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
      (
          tf1_variables(model.linear_model),
          model.optimizer[0],
          {"{}/Ftrl": "accumulator", "{}/Ftrl_1": "linear"}),
      (tf1_variables(model.dnn_model), model.optimizer[1], {"{}/Adagrad": "accumulator"}),
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


def main(argv):
  args = parser.parse_args(argv[1:])
  data_dir = tempfile.mkdtemp()
  train_file = os.path.join(data_dir, "adult.data")
  test_file = os.path.join(data_dir, "adult.test")
  write_census_csv(train_file, 512, seed=1)
  write_census_csv(test_file, 128, seed=2)

  model_dir = tempfile.mkdtemp()

  keras.utils.set_random_seed(7)
  task_type, strategy = strategy_for_this_task()

  dataset = input_fn(train_file, None, True, args.batch_size)

  with strategy.scope():
    model = build_dnn_linear_combined_classifier_model(dataset.element_spec[0])

  # RunConfig's checkpoints in model_dir/tf2: every 600 seconds and at the end, the last 5 kept.
  checkpoints = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model, optimizer=model.optimizer),
      os.path.join(model_dir, "tf2"),
      max_to_keep=5)
  save_checkpoint = CheckpointSaver(checkpoints, model.optimizer[1].iterations, secs=600)
  # Carry on from the latest checkpoint as TF1 did: this program's own, or else the TF1
  # program's in model_dir (whose files stay as they are).
  tf1_checkpoint = tf.train.latest_checkpoint(model_dir)
  if checkpoints.latest_checkpoint:
    checkpoints.restore_or_initialize()
  elif tf1_checkpoint:
    with strategy.scope():
      restore_tf1_checkpoint(tf1_checkpoint, model)

  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer[1].iterations)
  if steps_done < args.train_steps:
    model.fit(
        dataset,
        epochs=1,
        steps_per_epoch=args.train_steps - steps_done,
        callbacks=[save_checkpoint],
        verbose=2)
  eval_dataset = input_fn(test_file, 1, False, args.batch_size)
  # TF1 evaluated the whole input; ParameterServerStrategy needs it repeated and counted.
  eval_steps = int(eval_dataset.cardinality())
  if eval_steps == tf.data.UNKNOWN_CARDINALITY:  # known once read: files, filter, a v1 map
    eval_steps = int(eval_dataset.reduce(0, lambda count, _: count + 1))
  eval_dataset = eval_dataset.repeat()
  results = model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)
  # TF1's results held the step they were evaluated at.
  results["global_step"] = int(model.optimizer[1].iterations)
  for key in sorted(results):
    print("eval %s: %s" % (key, results[key]))
  shutil.rmtree(model_dir)
  shutil.rmtree(data_dir)


if __name__ == "__main__":
  tf.compat.v1.app.run(main)
