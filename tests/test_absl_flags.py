"""TFM013: a flag the program defines that absl's logging (imported by TF 2) defines too gets allow_override=True."""

from __future__ import annotations

import subprocess
import sys
from textwrap import dedent

import pytest

from helpers import run

PROGRAM = dedent("""\
    import tensorflow as tf

    flags = tf.app.flags
    flags.DEFINE_string("log_dir", "/tmp/log", "where to save logs")
    flags.DEFINE_integer(
        "v", 1,
        "verbosity",
    )
    flags.DEFINE_string("data_dir", "/tmp/data", "the program's own")
    tf.flags.DEFINE_bool(name="logtostderr", default=False, help="its own choice", allow_override=False)
    FLAGS = flags.FLAGS
    """)


def test_absl_s_logging_flags_get_allow_override_and_the_others_stay():
    result = run(PROGRAM)
    assert 'flags.DEFINE_string("log_dir", "/tmp/log", "where to save logs", allow_override=True)\n' in result.source
    assert '    "verbosity",\n    allow_override=True,\n)\n' in result.source
    assert 'flags.DEFINE_string("data_dir", "/tmp/data", "the program\'s own")\n' in result.source
    assert 'allow_override=False)' in result.source  # what the program chose stays
    assert [(f.line, f.rule) for f in result.findings] == [(4, "TFM013"), (5, "TFM013")]


@pytest.mark.parametrize("source", [
    'import absl.flags as flags\nflags.DEFINE_string("log_dir", "", "absl\'s own module, not TF\'s")\n',
    'import tensorflow as tf\nname = "log_dir"\ntf.app.flags.DEFINE_string(name, "", "a name not read")\n',
    'import tensorflow as tf\ntf.app.flags.DEFINE_string(*["log_dir", "", "x"])\n',
])
def test_what_is_not_tfs_define_of_a_literal_name_stays(source):
    assert run(source).source == source


@pytest.mark.tensorflow
def test_the_migrated_flags_parse_under_tensorflow_2(tmp_path):
    """TF 2 has imported absl's logging by the time the program defines its flags: as written, DuplicateFlagError;
    migrated, the program's flag holds its command line."""
    program = dedent("""\
        import tensorflow as tf

        tf.compat.v1.app.flags.DEFINE_string("log_dir", "/tmp/log", "where to save logs")
        FLAGS = tf.compat.v1.app.flags.FLAGS
        FLAGS(["program", "--log_dir=/tmp/x"])
        print(FLAGS.log_dir)
        """)
    migrated = run(program).source
    assert "allow_override=True" in migrated
    for name, text in (("old.py", program), ("new.py", migrated)):
        (tmp_path / name).write_text(text)
    old = subprocess.run([sys.executable, "old.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert old.returncode != 0 and "DuplicateFlagError" in old.stderr and "log_dir" in old.stderr
    new = subprocess.run([sys.executable, "new.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert new.returncode == 0 and new.stdout.endswith("/tmp/x\n"), new.stderr[-2000:]
