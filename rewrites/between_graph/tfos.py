"""TensorFlowOnSpark's `map_fun(args, ctx)` programs: what keeps one from becoming the ParameterServerStrategy
program.

TensorFlowOnSpark's launcher (`TFCluster.run(sc, map_fun, args, ...)`) runs the user's `map_fun(args, ctx)` on every
executor, the task's role in `ctx.job_name` / `ctx.task_index` and its server from `ctx.start_cluster_server(...)`
(or `TFNode.start_cluster_server(ctx, ...)`). That launcher and context are TensorFlowOnSpark 2's too, whose TF2
examples keep `map_fun(args, ctx)` and rewrite only its body; so the body is migrated like any between-graph
program's (the roles stay read from `ctx`, the cluster is the one of the server it started) and the launcher is left
as it is. The TF2 examples' own target, a MultiWorkerMirroredStrategy with no ps tasks, is synchronous: it would
train otherwise than an asynchronous parameter-server map_fun did.

TensorFlowOnSpark 2's `start_cluster_server` raises under TF 2 ("DEPRECATED"), and TF 2 has no tf.train.Server:
`cluster, server = ctx.start_cluster_server(...)` becomes the cluster and server it made, from the context
(`tf.train.ClusterSpec(ctx.cluster_spec)`, `tf.distribute.Server(cluster, job_name=ctx.job_name,
task_index=ctx.task_index)`, protocol "grpc+verbs" where rdma). Its GPU reservation goes: TensorFlowOnSpark reserves
the executor's GPUs before map_fun runs.

What cannot be carried over is TensorFlowOnSpark's InputMode.SPARK: a map_fun that reads the batches Spark pushes
into its executor (`ctx.get_data_feed(...)`, `TFNode.DataFeed(ctx.mgr)`, `TFNode.next_batch(mgr, n)`). The
ClusterCoordinator's dataset_fn runs on the remote workers, which cannot reach an executor's feed queue (a
multiprocessing manager local to that executor), and TF1's workers each trained on the partitions their own
executor was fed: such a program is left, its TFM104 at the first read of the feed.
"""

from __future__ import annotations

import libcst as cst

from rewrites.between_graph.synchronous import Server
from rewrites.syntax import bind_arguments, source, subtree

# Where TensorFlowOnSpark's TFNode is imported from: its package, and its first releases' (com.yahoo.ml.tf).
TFOS_MODULES = ("tensorflowonspark", "com.yahoo.ml.tf")
FEED_FUNCTIONS = ("DataFeed", "next_batch")  # TFNode's: reading Spark's feed
FEED_METHODS = ("get_data_feed",)  # the context's: ctx.get_data_feed(train_mode)
SPARK_FEED = ("`{call}` reads the batches Spark feeds this executor (TensorFlowOnSpark's InputMode.SPARK): a "
              "ParameterServerStrategy's dataset_fn runs on the remote workers, which cannot read an executor's "
              "feed, and each TF1 worker trained on its own executor's partitions (TensorFlowOnSpark's TF2 examples "
              "feed Spark's data only to a synchronous MultiWorkerMirroredStrategy); read the data with tf.data in "
              "map_fun (InputMode.TENSORFLOW) and migrate again, or migrate the program by hand")
STARTS = {"ctx": ("num_gpus", "rdma"), "TFNode": ("ctx", "num_gpus", "rdma")}  # ctx.f(...), TFNode.f(ctx, ...)
STARTED = ("TensorFlowOnSpark's start_cluster_server raises under TF 2: the task's server is a tf.distribute.Server "
           "of `{ctx}`'s cluster_spec, job_name and task_index (TensorFlowOnSpark reserves the executor's GPUs before "
           "map_fun runs)")


def spark_feed(module: cst.Module) -> tuple[cst.Call, str] | None:
    """The first call of the module reading TensorFlowOnSpark's Spark feed, and why that stops its program."""
    tfnode = tfnode_names(module)
    for node in subtree(module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and (
                    node.func.attr.value in FEED_METHODS
                    or node.func.value.value in tfnode and node.func.attr.value in FEED_FUNCTIONS):
            return node, SPARK_FEED.format(call=f"{source(node.func)}(...)")
    return None


def tfnode_names(module: cst.Module) -> set[str]:
    """The names TensorFlowOnSpark's TFNode is bound to (`from tensorflowonspark import TFNode`), anywhere."""
    found = set()
    for node in subtree(module):
        if isinstance(node, cst.ImportFrom) and node.module is not None \
                and source(node.module) in TFOS_MODULES and not isinstance(node.names, cst.ImportStar):
            found |= {alias.evaluated_alias or alias.evaluated_name for alias in node.names
                      if alias.evaluated_name == "TFNode"}
    return found


def cluster_server(statement: cst.CSTNode, name: str, module: cst.Module
                   ) -> tuple[Server, list[cst.BaseStatement], str] | None:
    """`cluster, name = ctx.start_cluster_server(num_gpus, rdma)` (or `TFNode.start_cluster_server(ctx, ...)`): the
    server it starts, the TF 2 statements starting the same, and the note saying so."""
    if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(assign := statement.body[0], cst.Assign)
            and len(assign.targets) == 1 and isinstance(target := assign.targets[0].target, cst.Tuple)
            and [type(element.value) for element in target.elements] == [cst.Name, cst.Name]
            and target.elements[1].value.value == name and isinstance(call := assign.value, cst.Call)
            and isinstance(call.func, cst.Attribute) and call.func.attr.value == "start_cluster_server"
            and isinstance(call.func.value, cst.Name)):
        return None
    tfnode = call.func.value.value in tfnode_names(module)
    args = bind_arguments(call, STARTS["TFNode" if tfnode else "ctx"])
    if args is None or tfnode and "ctx" not in args:
        return None
    ctx = args["ctx"][1].value if tfnode else call.func.value
    rdma = args["rdma"][1].value if "rdma" in args else None
    protocol = '"grpc"' if rdma is None or isinstance(rdma, cst.Name) and rdma.value == "False" \
        else f'"grpc+verbs" if {source(rdma)} else "grpc"'
    cluster, context = target.elements[0].value.value, source(ctx)
    code = (f"{cluster} = tf.train.ClusterSpec({context}.cluster_spec)\n"
            f"{name} = tf.distribute.Server(\n"
            f"    {cluster}, job_name={context}.job_name, task_index={context}.task_index, protocol={protocol})\n")
    new = list(cst.parse_module(code).body)
    new[0] = new[0].with_changes(leading_lines=statement.leading_lines)
    server = Server(name, f"{context}.cluster_spec", protocol, statement,
                    cst.parse_expression(f"{context}.job_name"), cst.parse_expression(f"{context}.task_index"))
    return server, new, STARTED.format(ctx=context)
