"""A TF1 parameter-server program in the shape of TensorFlow's mnist_replica.py as its forks carry it (asynchronous).

The server made only without --existing_servers (with them, the servers run elsewhere and the
session opens on this worker's, by its URL); the session, the loop and the validation written
inside the `with tf.device(replica_device_setter(...)):` block after the graph; a ConfigProto of
device filters; the train op named `train_step`; the Supervisor's logdir a fresh temporary folder.
Run without --ps_hosts / --worker_hosts to start 1 ps + 1 worker in this process.
"""
import socket
import tempfile
import time

import numpy as np
import tensorflow.compat.v1 as tf
import tensorflow as tf2

tf.disable_v2_behavior()

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "comma-separated host:port of the ps tasks")
flags.DEFINE_string("worker_hosts", "", "comma-separated host:port of the workers")
flags.DEFINE_string("job_name", "worker", "ps or worker")
flags.DEFINE_integer("task_index", 0, "index of the task in its job")
flags.DEFINE_integer("train_steps", 20, "global steps to train for")
flags.DEFINE_integer("batch_size", 16, "rows a step")
flags.DEFINE_boolean("existing_servers", False, "whether the servers already run (one client process per worker "
                     "host, on its server's gRPC URL); else this process starts its task's server")
FLAGS = flags.FLAGS

PIXELS = 4
HIDDEN = 8

rng = np.random.RandomState(1)
images = rng.normal(size=(96, PIXELS)).astype(np.float32)
labels = np.eye(2, dtype=np.float32)[(images.dot([1.0, -2.0, 0.5, 1.5]) > 0).astype(np.int64)]
train_images, train_labels = images[:64], labels[:64]
validation_images, validation_labels = images[64:], labels[64:]


def free_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def main(_):
  local = not (FLAGS.ps_hosts or FLAGS.worker_hosts)
  if local:
    FLAGS.ps_hosts = "localhost:%d" % free_port()
    FLAGS.worker_hosts = "localhost:%d" % free_port()
  ps_spec = FLAGS.ps_hosts.split(",")
  worker_spec = FLAGS.worker_hosts.split(",")
  cluster = tf2.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
  if local:
    tf2.distribute.Server(cluster, job_name="ps", task_index=0)

  if not FLAGS.existing_servers:
    # Not using existing servers: create an in-process server.
    server = tf2.distribute.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
      server.join()

  is_chief = FLAGS.task_index == 0
  worker_device = "/job:worker/task:%d/cpu:0" % FLAGS.task_index
  with tf.device(tf.train.replica_device_setter(worker_device=worker_device, ps_device="/job:ps/cpu:0",
                                                cluster=cluster)):
    global_step = tf.Variable(0, name="global_step", trainable=False)
    hid_w = tf.Variable(tf.truncated_normal([PIXELS, HIDDEN], stddev=0.5), name="hid_w")
    hid_b = tf.Variable(tf.zeros([HIDDEN]), name="hid_b")
    sm_w = tf.Variable(tf.truncated_normal([HIDDEN, 2], stddev=0.5), name="sm_w")
    sm_b = tf.Variable(tf.zeros([2]), name="sm_b")

    x = tf.placeholder(tf.float32, [None, PIXELS])
    y_ = tf.placeholder(tf.float32, [None, 2])
    hid = tf.nn.relu(tf.nn.xw_plus_b(x, hid_w, hid_b))
    y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
    cross_entropy = -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))

    opt = tf.train.AdamOptimizer(0.01)
    train_step = opt.minimize(cross_entropy, global_step=global_step)

    init_op = tf.global_variables_initializer()
    train_dir = tempfile.mkdtemp()
    sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op, recovery_wait_secs=1,
                             global_step=global_step)
    sess_config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                                 device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])
    if is_chief:
      print("Worker %d: Initializing session..." % FLAGS.task_index)
    else:
      print("Worker %d: Waiting for session to be initialized..." % FLAGS.task_index)

    if FLAGS.existing_servers:
      server_grpc_url = "grpc://" + worker_spec[FLAGS.task_index]
      print("Using existing server at: %s" % server_grpc_url)

      sess = sv.prepare_or_wait_for_session(server_grpc_url, config=sess_config)
    else:
      sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)
    print("Worker %d: Session initialization complete." % FLAGS.task_index)

    time_begin = time.time()
    local_step = 0
    while True:
      start = local_step * FLAGS.batch_size % len(train_images)
      batch_xs = train_images[start:start + FLAGS.batch_size]
      batch_ys = train_labels[start:start + FLAGS.batch_size]
      train_feed = {x: batch_xs, y_: batch_ys}

      _, step = sess.run([train_step, global_step], feed_dict=train_feed)
      local_step += 1
      print("Worker %d: training step %d done (global step: %d)" % (FLAGS.task_index, local_step, step))

      if step >= FLAGS.train_steps:
        break

    print("Training elapsed time: %f s" % (time.time() - time_begin))

    val_feed = {x: validation_images, y_: validation_labels}
    val_xent = sess.run(cross_entropy, feed_dict=val_feed)
    print("After %d training step(s), validation cross entropy = %g" % (FLAGS.train_steps, val_xent))


if __name__ == "__main__":
  tf.app.run()
