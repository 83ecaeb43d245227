"""The command line on a throw-away tree: modes, exit codes, output, config."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import PLAIN, TF1_MANUAL, TF1_SERVER, TF2_SERVER, snapshot


def test_rewrites_in_place_and_prints_findings(tree, cli):
    code, out, err = cli(".")
    assert code == 0
    assert (tree / "cluster.py").read_text() == TF2_SERVER
    assert (tree / "pkg" / "train.py").read_text() == TF2_SERVER
    assert sorted(out.splitlines()) == [  # in the order the files finish
        "cluster.py:3:10: TFM101 [exact] tf.train.Server -> tf.distribute.Server",
        "pkg/train.py:3:10: TFM101 [exact] tf.train.Server -> tf.distribute.Server",
    ]
    assert err.strip() == "tf-migrate: 4 files scanned: 2 changed, 2 unchanged, 0 failed; findings: 2 exact, 0 numeric, 0 manual, 0 suppressed"


def test_files_with_nothing_to_do_are_never_written(tree, cli):
    before = snapshot(tree)
    cli(".")
    after = snapshot(tree)
    for name in ("plain.py", "done.py"):
        assert after[name] == before[name]


def test_second_run_changes_nothing(tree, cli):
    cli(".")
    first = snapshot(tree)
    code, out, err = cli(".")
    assert (code, out) == (0, "")
    assert "0 changed" in err
    assert snapshot(tree) == first


def test_diff_prints_and_writes_nothing(tree, cli):
    before = snapshot(tree)
    code, out, err = cli("--diff", ".")
    assert code == 1
    assert snapshot(tree) == before
    assert "-server = tf1.train.Server(cluster, job_name='ps')\n+server = tf.distribute.Server(cluster, job_name='ps')" in out
    assert out.count("--- ") == 2 and "cluster.py\t(original)" in out
    assert "TFM101" not in out, "findings go to stderr so stdout is a clean patch"
    assert "cluster.py:3:10: TFM101" in err and "2 would change" in err


def test_diff_is_a_patch_that_applies(tree, cli, tmp_path):
    _, out, _ = cli("--diff", "cluster.py")
    subprocess.run(["patch", "-p0", "-s"], input=out.replace("\t(original)", "").replace("\t(migrated)", ""),
                   text=True, cwd=tree, check=True)
    assert (tree / "cluster.py").read_text() == TF2_SERVER


@pytest.mark.parametrize(
    "files, expected",
    [({"a.py": PLAIN}, 0), ({"a.py": TF2_SERVER}, 0), ({"a.py": TF1_SERVER}, 1), ({"a.py": TF1_MANUAL}, 1)],
)
def test_check_exit_codes_and_writes_nothing(tmp_path, cli, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    before = snapshot(tmp_path)
    code, out, err = cli("--check", ".")
    assert code == expected
    assert snapshot(tmp_path) == before


def test_manual_findings_left_make_exit_1_even_when_writing(tmp_path, cli):
    (tmp_path / "a.py").write_text(TF1_MANUAL)
    code, out, _ = cli("a.py")
    assert code == 1
    assert out.startswith("a.py:3:5: TFM204 [manual]")
    assert (tmp_path / "a.py").read_text() == TF1_MANUAL


def test_out_writes_a_migrated_copy_and_leaves_the_input(tree, cli, tmp_path):
    before = snapshot(tree)
    code, _, err = cli("--out", "migrated", ".")
    assert code == 0
    assert {k: v for k, v in snapshot(tree).items() if not k.startswith("migrated")} == before
    out = tmp_path / "migrated"
    assert (out / "cluster.py").read_text() == TF2_SERVER
    assert (out / "pkg" / "train.py").read_text() == TF2_SERVER
    assert (out / "plain.py").read_text() == PLAIN, "unchanged files are copied so the copy is complete"
    code, _, err = cli("--out", "migrated", ".")
    assert "4 files scanned" in err, "the --out folder itself is not migrated again"


def test_select_and_ignore(tree, cli):
    (tree / "part.py").write_text("import tensorflow as tf\np = tf.compat.v1.fixed_size_partitioner(2)\n")
    code, out, _ = cli("--check", "--select", "TFM2", ".")
    assert [line.split()[1] for line in out.splitlines()] == ["TFM201"]
    code, out, _ = cli("--check", "--ignore", "TFM101,TFM201", ".")
    assert (code, out) == (0, "")


def test_unknown_rule_is_a_usage_error(tree, cli):
    code, _, err = cli("--select", "TFM999", ".")
    assert code == 2 and "unknown rule selector 'TFM999'" in err


def test_pyproject_config(tree, cli):
    (tree / "pyproject.toml").write_text('[tool.tf-migrate]\nignore = ["TFM101"]\nexclude = ["pkg/"]\n')
    (tree / "part.py").write_text("import tensorflow as tf\np = tf.compat.v1.fixed_size_partitioner(2)\n")
    code, out, err = cli(".")
    assert (tree / "cluster.py").read_text() == TF1_SERVER, "TFM101 ignored by the config"
    assert (tree / "pkg" / "train.py").read_text() == TF1_SERVER, "pkg/ excluded by the config"
    assert "FixedShardsPartitioner" in (tree / "part.py").read_text()
    assert "4 files scanned" in err


ESTIMATOR_PROGRAM = "examples/regression/train.py"


AUTO_KERAS = ("\nimport keras\nimport tensorflow as tf\n", "\nif not keras.__version__.startswith(\"2.\"):\n"
              "  import tf_keras as keras\n")


@pytest.mark.parametrize("option, config, expected", [
    ((), "", AUTO_KERAS),
    (("--keras", "tf.keras"), "", ("\nfrom tensorflow import keras\n",)),
    ((), 'keras = "tf.keras"\n', ("\nfrom tensorflow import keras\n",)),
    (("--keras", "tf_keras"), 'keras = "tf.keras"\n', ("\nimport tf_keras as keras\n",)),
    (("--keras", "auto"), 'keras = "tf_keras"\n', AUTO_KERAS),
], ids=["default", "option", "config", "option over config", "auto over config"])
def test_keras_import_of_generated_code(tmp_path, cli, option, config, expected):
    from pathlib import Path

    (tmp_path / "pyproject.toml").write_text("[tool.tf-migrate]\n" + config)
    (tmp_path / "train.py").write_text((Path(__file__).parent.parent / ESTIMATOR_PROGRAM).read_text())
    code, out, err = cli(*option, "train.py")
    assert code == 0, err
    text = (tmp_path / "train.py").read_text()
    assert all(part in text for part in expected), text[:1000]
    bindings = [line for line in text.splitlines() if line.strip() in ("import keras", "import tf_keras as keras",
                                                                         "from tensorflow import keras")]
    assert len(bindings) == len(expected), bindings  # auto: `import keras`, and tf_keras where that is Keras 3


def test_unknown_keras_choice_is_a_usage_error(tree, cli, capsys):
    (tree / "pyproject.toml").write_text('[tool.tf-migrate]\nkeras = "keras3"\n')
    code, _, err = cli(".")
    assert code == 2 and "keras must be one of 'auto', 'tf_keras', 'tf.keras', not 'keras3'" in err
    with pytest.raises(SystemExit):
        cli("--keras", "keras3", ".")


def test_bad_pyproject_config_is_a_usage_error(tree, cli):
    (tree / "pyproject.toml").write_text('[tool.tf-migrate]\nselekt = ["TFM1"]\n')
    code, _, err = cli(".")
    assert code == 2 and "unknown key(s) in [tool.tf-migrate]: selekt" in err


def test_skips_vcs_virtualenvs_and_build_folders(tree, cli):
    for folder in (".git", "build", "node_modules", "env-with-other-name"):
        (tree / folder).mkdir()
        (tree / folder / "x.py").write_text(TF1_SERVER)
    (tree / "env-with-other-name" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    code, _, err = cli("--check", ".")
    assert "4 files scanned" in err


def test_exclude_option_and_explicit_files(tree, cli):
    code, _, err = cli("--check", "--exclude", "pkg", ".")
    assert "3 files scanned" in err
    code, _, err = cli("--check", "--exclude", "pkg", "pkg/train.py")
    assert "1 file scanned" in err, "a file named on the command line is always taken"


def test_rules_lists_every_rule(cli):
    from rewrites import RULES

    code, out, _ = cli("rules")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == sorted(RULES)
    assert lines[sorted(RULES).index("TFM101")].split()[:3] == ["TFM101", "exact", "train-server"]
    assert "manual" in lines[sorted(RULES).index("TFM204")]


def test_rules_explains_one_rule(cli):
    code, out, _ = cli("rules", "tfm201")
    assert code == 0 and "FixedShardsPartitioner" in out and "\nBefore:\n" in out
    code, _, err = cli("rules", "TFM999")
    assert code == 2 and "no rule id starts with 'TFM999'" in err


def test_usage_errors_exit_2(cli):
    with pytest.raises(SystemExit) as exit_info:
        cli("--check", "--diff", ".")
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        cli()
    assert exit_info.value.code == 2


@pytest.mark.parametrize("args, message", [
    (("--verify-steps", "5"), "--verify-steps needs --verify"),
    (("--verify-timeout", "60"), "--verify-timeout needs --verify"),
    (("--verify-reports", "reports"), "--verify-reports needs --verify"),
    (("--verify", "--verify-steps", "0"), "--verify-steps must be at least 1"),
    (("--verify", "--verify-timeout", "0"), "--verify-timeout must be greater than 0"),
])
def test_verify_usage_errors_exit_2(tree, cli, capsys, args, message):
    before = snapshot(tree)
    with pytest.raises(SystemExit) as exit_info:
        cli(*args, ".")
    assert exit_info.value.code == 2
    assert f"tf-migrate: error: {message}" in capsys.readouterr().err
    assert snapshot(tree) == before


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_timeout_must_be_a_positive_number_of_seconds(tree, cli, capsys, value):
    before = snapshot(tree)
    with pytest.raises(SystemExit) as exit_info:
        cli("--timeout", value, ".")
    assert exit_info.value.code == 2
    assert "tf-migrate: error: --timeout must be greater than 0" in capsys.readouterr().err
    assert snapshot(tree) == before


@pytest.mark.parametrize("missing", ["numpy", "tensorflow"])
def test_verify_without_the_parity_extra_exits_2_before_doing_anything(tree, cli, monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # importlib.util.find_spec then finds nothing
    before = snapshot(tree)
    code, out, err = cli("--verify", ".")
    assert (code, out) == (2, "")
    assert err == "tf-migrate: error: --verify needs the parity extra: pip install 'tf-migrate[parity]'\n"
    assert snapshot(tree) == before


def test_parallel_and_serial_runs_agree(tmp_path, cli):
    for i in range(12):
        (tmp_path / f"m{i:02}.py").write_text(TF1_SERVER if i % 3 else TF1_MANUAL)
    _, serial, _ = cli("--check", "-j", "1", ".")
    _, parallel, _ = cli("--check", "-j", "2", ".")
    assert sorted(serial.splitlines()) == sorted(parallel.splitlines()) and len(serial.splitlines()) == 12


def test_start_up_imports_neither_tensorflow_nor_libcst(tmp_path):
    """`tf-migrate` on files with nothing to migrate (the pre-commit case) stays light."""
    (tmp_path / "plain.py").write_text(PLAIN)
    (tmp_path / "tf2.py").write_text("import tensorflow as tf\nprint(tf.constant(1))\n")
    script = (
        "import sys; from migrator.cli import main; code = main(['--check', '.']);"
        "heavy = sorted(m for m in ('tensorflow', 'libcst', 'jinja2', 'rich') if m in sys.modules);"
        "print(code, heavy)"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "0 []"


def test_console_script_help():
    exe = os.path.join(os.path.dirname(sys.executable), "tf-migrate")
    result = subprocess.run([exe, "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for option in ("--diff", "--check", "--out", "--select", "--ignore", "--verify", "exit status", "tf-migrate rules"):
        assert option in result.stdout
    assert "Jupyter notebooks (.ipynb" in " ".join(result.stdout.split())  # what PATHs may be


def test_a_reader_that_stops_early_gets_no_traceback(monkeypatch):
    """`tf-migrate rules | head -1`: writing to a pipe nobody reads any more ends quietly."""
    from migrator.cli import main

    read_end, write_end = os.pipe()
    os.close(read_end)
    monkeypatch.setattr(sys, "stdout", os.fdopen(write_end, "w", buffering=1))
    assert main(["rules"]) == 2


def test_a_program_reads_the_constants_of_a_module_of_the_run_with_nothing_to_migrate(tmp_path, cli):
    """cloudml-template: metadata.py holds no TensorFlow, only `TASK_TYPE = 'classification'`, which picks the
    Estimator model.py makes: the run reads it with the program (a module not in the run stays unread)."""
    from test_estimator_programs import CHOSEN_BY_A_CONSTANT

    (tmp_path / "trainer").mkdir()
    for path, text in CHOSEN_BY_A_CONSTANT.items():
        (tmp_path / path).write_text(text.replace("from trainer import metadata", "import metadata"))
    code, out, _ = cli("trainer")
    assert code == 0 and "[manual]" not in out, out
    assert "DNNRegressor" not in (tmp_path / "trainer" / "task.py").read_text()
    assert (tmp_path / "trainer" / "metadata.py").read_text() == CHOSEN_BY_A_CONSTANT["trainer/metadata.py"]
