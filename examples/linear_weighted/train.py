"""A canned LinearRegressor with example weights, as TF1 programs under compat.v1 wrote it.

``build_estimator()`` makes a ``tf.estimator.LinearRegressor`` (v1: this module's ``tf`` is
``tensorflow.compat.v1``) on numeric, bucketized, vocabulary-list, hash-bucket and crossed
columns, ``weight_column="weight"``; ``main`` trains it for ``--train_steps`` under
``tf.app.run`` with ``tf.app.flags`` and evaluates it. The data are house prices drawn with a
fixed seed, each example weighted by how many sales it stands for.

Run: python examples/linear_weighted/train.py [--train_steps 20]
"""
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

tf.app.flags.DEFINE_integer("train_steps", 20, "steps to train")
tf.app.flags.DEFINE_integer("batch_size", 32, "examples per batch")
FLAGS = tf.app.flags.FLAGS

AREAS = ["inland", "near bay", "near ocean", "island"]


def load_data(rows, seed):
  rng = np.random.RandomState(seed)
  rooms = rng.uniform(1.0, 8.0, size=(rows, 1)).astype(np.float32)
  age = rng.uniform(1.0, 50.0, size=(rows, 1)).astype(np.float32)
  area = rng.choice(AREAS + ["unknown"], size=(rows, 1))
  zip_code = rng.choice(["9%04d" % i for i in range(40)], size=(rows, 1))
  noise = rng.normal(scale=0.1, size=(rows, 1))
  price = 0.3 * rooms + 0.01 * age + (area == "near ocean") + noise
  weight = rng.randint(1, 4, size=(rows, 1)).astype(np.float32)
  features = {"rooms": rooms, "age": age, "area": area, "zip": zip_code, "weight": weight}
  return features, price.astype(np.float32)


def train_input_fn():
  features, price = load_data(256, seed=1)
  dataset = tf.data.Dataset.from_tensor_slices((features, price))
  return dataset.shuffle(256, seed=5).repeat().batch(FLAGS.batch_size)


def eval_input_fn():
  features, price = load_data(64, seed=2)
  return tf.data.Dataset.from_tensor_slices((features, price)).batch(FLAGS.batch_size)


def build_estimator(model_dir):
  rooms = tf.feature_column.numeric_column("rooms")
  age = tf.feature_column.numeric_column("age")
  age_buckets = tf.feature_column.bucketized_column(age, boundaries=[10.0, 20.0, 30.0, 40.0])
  area = tf.feature_column.categorical_column_with_vocabulary_list("area", AREAS)
  zip_code = tf.feature_column.categorical_column_with_hash_bucket("zip", hash_bucket_size=16)
  columns = [rooms, age_buckets, area, zip_code,
             tf.feature_column.crossed_column([age_buckets, "area"], hash_bucket_size=32)]
  config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=11, log_step_count_steps=1)
  return tf.estimator.LinearRegressor(feature_columns=columns, weight_column="weight", config=config)


def main(_):
  model_dir = tempfile.mkdtemp()
  estimator = build_estimator(model_dir)
  estimator.train(input_fn=train_input_fn, max_steps=FLAGS.train_steps)
  result = estimator.evaluate(input_fn=eval_input_fn)
  print("eval loss: %.4f, eval average_loss: %.4f" % (result["loss"], result["average_loss"]))
  shutil.rmtree(model_dir)


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.app.run()
