"""A flag choosing in the loop between training and running the graph otherwise (rewrites/between_graph/modes.py):
TensorFlowOnSpark's mnist map_fun, `if args.mode == "train": <train step> else: <labels and predictions of a batch,
written to the worker's file>`. The migrated program makes the same choice at run time: training, the
coordinator's program; otherwise each worker runs the graph's tensors on its own input with the restored
variables, as TF1's workers did. And what the training branch holds besides: a run of a graph's tensor reading the
tf.data iterator (`sess.run(accuracy)` every k steps) is scheduled on a worker, reading its next batch."""

from __future__ import annotations

import pytest
from helpers import assert_serving, run
from ports import free_port

LEFT = "between-graph program left as it is: "

# A map_fun in the shape of TensorFlowOnSpark's mnist/tf one: a tf.data graph, a mode flag choosing in the loop.
MAP_FUN = """\
def map_fun(args, ctx):
  import tensorflow as tf

  task_index = ctx.task_index
  cluster, server = ctx.start_cluster_server(1, False)

  def example(i):
    i = tf.cast(i, tf.float32)
    return tf.stack([i, 1.0, i * i / 16.0]), tf.stack([2.0 * i + 1.0])

  if ctx.job_name == "ps":
    server.join()
  elif ctx.job_name == "worker":
    with tf.device(tf.train.replica_device_setter(
        worker_device="/job:worker/task:%d" % task_index, cluster=cluster)):
      ds = tf.data.Dataset.range(16).map(example).repeat(args.epochs).batch(4)
      iterator = ds.make_one_shot_iterator()
      x, y_ = iterator.get_next()
      w = tf.Variable(tf.zeros([3, 1]), name="w")
      global_step = tf.train.get_or_create_global_step()
      prediction = tf.matmul(x, w)
      loss = tf.reduce_mean(tf.square(prediction - y_))
      error = tf.reduce_mean(tf.abs(prediction - y_))
      label = tf.squeeze(y_, 1)
      predicted = tf.squeeze(prediction, 1)
      train_op = tf.train.GradientDescentOptimizer(0.001).minimize(loss, global_step=global_step)

    if args.mode == "inference":
      output = open("predictions-%d" % task_index, "w")
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task_index == 0),
                                           checkpoint_dir=args.model,
                                           hooks=[tf.train.StopAtStepHook(last_step=args.steps)]) as sess:
      step = 0
      count = 0
      while not sess.should_stop():
{loop}
    if args.mode == "inference":
      output.close()
    print("trained steps:", step)
"""
TRAIN = """\
          if step % 4 == 0:
            print("step", step, "error", sess.run(error))
          _, step = sess.run([train_op, global_step])"""
OTHERWISE = """\
          labels, predictions = sess.run([label, predicted])
          for i in range(len(labels)):
            count += 1
            output.write("{} {}\\n".format(labels[i], predictions[i]))
          print("count:", count)"""
MODE = '        if args.mode == "train":\n' + TRAIN + "\n        else:  # inference\n" + OTHERWISE


def map_fun(loop: str = MODE) -> str:
    return MAP_FUN.replace("{loop}", loop)


def training_only(train: str = TRAIN) -> str:
    """The map_fun without the flag: its loop the training branch."""
    return map_fun(train.replace("          ", "        ")).replace(
        '    if args.mode == "inference":\n      output = open("predictions-%d" % task_index, "w")\n', "").replace(
        '    if args.mode == "inference":\n      output.close()\n', "")


def manual(result) -> list[str]:
    return [f.rule for f in result.findings if f.safety.value == "manual"]


def test_a_mode_flag_makes_the_same_choice_at_run_time_training_on_the_coordinator_or_each_worker_on_its_own():
    source = map_fun()
    result = run(source)
    assert manual(result) == []
    code = result.source
    # Training: the coordinator's program, the other workers serving it; otherwise every worker goes on, on its own.
    assert ('    if args.mode == "train":\n      if not (task_index == 0):\n        # TF1\'s chief drives the '
            "cluster's training now; the other workers serve it.\n        server.join()\n") in code
    assert ("      strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)\n    else:\n"
            "      # Not training: each worker runs the graph on its own input, as TF1's did; no coordinator.\n"
            "      strategy = tf.distribute.get_strategy()\n") in code
    assert ('    if args.mode == "train":\n      coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)\n'
            "      per_worker_iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))\n    else:\n"
            "      worker_iterator = iter(dataset_fn())\n") in code
    evaluate = code[code.index("def evaluate_batch(iterator):"):]
    assert "return label, predicted\n      return strategy.run(evaluate, args=next(iterator))" in evaluate
    # The loop: the training branch's loop, joined; the other runs once, then on to the step limit or input's end.
    loop = code[code.index("    try:\n      if args.mode"):code.index("    except tf.errors.OutOfRangeError")]
    assert "        while scheduled_steps < args.steps:\n" in loop
    assert "          coordinator.schedule(train_step, args=(per_worker_iterator,))\n" in loop
    assert "        coordinator.join()\n      else:\n        while True:\n          labels, predictions = [value." \
           "numpy() for value in evaluate_batch(worker_iterator)]\n" in loop
    assert ("          print(\"count:\", count)\n          if int(optimizer.iterations) >= args.steps:\n"
            "            break  # TF1's StopAtStepHook: the checkpoint's step\n") in loop
    # Every worker may get here: the chief saves, as TF1's did.
    assert "    if task_index == 0:\n      manager.save()\n" in code
    assert "sess." not in code and "MonitoredTrainingSession(" not in code
    (note,) = [f for f in result.findings if "chooses training or running the graph otherwise" in f.message]
    assert note.rule == "TFM103" and note.line == source.splitlines().index('        if args.mode == "train":') + 1
    assert "each worker runs `label, predicted` on its own input's batches" in note.message


def test_the_training_branch_may_come_second():
    source = map_fun(MODE.replace('if args.mode == "train":', 'if args.mode == "inference":').replace(
        "else:  # inference", "else:  # train"))
    a, b = source.index("          if step % 4"), source.index("        else:  # train")
    c = source.index("    if args.mode == \"inference\":\n      output.close()")
    first, second = source[a:b], source[b + len("        else:  # train\n"):c]
    source = source[:a] + second + "        else:  # train\n" + first + source[c:]
    result = run(source)
    assert manual(result) == []
    code = result.source
    assert ('    if args.mode == "inference":\n      # Not training: each worker runs the graph on its own input, '
            "as TF1's did; no coordinator.\n      strategy = tf.distribute.get_strategy()\n    else:\n"
            "      if not (task_index == 0):") in code
    assert "      if args.mode == \"inference\":\n        while True:\n" in code
    assert "      else:\n        while scheduled_steps < args.steps:\n" in code


def test_a_run_of_a_tensor_of_a_tf_data_graph_in_the_loop_is_scheduled_on_a_worker_reading_its_next_batch():
    # Without the flag: the training loop, its accuracy every k steps read from the input's next batch.
    source = training_only()
    result = run(source)
    assert manual(result) == []
    code = result.source
    assert ('        if step % 4 == 0:\n          # Once the steps scheduled so far are done: the model evaluated is '
            'that of this step.\n          coordinator.join()\n          print("step", step, "error", '
            'coordinator.schedule(evaluate_graph, args=(per_worker_iterator,)).fetch())\n') in code
    evaluate = code[code.index("def evaluate_graph(iterator):"):]
    assert "        return error\n      return strategy.run(evaluate, args=next(iterator))" in evaluate


def test_a_synchronous_loop_evaluating_a_tf_data_graph_is_still_left():
    source = training_only().replace(
        "train_op = tf.train.GradientDescentOptimizer(0.001).minimize(loss, global_step=global_step)",
        "opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.001), replicas_to_aggregate=2,\n"
        "                                     total_num_replicas=2)\n"
        "      train_op = opt.minimize(loss, global_step=global_step)").replace(
        "hooks=[", "hooks=[opt.make_session_run_hook(task_index == 0), ")
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "`error` evaluated in the loop of a graph reading a tf.data iterator" in finding.message
    assert result.source == source


def test_summaries_written_beside_a_run_evaluating_the_graph_go_with_the_writer():
    # Beside the run of each step, one evaluating the graph: the run written for is the step's.
    summaries = TRAIN.replace("_, step = sess.run([train_op, global_step])",
                              "_, summary, step = sess.run([train_op, summary_op, global_step])\n"
                              "          if task_index == 0:\n"
                              "            writer.add_summary(summary, step)")
    source = training_only(summaries).replace(
        "      train_op = tf.train",
        "      tf.summary.scalar(\"loss\", loss)\n      summary_op = tf.summary.merge_all()\n      train_op = tf.train").replace(
        "    with tf.train.MonitoredTrainingSession(",
        "    writer = tf.summary.FileWriter(\"logs\")\n    with tf.train.MonitoredTrainingSession(")
    result = run(source)
    assert manual(result) == []
    assert "summary" not in result.source.replace("tf.summary ops", "") and "writer" not in result.source


@pytest.mark.parametrize("old, new, message", [
    ('          print("count:", count)', "          print(sess.run(loss))",
     "the branch not training must run the graph's tensors once"),
    ('        if args.mode == "train":', '        args.mode = "inference"\n        if args.mode == "train":',
     "migrated in a `while not sess.should_stop():` loop holding nothing but that `if`"),
    ("sess.run([label, predicted])", "sess.run([label, x])",
     "`x`, run in the branch not training, is no tensor the graph computes"),
    ("                                           checkpoint_dir=args.model,\n", "",
     "with no checkpoints: TF1's workers ran it with the variables the chief initialized"),
], ids=["a-second-run", "more-than-the-if-in-the-loop", "an-input", "no-checkpoints"])
def test_what_the_mode_flag_cannot_take_is_left_with_one_tfm104(old, new, message):
    source = map_fun().replace(old, new)
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert message in finding.message
    assert result.source == source


def test_a_mode_test_reading_what_the_loop_changes_is_left():
    source = map_fun(MODE.replace('if args.mode == "train":', "if count < 8:"))
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "its test must read names the loop leaves as they are" in finding.message
    assert result.source == source


# TensorFlowOnSpark 2 running the map_fun on one executor: its context, start_cluster_server raising under TF 2.
LAUNCHER = """\
import sys
import types

from map_fun_module import map_fun


def deprecated(*args, **kwargs):
    raise Exception("DEPRECATED: Use higher-level APIs like `tf.keras` or `tf.estimator`")


job, index, ps_hosts, worker_hosts, mode, steps = sys.argv[1:7]
ctx = types.SimpleNamespace(job_name=job, task_index=int(index), worker_num=int(index),
                            start_cluster_server=deprecated,
                            cluster_spec={"ps": ps_hosts.split(","), "worker": worker_hosts.split(",")})
map_fun(types.SimpleNamespace(mode=mode, steps=int(steps), epochs=int(steps), model="model"), ctx)
"""


@pytest.mark.tensorflow
def test_the_migrated_map_fun_trains_then_each_worker_writes_its_predictions_with_the_trained_model(tmp_path):
    import os
    import subprocess
    import sys

    import numpy as np
    import tensorflow as tf

    migrated = run(map_fun()).source
    (tmp_path / "map_fun_module.py").write_text(migrated)
    (tmp_path / "launch.py").write_text(LAUNCHER)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}

    def cluster(mode: str, steps: int) -> list[str]:
        ps, *workers = (f"127.0.0.1:{free_port()}" for _ in range(3))

        def task(job, index):
            return subprocess.Popen([sys.executable, "launch.py", job, str(index), ps, ",".join(workers), mode,
                                     str(steps)], cwd=tmp_path, env=env, stderr=subprocess.STDOUT,
                                    stdout=subprocess.PIPE, text=True)

        serving, outs = [task("ps", 0)], []
        try:
            tasks = [task("worker", 0), task("worker", 1)]
            if mode == "train":  # the other worker serves the chief's coordinator
                serving.append(tasks.pop())
            for process in tasks:
                out, _ = process.communicate(timeout=240)
                assert process.returncode == 0, out[-3000:]
                outs.append(out)
            assert_serving(serving)
        finally:
            for process in serving:
                process.kill()
                process.wait()
        return outs

    (trained,) = cluster("train", 12)
    assert "trained steps: 12" in trained and "step 0 error" in trained and "step 8 error" in trained
    w = tf.train.load_checkpoint(str(tmp_path / "model" / "tf2")).get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE")
    assert np.abs(w).sum() > 0  # trained
    # Not training, the step limit passed: each worker runs one batch, then stops, as TF1's StopAtStepHook did.
    cluster("inference", 12)
    expected = {}
    for i in range(16):
        x = np.array([i, 1.0, i * i / 16.0], np.float32)
        expected[2.0 * i + 1.0] = float(x @ w[:, 0])
    for index in (0, 1):
        lines = (tmp_path / f"predictions-{index}").read_text().splitlines()
        assert len(lines) == 4
        for line in lines:
            label, predicted = map(float, line.split())
            assert predicted == pytest.approx(expected[label], rel=1e-5)
    # Below the step limit, each worker runs its whole input (its epochs), with the trained model.
    cluster("inference", 13)
    for index in (0, 1):
        lines = (tmp_path / f"predictions-{index}").read_text().splitlines()
        assert len(lines) == 16 * 13
        assert all(float(line.split()[1]) == pytest.approx(expected[float(line.split()[0])], rel=1e-5)
                   for line in lines)
