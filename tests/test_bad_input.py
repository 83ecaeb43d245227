"""Bad input: one clear error line naming the file, the file untouched, the others still processed."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TF1_SERVER, TF2_SERVER, snapshot

from migrator import files


@pytest.fixture
def project(tmp_path):
    """A good file beside the bad one, to show the run goes on."""
    (tmp_path / "good.py").write_text(TF1_SERVER)
    return tmp_path


@pytest.fixture
def cli_process(tmp_path):
    """`tf-migrate ARGS` in a process of its own, for what could hang, crash or exhaust the memory of the tests':
    (exit code, stdout, stderr), its output read as the strict UTF-8 PYTHONIOENCODING asks of it."""

    def run(*args: str):
        result = subprocess.run([sys.executable, "-m", "migrator.cli", *args], cwd=tmp_path, capture_output=True,
                                timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"}, preexec_fn=_limit_memory)
        return result.returncode, result.stdout.decode(), result.stderr.decode()

    return run


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


def assert_reported_and_untouched(cli, project, bad_name, expected_error, args=(".",)):
    before = snapshot(project)
    code, out, err = cli(*args)
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


@pytest.mark.parametrize("clause", ["except Exception, e:", "except (ValueError, KeyError), e:"])
def test_python_2_that_libcst_would_parse(project, cli, clause):
    (project / "py2.py").write_text(TF1_SERVER + f"try:\n    pass\n{clause}\n    pass\n")
    reason = "multiple exception types must be parenthesized (this looks like Python 2: run 2to3 first)"
    assert_reported_and_untouched(cli, project, "py2.py:6:8:", f"not valid Python 3: {reason}")


@pytest.mark.parametrize("expression, place, reason", [
    ("(" * 2000 + "1" + ")" * 2000, "deep.py:4:", "not valid Python 3: too many nested parentheses"),
    ("+".join(["1"] * 100_000), "deep.py: ", "not valid Python 3: nested too deeply for Python's parser"),
], ids=["2000 parentheses", "100000 operands"])
def test_code_nested_deeper_than_python_parses(project, cli_process, expression, place, reason):
    """libcst crashes the process on them (a segmentation fault)."""
    (project / "deep.py").write_text(TF1_SERVER + f"x = {expression}\n")
    assert_reported_and_untouched(cli_process, project, place, reason)


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
        real = files.os.open

        def open_(name, *args, **kwargs):
            if os.path.basename(name) == "secret.py":
                raise PermissionError(13, "Permission denied", str(name))
            return real(name, *args, **kwargs)

        monkeypatch.setattr(files.os, "open", open_)
    try:
        assert_reported_and_untouched(cli, project, "secret.py", "cannot read: Permission denied")
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_a_fifo_named_on_the_command_line(project, cli_process):
    """Reading it would wait for a writer for ever."""
    os.mkfifo(project / "x.py")
    assert_reported_and_untouched(cli_process, project, "x.py", "not a regular file: a FIFO", ("x.py", "good.py"))


def test_a_fifo_behind_a_symlink_in_a_folder(project, cli_process):
    os.mkfifo(project / "pipe")
    (project / "y.py").symlink_to(project / "pipe")
    assert_reported_and_untouched(cli_process, project, "y.py", "not a regular file: a FIFO")


def test_a_symlink_to_a_device(project, cli_process):
    """Reading /dev/zero never ends, and would take all the memory there is."""
    (project / "z.py").symlink_to("/dev/zero")
    assert_reported_and_untouched(cli_process, project, "z.py", "not a regular file: a character device")


def test_a_file_over_the_size_limit(project, cli):
    lines = files.MAX_SOURCE_BYTES // len("# padding\n") + 1
    (project / "huge.py").write_text(TF1_SERVER + "# padding\n" * lines)
    assert_reported_and_untouched(cli, project, "huge.py", "larger than 10 MB, the limit of a Python source")


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


@pytest.fixture
def trainer_package(tmp_path):
    """The modules of one program, in tmp_path/trainer."""
    package = tmp_path / "trainer"
    package.mkdir()
    trainer = Path(__file__).parents[1] / "examples" / "trainer_package" / "tf1" / "trainer"
    for name in ("__init__.py", "model.py", "task.py"):
        (package / name).write_bytes((trainer / name).read_bytes())
    return package


def fail_to_replace(monkeypatch, name: str) -> None:
    """Renaming a temporary file onto ``name`` fails as on a full disk."""
    replace = files.os.replace

    def fail_for_name(source, target, *args, **kwargs):
        if str(target).endswith(name):
            raise OSError(28, "No space left on device")
        return replace(source, target, *args, **kwargs)

    monkeypatch.setattr(files.os, "replace", fail_for_name)


def test_program_of_several_files_written_together_or_not_at_all(tmp_path, cli, monkeypatch, trainer_package):
    """A migrated program spans modules: if one of them cannot be written, none is, so the folder never holds
    a task.py calling a build_model its model.py does not have."""
    fail_to_replace(monkeypatch, "model.py")
    before = snapshot(tmp_path)
    code, _, err = cli(".")
    assert code == 2
    assert "model.py: error: cannot write: No space left on device" in err
    assert "task.py: error: not written: " in err and "of the same program" in err
    assert snapshot(tmp_path) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives a file to another user")
def test_owner_and_group_kept(tmp_path, cli):
    path = tmp_path / "run.py"
    path.write_text(TF1_SERVER)
    os.chown(path, 1234, 1234)
    cli("run.py")
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (1234, 1234) and path.read_text() == TF2_SERVER


def test_extended_attributes_kept(tmp_path, cli):
    path = tmp_path / "run.py"
    path.write_text(TF1_SERVER)
    try:
        os.setxattr(path, "user.origin", b"tf1")
    except (AttributeError, OSError):
        pytest.skip("no user extended attributes here")
    cli("run.py")
    assert os.getxattr(path, "user.origin") == b"tf1" and path.read_text() == TF2_SERVER


def test_hard_links_kept(tmp_path, cli):
    path = tmp_path / "run.py"
    path.write_text(TF1_SERVER)
    (tmp_path / "elsewhere").mkdir()
    os.link(path, tmp_path / "elsewhere" / "run.txt")
    cli("run.py")
    assert path.read_text() == TF2_SERVER and os.path.samefile(path, tmp_path / "elsewhere" / "run.txt")


def test_a_hard_linked_file_that_cannot_be_written_in_full_gets_its_old_bytes_back(tmp_path, cli, monkeypatch):
    path = tmp_path / "run.py"
    path.write_text(TF1_SERVER)
    os.link(path, tmp_path / "run.txt")
    fsync, calls = files.os.fsync, []

    def fail_once(fd):
        calls.append(fd)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fail_once)
    code, _, err = cli("run.py")
    assert code == 2 and "run.py: error: cannot write: No space left on device" in err
    assert path.read_text() == TF1_SERVER and os.path.samefile(path, tmp_path / "run.txt")


def test_a_file_name_of_the_longest_length_is_migrated(tmp_path, cli):
    """The temporary file beside it has a name that fits too."""
    path = tmp_path / ("m" * 252 + ".py")
    path.write_text(TF1_SERVER)
    code, _, err = cli(path.name)
    assert code == 0, err
    assert path.read_text() == TF2_SERVER and os.listdir(tmp_path) == [path.name]


def test_a_hard_linked_module_of_a_program_gets_its_old_bytes_back_if_another_cannot_be_written(
        tmp_path, cli, monkeypatch, trainer_package):
    os.link(trainer_package / "model.py", tmp_path / "model.txt")
    fail_to_replace(monkeypatch, "task.py")
    before = snapshot(tmp_path)
    code, _, err = cli(".")
    assert code == 2 and "task.py: error: cannot write: No space left on device" in err
    assert {name: content for name, (content, _, _) in snapshot(tmp_path).items()} == {
        name: content for name, (content, _, _) in before.items()}
    assert os.path.samefile(trainer_package / "model.py", tmp_path / "model.txt")


# -- file names that are not UTF-8 ---------------------------------------------

ESCAPED, ESCAPED_BAD = "caf\\xe9_\\xff.py", "bad_\\xff.py"


@pytest.fixture
def not_utf8_names(tmp_path):
    """Two files whose names are not UTF-8: one to migrate, one that is not Python 3."""
    folder = os.fsencode(tmp_path)
    with open(os.path.join(folder, b"caf\xe9_\xff.py"), "wb") as handle:
        handle.write(TF1_SERVER.encode())
    with open(os.path.join(folder, b"bad_\xff.py"), "wb") as handle:
        handle.write((TF1_SERVER + "def broken(:\n").encode())
    return folder


@pytest.mark.parametrize("mode", [(), ("--check",), ("--diff",), ("--out", "migrated")],
                         ids=["in place", "--check", "--diff", "--out"])
def test_names_that_are_not_utf8_are_printed_escaped(not_utf8_names, cli_process, mode):
    code, out, err = cli_process(*mode, ".")
    assert code == 2, err
    findings = err if mode == ("--diff",) else out
    assert f"{ESCAPED}:3:10: TFM101 [exact]" in findings
    assert f"{ESCAPED_BAD}:4:12: error: not valid Python 3" in err
    if mode == ("--diff",):
        assert f"--- {ESCAPED}\t(original)\n+++ {ESCAPED}\t(migrated)\n" in out
    folder = os.path.join(not_utf8_names, b"migrated") if mode == ("--out", "migrated") else not_utf8_names
    with open(os.path.join(folder, b"caf\xe9_\xff.py"), "rb") as handle:
        assert handle.read() == (TF1_SERVER if mode in [("--check",), ("--diff",)] else TF2_SERVER).encode()


def test_names_that_are_not_utf8_are_escaped_in_json_lines(not_utf8_names, cli_process):
    code, out, err = cli_process("--check", "--output-format", "json", ".")
    lines = [json.loads(line) for line in out.splitlines()]
    assert {(line["type"], line["path"]) for line in lines} == {("finding", ESCAPED), ("error", ESCAPED_BAD)}


@pytest.mark.parametrize("report", ["r.html", "r.json"])
def test_names_that_are_not_utf8_are_escaped_in_reports(not_utf8_names, cli_process, report):
    code, out, err = cli_process("--check", "--report", report, ".")
    assert code == 2 and "Traceback" not in err, err
    text = Path(os.fsdecode(not_utf8_names), report).read_text(encoding="utf-8")
    if report.endswith(".json"):
        assert [record["path"] for record in json.loads(text)["files"]] == [ESCAPED_BAD, ESCAPED]
    else:
        assert ESCAPED in text and ESCAPED_BAD in text


# -- what an interrupted run leaves --------------------------------------------

KILLED_WHILE_WRITING = """\
import os, signal, sys
from pathlib import Path
from migrator.files import StagedWrites

StagedWrites().stage(Path(sys.argv[1]), b"half of it")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_temporary_file_of_a_killed_run_is_removed_by_the_next_run_in_place(tmp_path, cli):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "train.py").write_text(TF1_SERVER)
    killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_WRITING, str(package / "train.py")])
    assert killed.returncode == -signal.SIGKILL and len(os.listdir(package)) == 2
    cli("--check", ".")
    assert len(os.listdir(package)) == 2, "a dry run writes nothing, removes nothing"
    code, _, err = cli(".")
    assert code == 0 and os.listdir(package) == ["train.py"] and (package / "train.py").read_text() == TF2_SERVER
    assert "tf-migrate: pkg: removed 1 temporary file an interrupted run left\n" in err


KILLED_WHILE_WRITING_A_COPY = """\
import os, signal, sys
from pathlib import Path
from migrator.files import write_atomic

os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # killed as the temporary file is synced, as --out writes
write_atomic(Path(sys.argv[1]), b"half of it", mode=0o644)
"""


def test_the_temporary_files_of_a_killed_out_run_are_removed_by_the_next_run_into_the_same_folder(tmp_path, cli):
    """A run killed as it writes its copies into --out leaves a temporary file beside each copy it was writing:
    the next run into the same folder removes them, and only them."""
    source = tmp_path / "src"
    (source / "pkg" / "sub").mkdir(parents=True)
    (source / "pkg" / "train.py").write_text(TF1_SERVER)
    (source / "pkg" / "sub" / "model.py").write_text(TF1_SERVER)
    out = tmp_path / "out"
    for name in ("pkg/train.py", "pkg/sub/model.py"):
        killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_WRITING_A_COPY, str(out / name)])
        assert killed.returncode == -signal.SIGKILL
    leftovers = sorted(path.parent.name for path in out.rglob("*.tf-migrate"))
    assert leftovers == ["pkg", "sub"]
    kept = {"notes.txt": b"not tf-migrate's", "pkg/.train.py.tf-migrate": b"not its name either",
            f"pkg/.train.py.{os.getpid()}.x1y2z3w4.tf-migrate": b"a writer still running"}
    for name, data in kept.items():
        (out / name).write_bytes(data)
    before = snapshot(source)
    code, _, err = cli("--out", "out", "src")
    assert code == 0, err
    assert "tf-migrate: out/pkg: removed 1 temporary file an interrupted run left\n" in err
    assert "tf-migrate: out/pkg/sub: removed 1 temporary file an interrupted run left\n" in err
    after = {str(path.relative_to(out)): path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert after == {**kept, "pkg/train.py": TF2_SERVER.encode(), "pkg/sub/model.py": TF2_SERVER.encode()}
    assert snapshot(source) == before


def test_temporary_files_of_a_running_writer_and_young_ones_without_a_pid_are_kept(tmp_path, cli):
    running = tmp_path / f".a.py.{os.getpid()}.x1y2z3w4.tf-migrate"
    young = tmp_path / ".b.py.k2j4h5g6.tf-migrate"      # as tf-migrate 0.1.0 named them
    old = tmp_path / ".c.py.a1b2c3d4.tf-migrate"
    for path in (running, young, old):
        path.write_bytes(b"half of it")
    os.utime(old, (time.time() - 120, time.time() - 120))
    code, _, err = cli(".")
    assert sorted(os.listdir(tmp_path)) == sorted([running.name, young.name])
    assert "tf-migrate: .: removed 1 temporary file an interrupted run left\n" in err
