"""Before/after checks shared by the rewrite tests (django-upgrade style)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

from migrator.engine import migrate
from rewrites import RULES

ALL_RULES = frozenset(RULES)

# examples/ folders whose train_tf2.py is what tf-migrate makes of train.py.
GENERATED_EXAMPLES = ("regression", "momentum", "rmsprop", "classifier", "partitioned", "dropout_batchnorm",
                      "embedding", "flags_app", "tpu_estimator", "premade_iris", "linear_weighted",
                      "census_wide_deep", "adam_schedule", "exporter", "export_outputs", "helper_loop", "slim_nets",
                      "model_choice", "recommender")


def run(source: str, enabled=ALL_RULES, keras="tf_keras"):
    return migrate(dedent(source), "example.py", enabled, keras)


def tfm104(source: str) -> tuple[str, str]:
    """(the line of the one TFM104 finding, its message) of a between-graph program left as it is."""
    result = run(source)
    assert "ClusterCoordinator" not in result.source and "MultiWorkerMirroredStrategy" not in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    return source.splitlines()[finding.line - 1], finding.message


def check_noop(source: str, findings: tuple[str, ...] = (), enabled=ALL_RULES) -> None:
    """The source stays as it is, with exactly these finding rule ids."""
    source = dedent(source)
    result = migrate(source, "example.py", enabled)
    assert result.source == source
    assert [finding.rule for finding in result.findings] == list(findings)


def check_left(source: str, message: str) -> None:
    """The program stays as it is, a TFM302 finding saying ``message`` (among what else stops it)."""
    result = run(source)
    assert result.source == source
    messages = [f.message for f in result.findings if f.rule == "TFM302"]
    assert any(message in m for m in messages), messages


def check_transformed(before: str, after: str, findings: tuple[str, ...] | None = None, enabled=ALL_RULES):
    """``before`` becomes ``after``; a second run changes nothing and reports nothing new."""
    before, after = dedent(before), dedent(after)
    result = migrate(before, "example.py", enabled)
    assert result.source == after
    again = migrate(after, "example.py", enabled)
    assert again.source == after, "not idempotent"
    assert not [f for f in again.findings if f.safety != "manual"], "a second run rewrote something"
    if findings is not None:
        assert [finding.rule for finding in result.findings] == list(findings)
    return result.findings


def run_isolated(function, *args):
    """``function(*args)`` in a fresh interpreter (a module-level function; its exceptions come back). TensorFlow
    objects made in the test process would be inherited by the workers tf-migrate forks in later tests, whose
    garbage collection then crashes on them."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def tf1_and_migrated_evaluations(folder: Path, source: str, printed: str) -> list[list[float]]:
    """The TF1 program ``source`` trains and evaluates in ``folder``, its model_dir `model`; then, migrated, it
    restores that checkpoint (nothing left to train) and evaluates: the numbers the regular expression ``printed``
    reads at the end of each one's output (TF1's first)."""
    (folder / "train.py").write_text(source)
    (folder / "train_tf2.py").write_text(source)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    tf_migrate = str(Path(sys.executable).parent / "tf-migrate")
    assert subprocess.run([tf_migrate, "train_tf2.py"], cwd=folder, capture_output=True, env=env).returncode == 0
    found = []
    for program in ("train.py", "train_tf2.py"):
        done = subprocess.run([sys.executable, program, "--model_dir", "model"], cwd=folder, capture_output=True,
                              text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        found.append([float(value) for value in re.search(printed, done.stdout.strip()).groups()])
    return found


def parity_of_migration(folder: Path, tf1: str, before: str, *options: str) -> str:
    """`tf-migrate parity` (with ``options``) of the TF1 program ``tf1`` against tf-migrate's migration of ``before``
    (a program doing the same, or ``tf1`` itself), in ``folder``: what it printed."""
    (folder / "train.py").write_text(tf1)
    (folder / "train_tf2.py").write_text(before)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    tf_migrate = str(Path(sys.executable).parent / "tf-migrate")
    migrate = subprocess.run([tf_migrate, "train_tf2.py"], cwd=folder, capture_output=True, text=True, env=env)
    assert migrate.returncode == 0 and "TFM310" in migrate.stdout, migrate.stdout + migrate.stderr
    result = subprocess.run([tf_migrate, "parity", "train.py", "train_tf2.py", *options], cwd=folder,
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result.stdout


def assert_serving(processes) -> None:
    """A cluster's background tasks (started with their output piped, as text) still serve: none has ended, which
    would be a crash; what each ended one printed is shown."""
    ended = [process.communicate()[0][-3000:] for process in processes if process.poll() is not None]
    assert not ended, ended
