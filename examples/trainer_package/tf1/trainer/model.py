"""The model of the trainer: its model_fn, a CSV input_fn factory, and build_estimator."""
import tensorflow.compat.v1 as tf

CSV_COLUMNS = ["rooms", "age", "distance", "price"]
FEATURES = CSV_COLUMNS[:-1]
DEFAULTS = [[0.0], [0.0], [0.0], [0.0]]


def make_input_fn(path, mode, batch_size):
  """An input_fn reading the CSV file at `path`: repeating while training, one pass otherwise."""

  def _input_fn():
    def parse(line):
      columns = tf.decode_csv(line, record_defaults=DEFAULTS)
      features = dict(zip(CSV_COLUMNS, columns))
      label = tf.reshape(features.pop("price"), [1])
      return features, label

    dataset = tf.data.TextLineDataset(path).skip(1).map(parse)
    if mode == tf.estimator.ModeKeys.TRAIN:
      dataset = dataset.repeat()
    return dataset.batch(batch_size)

  return _input_fn


def model_fn(features, labels, mode, params):
  columns = [tf.feature_column.numeric_column(key) for key in FEATURES]
  net = tf.feature_column.input_layer(features, columns)
  for units in params["hidden_units"]:
    net = tf.layers.dense(net, units, activation=tf.nn.relu)
  predictions = tf.layers.dense(net, 1)
  loss = tf.losses.mean_squared_error(labels, predictions)
  if mode == tf.estimator.ModeKeys.EVAL:
    rmse = tf.metrics.root_mean_squared_error(labels, predictions)
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"rmse": rmse})
  optimizer = tf.train.AdagradOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def build_estimator(config, hidden_units, learning_rate):
  params = {"hidden_units": hidden_units, "learning_rate": learning_rate}
  return tf.estimator.Estimator(model_fn=model_fn, config=config, params=params)
