"""TFM103 on what a session's loop does besides its train step, in the shape of kubeflow's
monitored_training_session/mnist.py: an accuracy run every N steps, fed a batch of its own, becomes an evaluation
of the graph's tensor (on the coordinator, once the steps scheduled so far are done); `tf.train.global_step(sess,
global_step)` the optimizer's step count; a value made in the graph's block from no tensor (the data the loop
reads) is made before the graph."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_between_graph_shapes import manual, migrated

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PS_CLUSTER = (EXAMPLES / "ps_cluster" / "train.py").read_text()
STEP = """      _, step, loss_value = sess.run(
          [train_op, global_step, loss], feed_dict={x: batch_x, y: batch_y})
"""
EVERY_FIVE = """      if i % 5 == 0:
        eval_feed = {x: batch_x, y: batch_y}
        mse = sess.run(loss, feed_dict=eval_feed)
        print("global step %d mse %g" % (tf1.train.global_step(sess, global_step), mse))
"""
DATA_IN_THE_GRAPH = ('    y = tf1.placeholder(tf1.float32, [None, 1], name="y")\n',
                     '    y = tf1.placeholder(tf1.float32, [None, 1], name="y")\n'
                     '    first = flags.task_index * BATCH_SIZE\n')


def with_loop(before: str = EVERY_FIVE, after: str = "", source: str = PS_CLUSTER) -> str:
    changed = source.replace(STEP, before + STEP + after)
    assert changed != source
    return changed


def with_data_in_the_graph(source: str) -> str:
    changed = source.replace(*DATA_IN_THE_GRAPH).replace("= next_batch(i)", "= next_batch(i + first)")
    assert changed.count("first") == source.count("first") + 2
    return changed


def test_an_accuracy_run_every_n_steps_evaluates_the_model_at_that_step_on_the_coordinator():
    code = migrated(with_loop()).source
    assert ("    if i % 5 == 0:\n"
            "      # Once the steps scheduled so far are done: the model evaluated is that of this step.\n"
            "      coordinator.join()\n"
            "      mse = evaluate_graph(batch_x, batch_y).numpy()\n"
            '      print("global step %d mse %g" % (int(optimizer.iterations), mse))\n'
            "    loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y))\n") in code
    assert "  def evaluate_graph(x, y):\n" in code and "    return loss\n" in code
    assert "sess." not in code and "eval_feed" not in code and "global_step(" not in code


def test_a_run_within_a_statement_is_the_tensor_evaluated_in_its_place():
    code = migrated(with_loop(EVERY_FIVE.replace(
        "        eval_feed = {x: batch_x, y: batch_y}\n"
        "        mse = sess.run(loss, feed_dict=eval_feed)\n", "").replace(
        "mse))", "sess.run(loss, {x: batch_x, y: batch_y})))"))).source
    assert ("      coordinator.join()\n"
            '      print("global step %d mse %g" % (int(optimizer.iterations), '
            "evaluate_graph(batch_x, batch_y).numpy()))\n") in code
    assert "sess." not in code


def test_a_value_made_in_the_graphs_block_from_no_tensor_is_made_before_the_graph():
    code = migrated(with_data_in_the_graph(PS_CLUSTER)).source
    assert ("  first = flags.task_index * BATCH_SIZE\n"
            "  if not (flags.task_index == 0):\n") in code
    assert code.count("first = ") == 1 and "next_batch(i + first)" in code


@pytest.mark.parametrize("made, why", [
    ("    first = tf1.size(x) * BATCH_SIZE\n", "a TensorFlow op"),
    ("    size = BATCH_SIZE\n    first = flags.task_index * size\n", "from a name the graph computes"),
], ids=["op", "graph name"])
def test_a_value_of_the_graphs_block_otherwise_stays_a_tensor_of_the_step(made, why):
    """(A guard: what the loop reads of the graph otherwise is still left, as before.)"""
    source = with_data_in_the_graph(PS_CLUSTER).replace("    first = flags.task_index * BATCH_SIZE\n", made)
    line, message = manual(source)
    assert "next_batch(i + first)" in line and "`first`, a tensor of the TF1 graph" in message, (why, message)


@pytest.mark.parametrize("loop, where, why", [
    (STEP, "while not sess.should_stop():", "run the session's train_op exactly once per step"),
    (EVERY_FIVE.replace("sess.run(loss,", "sess.run(train_op,"), "mse = sess.run(",
     "`train_op` in the loop: a tensor the graph computes is evaluated"),
    (EVERY_FIVE.replace("sess.run(loss,", "sess.run(x,"), "mse = sess.run(",
     "`x` in the loop: a tensor the graph computes is evaluated"),
    (EVERY_FIVE.replace("mse = sess.run(loss,", "mse, = sess.run([loss],"), "mse, = sess.run(",
     "in the loop, `value = sess.run(tensor, feed_dict=...)` is migrated"),
    (EVERY_FIVE.replace("eval_feed = {x: batch_x, y: batch_y}", "eval_feed = {x: batch_x}"),
     "eval_feed = {x: batch_x}", "feed_dict must feed every placeholder"),
    (EVERY_FIVE + "        print(sess.run(weights, feed_dict={x: batch_x, y: batch_y}))\n",
     "print(sess.run(weights", "`weights` in the loop: a tensor the graph computes is evaluated"),
    (EVERY_FIVE.replace("% (tf1.train.global_step(sess, global_step), mse)", "% (sess.run(global_step), mse)"),
     "print(", "`global_step` in the loop: a tensor the graph computes is evaluated"),
    (EVERY_FIVE + "        other_feed = {x: batch_x, y: batch_y}\n"
                  "        print(sess.run(loss, feed_dict=other_feed))\n",
     "print(sess.run(loss", "feed_dict must be a dict written in the run"),
    (EVERY_FIVE.replace("eval_feed = {x: batch_x, y: batch_y}", "eval_feed = {x: batch_x, y: sess.run(y)}"),
     "eval_feed = {x: batch_x, y: sess.run(y)}", "`y` in the loop: a tensor the graph computes is evaluated"),
    (EVERY_FIVE.replace("eval_feed = {x: batch_x, y: batch_y}", "eval_feed = {x: batch_x, y: sess.graph}"),
     "mse = sess.run(loss", "`sess` is used in the loop besides its runs"),
    (EVERY_FIVE + "        print(sess.run(loss, {x: batch_x, y: batch_y}), sess.graph)\n", "sess.graph)",
     "`sess` is used in the loop besides its runs"),
    (EVERY_FIVE + "        print(sess.run(loss, options=None, feed_dict={x: batch_x, y: batch_y}))\n",
     "print(sess.run(loss", "in the loop, `value = sess.run(tensor, feed_dict=...)` is migrated"),
], ids=["trains twice", "trains under an if", "an input", "a list fetched", "a placeholder not fed", "a variable run",
        "the global step run", "a held feed within a statement", "a run in a feed", "the session in a feed",
        "the session beside a run", "run options"])
def test_runs_in_the_loop_not_migrated_safely_are_left_with_the_reason(loop, where, why):
    line, message = manual(with_loop(loop))
    assert where in line and why in message, (line, message)


def test_two_tensors_evaluated_in_the_loop_are_left_with_the_reason():
    source = with_loop(EVERY_FIVE.replace(
        "        print(", "        out = sess.run(predictions, feed_dict={x: batch_x, y: batch_y})\n        print("))
    source = source.replace("    loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)\n",
                            "    predictions = tf1.matmul(x, weights) + bias\n"
                            "    loss = tf1.losses.mean_squared_error(y, predictions)\n")
    line, message = manual(source)
    assert "out = sess.run(predictions" in line and "evaluating different tensors" in message, (line, message)


def _evaluated(path: Path, tmp_path: Path) -> list[tuple[str, str]]:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TMPDIR"] = str(tmp_path)
    proc = subprocess.run([sys.executable, str(path), "--train_steps=12"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return re.findall(r"global step (\d+) mse (\S+)", proc.stdout)


@pytest.mark.tensorflow
def test_the_migrated_loop_evaluates_and_reads_the_global_step_as_tf1_did(tmp_path):
    """On the in-process cluster (1 ps, 1 worker), both from zero weights: every 5 steps the migrated program
    prints the global step and the loss of the model at that step that TF1 printed."""
    source = with_data_in_the_graph(with_loop()).replace(
        'tf1.get_variable("weights", [NUM_FEATURES, 1])',
        'tf1.get_variable("weights", [NUM_FEATURES, 1], initializer=tf1.zeros_initializer())')
    old, new = tmp_path / "tf1.py", tmp_path / "tf2.py"
    old.write_text(source)
    new.write_text(migrated(source).source)
    printed = [_evaluated(path, tmp_path) for path in (old, new)]
    assert [step for step, _ in printed[1]] == ["0", "5", "10"], printed
    assert printed[1] == printed[0], printed
