"""What a run shows while it runs: findings as files finish, a progress line on a terminal, colour by --color,
FORCE_COLOR and NO_COLOR, coloured diffs, the files needing a person listed before the summary."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

import pytest
from conftest import TF1_MANUAL, TF1_SERVER

import migrator.run
from migrator.console import color_wanted
from migrator.engine import migrate_group
from migrator.findings import Finding, Safety
from migrator.report import Terminal

# Two findings, the second on an earlier line than the first rule family reports it.
TWO_FINDINGS = ("import tensorflow.compat.v1 as tf1\n\np = tf1.fixed_size_partitioner(2, axis=1)\n"
                "server = tf1.train.Server(cluster, job_name='ps')\n")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_findings_of_a_finished_file_print_before_the_next_group_is_migrated(tmp_path, cli, monkeypatch, capsys):
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(TF1_SERVER)
    printed_before_each_group = []

    def one_group_at_a_time(todo, sources, enabled, keras, jobs, progress, timeout=None):
        for candidate in todo:
            printed_before_each_group.append(capsys.readouterr().out)
            text = sources[candidate].text
            yield {candidate: migrate_group({str(candidate.path): text}, enabled, keras)[str(candidate.path)]}

    monkeypatch.setattr(migrator.run, "migrate_each", one_group_at_a_time)
    code, out, _ = cli("--check", ".")
    assert code == 1
    assert printed_before_each_group[0] == ""
    assert [text.count("TFM101") for text in printed_before_each_group[1:]] == [1, 1]
    assert out.count("TFM101") == 1


def test_findings_within_a_file_are_ordered_by_line(tmp_path, cli):
    (tmp_path / "a.py").write_text(TWO_FINDINGS)
    _, out, _ = cli("--check", "a.py")
    lines = [int(line.split(":")[1]) for line in out.splitlines()]
    assert len(lines) >= 2 and lines == sorted(lines)


def test_files_needing_a_person_are_listed_before_the_summary(tmp_path, cli):
    (tmp_path / "a.py").write_text(TF1_SERVER)
    (tmp_path / "b.py").write_text(TF1_MANUAL)
    (tmp_path / "c.py").write_text(TF1_MANUAL + "q = tf1.fixed_size_partitioner(4, axis=2)\n")
    _, _, err = cli("--check", ".")
    assert err.splitlines() == [
        "tf-migrate: manual migration needed in 2 files:",
        "  b.py: 1 manual finding",
        "  c.py: 2 manual findings",
        "tf-migrate: 3 files scanned: 1 would change, 2 unchanged, 0 failed; findings: 1 exact, 0 numeric, 3 manual, "
        "0 suppressed",
    ]


FINDING = Finding("a.py", 3, 5, "TFM204", Safety.MANUAL, "axis 1")


@pytest.mark.parametrize("environment, choice, stream, coloured", [
    ({}, "auto", Tty(), True),
    ({}, "auto", io.StringIO(), False),
    ({"NO_COLOR": "1"}, "auto", Tty(), False),
    ({"NO_COLOR": ""}, "auto", Tty(), True),               # only a value that is not empty counts
    ({"FORCE_COLOR": "1"}, "auto", io.StringIO(), True),
    ({"FORCE_COLOR": ""}, "auto", io.StringIO(), False),
    ({"TERM": "dumb"}, "auto", Tty(), False),
    ({"NO_COLOR": "1"}, "always", io.StringIO(), True),     # the option says it all
    ({"FORCE_COLOR": "1"}, "never", Tty(), False),
])
def test_colour_follows_the_option_then_the_environment(monkeypatch, environment, choice, stream, coloured):
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert color_wanted(stream, choice) is coloured
    Terminal(color=choice).finding(FINDING, stream)
    assert ("\033[" in stream.getvalue()) is coloured


def test_diff_is_coloured_when_asked_and_plain_in_a_pipe(tmp_path, cli, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    (tmp_path / "a.py").write_text(TF1_SERVER)
    _, plain, _ = cli("--diff", "a.py")
    _, coloured, _ = cli("--diff", "--color", "always", "a.py")
    assert "\033" not in plain and plain.startswith("--- a.py")
    assert "\033[31m-server = tf1.train.Server(cluster, job_name='ps')\033[0m\n" in coloured
    assert "\033[32m+server = tf.distribute.Server(cluster, job_name='ps')\033[0m\n" in coloured
    assert "\033[36m@@ -1,3 +1,3 @@\033[0m\n" in coloured
    assert coloured.replace("\033[0m", "").replace("\033[1m", "").replace("\033[31m", "").replace(
        "\033[32m", "").replace("\033[36m", "") == plain


def _stderr_on_a_terminal(args: list[str], cwd) -> str:
    """Run tf-migrate with stderr on a pseudo-terminal (stdout a pipe): what the terminal got."""
    master, slave = pty.openpty()
    environment = {key: value for key, value in os.environ.items() if key not in ("CI", "NO_COLOR", "FORCE_COLOR")}
    process = subprocess.Popen([sys.executable, "-m", "migrator.cli", *args], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=slave, env=environment)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.communicate(timeout=300)
    os.close(master)
    return b"".join(chunks).decode()


def test_progress_on_a_terminal_says_what_how_far_and_how_fast_then_clears(tmp_path):
    for index in range(6):
        (tmp_path / f"m{index}.py").write_text(TF1_SERVER)
    terminal = _stderr_on_a_terminal(["--check", "-j", "1", "."], tmp_path)
    assert "tf-migrate: scanning 0/6 files" in terminal
    assert "tf-migrate: migrating 6/6 files, " in terminal and " files/s" in terminal
    cleared, summary = terminal.rstrip().rsplit("\r\033[K", 1)
    assert summary.startswith("tf-migrate: 6 files scanned") and "files/s" not in summary


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path):
    for index in range(6):
        (tmp_path / f"m{index}.py").write_text(TF1_SERVER)
    environment = {key: value for key, value in os.environ.items() if key != "CI"}
    run = subprocess.run([sys.executable, "-m", "migrator.cli", "--check", "."], cwd=tmp_path, capture_output=True,
                         text=True, env=environment, timeout=300)
    assert "files/s" not in run.stderr and "\r" not in run.stderr
    assert run.stdout.count("TFM101") == 6
