"""rewrites/estimator/explicit_graphs.py: code an Estimator program runs in a graph of its own (`with
graph.as_default():`, `with tf.Session(graph=graph):`) does not keep its module in TF1's graph mode: TF 2 runs those
blocks in graph mode as TF1 did (a notebook's word2vec vectors trained before its Estimator loads them)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import run

PROGRAM = '''\
import numpy as np
import tensorflow as tf

BATCH = 4
graph = tf.Graph()
with graph.as_default():
  inputs = tf.placeholder(tf.float32, [BATCH])
  weight = tf.Variable(tf.ones([]))
  loss = tf.reduce_mean(tf.square(inputs * weight - 1.0))
  step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
  init = tf.global_variables_initializer()
with tf.Session(graph=graph) as session:
  init.run()
  for _ in range(3):
    session.run(step, feed_dict={inputs: np.full([BATCH], 2.0)})
  learned = weight.eval()
print("learned %.7f" % learned)


def input_fn():
  return tf.data.Dataset.from_tensors(({"x": [[learned], [2.0]]}, [[1.0], [2.0]])).repeat()


estimator = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")])
estimator.train(input_fn, max_steps=2)
'''


def test_the_blocks_of_a_graph_of_its_own_stay_and_the_module_becomes_tf2():
    result = run(PROGRAM)
    assert any(finding.rule == "TFM301" for finding in result.findings), [f.message for f in result.findings]
    code = result.source
    assert "  inputs = tf.compat.v1.placeholder(tf.float32, [BATCH])\n" in code
    assert "with tf.compat.v1.Session(graph=graph) as session:\n" in code
    assert "disable_v2_behavior" not in code and "keras.Model(" in code


OUTSIDE = {
    "a session of the default graph": ("tf.Session(graph=graph)", "tf.Session()"),
    "a graph bound twice": ("graph = tf.Graph()\n", "graph = tf.Graph()\ngraph = tf.get_default_graph()\n"),
    "a placeholder outside the blocks": ('print("learned', 'extra = tf.placeholder(tf.float32)\nprint("learned'),
}


@pytest.mark.parametrize("edit", OUTSIDE.values(), ids=OUTSIDE)
def test_graph_mode_outside_such_blocks_still_leaves_the_program(edit):
    source = PROGRAM.replace(*edit)
    result = run(source)
    assert result.source == source
    assert any("still needs TF1's graph mode" in finding.message for finding in result.findings), \
        [finding.message for finding in result.findings]


@pytest.mark.tensorflow
def test_the_migrated_blocks_run_in_tf2_as_tf1_ran_them():
    """The blocks before the Estimator, TF1's in graph mode and the migration's in eager TF 2: the same weight
    learned."""
    tf1_part = PROGRAM[:PROGRAM.index("\n\ndef input_fn")]
    migrated = run(PROGRAM).source
    tf2_part = migrated[:migrated.index("\n\ndef input_fn")]
    tf1 = ("import tensorflow.compat.v1 as tf1, sys\ntf1.disable_v2_behavior()\nsys.modules['tensorflow'] = tf1\n"
           + tf1_part)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    printed = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
               for code in (tf1, tf2_part)]
    assert all(done.returncode == 0 for done in printed), [done.stderr[-2000:] for done in printed]
    assert printed[0].stdout == printed[1].stdout == "learned 0.5040000\n"
