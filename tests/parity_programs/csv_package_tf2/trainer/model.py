"""The model of the trainer package, migrated to TensorFlow 2: a Keras model and a CSV dataset."""
import tensorflow as tf
import tf_keras as keras

CSV_DEFAULTS = [[0.0], [0.0], [0.0], [0.0]]  # x1, x2, x3, y
NUM_FEATURES = 3


def make_dataset(csv_path, batch_size, repeat=False):
  """CSV_PATH's rows (after its header) as batches of (features [batch, 3], labels [batch, 1])."""

  def parse(line):
    columns = tf.io.decode_csv(line, record_defaults=CSV_DEFAULTS)
    return tf.stack(columns[:3]), tf.stack(columns[3:])

  dataset = tf.data.TextLineDataset(csv_path).skip(1).map(parse)
  if repeat:
    dataset = dataset.repeat()
  return dataset.batch(batch_size)


def build_model(hidden_units, learning_rate):
  """The regressor, compiled: ReLU hidden layers, then one linear unit; TF1's Adagrad."""
  model = keras.Sequential(
      [keras.layers.Dense(units, activation="relu") for units in hidden_units] + [keras.layers.Dense(1)])
  model.build((None, NUM_FEATURES))
  # TF1's AdagradOptimizer: accumulators start at 0.1, no epsilon.
  optimizer = keras.optimizers.legacy.Adagrad(
      learning_rate=learning_rate, initial_accumulator_value=0.1, epsilon=1e-30)
  model.compile(optimizer, loss=keras.losses.MeanSquaredError())
  return model, optimizer
