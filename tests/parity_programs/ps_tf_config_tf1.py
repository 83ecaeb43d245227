"""Between-graph training on a cluster described by TF_CONFIG (TensorFlow 1): chief, workers, ps.

Each task runs this program with its own TF_CONFIG; the chief and the workers all
train, the chief also initialises the variables. The optimizer is made in its
``minimize`` call. tests/test_examples.py migrates it and runs the migration as one
process per task, TF_CONFIG per task.

Run: TF_CONFIG='{"cluster": {...}, "task": {"type": "chief", "index": 0}}' python ps_tf_config_tf1.py
"""
import json
import os

import numpy as np
import tensorflow.compat.v1 as tf1

tf1.disable_eager_execution()

rng = np.random.RandomState(0)
train_x = rng.normal(size=(32, 3)).astype(np.float32)
train_y = (train_x.dot([[2.0], [-1.0], [0.5]]) + 1.0).astype(np.float32)


def main():
  tf_config = json.loads(os.environ["TF_CONFIG"])
  cluster = tf1.train.ClusterSpec(tf_config["cluster"])
  job_name, task_index = tf_config["task"]["type"], tf_config["task"]["index"]
  server = tf1.train.Server(cluster, job_name=job_name, task_index=task_index)
  if job_name == "ps":
    server.join()
    return

  with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
    x = tf1.placeholder(tf1.float32, [None, 3])
    y = tf1.placeholder(tf1.float32, [None, 1])
    weights = tf1.get_variable("weights", [3, 1])
    global_step = tf1.train.get_or_create_global_step()
    loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
    train_op = tf1.train.AdagradOptimizer(0.5).minimize(loss, global_step=global_step)

  hooks = [tf1.train.StopAtStepHook(last_step=20)]
  with tf1.train.MonitoredTrainingSession(
      master=server.target, is_chief=(job_name == "chief"), hooks=hooks) as sess:
    while not sess.should_stop():
      _, step, loss_value = sess.run([train_op, global_step, loss], feed_dict={x: train_x, y: train_y})
      print("step %d loss %s" % (step, loss_value), flush=True)


if __name__ == "__main__":
  main()
