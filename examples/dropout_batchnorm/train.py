"""An Estimator with dropout and batch normalization (TensorFlow 1).

A small regression network whose hidden layer is batch-normalised and then
dropped out, both switched on in TRAIN mode only
(``training=mode == ModeKeys.TRAIN``), with the moving-average updates of batch
normalization attached to the train_op through ``UPDATE_OPS``, as TF1 required.
Trained for 30 steps with ``train_and_evaluate``.

Run: python examples/dropout_batchnorm/train.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf1

NUM_FEATURES = 6

# y = sin(x . w) + noise: 64 training rows and 16 eval rows.
rng = np.random.RandomState(1)
w = rng.normal(size=(NUM_FEATURES, 1))
train_x = rng.normal(size=(64, NUM_FEATURES)).astype(np.float32)
train_y = (np.sin(train_x.dot(w)) + rng.normal(scale=0.05, size=(64, 1))).astype(np.float32)
eval_x = rng.normal(size=(16, NUM_FEATURES)).astype(np.float32)
eval_y = np.sin(eval_x.dot(w)).astype(np.float32)


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (train_x, train_y)).repeat().batch(16)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices((eval_x, eval_y)).batch(16)


def _model_fn(features, labels, mode):
  training = mode == tf1.estimator.ModeKeys.TRAIN
  hidden = tf1.layers.dense(features, 32, activation=tf1.nn.relu)
  hidden = tf1.layers.batch_normalization(hidden, training=training)
  hidden = tf1.layers.dropout(hidden, rate=0.2, training=training)
  predictions = tf1.layers.dense(hidden, 1)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=predictions)
  optimizer = tf1.train.AdamOptimizer(learning_rate=0.01)
  # Batch normalization's moving averages are updated by ops in UPDATE_OPS.
  update_ops = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
  with tf1.control_dependencies(update_ops):
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
