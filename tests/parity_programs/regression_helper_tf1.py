"""The regression example as people write it, kept by tier 2: main(), the compat.v1 alias, an unnamed layer in a
helper (TF1 named it `dense`; the Keras model calls the model_fn again and again), the step held in a name,
a learning-rate schedule of it (logged), EvalSpec(steps=None), the result's global_step printed."""
import argparse
import tempfile

import tensorflow.compat.v1 as tf

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]
STEPS_PER_EPOCH = 3


def _input_fn():
  return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)


def _eval_input_fn():
  return tf.data.Dataset.from_tensor_slices((eval_features, eval_labels)).batch(1)


def _net(x):
  return tf.layers.dense(x, 1)


def _model_fn(features, labels, mode):
  logits = _net(features)
  loss = tf.losses.mean_squared_error(labels=labels, predictions=logits)
  step = tf.train.get_global_step()
  boundaries = [int(STEPS_PER_EPOCH * epoch) for epoch in (2, 3)]
  rate = tf.train.piecewise_constant(tf.cast(step, tf.int32), boundaries, [0.05, 0.02, 0.01])
  tf.summary.scalar("learning_rate", rate)
  optimizer = tf.train.AdagradOptimizer(rate)
  train_op = optimizer.minimize(loss, global_step=step)
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=20)
  args = parser.parse_args()
  config = tf.estimator.RunConfig(model_dir=tempfile.mkdtemp(), tf_random_seed=42)
  estimator = tf.estimator.Estimator(model_fn=_model_fn, config=config)
  train_spec = tf.estimator.TrainSpec(input_fn=_input_fn, max_steps=args.steps)
  eval_spec = tf.estimator.EvalSpec(input_fn=_eval_input_fn, steps=None)
  result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("global step %d, eval loss %s" % (result["global_step"], result["loss"]))


if __name__ == "__main__":
  main()
