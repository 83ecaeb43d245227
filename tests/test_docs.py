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
