"""TFM103 on SyncReplicasOptimizer programs: synchronous between-graph training becomes a
MultiWorkerMirroredStrategy program every worker runs; other configurations stay manual with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run

EXAMPLE = (Path(__file__).resolve().parent.parent / "examples" / "sync_replicas" / "train.py").read_text()

# The same program at module level under tf.app.run-era flags, the optimizer and hook named, `tf` TF2's.
MODULE_LEVEL = '''\
import tensorflow as tf

flags = tf.compat.v1.app.flags
flags.DEFINE_string("job_name", "", "ps or worker")
flags.DEFINE_integer("task_index", 0, "index of the task")
FLAGS = flags.FLAGS

cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"], "worker": ["localhost:2223", "localhost:2224"]})
server = tf.compat.v1.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
if FLAGS.job_name == "ps":
    server.join()
elif FLAGS.job_name == "worker":
    is_chief = FLAGS.task_index == 0
    with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(cluster=cluster)):
        x = tf.compat.v1.placeholder(tf.float32, [None, 2])
        y = tf.compat.v1.placeholder(tf.float32, [None, 1])
        weights = tf.compat.v1.get_variable("weights", [2, 1])
        global_step = tf.compat.v1.train.get_or_create_global_step()
        loss = tf.compat.v1.losses.mean_squared_error(y, tf.matmul(x, weights))
        opt = tf.compat.v1.train.AdamOptimizer(0.01)
        opt = tf.compat.v1.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=2, total_num_replicas=2)
        train_op = opt.minimize(loss, global_step=global_step)
    sync_replicas_hook = opt.make_session_run_hook(is_chief)
    hooks = [sync_replicas_hook, tf.compat.v1.train.StopAtStepHook(last_step=100)]
    with tf.compat.v1.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict={x: [[1.0, 2.0]], y: [[1.0]]})
'''


def migrated(source: str):
    result = run(source)
    assert run(result.source).source == result.source, "a second run changes nothing"
    assert "TFM103" in {f.rule for f in result.findings}, result.findings
    compile(result.source, "migrated.py", "exec")
    return result


def manual(source: str) -> tuple[str, str]:
    """(the line of the TFM104 finding, its message) of a program left as it is."""
    result = run(source)
    assert "MultiWorkerMirroredStrategy" not in result.source and "replica_device_setter" in result.source
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    return source.splitlines()[finding.line - 1], finding.message


def test_the_example_becomes_a_multi_worker_mirrored_program_every_worker_runs():
    code = migrated(EXAMPLE).source
    for line in (
        "import tensorflow as tf\nimport tf_keras as keras\n",
        '  if flags.job_name == "ps":\n    # Synchronous training keeps no variables on parameter servers: a ps task '
        "has nothing to serve.\n    return\n",
        '  jobs = tf.train.ClusterSpec(cluster).as_dict()\n  jobs.pop("ps", None)\n',
        "      task_type=flags.job_name,\n      task_id=flags.task_index,\n",
        "  strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)\n",
        "    optimizer = keras.optimizers.legacy.SGD(learning_rate=0.05, momentum=0.9)\n",
        "        scaled_loss = loss / strategy.num_replicas_in_sync\n",
        "      optimizer.apply_gradients(zip(tape.gradient(scaled_loss, variables), variables))\n",
        "  trained_steps = int(optimizer.iterations.numpy())\n  while trained_steps < TRAIN_STEPS:\n",
        "    loss_value = train_step(batch_x, batch_y)\n    trained_steps += 1\n    step = trained_steps\n",
        '    print("step %d loss %s" % (step, loss_value.numpy()))\n',
    ):
        assert line in code, line
    # MultiWorkerMirroredStrategy starts the worker's server; no ps is started, no chief singled out.
    for gone in ("Server(", "server =", "server.", "is_chief", "coordinator", "ParameterServerStrategy",
                 "if local:\n    #"):
        assert gone not in code, gone


def test_the_findings_say_what_the_update_is_and_that_tf1_read_the_step_racing():
    findings = {f.rule: f.message for f in migrated(EXAMPLE).findings if f.rule in ("TFM103", "TFM106")}
    assert "MultiWorkerMirroredStrategy" in findings["TFM103"] and "ps tasks end" in findings["TFM103"]
    sync = [f for f in migrated(EXAMPLE).findings if "SyncReplicasOptimizer ->" in f.message]
    assert len(sync) == 1 and "num_workers" in sync[0].message
    assert "num_tokens" not in sync[0].message  # the example starts without tokens: no stale first steps


def test_module_level_program_with_a_named_optimizer_and_hook():
    code = migrated(MODULE_LEVEL).source
    assert ('if FLAGS.job_name == "ps":\n    # Synchronous training keeps no variables on parameter servers: a ps '
            "task has nothing to serve.\n    pass\nelif FLAGS.job_name == \"worker\":\n") in code
    assert "        opt = TF1Adam(learning_rate=0.01, epsilon=1e-08)\n" in code
    assert "        task_type=FLAGS.job_name,\n        task_id=FLAGS.task_index,\n" in code
    assert "            opt.apply_gradients(zip(tape.gradient(scaled_loss, variables), variables))\n" in code
    assert ("    trained_steps = int(opt.iterations.numpy())\n    while trained_steps < 100:\n"
            "        train_step([[1.0, 2.0]], [[1.0]])\n        trained_steps += 1\n") in code
    for gone in ("sync_replicas_hook", "hooks", "is_chief", "server =", "server."):
        assert gone not in code, gone


def test_tf1s_initial_tokens_are_told():
    (message,) = [f.message for f in migrated(MODULE_LEVEL).findings if "SyncReplicasOptimizer ->" in f.message]
    assert "num_tokens=-1" in message and "stale" not in message and "one update old" in message


@pytest.mark.parametrize("before, after, where, reason", [
    ("replicas_to_aggregate=num_workers, total_num_replicas=num_workers)",
     "replicas_to_aggregate=num_workers - 1, total_num_replicas=num_workers)",
     "tf.train.SyncReplicasOptimizer(", "backup workers"),
    ("replicas_to_aggregate=num_workers, total_num_replicas=num_workers)",
     "replicas_to_aggregate=num_workers, total_num_replicas=num_workers, variable_averages=ema)",
     "variable_averages=ema", "moving averages"),
    ("  hooks = [optimizer.make_session_run_hook(is_chief, num_tokens=0),\n",
     "  hooks = [\n", "tf.train.SyncReplicasOptimizer(", "make_session_run_hook"),
    ("      i += 1\n", "      i += 1\n      print(server.target)\n", "print(server.target)",
     "starts the worker's server"),
    ("  server = tf.train.Server(\n      cluster, job_name=flags.job_name, task_index=flags.task_index)\n",
     "  server = tf.train.Server(cluster)\n", "server = tf.train.Server(cluster)", "job_name and task_index"),
], ids=["backup workers", "variable averages", "no hook", "server used otherwise", "server of no task"])
def test_other_configurations_stay_whole_with_what_would_change(before, after, where, reason):
    assert before in EXAMPLE
    line, message = manual(EXAMPLE.replace(before, after))
    assert where in line and reason in message, (line, message)


def test_a_server_given_to_the_training_function_is_left():
    source = MODULE_LEVEL.replace("elif FLAGS.job_name == \"worker\":\n", "\ndef train(server):\n")
    source = source.replace("server.join()\n", "server.join()\nelse:\n    train(server)\n", 1)
    _, message = manual(source)
    assert "MultiWorkerMirroredStrategy starts its own" in message


def test_only_the_first_worker_saves_into_the_programs_checkpoint_folder():
    source = MODULE_LEVEL.replace("is_chief=is_chief, hooks=hooks)", 'is_chief=is_chief, hooks=hooks,\n'
                                  '            checkpoint_dir="/tmp/train")')
    assert source != MODULE_LEVEL
    code = run(source).source
    assert ('os.path.join("/tmp/train", "tf2") if resolver.task_id == 0 else tempfile.mkdtemp()' in code
            and 'checkpoint.restore(tf.train.latest_checkpoint(os.path.join("/tmp/train", "tf2")))' in code), code
    assert "import tempfile\n" in code and code.count("manager.save()") == 1
