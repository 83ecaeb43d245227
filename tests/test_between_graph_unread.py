"""TFM104 for between-graph programs whose session the discovery reads in none of its shapes: exactly one finding,
at the first thing that stopped the program, and the module unchanged. Modules that hold no between-graph program
of their own (an Estimator program given a cluster, a model's helper module) get none; one that starts a Server of
its cluster and trains with an Estimator the Estimator rewrite left gets one at the Estimator's driver."""

from __future__ import annotations

from textwrap import dedent

import pytest
from helpers import run

LEFT = "between-graph program left as it is: "
OPENED = ("only a session opened where its loop runs (`with ... as sess:` or `sess = ...` before the loop) is read; "
          "migrate the program by hand")
PLAIN = ("a plain `tf.Session` runs the cluster's graph: only a MonitoredTrainingSession or a Supervisor's session, or "
         "an in-graph program (ops placed on the tasks, no variables) run by the chief, is migrated; ")
STATEFUL = ("is not a stateless op of the graph (no variables, optimizers, placeholders, random ops or Keras are); "
            "migrate it by hand")

# A trainer class keeping its Supervisor in an attribute bound by another method than the one opening its session;
# an evaluator's session (no cluster) comes first.
SUPERVISOR_ATTRIBUTE = """\
import tensorflow as tf


class Evaluator(object):

  def evaluate(self, graph):
    self.sv = tf.train.Supervisor(graph, logdir="/tmp/eval")
    with self.sv.managed_session(master="", start_standard_services=False) as session:
      return session.run(self.accuracy)


class Trainer(object):

  def run_training(self, server, cluster, task_index):
    device_fn = tf.train.replica_device_setter(ps_device="/job:ps", cluster=cluster)
    with tf.Graph().as_default() as graph:
      with tf.device(device_fn):
        self.loss, self.train_op, self.global_step = self.model.build_train_graph()
        init_op = tf.global_variables_initializer()
    self.supervise(graph, init_op, task_index)
    should_retry = True
    while should_retry:
      try:
        should_retry = False
        with self.sv.managed_session(server.target) as session:
          while not self.sv.should_stop():
            session.run(self.train_op)
      except tf.errors.AbortedError:
        should_retry = True

  def supervise(self, graph, init_op, task_index):
    self.sv = tf.train.Supervisor(graph, is_chief=task_index == 0, logdir="/tmp/train", init_op=init_op)
"""

# The graph under replica_device_setter run by a plain Session on the server's target (a Keras model's session).
PLAIN_SESSION = """\
import tensorflow as tf


def map_fun(server, cluster, x_train, y_train):
  with tf.device(tf.train.replica_device_setter(cluster=cluster)):
    model = build_model()
  with tf.Session(server.target) as sess:
    tf.keras.backend.set_session(sess)
    model.fit(x_train, y_train, epochs=1)
"""

# A smoke test: the chief places ops on the tasks and runs them in a plain Session, in another function.
PLAIN_SESSION_ELSEWHERE = """\
import tensorflow as tf


def run(server, tasks):
  results = []
  for task in tasks:
    with tf.device(task):
      results.append(tf.multiply(tf.constant(2), tf.constant(3)))
  with tf.Session(server.target) as sess:
    for result in results:
      print(sess.run(result))


def main(server, cluster, tasks):
  device_func = tf.train.replica_device_setter(cluster=cluster)
  with tf.device(device_func):
    run(server, tasks)
"""

# Variables placed on the ps job by hand, trained in a plain Session on the server's target.
IN_GRAPH = """\
import tensorflow as tf


def main(server, x, y):
  with tf.device("/job:ps/task:0"):
    weights = tf.Variable(tf.zeros([3, 1]))
  with tf.device("/job:worker/task:0"):
    loss = tf.reduce_mean(tf.square(tf.matmul(x, weights) - y))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
  with tf.Session(server.target) as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(10):
      sess.run(train_op)
"""

# The session comes from a function of the program's own, defined where it trains.
RETURNED_SESSION = """\
import tensorflow as tf


def train(server, cluster, is_chief, use_mts, log_dir):
  with tf.device(tf.train.replica_device_setter(cluster=cluster)):
    loss = build_loss()
    train_op = tf.train.AdamOptimizer().minimize(loss, global_step=tf.train.get_or_create_global_step())
    hooks = [tf.train.StopAtStepHook(last_step=100)]
    sv = tf.train.Supervisor(is_chief=is_chief, logdir=log_dir)

    def _get_session():
      if use_mts:
        return tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks)
      return sv.prepare_or_wait_for_session(server.target)

    with _get_session() as sess:
      while not sess.should_stop():
        sess.run(train_op)
"""

# The graph under replica_device_setter is run by a session the function is given.
SESSION_GIVEN = """\
import tensorflow as tf


def training_distributed(session, server, job_name, model, labels):
  if job_name == "ps":
    server.join()
  else:
    with tf.device(tf.train.replica_device_setter()):
      global_step = tf.train.get_or_create_global_step()
      train_step = tf.train.GradientDescentOptimizer(0.1).minimize(loss(model, labels), global_step=global_step)
    session.run(tf.global_variables_initializer())
    for _ in range(100):
      session.run(train_step)


if __name__ == "__main__":
  session = tf.Session()
  training_distributed(session, SERVER, JOB_NAME, MODEL, LABELS)
"""

UNOPENED = "no MonitoredTrainingSession or Supervisor session opens after this graph in its block"

# A fitting function given the session its caller opens on the server: no session of its own to read.
SESSION_PASSED_ON_A_SERVER = """\
import tensorflow as tf


def fit(sess, cluster, batches):
  with tf.device(tf.train.replica_device_setter(cluster=cluster)):
    w = tf.get_variable("w", [4, 1])
    step = tf.train.get_or_create_global_step()
    cost = tf.reduce_sum(tf.square(tf.matmul(FEATURES, w)))
    fit_op = tf.train.AdagradOptimizer(0.5).minimize(cost, global_step=step)
  sess.run(tf.global_variables_initializer())
  for _ in batches:
    sess.run(fit_op)


def main(cluster, job, index):
  server = tf.distribute.Server(cluster, job_name=job, task_index=index)
  with tf.Session(server.target) as sess:
    fit(sess, cluster, range(10))
"""
# The same given by keyword, made with no target: each task trains alone.
SESSION_PASSED_BY_KEYWORD = SESSION_PASSED_ON_A_SERVER.replace(
    "  with tf.Session(server.target) as sess:\n    fit(sess, cluster, range(10))\n",
    "  local = tf.compat.v1.Session()\n  fit(batches=range(10), sess=local, cluster=cluster)\n")
# The fitting function reads the session from a module-level name: nothing says which session it is.
SESSION_UNNAMED = SESSION_PASSED_ON_A_SERVER.replace("def fit(sess, cluster, batches):", "def fit(cluster, batches):") \
    .replace("    fit(sess, cluster, range(10))", "    fit(cluster, range(10))").replace(
    "  with tf.Session(server.target) as sess:", "  global sess\n  with tf.Session(server.target) as sess:")


@pytest.mark.parametrize("source, where, why", [
    (SUPERVISOR_ATTRIBUTE, "        with self.sv.managed_session(server.target) as session:",
     "the session comes from `self.sv`, which is not a Supervisor bound to a name in this module "
     "(`sv = tf.train.Supervisor(...)`) nor to `self.sv` in the one method of its class binding it, which places "
     "the graph; only such a Supervisor's session is read: migrate the program by hand"),
    (PLAIN_SESSION, "    tf.keras.backend.set_session(sess)", f"{PLAIN}`tf.keras.backend.set_session` {STATEFUL}"),
    (PLAIN_SESSION_ELSEWHERE, "  with tf.Session(server.target) as sess:",
     PLAIN + "the chief's server is read where the module makes it (`server = tf.train.Server(...)`, once); migrate "
             "the program by hand"),
    (IN_GRAPH, "    weights = tf.Variable(tf.zeros([3, 1]))", f"{PLAIN}`tf.Variable` {STATEFUL}"),
    (RETURNED_SESSION, "        return tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, "
                       "hooks=hooks)",
     f"`tf.train.MonitoredTrainingSession(...)` makes a session that `_get_session` returns: {OPENED}"),
    (SESSION_GIVEN, "    with tf.device(tf.train.replica_device_setter()):",
     f"{UNOPENED}: `session` runs it, a parameter of `training_distributed` that its caller passes (`session = "
     "tf.Session()`: a session on no server, so TF1 trained the graph in each task's own process, not on the "
     "cluster); migrate the program by hand"),
    (SESSION_PASSED_ON_A_SERVER, "  with tf.device(tf.train.replica_device_setter(cluster=cluster)):",
     f"{UNOPENED}: `sess` runs it, a parameter of `fit` that its caller passes; migrate the program by hand"),
    (SESSION_PASSED_BY_KEYWORD, "  with tf.device(tf.train.replica_device_setter(cluster=cluster)):",
     f"{UNOPENED}: `sess` runs it, a parameter of `fit` that its caller passes (`local = tf.compat.v1.Session()`: "
     "a session on no server, so TF1 trained the graph in each task's own process, not on the cluster); migrate "
     "the program by hand"),
    (SESSION_UNNAMED, "  with tf.device(tf.train.replica_device_setter(cluster=cluster)):",
     f"{UNOPENED}: the session training it is made elsewhere; migrate the program by hand"),
], ids=["supervisor-attribute", "plain-session", "plain-session-elsewhere", "in-graph",
    "returned-session", "session-given", "session-passed-on-a-server", "session-passed-by-keyword",
    "session-unnamed"])
def test_a_program_whose_session_is_not_read_is_left_with_one_tfm104_where_it_stopped(source, where, why):
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert (source.splitlines()[finding.line - 1], finding.message) == (where, LEFT + why)
    # The session, the call that made it or the graph's `with`: where it starts on that line.
    assert where[finding.col - 1:].startswith(("self.sv.managed", "tf.Session", "tf.train.Monitored", "with tf.device",
                                               "tf.keras", "tf.Variable"))
    assert "TFM107" in {f.rule for f in result.findings}


# github_issue_summarization's distributed trainer: the ps tasks of TF_CONFIG's cluster join a Server the module
# starts, the others train a Keras model's Estimator on the cluster, a layer made in a loop before the model (TFM302).
SERVED_ESTIMATOR = """\
import json
import os
import sys

import numpy as np
import tensorflow as tf

FEATURES = np.random.rand(64, 4).astype("float32")
LABELS = FEATURES.sum(axis=1, keepdims=True)
tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
job_name = tf_config.get("task", {}).get("type")
if job_name == "ps":
  server = tf.train.Server(tf.train.ClusterSpec(tf_config["cluster"]), job_name=job_name,
                           task_index=tf_config["task"]["index"])
  server.join()
  sys.exit(0)

inputs = tf.keras.layers.Input(shape=(4,), name="x")
for units in (8,):
  hidden = tf.keras.layers.Dense(units, activation="relu")(inputs)
model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(hidden))
model.compile(optimizer="adam", loss="mse")
estimator = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir="/tmp/model")
input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": FEATURES}, y=LABELS, shuffle=False)
train_spec = tf.estimator.TrainSpec(input_fn=input_fn, max_steps=30)
eval_spec = tf.estimator.EvalSpec(input_fn=input_fn, steps=10)
tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
"""
LAYERS = """\
inputs = tf.keras.layers.Input(shape=(4,), name="x")
for units in (8,):
  hidden = tf.keras.layers.Dense(units, activation="relu")(inputs)
model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(hidden))
"""


def test_a_program_serving_its_cluster_whose_estimator_is_left_gets_one_tfm104_at_its_driver():
    result = run(SERVED_ESTIMATOR)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert SERVED_ESTIMATOR.splitlines()[finding.line - 1] == ("tf.estimator.train_and_evaluate(estimator, "
                                                               "train_spec, eval_spec)")
    assert finding.message == (
        LEFT + "its training is a TF1 Estimator (`tf.estimator.train_and_evaluate(...)`) on the cluster its Server "
        "serves, not a session loop: the Estimator migration left it (its TFM302 finding says why); fix that and run "
        "tf-migrate again (the Estimator becomes Keras fit under ParameterServerStrategy, the Server a "
        "tf.distribute.Server), or migrate the program by hand")
    assert any(f.rule == "TFM302" and "made of Keras layers or tensors made before" in f.message
               for f in result.findings)


def test_a_program_serving_its_cluster_whose_estimator_is_migrated_gets_no_tfm104():
    """The model made in a function, trained in another: the Estimator rewrite migrates it (TFM301), the Server
    stays, a TF2 one."""
    head, _, training = SERVED_ESTIMATOR.partition(LAYERS)
    made = "def make_model():\n" + "".join(f"  {line}\n" for line in LAYERS.splitlines()) + "  return model\n\n\n"
    source = head + made + "def main():\n  model = make_model()\n" + "".join(
        f"  {line}\n" for line in training.splitlines()) + "\n\nmain()\n"
    result = run(source)
    rules = {f.rule for f in result.findings}
    assert "TFM301" in rules and not rules & {"TFM104", "TFM302"}, result.findings
    assert "tf.distribute.Server(" in result.source


@pytest.mark.parametrize("source", [
    # An Estimator program given a cluster, which starts no Server of it: its Estimator findings say why it is left.
    """\
    import tensorflow as tf

    cluster_spec = tf.train.ClusterSpec(CLUSTER)
    tf.keras.backend.set_session(tf.Session(config=tf.ConfigProto(device_filters=["/job:ps"])))
    estimator = tf.keras.estimator.model_to_estimator(keras_model=MODEL)
    tf.estimator.train_and_evaluate(estimator, TRAIN_SPEC, EVAL_SPEC)
    """,
    # A model's helper module places its variables; the program's session is in another module.
    """\
    import tensorflow as tf


    def network(x, cluster):
      with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        return tf.layers.dense(x, 1)
    """,
], ids=["estimator-with-a-cluster", "helper-module"])
def test_a_module_without_a_between_graph_program_of_its_own_gets_no_tfm104(source):
    assert "TFM104" not in {f.rule for f in run(dedent(source)).findings}


def test_an_estimator_left_beside_one_migrated_in_a_module_starting_no_server_gets_no_tfm104():
    """The migrated one's strategy bootstrap starts a tf.distribute.Server for its ps and worker tasks; the program
    itself starts none, so the Estimator left is an Estimator program's (TFM302), not a served cluster's."""
    head, _, training = SERVED_ESTIMATOR.partition(LAYERS)
    head = head[:head.index("tf_config = ")]
    made = "def make_model():\n" + "".join(f"  {line}\n" for line in LAYERS.splitlines()) + "  return model\n\n\n"
    migrated = "def main():\n  model = make_model()\n" + "".join(f"  {line}\n" for line in training.splitlines())
    source = head + made + migrated + "\n\nmain()\n" + LAYERS + training
    result = run(source)
    rules = [f.rule for f in result.findings]
    assert "tf.distribute.Server(" in result.source and "TFM302" in rules, result.findings
    assert "TFM104" not in rules, result.findings
