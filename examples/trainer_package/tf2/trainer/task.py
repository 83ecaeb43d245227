"""The trainer's entry point: `python -m trainer.task --train-steps 20`, as on Cloud ML Engine.

It writes a small CSV dataset of its own, then trains and evaluates the Estimator that
trainer.model builds.
"""
import argparse
import os
import random
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow as tf

from trainer import model

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras


def write_csv(path, rows, seed):
  """`rows` examples of a made-up housing price: three features and the price."""
  state = np.random.RandomState(seed)
  features = state.uniform(0.0, 1.0, size=(rows, 3))
  prices = features @ np.array([2.0, -1.0, 0.5]) + 0.1 * state.normal(size=rows)
  with open(path, "w") as file:
    file.write(",".join(model.CSV_COLUMNS) + "\n")
    for row, price in zip(features, prices):
      file.write(",".join("%.4f" % value for value in (*row, price)) + "\n")


def units_list(text):
  return [int(units) for units in text.split(",")]


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


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=20)
  parser.add_argument("--batch-size", type=int, default=8)
  parser.add_argument("--learning-rate", type=float, default=0.1)
  parser.add_argument("--hidden-units", type=units_list, default=[8, 4])
  parser.add_argument("--job-dir", help="checkpoints (if not given: a temporary folder, removed)")
  args = parser.parse_args()

  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  data_dir = tempfile.mkdtemp()
  train_file, eval_file = os.path.join(data_dir, "train.csv"), os.path.join(data_dir, "eval.csv")
  write_csv(train_file, 64, seed=0)
  write_csv(eval_file, 16, seed=1)
  job_dir = args.job_dir or tempfile.mkdtemp()
  train_input_fn = model.make_input_fn(train_file, "train", args.batch_size)

  keras.utils.set_random_seed(42)
  task_type, strategy = strategy_for_this_task()

  dataset = train_input_fn()

  with strategy.scope():
    keras_model = model.build_model(
        dataset.element_spec[0],
        params={"hidden_units": args.hidden_units, "learning_rate": args.learning_rate})

  # RunConfig's checkpoints in model_dir/tf2: every 600 seconds and at the end, the last 5 kept.
  checkpoints = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=keras_model, optimizer=keras_model.optimizer),
      os.path.join(job_dir, "tf2"),
      max_to_keep=5)
  save_checkpoint = CheckpointSaver(checkpoints, keras_model.optimizer.iterations, secs=600)
  # Carry on from the latest checkpoint as TF1 did: this program's own, or else the TF1
  # program's in model_dir (whose files stay as they are).
  tf1_checkpoint = tf.train.latest_checkpoint(job_dir)
  if checkpoints.latest_checkpoint:
    checkpoints.restore_or_initialize()
  elif tf1_checkpoint:
    with strategy.scope():
      restore_tf1_checkpoint(tf1_checkpoint, keras_model)

  eval_dataset = model.make_input_fn(eval_file, "eval", args.batch_size)().repeat()

  if task_type == "evaluator":
    # The TF1 evaluator job: evaluate each new checkpoint of the chief's, up to that of
    # max_steps (evaluated below).
    for checkpoint_path in tf.train.checkpoints_iterator(checkpoints.directory):
      try:
        checkpoints.checkpoint.restore(checkpoint_path).expect_partial()
      except tf.errors.NotFoundError:  # deleted meanwhile: the chief keeps only its latest few
        continue
      if int(keras_model.optimizer.iterations) >= args.train_steps:
        break
      keras_model.evaluate(eval_dataset, steps=2, verbose=2)
  else:
    # max_steps counts the steps of earlier runs too.
    steps_done = int(keras_model.optimizer.iterations)
    if steps_done < args.train_steps:
      keras_model.fit(
          dataset,
          epochs=1,
          steps_per_epoch=args.train_steps - steps_done,
          callbacks=[save_checkpoint],
          verbose=2)
  eval_result = keras_model.evaluate(eval_dataset, steps=2, return_dict=True, verbose=2)
  print("eval loss: %s" % eval_result["loss"])
  print("eval rmse: %s" % eval_result["rmse"])

  shutil.rmtree(data_dir)
  if not args.job_dir:
    shutil.rmtree(job_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  main()
