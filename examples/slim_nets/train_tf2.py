"""A model_fn whose net is a tf_slim network from another module (nets.py).

Slim programs kept their networks in a module of their own (models/research/slim's
nets/), built with ``arg_scope``, ``conv2d`` and ``fully_connected``; the model_fn
adds slim's regularization losses to a ``tf.losses`` cross-entropy and trains with
Adam. tf-migrate keeps the model_fn and nets.py as written (tier 2): slim's layers
run in Keras under ``track_tf1_style_variables``. The data is 6x6 one-channel
images whose class is the quadrant that is brightest.

Run: python examples/slim_nets/train.py
"""
import importlib.metadata
import os
import shutil
import tempfile
import time

import nets
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

NUM_CLASSES = 4
BATCH_SIZE = 16

rng = np.random.RandomState(0)


def make_images(count):
  labels = rng.randint(NUM_CLASSES, size=count).astype(np.int32)
  images = rng.uniform(size=(count, 6, 6, 1)).astype(np.float32)
  for image, label in zip(images, labels):
    row, column = divmod(label, 2)
    image[3 * row:3 * row + 3, 3 * column:3 * column + 3] += 0.6
  return images, labels


train_images, train_labels = make_images(64)
eval_images, eval_labels = make_images(16)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"image": train_images}, train_labels))
  return dataset.shuffle(64, seed=1).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"image": eval_images}, eval_labels))
  return dataset.batch(BATCH_SIZE)


def model_fn(features, labels, mode, params):
  is_training = mode == "train"
  logits = nets.small_cnn(features["image"], NUM_CLASSES, is_training, params["weight_decay"])
  predictions = tf.compat.v1.argmax(logits, 1)
  if mode == "infer":
    return {
        "predictions": {"classes": predictions},
        "export_outputs": {"serving_default": {"classes": predictions}}}

  loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == "eval":
    metrics = {"accuracy": (labels, predictions)}
    return {"loss": loss, "metrics": metrics}
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
    # eval_metric_ops: Keras metrics of the tensors the model_fn gives them.
    self.tf1_metrics = {
        "accuracy": keras.metrics.Accuracy(name="accuracy"),
    }

  @property
  def metrics(self):
    return [self.loss_tracker, *self.tf1_metrics.values()]

  @tf.compat.v1.keras.utils.track_tf1_style_variables
  def call(self, inputs, training=False):
    features, labels = inputs
    # Entered again at each call, TF1's scope names unnamed layers as the first call did
    # (`dense`, not `dense_1`): as TF1 named them, once, in its graph.
    with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope()):
      return model_fn(features, labels, "train" if training else "eval", self.params)

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
    for key, metric in self.tf1_metrics.items():
      metric.update_state(*results["metrics"][key])
    return {metric.name: metric.result() for metric in self.metrics}


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


tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

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


keras.utils.set_random_seed(42)
task_type, strategy = strategy_for_this_task()

dataset = train_input_fn()

with strategy.scope():
  model = build_model(dataset, params={"weight_decay": 1e-4, "learning_rate": 0.01})

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
result = model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)
print("eval accuracy: %s loss: %s" % (result["accuracy"], result["loss"]))
shutil.rmtree(model_dir)
