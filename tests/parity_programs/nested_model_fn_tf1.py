"""A program whose functions are all made inside one (the shape of a course's trainer module): the input_fns,
the model_fn (kept by tier 2) and the training function are nested in `build_model(args)`, which the migration's
Keras function cannot be named after."""
import argparse
import tempfile

import tensorflow.compat.v1 as tf


def build_model(args):
  features = [[1., 1.5], [2., 2.5], [3., 3.5]]
  labels = [[0.3], [0.5], [0.7]]

  def input_fn():
    return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)

  def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)

  def model_fn(features, labels, mode, params):
    net = features
    for units in params["hidden_units"]:
      net = tf.layers.dense(net, units, activation=tf.nn.relu)
    logits = tf.layers.dense(net, 1)
    loss = tf.losses.mean_squared_error(labels=labels, predictions=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
      metrics = {"mae": tf.metrics.mean_absolute_error(labels, logits)}
      return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.train.AdagradOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  def train_and_evaluate(args):
    config = tf.estimator.RunConfig(model_dir=tempfile.mkdtemp(), tf_random_seed=42)
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=config,
                                       params={"hidden_units": [4], "learning_rate": 0.05})
    train_spec = tf.estimator.TrainSpec(input_fn=input_fn, max_steps=args.steps)
    eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, steps=None)
    result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    print("global step %d, eval mae %s" % (result["global_step"], result["mae"]))

  train_and_evaluate(args)


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=20)
  build_model(parser.parse_args())
