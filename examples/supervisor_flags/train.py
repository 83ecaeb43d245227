"""A TF1 parameter-server program in the shape of the distributed-TensorFlow tutorials.

tf.app.flags give the cluster and the role, ``main(_)`` runs under ``tf.app.run()``;
each worker builds the graph with ``replica_device_setter`` (its batches from a
``tf.data`` iterator, its layers from ``tf.layers``) and trains under a
``tf.train.Supervisor``, worker 0 as its chief, the checkpoints in --logdir.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/supervisor_flags/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223
  python examples/supervisor_flags/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223

Run without --ps_hosts / --worker_hosts to start a local cluster of 1 ps + 1 worker
on free ports, both in this process, and train as its worker.
"""
import shutil
import socket
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "comma-separated host:port of the ps tasks")
flags.DEFINE_string("worker_hosts", "", "comma-separated host:port of the workers")
flags.DEFINE_string("job_name", "worker", "ps or worker")
flags.DEFINE_integer("task_index", 0, "index of the task in its job")
flags.DEFINE_integer("train_steps", 20, "steps this worker trains for")
flags.DEFINE_integer("log_every", 1, "print the loss every this many steps")
flags.DEFINE_string("logdir", "", "checkpoints (a temporary folder when empty)")
FLAGS = flags.FLAGS

NUM_FEATURES = 4
HIDDEN = 8
BATCH_SIZE = 16

# Two classes, 64 rows: the label says whether x . w > 0.
rng = np.random.RandomState(1)
train_x = rng.normal(size=(64, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot([1.0, -2.0, 0.5, 1.5]) > 0).astype(np.int64)


def free_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def main(_):
  local = not (FLAGS.ps_hosts or FLAGS.worker_hosts)
  if local:
    FLAGS.ps_hosts = "localhost:%d" % free_port()
    FLAGS.worker_hosts = "localhost:%d" % free_port()
  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","),
                                  "worker": FLAGS.worker_hosts.split(",")})
  if local:
    # This process serves the ps task too, in the background.
    tf.train.Server(cluster, job_name="ps", task_index=0)
  server = tf.train.Server(cluster, job_name=FLAGS.job_name,
                           task_index=FLAGS.task_index)

  if FLAGS.job_name == "ps":
    server.join()
  elif FLAGS.job_name == "worker":
    is_chief = FLAGS.task_index == 0
    logdir = FLAGS.logdir or tempfile.mkdtemp()
    tf.set_random_seed(7)
    with tf.device(tf.train.replica_device_setter(
        worker_device="/job:worker/task:%d" % FLAGS.task_index,
        cluster=cluster)):
      dataset = tf.data.Dataset.from_tensor_slices((train_x, train_y))
      dataset = dataset.batch(BATCH_SIZE).repeat()
      x, y = dataset.make_one_shot_iterator().get_next()
      hidden = tf.layers.dense(x, HIDDEN, activation=tf.nn.relu)
      logits = tf.layers.dense(hidden, 2)
      global_step = tf.train.get_or_create_global_step()

      loss = tf.reduce_mean(
          tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
      train_op = tf.train.AdamOptimizer(0.01).minimize(
          loss, global_step=global_step)
      init_op = tf.global_variables_initializer()

    sv = tf.train.Supervisor(is_chief=is_chief, logdir=logdir,
                             init_op=init_op, global_step=global_step,
                             save_model_secs=600)
    with sv.managed_session(server.target) as sess:
      local_step = 0
      while not sv.should_stop() and local_step < FLAGS.train_steps:
        _, step, loss_value = sess.run([train_op, global_step, loss])
        if local_step % FLAGS.log_every == 0:
          print("step %d loss %s" % (step, loss_value))
        local_step += 1
    sv.stop()
    if not FLAGS.logdir:
      shutil.rmtree(logdir)


if __name__ == "__main__":
  tf.app.run()
