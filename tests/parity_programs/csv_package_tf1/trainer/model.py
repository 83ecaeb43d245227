"""The model of the trainer package, in TensorFlow 1: a model_fn, an Estimator subclass, a CSV input_fn factory."""
import tensorflow as tf

CSV_DEFAULTS = [[0.0], [0.0], [0.0], [0.0]]  # x1, x2, x3, y


def make_input_fn(csv_path, batch_size, repeat=False):
  """An input_fn reading CSV_PATH (a header line, then x1,x2,x3,y rows): (features [batch, 3], labels [batch, 1])."""

  def parse(line):
    columns = tf.io.decode_csv(line, record_defaults=CSV_DEFAULTS)
    return tf.stack(columns[:3]), tf.stack(columns[3:])

  def input_fn():
    dataset = tf.compat.v1.data.TextLineDataset(csv_path).skip(1).map(parse)
    if repeat:
      dataset = dataset.repeat()
    return dataset.batch(batch_size)

  return input_fn


def model_fn(features, labels, mode, params):
  net = features
  for units in params["hidden_units"]:
    net = tf.compat.v1.layers.dense(net, units, activation=tf.nn.relu)
  predictions = tf.compat.v1.layers.dense(net, 1)
  loss = tf.compat.v1.losses.mean_squared_error(labels=labels, predictions=predictions)
  optimizer = tf.compat.v1.train.AdagradOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class CsvRegressor(tf.estimator.Estimator):
  """A regressor of the CSV's label on its features, with ReLU hidden layers."""

  def __init__(self, hidden_units, learning_rate, config=None):
    super(CsvRegressor, self).__init__(
        model_fn=model_fn, config=config,
        params={"hidden_units": hidden_units, "learning_rate": learning_rate})


def build_estimator(config, hidden_units, learning_rate):
  return CsvRegressor(hidden_units, learning_rate, config=config)
