"""A model_fn training with tf.contrib.layers.optimize_loss, which TF 2 cannot import: here written out as that
function built it (contrib/layers/python/layers/optimizers.py: the optimizer the name "Adam" makes, in the variable
scope OptimizeLoss, on a learning rate kept in a variable, after the UPDATE_OPS). tests/test_faithful.py puts the
call back between the markers and proves tf-migrate's migration of it against this program."""
import argparse

import tensorflow.compat.v1 as tf


def input_fn():
  features = [[1., -0.5], [2., 1.5], [-1., 3.5], [4., 0.5], [0.5, 2.], [-2., -1.], [3., 2.5], [1.5, -2.]]
  labels = [[0.3], [0.5], [0.7], [0.9], [0.4], [-0.2], [1.1], [0.1]]
  return tf.data.Dataset.from_tensor_slices(({"x": features}, labels)).repeat().batch(4)


def net(x, training):
  x = tf.layers.dense(x, 4, activation=tf.nn.relu, use_bias=False)  # the batch norm centres it
  x = tf.layers.batch_normalization(x, training=training)
  return tf.layers.dense(x, 1)


def model_fn(features, labels, mode, params):
  predictions = net(features["x"], mode == tf.estimator.ModeKeys.TRAIN)
  loss = tf.losses.mean_squared_error(labels=labels, predictions=predictions)
  # optimize_loss {
  with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    with tf.variable_scope(None, "OptimizeLoss"):
      rate = tf.get_variable("learning_rate", [], trainable=False,
                             initializer=tf.constant_initializer(params["learning_rate"]))
      optimizer = tf.train.AdamOptimizer(learning_rate=rate)
      gradients = optimizer.compute_gradients(loss, tf.trainable_variables())
      train_op = optimizer.apply_gradients(gradients, global_step=tf.train.get_global_step(), name="train")
  # }
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", default="model")
  parser.add_argument("--train_steps", type=int, default=30)
  args = parser.parse_args()
  estimator = tf.estimator.Estimator(model_fn, params={"learning_rate": 0.01},
                                     config=tf.estimator.RunConfig(model_dir=args.model_dir, tf_random_seed=3,
                                                                   save_checkpoints_steps=10))
  estimator.train(input_fn, max_steps=args.train_steps)
  metrics = estimator.evaluate(input_fn, steps=2)
  print("global step %d, eval loss %s" % (metrics["global_step"], metrics["loss"]))


if __name__ == "__main__":
  main()
