"""The trainer's entry point: `python -m trainer.task --train-steps 20`, as on Cloud ML Engine.

It writes a small CSV dataset of its own, then trains and evaluates the Estimator that
trainer.model builds.
"""
import argparse
import os
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

from trainer import model


def write_csv(path, rows, seed):
  """`rows` examples of a made-up housing price: three features and the price."""
  state = np.random.RandomState(seed)
  features = state.uniform(0.0, 1.0, size=(rows, 3))
  prices = features @ np.array([2.0, -1.0, 0.5]) + 0.1 * state.normal(size=rows)
  with open(path, "w") as file:
    file.write(",".join(model.CSV_COLUMNS) + "\n")
    for row, price in zip(features, prices):
      file.write(",".join("%.4f" % value for value in (*row, price)) + "\n")


def units_list(text):
  return [int(units) for units in text.split(",")]


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=20)
  parser.add_argument("--batch-size", type=int, default=8)
  parser.add_argument("--learning-rate", type=float, default=0.1)
  parser.add_argument("--hidden-units", type=units_list, default=[8, 4])
  parser.add_argument("--job-dir", help="checkpoints (if not given: a temporary folder, removed)")
  args = parser.parse_args()

  # Under TF 2.x, tf.layers draw their initializer seeds from Python's random
  # module: seed it as well as the graph (RunConfig's tf_random_seed).
  random.seed(42)
  data_dir = tempfile.mkdtemp()
  train_file, eval_file = os.path.join(data_dir, "train.csv"), os.path.join(data_dir, "eval.csv")
  write_csv(train_file, 64, seed=0)
  write_csv(eval_file, 16, seed=1)
  job_dir = args.job_dir or tempfile.mkdtemp()

  config = tf.estimator.RunConfig(model_dir=job_dir, tf_random_seed=42, log_step_count_steps=1)
  estimator = model.build_estimator(config, args.hidden_units, args.learning_rate)
  train_input_fn = model.make_input_fn(train_file, tf.estimator.ModeKeys.TRAIN, args.batch_size)
  train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(
      model.make_input_fn(eval_file, tf.estimator.ModeKeys.EVAL, args.batch_size), steps=2)
  eval_result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
  print("eval loss: %s" % eval_result["loss"])
  print("eval rmse: %s" % eval_result["rmse"])

  shutil.rmtree(data_dir)
  if not args.job_dir:
    shutil.rmtree(job_dir)


if __name__ == "__main__":
  tf.logging.set_verbosity(tf.logging.INFO)
  main()
