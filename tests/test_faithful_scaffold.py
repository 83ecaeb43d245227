"""Tier 2 (rewrites/estimator/faithful_scaffold.py): a variable made from a placeholder that the EstimatorSpec's
Scaffold feeds (pretrained embeddings, as training-data-analyst's question-answering notebooks load them) is made by
get_variable, its initializer the value fed. tests/parity_programs/scaffold_embeddings_tf1.py is the program: here
its migration, the docstring's example, the refusals, and (TensorFlow) parity, the value the migrated program starts
from on its own, and a frozen table."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import check_left, run

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "parity_programs" / "scaffold_embeddings_tf1.py"
VARIABLE = ('  embeddings_variable = tf.Variable(initial_value=embeddings_placeholder, trainable=True, '
            'name="embedding_variable",\n')
SCAFFOLD = "scaffold=tf.train.Scaffold(init_feed_dict={embeddings_placeholder: PRETRAINED})"
LOOKUP = '  words = tf.nn.embedding_lookup(params=embeddings_variable, ids=features["words"])\n'


def edited(*edits: str) -> str:
    source = PROGRAM.read_text()
    for before, after in zip(edits[::2], edits[1::2]):
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    return source


def flat(code: str) -> str:
    return re.sub(r"\s+", "", code)


def test_the_fed_variable_is_made_by_get_variable_from_the_value_fed():
    result = run(PROGRAM.read_text())
    code = result.source
    assert flat('embeddings_variable = tf.compat.v1.get_variable("embedding_variable", shape=[VOCABULARY, DIMENSION], '
                'dtype=tf.float64, initializer=tf.compat.v1.constant_initializer(PRETRAINED), trainable=True)') \
        in flat(code), code
    model_fn = code[code.index("def model_fn"):code.index("class ModelFnModel")]
    assert "placeholder" not in model_fn and "Scaffold" not in model_fn and "tf.Variable" not in model_fn
    assert 'return {"loss": loss}' in model_fn
    notes = [f.message for f in result.findings if f.rule == "TFM310"]
    assert any("starts from the value the Scaffold fed `embeddings_placeholder` (`PRETRAINED`)" in note
               for note in notes), notes


DOCSTRING = '''\
import numpy as np
import tensorflow as tf

VOCABULARY, DIMENSION = 5, 3
MATRIX = np.ones([VOCABULARY, DIMENSION])


def model_fn(features, labels, mode, params):
  embeddings_placeholder = tf.placeholder(tf.float64, [VOCABULARY, DIMENSION], name="embedding_placeholder")
  embeddings = tf.Variable(embeddings_placeholder, trainable=False, name="embeddings", dtype=tf.float64)
  logits = tf.layers.dense(tf.reduce_mean(tf.nn.embedding_lookup(embeddings, features["words"]), axis=1), 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    scaffold=tf.train.Scaffold(init_feed_dict={embeddings_placeholder: MATRIX}))


def input_fn():
  return tf.data.Dataset.from_tensors(({"words": [[1, 2]]}, [[1.0]])).repeat()


tf.estimator.Estimator(model_fn).train(input_fn, max_steps=3)
'''


def test_the_docstring_example():
    code = run(DOCSTRING).source
    assert flat('embeddings = tf.compat.v1.get_variable("embeddings", shape=[VOCABULARY, DIMENSION], '
                'dtype=tf.float64, initializer=tf.compat.v1.constant_initializer(MATRIX), trainable=False)') \
        in flat(code), code
    assert 'return {"loss": loss}' in code and "tf.placeholder" not in code


def test_a_placeholder_dtype_and_default_name_are_tf1s():
    """tf.Variable takes the placeholder's dtype unless given one; unnamed, TF1 named it `Variable`."""
    code = run(edited(VARIABLE, "  embeddings_variable = tf.Variable(embeddings_placeholder,\n",
                      '                                    dtype=tf.float64, expected_shape=[VOCABULARY, DIMENSION])',
                      ")")).source
    assert flat('tf.compat.v1.get_variable("Variable", shape=[VOCABULARY, DIMENSION], dtype=tf.float64, '
                'initializer=tf.compat.v1.constant_initializer(PRETRAINED))') in flat(code), code


EVAL_SPEC = ("  if mode == tf.estimator.ModeKeys.EVAL:\n"
             "    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, {})\n")


def test_each_spec_may_feed_the_same_value():
    two = edited("  return tf.estimator.EstimatorSpec(",
                 EVAL_SPEC.format(SCAFFOLD) + "  return tf.estimator.EstimatorSpec(")
    code = run(two).source
    model_fn = code[code.index("def model_fn"):code.index("class ModelFnModel")]
    assert model_fn.count("tf.compat.v1.get_variable(") == 1 and "Scaffold" not in model_fn, code
    assert model_fn.count('return {"loss": loss}') == 2, model_fn


REFUSED = {
    "an init_fn": (SCAFFOLD, SCAFFOLD.replace(")", ", init_fn=load)"),
                   "Scaffold(init_fn=...) in a model_fn kept as written (tier 2) is not migrated"),
    "a saver": (SCAFFOLD, SCAFFOLD.replace(")", ", saver=tf.train.Saver())"),
                "Scaffold(saver=...) in a model_fn kept as written (tier 2) is not migrated"),
    "a feed held in a name": (SCAFFOLD, "scaffold=tf.train.Scaffold(init_feed_dict=FEED)",
                              "a Scaffold's init_feed_dict other than a dict written there"),
    "a scaffold made elsewhere": (SCAFFOLD, "scaffold=make_scaffold()",
                                  "`make_scaffold()` as the EstimatorSpec's scaffold"),
    "a placeholder read otherwise": (
        LOOKUP, LOOKUP + "  words += tf.reduce_sum(embeddings_placeholder)\n",
        "`embeddings_placeholder`, a placeholder fed by a Scaffold, read other than as the initial value of one"),
    "a variable made in a scope": (
        VARIABLE, '  with tf.variable_scope("pretrained"):\n  ' + VARIABLE,
        "read other than as the initial value of one `tf.Variable` made in the model_fn's body"),
    "a variable of other collections": (
        'name="embedding_variable",\n', 'name="embedding_variable", collections=["mine"],\n',
        "read other than as the initial value of one `tf.Variable`"),
    "a shape not known": ("shape=[VOCABULARY, DIMENSION],\n", "shape=[None, DIMENSION],\n",
                          "a placeholder of a shape not written out whole"),
    "a value the model_fn computes": (
        SCAFFOLD, "scaffold=tf.train.Scaffold(init_feed_dict={embeddings_placeholder: PRETRAINED * loss})",
        "reads `loss`, which the model_fn computes"),
    "two specs feeding different values": (
        "  return tf.estimator.EstimatorSpec(",
        EVAL_SPEC.format(SCAFFOLD.replace("PRETRAINED", "2 * PRETRAINED")) + "  return tf.estimator.EstimatorSpec(",
        "fed different values by the Scaffolds of two EstimatorSpecs"),
}


@pytest.mark.parametrize("edit", REFUSED.values(), ids=REFUSED)
def test_what_is_not_migrated_is_left_with_a_finding(edit):
    check_left(edited(*edit[:2]), edit[2])


TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")
# The migrated program's own start, without the parity harness (which copies TF1's initial weights): its table
# holds the fed matrix; after three steps it has changed or not, as it is trainable or not.
OWN_START = '''
import runpy, sys
import numpy as np
module = runpy.run_path(sys.argv[1])
dataset = module["input_fn"]()
model = module["build_model"](dataset, params={"hidden_units": [8, 4], "learning_rate": 0.05})
table = {variable.name: variable for variable in model.weights}["embedding_variable:0"]
start = table.numpy()
model.fit(dataset, epochs=1, steps_per_epoch=3, verbose=0)
print(table.trainable, table.dtype.name, np.array_equal(start, module["PRETRAINED"]),
      np.array_equal(table.numpy(), start))
'''


def migrated_copy(source: str, folder: Path) -> Path:
    new = folder / "train.py"
    new.write_text(source)
    migrated = subprocess.run([TF_MIGRATE, str(new)], capture_output=True, text=True)
    assert migrated.returncode == 0 and migrated.stdout.count(" TFM310 ") == 2, migrated.stdout + migrated.stderr
    return new


def own_start(program: Path) -> str:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    ran = subprocess.run([sys.executable, "-c", OWN_START, str(program)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr[-4000:]
    return ran.stdout.strip().splitlines()[-1]


@pytest.mark.tensorflow
def test_the_migration_trains_as_tf1_from_the_matrix_fed(tmp_path):
    from test_parity import assert_parity, parity

    (tmp_path / "new").mkdir()
    new = migrated_copy(PROGRAM.read_text(), tmp_path / "new")
    result = parity(PROGRAM, new, "--steps", "20", tmpdir=tmp_path)
    assert_parity(result)
    assert re.match(r"PARITY: 20 steps match .*, eval loss matches, 7 variables match", result.stdout), result.stdout
    assert own_start(new) == "True float64 True False"


@pytest.mark.tensorflow
def test_a_frozen_table_starts_from_the_matrix_fed_and_stays(tmp_path):
    new = migrated_copy(edited("trainable=True", "trainable=False"), tmp_path)
    assert own_start(new) == "False float64 True True"
