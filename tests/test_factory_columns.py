"""Feature columns a factory computes from its parameters for the canned estimator it returns (the taxifare
trainers' build_estimator(model_dir, nbuckets, hidden_units)): the factory is kept, returning them, and the driver
builds the Keras model on them (rewrites/estimator/factory_columns.py). Parity: tests/test_parity.py."""

from __future__ import annotations

import re
from textwrap import dedent

import pytest
from test_estimator_programs import run_one

import rewrites.estimator.factory_columns as module

HEAD = '''import numpy as np
import tensorflow.compat.v1 as tf


def read_dataset():
  def _input_fn():
    features = {"pickuplat": np.random.uniform(38, 42, (64, 1)).astype(np.float32)}
    return tf.data.Dataset.from_tensor_slices((features, np.ones((64, 1), np.float32))).repeat().batch(16)
  return _input_fn


'''
DRIVER = '''  train_spec = tf.estimator.TrainSpec(input_fn=read_dataset(), max_steps=args["train_steps"])
  eval_spec = tf.estimator.EvalSpec(input_fn=read_dataset(), steps=2)
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
'''
DOC = module.__doc__
BEFORE = dedent(DOC[DOC.index("Before::\n") + len("Before::\n"):DOC.index("After::")]).strip("\n") + "\n"
PROGRAM = HEAD + BEFORE + DRIVER


def manual(result) -> list[str]:
    return [finding.message for finding in result.findings if finding.safety.value == "manual"]


def test_docstring_example_is_what_the_rewrite_does():
    """factory_columns.py's Before, driven, migrates to its After but for the lines the After elides."""
    result = run_one(PROGRAM)
    assert manual(result) == [], result.findings
    code = result.source
    after = dedent(DOC[DOC.index("After::\n") + len("After::\n"):])
    for part in re.split(r"^ *\.\.\.\n", after, flags=re.MULTILINE):
        for piece in filter(None, (piece.strip("\n") for piece in part.split("\n\n"))):
            assert piece in code, piece
            code = code[code.index(piece) + len(piece):]
    compile(result.source, "train.py", "exec")


def test_the_factory_goes_where_the_driver_can_compute_its_columns():
    source = PROGRAM.replace("np.linspace(38.0, 42.0, nbuckets)", "np.linspace(38.0, 42.0, 4)")
    code = run_one(source).source
    assert "def build_estimator" not in code and "feature_columns=[b_plat]" not in code
    assert "linear_feature_columns=wide_columns" not in code


@pytest.mark.parametrize("change, reason", [
    (("\n\ndef train_and_evaluate", "\n\ndef build_estimator_columns():\n  pass\n\n\ndef train_and_evaluate"),
     "keeps `build_estimator` as `build_estimator_columns`, a name already used"),
    (('  train_spec = ', '  print(build_estimator(None, 3, [4]))\n  train_spec = '),
     "`build_estimator()`, which made a piece of the Estimator, is also used here"),
], ids=["its new name taken", "called elsewhere"])
def test_a_factory_the_migration_cannot_keep_so_leaves_the_program(change, reason):
    result = run_one(PROGRAM.replace(*change))
    assert any(reason in message for message in manual(result)), result.findings
    assert result.source == PROGRAM.replace(*change)
