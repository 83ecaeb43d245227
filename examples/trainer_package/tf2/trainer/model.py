"""The model of the trainer: its model_fn, a CSV input_fn factory, and build_estimator."""
import keras
import tensorflow as tf

# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
  import tf_keras as keras

CSV_COLUMNS = ["rooms", "age", "distance", "price"]
FEATURES = CSV_COLUMNS[:-1]
DEFAULTS = [[0.0], [0.0], [0.0], [0.0]]


def make_input_fn(path, mode, batch_size):
  """An input_fn reading the CSV file at `path`: repeating while training, one pass otherwise."""

  def _input_fn():
    def parse(line):
      columns = tf.compat.v1.decode_csv(line, record_defaults=DEFAULTS)
      features = dict(zip(CSV_COLUMNS, columns))
      label = tf.reshape(features.pop("price"), [1])
      return features, label

    dataset = tf.data.TextLineDataset(path).skip(1).map(parse)
    if mode == "train":
      dataset = dataset.repeat()
    return dataset.batch(batch_size)

  return _input_fn


class TF1EvalLoss(keras.metrics.Mean):
  """The loss as TF1's Estimator reported it: each batch's loss, averaged over the batches."""
  # Keras averages its own loss over the examples, so a short last batch weighs less there
  # than in TF1. Named `loss`, this metric is the loss that fit and evaluate report.

  def __init__(self, per_example, summed=False, weight=1.0, name="loss"):
    super().__init__(name=name)
    # The batch's loss is reduced here: under a strategy, a Keras loss object reduces over
    # the batch only in compile's own loop.
    self.per_example, self.summed, self.weight = per_example, summed, weight

  def update_state(self, y_true, y_pred, sample_weight=None):
    losses = self.per_example(y_true, y_pred, sample_weight)
    batch_loss = tf.reduce_sum(losses) if self.summed else tf.reduce_mean(losses)
    return super().update_state(self.weight * batch_loss)


def build_model(input_spec, params):
  """The TF1 model_fn `model_fn` as a Keras model, compiled with its loss and optimizer."""
  features = {}
  for name, spec in input_spec.items():
    # Feature columns took a feature of one value per example as [batch, 1].
    shape = spec.shape[1:] if spec.shape.rank > 1 else [1]
    features[name] = keras.Input(shape=shape, dtype=spec.dtype, name=name)
  # input_layer: the numeric columns in name order, each flattened to float32.
  net = keras.layers.Concatenate()([
      keras.layers.Flatten()(tf.cast(features[key], tf.float32))
      for key in ("age", "distance", "rooms")])
  for index, units in enumerate(params["hidden_units"]):
    net = keras.layers.Dense(
        units=units, activation="relu", name=f"dense_{index}" if index else "dense")(net)
  predictions = keras.layers.Dense(
      units=1,
      name=f'dense_{len(params["hidden_units"])}' if params["hidden_units"] else "dense")(net)
  model = keras.Model(inputs=features, outputs=predictions)
  optimizer = keras.optimizers.legacy.Adagrad(
      learning_rate=params["learning_rate"], initial_accumulator_value=0.1, epsilon=1e-30)
  model.compile(
      optimizer,
      loss=keras.losses.MeanSquaredError(),
      metrics=[
          TF1EvalLoss(keras.losses.MeanSquaredError(reduction="none")),
          keras.metrics.RootMeanSquaredError(name="rmse")])
  return model
