"""What a run reports: --report HTML and JSON, JSON lines, colour, --verbose."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import TF1_MANUAL, TF1_SERVER

from migrator.findings import Finding, Safety
from migrator.report import REPORT_SCHEMA_VERSION, FileRecord, RunSummary, Terminal, write_report
from rewrites import RULES


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
                                 "verified": {}, "dry_run": True, "verify": False, "suppressed": 0}
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
        self.text, self.external, self.glue = [], [], False

    def handle_starttag(self, tag, attrs):
        self.glue = tag == "wbr"  # a place code may wrap, inside a word
        for name, value in attrs:
            if name in ("href", "src") and value and re.match(r"(https?:)?//", value):
                self.external.append(value)

    def handle_data(self, data):
        if self.glue:
            self.text[-1] += data
        else:
            self.text.append(data)
        self.glue = False


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


# -- the HTML page, as a browser shows it -----------------------------------------------------------------------------


def summary(**verified) -> RunSummary:
    return RunSummary(scanned=3, changed=1, unchanged=2, failed=0, manual=0, verified=verified, dry_run=True,
                      verify=bool(verified))


def page(tmp_path: Path, records: list[FileRecord], run: RunSummary | None = None) -> str:
    path = tmp_path / "r.html"
    write_report(path, run or summary(), records, RULES)
    return path.read_text()


def card_texts(html: str) -> list[str]:
    cards = re.findall(r'<div class="card[^"]*">(.*?)</div></div>', html)
    return [" ".join(re.sub(r"<[^>]+>", " ", card).split()) for card in cards]


@pytest.mark.parametrize("verified, card", [
    ({}, "not verified training programs are proven by parity with --verify"),
    ({"parity": 2}, "2 / 2 programs proven by parity"),
    ({"parity": 1, "mismatch": 1}, "1 / 2 programs proven by parity; not proven: 1 mismatch"),
    ({"parity": 0, "error": 2}, "0 / 2 programs proven by parity; not proven: 2 failed to run"),
], ids=["without --verify", "all proven", "a mismatch", "failed to run"])
def test_the_verification_card_says_what_was_and_was_not_verified(tmp_path, verified, card):
    assert card in card_texts(page(tmp_path, [], summary(**verified)))


def test_with_verify_and_no_program_the_card_says_there_was_none(tmp_path):
    run = summary()
    run.verify = True
    assert "0 training programs to verify: none migrated" in card_texts(page(tmp_path, [], run))


def test_the_flag_in_the_card_is_code_that_keeps_its_case(tmp_path):
    html = page(tmp_path, [])
    assert re.search(r"\.card \.l code \{[^}]*text-transform: none", html) and "<code>--verify</code>" in html


def record(findings: list[Finding], code: list[str] | None = None, diff: str = "") -> FileRecord:
    return FileRecord("train.py", "changed", findings, code or [""] * len(findings), diff)


def test_findings_of_a_file_are_in_the_order_of_their_lines(tmp_path, cli):
    (tmp_path / "both.py").write_text(TF1_SERVER + TF1_MANUAL.split("\n\n")[1])  # exact at line 3, manual at 4
    cli("--check", "--report", "r.html", "--report", "r.json", "both.py")
    (entry,) = json.loads((tmp_path / "r.json").read_text())["files"]
    assert [(f["line"], f["level"]) for f in entry["findings"]] == [(3, "exact"), (4, "manual")]
    assert re.findall(r'<td class="code">(\d+):\d+</td>', (tmp_path / "r.html").read_text()) == ["3", "4"]


def test_findings_of_a_notebook_are_in_the_order_of_cell_line_and_column(tmp_path):
    findings = [Finding("n.ipynb", 1, 9, "TFM101", Safety.EXACT, "b", cell=2),
                Finding("n.ipynb", 7, 1, "TFM204", Safety.MANUAL, "a", cell=1),
                Finding("n.ipynb", 1, 2, "TFM101", Safety.EXACT, "b", cell=2)]
    html = page(tmp_path, [record(findings)])
    assert re.findall(r'<td class="code">cell (\d+), (\d+):(\d+)</td>', html) == [("1", "7", "1"), ("2", "1", "2"),
                                                                                   ("2", "1", "9")]


def test_the_diff_summary_says_lines_added_and_removed(tmp_path):
    diff = "--- a.py\t(original)\n+++ a.py\t(migrated)\n@@ -1,2 +1,3 @@\n-old\n+new\n+added\n+added too\n same\n"
    assert "what was rewritten: 3 lines added, 1 removed" in page(tmp_path, [record([], diff=diff)])


def test_backticks_in_messages_are_code_and_nothing_in_them_is_markup(tmp_path):
    message = "use `tf.keras.Model` here; <script>alert(1)</script> and `<script>` stay text"
    html = page(tmp_path, [record([Finding("train.py", 1, 1, "TFM302", Safety.MANUAL, message)])])
    assert "use <code>tf.<wbr>keras.<wbr>Model</code> here;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<code>&lt;script&gt;</code> stay text" in html
    assert "<script" not in html and "`" not in html


def test_code_wraps_at_spaces_and_punctuation_never_inside_a_name(tmp_path):
    code = "partitioner = tf.min_max_variable_partitioner(max_partitions=3, min_slice_size=256)[0]"
    html = page(tmp_path, [record([Finding("train.py", 1, 1, "TFM203", Safety.EXACT, "x")], [code])])
    (cell,) = re.findall(r'<td class="code">(partitioner.*?)</td>', html)
    assert cell.replace("<wbr>", "") == code
    assert all(re.search(r"[./,(\[]$", before) for before in cell.split("<wbr>")[:-1])
    assert not re.search(r"overflow-wrap:\s*anywhere|word-break:\s*break-all", html)


def overflow(html: str, tmp_path: Path, width: int) -> dict:
    """The page in headless Chromium ``width`` px wide: by how many px the page and each table overflow."""
    probe = """<script>
      const inner = e => { const s = getComputedStyle(e);
                           return e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); };
      document.body.dataset.overflow = JSON.stringify({page: document.documentElement.scrollWidth - innerWidth,
        tables: [...document.querySelectorAll("table")].map(t => Math.round(t.offsetWidth - inner(t.parentElement)))});
    </script></body>"""
    path = tmp_path / "probe.html"
    path.write_text(html.replace("</body>", probe))
    dom = subprocess.run([shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
                          f"--window-size={width},1000", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                          path.as_uri()], capture_output=True, text=True, timeout=120).stdout
    return json.loads(re.search(r'data-overflow="([^"]*)"', dom).group(1).replace("&quot;", '"'))


needs_chromium = pytest.mark.skipif(not shutil.which("chromium"), reason="needs headless Chromium")


@needs_chromium
@pytest.mark.parametrize("width", [700, 1400])
def test_every_table_fits_the_page(tmp_path, width):
    """Every rule (the longest summaries), and a finding of long code and a long message."""
    code = "partitioner = tf.compat.v1.min_max_variable_partitioner(max_partitions=3, min_slice_size=256)"
    message = RULES["TFM301"].summary + "; ParameterServerStrategy"
    findings = [Finding("train.py", line, 1, rule.id, rule.safety, message) for line, rule in enumerate(RULES.values(), 1)]
    measured = overflow(page(tmp_path, [record(findings, [code] * len(findings))]), tmp_path, width)
    assert measured["page"] <= 0 and measured["tables"] and max(measured["tables"]) <= 0, measured


# -- the paths of the reports written ---------------------------------------------------------------------------------


def test_each_report_written_is_named_on_stderr_except_with_quiet(project, cli):
    code, out, err = cli("--check", "--report", "r.html", "--report", "sub/r.json", ".")
    assert err.splitlines()[-2:] == ["tf-migrate: wrote report r.html",
                                     f"tf-migrate: wrote report {Path('sub/r.json')}"]
    assert "wrote" not in out
    code, out, err = cli("--check", "--quiet", "--report", "r.html", ".")
    assert "wrote" not in err and (project / "r.html").exists()


def test_a_report_not_written_is_not_named(project, cli):
    (project / "r.html").mkdir()
    code, out, err = cli("--check", "--report", "r.html", "--report", "r.json", "cluster.py")
    assert "wrote report r.html" not in err and "tf-migrate: wrote report r.json" in err
