"""A trainer package's entry point, migrated to TensorFlow 2: argparse, main(), the Keras model in another module.

The TF2 counterpart of tests/parity_programs/csv_package_tf1: trainer/model.py builds a
Keras model and reads the CSV with tf.data; trainer/task.py trains it under a
ParameterServerStrategy when TF_CONFIG names a cluster, locally otherwise.

Run: cd tests/parity_programs/csv_package_tf2 && python -m trainer.task --train_steps 20
"""
import argparse
import os
import random
import shutil
import tempfile

import tensorflow as tf
import tf_keras as keras

from . import model

CSV_HEADER = "x1,x2,x3,y"


def write_csv(path, count, seed):
  """COUNT rows of three features and a label, a noisy linear function of them."""
  rng = random.Random(seed)
  with open(path, "w") as csv_file:
    csv_file.write(CSV_HEADER + "\n")
    for _ in range(count):
      x = [round(rng.uniform(-1, 1), 3) for _ in range(3)]
      y = 0.5 * x[0] - 0.3 * x[1] + 0.8 * x[2] + 0.1 + rng.gauss(0, 0.05)
      csv_file.write(",".join("%.4f" % value for value in x + [y]) + "\n")
  return path


def parse_args(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--train_steps", type=int, required=True, help="steps to train for")
  parser.add_argument("--batch_size", type=int, default=4)
  parser.add_argument("--learning_rate", type=float, default=0.05)
  parser.add_argument("--hidden_units", default="8,4", help="units of the hidden layers, comma-separated")
  parser.add_argument("--job-dir", dest="job_dir", default=None, help="where checkpoints go (default: a temporary folder)")
  return parser.parse_args(argv)


def strategy_for_this_task():
  """This task's type in the TF_CONFIG cluster, and the strategy it trains with."""
  resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
  if not resolver.cluster_spec().jobs:
    return None, tf.distribute.get_strategy()
  if resolver.task_type in ("ps", "worker"):
    server = tf.distribute.Server(
        resolver.cluster_spec(), job_name=resolver.task_type, task_index=resolver.task_id,
        protocol=resolver.rpc_layer or "grpc", start=True)
    server.join()
  return resolver.task_type, tf.distribute.experimental.ParameterServerStrategy(resolver)


def main():
  args = parse_args()
  data_dir = tempfile.mkdtemp()
  train_csv = write_csv(os.path.join(data_dir, "train.csv"), 24, seed=1)
  eval_csv = write_csv(os.path.join(data_dir, "eval.csv"), 8, seed=2)
  job_dir = args.job_dir or tempfile.mkdtemp()

  keras.utils.set_random_seed(42)
  _, strategy = strategy_for_this_task()
  with strategy.scope():
    regressor, optimizer = model.build_model(
        [int(units) for units in args.hidden_units.split(",")], args.learning_rate)
  regressor.fit(model.make_dataset(train_csv, args.batch_size, repeat=True),
                epochs=1, steps_per_epoch=args.train_steps, verbose=2)
  tf.train.Checkpoint(model=regressor, optimizer=optimizer).save(os.path.join(job_dir, "ckpt"))
  eval_result = regressor.evaluate(model.make_dataset(eval_csv, args.batch_size), return_dict=True, verbose=2)
  print("eval loss: %s" % eval_result["loss"])
  shutil.rmtree(data_dir)
  if not args.job_dir:
    shutil.rmtree(job_dir)


if __name__ == "__main__":
  main()
