"""The TF1 tutorials' MNIST model (``tensorflow.examples.tutorials.mnist.mnist``), which TF 2 no longer ships, written
here for the TF1 copies that import it (tensorflow/ecosystem's docker and YARN trainers) to run: a network of two
ReLU hidden layers and a linear softmax layer over 28x28 images, its mean cross entropy, a gradient-descent train op
advancing a `global_step` variable, and the count of a batch's examples whose top logit is the label."""
import math

import tensorflow.compat.v1 as tf

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _layer(inputs, size_in, size_out, scope):
    with tf.name_scope(scope):
        weights = tf.Variable(tf.truncated_normal([size_in, size_out], stddev=1.0 / math.sqrt(float(size_in))),
                              name="weights")
        biases = tf.Variable(tf.zeros([size_out]), name="biases")
        return tf.matmul(inputs, weights) + biases


def inference(images, hidden1_units, hidden2_units):
    hidden1 = tf.nn.relu(_layer(images, IMAGE_PIXELS, hidden1_units, "hidden1"))
    hidden2 = tf.nn.relu(_layer(hidden1, hidden1_units, hidden2_units, "hidden2"))
    return _layer(hidden2, hidden2_units, NUM_CLASSES, "softmax_linear")


def loss(logits, labels):
    return tf.losses.sparse_softmax_cross_entropy(labels=tf.to_int64(labels), logits=logits)


def training(loss, learning_rate):
    tf.summary.scalar("loss", loss)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    return tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, global_step=global_step)


def evaluation(logits, labels):
    return tf.reduce_sum(tf.cast(tf.nn.in_top_k(logits, labels, 1), tf.int32))
