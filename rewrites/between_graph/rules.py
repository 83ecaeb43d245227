"""The pages of the between-graph family's rules: what `tf-migrate rules TFMnnn` prints
(tests/test_rules_cmd.py runs their examples).

TFM103 between-graph-program

What it does: a between-graph training program (each task starts a Server for its job name and task index,
parameter server tasks join(), every worker builds the graph under tf.device(replica_device_setter(...)) and
runs its train_op in a MonitoredTrainingSession loop until a StopAtStepHook, or in a Supervisor's session loop
until its own step limit or `if step >= N: break`, or until its tasks are stopped: a loop with no step limit
over an input that does not end, whose chief then saves a checkpoint on TF1's session's timer) becomes a TensorFlow 2 program: TF1's chief worker builds a
ParameterServerStrategy over the same cluster, creates the variables and a Keras optimizer in its scope, and
schedules each step, a tf.function running the TF1 operations under a GradientTape, on the workers with a
ClusterCoordinator, from the program's own loop; it returns what the run fetched besides the train op and the
global step (the loss, or one other tensor the graph computes, as an accuracy of the batch), read where the loop
reads it. A `value = sess.run(tensor, feed_dict=...)` after the loop
becomes that tensor computed on the chief with the trained variables; one in the loop (an accuracy run every N
steps) is computed there once the steps scheduled so far are done (of a tf.data graph: on a worker, of its next
batch), `tf.train.global_step(sess, global_step)` the optimizer's step count. The other workers serve it. A flag
choosing in the loop between training and running the graph's tensors otherwise (TensorFlowOnSpark's `if
args.mode == "train": ... else: labels, preds = sess.run([label, prediction])`) makes the same choice at run
time: otherwise each worker runs them on its own input, with the variables restored from the checkpoint. The command
line stays as it was, so the launch scripts still start every task. mnist_replica's `--existing_servers` (the
Server made only under `if not FLAGS.existing_servers:`, the session opened on a worker's URL where the flag
holds): with the flag, the program starts no server, TF1's chief's client drives the servers running elsewhere
and the other clients end, saying so. The session and its loop may be written inside the device block, after
the graph. As the cloudml-samples trainers write it, the device block may stand alone in a `with
tf.Graph().as_default() as graph:` whose graph the Supervisor is given (`Supervisor(graph, ...)`) (or, as the
census trainers write it, a `with tf.Graph().as_default():` holds both the graph and its session), its device held
in a name bound once to a replica_device_setter, and the session opened again after an AbortedError (`while
should_retry: try: ... except tf.errors.AbortedError: should_retry = True`): those go, with a note (the
ClusterCoordinator runs a failed worker's step again elsewhere). Where they bind the device, the session's master
and its config in `if self.cluster:` and bind them to `''`/None in its `else:` (training without a cluster), the
program chooses by the same test: the coordinator on the cluster, the default strategy and each step run in the
process without (an ending tf.data input stops either loop, as TF1's session stopped); a chief named `master`
(Cloud ML Engine's TF_CONFIG) is the coordinator's task, left out of the strategy's cluster. A device and target a
function of the module returns (`device, target = device_and_target()`, the function starting the Server, joining it
on the ps, and returning `(replica_device_setter(...), server.target)`) are read as if made there: the function
returns its server instead, and a single-machine run it chose (`return (None, "")` under a test) raises, with a
note. The
session's ConfigProto goes: soft placement is TF2's default, and ParameterServerStrategy sets the device filters
(a worker sees the ps tasks and the coordinator); other options get a TFM103 note. A graph trained by a
SyncReplicasOptimizer
(synchronous training) becomes a MultiWorkerMirroredStrategy program every worker runs instead; one choosing it
at run time, as TensorFlow's mnist_replica example does (`if FLAGS.sync_replicas:` wrapping the optimizer, then
making its local init ops, chief queue runner and tokens for a Supervisor chosen by the same flag), chooses its
strategy from the same flag, MultiWorkerMirroredStrategy or the ClusterCoordinator, and drops that TF1
machinery (the chief's made under `if FLAGS.sync_replicas and is_chief:` too); a replicas_to_aggregate computed
at run time is checked then (the synchronous program refuses to start unless it is the number of workers). TF
0.11's SyncReplicasOptimizer, given replica_id, summed the workers' gradients where TF 1.0's averages them: its
synchronous step sums them too. A
MonitoredTrainingSession's scaffold (the initializers TF1 made by default, a Saver's max_to_keep and
keep_checkpoint_every_n_hours, which the CheckpointManager takes, merge_all's summary_op), its SummarySaverHook and a
CheckpointSaverHook into its checkpoint_dir (in hooks or chief_only_hooks, which the chief ran: the chief drives the
training now), a chief-only hook class of the program whose one method `end(self, session)` only evaluates
tensors of the graph and prints (run after the loop) are carried over; a queue-runner input in the graph, read with
tf.data by TFM008, becomes the
per-worker dataset, and so does one a function of the module the graph calls once builds and returns the batches
of (`return make_one_shot_iterator(<pipeline>).get_next()`, or those batches unpacked into names it returns): the
function returns the pipeline; an input that may end (no `.repeat()` without a count) stops the loop where it ends,
as TF1's session stopped. A function of the
module the graph calls once (or of another module given with it, `model.inference(...)`) that makes variables (with tf.Variable, or helpers returning one: the Deep-MNIST
tutorials' `deepnn(x)` and `weight_variable(shape)`) becomes a tf.Module of its name in CamelCase: its __init__
makes the variables as the function's statements made them, once, in the strategy's scope; its __call__ runs the
rest in the step; a placeholder the function returns is fed as the graph's own; a variable made in a `with
tf.name_scope("s"):` block of it (the MNIST tutorials' `inference`, each layer's `weights` in a scope of its own)
is its attribute `s_weights`, TF1's `s/weights`. One making the optimizer and the global step and returning
`optimizer.minimize(loss, global_step=...)` (the MNIST tutorials' `train_op = training(loss, learning_rate)`) gives
the TF2 optimizer, made with the graph's arguments; the function goes, and so does a function of the module the
session reads the global step back with (`get_global_step(sess.graph)`: the optimizer's step). A function the
graph calls (`logits = model.inference(images, hidden1)`, of another module given with it, or of the graph's
module) that makes variables with TF1's layers (tf.contrib's that tf-slim keeps too), get_variable and
variable_scope is kept as TF1 code, run in a Keras layer whose call is decorated with
track_tf1_style_variables: made and first called in the strategy's scope on
Keras inputs of its tensors' specs (the batch's, a placeholder's), its variables named as TF1 named them, called in
the step; its module becomes a TF2 module, changed with the graph's. An in-graph
program (the chief alone places ops on the cluster's tasks, `with tf.device("/job:worker/task:0")`, and runs them in
a plain `with tf.Session(server.target) as sess:`, the other tasks `server.join()`) becomes TF2's when its graph has
no variables, optimizers, placeholders or random ops: the chief connects to the cluster as its own task
(tf.config.experimental_connect_to_cluster) instead of starting a Server, the ops run eagerly on the devices named,
`sess.run(t)` becomes `t.numpy()`, and the other tasks start their tf.distribute.Server where they join it.
A TensorFlowOnSpark `map_fun(args, ctx)` (its role in ctx.job_name / ctx.task_index, its server from
ctx.start_cluster_server) is migrated the same way, its launcher (TFCluster.run) left as it is: TensorFlowOnSpark 2
keeps that launcher and ctx, and its TF2 examples' MultiWorkerMirroredStrategy is synchronous where the map_fun was
not. Its start_cluster_server, which raises under TF 2, becomes the tf.distribute.Server it started, of
ctx.cluster_spec, ctx.job_name and ctx.task_index.
An export function of the module (TensorFlowOnSpark's `export_fun(args)`: a serving graph of placeholders and variables
named as the training's, a `tf.train.Saver()` restored in a `tf.Session()` of its own from the model folder's latest
checkpoint, `TFNode.export_saved_model(sess, dir, SERVING, signatures)` or `tf.saved_model.simple_save`) restores
its variables from the migrated training's checkpoints (`<folder>/tf2`, each the variable of its TF1 name) and
saves a tf.function per signature (the same input and output keys) with tf.saved_model.save; classify and regress
signatures, other tags, other uses of its session are left (TFM104).
Why: TensorFlow 2 runs no sessions, placeholders or replica_device_setter graphs; one client drives a
parameter-server cluster.
What may differ: float results, in the last bits; prove the migration with `tf-migrate parity`.

Before:

    import tensorflow.compat.v1 as tf1


    def main(cluster, job_name, task_index, batch_x, batch_y):
      server = tf1.train.Server(cluster, job_name=job_name, task_index=task_index)
      if job_name == "ps":
        server.join()
        return
      with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
        x = tf1.placeholder(tf1.float32, [None, 3])
        y = tf1.placeholder(tf1.float32, [None, 1])
        weights = tf1.get_variable("weights", [3, 1])
        global_step = tf1.train.get_or_create_global_step()
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
      hooks = [tf1.train.StopAtStepHook(last_step=20)]
      with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0, hooks=hooks) as sess:
        while not sess.should_stop():
          _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})

After:

    ...
      if not (task_index == 0):
        # TF1's chief drives the cluster's training now; the other workers serve it.
        server.join()
    ...
      strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
      with strategy.scope():
        weights = tf.Variable(tf.compat.v1.glorot_uniform_initializer()([3, 1]), name="weights")
        optimizer = keras.optimizers.legacy.SGD(learning_rate=0.1)
      coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

      # What is fed is converted to the placeholders' dtypes, as TF1 converted it.
      @tf.function(input_signature=[
          tf.TensorSpec([None, 3], tf1.float32),
          tf.TensorSpec([None, 1], tf1.float32),
      ])
      def train_step(x, y):
    ...
      scheduled_steps = int(optimizer.iterations)
      while scheduled_steps < 20:
        loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y))
        scheduled_steps += 1
      coordinator.join()

Finding:

    17:3: TFM103 [numeric] between-graph training -> TF1's chief drives the cluster with a ClusterCoordinator of
    ParameterServerStrategy, the other workers serve; prove it with tf-migrate parity

TFM104 between-graph-manual

What it does: reports a between-graph program in a shape the migration cannot carry over safely and leaves it
as it is (only the renames of TFM101 and TFM102 apply, which TF1 runs too): a SyncReplicasOptimizer with backup
workers or moving averages (or, chosen by a flag, its TF1 machinery used besides the Supervisor and the chief's
start, a Supervisor chosen by another test), a plain Session (but an in-graph program of stateless ops: TFM103;
the finding names the first variable, optimizer, placeholder, random op or Keras call of another), queue runners
TFM008 does not read with tf.data, hooks other than StopAtStepHook, SummarySaverHook and a CheckpointSaverHook
into the session's checkpoint_dir (a LoggingTensorHook, a hook class of the program but such a chief-only `end`),
Scaffold arguments other
than those TFM103 carries over (init_fn, a Saver of some variables), a Saver made beside the loop used otherwise
than to save once after it into the session's checkpoint folder, layers other than Dense, partitioners other than
one axis-0 partitioner of get_variable, graph collections, a function of the program (of the graph's module
or of another one it imports) called in the graph that makes placeholders or Keras layers, reads queues or writes
summaries, collections or globals, or makes variables other than as TFM103 reads (with tf.Variable in another module,
or with TF1's layers in one not given with the graph's, or calling a third module, or with tf.contrib, an optimizer,
TF1's metrics or a partitioner, or on a tensor of no known spec; one named elsewhere too, a variable made from its tensors, a placeholder it does not return: the step would do it at
every step; the finding names its file and line; one reading a tf.data input: its pipeline is read where the
graph's own block builds it, or returned as a one-shot iterator's batches (or an expression of them,
`features, features.pop(LABEL)`) by a function called nowhere else (but in another TF1 graph of the graph's
module, `with graph.as_default():`, where the call reads the returned pipeline's one-shot iterator), of no tensor
of the graph: of the graph's module, or of another given with it, which is changed with it and becomes a TF2 module), the module of such a function turning TF 2's behaviour off when imported,
a call into another module of the program of anything but a function defined at its top, a function of an imported
module whose file is not found from the program's folder (the finding names the import), a graph's device held in
a name that is a replica_device_setter in one branch only (the program trains without the cluster in the other;
migrated where that `else:` binds the device, the session's master and its config to `''`/None alone: the same
model then trains in the process, by the same test), a graph statement assigning to an attribute (`self.tensors =
...`), a function defined in the graph's block called there (only one its tf.data pipeline maps is read), `while
True:` without an `if ...: break` of its own, a loop with no step limit whose session saved every N steps (`save_checkpoint_steps`) or whose steps are
synchronous, a feed dict held in a name read elsewhere, a session opened on another
target in one branch of an `if`
unless the `else` opens it on `server.target` of a Server made only under `if not <the test>:`, other uses of the
session or of its Supervisor (a Supervisor kept in an attribute, `self.sv = tf.train.Supervisor(...)`, is read as
a name in the one method of its class binding it, which places the graph; used in another method, the finding is
there), a session opened on no master (each task trains a graph of its own, or one placed on ps tasks it
cannot reach), a replica_device_setter given neither a cluster nor ps tasks (TF1's setter is then None: each task
kept the variables on its own task), a
TensorFlowOnSpark map_fun reading the batches Spark feeds its executor (InputMode.SPARK: ctx.get_data_feed,
TFNode.DataFeed, TFNode.next_batch; the coordinator's dataset_fn runs on remote workers, which cannot read that
feed), a tf.data pipeline reading a name the step computes or `shard(n, <task index>)` of anything but the file
names an unseeded list_files shuffled (every worker makes the chief's dataset function), an `if` in the loop
choosing the runs of a step (but a flag's, training or running a tf.data graph's tensors once otherwise, in a
`while not sess.should_stop():` holding nothing else), a name neither TF 1.x nor TF 2 has in a module made TF 2's
(TF 0.x's tf.histogram_summary; its tf.mul, sub, neg, pack, unpack take TF 1.x's names). A module with TF1-only
cluster code that makes
a session in none of the shapes read (a Supervisor kept in an attribute bound elsewhere; a session a function
returns; a graph under replica_device_setter trained by a session made elsewhere: the finding names the parameter
the function is given it by, and a caller's plain Session on no server, which trained the graph in each task's own
process) gets one finding too, at the first of them, as does a graph placed by a replica_device_setter a call
returns other than as TFM103 reads it (`device, target = device_and_target()` of a function of the module, called
once, starting the Server whose target it returns with the setter and joining it on the ps). So does a module
starting a Server of its cluster whose training is a TF1 Estimator the Estimator rewrite left (its TFM302 says why):
at the Estimator's driver, `train_and_evaluate`.
One finding per program: at the first thing that stopped it, the graph read before its session.
Why: each of these does something in TF1's session the TensorFlow 2 program would not do the same way.
What may differ: the program is unchanged; the finding points at the construct and says what to do.

Before:

    import tensorflow.compat.v1 as tf1


    def main(cluster, job_name, task_index, batch_x, batch_y):
      server = tf1.train.Server(cluster, job_name=job_name, task_index=task_index)
      if job_name == "ps":
        server.join()
        return
      with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
        x = tf1.placeholder(tf1.float32, [None, 3])
        y = tf1.placeholder(tf1.float32, [None, 1])
        weights = tf1.get_variable("weights", [3, 1])
        global_step = tf1.train.get_or_create_global_step()
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
      hooks = [tf1.train.StopAtStepHook(last_step=20), tf1.train.LoggingTensorHook({"loss": loss}, every_n_iter=10)]
      with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0, hooks=hooks) as sess:
        while not sess.should_stop():
          _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})

After:

    ...
      hooks = [tf1.train.StopAtStepHook(last_step=20), tf1.train.LoggingTensorHook({"loss": loss}, every_n_iter=10)]
      with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0, hooks=hooks) as sess:
    ...

Finding:

    16:52: TFM104 [manual] between-graph program left as it is: `tf1.train.LoggingTensorHook`: a hook other than
    StopAtStepHook(last_step=...), SummarySaverHook and CheckpointSaverHook: rewrite it as code around the migrated
    loop by hand

TFM105 between-graph-partitioner

What it does: reports where the partitioner of a get_variable, moved onto ParameterServerStrategy, now also
splits other variables: at the first variable the program creates without one.
Why: ParameterServerStrategy takes one partitioner, which it applies to every variable created in its scope.
What may differ: only where the variables are placed (split across the parameter servers); the numbers are the
same.

Before:

    import tensorflow.compat.v1 as tf1


    def main(cluster, job_name, task_index, batch_x, batch_y):
      server = tf1.train.Server(cluster, job_name=job_name, task_index=task_index)
      if job_name == "ps":
        server.join()
        return
      with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
        x = tf1.placeholder(tf1.float32, [None, 3])
        y = tf1.placeholder(tf1.float32, [None, 1])
        weights = tf1.get_variable("weights", [3, 1], partitioner=tf1.fixed_size_partitioner(3))
        bias = tf1.get_variable("bias", [1])
        global_step = tf1.train.get_or_create_global_step()
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights) + bias)
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
      hooks = [tf1.train.StopAtStepHook(last_step=20)]
      with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0, hooks=hooks) as sess:
        while not sess.should_stop():
          _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})

After:

    ...
      strategy = tf.distribute.experimental.ParameterServerStrategy(
          resolver,
          variable_partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(3))
      with strategy.scope():
        weights = tf.Variable(tf.compat.v1.glorot_uniform_initializer()([3, 1]), name="weights")
        bias = tf.Variable(tf.compat.v1.glorot_uniform_initializer()([1]), name="bias")
    ...

Finding:

    13:12: TFM105 [exact] the partitioner moves onto ParameterServerStrategy, which applies it to every variable the
    program creates, so the variables made here, not partitioned in TF1, are split too (placement only: the numbers
    are the same)

TFM106 between-graph-numerics

What it does: migrates, with TFM103, a piece of the graph whose TensorFlow 2 counterpart differs from TF1 in a
known way, and says how in the finding: an optimizer whose Keras counterpart computes slightly differently, or
a read of the global step in the run that increments it.
Why: the TensorFlow 2 program is the closest there is; the difference is small and said rather than hidden.
What may differ: what the finding says; prove the migration with `tf-migrate parity`.

Before:

    import tensorflow.compat.v1 as tf1


    def main(cluster, job_name, task_index, batch_x, batch_y):
      server = tf1.train.Server(cluster, job_name=job_name, task_index=task_index)
      if job_name == "ps":
        server.join()
        return
      with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
        x = tf1.placeholder(tf1.float32, [None, 3])
        y = tf1.placeholder(tf1.float32, [None, 1])
        weights = tf1.get_variable("weights", [3, 1])
        global_step = tf1.train.get_or_create_global_step()
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
      hooks = [tf1.train.StopAtStepHook(last_step=20)]
      with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0, hooks=hooks) as sess:
        while not sess.should_stop():
          _, step, loss_value = sess.run([train_op, global_step, loss], feed_dict={x: batch_x, y: batch_y})

After:

    ...
      while scheduled_steps < 20:
        loss_value = coordinator.schedule(train_step, args=(batch_x, batch_y))
        scheduled_steps += 1
        step = scheduled_steps
      coordinator.join()

Finding:

    19:7: TFM106 [numeric] TF1 read the global step in the run that incremented it, racing the increment (most
    often the value before it); the migrated loop reads it after the step

TFM108 between-graph-checkpoints

What it does: a session that wrote checkpoints (a Supervisor's logdir, a MonitoredTrainingSession's
checkpoint_dir) gets a tf.train.CheckpointManager in the tf2 folder of that directory: the migrated program
resumes from it, or else from the TF1 program's latest checkpoint there (its variables, the optimizer's slots
and the step), and saves when training ends, keeping as many checkpoints as the session's Saver (a Scaffold's, a
CheckpointSaverHook's; 5 by default, as TF1). A `saver = tf.train.Saver(...)` of every variable whose one use is
`saver.save(sess, <that directory>)` after the loop (kubeflow's e2e MNIST, each worker saving once at the end) is
that save, written by the chief; `sess.graph._unsafe_unfinalize()` goes, the migrated program having no graph to
finalize, and so does `sv.start_queue_runners(sess)` in a module making no TF1 input queue (a TFM103 note each).
Why: TensorFlow 2 has no session to save checkpoints; a run that stops can carry on where it was, from TF1's
training too.
What may differ: when checkpoints are written: TF1 also saved on a timer. TF1's own files are only read.

Before:

    import tensorflow.compat.v1 as tf1


    def main(cluster, job_name, task_index, batch_x, batch_y):
      server = tf1.train.Server(cluster, job_name=job_name, task_index=task_index)
      if job_name == "ps":
        server.join()
        return
      with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
        x = tf1.placeholder(tf1.float32, [None, 3])
        y = tf1.placeholder(tf1.float32, [None, 1])
        weights = tf1.get_variable("weights", [3, 1])
        global_step = tf1.train.get_or_create_global_step()
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
      hooks = [tf1.train.StopAtStepHook(last_step=20)]
      with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0, hooks=hooks,
                                             checkpoint_dir="/tmp/train") as sess:
        while not sess.should_stop():
          _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})

After:

    import os
    ...
      checkpoint = tf.train.Checkpoint(optimizer=optimizer, weights=weights)
      manager = tf.train.CheckpointManager(
          checkpoint, os.path.join("/tmp/train", "tf2"), max_to_keep=5)
      # Carry on from the latest checkpoint: this program's own, or else the TF1 program's.
      tf1_checkpoint = tf.train.latest_checkpoint("/tmp/train")
      if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint)
      elif tf1_checkpoint:
    ...
      coordinator.join()
      manager.save()

Finding:

    18:57: TFM108 [exact] checkpoints of TF1's session -> a tf.train.CheckpointManager in os.path.join("/tmp/train",
    "tf2"): the program resumes from it, or else from TF1's latest checkpoint (its variables, the optimizer's slots,
    the step), and saves when training ends (TF1 also saved on a timer); TF1's own files are only read

TFM109 between-graph-summaries

What it does: tf.summary operations in the graph, which only fed TF1's summary writers, go, and so do a
MonitoredTrainingSession's SummarySaverHook and its Scaffold's summary_op (each with a finding of its own), and the
merged summaries a run fetches only to write them to a FileWriter (`writer.add_summary(summary, step)`), the
writer with them.
Why: the migrated step has no session that writes them; they do not change what the step computes.
What may differ: nothing the program computes; to keep the summaries, log from the loop with a
tf.summary.create_file_writer.

Before:

    import tensorflow.compat.v1 as tf1


    def main(cluster, job_name, task_index, batch_x, batch_y):
      server = tf1.train.Server(cluster, job_name=job_name, task_index=task_index)
      if job_name == "ps":
        server.join()
        return
      with tf1.device(tf1.train.replica_device_setter(cluster=cluster)):
        x = tf1.placeholder(tf1.float32, [None, 3])
        y = tf1.placeholder(tf1.float32, [None, 1])
        weights = tf1.get_variable("weights", [3, 1])
        global_step = tf1.train.get_or_create_global_step()
        loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
        tf1.summary.scalar("loss", loss)
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
      hooks = [tf1.train.StopAtStepHook(last_step=20)]
      with tf1.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0, hooks=hooks) as sess:
        while not sess.should_stop():
          _, loss_value = sess.run([train_op, loss], feed_dict={x: batch_x, y: batch_y})

After:

    ...
      with strategy.scope():
        weights = tf.Variable(tf.compat.v1.glorot_uniform_initializer()([3, 1]), name="weights")
        optimizer = keras.optimizers.legacy.SGD(learning_rate=0.1)
    ...
          with tf.GradientTape() as tape:
            loss = tf1.losses.mean_squared_error(y, tf1.matmul(x, weights))
          variables = [weights]
    ...

Finding:

    15:5: TFM109 [exact] tf.summary ops fed TF1's summary writers: the migrated step computes the same without them;
    log from the loop with a tf.summary.create_file_writer if you need them
"""
