"""Every bad input of issue 16 beside good files in one tree, one run: each bad one is one error line and left as
it was, every good one is migrated, with one worker and with two."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest
from conftest import TF1_SERVER, TF2_SERVER

GOOD = [b"good.py", b"sub/good.py", b"caf\xe9_\xff.py"]


def notebook(version: int) -> bytes:
    cell = {"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
            "source": TF1_SERVER.splitlines(keepends=True)}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": version, "nbformat_minor": 5}, indent=1).encode()


BAD = {  # name -> the content written (None: made by make_tree), and a word of its error line
    b"python2_except.py": (TF1_SERVER.encode() + b"try:\n    pass\nexcept Exception, e:\n    pass\n", "Python 2"),
    b"python2_tuple.py": (TF1_SERVER.encode() + b"try:\n    pass\nexcept (A, B), e:\n    pass\n", "Python 2"),
    b"nested.py": (TF1_SERVER.encode() + b"x = " + b"(" * 2000 + b"1" + b")" * 2000 + b"\n", "nested"),
    b"syntax.py": (TF1_SERVER.encode() + b"def broken(:\n", "not valid Python 3"),
    b"bad_\xff.py": (TF1_SERVER.encode() + b"def broken(:\n", "not valid Python 3"),
    b"latin1.py": (TF1_SERVER.encode() + b"# caf\xe9\n", "not valid utf-8"),
    b"binary.py": (TF1_SERVER.encode() + b"\x00", "NUL"),
    b"huge.py": (TF1_SERVER.encode() + b"#" * (11 * 2**20) + b"\n", "larger than"),
    b"version5.ipynb": (notebook(5), "nbformat"),
    b"fifo.py": (None, "FIFO"),
    b"zero.py": (None, "device"),
}


def make_tree(root: bytes) -> None:
    os.makedirs(os.path.join(root, b"sub"))
    for name in GOOD:
        with open(os.path.join(root, name), "wb") as handle:
            handle.write(TF1_SERVER.encode())
    for name, (content, _) in BAD.items():
        if content is not None:
            with open(os.path.join(root, name), "wb") as handle:
                handle.write(content)
    os.mkfifo(os.path.join(root, b"pipe"))
    os.symlink(b"pipe", os.path.join(root, b"fifo.py"))
    os.symlink(b"/dev/zero", os.path.join(root, b"zero.py"))
    with open(os.path.join(root, b"spaced.py"), "wb") as handle:  # good too: libcst prints its except otherwise
        handle.write(TF1_SERVER.encode() + b"try:\n    pass\nexcept (ValueError, KeyError) :\n    pass\n")


def contents(root: bytes) -> dict[bytes, bytes]:
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    found[os.path.relpath(path, root)] = handle.read()
    return found


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_tree_of_every_bad_input_beside_good_files(tmp_path, jobs):
    root = os.fsencode(tmp_path / "tree")
    make_tree(root)
    before = contents(root)
    result = subprocess.run([sys.executable, "-m", "migrator.cli", "-j", jobs, "."], cwd=root, capture_output=True,
                            timeout=300, env={**os.environ, "PYTHONIOENCODING": "utf-8"}, preexec_fn=_limit_memory)
    err = result.stderr.decode()
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert result.returncode == 2, err
    assert len(errors) == len(BAD), err
    for name, (_, word) in BAD.items():
        shown = name.decode("utf-8", "backslashreplace")
        (line,) = [line for line in errors if line.startswith(shown + ":")]
        assert word in line, line
    after = contents(root)
    for name in GOOD:
        assert after[name] == TF2_SERVER.encode(), name
    assert after[b"spaced.py"] == before[b"spaced.py"].replace(TF1_SERVER.encode(), TF2_SERVER.encode())
    assert {name: data for name, data in after.items() if name in BAD} == \
        {name: data for name, data in before.items() if name in BAD}
    assert f"{len(BAD)} failed" in err
