"""A model_fn whose net is a tf_slim network from another module (nets.py).

Slim programs kept their networks in a module of their own (models/research/slim's
nets/), built with ``arg_scope``, ``conv2d`` and ``fully_connected``; the model_fn
adds slim's regularization losses to a ``tf.losses`` cross-entropy and trains with
Adam. tf-migrate keeps the model_fn and nets.py as written (tier 2): slim's layers
run in Keras under ``track_tf1_style_variables``. The data is 6x6 one-channel
images whose class is the quadrant that is brightest.

Run: python examples/slim_nets/train.py
"""
import shutil
import tempfile

import nets
import numpy as np
import tensorflow.compat.v1 as tf

NUM_CLASSES = 4
BATCH_SIZE = 16

rng = np.random.RandomState(0)


def make_images(count):
  labels = rng.randint(NUM_CLASSES, size=count).astype(np.int32)
  images = rng.uniform(size=(count, 6, 6, 1)).astype(np.float32)
  for image, label in zip(images, labels):
    row, column = divmod(label, 2)
    image[3 * row:3 * row + 3, 3 * column:3 * column + 3] += 0.6
  return images, labels


train_images, train_labels = make_images(64)
eval_images, eval_labels = make_images(16)


def train_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"image": train_images}, train_labels))
  return dataset.shuffle(64, seed=1).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"image": eval_images}, eval_labels))
  return dataset.batch(BATCH_SIZE)


def model_fn(features, labels, mode, params):
  is_training = mode == tf.estimator.ModeKeys.TRAIN
  logits = nets.small_cnn(features["image"], NUM_CLASSES, is_training, params["weight_decay"])
  predictions = tf.argmax(logits, 1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"classes": predictions})

  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  loss += tf.add_n(tf.losses.get_regularization_losses())
  if mode == tf.estimator.ModeKeys.EVAL:
    metrics = {"accuracy": tf.metrics.accuracy(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

  optimizer = tf.train.AdamOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


tf.logging.set_verbosity(tf.logging.INFO)

model_dir = tempfile.mkdtemp()
config = tf.estimator.RunConfig(
    model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1,
    save_checkpoints_steps=10, keep_checkpoint_max=2)
estimator = tf.estimator.Estimator(
    model_fn=model_fn, config=config,
    params={"weight_decay": 1e-4, "learning_rate": 0.01})
estimator.train(input_fn=train_input_fn, max_steps=30)
result = estimator.evaluate(input_fn=eval_input_fn)
print("eval accuracy: %s loss: %s" % (result["accuracy"], result["loss"]))
shutil.rmtree(model_dir)
