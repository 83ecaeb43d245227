"""Adam on small gradients, in TensorFlow 1: the old side of the Adam epsilon tests.

A linear-regression Estimator in the style of examples/regression/train.py,
trained with ``tf1.train.AdamOptimizer(0.01)``, whose epsilon is 1e-8 (Keras'
is 1e-7). The 64 features are tiny (1e-4 to 2e-4), so the kernel's gradients
are around 1e-6 to 1e-5: the size where Adam's epsilon, inflated about 30x by
the bias correction of the first steps, changes the update by tens of percent.
With 64 such weights the step-2 loss moves by about 9e-7 when the epsilon is
wrong, eight times the harness's default tolerance; the bias, with large
gradients, does most of the learning and barely feels the epsilon.

Run: python tests/parity_programs/adam_tf1.py
"""
import random
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf1

NUM_FEATURES = 64

rng = np.random.RandomState(0)
features = rng.uniform(1e-4, 2e-4, size=(40, NUM_FEATURES)).astype(np.float32)
labels = rng.uniform(0.03, 0.06, size=(40, 1)).astype(np.float32)
eval_features = rng.uniform(1e-4, 2e-4, size=(12, NUM_FEATURES)).astype(np.float32)
eval_labels = rng.uniform(0.03, 0.06, size=(12, 1)).astype(np.float32)


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(4)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (eval_features, eval_labels)).batch(4)


def _model_fn(features, labels, mode):
  predictions = tf1.layers.Dense(1)(features)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=predictions)
  optimizer = tf1.train.AdamOptimizer(0.01)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


# Under TF 2.x, tf1.layers draw their initializer seeds from Python's random
# module: seed it as well as the graph (RunConfig's tf_random_seed).
random.seed(42)

# Log "loss = ..., step = ..." after every step.
tf1.logging.set_verbosity(tf1.logging.INFO)

model_dir = tempfile.mkdtemp()
config = tf1.estimator.RunConfig(
    model_dir=model_dir, tf_random_seed=42, log_step_count_steps=1)
estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)
train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn, max_steps=20)
eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn, steps=3)
eval_result, _ = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
print("eval loss: %s" % eval_result["loss"])
shutil.rmtree(model_dir)
