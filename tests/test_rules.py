"""Rules switch the rewrite itself: what --select / --ignore leave off is not done, and a program that needs it
stays as it is, saying which rule it needed."""

from __future__ import annotations

import re

import pytest

from helpers import ALL_RULES, run
from rewrites import FAMILIES, RULES
from test_estimator import SEED


def test_every_rule_belongs_to_exactly_one_family():
    ids = [rule.id for family in FAMILIES for rule in family.rules]
    assert len(ids) == len(set(ids)) == len(RULES)
    assert all(re.fullmatch(r"TFM\d{3}", rule) for rule in ids)


def test_estimator_program_with_tfm301_off_is_left_and_reported():
    result = run(SEED, enabled=ALL_RULES - {"TFM301"})
    assert result.source == SEED
    [finding] = result.findings
    assert finding.rule == "TFM302" and "TFM301 (estimator-program) is switched off" in finding.message
    assert "train_and_evaluate" in SEED.splitlines()[finding.line - 1]


def test_estimator_program_with_tfm301_and_tfm302_off_is_not_touched():
    result = run(SEED, enabled=ALL_RULES - {"TFM301", "TFM302"})
    assert result.source == SEED and not result.findings


MOMENTUM = SEED.replace("tf1.train.AdagradOptimizer(0.05)", "tf1.train.MomentumOptimizer(learning_rate, 0.9)").replace(
    "model_dir = tempfile.mkdtemp()", "model_dir = tempfile.mkdtemp()\nlearning_rate = 0.1")


@pytest.mark.parametrize("rule, source", [("TFM303", SEED), ("TFM401", MOMENTUM)], ids=["eval steps", "momentum"])
def test_a_program_needing_a_rule_that_is_off_stays_as_it_is_and_names_it(rule, source):
    assert rule in {finding.rule for finding in run(source).findings}
    result = run(source, enabled=ALL_RULES - {rule})
    assert result.source == source
    [finding] = result.findings
    assert finding.rule == "TFM302" and f"it needs {rule} ({RULES[rule].name}), which is switched off" \
        in finding.message


NUMPY_PROGRAM = SEED.replace(
    "def _input_fn():\n  return tf1.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(1)\n",
    "_input_fn = tf1.estimator.inputs.numpy_input_fn(\n    x, y, batch_size=1, num_epochs=None, shuffle=False)\n"
).replace("labels = [[0.3], [0.5], [0.7]]\n", "labels = [[0.3], [0.5], [0.7]]\nx, y = np.array(features), np.array(labels)\n"
          ).replace("import tempfile\n", "import tempfile\n\nimport numpy as np\n")


def test_numpy_input_program_migrates_through_tfm306():
    assert NUMPY_PROGRAM != SEED
    result = run(NUMPY_PROGRAM)
    assert {"TFM306", "TFM301"} <= {finding.rule for finding in result.findings}
    assert "numpy_input_fn" not in result.source


def test_numpy_input_program_with_tfm306_off_stays_as_it_is_and_says_why():
    result = run(NUMPY_PROGRAM, enabled=ALL_RULES - {"TFM306"})
    assert result.source == NUMPY_PROGRAM
    [finding] = [f for f in result.findings if f.rule == "TFM302"]
    assert "numpy_input_fn: TFM306/TFM307 turn it into a tf.data input_fn first" in finding.message
