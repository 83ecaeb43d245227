"""Rules switch the rewrite itself: what --select / --ignore leave off is not done, and a program that needs it
stays as it is, saying which rule it needed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import ALL_RULES, run
from migrator.config import enabled_rules
from migrator.engine import migrate_group, program_groups
from migrator.findings import FileError
from migrator.scanning import families_for
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


# -- --select / --ignore over every rule id and prefix -------------------------------------------------------

SHAPES = sorted(str(path) for folder in ("examples", "tests/parity_programs") for path in Path(folder).rglob("*.py"))
SELECTORS = sorted({prefix for rule in RULES for prefix in (rule, rule[:4], rule[:5])})


def test_every_change_says_why_whatever_rules_are_on():
    """For each `--select X` and `--ignore X`, X every rule id and prefix, over examples/ and the parity programs:
    every changed file has a finding, and every finding's rule is on. A group's result depends only on the rules
    of the families its files wake, so each group runs once per distinct set of those that are on."""
    texts = {path: Path(path).read_text() for path in SHAPES}
    groups = program_groups(texts, ALL_RULES)
    relevant = [frozenset(rule.id for path in group for family in families_for(texts[path], ALL_RULES)
                          for rule in family.rules) for group in groups]
    seen, problems = set(), []
    for selector in SELECTORS:
        for enabled in (enabled_rules([selector], []), enabled_rules(["ALL"], [selector])):
            for group, rules in zip(groups, relevant):
                if (tuple(group), enabled & rules) in seen:
                    continue
                seen.add((tuple(group), enabled & rules))
                for path, result in migrate_group({path: texts[path] for path in group}, enabled).items():
                    assert not isinstance(result, FileError), result.format()
                    changed = result.source != texts[path]
                    if changed and not result.findings or any(f.rule not in enabled for f in result.findings):
                        problems.append((sorted(enabled), path, changed, [f.rule for f in result.findings]))
    assert not problems, problems[:3]
    assert len(seen) > len(groups) * 2


PS_CLUSTER = (Path(__file__).resolve().parent.parent / "examples" / "ps_cluster" / "train.py").read_text()


def test_between_graph_program_with_tfm103_off_is_left_and_reported():
    result = run(PS_CLUSTER, enabled=frozenset({"TFM104"}))
    assert result.source == PS_CLUSTER
    [finding] = result.findings
    assert finding.rule == "TFM104" and "TFM103 (between-graph-program) is switched off" in finding.message


def test_a_between_graph_program_needing_a_rule_that_is_off_stays_as_it_is_and_names_it():
    assert "TFM108" in {finding.rule for finding in run(PS_CLUSTER).findings}
    result = run(PS_CLUSTER, enabled=ALL_RULES - {"TFM108", "TFM107", "TFM101", "TFM102"})
    assert result.source == PS_CLUSTER
    [finding] = result.findings
    assert finding.rule == "TFM104" and "it needs TFM108 (between-graph-checkpoints), which is switched off" \
        in finding.message


def test_a_change_no_finding_explains_is_an_internal_error(monkeypatch):
    """The engine's net: a family that changes a file without a finding of a rule that is on leaves it as it was."""
    from rewrites.base import TFCodemod

    source = "import tensorflow.compat.v1 as tf1\n\nserver = tf1.train.Server(cluster)\n"
    monkeypatch.setattr(TFCodemod, "report", lambda self, rule_id, node, message: None)
    result = migrate_group({"a.py": source}, ALL_RULES)["a.py"]
    assert isinstance(result, FileError)
    assert result.message == ("internal error in rewrite 'servers': it changed the file without an exact or numeric "
                              "finding of a rule that is on; file left unchanged")
