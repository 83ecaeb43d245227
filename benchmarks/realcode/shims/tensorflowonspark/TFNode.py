"""TensorFlowOnSpark's TFNode functions that a map_fun calls with its context `ctx` (shims/tfos_context.py), as
TensorFlowOnSpark 1 gave them: start_cluster_server(ctx, num_gpus, rdma) starts the task's server (TF 1.x's graph
mode; under TF 2 it raises, as TensorFlowOnSpark 2's does), hdfs_path(ctx, path) is the path on the default file
system, the local one here; export_saved_model(sess, export_dir, tag_set, signatures) saves the session's graph as
a SavedModel of those signatures (TF 1.x's SavedModelBuilder), each `{'inputs': {key: tensor}, 'outputs': {key:
tensor}, 'method_name': ...}` (without a method name, its key). The Spark feed (DataFeed, next_batch) is not stood
in."""


def start_cluster_server(ctx, num_gpus=1, rdma=False):
    return ctx.start_cluster_server(num_gpus, rdma)


def hdfs_path(ctx, path):
    return ctx.absolute_path(path)


def export_saved_model(sess, export_dir, tag_set, signatures):
    import tensorflow as tf

    v1 = tf.compat.v1
    tensor_info = v1.saved_model.utils.build_tensor_info
    signature_defs = {key: v1.saved_model.signature_def_utils.build_signature_def(
        inputs={name: tensor_info(tensor) for name, tensor in signature["inputs"].items()},
        outputs={name: tensor_info(tensor) for name, tensor in signature["outputs"].items()},
        method_name=signature.get("method_name", key)) for key, signature in signatures.items()}
    builder = v1.saved_model.builder.SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(sess, tag_set.split(","), signature_def_map=signature_defs,
                                         clear_devices=True)
    builder.save()
