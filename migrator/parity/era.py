"""TF 1.x-era programs on the old side: a module that reaches TF1-only APIs through a plain `import tensorflow as tf`
(`tf.logging`, `tf.FixedLenFeature`, `tf.train.AdamOptimizer`) was written for TensorFlow 1.x, where `tensorflow`
*was* the TF1 API. Under TensorFlow 2 that API is `tensorflow.compat.v1`, so the old side gives such modules, and
only those, `tensorflow.compat.v1` for their `import tensorflow` (graph mode, as TF 1.x ran them): the program on
disk is not edited, and runs as it ran on TF 1.x. What such a program reaches in `tf.contrib` is given where it lives
on (rewrites/contrib_successors.py): `tf.contrib.estimator.add_metrics` is `tf.estimator.add_metrics`, slim and
contrib.layers' layers the tf-slim package, the same code, contrib.lookup's table functions and contrib.rnn's
cells TF1's own (which TF 2 still ships); anything else in tf.contrib stays missing. TF 1.x's internal copy of Keras, `tensorflow.python.keras`
(gone from TF 2.13), is the Keras 2 package it became (``give_python_keras``); names of TF 1.x's private modules
that TF 2 renamed are there under their old names too (``give_tf1_private_names``).

Which modules: read here, in the command's process, with the static half (the sides import migrator.parity only);
the program's file and the modules of its folders it imports, however deep. The old side installs the import hook
(``give_v1``).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import os
import sys
import sysconfig
import types
from collections.abc import Iterable, Mapping


def tf1_era_modules(program: str, as_path: str, stand_ins: Mapping[str, str]) -> list[str]:
    """The real paths of the program's modules written for TF 1.x (or reaching tf.contrib through compat.v1):
    ``program`` (run as ``as_path``) and the modules it imports that are files (their code at ``stand_ins[real]``
    where one is given)."""
    import libcst as cst

    from migrator.scanning import imports_of
    from rewrites.program.imports import imported_modules
    from rewrites.program.modules import Tree
    from rewrites.program.spelling import Spelling
    from rewrites.syntax import Unsupported

    code_of = {os.path.abspath(as_path): program, **stand_ins}
    sources: dict[str, str] = {}
    queue = [os.path.abspath(as_path)]
    while queue and len(sources) < 200:
        real = queue.pop()
        if real in sources:
            continue
        text = _read(code_of.get(real, real))
        if text is None:
            continue
        sources[real] = text
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        queue.extend(imported_modules(real, imports_of(tree), os.path.isfile) - sources.keys())
    tree = Tree({path: text for path, text in sources.items() if "tensorflow" in text})
    found = []
    for path in tree.sources:
        try:
            kind = Spelling(tree.view(path)).rebinding.kind
        except (Unsupported, cst.ParserSyntaxError):  # a module the static half cannot read runs as it is
            continue
        # `import tensorflow.compat.v1 as tf` reaching tf.contrib was written for TF 1.13-1.15 too
        if kind == "tf1-era" or (kind == "v1" and "contrib" in tree.sources[path]):
            found.append(path)
    return found


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def give_v1(paths: Iterable[str]) -> None:
    """`import tensorflow` (and `from tensorflow import X`) in the modules at ``paths`` gets `tensorflow.compat.v1`,
    with TF 2's behaviour off as on TF 1.x; every other importer, TensorFlow's own modules too, gets TensorFlow."""
    modules = {os.path.realpath(path) for path in paths}
    if not modules:
        return
    import tensorflow

    v1 = tensorflow.compat.v1
    v1.disable_v2_behavior()
    give_contrib(tensorflow)
    give_tf1_keras(tensorflow)
    original = builtins.__import__

    def importing(name, globals=None, locals=None, fromlist=(), level=0):
        module = original(name, globals, locals, fromlist, level)
        if name == "tensorflow" and level == 0 and globals and globals.get("__file__") \
                and os.path.realpath(globals["__file__"]) in modules:
            return v1
        return module

    builtins.__import__ = importing


PYTHON_KERAS = "tensorflow.python.keras"


def give_python_keras() -> None:
    """`from tensorflow.python.keras.preprocessing import sequence` as TF 1.x programs wrote it: there TensorFlow 2.15
    keeps only a partial legacy copy, not the Keras (tf.keras) it was on TF 1.x. A program's module (one outside the
    installed packages) importing it gets the Keras package (`keras.X`, or its internals `keras.src.X`); TensorFlow's
    own modules keep their copy."""
    installed = {os.path.realpath(sysconfig.get_paths()[key]) + os.sep for key in ("purelib", "platlib")}
    original = builtins.__import__

    def importing(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and fromlist and (name == PYTHON_KERAS or name.startswith(PYTHON_KERAS + ".")) and globals \
                and globals.get("__file__") and not os.path.realpath(globals["__file__"]).startswith(tuple(installed)):
            rest = name[len(PYTHON_KERAS):]
            try:
                return importlib.import_module("keras" + rest)
            except ModuleNotFoundError:
                return importlib.import_module("keras.src" + rest)
        return original(name, globals, locals, fromlist, level)

    builtins.__import__ = importing


def give_tf1_private_names(renamed: Mapping[str, str]) -> None:
    """The names TF 1.x's private modules had that TF 2's keep under another (``renamed``: the job's, from
    rewrites/private_successors.py): `tf_logging._get_logger` for a program handing TensorFlow's logger a handler."""
    for qualified, name in renamed.items():
        module_name, _, old = qualified.rpartition(".")
        module = importlib.import_module(module_name)
        if not hasattr(module, old):
            setattr(module, old, getattr(module, name))


def give_tf1_keras(tensorflow) -> None:
    """tf.keras as TF 1.x had it, for the modules the old side does not give v1 too: its optimizers the OptimizerV2
    classes, which Keras 2 keeps as its legacy ones (its new optimizers cannot be made in graph mode), and
    model_to_estimator saving name-based checkpoints (`checkpoint_format="saver"`, TF 1.x's default)."""
    keras = tensorflow.keras
    for name in dir(keras.optimizers.legacy):
        if not name.startswith("_") and hasattr(keras.optimizers, name):
            setattr(keras.optimizers, name, getattr(keras.optimizers.legacy, name))
    if hasattr(keras, "estimator"):
        keras.estimator.model_to_estimator = tensorflow.compat.v1.keras.estimator.model_to_estimator


def give_contrib(tensorflow) -> None:
    """`tf.contrib` (and `import tensorflow.contrib.slim`) for a TF 1.x program: the parts that live on, where they
    live now."""
    contrib = types.ModuleType("tensorflow.contrib")
    modules = {"estimator": {"add_metrics": tensorflow.estimator.add_metrics,
                             "forward_features": _forward_features(tensorflow)},
               "lookup": _contrib_lookup(tensorflow)}
    try:
        import tf_slim
    except ImportError:  # the tf-slim package is not installed: slim stays missing, as it would on TF 2
        tf_slim = None
    for name, extra in modules.items():
        setattr(contrib, name, _module(f"tensorflow.contrib.{name}", extra))
    v1 = tensorflow.compat.v1
    contrib.rnn = _module("tensorflow.contrib.rnn", {name: getattr(v1.nn, name) for name in (
        "static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn")}, v1.nn.rnn_cell)
    if tf_slim is not None:
        from tensorflow.python.framework import ops

        for name in ("Tensor", "IndexedSlices"):  # tf-slim 1.1.0's optimize_loss reads them there (TF 2.15 moved them)
            if not hasattr(ops, name):
                setattr(ops, name, getattr(tensorflow, name))
        contrib.slim = tf_slim
        contrib.layers = _module("tensorflow.contrib.layers", {}, tf_slim)
        contrib.framework = _module("tensorflow.contrib.framework", {"nest": tensorflow.nest}, tf_slim)
    for name, module in vars(contrib).items():
        if isinstance(module, types.ModuleType) and not name.startswith("_"):
            sys.modules[f"tensorflow.contrib.{name}"] = module
    sys.modules["tensorflow.contrib"] = contrib
    for namespace in (tensorflow, tensorflow.compat.v1):
        namespace.contrib = contrib


def _forward_features(tensorflow):
    """contrib.estimator's forward_features as TF 1.15 had it (dense features; its `sparse_default_values` not)."""
    def forward_features(estimator, keys=None, sparse_default_values=None):
        if sparse_default_values:
            raise NotImplementedError("forward_features(sparse_default_values=...) is not provided on TF 2")
        keys = [keys] if isinstance(keys, str) else keys

        def model_fn(features, labels, mode, config):
            spec = estimator.model_fn(features, labels, mode, config)
            predictions = spec.predictions
            if predictions is None:
                return spec
            forwarded = keys or list(features)
            for key in forwarded:
                if key not in features:
                    raise ValueError(f"Feature ({key}) is not in features dictionary.")
                if key in predictions:
                    raise ValueError(f"Cannot forward feature key ({key}). Since it does exist in predictions.")
                predictions[key] = features[key]
            spec = spec._replace(predictions=predictions)
            for name in ("predict", "serving_default"):
                output = (spec.export_outputs or {}).get(name)
                if isinstance(output, tensorflow.estimator.export.PredictOutput):
                    output.outputs.update({key: predictions[key] for key in forwarded})
            return spec

        return tensorflow.estimator.Estimator(model_fn=model_fn, model_dir=estimator.model_dir,
                                              config=estimator.config)
    return forward_features


def _contrib_lookup(tensorflow) -> dict:
    """contrib.lookup's table functions: TF1's own (lookup_ops), contrib's taking the vocabulary as `mapping`."""
    from tensorflow.python.ops import lookup_ops

    def index_table_from_tensor(mapping, num_oov_buckets=0, default_value=-1, hasher_spec=lookup_ops.FastHashSpec,
                                dtype=tensorflow.string, name=None):
        return lookup_ops.index_table_from_tensor(mapping, num_oov_buckets, default_value, hasher_spec, dtype, name)

    def string_to_index_table_from_tensor(mapping, num_oov_buckets=0, default_value=-1,
                                          hasher_spec=lookup_ops.FastHashSpec, name=None):
        return index_table_from_tensor(mapping, num_oov_buckets, default_value, hasher_spec, name=name)

    def index_to_string_table_from_tensor(mapping, default_value="UNK", name=None):
        return lookup_ops.index_to_string_table_from_tensor(mapping, default_value, name)

    return {"index_table_from_tensor": index_table_from_tensor,
            "string_to_index_table_from_tensor": string_to_index_table_from_tensor,
            "index_to_string_table_from_tensor": index_to_string_table_from_tensor,
            "index_table_from_file": lookup_ops.index_table_from_file,
            "index_to_string_table_from_file": lookup_ops.index_to_string_table_from_file}


def _module(name: str, members: dict, fallback=None) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(members)
    if fallback is not None:
        module.__getattr__ = lambda attribute: getattr(fallback, attribute)
    return module
