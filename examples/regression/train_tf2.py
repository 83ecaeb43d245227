"""Multi-worker Estimator training in TensorFlow 1: the canonical program.

The TF1 half of the TensorFlow guide "Migrate multi-worker CPU/GPU training":
an Estimator with a one-layer model_fn, trained and evaluated with
``train_and_evaluate``. Without ``TF_CONFIG`` it trains locally; with a
``TF_CONFIG`` cluster (chief, workers, ps, evaluator) the same code trains
distributed.

Run: python examples/regression/train.py
"""
import os
import random
import shutil
import tempfile
import time

import keras
import tensorflow as tf
import tensorflow.compat.v1 as tf1

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (eval_features, eval_labels)).batch(1)


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


def _build_model(input_spec):
  """The TF1 model_fn `_model_fn` as a Keras model, compiled with its loss and optimizer."""
  model = keras.Sequential([
      keras.layers.Dense(units=1, name="dense"),
  ])
  model.build(input_spec.shape)
  optimizer = keras.optimizers.legacy.Adagrad(
      learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)
  model.compile(
      optimizer,
      loss=keras.losses.MeanSquaredError(),
      metrics=[TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none"))])
  return model


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
      (tf1_variables(model), model.optimizer, {"{}/Adagrad": "accumulator"}),
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


keras.utils.set_random_seed(42)
task_type, strategy = strategy_for_this_task()

dataset = _input_fn()

with strategy.scope():
  model = _build_model(dataset.element_spec[0])

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

eval_dataset = _eval_input_fn().repeat()

if task_type == "evaluator":
  # The TF1 evaluator job: evaluate each new checkpoint of the chief's, up to that of
  # max_steps (evaluated below).
  for checkpoint_path in tf.train.checkpoints_iterator(checkpoints.directory):
    try:
      checkpoints.checkpoint.restore(checkpoint_path).expect_partial()
    except tf.errors.NotFoundError:  # deleted meanwhile: the chief keeps only its latest few
      continue
    if int(model.optimizer.iterations) >= 20:
      break
    model.evaluate(eval_dataset, steps=3, verbose=2)
else:
  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer.iterations)
  if steps_done < 20:
    model.fit(
        dataset, epochs=1, steps_per_epoch=20 - steps_done, callbacks=[save_checkpoint], verbose=2)
eval_result = model.evaluate(eval_dataset, steps=3, return_dict=True, verbose=2)
print("eval loss: %s" % eval_result["loss"])
shutil.rmtree(model_dir)
