"""A TF1 parameter-server program reading a CSV file through queue runners.

The shape of the TF1 distributed trainers built on MonitoredTrainingSession:
flags give the cluster and the role; each worker builds the graph with
``replica_device_setter``, its batches read from a CSV file by a queue-runner
input (``string_input_producer``, ``TextLineReader``, ``decode_csv``,
``tf.train.batch``), and trains under ``MonitoredTrainingSession`` with a
``Scaffold`` whose ``Saver`` keeps the last 3 checkpoints, a ``StopAtStepHook``
and, on the chief (worker 0), a ``SummarySaverHook``. The CSV file is written
to a temporary folder, with the checkpoints and summaries, removed at the end.

Run one task per process (the ps blocks in ``join()`` until it is killed):
  python examples/mts_scaffold/train.py --job_name=ps --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223
  python examples/mts_scaffold/train.py --job_name=worker --task_index=0 \
      --ps_hosts=localhost:2222 --worker_hosts=localhost:2223

Run without --ps_hosts / --worker_hosts to start a local cluster of 1 ps + 1 worker
on free ports, both in this process, and train as its worker.
"""
import os
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
flags.DEFINE_integer("train_steps", 20, "the global step to train to")
flags.DEFINE_string("data_dir", "", "where the CSV file is written (a temporary folder when empty)")
FLAGS = flags.FLAGS

NUM_FEATURES = 3
BATCH_SIZE = 8


def write_csv(folder):
  """y = x . [1, -2, 0.5] + 0.3 + noise, 40 rows of `x0,x1,x2,y`."""
  rng = np.random.RandomState(3)
  x = rng.normal(size=(40, NUM_FEATURES))
  y = x.dot([1.0, -2.0, 0.5]) + 0.3 + rng.normal(scale=0.1, size=40)
  path = os.path.join(folder, "train.csv")
  with open(path, "w") as f:
    for row, label in zip(x, y):
      f.write(",".join("%.6f" % v for v in [*row, label]) + "\n")
  return path


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
    return

  data_dir = FLAGS.data_dir or tempfile.mkdtemp()
  csv_path = write_csv(data_dir)
  tf.set_random_seed(5)
  with tf.device(tf.train.replica_device_setter(
      worker_device="/job:worker/task:%d" % FLAGS.task_index,
      cluster=cluster)):
    # One reader thread, the file names in order: the same batches every run.
    files = tf.train.string_input_producer([csv_path], shuffle=False)
    reader = tf.TextLineReader()
    _, line = reader.read(files)
    columns = tf.decode_csv(line, record_defaults=[[0.0]] * (NUM_FEATURES + 1))
    features = tf.stack(columns[:NUM_FEATURES])
    label = tf.stack(columns[NUM_FEATURES:])
    x, y = tf.train.batch([features, label], batch_size=BATCH_SIZE, num_threads=1)

    weights = tf.get_variable("weights", [NUM_FEATURES, 1])
    bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
    global_step = tf.train.get_or_create_global_step()
    loss = tf.losses.mean_squared_error(y, tf.matmul(x, weights) + bias)
    tf.summary.scalar("loss", loss)
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(
        loss, global_step=global_step)

  checkpoint_dir = os.path.join(data_dir, "checkpoints")
  summary_hook = tf.train.SummarySaverHook(
      save_steps=5, output_dir=checkpoint_dir, summary_op=tf.summary.merge_all())
  with tf.train.MonitoredTrainingSession(
      master=server.target, is_chief=(FLAGS.task_index == 0),
      checkpoint_dir=checkpoint_dir,
      scaffold=tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=3)),
      hooks=[tf.train.StopAtStepHook(last_step=FLAGS.train_steps)],
      chief_only_hooks=[summary_hook],
      save_summaries_steps=None, save_checkpoint_steps=10,
      log_step_count_steps=10) as sess:
    while not sess.should_stop():
      _, step, loss_value = sess.run([train_op, global_step, loss])
      print("step %d loss %s" % (step, loss_value))

  if not FLAGS.data_dir:
    shutil.rmtree(data_dir)


if __name__ == "__main__":
  tf.app.run()
