"""What a run reports: --report HTML and JSON, JSON lines, colour, --verbose."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser

import pytest
from conftest import TF1_MANUAL, TF1_SERVER

from migrator.findings import Finding, Safety
from migrator.report import REPORT_SCHEMA_VERSION, Terminal


@pytest.fixture
def project(tree):
    (tree / "manual.py").write_text(TF1_MANUAL)
    (tree / "broken.py").write_text("import tensorflow as tf\ndef f(:\n    tf.compat.v1.train.Server(c)\n")
    return tree


def test_json_report_holds_the_summary_rules_and_every_file(project, cli):
    code, out, err = cli("--check", "--report", "r.json", ".")
    assert code == 2  # broken.py
    report = json.loads((project / "r.json").read_text())
    assert report["schema_version"] == REPORT_SCHEMA_VERSION and report["tool"]["name"] == "tf-migrate"
    assert report["summary"] == {"scanned": 6, "changed": 2, "unchanged": 3, "failed": 1, "manual": 1,
                                 "verified": {}, "dry_run": True}
    assert {rule["id"]: rule["findings"] for rule in report["rules"]} == {"TFM101": 2, "TFM204": 1}
    files = {entry["path"]: entry for entry in report["files"]}
    assert [entry["path"] for entry in report["files"]][:2] == ["broken.py", "manual.py"]  # what needs a person first
    assert files["broken.py"]["status"] == "failed" and "not valid Python 3" in files["broken.py"]["error"]
    (finding,) = files["manual.py"]["findings"]
    assert finding["rule"] == "TFM204" and finding["level"] == "manual" and finding["line"] == 3
    assert finding["code"] == "p = tf1.fixed_size_partitioner(2, axis=1)"
    cluster = files["cluster.py"]
    assert cluster["status"] == "changed" and cluster["lines_added"] == 2 and cluster["lines_removed"] == 2
    assert "+server = tf.distribute.Server(cluster, job_name='ps')" in cluster["diff"]
    assert files["plain.py"]["status"] == "unchanged" and files["plain.py"]["findings"] == []


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text, self.external = [], []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value and re.match(r"(https?:)?//", value):
                self.external.append(value)

    def handle_data(self, data):
        self.text.append(data)


def test_html_report_is_self_contained_and_opens_on_the_summary(project, cli):
    cli("--check", "--report", "r.html", "--report", "r.json", ".")
    page = Page()
    page.feed((project / "r.html").read_text())
    text = " ".join(" ".join(page.text).split())
    assert page.external == []
    assert "6 files scanned" in text and "2 would be migrated" in text and "1 need manual work" in text
    assert text.index("need manual work") < text.index("Findings per rule") < text.index("manual.py")
    assert "p = tf1.fixed_size_partitioner(2, axis=1)" in text and (project / "r.json").exists()


def test_a_report_that_cannot_be_written_is_one_clear_error(project, cli):
    (project / "r.html").mkdir()
    code, out, err = cli("--check", "--report", "r.html", "cluster.py")
    assert code == 2 and "r.html: error: cannot write the report" in err


def test_report_suffix_must_say_html_or_json(project, cli):
    with pytest.raises(SystemExit):
        cli("--report", "r.txt", ".")


def test_json_lines_on_stdout(project, cli):
    code, out, err = cli("--check", "--output-format", "json", ".")
    lines = [json.loads(line) for line in out.splitlines()]
    findings = [line for line in lines if line["type"] == "finding"]
    assert {(f["path"], f["rule"], f["level"]) for f in findings} == {
        ("cluster.py", "TFM101", "exact"), ("pkg/train.py", "TFM101", "exact"), ("manual.py", "TFM204", "manual")}
    (error,) = [line for line in lines if line["type"] == "error"]
    assert error["path"] == "broken.py" and error["line"] == 2 and error["cell"] is None  # as a finding's
    assert "files scanned" in err  # the summary stays text, on stderr


def test_json_lines_and_a_diff_on_one_stdout_are_a_usage_error(project, cli):
    with pytest.raises(SystemExit):
        cli("--diff", "--output-format", "json", ".")


def test_verbose_says_what_happened_to_every_file(project, cli):
    code, out, err = cli("--check", "--verbose", ".")
    assert "plain.py: unchanged" in err and "cluster.py: changed (1 exact)" in err and "manual.py: unchanged (1 manual)" in err


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


FINDING = Finding("a.py", 3, 5, "TFM204", Safety.MANUAL, "axis 1")


def test_colour_on_a_terminal_unless_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal, stream = Terminal(), Tty()
    terminal.finding(FINDING, stream)
    assert "\033[31m[manual]\033[0m" in stream.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Tty()
    terminal.finding(FINDING, plain)
    assert plain.getvalue() == FINDING.format() + "\n"
    piped = io.StringIO()
    Terminal().finding(FINDING, piped)
    assert "\033" not in piped.getvalue()


def test_quiet_prints_only_manual_findings():
    stream = io.StringIO()
    terminal = Terminal(quiet=True)
    terminal.finding(FINDING, stream)
    terminal.finding(Finding("a.py", 1, 1, "TFM101", Safety.EXACT, "renamed"), stream)
    assert stream.getvalue() == FINDING.format() + "\n"


def test_notebook_findings_carry_their_cell_in_json(tmp_path, cli):
    from test_notebooks import notebook_text

    (tmp_path / "n.ipynb").write_text(notebook_text("import tensorflow.compat.v1 as tf1\n" + TF1_SERVER.split("\n\n")[1]))
    code, out, err = cli("--check", "--output-format", "json", "n.ipynb")
    (finding,) = [json.loads(line) for line in out.splitlines()]
    assert (finding["cell"], finding["line"], finding["rule"]) == (2, 2, "TFM101")
