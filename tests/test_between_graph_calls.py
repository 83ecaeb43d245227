"""TFM103 on graphs that call functions of their own module: kept as calls in the step when they only compute
tensors; left, naming what the function does, when it makes variables, placeholders, queues or side effects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PS_CLUSTER = (EXAMPLES / "ps_cluster" / "train.py").read_text()
LOSS = "    loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)\n"
DEF = "def free_port():\n"


def program(functions: str, graph: str) -> str:
    """examples/ps_cluster with ``functions`` at the top of the module and ``graph`` computing its loss."""
    assert PS_CLUSTER.count(LOSS) == PS_CLUSTER.count(DEF) == 1
    return PS_CLUSTER.replace(DEF, functions + "\n\n" + DEF).replace(LOSS, graph)


PREDICT = program("def predict(x, weights, bias):\n  logits = tf1.matmul(x, weights) + bias\n"
                  "  return logits, tf1.nn.sigmoid(logits)\n",
                  "    prediction, probability = predict(x, weights, bias)\n"
                  "    loss = tf1.losses.mean_squared_error(y, prediction)\n")


def in_a_tree(tmp_path: Path, imports: str, graph: str, model: str):
    """The program of ``graph`` (ps_cluster's, ``imports`` at its top) as task.py, migrated with ``model`` in
    model.py beside it and in trainer/model.py."""
    from migrator.engine import migrate
    from rewrites import RULES

    for folder in (tmp_path, tmp_path / "trainer"):
        folder.mkdir(exist_ok=True)
        (folder / "model.py").write_text(model)
    source = program(imports, graph + "    loss = tf1.losses.mean_squared_error(y, prediction)\n")
    return source, migrate(source, str(tmp_path / "task.py"), frozenset(RULES), "tf_keras")


MODEL = ("import tensorflow.compat.v1 as tf\n\nSCALE = 2.0\n\n\ndef inference(x, weights):\n"
         "  return tf.matmul(x, weights)\n\n\ndef predict(x, weights):\n  logits = inference(x, weights) / SCALE\n"
         "  return logits, tf.nn.sigmoid(logits)\n")


def test_a_function_returning_a_tuple_is_called_as_it_is_in_the_step():
    result = run(PREDICT)
    code = result.source
    assert run(code).source == code, "a second run changes nothing"
    compile(code, "migrated.py", "exec")
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert ("def predict(x, weights, bias):\n  logits = tf1.matmul(x, weights) + bias\n"
            "  return logits, tf1.nn.sigmoid(logits)\n") in code
    assert ("      with tf.GradientTape() as tape:\n        prediction, probability = predict(x, weights, bias)\n"
            "        loss = tf1.losses.mean_squared_error(y, prediction)\n") in code


def manual(source: str) -> tuple[str, str]:
    """(the line of the TFM104 finding, its message) of a program left as it is."""
    result = run(source)
    assert "ClusterCoordinator" not in result.source and "replica_device_setter" in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    return source.splitlines()[finding.line - 1].strip(), finding.message


# The Deep-MNIST tutorials' shape: the net's variables made by helpers of the net's function.
VARIABLE_HELPERS = ("def weight_variable(shape):\n  initial = tf1.truncated_normal(shape, stddev=0.1)\n"
                    "  return tf1.Variable(initial)\n\n\n"
                    "def net(x):\n  w = weight_variable([NUM_FEATURES, 1])\n  return tf1.matmul(x, w)\n")


@pytest.mark.parametrize("functions, graph, line, message", [
    (VARIABLE_HELPERS, "    prediction = net(x)\n    other = net(x)\n", "prediction = net(x)",
     "`net(x)` in the graph makes variables in a function the module names elsewhere too"),
    (VARIABLE_HELPERS.replace("  return tf1.matmul(x, w)\n", "  keep = tf1.placeholder(tf1.float32)\n"
                              "  return tf1.matmul(x, w)\n"), "    prediction = net(x)\n",
     "keep = tf1.placeholder(tf1.float32)", "a placeholder the function does not return, which nothing can feed"),
    (VARIABLE_HELPERS.replace("  w = weight_variable([NUM_FEATURES, 1])\n",
                              "  h = tf1.matmul(x, weights)\n  w = tf1.Variable(h)\n"), "    prediction = net(x)\n",
     "w = tf1.Variable(h)", "a variable made from the function's tensors"),
    (VARIABLE_HELPERS.replace("  return tf1.matmul(x, w)\n", "  keep = tf1.placeholder(tf1.float32)\n"
                              "  return tf1.matmul(x, w), keep\n").replace("  w = weight_variable([NUM_FEATURES, 1])\n",
                                                                          "  w = weights\n"),
     "    prediction, keep = net(x)\n", "keep = tf1.placeholder(tf1.float32)",
     "`net(x)` in the graph calls tf.placeholder, which makes a placeholder: TF 2 has none"),
    ("def net(x):\n  return tf1.keras.layers.Dense(1)(x)\n", "    prediction = net(x)\n",
     "return tf1.keras.layers.Dense(1)(x)", "calls tf.keras.layers.Dense, which makes a Keras layer"),
    ("def batches(x, y):\n  return tf1.train.batch([x, y], 4)\n", "    bx, by = batches(x, y)\n",
     "return tf1.train.batch([x, y], 4)", "calls tf.train.batch, which reads TF1's input queues"),
    ("CALLS = 0\n\n\ndef net(x):\n  global CALLS\n  CALLS += 1\n  return tf1.matmul(x, weights)\n",
     "    prediction = net(x)\n", "global CALLS", "`net(x)` in the graph sets `global CALLS`"),
    ("def net(x):\n  tf1.summary.histogram(\"x\", x)\n  return x\n", "    prediction = net(x)\n",
     "tf1.summary.histogram(\"x\", x)", "calls tf.summary.histogram, which writes to the TF1 graph's collections"),
    (VARIABLE_HELPERS.replace("  return tf1.matmul(x, w)\n", "  layer = make_layer(x)\n  return layer(w)\n").replace(
        "def net(x):", "def net(x, make_layer):"), "    prediction = net(x, Layer)\n", "layer = make_layer(x)",
     "`make_layer(x)` in a function making variables calls what is neither TensorFlow nor a function of the program"),
], ids=["a model function called twice", "its placeholder not returned", "a variable of its tensors",
        "a placeholder returned", "a layer", "a queue", "a global", "a summary", "a class given to it"])
def test_a_function_doing_more_than_compute_tensors_leaves_the_program_naming_it(functions, graph, line, message):
    source = program(functions, graph + "    loss = tf1.losses.mean_squared_error(y, prediction)\n")
    where, said = manual(source)
    assert where == line
    assert message in said, said


@pytest.mark.tensorflow
@pytest.mark.parametrize("model", [None, MODEL], ids=["its module's function", "another module's"])
def test_the_migrated_program_trains_like_the_tf1_program(tmp_path, model):
    """Both run as examples/ps_cluster does without arguments (a local cluster); then tf-migrate parity."""
    from test_parity import assert_parity, parity

    old, new = tmp_path / "old.py", tmp_path / "new.py"
    if model is None:
        old.write_text(PREDICT)
        new.write_text(run(PREDICT).source)
    else:
        source, result = in_a_tree(tmp_path, "import model", "    prediction, probability = model.predict(x, weights)\n"
                                   "    prediction = prediction + bias\n", MODEL)
        assert "ClusterCoordinator" in result.source
        old.write_text(source)
        new.write_text(result.source)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    ran = subprocess.run([sys.executable, str(new), "--train_steps", "3"], capture_output=True, text=True, env=env,
                         timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert ran.stdout.count(" loss ") == 3, ran.stdout
    report = tmp_path / "report.json"
    assert_parity(parity(old, new, "--steps", "5", "--json", str(report)))
    data = json.loads(report.read_text())
    assert len(data["new"]["losses"]) == 5 and all(v["ok"] for v in data["variables"])


# The Deep-MNIST tutorials' `deepnn(x)`: variables made by helpers, a placeholder made and returned, fed by the loop.
DEEPNN = program(
    VARIABLE_HELPERS.replace(
        "def net(x):\n  w = weight_variable([NUM_FEATURES, 1])\n  return tf1.matmul(x, w)\n",
        "def bias_variable(shape):\n  return tf1.Variable(tf1.constant(0.1, shape=shape))\n\n\n"
        "def net(x):\n  \"\"\"The prediction of a batch, and its keep probability.\"\"\"\n"
        "  w = weight_variable([NUM_FEATURES, 4])\n  b = bias_variable([4])\n"
        "  # The keep probability of the hidden layer.\n  keep_prob = tf1.placeholder(tf1.float32)\n"
        "  hidden = tf1.nn.dropout(tf1.nn.relu(tf1.matmul(x, w) + b), rate=1 - keep_prob)\n"
        "  w_out = weight_variable([4, 1])\n  prediction = tf1.matmul(hidden, w_out)\n"
        "  return prediction, keep_prob\n"),
    "    prediction, keep_prob = net(x)\n    loss = tf1.losses.mean_squared_error(y, prediction + bias)\n",
).replace("feed_dict={x: batch_x, y: batch_y}", "feed_dict={x: batch_x, y: batch_y, keep_prob: 1.0}")


def test_a_function_making_variables_becomes_a_module_made_in_the_scope_and_called_in_the_step():
    result = run(DEEPNN)
    code = result.source
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert run(code).source == code, "a second run changes nothing"
    assert ("class Net(tf.Module):\n" in code and "  def __init__(self):\n    super().__init__()\n"
            "    self.w = weight_variable([NUM_FEATURES, 4])\n    self.b = bias_variable([4])\n"
            "    self.w_out = weight_variable([4, 1])\n\n  def __call__(self, x, keep_prob):\n"
            "    \"\"\"The prediction of a batch, and its keep probability.\"\"\"\n"
            "    # The keep probability of the hidden layer.\n"
            "    hidden = tf1.nn.dropout(tf1.nn.relu(tf1.matmul(x, self.w) + self.b), rate=1 - keep_prob)\n"
            "    prediction = tf1.matmul(hidden, self.w_out)\n    return prediction, keep_prob\n") in code, code
    assert "def net(" not in code
    assert "    net = Net()\n    optimizer = " in code
    assert "      tf.TensorSpec(None, tf1.float32),\n  ])\n  def train_step(x, y, keep_prob):\n" in code
    assert "        prediction, keep_prob = net(x, keep_prob)\n" in code
    assert "variables = [weights, bias, *net.trainable_variables]" in code
    assert "train_step, args=(batch_x, batch_y, 1.0)" in code
    assert '"Variable": net.w,\n          "Variable_1": net.b,\n          "Variable_2": net.w_out,\n' in code
    assert "net=net)" in code


def test_a_function_making_variables_from_its_parameters_is_built_from_them():
    """mnist_inference(hidden_units): a parameter the variables read goes to __init__, one the ops read to __call__;
    placeholders made in the function are the graph's."""
    source = program(
        "def inference(x, units, scale=2.0):\n  w = tf1.Variable(tf1.truncated_normal([NUM_FEATURES, units]), "
        "name=\"w\")\n  labels = tf1.placeholder(tf1.float32, [None, 1])\n"
        "  loss = tf1.losses.mean_squared_error(labels, tf1.reduce_sum(tf1.matmul(x, w), 1, keepdims=True) / scale)\n"
        "  return labels, loss\n",
        "    y2, inner = inference(x, 4)\n    loss = inner + tf1.reduce_sum(bias) * 0.0\n",
    ).replace("y: batch_y}", "y2: batch_y}").replace('    y = tf1.placeholder(tf1.float32, [None, 1], name="y")\n', "")
    code = run(source).source
    assert "  def __init__(self, units):\n" in code and "  def __call__(self, x, labels, scale=2.0):\n" in code, code
    assert "    inference = Inference(4)\n" in code
    assert "def train_step(x, y2):" in code and "y2, inner = inference(x, y2)\n" in code
    assert '"w": inference.w,' in code


# The TF1 tutorials' MNIST `inference` shape: a name scope per layer, each binding its own `weights` and `biases`.
SCOPED = program(
    "def layers(x, units):\n  with tf1.name_scope(\"hidden\"):\n"
    "    weights = tf1.Variable(tf1.truncated_normal([NUM_FEATURES, units], stddev=0.5), name=\"weights\")\n"
    "    biases = tf1.Variable(tf1.zeros([units]), name=\"biases\")\n"
    "    hidden = tf1.nn.relu(tf1.matmul(x, weights) + biases)\n  with tf1.name_scope(\"linear\"):\n"
    "    weights = tf1.Variable(tf1.truncated_normal([units, 1], stddev=0.5), name=\"weights\")\n"
    "    biases = tf1.Variable(tf1.zeros([1]), name=\"biases\")\n"
    "    prediction = tf1.matmul(hidden, weights) + biases\n  return prediction\n",
    "    prediction = layers(x, 4)\n    loss = tf1.losses.mean_squared_error(y, prediction + bias)\n")


def test_variables_of_a_function_s_name_scopes_are_the_module_s_attributes_named_after_their_scope():
    result = run(SCOPED)
    code = result.source
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert run(code).source == code, "a second run changes nothing"
    assert ("  def __init__(self, units):\n    super().__init__()\n    self.hidden_weights = tf1.Variable("
            "tf1.truncated_normal([NUM_FEATURES, units], stddev=0.5), name=\"weights\")\n"
            "    self.hidden_biases = tf1.Variable(tf1.zeros([units]), name=\"biases\")\n"
            "    self.linear_weights = tf1.Variable(tf1.truncated_normal([units, 1], stddev=0.5), "
            "name=\"weights\")\n    self.linear_biases = tf1.Variable(tf1.zeros([1]), name=\"biases\")\n\n"
            "  def __call__(self, x):\n"
            "    hidden = tf1.nn.relu(tf1.matmul(x, self.hidden_weights) + self.hidden_biases)\n"
            "    prediction = tf1.matmul(hidden, self.linear_weights) + self.linear_biases\n"
            "    return prediction\n") in code, code
    assert ('"hidden/weights": layers.hidden_weights,\n          "hidden/biases": layers.hidden_biases,\n'
            '          "linear/weights": layers.linear_weights,\n') in code, code
    assert "name_scope" not in code


def test_a_variable_bound_twice_in_one_name_scope_is_named():
    source = SCOPED.replace("name_scope(\"linear\")", "name_scope(\"hidden\")")
    (finding,) = [f for f in run(source).findings if f.rule == "TFM104"]
    assert "`weights` is bound twice in a function making variables" in finding.message, finding.message


@pytest.mark.tensorflow
def test_a_function_of_name_scopes_trains_like_the_tf1_program(tmp_path):
    from test_parity import assert_parity, parity

    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(SCOPED)
    new.write_text(run(SCOPED).source)
    assert_parity(parity(old, new, "--steps", "5"))


@pytest.mark.tensorflow
def test_a_function_making_variables_trains_like_the_tf1_program(tmp_path):
    from test_parity import assert_parity, parity

    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(DEEPNN)
    new.write_text(run(DEEPNN).source)
    assert_parity(parity(old, new, "--steps", "5"))


def test_a_function_reading_a_dataset_otherwise_than_returning_its_batches_leaves_the_program():
    """Called at every step, it would start its iterator anew: the first batch at every step."""
    where, said = manual(program(
        "def batches(x, y):\n"
        "  iterator = tf1.data.make_initializable_iterator(tf1.data.Dataset.from_tensors((x, y)))\n"
        "  return iterator.get_next()\n",
        "    bx, by = batches(x, y)\n    loss = tf1.losses.mean_squared_error(by, tf1.matmul(bx, weights) + bias)\n"))
    assert where.startswith("iterator = tf1.data.make_initializable_iterator(")
    assert "`batches(x, y)` in the graph calls tf.data." in said and "anew at every step" in said, said
    # What the migration reads instead: the pipeline in the graph's block, or a function's returned batches.
    assert ("make_one_shot_iterator(dataset).get_next()`) or return those batches from a function of the graph's "
            "module, whose dataset becomes the per-worker dataset_fn") in said


def test_a_function_returning_the_batches_of_a_pipeline_of_the_graph_s_tensors_leaves_the_program():
    """The per-worker dataset function its pipeline moves to has none of the graph's tensors."""
    where, said = manual(program(
        "def batches(x, y):\n"
        "  return tf1.data.make_one_shot_iterator(tf1.data.Dataset.from_tensors((x, y))).get_next()\n",
        "    bx, by = batches(x, y)\n    loss = tf1.losses.mean_squared_error(by, tf1.matmul(bx, weights) + bias)\n"))
    assert where == "bx, by = batches(x, y)"
    assert said.endswith("the graph's input reads `x`, a tensor of the graph: the per-worker dataset function "
                         "building it has none; migrate it by hand"), said


@pytest.mark.parametrize("functions, graph, message", [
    ("import trainer.inputs as inputs", "    features, labels = inputs.input_fn(x)\n",
     "`inputs.input_fn(x)` in the graph: a function of a module imported (`import trainer.inputs as inputs`) whose "
     "file is not found from this one's folder, where the migration reads the program's modules: migrate it with "
     "that file beside it, or by hand"),
    ("inputs = load_inputs()", "    features, labels = inputs.input_fn(x)\n",
     "`inputs.input_fn(x)` in the graph: a function neither of TensorFlow nor of the program, which the migration "
     "does not follow; migrate it by hand"),
    ("", "    def input_fn(t):\n      return t, t\n    features, labels = input_fn(x)\n",
     "`input_fn(x)` in the graph: a function defined in the graph's block, which the migration reads there only as "
     "one its tf.data pipeline maps; define it at the top of the module, where one that only computes tensors is "
     "called in the step, or migrate it by hand"),
], ids=["a module imported whose file is not given", "an object of the program's", "a function of the graph's"])
def test_a_function_the_migration_cannot_read_unpacked_in_the_graph_leaves_the_program_saying_why(functions, graph,
                                                                                                 message):
    where, said = manual(program(functions, graph + LOSS))
    assert where == graph.splitlines()[-1].strip()
    assert said.endswith(message), said


def test_the_graph_s_first_obstacle_is_named_before_the_session_s():
    """A graph reading queues, trained in a loop inside `with coord.stop_on_exception():` (not read either): the
    graph comes first in the source, and so does its finding."""
    loop = PS_CLUSTER[PS_CLUSTER.index("    i = 0\n"):PS_CLUSTER.index("  if not flags.checkpoint_dir:")]
    guarded = "    coord = tf1.train.Coordinator()\n    with coord.stop_on_exception():\n" + "".join(
        "  " + line if line.strip() else line for line in loop.splitlines(True))
    source = program("def batches(x, y):\n  return tf1.train.batch([x, y], 4)\n",
                     "    bx, by = batches(x, y)\n" + LOSS).replace(loop, guarded)
    where, said = manual(source)
    assert where == "return tf1.train.batch([x, y], 4)", said
    assert "`batches(x, y)` in the graph calls tf.train.batch, which reads TF1's input queues" in said
    # The session's own obstacle, alone, is the one named.
    where, said = manual(PS_CLUSTER.replace(loop, guarded))
    assert "no `while` or `for` loop running `sess` after the session opens" in said, said


@pytest.mark.parametrize("imports, graph", [
    ("import model", "    prediction = model.inference(x, weights) + bias\n"),
    ("from model import inference", "    prediction = inference(x, weights) + bias\n"),
    ("from trainer import model", "    prediction = model.inference(x, weights) + bias\n"),
    ("import trainer.model as model", "    prediction = model.inference(x, weights) + bias\n"),
    ("import model", "    prediction, probability = model.predict(x, weights)\n"),
], ids=["import model", "from model import f", "a module of a package", "import as", "unpacked"])
def test_a_function_of_another_module_computing_tensors_is_called_from_its_module_in_the_step(tmp_path, imports,
                                                                                              graph):
    source, result = in_a_tree(tmp_path, imports, graph, MODEL)
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert "ClusterCoordinator(strategy)" in result.source and imports + "\n" in result.source
    assert "      with tf.GradientTape() as tape:\n        " + graph.strip() + "\n" in result.source


HELPER = ("import tensorflow.compat.v1 as tf\n\n\ndef weight_variable(shape):\n"
          "  return tf.Variable(tf.truncated_normal(shape, stddev=0.1), name=\"w\")\n\n\n"
          "def inference(x):\n  return tf.matmul(x, weight_variable([3, 1]))\n")


@pytest.mark.parametrize("model, message", [
    (HELPER, "`model.inference(x)` in the graph (through `weight_variable`) calls tf.Variable, which makes a "
             "variable that a function kept as TF1 code in a Keras layer (track_tf1_style_variables) would make again "
             "at every call: make it with tf.get_variable, or migrate the function by hand (line 5 of model.py: "
             "`tf.Variable(tf.truncated_normal(shape, stddev=0.1), name=...`)"),
    ("import tensorflow.compat.v1 as tf\n\n\ndef inference(x):\n  return tf.layers.dense(x, 1)\n",
     "`model.inference(x)` in the graph makes variables in model.py, which is not migrated with this file"),
    ("import tensorflow.compat.v1 as tf\n\n\ndef inference(x):\n"
     "  return tf.data.Dataset.from_tensors(x).make_one_shot_iterator().get_next()\n",
     "`model.inference(x)` in the graph builds its tf.data input in model.py, which is not migrated with this "
     "file: that function would return the pipeline now, for the per-worker dataset function; give tf-migrate "
     "both files (or their folder)"),
    ("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\n\ndef inference(x):\n  return x\n",
     "`model.inference(x)` in the graph: its module, imported by the migrated program, calls tf.disable_v2_behavior"
     ", which turns TF 2's behaviour off for the migrated program; remove that from the module by hand (line 2 of "
     "model.py: `tf.disable_v2_behavior()`)"),
    ("import layers\n\n\ndef inference(x):\n  return layers.dense(x)\n",
     "`model.inference(x)` in the graph makes variables in model.py, which is not migrated with this file"),
    ("class Net:\n  pass\n\n\ninference = Net()\n",
     "`model.inference(x)` in the graph: `model.inference(x)` calls into another module of the program (model.py) "
     "what is not a function defined at its top"),
    ("import tensorflow as tf\n\n\ndef inference(x):\n  return tf.to_float(x)\n",
     "`model.inference(x)` in the graph: tf.to_float, which TF 2 has not, in model.py, which the migrated program "
     "imports as it is: spell it as TF 2 does (or as tf.compat.v1's) and migrate again (line 5 of model.py"),
    ("import tensorflow as tf\n\n\ndef scaled(x):\n  return tf.to_float(x) * 2.0\n\n\n"
     "def inference(x):\n  return scaled(x)\n",
     "tf.to_float, which TF 2 has not, in model.py, which the migrated program imports as it is"),
], ids=["variables through a helper", "a layer", "a dataset", "TF 2 turned off on import", "a third module",
        "not a function", "a TF1 name TF 2 has not", "one through a function of its module"])
def test_a_function_of_another_module_doing_more_leaves_the_program_naming_it_and_its_line(tmp_path, model,
                                                                                           message):
    (tmp_path / "layers.py").write_text("import tensorflow.compat.v1 as tf\n\n\ndef dense(x):\n"
                                        "  return tf.matmul(x, tf.get_variable(\"w\", [3, 1]))\n")
    source, result = in_a_tree(tmp_path, "import model", "    prediction = model.inference(x)\n", model)
    assert "ClusterCoordinator" not in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1].strip() == "prediction = model.inference(x)"
    assert message in finding.message, finding.message


def test_the_first_thing_in_the_source_a_function_cannot_do_is_named():
    where, said = manual(program(
        VARIABLE_HELPERS.replace("  return tf1.matmul(x, w)\n", "  keep = tf1.placeholder(tf1.float32)\n"
                                 "  return tf1.nn.dropout(tf1.matmul(x, w), keep)\n").replace(
            "  initial = tf1.truncated_normal(shape, stddev=0.1)\n",
            "  initial = tf1.placeholder_with_default(tf1.truncated_normal(shape, stddev=0.1), shape)\n"),
        "    prediction = net(x)\n    loss = tf1.losses.mean_squared_error(y, prediction)\n"))
    assert where.startswith("initial = tf1.placeholder_with_default(") and "(through `weight_variable`)" in said, said


def test_a_function_the_graph_hands_to_tensorflow_is_read_too():
    where, said = manual(program(VARIABLE_HELPERS, "    prediction = tf1.map_fn(net, x)\n"
                                                   "    loss = tf1.losses.mean_squared_error(y, prediction)\n"))
    assert where == "return tf1.Variable(initial)"
    assert "`net` in the graph (through `weight_variable`) calls tf.Variable, which makes variables" in said, said


def test_tensorflow_unpacked_in_the_graph_is_read_as_a_function_s_body_is():
    where, said = manual(program("", "    bx, by = tf1.train.batch([x, y], 4)\n"
                                     "    loss = tf1.losses.mean_squared_error(by, tf1.matmul(bx, weights) + bias)\n"))
    assert where == "bx, by = tf1.train.batch([x, y], 4)"
    assert "`tf1.train.batch([x, y], 4)`, unpacked in the graph, calls tf.train.batch, which reads TF1's input" in said
