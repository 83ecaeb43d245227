"""A model_fn whose network is picked at run time from a dict of model functions.

Programs that compare architectures keep one model_fn and a table of network
builders, chosen by ``params["model"]``, which a flag sets. Here ``--model
linear`` or ``--model mlp`` (the default) picks the function that maps the
features to a prediction; the model_fn adds a mean squared error and an Adagrad
step. The data is a noisy quadratic in
two variables.

Run: python examples/model_choice/train.py [--model linear|mlp] [--train-steps N]
"""
import argparse
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

BATCH_SIZE = 16

rng = np.random.RandomState(0)
train_x = rng.uniform(-1, 1, size=(64, 2)).astype(np.float32)
noise = 0.05 * rng.normal(size=(64, 1))
train_y = (train_x[:, :1] ** 2 - 0.5 * train_x[:, 1:] + noise).astype(np.float32)
eval_x = rng.uniform(-1, 1, size=(16, 2)).astype(np.float32)
eval_y = (eval_x[:, :1] ** 2 - 0.5 * eval_x[:, 1:]).astype(np.float32)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
  return dataset.shuffle(64, seed=1).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": eval_x}, eval_y)).batch(BATCH_SIZE)


def linear_model(inputs, params):
  return tf.layers.dense(inputs, 1, name="linear")


def mlp_model(inputs, params):
  net = inputs
  for index, units in enumerate(params["hidden_units"]):
    net = tf.layers.dense(net, units, activation=tf.nn.tanh, name="hidden%d" % index)
  return tf.layers.dense(net, 1, name="output")


MODELS = {"linear": linear_model, "mlp": mlp_model}


def model_fn(features, labels, mode, params):
  predictions = MODELS[params["model"]](features["x"], params)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
  loss = tf.losses.mean_squared_error(labels, predictions)
  if mode == tf.estimator.ModeKeys.EVAL:
    metrics = {"rmse": tf.metrics.root_mean_squared_error(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
  optimizer = tf.train.AdagradOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model", choices=sorted(MODELS), default="mlp")
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
  params = {"model": args.model, "hidden_units": [16, 8], "learning_rate": 0.3}
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=config, params=params)
  estimator.train(input_fn=train_input_fn, max_steps=args.train_steps)
  result = estimator.evaluate(input_fn=eval_input_fn)
  print("eval rmse: %s loss: %s" % (result["rmse"], result["loss"]))
  shutil.rmtree(model_dir)


if __name__ == "__main__":
  main()
