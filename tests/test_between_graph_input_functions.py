"""TFM103 on a graph whose input a function of its module builds (TensorFlowOnSpark's `read_tfr_examples`, as
TFM008 writes its queue pipeline): `x, y_ = read_examples(path, 4, num_epochs)`, the function returning
`make_one_shot_iterator(<pipeline>).get_next()`. The function returns the pipeline now, and the call, with what the
graph computes for it alone, is the per-worker dataset function's: the same batches in the same order. What the
migration cannot carry over is left with one TFM104 saying why (rewrites/between_graph/inputs.py)."""

from __future__ import annotations

import re

import pytest
from helpers import assert_serving, run
from ports import free_port
from test_between_graph_tfos import LAUNCHER

READER = '''\
import os

import numpy as np
import tensorflow as tf


def read_examples(path, batch_size=100, num_epochs=None):
  """The records of an .npz file, in batches."""
  data = np.load(path)
  records = tf.data.Dataset.from_tensor_slices((data["x"], data["y"]))
  def scale(x, y):
    return x / 2.0, y
  return tf.compat.v1.data.make_one_shot_iterator(
      records.repeat(num_epochs)
      .map(scale)
      .batch(batch_size, drop_remainder=True)).get_next()
'''

MAP_FUN = '''

def map_fun(args, ctx):
  job_name = ctx.job_name
  task_index = ctx.task_index
  cluster, server = ctx.start_cluster_server(1, args.rdma)

  if job_name == "ps":
    server.join()
  elif job_name == "worker":
    with tf.device(tf.train.replica_device_setter(
        worker_device="/job:worker/task:%d" % task_index, cluster=cluster)):
      # The input, read with tf.data
      num_epochs = None if args.epochs == 0 else args.epochs
      path = os.path.join(args.data, "train.npz")
      x, y_ = read_examples(path, 4, num_epochs)
      w = tf.Variable(tf.zeros([3, 1]), name="w")
      global_step = tf.train.get_or_create_global_step()
      loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y_))
      train_op = tf.train.AdagradOptimizer(0.01).minimize(loss, global_step=global_step)

    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task_index == 0),
                                           hooks=[tf.train.StopAtStepHook(last_step=args.steps)]) as sess:
      while not sess.should_stop():
        _, step = sess.run([train_op, global_step])
      print("trained steps:", step)
'''
PROGRAM = READER + MAP_FUN


def test_a_function_returning_its_pipeline_s_batches_builds_the_per_worker_dataset():
    result = run(PROGRAM)
    code = result.source
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    compile(code, "migrated.py", "exec")
    assert run(code).source == code, "a second run changes nothing"
    # The function returns its pipeline, as it built it.
    assert ('    return x / 2.0, y\n  return (records.repeat(num_epochs)\n      .map(scale)\n      .batch(batch_size, '
            'drop_remainder=True))\n\n\ndef map_fun') in code
    # Its call, and what the graph computed for it alone, build the dataset on each worker.
    assert ('    def dataset_fn():\n      """TF1\'s input pipeline, on each worker."""\n'
            '      # The input, read with tf.data\n      num_epochs = None if args.epochs == 0 else args.epochs\n'
            '      path = os.path.join(args.data, "train.npz")\n      dataset = read_examples(path, 4, num_epochs)\n'
            '      return dataset\n') in code
    assert "per_worker_iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))" in code
    assert "      def step(x, y_):\n        with tf.GradientTape() as tape:\n          loss = " in code
    assert "make_one_shot_iterator" not in code and "path = " not in code.split("def step(")[1]
    # An input that may end (`repeat(num_epochs)`) stops the loop where it does, as TF1's session stopped.
    assert ("    try:\n      while scheduled_steps < args.steps:\n        coordinator.schedule(train_step, args=("
            "per_worker_iterator,))\n        scheduled_steps += 1\n        step = scheduled_steps\n      coordinator"
            ".join()\n    except tf.errors.OutOfRangeError:  # TF1's session stopped there too\n      scheduled_steps = "
            "int(optimizer.iterations)\n      step = scheduled_steps\n") in code
    assert "may end" in " ".join(f.message for f in result.findings if f.rule == "TFM103")


def test_an_input_repeated_without_end_is_run_without_waiting_for_its_end():
    code = run(PROGRAM.replace("records.repeat(num_epochs)", "records.repeat()")).source
    assert "ClusterCoordinator(strategy)" in code and "OutOfRangeError" not in code


def test_an_iterator_made_just_before_the_return_of_its_batches_goes_with_it():
    """`iterator = dataset.make_one_shot_iterator()` then `return iterator.get_next()`: the pipeline returned."""
    program = PROGRAM.replace(
        "  return tf.compat.v1.data.make_one_shot_iterator(\n      records.repeat(num_epochs)\n",
        "  iterator = records.repeat(num_epochs).make_one_shot_iterator()\n  return iterator.get_next()\n")
    program = program.replace("      .map(scale)\n      .batch(batch_size, drop_remainder=True)).get_next()\n", "")
    result = run(program)
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert "    return x / 2.0, y\n  return records.repeat(num_epochs)\n\n\ndef map_fun" in result.source


def test_what_the_graph_s_own_pipeline_alone_reads_moves_into_the_dataset_function_too():
    """Left in the step, the dataset function would read names it does not have."""
    imports = READER[:READER.index("\n\ndef")]
    program = (imports + MAP_FUN).replace("      x, y_ = read_examples(path, 4, num_epochs)\n", (
        "      data = np.load(path)\n      x, y_ = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset"
        ".from_tensor_slices((data[\"x\"], data[\"y\"])).repeat(num_epochs).batch(4)).get_next()\n"))
    code = run(program).source
    assert ('      num_epochs = None if args.epochs == 0 else args.epochs\n      path = os.path.join(args.data, '
            '"train.npz")\n      data = np.load(path)\n      dataset = tf.data.Dataset.from_tensor_slices((data["x"], '
            'data["y"])).repeat(num_epochs).batch(4)\n      return dataset\n') in code, code
    assert "np.load" not in code.split("def step(")[1]


@pytest.mark.parametrize("program, line, message", [
    (PROGRAM + "\n\ndef evaluate(args):\n  return read_examples(args.eval, 4)\n", "x, y_ = read_examples(path, 4, "
     "num_epochs)", "`read_examples(path, 4, num_epochs)` in the graph builds its tf.data input in a function the "
     "program names elsewhere too (but calls in another TF1 graph, `with graph.as_default():`): it would return the "
     "pipeline now, for the per-worker dataset function"),
    (PROGRAM.replace('  data = np.load(path)\n', '  data = np.load(path)\n  keep = tf.placeholder(tf.float32)\n'),
     "keep = tf.placeholder(tf.float32)", "`read_examples(path, 4, num_epochs)` in the graph, building the "
     "per-worker dataset, calls tf.placeholder, which makes a placeholder"),
    (PROGRAM.replace("  data = np.load(path)\n", "  data = load(path)\n") + "\n\ndef load(path):\n  return "
     "np.load(path)\n", "data = load(path)", "`read_examples(path, 4, num_epochs)` in the graph, building the "
     "per-worker dataset, calls `load(path)` of the program, which the migration does not follow there"),
    (PROGRAM.replace("      loss = tf.reduce_mean(", "      loss = len(path) * tf.reduce_mean("),
     'path = os.path.join(args.data, "train.npz")', "`path` is part of the graph's input and moves into the "
     "per-worker dataset function: only the tf.data pipeline the iterator reads may use it"),
    (PROGRAM.replace("read_examples(path, 4, num_epochs)", "read_examples(path, 4, w)"),
     "x, y_ = read_examples(path, 4, w)", "the graph's input reads `w`, a tensor of the graph: the per-worker dataset "
     "function building it has none"),
    (PROGRAM.replace("    with tf.train.MonitoredTrainingSession(", "    print(num_epochs)\n    with tf.train."
                     "MonitoredTrainingSession("), "print(num_epochs)", "`num_epochs`, a tensor of the TF1 graph, is "
     "used outside the session's run"),
], ids=["called elsewhere too", "a placeholder", "a function of the program", "a name the step reads too",
        "a tensor of the graph", "a name read after the graph"])
def test_an_input_function_the_migration_cannot_carry_over_leaves_the_program_saying_why(program, line, message):
    result = run(program)
    assert result.source == program
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert program.splitlines()[finding.line - 1].strip() == line, finding.message
    assert message in finding.message, finding.message


@pytest.mark.tensorflow
@pytest.mark.parametrize("epochs, steps, trained", [(0, 6, {6}), (1, 20, set(range(4, 9)))],
                         ids=["endless", "one epoch"])
def test_the_migrated_input_function_feeds_a_ps_and_two_workers(tmp_path, epochs, steps, trained):
    """16 rows in batches of 4: one epoch is 4 steps on each worker, where TF1's sessions stopped. The first worker
    to run out stops the loop (the TFM103 note): its 4 steps, and those the other ran by then, are trained."""
    import os
    import subprocess
    import sys

    import numpy as np

    rows = np.arange(48, dtype=np.float32).reshape(16, 3) / 48
    np.savez(tmp_path / "train.npz", x=rows, y=rows.sum(axis=1, keepdims=True))
    (tmp_path / "map_fun_module.py").write_text(run(PROGRAM).source)
    (tmp_path / "launch.py").write_text(LAUNCHER.replace(
        'steps=6, images="data", format=sys.argv[5])', f"steps={steps}, epochs={epochs}, data='.')"))
    ps, *workers = (f"127.0.0.1:{free_port()}" for _ in range(3))
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}

    def task(job, index):
        return subprocess.Popen([sys.executable, "launch.py", job, str(index), ps, ",".join(workers)], cwd=tmp_path,
                                env=env, stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True)

    serving = [task("ps", 0), task("worker", 1)]
    try:
        chief = task("worker", 0)
        out, _ = chief.communicate(timeout=240)
        assert chief.returncode == 0, out[-3000:]
        ended = re.search(r"^trained steps: (\d+)$", out, re.MULTILINE)
        assert ended is not None and int(ended.group(1)) in trained, out[-3000:]
        assert_serving(serving)
    finally:
        for process in serving:
            process.kill()
            process.wait()


def test_batches_unpacked_in_a_name_scope_then_returned_are_the_function_s_pipeline_too():
    """tensorflow/ecosystem's MNIST `inputs()`: the batches bound to names in `with tf.name_scope("input"):`, then
    returned."""
    reader = READER.replace('''  return tf.compat.v1.data.make_one_shot_iterator(
      records.repeat(num_epochs)
      .map(scale)
      .batch(batch_size, drop_remainder=True)).get_next()
''', '''  with tf.name_scope("input"):
    x, y = tf.compat.v1.data.make_one_shot_iterator(
        records.repeat(num_epochs).map(scale).batch(batch_size, drop_remainder=True)).get_next()
    return x, y
''')
    result = run(reader + MAP_FUN)
    assert "TFM104" not in {f.rule for f in result.findings}, result.findings
    assert ('  with tf.compat.v1.name_scope("input"):\n    return records.repeat(num_epochs).map(scale).batch(batch_size, '
            'drop_remainder=True)\n\n\ndef map_fun') in result.source
    assert "      dataset = read_examples(path, 4, num_epochs)\n" in result.source
    # Returned besides the batches, the names are the function's own: it is left.
    kept = reader.replace("    return x, y\n", "    print(x)\n    return x, y\n")
    assert run(kept + MAP_FUN).source == kept + MAP_FUN
