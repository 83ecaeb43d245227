#!/usr/bin/env python3
"""Steady-state step time of a model_fn kept as written (tier 2) against the same model translated (tier 1).

One TF1 Estimator program, a classifier of 2 hidden `tf.layers.dense` layers, written twice: as tier 1 reads it
(the layers in the model_fn) and with the layers built by a helper function, which tier 1 does not read, so
tf-migrate keeps that model_fn as written and runs it in Keras under track_tf1_style_variables (tier 2). The
same layers, loss, optimizer and data. Each is migrated into a temporary folder and run as the chief of an
in-process cluster of 1 worker and 2 ps (tests/in_process_cluster.py: its own ParameterServerStrategy), for
--short and for --long steps; (long - short) / (time(long) - time(short)) is the steady rate, start-up and
tracing excluded. Prints both rates, the step times and tier 2 / tier 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "tests" / "in_process_cluster.py"

PROGRAM = '''\
import argparse
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

rng = np.random.RandomState(0)
features = rng.normal(size=(1024, 64)).astype(np.float32)
labels = (features[:, :4].sum(axis=1) > 0).astype(np.int32)


def input_fn():
  dataset = tf.data.Dataset.from_tensor_slices(({"x": features}, labels))
  return dataset.repeat().batch(BATCH)


HELPER
def model_fn(features, labels, mode):
  NET
  logits = tf.layers.dense(net, 2, name="logits")
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  optimizer = tf.train.AdamOptimizer(0.001)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


parser = argparse.ArgumentParser()
parser.add_argument("--train-steps", type=int, default=10)
args = parser.parse_args()
config = tf.estimator.RunConfig(model_dir=tempfile.mkdtemp(), save_checkpoints_steps=100000)
estimator = tf.estimator.Estimator(model_fn=model_fn, config=config)
estimator.train(input_fn=input_fn, max_steps=args.train_steps)
'''
TIER_1 = ('', 'net = tf.layers.dense(features["x"], UNITS, activation=tf.nn.relu, name="hidden0")\n'
              '  net = tf.layers.dense(net, UNITS, activation=tf.nn.relu, name="hidden1")')
TIER_2 = ('def hidden(net, name):\n  return tf.layers.dense(net, UNITS, activation=tf.nn.relu, name=name)\n\n\n',
          'net = hidden(hidden(features["x"], "hidden0"), "hidden1")')


class BenchmarkError(Exception):
    """A command failed: there is no figure to report."""


def program(folder: Path, name: str, tier: tuple[str, str], units: int, batch: int) -> Path:
    """The TF1 program with ``tier``'s layers, migrated: the path of its TF2 version; its tier checked."""
    helper, net = tier
    source = PROGRAM.replace("HELPER\n", helper).replace("NET", net).replace("UNITS", str(units))
    (folder / name).mkdir()
    path = folder / name / "train.py"
    path.write_text(source.replace("BATCH", str(batch)))
    beside = Path(sys.executable).parent / "tf-migrate"
    result = subprocess.run([str(beside) if beside.exists() else "tf-migrate", "--quiet", str(path)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise BenchmarkError(f"tf-migrate {path} exited {result.returncode}: {result.stdout}{result.stderr}")
    kept = "track_tf1_style_variables" in path.read_text()
    if kept != (tier is TIER_2):
        raise BenchmarkError(f"{name} was migrated in tier {2 if kept else 1}")
    return path


def timed(path: Path, steps: int) -> float:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    started = time.perf_counter()
    result = subprocess.run([sys.executable, str(CLUSTER), str(path), "--train-steps", str(steps)],
                            capture_output=True, text=True, env=env, cwd=path.parent, timeout=1800)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise BenchmarkError(f"{path} exited {result.returncode}:\n{result.stderr[-2000:]}")
    return seconds


def rate(path: Path, short: int, long: int, runs: int) -> float:
    timed(path, short)  # a first run warms the file cache and TensorFlow's own start
    best_short = min(timed(path, short) for _ in range(runs))
    best_long = min(timed(path, long) for _ in range(runs))
    if best_long <= best_short:
        raise BenchmarkError(f"{path}: {long} steps took {best_long:.1f} s, {short} took {best_short:.1f} s")
    return (long - short) / (best_long - best_short)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", type=int, default=50, help="steps of the short run (default: %(default)s)")
    parser.add_argument("--long", type=int, default=1050, help="steps of the long run (default: %(default)s)")
    parser.add_argument("--units", type=int, default=256, help="units of each hidden layer (default: %(default)s)")
    parser.add_argument("--batch", type=int, default=256, help="batch size (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs of each (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            rates = {}
            for name, tier in (("tier 1", TIER_1), ("tier 2", TIER_2)):
                path = program(Path(scratch), name.replace(" ", ""), tier, args.units, args.batch)
                rates[name] = rate(path, args.short, args.long, args.runs)
    except BenchmarkError as error:
        print(f"bench_tiers: {error}", file=sys.stderr)
        return 1
    for name, steps in rates.items():
        print(f"{name}: {steps:.1f} steps/s, {1000 / steps:.2f} ms/step")
    print(f"tier 2 / tier 1 step time: {rates['tier 1'] / rates['tier 2']:.2f}x "
          f"({args.units} units x 2 hidden layers, batches of {args.batch}, 1 worker + 2 ps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
