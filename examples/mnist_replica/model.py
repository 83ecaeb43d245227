"""The net of examples/mnist_replica: a hidden layer and a softmax over 10 classes.

The graph makes the variables (under replica_device_setter, on the ps tasks) and
passes them in: these functions only compute tensors.
"""
import tensorflow.compat.v1 as tf


def inference(images, hid_w, hid_b, sm_w, sm_b):
  """The class probabilities of a batch of flattened images."""
  hid = tf.nn.relu(tf.nn.xw_plus_b(images, hid_w, hid_b))
  return tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))


def loss(probabilities, labels):
  """The cross entropy of the batch, summed over its rows, as mnist_replica's."""
  return -tf.reduce_sum(
      labels * tf.log(tf.clip_by_value(probabilities, 1e-10, 1.0)))
