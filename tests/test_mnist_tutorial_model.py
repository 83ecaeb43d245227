"""TFM012: the TF1 tutorials' MNIST model module (tensorflow.examples.tutorials.mnist.mnist) written into the
program, and a between-graph program of tensorflow/ecosystem's docker and YARN trainers' shape built from it
migrated (TFM103 then reads the tutorial's functions as the program's own)."""

from __future__ import annotations

import re

import pytest
from helpers import run
from test_between_graph_sessions import _cluster, _hosts

IMPORT = "from tensorflow.examples.tutorials.mnist import mnist\n"


def test_the_functions_and_constants_read_are_written_after_the_imports():
    result = run("import tensorflow as tf\n" + IMPORT + "import os\n\n"
                 "x = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])\n"
                 "logits = mnist.inference(x, 8, 4)\nright = mnist.evaluation(logits, tf.zeros([2], tf.int32))\n")
    code = result.source
    assert code.startswith("import tensorflow as tf\nimport os\nimport math\n\nMNIST_NUM_CLASSES = 10\n"
                           "MNIST_IMAGE_SIZE = 28\nMNIST_IMAGE_PIXELS = MNIST_IMAGE_SIZE * MNIST_IMAGE_SIZE\n\n\n"
                           "def mnist_inference(images, hidden1_units, hidden2_units):\n"), code
    assert ('    with tf.compat.v1.name_scope("hidden1"):\n        weights = tf.compat.v1.Variable(\n'
            "            tf.compat.v1.truncated_normal(\n"
            "                [MNIST_IMAGE_PIXELS, hidden1_units], stddev=1.0 / math.sqrt(float(MNIST_IMAGE_PIXELS))),\n"
            ) in code
    assert "\n\ndef mnist_evaluation(logits, labels):\n" in code and "def mnist_loss" not in code
    assert "x = tf.placeholder(tf.float32, [None, MNIST_IMAGE_PIXELS])\nlogits = mnist_inference(x, 8, 4)\n" in code
    assert "tensorflow.examples" not in code
    (finding,) = [f for f in result.findings if f.rule == "TFM012"]
    assert (finding.line, finding.message.split(": ")[-1]) == (2, "MNIST_IMAGE_PIXELS, mnist_inference, "
                                                                   "mnist_evaluation")
    compile(code, "migrated.py", "exec")


@pytest.mark.parametrize("uses", [
    "print(mnist.read_data_sets)\n",             # not the tutorial model's
    "model = mnist\n",                           # the module passed on
    "mnist_loss = 1.0\nprint(mnist.loss)\n",     # a name written there is taken
    "import math as m\nmath = m\nprint(mnist.inference)\n",  # `math` is something else
])
def test_another_use_of_the_module_leaves_it_to_tfm003(uses):
    source = "import tensorflow as tf\n" + IMPORT + "\n" + uses
    result = run(source)
    assert result.source == source
    assert [f.rule for f in result.findings] == ["TFM003"]


# tensorflow/ecosystem's trainers' shape, our own: a function starting the server and returning the device setter
# and the target, the tutorial's model on a tf.data input function's batches, its `training` making the optimizer,
# a Supervisor whose session reads the global step back from the graph with a function of the module.
ECOSYSTEM = '''import sys

import tensorflow as tf
from tensorflow.examples.tutorials.mnist import mnist
from tensorflow.python.framework import ops

flags = tf.app.flags
flags.DEFINE_string("job_name", None, "ps or worker")
flags.DEFINE_integer("task_index", 0, "task")
flags.DEFINE_string("ps_hosts", "", "ps")
flags.DEFINE_string("worker_hosts", "", "workers")
flags.DEFINE_string("train_dir", None, "checkpoints")
flags.DEFINE_float("learning_rate", 0.05, "learning rate")
flags.DEFINE_integer("steps", 12, "steps")
FLAGS = flags.FLAGS


def step_tensor(graph=None):
  graph = ops.get_default_graph() if graph is None else graph
  found = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)
  if len(found) == 1:
    return found[0]
  try:
    return graph.get_tensor_by_name("global_step:0")
  except KeyError:
    return None


def batches(batch_size):
  with tf.name_scope("input"):
    images, labels = tf.compat.v1.data.make_one_shot_iterator(
      tf.data.Dataset.from_tensor_slices(
          (tf.random.uniform([64, mnist.IMAGE_PIXELS], seed=1), tf.range(64) % mnist.NUM_CLASSES))
      .repeat()
      .batch(batch_size, drop_remainder=True)).get_next()
    return images, labels


def placement_and_master():
  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps":
    server.join()
  worker = "/job:worker/task:%d" % FLAGS.task_index
  return (tf.train.replica_device_setter(worker_device=worker, cluster=cluster), server.target)


def main(_):
  placement, master = placement_and_master()
  with tf.device(placement):
    images, labels = batches(16)
    logits = mnist.inference(images, 32, 16)
    loss = mnist.loss(logits, labels)
    train_op = mnist.training(loss, FLAGS.learning_rate)
    right = mnist.evaluation(logits, labels)

  sv = tf.train.Supervisor(logdir=FLAGS.train_dir, is_chief=(FLAGS.task_index == 0))
  step = 0
  with sv.managed_session(master) as sess:
    step_op = step_tensor(sess.graph)
    while not sv.should_stop() and step < FLAGS.steps:
      _, step, correct = sess.run([train_op, step_op, right])
      print("step %d right %d" % (step, correct))
      sys.stdout.flush()


if __name__ == "__main__":
  tf.app.run()
'''


def test_a_trainer_of_the_tutorial_model_is_migrated():
    result = run(ECOSYSTEM)
    code = result.source
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    assert run(code).source == code, "a second run changes nothing"
    assert "class MnistInference(tf.Module):\n" in code and "def mnist_inference" not in code
    assert "    mnist_inference = MnistInference(32, 16)\n" in code, code
    assert "    optimizer = keras.optimizers.legacy.SGD(learning_rate=FLAGS.learning_rate)\n" in code
    assert "        loss = mnist_loss(logits, labels)\n        right = mnist_evaluation(logits, labels)\n" in code
    for gone in ("mnist_training", "step_tensor", "step_op", "ops", "tensorflow.examples", "Supervisor"):
        assert gone not in code, gone
    assert '"hidden1/weights": mnist_inference.hidden1_weights,' in code
    assert max(len(line) for line in code.splitlines() if line not in ECOSYSTEM.splitlines()) <= 100


@pytest.mark.tensorflow
def test_the_migrated_trainer_runs_as_ps_and_two_workers(tmp_path):
    program = tmp_path / "tf2.py"
    program.write_text(run(ECOSYSTEM).source)
    ps, workers = _hosts()
    flags = [f"--ps_hosts={ps}", f"--worker_hosts={workers}", f"--train_dir={tmp_path / 'logs'}"]
    (chief,) = _cluster(tmp_path, [[str(program), "--job_name=ps", "--task_index=0", *flags],
                                   [str(program), "--job_name=worker", "--task_index=1", *flags]],
                        [[str(program), "--job_name=worker", "--task_index=0", *flags]])
    assert re.findall(r"step (\d+) right", chief) == [str(step) for step in range(1, 13)], chief
