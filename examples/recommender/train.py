"""A recommender model_fn with partitioned embedding tables, as parameter-server programs had them.

Users and items each get an embedding table made by ``get_variable`` in a
``variable_scope`` partitioned by ``fixed_size_partitioner(2)``: on a cluster
TF1 put each table's two shards on the two ps tasks, and ``embedding_lookup``
read ids "mod" over them (id i in shard i % 2). The model scores a (user, item)
pair from the two vectors, their product and a small dense layer; squared
error, Adagrad. The data is 12 users, 16 items and a hidden taste for each.

Run: python examples/recommender/train.py [--train-steps N]
"""
import argparse
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

NUM_USERS, NUM_ITEMS = 12, 16
BATCH_SIZE = 32

rng = np.random.RandomState(3)
user_taste = rng.normal(size=(NUM_USERS, 3))
item_taste = rng.normal(size=(NUM_ITEMS, 3))


def ratings(count):
  users = rng.randint(NUM_USERS, size=count)
  items = rng.randint(NUM_ITEMS, size=count)
  scores = (user_taste[users] * item_taste[items]).sum(axis=1) + 0.1 * rng.normal(size=count)
  return {"user": users.astype(np.int64), "item": items.astype(np.int64)}, scores.astype(np.float32)


train_features, train_scores = ratings(256)
eval_features, eval_scores = ratings(64)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices((train_features, train_scores))
  return dataset.shuffle(256, seed=1).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((eval_features, eval_scores)).batch(BATCH_SIZE)


def model_fn(features, labels, mode, params):
  with tf.variable_scope(
      "embeddings", partitioner=tf.fixed_size_partitioner(2)):
    users = tf.get_variable("users", [NUM_USERS, params["dimension"]],
                            initializer=tf.truncated_normal_initializer(stddev=0.5))
    items = tf.get_variable("items", [NUM_ITEMS, params["dimension"]],
                            initializer=tf.truncated_normal_initializer(stddev=0.5))
  user_vectors = tf.nn.embedding_lookup(users, features["user"])
  item_vectors = tf.nn.embedding_lookup(items, features["item"])
  affinity = tf.reduce_sum(user_vectors * item_vectors, axis=1)
  hidden = tf.layers.dense(tf.concat([user_vectors, item_vectors], axis=1), 8,
                           activation=tf.nn.relu, name="hidden")
  correction = tf.layers.dense(hidden, 1, name="correction")
  score = affinity + tf.squeeze(correction, axis=1)

  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"score": score})
  loss = tf.losses.mean_squared_error(labels, score)
  if mode == tf.estimator.ModeKeys.EVAL:
    metrics = {"rmse": tf.metrics.root_mean_squared_error(labels, score)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
  optimizer = tf.train.AdagradOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=30)
  args = parser.parse_args()

  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  tf.logging.set_verbosity(tf.logging.INFO)
  model_dir = tempfile.mkdtemp()
  config = tf.estimator.RunConfig(
      model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1,
      save_checkpoints_steps=10, keep_checkpoint_max=2)
  estimator = tf.estimator.Estimator(
      model_fn=model_fn, config=config, params={"dimension": 4, "learning_rate": 0.5})
  estimator.train(input_fn=train_input_fn, max_steps=args.train_steps)
  result = estimator.evaluate(input_fn=eval_input_fn)
  print("eval rmse: %s loss: %s" % (result["rmse"], result["loss"]))
  shutil.rmtree(model_dir)


if __name__ == "__main__":
  main()
