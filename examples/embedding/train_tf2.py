"""An Estimator with a partitioned embedding table (TensorFlow 1).

Each example is a bag of 3 token ids out of a vocabulary of 11; the model looks
them up in a [11, 4] table, averages them and regresses a score with a dense
layer. The table is created with ``tf1.get_variable`` in a
``variable_scope(partitioner=fixed_size_partitioner(2))``, so on a
parameter-server cluster its rows are split over two ps tasks (6 + 5 rows), and
read with ``tf1.nn.embedding_lookup`` and its default ``partition_strategy="mod"``
(id i lives in shard i % 2). Trained with Adagrad, whose sparse updates touch only
the rows looked up.

Run: python examples/embedding/train.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf1
import tensorflow as tf
import tf_keras as keras

VOCABULARY = 11
WIDTH = 4

# The score of a bag is the mean of its tokens' hidden scores, plus noise.
rng = np.random.RandomState(2)
token_scores = rng.normal(size=VOCABULARY)
train_ids = rng.randint(0, VOCABULARY, size=(96, 3)).astype(np.int64)
train_y = (token_scores[train_ids].mean(axis=1, keepdims=True)
           + rng.normal(scale=0.05, size=(96, 1))).astype(np.float32)
eval_ids = rng.randint(0, VOCABULARY, size=(24, 3)).astype(np.int64)
eval_y = token_scores[eval_ids].mean(axis=1, keepdims=True).astype(np.float32)


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      ({"ids": train_ids}, train_y)).repeat().batch(8)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices(({"ids": eval_ids}, eval_y)).batch(24)


def _build_model(input_spec):
  """The TF1 model_fn `_model_fn` as a Keras model, compiled with its loss and optimizer."""
  features = {
      name: keras.Input(shape=spec.shape[1:], dtype=spec.dtype, name=name)
      for name, spec in input_spec.items()}
  embedded = keras.layers.Embedding(
      input_dim=VOCABULARY,
      output_dim=WIDTH,
      embeddings_initializer="glorot_uniform",
      name="table")(features["ids"])
  bag = tf1.reduce_mean(embedded, axis=1)
  predictions = keras.layers.Dense(units=1)(bag)
  model = keras.Model(inputs=features, outputs=predictions)
  optimizer = keras.optimizers.legacy.Adagrad(
      learning_rate=0.3, initial_accumulator_value=0.1, epsilon=1e-30)
  model.compile(optimizer, loss=keras.losses.MeanSquaredError())
  return model


# Under TF 2.x, tf1.layers draw their initializer seeds from Python's random
# module: seed it as well as the graph (RunConfig's tf_random_seed).
random.seed(42)

# Log "loss = ..., step = ..." after every step.
tf1.logging.set_verbosity(tf1.logging.INFO)

model_dir = tempfile.mkdtemp()


def strategy_for_this_task():
  """This task's type in the TF_CONFIG cluster, and the strategy it trains with."""
  # ps and worker tasks serve the chief and never return. Without TF_CONFIG the
  # program trains locally with the default strategy, as the TF1 program did.
  resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
  if not resolver.cluster_spec().jobs:
    return None, tf.distribute.get_strategy()
  if resolver.task_type in ("ps", "worker"):
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=resolver.task_type,
        task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc",
        start=True)
    server.join()
  if resolver.task_type == "evaluator":
    return resolver.task_type, tf.distribute.get_strategy()
  return resolver.task_type, tf.distribute.experimental.ParameterServerStrategy(
      resolver,
      variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))


keras.utils.set_random_seed(42)
task_type, strategy = strategy_for_this_task()

dataset = _input_fn()

with strategy.scope():
  model = _build_model(dataset.element_spec[0])

# RunConfig's checkpoints: at the end of training, the last 5 kept.
checkpoints = tf.train.CheckpointManager(
    tf.train.Checkpoint(model=model, optimizer=model.optimizer), model_dir, max_to_keep=5)
save_checkpoint = keras.callbacks.LambdaCallback(
    on_epoch_end=lambda epoch, logs: checkpoints.save(
        checkpoint_number=model.optimizer.iterations))
# Carry on from the latest checkpoint in model_dir, if any, as TF1 did.
checkpoints.restore_or_initialize()

eval_dataset = _eval_input_fn().repeat()

if task_type == "evaluator":
  # The TF1 evaluator job: evaluate the chief's checkpoints.
  keras.utils.SidecarEvaluator(
      model, data=eval_dataset, checkpoint_dir=model_dir, steps=1,
      max_evaluations=1).start()
else:
  # max_steps counts the steps of earlier runs too.
  steps_done = int(model.optimizer.iterations)
  if steps_done < 30:
    model.fit(
        dataset, epochs=1, steps_per_epoch=30 - steps_done, callbacks=[save_checkpoint], verbose=2)
eval_result = model.evaluate(eval_dataset, steps=1, return_dict=True, verbose=2)
print("eval loss: %s" % eval_result["loss"])

shutil.rmtree(model_dir)
