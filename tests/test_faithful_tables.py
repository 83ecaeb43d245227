"""Tier 2 (rewrites/estimator/faithful_tables.py): the embedding tables a model_fn kept as written partitions are made
by the generated Keras model, sharded by the strategy as TF1's partitioner split them; the rest stays whole in the
shim. examples/recommender is the program: tests/test_examples.py trains it, tests/test_resume.py resumes it from
its TF1 checkpoint with parity; here the migration's forms, its refusals, and the shards on the ps tasks."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "examples" / "recommender" / "train.py"
MIGRATED = ROOT / "examples" / "recommender" / "train_tf2.py"
CLUSTER = Path(__file__).resolve().parent / "in_process_cluster.py"
SCOPE = '  with tf.variable_scope(\n      "embeddings", partitioner=tf.fixed_size_partitioner(2)):\n'
USER_LOOKUP = '  user_vectors = tf.nn.embedding_lookup(users, features["user"])\n'


def migrated(source: str) -> str:
    return run(source).source


def test_the_partitioned_tables_are_made_by_keras_and_looked_up_in_tf2s_order():
    code = migrated(PROGRAM.read_text())
    # The model_fn's own code stays: its scope, partitioner and get_variable calls.
    assert 'with tf.compat.v1.variable_scope(\n      "embeddings", partitioner=' in code
    assert 'users = tf.compat.v1.get_variable("users", [NUM_USERS, params["dimension"]],' in code
    # Its lookups read "div", a shard after another, whatever the table's shards.
    assert 'user_vectors = tf.nn.embedding_lookup(users, features["user"])' in code
    assert "compat.v1.nn.embedding_lookup" not in code
    # The generated model's custom getter makes them, the strategy shards them (and only them).
    assert "custom_getter=self.tf1_variable" in code and "TF1Partitioner.tf1_partitioner = partitioner" in code
    assert "variable_partitioner=TF1Partitioner())" in code
    # TF1's checkpoints fit: the tables by TF1's name, whole, their rows put in TF2's order.
    assert "**model.tables}" in code and "mod_tables = [*model.tables]" in code


FORMS = {
    "get_variable's own partitioner": (
        SCOPE, '  with tf.variable_scope("embeddings"):\n',
        '    users = tf.get_variable("users", [NUM_USERS, params["dimension"]],\n',
        '    users = tf.get_variable("users", [NUM_USERS, params["dimension"]], '
        'partitioner=tf.fixed_size_partitioner(2),\n'),
    "lookups \"div\"": (USER_LOOKUP, USER_LOOKUP.replace('features["user"])', 'features["user"], "div")'),
                        '(items, features["item"])', '(items, features["item"], partition_strategy="div")'),
    "a lookup named": (USER_LOOKUP, USER_LOOKUP.replace('features["user"])', 'features["user"], name="users")')),
}


@pytest.mark.parametrize("edits", FORMS.values(), ids=FORMS)
def test_other_forms_of_tables_migrate_too(edits):
    source = PROGRAM.read_text()
    for before, after in zip(edits[::2], edits[1::2]):
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    result = run(source)
    assert "custom_getter=self.tf1_variable" in result.source, [f.message for f in result.findings]
    assert 'user_vectors = tf.nn.embedding_lookup(users, features["user"]' in result.source


REFUSED = {
    "a table read by a matmul": (
        "  affinity = tf.reduce_sum(user_vectors * item_vectors, axis=1)\n",
        "  affinity = tf.reduce_sum(tf.matmul(user_vectors, items, transpose_b=True), axis=1)\n",
        "`items`, a partitioned table, read other than by `tf.nn.embedding_lookup`"),
    "a layer in a partitioned scope": (
        SCOPE, SCOPE + '    extra = tf.layers.dense(tf.ones([1, 2]), 2)\n',
        "anything but `name = tf.get_variable(...)` in a partitioned variable scope"),
    "a lookup validating its indices": (
        USER_LOOKUP, USER_LOOKUP.replace('features["user"])', 'features["user"], validate_indices=False)'),
        "a lookup of a partitioned table with arguments other than its ids, name and max_norm"),
    "mod and div lookups": (
        USER_LOOKUP, USER_LOOKUP.replace('features["user"])', 'features["user"], partition_strategy="div")'),
        "tables looked up \"mod\" and \"div\" both"),
    "a partitioner bound to a name": (
        SCOPE, '  partitioner = tf.fixed_size_partitioner(2)\n' + SCOPE.replace("tf.fixed_size_partitioner(2)",
                                                                                  "partitioner"),
        "a partitioned variable other than an embedding table made by `get_variable`"),
}


@pytest.mark.parametrize("before, after, message", REFUSED.values(), ids=REFUSED)
def test_what_the_shim_could_not_hold_leaves_the_program_saying_why(before, after, message):
    source = PROGRAM.read_text()
    assert source.count(before) == 1
    source = source.replace(before, after)
    result = run(source)
    assert "ModelFnModel" not in result.source
    problems = [f.message for f in result.findings if f.rule == "TFM302"]
    assert any(message in problem for problem in problems), problems


def test_a_partitioner_in_a_helper_module_leaves_the_program(tmp_path, cli):
    """A helper the kept model_fn calls would hand the shim a partitioner, which TF2 refuses."""
    source = PROGRAM.read_text()
    (tmp_path / "train.py").write_text(source.replace("import numpy as np\n", "import layers\nimport numpy as np\n")
                                       .replace(USER_LOOKUP, USER_LOOKUP + "  user_vectors = layers.wide(user_vectors)\n"))
    (tmp_path / "layers.py").write_text(
        "import tensorflow.compat.v1 as tf\n\n\ndef wide(net):\n"
        "  with tf.variable_scope('wide', partitioner=tf.fixed_size_partitioner(2)):\n"
        "    return tf.layers.dense(net, 4)\n")
    code, out, _ = cli(".")
    assert code == 1 and "ModelFnModel" not in (tmp_path / "train.py").read_text()
    assert "layers.py:5:" in out and "a partitioned variable outside the model_fn kept as written" in out


PROBE = """
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("recommender", sys.argv[1])
program = importlib.util.module_from_spec(spec)
spec.loader.exec_module(program)
_, strategy = program.strategy_for_this_task()
with strategy.scope():
    model = program.build_model(program.train_input_fn(), params={"dimension": 4, "learning_rate": 0.5})
tables = {id(shard) for table in model.tables.values() for shard in table.variables}
for name, table in sorted(model.tables.items()):
    print("table", name, [(shard.shape[0], shard.device.split("/device")[0]) for shard in table.variables])
for variable in model.trainable_weights:
    if id(variable) not in tables:
        print("whole", variable.name, type(variable).__name__)
"""


@pytest.mark.tensorflow
@pytest.mark.skipif(importlib.util.find_spec("portpicker") is None, reason="needs the parity extra")
def test_on_a_cluster_the_tables_are_sharded_over_the_ps_tasks_and_nothing_else_is(tmp_path):
    """The migrated recommender as the chief of 1 worker and 2 ps: each table in 2 shards of TF1's sizes (6 and 6
    rows of 12 users, 8 and 8 of 16 items), one on each ps task; the shim's variables whole."""
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    result = subprocess.run([sys.executable, str(CLUSTER), str(probe), str(MIGRATED)], capture_output=True,
                            text=True, env=env, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    tables = [line for line in lines if line.startswith("table ")]
    assert len(tables) == 2, result.stdout
    for line, rows in zip(tables, (8, 6)):  # items, users
        shards = eval(line.split(" ", 2)[2])
        assert [size for size, _ in shards] == [rows, rows]
        assert sorted(device for _, device in shards) == ["/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1"]
    whole = [line for line in lines if line.startswith("whole ")]
    assert len(whole) == 4 and not any("part_" in line for line in whole), whole
