"""Notebooks as found in the wild: any JSON layout, cells that are not Python, and `--diff` that `git apply` takes.

The shapes are those of public course notebooks (one-line JSON with Colab's key order, two-space indents, source
lines a script joined onto one JSON line, Datalab's one-`%` cell magics, automagic shell lines); the notebooks
themselves are written here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable

import pytest
from conftest import TF1_SERVER, snapshot
from test_notebooks import PARTITIONER, TF1, TF2_PARTITIONER, notebook_text

NOT_PYTHON = "; left as it is, and the names it defines are unknown to the other cells"


def notebook(sources: list[str | list[str]], cell_type: str = "code") -> dict:
    """A notebook of cells with these sources, Colab's key order (nbformat first), no ids: nbformat 4.0."""
    cells = [{"cell_type": cell_type, "metadata": {}, "source": source, "execution_count": None, "outputs": []}
             for source in sources]
    cells.insert(0, {"cell_type": "markdown", "metadata": {}, "source": ["# Café ☕\n", "Training"]})
    return {"nbformat": 4, "nbformat_minor": 0, "metadata": {"colab": {"name": "x.ipynb"}}, "cells": cells}


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


SHOWN = "print(p)\nprint(type(p))"
ORIGINAL = [lines(TF1), lines("# moyenne réelle\n" + PARTITIONER + SHOWN)]
MIGRATED = [lines("import tensorflow as tf\n"), lines("# moyenne réelle\n" + TF2_PARTITIONER + SHOWN)]
LAYOUTS: dict[str, Callable[[list], str]] = {
    "one line, no final newline": lambda sources: json.dumps(notebook(sources), separators=(",", ":"),
                                                             ensure_ascii=False),
    "two-space indent, keys sorted": lambda sources: json.dumps(notebook(sources), indent=2, sort_keys=True,
                                                                ensure_ascii=False) + "\n",
    "four-space indent, trailing spaces": lambda sources: json.dumps(notebook(sources), indent=4) + "  \n",
    "CRLF": lambda sources: json.dumps(notebook(sources), indent=1, ensure_ascii=False).replace("\n", "\r\n") + "\r\n",
    "non-ASCII escaped": lambda sources: json.dumps(notebook(sources), indent=1, ensure_ascii=True) + "\n",
    "sources as strings": lambda sources: json.dumps(notebook(["".join(source) for source in sources]), indent=1,
                                                     ensure_ascii=False) + "\n",
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_only_the_changed_sources_change_whatever_the_layout(tmp_path, cli, layout):
    path = tmp_path / "x.ipynb"
    path.write_bytes(LAYOUTS[layout](ORIGINAL).encode())
    code, out, err = cli("x.ipynb")
    assert code == 0, err
    assert path.read_bytes() == LAYOUTS[layout](MIGRATED).encode()


def test_lines_a_script_joined_stay_joined_in_a_cell_that_does_not_change(tmp_path, cli):
    """Most entries of a changed source are one JSON line each: its new entries are so too."""
    bash = ["%%bash\n", "ls\n", "pwd"]

    def text(sources: list) -> str:
        written = json.dumps(notebook([*sources, bash]), indent=1, ensure_ascii=False) + "\n"
        return written.replace('"ls\\n",\n    "pwd"', '"ls\\n",    "pwd"')

    path = tmp_path / "x.ipynb"
    original = text(ORIGINAL).replace('"# moyenne réelle\\n",\n    "p = ', '"# moyenne réelle\\n",    "p = ')
    path.write_text(original)
    code, out, err = cli("x.ipynb")
    assert code == 0, err
    assert path.read_text() == text(MIGRATED) and '"ls\\n",    "pwd"' in original


@pytest.mark.parametrize("cell, line, why", [
    ("%bash\ngcloud config set project $PROJECT\ngsutil ls gs://$BUCKET", 1,
     "`%bash` on its first line makes it a cell magic (Datalab's `%%bash`)"),
    ("%bq query\nSELECT\n  EXTRACT(DAYOFYEAR FROM day) AS n\nFROM t", 1,
     "`%bq` on its first line makes it a cell magic (Datalab's `%%bq`)"),
    ("ls -la ../data/ARC-Easy", 1, "`ls -la ../data/ARC-Easy` is an IPython command written without `%`"),
    ("import os\ncd ../data\npip install tensorflow==1.15", 2, "`cd ../data` is an IPython command written without `%`"),
], ids=["one-% bash", "one-% bq", "automagic ls", "automagic cd"])
def test_a_cell_that_is_not_python_is_left_with_a_note_and_the_rest_migrated(tmp_path, cli, cell, line, why):
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text(TF1, cell, PARTITIONER))
    code, out, err = cli("n.ipynb")
    assert code == 0, err
    assert out.splitlines()[0] == f"n.ipynb:cell 3:{line}:1: note: not read as Python: {why}{NOT_PYTHON}"
    sources = ["".join(each["source"]) for each in json.loads(path.read_text())["cells"]]
    assert sources[2] == cell and sources[3] == TF2_PARTITIONER


def test_a_cell_magic_of_another_language_needs_no_note(tmp_path, cli):
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text(TF1, "%%bigquery df\nSELECT x\n  FROM t", PARTITIONER))
    code, out, err = cli("n.ipynb")
    assert code == 0 and ": note:" not in out
    assert ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]][2:] == [
        "%%bigquery df\nSELECT x\n  FROM t", TF2_PARTITIONER]


def test_a_notebook_without_tf1_code_gets_no_note(tmp_path, cli):
    """The pre-commit case: a notebook of shell and pandas cells is none of tf-migrate's business."""
    (tmp_path / "n.ipynb").write_text(notebook_text("import pandas as pd", "%bash\ngsutil ls gs://b", "pd.read_csv(x)"))
    code, out, err = cli("--check", "n.ipynb")
    assert (code, out) == (0, "")


def test_the_note_is_a_json_object_with_output_format_json(tmp_path, cli):
    (tmp_path / "n.ipynb").write_text(notebook_text("%bash\ngsutil ls gs://b", TF1 + PARTITIONER))
    code, out, err = cli("--check", "--output-format", "json", "n.ipynb")
    assert json.loads(out.splitlines()[0]) == {
        "type": "note", "path": "n.ipynb", "cell": 2, "line": 1, "col": 1,
        "message": "not read as Python: `%bash` on its first line makes it a cell magic (Datalab's `%%bash`)"
                   + NOT_PYTHON}


@pytest.mark.parametrize("cell", ["x = # TODO: Your code goes here", "%matplotlib inline\nx = # TODO",
                                  "print 'hello'", "cd = # TODO", "ls -la\nx = (", "%%time\ndef f(:\n  pass"])
def test_python_with_a_syntax_error_still_fails_the_notebook(tmp_path, cli, cell):
    """Python's parser stops on a line that is Python (a lab's blank to fill in, Python 2, a known line magic
    before it): the notebook is not migrated."""
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text(TF1 + PARTITIONER, cell))
    before = path.read_bytes()
    code, out, err = cli("n.ipynb")
    assert code == 2 and "n.ipynb:cell 3:" in err and "not valid Python 3" in err and path.read_bytes() == before


def test_a_shell_line_continued_with_a_backslash_is_one_ipython_line(tmp_path, cli):
    path = tmp_path / "n.ipynb"
    shell = '!curl -s http://localhost:4040/api/tunnels | python3 -c \\\n    "import sys; print(sys.stdin.read())"\n'
    path.write_text(notebook_text(TF1, shell + PARTITIONER))
    code, out, err = cli("n.ipynb")
    assert code == 0, err
    assert "".join(json.loads(path.read_text())["cells"][2]["source"]) == shell + TF2_PARTITIONER


def test_an_edit_that_would_not_be_the_notebook_is_an_error_and_writes_nothing(tmp_path, cli, monkeypatch):
    from migrator import notebook_json

    monkeypatch.setattr(notebook_json, "_written_like", lambda text, start, end, source: ([source], '["other"]'))
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text(TF1 + PARTITIONER))
    before = snapshot(tmp_path)
    code, out, err = cli("n.ipynb")
    assert code == 2 and snapshot(tmp_path) == before
    assert "n.ipynb: error: internal error: the edited JSON is not the notebook with the new sources; file left " \
           "unchanged" in err


def test_diff_of_python_files_and_notebooks_is_one_patch_git_applies(tmp_path, tmp_path_factory, cli):
    """`git apply -p0` of the whole --diff output gives what an in-place run writes."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text(TF1_SERVER)
    (tmp_path / "sub" / "jupyter.ipynb").write_text(notebook_text(TF1, PARTITIONER + SHOWN))
    (tmp_path / "sub" / "one_line.ipynb").write_text(LAYOUTS["one line, no final newline"](ORIGINAL))
    (tmp_path / "z.py").write_text(TF1_SERVER.replace("'ps'", "'worker'"))
    in_place = tmp_path_factory.mktemp("in_place")
    shutil.copytree(tmp_path, in_place, dirs_exist_ok=True)
    assert cli(str(in_place))[0] == 0
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    code, patch, err = cli("--diff", ".")
    assert code == 1 and sum(line.endswith("\t(original)") for line in patch.splitlines()) == 4
    assert "--- sub/one_line.ipynb\t(original)\n+++ sub/one_line.ipynb\t(migrated)\n" in patch
    subprocess.run(["git", "apply", "-p0"], input=patch, text=True, cwd=tmp_path, check=True)
    shutil.rmtree(tmp_path / ".git")
    assert snapshot_bytes(tmp_path) == snapshot_bytes(in_place)


def snapshot_bytes(folder) -> dict[str, bytes]:
    return {name: content for name, (content, _, _) in snapshot(folder).items()}


def test_the_readmes_notebook_output_is_what_the_tool_prints(tmp_path, cli):
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    shown = readme.split("\n### Notebooks\n", 1)[1].split("```\n", 2)[1]
    (tmp_path / "train.ipynb").write_text(notebook_text("%bash\ngsutil cp gs://bucket/data.csv .", TF1 + PARTITIONER,
                                                        "ls -la data\nwc -l data.csv"))
    code, out, err = cli("--check", "train.ipynb")
    assert out == shown


TRAINER = ("%%writefile trainer/task.py\nimport tensorflow.compat.v1 as tf\n\n"
           "def main(_):\n  estimator = tf.estimator.Estimator(model_fn)\n"
           "  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n")
WRITTEN_MODEL = """%%writefile trainer/model.py
import tensorflow.compat.v1 as tf

COLUMNS = [tf.feature_column.numeric_column("x")]


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [1.0]])).repeat().batch(2)


def train(steps):
  estimator = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=COLUMNS)
  estimator.train(input_fn=input_fn, max_steps=steps)
"""
WRITTEN_TASK = ("%%writefile trainer/task.py\nfrom trainer import model\n\n"
                "if __name__ == '__main__':\n  model.train(10)\n")


def cells_of(path) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]


def test_the_modules_cells_write_are_migrated_together_in_their_cells(tmp_path, cli):
    """A course's trainer package, written from notebook cells and run with `python -m trainer.task`: its modules
    are migrated as the program they make (the task importing the model), each put back in its cell."""
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text("import pandas as pd", WRITTEN_MODEL, WRITTEN_TASK, "!python -m trainer.task"))
    code, out, err = cli("--check", "n.ipynb")
    assert code == 1 and "n.ipynb:cell 3:12:15: TFM309 [numeric] canned DNNRegressor ->" in out, out
    assert "TFM002" not in out
    cli("n.ipynb")
    cells = cells_of(path)[1:]  # the code cells
    assert cells[0] == "import pandas as pd" and cells[2] == WRITTEN_TASK and cells[3] == "!python -m trainer.task"
    model = cells[1]
    assert model.startswith("%%writefile trainer/model.py\n") and "DNNRegressor(" not in model
    assert "def build_dnn_regressor_model(input_spec):" in model and "model.fit(" in model
    compile(model.split("\n", 1)[1], "trainer/model.py", "exec")
    assert cli("--check", "n.ipynb")[0] == 0  # migrated once for all


def test_a_written_module_left_has_its_findings_in_its_cell_and_the_cell_stays(tmp_path, cli):
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text("import pandas as pd", TRAINER, "%%writefile trainer/util.py\nimport os\n",
                                  "%%writefile README.txt\ntf.train.Server(cluster)\n"))
    before = path.read_bytes()
    code, out, err = cli("--check", "n.ipynb")
    assert code == 1
    assert out.splitlines() == [
        "n.ipynb:cell 3:5:38: TFM302 [manual] Estimator program left as it is: the model_fn must be a function "
        "defined in the files given, a functools.partial of one, or a method of an object made there"]
    cli("n.ipynb")
    assert path.read_bytes() == before


@pytest.mark.parametrize("cells, why", [
    (["%%writefile -a trainer/task.py\n" + TRAINER.split("\n", 1)[1]], "the cell appends to it (`-a`)"),
    (["%%writefile $HOME/task.py\n" + TRAINER.split("\n", 1)[1]], "its path is known only when the cell runs"),
    (["%%writefile {folder}/{name}.py\n" + TRAINER.split("\n", 1)[1]], "its path is known only when the cell runs"),
    ([TRAINER, TRAINER.replace("def main", "def other")], "another cell writes the same file"),
    (["%%writefile trainer/task.py\nimport tensorflow.compat.v1 as tf\nprint 'py2'\n"
      "estimator = tf.estimator.Estimator(model_fn)\n"], "not valid Python 3"),
], ids=["appends", "expanded path", "expanded name", "written twice", "python 2"])
def test_a_cell_whose_module_cannot_be_migrated_on_its_own_is_left_with_tfm002(tmp_path, cli, cells, why):
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text("import pandas as pd", *cells))
    before = path.read_bytes()
    code, out, err = cli("--check", "n.ipynb")
    assert code == 1 and out.startswith("n.ipynb:cell 3:1:1: TFM002 [manual] `%%writefile "), out
    assert f"writes TF1 code (an Estimator program) that tf-migrate leaves as it is: {why}" in out
    cli("n.ipynb")
    assert path.read_bytes() == before
    assert "TFM002" not in cli("--check", "--ignore", "TFM002", "n.ipynb")[1]


def test_a_module_written_in_a_folder_a_variable_names_is_migrated_in_its_cell(tmp_path, cli):
    """Azure ML's notebooks write the training script into `{project_folder}/`: the script is the module the cell
    holds, whatever the folder; the magic line stays."""
    path = tmp_path / "n.ipynb"
    written = WRITTEN_MODEL.replace("%%writefile trainer/model.py", "%%writefile {project_folder}/model.py")
    path.write_text(notebook_text("project_folder = './run'", written))
    code, out, err = cli("--check", "n.ipynb")
    assert code == 1 and "TFM309 [numeric] canned DNNRegressor ->" in out and "TFM002" not in out, out
    cli("n.ipynb")
    model = cells_of(path)[2]
    assert model.startswith("%%writefile {project_folder}/model.py\n") and "DNNRegressor(" not in model
    assert "model.fit(" in model
    assert cli("--check", "n.ipynb")[0] == 0


def test_a_written_module_the_run_migrates_as_a_file_is_left_in_the_cell(tmp_path, cli):
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "model.py").write_text(WRITTEN_MODEL.split("\n", 1)[1])
    path = tmp_path / "n.ipynb"
    path.write_text(notebook_text("import pandas as pd", WRITTEN_MODEL))
    before = path.read_bytes()
    code, out, err = cli("--check", ".")
    assert "n.ipynb:cell 3:1:1: TFM002 [manual]" in out and "the run migrates that file itself" in out
    assert "trainer/model.py:11:15: TFM309" in out
    cli(".")
    assert path.read_bytes() == before and "DNNRegressor(" not in (tmp_path / "trainer" / "model.py").read_text()
