"""TensorFlowOnSpark's `map_fun(args, ctx)` programs (rewrites/between_graph/tfos.py): one reading its data with
tf.data (InputMode.TENSORFLOW) becomes the ParameterServerStrategy program, its roles still read from `ctx` and its
cluster the one of the server `ctx.start_cluster_server` started; one reading the batches Spark feeds its executor
(InputMode.SPARK) is left, with one TFM104 at the first read of the feed; a session opened on no master (each task
training its own graph, or one it could not place on the ps tasks) is left saying so."""

from __future__ import annotations

from textwrap import dedent

import pytest
from helpers import assert_serving, run
from ports import free_port

LEFT = "between-graph program left as it is: "
SPARK = ("reads the batches Spark feeds this executor (TensorFlowOnSpark's InputMode.SPARK): a "
         "ParameterServerStrategy's dataset_fn runs on the remote workers, which cannot read an executor's feed")

# The worker's graph and loop of TensorFlowOnSpark's mnist examples; {input} makes x and y_.
MAP_FUN = """\
def map_fun(args, ctx):
  {imports}import tensorflow as tf

  job_name = ctx.job_name
  task_index = ctx.task_index
  cluster, server = {server}
{feed}
  if job_name == "ps":
    server.join()
  elif job_name == "worker":
    with tf.device(tf.train.replica_device_setter(
        worker_device="/job:worker/task:%d" % task_index, cluster=cluster)):
{input}
      w = tf.Variable(tf.zeros([3, 1]), name="w")
      global_step = tf.train.get_or_create_global_step()
      loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y_))
      train_op = tf.train.AdagradOptimizer(0.01).minimize(loss, global_step=global_step)

    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task_index == 0),
                                           hooks=[tf.train.StopAtStepHook(last_step=args.steps)]) as sess:
      while not sess.should_stop():
{run}
"""
DATASET = """\
      ds = tf.data.Dataset.from_tensor_slices((tf.ones([64, 3]), tf.ones([64, 1]))).repeat().batch(8)
      iterator = ds.make_one_shot_iterator()
      x, y_ = iterator.get_next()"""
PLACEHOLDERS = """\
      x = tf.placeholder(tf.float32, [None, 3])
      y_ = tf.placeholder(tf.float32, [None, 1])"""
RUN = "        _, step = sess.run([train_op, global_step])"
FED = """\
        batch_xs, batch_ys = feed_dict(tf_feed.next_batch(args.batch_size))
        _, step = sess.run([train_op, global_step], feed_dict={x: batch_xs, y_: batch_ys})"""

# TensorFlowOnSpark's mnist/tf map_fun: files read with tf.data, their format chosen by a flag in the graph.
FILES = """\
      folder = ctx.absolute_path(args.images)
      pattern = os.path.join(folder, args.format, "part-*")
      ds = tf.data.Dataset.list_files(pattern)
      ds = ds.shard(len(ctx.cluster_spec["worker"]), task_index).repeat()
      if args.format == "csv":
        ds = ds.interleave(tf.data.TextLineDataset, cycle_length=2, block_length=1)
        parse = parse_csv
      else:  # "tfr"
        ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=2, block_length=1)
        parse = parse_tfr
      ds = ds.map(parse).batch(8)
      iterator = ds.make_one_shot_iterator()
      x, y_ = iterator.get_next()"""
PARSERS = """\
  def parse_csv(line):
    values = tf.decode_csv(line, record_defaults=[[0.0]] * 4)
    return tf.stack(values[:3]), tf.stack(values[3:])

  def parse_tfr(record):
    features = tf.parse_single_example(record, {"x": tf.FixedLenFeature([3], tf.float32),
                                                "y": tf.FixedLenFeature([1], tf.float32)})
    return features["x"], features["y"]
"""


def map_fun(server="ctx.start_cluster_server(1, args.rdma)", imports="", feed="", input=DATASET, run=RUN):
    return MAP_FUN.format(server=server, imports=imports, feed=feed, input=input, run=run)


@pytest.mark.parametrize("server, protocol", [
    ("ctx.start_cluster_server(1, args.rdma)", '"grpc+verbs" if args.rdma else "grpc"'),
    ("TFNode.start_cluster_server(ctx, 1, False)", '"grpc"'),
], ids=["ctx", "TFNode"])
def test_a_tensorflow_input_map_fun_becomes_the_parameter_server_program_with_its_roles_from_ctx(server, protocol):
    result = run(map_fun(server=server, imports="from tensorflowonspark import TFNode\n  "))
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    assert "TFM103" in {f.rule for f in result.findings}
    code = result.source
    # TensorFlowOnSpark 2's start_cluster_server raises under TF 2: the same server, from the context.
    assert "start_cluster_server" not in code
    assert ("  cluster = tf.train.ClusterSpec(ctx.cluster_spec)\n  server = tf.distribute.Server(\n      cluster, "
            f"job_name=ctx.job_name, task_index=ctx.task_index, protocol={protocol})\n") in code
    assert 'if job_name == "ps":\n    server.join()' in code
    assert "if not (task_index == 0):" in code
    assert "tf.train.ClusterSpec(ctx.cluster_spec).as_dict()" in code
    assert "coordinator.schedule(train_step" in code and "MonitoredTrainingSession" not in code


def test_a_synchronous_map_fun_becomes_the_multi_worker_program_its_tasks_from_ctx():
    source = map_fun().replace(
        "train_op = tf.train.AdagradOptimizer(0.01).minimize(loss, global_step=global_step)",
        "opt = tf.train.SyncReplicasOptimizer(tf.train.AdagradOptimizer(0.01), replicas_to_aggregate=2,\n"
        "                                     total_num_replicas=2)\n"
        "      train_op = opt.minimize(loss, global_step=global_step)").replace(
        "hooks=[", "hooks=[opt.make_session_run_hook(task_index == 0), ")
    result = run(source)
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    code = result.source
    assert "start_cluster_server" not in code and "tf.distribute.Server" not in code  # the strategy serves
    assert "jobs = tf.train.ClusterSpec(ctx.cluster_spec).as_dict()" in code
    assert "task_type=ctx.job_name,\n        task_id=ctx.task_index," in code
    assert "tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)" in code


@pytest.mark.parametrize("imports, feed, call", [
    ("", "  tf_feed = ctx.get_data_feed(args.mode == 'train')\n", "ctx.get_data_feed"),
    ("from tensorflowonspark import TFNode\n  ", "  tf_feed = TFNode.DataFeed(ctx.mgr, args.mode == 'train')\n",
     "TFNode.DataFeed"),
    ("from com.yahoo.ml.tf import TFNode as node\n  ", "  tf_feed = node.DataFeed(ctx.mgr)\n", "node.DataFeed"),
], ids=["ctx.get_data_feed", "TFNode.DataFeed", "com.yahoo.ml.tf"])
def test_a_map_fun_fed_by_spark_is_left_with_one_tfm104_at_the_feed(imports, feed, call):
    source = map_fun(imports=imports, feed=feed, input=PLACEHOLDERS, run=FED)
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert finding.message.startswith(f"{LEFT}`{call}(...)` {SPARK}")
    assert finding.line == source.splitlines().index(feed.rstrip("\n")) + 1
    assert result.source == source


def test_tfnode_next_batch_in_a_helper_is_the_spark_feed_too():
    feed = "  def feed_dict(mgr, batch_size):\n    return TFNode.next_batch(mgr, batch_size)\n"
    source = map_fun(server="TFNode.start_cluster_server(ctx, 1, args.rdma)",
                     imports="from tensorflowonspark import TFNode\n  ", feed=feed, input=PLACEHOLDERS,
                     run="        _, step = sess.run([train_op, global_step], feed_dict=feed_dict(ctx.mgr, 8))")
    (finding,) = [f for f in run(source).findings if f.rule == "TFM104"]
    assert finding.message.startswith(f"{LEFT}`TFNode.next_batch(...)` {SPARK}")
    assert finding.line == source.splitlines().index("    return TFNode.next_batch(mgr, batch_size)") + 1


def test_a_next_batch_of_another_module_is_no_spark_feed():
    # mnist.train.next_batch of TensorFlow's tutorials is no TensorFlowOnSpark feed: the program is read as ever.
    source = map_fun(feed="  batch = mnist.train.next_batch(8)\n")
    assert not [f for f in run(source).findings if f.rule == "TFM104" and "Spark" in f.message]


# TensorFlowOnSpark's cifar10_train: a server started, no ps tasks, the graph and its session in the task.
OWN_GRAPH = """\
import tensorflow as tf
from com.yahoo.ml.tf import TFNode


def main_fun(argv, ctx):
  cluster_spec, server = TFNode.start_cluster_server(ctx, 1, False)
  with tf.Graph().as_default():
    global_step = tf.train.get_or_create_global_step()
    w = tf.Variable(tf.zeros([3, 1]))
    loss = tf.reduce_sum(tf.matmul(tf.ones([2, 3]), w))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
{session}
      while not sess.should_stop():
        sess.run(train_op)
"""
MTS = ("    with tf.train.MonitoredTrainingSession({chief}checkpoint_dir=\"/tmp/train\",\n"
       "                                           hooks=[tf.train.StopAtStepHook(last_step=10)]) as sess:")
SUPERVISED = ("    sv = tf.train.Supervisor(is_chief=(ctx.task_index == 0), logdir=\"/tmp/train\")\n"
              "    with sv.managed_session() as sess:")
OWN = ("each task trains a graph of its own in a session of its own process: the {session} names no master and no "
       "replica_device_setter places the graph on the cluster, so the tasks share no variable")


@pytest.mark.parametrize("session, opened", [
    (MTS.format(chief=""), "MonitoredTrainingSession"),
    (MTS.format(chief="is_chief=(ctx.task_index == 0), "), "MonitoredTrainingSession"),
    (MTS.format(chief="master='', is_chief=(ctx.task_index == 0), "), "MonitoredTrainingSession"),
    (SUPERVISED, "Supervisor's session"),
], ids=["neither-master-nor-is-chief", "is-chief-alone", "empty-master", "supervisor"])
def test_a_session_of_its_own_in_each_task_is_left_saying_so(session, opened):
    source = OWN_GRAPH.format(session=session)
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert finding.message.startswith(LEFT + OWN.format(session=opened)), finding.message
    assert finding.line == next(number for number, line in enumerate(source.splitlines(), 1)
                                if line.startswith("    with "))
    assert result.source == source


@pytest.mark.parametrize("master", ["", "master='', "], ids=["no-master", "empty-master"])
def test_a_placed_graph_in_a_session_of_no_server_is_left_saying_tf1_could_not_place_it(master):
    source = map_fun().replace("MonitoredTrainingSession(master=server.target, ", f"MonitoredTrainingSession({master}")
    assert source != map_fun()
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert finding.message.startswith(
        f"{LEFT}the graph is placed on the cluster's tasks but the MonitoredTrainingSession names no master: a "
        "session of the task's own process, which cannot reach the ps tasks holding the graph's variables (TF1 raised "
        '"Cannot assign a device"'), finding.message
    assert result.source == source


def test_a_map_fun_fed_by_spark_whose_session_is_not_read_gets_its_tfm104_at_the_feed_too():
    # TensorFlowOnSpark's mnist_mlp: a plain Session on the server, the feed read in its loop.
    source = dedent("""\
        def main_fun(args, ctx):
          import tensorflow as tf
          from tensorflowonspark import TFNode

          cluster, server = TFNode.start_cluster_server(ctx)
          if ctx.job_name == "ps":
            server.join()
          elif ctx.job_name == "worker":
            with tf.device(tf.train.replica_device_setter(cluster=cluster)):
              w = tf.Variable(tf.zeros([3, 1]))
            with tf.Session(server.target) as sess:
              tf_feed = TFNode.DataFeed(ctx.mgr)
              while not tf_feed.should_stop():
                sess.run(w, feed_dict={})
        """)
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert finding.message.startswith(f"{LEFT}`TFNode.DataFeed(...)` {SPARK}")
    assert finding.line == 12 and result.source == source


# TensorFlowOnSpark 2 running a map_fun on one executor: the task's context, its start_cluster_server raising as
# TensorFlowOnSpark 2's does under TF 2.
LAUNCHER = """\
import os
import sys
import types

from map_fun_module import map_fun


def deprecated(*args, **kwargs):
    raise Exception("DEPRECATED: Use higher-level APIs like `tf.keras` or `tf.estimator`")


job, index, ps_hosts, worker_hosts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ctx = types.SimpleNamespace(job_name=job, task_index=index, worker_num=index, start_cluster_server=deprecated,
                            cluster_spec={"ps": ps_hosts.split(","), "worker": worker_hosts.split(",")},
                            absolute_path=os.path.abspath)
map_fun(types.SimpleNamespace(rdma=False, steps=6, images="data", format=sys.argv[5]), ctx)
"""


def write_files(folder) -> None:
    """Four files of TFRecords (x: 3 floats, y: 1) and the same as CSV lines, in folder/tfr and folder/csv."""
    import tensorflow as tf

    for kind in ("tfr", "csv"):
        (folder / kind).mkdir(parents=True)
    for part in range(4):
        rows = [[float(part), float(i), 1.0, float(part + i)] for i in range(16)]
        with tf.io.TFRecordWriter(str(folder / "tfr" / f"part-{part}")) as writer:
            for row in rows:
                feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=row[:3])),
                           "y": tf.train.Feature(float_list=tf.train.FloatList(value=row[3:]))}
                writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
        (folder / "csv" / f"part-{part}").write_text("".join(",".join(map(str, row)) + "\n" for row in rows))


@pytest.mark.tensorflow
@pytest.mark.parametrize("input, format", [(DATASET, "-"), (FILES, "tfr"), (FILES, "csv")],
                         ids=["tensors", "files-tfr", "files-csv"])
def test_the_migrated_map_fun_runs_as_ps_and_two_workers_under_a_tensorflowonspark_2_context(tmp_path, input, format):
    import os
    import subprocess
    import sys

    source = map_fun(imports="import os\n  ", feed=PARSERS, input=input) + "    print('trained steps:', step)\n"
    migrated = run(source).source
    if input is FILES:
        write_files(tmp_path / "data")
    assert "start_cluster_server" not in migrated
    (tmp_path / "map_fun_module.py").write_text(migrated)
    (tmp_path / "launch.py").write_text(LAUNCHER)
    ps, *workers = (f"127.0.0.1:{free_port()}" for _ in range(3))
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}

    def task(job, index, **kwargs):
        return subprocess.Popen([sys.executable, "launch.py", job, str(index), ps, ",".join(workers), format],
                                cwd=tmp_path,
                                env=env, stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True, **kwargs)

    serving = [task("ps", 0), task("worker", 1)]
    try:
        chief = task("worker", 0)
        out, _ = chief.communicate(timeout=240)
        assert chief.returncode == 0, out[-3000:]
        assert "trained steps: 6" in out
        assert_serving(serving)
    finally:
        for process in serving:
            process.kill()
            process.wait()




def test_an_if_choosing_how_the_files_are_read_goes_into_the_dataset_function_as_the_same_if():
    result = run(map_fun(imports="import os\n  ", feed=PARSERS, input=FILES))
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    code = result.source
    dataset_fn = code[code.index("def dataset_fn():"):code.index("return ds\n")]
    # What the pipeline reads is made in the dataset function too, the flag's `if` as it was; nothing in the step.
    for line in ("folder = ctx.absolute_path(args.images)", 'pattern = os.path.join(folder, args.format, "part-*")',
                 'if args.format == "csv":\n        ds = ds.interleave(tf.data.TextLineDataset, cycle_length=2, '
                 'block_length=1)\n        parse = parse_csv\n      else:  # "tfr"\n        ds = ds.interleave(',
                 "ds = ds.map(parse).batch(8)"):
        assert line in dataset_fn
    step = code[code.index("def train_step"):]
    assert "ds" not in step.split("return strategy.run")[0].split() and "parse" not in step


@pytest.mark.parametrize("change, where, message", [
    ('folder = ctx.absolute_path(args.images)', 'folder = tf.identity(ctx.absolute_path(args.images))\n'
     '      print(folder)', None),
    ("ds = ds.shard(len(ctx.cluster_spec[\"worker\"]), task_index).repeat()",
     "ds = ds.interleave(tf.data.TFRecordDataset).shard(2, task_index)",
     "`ds.interleave(tf.data.TFRecordDataset).shard(2, task_index)`: each TF1 worker read its own shard; the "
     "migrated workers all make the chief's per-worker dataset"),
], ids=["read-by-the-graph-too", "shard-of-records"])
def test_what_the_per_worker_dataset_cannot_take_is_left_with_one_tfm104(change, where, message):
    source = map_fun(imports="import os\n  ", feed=PARSERS, input=FILES.replace(change, where))
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    if message is None:  # the folder is read besides the pipeline: it cannot move into the dataset function
        assert "`folder` is part of the graph's input and moves into the per-worker dataset function" in \
            finding.message
    else:
        assert message in finding.message
    assert result.source == source


def test_a_shard_of_the_shuffled_file_names_by_the_task_index_is_kept_with_a_note():
    result = run(map_fun(imports="import os\n  ", feed=PARSERS, input=FILES))
    (note,) = [f for f in result.findings if "list_files shuffled without a seed" in f.message]
    assert note.rule == "TFM103" and note.safety.value == "numeric"
    seeded = FILES.replace("list_files(pattern)", "list_files(pattern, seed=1)")
    (finding,) = [f for f in run(map_fun(imports="import os\n  ", feed=PARSERS, input=seeded)).findings
                  if f.rule == "TFM104"]
    assert "each TF1 worker read its own shard" in finding.message


SUMMARIES = """\
      tf.summary.scalar("loss", loss)
      summary_op = tf.summary.merge_all()
      init_op = tf.global_variables_initializer()

    writer = tf.summary.FileWriter("tensorboard_%d" % task_index, graph=tf.get_default_graph())
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task_index == 0),
                                           scaffold=tf.train.Scaffold(init_op=init_op, summary_op=summary_op),
                                           hooks=[tf.train.StopAtStepHook(last_step=args.steps)]) as sess:
      while not sess.should_stop():
        _, summary, step = sess.run([train_op, summary_op, global_step])
        if task_index == 0:
          writer.add_summary(summary, step)
"""


def test_merged_summaries_a_run_fetches_for_a_summary_writer_go_with_the_writer():
    source = map_fun().split("\n    with tf.train.MonitoredTrainingSession")[0] + "\n" + SUMMARIES
    result = run(source)
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    code = result.source
    assert "summary" not in code.replace("tf.summary ops", "") and "writer" not in code
    assert "      coordinator.schedule(train_step, args=(per_worker_iterator,))\n      scheduled_steps += 1\n" \
           "      step = scheduled_steps\n    coordinator.join()" in code
    (note,) = [f for f in result.findings if f.message.startswith("the run's merged summaries")]
    assert note.rule == "TFM109" and note.line == source.splitlines().index("        if task_index == 0:") + 1


def test_merged_summaries_read_besides_their_writer_are_left():
    source = (map_fun().split("\n    with tf.train.MonitoredTrainingSession")[0] + "\n"
              + SUMMARIES.replace("writer.add_summary(summary, step)", "writer.add_summary(summary, step)\n"
                                  "        print(len(summary))"))
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "`summary`, the summaries the run fetched, is used besides writing them" in finding.message
    assert result.source == source


def test_tf1_names_of_a_map_fun_importing_tensorflow_itself_are_respelled():
    # TensorFlowOnSpark's map_fun imports TensorFlow in its body: the module binds no `tf` of its own.
    source = map_fun(input=DATASET.replace("tf.ones([64, 3])", "tf.truncated_normal([64, 3])"),
                     feed="  tf.logging.info('started')\n")
    code = run(source).source
    assert "tf.random.truncated_normal([64, 3])" in code and "tf.compat.v1.logging.info('started')" in code
    assert code.startswith("import tensorflow as tf\n")


def test_a_mode_flag_whose_other_branch_runs_the_graph_within_a_statement_is_left_naming_the_run():
    # TensorFlowOnSpark's mnist/tf map_fun: `--mode inference` runs the predictions, not the train_op (modes.py,
    # tests/test_between_graph_modes.py); a run within a statement there is not migrated.
    source = map_fun(run='        if args.mode == "train":\n          _, step = sess.run([train_op, global_step])\n'
                         '        else:\n          print(sess.run(loss))')
    source = source.replace("is_chief=(task_index == 0),", "is_chief=(task_index == 0), checkpoint_dir=args.model,")
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "the branch not training must run the graph's tensors once" in finding.message
    assert finding.line == source.splitlines().index("          print(sess.run(loss))") + 1
    assert result.source == source


def test_a_name_of_the_pipeline_read_after_the_graph_is_left():
    source = map_fun(imports="import os\n  ", feed=PARSERS, input=FILES) + "    print(pattern)\n"
    result = run(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "`pattern`, part of its pipeline, is used elsewhere: it moves into the per-worker dataset function" \
        in finding.message
    assert finding.line == len(source.splitlines()) and result.source == source


def test_a_map_fun_importing_compat_v1_as_tf_in_the_function_gets_tensorflow_2_there():
    # `import tensorflow.compat.v1 as tf` inside map_fun (tf_upgrade_v2's spelling) would bind the generated
    # strategy code's `tf` to compat.v1, whose ParameterServerStrategy is TF1's.
    source = map_fun().replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf")
    result = run(source)
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    code = result.source
    assert "import tensorflow.compat.v1" not in code and "\n  import tensorflow as tf\n" in code
    assert "tf.distribute.experimental.ParameterServerStrategy(resolver)" in code
    assert "tf.compat.v1.reduce_mean(" in code
