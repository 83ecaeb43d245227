"""A model_fn as people write it, which tier 1 cannot translate: tf-migrate keeps it (tier 2).

The net is built by a helper called in a loop over ``params["hidden_units"]``,
each layer a ``get_variable`` pair with an L2 regularizer on the kernel, then a
``tf.layers.dense`` with one; dropout is switched by ``tf.cond`` on the mode;
the loss is a softmax cross-entropy written by hand plus the regularization
loss; momentum SGD.
The data is three Gaussian blobs, as in examples/classifier.

Run: python examples/helper_loop/train.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

NUM_CLASSES = 3
BATCH_SIZE = 16

rng = np.random.RandomState(0)
centres = rng.normal(scale=3.0, size=(NUM_CLASSES, 4))
train_y = np.repeat(np.arange(NUM_CLASSES), 16).astype(np.int32)
train_x = (centres[train_y] + rng.normal(size=(48, 4))).astype(np.float32)
eval_y = np.repeat(np.arange(NUM_CLASSES), 4).astype(np.int32)
eval_x = (centres[eval_y] + rng.normal(size=(12, 4))).astype(np.float32)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
  return dataset.shuffle(48, seed=1).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": eval_x}, eval_y))
  return dataset.batch(BATCH_SIZE)


def dense_layer(inputs, units, name, weight_decay):
  """One fully connected layer from get_variable, its kernel L2-regularized."""
  with tf.variable_scope(name):
    kernel = tf.get_variable(
        "kernel", [inputs.shape[-1], units],
        initializer=tf.glorot_uniform_initializer(seed=7),
        regularizer=tf.keras.regularizers.l2(weight_decay))
    bias = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
    return tf.matmul(inputs, kernel) + bias


def model_fn(features, labels, mode, params):
  is_training = mode == tf.estimator.ModeKeys.TRAIN
  net = features["x"]
  for i, units in enumerate(params["hidden_units"]):
    net = tf.nn.relu(dense_layer(net, units, "hidden%d" % i, params["weight_decay"]))
    net = tf.cond(tf.constant(is_training),
                  lambda: tf.nn.dropout(net, rate=params["dropout"], seed=3),
                  lambda: net)
  logits = tf.layers.dense(
      net, NUM_CLASSES, name="logits",
      kernel_regularizer=tf.keras.regularizers.l2(params["weight_decay"]))

  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"class_ids": tf.argmax(logits, 1)})

  one_hot = tf.one_hot(labels, NUM_CLASSES)
  cross_entropy = tf.reduce_mean(
      -tf.reduce_sum(one_hot * tf.nn.log_softmax(logits), axis=1))
  loss = cross_entropy + tf.losses.get_regularization_loss()

  if mode == tf.estimator.ModeKeys.EVAL:
    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})

  optimizer = tf.train.MomentumOptimizer(learning_rate=0.05, momentum=0.9)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


# Under TF 2.x, tf.layers draw their initializer seeds from Python's random
# module: seed it as well as the graph (RunConfig's tf_random_seed).
random.seed(42)

tf.logging.set_verbosity(tf.logging.INFO)

model_dir = tempfile.mkdtemp()
config = tf.estimator.RunConfig(
    model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1,
    save_checkpoints_steps=10, keep_checkpoint_max=2)
estimator = tf.estimator.Estimator(
    model_fn=model_fn, config=config,
    params={"hidden_units": [16, 8], "weight_decay": 1e-3, "dropout": 0.1})
estimator.train(input_fn=train_input_fn, max_steps=30)
result = estimator.evaluate(input_fn=eval_input_fn)
print("eval accuracy: %s loss: %s" % (result["accuracy"], result["loss"]))
shutil.rmtree(model_dir)
