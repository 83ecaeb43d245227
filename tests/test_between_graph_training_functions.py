"""TFM103 where a function of the module makes the optimizer and the global step and returns `optimizer.minimize(
loss, global_step=...)` (`train_op = training(loss, rate)`, the TF1 tutorials' MNIST `training`), and where the
session reads the global step back from the graph with a function of the module (`get_global_step(sess.graph)`,
tensorflow/ecosystem's YARN trainer): training_functions.py, runs.global_step_reads."""

from __future__ import annotations

import pytest
from helpers import run
from test_between_graph_calls import manual, program

TRAINING = ("def training(loss, learning_rate):\n"
            "  \"\"\"A gradient-descent step on the loss, advancing a step counter of its own.\"\"\"\n"
            "  tf1.summary.scalar(\"loss\", loss)\n"
            "  optimizer = tf1.train.GradientDescentOptimizer(learning_rate)\n"
            "  global_step = tf1.Variable(0, name=\"global_step\", trainable=False)\n"
            "  train_op = optimizer.minimize(loss, global_step=global_step)\n"
            "  return train_op\n")
# Reads the step back as tf.train.get_global_step did: the graph's GLOBAL_STEP collection, else its tensor.
STEP_READER = ("def step_of(graph=None):\n"
               "  graph = ops.get_default_graph() if graph is None else graph\n"
               "  found = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)\n"
               "  if len(found) == 1:\n    return found[0]\n"
               "  try:\n    return graph.get_tensor_by_name(\"global_step:0\")\n"
               "  except KeyError:\n    return None\n")
GRAPH_STEP = ("    global_step = tf1.train.get_or_create_global_step()\n\n", "\n")
OPTIMIZER = ("    optimizer = tf1.train.GradientDescentOptimizer(0.1)\n"
             "    train_op = optimizer.minimize(loss, global_step=global_step)\n",
             "    train_op = training(loss, RATE)\n")
RUN = ("      _, step, loss_value = sess.run(\n          [train_op, global_step, loss], "
       "feed_dict={x: batch_x, y: batch_y})\n")
LOSS = "    loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)\n"


def trainer(functions: str = TRAINING, call: str = OPTIMIZER[1], fetched: str = "step_op",
            reads: str = "    step_op = step_of(sess.graph)\n") -> str:
    """ps_cluster's program whose train_op ``functions`` make (``call`` in the graph), its session reading the
    step back as ``fetched`` (bound by ``reads``)."""
    source = program("from tensorflow.python.framework import ops\n\nRATE = 0.1\n\n\n" + functions
                     + "\n\n" + STEP_READER, LOSS)
    assert all(source.count(old) == 1 for old, _ in (GRAPH_STEP, OPTIMIZER)) and source.count(RUN) == 1
    source = source.replace(*GRAPH_STEP).replace(OPTIMIZER[0], call)
    return source.replace("    i = 0\n", reads + "    i = 0\n").replace(RUN, RUN.replace("global_step,", f"{fetched},"))


def test_a_training_function_s_optimizer_is_made_with_the_graph_s_arguments_and_the_function_goes():
    result = run(trainer())
    code = result.source
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert run(code).source == code, "a second run changes nothing"
    assert "optimizer = keras.optimizers.legacy.SGD(learning_rate=RATE)\n" in code, code
    assert "def training(" not in code and "training(loss" not in code
    assert "optimizer.apply_gradients(" in code
    # The step read back from the graph is the optimizer's: that function and its reading go too.
    assert "def step_of(" not in code and "step_op" not in code and "ops" not in code, code
    assert "_, step, loss_value = " not in code and "step = scheduled_steps\n" in code, code
    (summaries,) = [f for f in result.findings if f.rule == "TFM109"]
    assert summaries.line == trainer().splitlines().index('  tf1.summary.scalar("loss", loss)') + 1


def test_tf1_s_global_step_function_in_the_session_is_the_optimizer_s_step_too():
    code = run(trainer(reads="    step_op = tf1.train.get_global_step()\n")).source
    assert "step = scheduled_steps\n" in code and "get_global_step" not in code, code


@pytest.mark.parametrize("functions, call, line, message", [
    (TRAINING.replace("  return train_op\n", "  tf1.add_to_collection(\"train\", train_op)\n  return train_op\n"),
     OPTIMIZER[1], 'tf1.add_to_collection("train", train_op)',
     "`training(loss, RATE)` in the graph makes the optimizer in `training`: `tf1.add_to_collection(\"train\", "
     "train_op)` there; the optimizer, the global step, summaries and `return optimizer.minimize(loss, "
     "global_step=...)` are migrated"),
    (TRAINING, OPTIMIZER[1] + "    other_op = training(loss, RATE)\n", "train_op = training(loss, RATE)",
     "a function the module names elsewhere too"),
    (TRAINING, "    train_op = training(loss, loss)\n", "train_op = training(loss, loss)",
     "its `learning_rate` a tensor of the graph (`loss`)"),
    (TRAINING.replace("loss, global_step=global_step)", "loss, global_step=global_step, var_list=[weights])"),
     OPTIMIZER[1], "train_op = optimizer.minimize(loss, global_step=global_step, var_list=[weights])",
     "minimize(loss, global_step=...) of a loss the graph names, over every variable"),
])
def test_a_training_function_in_another_shape_leaves_the_program(functions, call, line, message):
    where, said = manual(trainer(functions, call))
    assert where == line and message in said, (where, said)


@pytest.mark.tensorflow
def test_a_training_function_s_program_trains_like_the_tf1_program(tmp_path):
    from test_parity import assert_parity, parity

    # (the harness runs TF1's program with resource variables, whose `global_step` TF1's hooks refuse to read)
    functions = TRAINING.replace('tf1.Variable(0, name="global_step", trainable=False)',
                                 "tf1.train.get_or_create_global_step()")
    fetched = "      _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})\n      step = i\n"
    source = trainer(functions, fetched="global_step", reads="").replace(RUN, fetched)
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(source)
    new.write_text(run(source).source)
    assert "TFM104" not in {f.rule for f in run(source).findings}
    assert_parity(parity(old, new, "--steps", "5"))
