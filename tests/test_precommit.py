"""The README's pre-commit recipe as written, and the hooks of .pre-commit-hooks.yaml, driven by the real
pre-commit tool.

pre-commit clones a hook repository at `rev`. The hook repository here is this checkout as it is on disk
(committed or not), made a git repository of its own and tagged as the README's `rev`: so the hooks under test
are the code under test, not whatever commit the tag of this repository names. That the tag exists in this
repository is a test of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PLAIN, TF1_SERVER, TF2_SERVER

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs this repository as a git checkout")

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def readme_recipe() -> str:
    """The ```yaml block of the README's pre-commit section."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## pre-commit\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^```yaml\n(.*?)^```$", section, re.M | re.S)
    assert match, "no ```yaml block in the README's pre-commit section"
    return match.group(1)


def readme_rev() -> str:
    match = re.search(r"^\s*rev:\s*(\S+)\s*$", readme_recipe(), re.M)
    assert match, readme_recipe()
    return match.group(1)


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_IDENTITY}).stdout


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory) -> Path:
    """This checkout's files (tracked, and new ones git does not ignore) as one commit, tagged as the README's rev."""
    repository = tmp_path_factory.mktemp("hook-repository")
    names = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).split("\0")
    for name in filter(None, names):
        source = ROOT / name
        if source.is_file():
            (repository / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repository / name)
    git("init", "-q", cwd=repository)
    git("add", "-A", cwd=repository)
    git("commit", "-q", "-m", "this checkout", cwd=repository)
    git("tag", readme_rev(), cwd=repository)
    return repository


@pytest.fixture(scope="module")
def pre_commit(tmp_path_factory):
    """Run pre-commit with these arguments in a project: the hook environment is built once for the module."""
    executable = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    if executable is None:
        pytest.skip("pre-commit is not installed (it is in the test extra)")
    home = tmp_path_factory.mktemp("pre-commit-home")

    def run(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([executable, *args, "--color", "never"], cwd=project, capture_output=True, text=True,
                              env={**os.environ, "PRE_COMMIT_HOME": str(home), **GIT_IDENTITY, **(env or {})},
                              timeout=900)

    return run


@pytest.fixture
def try_hook(pre_commit, hook_repository):
    """`pre-commit try-repo HOOK_REPOSITORY HOOK --ref REV --all-files` in a project."""

    def run(project: Path, hook: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return pre_commit(project, "try-repo", str(hook_repository), hook, "--ref", readme_rev(), "--all-files",
                          env=env)

    return run


@pytest.fixture
def project(tmp_path):
    """A git repository with TF1 code to migrate, TF1 code its config excludes, and prose that names TF1 APIs."""
    git("init", "-q", cwd=tmp_path)
    (tmp_path / "cluster.py").write_text(TF1_SERVER)
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(TF1_SERVER)
    (tmp_path / "pyproject.toml").write_text('[tool.tf-migrate]\nexclude = ["legacy/"]\n')
    (tmp_path / "README.md").write_text("tf.train.Server in prose is not code\n")
    git("add", ".", cwd=tmp_path)
    return tmp_path


def summaries(output: str) -> list[str]:
    return [line for line in output.splitlines() if re.match(r"tf-migrate: \d+ files? scanned", line)]


def test_readme_rev_is_the_tag_of_this_version():
    from migrator.config import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert readme_rev() == f"v{version}"
    if not git("tag", "--list", cwd=ROOT).split():
        pytest.skip("this checkout has no tags (fetched without them): the release tag cannot be checked here")
    tags = git("tag", "--list", readme_rev(), cwd=ROOT).split()
    assert tags == [readme_rev()], f"this repository has no tag {readme_rev()}: git tag -a {readme_rev()}"


def test_readme_recipe_as_written(pre_commit, hook_repository, project):
    """The README's block with only the repository location substituted: rewrites, honours exclude, then passes."""
    recipe, count = re.subn(r"(?m)^(\s*-\s*repo:\s*).*$", lambda match: match.group(1) + str(hook_repository),
                            readme_recipe())
    assert count == 1, recipe
    (project / ".pre-commit-config.yaml").write_text(recipe)
    git("add", ".", cwd=project)
    first = pre_commit(project, "run", "--all-files")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert (project / "cluster.py").read_text() == TF2_SERVER
    assert (project / "legacy" / "old.py").read_text() == TF1_SERVER, "excluded in [tool.tf-migrate]"
    assert "legacy/old.py" not in first.stdout
    assert [summary.split(":")[1] for summary in summaries(first.stdout)] == [" 1 file scanned"]
    git("add", ".", cwd=project)
    second = pre_commit(project, "run", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr


def test_check_hook_fails_on_tf1_code_and_writes_nothing(try_hook, project):
    result = try_hook(project, "tf-migrate-check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "cluster.py:3:10: TFM101" in result.stdout
    assert "legacy/old.py" not in result.stdout, "excluded in [tool.tf-migrate]"
    assert (project / "cluster.py").read_text() == TF1_SERVER


def test_check_hook_covers_notebooks(try_hook, project):
    from test_notebooks import notebook_text

    (project / "cluster.py").write_text(TF2_SERVER)
    (project / "train.ipynb").write_text(notebook_text("import tensorflow.compat.v1 as tf1\n"
                                                       "server = tf1.train.Server(cluster, job_name='ps')"))
    git("add", ".", cwd=project)
    result = try_hook(project, "tf-migrate-check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.ipynb:cell 2:2:10: TFM101" in result.stdout


def test_the_modules_of_a_program_go_to_one_invocation(try_hook, project):
    """A non-serial hook is run in parallel on parts of the files (as many as the cores; TRAVIS=1 makes it 2 on any
    machine): the two modules of trainer_package, apart, would each be a manual finding."""
    (project / "cluster.py").write_text(TF2_SERVER)
    shutil.copytree(ROOT / "examples" / "trainer_package" / "tf1" / "trainer", project / "trainer")
    for index in range(6):
        (project / f"util_{index}.py").write_text(PLAIN)
    git("add", ".", cwd=project)
    result = try_hook(project, "tf-migrate-check", env={"TRAVIS": "1"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "[manual]" not in result.stdout
    assert [summary.split(":")[1] for summary in summaries(result.stdout)] == [" 10 files scanned"]
