"""`tf` in a migrated module is TF2, however the TF1 program bound it (rewrites/program/spelling.py).

One Estimator program, with helpers that keep TF1 APIs, under every way real programs bind
``tf``: what stays is respelled to the TF2 name of the same object, the switch to graph mode
goes, and nothing new is invented (no ``tf2`` / ``tf1`` alias).
"""

from __future__ import annotations

import re

import pytest

from test_estimator_programs import rules, run_one

PROGRAM = '''\
IMPORTS
import argparse

DEFAULTS = [[0.0], [0.0]]


def read_rows(path):
  tf.logging.info("reading %s", path)
  with tf.gfile.Open(path) as lines:
    return [line for line in lines]


def parse_line(line):
  x, y = tf.decode_csv(line, record_defaults=DEFAULTS)
  return {"x": tf.reshape(x, [1])}, tf.reshape(y, [1])


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices(["1,2", "3,4"]).map(parse_line).repeat().batch(2)


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features["x"], 1, activation=tf.nn.relu)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
  estimator.train(train_input_fn, max_steps=10)


if __name__ == "__main__":
  main()
'''

# What the helpers the migration keeps read as, once `tf` is TF2.
KEPT = '''\
def read_rows(path):
  tf.compat.v1.logging.info("reading %s", path)
  with tf.io.gfile.GFile(path) as lines:
    return [line for line in lines]


def parse_line(line):
  x, y = tf.compat.v1.decode_csv(line, record_defaults=DEFAULTS)
  return {"x": tf.reshape(x, [1])}, tf.reshape(y, [1])


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices(["1,2", "3,4"]).map(parse_line).repeat().batch(2)
'''

TF1_BINDINGS = {
    "compat.v1 alias": "import tensorflow.compat.v1 as tf",
    "compat.v1 alias in graph mode": "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()",
    "compat.v1 alias, eager switched off": "import tensorflow.compat.v1 as tf\ntf.compat.v1.disable_eager_execution()",
    "from tensorflow.compat": "from tensorflow.compat import v1 as tf",
    "reassigned": "import tensorflow as tf\ntf = tf.compat.v1",
    "reassigned by version": "import tensorflow as tf\nif tf.__version__.startswith('2'):\n  tf = tf.compat.v1",
    "reassigned by version, else": "import tensorflow as tf\nif tf.__version__ >= '2':\n  tf = tf.compat.v1\n"
                                   "else:\n  pass",
    "imported by version": "try:\n  import tensorflow.compat.v1 as tf\nexcept ImportError:\n  import tensorflow as tf",
    "TF 1.x era": "import tensorflow as tf",
}


def migrate(imports: str):
    return run_one(PROGRAM.replace("IMPORTS\n", imports + "\n"))


def migrate_program(program: str):
    result = run_one(program)
    assert "TFM302" not in rules(result), result.findings
    return result


@pytest.mark.parametrize("imports", TF1_BINDINGS.values(), ids=TF1_BINDINGS.keys())
def test_every_tf1_binding_of_tf_becomes_tf2_imported_as_tf(imports):
    result = migrate(imports)
    code = result.source
    assert rules(result) == ["TFM301"]
    assert code.startswith("import tensorflow as tf\n")
    assert code.count("import tensorflow") == 1
    for gone in ("compat.v1 as tf", "import v1 as tf", "tf = tf.compat.v1", "__version__", "ImportError",
                 "disable_v2_behavior", "disable_eager_execution", "pass\n"):
        assert gone not in code
    assert KEPT in code
    # The generated code is TF2 under its usual name: no alias of our own.
    assert not re.search(r"\btf[12]\.|as tf[12]\b", code)
    compile(code, "train.py", "exec")


def test_blank_lines_around_a_replaced_try_block_stay():
    code = migrate(TF1_BINDINGS["imported by version"].join(["import os\n\n", "\n"])).source
    assert code.startswith("import os\n\nimport tensorflow as tf\n")


def test_a_tf1_alias_of_another_name_stays_beside_tf():
    code = migrate("import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\nreadme = tf1.gfile.Exists").source
    assert "import tensorflow.compat.v1 as tf1\n" in code and "readme = tf1.gfile.Exists\n" in code
    assert KEPT in code


def test_a_tf2_alias_folds_into_tf():
    """The program's own `import tensorflow as tf2` beside a compat.v1 `tf`, and the one TFM201-203 add
    there for a partitioner that moves onto the strategy: once `tf` is TF2, one name is enough."""
    program = PROGRAM.replace("IMPORTS\n", "import tensorflow.compat.v1 as tf\nimport tensorflow as tf2\n").replace(
        '  logits = tf.layers.dense(features["x"], 1, activation=tf.nn.relu)\n',
        '  partitioner = tf.fixed_size_partitioner(2)\n'
        '  with tf.variable_scope("linear", partitioner=partitioner):\n'
        '    logits = tf.layers.dense(features["x"], 1)\n').replace('{"x": tf.reshape(', '{"x": tf2.reshape(')
    code = migrate_program(program).source
    assert not re.search(r"\btf2\.|as tf2\b", code), code
    assert KEPT in code
    assert "variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)" in code
    compile(code, "train.py", "exec")


def test_tf_bound_to_something_else_leaves_the_program_and_says_why():
    program = PROGRAM.replace("tf.", "tf1.").replace("IMPORTS\n", "import tensorflow.compat.v1 as tf1\n"
                                                                   "from plotting import figure_tools as tf\n")
    result = run_one(program)
    assert result.source == program
    [finding] = result.findings
    assert finding.rule == "TFM302"
    assert "needs `tf` for TensorFlow 2, which this module binds in `from plotting import figure_tools as tf`" \
        in finding.message
    assert finding.line == 2


def test_graph_mode_code_the_migration_keeps_leaves_the_program_and_says_where():
    program = PROGRAM.replace("IMPORTS\n", "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n") + '''

def count_rows(path):
  with tf.Session() as session:
    return session.run(tf.size(read_rows(path)))
'''
    result = run_one(program)
    assert result.source == program
    [finding] = result.findings
    assert finding.rule == "TFM302" and "`tf.Session` still needs TF1's graph mode" in finding.message
    assert finding.line == program.splitlines().index("  with tf.Session() as session:") + 1
