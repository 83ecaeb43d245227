"""--force-exclude / `force-exclude = true`: the exclude globs apply to the files named on the command line too,
as pre-commit names every file it hands a hook (ruff's --force-exclude)."""

from __future__ import annotations

import pytest
from conftest import TF1_SERVER


@pytest.fixture
def project(tree):
    """The tree of conftest with legacy/old.py, TF1 code the config excludes."""
    (tree / "legacy").mkdir()
    (tree / "legacy" / "old.py").write_text(TF1_SERVER)
    (tree / "pyproject.toml").write_text('[tool.tf-migrate]\nexclude = ["legacy/"]\n')
    return tree


NAMED = ("cluster.py", "legacy/old.py")  # what pre-commit passes: every staged file by name


def test_named_files_are_taken_without_it(project, cli):
    code, out, err = cli("--check", *NAMED)
    assert code == 1 and "legacy/old.py:3:10: TFM101" in out, out + err
    assert "2 files scanned" in err


@pytest.mark.parametrize("option, config", [(("--force-exclude",), ""), ((), "force-exclude = true\n")],
                         ids=["option", "config"])
def test_exclude_applies_to_named_files(project, cli, option, config):
    (project / "pyproject.toml").write_text('[tool.tf-migrate]\nexclude = ["legacy/"]\n' + config)
    code, out, err = cli(*option, *NAMED)
    assert code == 0, out + err
    assert "legacy/old.py" not in out + err
    assert "1 file scanned" in err
    assert (project / "legacy" / "old.py").read_text() == TF1_SERVER
    assert (project / "cluster.py").read_text() != TF1_SERVER


def test_exclude_option_applies_to_named_files_and_folders(project, cli):
    code, out, err = cli("--check", "--force-exclude", "--exclude", "pkg", "--exclude", "cluster.py",
                         "pkg", "pkg/train.py", "cluster.py", "done.py")
    assert "1 file scanned" in err, out + err
    assert code == 0, out + err


def test_patterns_are_relative_to_the_config_folder(project, capsys, monkeypatch):
    """pre-commit runs a hook from the repository's top folder; a run from a folder below excludes the same files."""
    from migrator.cli import main

    monkeypatch.chdir(project / "legacy")
    code = main(["--check", "--force-exclude", "old.py", "../cluster.py"])
    err = capsys.readouterr().err
    assert code == 1 and "1 file scanned" in err, err
    assert (project / "legacy" / "old.py").read_text() == TF1_SERVER


def test_force_exclude_must_be_a_boolean(project, cli):
    (project / "pyproject.toml").write_text('[tool.tf-migrate]\nforce-exclude = "yes"\n')
    code, _, err = cli(".")
    assert code == 2 and "[tool.tf-migrate] force-exclude must be true or false, not 'yes'" in err
