from __future__ import annotations

from pathlib import Path

import pytest

from migrator.cli import main

TF1_SERVER = "import tensorflow.compat.v1 as tf1\n\nserver = tf1.train.Server(cluster, job_name='ps')\n"
TF2_SERVER = "import tensorflow as tf\n\nserver = tf.distribute.Server(cluster, job_name='ps')\n"
TF1_MANUAL = "import tensorflow.compat.v1 as tf1\n\np = tf1.fixed_size_partitioner(2, axis=1)\n"
PLAIN = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A throw-away project: one file to migrate, one to leave, one TF2 file, one in a subfolder."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "cluster.py").write_text(TF1_SERVER)
    (tmp_path / "plain.py").write_text(PLAIN)
    (tmp_path / "done.py").write_text(TF2_SERVER)
    (tmp_path / "pkg" / "train.py").write_text(TF1_SERVER)
    return tmp_path


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """Run `tf-migrate ARGS` in-process from the tree's folder: (exit code, stdout, stderr)."""

    def run(*args: str):
        monkeypatch.chdir(tmp_path)
        code = main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def read_if_readable(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except PermissionError:
        return None


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file below ``folder``: content, mtime in ns and mode."""
    result = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            result[str(path.relative_to(folder))] = (read_if_readable(path), info.st_mtime_ns, info.st_mode)
    return result


