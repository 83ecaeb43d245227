"""A custom classifier Estimator in TensorFlow 1.

The shape of the TF1 "Creating custom Estimators" tutorial: dict features,
a model_fn with dense layers that branches on ``mode`` (PREDICT, EVAL, TRAIN),
softmax cross-entropy, Adam, an accuracy metric, then ``train``, ``evaluate``
and ``predict``; a checkpoint every 10 steps, the last 2 kept. The data is a
tiny inline set of three Gaussian blobs.

Run: python examples/classifier/train.py
"""
import os
import random
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow.compat.v1 as tf1
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

NUM_CLASSES = 3
BATCH_SIZE = 16

# 48 points in 4 dimensions around three centres, one class per centre.
rng = np.random.RandomState(0)
centres = rng.normal(scale=3.0, size=(NUM_CLASSES, 4))
train_y = np.repeat(np.arange(NUM_CLASSES), 16).astype(np.int32)
train_x = (centres[train_y] + rng.normal(size=(48, 4))).astype(np.float32)
eval_y = np.repeat(np.arange(NUM_CLASSES), 4).astype(np.int32)
eval_x = (centres[eval_y] + rng.normal(size=(12, 4))).astype(np.float32)


def train_input_fn():
  dataset = tf1.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
  return dataset.shuffle(48).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  dataset = tf1.data.Dataset.from_tensor_slices(({"x": eval_x}, eval_y))
  return dataset.batch(BATCH_SIZE)


def predict_input_fn():
  return tf1.data.Dataset.from_tensor_slices({"x": eval_x[::4]}).batch(BATCH_SIZE)


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


def build_model(input_spec):
  """The TF1 model_fn `model_fn` as a compiled Keras model, and a model of its predictions."""
  features = {
      name: keras.Input(shape=spec.shape[1:], dtype=spec.dtype, name=name)
      for name, spec in input_spec.items()}
  net = keras.layers.Dense(units=16, activation="relu", name="dense")(features["x"])
  logits = keras.layers.Dense(units=NUM_CLASSES, name="dense_1")(net)
  predicted_classes = tf1.argmax(logits, 1)
  model = keras.Model(inputs=features, outputs=logits)
  predictor = keras.Model(inputs=features, outputs={
      "class_ids": predicted_classes[:, tf1.newaxis],
      "probabilities": tf1.nn.softmax(logits),
  })
  optimizer = TF1Adam(learning_rate=0.01, epsilon=1e-08)
  model.compile(
      optimizer,
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=[
          TF1EvalLoss(
              keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")),
          keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
  return model, predictor


# Under TF 2.x, tf1.layers draw their initializer seeds from Python's random
# module: seed it as well as the graph (RunConfig's tf_random_seed).
random.seed(42)

# Log "loss = ..., step = ..." after every step.
tf1.logging.set_verbosity(tf1.logging.INFO)

model_dir = tempfile.mkdtemp()


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


def predict_examples(predictor, dataset):
  """One dict of predictions per example, as Estimator.predict yielded them."""
  for features in dataset:
    if isinstance(features, tuple):  # (features, labels): predict reads the features
      features = features[0]
    batch = {name: value.numpy() for name, value in predictor(features, training=False).items()}
    for index in range(len(next(iter(batch.values())))):
      yield {name: value[index] for name, value in batch.items()}


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
      (tf1_variables(model), model.optimizer, {"{}/Adam": "m", "{}/Adam_1": "v"}),
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
      [power] for power in model.optimizer.tf1_powers())
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


keras.utils.set_random_seed(42)
task_type, strategy = strategy_for_this_task()

dataset = train_input_fn()

with strategy.scope():
  model, predictor = build_model(dataset.element_spec[0])

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
elif tf1_checkpoint:
  with strategy.scope():
    restore_tf1_checkpoint(tf1_checkpoint, model)

# max_steps counts the steps of earlier runs too.
steps_done = int(model.optimizer.iterations)
if steps_done < 30:
  model.fit(
      dataset, epochs=1, steps_per_epoch=30 - steps_done, callbacks=[save_checkpoint], verbose=2)

eval_dataset = eval_input_fn()
# TF1 evaluated the whole input; ParameterServerStrategy needs it repeated and counted.
eval_steps = int(eval_dataset.cardinality())
if eval_steps == tf.data.UNKNOWN_CARDINALITY:  # known once read: files, filter, a v1 map
  eval_steps = int(eval_dataset.reduce(0, lambda count, _: count + 1))
eval_dataset = eval_dataset.repeat()
eval_result = model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)
print("eval accuracy: %s loss: %s" % (eval_result["accuracy"], eval_result["loss"]))

for expected, prediction in zip(eval_y[::4], predict_examples(predictor, predict_input_fn())):
  print("prediction: class %d (%.3f), expected %d" % (
      prediction["class_ids"][0],
      prediction["probabilities"][prediction["class_ids"][0]],
      expected))
shutil.rmtree(model_dir)
