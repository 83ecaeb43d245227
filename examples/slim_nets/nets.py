"""The network of examples/slim_nets, in its own module, as slim programs kept theirs."""
import tensorflow as tf
import tf_slim as slim


def small_cnn(images, num_classes, is_training, weight_decay=1e-4):
  """Two convolutions, a pooling and two fully connected layers, all in one arg_scope; dropout when training."""
  with slim.arg_scope([slim.conv2d, slim.fully_connected],
                      activation_fn=tf.nn.relu,
                      weights_initializer=slim.xavier_initializer(seed=5),
                      weights_regularizer=slim.l2_regularizer(weight_decay)):
    net = slim.conv2d(images, 8, [3, 3], scope="conv1")
    net = slim.conv2d(net, 8, [3, 3], scope="conv2")
    net = slim.max_pool2d(net, [2, 2], scope="pool2")
    net = slim.flatten(net)
    net = slim.fully_connected(net, 16, scope="fc3")
    net = slim.dropout(net, 0.8, is_training=is_training, scope="dropout3")
    return slim.fully_connected(net, num_classes, activation_fn=None, scope="logits")
