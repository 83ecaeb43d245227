"""A trainer that exports its model for serving, in the shape of the Cloud ML Engine samples.

A canned ``DNNClassifier`` of three classes on three numeric feature columns, trained and
evaluated by ``train_and_evaluate``, whose EvalSpec exports SavedModels: a
``LatestExporter`` of serialized ``tf.Example`` requests
(``build_parsing_serving_input_receiver_fn`` of ``make_parse_example_spec``), keeping
the last two, a ``BestExporter`` of the same requests with its default compare function
(the lowest eval loss), and a ``FinalExporter`` of a hand-written serving function whose
placeholders take one value per example. The data are three Gaussian blobs drawn with a
fixed seed.

Run: python examples/exporter/train.py [--train-steps 20] [--model-dir DIR]
(without --model-dir the checkpoints and exports go to a temporary folder, removed at the end)
"""
import argparse
import os
import shutil
import tempfile
import time

import numpy as np
import keras
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

FEATURES = ["length", "width", "depth"]


def make_data(rows, seed):
  """`rows` examples: a dict of the features (and of a `key` naming each example, which the model
  does not read and a client does not send) and a class id of 0, 1 or 2."""
  state = np.random.RandomState(seed)
  labels = state.randint(0, 3, size=rows)
  centres = np.array([[1.0, 0.5, 0.2], [2.0, 1.5, 0.8], [3.0, 1.0, 1.6]])
  values = (centres[labels] + 0.3 * state.normal(size=(rows, 3))).astype(np.float32)
  features = {name: values[:, index] for index, name in enumerate(FEATURES)}
  features["key"] = np.array(["%d-%d" % (seed, row) for row in range(rows)])
  return features, labels


def make_input_fn(data, mode, batch_size):
  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(data)
    if mode == "train":
      dataset = dataset.repeat()
    return dataset.batch(batch_size)
  return input_fn


def serving_input_fn():
  """One value of each feature per example, as a client sends them in JSON."""
  placeholders = {name: tf.compat.v1.placeholder(tf.float32, [None]) for name in FEATURES}
  features = {name: tf.compat.v1.expand_dims(tensor, -1) for name, tensor in placeholders.items()}
  return features, placeholders


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


def build_dnn_classifier_model(input_spec):
  """TF1's canned DNNClassifier as a compiled Keras model, and a model of its predictions."""
  features = {}
  for name, spec in input_spec.items():
    # Feature columns took a feature of one value per example as [batch, 1].
    shape = spec.shape[1:] if spec.shape.rank > 1 else [1]
    features[name] = keras.Input(shape=shape, dtype=spec.dtype, name=name)
  # input_layer: the numeric columns in name order, each flattened to float32.
  net = keras.layers.Concatenate()([
      keras.layers.Flatten()(tf.cast(features[key], tf.float32))
      for key in ("depth", "length", "width")])
  net = keras.layers.Dense(units=8, activation="relu", name="dnn/hiddenlayer_0")(net)
  net = keras.layers.Dense(units=8, activation="relu", name="dnn/hiddenlayer_1")(net)
  logits = keras.layers.Dense(units=3, name="dnn/logits")(net)
  model = keras.Model(inputs=features, outputs=logits)
  predictor = keras.Model(inputs=features, outputs={
      "logits": logits,
      "probabilities": tf.nn.softmax(logits),
      "class_ids": tf.argmax(logits, axis=-1)[:, None],
      "classes": tf.strings.as_string(tf.argmax(logits, axis=-1)[:, None]),
      "all_class_ids": tf.tile(tf.range(3)[None, :], [tf.shape(logits)[0], 1]),
      "all_classes": tf.strings.as_string(tf.tile(tf.range(3)[None, :], [tf.shape(logits)[0], 1])),
  })
  optimizer = keras.optimizers.legacy.Adagrad(
      learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)
  model.compile(
      optimizer,
      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum"),
      metrics=[
          TF1EvalLoss(
              keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none"),
              summed=True),
          keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
          keras.metrics.SparseCategoricalCrossentropy(from_logits=True, name="average_loss")])
  return model, predictor


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


def export_saved_model(predictor, export_dir_base, serving_input_fn, exports_to_keep=None):
  """Exports `predictor` for serving as TF1 did, with its signatures; returns the path."""
  # Into a new folder of export_dir_base named by the time, keeping the latest
  # `exports_to_keep` exports (None: all).
  # The serving function is TF1 code, run as written in a TF1 graph: its receiver tensors
  # (placeholders) are the signatures' inputs, and what it computes from them runs in each.
  receiver = tf.compat.v1.wrap_function(serving_input_fn, [])
  features, receiver_tensors = receiver.structured_outputs
  if not isinstance(receiver_tensors, dict):
    receiver_tensors = {"input": receiver_tensors}
  keys = sorted(receiver_tensors)
  to_features = receiver.prune([receiver_tensors[key] for key in keys], features)
  # Pruning copies the serving function's ops but not the shapes its code set on their
  # tensors (`set_shape`), which the model may need: each feature gets its shape back.
  shapes = [tensor.shape for tensor in tf.nest.flatten(features, expand_composites=True)]
  inputs = getattr(predictor, "input", None)  # a functional model's, by name
  inputs = inputs if isinstance(inputs, dict) else {}
  if isinstance(features, dict) and set(inputs) - set(features):
    # TF1's feature columns read only the features they need: a serving function may give
    # fewer than training did (no `key` column, say). A model of those it gives serves.
    given = {name: inputs[name] for name in features if name in inputs}
    predictor = keras.Model(inputs=given, outputs=predictor.output)
  # Each signature: its method and the prediction each output is (None: every prediction).
  # TF1 exported classify and regress signatures only for one input of serialized tf.Examples.
  signatures = {
      "serving_default": ("classify", {"classes": "all_classes", "scores": "probabilities"}),
      "classification": ("classify", {"classes": "all_classes", "scores": "probabilities"}),
      "predict": ("predict", None),
  }
  examples = len(keys) == 1 and receiver_tensors[keys[0]].dtype == tf.string

  def signature(method, outputs):
    names = keys if method == "predict" else ["inputs"]

    @tf.function
    def serve(**inputs):
      features = to_features(*[inputs[name] for name in names])
      for tensor, shape in zip(tf.nest.flatten(features, expand_composites=True), shapes):
        tensor.set_shape(shape)
      predictions = predictor(features, training=False)
      if not isinstance(predictions, dict):
        predictions = {"output": predictions}
      if outputs is None:
        return predictions
      return {key: predictions[name] for key, name in outputs.items()}

    specs = {name: tf.TensorSpec.from_tensor(receiver_tensors[key], name=name)
             for name, key in zip(names, keys)}
    return serve.get_concrete_function(**specs)

  functions = {name: signature(method, outputs)
               for name, (method, outputs) in signatures.items()
               if method == "predict" or examples}
  timestamp = int(time.time())
  while tf.io.gfile.exists(os.path.join(export_dir_base, str(timestamp))):
    timestamp += 1  # one export a second, as TF1's folder names allow
  export_dir = os.path.join(export_dir_base, str(timestamp))
  # Written beside, then renamed: a server watching export_dir_base never loads half of it.
  temporary = os.path.join(export_dir_base, f"temp-{timestamp}")
  tf.saved_model.save(predictor, temporary, signatures=functions)
  # TF2 marks every signature a predict one: TF Serving's Classify and Regress APIs
  # serve only those marked as theirs, as TF1 marked them.
  saved_model_file = os.path.join(temporary, "saved_model.pb")
  with tf.io.gfile.GFile(saved_model_file, "rb") as file:
    saved_model = saved_model_pb2.SavedModel.FromString(file.read())
  for name in functions:
    signature_def = saved_model.meta_graphs[0].signature_def[name]
    signature_def.method_name = f"tensorflow/serving/{signatures[name][0]}"
  with tf.io.gfile.GFile(saved_model_file, "wb") as file:
    file.write(saved_model.SerializeToString())
  tf.io.gfile.rename(temporary, export_dir)
  if exports_to_keep:
    exports = sorted(int(name.rstrip("/")) for name in tf.io.gfile.listdir(export_dir_base)
                     if name.rstrip("/").isdigit())
    for old in exports[:-exports_to_keep]:
      tf.io.gfile.rmtree(os.path.join(export_dir_base, str(old)))
  return export_dir.encode()


def parsing_serving_input_fn(feature_spec, default_batch_size=None):
  """TF1's build_parsing_serving_input_receiver_fn: tf.Examples parsed by feature_spec."""

  def serving_input_fn():
    examples = tf.compat.v1.placeholder(
        tf.string, [default_batch_size], name="input_example_tensor")
    return tf.io.parse_example(examples, feature_spec), {"examples": examples}

  return serving_input_fn


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
  parser.add_argument("--batch-size", type=int, default=16)
  parser.add_argument("--model-dir", help="checkpoints and exports (default: a temporary folder)")
  args = parser.parse_args()

  model_dir = args.model_dir or tempfile.mkdtemp()
  columns = [tf.feature_column.numeric_column(name) for name in FEATURES]

  keras.utils.set_random_seed(11)
  task_type, strategy = strategy_for_this_task()

  dataset = make_input_fn(make_data(256, seed=0), "train", args.batch_size)()

  with strategy.scope():
    model, predictor = build_dnn_classifier_model(dataset.element_spec[0])

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

  eval_dataset = make_input_fn(make_data(64, seed=1), "eval", args.batch_size)().repeat()

  if task_type == "evaluator":
    # The TF1 evaluator job: evaluate each new checkpoint of the chief's, up to that of
    # max_steps (evaluated below).
    for checkpoint_path in tf.train.checkpoints_iterator(checkpoints.directory):
      try:
        checkpoints.checkpoint.restore(checkpoint_path).expect_partial()
      except tf.errors.NotFoundError:  # deleted meanwhile: the chief keeps only its latest few
        continue
      if int(model.optimizer.iterations) >= args.train_steps:
        break
      model.evaluate(eval_dataset, steps=4, verbose=2)
  else:
    # max_steps counts the steps of earlier runs too.
    steps_done = int(model.optimizer.iterations)
    if steps_done < args.train_steps:
      model.fit(
          dataset,
          epochs=1,
          steps_per_epoch=args.train_steps - steps_done,
          callbacks=[save_checkpoint],
          verbose=2)
  result = model.evaluate(eval_dataset, steps=4, return_dict=True, verbose=2)
  # TF1's exporters exported where the evaluation ran: the chief exports here.
  if task_type != "evaluator":
    export_saved_model(
        predictor,
        os.path.join(model_dir, "export", "exporter"),
        parsing_serving_input_fn(tf.compat.v1.feature_column.make_parse_example_spec(columns)),
        exports_to_keep=2)
    export_saved_model(
        predictor,
        os.path.join(model_dir, "export", "best"),
        parsing_serving_input_fn(tf.compat.v1.feature_column.make_parse_example_spec(columns)),
        exports_to_keep=5)
    export_saved_model(predictor, os.path.join(model_dir, "export", "final"), serving_input_fn)
  print("eval loss: %s" % result["loss"])
  print("eval accuracy: %s" % result["accuracy"])
  if not args.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  main()
