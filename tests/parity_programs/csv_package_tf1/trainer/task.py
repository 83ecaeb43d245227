"""A trainer package's entry point, in TensorFlow 1: argparse, main(), the model in another module.

The layout of a Cloud ML Engine trainer package: trainer/task.py parses the command line and
drives an Estimator that trainer/model.py builds (an Estimator subclass made by
``build_estimator(config, ...)``), fed by that module's CSV input_fn factory. The program
writes its own tiny CSV files into a temporary folder.

Run: cd tests/parity_programs/csv_package_tf1 && python -m trainer.task --train_steps 20
"""
import argparse
import os
import random
import shutil
import tempfile

import tensorflow as tf

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


def main():
  args = parse_args()
  data_dir = tempfile.mkdtemp()
  train_csv = write_csv(os.path.join(data_dir, "train.csv"), 24, seed=1)
  eval_csv = write_csv(os.path.join(data_dir, "eval.csv"), 8, seed=2)
  job_dir = args.job_dir or tempfile.mkdtemp()

  # Under TF 2.x, tf1.layers draw their initializer seeds from Python's random module.
  random.seed(42)
  config = tf.estimator.RunConfig(model_dir=job_dir, tf_random_seed=42)
  estimator = model.build_estimator(
      config, hidden_units=[int(units) for units in args.hidden_units.split(",")],
      learning_rate=args.learning_rate)
  train_spec = tf.estimator.TrainSpec(
      model.make_input_fn(train_csv, args.batch_size, repeat=True), max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(model.make_input_fn(eval_csv, args.batch_size), steps=None)
  eval_result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("eval loss: %s" % eval_result["loss"])
  shutil.rmtree(data_dir)
  if not args.job_dir:
    shutil.rmtree(job_dir)


if __name__ == "__main__":
  main()
