"""A model_fn in the shape of the question-answering notebooks of training-data-analyst (arc_cbow_clean): word
vectors trained beforehand are loaded into a `tf.Variable` made from a placeholder, which the EstimatorSpec's
`tf.train.Scaffold(init_feed_dict=...)` feeds the numpy matrix once, as the session starts. Its rows are looked up,
averaged and trained through with Adam, in float64 as the notebooks computed (they trained with optimize_loss's
Adam, which tf-slim cannot run on TF 2.15)."""
import argparse

import numpy as np
import tensorflow as tf

VOCABULARY, DIMENSION = 12, 4
PRETRAINED = np.random.RandomState(7).uniform(-1.0, 1.0, (VOCABULARY, DIMENSION))


def input_fn():
  words = [[1, 2, 3], [4, 5, 0], [6, 7, 8], [9, 10, 11], [2, 4, 6], [3, 5, 7], [8, 10, 1], [11, 0, 9]]
  targets = [[0.3], [0.5], [-0.7], [0.9], [0.4], [-0.2], [1.1], [0.1]]
  return tf.data.Dataset.from_tensor_slices(({"words": words}, targets)).repeat().batch(4)


def model_fn(features, labels, mode, params):
  embeddings_placeholder = tf.placeholder(dtype=tf.float64, shape=[VOCABULARY, DIMENSION],
                                          name="embedding_placeholder")
  embeddings_variable = tf.Variable(initial_value=embeddings_placeholder, trainable=True, name="embedding_variable",
                                    dtype=tf.float64, expected_shape=[VOCABULARY, DIMENSION])
  words = tf.nn.embedding_lookup(params=embeddings_variable, ids=features["words"])
  network = tf.reduce_mean(words, axis=1)
  for units in params["hidden_units"]:
    network = tf.layers.dense(network, units, activation=tf.nn.relu)
  predictions = tf.layers.dense(network, 1)
  loss = tf.losses.mean_squared_error(labels=tf.cast(labels, tf.float64), predictions=predictions)
  optimizer = tf.train.AdamOptimizer(learning_rate=params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(
    mode=mode, loss=loss, train_op=train_op,
    scaffold=tf.train.Scaffold(init_feed_dict={embeddings_placeholder: PRETRAINED}))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--output_dir", default="trained_model_cbow")
  parser.add_argument("--train_steps", type=int, default=30)
  arguments = vars(parser.parse_args())
  estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=arguments["output_dir"],
                                     params={"hidden_units": [8, 4], "learning_rate": 0.05},
                                     config=tf.estimator.RunConfig(tf_random_seed=3))
  train_spec = tf.estimator.TrainSpec(input_fn=input_fn, max_steps=arguments["train_steps"])
  eval_spec = tf.estimator.EvalSpec(input_fn=input_fn, steps=2, start_delay_secs=1, throttle_secs=1)
  tf.estimator.train_and_evaluate(estimator=estimator, train_spec=train_spec, eval_spec=eval_spec)


if __name__ == "__main__":
  main()
