"""`tf-migrate rules`: every rule sorted by id, a prefix lists some, an id explains one in plain text with a
before and after that this file runs through the migration."""

from __future__ import annotations

import re
from textwrap import dedent

import pytest

from helpers import run
from migrator.rules_doc import page, section
from rewrites import RULES

PAGE_PARTS = ("What it does:", "Why:", "Level:", "What may differ:", "Before:", "After:")


def ids_of(listing: str) -> list[str]:
    return [line.split()[0] for line in listing.splitlines()]


def test_rules_lists_every_rule_sorted_by_id(cli):
    code, out, _ = cli("rules")
    assert code == 0
    assert ids_of(out) == sorted(RULES) and list(RULES) != sorted(RULES)
    for line, rule in zip(out.splitlines(), sorted(RULES)):
        assert line.split(maxsplit=3) == [rule, RULES[rule].safety.value, RULES[rule].name, RULES[rule].summary]


@pytest.mark.parametrize("prefix", ["TFM3", "tfm3", "TFM10", "Tfm2"])
def test_a_prefix_lists_the_rules_it_starts(cli, prefix):
    code, out, _ = cli("rules", prefix)
    _, everything, _ = cli("rules")
    assert code == 0
    assert ids_of(out) == [rule for rule in sorted(RULES) if rule.startswith(prefix.upper())]
    assert set(out.splitlines()) <= set(everything.splitlines())


def test_an_id_in_any_case_explains_that_rule(cli):
    code, out, _ = cli("rules", "tfm301")
    assert code == 0 and out == cli("rules", "TFM301")[1] == page(RULES["TFM301"])
    assert out.startswith("TFM301 estimator-program (numeric)\n")


@pytest.mark.parametrize("selector", ["TFM9", "TFM3011", "train-server", "x"])
def test_an_unknown_id_or_prefix_is_a_one_line_error(cli, selector):
    code, out, err = cli("rules", selector)
    assert code == 2 and out == ""
    assert err == f"tf-migrate rules: error: no rule id starts with {selector!r} (see `tf-migrate rules`)\n"


def test_help_shows_the_prefix_form(cli, capsys):
    with pytest.raises(SystemExit):
        cli("rules", "--help")
    assert "tf-migrate rules TFM3" in capsys.readouterr().out
    from migrator.cli import EPILOG

    assert "tf-migrate rules TFM2 " in EPILOG


@pytest.mark.parametrize("rule", sorted(RULES), ids=str)
def test_every_rule_page_is_plain_text_in_parts(rule):
    text = page(RULES[rule])
    assert [part for part in PAGE_PARTS if re.search(rf"^{part}", text, re.MULTILINE)] == list(PAGE_PARTS)
    assert "``" not in text and "::" not in text, "RST markup"
    assert not re.search(r":\w+:`|^\.\. |^=+ ", text, re.MULTILINE), "an RST role, directive or table"
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("    "))  # not the examples
    assert not re.search(r"[\w/]+\.py\b", prose), "a source path"


def example(rule: str) -> tuple[str, str, str | None]:
    """The rule page's Before and After code, and its Finding line if it shows one."""
    text = section(RULES[rule]) + "\n"
    blocks = dict(re.findall(r"^(Before|After|Finding):\n\n((?:(?: {4}.*)?\n)+)", text, re.MULTILINE))
    before, after, finding = (dedent(blocks[name]).strip("\n") + "\n" if name in blocks else None
                              for name in ("Before", "After", "Finding"))
    return before, after, finding


def assert_shown(after: str, migrated: str) -> None:
    """``after`` is ``migrated``, but where a line `...` (with or without a comment) elides some of it."""
    parts = re.split(r"^ *\.\.\..*\n", after, flags=re.MULTILINE)
    if len(parts) == 1:
        assert migrated == after
        return
    rest = migrated
    for part in parts:
        assert part in rest, part
        rest = rest[rest.index(part) + len(part):]


def run_as_notebook_cell(before: str, folder, capsys):
    """The example as the one code cell of a notebook, through the command: (its cell's text after, findings)."""
    import json

    from migrator.cli import main
    from migrator.findings import Finding

    path = folder / "example.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                           "outputs": [], "source": before}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 4}))
    capsys.readouterr()
    main(["--output-format", "json", str(path)])
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    findings = [Finding(str(path), item["line"], item["col"], item["rule"], item["level"], item["message"])
                for item in found if item["type"] == "finding"]
    source = json.loads(path.read_text())["cells"][0]["source"]
    return type("Result", (), {"source": "".join(source) if isinstance(source, list) else source,
                               "findings": findings})


@pytest.mark.parametrize("rule", sorted(RULES), ids=str)
def test_every_rule_page_example_is_what_the_migration_does(rule, tmp_path, capsys):
    before, after, finding = example(rule)
    assert before and after
    notebook_only = before.startswith("%%")  # a rule about notebook cells
    result = run_as_notebook_cell(before, tmp_path, capsys) if notebook_only else run(before)
    assert rule in {found.rule for found in result.findings}
    assert_shown(after, result.source)
    assert finding, "every rule page shows the finding it makes"
    shown = " ".join(finding.split())
    assert shown in [f"{found.line}:{found.col}: {found.rule} [{found.safety}] {found.message}"
                     for found in result.findings]


def test_the_readme_shows_what_rules_prints(cli):
    from test_docs import README

    shown = re.findall(r"^\$ tf-migrate (rules [^\n]*)\n(.*?)^```", README, re.MULTILINE | re.DOTALL)
    assert len(shown) >= 2
    for command, output in shown:
        assert cli(*command.split())[1] == output, command
