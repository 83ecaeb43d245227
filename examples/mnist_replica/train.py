"""Distributed MNIST-like training with model replicas, shaped as TensorFlow's mnist_replica.py.

A softmax model with one hidden layer (model.py): its variables live on the ps
task, each worker builds the same graph under ``replica_device_setter``, feeds
its batches through placeholders and trains under a ``tf.train.Supervisor``
(``prepare_or_wait_for_session``), worker 0 as its chief, until the global step
it fetched reaches --train_steps; the chief then prints the validation cross
entropy. With --sync_replicas, SyncReplicasOptimizer aggregates
--replicas_to_aggregate gradients (default: one per worker) before each update.
The data are a small synthetic "mnist" made with numpy: nothing is downloaded.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/mnist_replica/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224
  python examples/mnist_replica/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224
  python examples/mnist_replica/train.py --job_name=worker --task_index=1 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224

Run without --ps_hosts / --worker_hosts to start a local cluster of 1 ps + 1
worker on free ports, both in this process, and train as its worker.
"""
import math
import shutil
import socket
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

import model
import tensorflow as tf2

tf.disable_v2_behavior()

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "comma-separated host:port of the ps tasks")
flags.DEFINE_string("worker_hosts", "", "comma-separated host:port of the workers")
flags.DEFINE_string("job_name", "worker", "ps or worker")
flags.DEFINE_integer("task_index", 0, "index of the task in its job; 0 is the chief")
flags.DEFINE_integer("train_steps", 20, "the global step to train to")
flags.DEFINE_integer("batch_size", 32, "training batch size")
flags.DEFINE_float("learning_rate", 0.01, "learning rate")
flags.DEFINE_integer("hidden_units", 32, "units in the hidden layer")
flags.DEFINE_boolean("sync_replicas", False,
                     "aggregate the workers' gradients before each update")
flags.DEFINE_integer("replicas_to_aggregate", None,
                     "gradients to aggregate per update (default: the workers)")
FLAGS = flags.FLAGS

IMAGE_PIXELS = 8
NUM_CLASSES = 10


class DataSet(object):
  """Images and one-hot labels, served in order, batch after batch, from row `start` on."""

  def __init__(self, images, labels, start=0):
    self.images, self.labels = images, labels
    self._start = start

  def next_batch(self, batch_size):
    rows = np.arange(self._start, self._start + batch_size) % len(self.images)
    self._start = (self._start + batch_size) % len(self.images)
    return self.images[rows], self.labels[rows]


class Datasets(object):
  """What input_data.read_data_sets gives: .train and .validation."""

  def __init__(self, train, validation):
    self.train, self.validation = train, validation


def synthetic_mnist(start, seed=0):
  """10 noisy prototypes of 8x8 images: 512 training rows (the batches start at
  row `start`), 128 validation rows."""
  rng = np.random.RandomState(seed)
  prototypes = rng.uniform(size=(NUM_CLASSES, IMAGE_PIXELS * IMAGE_PIXELS))

  def rows(count, start=0):
    labels = rng.randint(NUM_CLASSES, size=count)
    images = prototypes[labels] + rng.normal(scale=0.3, size=(count, prototypes.shape[1]))
    return DataSet(np.clip(images, 0.0, 1.0).astype(np.float32),
                   np.eye(NUM_CLASSES, dtype=np.float32)[labels], start)

  return Datasets(rows(512, start), rows(128))


def free_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def main(unused_argv):
  # Each worker reads other batches: worker i's first is the i-th.
  mnist = synthetic_mnist(start=FLAGS.task_index * FLAGS.batch_size)
  local = not (FLAGS.ps_hosts or FLAGS.worker_hosts)
  if local:
    FLAGS.ps_hosts = "localhost:%d" % free_port()
    FLAGS.worker_hosts = "localhost:%d" % free_port()
  ps_spec = FLAGS.ps_hosts.split(",")
  worker_spec = FLAGS.worker_hosts.split(",")
  num_workers = len(worker_spec)
  cluster = tf2.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
  if local:
    # This process serves the ps task too, in the background, until it exits.
    tf2.distribute.Server(cluster, job_name="ps", task_index=0)
  server = tf2.distribute.Server(
      cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps":
    server.join()

  is_chief = (FLAGS.task_index == 0)
  worker_device = "/job:worker/task:%d/cpu:0" % FLAGS.task_index
  tf.set_random_seed(7)
  with tf.device(
      tf.train.replica_device_setter(
          worker_device=worker_device,
          ps_device="/job:ps/cpu:0",
          cluster=cluster)):
    global_step = tf.Variable(0, name="global_step", trainable=False)

    # Variables of the hidden layer
    hid_w = tf.Variable(
        tf.truncated_normal(
            [IMAGE_PIXELS * IMAGE_PIXELS, FLAGS.hidden_units],
            stddev=1.0 / IMAGE_PIXELS),
        name="hid_w")
    hid_b = tf.Variable(tf.zeros([FLAGS.hidden_units]), name="hid_b")

    # Variables of the softmax layer
    sm_w = tf.Variable(
        tf.truncated_normal(
            [FLAGS.hidden_units, NUM_CLASSES],
            stddev=1.0 / math.sqrt(FLAGS.hidden_units)),
        name="sm_w")
    sm_b = tf.Variable(tf.zeros([NUM_CLASSES]), name="sm_b")

    x = tf.placeholder(tf.float32, [None, IMAGE_PIXELS * IMAGE_PIXELS])
    y_ = tf.placeholder(tf.float32, [None, NUM_CLASSES])

    y = model.inference(x, hid_w, hid_b, sm_w, sm_b)
    cross_entropy = model.loss(y, y_)

    opt = tf.train.AdamOptimizer(FLAGS.learning_rate)

    if FLAGS.sync_replicas:
      if FLAGS.replicas_to_aggregate is None:
        replicas_to_aggregate = num_workers
      else:
        replicas_to_aggregate = FLAGS.replicas_to_aggregate

      opt = tf.train.SyncReplicasOptimizer(
          opt,
          replicas_to_aggregate=replicas_to_aggregate,
          total_num_replicas=num_workers,
          name="mnist_sync_replicas")

    train_op = opt.minimize(cross_entropy, global_step=global_step)

    if FLAGS.sync_replicas:
      local_init_op = opt.local_step_init_op
      if is_chief:
        local_init_op = opt.chief_init_op

      ready_for_local_init_op = opt.ready_for_local_init_op

      # Initial token and chief queue runners required by the sync_replicas mode;
      # no tokens ahead: every update waits for one gradient of each worker.
      chief_queue_runner = opt.get_chief_queue_runner()
      sync_init_op = opt.get_init_tokens_op(num_tokens=0)

    init_op = tf.global_variables_initializer()

  train_dir = tempfile.mkdtemp()
  if FLAGS.sync_replicas:
    sv = tf.train.Supervisor(
        is_chief=is_chief,
        logdir=train_dir,
        init_op=init_op,
        local_init_op=local_init_op,
        ready_for_local_init_op=ready_for_local_init_op,
        recovery_wait_secs=1,
        global_step=global_step)
  else:
    sv = tf.train.Supervisor(
        is_chief=is_chief,
        logdir=train_dir,
        init_op=init_op,
        recovery_wait_secs=1,
        global_step=global_step)

  sess_config = tf.ConfigProto(
      allow_soft_placement=True,
      log_device_placement=False,
      device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])

  # The chief prepares the session; the other workers wait for it.
  sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)

  if FLAGS.sync_replicas and is_chief:
    # The chief starts the queue runner aggregating the gradients, and the tokens.
    sess.run(sync_init_op)
    sv.start_queue_runners(sess, [chief_queue_runner])

  local_step = 0
  while True:
    batch_xs, batch_ys = mnist.train.next_batch(FLAGS.batch_size)
    train_feed = {x: batch_xs, y_: batch_ys}

    _, step, loss_value = sess.run([train_op, global_step, cross_entropy],
                                   feed_dict=train_feed)
    local_step += 1
    print("step %d loss %s" % (step, loss_value))

    if step >= FLAGS.train_steps:
      break

  val_feed = {x: mnist.validation.images, y_: mnist.validation.labels}
  val_xent = sess.run(cross_entropy, feed_dict=val_feed)
  print("After %d training step(s), validation cross entropy = %g" %
        (FLAGS.train_steps, val_xent))
  shutil.rmtree(train_dir)


if __name__ == "__main__":
  tf.app.run()
