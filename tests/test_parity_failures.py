"""A side that fails says why (issue 29): the exception, and whose code raised it: the program's, the migrated
program's, or the harness's own (reported as tf-migrate's error, never as the program's)."""

from __future__ import annotations

import os
import subprocess
import sysconfig
from pathlib import Path

import pytest

from migrator.parity.failure import explain

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "regression"
TF_MIGRATE = os.path.join(os.path.dirname(os.sys.executable), "tf-migrate")
LIBRARY = sysconfig.get_paths()["purelib"]
HARNESS = "/tmp/tf-migrate-parity-1-x/lib/migrator/parity"


def traceback(*frames: tuple[str, int], exception: str = "KeyError: 'global_step'") -> str:
    lines = ["some output", "Traceback (most recent call last):"]
    for path, line in frames:
        lines += [f'  File "{path}", line {line}, in f', "    code()", "    ^^^^^^"]
    return "\n".join([*lines, exception, ""])


def test_an_exception_of_the_program_names_its_line():
    output = traceback((f"{HARNESS}/new_side.py", 337), (f"{HARNESS}/program.py", 50), ("/home/me/train.py", 57))
    failure = explain(output)
    assert failure.describe("new") == ": KeyError: 'global_step', raised in the migrated program at " \
                                      "/home/me/train.py:57"
    assert failure.describe("old").endswith("raised in the program at /home/me/train.py:57")


def test_an_exception_inside_tensorflow_is_the_programs_where_it_called_it():
    output = traceback((f"{HARNESS}/program.py", 50), ("/home/me/train.py", 12),
                       (f"{LIBRARY}/tensorflow/python/ops/array_ops.py", 900), exception="ValueError: bad shape")
    assert explain(output).describe("new") == ": ValueError: bad shape, raised in the migrated program at " \
                                              "/home/me/train.py:12"


def test_an_exception_of_the_harness_is_reported_as_tf_migrates():
    output = traceback((f"{HARNESS}/program.py", 50), ("/home/me/train.py", 12), (f"{HARNESS}/old_side.py", 140),
                       (f"{HARNESS}/exchange.py", 66), exception="ValueError: all input arrays must have the same shape")
    described = explain(output).describe("old")
    assert described == (": ValueError: all input arrays must have the same shape, in the harness "
                         "(migrator/parity/exchange.py:66): tf-migrate's own error, not the program's: please report "
                         "it with this output")


def test_an_import_the_old_program_makes_through_the_harness_s_hook_is_the_program_s():
    """Every import of the old program passes the hook that gives it TF1's tensorflow: a module it imports that
    TF 2 lacks (tensorflow.contrib) fails there, the program's failure."""
    output = traceback((f"{HARNESS}/old_side.py", 301), ("/home/me/task.py", 3), (f"{HARNESS}/era.py", 92),
                       exception="ModuleNotFoundError: No module named 'tensorflow.contrib'")
    output = output.replace('era.py", line 92, in f', 'era.py", line 92, in importing')
    described = explain(output).message("the old program failed (exit status 1)", "old")
    assert described == ("the old program failed (exit status 1): ModuleNotFoundError: No module named "
                         "'tensorflow.contrib', raised in the program at /home/me/task.py:3")


def test_a_module_the_harness_needs_missing_from_that_python_says_to_install_it():
    """--new-python names an interpreter without the harness's own needs (portpicker, for the in-process cluster)."""
    output = traceback((f"{HARNESS}/new_side.py", 301), (f"{HARNESS}/cluster.py", 12),
                       exception="ModuleNotFoundError: No module named 'portpicker'")
    described = explain(output).message("the new program failed (exit status 1)", "new")
    assert described == ("the harness failed on the new side (exit status 1): ModuleNotFoundError: No module named "
                         "'portpicker', in the harness (migrator/parity/cluster.py:12): that Python lacks `portpicker`, "
                         "which the harness needs: install it there")


def test_a_library_the_harness_called_for_the_program_may_be_either():
    output = traceback((f"{HARNESS}/program.py", 50), ("/home/me/train.py", 30), (f"{HARNESS}/new_side.py", 100),
                       (f"{LIBRARY}/tf_keras/src/engine/training.py", 1800), exception="ValueError: shapes differ")
    described = explain(output).describe("new")
    assert "where the harness runs the migrated program's call at /home/me/train.py:30" in described
    assert "if the program runs on its own, this is tf-migrate's own error" in described


def test_no_traceback_adds_nothing():
    assert explain("Killed\n").describe("new") == ""


def test_the_last_of_chained_tracebacks_counts():
    first = traceback(("/home/me/train.py", 5), exception="OSError: no file")
    second = traceback(("/home/me/train.py", 9), exception="RuntimeError: could not read")
    output = first + "\nDuring handling of the above exception, another exception occurred:\n\n" + second
    assert explain(output).describe("old") == ": RuntimeError: could not read, raised in the program at " \
                                              "/home/me/train.py:9"


SITECUSTOMIZE = '''\
from migrator.parity.exchange import Exchange

Exchange._write_npz = Exchange.write_json  # the recorder's writes now fail in the harness's own code
'''


def test_a_broken_recorder_is_reported_as_the_harness_error(tmp_path):
    """A real parity run whose recorder fails: the old program is not blamed."""
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["PYTHONPATH"] = str(tmp_path / "hook")
    result = subprocess.run([TF_MIGRATE, "parity", str(EXAMPLE / "train.py"), str(EXAMPLE / "train_tf2.py"),
                             "--steps", "3", "--cluster", "none"], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 2, result.stdout + result.stderr[-3000:]
    first = result.stdout.splitlines()[0]
    assert first.startswith("ERROR: the harness failed on the old side (exit status 1): TypeError: "), first
    assert "in the harness (migrator/parity/exchange.py:" in first and "tf-migrate's own error" in first


@pytest.mark.parametrize("side", ["old", "new"])
def test_describing_a_failure_never_blames_a_side_without_a_traceback(side):
    assert explain("").describe(side) == ""
