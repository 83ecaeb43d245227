"""Which files the rewrites parse at all, and how much work a file costs them (migrator/scanning.py, engine)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from migrator import engine
from migrator.scanning import families_for, scan
from rewrites import RULES

ALL_RULES = frozenset(RULES)


def woken(source: str) -> list[str]:
    return [family.module for family in families_for(dedent(source), ALL_RULES)]


@pytest.mark.parametrize("source", [
    '''
    """Starts a tf.train.Server and a tf.estimator.Estimator(model_fn) with a fixed_size_partitioner."""
    import tensorflow as tf
    ''',
    '''
    import tensorflow as tf
    # server = tf.train.Server(cluster); MonitoredTrainingSession(...); tf.estimator.Estimator(...)
    HELP = "numpy_input_fn, replica_device_setter, Supervisor"
    ''',
    '''
    import tensorflow as tf


    class Server:  # a definition is not a use of TensorFlow's
        def Estimator(self):
            pass
    ''',
])
def test_words_only_in_strings_comments_or_definitions_wake_nothing(source):
    assert woken(source) == []


@pytest.mark.parametrize("source, family", [
    ("import tensorflow as tf\nserver = tf.train.Server(cluster)\n", "servers"),
    ("from tensorflow.train import Server\n", "servers"),
    ("import tensorflow as tf\nest = tf.estimator.DNNEstimator(head)\n", "estimator"),
    ("import tensorflow as tf\nmode = tf.estimator.ModeKeys.TRAIN\n", "estimator"),
    ("from tensorflow.estimator import train_and_evaluate\ntrain_and_evaluate(est, train, test)\n", "estimator"),
    ("from tensorflow.estimator import Estimator as E\nest = E(model_fn)\n", "estimator"),
    ("from tensorflow import estimator as tfe\nest = tfe.Estimator(model_fn)\n", "estimator"),
    ("import tensorflow as tf\nwith tf.device('/job:ps/task:0'):\n    pass\n", "tf1_cluster"),
    ("import tensorflow as tf\nwith tf.train.MonitoredTrainingSession(master=target) as sess:\n    pass\n",
     "between_graph"),
])
def test_names_the_code_uses_wake_their_family(source, family):
    assert family in woken(source)


def test_a_file_python_cannot_parse_keeps_its_text_candidates_so_its_error_is_reported():
    source = "import tensorflow as tf\nprint 'starting'\nserver = tf.train.Server(cluster)\n"
    assert woken(source) == ["servers"]
    with pytest.raises(engine.FileError, match="not valid Python 3"):
        engine.migrate(source, "old.py", ALL_RULES)


def test_a_scan_lists_the_imports_of_a_file_related_to_a_program():
    found = scan("import tensorflow as tf\nfrom . import model\nfrom trainer.util import input_fn\n", ALL_RULES)
    assert found.families == ()
    assert set(found.imports) == {("tensorflow", 0), ("model", 1), ("", 1), ("trainer.util.input_fn", 0),
                                  ("trainer.util", 0)}
    assert scan("import os\n", ALL_RULES).imports is None


def test_libcst_never_parses_a_file_whose_trigger_words_are_only_in_its_docstring(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(engine, "_parse", refuse)
    source = '"""Replaces tf.train.Server and tf.estimator.Estimator(...)."""\nimport tensorflow as tf\n'
    assert engine.migrate(source, "doc.py", ALL_RULES).source == source


def test_the_families_of_a_file_share_one_resolution_of_its_names(monkeypatch):
    """Four families wake on this file and none changes it: its scopes are resolved once, and what nobody asks
    for (positions: no finding; the qualified names of every node) not at all."""
    from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider, ScopeProvider

    resolutions = []
    for provider in (ScopeProvider, QualifiedNameProvider, PositionProvider, ParentNodeProvider):
        def counted(self, *args, real=provider.__init__, **kwargs):
            resolutions.append(type(self).__name__)
            real(self, *args, **kwargs)

        monkeypatch.setattr(provider, "__init__", counted)
    source = dedent("""\
        import tensorflow as tf

        def describe(cluster):
            print(cluster.Server, cluster.MonitoredTrainingSession, cluster.fixed_size_partitioner)
        """)
    assert woken(source) == ["servers", "partitioners", "between_graph", "tf1_cluster"]
    result = engine.migrate(source, "describe.py", ALL_RULES)
    assert result.source == source and result.findings == []
    assert resolutions == ["ScopeProvider"]


def test_a_family_that_reports_what_the_rewrites_leave_runs_after_them_at_the_users_columns(monkeypatch):
    """tf1_cluster changes no code and reports the cluster code the rewrites leave (not what the program families
    removed): on a file servers rewrites too it runs after it, on the rewritten code's scopes (a second resolution),
    and its findings point at the user's columns. between_graph wakes on the device setter too (a program it cannot
    read gets its TFM104) and, with no session made here, says nothing."""
    from libcst.metadata import ScopeProvider

    resolutions = []
    real = ScopeProvider.__init__

    def counted(self, *args, **kwargs):
        resolutions.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ScopeProvider, "__init__", counted)
    source = dedent("""\
        import tensorflow as tf

        server = tf.train.Server(cluster, job_name="worker")
        with tf.device(tf.train.replica_device_setter(cluster=cluster)):
            pass
        """)
    assert woken(source) == ["servers", "between_graph", "tf1_cluster"]
    result = engine.migrate(source, "cluster.py", ALL_RULES)
    assert "server = tf.distribute.Server(cluster" in result.source
    assert sorted((f.rule, f.line, f.col) for f in result.findings) == [
        ("TFM101", 3, 10), ("TFM107", 3, 10), ("TFM107", 4, 16)]
    assert len(resolutions) == 2


def test_a_family_sees_only_the_statements_that_mention_its_names(monkeypatch):
    """servers handles Server and ClusterSpec: of a function that names neither it sees the def, not the code."""
    from rewrites import servers

    seen = []
    real = servers.Rewrite.leave_Name

    def recording(self, original, updated):
        seen.append(original.value)
        return real(self, original, updated)

    monkeypatch.setattr(servers.Rewrite, "leave_Name", recording)
    source = dedent("""\
        import tensorflow as tf

        def start(cluster):
            return tf.train.Server(cluster)

        def unrelated(values):
            return sorted(values)
        """)
    assert "tf.distribute.Server(cluster)" in engine.migrate(source, "start.py", ALL_RULES).source
    assert "cluster" in seen and "sorted" not in seen and "values" not in seen


def test_the_users_module_is_printed_once_for_the_positions_of_the_findings_and_the_lines_kept(monkeypatch):
    import libcst as cst

    printed = []
    real = cst.Module._codegen

    def counted(self, state, **kwargs):
        printed.append(self)
        real(self, state, **kwargs)

    monkeypatch.setattr(cst.Module, "_codegen", counted)
    source = "import tensorflow as tf\n\nserver = tf.train.Server(cluster)\n"
    result = engine.migrate(source, "server.py", ALL_RULES)
    assert [(f.rule, f.line, f.col) for f in result.findings] == [("TFM101", 3, 10)]
    assert len(printed) == 2  # the user's module, once; the migrated one
