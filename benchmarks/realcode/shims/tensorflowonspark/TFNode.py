"""TensorFlowOnSpark's TFNode functions that a map_fun calls with its context `ctx` (shims/tfos_context.py), as
TensorFlowOnSpark 1 gave them: start_cluster_server(ctx, num_gpus, rdma) starts the task's server (TF 1.x's graph
mode; under TF 2 it raises, as TensorFlowOnSpark 2's does), hdfs_path(ctx, path) is the path on the default file
system, the local one here. The Spark feed (DataFeed, next_batch) and export_saved_model are not stood in."""


def start_cluster_server(ctx, num_gpus=1, rdma=False):
    return ctx.start_cluster_server(num_gpus, rdma)


def hdfs_path(ctx, path):
    return ctx.absolute_path(path)
