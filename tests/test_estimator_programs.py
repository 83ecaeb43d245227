"""Estimator programs as people write them: in functions, across modules, configured from the command line.

The fixtures have the shapes real TF1 programs have (the Cloud ML trainer package, the TF
tutorials' main(argv), tf.app.run with tf.flags, argparse, a train/evaluate loop): what the
migration must find wherever it stands, and what it must say when it cannot.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from textwrap import dedent

import pytest

from helpers import ALL_RULES
from migrator.engine import migrate_group
from migrator.findings import FileError


def run_tree(files: dict[str, str], enabled=ALL_RULES, on_disk: tuple[str, ...] = ()):
    """Migrate the files of one program together; ``on_disk``: files that exist but are not among the paths given."""
    files = {path: dedent(text) for path, text in files.items()}
    results = migrate_group(files, enabled, exists=lambda path: path in on_disk)
    for path, result in results.items():
        assert not isinstance(result, FileError), result.format()
    again = migrate_group({path: result.source for path, result in results.items()}, enabled,
                          exists=lambda path: path in on_disk)
    assert {path: result.source for path, result in again.items()} == \
        {path: result.source for path, result in results.items()}, "a second run changes nothing"
    return results


def run_one(text: str, **kwargs):
    return run_tree({"train.py": text}, **kwargs)["train.py"]


def rules(result) -> list[str]:
    return sorted(finding.rule for finding in result.findings)


MODEL_FN = '''\
def model_fn(features, labels, mode, params):
  net = tf.layers.dense(features["x"], params["units"], activation=tf.nn.relu)
  logits = tf.layers.dense(net, 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  optimizer = tf.train.AdagradOptimizer(params["learning_rate"])
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
'''

INPUT_FN = '''\
def make_input_fn(rows, labels, mode, batch_size):
  def _input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(({"x": rows}, labels))
    if mode == tf.estimator.ModeKeys.TRAIN:
      dataset = dataset.shuffle(100).repeat()
    return dataset.batch(batch_size)
  return _input_fn
'''

IN_MAIN = f'''\
import argparse

import tensorflow.compat.v1 as tf

ROWS, LABELS = [[1.0], [2.0]], [[0.5], [1.0]]


{MODEL_FN}

{INPUT_FN}

def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=20)
  parser.add_argument("--job-dir")
  args = parser.parse_args()
  config = tf.estimator.RunConfig(model_dir=args.job_dir, tf_random_seed=7)
  estimator = tf.estimator.Estimator(model_fn, config=config, params={{"units": 4, "learning_rate": 0.1}})
  train_spec = tf.estimator.TrainSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, 2),
                                      max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.EVAL, 2), steps=1)
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)


if __name__ == "__main__":
  main()
'''


def test_estimator_built_and_driven_in_main_is_migrated_where_it_stands():
    result = run_one(IN_MAIN)
    code = result.source
    assert "TFM301" in rules(result)
    # TF2 as `tf`, the model_fn replaced in place by its Keras function, the bootstrap before main.
    assert code.startswith("import argparse\nimport os\nimport time\n\nimport tensorflow as tf\nimport tf_keras as keras\n")
    assert code.index("def build_model(input_spec, params):") < code.index("def make_input_fn") < \
        code.index("def strategy_for_this_task():") < code.index("def restore_tf1_checkpoint(path, model):") < \
        code.index("def main():")
    main = code[code.index("def main():"):]
    assert "  keras.utils.set_random_seed(7)\n  task_type, strategy = strategy_for_this_task()\n" in main
    assert '  dataset = make_input_fn(ROWS, LABELS, "train", 2)()\n' in main
    assert '    model = build_model(dataset.element_spec[0], params={"units": 4, "learning_rate": 0.1})\n' in main
    # The program's own expressions stay its own: the command line keeps working.
    assert "steps_per_epoch=args.train_steps - steps_done" in main
    assert 'os.path.join(args.job_dir, "tf2"),\n      max_to_keep=5)' in main
    assert "tf1_checkpoint = tf.train.latest_checkpoint(args.job_dir)" in main
    assert 'eval_dataset = make_input_fn(ROWS, LABELS, "eval", 2)().repeat()' in main
    assert 'if mode == "train":' in code  # ModeKeys are the strings they are: tf.estimator is gone from TF 2.16
    for gone in ("Estimator(", "RunConfig(", "TrainSpec", "EvalSpec", "train_and_evaluate", "compat.v1 as tf"):
        assert gone not in code
    assert 'if __name__ == "__main__":\n  main()\n' in code
    compile(code, "train.py", "exec")


def test_generated_functions_stand_two_blank_lines_from_the_code_after_them():
    program = IN_MAIN.replace("  return _input_fn\n\n\ndef main():", "  return _input_fn\ndef main():")
    assert program != IN_MAIN
    code = run_one(program).source
    assert "    self.saved, self.saved_at = self.batches, time.time()\n\n\ndef main():" in code


FLAGS_PROGRAM = """\
import absl.app
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

flags = tf.app.flags
flags.DEFINE_integer("train_steps", 20, "steps")
flags.DEFINE_integer("batch_size", 2, "batch size")
FLAGS = flags.FLAGS
ROWS, LABELS = [[1.0], [2.0]], [[0.5], [1.0]]


""" + MODEL_FN + """

def train_input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": ROWS}, LABELS)).repeat().batch(FLAGS.batch_size)


MAIN
  estimator = tf.estimator.Estimator(model_fn=model_fn, params={"units": 3, "learning_rate": 0.05})
  estimator.train(input_fn=train_input_fn, max_steps=FLAGS.train_steps)


if __name__ == "__main__":
  RUN(main)
"""


@pytest.mark.parametrize("main, run", [
    ("def main(argv):\n  del argv", "tf.app.run"),
    ("def main(_):", "tf.compat.v1.app.run"),
    ("def main(unused_argv):", "absl.app.run"),
], ids=["tf.app.run(main)", "tf.compat.v1.app.run", "absl.app.run"])
def test_main_run_by_app_run_with_tf_flags(main, run):
    code = run_one(FLAGS_PROGRAM.replace("MAIN", main).replace("RUN", run)).source
    assert "disable_v2_behavior" not in code and "import tensorflow as tf\n" in code
    assert "flags = tf.compat.v1.app.flags\n" in code
    assert "model.fit(dataset, epochs=1, steps_per_epoch=FLAGS.train_steps, verbose=2)" in code
    assert f"  {run.replace('tf.app', 'tf.compat.v1.app')}(main)\n" in code
    compile(code, "train.py", "exec")


def test_train_and_evaluate_loop_keeps_its_loop_with_the_model_built_before_it():
    program = IN_MAIN.replace('''  train_spec = tf.estimator.TrainSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, 2),
                                      max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.EVAL, 2), steps=1)
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)''', '''  for epoch in range(3):
    estimator.train(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, 2), steps=5)
    results = estimator.evaluate(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.EVAL, 2), steps=1)
    print(epoch, results["loss"])''')
    code = run_one(program).source
    main = code[code.index("def main():"):]
    assert main.index("task_type, strategy = strategy_for_this_task()") < main.index("  for epoch in range(3):\n") < \
        main.index("    model.fit(dataset, epochs=1, steps_per_epoch=5,")
    assert ('results = model.evaluate(make_input_fn(ROWS, LABELS, "eval", 2)().repeat(), steps=1, return_dict=True, '
            'verbose=2)') in " ".join(re.sub(r"\(\s+", "(", main).split())
    assert "restore_tf1_checkpoint(tf1_checkpoint, model)\n\n  for epoch" in main


def test_drivers_in_the_main_guard_at_module_level():
    program = f'''\
    import tensorflow.compat.v1 as tf
    ROWS, LABELS = [[1.0], [2.0]], [[0.5], [1.0]]

    {MODEL_FN.replace(chr(10), chr(10) + "    ")}
    {INPUT_FN.replace(chr(10), chr(10) + "    ")}
    if __name__ == "__main__":
      estimator = tf.estimator.Estimator(model_fn, params={{"units": 3, "learning_rate": 0.05}})
      estimator.train(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, 2), max_steps=10)
    '''
    code = run_one(program).source
    guard = code[code.index('if __name__ == "__main__":'):]
    assert "  task_type, strategy = strategy_for_this_task()" in guard and "  model.fit(" in guard
    assert code.index("def strategy_for_this_task") < code.index('if __name__ == "__main__":')


# -- across modules -------------------------------------------------------------------------------------------

MODEL_MODULE = f'''\
import tensorflow.compat.v1 as tf


{MODEL_FN}

{INPUT_FN}

def build_estimator(config, units, learning_rate):
  return tf.estimator.Estimator(
      model_fn=model_fn, config=config, params={{"units": units, "learning_rate": learning_rate}})
'''

TASK_MODULE = '''\
import argparse

import tensorflow.compat.v1 as tf

{import_model}

ROWS, LABELS = [[1.0], [2.0]], [[0.5], [1.0]]


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--train-steps", type=int, default=20)
  parser.add_argument("--units", type=int, default=4)
  args = parser.parse_args()
  config = tf.estimator.RunConfig(tf_random_seed=3)
  estimator = {model}build_estimator(config, args.units, 0.1)
  estimator.train({model}make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, 2), max_steps=args.train_steps)


if __name__ == "__main__":
  main()
'''


@pytest.mark.parametrize("import_model, model, files", [
    ("from trainer import model", "model.", ("trainer/__init__.py",)),
    ("from . import model", "model.", ("trainer/__init__.py",)),
    ("import model", "model.", ()),
    ("import trainer.model as model", "model.", ("trainer/__init__.py",)),
    ("from trainer.model import build_estimator, make_input_fn", "", ("trainer/__init__.py",)),
    ("from .model import build_estimator, make_input_fn", "", ("trainer/__init__.py",)),
], ids=["from trainer import model", "from . import model", "import model (a script)", "import trainer.model as",
        "from trainer.model import", "from .model import"])
def test_estimator_from_a_factory_of_another_module(import_model, model, files):
    tree = {"trainer/task.py": TASK_MODULE.format(import_model=import_model, model=model),
            "trainer/model.py": MODEL_MODULE, **{path: "" for path in files}}
    results = run_tree(tree)
    task, model_module = results["trainer/task.py"], results["trainer/model.py"]
    assert rules(task) == ["TFM301"] and rules(model_module) == ["TFM301"]
    assert "trainer/model.py" in task.findings[0].message and "trainer/task.py" in model_module.findings[0].message
    assert task.program == model_module.program == ("trainer/task.py", "trainer/model.py")
    # build_estimator made only the Estimator: it goes; the model_fn is, in place, build_model.
    assert "def build_estimator" not in model_module.source and "def build_model(input_spec, params):" in \
        model_module.source and "def make_input_fn" in model_module.source
    main = task.source[task.source.index("def main():"):]
    assert f'dataset = {model}make_input_fn(ROWS, LABELS, "train", 2)()' in main
    assert (f"keras_model = {model}build_model(" if model else "model = build_model(") in main
    # Keras is imported beside TensorFlow, the program's own imports after them as they were.
    assert task.source.startswith(f"import argparse\n\nimport tensorflow as tf\nimport tf_keras as keras\n\n"
                                  f"{import_model.partition(' import ')[0]}")
    assert 'params={"units": args.units, "learning_rate": 0.1}' in main
    assert "steps_per_epoch=args.train_steps" in main
    if not model:  # the driver imports what it calls now
        assert re.search(r"^from \.?(trainer\.)?model import .*build_model", task.source, re.MULTILINE)
        assert "build_estimator" not in task.source
    for result in results.values():
        compile(result.source, "module.py", "exec")


@pytest.mark.parametrize("params, relocated", [
    ('{key: value for key, value in (("units", units), ("rate", learning_rate)) if value}',
     '{key: value for key, value in (("units", args.units), ("rate", 0.1)) if value}'),
    ('{"units": units, "scale": lambda rate=learning_rate, *, by=units: rate * by}',
     '{"units": args.units, "scale": lambda rate=0.1, *, by=args.units: rate * by}'),
    ('{"units": units, "rates": [rate * units for rates in [[learning_rate]] for rate in rates]}',
     '{"units": args.units, "rates": [rate * args.units for rates in [[0.1]] for rate in rates]}'),
], ids=["a dict comprehension", "a lambda", "nested fors"])
def test_params_binding_names_of_their_own_read_the_factorys_arguments(params, relocated):
    """The names a comprehension's fors or a lambda's parameters bind stay; the factory's parameters are its
    arguments."""
    model_module = MODEL_MODULE.replace('{"units": units, "learning_rate": learning_rate}', params)
    results = run_tree({"trainer/task.py": TASK_MODULE.format(import_model="from trainer import model", model="model."),
                        "trainer/model.py": model_module, "trainer/__init__.py": ""})
    task = results["trainer/task.py"]
    assert rules(task) == ["TFM301"]
    assert f"params={relocated}".replace(" ", "") in re.sub(r"\s", "", task.source)
    compile(task.source, "task.py", "exec")


def test_params_from_a_comprehension_assigning_an_item_are_left():
    """The target `rates[0]` is not a name the comprehension binds: its code is not moved."""
    comprehension = "[rates[0] for rates[0] in [learning_rate]]"
    model_module = MODEL_MODULE.replace('{"units": units, "learning_rate": learning_rate}',
                                        f'{{"units": units, "rates": {comprehension}}}')
    results = run_tree({"trainer/task.py": TASK_MODULE.format(import_model="from trainer import model", model="model."),
                        "trainer/model.py": model_module, "trainer/__init__.py": ""})
    assert any(f"`{comprehension}` is not migrated where it is used: bind it to a name first" in finding.message
               for finding in results["trainer/model.py"].findings + results["trainer/task.py"].findings)

def test_specs_made_in_a_helper_read_with_the_callers_arguments():
    program = IN_MAIN.replace('''  train_spec = tf.estimator.TrainSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, 2),
                                      max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.EVAL, 2), steps=1)
''', '''  train_spec, eval_spec = make_specs(args.train_steps, batch_size=2)
''').replace("def main():", '''def make_specs(steps, batch_size):
  train = tf.estimator.TrainSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, batch_size), max_steps=steps)
  evaluation = tf.estimator.EvalSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.EVAL, batch_size), steps=1)
  return train, evaluation


def main():''')
    code = run_one(program).source
    assert "def make_specs" not in code  # it only made the specs
    assert 'dataset = make_input_fn(ROWS, LABELS, "train", 2)()' in code
    assert "steps_per_epoch=args.train_steps - steps_done" in code


GLOBAL_STEPS_MODEL = f'''\
import tensorflow.compat.v1 as tf

EVAL_STEPS = None  # set from task.py


{INPUT_FN}

def train_and_evaluate(output_dir):
  estimator = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], model_dir=output_dir)
  rows, labels = [[1.0], [2.0]], [[0.5], [1.0]]
  tf.estimator.train_and_evaluate(
      estimator, tf.estimator.TrainSpec(make_input_fn(rows, labels, tf.estimator.ModeKeys.TRAIN, 2), max_steps=5),
      tf.estimator.EvalSpec(make_input_fn(rows, labels, tf.estimator.ModeKeys.EVAL, 2), steps=EVAL_STEPS))
'''
GLOBAL_STEPS_TASK = """\
import argparse

from trainer import model

parser = argparse.ArgumentParser()
parser.add_argument("--eval_steps", type=int, default=None)
args = parser.parse_args()
model.EVAL_STEPS = args.eval_steps
model.train_and_evaluate("out")
"""


@pytest.mark.parametrize("home, counted", [("None", True), ("3", False)])
def test_evaluation_steps_a_task_sets_that_are_none_by_default_evaluate_the_whole_input(home, counted):
    """babyweight's trainers: model.py's `EVAL_STEPS = None`, which task.py sets from `--eval_steps` (default None),
    is TF1's whole evaluation input unless the flag is given; the migrated program counts the input then (Keras
    refuses to evaluate a repeated dataset without steps)."""
    tree = {"trainer/__init__.py": "", "trainer/task.py": GLOBAL_STEPS_TASK,
            "trainer/model.py": GLOBAL_STEPS_MODEL.replace("EVAL_STEPS = None", f"EVAL_STEPS = {home}")}
    code = run_tree(tree)["trainer/model.py"].source
    assert ("  eval_steps = EVAL_STEPS\n  if eval_steps is None:\n" in code) is counted, code
    assert ("steps=EVAL_STEPS" in code) is not counted


def test_a_model_fn_in_a_module_outside_the_paths_given_is_named():
    result = run_tree({"trainer/task.py": TASK_MODULE.format(import_model="from trainer import model", model="model.")},
                      on_disk=("trainer/__init__.py", "trainer/model.py"))["trainer/task.py"]
    (finding,) = result.findings
    assert finding.rule == "TFM302" and "trainer/model.py" in finding.message and "include" in finding.message


def test_a_program_left_manual_says_so_in_every_file():
    model_module = MODEL_MODULE.replace("  loss = tf.losses", "  noise = tf.random.normal([1])\n  loss = tf.losses")
    results = run_tree({"trainer/task.py": TASK_MODULE.format(import_model="from trainer import model", model="model."),
                        "trainer/model.py": model_module, "trainer/__init__.py": ""}, enabled=ALL_RULES - {"TFM310"})
    task, model = results["trainer/task.py"], results["trainer/model.py"]
    assert "tf.random.normal" in model.source.splitlines()[model.findings[0].line - 1]
    assert rules(task) == ["TFM302"] and "trainer/model.py:" in task.findings[0].message
    assert task.source == dedent(TASK_MODULE.format(import_model="from trainer import model", model="model."))


def test_a_factory_that_others_call_too_keeps_the_program_manual():
    tree = {"trainer/task.py": TASK_MODULE.format(import_model="from trainer import model", model="model."),
            "trainer/model.py": MODEL_MODULE, "trainer/__init__.py": "",
            "trainer/export.py": "from trainer import model\n\nestimator = model.build_estimator(None, 4, 0.1)\n"}
    results = run_tree(tree)
    assert all(result.source == dedent(tree[path]) for path, result in results.items())
    messages = [f.message for result in results.values() for f in result.findings]
    assert any("build_estimator" in message and "also used" in message for message in messages), messages


# -- what stays Estimator code gets a word ---------------------------------------------------------------------------

@pytest.mark.parametrize("code, why", [
    ("class MyEstimator(tf.estimator.Estimator):\n  pass\n", "an Estimator subclass"),
    ("estimator = tf.estimator.Estimator(model_fn)\nrun_experiment(estimator)\n", "passed to `run_experiment`"),
    ("def model_fn(features, labels, mode):\n  return None\n\ndef serving():\n  return None\n\n"
     "estimator = tf.estimator.Estimator(model_fn)\n"
     "estimator.export_saved_model('/m', serving)\n", "a serving function that does not return a ServingInputReceiver"),
    ("experiment = tf.contrib.learn.Experiment(estimator, train_fn, eval_fn)\n", "tf.contrib.learn"),
    ("estimator = tf.keras.estimator.model_to_estimator(keras_model=model)\n",
     "no train_and_evaluate or train / evaluate / predict call drives it"),
    ("def build():\n  return tf.estimator.Estimator(model_fn)\n", "returned by `build()`"),
    ("def run(output_dir):\n  estimator = None  # TODO\n"
     "  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n",
     "train_and_evaluate drives `estimator`, which the migration cannot follow to an Estimator"),
    ("def run(estimator, train_spec, eval_spec):\n  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n",
     "train_and_evaluate drives `estimator`, which the migration cannot follow to an Estimator"),
], ids=["subclass", "passed to unknown code", "export", "contrib.learn", "model_to_estimator", "factory nobody calls",
        "a lab's blank Estimator", "an Estimator passed in"])
def test_estimator_code_left_as_it_is_always_gets_a_finding(code, why):
    source = "import tensorflow as tf\n\n" + code
    result = run_one(source)
    assert result.source == source
    assert any(f.rule == "TFM302" and why in f.message for f in result.findings), result.findings


def test_a_run_config_made_by_replace_keeps_every_setting():
    """cloudml-samples' shape: RunConfig(...) then `.replace(model_dir=...)`, the later setting winning."""
    program = IN_MAIN.replace(
        "  config = tf.estimator.RunConfig(model_dir=args.job_dir, tf_random_seed=7)\n",
        "  config = tf.estimator.RunConfig(tf_random_seed=3, keep_checkpoint_max=2)\n"
        "  config = config.replace(model_dir=args.job_dir)\n"
        "  config = config.replace(tf_random_seed=7)\n")
    assert program != IN_MAIN
    main = run_one(program).source
    main = main[main.index("def main():"):]
    assert "  keras.utils.set_random_seed(7)\n" in main and 'os.path.join(args.job_dir, "tf2"),\n      max_to_keep=2)' in main
    assert "config" not in main.replace("max_to_keep", ""), main


def test_a_run_config_replaced_with_a_setting_not_migrated_is_left_with_the_reason():
    program = IN_MAIN.replace("tf_random_seed=7)\n", "tf_random_seed=7).replace(session_config=None, "
                                                     "log_device_placement=True)\n")
    assert program != IN_MAIN
    (finding,) = [f for f in run_one(program).findings if f.rule == "TFM302"]
    assert "RunConfig(log_device_placement=...) is not migrated yet" in finding.message, finding.message


@pytest.mark.parametrize("change", [
    "  if args.job_dir:\n    config = config.replace(tf_random_seed=8)\n",  # which one runs is known at run time only
    "  def later():\n    return config\n  config = config.replace(tf_random_seed=8)\n",  # a function reads it later
], ids=["in an if", "read by a function"])
def test_a_name_assigned_again_where_order_does_not_decide_is_not_followed(change):
    program = IN_MAIN.replace("  estimator = tf.estimator.Estimator(model_fn, config=config",
                              change + "  estimator = tf.estimator.Estimator(model_fn, config=config")
    program = program.replace("config=config,", "config=later()," if "later" in change else "config=config,")
    assert program != IN_MAIN
    result = run_one(program)
    assert result.source == program
    (finding,) = [f for f in result.findings if f.rule == "TFM302"]
    assert "Estimator(config=...) is migrated when it is a RunConfig(...) call" in finding.message, finding.message


def test_data_assigned_again_before_an_input_fn_lambda_is_what_the_lambda_reads():
    """cloudml-samples' boston trainer: the rows are loaded, shuffled and normalized in turn, then read by
    `lambda: input_fn(rows, ...)`, which runs later but after every assignment: it reads the last one."""
    program = IN_MAIN.replace(
        "  train_spec = tf.estimator.TrainSpec(make_input_fn(ROWS, LABELS, tf.estimator.ModeKeys.TRAIN, 2),\n",
        "  rows = ROWS\n  rows = [[value * 2.0 for value in row] for row in rows]\n"
        "  train_spec = tf.estimator.TrainSpec(lambda: make_input_fn(rows, LABELS, tf.estimator.ModeKeys.TRAIN, 2)(),\n")
    assert program != IN_MAIN
    main = run_one(program).source
    main = main[main.index("def main():"):]
    assert "  rows = [[value * 2.0 for value in row] for row in rows]\n" in main
    assert main.index("rows = [[value") < main.index("make_input_fn(rows, LABELS")
    later = program.replace("  eval_spec = ", "  rows = None\n  eval_spec = ")  # after the lambda: run time decides
    assert "`rows` is assigned more than once" in str([f.message for f in run_one(later).findings])


def test_a_module_of_the_program_in_python_2_fails_alone_with_cpythons_reason():
    """The model module still prints like Python 2 (seen in real trainer packages): it is one error line of its
    own, and the driver that imports it is told where its model_fn is, not crashed with it."""
    tree = {"trainer/__init__.py": "",
            "trainer/task.py": dedent(TASK_MODULE.format(import_model="from trainer import model", model="model.")),
            "trainer/model.py": dedent(MODEL_MODULE) + 'print "built"\n'}
    results = migrate_group(tree, ALL_RULES, exists=lambda path: path in tree)
    model_error, task = results["trainer/model.py"], results["trainer/task.py"]
    assert isinstance(model_error, FileError) and "not valid Python 3" in model_error.message
    assert "Python 2" in model_error.message and model_error.line == len(dedent(MODEL_MODULE).splitlines()) + 1
    assert not isinstance(task, FileError), task.format()
    assert [finding.rule for finding in task.findings] == ["TFM302"]
    assert "trainer/model.py" in task.findings[0].message
    assert task.source == tree["trainer/task.py"]


REEXPORTED = {
    "trainer/__init__.py": "from .model import build_estimator, input_fn\n",
    "trainer/model.py": '''\
import tensorflow.compat.v1 as tf


def input_fn():
  return tf.data.Dataset.from_tensor_slices(([[1., 2.]] * 8, [[1.]] * 8)).repeat().batch(2)


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features, 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def build_estimator(model_dir):
  return tf.estimator.Estimator(model_fn, model_dir=model_dir)
''',
    # The driver names no TensorFlow: it drives the Estimator its package makes.
    "trainer/task.py": '''\
import tempfile

import trainer


def main():
  estimator = trainer.build_estimator(tempfile.mkdtemp())
  estimator.train(trainer.input_fn, max_steps=5)


if __name__ == "__main__":
  main()
''',
}


def test_a_factory_a_package_re_exports_is_followed_and_its_re_export_goes_with_it():
    results = run_tree(REEXPORTED, on_disk=tuple(REEXPORTED))
    assert "model.fit(" in results["trainer/task.py"].source.replace("keras_model.fit(", "model.fit(")
    assert results["trainer/__init__.py"].source == "from .model import input_fn\n"
    assert "def build_estimator" not in results["trainer/model.py"].source


def test_a_re_exported_factory_used_elsewhere_leaves_the_program_and_says_where():
    files = dict(REEXPORTED)
    files["trainer/task.py"] += "\n\nclass Trainer:\n  def __init__(self):\n    self.estimator = trainer.build_estimator('/m')\n"
    results = run_tree(files, on_disk=tuple(files))
    assert all(results[path].source == text for path, text in files.items())
    [finding] = [f for result in results.values() for f in result.findings if f.rule == "TFM302"]
    assert "self.estimator = trainer.build_estimator('/m')" in finding.message


def test_an_estimator_kept_on_an_object_is_left_saying_so():
    source = '''\
import tensorflow.compat.v1 as tf


class Trainer(object):
  def __init__(self, model_dir):
    self._estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir)

  def run(self, steps):
    self._estimator.train(input_fn, max_steps=steps)
'''
    [finding] = run_one(source).findings
    assert finding.rule == "TFM302" and "kept on an object (`self._estimator`)" in finding.message


@pytest.mark.parametrize("code, why", [
    ("def experiment_fn(output_dir):\n  return tf.contrib.learn.Experiment(\n"
     "      tf.estimator.Estimator(model_fn, output_dir), train_input_fn=train_fn, eval_input_fn=eval_fn)\n\n\n"
     "learn_runner.run(experiment_fn, '/tmp/out')\n",
     ["EvalSpec(eval_input_fn, steps=eval_steps)) since TF 1.4: write it so",
      "runs the Experiment that experiment_fn returns: call train_and_evaluate where experiment_fn makes it"]),
    ("def estimator_fn(run_config, params):\n  return tf.estimator.Estimator(model_fn, config=run_config)\n",
     ["the entry point of SageMaker's legacy TensorFlow framework mode"]),
], ids=["Experiment and learn_runner", "SageMaker's estimator_fn"])
def test_estimator_code_no_tf2_runs_gets_a_finding_saying_what_to_write(code, why):
    source = "import tensorflow as tf\nfrom tensorflow.contrib.learn.python.learn import learn_runner\n\n" + code
    result = run_one(source)
    assert result.source == source
    messages = [f.message for f in result.findings if f.rule == "TFM302"]
    assert all(any(each in message for message in messages) for each in why), messages


PARTIAL_INPUT = '''\
import functools
import tensorflow.compat.v1 as tf

def input_fn(rows, labels, params=None, shuffle_and_repeat=False):
  dataset = tf.data.Dataset.from_tensor_slices((rows, labels))
  if shuffle_and_repeat:
    dataset = dataset.shuffle(params["buffer"]).repeat()
  return dataset.batch(2)

def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features, 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

rows, labels = [[1.0], [2.0]], [[1.0], [0.0]]
train_inpf = functools.partial(input_fn, rows, labels, shuffle_and_repeat=True)
estimator = tf.estimator.Estimator(model_fn, params={"buffer": 10})
estimator.train(train_inpf, max_steps=3)
'''


def test_a_partial_input_fn_gets_params_even_with_a_default_and_its_keywords_decide_branches():
    """tf_ner's shape: TF1 passed the Estimator's params to every input_fn taking `params` (a default too), and
    the partial's `shuffle_and_repeat=True` decides the branch that repeats."""
    result = run_one(PARTIAL_INPUT)
    assert [f.rule for f in result.findings] == ["TFM301"], result.findings
    assert 'dataset = train_inpf(params={"buffer": 10})' in result.source
    bound = run_one(PARTIAL_INPUT.replace("labels, shuffle_and_repeat=True)", "labels, {}, True)"))
    assert "dataset = train_inpf()" in bound.source  # params bound by the partial: Estimator passed none


CHOSEN_BY_A_CONSTANT = {"trainer/metadata.py": 'TASK_TYPE = "classification"\n', "trainer/task.py": '''\
import tensorflow.compat.v1 as tf

from trainer import metadata


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [0, 1])).repeat().batch(2)


def create_estimator():
  columns = [tf.feature_column.numeric_column("x")]
  if metadata.TASK_TYPE == "classification":
    estimator = tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=columns)
  else:
    estimator = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=columns)
  return estimator


create_estimator().train(input_fn, max_steps=3)
''', "trainer/__init__.py": ""}


def test_an_estimator_chosen_by_a_constant_of_the_program_is_the_one_it_names():
    """cloudml-template's shape: `if metadata.TASK_TYPE == "classification":` a classifier, else a regressor."""
    result = run_tree(CHOSEN_BY_A_CONSTANT)["trainer/task.py"]
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    assert "build_dnn_classifier_model" in result.source and "DNNRegressor" not in result.source
    chosen_at_run_time = dict(CHOSEN_BY_A_CONSTANT, **{"trainer/metadata.py": "import os\n\nTASK_TYPE = os.environ['T']\n"})
    left = run_tree(chosen_at_run_time)["trainer/task.py"]
    assert left.source == CHOSEN_BY_A_CONSTANT["trainer/task.py"]
    assert any(f.rule == "TFM302" for f in left.findings)


def test_a_name_an_if_in_a_loop_decides_and_assigns_is_unknown_not_a_crash():
    """`if steps < 10: steps = steps * 2` in a loop: deciding the if reads the name it assigns."""
    source = dedent(CHOSEN_BY_A_CONSTANT["trainer/task.py"]).replace(
        "create_estimator().train(input_fn, max_steps=3)",
        "steps = 1\nfor _ in range(3):\n  if steps < 10:\n    steps = steps * 2\n"
        "create_estimator().train(input_fn, max_steps=steps)")
    result = run_tree({**CHOSEN_BY_A_CONSTANT, "trainer/task.py": source})["trainer/task.py"]
    assert result.source == source
    assert any(f.rule == "TFM302" and "steps" in f.message for f in result.findings), result.findings


@pytest.mark.parametrize("driver", ["estimator.train(input_fn, max_steps=args.max_steps)",
                                    "tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)"])
def test_estimators_chosen_at_run_time_are_left_saying_how_to_make_one(driver):
    source = '''\
import tensorflow.compat.v1 as tf


def main(args):
  if args.use_tpu:
    estimator = tf.estimator.tpu.TPUEstimator(model_fn, config=tf.estimator.tpu.RunConfig(), train_batch_size=8)
  else:
    estimator = tf.estimator.Estimator(model_fn)
  DRIVER
'''.replace("DRIVER", driver)
    findings = [f for f in run_one(source).findings if f.rule == "TFM302"]
    assert sorted(f.line for f in findings) == [6, 8]
    for finding in findings:
        assert "`estimator` is one of 2 Estimators chosen at run time (`if args.use_tpu:`)" in finding.message
        assert "a TPUEstimator with use_tpu=args.use_tpu trains as a plain Estimator" in finding.message


FACTORY_MODEL = '''\
import tensorflow.compat.v1 as tf


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [1.0]])).repeat().batch(2)


def generate_model_fn(hidden, learning_rate):
  def _model_fn(features, labels, mode):
    net = tf.layers.dense(features["x"], hidden)
    logits = tf.layers.dense(net, 1)
    loss = LOSS
    train_op = tf.train.AdagradOptimizer(learning_rate).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
  return _model_fn
'''
FACTORY_TASK = '''\
import tensorflow.compat.v1 as tf

import model


def main():
  model_fn = model.generate_model_fn(4, learning_rate=0.1)
  estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir="out")
  estimator.train(model.input_fn, max_steps=5)


main()
'''


@pytest.mark.tensorflow
@pytest.mark.parametrize("loss, tier", [("tf.losses.mean_squared_error(labels, logits)", "1"),
                                        ("tf.reduce_mean(tf.square(logits - labels))", "2")])
def test_a_model_fn_a_factory_returns_is_replaced_there_by_the_build_function_the_driver_calls(loss, tier, tmp_path):
    """The Cloud ML census sample's `generate_model_fn(...)` returning its `_model_fn`: the factory returns the build
    function, which the driver calls through the name it bound the factory's result to."""
    results = run_tree({"model.py": FACTORY_MODEL.replace("LOSS", loss), "task.py": FACTORY_TASK})
    code, task = results["model.py"].source, results["task.py"].source
    assert ("TFM310" in rules(results["model.py"])) == (tier == "2")
    assert "  return _build_model\n" in code and "  return _model_fn\n" not in code
    assert "keras_model = model_fn(dataset" in task and "model._build_model" not in task
    for path, text in (("model.py", code), ("task.py", task)):
        (tmp_path / path).write_text(text)
    ran = subprocess.run([sys.executable, "task.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**{k: v for k, v in os.environ.items() if k != "TF_CONFIG"}, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "5/5" in ran.stdout


def test_a_factory_returning_its_model_fn_otherwise_leaves_the_program():
    source = FACTORY_MODEL.replace("LOSS", "tf.losses.mean_squared_error(labels, logits)").replace(
        "  return _model_fn\n", "  return functools.partial(_model_fn)\n").replace(
        "import tensorflow", "import functools\nimport tensorflow")
    result = run_tree({"model.py": source, "task.py": FACTORY_TASK})
    assert result["model.py"].source == source
    assert any("returns it otherwise than as `return _model_fn`" in finding.message for finding in result["task.py"].findings
               + result["model.py"].findings)



PASSED_TO_ITS_TRAINER = {**CHOSEN_BY_A_CONSTANT, "trainer/task.py": CHOSEN_BY_A_CONSTANT["trainer/task.py"].replace(
    "from trainer import metadata", "from trainer import experiment, metadata").replace(
    "create_estimator().train(input_fn, max_steps=3)\n",
    "def main():\n  estimator = create_estimator()\n  print(type(estimator))\n  experiment.run(estimator, 3)\n"),
    "trainer/experiment.py": '''\
import tensorflow.compat.v1 as tf


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [0, 1])).repeat().batch(2)


def run(estimator, steps):
  tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(input_fn, max_steps=steps),
                                  tf.estimator.EvalSpec(input_fn, steps=1))
'''}


def test_an_estimator_passed_to_the_function_that_trains_it_is_left_naming_the_call_that_passes_it():
    """cloudml-template's shape: task.py makes the Estimator (an `if` on a constant picks it) and passes it to
    experiment.run, whose train_and_evaluate trains it; the Estimator of the branch that never runs says nothing."""
    results = run_tree(PASSED_TO_ITS_TRAINER)
    manual = [(path, f.line, f.message) for path, result in results.items() for f in result.findings
              if f.safety.value == "manual"]
    assert [(path, line) for path, line, _ in manual] == [("trainer/task.py", 13), ("trainer/experiment.py", 9)]
    assert "`experiment.run(estimator, 3)` (`trainer/task.py:22`)" in manual[0][2]
    assert "returned by `create_estimator()`" in manual[0][2] and "chosen at run time" not in manual[0][2]
    assert "passes it to a function of the program" in manual[0][2]
    assert "a parameter of `run()`, given the Estimator by `experiment.run(estimator, 3)` (`trainer/task.py:22`)" \
        in manual[1][2]
