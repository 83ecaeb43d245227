"""The cloudml-samples trainers' shape: task.py's Trainer trains between graphs, the graph built by functions of
the program's other modules (model.py, util.py), which name no Estimator. The run groups those modules with the
program's driver (migrator/scanning.py), so a function of theirs building the graph's input is migrated with it."""

from __future__ import annotations

from test_between_graph_input_modules import MODEL, TASK

from migrator.engine import program_groups
from rewrites import RULES

# The census fixture with no Estimator word in it: cloudml-samples' util.read_examples.
READER = MODEL.replace("input_fn", "read_examples")
DRIVER = TASK.replace("model.input_fn", "model.read_examples")


def test_a_between_graph_driver_is_grouped_with_the_modules_it_imports():
    assert READER != MODEL and DRIVER != TASK and "input_fn" not in READER + DRIVER
    texts = {"trainer/__init__.py": "", "trainer/model.py": READER, "trainer/task.py": DRIVER,
             "trainer/other.py": "import tensorflow as tf\n\nX = tf.constant(1)\n"}
    groups = sorted(map(sorted, program_groups(texts, RULES)))
    assert groups == [["trainer/__init__.py"], ["trainer/model.py", "trainer/task.py"], ["trainer/other.py"]]


def test_the_input_function_of_a_module_naming_no_estimator_is_migrated_with_the_driver(tmp_path, cli):
    folder = tmp_path / "trainer"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "model.py").write_text(READER)
    (folder / "task.py").write_text(DRIVER)
    code, out, _ = cli("trainer")
    assert "TFM104" not in out, out
    task, model = (folder / "task.py").read_text(), (folder / "model.py").read_text()
    assert "ClusterCoordinator(strategy)" in task and "dataset = (model.read_examples(" in task
    assert "get_next" not in model and "make_one_shot_iterator" not in model
