"""A small convolutional regression Estimator, in TensorFlow 1: conv2d, max and average pooling, flatten.

Each example's 36 features are a 6x6 one-channel image: ``tf1.layers.conv2d`` (same
padding, relu), ``max_pooling2d(2, 2)``, ``average_pooling2d(3, strides=1, same)``,
``flatten`` and a dense output, trained with plain gradient descent. The traps its
migration must avoid: Keras pooling defaults ``strides`` to the pool size (TF1 requires
them) and its ``data_format`` to keras.json's setting (TF1's is channels_last).

Run: python tests/parity_programs/cnn_tf1.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf1

NUM_FEATURES = 36

# y = x . true_weights + 0.5 + noise, 40 training rows and 10 eval rows.
rng = np.random.RandomState(0)
true_weights = rng.normal(size=(36, 1))
train_x = rng.normal(size=(40, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot(true_weights) + 0.5
           + rng.normal(scale=0.1, size=(40, 1))).astype(np.float32)
eval_x = rng.normal(size=(10, NUM_FEATURES)).astype(np.float32)
eval_y = (eval_x.dot(true_weights) + 0.5).astype(np.float32)


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (train_x, train_y)).repeat().batch(8)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices((eval_x, eval_y)).batch(10)


def _model_fn(features, labels, mode):
  images = tf1.reshape(features, [-1, 6, 6, 1])
  net = tf1.layers.conv2d(images, 4, 3, padding="same", activation=tf1.nn.relu)
  net = tf1.layers.max_pooling2d(net, 2, 2)
  net = tf1.layers.average_pooling2d(net, pool_size=3, strides=1, padding="same")
  net = tf1.layers.flatten(net)
  predictions = tf1.layers.dense(net, 1)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=predictions)
  optimizer = tf1.train.GradientDescentOptimizer(0.05)
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
