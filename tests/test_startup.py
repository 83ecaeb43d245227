"""Migrated programs start fast: their Keras 2 is one that TensorFlow's autograph leaves as it is.

TF 2.15's autograph knows the `keras` package (TensorFlow's own Keras 2) but not `tf_keras`: a program
importing tf_keras has all of tf_keras' code converted at its first `fit` (examples/regression: 11 s instead of
3 s). Generated code (--keras auto, the default) imports `keras` and takes tf_keras only where `keras` is Keras 3
(TF 2.16+), which ParameterServerStrategy cannot train. benchmarks/bench_startup.py times every example.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GENERATED = sorted([*EXAMPLES.glob("*/train_tf2.py"), *(EXAMPLES / "trainer_package" / "tf2").rglob("*.py"),
                    EXAMPLES / "notebook" / "train_tf2.ipynb"])


def code_of(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"
                         and not "".join(cell["source"]).startswith("%"))
    return path.read_text()


def keras_bindings(code: str) -> list[tuple[str, str]]:
    """The module-level imports binding `keras`: (the module imported, "" or the `if` test they stand under)."""
    found = []
    for statement in ast.parse(code).body:
        under = ast.unparse(statement.test) if isinstance(statement, ast.If) else ""
        for node in statement.body if under else [statement]:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found += [(alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}", under)
                          for alias in node.names if (alias.asname or alias.name) == "keras"]
    return found


def test_generated_examples_take_tf_keras_only_where_keras_is_keras_3():
    assert len(GENERATED) >= 20
    for path in GENERATED:
        bindings = keras_bindings(code_of(path))
        if bindings:
            assert bindings == [("keras", ""), ("tf_keras", "not keras.__version__.startswith('2.')")], path


RECORD_CONVERSIONS = """\
import json, runpy, sys
from tensorflow.python.autograph.impl import api

converted, transform = [], api._TRANSPILER.transform
def recording(entity, program_ctx):
    converted.append([getattr(entity, "__module__", None) or "?", getattr(entity, "__qualname__", "?")])
    return transform(entity, program_ctx)
api._TRANSPILER.transform = recording
try:
    runpy.run_path(sys.argv[1], run_name="__main__")
finally:
    with open("converted.json", "w") as handle:
        json.dump(converted, handle)
"""


@pytest.mark.tensorflow
@pytest.mark.skipif(not importlib.util.find_spec("tensorflow"), reason="needs TensorFlow")
def test_generated_program_has_no_keras_code_converted_by_autograph(tmp_path):
    """examples/regression/train_tf2.py run by hand: of Keras' code autograph converts only the step functions
    `fit` and `evaluate` give tf.function (with tf_keras on TF 2.15: about 500 of its functions)."""
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TMPDIR"] = str(tmp_path)
    run = subprocess.run([sys.executable, "-c", RECORD_CONVERSIONS, str(EXAMPLES / "regression" / "train_tf2.py")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "eval loss: " in run.stdout, run.stderr[-3000:]
    converted = json.loads((tmp_path / "converted.json").read_text())
    keras = {name for module, name in converted if module.split(".")[0] in ("keras", "tf_keras")}
    assert keras == {"Model.make_train_function.<locals>.train_function",
                     "Model.make_test_function.<locals>.test_function"}, sorted(keras)[:20]
