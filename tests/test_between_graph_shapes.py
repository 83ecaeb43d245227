"""TFM103 on between-graph programs as people wrote them: Supervisor sessions, main(_) under tf.app.run with
tf.app.flags, roles in if / elif branches, module level, a training function given the server, `tf` bound to
compat.v1."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run, tfm104 as manual

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SUPERVISOR = (EXAMPLES / "supervisor_flags" / "train.py").read_text()
PS_CLUSTER = (EXAMPLES / "ps_cluster" / "train.py").read_text()


def migrated(source: str):
    result = run(source)
    assert run(result.source).source == result.source, "a second run changes nothing"
    assert "TFM103" in {f.rule for f in result.findings}, result.findings
    compile(result.source, "migrated.py", "exec")
    return result


def test_a_supervisor_program_under_tf_app_run_becomes_a_coordinator_loop_with_a_checkpoint_manager():
    result = migrated(SUPERVISOR)
    code = result.source
    for line in (
        "import tensorflow as tf\nimport tf_keras as keras\n",
        "flags = tf.compat.v1.app.flags\n",
        "    is_chief = FLAGS.task_index == 0\n",
        "    if not is_chief:\n      # TF1's chief drives the cluster's training now; the other workers serve it.\n"
        "      server.join()\n",
        "    def dataset_fn():\n      \"\"\"TF1's input pipeline, on each worker.\"\"\"\n"
        "      dataset = tf.data.Dataset.from_tensor_slices((train_x, train_y))\n"
        "      dataset = dataset.batch(BATCH_SIZE).repeat()\n      return dataset\n\n"
        "    x_spec, y_spec = dataset_fn().element_spec  # the shapes the layers are built for\n",
        '      hidden_layer = keras.layers.Dense(units=HIDDEN, activation="relu")\n'
        "      hidden_layer.build(x_spec.shape)\n      logits_layer = keras.layers.Dense(units=2)\n"
        "      logits_layer.build(hidden_layer.compute_output_shape(x_spec.shape))\n"
        "      optimizer = TF1Adam(learning_rate=0.01, epsilon=1e-08)\n",
        "    checkpoint = tf.train.Checkpoint(\n"
        "        optimizer=optimizer, hidden_layer=hidden_layer, logits_layer=logits_layer)\n"
        '    manager = tf.train.CheckpointManager(checkpoint, os.path.join(logdir, "tf2"), max_to_keep=5)\n'
        "    # Carry on from the latest checkpoint: this program's own, or else the TF1 program's.\n"
        "    tf1_checkpoint = tf.train.latest_checkpoint(logdir)\n"
        "    if manager.latest_checkpoint:\n"
        "      checkpoint.restore(manager.latest_checkpoint)\n",
        '            "dense/kernel": hidden_layer.kernel,\n            "dense/bias": hidden_layer.bias,\n'
        '            "dense_1/kernel": logits_layer.kernel,\n            "dense_1/bias": logits_layer.bias,\n'
        "        }, optimizer)\n",
        "    per_worker_iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))\n",
        "    def train_step(iterator):\n",
        "      def step(x, y):\n        with tf.GradientTape() as tape:\n          hidden = hidden_layer(x)\n"
        "          logits = logits_layer(hidden)\n",
        "        variables = [*hidden_layer.trainable_variables, *logits_layer.trainable_variables]\n",
        "      return strategy.run(step, args=next(iterator))\n",
        "    local_step = 0\n    scheduled_steps = int(optimizer.iterations)\n"
        "    while local_step < FLAGS.train_steps:\n"
        "      loss_value = coordinator.schedule(train_step, args=(per_worker_iterator,))\n"
        "      scheduled_steps += 1\n      step = scheduled_steps\n",
        "      local_step += 1\n    coordinator.join()\n    manager.save()\n    if not FLAGS.logdir:\n"
        "      shutil.rmtree(logdir)\n",
        "  tf.compat.v1.app.run()\n",
    ):
        assert line in code, line
    for gone in ("Supervisor(", "sv.", "init_op", "global_step = ", "global_step=global_step", "disable_v2_behavior",
                 "replica_device_setter(", "compat.v1 as tf", "make_one_shot_iterator", "get_next", "tf.layers.",
                 "tf.compat.v1.data"):
        assert gone not in code, gone
    rules = sorted(f.rule for f in result.findings)
    assert rules == ["TFM101", "TFM101", "TFM102", "TFM103", "TFM106", "TFM108"], rules


def test_prepare_or_wait_for_session_and_its_loop_after_it():
    source = SUPERVISOR.replace("""    with sv.managed_session(server.target) as sess:
      local_step = 0
      while not sv.should_stop() and local_step < FLAGS.train_steps:
        _, step, loss_value = sess.run([train_op, global_step, loss])
        if local_step % FLAGS.log_every == 0:
          print("step %d loss %s" % (step, loss_value))
        local_step += 1
    sv.stop()
""", """    sess = sv.prepare_or_wait_for_session(server.target)
    step = 0
    while step < FLAGS.train_steps and not sv.should_stop():
      _, step, loss_value = sess.run([train_op, global_step, loss])
      print("step %d loss %s" % (step, loss_value))
    sv.stop()
""")
    assert source != SUPERVISOR
    result = migrated(source)
    code = result.source
    assert ("    step = 0\n    scheduled_steps = int(optimizer.iterations)\n"
            "    while step < FLAGS.train_steps:\n") in code
    assert "    coordinator.join()\n    manager.save()\n" in code
    assert "sv." not in code and "sess" not in code
    (note,) = [f for f in result.findings if f.rule == "TFM106"]
    assert "trains as many steps as it says, where TF1 usually trained one more" in note.message


def test_no_logdir_no_checkpoints():
    code = migrated(SUPERVISOR.replace("logdir=logdir,\n", "\n")).source
    assert "CheckpointManager" not in code and "manager.save()" not in code and "import os" not in code


def test_graph_summaries_are_dropped_with_a_finding():
    source = SUPERVISOR.replace("      train_op =", '      tf.summary.scalar("loss", loss)\n      train_op =')
    result = migrated(source)
    assert "summary" not in result.source
    (note,) = [f for f in result.findings if f.rule == "TFM109"]
    assert "tf.summary.scalar" in source.splitlines()[note.line - 1]


@pytest.mark.parametrize("before, after, where, why", [
    ("        local_step += 1\n", "        local_step += 1\n        sv.summary_computed(sess, loss_value)\n",
     "sv.summary_computed",
     "besides the one run"),
    ("save_model_secs=600)", "save_model_secs=600, init_fn=restore)", "init_fn", "Supervisor(init_fn=...)"),
    ("is_chief=is_chief, logdir=logdir,", "logdir=logdir,", "sv = tf.train.Supervisor", "without is_chief"),
    ("      init_op = tf.global_variables_initializer()\n",
     "      init_op = tf.global_variables_initializer()\n      saver = tf.train.Saver()\n",
     "saver = tf.train.Saver()", "serves a TF1 session"),
    ("\ndef main(", "\ndef train_step(batch):\n  return batch\n\n\ndef main(", "def train_step",
     "defines `train_step`, which this module already binds"),
    ("      global_step = tf.train.get_or_create_global_step()\n",
     "      global_step = tf.train.get_or_create_global_step()\n"
     "      penalty = tf.contrib.keras.regularizers.l2(0.1)(logits)\n",
     "penalty = tf.contrib.keras.regularizers", "use its keras.regularizers / keras.initializers counterpart"),
], ids=["supervisor used in the loop", "init_fn", "no is_chief", "saver used otherwise",
        "a train_step of the program's own", "a contrib regularizer"])
def test_supervisor_programs_not_migrated_safely_are_left_with_the_reason(before, after, where, why):
    source = SUPERVISOR.replace(before, after)
    assert source != SUPERVISOR
    line, message = manual(source)
    assert where in line and why in message, (line, message)


MODULE_LEVEL = '''import tensorflow.compat.v1 as tf
import numpy as np

tf.app.flags.DEFINE_string("job_name", "", "ps or worker")
tf.app.flags.DEFINE_integer("task_index", 0, "task")
FLAGS = tf.app.flags.FLAGS

cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"], "worker": ["localhost:2223", "localhost:2224"]})
server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)

if FLAGS.job_name == "ps":
    server.join()
elif FLAGS.job_name == "worker":
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                                  cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 2])
        w = tf.Variable(tf.zeros([2, 1]), name="w")
        global_step = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
    hooks = [tf.train.StopAtStepHook(last_step=100)]
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(FLAGS.task_index == 0),
                                           hooks=hooks) as mon_sess:
        while not mon_sess.should_stop():
            mon_sess.run(train_op, feed_dict={x: np.ones([4, 2])})
'''


def test_a_program_at_module_level_with_roles_in_if_elif_branches():
    code = migrated(MODULE_LEVEL).source
    for line in ("import tensorflow as tf\n", "elif FLAGS.job_name == \"worker\":\n    if not (FLAGS.task_index == 0):\n",
                 '        w = tf.Variable(tf.zeros([2, 1]), name="w")\n',
                 "    scheduled_steps = int(optimizer.iterations)\n    while scheduled_steps < 100:\n"
                 "        coordinator.schedule(train_step, args=(np.ones([4, 2]),))\n        scheduled_steps += 1\n"
                 "    coordinator.join()\n",
                 "FLAGS = tf.compat.v1.app.flags.FLAGS\n"):
        assert line in code, line
    assert "hooks" not in code and "mon_sess" not in code


def test_a_training_function_given_the_server_reads_its_cluster_from_it():
    """A launcher starts the server and calls the training function with it (one process per task)."""
    source = MODULE_LEVEL.replace('''if FLAGS.job_name == "ps":
    server.join()
elif FLAGS.job_name == "worker":
''', '''def train(server, cluster):
''') + '''

if FLAGS.job_name == "ps":
    server.join()
else:
    train(server, cluster)
'''
    code = migrated(source).source
    assert "jobs = tf.train.ClusterSpec(server.server_def.cluster).as_dict()" in code
    assert "rpc_layer=server.server_def.protocol" in code


def test_the_other_name_of_tensorflow_a_rename_imported_is_folded_into_tf():
    """TFM101 renames Servers first, under `tf2` where `tf` was TF1's; once the module is TF2 there is one `tf`."""
    code = migrated(PS_CLUSTER.replace("tf1", "tf").replace("tf.disable_eager_execution()\n", "")).source
    assert "tf2." not in code and "as tf2" not in code and "server = tf.distribute.Server(" in code


def test_a_dataset_used_besides_the_graphs_iterator_is_left_with_the_reason():
    source = SUPERVISOR.replace("    sv.stop()\n", "    sv.stop()\n    print(dataset)\n")
    assert source != SUPERVISOR
    line, message = manual(source)
    assert "print(dataset)" in line and "used elsewhere" in message


FOR_LOOP = MODULE_LEVEL.replace("""    hooks = [tf.train.StopAtStepHook(last_step=100)]
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(FLAGS.task_index == 0),
                                           hooks=hooks) as mon_sess:
        while not mon_sess.should_stop():
            mon_sess.run(train_op, feed_dict={x: np.ones([4, 2])})
""", """    sv = tf.train.Supervisor(is_chief=(FLAGS.task_index == 0))
    with sv.managed_session(server.target) as sess:
        for epoch in range(tf.app.flags.FLAGS.epochs):
            _, step = sess.run([train_op, global_step], feed_dict={x: np.ones([4, 2])})
            print(epoch, step)
""")


def test_a_for_loop_under_a_supervisor_runs_its_course():
    assert FOR_LOOP != MODULE_LEVEL
    code = migrated(FOR_LOOP).source
    assert ("    scheduled_steps = int(optimizer.iterations)\n"
            "    for epoch in range(tf.compat.v1.app.flags.FLAGS.epochs):\n"
            "        coordinator.schedule(train_step, args=(np.ones([4, 2]),))\n        scheduled_steps += 1\n"
            "        step = scheduled_steps\n        print(epoch, step)\n    coordinator.join()\n") in code


def test_a_for_loop_under_a_stop_at_step_hook_is_left_with_the_reason():
    source = MODULE_LEVEL.replace("        while not mon_sess.should_stop():\n", "        for _ in range(200):\n")
    assert source != MODULE_LEVEL
    line, message = manual(source)
    assert "for _ in range(200):" in line and "StopAtStepHook" in message


@pytest.mark.parametrize("counter", [
    "tf.Variable(0, name=\"global_step\", trainable=False)",
    "tf.Variable(0)",
    "tf.get_variable('global_step', [], initializer=tf.constant_initializer(0), trainable=False)",
    "tf.get_variable(\"global_step\", (), dtype=tf.int64, initializer=tf.zeros_initializer(), trainable=False)",
    "tf.contrib.framework.get_or_create_global_step()",
])
def test_a_step_counter_as_people_made_it_is_the_optimizers_iterations(counter):
    source = MODULE_LEVEL.replace("tf.train.get_or_create_global_step()", counter)
    assert source != MODULE_LEVEL
    code = migrated(source).source
    assert "global_step" not in code and "scheduled_steps = int(optimizer.iterations)\n" in code


@pytest.mark.parametrize("counter, why", [
    ("tf.Variable(0, trainable=True, dtype=tf.float32)", "minimize() must advance the global step"),
    ("tf.Variable(1, trainable=False)", "minimize() must advance the global step"),
    ("tf.get_variable('global_step', [], initializer=tf.constant_initializer(0))",  # float32, trainable
     "minimize() must advance the global step"),
    ("tf.get_variable('global_step', [1], initializer=tf.zeros_initializer(), trainable=False)",
     "get_variable is migrated with a name"),
])
def test_a_variable_that_is_not_a_step_counter_is_not_taken_for_one(counter, why):
    _, message = manual(MODULE_LEVEL.replace("tf.train.get_or_create_global_step()", counter))
    assert why in message, message


def test_name_scopes_seeds_prints_and_strings_in_the_graph():
    source = MODULE_LEVEL.replace('''        w = tf.Variable(tf.zeros([2, 1]), name="w")
''', '''        tf.set_random_seed(1)
        with tf.name_scope("weights"):
            w = tf.Variable(tf.zeros([2, 1]), name="w")
        print("variables made")
        """
        v = tf.Variable(tf.zeros([2, 1]), name="v")
        """
''')
    code = migrated(source).source
    assert ('        tf.random.set_seed(1)\n        w = tf.Variable(tf.zeros([2, 1]), name="w")\n'
            '        print("variables made")\n') in code, code
    assert "name_scope" not in code and '"v"' not in code


# The device setter and the server's target made by a function of another module (one of this module's is followed:
# test_between_graph_device_functions.py), the graph placed with what it returns.
DEVICE_FROM_A_FUNCTION = '''import tensorflow.compat.v1 as tf
from cluster_setup import setter_and_master

tf.app.flags.DEFINE_integer("task_index", 0, "task")
FLAGS = tf.app.flags.FLAGS


def main(_):
    placement, master = setter_and_master()
    with tf.device(placement):
        w = tf.Variable(tf.zeros([2, 1]), name="w")
        global_step = tf.train.get_or_create_global_step()
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.ones([4, 2]), w) - 1.0))
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
    hooks = [tf.train.StopAtStepHook(last_step=10)]
    with tf.train.MonitoredTrainingSession(master=master, is_chief=FLAGS.task_index == 0, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
'''


def test_a_device_setter_a_function_returns_is_named_as_what_stopped_the_program():
    line, message = manual(DEVICE_FROM_A_FUNCTION)
    assert line == "    with tf.device(placement):", line
    assert "`placement` comes from `setter_and_master()`" in message and "not followed" in message, message
