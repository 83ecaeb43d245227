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


def _model_fn(features, labels, mode):
  with tf1.variable_scope(
      "embedding", partitioner=tf1.fixed_size_partitioner(2)):
    table = tf1.get_variable("table", [VOCABULARY, WIDTH])
  embedded = tf1.nn.embedding_lookup(table, features["ids"])
  bag = tf1.reduce_mean(embedded, axis=1)
  predictions = tf1.layers.dense(bag, 1)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=predictions)
  optimizer = tf1.train.AdagradOptimizer(0.3)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


# Under TF 2.x, tf1.layers draw their initializer seeds from Python's random
# module: seed it as well as the graph (RunConfig's tf_random_seed).
random.seed(42)

# Log "loss = ..., step = ..." after every step.
tf1.logging.set_verbosity(tf1.logging.INFO)

model_dir = tempfile.mkdtemp()
config = tf1.estimator.RunConfig(
    model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1)
estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)
train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn, max_steps=30)
eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn, steps=1)
eval_result, _ = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
print("eval loss: %s" % eval_result["loss"])

shutil.rmtree(model_dir)
