"""The parity reports: terminal summary, JSON, HTML. Built from report data, no TensorFlow needed."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import pytest
from test_report import needs_chromium, overflow

from migrator.parity import command
from migrator.parity.compare import fill_comparisons
from migrator.parity.model import SCHEMA_VERSION, ParityReport, SideRun, Variable
from migrator.parity.report import render_html, side_by_side, terminal_summary, write_html, write_json

OLD_SOURCE = "import tensorflow.compat.v1 as tf1\nlr = 0.05\nopt = tf1.train.AdagradOptimizer(lr)\nprint('done')\n"
NEW_SOURCE = "import tensorflow as tf\nlr = 0.05\nopt = tf.keras.optimizers.Adagrad(lr)\nprint('done')\n"


def make_report(old_losses: list[float], new_losses: list[float], *, weight_shift: float = 0.0,
                error: str | None = None) -> ParityReport:
    """A finished run as the runner builds it, with one 2x1 kernel sharded over two ps on the new side."""
    import numpy as np

    versions = {"python": "3.11.7", "tensorflow": "2.15.1"}
    old = SideRun("old", "old.py", "/usr/bin/python3", versions, old_losses, 0.5, [Variable("dense/kernel", [2, 1])],
                  wall_seconds=6.0, train_seconds=1.0)
    new = SideRun("new", "new.py", "/usr/bin/python3", versions, new_losses, 0.5,
                  [Variable("dense/kernel", [2, 1], [[1, 1], [1, 1]])], wall_seconds=8.0, train_seconds=2.0)
    report = ParityReport("error", "", old, new, steps=len(old_losses), rtol=1e-5, atol=1e-7, data="program",
                          cluster="in-process: 1 worker, 2 ps", old_source=OLD_SOURCE, new_source=NEW_SOURCE)
    if error:
        report.new.error, report.message = error, "the new program failed (exit status 1)"
        return report
    mapping = [{"old": "dense/kernel", "new": "dense/kernel", "shape": [2, 1], "old_shards": [], "new_shards": [[1, 1], [1, 1]]}]
    kernel = np.array([[1.0], [2.0]], dtype=np.float32)
    fill_comparisons(report, mapping, None, {"dense/kernel": kernel}, {"dense/kernel": kernel + weight_shift})
    return report


LOSSES = [10.0 - 0.3 * step for step in range(20)]
DIVERGING = LOSSES[:6] + [loss * 1.5 for loss in LOSSES[6:]]  # diverges from step 7


@pytest.fixture
def parity_report() -> ParityReport:
    return make_report(LOSSES, list(LOSSES))


@pytest.fixture
def mismatch_report() -> ParityReport:
    return make_report(LOSSES, DIVERGING, weight_shift=0.25)


# -- terminal ---------------------------------------------------------------------------------------


def test_terminal_summary_of_parity_gives_verdict_sides_and_step_table(parity_report):
    text = terminal_summary(parity_report)
    assert text.startswith("PARITY: 20 steps match")
    assert "old  old.py" in text and "new  new.py" in text and "steps/s" in text
    assert "rtol 1e-05, atol 1e-07" in text
    assert "past tolerance" not in text and "\033[" not in text
    assert "final weights: 1 of 1 variables match" in text


def test_terminal_table_of_a_long_run_keeps_the_first_diverging_step(mismatch_report):
    text = terminal_summary(mismatch_report)
    assert text.startswith("MISMATCH: losses diverge from step 7")
    rows = {int(match) for match in re.findall(r"^\s+(\d+)\s+\S+\s+\S+", text, re.MULTILINE)}
    assert {1, 2, 3, 6, 7, 8, 19, 20} <= rows and 12 not in rows
    assert re.search(r"^\s+7\s.*<- past tolerance$", text, re.MULTILINE)
    assert not re.search(r"^\s+6\s.*past tolerance", text, re.MULTILINE)
    assert "differs  dense/kernel" in text


def test_terminal_summary_colours_only_when_asked(mismatch_report):
    assert "\033[1;31mMISMATCH\033[0m" in terminal_summary(mismatch_report, color=True)


def test_terminal_summary_of_a_failed_side_shows_its_output():
    report = make_report(LOSSES, [], error="Traceback (most recent call last):\nRuntimeError: broke")
    text = terminal_summary(report)
    assert text.startswith("ERROR: the new program failed")
    assert "| RuntimeError: broke" in text and "step" not in text.split("\n\n")[-1].split("|")[0]


# -- JSON -------------------------------------------------------------------------------------------


def test_json_holds_everything_ci_needs_and_round_trips(mismatch_report, tmp_path):
    path = tmp_path / "out" / "parity.json"
    write_json(mismatch_report, path)
    data = json.loads(path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["verdict"] == "mismatch" and data["first_diverging_step"] == 7
    assert (data["rtol"], data["atol"]) == (1e-5, 1e-7)
    assert data["old"]["losses"] == LOSSES and data["new"]["losses"] == DIVERGING
    assert data["old"]["versions"]["tensorflow"] == "2.15.1"
    assert data["new"]["steps_per_second"] == 10.0
    (variable,) = data["variables"]
    assert variable["name"] == variable["new_name"] == "dense/kernel" and not variable["ok"]
    assert variable["new_shards"] == [[1, 1], [1, 1]]
    assert ParityReport.from_json(data) == mismatch_report


# -- HTML -------------------------------------------------------------------------------------------


class Elements(HTMLParser):
    """Tags with their attributes, for asserting on the page's structure."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def rows_with_class(self, name: str) -> int:
        return sum(1 for tag, attrs in self.tags if tag == "tr" and name in (attrs.get("class") or "").split())


def test_html_is_self_contained(mismatch_report):
    html = render_html(mismatch_report)
    assert not re.search(r"""(src|href)=["']?(https?:)?//|@import|url\(""", html)
    assert "<script" not in html


def test_html_shows_verdict_curves_highlighted_steps_and_mapping(mismatch_report):
    html = render_html(mismatch_report)
    page = Elements(html)
    assert "<h1>Mismatch</h1>" in html and "losses diverge from step 7" in html
    polylines = [attrs["points"].split() for tag, attrs in page.tags if tag == "polyline"]
    assert [len(points) for points in polylines] == [20, 20]
    assert page.rows_with_class("bad") == 14 + 1  # steps 7..20, and the variable
    assert page.rows_with_class("first") == 1
    assert "[1, 1] [1, 1]" in html  # the new side's shards


def test_html_marks_changed_source_lines(parity_report):
    page = Elements(render_html(parity_report))
    assert page.rows_with_class("changed") == 2  # the import and the optimizer
    assert page.rows_with_class("same") == 2


def test_html_of_a_failed_side_shows_its_output():
    html = render_html(make_report(LOSSES, [], error="RuntimeError: <broke>"))
    assert "A side failed to run" in html and "RuntimeError: &lt;broke&gt;" in html


def test_side_by_side_aligns_insertions_and_deletions():
    rows = side_by_side("a\nb\nc\n", "a\nc\nd\ne\n")
    assert [(r.old_number, r.new_number, r.kind) for r in rows] == [
        (1, 1, "same"), (2, None, "removed"), (3, 2, "same"), (None, 3, "added"), (None, 4, "added")]


def test_html_file_replaces_an_existing_report(parity_report, tmp_path):
    path = tmp_path / "report.html"
    path.write_text("stale")
    write_html(parity_report, path)
    assert path.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_unwritable_report_path_is_one_clear_error(parity_report, monkeypatch, tmp_path, capsys):
    pytest.importorskip("numpy")
    monkeypatch.setattr("migrator.parity.runner.run_parity", lambda old, new, options: parity_report)
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text("")
    new.write_text("")
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = command.main([str(old), str(new), "--html", str(blocker / "report.html")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"tf-migrate parity: error: cannot write {blocker / 'report.html'}") and err.count("\n") == 1


# -- final weights ---------------------------------------------------------------------------------


@pytest.mark.parametrize("old, new, ok", [
    ([1.0, 2e-7, -0.5], [1.0, -2e-7, -0.5], True),   # rounding around zero, small against the tensor's scale
    ([1.0, 0.5], [1.0, 0.50002], False),             # 2e-5 past rtol 1e-5 of a tensor of scale 1
    ([100.0, 0.0], [100.0, 5e-4], True),             # scale 100: 1e-3 allowed
    ([1.0, float("nan")], [1.0, float("nan")], True),
    ([1.0, float("nan")], [1.0, 1.0], False),
], ids=["rounding near zero", "past tolerance", "large scale", "NaN matches NaN", "NaN against a number"])
def test_final_weights_compare_every_element_against_the_tensor_scale(old, new, ok):
    import numpy as np

    from migrator.parity.compare import compare_tensor

    assert compare_tensor(np.array(old), np.array(new), rtol=1e-5, atol=1e-7)[2] is ok


def test_adjustments_are_shown_in_the_terminal_and_the_page(parity_report):
    parity_report.old.adjustments = ["dropout off (dropout): random masks cannot be matched"]
    assert "adjusted, old side: dropout off (dropout)" in terminal_summary(parity_report)
    assert "adjusted, old side" in render_html(parity_report)


# -- the programs' arguments ------------------------------------------------------------------------------------------


def test_arguments_after_double_dash_go_to_both_programs(parity_report, monkeypatch, tmp_path, capsys):
    pytest.importorskip("numpy")
    calls = []
    monkeypatch.setattr("migrator.parity.runner.run_parity", lambda old, new, options: calls.append(options) or parity_report)
    old, new = tmp_path / "task.py", tmp_path / "task_tf2.py"
    old.write_text("")
    new.write_text("")
    assert command.main([str(old), str(new), "--steps", "3", "--", "--train_steps", "5", "--", "--steps", "x"]) == 0
    (options,) = calls
    assert options.steps == 3 and options.program_args == ("--train_steps", "5", "--", "--steps", "x")
    assert command.main([str(old), str(new)]) == 0
    assert calls[1].program_args == ()


def test_help_says_how_to_pass_arguments_to_the_programs(capsys):
    with pytest.raises(SystemExit):
        command.main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: tf-migrate parity OLD.py NEW.py [options] [-- ARG...]")
    assert "sys.argv[1:]" in out and "tf.compat.v1.app.run(main)" in out and "python -m" in out


def test_arguments_are_in_every_report(parity_report, tmp_path):
    parity_report.program_args = ["--train_steps", "5", "--name", "two words"]
    assert "  arguments of both programs: --train_steps 5 --name 'two words'" in terminal_summary(parity_report)
    assert "--train_steps 5 --name two words" in render_html(parity_report)
    path = tmp_path / "parity.json"
    write_json(parity_report, path)
    data = json.loads(path.read_text())
    assert data["program_args"] == ["--train_steps", "5", "--name", "two words"]
    assert ParityReport.from_json(data) == parity_report


# -- the paths of the reports written ---------------------------------------------------------------------------------


def test_parity_names_each_report_it_wrote_on_stderr(parity_report, monkeypatch, tmp_path, capsys):
    pytest.importorskip("numpy")
    monkeypatch.setattr("migrator.parity.runner.run_parity", lambda old, new, options: parity_report)
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text("")
    new.write_text("")
    assert command.main([str(old), str(new), "--json", str(tmp_path / "p.json"), "--html", str(tmp_path / "p.html")]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"tf-migrate parity: wrote report {tmp_path / 'p.json'}",
                                         f"tf-migrate parity: wrote report {tmp_path / 'p.html'}"]
    assert captured.out.startswith("PARITY")


@pytest.mark.parametrize("quiet", [False, True])
def test_verify_names_each_parity_report_it_wrote_unless_quiet(parity_report, tmp_path, capsys, quiet):
    pytest.importorskip("numpy")
    from migrator.parity.verify import Verifier

    html = Verifier(None, None, tmp_path / "reports", quiet=quiet).write_reports(parity_report, "pkg/train.py")
    lines = capsys.readouterr().err.splitlines()
    written = [html, tmp_path / "reports" / "pkg" / "train.py.parity.json"]
    assert all(path.exists() for path in written)
    assert lines == ([] if quiet else [f"tf-migrate: wrote parity report {path}" for path in written])


# -- the page as a browser shows it -----------------------------------------------------------------------------------


class Nesting(HTMLParser):
    """Each table row with the classes and tags of the elements around it."""

    VOID = {"wbr", "br", "meta", "line", "polyline", "img", "input"}

    def __init__(self, html: str) -> None:
        super().__init__()
        self.open: list[tuple[str, str]] = []
        self.rows: list[tuple[str, list[tuple[str, str]]]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        classes = dict(attrs).get("class") or ""
        if tag == "tr":
            self.rows.append((classes, list(self.open)))
        if tag not in self.VOID:
            self.open.append((tag, classes))

    def handle_endtag(self, tag):
        while self.open and self.open.pop()[0] != tag:
            pass


def step_rows(html: str) -> list[tuple[str, list[tuple[str, str]]]]:
    return [(classes, around) for classes, around in Nesting(html).rows if ("table", "steps") in around]


def test_every_step_and_the_eval_row_are_shown_outside_any_scroll_box(parity_report):
    rows = step_rows(render_html(parity_report))
    assert len([row for row in rows if ("tbody", "") in row[1]]) == len(LOSSES)
    (eval_row,) = [row for row in rows if "eval" in row[0].split()]
    assert ("tfoot", "") in eval_row[1]
    assert rows and not [around for _, around in rows if any("scroll" in classes.split() for _, classes in around)]


def test_the_loss_axis_is_labelled_with_round_ticks(parity_report):
    html = render_html(parity_report)
    assert re.search(r'<text transform="rotate\(-90\)"[^>]*>loss</text>', html)
    assert re.search(r'<text [^>]*>step</text>', html)
    labels = [float(label) for label in re.findall(r'text-anchor="end"[^>]*>([-\d.]+)</text>', html)]
    assert labels == [4, 6, 8, 10]  # LOSSES run from 4.3 to 10: every 2


@pytest.mark.parametrize("low, high", [(35.81, 124.8), (4.3, 10.0), (0.693121, 0.693187), (-3.0, 2.5), (1e-9, 7e-9),
                                       (1200.0, 98000.0)])
def test_ticks_are_round_evenly_spaced_and_cover_the_losses(low, high):
    from migrator.parity.report import nice_ticks

    ticks, interval = nice_ticks(low, high, 5)
    mantissa = interval / 10 ** math.floor(math.log10(interval))
    assert any(math.isclose(mantissa, m) for m in (1, 2, 5))
    assert 4 <= len(ticks) <= 7 and ticks[0] <= low and ticks[-1] >= high
    assert ticks[0] > low - interval and ticks[-1] < high + interval
    assert all(math.isclose(b - a, interval) for a, b in zip(ticks, ticks[1:]))
    assert all(math.isclose(tick / interval, round(tick / interval), abs_tol=1e-9) for tick in ticks)


def test_labels_show_the_digits_the_interval_needs():
    report = make_report([0.693121 + 1e-5 * step for step in range(7)], [0.693121 + 1e-5 * step for step in range(7)])
    labels = re.findall(r'text-anchor="end"[^>]*>([-\d.]+)</text>', render_html(report))
    assert len(set(labels)) == len(labels) >= 4  # 2e-5 apart: five decimals
    assert all(re.fullmatch(r"0\.693\d\d", label) for label in labels)


def test_names_and_source_wrap_only_between_names(parity_report):
    html = render_html(parity_report)
    assert "<code>dense/<wbr>kernel</code>" in html
    assert "tf.<wbr>keras.<wbr>optimizers.<wbr>Adagrad(<wbr>lr)" in html  # the new source line
    assert not re.search(r"overflow-wrap:\s*anywhere|word-break:\s*break-all", html)


def test_backticks_in_the_message_and_adjustments_are_code(parity_report):
    parity_report.message = "20 steps match; `<b>` is text"
    parity_report.old.adjustments = ["dropout off (`dropout`): random masks cannot be matched"]
    html = render_html(parity_report)
    assert "20 steps match; <code>&lt;b&gt;</code> is text" in html and "dropout off (<code>dropout</code>)" in html


@needs_chromium
@pytest.mark.parametrize("width", [700, 1400])
def test_the_page_is_no_wider_than_the_window(mismatch_report, tmp_path, width):
    """A wide table scrolls in its own box; the page itself never does sideways (paths and names as long as the
    census example's)."""
    for run in (mismatch_report.old, mismatch_report.new):
        run.program, run.python = f"examples/census_wide_deep/train_{run.side}.py", "/work/main/.venv/bin/python3"
    variable = mismatch_report.variables[0]
    variable.name = "dnn/input_from_feature_columns/input_layer/occupation_embedding/embedding_weights"
    variable.new_name = "age_bucketized_X_education_weights/kernel"
    assert overflow(render_html(mismatch_report), tmp_path, width)["page"] <= 0
