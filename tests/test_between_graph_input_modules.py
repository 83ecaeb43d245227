"""TFM103 on a graph whose input a function of another module of the program builds, as cloudml-samples' census
trainer has it: task.py trains between graphs, `features, labels = model.input_fn(...)` of trainer/model.py reads
CSV lines with tf.data. Given both files, the migration edits both, or neither: model.py's input function returns
its pipeline now (model.py a TF2 module, as the migrated program imports it), and task.py's per-worker dataset
function calls it. What stops either leaves both as they are, with one TFM104 at the graph's call
(rewrites/between_graph/inputs.py)."""

from __future__ import annotations

import re

import pytest

from migrator.engine import migrate_group
from rewrites import RULES
from helpers import assert_serving
from ports import free_port

MODEL = '''\
"""The model module: its input function reads CSV lines with tf.data."""
import tensorflow as tf

CSV_COLUMNS = ("age", "hours", "label")
CSV_DEFAULTS = [[0.0], [0.0], [0.0]]


def _decode_csv(line):
    columns = tf.decode_csv(line, record_defaults=CSV_DEFAULTS)
    features = dict(zip(CSV_COLUMNS, columns))
    return features, features.pop("label")


def input_fn(filenames, num_epochs=None, shuffle=True, batch_size=4):
    """Batches of (features, labels) read from CSV files."""
    dataset = tf.data.TextLineDataset(filenames).map(_decode_csv)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=batch_size * 10)
    iterator = dataset.repeat(num_epochs).batch(
        batch_size).make_one_shot_iterator()
    return iterator.get_next()
'''

# census' own: the label popped from the batch the function returns.
POPPED = MODEL.replace('''    features = dict(zip(CSV_COLUMNS, columns))
    return features, features.pop("label")''', "    return dict(zip(CSV_COLUMNS, columns))").replace(
    "    return iterator.get_next()\n", '''    features = iterator.get_next()
    return features, features.pop("label")
''')

TASK = '''\
"""Trains the model between graphs: a ps and workers of TF_CONFIG's cluster."""
import argparse
import json
import os

import tensorflow as tf

import trainer.model as model


def run(server, cluster_spec, is_chief, args):
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(cluster=cluster_spec)):
            features, labels = model.input_fn(args.train_files, num_epochs=args.num_epochs,
                                              batch_size=args.batch_size)
            x = tf.stack([features["age"], features["hours"]], 1)
            w = tf.Variable(tf.zeros([2, 1]), name="w")
            global_step = tf.train.get_or_create_global_step()
            loss = tf.reduce_mean(tf.square(tf.squeeze(tf.matmul(x, w), 1) - labels))
            train_op = tf.train.GradientDescentOptimizer(0.0001).minimize(loss, global_step=global_step)

        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                               hooks=[tf.train.StopAtStepHook(last_step=args.train_steps)]) as sess:
            while not sess.should_stop():
                step, _ = sess.run([global_step, train_op])
        print("trained steps:", step)


def main(args):
    tf_config = json.loads(os.environ["TF_CONFIG"])
    cluster_spec = tf.train.ClusterSpec(tf_config["cluster"])
    job_name = tf_config["task"]["type"]
    task_index = tf_config["task"]["index"]
    server = tf.train.Server(cluster_spec, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        server.join()
    else:
        run(server, cluster_spec, task_index == 0, args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-files", nargs="+", default=["train.csv"])
    parser.add_argument("--num-epochs", type=int)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--train-steps", type=int, default=10)
    main(parser.parse_args())
'''

CALL = "features, labels = model.input_fn(args.train_files, num_epochs=args.num_epochs,"


def migrated(tmp_path, task=TASK, model=MODEL, given=("task", "model")):
    """task.py and model.py in tmp_path/trainer, migrated together (``given``: the files given): their results."""
    folder = tmp_path / "trainer"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("")
    texts = {"task": task, "model": model}
    for name, text in texts.items():
        (folder / f"{name}.py").write_text(text)
    results = migrate_group({str(folder / f"{name}.py"): texts[name] for name in given}, frozenset(RULES), "tf_keras")
    return {name: results[str(folder / f"{name}.py")] for name in given}


def test_the_input_function_of_another_module_returns_its_pipeline_for_the_per_worker_dataset(tmp_path):
    results = migrated(tmp_path)
    task, model = results["task"], results["model"]
    assert "TFM104" not in {f.rule for f in task.findings}, task.findings
    assert "ClusterCoordinator(strategy)" in task.source
    # No TF1 graph around the graph and its session: the migrated program runs eagerly.
    assert "as_default" not in task.source
    assert ("    def dataset_fn():\n        \"\"\"TF1's input pipeline, on each worker.\"\"\"\n"
            "        dataset = (model.input_fn(args.train_files, num_epochs=args.num_epochs,") in task.source
    assert "        def step(features, labels):\n" in task.source
    # model.py: the pipeline returned, as it was built; TF2 now, what stays TF1 says so.
    assert ('        dataset = dataset.shuffle(buffer_size=batch_size * 10)\n    return (dataset.repeat(num_epochs).batch('
            '\n        batch_size))\n') in model.source
    assert "columns = tf.compat.v1.decode_csv(line, record_defaults=CSV_DEFAULTS)" in model.source
    assert "    dataset = tf.data.TextLineDataset(filenames).map(_decode_csv)\n" in model.source
    assert "get_next" not in model.source and "make_one_shot_iterator" not in model.source
    (note,) = [f for f in model.findings if f.rule == "TFM103"]
    assert MODEL.splitlines()[note.line - 1].strip() == "return iterator.get_next()"
    assert "builds the per-worker dataset of the between-graph program of task.py now" in note.message
    assert task.program == model.program and len(task.program) == 2
    again = migrated(tmp_path / "again", task.source, model.source)
    assert again["task"].source == task.source and again["model"].source == model.source, "not idempotent"


def test_what_the_function_returns_of_its_batch_maps_its_pipeline(tmp_path):
    """`features = iterator.get_next()` `return features, features.pop("label")`: the pipeline's map computes it."""
    results = migrated(tmp_path, model=POPPED)
    assert "ClusterCoordinator(strategy)" in results["task"].source
    assert ('    return (dataset.repeat(num_epochs).batch(\n        batch_size).map(lambda features: (features, '
            'features.pop("label"))))\n') in results["model"].source


@pytest.mark.parametrize("returned", [
    "    features = iterator.get_next()\n    return features, tf.shape(features)\n",
    "    features = iterator.get_next()\n    print(features)\n    return features, features.pop('label')\n",
], ids=["a TensorFlow op", "the batch read before"])
def test_a_return_of_the_batch_a_map_would_not_compute_the_same_is_not_read(tmp_path, returned):
    model = POPPED.replace('''    features = iterator.get_next()
    return features, features.pop("label")
''', returned)
    where, said = manual(tmp_path, model=model)
    assert where == CALL and "which reads a tf.data input" in said, said


EVALUATION = '''    if is_chief:
        evaluation_graph = tf.Graph()
        with evaluation_graph.as_default():
            eval_features, eval_labels = model.input_fn(args.eval_files, num_epochs=1, shuffle=False)
'''


def test_a_call_in_another_tf1_graph_reads_the_pipeline_s_iterator_as_the_function_did(tmp_path):
    """census' evaluation graph, built in a graph of its own for its hook, calls the input function too: that call
    makes the one-shot iterator the function made before, in that graph."""
    task = TASK.replace("    with tf.Graph().as_default():\n", EVALUATION + "    with tf.Graph().as_default():\n")
    results = migrated(tmp_path, task=task)
    assert "ClusterCoordinator(strategy)" in results["task"].source
    assert ("        with evaluation_graph.as_default():\n            eval_features, eval_labels = tf.compat.v1.data."
            "make_one_shot_iterator(\n                model.input_fn(args.eval_files, num_epochs=1, shuffle=False)"
            ").get_next()\n") in results["task"].source
    assert "    return (dataset.repeat(num_epochs).batch(" in results["model"].source


def test_the_tf1_graph_holding_the_graph_and_its_session_goes_with_its_name_unused(tmp_path):
    """`with tf.Graph().as_default() as g:` around the device block and the session: the migrated program runs
    eagerly (ParameterServerStrategy cannot start in a graph); a graph named and used besides is left, said."""
    named = TASK.replace("    with tf.Graph().as_default():\n", "    with tf.Graph().as_default() as g:\n")
    results = migrated(tmp_path, task=named)
    assert "ClusterCoordinator(strategy)" in results["task"].source and "as_default" not in results["task"].source
    used = named.replace('        print("trained steps:", step)\n', '        print("trained steps:", step, g)\n')
    where, said = manual(tmp_path / "used", task=used)
    assert where == 'print("trained steps:", step, g)'
    assert "`g`, the TF1 graph the session trains, is used besides: the migrated program has no graph" in said


def manual(tmp_path, **changes):
    results = migrated(tmp_path, **changes)
    assert "ClusterCoordinator" not in results["task"].source
    if "model" in results:
        assert results["model"].source == changes.get("model", MODEL), "model.py changed"
    (finding,) = [f for f in results["task"].findings if f.rule == "TFM104"]
    return results["task"].source.splitlines()[finding.line - 1].strip(), finding.message


@pytest.mark.parametrize("changes, message", [
    ({"given": ("task",)}, "`model.input_fn(args.train_files, num_epochs=args.num_epochs,` in the graph builds its "
     "tf.data input in model.py, which is not migrated with this file: that function would return the pipeline now, "
     "for the per-worker dataset function; give tf-migrate both files (or their folder)"),
    ({"task": TASK.replace("def main(args):\n", "def evaluate(args):\n    return model.input_fn(args.eval_files)\n\n\n"
                                                "def main(args):\n")},
     "builds its tf.data input in a function the program names elsewhere too (but calls in another TF1 graph, "
     "`with graph.as_default():`): it would return the pipeline now"),
    ({"model": MODEL + "\n\ndef serving_input_fn():\n    return tf.placeholder(tf.string, [None])\n"},
     "`model.input_fn(` in the graph builds its input in model.py, which becomes a TF2 module: `placeholder` in "
     "`serving_input_fn()` still needs TF1's graph mode, which the migrated program does not run in: migrate it by "
     "hand (line 25 of model.py: `tf.placeholder`)"),
    ({"model": MODEL.replace("    if shuffle:\n",
                             "    tf.summary.scalar('files', tf.size(filenames))\n    if shuffle:\n")},
     "building the per-worker dataset, calls tf.summary.scalar, which writes to the TF1 graph's collections or "
     "summaries: the migrated step has none (line 17 of model.py: `tf.summary.scalar('files', tf.size(filenames))`)"),
], ids=["model.py not given", "called elsewhere too", "model.py not a TF2 module", "the function does more"])
def test_an_input_function_of_another_module_the_migration_cannot_change_leaves_both_files(tmp_path, changes, message):
    where, said = manual(tmp_path, **changes)
    assert where == CALL
    assert message in said, said


def test_a_notebook_importing_the_model_module_beside_it_migrates_with_it(tmp_path, cli):
    """census' trainer/task.ipynb: the notebook twin of task.py, `import model` of the model.py beside it. Run over
    the folder, the notebook and model.py are one program, as task.py and model.py are (once, the notebook was
    migrated alone and left: its input function "in model.py, which is not migrated with this file")."""
    from tests.test_notebooks import notebook_text

    folder = tmp_path / "trainer"
    folder.mkdir()
    (folder / "model.py").write_text(MODEL)
    imports, _, code = TASK.replace("import trainer.model as model", "import model").partition("\n\n\n")
    (folder / "task.ipynb").write_text(notebook_text(imports + "\n", code.partition('if __name__')[0]))
    status, out, err = cli("--out", "out", "trainer")
    assert "TFM104" not in out and "not migrated with this file" not in out, out
    assert "task.ipynb:cell 3:12:9: TFM103" in out, out
    assert "return iterator.get_next()" not in (tmp_path / "out" / "model.py").read_text()
    assert "ClusterCoordinator(strategy)" in (tmp_path / "out" / "task.ipynb").read_text()


@pytest.mark.tensorflow
@pytest.mark.parametrize("model", [MODEL, POPPED], ids=["batches returned", "a label popped from the batch"])
def test_the_migrated_pair_trains_on_a_ps_and_two_workers(tmp_path, model):
    """TF_CONFIG's cluster: the chief's coordinator runs 10 steps on the workers, each reading the CSV file."""
    import json
    import os
    import subprocess
    import sys

    results = migrated(tmp_path, model=model)
    folder = tmp_path / "trainer"
    for name, result in results.items():
        (folder / f"{name}.py").write_text(result.source)
    (tmp_path / "train.csv").write_text("".join(f"{age},{age % 40},{age * 0.1}\n" for age in range(20, 60)))
    hosts = {"ps": [f"127.0.0.1:{free_port()}"],
             "worker": [f"127.0.0.1:{free_port()}" for _ in range(2)]}

    def task(job, index):
        config = json.dumps({"cluster": hosts, "task": {"type": job, "index": index}})
        env = os.environ | {"TF_CONFIG": config, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(tmp_path)}
        return subprocess.Popen([sys.executable, "-m", "trainer.task"], cwd=tmp_path, env=env,
                                stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True)

    serving = [task("ps", 0), task("worker", 1)]
    try:
        chief = task("worker", 0)
        out, _ = chief.communicate(timeout=240)
        assert chief.returncode == 0, out[-3000:]
        assert re.search(r"^trained steps: 10$", out, re.MULTILINE), out[-3000:]
        assert_serving(serving)
    finally:
        for process in serving:
            process.kill()
            process.wait()
