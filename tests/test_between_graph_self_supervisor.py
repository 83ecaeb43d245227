"""TFM103 on a trainer class keeping its Supervisor in an attribute (`self.sv = tf.train.Supervisor(...)`, as the
cloudml-samples trainers do): read as a name in the one method of its class binding it, which places the graph;
used anywhere else in the class (or a Supervisor in a name anywhere else in its function), the program is left
with a TFM104 at that use."""

from __future__ import annotations

import re

import pytest
from helpers import run
from test_between_graph_unread import SUPERVISOR_ATTRIBUTE

LEFT = "between-graph program left as it is: "

# A trainer class keeping its Supervisor in a name (in_attribute: in `self.sv`).
NAMED = """\
import tensorflow as tf


class Trainer(object):

  def __init__(self, cluster, task_index):
    self.cluster = cluster
    self.task_index = task_index

  def run_training(self, server, features, labels):
    with tf.device(tf.train.replica_device_setter(cluster=self.cluster)):
      global_step = tf.train.get_or_create_global_step()
      x = tf.placeholder(tf.float32, [None, 2])
      y = tf.placeholder(tf.float32, [None, 1])
      w = tf.Variable(tf.zeros([2, 1]))
      loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
      train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
      init_op = tf.global_variables_initializer()
    sv = tf.train.Supervisor(is_chief=self.task_index == 0, init_op=init_op, global_step=global_step)
    with sv.managed_session(server.target) as session:
      step = 0
      while not sv.should_stop() and step < 100:
        _, step = session.run([train_op, global_step], feed_dict={x: features, y: labels})
    sv.stop()
"""


def in_attribute(source: str) -> str:
    """``source`` keeping its Supervisor in `self.sv`."""
    return re.sub(r"\bsv\b", "self.sv", source)


# The evaluator and trainer of test_between_graph_unread, the trainer binding its Supervisor where it builds the graph
# (a TFM104 of its own, in the graph): the evaluator's Supervisor, bound in a method placing no graph, is not read.
SUPERVISE = ("    self.supervise(graph, init_op, task_index)\n",
             '    self.sv = tf.train.Supervisor(graph, is_chief=task_index == 0, logdir="/tmp/train", '
             'init_op=init_op)\n')
WITH_AN_EVALUATOR = SUPERVISOR_ATTRIBUTE.split("\n\n  def supervise")[0].replace(*SUPERVISE) + "\n"


def test_a_supervisor_in_an_attribute_of_self_is_migrated_as_one_in_a_name():
    named, kept = run(NAMED), run(in_attribute(NAMED))
    assert "TFM103" in {f.rule for f in kept.findings}, kept.findings
    assert "self.sv" not in kept.source
    assert kept.source == named.source


SAVED = "    print(sv.save_path)\n"


@pytest.mark.parametrize("kept_in, after, why", [
    (in_attribute, "    sv.stop()\n\n  def save_summaries(self, session):\n    sv.summary_writer.flush()\n",
     "`self.sv` is used in `save_summaries` besides"),
    (in_attribute, SAVED, "`self.sv` is used besides"),
    (str, SAVED, "`sv` is used besides"),
], ids=["attribute-in-another-method", "attribute-after-the-session", "name-after-the-session"])
def test_a_supervisor_used_elsewhere_leaves_the_program_with_a_tfm104_at_that_use(kept_in, after, why):
    source = kept_in(NAMED.replace("    sv.stop()\n", after))
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1] == kept_in(after.splitlines()[-1])
    assert finding.message == LEFT + why + (" opening the session and stopping its loop: the migrated program has no "
                                            "Supervisor; migrate that use by hand")


def test_the_trainers_supervisor_attribute_is_read_and_the_evaluators_is_not():
    result = run(WITH_AN_EVALUATOR)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    line = WITH_AN_EVALUATOR.splitlines()[finding.line - 1]
    assert line == "        self.loss, self.train_op, self.global_step = self.model.build_train_graph()"
    assert finding.message == LEFT + ("`self.loss, self.train_op, self.global_step = self.model.b...` in the graph "
                                      "assigns to `self.loss`: only assignments to names are migrated")

