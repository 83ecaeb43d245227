"""TFM103 on SyncReplicasOptimizer programs: synchronous between-graph training becomes a
MultiWorkerMirroredStrategy program every worker runs; other configurations stay manual with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run, tfm104 as manual

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


# tests/parity_programs/mnist_replica_tf1.py with mnist_replica.py's --sync_replicas: `if FLAGS.sync_replicas:` wraps
# the optimizer (replicas_to_aggregate from a flag, else the number of workers), then makes its TF1 machinery for a
# Supervisor chosen by the flag and the chief's start. Run without --ps_hosts / --worker_hosts: 1 ps + 1 worker.
SYNC_FLAG_EDITS = {
    'flags.DEFINE_integer("batch_size", 16, "rows a step")\n': '''\
flags.DEFINE_integer("batch_size", 16, "rows a step")
flags.DEFINE_boolean("sync_replicas", False, "aggregate the workers' gradients before applying them")
flags.DEFINE_integer("replicas_to_aggregate", None, "replicas to aggregate each step (default: num_workers)")
''',
    '  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","),\n': '''\
  worker_spec = FLAGS.worker_hosts.split(",")
  num_workers = len(worker_spec)
  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","),
''',
    '"worker": FLAGS.worker_hosts.split(",")})': '"worker": worker_spec})',
    "    train_op = opt.minimize(cross_entropy, global_step=global_step)\n": '''\
    if FLAGS.sync_replicas:
      if FLAGS.replicas_to_aggregate is None:
        replicas_to_aggregate = num_workers
      else:
        replicas_to_aggregate = FLAGS.replicas_to_aggregate
      opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=replicas_to_aggregate,
                                           total_num_replicas=num_workers, name="mnist_sync_replicas")
    train_op = opt.minimize(cross_entropy, global_step=global_step)

    if FLAGS.sync_replicas:
      local_init_op = opt.local_step_init_op
      if is_chief:
        local_init_op = opt.chief_init_op
      ready_for_local_init_op = opt.ready_for_local_init_op
      # Initial token and chief queue runners required by the sync_replicas mode
      chief_queue_runner = opt.get_chief_queue_runner()
      sync_init_op = opt.get_init_tokens_op()
''',
    "  sv = tf.train.Supervisor(is_chief=is_chief, init_op=init_op, recovery_wait_secs=1,\n"
    "                           global_step=global_step)\n": '''\
  if FLAGS.sync_replicas:
    sv = tf.train.Supervisor(is_chief=is_chief, init_op=init_op, local_init_op=local_init_op,
                             ready_for_local_init_op=ready_for_local_init_op, recovery_wait_secs=1,
                             global_step=global_step)
  else:
    sv = tf.train.Supervisor(is_chief=is_chief, init_op=init_op, recovery_wait_secs=1,
                             global_step=global_step)
''',
    '  print("Worker %d: Session initialization complete." % FLAGS.task_index)\n': '''\
  print("Worker %d: Session initialization complete." % FLAGS.task_index)
  if FLAGS.sync_replicas and is_chief:
    # Chief worker will start the chief queue runner and call the init op.
    sess.run(sync_init_op)
    sv.start_queue_runners(sess, [chief_queue_runner])
''',
}


def edited(source: str, edits: dict[str, str]) -> str:
    for before, after in edits.items():
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    return source


SYNC_FLAG = edited((Path(__file__).resolve().parent / "parity_programs" / "mnist_replica_tf1.py").read_text(),
                   SYNC_FLAG_EDITS)


def test_a_sync_replicas_flag_chooses_the_strategy_at_run_time():
    result = migrated(SYNC_FLAG)
    code = result.source
    for line in (
        "  if not FLAGS.sync_replicas:\n    server = tf.distribute.Server(cluster, job_name=FLAGS.job_name, "
        'task_index=FLAGS.task_index)\n  if FLAGS.job_name == "ps":\n    if not FLAGS.sync_replicas:\n'
        "      server.join()\n    # Synchronous training keeps no variables on parameter servers: a ps task has "
        "nothing to serve.\n    return\n",
        "  if FLAGS.sync_replicas:\n    if FLAGS.replicas_to_aggregate is None:\n      replicas_to_aggregate = "
        "num_workers\n    else:\n      replicas_to_aggregate = FLAGS.replicas_to_aggregate\n"
        "    if replicas_to_aggregate != num_workers:\n      raise ValueError(\n",
        "    strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)\n",
        "  else:\n    if not is_chief:\n      # TF1's chief drives the cluster's training now; the other workers serve "
        "it.\n      server.join()\n",
        "    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)\n",
        "  if FLAGS.sync_replicas:\n    trained_steps = int(opt.iterations.numpy())\n    while True:\n",
        "      train_step(batch_xs, batch_ys)\n      trained_steps += 1\n",
        "  else:\n    scheduled_steps = int(opt.iterations)\n    while True:\n",
        "      coordinator.schedule(train_step, args=(batch_xs, batch_ys))\n",
        "        break\n    coordinator.join()\n",
    ):
        assert line in code, line
    program = code[code.index("def main"):]
    for gone in ("SyncReplicasOptimizer(", "Supervisor", "local_init_op", "chief_queue_runner", "sync_init_op",
                 "sess.", "sess =", "start_queue_runners"):
        assert gone not in program, gone
    messages = {f.rule: f.message for f in result.findings if f.rule in ("TFM103", "TFM106") and "Sync" in f.message}
    assert "chosen by `FLAGS.sync_replicas` at run time" in messages["TFM103"]
    assert "refuses to start unless replicas_to_aggregate is num_workers" in messages["TFM106"]


def test_a_statement_the_flag_guards_keeps_its_comment_once():
    comment = "  # The server of this task.\n"
    server = "  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)\n"
    assert server in SYNC_FLAG
    code = migrated(SYNC_FLAG.replace(server, comment + server)).source
    assert code.count("# The server of this task.") == 1
    assert comment + "  if not FLAGS.sync_replicas:\n    server = tf.distribute.Server(" in code


@pytest.mark.parametrize("before, after, where, reason", [
    ("  time_begin = time.time()\n", "  print(chief_queue_runner)\n  time_begin = time.time()\n",
     "print(chief_queue_runner)", "TF1 session machinery, is used besides"),
    ("  if FLAGS.sync_replicas:\n    sv = ", "  if is_chief:\n    sv = ", "if is_chief:\n", "other than the flag"),
], ids=["machinery used otherwise", "supervisor of another test"])
def test_a_flag_program_in_other_shapes_is_left_with_the_reason(before, after, where, reason):
    assert before in SYNC_FLAG
    line, message = manual(SYNC_FLAG.replace(before, after))
    assert where.strip() in line and reason in message, (line, message)


# The first mnist_replica.py programs (TF 0.11): SyncReplicasOptimizer given replica_id, its chief's machinery made
# under `if FLAGS.sync_replicas and is_chief:`, one Supervisor for both modes.
SUMMING_EDITS = {
    'total_num_replicas=num_workers, name="mnist_sync_replicas")':
        'total_num_replicas=num_workers, replica_id=FLAGS.task_index,\n'
        '                                           name="mnist_sync_replicas")',
    SYNC_FLAG[SYNC_FLAG.index("    if FLAGS.sync_replicas:\n      local_init_op"):
              SYNC_FLAG.index("    init_op = ")]: '''\
    if FLAGS.sync_replicas and is_chief:
      chief_queue_runner = opt.get_chief_queue_runner()
      sync_init_op = opt.get_init_tokens_op()
''',
    SYNC_FLAG[SYNC_FLAG.index("  if FLAGS.sync_replicas:\n    sv = "):SYNC_FLAG.index("  sess_config")]: '''\
  sv = tf.train.Supervisor(is_chief=is_chief, init_op=init_op, recovery_wait_secs=1, global_step=global_step)
''',
}
SUMMING = edited(SYNC_FLAG, SUMMING_EDITS)


def test_tf_0_11s_sync_replicas_optimizer_sums_the_workers_gradients():
    result = migrated(SUMMING)
    code = result.source
    assert "TFM104" not in {f.rule for f in result.findings}
    start = code.index("  if FLAGS.sync_replicas:\n    if FLAGS.replicas_to_aggregate")
    synchronous = code[start:code.index("\n  else:\n", code.index("MultiWorkerMirroredStrategy(", start))]
    assert "scaled_loss = cross_entropy\n" in synchronous and "num_replicas_in_sync" not in synchronous, synchronous
    assert "MultiWorkerMirroredStrategy sums" in synchronous
    program = code[code.index("def main"):]
    for gone in ("SyncReplicasOptimizer(", "Supervisor", "chief_queue_runner", "sync_init_op", "start_queue_runners"):
        assert gone not in program, gone
    messages = {f.rule: f.message for f in result.findings if f.rule in ("TFM103", "TFM106") and "Sync" in f.message}
    assert "the gradients summed over the workers" in messages["TFM103"]
    assert "each step sums the gradients" in messages["TFM106"] and "replica_id" in messages["TFM106"]


def test_the_chiefs_machinery_under_the_flag_and_is_chief_goes_with_tf_1s_averaging():
    source = SUMMING.replace(" replica_id=FLAGS.task_index,", "")
    assert source != SUMMING
    result = migrated(source)
    assert "TFM104" not in {f.rule for f in result.findings}
    program = result.source[result.source.index("def main"):]
    assert "scaled_loss = cross_entropy / strategy.num_replicas_in_sync\n" in program
    assert "chief_queue_runner" not in program and "sync_init_op" not in program


# The flag held in a name and compared `== 1` (an integer flag: 1 synchronous, 0 asynchronous), the name bound
# before or after the program's Server.
SERVER = "  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)\n"
INTEGER_FLAG = SYNC_FLAG.replace('flags.DEFINE_boolean("sync_replicas", False,', 'flags.DEFINE_integer("sync", 0,') \
    .replace("FLAGS.sync_replicas", "sync == 1")


def test_a_flag_held_in_a_name_compared_to_one_chooses_the_strategy_at_run_time():
    code = migrated(INTEGER_FLAG.replace(SERVER, "  sync = FLAGS.sync\n" + SERVER)).source
    for line in ("  sync = FLAGS.sync\n  if not sync == 1:\n    server = tf.distribute.Server(",
                 "    if not sync == 1:\n      server.join()\n",
                 "  if sync == 1:\n    if FLAGS.replicas_to_aggregate is None:\n",
                 "  if sync == 1:\n    trained_steps = int(opt.iterations.numpy())\n"):
        assert line in code, line
    assert "SyncReplicasOptimizer(" not in code and "sync_init_op" not in code


def test_a_flag_name_bound_after_the_server_it_chooses_is_left():
    line, message = manual(INTEGER_FLAG.replace(SERVER, SERVER + "  sync = FLAGS.sync\n"))
    assert line.strip() == "sync = FLAGS.sync" and "bound after the Server" in message, (line, message)
