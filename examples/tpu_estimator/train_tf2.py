"""A TPUEstimator program, trained on the TPU `--tpu` names with `--use_tpu`, else on the CPU.

TPU programs are written for `tf.estimator.tpu.TPUEstimator`, `tpu.RunConfig` with a
`TPUConfig`, and a model_fn returning a `TPUEstimatorSpec` whose eval metrics are a
`(metric_fn, tensors)` pair; the batch size reaches the input functions as
`params["batch_size"]`, and the optimizer is wrapped for TPUs only when one is used.
With `use_tpu=False` (the default) it trains on the CPU like any Estimator.

Run: python examples/tpu_estimator/train.py --train_steps 20
     python examples/tpu_estimator/train.py --use_tpu --tpu=my-tpu   # on a Cloud TPU
"""
import os
import random
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

flags = tf.compat.v1.app.flags
flags.DEFINE_bool("use_tpu", False, "Train on a TPU.")
flags.DEFINE_string("tpu", None, "The TPU to train on with --use_tpu: its name or grpc:// address.")
flags.DEFINE_integer("train_steps", 20, "Training steps, counted over every run in --model_dir.")
flags.DEFINE_integer("train_batch_size", 8, "Examples per training batch.")
flags.DEFINE_integer("eval_batch_size", 8, "Examples per evaluation batch.")
flags.DEFINE_integer("iterations_per_loop", 10, "Steps a TPU runs per call of the host.")
flags.DEFINE_string("model_dir", None, "Checkpoints (if not given: a temporary folder, removed).")
FLAGS = flags.FLAGS

images = np.random.RandomState(1).uniform(0.0, 1.0, size=(64, 6, 6, 1)).astype(np.float32)
digits = (images.mean(axis=(1, 2, 3)) * 20).astype(np.int64) % 4


def train_input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices((images, digits))
  return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def eval_input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices((images[:32], digits[:32]))
  return dataset.batch(params["batch_size"], drop_remainder=True)


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


def build_model(input_spec, params, steps_per_execution):
  """The TF1 model_fn `model_fn` as a Keras model, compiled with its loss and optimizer."""
  model = keras.Sequential([
      keras.layers.Conv2D(
          filters=4, kernel_size=3, data_format="channels_last", activation="relu", name="conv2d"),
      keras.layers.MaxPooling2D(pool_size=2, strides=2, data_format="channels_last"),
      keras.layers.Flatten(data_format="channels_last"),
      keras.layers.Dense(units=4, name="dense"),
  ])
  model.build(input_spec.shape)
  optimizer = TF1Adam(learning_rate=0.01, epsilon=1e-08)
  model.compile(
      optimizer,
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      metrics=[
          TF1EvalLoss(
              keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")),
          keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
      steps_per_execution=steps_per_execution)
  return model


def strategy_for_this_task(tpu):
  """This task's type and its strategy: TPUStrategy on the TPU named, else as TF_CONFIG says."""
  if tpu:
    # Generated by tf-migrate, not verified by it (it was tested without a TPU).
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return None, tf.distribute.TPUStrategy(resolver)

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


def main(argv):
  del argv
  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()

  keras.utils.set_random_seed(42)
  task_type, strategy = strategy_for_this_task(FLAGS.tpu if FLAGS.use_tpu else None)

  dataset = train_input_fn(params={"batch_size": FLAGS.train_batch_size})

  with strategy.scope():
    model = build_model(
        dataset.element_spec[0],
        params={"batch_size": FLAGS.train_batch_size},
        steps_per_execution=FLAGS.iterations_per_loop)

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
  metrics = model.evaluate(
      eval_input_fn(params={"batch_size": FLAGS.eval_batch_size}).repeat(),
      steps=4,
      return_dict=True,
      verbose=2)
  print("eval loss: %s" % metrics["loss"])
  print("eval accuracy: %s" % metrics["accuracy"])
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  tf.compat.v1.app.run(main)
