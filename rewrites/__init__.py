"""The rule catalogue: every rewrite family, its rules, and the words that wake it.

This module is read on every run, so it imports nothing heavy: the rewrite modules
(which import libcst, a third of a second) are loaded only for files that mention
one of a family's trigger words.

Each family lives in ``rewrites/<module>`` and defines ``Rewrite``, a libcst codemod
(or ``migrate``, for a program family); its module docstring (or that of the module
``pages_in`` names) holds a page per rule, what `tf-migrate rules TFMnnn` prints
(migrator/rules_doc.py): what the rule does, why, what may differ, and a before and
after that tests/test_rules_cmd.py runs. Rule ids are stable and grouped: TFM1xx
cluster and servers, TFM2xx partitioners, TFM3xx Estimator, TFM4xx model_fn pieces, TFM0xx
diagnostics: tf-migrate's own comments, notebook cells that write modules.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from migrator.findings import Rule, Safety


@dataclass(frozen=True)
class Family:
    """A rewrite family: ``rewrites/<module>``, the words that wake it, its rules (each in exactly one family).

    kind "file": a libcst codemod ``Rewrite`` run on each file; kind "program": a ``migrate(tree, enabled,
    keras)`` run over the modules of a program at once (rewrites/program/); kind "diagnostic": no rewrite (no
    triggers: it never wakes), rules the engine reports itself.
    """

    module: str
    triggers: tuple[str, ...]
    rules: tuple[Rule, ...]
    kind: str = "file"
    # The module whose docstring holds the family's rule pages (`tf-migrate rules TFMnnn`), if not the family's own.
    pages_in: str | None = None
    # A file family that reports on the code the program families leave (what they remove is not reported).
    after_programs: bool = False

    def load(self):
        module = importlib.import_module(f"rewrites.{self.module}")
        return module.Rewrite if self.kind == "file" else module

    def pages(self) -> str:
        return importlib.import_module(f"rewrites.{self.pages_in or self.module}").__doc__ or ""


E, N, M = Safety.EXACT, Safety.NUMERIC, Safety.MANUAL

# In the order the engine runs them (the file families, the program families, then those after_programs).
FAMILIES: tuple[Family, ...] = (
    Family(
        "suppressions",
        triggers=(),
        kind="diagnostic",
        rules=(
            Rule("TFM001", "unused-suppression", M,
                 "with --check: a `# tf-migrate: ignore[...]` comment (or an id in it) that suppresses no finding"),
        ),
    ),
    Family(
        "written_cells",
        triggers=(),
        kind="diagnostic",
        rules=(
            Rule("TFM002", "written-module", M,
                 "a notebook's `%%writefile PATH.py` cell writes a module with TF1 code that cannot be migrated "
                 "as a module of its own (it appends, its path is known at run time, ...): left as it is"),
        ),
    ),
    Family(
        "contrib_batch_norm",
        triggers=("batch_norm",),
        rules=(
            Rule("TFM009", "contrib-batch-norm", N,
                 "tf.contrib.layers' / slim's batch_norm(..., scope=...) -> tf.compat.v1.layers.batch_normalization "
                 "with its arguments (decay as momentum, is_training as training, scope as name)"),
        ),
    ),
    Family(
        "contrib_moved",
        triggers=("contrib",),
        rules=(
            Rule("TFM005", "contrib-moved", E,
                 "tf.contrib's slim, layers and framework -> the tf-slim package (where every use lives on there), "
                 "contrib.framework.nest -> tf.nest, its global step functions -> tf.train's, an HParams only read and set "
                 "by attribute -> types.SimpleNamespace"),
        ),
    ),
    Family(
        "contrib_lookup",
        triggers=("contrib.lookup",),
        rules=(
            Rule("TFM006", "contrib-lookup", E,
                 "tf.contrib.lookup's index_table_from_file / _from_tensor and index_to_string_table_from_file / "
                 "_from_tensor -> the tf.lookup table each made (StaticHashTable, StaticVocabularyTable)"),
        ),
    ),
    Family(
        "mnist_input_data",
        triggers=("read_data_sets",),
        rules=(
            Rule("TFM007", "mnist-tutorial-data", N,
                 "the TF1 tutorials' MNIST reader (input_data.read_data_sets) -> the same arrays from "
                 "tf.keras.datasets.mnist, in a read_mnist function written in the module"),
        ),
    ),
    Family(
        "mnist_tutorial_model",
        triggers=("tutorials.mnist import mnist",),
        rules=(
            Rule("TFM012", "mnist-tutorial-model", E,
                 "the TF1 tutorials' MNIST model module (tensorflow.examples.tutorials.mnist.mnist: inference, loss, "
                 "training, evaluation, its constants) -> what of it the program uses, written in the module"),
        ),
    ),
    Family(
        "queue_inputs",
        triggers=("input_producer",),
        rules=(
            Rule("TFM008", "queue-input", N,
                 "a queue-runner input pipeline (string_input_producer, a reader, tf.train.batch or shuffle_batch) "
                 "-> the tf.data pipeline reading the same records in the same order, batched alike"),
        ),
    ),
    Family(
        "keras_moved",
        triggers=("tensorflow.python.keras",),
        after_programs=True,
        rules=(
            Rule("TFM010", "tf1-keras-moved", E,
                 "a name of TF 1.x's tf.keras (tensorflow.python.keras) from a module TF 2 dropped -> the same "
                 "function of Keras 2, as the migrated program imports it"),
        ),
    ),
    Family(
        "absl_flags",
        triggers=("DEFINE_",),
        rules=(
            Rule("TFM013", "absl-logging-flag", E,
                 "a flag the program defines that absl's logging defines too (log_dir, logtostderr, verbosity, ...), "
                 "which TF 2 imports first -> the same DEFINE with allow_override=True"),
        ),
    ),
    Family(
        "private_renamed",
        triggers=("_get_logger",),
        rules=(
            Rule("TFM011", "tf1-private-renamed", E,
                 "a name of TF 1.x's private modules (tensorflow.python.*) that TF 2's same module has under another "
                 "name -> TF 2's name (tf_logging._get_logger -> tf_logging.get_logger)"),
        ),
    ),
    Family(
        "removed_apis",
        triggers=("import *", "tensorflow.examples", "contrib", "tensorflow.python.estimator",
                  "tensorflow.python.keras"),
        after_programs=True,
        rules=(
            Rule("TFM003", "removed-module", M,
                 "an import (or use) of a TF1 module TF 2 does not have: tensorflow.examples.tutorials, tf.contrib, "
                 "tensorflow.python.estimator; left as it is"),
            Rule("TFM004", "star-import", M,
                 "`from module import *` in a module whose TF1 Estimator or cluster code uses what it brings: "
                 "left as it is"),
        ),
    ),
    Family(
        "servers",
        triggers=("Server", "ClusterSpec"),
        rules=(
            Rule("TFM101", "train-server", E, "tf.train.Server -> tf.distribute.Server"),
            Rule("TFM102", "cluster-spec", E, "tf.compat.v1.train.ClusterSpec -> tf.train.ClusterSpec"),
        ),
    ),
    Family(
        "partitioners",
        triggers=("fixed_size_partitioner", "variable_axis_size_partitioner", "min_max_variable_partitioner"),
        rules=(
            Rule("TFM201", "fixed-size-partitioner", E,
                 "fixed_size_partitioner -> tf.distribute.experimental.partitioners.FixedShardsPartitioner"),
            Rule("TFM202", "variable-axis-size-partitioner", E,
                 "variable_axis_size_partitioner -> tf.distribute.experimental.partitioners.MaxSizePartitioner"),
            Rule("TFM203", "min-max-variable-partitioner", E,
                 "min_max_variable_partitioner -> tf.distribute.experimental.partitioners.MinSizePartitioner"),
            Rule("TFM204", "partitioner-axis", M,
                 "a partitioner along an axis other than 0: TF2 partitioners only split axis 0"),
            Rule("TFM205", "partitioner-arguments", M,
                 "a partitioner called with *args/**kwargs or unknown arguments: not mapped"),
        ),
    ),
    Family(
        "between_graph",
        # The last three wake it for a program whose session it does not read, which it reports (unread.py).
        triggers=("MonitoredTrainingSession", "Supervisor", "replica_device_setter", "SyncReplicasOptimizer",
                  ".target"),
        pages_in="between_graph.rules",
        rules=(
            Rule("TFM103", "between-graph-program", N,
                 "between-graph training (Server, replica_device_setter, MonitoredTrainingSession) -> TF1's chief "
                 "drives the cluster with a ClusterCoordinator of ParameterServerStrategy"),
            Rule("TFM104", "between-graph-manual", M,
                 "a between-graph program in a shape not migrated safely: left untouched, the finding says where and why"),
            Rule("TFM105", "between-graph-partitioner", E,
                 "a get_variable's partitioner moved onto the strategy also splits the program's other variables "
                 "(placement only)"),
            Rule("TFM106", "between-graph-numerics", N,
                 "a piece of the graph whose Keras counterpart differs from TF1 in a documented way (the message says how)"),
            Rule("TFM108", "between-graph-checkpoints", E,
                 "a session's checkpoints (Supervisor logdir, MonitoredTrainingSession checkpoint_dir) -> a "
                 "tf.train.CheckpointManager the program resumes from, saving when training ends"),
            Rule("TFM109", "between-graph-summaries", E,
                 "tf.summary ops of the graph only fed TF1's summary writers: dropped (the step computes the same)"),
        ),
    ),
    # After the program families: what they migrated or removed is no longer TF1's; what they left is reported at each
    # use.
    Family(
        "tf1_cluster",
        # The last ones: a module starting a Server whose Estimator the Estimator rewrite left gets a TFM104 from it.
        triggers=("replica_device_setter", "MonitoredTrainingSession", "Supervisor", "SyncReplicasOptimizer", "/job:ps",
                  "train_and_evaluate", "Estimator(", "Classifier(", "Regressor(", "model_to_estimator",
                  "learn_runner"),
        after_programs=True,
        rules=(
            Rule("TFM107", "cluster-code-left", M,
                 "TF1 cluster code left as it is (replica_device_setter, MonitoredTrainingSession, Supervisor, "
                 "SyncReplicasOptimizer, /job:ps devices, and beside them ClusterSpec, Server, join): a finding at "
                 "each use says what to do"),
        ),
    ),
    Family(
        "estimator_inputs",
        triggers=("numpy_input_fn", "pandas_input_fn"),
        rules=(
            Rule("TFM306", "numpy-pandas-input", E,
                 "numpy_input_fn / pandas_input_fn(shuffle=False) -> a tf.data input_fn with the same batches in order"),
            Rule("TFM307", "shuffled-input", N,
                 "numpy_input_fn / pandas_input_fn(shuffle=True) -> tf.data with .shuffle(): another random order"),
            Rule("TFM308", "input-fn-manual", M,
                 "a numpy_input_fn / pandas_input_fn not migrated safely: left untouched, the finding says why"),
        ),
    ),
    # A program family: after the per-file families, over the modules of a program at once. It reads the
    # partitioners TFM201-203 wrote and the input functions TFM306-307 wrote, so it runs after them.
    Family(
        "estimator",
        triggers=("Estimator(", "Classifier(", "Regressor(", "estimator.", "Experiment(", "learn_runner",
                  "model_to_estimator(", "train_in_memory(", "train_and_evaluate(", "estimator import"),
        kind="program",
        pages_in="estimator.rules",
        rules=(
            Rule("TFM301", "estimator-program", N,
                 "an Estimator program -> a Keras model trained with fit under ParameterServerStrategy"),
            Rule("TFM302", "estimator-manual", M,
                 "an Estimator program in a shape not migrated safely: left untouched, the finding says where and why"),
            Rule("TFM303", "eval-steps", N,
                 "an eval input that does not repeat: TF1 stopped at its end, the migrated evaluate runs exactly `steps` batches"),
            Rule("TFM305", "tpu-estimator", E,
                 "a TPUEstimator that may use a TPU: TPUStrategy on the TPU it names, picked at run time (generated, "
                 "not verified here), else the CPU/GPU path; iterations_per_loop -> steps_per_execution"),
            Rule("TFM309", "canned-estimator", N,
                 "a canned DNN, Linear or DNNLinearCombined (wide & deep) Classifier / Regressor -> the Keras model "
                 "of the same layers and columns, with the optimizers, rates and loss reduction of its version (v1 "
                 "or v2)"),
            Rule("TFM310", "model-fn-kept", N,
                 "a model_fn tier 1 cannot translate, kept as written and run in a generated Keras model under "
                 "track_tf1_style_variables (tier 2); the finding names what kept it from tier 1"),
            Rule("TFM206", "partitioner-scope", E,
                 "a variable_scope's partitioner moved onto the strategy also splits the variables created outside "
                 "that scope (placement only)"),
            Rule("TFM401", "keras-numerics", N,
                 "a model_fn piece whose Keras counterpart differs from TF1 in a documented way (the message says how)"),
            Rule("TFM402", "model-fn-logging", E,
                 "tf.summary / tf.logging calls in the model_fn: they do not change what it computes; dropped"),
        ),
    ),
)

RULES: dict[str, Rule] = {rule.id: rule for family in FAMILIES for rule in family.rules}
