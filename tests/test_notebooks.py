"""Notebooks: code cells migrated as one program, everything else byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import snapshot

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "notebook" / "train.ipynb"


def notebook_text(*cells: str | list[str]) -> str:
    """A notebook as Jupyter writes it: a markdown cell, then one code cell per argument (a markdown cell for a
    list holding one string)."""
    entries = [{"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# A notebook"]}]
    for index, cell in enumerate(cells):
        if isinstance(cell, list):
            entries.append({"cell_type": "markdown", "id": f"md{index}", "metadata": {}, "source": cell})
        else:
            entries.append({"cell_type": "code", "execution_count": index + 1, "id": f"code{index}",
                            "metadata": {"tags": ["keep"]},
                            "outputs": [{"name": "stdout", "output_type": "stream", "text": [f"out {index}\n"]}],
                            "source": cell.splitlines(keepends=True)})
    notebook = {"cells": entries, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                                             "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


TF1 = "import tensorflow.compat.v1 as tf1\n"
PARTITIONER = "p = tf1.fixed_size_partitioner(2)\n"
TF2_PARTITIONER = "p = tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)\n"


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def sources(path: Path) -> list[str]:
    return ["".join(cell["source"]) for cell in cells(path)]


def test_a_name_from_another_cell_resolves_and_only_code_sources_change(tmp_path, cli):
    path = tmp_path / "train.ipynb"
    original = notebook_text("%matplotlib inline\n" + TF1, ["Partitioned:"], PARTITIONER + "print(p)")
    path.write_text(original)
    code, out, err = cli("train.ipynb")
    assert code == 0, err
    assert out.splitlines() == ["train.ipynb:cell 4:1:5: TFM201 [exact] fixed_size_partitioner -> FixedShardsPartitioner"]
    # tf1 is used no more: its import goes, TF2's comes below the magic.
    assert sources(path) == ["# A notebook", "%matplotlib inline\nimport tensorflow as tf\n", "Partitioned:",
                             TF2_PARTITIONER + "print(p)"]
    before, after = json.loads(original), json.loads(path.read_text())
    for cell in (*before["cells"], *after["cells"]):
        cell.pop("source")
    assert before == after, "ids, metadata, outputs and markdown untouched"
    changed = [line for line in _diff(original, path.read_text()) if line[0] in "+-"]
    assert changed and all(line[1:].startswith('    "') for line in changed), changed  # source lines only


def _diff(before: str, after: str) -> list[str]:
    import difflib

    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@"))]


@pytest.mark.parametrize("magic", ["!pip install tensorflow==1.15", "%time x = 1", "%%time\nx = 1", "tf1?", "?tf1",
                                   "tf1.train??", "files = !ls", "for i in range(2):\n    !echo {i}"])
def test_magics_are_kept_byte_for_byte_and_the_code_around_them_migrated(tmp_path, cli, magic):
    path = tmp_path / "m.ipynb"
    cell = magic + "\n" + PARTITIONER if magic.startswith("%%") else TF1 + magic + "\n" + PARTITIONER
    path.write_text(notebook_text(TF1, cell) if magic.startswith("%%") else notebook_text(cell))
    cli("m.ipynb")
    migrated = [text for text in sources(path) if "FixedShardsPartitioner" in text]
    assert migrated and magic in migrated[0]


def test_lines_inside_a_string_or_brackets_are_python_even_if_they_look_like_magics(tmp_path, cli):
    path = tmp_path / "s.ipynb"
    cell = '!ls\n' + TF1 + 'NOTE = """Sharded?\n!important\n"""\nsizes = (1,\n  2)  # why?\n' + PARTITIONER
    path.write_text(notebook_text(cell))
    code, out, err = cli("s.ipynb")
    assert code == 0, err
    assert sources(path)[1] == cell.replace(TF1, "import tensorflow as tf\n").replace(PARTITIONER, TF2_PARTITIONER)


def test_a_cell_of_another_language_is_not_python(tmp_path, cli):
    path = tmp_path / "b.ipynb"
    path.write_text(notebook_text(TF1 + PARTITIONER, "%%bash\ntf1.fixed_size_partitioner(2)"))
    cli("b.ipynb")
    assert sources(path)[2] == "%%bash\ntf1.fixed_size_partitioner(2)"


def test_diff_is_one_diff_of_the_notebook_file_and_writes_nothing(tmp_path, cli):
    path = tmp_path / "d.ipynb"
    path.write_text(notebook_text(TF1, PARTITIONER, "print(1)"))
    before = snapshot(tmp_path)
    code, out, err = cli("--diff", "d.ipynb")
    assert code == 1 and snapshot(tmp_path) == before
    assert out.startswith("--- d.ipynb\t(original)\n+++ d.ipynb\t(migrated)\n") and out.count("--- ") == 1
    assert f"+    {json.dumps(TF2_PARTITIONER)}\n" in out


def test_a_second_run_changes_nothing(tmp_path, cli):
    path = tmp_path / "t.ipynb"
    path.write_text(notebook_text(TF1, PARTITIONER))
    cli("t.ipynb")
    first = path.read_bytes()
    code, out, err = cli("t.ipynb")
    assert (code, out) == (0, "") and path.read_bytes() == first


def _with_version(major: object, minor: object = 5) -> bytes:
    """A notebook of version ``major``.``minor`` (None: no nbformat at all)."""
    notebook = {"cells": [], "metadata": {}, "nbformat_minor": minor}
    if major is not None:
        notebook["nbformat"] = major
    return (json.dumps(notebook, indent=1) + "\n").encode()


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not a notebook: invalid JSON"),
    (json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": []}).encode(),
     "nbformat 3 notebook: only version 4 is migrated"),
    (json.dumps({"cells": "no", "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode(),
     "not a valid nbformat 4 notebook"),
    (notebook_text(TF1 + PARTITIONER).encode().replace(b"A notebook", b"A \xff notebook"), "not valid utf-8"),
    (b"[" * 100_000 + b"]" * 100_000, "not a notebook: JSON nested too deeply"),
    (_with_version(5), "nbformat 5 notebook: only version 4 is migrated"),
    (_with_version(-1), "nbformat -1 notebook: only version 4 is migrated"),
    (_with_version("4"), 'not a notebook: nbformat "4" is not a version number'),
    (_with_version(4.0), "not a notebook: nbformat 4.0 is not a version number"),
    (_with_version(None), "not a notebook: no nbformat version"),
    (_with_version(4, "5"), 'not a notebook: nbformat_minor "5" is not a version number'),
    (notebook_text(TF1).encode().replace(b'"cell_type": "code"', b'"cell_type": {"a": 1}'), "no nbformat 4 structure"),
], ids=["invalid JSON", "nbformat 3", "not nbformat 4", "not utf-8", "nested JSON",
        "nbformat 5", "nbformat -1", "nbformat a string", "nbformat a float", "no nbformat", "nbformat_minor a string",
        "cell_type an object"])
def test_a_notebook_that_cannot_be_read_is_one_clear_error_and_untouched(tmp_path, cli, content, message):
    path = tmp_path / "bad.ipynb"
    path.write_bytes(content)
    code, out, err = cli("bad.ipynb")
    assert code == 2 and path.read_bytes() == content
    (line,) = [line for line in err.splitlines() if "error:" in line]
    assert line.startswith("bad.ipynb") and message in line


def test_a_syntax_error_points_at_its_cell(tmp_path, cli):
    path = tmp_path / "s.ipynb"
    path.write_text(notebook_text(TF1, PARTITIONER + "def f(:\n    pass"))
    code, out, err = cli("s.ipynb")
    assert code == 2 and "s.ipynb:cell 3:2:" in err and "not valid Python 3" in err


def test_python_2_in_a_cell_is_not_migrated_and_points_at_its_cell(tmp_path, cli):
    """libcst would take `except E, e:`, Python 3 does not; the magic of the cell before it is still no error."""
    path = tmp_path / "p.ipynb"
    python_2 = "try:\n    pass\nexcept Exception, e:\n    pass"
    path.write_text(notebook_text("%matplotlib inline\n" + TF1, PARTITIONER + python_2))
    before = path.read_bytes()
    code, out, err = cli("p.ipynb")
    assert code == 2 and path.read_bytes() == before
    (line,) = [line for line in err.splitlines() if "error:" in line]
    assert line.startswith("p.ipynb:cell 3:4:") and "this looks like Python 2" in line


def test_notebooks_are_found_in_folders(tmp_path, cli):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "n.ipynb").write_text(notebook_text(TF1 + PARTITIONER))
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "n-checkpoint.ipynb").write_text(notebook_text(TF1 + PARTITIONER))
    code, out, err = cli("--check", ".")
    assert "sub/n.ipynb:cell 2:2:5: TFM201" in out and "1 file scanned" in err


def test_a_notebook_importing_a_module_beside_it_is_migrated_with_the_folder(tmp_path, cli):
    """The notebook of a trainer package (`import model`, model.py beside it), run over the folder: each file gets
    its findings (it once crashed grouping the modules, the notebook among them)."""
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "model.py").write_text(TF1 + "\n\ndef input_fn(values):\n  return tf1.data.Dataset.from_tensor_slices("
                                       "values)\n\n\ndef partitioner():\n  return tf1.fixed_size_partitioner(2)\n")
    graph = PARTITIONER + "print(model.partitioner(), model.input_fn([1.0]))"
    (tmp_path / "task.ipynb").write_text(notebook_text(TF1 + "import model\n", graph))
    code, out, err = cli("--check", ".")
    assert code == 1, err
    assert "task.ipynb:cell 3:1:5: TFM201" in out and "model.py:9:10: TFM201" in out, out


def test_the_example_notebook_migrates_with_its_magics_and_markdown():
    from migrator.engine import migrate
    from migrator.files import read_source
    from migrator.notebooks import changed_cells
    from rewrites import RULES

    source = read_source(EXAMPLE)
    result = migrate(source.text, str(EXAMPLE), frozenset(RULES))
    changes = changed_cells(source.notebook, result.source)
    kinds = [cell["cell_type"] for cell in source.notebook.cells]
    assert all(kinds[index] == "code" for index in changes) and "markdown" in kinds
    trained = next(after for before, after in changes.values() if "model.fit(" in after)
    assert trained.startswith("%%time\n") and "ParameterServerStrategy" in trained


def test_a_reader_called_before_the_cell_imports_the_rest_gets_what_it_needs_before_it(tmp_path, cli):
    """TensorFlow-Examples' first cell reads MNIST with TF1's tutorial reader, then imports TensorFlow and numpy:
    the reader written in its place runs after the imports it needs, the ones tf-migrate adds too."""
    path = tmp_path / "mnist.ipynb"
    path.write_text(notebook_text(
        "from __future__ import print_function\n\nfrom tensorflow.examples.tutorials.mnist import input_data\n"
        "mnist = input_data.read_data_sets('/tmp/data/', one_hot=False)\n\nimport matplotlib.pyplot as plt\n"
        "import numpy as np\nimport tensorflow as tf\n",
        "images = mnist.train.images\nprint(images.shape)\n"))
    code, out, err = cli("mnist.ipynb")
    assert code == 0, err
    first = sources(path)[1]
    assert first.startswith("from __future__ import print_function\n")
    call = first.index("mnist = read_mnist(")
    for line in ("import numpy as np\n", "import types\n", "import tensorflow as tf\n"):
        assert first.count(line) == 1 and first.index(line) < call, (line, first)
