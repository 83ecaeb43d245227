"""Where the parts of tf.contrib that live on after TF 1.x live now (shared by the rules that move or report them).

TensorFlow 2 has no `tf.contrib`. Three parts of it were moved, unchanged, elsewhere:

- slim, and contrib.layers' layers, initializers and regularizers, and contrib.framework's arg_scope and variable
  helpers: the tf-slim package (`import tf_slim`), the same code (tf-slim 1.1.0);
- contrib.framework.nest: `tf.nest`;
- contrib.framework's global step functions: `tf.train`'s (TF1's own, which the Estimator migration reads);
- contrib.rnn's cells and static RNNs that were TF1's own, re-exported: `tf.nn.rnn_cell`'s and `tf.nn`'s;
- contrib.eager's `list_devices()`, the names of the devices: `tf.config.list_logical_devices()`' names;
- contrib.metrics' streaming metrics that returned tf.metrics' (`streaming_accuracy`, `streaming_mean`, ...): those.

And one has an equal in Python: contrib.training's HParams, for a program that only reads and sets its values.
"""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import subtree

# tf-slim 1.1.0's top-level names (functions, classes and its modules).
TF_SLIM = frozenset({
    "GDN", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "RevBlock", "VariableDeviceChooser", "adaptive_clipping_fn",
    "add_arg_scope", "add_model_variable", "apply_regularization", "arg_scope", "arg_scope_func_key",
    "arg_scoped_arguments", "assert_global_step", "assert_or_get_global_step", "assign_from_checkpoint",
    "assign_from_checkpoint_fn", "assign_from_values", "assign_from_values_fn", "avg_pool2d", "avg_pool3d",
    "batch_norm", "bias_add", "bucketize", "conv1d", "conv2d", "conv2d_in_plane", "conv2d_transpose", "conv3d",
    "conv3d_transpose", "convolution", "convolution1d", "convolution2d", "convolution2d_in_plane",
    "convolution2d_transpose", "convolution3d", "convolution3d_transpose", "create_global_step", "current_arg_scope",
    "dense_to_sparse", "dropout", "elu", "filter_variables", "flatten", "fully_connected", "gdn", "get_global_step",
    "get_local_variables", "get_model_variables", "get_or_create_global_step", "get_trainable_variables",
    "get_unique_variable", "get_variable_full_name", "get_variables", "get_variables_by_name",
    "get_variables_by_suffix", "get_variables_to_restore", "global_variable", "group_norm", "has_arg_scope",
    "images_to_sequence", "instance_norm", "l1_l2_regularizer", "l1_regularizer", "l2_regularizer", "layer_norm",
    "legacy_fully_connected", "legacy_linear", "legacy_relu", "linear", "local_variable", "max_pool2d", "max_pool3d",
    "maxout", "model_variable", "one_hot_encoding", "optimize_loss", "pool", "recompute_grad", "relu", "relu6",
    "repeat", "rev_block", "scale_gradient", "separable_conv2d", "separable_convolution2d", "sequence_to_images",
    "softmax", "spatial_softmax", "stack", "sum_regularizer", "summarize_activation", "summarize_activations",
    "summarize_biases", "summarize_collection", "summarize_tensor", "summarize_tensors", "summarize_variables",
    "summarize_weights", "unit_norm", "variable", "variance_scaling_initializer", "xavier_initializer",
    "xavier_initializer_conv2d",
    # its modules
    "data", "data_decoder", "data_provider", "dataset", "dataset_data_provider", "evaluation", "initializers",
    "layers", "learning", "losses", "metrics", "model_analyzer", "nets", "optimizers", "parallel_reader",
    "prefetch_queue", "queues", "regularizers", "summaries", "tfexample_decoder", "training", "utils",
})
TF_SLIM_NETS = frozenset({"alexnet", "inception", "inception_v1", "inception_v2", "inception_v3", "overfeat",
                          "resnet_utils", "resnet_v1", "resnet_v2", "vgg"})

# Modules of tf_slim.layers (contrib.layers.python.layers' were the same).
TF_SLIM_LAYER_MODULES = frozenset({"layers", "initializers", "regularizers", "optimizers", "summaries", "utils",
                                   "normalization"})

# TF1 API module -> the module (a Python import path) that has its members now. The internal paths real programs
# import from too: contrib.framework.python.ops exported arg_scope and the variable helpers as contrib.framework did.
PACKAGES = {"contrib.slim.nets": "tf_slim.nets", "contrib.slim.python.slim.nets": "tf_slim.nets", "contrib.slim": "tf_slim",
            "contrib.layers.python.layers": "tf_slim.layers", "contrib.layers": "tf_slim",
            "contrib.framework.python.ops": "tf_slim", "contrib.framework": "tf_slim"}
# The members each module's successor has (else TF_SLIM).
MEMBERS = {"contrib.slim.nets": TF_SLIM_NETS, "contrib.slim.python.slim.nets": TF_SLIM_NETS,
           "contrib.layers.python.layers": TF_SLIM_LAYER_MODULES}
# TF1 API -> TensorFlow's API that is the same (a module, or a function).
IN_TENSORFLOW = {"contrib.framework.nest": "nest",
                 "contrib.framework.get_or_create_global_step": "train.get_or_create_global_step",
                 "contrib.framework.get_global_step": "train.get_global_step",
                 "contrib.framework.create_global_step": "train.create_global_step",
                 # contrib.rnn re-exported TF1's own cells and static RNNs (tf.nn's): the same classes.
                 **{f"contrib.rnn.{name}": f"nn.rnn_cell.{name}" for name in (
                     "RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
                     "LSTMStateTuple", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper")},
                 **{f"contrib.rnn.{name}": f"nn.{name}" for name in (
                     "static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn")}}
# TF1 calls of no arguments -> (what computes the same in TF 2, written with `{tf}` for the module's TensorFlow name,
# and what differs).
CALLS = {"contrib.eager.list_devices": (
    "[device.name for device in {tf}.config.list_logical_devices()]",
    "the names come without TF1's `/job:localhost/replica:0/task:0` prefix (`/device:GPU:0`), so a test of a "
    "`/device:...` part of them reads the same")}
# contrib.metrics' streaming metrics that returned TF 1.x's own tf.metrics function of their arguments (by keyword):
# TF1 API -> (that function, the contrib function's parameters in order). Those of predictions and labels take them
# the other way round in tf.metrics.
_PREDICTED = ("predictions", "labels", "weights", "metrics_collections", "updates_collections", "name")
_VALUES = ("values", "weights", "metrics_collections", "updates_collections", "name")
METRICS = {**{f"contrib.metrics.streaming_{name}": (name, _PREDICTED) for name in (
               "accuracy", "precision", "recall", "true_positives", "false_positives", "false_negatives")},
           **{f"contrib.metrics.streaming_{name}": (name, _VALUES) for name in ("mean", "mean_tensor")}}
METRIC_OPS = "contrib.metrics.python.ops.metric_ops."  # the internal module real programs import them from


def streaming_metric(api: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(tf.metrics' function, the parameters) of a METRICS function, reached as contrib.metrics' or metric_ops'."""
    if api and api.startswith(METRIC_OPS):
        api = "contrib.metrics." + api[len(METRIC_OPS):]
    return METRICS.get(api or "")


# Members tf-slim has but that are not moved there, and why.
NOT_MOVED = {
    "batch_norm": "tf-slim 1.1.0's batch_norm does not build on TensorFlow 2.15 or later (it reads `ops.Tensor`, "
                  "which moved): TFM009 rewrites a call with a scope and the arguments both have; for the others use "
                  "tf.compat.v1.layers.batch_normalization (momentum=decay, scale=False as slim's default, "
                  "training=is_training, name=scope)",
    "optimize_loss": "tf-slim 1.1.0's optimize_loss does not run on TensorFlow 2.15 or later (it reads "
                     "`ops.Tensor`, which moved); the Estimator migration replaces it where it migrates the model_fn "
                     "that calls it, else write the optimizer and its minimize() by hand",
}

# What replaces the contrib modules that did not move, where TFM003 can say more than "use the TF 2 API".
ADVICE = {"contrib.lookup": "tf.lookup's tables (StaticHashTable, StaticVocabularyTable) replace it; TFM006 rewrites "
                            "the index_table / index_to_string_table functions called with a num_oov_buckets written "
                            "out, the default hasher, string keys and a vocabulary it can read twice"}


# contrib.training's HParams, made of keyword values and only read or set attribute by attribute, is a namespace.
HPARAMS = frozenset({"contrib.training.HParams", "contrib.training.python.training.hparam.HParams"})
HPARAMS_METHODS = frozenset({"add_hparam", "del_hparam", "get", "get_model_structure", "override_from_dict", "parse",
                             "parse_json", "set_from_map", "set_hparam", "set_model_structure", "to_json",
                             "to_proto", "values", "from_proto"})


def package_of(api: str) -> str | None:
    """The contrib module of PACKAGES ``api`` is in or is ("contrib.slim.nets.vgg" -> "contrib.slim.nets")."""
    return max((package for package in PACKAGES if api == package or api.startswith(package + ".")), key=len,
               default=None)


def successor(api: str) -> str | None:
    """Where the TF1 API ``api`` ("contrib.layers.fully_connected") lives now: "tf_slim.fully_connected",
    "tf.nest.flatten", "tf.train.get_global_step"; None if nowhere it works the same."""
    for old, new in IN_TENSORFLOW.items():
        if api == old or api.startswith(old + "."):
            return "tf." + new + api[len(old):]
    package = package_of(api)
    if package is None:
        return None
    if api == package:
        return PACKAGES[package]
    member = api[len(package) + 1:].split(".")[0]
    if member not in MEMBERS.get(package, TF_SLIM) or member in NOT_MOVED:
        return None
    return PACKAGES[package] + api[len(package):]


# contrib.layers' ops that tf-slim does not have, and what TF 2 has for them (census' wide columns crossed and
# bucketized by hand).
_CROSS = "contrib.layers.python.ops.sparse_feature_cross_op"
NOT_IN_TF_SLIM = {
    _CROSS: "for its `sparse_feature_cross(inputs, hashed_output=True, num_buckets=n, hash_key=k)` TF 2 has "
            "`tf.sparse.cross_hashed(inputs, n, hash_key=k)` (without hashed_output: `tf.sparse.cross(inputs)`)",
    "contrib.layers.SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY": "it is 0xDECAFCAFFE, `tf.sparse.cross_hashed`'s default "
                                                            "hash_key",
    "contrib.layers.python.ops.bucketization_op": "for its `bucketize(x, boundaries)` TF 2 has "
                                                  "`tf.raw_ops.Bucketize(input=x, boundaries=boundaries)`",
}


def why_not(api: str) -> str:
    """Why the TF1 API ``api`` of a PACKAGES module has no successor."""
    known = next((why for old, why in NOT_IN_TF_SLIM.items() if api == old or api.startswith(old + ".")), None)
    if known is not None:
        return f"tf-slim does not have it: {known}"
    member = api[len(package_of(api) or api) + 1:].split(".")[0]
    if member in NOT_MOVED:
        return NOT_MOVED[member]
    return f"tf-slim has no `{member}`: replace it with what TF 2 has (tf.feature_column, tf.keras)"


def staying(package: str, members: set[str]) -> list[str]:
    """The members a module's uses read (`slim.conv2d`: conv2d) that do not live on in the package's successor."""
    target = PACKAGES[package]
    return sorted(member for member in members if successor(f"{package}.{member}") != f"{target}.{member}")


def attribute_uses(module: cst.Module) -> dict[str, set[str]]:
    """name -> the attributes read from it anywhere in the module (`slim.conv2d`: {"slim": {"conv2d"}})."""
    uses: dict[str, set[str]] = {}
    for node in subtree(module):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            uses.setdefault(node.value.value, set()).add(node.attr.value)
    return uses
