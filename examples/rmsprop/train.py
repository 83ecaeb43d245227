"""RMSProp in TensorFlow 1: the optimizer whose Keras counterpart starts elsewhere.

The seed regression (examples/regression/train.py) with
``tf1.train.RMSPropOptimizer(0.01)``. TF1 starts the mean-square slot of every
variable at ones, Keras at zeros, and TF1's epsilon is 1e-10 where Keras' is
1e-7. Without ``TF_CONFIG`` it trains locally for 20 steps, logging the loss of
each.

Run: python examples/rmsprop/train.py
"""
import random
import shutil
import tempfile

import tensorflow as tf
import tensorflow.compat.v1 as tf1

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]


def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)


def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (eval_features, eval_labels)).batch(1)


def _model_fn(features, labels, mode):
  logits = tf1.layers.Dense(1)(features)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
  optimizer = tf1.train.RMSPropOptimizer(0.01)
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
