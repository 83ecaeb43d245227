"""Only lines a rewrite changed change: libcst's printing quirks never reach the user's other lines."""

from __future__ import annotations

from migrator import engine
from migrator.findings import FileError
from migrator.untouched import first_difference, with_untouched_lines
from rewrites import RULES

ALL_RULES = frozenset(RULES)

SPACED_EXCEPT = """\
import tensorflow as tf

try:
    pass
except (ValueError, KeyError) :
    pass
server = tf.train.Server(cluster)
"""


def test_libcst_drops_the_space_before_an_except_colon():
    """The quirk this guards against; if libcst fixes it, the guard is simply not needed for this line."""
    import libcst as cst

    assert cst.parse_module(SPACED_EXCEPT).code != SPACED_EXCEPT


def test_a_line_libcst_prints_otherwise_stays_as_written_when_another_line_is_migrated():
    result = engine.migrate(SPACED_EXCEPT, "cluster.py", ALL_RULES)
    assert result.source == SPACED_EXCEPT.replace("tf.train.Server", "tf.distribute.Server")
    assert [finding.rule for finding in result.findings] == ["TFM101"]


def test_a_file_with_nothing_to_migrate_is_not_printed_by_libcst_at_all():
    source = SPACED_EXCEPT.replace("server = tf.train.Server(cluster)\n", "")
    assert engine.migrate(source, "plain.py", ALL_RULES).source == source


def test_changed_lines_come_from_the_migration_and_the_others_from_the_user():
    original = "a  = 1\nb = 2\nc  = 3\n"
    printed = "a = 1\nb = 2\nc = 3\n"  # a printer that normalised two lines
    migrated = "a = 1\nb = 20\nc = 3\nd = 4\n"
    assert with_untouched_lines(original, printed, migrated) == "a  = 1\nb = 20\nc  = 3\nd = 4\n"


def test_lines_that_cannot_be_matched_are_refused():
    assert with_untouched_lines("a = (1,\n 2)\n", "a = (1, 2)\n", "b = (1, 2)\n") is None
    assert first_difference("a = (1,\n 2)\n", "a = (1, 2)\n") == 1


def test_a_file_libcst_prints_with_other_lines_is_left_with_an_error(monkeypatch):
    monkeypatch.setattr("migrator.untouched.with_untouched_lines", lambda *args: None)
    result = engine.migrate_group({"cluster.py": SPACED_EXCEPT}, ALL_RULES)["cluster.py"]
    assert isinstance(result, FileError)
    assert "does not print this file back as it is (line 5)" in result.message
