"""TFM103 on the sessions and loops of TensorFlow's mnist_replica.py family, as written: a Supervisor's
prepare_or_wait_for_session outside a `with`, `while True:` ending on the step its run fetched, a feed dict held
in a name, and a validation `sess.run(tensor, feed_dict=...)` after the loop, computed on the chief."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_between_graph_shapes import manual, migrated
from ports import free_port

MNIST_REPLICA = (Path(__file__).resolve().parent / "parity_programs" / "mnist_replica_tf1.py").read_text()


def replaced(before: str, after: str) -> str:
    source = MNIST_REPLICA.replace(before, after)
    assert source != MNIST_REPLICA, before
    return source


def test_while_true_ending_on_the_fetched_step_and_a_held_feed_become_scheduled_steps():
    result = migrated(MNIST_REPLICA)
    code = result.source
    assert ("  local_step = 0\n  scheduled_steps = int(opt.iterations)\n  while True:\n"
            "    start = local_step * FLAGS.batch_size % len(train_images)\n"
            "    batch_xs = train_images[start:start + FLAGS.batch_size]\n"
            "    batch_ys = train_labels[start:start + FLAGS.batch_size]\n\n"
            "    coordinator.schedule(train_step, args=(batch_xs, batch_ys))\n"
            "    scheduled_steps += 1\n    step = scheduled_steps\n    local_step += 1\n") in code
    assert ("    if step >= FLAGS.train_steps:\n      break\n  coordinator.join()\n\n"
            '  print("Training elapsed time: %f s" % (time.time() - time_begin))\n') in code
    program = code[code.index("import socket"):]  # after the module's docstring
    for gone in ("train_feed", "val_feed", "sess.", "sess =", "sv.", "Supervisor", "ConfigProto", "global_step"):
        assert gone not in program, gone
    (note,) = [f for f in result.findings if f.rule == "TFM106"]
    assert "stopping at `step >= FLAGS.train_steps`, trains as many steps as it says" in note.message


def test_a_validation_run_after_the_loop_is_the_graphs_tensor_computed_on_the_chief():
    code = migrated(MNIST_REPLICA).source
    assert ("  # What is fed is converted to the placeholders' dtypes, as TF1 converted it.\n"
            "  @tf.function(input_signature=[\n      tf.TensorSpec([None, PIXELS], tf.float32),\n"
            "      tf.TensorSpec([None, 2], tf.float32),\n  ])\n  def evaluate_graph(x, y_):\n"
            '    """`cross_entropy` for these inputs, with the trained variables (on the chief)."""\n'
            "    hid = tf.nn.relu(tf.compat.v1.nn.xw_plus_b(x, hid_w, hid_b))\n"
            "    y = tf.compat.v1.nn.softmax(tf.compat.v1.nn.xw_plus_b(hid, sm_w, sm_b))\n"
            "    cross_entropy = -tf.compat.v1.reduce_sum(y_ * tf.math.log(tf.clip_by_value(y, 1e-10, 1.0)))\n"
            "    return cross_entropy\n") in code
    assert ("  coordinator.join()\n\n"
            '  print("Training elapsed time: %f s" % (time.time() - time_begin))\n\n'
            "  val_xent = evaluate_graph(validation_images, validation_labels).numpy()\n") in code
    # The TF1Adam helper class needs Keras, imported with it.
    assert "class TF1Adam(keras.optimizers.legacy.Adam):" in code and "import tf_keras as keras\n" in code


def test_a_feed_dict_written_in_the_run_and_a_with_session_evaluate_the_same():
    source = replaced("""  sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)
  print("Worker %d: Session initialization complete." % FLAGS.task_index)

  time_begin""", """  with sv.managed_session(server.target, config=sess_config) as sess:
   print("Worker %d: Session initialization complete." % FLAGS.task_index)

   time_begin""")
    body = source[source.index("   time_begin"):source.index("\n\nif __name__")]
    source = source.replace(body, body.replace("\n  ", "\n   ")).replace(
        "sess.run(cross_entropy, feed_dict=val_feed)", "sess.run(cross_entropy, {x: validation_images, "
                                                       "y_: validation_labels})").replace(
        "   val_feed = {x: validation_images, y_: validation_labels}\n", "")
    code = migrated(source).source
    # The session's body gives way to the migrated loop, where the `with` stood.
    assert ("  coordinator.join()\n\n"
            '  print("Training elapsed time: %f s" % (time.time() - time_begin))\n\n'
            "  val_xent = evaluate_graph(validation_images, validation_labels).numpy()\n") in code
    assert "sess." not in code and "val_feed" not in code


LOOP = """    if step >= FLAGS.train_steps:
      break
"""


@pytest.mark.parametrize("before, after, where, why", [
    (LOOP, "", "while True:", "`while True:` must say when it ends in its own body"),
    ("    local_step += 1\n", "    local_step += 1\n    print(train_feed)\n", "_, step = sess.run(",
     "feed_dict `train_feed` is used besides its run"),
    ("    train_feed = {x: batch_xs, y_: batch_ys}\n\n", "    train_feed = {x: batch_xs, y_: batch_ys}\n    n = 1\n",
     "_, step = sess.run(", "must be a dict assigned to it right before the run"),
    ("val_xent = sess.run(cross_entropy, feed_dict=val_feed)", "val_xent = sess.run([cross_entropy], val_feed)",
     "val_xent = sess.run(", "after the loop, `value = sess.run(tensor, feed_dict=...)` is migrated"),
    ("val_xent = sess.run(cross_entropy, feed_dict=val_feed)", "val_xent = sess.run(train_op, feed_dict=val_feed)",
     "val_xent = sess.run(", "a tensor the graph computes is evaluated"),
    ("  print(\"After", "  val_y = sess.run(y, feed_dict={x: validation_images, y_: validation_labels})\n"
     "  print(\"After", "val_y = sess.run(y,", "evaluating different tensors: one is migrated"),
    ("val_feed = {x: validation_images, y_: validation_labels}", "val_feed = {x: validation_images}",
     "val_feed = {x: validation_images}", "feed_dict must feed every placeholder"),
], ids=["no break", "feed read elsewhere", "feed not right before", "fetches a list", "evaluates the train_op",
        "two tensors evaluated", "a placeholder not fed"])
def test_sessions_and_loops_not_migrated_safely_are_left_with_the_reason(before, after, where, why):
    line, message = manual(replaced(before, after))
    assert where in line and why in message, (line, message)


def test_while_true_under_a_stop_at_step_hook_is_left_with_the_reason():
    source = replaced("""  sv = tf.train.Supervisor(is_chief=is_chief, init_op=init_op, recovery_wait_secs=1,
                           global_step=global_step)
""", "").replace("    init_op = tf.global_variables_initializer()\n", "").replace(
        "sv.prepare_or_wait_for_session(server.target, config=sess_config)",
        "tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, config=sess_config, "
                 "hooks=[tf.train.StopAtStepHook(last_step=20)])")
    line, message = manual(source)
    assert "while True:" in line and "`while True:` under a StopAtStepHook" in message, (line, message)



def _saved_at_the_end(save: str = "  saver.save(sess, FLAGS.data_dir)\n",
                      saver: str = "tf.train.Saver(max_to_keep=None)", logdir: str = "logdir=FLAGS.data_dir, ") -> str:
    """kubeflow's e2e model.py: a Saver made after the session opens saves once after the loop; the graph
    unfinalized before it (the Supervisor's logdir where the Saver saves)."""
    source = MNIST_REPLICA.replace("is_chief=is_chief, init_op", f"is_chief=is_chief, {logdir}init_op")
    return source.replace(
        "  local_step = 0\n", f"  sess.graph._unsafe_unfinalize()\n  saver = {saver}\n  local_step = 0\n").replace(
        '  print("Training elapsed', f'{save}  print("Training elapsed')


def test_a_saver_saving_into_the_checkpoint_folder_after_the_loop_is_the_managers_save_when_training_ends():
    result = migrated(_saved_at_the_end())
    code = result.source
    assert ("    if step >= FLAGS.train_steps:\n      break\n  coordinator.join()\n  manager.save()\n"
            '  print("Training elapsed time') in code
    assert "saver" not in code and "_unsafe_unfinalize" not in code and "local_step = 0\n" in code
    messages = [f.message for f in result.findings]
    assert any(m.startswith("`saver.save(sess, FLAGS.data_dir)` after the loop: the migrated program's "
                            "CheckpointManager saves when training ends, on the chief") for m in messages), messages
    assert any(m.startswith("`sess.graph._unsafe_unfinalize()` let TF1 add ops") for m in messages), messages



def test_a_saver_made_for_the_supervisor_beside_the_loop_goes_with_it():
    source = _saved_at_the_end(save="", saver="1").replace("  saver = 1\n", "").replace(
        "logdir=FLAGS.data_dir, ", "logdir=FLAGS.data_dir, saver=saver, ").replace(
        "  sv = tf.train.Supervisor(", "  saver = tf.train.Saver(max_to_keep=3)\n  sv = tf.train.Supervisor(")
    code = migrated(source).source
    assert "  manager.save()\n" in code and "saver" not in code

@pytest.mark.parametrize("source, where, why", [
    (_saved_at_the_end(save="  saver.save(sess, '/tmp/elsewhere')\n"), "saver.save(", "into another folder"),
    (_saved_at_the_end(logdir=""), "saver.save(", "into another folder"),
    (_saved_at_the_end(save="  saver.save(sess, FLAGS.data_dir)\n  saver.save(sess, FLAGS.data_dir)\n"),
     "saver = tf.train.Saver", "its one use is `saver.save(sess, folder)` after the loop"),
    (_saved_at_the_end(saver="tf.train.Saver([hid_w])"), "saver = tf.train.Saver", "Saver(var_list=...)"),
], ids=["another folder", "no checkpoint folder", "saved twice", "some variables"])
def test_a_saver_saving_otherwise_is_left_with_the_reason(source, where, why):
    line, message = manual(source)
    assert where in line and why in message, (line, message)

# -- running it ----------------------------------------------------------------------------------------


def _run_program(path: Path, tmp_path: Path) -> str:
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TMPDIR"] = str(tmp_path)
    proc = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.tensorflow
def test_the_migrated_program_trains_and_validates_as_tf1_on_its_in_process_cluster(tmp_path):
    """Both sides start from the same weights and train the same steps (the loop ending on its own count): the
    validation cross entropy the migrated program prints is TF1's, computed with the trained weights."""
    source = MNIST_REPLICA
    for shape in ("PIXELS, HIDDEN", "HIDDEN, 2"):
        source = source.replace(f"tf.truncated_normal([{shape}], stddev=0.5)",
                                f"rng.normal(size=({shape})).astype(np.float32) * 0.5")
    source = source.replace("    if step >= FLAGS.train_steps:\n", "    if local_step >= FLAGS.train_steps:\n")
    assert source.count("rng.normal(size=(") == 3 and "if local_step >=" in source
    old, new = tmp_path / "tf1.py", tmp_path / "tf2.py"
    old.write_text(source)
    new.write_text(migrated(source).source)
    outputs = [_run_program(path, tmp_path) for path in (old, new)]
    steps = [re.findall(r"global step: (\d+)", output) for output in outputs]
    assert steps[1] == [str(step) for step in range(1, 21)] and len(steps[0]) == 20, steps
    old_xent, new_xent = (float(re.search(r"validation cross entropy = (\S+)", output).group(1))
                          for output in outputs)
    assert new_xent == pytest.approx(old_xent, rel=1e-4), (old_xent, new_xent)


@pytest.mark.tensorflow
@pytest.mark.parametrize("program", ["mnist_replica_tf1.py", "mnist_replica_existing_servers_tf1.py"])
def test_the_mnist_replica_shapes_keep_parity_step_by_step(tmp_path, program):
    from test_parity import assert_parity, parity

    source = (Path(__file__).resolve().parent / "parity_programs" / program).read_text()
    old, new = tmp_path / "tf1.py", tmp_path / "tf2.py"
    old.write_text(source)
    new.write_text(migrated(source).source)
    assert_parity(parity(old, new))


OPENING = "  sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)\n"


def test_the_same_session_opened_in_both_branches_of_an_if_is_one_session():
    code = migrated(replaced(OPENING, "  if is_chief:\n  " + OPENING + "  else:\n  " + OPENING)).source
    assert ('    print("Worker %d: Waiting for session to be initialized..." % FLAGS.task_index)\n'
            '  print("Worker %d: Session initialization complete." % FLAGS.task_index)\n') in code
    assert "sess =" not in code and "ConfigProto" not in code and "sess_config" not in code


def test_a_session_on_existing_servers_beside_a_server_made_in_any_case_is_left_with_the_reason():
    """mnist_replica's --existing_servers where this process's Server is made whatever the flag says."""
    source = replaced(OPENING, '''  if FLAGS.existing_servers:
    server_grpc_url = "grpc://" + FLAGS.worker_hosts.split(",")[FLAGS.task_index]
    print("Using existing server at: %s" % server_grpc_url)
    sess = sv.prepare_or_wait_for_session(server_grpc_url, config=sess_config)
  else:
''' + "  " + OPENING)
    line, message = manual(source)
    assert line == "  if FLAGS.existing_servers:", line
    assert message.endswith("the session opens on servers running elsewhere where `FLAGS.existing_servers`: "
                            "migrated where `server`, its target otherwise, is a Server made under `if not "
                            "FLAGS.existing_servers:` before the graph; migrate the `if` by hand"), message
    source = source.replace("  else:\n" + "  " + OPENING, "  else:\n    print(1)\n  " + OPENING)
    line, message = manual(source)
    assert line == "  if FLAGS.existing_servers:" and "migrate the `if` by hand" in message, (line, message)


def test_a_run_after_the_loop_of_a_monitored_training_session_is_left_with_the_reason():
    """TF1 raised at a run once a StopAtStepHook had stopped the session: there is no value to carry over."""
    from test_between_graph_shapes import MODULE_LEVEL

    line, message = manual(MODULE_LEVEL + "        print(mon_sess.run(loss, feed_dict={x: np.ones([4, 2])}))\n")
    assert "print(mon_sess.run(loss" in line and "`value = mon_sess.run(tensor, feed_dict=...)`" in message, message
    source = MODULE_LEVEL + "        value = mon_sess.run(loss, feed_dict={x: np.ones([4, 2])})\n"
    line, message = manual(source)
    assert "value = mon_sess.run(loss" in line and "refused once its hooks stopped the session" in message, message


# -- mnist_replica as its forks carry it: --existing_servers, the session inside the device block -------------

EXISTING_SERVERS = (Path(__file__).resolve().parent / "parity_programs" /
                    "mnist_replica_existing_servers_tf1.py").read_text()


def test_existing_servers_start_no_server_the_chief_drives_them_and_the_other_clients_end():
    result = migrated(EXISTING_SERVERS)
    code = result.source
    assert ('  if not FLAGS.existing_servers:\n    # Not using existing servers: create an in-process server.\n'
            "    server = tf.distribute.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)\n"
            '    if FLAGS.job_name == "ps":\n      server.join()\n') in code
    assert ("  if not is_chief:\n    if FLAGS.existing_servers:\n"
            "      print(\"The servers run elsewhere; TF1's chief's client drives their training: this client has "
            "nothing to do.\")\n      return\n"
            "    # TF1's chief drives the cluster's training now; the other workers serve it.\n    server.join()\n"
            "  # The coordinator joins the cluster on a port of its own") in code
    # What the branch did besides opening the session stays; the session and its other branch go.
    assert ('  if FLAGS.existing_servers:\n    server_grpc_url = "grpc://" + worker_spec[FLAGS.task_index]\n'
            '    print("Using existing server at: %s" % server_grpc_url)\n  checkpoint = tf.train.Checkpoint(') in code
    (note,) = [f for f in result.findings if f.rule == "TFM103"]
    assert note.message.endswith("; where `FLAGS.existing_servers`, the servers run elsewhere: the program starts "
                                 "none, TF1's chief's client drives them and the other clients end"), note.message


def _main(code: str) -> str:
    return code[code.index("def main("):]


def test_a_session_written_in_the_device_block_follows_the_graph_out_of_it():
    code = _main(migrated(EXISTING_SERVERS).source)
    assert "tf.device" not in code and "replica_device_setter" not in code
    # The session's code, one level out where the graph was; the Supervisor's logdir stays for the checkpoints.
    assert "\n  train_dir = tempfile.mkdtemp()\n  if is_chief:\n" in code
    assert "manager = tf.train.CheckpointManager(checkpoint, os.path.join(train_dir, \"tf2\"), max_to_keep=5)" in code
    assert ("  coordinator.join()\n  manager.save()\n\n"
            '  print("Training elapsed time: %f s" % (time.time() - time_begin))\n\n'
            "  val_xent = evaluate_graph(validation_images, validation_labels).numpy()\n") in code
    for gone in ("init_op", "sv.", "sess.", "sess =", "ConfigProto", "global_step =", "train_step ="):
        assert gone not in code, gone


def test_the_programs_train_op_named_train_step_gives_way_to_the_step_function():
    code = _main(migrated(EXISTING_SERVERS).source)
    assert code.count("train_step(") == 1 and "  def train_step(x, y_):\n" in code
    assert "coordinator.schedule(train_step, args=(batch_xs, batch_ys))" in code
    # Used besides the graph and its run, it would be the program's: left as it is.
    line, message = manual(EXISTING_SERVERS.replace('    print("Training elapsed', '    print(train_step)\n'
                                                                                   '    print("Training elapsed'))
    assert line == "    print(train_step)" and "`train_step`" in message, (line, message)


@pytest.mark.parametrize("config, noted", [
    ("allow_soft_placement=True, log_device_placement=False,", False),
    ("allow_soft_placement=True, log_device_placement=True,", True),
    ("allow_soft_placement=True, intra_op_parallelism_threads=2,", True),
], ids=["what TF2 does", "a placement log", "threads"])
def test_the_sessions_config_goes_with_a_note_unless_tf2_does_the_same(config, noted):
    source = EXISTING_SERVERS.replace("allow_soft_placement=True, log_device_placement=False,", config)
    result = migrated(source)
    notes = [f for f in result.findings if f.rule == "TFM103" and "ConfigProto" in f.message]
    assert "ConfigProto" not in _main(result.source) and len(notes) == noted, notes
    if noted:
        assert notes[0].message.endswith("goes with the session: TF2 places ops softly and ParameterServerStrategy "
                                         "sets the device filters; set its other options with tf.config by hand")


@pytest.mark.parametrize("read_elsewhere", [False, True], ids=["only by the device setter", "printed too"])
def test_a_name_only_the_device_setter_reads_goes_with_it(read_elsewhere):
    line = '  worker_device = "/job:worker/task:%d/cpu:0" % FLAGS.task_index\n'
    source = EXISTING_SERVERS.replace(line, line + "  print(worker_device)\n") if read_elsewhere else EXISTING_SERVERS
    assert line in source
    assert (line in migrated(source).source) == read_elsewhere


@pytest.mark.parametrize("dtype, signed", [("tf.float32", True), ("tf.int32", False)])
def test_the_steps_take_the_placeholders_specs_only_where_they_are_floating_point(dtype, signed):
    """TF1 converted what it was fed to the placeholder's dtype; a TensorSpec converts floats alike, but refuses
    the floats TF1 truncated into an integer placeholder."""
    source = MNIST_REPLICA.replace("y_ = tf.placeholder(tf.float32,", f"y_ = tf.placeholder({dtype},")
    assert f"y_ = tf.placeholder({dtype}," in source
    assert ("input_signature=[" in migrated(source).source) == signed


def _with_sync_replicas(machinery: str) -> str:
    """The fixture as mnist_replica.py has it: `--sync_replicas` wrapping the optimizer, MACHINERY after the
    train op (in the device block, with the session's code)."""
    return EXISTING_SERVERS.replace("    opt = tf.train.AdamOptimizer(0.01)\n", """\
    opt = tf.train.AdamOptimizer(0.01)
    if FLAGS.sync_replicas:
      opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=2, total_num_replicas=2)
""").replace("    train_step = opt.minimize(cross_entropy, global_step=global_step)\n",
             "    train_step = opt.minimize(cross_entropy, global_step=global_step)\n" + machinery)


SYNC_MACHINERY = """\
    if FLAGS.sync_replicas:
      local_init_op = opt.local_step_init_op
      if is_chief:
        local_init_op = opt.chief_init_op
      ready_for_local_init_op = opt.ready_for_local_init_op
      chief_queue_runner = opt.get_chief_queue_runner()
      sync_init_op = opt.get_init_tokens_op()
"""


def test_existing_servers_and_the_sync_replicas_flag_both_choose_at_run_time():
    source = _with_sync_replicas(SYNC_MACHINERY).replace("""\
    sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op, recovery_wait_secs=1,
                             global_step=global_step)
""", """\
    if FLAGS.sync_replicas:
      sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op, local_init_op=local_init_op,
                               ready_for_local_init_op=ready_for_local_init_op, recovery_wait_secs=1,
                               global_step=global_step)
    else:
      sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op, recovery_wait_secs=1,
                               global_step=global_step)
""").replace("""    time_begin = time.time()
""", """    if FLAGS.sync_replicas and is_chief:
      sess.run(sync_init_op)
      sv.start_queue_runners(sess, [chief_queue_runner])

    time_begin = time.time()
""")
    result = migrated(source)
    assert [f.rule for f in result.findings if f.rule == "TFM104"] == [], result.findings
    main = _main(result.source)
    assert "if FLAGS.sync_replicas:" in main and "MultiWorkerMirroredStrategy" in main
    assert "if FLAGS.existing_servers:" in main and "ParameterServerStrategy" in main
    assert not any(name in main for name in ("sync_init_op", "chief_queue_runner", "local_init_op", "Supervisor"))


def test_the_sync_replicas_flag_without_the_tokens_its_chief_runs_is_left_at_the_optimizer():
    machinery = "    if FLAGS.sync_replicas:\n      local_init_op = opt.local_step_init_op\n"
    line, message = manual(_with_sync_replicas(machinery))
    assert line.strip().startswith("opt = tf.train.SyncReplicasOptimizer("), line
    assert message.endswith("SyncReplicasOptimizer without the get_init_tokens_op() its chief runs: migrate its chief "
                            "queue runner and tokens by hand"), message


# -- running it as processes ---------------------------------------------------------------------------

SERVE = """import sys
import tensorflow as tf
ps, workers, job, task = sys.argv[1:]
cluster = tf.train.ClusterSpec({"ps": ps.split(","), "worker": workers.split(",")})
tf.distribute.Server(cluster, job_name=job, task_index=int(task)).join()
"""


def _cluster(tmp_path: Path, background: list[list[str]], foreground: list[list[str]]) -> list[str]:
    """``background`` commands (`python ARGS`) serving until stopped, then each of ``foreground`` run to its end:
    their outputs."""
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TMPDIR"] = str(tmp_path)
    serving = [subprocess.Popen([sys.executable, *args], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.STDOUT) for args in background]
    try:
        outputs = []
        for args in foreground:
            proc = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=300)
            assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
            outputs.append(proc.stdout)
        assert all(task.poll() is None for task in serving)  # serving, not crashed
        return outputs
    finally:
        for task in serving:
            task.kill()
            task.wait()


def _hosts() -> tuple[str, str]:

    ps, *workers = (f"localhost:{free_port()}" for _ in range(3))
    return ps, ",".join(workers)


@pytest.mark.tensorflow
def test_the_migrated_program_trains_as_processes_with_the_tf1_command_line(tmp_path):
    """ps 0 and worker 1 serve, worker 0 (TF1's chief) drives the training."""
    program = tmp_path / "tf2.py"
    program.write_text(migrated(EXISTING_SERVERS).source)
    ps, workers = _hosts()
    flags = [f"--ps_hosts={ps}", f"--worker_hosts={workers}"]
    (chief,) = _cluster(tmp_path, [[str(program), "--job_name=ps", "--task_index=0", *flags],
                                            [str(program), "--job_name=worker", "--task_index=1", *flags]],
                        [[str(program), "--job_name=worker", "--task_index=0", *flags]])
    assert re.findall(r"global step: (\d+)", chief) == [str(step) for step in range(1, 21)], chief
    assert "validation cross entropy = " in chief


@pytest.mark.tensorflow
def test_with_existing_servers_the_chief_drives_them_and_the_other_client_ends(tmp_path):
    """The ps and worker servers run as processes of their own; worker 1's client ends, worker 0's trains."""
    program, serve = tmp_path / "tf2.py", tmp_path / "serve.py"
    program.write_text(migrated(EXISTING_SERVERS).source)
    serve.write_text(SERVE)
    ps, workers = _hosts()
    flags = [f"--ps_hosts={ps}", f"--worker_hosts={workers}", "--existing_servers"]
    other, chief = _cluster(
        tmp_path, [[str(serve), ps, workers, "ps", "0"],
                            *([str(serve), ps, workers, "worker", str(task)] for task in (0, 1))],
        [[str(program), "--job_name=worker", "--task_index=1", *flags],
         [str(program), "--job_name=worker", "--task_index=0", *flags]])
    assert other.strip().endswith("this client has nothing to do.") and "global step" not in other, other
    assert re.findall(r"global step: (\d+)", chief) == [str(step) for step in range(1, 21)], chief
    assert "Using existing server at: grpc://" + workers.split(",")[0] in chief

