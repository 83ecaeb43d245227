"""A custom model_fn that names its serving signatures, exported after training.

The model_fn builds its net with a helper (a loop of `tf.layers.dense` over
`params["hidden_units"]`), makes its logits' weights with `get_variable` and an L2
regularizer, writes its softmax cross-entropy by hand (adding the regularization loss) and
branches on the mode with `tf.cond`: tf-migrate keeps it as written (tier 2). Its PREDICT
branch returns the predictions and two signatures: `serving_default` (`PredictOutput` of
the predictions) and `classification` (`ClassificationOutput` of the scores and the
class names). The program trains and evaluates with `train_and_evaluate`, then exports with
`estimator.export_saved_model` and a hand-written serving function that parses
serialized `tf.Example`s from a placeholder.

Run: python examples/export_outputs/train.py [--train-steps 20] [--model-dir DIR]
(without --model-dir the checkpoints and the export go to a temporary folder, removed)
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
from tensorflow.core.protobuf import saved_model_pb2

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

CLASSES = ["low", "middle", "high"]


def make_data(rows, seed):
  """`rows` examples: a dict of the feature `x` (4 values) and a class id of 0, 1 or 2."""
  state = np.random.RandomState(seed)
  x = state.normal(size=(rows, 4)).astype(np.float32)
  y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
  return {"x": x}, y


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices(make_data(96, seed=0)).repeat().batch(16)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(make_data(32, seed=1)).batch(16)


def dense_stack(net, hidden_units, training):
  for index, units in enumerate(hidden_units):
    net = tf.compat.v1.layers.dense(net, units, activation=tf.nn.relu, name="hidden_%d" % index)
    net = tf.compat.v1.cond(training, lambda: net * 0.9, lambda: net)
  return net


def model_fn(features, labels, mode, params):
  training = tf.compat.v1.constant(mode == "train")
  net = dense_stack(features["x"], params["hidden_units"], training)
  weights = tf.compat.v1.get_variable("logits_w", [params["hidden_units"][-1], 3],
                            regularizer=lambda w: 0.01 * tf.nn.l2_loss(w))
  logits = tf.matmul(net, weights)
  if mode == "infer":
    probabilities = tf.compat.v1.nn.softmax(logits)
    predictions = {"class_ids": tf.compat.v1.argmax(logits, 1), "probabilities": probabilities}
    names = tf.tile(tf.compat.v1.constant([CLASSES]), [tf.compat.v1.shape(logits)[0], 1])
    return {
        "predictions": predictions,
        "export_outputs": {
            "serving_default": predictions,
            "classification": {"scores": probabilities, "classes": names}}}
  onehot = tf.one_hot(labels, 3)
  losses = tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits)
  loss = tf.compat.v1.reduce_mean(losses)
  if mode == "eval":
    return {"loss": loss}
  return {"loss": loss}


class ModelFnModel(keras.Model):
  """The TF1 model_fn `model_fn`, run as written inside Keras."""
  # tf.compat.v1.keras.utils.track_tf1_style_variables tracks the variables, layers and
  # regularizers the model_fn's code makes, by their TF1 names, so TF1's checkpoints fit.

  def __init__(self, params):
    super().__init__()
    self.params = params
    # The mean of the batches' losses, as TF1 reported it.
    self.loss_tracker = keras.metrics.Mean(name="loss")

  @property
  def metrics(self):
    return [self.loss_tracker]

  @tf.compat.v1.keras.utils.track_tf1_style_variables
  def call(self, inputs, training=False):
    # (features, labels) to train or evaluate; features alone predict (TF1's PREDICT mode),
    # giving the model_fn's predictions and export outputs.
    features, labels = inputs if isinstance(inputs, tuple) else (inputs, None)
    mode = "infer" if labels is None else "train" if training else "eval"
    # Entered again at each call, TF1's scope names unnamed layers as the first call did
    # (`dense`, not `dense_1`): as TF1 named them, once, in its graph.
    with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope()):
      return model_fn(features, labels, mode, self.params)

  def tf1_loss(self, results):
    # TF1's regularization losses, which the model_fn added to its loss: the regularizers
    # Keras tracked, all of the model's.
    return results["loss"] + sum(self.losses)

  def train_step(self, data):
    with tf.GradientTape() as tape:
      loss = self.tf1_loss(self(data, training=True))
    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
    self.loss_tracker.update_state(loss)
    return {"loss": self.loss_tracker.result()}

  def test_step(self, data):
    results = self(data, training=False)
    self.loss_tracker.update_state(self.tf1_loss(results))
    return {"loss": self.loss_tracker.result()}


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


def build_model(dataset, params):
  """The TF1 model_fn `model_fn` as a Keras model, compiled with its optimizer."""
  model = ModelFnModel(params)
  model(next(iter(dataset)))  # the model_fn's code makes its variables
  model.compile(TF1Adam(learning_rate=params["learning_rate"], epsilon=1e-08))
  return model


def serving_input_fn():
  """Serialized tf.Examples of the feature `x`, as a client sends them."""
  serialized = tf.compat.v1.placeholder(tf.string, [None], name="examples")
  features = tf.compat.v1.parse_example(serialized, {"x": tf.io.FixedLenFeature([4], tf.float32)})
  return features, {"examples": serialized}


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
  # Each signature: its method and the export outputs of the model_fn's that it serves.
  # TF1 exported classify and regress signatures only for one input of serialized tf.Examples.
  signatures = {
      "serving_default": ("predict", "serving_default"),
      "classification": ("classify", "classification"),
  }
  examples = len(keys) == 1 and receiver_tensors[keys[0]].dtype == tf.string

  def signature(method, outputs):
    names = keys if method == "predict" else ["inputs"]

    @tf.function
    def serve(**inputs):
      features = to_features(*[inputs[name] for name in names])
      for tensor, shape in zip(tf.nest.flatten(features, expand_composites=True), shapes):
        tensor.set_shape(shape)
      outputs_given = predictor(features, training=False)["export_outputs"][outputs]
      if not isinstance(outputs_given, dict):
        return {"output": outputs_given}
      return outputs_given

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
  # A server loads the model's variables, not its optimizer (whose slots it cannot restore).
  served = tf.Module()
  served.model_variables = list(predictor.variables)
  tf.saved_model.save(served, temporary, signatures=functions)
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


def tf1_variables(model):
  """The model's variables by their TF1 names, which the model_fn's own code gives them."""
  tracking = {id(variable) for metric in model.metrics for variable in metric.variables}
  return {variable.name.split(":")[0]: variable for variable in model.weights
          if id(variable) not in tracking}


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


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=20)
  parser.add_argument("--model-dir", help="checkpoints and the export (default: a temporary one)")
  args = parser.parse_args()

  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random module: seed it
  # as well as the graph (RunConfig's tf_random_seed).
  random.seed(1)
  model_dir = args.model_dir or tempfile.mkdtemp()
  params = {"hidden_units": [16, 8], "learning_rate": 0.01}

  keras.utils.set_random_seed(1)
  task_type, strategy = strategy_for_this_task()

  dataset = train_input_fn()

  with strategy.scope():
    model = build_model(dataset, params=params)

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

  eval_dataset = eval_input_fn().repeat()

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
      model.evaluate(eval_dataset, steps=2, verbose=2)
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
  result = model.evaluate(eval_dataset, steps=2, return_dict=True, verbose=2)
  print("eval loss: %s" % result["loss"])
  path = export_saved_model(model, os.path.join(model_dir, "export", "served"), serving_input_fn)
  print("exported to %s" % path.decode())
  if not args.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  main()
