"""Drivers outside the function that trains the Estimator (rewrites/estimator/drivers.py), and what the program reads
of the Estimator besides its drivers.

The shapes of public programs: tf_ner's main block trains the Estimator, makes `estimator.eval_dir()`, and predicts
from a nested `write_predictions(name)` called in a loop afterwards (also in `main()`, or from a module-level
function reading the module's `estimator`); the course notebooks' `train_and_evaluate(args)` returns the Estimator
it trained, and a later cell predicts or evaluates with it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent, indent

import pytest

from helpers import ALL_RULES
from migrator.engine import migrate_group
from test_estimator_programs import rules, run_one, run_tree

HEAD = '''\
import functools
import os
import sys
from pathlib import Path

import numpy as np
import tensorflow.compat.v1 as tf

ROWS = np.arange(24, dtype=np.float32).reshape(12, 2) / 10
LABELS = (ROWS.sum(axis=1) > 1.1).astype(np.int64)


def input_fn(rows, labels, params, mode):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": rows}, labels))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.repeat()
    return dataset.batch(params["batch_size"])


def read_dataset(mode, batch_size):
    def _input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": ROWS}, LABELS))
        if mode == tf.estimator.ModeKeys.TRAIN:
            dataset = dataset.repeat()
        return dataset.batch(batch_size)
    return _input_fn


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 2)
    predicted = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"class_ids": predicted})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
'''

# tf_ner's main block, its data and model small.
TRAINED = '''\
params = {"batch_size": 4}
model_dir = sys.argv[1]
cfg = tf.estimator.RunConfig(save_checkpoints_secs=120)
estimator = tf.estimator.Estimator(model_fn, model_dir, cfg, params)
Path(estimator.eval_dir()).mkdir(parents=True, exist_ok=True)
train_spec = tf.estimator.TrainSpec(input_fn=functools.partial(input_fn, ROWS, LABELS), max_steps=5)
eval_spec = tf.estimator.EvalSpec(input_fn=functools.partial(input_fn, ROWS, LABELS), steps=None)
tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
'''
WRITE_PREDICTIONS = '''\
def write_predictions(name):
    Path(model_dir, "score").mkdir(parents=True, exist_ok=True)
    with Path(model_dir, "score", "{}.preds.txt".format(name)).open("w") as f:
        test_inpf = functools.partial(input_fn, ROWS, LABELS)
        preds_gen = estimator.predict(test_inpf)
        for golds, preds in zip(LABELS, preds_gen):
            f.write("{} {}\\n".format(golds, preds["class_ids"]))
'''
LOOP = '''\
for name in ["train", "testa"]:
    write_predictions(name)
'''


def main_block(write_predictions: str = WRITE_PREDICTIONS) -> str:
    return HEAD + '\n\nif __name__ == "__main__":\n' + indent(TRAINED + "\n" + write_predictions + "\n" + LOOP, "    ")


MAIN_BLOCK = main_block()
IN_MAIN = (HEAD + "\n\ndef main():\n" + indent(TRAINED + "\n" + WRITE_PREDICTIONS + "\n" + LOOP, "    ")
           + '\n\nif __name__ == "__main__":\n    main()\n')
MODULE_FUNCTION = (HEAD + "\n\n" + WRITE_PREDICTIONS + '\n\nif __name__ == "__main__":\n'
                   + indent(TRAINED + "\n" + LOOP, "    "))
PREDICTED = '        preds_gen = predict_examples(predictor, test_inpf(params=params, mode="infer"))\n'


def test_a_nested_function_predicting_after_training_reads_the_predictor_bound_where_it_was_trained():
    result = run_one(MAIN_BLOCK)
    code = result.source
    assert rules(result) == ["TFM301"]
    assert '    Path(os.path.join(model_dir, "eval")).mkdir(parents=True, exist_ok=True)\n' in code
    assert "        model, predictor = build_model(dataset.element_spec[0], params=params)\n" in code
    assert "    " + PREDICTED in code
    assert code.index("model, predictor = build_model") < code.index("def write_predictions(name):")
    assert '    for name in ["train", "testa"]:\n        write_predictions(name)\n' in code
    assert "estimator" not in code.replace("tf.estimator", "")
    compile(code, "train.py", "exec")


@pytest.mark.parametrize("program, predicted", [(IN_MAIN, "    " + PREDICTED), (MODULE_FUNCTION, PREDICTED)],
                         ids=["nested in main()", "a module-level function reading the module's estimator"])
def test_the_other_places_of_the_prediction_function(program, predicted):
    result = run_one(program)
    assert rules(result) == ["TFM301"]
    assert predicted in result.source
    compile(result.source, "train.py", "exec")


def test_a_nested_function_evaluating_binds_its_own_evaluation_names():
    predicting = '''        preds_gen = estimator.predict(test_inpf)
        for golds, preds in zip(LABELS, preds_gen):
            f.write("{} {}\\n".format(golds, preds["class_ids"]))'''
    evaluating = '''        eval_dataset = estimator.evaluate(test_inpf)
        f.write("{}\\n".format(eval_dataset["loss"]))'''
    program = main_block(WRITE_PREDICTIONS.replace(predicting, evaluating))
    assert program != MAIN_BLOCK
    code = run_one(program).source
    write = code[code.index("    def write_predictions(name):"):]
    assert ('            keras_eval_dataset = test_inpf(params=params, mode="eval")\n'
            "            # TF1 evaluated the whole input; ParameterServerStrategy needs it repeated and counted.\n"
            "            eval_steps = int(keras_eval_dataset.cardinality())\n"
            "            if eval_steps == tf.data.UNKNOWN_CARDINALITY:  # known once read: files, filter, a v1 map\n"
            "                eval_steps = int(keras_eval_dataset.reduce(0, lambda count, _: count + 1))\n"
            "            keras_eval_dataset = keras_eval_dataset.repeat()\n"
            "            eval_dataset = model.evaluate("
            "keras_eval_dataset, steps=eval_steps, return_dict=True, verbose=2)\n") in write


NOTEBOOK = HEAD + '''

def train_and_evaluate(args):
    estimator = tf.estimator.Estimator(
        model_fn=model_fn, model_dir=args["output_dir"],
        params={"batch_size": args["batch_size"]})
    train_spec = tf.estimator.TrainSpec(
        input_fn=read_dataset(tf.estimator.ModeKeys.TRAIN, args["batch_size"]), max_steps=args["train_steps"])
    eval_spec = tf.estimator.EvalSpec(input_fn=read_dataset(tf.estimator.ModeKeys.EVAL, args["batch_size"]),
                                      steps=None)
    tf.estimator.train_and_evaluate(estimator=estimator, train_spec=train_spec, eval_spec=eval_spec)
    return estimator


arguments = {"output_dir": "trained", "batch_size": 4, "train_steps": 5}
estimator = train_and_evaluate(arguments)

predictions_generator = estimator.predict(input_fn=read_dataset(tf.estimator.ModeKeys.EVAL, 4))
predictions_list = [x for x in predictions_generator]
'''
EVALUATED = ("metrics = estimator.evaluate(input_fn=read_dataset(tf.estimator.ModeKeys.EVAL, 4))\n"
             "print(metrics['loss'])\n")


@pytest.mark.parametrize("evaluated", [False, True], ids=["predicted", "predicted and evaluated"])
def test_a_training_function_returning_its_estimator_returns_what_its_callers_drive(evaluated):
    result = run_one(NOTEBOOK + (EVALUATED if evaluated else ""))
    code = result.source
    assert rules(result) == ["TFM301"]
    returned = "model, predictor" if evaluated else "predictor"
    assert f"    model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)\n    return {returned}\n" \
        in code
    assert f"\n{returned} = train_and_evaluate(arguments)\n" in code
    assert 'predictions_generator = predict_examples(predictor, read_dataset("eval", 4)())\n' in code
    if evaluated:
        assert ('\neval_dataset = read_dataset("eval", 4)()\n'
                "# TF1 evaluated the whole input; ParameterServerStrategy needs it repeated and counted.\n"
                "eval_steps = int(eval_dataset.cardinality())\n"
                "if eval_steps == tf.data.UNKNOWN_CARDINALITY:  # known once read: files, filter, a v1 map\n"
                "    eval_steps = int(eval_dataset.reduce(0, lambda count, _: count + 1))\n"
                "eval_dataset = eval_dataset.repeat()\n"
                "metrics = model.evaluate(eval_dataset, steps=eval_steps, return_dict=True, verbose=2)\n") in code
    assert "estimator" not in code.replace("tf.estimator", "")
    compile(code, "train.py", "exec")


def test_a_caller_that_drops_the_result_and_one_that_names_it_otherwise():
    program = NOTEBOOK.replace("estimator = train_and_evaluate(arguments)\n",
                               "train_and_evaluate(arguments)\nsupervised = train_and_evaluate(arguments)\n").replace(
        "estimator.predict(", "supervised.predict(")
    code = run_one(program).source
    assert "\ntrain_and_evaluate(arguments)\npredictor = train_and_evaluate(arguments)\n" in code
    assert "predict_examples(predictor, " in code and "supervised" not in code


def test_params_made_by_a_comprehension_over_the_functions_arguments_build_the_model_there():
    """time_series_anomaly_detection's `params={key: val for key, val in args.items()}`."""
    result = run_one(NOTEBOOK.replace('params={"batch_size": args["batch_size"]}',
                                      "params={key: val for key, val in args.items()}"))
    assert rules(result) == ["TFM301"]
    assert "dataset.element_spec[0], params={key: val for key, val in args.items()})\n" in result.source

def test_a_callers_input_gets_the_estimators_params_as_code_it_can_read():
    """The training function's local `params` is not the caller's: its value is written out there."""
    program = HEAD + '''

def train(output_dir):
    params = {"batch_size": 4}
    estimator = tf.estimator.Estimator(model_fn, output_dir, params=params)
    estimator.train(functools.partial(input_fn, ROWS, LABELS), max_steps=5)
    return estimator


def main():
    estimator = train(sys.argv[1])
    print(list(estimator.predict(functools.partial(input_fn, ROWS, LABELS))))
'''
    code = run_one(program).source
    assert "    return predictor\n" in code and "    predictor = train(sys.argv[1])\n" in code
    assert ('    print(list(predict_examples(predictor, functools.partial(input_fn, ROWS, LABELS)('
            'params={"batch_size": 4}, mode="infer"))))\n') in code


@pytest.mark.parametrize("read, code", [
    ("estimator.eval_dir()", 'os.path.join(model_dir, "eval")'),
    ('estimator.eval_dir("test")', 'os.path.join(model_dir, "eval_test")'),
    ("estimator.eval_dir(name=None)", 'os.path.join(model_dir, "eval")'),
    ("estimator.model_dir", "model_dir"),
], ids=["eval_dir", "a named evaluation's", "name None", "model_dir"])
def test_what_the_program_reads_of_the_estimator_is_the_directory_tf1_used(read, code):
    """tensorflow_estimator's Estimator.eval_dir: os.path.join(model_dir, 'eval' if not name else 'eval_' + name)."""
    result = run_one(MAIN_BLOCK.replace("Path(estimator.eval_dir())", f"Path({read})"))
    assert f"    Path({code}).mkdir(parents=True, exist_ok=True)\n" in result.source
    assert rules(result) == ["TFM301"]


CALLED_EARLY = HEAD + '''

if __name__ == "__main__":
    params = {"batch_size": 4}
    estimator = tf.estimator.Estimator(model_fn, sys.argv[1], params=params)

    def write_predictions(name):
        print(name, list(estimator.predict(functools.partial(input_fn, ROWS, LABELS))))

    write_predictions("untrained")
    estimator.train(functools.partial(input_fn, ROWS, LABELS), max_steps=5)
    write_predictions("trained")
'''
ELSEWHERE = HEAD + '''

def main():
    global estimator
    estimator = tf.estimator.Estimator(model_fn, sys.argv[1], params={"batch_size": 4})
    estimator.train(functools.partial(input_fn, ROWS, LABELS), max_steps=5)


def write_predictions():
    print(list(estimator.predict(functools.partial(input_fn, ROWS, LABELS))))


main()
write_predictions()
'''
# program, the line of the finding, what it says
LEFT = {
    "called before training": (CALLED_EARLY, 'write_predictions("untrained")',
                               "may not be bound yet: call it only after training"),
    "the estimator's name bound again": (MAIN_BLOCK.replace("        write_predictions(name)\n",
                                                            "        write_predictions(name)\n    estimator = None\n"),
                                         "preds_gen = estimator.predict", "also used here"),
    "trained in main(), predicted in another function": (ELSEWHERE, "estimator.predict",
                                                         "drive it in `main()`, in a function defined there"),
    "used otherwise by a caller": (NOTEBOOK + "estimator.export_saved_model('/m', None)\n",
                                   "estimator.export_saved_model", "export where the Estimator is trained"),
    "passed on by a caller": (NOTEBOOK + "print(train_and_evaluate(arguments))\n", "print(train_and_evaluate",
                              "bind it to a name"),
    "returned before training": (NOTEBOOK.replace("    tf.estimator.train_and_evaluate(",
                                                  "    if args['train']:\n        tf.estimator.train_and_evaluate("),
                                 "    return estimator", "return it after training, in the same block"),
    "a caller's input reads the function's arguments": (
        NOTEBOOK.replace("estimator.predict(input_fn=read_dataset(tf.estimator.ModeKeys.EVAL, 4))",
                         "estimator.predict(input_fn=functools.partial(input_fn, ROWS, LABELS))"),
        'params={"batch_size": args["batch_size"]}', "`args` (args) cannot be read where the migrated code runs"),
    "a caller's input reads the function's arguments in a comprehension": (
        NOTEBOOK.replace("estimator.predict(input_fn=read_dataset(tf.estimator.ModeKeys.EVAL, 4))",
                         "estimator.predict(input_fn=functools.partial(input_fn, ROWS, LABELS))").replace(
            'params={"batch_size": args["batch_size"]}', "params={key: val for key, val in args.items()}"),
        "params={key: val for key, val in args.items()}", "`args` (args) cannot be read where the migrated code runs"),
    "no model_dir": (MAIN_BLOCK.replace("Estimator(model_fn, model_dir, cfg, params)",
                                        "Estimator(model_fn, None, cfg, params)"),
                     "Path(estimator.eval_dir())", "given no model_dir (TF1 used a temporary directory)"),
    "an evaluation name known when the program runs": (
        MAIN_BLOCK.replace("Path(estimator.eval_dir())", "Path(estimator.eval_dir(sys.argv[2]))"),
        "Path(estimator.eval_dir", "an evaluation name known only when the program runs"),
}


@pytest.mark.parametrize("case", sorted(LEFT))
def test_a_driver_that_may_not_see_the_model_leaves_the_program_saying_what_to_do(case):
    program, where, why = LEFT[case]
    assert program not in (MAIN_BLOCK, NOTEBOOK)
    result = run_one(program)
    assert result.source == dedent(program)
    findings = [f for f in result.findings if f.rule == "TFM302"]
    assert any(why in f.message and where in program.splitlines()[f.line - 1] for f in findings), findings


def test_a_caller_in_another_module_that_binds_the_result_leaves_the_program():
    other = "from nb import train_and_evaluate\n\ntrained = train_and_evaluate({})\n"
    results = run_tree({"nb.py": NOTEBOOK, "other.py": other})
    assert results["nb.py"].source == NOTEBOOK and results["other.py"].source == other
    message = next(f.message for f in results["other.py"].findings)
    assert "bind it to a name in nb.py and drive it from there" in message


def run_migrated(folder, program: str) -> subprocess.CompletedProcess:
    """The program migrated, run in ``folder`` with its model_dir there (a local run: no TF_CONFIG)."""
    script = folder / "main.py"
    script.write_text(migrate_group({"main.py": program}, ALL_RULES, keras="auto")["main.py"].source)
    environment = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    done = subprocess.run([sys.executable, str(script), str(folder / "model")], capture_output=True, text=True,
                          timeout=120, env=environment, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.tensorflow
@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs the parity extra")
def test_the_migrated_main_block_trains_and_writes_its_predictions(tmp_path):
    """tf_ner's shape, migrated, runs locally: trained, evaluated, the eval folder made, a prediction per example."""
    run_migrated(tmp_path, MAIN_BLOCK)
    assert (tmp_path / "model" / "eval").is_dir() and (tmp_path / "model" / "tf2" / "checkpoint").exists()
    for name in ("train", "testa"):
        lines = (tmp_path / "model" / "score" / f"{name}.preds.txt").read_text().splitlines()
        assert len(lines) == 12 and all(line.split()[1] in ("0", "1") for line in lines), lines


SESSION_CONFIG = '''

def session_config():
    return tf.ConfigProto(device_filters=["/job:ps", "/job:worker"])
'''
CONFIG_READ = (MAIN_BLOCK.replace("cfg = tf.estimator.RunConfig(save_checkpoints_secs=120)",
                                  "cfg = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_secs=120, "
                                  "session_config=session_config())")
               .replace("Estimator(model_fn, model_dir, cfg, params)", "Estimator(model_fn, config=cfg, params=params)")
               .replace("Path(estimator.eval_dir())", "Path(cfg.model_dir)")
               .replace('\n\nif __name__ == "__main__":', SESSION_CONFIG + '\n\nif __name__ == "__main__":'))


def test_the_run_configs_model_dir_is_its_code_and_the_session_config_function_only_it_called_goes():
    """cloudml-samples' iris trainer: `print(run_config.model_dir)`, and a session config of device filters for
    TF1's cluster, which the Keras program does not need: gone with the RunConfig, and no TFM107 about it."""
    assert CONFIG_READ.count("cfg.model_dir") == 1 and "session_config())" in CONFIG_READ
    result = run_one(CONFIG_READ)
    assert "    Path(model_dir).mkdir(parents=True, exist_ok=True)\n" in result.source
    assert "def session_config" not in result.source and "/job:ps" not in result.source
    assert rules(result) == ["TFM301"]


def test_the_session_config_function_called_elsewhere_too_stays_and_is_reported():
    result = run_one(CONFIG_READ.replace("    for name in", "    print(session_config())\n    for name in"))
    assert "def session_config" in result.source
    assert set(rules(result)) == {"TFM107", "TFM301"}


def test_a_run_config_without_model_dir_read_for_it_leaves_the_program():
    """TF1's RunConfig keeps model_dir=None when only the Estimator is given one."""
    source = (CONFIG_READ.replace("model_dir=model_dir, save_checkpoints_secs", "save_checkpoints_secs")
              .replace("config=cfg, params=params", "model_dir, config=cfg, params=params"))
    result = run_one(source)
    assert result.source == dedent(source)
    assert any("`cfg` is also used here (`Path(cfg.model_dir).mkdir(" in f.message for f in result.findings)


def test_a_run_config_name_bound_again_is_not_read_as_the_first_ones_model_dir():
    """The read finds the second RunConfig, which the program keeps: it stays a read of it."""
    source = CONFIG_READ.replace("    Path(cfg.model_dir)", "    cfg = tf.estimator.RunConfig(model_dir=\"/elsewhere\")\n"
                                                          "    Path(cfg.model_dir)")
    assert source != CONFIG_READ
    result = run_one(source)
    assert "RunConfig(model_dir=\"/elsewhere\")\n    Path(cfg.model_dir).mkdir(" in result.source
    assert "Path(model_dir).mkdir(" not in result.source


# A course notebook's helper, given the Estimator (rewrites/estimator/passed.py).
PASSED = HEAD + '''

def print_loss(estimator, name, input_fn):
    results = estimator.evaluate(input_fn=input_fn, steps=2)
    print("loss on {}: {}".format(name, results["loss"]))


def main():
    estimator = tf.estimator.Estimator(model_fn, sys.argv[1], params={"batch_size": 4})
    estimator.train(read_dataset(tf.estimator.ModeKeys.TRAIN, 4), max_steps=5)
    print_loss(estimator, "validation", read_dataset(tf.estimator.ModeKeys.EVAL, 4))


main()
'''
NOTEBOOK_PASSED = HEAD + '''
model = tf.estimator.Estimator(model_fn, sys.argv[1], params={"batch_size": 4})
model.train(read_dataset(tf.estimator.ModeKeys.TRAIN, 4), max_steps=5)

def print_loss(model, name, input_fn):
    results = model.evaluate(input_fn=input_fn, steps=2)
    print("loss on {}: {}".format(name, results["loss"]))
print_loss(model, "validation", read_dataset(tf.estimator.ModeKeys.EVAL, 4))
'''


@pytest.mark.parametrize("program, receiver, passed", [
    (PASSED, "estimator", '    print_loss(model, "validation", read_dataset("eval", 4))\n'),
    (NOTEBOOK_PASSED, "model", 'print_loss(model, "validation", read_dataset("eval", 4))\n')],
    ids=["in main()", "a notebook"])
def test_a_function_the_estimator_is_passed_to_evaluates_the_keras_model_passed_instead(program, receiver, passed):
    result = run_one(program)
    assert rules(result) == ["TFM301", "TFM303"]
    code = result.source
    assert (f"    results = {receiver}.evaluate(input_fn().repeat(), steps=2, return_dict=True, verbose=2)\n"
            '    print("loss on {}: {}".format(name, results["loss"]))\n') in code
    assert passed in code
    assert code.index("model = build_model(") < code.index(passed)
    compile(code, "train.py", "exec")


LEFT_PASSED = {
    "used otherwise than called": (PASSED.replace("\n\nmain()\n", "\n\nreport = print_loss\nmain()\n"),
                                   'print_loss(estimator, "validation"', "also used here"),
    "passed before training": (PASSED.replace(
        '    estimator.train(read_dataset(tf.estimator.ModeKeys.TRAIN, 4), max_steps=5)\n'
        '    print_loss(estimator, "validation", read_dataset(tf.estimator.ModeKeys.EVAL, 4))\n',
        '    print_loss(estimator, "validation", read_dataset(tf.estimator.ModeKeys.EVAL, 4))\n'
        '    estimator.train(read_dataset(tf.estimator.ModeKeys.TRAIN, 4), max_steps=5)\n'),
        "print_loss(estimator", "pass it after training"),
    "passed by another name": (PASSED.replace('    print_loss(estimator, "validation"',
                                              '    trained = estimator\n    print_loss(trained, "validation"'),
                               "results = estimator.evaluate", "other than by the name it is bound to"),
}


@pytest.mark.parametrize("case", sorted(LEFT_PASSED))
def test_a_function_the_estimator_is_passed_to_otherwise_leaves_the_program(case):
    program, where, why = LEFT_PASSED[case]
    assert program != PASSED
    result = run_one(program)
    assert result.source == dedent(program)
    findings = [f for f in result.findings if f.rule == "TFM302"]
    assert any(why in f.message and where in program.splitlines()[f.line - 1] for f in findings), findings


@pytest.mark.tensorflow
@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs the parity extra")
def test_the_migrated_function_given_the_model_evaluates_it(tmp_path):
    done = run_migrated(tmp_path, PASSED)
    loss = float(done.stdout.split("loss on validation: ")[1].split()[0])
    assert 0 < loss < 5, done.stdout


def test_the_passed_modules_example_is_what_the_migration_does():
    from rewrites.estimator import passed

    doc = passed.__doc__
    before = dedent(doc[doc.index("Before::\n") + len("Before::\n"):doc.index("After::")])
    after = dedent(doc[doc.index("After::\n") + len("After::\n"):])
    head = ("import numpy as np\nimport tensorflow.compat.v1 as tf\n\nOUTDIR = 'taxi_trained'\n"
            "feature_cols = [tf.feature_column.numeric_column('x')]\n\n\n"
            "def read(mode):\n    def _input_fn():\n"
            "        dataset = tf.data.Dataset.from_tensor_slices(({'x': [[1.0], [2.0]]}, [[1.0], [2.0]]))\n"
            "        if mode == tf.estimator.ModeKeys.TRAIN:\n            dataset = dataset.repeat()\n"
            "        return dataset.batch(2)\n"
            "    return _input_fn\n\n\ndef get_train():\n    return read(tf.estimator.ModeKeys.TRAIN)\n\n\n"
            "def get_valid():\n    return read(tf.estimator.ModeKeys.EVAL)\n\n\n")
    code = run_one(head + before).source
    assert "model.train" not in code
    for line in after.splitlines():
        if line.strip() and not line.lstrip().startswith("..."):
            assert line + "\n" in code, line


# A course notebook's: the same helper evaluates each canned Estimator it trains in turn, bound to the same name.
NOTEBOOK_TWO_MODELS = HEAD + '''
columns = [tf.feature_column.numeric_column("x", shape=(2,))]
model = tf.estimator.LinearClassifier(columns, sys.argv[1])
model.train(read_dataset(tf.estimator.ModeKeys.TRAIN, 4), max_steps=5)

def print_loss(model, name, input_fn):
    results = model.evaluate(input_fn=input_fn, steps=2)
    print("loss on {}: {}".format(name, results["loss"]))
print_loss(model, "validation", read_dataset(tf.estimator.ModeKeys.EVAL, 4))

model = tf.estimator.DNNClassifier([4], columns, sys.argv[1] + "_dnn")
model.train(read_dataset(tf.estimator.ModeKeys.TRAIN, 4), max_steps=5)
print_loss(model, "validation", read_dataset(tf.estimator.ModeKeys.EVAL, 4))
'''


def test_a_function_evaluating_each_estimator_a_notebook_trains_is_given_each_model():
    result = run_one(NOTEBOOK_TWO_MODELS)
    code = result.source
    assert set(rules(result)) == {"TFM301", "TFM303", "TFM309"}, [f.message for f in result.findings]
    assert code.count("    results = model.evaluate(input_fn().repeat(), steps=2, return_dict=True, verbose=2)\n") == 1
    lines = code.splitlines()
    calls = [index for index, line in enumerate(lines) if line.startswith("print_loss(")]
    assert len(calls) == 2 and len({lines[index] for index in calls}) == 1, calls
    model = lines[calls[0]].split("(")[1].split(",")[0]
    built = [index for index, line in enumerate(lines) if line.lstrip().startswith(f"{model} = build_")]
    assert len(built) == 2 and built[0] < calls[0] < built[1] < calls[1], (built, calls)
    compile(code, "train.py", "exec")


@pytest.mark.tensorflow
@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs the parity extra")
def test_the_migrated_function_evaluates_each_model_it_is_given(tmp_path):
    done = run_migrated(tmp_path, NOTEBOOK_TWO_MODELS)
    losses = [float(line.split(": ")[1]) for line in done.stdout.splitlines() if line.startswith("loss on validation")]
    assert len(losses) == 2 and all(0 < loss < 5 for loss in losses), done.stdout


PREDICT_AFTER_TRAINING = (Path(__file__).parent / "parity_programs" / "predict_after_training_tf1.py").read_text()


def test_an_estimator_only_predicted_with_is_restored_from_the_trained_model_dir():
    """b_estimator's second LinearRegressor on the trained model_dir: built on what it predicts from, restored from
    model_dir's checkpoints (the first model's, which the migrated program wrote in model_dir/tf2), never fit."""
    result = run_one(PREDICT_AFTER_TRAINING)
    assert any("an Estimator only evaluated or predicted with here: its Keras model is restored from model_dir's"
               in f.message for f in result.findings), [f.message for f in result.findings]
    second = result.source[result.source.rindex("task_type, strategy = strategy_for_this_task()"):]
    assert "dataset.element_spec[0] if isinstance(dataset.element_spec, tuple) else dataset.element_spec" in second
    assert "checkpoints.restore_or_initialize()" in second and "restore_tf1_checkpoint(tf1_checkpoint, " in second
    assert ".fit(" not in second and "CheckpointSaver(" not in second and "save_checkpoint" not in second
    assert result.source.count("class CheckpointSaver(") == 1
    compile(result.source, "train.py", "exec")


@pytest.mark.parametrize("old, new, why", [
    ("model = tf.estimator.LinearRegressor(feature_columns=make_feature_cols(), model_dir=OUTDIR)\npreds_iter",
     "model = tf.estimator.LinearRegressor(feature_columns=make_feature_cols())\npreds_iter",
     "never trained here, and has no model_dir to read a trained model from"),
    ('preds_iter = model.predict(input_fn=make_input_fn(VALID, None, 1))\n'
     'print([pred["predictions"][0] for pred in list(itertools.islice(preds_iter, 5))])\n',
     'def serving_input_fn():\n  inputs = {key: tf.compat.v1.placeholder(tf.float32, [None]) for key in FEATURES}\n'
     '  return tf.estimator.export.ServingInputReceiver(inputs, inputs)\n\n\n'
     'model.export_saved_model("export", serving_input_fn)\n',
     "an Estimator that is only exported, never trained here, is not migrated yet"),
], ids=["no model_dir", "only exported"])
def test_an_estimator_never_trained_here_that_cannot_read_a_trained_model_is_left(old, new, why):
    assert old in PREDICT_AFTER_TRAINING
    source = PREDICT_AFTER_TRAINING.replace(old, new)
    result = run_one(source)
    assert new in result.source  # the first Estimator, trained, is a program of its own
    assert any(why in f.message for f in result.findings if f.rule == "TFM302"), [f.message for f in result.findings]


@pytest.mark.tensorflow
@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs the parity extra")
def test_the_estimator_only_predicted_with_predicts_what_tf1s_did(tmp_path):
    printed = []
    for side, source in (("old", PREDICT_AFTER_TRAINING), ("new", run_one(PREDICT_AFTER_TRAINING).source)):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "train.py").write_text(source)
        done = subprocess.run([sys.executable, "train.py"], cwd=folder, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        printed.append([float(number) for number in done.stdout.strip().splitlines()[-1].strip("[]").split(",")])
    assert len(printed[0]) == 5 and printed[1] == pytest.approx(printed[0], rel=1e-5)
