"""A TPUEstimator program run without a TPU (``--use_tpu=false``), as the Cloud TPU tutorials wrote them.

``tf1.estimator.tpu.TPUEstimator(model_fn=..., use_tpu=False, train_batch_size=...,
eval_batch_size=..., config=tf1.estimator.tpu.RunConfig(...))``; the model_fn returns a
``TPUEstimatorSpec`` (an ``eval_metrics`` pair for evaluation, ``CrossShardOptimizer`` on a
TPU), each input_fn batches by ``params["batch_size"]`` with ``drop_remainder=True``;
``tf1.app.flags`` and ``tf1.app.run(main)``. A three-class classifier of numpy data with
one ReLU hidden layer and Adam.

Run: python tests/parity_programs/tpu_estimator_tf1.py --train_steps 20
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tensorflow.compat.v1 as tf1

flags = tf1.app.flags
flags.DEFINE_bool("use_tpu", False, "train on a TPU")
flags.DEFINE_integer("train_steps", 20, "training steps")
flags.DEFINE_integer("train_batch_size", 8, "global training batch size")
flags.DEFINE_integer("eval_batch_size", 4, "global eval batch size")
flags.DEFINE_integer("eval_steps", 3, "eval batches")
flags.DEFINE_integer("iterations_per_loop", 10, "steps per TPU training loop")
flags.DEFINE_string("model_dir", None, "where checkpoints go (default: a temporary folder)")
FLAGS = flags.FLAGS

NUM_CLASSES = 3


def make_data(count, seed):
  rng = np.random.RandomState(seed)
  labels = rng.randint(0, NUM_CLASSES, size=count).astype(np.int32)
  centres = np.array([[1.0, 0.0, 0.5, -1.0], [-1.0, 1.0, 0.0, 0.5], [0.0, -1.0, -0.5, 1.0]])
  x = (centres[labels] + rng.normal(scale=0.8, size=(count, 4))).astype(np.float32)
  return {"x": x}, labels


def train_input_fn(params):
  features, labels = make_data(64, seed=1)
  dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat()
  return dataset.batch(params["batch_size"], drop_remainder=True)


def eval_input_fn(params):
  features, labels = make_data(12, seed=2)
  dataset = tf.data.Dataset.from_tensor_slices((features, labels))
  return dataset.batch(params["batch_size"], drop_remainder=True)


def metric_fn(labels, logits):
  return {"accuracy": tf1.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))}


def model_fn(features, labels, mode, params):
  hidden = tf1.layers.dense(features["x"], 8, activation=tf.nn.relu)
  logits = tf1.layers.dense(hidden, NUM_CLASSES)
  loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == tf1.estimator.ModeKeys.EVAL:
    return tf1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
  optimizer = tf1.train.AdamOptimizer(learning_rate=0.01)
  if params["use_tpu"]:
    optimizer = tf1.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def main(argv):
  del argv  # everything is in FLAGS
  random.seed(3)  # tf1.layers draw their initializer seeds from Python's random module
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()
  config = tf1.estimator.tpu.RunConfig(
      model_dir=model_dir, tf_random_seed=3, save_checkpoints_steps=FLAGS.iterations_per_loop,
      tpu_config=tf1.estimator.tpu.TPUConfig(iterations_per_loop=FLAGS.iterations_per_loop))
  estimator = tf1.estimator.tpu.TPUEstimator(
      model_fn=model_fn, use_tpu=FLAGS.use_tpu, train_batch_size=FLAGS.train_batch_size,
      eval_batch_size=FLAGS.eval_batch_size, config=config)
  estimator.train(input_fn=train_input_fn, max_steps=FLAGS.train_steps)
  result = estimator.evaluate(input_fn=eval_input_fn, steps=FLAGS.eval_steps)
  print("eval loss: %s, accuracy: %s" % (result["loss"], result["accuracy"]))
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf1.app.run(main)
