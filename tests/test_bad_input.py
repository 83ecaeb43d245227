"""Bad input: one clear error line naming the file, the file untouched, the others still processed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import TF1_SERVER, TF2_SERVER, snapshot

from migrator import files


@pytest.fixture
def project(tmp_path):
    """A good file beside the bad one, to show the run goes on."""
    (tmp_path / "good.py").write_text(TF1_SERVER)
    return tmp_path


def assert_reported_and_untouched(cli, project, bad_name, expected_error):
    before = snapshot(project)
    code, out, err = cli(".")
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert code == 2
    assert len(errors) == 1 and errors[0].startswith(bad_name), err
    assert expected_error in errors[0]
    assert (project / "good.py").read_text() == TF2_SERVER, "the other files are still migrated"
    after = snapshot(project)
    assert {k: v for k, v in after.items() if k != "good.py"} == {k: v for k, v in before.items() if k != "good.py"}
    assert "1 failed" in err


def test_syntax_error(project, cli):
    (project / "bad.py").write_text(TF1_SERVER + "def broken(:\n")
    assert_reported_and_untouched(cli, project, "bad.py:4:", "not valid Python 3")


def test_python_2(project, cli):
    (project / "py2.py").write_text("import tensorflow as tf\nserver = tf.train.Server(c)\nprint 'started', server\n")
    assert_reported_and_untouched(cli, project, "py2.py:3:", "this looks like Python 2")


def test_invalid_utf8(project, cli):
    (project / "latin.py").write_bytes(b"import tensorflow as tf\n# caf\xe9\nserver = tf.train.Server(c)\n")
    assert_reported_and_untouched(cli, project, "latin.py:2:", "not valid utf-8: byte 0xe9")


def test_nul_bytes(project, cli):
    (project / "blob.py").write_bytes(b"import tensorflow as tf\x00\x01\x02 tf.train.Server")
    assert_reported_and_untouched(cli, project, "blob.py", "NUL bytes")


def test_unreadable_file(project, cli, monkeypatch):
    path = project / "secret.py"
    path.write_text(TF1_SERVER)
    path.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make the read fail as it would for a user
        real = files.Path.read_bytes

        def read_bytes(self):
            if self.name == "secret.py":
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)

        monkeypatch.setattr(files.Path, "read_bytes", read_bytes)
    try:
        assert_reported_and_untouched(cli, project, "secret.py", "cannot read: Permission denied")
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_dangling_symlink(project, cli):
    (project / "gone.py").symlink_to(project / "nowhere.py")
    assert_reported_and_untouched(cli, project, "gone.py", "dangling symlink to")


def test_symlink_loop(project, cli):
    (project / "a.py").symlink_to(project / "b.py")
    (project / "b.py").symlink_to(project / "a.py")
    code, _, err = cli(".")
    assert code == 2
    assert sorted(line.split(":")[0] for line in err.splitlines() if "error" in line) == ["a.py", "b.py"]
    assert all("symlink loop" in line for line in err.splitlines() if "error" in line)
    assert os.readlink(project / "a.py") == str(project / "b.py")


def test_missing_path(project, cli):
    code, _, err = cli("good.py", "missing.py")
    assert code == 2 and "missing.py: error: cannot read: No such file or directory" in err
    assert (project / "good.py").read_text() == TF2_SERVER


def test_empty_file_is_valid_python_and_left_alone(project, cli):
    """An empty file (every empty __init__.py) is not an error: nothing to migrate, never written."""
    (project / "__init__.py").write_bytes(b"")
    before = snapshot(project)["__init__.py"]
    code, _, err = cli(".")
    assert code == 0 and "0 failed" in err
    assert snapshot(project)["__init__.py"] == before


def test_bad_encoding_declaration(project, cli):
    (project / "cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\nimport tensorflow as tf\n")
    assert_reported_and_untouched(cli, project, "cookie.py", "bad encoding declaration")


def test_unwritable_folder_loses_nothing(project, cli, monkeypatch):
    """A failed write leaves the original in place and no temporary file behind."""

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", fail)
    before = snapshot(project)
    code, _, err = cli(".")
    assert code == 2 and "good.py: error: cannot write: No space left on device" in err
    assert snapshot(project) == before


# -- what a write keeps ------------------------------------------------------


def test_crlf_line_endings_kept(tmp_path, cli):
    (tmp_path / "win.py").write_bytes(TF1_SERVER.replace("\n", "\r\n").encode())
    cli(".")
    assert (tmp_path / "win.py").read_bytes() == TF2_SERVER.replace("\n", "\r\n").encode()


def test_encoding_declaration_and_encoding_kept(tmp_path, cli):
    source = "# -*- coding: latin-1 -*-\n# café\n" + TF1_SERVER
    (tmp_path / "latin.py").write_bytes(source.encode("latin-1"))
    cli(".")
    assert (tmp_path / "latin.py").read_bytes() == ("# -*- coding: latin-1 -*-\n# café\n" + TF2_SERVER).encode("latin-1")


def test_utf8_bom_kept(tmp_path, cli):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + TF1_SERVER.encode())
    cli(".")
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbf" + TF2_SERVER.encode()


def test_file_mode_kept(tmp_path, cli):
    path = tmp_path / "run.py"
    path.write_text(TF1_SERVER)
    path.chmod(0o751)
    cli(".")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751 and path.read_text() == TF2_SERVER


def test_symlinked_file_is_written_through(tmp_path, cli):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "target.py").write_text(TF1_SERVER)
    (tmp_path / "link.py").symlink_to(tmp_path / "real" / "target.py")
    cli("link.py")
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real" / "target.py").read_text() == TF2_SERVER


def test_program_of_several_files_written_together_or_not_at_all(tmp_path, cli, monkeypatch):
    """A migrated program spans modules: if one of them cannot be written, none is, so the folder never holds
    a task.py calling a build_model its model.py does not have."""
    package = tmp_path / "trainer"
    package.mkdir()
    trainer = Path(__file__).parents[1] / "examples" / "trainer_package" / "tf1" / "trainer"
    for name in ("__init__.py", "model.py", "task.py"):
        (package / name).write_bytes((trainer / name).read_bytes())
    replace = files.os.replace

    def fail_for_model(source, target, *args, **kwargs):
        if str(target).endswith("model.py"):
            raise OSError(28, "No space left on device")
        return replace(source, target, *args, **kwargs)

    monkeypatch.setattr(files.os, "replace", fail_for_model)
    before = snapshot(tmp_path)
    code, _, err = cli(".")
    assert code == 2
    assert "model.py: error: cannot write: No space left on device" in err
    assert "task.py: error: not written: " in err and "of the same program" in err
    assert snapshot(tmp_path) == before
