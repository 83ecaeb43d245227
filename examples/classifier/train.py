"""A custom classifier Estimator in TensorFlow 1.

The shape of the TF1 "Creating custom Estimators" tutorial: dict features,
a model_fn with dense layers that branches on ``mode`` (PREDICT, EVAL, TRAIN),
softmax cross-entropy, Adam, an accuracy metric, then ``train``, ``evaluate``
and ``predict``; a checkpoint every 10 steps, the last 2 kept. The data is a
tiny inline set of three Gaussian blobs.

Run: python examples/classifier/train.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf1

NUM_CLASSES = 3
BATCH_SIZE = 16

# 48 points in 4 dimensions around three centres, one class per centre.
rng = np.random.RandomState(0)
centres = rng.normal(scale=3.0, size=(NUM_CLASSES, 4))
train_y = np.repeat(np.arange(NUM_CLASSES), 16).astype(np.int32)
train_x = (centres[train_y] + rng.normal(size=(48, 4))).astype(np.float32)
eval_y = np.repeat(np.arange(NUM_CLASSES), 4).astype(np.int32)
eval_x = (centres[eval_y] + rng.normal(size=(12, 4))).astype(np.float32)


def train_input_fn():
  dataset = tf1.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
  return dataset.shuffle(48).repeat().batch(BATCH_SIZE)


def eval_input_fn():
  dataset = tf1.data.Dataset.from_tensor_slices(({"x": eval_x}, eval_y))
  return dataset.batch(BATCH_SIZE)


def predict_input_fn():
  return tf1.data.Dataset.from_tensor_slices({"x": eval_x[::4]}).batch(BATCH_SIZE)


def model_fn(features, labels, mode):
  net = tf1.layers.dense(features["x"], 16, activation=tf1.nn.relu)
  logits = tf1.layers.dense(net, NUM_CLASSES)
  predicted_classes = tf1.argmax(logits, 1)

  if mode == tf1.estimator.ModeKeys.PREDICT:
    predictions = {
        "class_ids": predicted_classes[:, tf1.newaxis],
        "probabilities": tf1.nn.softmax(logits),
    }
    return tf1.estimator.EstimatorSpec(mode, predictions=predictions)

  loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  accuracy = tf1.metrics.accuracy(
      labels=labels, predictions=predicted_classes, name="acc_op")
  metrics = {"accuracy": accuracy}

  if mode == tf1.estimator.ModeKeys.EVAL:
    return tf1.estimator.EstimatorSpec(
        mode, loss=loss, eval_metric_ops=metrics)

  optimizer = tf1.train.AdamOptimizer(learning_rate=0.01)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


# Under TF 2.x, tf1.layers draw their initializer seeds from Python's random
# module: seed it as well as the graph (RunConfig's tf_random_seed).
random.seed(42)

# Log "loss = ..., step = ..." after every step.
tf1.logging.set_verbosity(tf1.logging.INFO)

model_dir = tempfile.mkdtemp()
config = tf1.estimator.RunConfig(
    model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1,
    save_checkpoints_steps=10, keep_checkpoint_max=2)
classifier = tf1.estimator.Estimator(model_fn=model_fn, config=config)
classifier.train(input_fn=train_input_fn, max_steps=30)

eval_result = classifier.evaluate(input_fn=eval_input_fn)
print("eval accuracy: %s loss: %s" % (eval_result["accuracy"], eval_result["loss"]))

for expected, prediction in zip(eval_y[::4], classifier.predict(input_fn=predict_input_fn)):
  print("prediction: class %d (%.3f), expected %d" % (
      prediction["class_ids"][0],
      prediction["probabilities"][prediction["class_ids"][0]],
      expected))
shutil.rmtree(model_dir)
