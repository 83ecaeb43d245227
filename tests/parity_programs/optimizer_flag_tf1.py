"""An Estimator program that picks its optimizer by a flag, as DeepFM-style recommenders did: `--optimizer` names
one of an `if` / `elif` chain of tf.train optimizers in a model_fn kept as written (a hand-written loss over a
`get_variable` table), each reading the learning rate from params. A name no branch has stops it.

Run (on TF 1.x): python tests/parity_programs/optimizer_flag_tf1.py --optimizer Adagrad --model_dir /tmp/m
"""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

flags = tf.flags
flags.DEFINE_string("optimizer", "Adam", "Adam, Adagrad, Momentum or ftrl.")
flags.DEFINE_integer("train_steps", 20, "Training steps.")
flags.DEFINE_string("model_dir", "/tmp/optimizer_flag", "Checkpoints.")
FLAGS = flags.FLAGS

rng = np.random.RandomState(3)
IDS = rng.randint(0, 12, size=(96, 3)).astype(np.int64)
LABELS = (IDS.sum(axis=1) > 16).astype(np.float32)


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"ids": IDS}, LABELS)).repeat().batch(16)


def model_fn(features, labels, mode, params):
  weights = tf.get_variable("weights", [12, 1], initializer=tf.glorot_normal_initializer())
  bias = tf.get_variable("bias", [1], initializer=tf.constant_initializer(0.0))
  logits = tf.reduce_sum(tf.nn.embedding_lookup(weights, features["ids"]), axis=[1, 2]) + bias
  loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
  learning_rate = params["learning_rate"]
  if FLAGS.optimizer == "Adam":
    optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate, beta1=0.9, beta2=0.999, epsilon=1e-8)
  elif FLAGS.optimizer == "Adagrad":
    optimizer = tf.train.AdagradOptimizer(learning_rate=learning_rate, initial_accumulator_value=1e-8)
  elif FLAGS.optimizer == "Momentum":
    optimizer = tf.train.MomentumOptimizer(learning_rate=learning_rate, momentum=0.95)
  elif FLAGS.optimizer == "ftrl":
    optimizer = tf.train.FtrlOptimizer(learning_rate)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(_):
  estimator = tf.estimator.Estimator(model_fn, model_dir=FLAGS.model_dir, params={"learning_rate": 0.05})
  estimator.train(input_fn, max_steps=FLAGS.train_steps)


if __name__ == "__main__":
  tf.app.run(main)
