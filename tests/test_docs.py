"""The documentation says what the code does."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import rewrites
from rewrites import RULES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_rule_table_is_what_tf_migrate_rules_lists():
    """The rows of the README's rule table: every rule, sorted by id as `tf-migrate rules` lists them, with its
    level and name."""
    table = README.split("\n## Rules\n", 1)[1].split("\n#", 1)[0]
    rows = [row.split(" | ")[:3] for row in re.findall(r"^\| (TFM.*)$", table, re.MULTILINE)]
    assert rows == [[rule.id, rule.safety.value, rule.name] for rule in sorted(RULES.values(), key=lambda r: r.id)]


@pytest.mark.parametrize("text", [README, rewrites.__doc__], ids=["README", "rewrites"])
def test_the_id_groups_named_are_those_of_the_rules(text):
    assert set(re.findall(r"`?(TFM\dxx)", text)) == {f"{rule[:4]}xx" for rule in RULES}


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
                     for start, end in (("Before::\n", "After::"), ("After::\n", "The rule pages,")))
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


def _options(parser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings} - {"-h", "--help"}


def _usage_block() -> str:
    return README.split("## Usage", 1)[1].split("```", 2)[1]


@pytest.mark.parametrize("command", ["migrate", "parity", "checkpoint"])
def test_readme_usage_block_lists_every_option(command):
    from migrator import cli
    from migrator.parity import command as parity_command
    from migrator.parity import convert

    parser = {"migrate": cli.build_parser, "parity": parity_command.build_parser,
              "checkpoint": convert.build_parser}[command]()
    usage = _usage_block()
    missing = sorted(option for option in _options(parser) if not re.search(rf"{option}\b(?!-)", usage))
    assert not missing, f"the README's usage block lacks {missing}"


def test_readme_option_table_has_a_row_for_every_migrate_option():
    from migrator import cli

    table = README.split("## Usage", 1)[1].split("\n#", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    missing = sorted(option for option in _options(cli.build_parser()) - {"--version"}
                     if not any(re.search(rf"`{option}\b(?!-)", row) for row in rows))
    assert not missing, f"the README's option table lacks {missing}"


def test_versions_in_the_readmes_sample_output_are_the_pinned_ones():
    pyproject = (ROOT / "pyproject.toml").read_text()
    pins = {name.replace("-cpu", "").replace("-", "_"): version
            for name, version in re.findall(r'"([a-z-]+)==([0-9.]+)"', pyproject)}
    shown = re.findall(r"\b(tensorflow|tensorflow_estimator|tf_keras) (\d+\.\d+\.\d+)[,;)]", README)
    assert len(shown) >= 6
    assert [(name, version) for name, version in shown if pins.get(name) != version] == []


def test_readmes_check_output_on_the_examples_is_what_the_tool_prints(capsys, monkeypatch):
    """The abridged `tf-migrate --check examples/` at the top and the end of a run in the Output section."""
    from migrator.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["--check", "-j", "1", "examples/"]) == 1
    printed = capsys.readouterr()
    sample = README.split("$ tf-migrate --check examples/          # abridged\n", 1)[1].split("```", 1)[0]
    findings = [line for line in sample.splitlines() if not line.startswith(("tf-migrate:", "  "))]
    assert len(findings) >= 10 and set(findings) <= set(printed.out.splitlines())
    end_of_run = printed.err.splitlines()
    assert sample.splitlines()[len(findings):] == end_of_run
    output = README.split("### Output", 1)[1].split("```\n", 2)[1]
    assert output.splitlines() == end_of_run
