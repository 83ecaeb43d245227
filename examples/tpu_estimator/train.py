"""A TPUEstimator program, trained on the TPU `--tpu` names with `--use_tpu`, else on the CPU.

TPU programs are written for `tf.estimator.tpu.TPUEstimator`, `tpu.RunConfig` with a
`TPUConfig`, and a model_fn returning a `TPUEstimatorSpec` whose eval metrics are a
`(metric_fn, tensors)` pair; the batch size reaches the input functions as
`params["batch_size"]`, and the optimizer is wrapped for TPUs only when one is used.
With `use_tpu=False` (the default) it trains on the CPU like any Estimator.

Run: python examples/tpu_estimator/train.py --train_steps 20
     python examples/tpu_estimator/train.py --use_tpu --tpu=my-tpu   # on a Cloud TPU
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

flags = tf.app.flags
flags.DEFINE_bool("use_tpu", False, "Train on a TPU.")
flags.DEFINE_string("tpu", None, "The TPU to train on with --use_tpu: its name or grpc:// address.")
flags.DEFINE_integer("train_steps", 20, "Training steps, counted over every run in --model_dir.")
flags.DEFINE_integer("train_batch_size", 8, "Examples per training batch.")
flags.DEFINE_integer("eval_batch_size", 8, "Examples per evaluation batch.")
flags.DEFINE_integer("iterations_per_loop", 10, "Steps a TPU runs per call of the host.")
flags.DEFINE_string("model_dir", None, "Checkpoints (if not given: a temporary folder, removed).")
FLAGS = flags.FLAGS

images = np.random.RandomState(1).uniform(0.0, 1.0, size=(64, 6, 6, 1)).astype(np.float32)
digits = (images.mean(axis=(1, 2, 3)) * 20).astype(np.int64) % 4


def train_input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices((images, digits))
  return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def eval_input_fn(params):
  dataset = tf.data.Dataset.from_tensor_slices((images[:32], digits[:32]))
  return dataset.batch(params["batch_size"], drop_remainder=True)


def metric_fn(labels, logits):
  accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))
  return {"accuracy": accuracy}


def model_fn(features, labels, mode, params):
  conv = tf.layers.conv2d(features, filters=4, kernel_size=3, activation=tf.nn.relu)
  pooled = tf.layers.max_pooling2d(conv, pool_size=2, strides=2)
  logits = tf.layers.dense(tf.layers.flatten(pooled), 4)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.tpu.TPUEstimatorSpec(
        mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
  optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
  if params["use_tpu"]:
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def main(argv):
  del argv
  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  model_dir = FLAGS.model_dir or tempfile.mkdtemp()
  config = tf.estimator.tpu.RunConfig(
      cluster=tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu) if FLAGS.tpu else None,
      model_dir=model_dir,
      tf_random_seed=42,
      log_step_count_steps=1,
      tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=FLAGS.iterations_per_loop))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn,
      config=config,
      use_tpu=FLAGS.use_tpu,
      train_batch_size=FLAGS.train_batch_size,
      eval_batch_size=FLAGS.eval_batch_size)
  estimator.train(input_fn=train_input_fn, max_steps=FLAGS.train_steps)
  metrics = estimator.evaluate(input_fn=eval_input_fn, steps=4)
  print("eval loss: %s" % metrics["loss"])
  print("eval accuracy: %s" % metrics["accuracy"])
  if not FLAGS.model_dir:
    shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.app.run(main)
