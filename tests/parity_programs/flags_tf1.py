"""A TF1 program as the TensorFlow 1 tutorials wrote them: flags, main(argv), tf.app.run.

``import tensorflow.compat.v1 as tf`` with ``tf.disable_v2_behavior()``, its settings in
``tf.flags`` (``--train_steps`` required), an Estimator built and driven inside ``main``,
which ``tf.app.run`` calls after parsing sys.argv: a binary classifier of numpy data with
one tanh hidden layer and plain gradient descent.

Run: python tests/parity_programs/flags_tf1.py --train_steps 20
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

flags = tf.flags
flags.DEFINE_integer("train_steps", None, "training steps")
flags.DEFINE_integer("batch_size", 8, "examples per batch")
flags.DEFINE_float("learning_rate", 0.1, "gradient descent's learning rate")
flags.DEFINE_string("model_dir", None, "where checkpoints go (default: a temporary folder)")
flags.mark_flag_as_required("train_steps")
FLAGS = flags.FLAGS


def make_data(count, seed):
  rng = np.random.RandomState(seed)
  x = rng.normal(size=(count, 4)).astype(np.float32)
  y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]]) + 0.3 > 0).astype(np.float32)
  return x, y


def train_input_fn():
  x, y = make_data(64, seed=1)
  return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(FLAGS.batch_size)


def eval_input_fn():
  x, y = make_data(16, seed=2)
  return tf.data.Dataset.from_tensor_slices((x, y)).batch(FLAGS.batch_size)


def model_fn(features, labels, mode):
  hidden = tf.layers.dense(features, 6, activation=tf.nn.tanh)
  logits = tf.layers.dense(hidden, 1)
  loss = tf.losses.sigmoid_cross_entropy(multi_class_labels=labels, logits=logits)
  optimizer = tf.train.GradientDescentOptimizer(FLAGS.learning_rate)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(argv):
  del argv  # everything is in FLAGS
  random.seed(7)  # tf.layers draw their initializer seeds from Python's random module
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()
  estimator = tf.estimator.Estimator(
      model_fn, model_dir=model_dir, config=tf.estimator.RunConfig(tf_random_seed=7))
  estimator.train(train_input_fn, max_steps=FLAGS.train_steps)
  result = estimator.evaluate(eval_input_fn)
  print("eval loss: %s" % result["loss"])
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.app.run(main)
