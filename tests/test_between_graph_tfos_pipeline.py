"""In the shape of TensorFlowOnSpark's mnist/pipeline/tf map_fun: a Supervisor's loop over a graph reading a tf.data
iterator prints the accuracy every N steps (`sess.run(accuracy)`: the model on the input's next batch) and fetches
the merged summaries the chief writes to a FileWriter. The accuracy becomes an evaluation of the next batch of a
worker's per-worker iterator (scheduled, then fetched), the summaries go with their writer (TFM109)."""

from __future__ import annotations

import pytest
from helpers import assert_serving, run
from ports import free_port
from test_between_graph_tfos import LAUNCHER, RUN, map_fun

SUPERVISED = """\
      accuracy = tf.reduce_mean(tf.cast(tf.less(tf.abs(tf.matmul(x, w) - y_), 0.5), tf.float32), name="accuracy")
      tf.summary.scalar("loss", loss)
      tf.summary.scalar("acc", accuracy)
      summary_op = tf.summary.merge_all()
      init_op = tf.global_variables_initializer()

    summary_writer = tf.summary.FileWriter("tensorboard_%d" % task_index, graph=tf.get_default_graph())
    sv = tf.train.Supervisor(is_chief=(task_index == 0), logdir=args.model, init_op=init_op, summary_op=None,
                             global_step=global_step)
    with sv.managed_session(server.target) as sess:
      step = 0
      while not sv.should_stop() and step < args.steps:
        if (step % 4 == 0):
          print("step: {} accuracy: {}".format(step, sess.run(accuracy)))
        _, summary, step = sess.run([train_op, summary_op, global_step])
        if sv.is_chief:
          summary_writer.add_summary(summary, step)
    print("trained steps:", step)
    sv.stop()
"""
ACCURACY = ("      train_op = ", "      accuracy = tf.reduce_mean(tf.abs(tf.matmul(x, w) - y_))\n      train_op = ")
SYNCHRONOUS = ("train_op = tf.train.AdagradOptimizer(0.01).minimize(loss, global_step=global_step)",
               "opt = tf.train.SyncReplicasOptimizer(tf.train.AdagradOptimizer(0.01), replicas_to_aggregate=2,\n"
               "                                     total_num_replicas=2)\n"
               "      train_op = opt.minimize(loss, global_step=global_step)")


def supervised(source: str | None = None) -> str:
    source = source or map_fun()
    return source.split("\n    with tf.train.MonitoredTrainingSession")[0] + "\n" + SUPERVISED


def test_an_accuracy_run_of_a_tf_data_graph_evaluates_the_next_batch_on_a_worker():
    source = supervised()
    result = run(source)
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    code = result.source
    assert ("      if (step % 4 == 0):\n"
            "        # Once the steps scheduled so far are done: the model evaluated is that of this step.\n"
            "        coordinator.join()\n"
            '        print("step: {} accuracy: {}".format(step, coordinator.schedule(evaluate_graph, '
            "args=(per_worker_iterator,)).fetch()))\n"
            "      coordinator.schedule(train_step, args=(per_worker_iterator,))\n") in code
    assert ("    @tf.function\n    def evaluate_graph(iterator):\n"
            '      """`accuracy` of the input\'s next batch, with the variables as trained so far (on a worker)."""\n'
            "      def evaluate(x, y_):\n") in code
    assert "        return accuracy\n      return strategy.run(evaluate, args=next(iterator))\n" in code
    assert "sess." not in code and "summary" not in code.replace("tf.summary ops", "") and "writer" not in code
    (note,) = [f for f in result.findings if f.message.startswith("the run's merged summaries")]
    assert note.rule == "TFM109" and note.line == source.splitlines().index("        if sv.is_chief:") + 1


def test_an_accuracy_run_of_a_synchronous_tf_data_graph_is_left():
    source = map_fun(run='        if step % 4 == 0:\n          print("accuracy:", sess.run(accuracy))\n' + RUN)
    source = source.replace(*SYNCHRONOUS).replace(*ACCURACY).replace(
        "hooks=[", "hooks=[opt.make_session_run_hook(task_index == 0), ")
    result = run(source)
    (left,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "`accuracy` evaluated in the loop of a graph reading a tf.data iterator" in left.message
    assert "asynchronous (ParameterServerStrategy) loop" in left.message
    assert left.line == source.splitlines().index('          print("accuracy:", sess.run(accuracy))') + 1
    assert result.source == source


def test_an_accuracy_of_a_tf_data_graph_evaluated_after_the_loop_is_left():
    source = supervised().replace('    print("trained steps:", step)\n',
                                  '      final = sess.run(accuracy)\n    print("trained steps:", step)\n')
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "`accuracy` evaluated after the loop of a graph reading a tf.data iterator" in finding.message
    assert finding.line == source.splitlines().index("      final = sess.run(accuracy)") + 1
    assert result.source == source


@pytest.mark.tensorflow
@pytest.mark.parametrize("one_pass", [False, True], ids=["repeated", "one pass"])
def test_the_migrated_supervised_map_fun_runs_as_ps_and_two_workers_printing_the_accuracy(tmp_path, one_pass):
    import os
    import re
    import subprocess
    import sys

    source = supervised()
    launcher = LAUNCHER.replace("format=sys.argv[5]", "format=sys.argv[5], model='model'")
    if one_pass:  # 8 batches a worker, read by steps and evaluations: the loop stops where the first ends
        source, launcher = source.replace(".repeat().batch(8)", ".batch(8)"), launcher.replace("steps=6", "steps=60")
    migrated = run(source).source
    (tmp_path / "map_fun_module.py").write_text(migrated)
    (tmp_path / "launch.py").write_text(launcher)
    ps, *workers = (f"127.0.0.1:{free_port()}" for _ in range(3))
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}

    def task(job, index):
        return subprocess.Popen([sys.executable, "launch.py", job, str(index), ps, ",".join(workers), "-"],
                                cwd=tmp_path, env=env, stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True)

    serving = [task("ps", 0), task("worker", 1)]
    try:
        chief = task("worker", 0)
        out, _ = chief.communicate(timeout=240)
        assert chief.returncode == 0, out[-3000:]
        # Steps 0, 4, ...: the accuracy of a batch (8 examples), a number the evaluation fetched.
        evaluated = [int(step) for step, _ in re.findall(r"step: (\d+) accuracy: ([0-9.]+)\n", out)]
        trained = int(re.findall(r"trained steps: (\d+)", out)[-1])
        if one_pass:
            assert 1 <= trained <= 16 and evaluated == list(range(0, trained, 4))[:len(evaluated)], out[-3000:]
        else:
            assert trained == 6 and evaluated == [0, 4], out
        assert_serving(serving)
    finally:
        for process in serving:
            process.kill()
            process.wait()


EXPORT = '''

def export_fun(args):
  import tensorflow as tf

  x = tf.placeholder(tf.float32, [None, 3], name="x")
  w = tf.Variable(tf.zeros([3, 1]), name="w")
  prediction = tf.matmul(x, w, name="prediction")
  saver = tf.train.Saver()
  with tf.Session() as sess:
    saver.restore(sess, tf.train.latest_checkpoint(args.model))
    builder = tf.saved_model.builder.SavedModelBuilder(args.export_dir)
    builder.add_meta_graph_and_variables(sess, ["serve"])
    builder.save()
'''


def test_a_function_of_the_module_exporting_a_tf1_graph_of_its_own_is_left_naming_its_first_graph_only_use():
    # An export_fun: an inference graph restored from the checkpoint in a session of its own, saved by a
    # SavedModelBuilder (TFNode.export_saved_model and simple_save are migrated: test_between_graph_exports.py).
    source = supervised() + EXPORT
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "`placeholder` in `export_fun()` still needs TF1's graph mode" in finding.message
    assert finding.line == source.splitlines().index('  x = tf.placeholder(tf.float32, [None, 3], name="x")') + 1
    assert result.source == source
