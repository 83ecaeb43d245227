"""TFM103 on a trainer building its graph in a graph of its own, `with tf.Graph().as_default() as graph:` holding the
device block, and giving it to its Supervisor (`Supervisor(graph, ...)`), as the cloudml-samples trainers do: the
graph block goes with the graph (the migrated program has none), the program migrated as one building its graph in
the default graph. Where the graph is used otherwise, or not given to the session, the program is left with a TFM104
there."""

from __future__ import annotations

import pytest
from helpers import run
from test_between_graph_self_supervisor import NAMED, in_attribute

LEFT = "between-graph program left as it is: "
DEVICE = "    with tf.device(tf.train.replica_device_setter(cluster=self.cluster)):\n"
SUPERVISOR = "    sv = tf.train.Supervisor(is_chief="


def in_a_graph(source: str, supervisor: str = "    sv = tf.train.Supervisor(graph, is_chief=", device: str = DEVICE
               ) -> str:
    """``source`` building its graph in `with tf.Graph().as_default() as graph:`, its Supervisor given ``graph``."""
    head, device, tail = source.partition(device)
    graph, rest = tail.split(SUPERVISOR)
    indented = "".join(f"  {line}" if line.strip() else line for line in (device + graph).splitlines(True))
    return f"{head}    with tf.Graph().as_default() as graph:\n{indented}{supervisor}{rest}"


@pytest.mark.parametrize("kept_in", [str, in_attribute], ids=["name", "attribute"])
def test_a_graph_block_given_to_the_supervisor_goes_with_the_graph(kept_in):
    source = kept_in(in_a_graph(NAMED))
    assert "with tf.Graph().as_default() as graph:" in source and "Supervisor(graph, is_chief=" in source
    result, plain = run(source), run(kept_in(NAMED))
    assert "TFM103" in {f.rule for f in result.findings}, result.findings
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    assert result.source == plain.source


def test_the_graph_given_as_a_keyword_is_read_the_same():
    keyword = run(in_a_graph(NAMED, "    sv = tf.train.Supervisor(graph=graph, is_chief="))
    assert keyword.source == run(NAMED).source


@pytest.mark.parametrize("source, at, why", [
    (in_a_graph(NAMED).replace("    sv.stop()\n", "    sv.stop()\n    graph.finalize()\n"), "    graph.finalize()",
     "`graph`, the TF1 graph, is used besides making the session: the migrated program has no graph; migrate that "
     "use by hand"),
    (in_a_graph(NAMED, SUPERVISOR), "    with tf.Graph().as_default() as graph:",
     "the graph is built in its own `tf.Graph()`, which the session is not given as a Supervisor's `graph`: migrate "
     "the graph by hand"),
    (NAMED.replace(SUPERVISOR, "    sv = tf.train.Supervisor(tf.get_default_graph(), is_chief="),
     "    sv = tf.train.Supervisor(tf.get_default_graph(), is_chief=",
     "Supervisor(graph=...) is not migrated: do its work around the migrated loop by hand"),
], ids=["graph-used-elsewhere", "graph-not-given", "graph-without-a-graph-block"])
def test_a_graph_used_otherwise_leaves_the_program_with_a_tfm104_there(source, at, why):
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1].startswith(at)
    assert finding.message == LEFT + why


# The session opened again after an AbortedError, as the cloudml-samples trainers open theirs; a step's own `try:`
# setting the flag.
SESSION = """\
    with sv.managed_session(server.target) as session:
      step = 0
      while not sv.should_stop() and step < 100:
        _, step = session.run([train_op, global_step], feed_dict={x: features, y: labels})
"""
RETRIED_SESSION = """\
    should_retry = True
    while should_retry:
      try:
        should_retry = False
        with sv.managed_session(server.target) as session:
          step = 0
          while not sv.should_stop() and step < 100:
            try:
              _, step = session.run([train_op, global_step], feed_dict={x: features, y: labels})
            except tf.errors.AbortedError:
              should_retry = True
      except tf.errors.AbortedError:
        should_retry = True
"""
RETRIED = NAMED.replace(SESSION, RETRIED_SESSION)
RETRIED_NOTE = ("TF1 opened the session again when it aborted (a task of the cluster restarted): the ClusterCoordinator "
                "runs a step whose worker failed again on another worker; a parameter server failing ends the program, "
                "which resumes from its checkpoint when started again")
UNREAD_RETRIES = ("the session opens in `while should_retry: try: ...`, read only as `should_retry = True` before it, "
                  "`should_retry = False` then the session in the `try`, and `except tf.errors.AbortedError: "
                  "should_retry = True`: migrate the retries by hand")


@pytest.mark.parametrize("kept_in", [str, in_attribute], ids=["name", "attribute"])
def test_a_session_opened_again_after_an_abort_is_opened_once(kept_in):
    assert RETRIED != NAMED
    source = kept_in(in_a_graph(RETRIED))
    result = run(source)
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    (note,) = [f for f in result.findings if f.message == RETRIED_NOTE]
    assert note.rule == "TFM103" and source.splitlines()[note.line - 1] == "    while should_retry:"
    assert result.source == run(kept_in(NAMED)).source


@pytest.mark.parametrize("source, at, why", [
    (RETRIED.replace("    sv.stop()\n", "    sv.stop()\n    print(should_retry)\n"), "    print(should_retry)",
     "`should_retry`, the flag opening the session again, is used besides: migrate the retries by hand"),
    (RETRIED.replace("      except tf.errors.AbortedError:\n        should_retry = True\n",
                     "      except tf.errors.AbortedError:\n        print('aborted')\n        should_retry = True\n"),
     "    while should_retry:", UNREAD_RETRIES),
    (RETRIED.replace("    should_retry = True\n    while", "    should_retry = False\n    while"),
     "    while should_retry:", UNREAD_RETRIES),
], ids=["flag-used-elsewhere", "handler-doing-more", "flag-false-before"])
def test_retries_read_otherwise_leave_the_program_with_a_tfm104_there(source, at, why):
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1] == at
    assert finding.message == LEFT + why


# The graph's device held in a name, as the cloudml-samples trainers hold it.
NAMED_DEVICE_BLOCK = "    with tf.device(device_fn):\n"
NAMED_DEVICE = NAMED.replace(DEVICE, "    device_fn = tf.train.replica_device_setter(cluster=self.cluster)\n"
                             + NAMED_DEVICE_BLOCK)
LOCAL_TOO = NAMED.replace(DEVICE, "    if self.cluster:\n"
                                  "      device_fn = tf.train.replica_device_setter(cluster=self.cluster)\n"
                                  "    else:\n"
                                  "      device_fn = ''\n"
                                  "    with tf.device(device_fn):\n")


@pytest.mark.parametrize("source", [
    NAMED_DEVICE,
    NAMED_DEVICE.replace("    device_fn = tf", "    if self.cluster:\n      device_fn = tf"),
    in_a_graph(NAMED_DEVICE, device=NAMED_DEVICE_BLOCK),
], ids=["same-block", "in-an-if", "in-a-graph-block"])
def test_a_device_held_in_a_name_places_the_graph_and_goes_with_it(source):
    assert "    with tf.device(device_fn):\n" in source
    result = run(source)
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    assert "device_fn" not in result.source
    assert "replica_device_setter" not in result.source


@pytest.mark.parametrize("source, at, why", [
    (LOCAL_TOO.replace("device_fn = ''", "device_fn = '/cpu:0'"), "    with tf.device(device_fn):",
     "the graph's device `device_fn` is a replica_device_setter in one branch and `'/cpu:0'` in another, where the "
     "program trains without the cluster: only training on the cluster is migrated; migrate the program by hand"),
    (NAMED_DEVICE.replace("    sv.stop()\n", "    sv.stop()\n    print(device_fn)\n"), "    print(device_fn)",
     "`device_fn`, the graph's device, is used besides placing it: migrate that use by hand"),
], ids=["another-device-without-a-cluster", "device-used-elsewhere"])
def test_a_device_name_read_otherwise_leaves_the_program_with_a_tfm104_there(source, at, why):
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1] == at
    assert finding.message == LEFT + why


def test_an_attribute_named_as_a_tensor_of_the_graph_is_not_the_tensor():
    """`self.global_step = step` in the loop keeps the step count the run fetched; `global_step` is the graph's."""
    run_line = "        _, step = session.run([train_op, global_step], feed_dict={x: features, y: labels})\n"
    source = NAMED.replace(run_line, run_line + "        self.global_step = step\n")
    result = run(source)
    assert "TFM103" in {f.rule for f in result.findings}, result.findings
    assert "      self.global_step = step\n" in result.source


def test_a_run_feeding_nothing_to_a_graph_of_placeholders_is_left_at_the_run():
    fed = "session.run([train_op, global_step], feed_dict={x: features, y: labels})"
    source = NAMED.replace(fed, "session.run([train_op, global_step])")
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "session.run([train_op, global_step])" in source.splitlines()[finding.line - 1]
    assert finding.message == LEFT + "feed_dict must feed every placeholder, and only them"


def test_the_trainers_shape_migrates_as_the_plain_program():
    """The Supervisor in `self.sv`, given the graph block holding a device block placed by a name, its session
    opened again after an abort (cloudml-samples' Trainer.run_training, with a graph of its own)."""
    shaped = in_attribute(in_a_graph(NAMED_DEVICE.replace(SESSION, RETRIED_SESSION), device=NAMED_DEVICE_BLOCK))
    result = run(shaped)
    assert not [f for f in result.findings if f.safety == "manual"], result.findings
    assert result.source == run(NAMED).source


def test_a_graph_statement_assigning_to_an_attribute_is_left_naming_it():
    """cloudml-samples' `self.tensors = self.model.build_train_graph(...)`: the graph's tensors held by an object."""
    line = "      loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))\n"
    source = NAMED.replace(line, line.replace("loss =", "self.loss ="))
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1] == line.replace("loss =", "self.loss =").rstrip("\n")
    assert finding.message == LEFT + ("`self.loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))` in the graph "
                                      "assigns to `self.loss`: only assignments to names are migrated")
