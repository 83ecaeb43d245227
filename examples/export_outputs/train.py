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
import os
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

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
    net = tf.layers.dense(net, units, activation=tf.nn.relu, name="hidden_%d" % index)
    net = tf.cond(training, lambda: net * 0.9, lambda: net)
  return net


def model_fn(features, labels, mode, params):
  training = tf.constant(mode == tf.estimator.ModeKeys.TRAIN)
  net = dense_stack(features["x"], params["hidden_units"], training)
  weights = tf.get_variable("logits_w", [params["hidden_units"][-1], 3],
                            regularizer=lambda w: 0.01 * tf.nn.l2_loss(w))
  logits = tf.matmul(net, weights)
  if mode == tf.estimator.ModeKeys.PREDICT:
    probabilities = tf.nn.softmax(logits)
    predictions = {"class_ids": tf.argmax(logits, 1), "probabilities": probabilities}
    names = tf.tile(tf.constant([CLASSES]), [tf.shape(logits)[0], 1])
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs={
        "serving_default": tf.estimator.export.PredictOutput(predictions),
        "classification": tf.estimator.export.ClassificationOutput(scores=probabilities, classes=names),
    })
  onehot = tf.one_hot(labels, 3)
  losses = tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits)
  loss = tf.reduce_mean(losses) + tf.losses.get_regularization_loss()
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss)
  optimizer = tf.train.AdamOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_fn():
  """Serialized tf.Examples of the feature `x`, as a client sends them."""
  serialized = tf.placeholder(tf.string, [None], name="examples")
  features = tf.parse_example(serialized, {"x": tf.FixedLenFeature([4], tf.float32)})
  return tf.estimator.export.ServingInputReceiver(features, {"examples": serialized})


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
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1, log_step_count_steps=1)
  estimator = tf.estimator.Estimator(model_fn, params=params, config=config)
  train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=2)
  result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("eval loss: %s" % result["loss"])
  path = estimator.export_saved_model(os.path.join(model_dir, "export", "served"), serving_input_fn)
  print("exported to %s" % path.decode())
  if not args.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  main()
