"""The hooks of .pre-commit-hooks.yaml, driven by the real pre-commit tool (`pre-commit try-repo`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TF1_SERVER, TF2_SERVER

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs this repository as a git checkout")


@pytest.fixture(scope="module")
def pre_commit(tmp_path_factory):
    """Run `pre-commit try-repo <this repository> HOOK --all-files` in a throw-away git repository."""
    executable = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    if executable is None:
        pytest.skip("pre-commit is not installed (it is in the test extra)")
    home = tmp_path_factory.mktemp("pre-commit-home")
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}

    def run(project: Path, hook: str) -> subprocess.CompletedProcess:
        return subprocess.run([executable, "try-repo", str(ROOT), hook, "--all-files", "--color", "never"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=600)

    return run


@pytest.fixture
def project(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "cluster.py").write_text(TF1_SERVER)
    (tmp_path / "README.md").write_text("tf.train.Server in prose is not code\n")
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    return tmp_path


def test_check_hook_fails_on_tf1_code_and_writes_nothing(pre_commit, project):
    result = pre_commit(project, "tf-migrate-check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "cluster.py:3:10: TFM101" in result.stdout
    assert (project / "cluster.py").read_text() == TF1_SERVER


def test_rewrite_hook_fixes_the_file_and_fails_the_commit_once(pre_commit, project):
    first = pre_commit(project, "tf-migrate")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert (project / "cluster.py").read_text() == TF2_SERVER
    subprocess.run(["git", "add", "."], cwd=project, check=True)
    second = pre_commit(project, "tf-migrate")
    assert second.returncode == 0, second.stdout + second.stderr
    assert pre_commit(project, "tf-migrate-check").returncode == 0


def test_check_hook_covers_notebooks(pre_commit, project):
    from test_notebooks import notebook_text

    (project / "cluster.py").write_text(TF2_SERVER)
    (project / "train.ipynb").write_text(notebook_text("import tensorflow.compat.v1 as tf1\n"
                                                       "server = tf1.train.Server(cluster, job_name='ps')"))
    subprocess.run(["git", "add", "."], cwd=project, check=True)
    result = pre_commit(project, "tf-migrate-check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.ipynb:cell 2:2:10: TFM101" in result.stdout
