"""`# tf-migrate: ignore[...]` comments: a suppressed finding is not reported nor counted by level, a suppressed
rewrite is not made, the summary and the JSON report count them, and --check reports a comment that suppresses
nothing."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import ALL_RULES, run
from test_notebooks import notebook_text, sources

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ON = ALL_RULES - {"TFM001"}  # what a run without --check enables
AXIS = "import tensorflow.compat.v1 as tf1\n\np = tf1.fixed_size_partitioner(2, axis=1){}\n"
SERVERS = ("import tensorflow.compat.v1 as tf1\n\n"
           "ps = tf1.train.Server(cluster, job_name='ps'){}\n"
           "worker = tf1.train.Server(cluster, job_name='ps')\n")


def rules_of(result) -> list[str]:
    return [finding.rule for finding in result.findings]


def test_a_manual_finding_suppressed_on_its_line():
    assert rules_of(run(AXIS.format(""), ON)) == ["TFM204"]
    result = run(AXIS.format("  # tf-migrate: ignore[TFM204]"), ON)
    assert rules_of(result) == [] and [f.rule for f in result.suppressed] == ["TFM204"]


def test_a_finding_suppressed_on_the_last_line_of_its_statement():
    source = ("import tensorflow.compat.v1 as tf1\n\np = tf1.fixed_size_partitioner(\n    2,\n"
              "    axis=1)  # tf-migrate: ignore[TFM204]\nq = tf1.fixed_size_partitioner(2, axis=1)\n")
    result = run(source, ON)
    assert [(f.rule, f.line) for f in result.findings] == [("TFM204", 6)]
    assert [(f.rule, f.line) for f in result.suppressed] == [("TFM204", 3)]


def test_a_suppressed_rename_is_not_made_the_same_line_beside_it_is():
    source = SERVERS.format("  # tf-migrate: ignore[TFM101]")
    result = run(source, ON)
    lines = result.source.splitlines()
    assert "ps = tf1.train.Server(cluster, job_name='ps')  # tf-migrate: ignore[TFM101]" in lines
    assert "worker = tf.distribute.Server(cluster, job_name='ps')" in lines
    assert rules_of(result) == ["TFM101"] and [f.line for f in result.suppressed] == [3]


def test_a_bare_ignore_suppresses_every_rule_and_a_prefix_its_rules():
    for comment in ("  # tf-migrate: ignore", "  # tf-migrate:ignore[TFM1]", "  # tf-migrate: ignore[tfm302, TFM10]"):
        result = run(SERVERS.format(comment), ON)
        assert "ps = tf1.train.Server" in result.source and rules_of(result) == ["TFM101"], comment


def test_an_ignore_of_another_rule_suppresses_nothing():
    source = SERVERS.format("  # tf-migrate: ignore[TFM102, TFM2]")
    result = run(source, ON)
    assert "ps = tf.distribute.Server" in result.source
    assert rules_of(result) == ["TFM101", "TFM101"] and not result.suppressed


def test_a_suppressed_estimator_program_is_left_as_it_is():
    source = (EXAMPLES / "classifier" / "train.py").read_text()
    [main] = run(source, ON).findings
    lines = source.splitlines(keepends=True)
    lines[main.line - 1] = lines[main.line - 1].rstrip("\n") + "  # tf-migrate: ignore[TFM301]\n"
    result = run("".join(lines), ON)
    assert result.source == "".join(lines) and not result.findings
    assert [(f.rule, f.line) for f in result.suppressed] == [("TFM301", main.line)]


def test_a_program_whose_part_is_suppressed_is_left_saying_which():
    source = (EXAMPLES / "tpu_estimator" / "train.py").read_text()
    [eval_steps] = [f for f in run(source, ON).findings if f.rule == "TFM303"]
    lines = source.splitlines(keepends=True)
    lines[eval_steps.line - 1] = lines[eval_steps.line - 1].rstrip("\n") + "  # tf-migrate: ignore[TFM303]\n"
    result = run("".join(lines), ON)
    assert result.source == "".join(lines)
    [finding] = result.findings
    assert finding.rule == "TFM302" and "it needs TFM303 (eval-steps), which is suppressed there" in finding.message


def test_a_suppressed_between_graph_program_is_left_as_it_is():
    source = (EXAMPLES / "ps_cluster" / "train.py").read_text()
    [main] = [f for f in run(source, ON).findings if f.rule == "TFM103"]
    lines = source.splitlines(keepends=True)
    lines[main.line - 1] = lines[main.line - 1].rstrip("\n") + "  # tf-migrate: ignore[TFM103]\n"
    result = run("".join(lines), ON - {"TFM101", "TFM102"})
    assert result.source == "".join(lines)
    assert [(f.rule, f.line) for f in result.suppressed] == [("TFM103", main.line)]
    assert {f.rule for f in result.findings} == {"TFM107"}, "its TF1 cluster code is reported where it is left"


def test_the_summary_and_the_json_report_count_suppressed_findings(tmp_path, cli):
    (tmp_path / "a.py").write_text(SERVERS.format("  # tf-migrate: ignore") + AXIS.format("  # tf-migrate: ignore")
                                   .replace("import tensorflow.compat.v1 as tf1\n\n", ""))
    code, out, err = cli("--diff", "a.py", "--report", "run.json")
    assert "TFM204" not in out + err and err.count("TFM101") == 1
    [summary] = [line for line in err.splitlines() if "findings:" in line]
    assert summary.endswith("findings: 1 exact, 0 numeric, 0 manual, 2 suppressed")
    assert json.loads((tmp_path / "run.json").read_text())["summary"]["suppressed"] == 2


def test_check_reports_an_unused_suppression_a_plain_run_does_not(tmp_path, cli):
    source = SERVERS.format("  # tf-migrate: ignore[TFM101, TFM2]") + "x = 1  # tf-migrate: ignore\n"
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "plain.py").write_text("x = 1  # tf-migrate: ignore[TFM302]\n")
    code, out, _ = cli("--check", ".")
    unused = [line for line in out.splitlines() if "TFM001" in line]
    assert unused == [
        "a.py:3:48: TFM001 [manual] TFM2 in `# tf-migrate: ignore[TFM101, TFM2]` suppresses nothing here: remove it",
        "a.py:5:8: TFM001 [manual] `# tf-migrate: ignore` suppresses nothing here: remove it",
        "plain.py:1:8: TFM001 [manual] TFM302 in `# tf-migrate: ignore[TFM302]` suppresses nothing here: remove it",
    ] and code == 1
    code, out, err = cli(".")
    assert "TFM001" not in out + err and code == 0
    assert cli("--check", ".", "--ignore", "TFM001")[1].count("TFM001") == 0


def test_a_suppression_in_a_notebook_cell(tmp_path, cli):
    path = tmp_path / "train.ipynb"
    path.write_text(notebook_text("import tensorflow.compat.v1 as tf1\n",
                                  "p = tf1.fixed_size_partitioner(2)  # tf-migrate: ignore[TFM201]\n"
                                  "q = tf1.fixed_size_partitioner(2)\nx = 1  # tf-migrate: ignore"))
    code, out, err = cli("--check", "train.ipynb")
    assert out.splitlines() == [
        "train.ipynb:cell 3:2:5: TFM201 [exact] fixed_size_partitioner -> FixedShardsPartitioner",
        "train.ipynb:cell 3:3:8: TFM001 [manual] `# tf-migrate: ignore` suppresses nothing here: remove it"]
    cli("train.ipynb")
    assert sources(path)[2].splitlines()[:2] == [
        "p = tf1.fixed_size_partitioner(2)  # tf-migrate: ignore[TFM201]",
        "q = tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)"]
