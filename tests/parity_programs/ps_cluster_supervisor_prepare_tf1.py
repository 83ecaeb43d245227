"""ps_cluster_supervisor_tf1.py with the session of ``sv.prepare_or_wait_for_session``.

The batches come from a one-shot ``tf.data`` iterator in the graph (the same rows, in
the same order, as ``next_batch(i)``), the loop runs ``sess.run(train_op)`` without a
feed, then reads the global step, and stops only at its own limit: ``while True: ...
if step >= 1000: break`` (the loop of TensorFlow's mnist_replica.py).

Run without arguments to start a local cluster of 1 ps + 1 worker on free ports,
both in this process, and train as its worker:
  python tests/parity_programs/ps_cluster_supervisor_prepare_tf1.py
"""
import argparse
import socket

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

NUM_FEATURES = 3
BATCH_SIZE = 8
LOGDIR = "train_logs"

# y = x . [2, -1, 0.5] + 1 + noise, 32 rows.
rng = np.random.RandomState(0)
train_x = rng.normal(size=(32, NUM_FEATURES)).astype(np.float32)
train_y = (train_x.dot([[2.0], [-1.0], [0.5]]) + 1.0
           + rng.normal(scale=0.1, size=(32, 1))).astype(np.float32)


def free_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--job_name", choices=["ps", "worker"])
  parser.add_argument("--task_index", type=int, default=0)
  parser.add_argument("--ps_hosts", default="", help="comma-separated host:port")
  parser.add_argument("--worker_hosts", default="", help="comma-separated host:port")
  flags = parser.parse_args()

  local = not (flags.job_name or flags.ps_hosts or flags.worker_hosts)
  if local:
    flags.job_name = "worker"
    flags.ps_hosts = "localhost:%d" % free_port()
    flags.worker_hosts = "localhost:%d" % free_port()
  elif not (flags.job_name and flags.ps_hosts and flags.worker_hosts):
    parser.error("--job_name, --ps_hosts and --worker_hosts go together")

  cluster = tf.train.ClusterSpec({
      "ps": flags.ps_hosts.split(","),
      "worker": flags.worker_hosts.split(","),
  })
  if local:
    # This process serves the ps task too, in the background.
    tf.train.Server(cluster, job_name="ps", task_index=0)
  server = tf.train.Server(
      cluster, job_name=flags.job_name, task_index=flags.task_index)

  if flags.job_name == "ps":
    server.join()
    return

  is_chief = flags.task_index == 0
  tf.set_random_seed(42)
  with tf.device(tf.train.replica_device_setter(
      worker_device="/job:worker/task:%d" % flags.task_index,
      cluster=cluster)):
    dataset = tf.data.Dataset.from_tensor_slices((train_x, train_y))
    x, y = tf.data.make_one_shot_iterator(
        dataset.batch(BATCH_SIZE).repeat()).get_next()
    weights = tf.get_variable("weights", [NUM_FEATURES, 1])
    bias = tf.get_variable("bias", [1], initializer=tf.zeros_initializer())
    global_step = tf.train.get_or_create_global_step()

    loss = tf.reduce_mean(tf.square(y - (tf.matmul(x, weights) + bias)))
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=global_step)
    init_op = tf.global_variables_initializer()

  sv = tf.train.Supervisor(is_chief=is_chief, logdir=LOGDIR,
                           global_step=global_step, init_op=init_op,
                           saver=tf.train.Saver(), save_model_secs=600,
                           recovery_wait_secs=1)
  # Talk only to the ps tasks and this worker, not to the other workers.
  config = tf.ConfigProto(device_filters=[
      "/job:ps", "/job:worker/task:%d" % flags.task_index])
  sess = sv.prepare_or_wait_for_session(server.target, config=config)
  step = 0
  while True:
    sess.run(train_op)
    step = sess.run(global_step)
    print("step %d" % step)
    if step >= 1000:
      break
  sv.stop()

if __name__ == "__main__":
  main()
