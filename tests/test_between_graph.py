"""TFM103-104: between-graph parameter-server programs -> a ClusterCoordinator driven by TF1's chief."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ALL_RULES, check_noop, run

PS_CLUSTER = (Path(__file__).resolve().parent.parent / "examples" / "ps_cluster" / "train.py").read_text()
SERVER_RULES = frozenset(rule for rule in ALL_RULES if rule in ("TFM101", "TFM102"))


def migrated(source: str):
    result = run(source)
    again = run(result.source)
    assert again.source == result.source, "a second run changes nothing"
    return result


def assert_left_whole_pointing_at(before: str, after: str, where: str, program: str = PS_CLUSTER) -> None:
    """The program with one edit is left as it is (but for the Server/ClusterSpec renames, which TF1 runs too),
    with one TFM104 finding on the line holding ``where``."""
    source = program.replace(before, after)
    assert source != program
    result = run(source)
    assert result.source == run(source, enabled=SERVER_RULES).source
    (finding,) = [f for f in result.findings if f.rule not in SERVER_RULES | {"TFM107"}]
    assert finding.rule == "TFM104" and finding.safety == "manual", finding
    assert "TFM107" in {f.rule for f in result.findings}, "each use of the TF1 cluster code left is reported too"
    assert where in source.splitlines()[finding.line - 1], (finding, source.splitlines()[finding.line - 1])


def test_the_chief_drives_the_cluster_with_a_coordinator():
    result = migrated(PS_CLUSTER)
    code = result.source
    for line in (
        "import tf_keras as keras\n",
        "  if not (flags.task_index == 0):\n    # TF1's chief drives the cluster's training now; the other workers "
        "serve it.\n    server.join()\n",
        "  # The coordinator joins the cluster on a port of its own: a chief task keeps its server.\n"
        "  jobs = tf.train.ClusterSpec(cluster).as_dict()\n  jobs.pop(\"chief\", None)\n",
        '  resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(\n'
        '      tf.train.ClusterSpec(jobs), rpc_layer="grpc")\n'
        "  strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)\n",
        '        tf.compat.v1.glorot_uniform_initializer()([NUM_FEATURES, 1]), name="weights")',
        'bias = tf.Variable(tf1.zeros_initializer()([1]), name="bias")',
        "optimizer = keras.optimizers.legacy.SGD(learning_rate=0.1)",
        "coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)",
        "        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)\n",
        "  scheduled_steps = int(optimizer.iterations)\n  while scheduled_steps < flags.train_steps:\n",
        "    loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y))\n"
        "    scheduled_steps += 1\n    step = scheduled_steps\n",
        'print("step %d loss %s" % (step, loss_value.fetch()))', "    i += 1\n  coordinator.join()\n",
        "  tf.random.set_seed(42)\n",
    ):
        assert line in code, line
    for gone in ("disable_eager_execution()", "replica_device_setter(", "placeholder(", "MonitoredTrainingSession(",
                 "StopAtStepHook(", "ConfigProto(", "get_variable(", "sess."):
        assert gone not in code, gone
    assert sorted(f.rule for f in result.findings) == ["TFM101", "TFM101", "TFM102", "TFM103", "TFM106", "TFM108"]
    compile(code, "migrated.py", "exec")


SPELLINGS = [
    ("import tensorflow.compat.v1 as tf1\n", {}),
    ("import tensorflow as tf\n", {"tf1.": "tf.compat.v1."}),
    ("import tensorflow.compat.v1 as tf1\nfrom tensorflow.compat.v1.train import (MonitoredTrainingSession, Server,\n"
     "    StopAtStepHook, replica_device_setter)\n",
     {"tf1.train.MonitoredTrainingSession": "MonitoredTrainingSession", "tf1.train.Server": "Server",
      "tf1.train.StopAtStepHook": "StopAtStepHook", "tf1.train.replica_device_setter": "replica_device_setter"}),
    ("import tensorflow.compat.v1 as tf1\nfrom tensorflow.python.training import device_setter, server_lib\n",
     {"tf1.train.Server": "server_lib.Server", "tf1.train.replica_device_setter": "device_setter.replica_device_setter"}),
]


@pytest.mark.parametrize("imports, renames", SPELLINGS,
                         ids=["tf1 alias", "tf.compat.v1", "from train import", "internals"])
def test_every_import_spelling_of_the_cluster_apis(imports, renames):
    source = PS_CLUSTER.replace("import tensorflow.compat.v1 as tf1\n", imports)
    for old, new in renames.items():
        source = source.replace(old, new)
    assert source != PS_CLUSTER or not renames
    result = migrated(source)
    assert "ClusterCoordinator(strategy)" in result.source and "TFM103" in [f.rule for f in result.findings]
    compile(result.source, "migrated.py", "exec")


def test_rmsprop_slots_start_at_ones_on_the_graphs_variables():
    source = PS_CLUSTER.replace("tf1.train.GradientDescentOptimizer(0.1)", "tf1.train.RMSPropOptimizer(0.01)")
    code = migrated(source).source
    assert 'for variable in [weights, bias]:\n      optimizer.add_slot(variable, "rms", initializer="ones")' in code


def test_a_loop_reading_nothing_of_a_step_schedules_without_waiting_and_joins_at_its_end():
    """TF1's workers trained concurrently: the migrated loop does not wait for a step it reads nothing of."""
    source = PS_CLUSTER.replace("_, step, loss_value = sess.run(\n          [train_op, global_step, loss],",
                                "sess.run(\n          train_op,").replace(
        '      print("step %d loss %s" % (step, loss_value))\n', "")
    code = migrated(source).source
    assert ("  while scheduled_steps < flags.train_steps:\n    batch_x, batch_y = next_batch(i)\n"
            "    coordinator.schedule(train_step, args=(batch_x, batch_y))\n    scheduled_steps += 1\n    i += 1\n"
            "  coordinator.join()\n") in code


# The run fetching another tensor of the graph, computed from the batch with the loss (an accuracy of the batch).
ACCURACY = PS_CLUSTER.replace(
    "    train_op = optimizer.minimize(loss, global_step=global_step)\n",
    "    train_op = optimizer.minimize(loss, global_step=global_step)\n"
    "    mean_error = tf1.reduce_mean(tf1.abs(tf1.matmul(x, weights) + bias - y))\n").replace(
    "[train_op, global_step, loss],", "[train_op, global_step, mean_error],").replace(
    "loss_value = sess.run(", "error_value = sess.run(").replace("loss %s\" % (step, loss_value)",
                                                               "error %s\" % (step, error_value)")


def test_a_run_fetching_another_tensor_of_the_graph_gets_it_from_the_step():
    code = migrated(ACCURACY).source
    assert ("        mean_error = tf1.reduce_mean(tf1.abs(tf1.matmul(x, weights) + bias - y))\n"
            "      variables = [weights, bias]\n"
            "      optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))\n"
            "      return mean_error\n") in code, code
    assert ("    error_value = coordinator.schedule(train_step, args=(batch_x, batch_y))\n" in code
            and 'print("step %d error %s" % (step, error_value.fetch()))' in code), code


@pytest.mark.tensorflow
def test_the_tensor_a_step_returns_is_printed_as_tf1_printed_it(tmp_path):
    """Run as examples/ps_cluster runs without arguments: on a cluster of its own."""
    program = tmp_path / "new.py"
    program.write_text(migrated(ACCURACY).source)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    ran = subprocess.run([sys.executable, str(program), "--train_steps", "3"], capture_output=True, text=True,
                         env=env, timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert len(re.findall(r"step \d+ error \d+\.\d+", ran.stdout)) == 3, ran.stdout


def test_a_run_fetching_the_loss_and_another_tensor_is_left_with_the_reason():
    source = ACCURACY.replace("[train_op, global_step, mean_error],", "[train_op, loss, mean_error],")
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "run() fetches `mean_error` besides `loss`: the step returns one tensor" in finding.message, finding.message


def test_a_loss_logged_every_k_steps_is_fetched_only_then():
    source = PS_CLUSTER.replace('      print("step %d loss %s" % (step, loss_value))\n',
                                '      if step % 5 == 0:\n        print("step %d loss %s" % (step, loss_value))\n')
    code = migrated(source).source
    assert ("    loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y))\n"
            "    scheduled_steps += 1\n    step = scheduled_steps\n    if step % 5 == 0:\n"
            '      print("step %d loss %s" % (step, loss_value.fetch()))\n') in code


def test_a_loss_read_after_the_loop_is_fetched_each_step():
    source = PS_CLUSTER.replace("      i += 1\n", "      i += 1\n    print(\"last loss\", loss_value)\n")
    code = migrated(source).source
    assert "    loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y)).fetch()\n" in code
    assert 'print("last loss", loss_value)' in code


@pytest.mark.parametrize("before, after, where", [
    ("    optimizer = tf1.train.GradientDescentOptimizer(0.1)\n",
     "    optimizer = tf1.train.SyncReplicasOptimizer(tf1.train.GradientDescentOptimizer(0.1), 1)\n",
     "SyncReplicasOptimizer"),
    ("hooks = [tf1.train.StopAtStepHook(last_step=flags.train_steps)]",
     "hooks = [tf1.train.StopAtStepHook(last_step=flags.train_steps), tf1.train.LoggingTensorHook([loss], 5)]",
     "LoggingTensorHook"),
    ("hooks = [tf1.train.StopAtStepHook(last_step=flags.train_steps)]", "hooks = [tf1.train.StopAtStepHook(num_steps=5)]",
     "num_steps"),
    ("    loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)\n",
     "    hidden = tf1.layers.dense(tf1.concat([x, x], 1), 4)\n"
     "    loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)\n", "tf1.layers.dense"),
    ("feed_dict={x: batch_x, y: batch_y})", "feed_dict={x: batch_x})", "feed_dict"),
    ("      i += 1\n", "      i += 1\n      print(sess.run(weights))\n", "print(sess.run(weights))"),
    ("    weights = tf1.get_variable(\"weights\", [NUM_FEATURES, 1])\n",
     "    weights = tf1.get_variable(\"weights\", [NUM_FEATURES, 1], regularizer=l2)\n", "get_variable"),
    ("  with tf1.device(tf1.train.replica_device_setter(", "  with tf1.name_scope(tf1.train.replica_device_setter(",
     "tf1.train.MonitoredTrainingSession"),
    ("      i += 1\n", "      i += 1\n      tf1.train.start_queue_runners()\n", "start_queue_runners"),
], ids=["SyncReplicasOptimizer", "other hook", "StopAtStepHook num_steps", "a layer on a computed tensor",
        "placeholder not fed", "session used otherwise", "regularizer", "no device setter before", "queue runners"])
def test_what_cannot_be_migrated_safely_stays_whole_with_a_manual_finding(before, after, where):
    assert_left_whole_pointing_at(before, after, where)


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nstrategy = tf.distribute.experimental.ParameterServerStrategy(resolver)\n",
    "from mylib import MonitoredTrainingSession\nwith MonitoredTrainingSession() as sess:\n    sess.run(x)\n",
])
def test_noop(source):
    check_noop(source)


def test_keras_option_chooses_the_keras_import():
    code = run(PS_CLUSTER, keras="tf.keras").source
    assert "from tensorflow import keras\n" in code and "tf_keras" not in code


def test_keras_auto_imports_the_keras_package_and_tf_keras_where_that_is_keras_3():
    result = run(PS_CLUSTER, keras="auto")
    assert run(result.source, keras="auto").source == result.source, "a second run changes nothing"
    code = result.source
    assert "\nimport keras\nimport tensorflow.compat.v1 as tf1\nimport tensorflow as tf\n\n# Keras 2, as " in code
    assert '\nif not keras.__version__.startswith("2."):\n  import tf_keras as keras\n\nNUM_FEATURES = 3\n' in code


@pytest.mark.parametrize("keras, taken", [("tf_keras", "import keras\n"), ("auto", "from tensorflow import keras\n"),
                                          ("tf.keras", "keras = None\n")])
def test_keras_bound_to_something_else_leaves_the_program_whole(keras, taken):
    source = PS_CLUSTER.replace("import numpy as np\n", "import numpy as np\n" + taken)
    result = run(source, keras=keras)
    assert "ClusterCoordinator" not in result.source and "tf_keras" not in result.source.replace(taken, "")
    (finding,) = [finding for finding in result.findings if finding.rule == "TFM104"]
    assert "needs `keras`" in finding.message and source.splitlines()[finding.line - 1] == taken.strip()


TF_AS_COMPAT_V1 = {
    "import as tf": "import tensorflow.compat.v1 as tf\n",
    "disable_v2_behavior": "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n",
    "tf = tf.compat.v1": "import tensorflow as tf\ntf = tf.compat.v1\n",
    "from compat import v1": "from tensorflow.compat import v1 as tf\n",
}


@pytest.mark.parametrize("imports", TF_AS_COMPAT_V1.values(), ids=TF_AS_COMPAT_V1)
def test_tf_bound_to_compat_v1_becomes_tf2_and_what_stays_tf1_says_so(imports):
    source = PS_CLUSTER.replace("import tensorflow.compat.v1 as tf1\n", imports).replace("tf1.", "tf.")
    result = migrated(source)
    code = result.source
    assert "TFM103" in {f.rule for f in result.findings}
    assert "import tensorflow as tf\n" in code and "compat.v1 as tf" not in code and "tf = tf.compat" not in code
    for line in ("loss = tf.compat.v1.losses.mean_squared_error(y, tf.matmul(x, weights) + bias)",
                 "bias = tf.Variable(tf.compat.v1.zeros_initializer()([1]), name=\"bias\")",
                 "server = tf.distribute.Server(", "tf.random.set_seed(42)"):
        assert line in code, line
    for gone in ("tf2.", "as tf2", "disable_", "tf.losses.", "tf.train.Server"):
        assert gone not in code, gone
    compile(code, "migrated.py", "exec")


def test_checkpoint_dir_becomes_a_checkpoint_manager_the_program_resumes_from():
    """Its own checkpoints, or else TF1's in the checkpoint_dir, restored where the session opened."""
    result = migrated(PS_CLUSTER)
    code = result.source
    for line in ("  checkpoint = tf.train.Checkpoint(optimizer=optimizer, weights=weights, bias=bias)\n"
                 "  manager = tf.train.CheckpointManager(\n      checkpoint, os.path.join(checkpoint_dir, \"tf2\"), "
                 "max_to_keep=5)\n",
                 "  tf1_checkpoint = tf.train.latest_checkpoint(checkpoint_dir)\n"
                 "  if manager.latest_checkpoint:\n"
                 "    checkpoint.restore(manager.latest_checkpoint)\n  elif tf1_checkpoint:\n    with strategy.scope():\n"
                 '      restore_tf1_checkpoint(tf1_checkpoint, {\n          "weights": weights,\n'
                 '          "bias": bias,\n      }, optimizer)\n\n  i = 0\n',
                 "    i += 1\n  coordinator.join()\n  manager.save()\n", "import os\n",
                 "def restore_tf1_checkpoint(path, variables, optimizer):\n"):
        assert line in code, line
    # The checkpoints come after the folder is made, which the TF1 program did after its graph.
    assert code.index("checkpoint_dir = flags.checkpoint_dir") < code.index("manager = ")
    (note,) = [f for f in result.findings if f.rule == "TFM108"]
    assert "checkpoint_dir" in PS_CLUSTER.splitlines()[note.line - 1] and "saves when training ends" in note.message


@pytest.mark.parametrize("made, names", [
    (('tf1.Variable(tf1.zeros([NUM_FEATURES, 1]))', 'tf1.Variable(tf1.zeros([1]))'), ('"Variable"', '"Variable_1"')),
    (('tf1.Variable(tf1.zeros([NUM_FEATURES, 1]), name="w")', 'tf1.Variable(tf1.zeros([1]), name="w")'),
     ('"w"', '"w_1"')),
    (('tf1.get_variable("Variable", [NUM_FEATURES, 1])', 'tf1.Variable(tf1.zeros([1]))'),
     ('"Variable"', '"Variable_1"')),
], ids=["unnamed", "the same name", "a get_variable's name"])
def test_variables_of_one_name_restore_under_the_names_tf1_made_unique(made, names):
    """TF1 made a repeated variable name unique (`Variable`, `Variable_1`): each variable restores its own value from
    TF1's checkpoint (one name for both restored the first's value into the second, and the first not at all)."""
    source = PS_CLUSTER.replace('tf1.get_variable("weights", [NUM_FEATURES, 1])', made[0]).replace(
        'tf1.get_variable("bias", [1], initializer=tf1.zeros_initializer())', made[1])
    code = migrated(source).source
    assert (f'      restore_tf1_checkpoint(tf1_checkpoint, {{\n          {names[0]}: weights,\n'
            f'          {names[1]}: bias,\n      }}, optimizer)\n') in code


PARTITIONED_WEIGHTS = ('    weights = tf1.get_variable(\n'
                       '        "weights", [NUM_FEATURES, 1], partitioner=tf1.fixed_size_partitioner(2))\n')


def test_a_get_variable_partitioner_moves_onto_the_strategy():
    source = PS_CLUSTER.replace('    weights = tf1.get_variable("weights", [NUM_FEATURES, 1])\n', PARTITIONED_WEIGHTS)
    result = migrated(source)
    assert ("variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(2))"
            in result.source)
    assert 'for shard in getattr(variable, "variables", [variable])]' in result.source
    assert {"TFM201", "TFM105", "TFM103"} <= {f.rule for f in result.findings}


@pytest.mark.parametrize("before, after, where", [
    ("  with tf1.train.MonitoredTrainingSession(", "  supervisor = tf1.train.Supervisor(logdir='/tmp/s')\n"
     "  with tf1.train.MonitoredTrainingSession(", "Supervisor"),
    ("    global_step = tf1.train.get_or_create_global_step()\n",
     "    global_step = tf1.train.get_or_create_global_step()\n"
     "    extra = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)\n", "get_collection"),
    ('    weights = tf1.get_variable("weights", [NUM_FEATURES, 1])\n', PARTITIONED_WEIGHTS.replace(
        "fixed_size_partitioner(2)", "fixed_size_partitioner(2, axis=1)"), "fixed_size_partitioner"),
], ids=["Supervisor", "graph collections", "partitioner along axis 1"])
def test_other_tf1_machinery_stays_manual(before, after, where):
    source = PS_CLUSTER.replace(before, after)
    result = run(source)
    manual = [f for f in result.findings if f.safety == "manual"]
    assert manual and "ClusterCoordinator" not in result.source
    assert any(where in source.splitlines()[f.line - 1] for f in manual), manual


def test_a_graph_tensor_used_outside_the_run_stays_manual():
    assert_left_whole_pointing_at("      i += 1\n", "      i += 1\n    print(loss)\n", "print(loss)")


SETTER = ('  with tf1.device(tf1.train.replica_device_setter(\n      worker_device="/job:worker/task:%d" % '
          'flags.task_index,\n      cluster=cluster)):\n')
PLACES_NOTHING = ("is given neither a cluster nor ps tasks: TF1's setter is then None and places nothing, so each "
                  "task's session kept the graph's variables on its own task and trained its own model; "
                  "ParameterServerStrategy would share them on the ps tasks: give the setter the cluster "
                  "(`cluster=...`) if the tasks are to share the model, or migrate the program by hand")


@pytest.mark.parametrize("setter", [
    "tf1.train.replica_device_setter()",
    'tf1.train.replica_device_setter(worker_device="/cpu:0")',
    "tf1.train.replica_device_setter(cluster=None)",
    'tf1.train.replica_device_setter(0, "/job:ps")',
], ids=["no-arguments", "worker-device-only", "cluster-none", "no-ps-tasks"])
def test_a_setter_given_no_cluster_nor_ps_tasks_places_nothing_and_is_left(setter):
    assert SETTER in PS_CLUSTER
    source = PS_CLUSTER.replace(SETTER, f"  with tf1.device({setter}):\n")
    result = run(source)
    assert "replica_device_setter" in result.source and "Strategy" not in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert source.splitlines()[finding.line - 1][finding.col - 1:].startswith(setter)
    assert finding.message == f"between-graph program left as it is: `{setter}` {PLACES_NOTHING}"


def test_a_setter_given_ps_tasks_without_a_cluster_places_the_variables_and_is_migrated():
    source = PS_CLUSTER.replace(SETTER, "  with tf1.device(tf1.train.replica_device_setter(ps_tasks=1)):\n")
    result = migrated(source)
    assert "ParameterServerStrategy(resolver)" in result.source
    assert not [f for f in result.findings if f.safety == "manual"]


def test_a_setter_placing_nothing_is_found_where_a_name_or_a_function_gives_it():
    from test_between_graph_device_functions import PROGRAM
    from test_between_graph_local import TRAINER
    for source, setter in ((TRAINER.replace("replica_device_setter(cluster=self.cluster)", "replica_device_setter()"),
                            "tf.train.replica_device_setter()"),
                           (PROGRAM.replace("replica_device_setter(worker_device=worker, cluster=cluster)",
                                            "replica_device_setter(worker_device=worker)"),
                            "tf.train.replica_device_setter(worker_device=worker)")):
        result = run(source)
        (finding,) = [f for f in result.findings if f.rule == "TFM104"]
        assert source.splitlines()[finding.line - 1][finding.col - 1:].startswith(setter), finding
        assert finding.message.endswith(f"`{setter}` {PLACES_NOTHING}")
