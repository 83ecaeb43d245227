"""TFM103 on a graph calling a function of its own module that makes variables with tf.contrib's layers (tf-slim's
now: TFM005, run first, moved the module's `from tensorflow.contrib import slim` to `import tf_slim as slim`), as
alexwal/distributed-tensorflow-intro's MNIST trainers have it (`y = net(x)`, slim.layers.conv2d ... in `net`): the
between-graph rule reads tf-slim's names as the tf.contrib ones they were, so such a function runs as TF1 code in a
Keras layer (model_modules.py) or, where it cannot, leaves the program naming the layer that makes variables; never
a step function making them again at every step."""

from __future__ import annotations

import re

import pytest
from test_between_graph_model_modules import CALL, TASK, _serve, migrated

NET = '''def net(features, hidden_units):
    """tf.contrib's layers only, imported by name."""
    for units in hidden_units:
        features = layers.fully_connected(features, units)
    return layers.fully_connected(features, 2, activation_fn=None)


'''
# The graph's own module makes the net.
OWN = TASK.replace("\nimport trainer.model as model\n", "\nfrom tensorflow.contrib import layers\n") \
    .replace("def run(", NET + "def run(").replace("model.inference(x, [8, 4])", "net(x, [8, 4])")
OWN_CALL = CALL.replace("model.inference", "net")


def test_a_function_of_the_graph_s_module_making_tf_slim_layers_runs_in_a_keras_layer(tmp_path):
    task = migrated(tmp_path, task=OWN, given=("task",))["task"]
    assert "TFM104" not in {f.rule for f in task.findings}, task.findings
    code = task.source
    compile(code, "task.py", "exec")
    assert "import tf_slim as layers\n" in code
    assert "        features = layers.fully_connected(features, units)\n" in code
    assert "class Net(keras.layers.Layer):\n" in code
    assert "            return net(features, hidden_units)\n" in code
    assert "                logits = net_layer(x, [8, 4])\n" in code


@pytest.mark.parametrize("spelling", ["from tensorflow.contrib import layers\n", "layers = tf.contrib.slim\n"])
def test_tf_slim_layers_the_migration_cannot_keep_leave_the_program_naming_them(tmp_path, spelling):
    """`net(...) * 2.0` is no call the migration keeps in a Keras layer: read as computation, the step would
    make the layers' variables again at every step (and train none of them)."""
    source = OWN.replace(OWN_CALL, OWN_CALL.replace("[8, 4])", "[8, 4]) * 2.0"))
    if spelling.startswith("layers ="):
        source = source.replace("from tensorflow.contrib import layers\n", "").replace("\n\ndef net(",
                                                                                      f"\n{spelling}\n\ndef net(")
    task = migrated(tmp_path, task=source, given=("task",))["task"]
    assert "ClusterCoordinator" not in task.source
    (finding,) = [f for f in task.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1].strip() == "features = layers.fully_connected(features, units)"
    assert "calls tf.contrib.slim.fully_connected, which makes variables" in finding.message, finding.message


@pytest.mark.tensorflow
def test_the_tf_slim_layers_of_the_graph_s_module_train_on_a_ps_and_two_workers(tmp_path):
    task = OWN.replace('print("trained steps:", step)', 'print("trained steps:", step, "loss:", loss_value)')
    results = migrated(tmp_path, task=task, given=("task",))
    assert "TFM104" not in {f.rule for f in results["task"].findings}, results["task"].findings
    printed = '    print("trained steps:", step, "loss:", loss_value)\n'
    results["task"].source = results["task"].source.replace(printed, (
        '    print("trained steps:", step, "loss:", float(loss_value.fetch()))\n'
        '    print("variables:", sorted((v.name, v.device) for v in net_layer.variables))\n'))
    out = _serve(tmp_path, results, steps=200)
    variables = re.search(r"^variables: (.*)$", out, re.MULTILINE).group(1)
    for name in ("fully_connected/weights:0", "fully_connected_1/biases:0", "fully_connected_2/weights:0"):
        assert f"'{name}', '/job:ps/replica:0/task:0" in variables, variables
    loss = float(re.search(r"^trained steps: 200 loss: (\S+)$", out, re.MULTILINE).group(1))
    assert loss < 0.69, out[-3000:]
