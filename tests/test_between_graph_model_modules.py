"""TFM103 on a graph part of which a function of another module builds with TF1's layers and get_variable, as
cloudml-samples' trainers have it (task.py trains between graphs, `logits = model.inference(x, ...)` of
trainer/model.py makes the network): that function is kept as TF1 code, run in a Keras layer whose call is decorated
with track_tf1_style_variables, made and first called in the strategy's scope, called in the step; model.py becomes a
TF2 module, changed with task.py or neither is. What such a function may not do leaves both, with one TFM104 at the
graph's call (rewrites/between_graph/model_modules.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import assert_serving, run

from migrator.engine import migrate_group
from rewrites import RULES
from ports import free_port

MODEL = '''\
"""The model module: a network of TF1 layers."""
import tensorflow as tf

NUM_CLASSES = 2


def inference(features, hidden_units, scale=1.0):
    """Dense layers, then the logits."""
    net = features
    for units in hidden_units:
        net = tf.layers.dense(net, units, activation=tf.nn.relu)
    with tf.variable_scope("logits"):
        weights = tf.get_variable("weights", [hidden_units[-1], NUM_CLASSES],
                                  initializer=tf.truncated_normal_initializer(stddev=0.1))
        biases = tf.get_variable("biases", [NUM_CLASSES], initializer=tf.zeros_initializer())
    return tf.matmul(net * scale, weights) + biases
'''

# The layers of tf.contrib that tf-slim keeps (cloudml-samples' MNIST `inference`), imported by name.
SLIM = MODEL.replace("import tensorflow as tf\n", "import tensorflow as tf\nfrom tensorflow.contrib import layers\n") \
    .replace("net = tf.layers.dense(net, units, activation=tf.nn.relu)", "net = layers.fully_connected(net, units)")

TASK = '''\
"""Trains the model between graphs: a ps and workers of TF_CONFIG's cluster."""
import argparse
import json
import os

import numpy as np
import tensorflow as tf

import trainer.model as model


def run(server, cluster_spec, is_chief, args):
    features = np.random.RandomState(0).randn(64, 4).astype(np.float32)
    labels = (features[:, 0] > 0).astype(np.int64)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(cluster=cluster_spec)):
            dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(8)
            x, y = dataset.make_one_shot_iterator().get_next()
            logits = model.inference(x, [8, 4])
            global_step = tf.train.get_or_create_global_step()
            loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)

        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                               hooks=[tf.train.StopAtStepHook(last_step=args.train_steps)]) as sess:
            while not sess.should_stop():
                step, loss_value, _ = sess.run([global_step, loss, train_op])
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
    parser.add_argument("--train-steps", type=int, default=10)
    main(parser.parse_args())
'''

CALL = "            logits = model.inference(x, [8, 4])\n"


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


def left(results, model: str | None = MODEL) -> str:
    """The one TFM104 of task.py, at the graph's call; model.py (``model``) unchanged by it (None: tf-migrate's
    other rules change it)."""
    task = results["task"]
    assert "ClusterCoordinator" not in task.source
    (finding,) = [f for f in task.findings if f.rule == "TFM104"]
    assert TASK.splitlines()[finding.line - 1] == CALL.rstrip("\n"), finding
    if "model" in results and model is not None:
        assert results["model"].source == model
    return finding.message


def test_a_function_of_another_module_making_tf1_layers_runs_in_a_keras_layer_built_in_the_scope(tmp_path):
    results = migrated(tmp_path)
    task, model = results["task"], results["model"]
    assert "TFM104" not in {f.rule for f in task.findings}, task.findings
    code = task.source
    compile(code, "task.py", "exec")
    assert ("class Inference(keras.layers.Layer):\n" in code
            and "    @tf.compat.v1.keras.utils.track_tf1_style_variables\n"
                "    def call(self, features, hidden_units):\n" in code
            and "        with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope()):\n"
                "            return model.inference(features, hidden_units)\n" in code)
    assert ("    x_spec, y_spec = dataset_fn().element_spec  # the shapes the layers are built for\n"
            "    with strategy.scope():\n        inference_layer = Inference()\n"
            "        # Called once here, its TF1 code makes its variables.\n"
            "        inference_layer(keras.Input(type_spec=x_spec), [8, 4])\n") in code
    assert "                logits = inference_layer(x, [8, 4])\n" in code
    assert "            variables = [*inference_layer.trainable_variables]\n" in code
    # Keras 2 where TF1's layers run, before TensorFlow is imported.
    assert code.index('os.environ["TF_USE_LEGACY_KERAS"] = "1"') < code.index("import tensorflow as tf")
    # model.py: the same function, a TF2 module's now.
    assert "        net = tf.compat.v1.layers.dense(net, units, activation=tf.nn.relu)\n" in model.source
    assert '    with tf.compat.v1.variable_scope("logits"):\n' in model.source
    (note,) = [f for f in model.findings if f.rule == "TFM103"]
    assert MODEL.splitlines()[note.line - 1].startswith("def inference(")
    assert "runs as its TF1 code in the Keras layer `Inference` of the between-graph program of task.py" in \
        note.message
    assert task.program == model.program and len(task.program) == 2
    again = migrated(tmp_path / "again", task.source, model.source)
    assert again["task"].source == task.source and again["model"].source == model.source, "not idempotent"


def test_tf_contrib_s_layers_that_tf_slim_keeps_run_from_tf_slim(tmp_path):
    results = migrated(tmp_path, model=SLIM)
    assert "TFM104" not in {f.rule for f in results["task"].findings}, results["task"].findings
    assert "import tf_slim as layers\n" in results["model"].source
    assert "        net = layers.fully_connected(net, units)\n" in results["model"].source


def test_a_module_also_using_tf_contrib_that_tf_2_has_not_leaves_the_program(tmp_path):
    """TFM005 moves an import's uses to tf-slim all or none: the module would not import in TF 2."""
    model = SLIM.replace("NUM_CLASSES = 2\n", "NUM_CLASSES = 2\nMEAN = tf.contrib.metrics.streaming_mean\n")
    said = left(migrated(tmp_path, model=model), None)
    assert ("makes variables with tf.contrib's layers, which tf-slim keeps, in a module that also uses "
            "tf.contrib.metrics.streaming_mean, which TF 2 has not (line 6 of model.py)") in said, said


def test_a_function_of_the_graph_s_module_making_tf1_layers_runs_in_a_keras_layer():
    source = TASK.replace("\nimport trainer.model as model\n", "") \
        .replace("def run(", MODEL.split("NUM_CLASSES = 2\n", 1)[1].lstrip() + "\n\ndef run(") \
        .replace("model.inference(x, [8, 4])", "inference(x, [8, 4], scale=2.0)") \
        .replace("NUM_CLASSES]", "2]").replace("[NUM_CLASSES]", "[2]")
    result = run(source)
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    code = result.source
    compile(code, "task.py", "exec")
    assert "    def call(self, features, hidden_units, scale):\n" in code
    assert "            return inference(features, hidden_units, scale)\n" in code
    assert "def inference(features, hidden_units, scale=1.0):\n" in code
    assert "        inference_layer(keras.Input(type_spec=x_spec), [8, 4], scale=2.0)\n" in code
    assert "                logits = inference_layer(x, [8, 4], scale=2.0)\n" in code


def test_a_function_of_another_module_not_given_with_the_graph_s_leaves_the_program(tmp_path):
    message = left(migrated(tmp_path, given=("task",)))
    assert ("`model.inference(x, [8, 4])` in the graph makes variables in model.py, which is not migrated with this "
            "file") in message and "give tf-migrate both files" in message


@pytest.mark.parametrize("change, message", [
    (("        biases = tf.get_variable(\"biases\", [NUM_CLASSES], initializer=tf.zeros_initializer())\n",
      "        biases = tf.Variable(tf.zeros([NUM_CLASSES]))\n"),
     "calls tf.Variable, which makes a variable that a function kept as TF1 code in a Keras layer "
     "(track_tf1_style_variables) would make again at every call"),
    (("    return tf.matmul(", "    tf.train.AdamOptimizer(0.1)\n    return tf.matmul("),
     "calls tf.train.AdamOptimizer, which makes an optimizer: the migrated step applies the graph's"),
    (("    with tf.variable_scope(\"logits\"):", "    with tf.variable_scope(\"logits\", partitioner=None):"),
     "tf.variable_scope(partitioner=...) makes sharded variables"),
    (("    return tf.matmul(", "    tf.contrib.lookup.index_table_from_tensor([\"a\", \"b\"])\n    return tf.matmul("),
     "calls tf.contrib.lookup.index_table_from_tensor, which is tf.contrib's, gone in TF 2"),
    (("    return tf.matmul(", "    tf.summary.histogram(\"net\", net)\n    return tf.matmul("),
     "calls tf.summary.histogram, which writes to the TF1 graph's collections or summaries"),
], ids=["tf.Variable", "an optimizer", "a partitioner", "tf.contrib", "a summary"])
def test_a_function_doing_what_a_kept_function_may_not_leaves_both_files_naming_it(tmp_path, change, message):
    model = MODEL.replace(*change)
    said = left(migrated(tmp_path, model=model), model if "contrib" not in model else None)
    assert said.startswith("between-graph program left as it is: `model.inference(x, [8, 4])` in the graph")
    assert message in said, said


def test_a_tensorflow_0_name_of_a_tf_1_op_in_the_kept_function_takes_its_tf_1_name(tmp_path):
    # TensorFlowOnSpark's cifar10.py (TF 0.12): tf.compat.v1 has no `mul`; TF 1.0 named the same op `multiply`.
    model = MODEL.replace("    return tf.matmul(", "    net = tf.mul(net, 2.0)\n    return tf.matmul(")
    results = migrated(tmp_path, model=model)
    assert "TFM104" not in {f.rule for f in results["task"].findings}, results["task"].findings
    assert "    net = tf.multiply(net, 2.0)\n" in results["model"].source


def test_a_tensorflow_0_name_tf_1_has_not_in_the_kept_function_leaves_both_files_naming_it(tmp_path):
    model = MODEL.replace("    return tf.matmul(", "    tf.histogram_summary(\"net\", net)\n    return tf.matmul(")
    said = left(migrated(tmp_path, model=model), model)
    assert ("`model.inference(` in the graph makes variables in model.py, which becomes a TF2 module: "
            "`tf.histogram_summary` is a name neither TF 1.x nor TF 2 has (TensorFlow 0.x's; TF 1.x's is "
            "`tf.summary.histogram`): `tf.compat.v1.histogram_summary` would raise; spell it as TF 1.x does and "
            "migrate again (line 16 of model.py") in said, said


def test_a_tensorflow_0_name_tf_1_has_not_in_the_graph_leaves_the_program_at_it(tmp_path):
    source = TASK.replace("            train_op = ", "            loss = tf.select(loss > 0.0, loss, -loss)\n"
                                                  "            train_op = ")
    assert source != TASK
    result = migrated(tmp_path, task=source)["task"]
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert finding.message.endswith("`tf.select` is a name neither TF 1.x nor TF 2 has (TensorFlow 0.x's; TF 1.x's "
                                    "is `tf.where`): `tf.compat.v1.select` would raise; spell it as TF 1.x does and "
                                    "migrate again"), finding.message
    assert "tf.select(" in source.splitlines()[finding.line - 1] and "ClusterCoordinator" not in result.source


def test_a_tensor_the_layer_cannot_be_built_for_leaves_the_program(tmp_path):
    task = TASK.replace(CALL, "            h = tf.square(x)\n" + CALL.replace("(x,", "(h,"))
    results = migrated(tmp_path, task=task)
    (finding,) = [f for f in results["task"].findings if f.rule == "TFM104"]
    assert task.splitlines()[finding.line - 1].strip() == "logits = model.inference(h, [8, 4])"
    assert "its argument `h` is not a tensor the migration knows the spec of" in finding.message
    assert results["model"].source == MODEL


def _serve(tmp_path, results, steps: int = 10) -> str:
    """The migrated pair run on a ps and two workers of TF_CONFIG's cluster, ``steps`` steps: the chief's output."""
    for name, result in results.items():
        (tmp_path / "trainer" / f"{name}.py").write_text(result.source)
    hosts = {"ps": [f"127.0.0.1:{free_port()}"],
             "worker": [f"127.0.0.1:{free_port()}" for _ in range(2)]}

    def task(job, index):
        config = json.dumps({"cluster": hosts, "task": {"type": job, "index": index}})
        env = os.environ | {"TF_CONFIG": config, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(tmp_path)}
        return subprocess.Popen([sys.executable, "-m", "trainer.task", f"--train-steps={steps}"], cwd=tmp_path, env=env,
                                stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True)

    serving = [task("ps", 0), task("worker", 1)]
    try:
        chief = task("worker", 0)
        out, _ = chief.communicate(timeout=240)
        assert chief.returncode == 0, out[-3000:]
        assert_serving(serving)
        return out
    finally:
        for process in serving:
            process.kill()
            process.wait()


@pytest.mark.tensorflow
@pytest.mark.parametrize("model, layers", [(MODEL, ("dense/kernel:0", "dense_1/kernel:0")),
                                           (SLIM, ("fully_connected/weights:0", "fully_connected_1/biases:0"))],
                         ids=["tf.layers", "tf-slim"])
def test_the_migrated_pair_trains_the_tf1_layers_on_a_ps_and_two_workers(tmp_path, model, layers):
    """The chief's coordinator runs 10 steps on the workers; the layer's variables live on the ps task, named as
    TF1 named them, and the loss falls."""
    task = TASK.replace('print("trained steps:", step)', 'print("trained steps:", step, "loss:", loss_value)')
    results = migrated(tmp_path, task=task, model=model)
    assert "TFM104" not in {f.rule for f in results["task"].findings}, results["task"].findings
    printed = '    print("trained steps:", step, "loss:", loss_value)\n'
    assert printed in results["task"].source
    results["task"].source = results["task"].source.replace(printed, (  # the last step's loss fetched
        '    print("trained steps:", step, "loss:", float(loss_value.fetch()))\n'
        '    print("variables:", sorted((v.name, v.device) for v in inference_layer.variables))\n'))
    out = _serve(tmp_path, results, steps=200)
    variables = re.search(r"^variables: (.*)$", out, re.MULTILINE).group(1)
    for name in (*layers, "logits/weights:0", "logits/biases:0"):
        assert f"'{name}', '/job:ps/replica:0/task:0" in variables, variables
    loss = float(re.search(r"^trained steps: 200 loss: (\S+)$", out, re.MULTILINE).group(1))
    assert loss < 0.69, out[-3000:]  # below the untrained log(2), by far after 200 steps (one batch's loss)


@pytest.mark.tensorflow
def test_a_net_of_tf1_layers_trains_like_the_tf1_program(tmp_path):
    """examples/ps_cluster's loss of a net of TF1 layers and get_variable: tf-migrate parity, which starts both
    from the same TF1 checkpoint (by TF1's names) and compares their losses and variables."""
    from test_between_graph_calls import program
    from test_parity import assert_parity, parity

    source = program("def net(x):\n  hidden = tf1.layers.dense(x, 4, activation=tf1.nn.relu)\n"
                     "  with tf1.variable_scope(\"out\"):\n"
                     "    w = tf1.get_variable(\"w\", [4, 1],\n"
                     "                         initializer=tf1.truncated_normal_initializer(stddev=0.1))\n"
                     "  return tf1.matmul(hidden, w)\n",
                     "    output = net(x)\n    prediction = output + bias\n"
                     "    loss = tf1.losses.mean_squared_error(y, prediction)\n")
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(source)
    result = run(source)
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    new.write_text(result.source)
    report = tmp_path / "report.json"
    assert_parity(parity(old, new, "--steps", "5", "--json", str(report)))
    data = json.loads(report.read_text())
    assert {"dense/kernel", "dense/bias", "out/w"} <= {v["name"] for v in data["variables"]}, data["variables"]
    assert all(v["ok"] for v in data["variables"])


def test_the_run_groups_a_between_graph_program_with_the_model_module_it_imports(tmp_path):
    """Neither file names an Estimator's words (input_fn, model_fn): the between-graph graph's imports group them."""
    from migrator.engine import program_groups

    folder = tmp_path / "trainer"
    folder.mkdir()
    texts = {str(folder / "__init__.py"): "", str(folder / "task.py"): TASK, str(folder / "model.py"): MODEL}
    for path, text in texts.items():
        Path(path).write_text(text)
    groups = program_groups(texts, frozenset(RULES))
    assert sorted(map(sorted, groups)) == sorted([[str(folder / "__init__.py")],
                                                  sorted([str(folder / "task.py"), str(folder / "model.py")])])


# The TF tutorials' mnist.py `inference`: each layer's tf.Variables in a name scope of its own.
SCOPED = '''\
"""The model: layers of name scopes."""
import tensorflow as tf

NUM_CLASSES = 2


def inference(features, hidden_units):
    """A hidden layer, then the logits."""
    with tf.name_scope("hidden"):
        weights = tf.Variable(tf.truncated_normal([4, hidden_units], stddev=0.5), name="weights")
        biases = tf.Variable(tf.zeros([hidden_units]), name="biases")
        hidden = tf.nn.relu(tf.matmul(features, weights) + biases)
    with tf.name_scope("logits"):
        weights = tf.Variable(tf.truncated_normal([hidden_units, NUM_CLASSES], stddev=0.5), name="weights")
        biases = tf.Variable(tf.zeros([NUM_CLASSES]), name="biases")
        logits = tf.matmul(hidden, weights) + biases
    return logits


def training(loss, learning_rate):
    return tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
'''
SCOPED_TASK = TASK.replace("model.inference(x, [8, 4])", "model.inference(x, 8)")


def test_a_function_of_another_module_making_tf_variables_becomes_a_tf_module_there(tmp_path):
    results = migrated(tmp_path, task=SCOPED_TASK, model=SCOPED)
    task, model = results["task"], results["model"]
    assert "TFM104" not in {f.rule for f in task.findings}, task.findings
    assert "        inference = model.Inference(8)\n" in task.source
    assert "                logits = inference(x)\n" in task.source
    assert ("class Inference(tf.Module):\n" in model.source and "    def __init__(self, hidden_units):\n"
            in model.source and "    def __call__(self, features):\n" in model.source)
    assert ("        self.hidden_weights = tf.compat.v1.Variable(tf.random.truncated_normal([4, hidden_units], "
            "stddev=0.5), name=\"weights\")\n") in model.source
    assert "def inference(" not in model.source and "def training(" in model.source
    (note,) = [f for f in model.findings if f.rule == "TFM103"]
    assert SCOPED.splitlines()[note.line - 1].startswith("def inference(")
    assert "`Inference` (a tf.Module) replaces the function making variables" in note.message


@pytest.mark.parametrize("task, model, message", [
    (SCOPED_TASK, SCOPED.replace("def training(loss, learning_rate):\n    return tf.train.GradientDescentOptimizer"
                                 "(learning_rate).minimize(loss)\n", ""),
     "tf.truncated_normal (line 10 of model.py), which TF 2 has not, in a module read as TF 2's"),
    (SCOPED_TASK.replace("import trainer.model as model\n", "import trainer.model as model\nfrom trainer.model import "
                         "inference\n").replace("model.inference(x, 8)", "inference(x, 8)"), SCOPED,
     "imported by its name: the function becomes the tf.Module `Inference` there"),
], ids=["TF1 names in a module read as TF 2's", "imported by name"])
def test_a_tf_module_the_graph_cannot_make_from_another_module_leaves_the_program(tmp_path, task, model, message):
    results = migrated(tmp_path, task=task, model=model)
    assert "ClusterCoordinator" not in results["task"].source
    (finding,) = [f for f in results["task"].findings if f.rule == "TFM104"]
    assert message in finding.message, finding.message


@pytest.mark.tensorflow
def test_the_tf_module_of_another_module_trains_on_a_ps_and_two_workers(tmp_path):
    task = SCOPED_TASK.replace('print("trained steps:", step)', 'print("trained steps:", step, "loss:", loss_value)')
    results = migrated(tmp_path, task=task, model=SCOPED)
    assert "TFM104" not in {f.rule for f in results["task"].findings}, results["task"].findings
    printed = '    print("trained steps:", step, "loss:", loss_value)\n'
    results["task"].source = results["task"].source.replace(printed, (  # the last step's loss fetched
        '    print("trained steps:", step, "loss:", float(loss_value.fetch()))\n'
        '    print("devices:", sorted({v.device for v in inference.variables}))\n'))
    out = _serve(tmp_path, results, steps=200)
    assert re.search(r"^devices: \['/job:ps/replica:0/task:0/device:CPU:0'\]$", out, re.MULTILINE), out[-3000:]
    loss = float(re.search(r"^trained steps: 200 loss: (\S+)$", out, re.MULTILINE).group(1))
    assert loss < 0.69, out[-3000:]  # below the untrained log(2), by far after 200 steps (one batch's loss)
