"""The documentation says what the code does."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rewrites import FAMILIES, RULES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


@pytest.mark.parametrize("rule", RULES.values(), ids=lambda rule: rule.id)
def test_readme_rule_table_matches_the_catalogue(rule):
    assert re.search(rf"^\| {rule.id} \| {rule.safety} \| {rule.name} \|", README, re.MULTILINE)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.module)
def test_every_rewrite_documents_its_rules_with_a_before_and_after(family):
    doc = family.documentation()
    assert "Before::" in doc and "After::" in doc
    for rule in family.rules:
        assert rule.id in doc


def test_ci_runs_the_readme_test_command():
    """.ci/run takes its command from the README, so the two cannot drift apart."""
    block = README.split("<!-- test-command -->")[1].split("<!-- /test-command -->")[0]
    command = next(line for line in block.splitlines() if line.startswith("python3 "))
    assert "pytest" in command and ".[test,parity]" in command
    printed = subprocess.run(["bash", ".ci/run", "--print-command"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert printed.stdout == command + "\n"


def test_estimator_family_example_is_what_the_rewrite_does():
    """The Before of rewrites/estimator's documentation, completed where it elides (the imports of task.py, the
    input function), migrates to its After: model.py whole, task.py's main() but for the lines it elides."""
    from textwrap import dedent

    from test_estimator_programs import run_tree

    import rewrites.estimator

    doc = rewrites.estimator.__doc__
    before, after = (dedent(doc[doc.index(start) + len(start):doc.index(end)]).replace('\\"', '"')
                     for start, end in (("Before::\n", "After::"), ("After::\n", "TFM302 ")))
    modules = dict(zip(*(iter(re.split(r"^# (trainer/\w+\.py)\n", before, flags=re.MULTILINE)[1:]),) * 2))
    migrated = dict(zip(*(iter(re.split(r"^# (trainer/\w+\.py)\n", after, flags=re.MULTILINE)[1:]),) * 2))
    modules["trainer/model.py"] += (
        "\ndef make_input_fn(path, mode):\n  def _input_fn():\n"
        "    return tf.data.TextLineDataset(path).map(lambda line: ({'x': [1.0]}, [1.0])).repeat().batch(8)\n"
        "  return _input_fn\n")
    modules["trainer/task.py"] = ("import argparse\n\nimport tensorflow.compat.v1 as tf\n\nfrom trainer import model\n\n"
                                  "parser = argparse.ArgumentParser()\n\n\n" + modules["trainer/task.py"])
    results = run_tree({**modules, "trainer/__init__.py": ""})
    assert results["trainer/model.py"].source.startswith(migrated["trainer/model.py"].strip() + "\n")
    main = results["trainer/task.py"].source
    main = main[main.index("def main():"):]
    shown = migrated["trainer/task.py"]
    shown = shown[shown.index("def main():"):]
    for part in re.split(r"^ *\.\.\..*\n", shown, flags=re.MULTILINE):
        assert part in main, part
        main = main[main.index(part) + len(part):]
