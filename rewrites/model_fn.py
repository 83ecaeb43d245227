"""Reading a TF1 ``model_fn`` into the Keras model, loss, optimizer and metrics it stands for.

Used by the Estimator rewrite (rewrites/estimator.py); the translation of single calls
lives in rewrites/keras_equivalents.py. A model_fn is read statement by statement:

- layers (``tf1.layers.Dense(...)(x)``, ``tf1.layers.dense(x, ...)``) become Keras
  layers called the same way; a straight chain on a ``features`` tensor becomes a
  ``keras.Sequential``, anything else a functional ``keras.Model`` on ``features``
  (a dict of ``keras.Input`` when the model_fn reads ``features["name"]``);
- a few pure tensor functions between layers (``argmax``, ``softmax``, ``concat``, ...)
  are kept as they are: they work on Keras tensors;
- the loss, the optimizer (on a constant rate or a decay schedule of the global step)
  and ``minimize`` become ``compile``; ``eval_metric_ops`` become compile metrics;
- ``if mode == ModeKeys.PREDICT`` / ``EVAL`` branches that only return an
  EstimatorSpec are read for their metrics; the predictions are not needed by ``fit``;
- a partitioner on a ``variable_scope`` around layers moves onto the strategy.

Anything else raises ``Unsupported``, naming the node a person should look at.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import libcst as cst

from migrator.findings import Safety
from rewrites import hooks as hooks_code
from rewrites import keras_equivalents as keras_code
from rewrites.base import bind_arguments, source, subtree

MODEL_FN_PARAMETERS = ("features", "labels", "mode")
GLOBAL_STEP = {"train.get_global_step", "train.get_or_create_global_step"}
TRAINING_DEPENDENT_LAYERS = {"layers.Dropout", "layers.BatchNormalization"}
TRAINING_DEPENDENT_FUNCTIONS = {"layers.dropout", "layers.batch_normalization"}
LAYERS_WITH_WEIGHTS = {"layers.Dense", "layers.dense", "layers.Conv2D", "layers.conv2d", "layers.BatchNormalization",
                       "layers.batch_normalization"}
PARTITIONER_FOR_EVERY_VARIABLE = ("the partitioner moves onto ParameterServerStrategy, which applies it to every "
                                  "variable the program creates, so the variables made here, not partitioned in TF1, "
                                  "are split too (placement only: the numbers are the same)")
NO_MOVING_AVERAGE_UPDATES = ("batch_normalization without its UPDATE_OPS on the train_op: TF1 never updated the "
                             "moving mean and variance, Keras updates them in fit, so evaluate and predict, which "
                             "use them, differ from TF1 (training losses do not)")
VARIABLE_SCOPE = ("name_or_scope", "default_name", "values", "initializer", "regularizer", "caching_device",
                  "partitioner", "custom_getter", "reuse", "dtype", "use_resource", "constraint",
                  "auxiliary_name_scope")
INPUT_LAYER = ("features", "feature_columns", "weight_collections", "trainable", "cols_to_vars", "cols_to_output_tensors")
NUMERIC_COLUMN = ("key", "shape", "default_value", "dtype", "normalizer_fn")
ESTIMATOR_SPEC = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
                  "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")
SPEC_NOT_MIGRATED = {
    "export_outputs": "export_outputs (SavedModel signatures): export the Keras model with model.save / "
                      "tf.saved_model.save and its signatures by hand",
    "training_chief_hooks": "training_chief_hooks: " + hooks_code.CUSTOM,
    "scaffold": "a Scaffold (custom init or saver): set up the Keras model's initial values and checkpoints by hand",
    "evaluation_hooks": "evaluation_hooks: write them as Keras callbacks of evaluate by hand",
    "prediction_hooks": "prediction_hooks: write them as Keras callbacks of predict by hand",
}
# Functions of tensors only (no variables, no randomness): kept as they are between layers.
PURE_FUNCTIONS = {"argmax", "argmin", "math.argmax", "math.argmin", "nn.softmax", "nn.sigmoid", "nn.relu",
                  "nn.tanh", "math.sigmoid", "math.tanh", "concat", "reshape", "squeeze", "expand_dims",
                  "cast", "identity", "reduce_mean", "reduce_sum", "reduce_max", "math.reduce_mean",
                  "math.reduce_sum", "math.reduce_max"}
# tf1.metrics.X(labels, predictions) on the model's output -> Keras metric class.
METRICS_ON_OUTPUT = {"metrics.accuracy": "Accuracy", "metrics.mean_squared_error": "MeanSquaredError",
                     "metrics.root_mean_squared_error": "RootMeanSquaredError",
                     "metrics.mean_absolute_error": "MeanAbsoluteError"}
METRICS_BY_HAND = {
    "metrics.precision": "TF1 counts every non-zero prediction as positive, keras.metrics.Precision thresholds "
    "probabilities (at 0.5 by default): compile Precision(thresholds=...) on a probability output by hand",
    "metrics.recall": "TF1 counts every non-zero prediction as positive, keras.metrics.Recall thresholds "
    "probabilities (at 0.5 by default): compile Recall(thresholds=...) on a probability output by hand",
    "metrics.mean": "Keras compiles metrics of (labels, output); report the mean of another tensor from a custom "
    "keras.metrics.Metric by hand",
}
ARGMAX = {"argmax", "math.argmax"}
SIGMOID = {"sigmoid", "nn.sigmoid", "math.sigmoid"}


class Unsupported(Exception):
    """The program is left as it is; ``node`` is where a person should look."""

    def __init__(self, node: cst.CSTNode, message: str) -> None:
        super().__init__(message)
        self.node = node


@dataclass
class Model:
    """What the model_fn builds, as Keras code."""

    lines: list[str] = field(default_factory=list)   # statements computing the output from `features`
    bound: list[str] = field(default_factory=list)   # the names they bind
    layers: list[str] = field(default_factory=list)  # the Keras layers, in creation order
    chain: bool = True             # a straight chain of layers on a `features` tensor: a Sequential
    features_dict: bool = False    # the model_fn reads features["name"]
    output: str = ""               # the tensor the loss reads
    loss: str = ""
    optimizer: str = ""
    after_compile: tuple[str, ...] = ()
    metrics: list[str] = field(default_factory=list)
    predictions: list[tuple[str, str]] | None = None  # the PREDICT branch's dict: (key, value) code over model tensors
    partitioner: str | None = None  # the strategy's variable_partitioner
    uses_params: bool = False       # the model_fn reads `params`, which Estimator(params=...) gave it
    tf1_momentum: bool = False      # the optimizer is the generated TF1Momentum class
    tf1_trainable_names: list[str] | None = None  # TF1's names of the trainable variables in order, if known
    hooks: hooks_code.Hooks = field(default_factory=hooks_code.Hooks)  # EstimatorSpec(training_hooks=...)
    notes: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)  # findings: (rule, node, message)

    def rename(self, old: str, new: str) -> None:
        """Every use of the name ``old`` in the model's code becomes ``new`` (a method's self -> its object)."""
        def renamed(code: str) -> str:
            return cst.parse_module(code).visit(_Rename(old, new)).code if code else code

        self.lines, self.layers = [renamed(line) for line in self.lines], [renamed(layer) for layer in self.layers]
        self.output, self.loss, self.optimizer = renamed(self.output), renamed(self.loss), renamed(self.optimizer)
        self.after_compile = tuple(map(renamed, self.after_compile))
        self.metrics = [renamed(metric) for metric in self.metrics]
        if self.predictions is not None:
            self.predictions = [(renamed(key), renamed(value)) for key, value in self.predictions]
        if self.partitioner is not None:
            self.partitioner = renamed(self.partitioner)

    def names(self) -> list[str]:
        """The names the functional model's code binds."""
        return ["features", *self.bound]


class ModelFnReader:
    """Reads one model_fn. ``api`` names the TensorFlow API a node refers to (or None)."""

    def __init__(self, api: Callable[[cst.CSTNode], str | None],
                 resolve: Callable[[cst.BaseExpression], cst.BaseExpression] = lambda node: node) -> None:
        """``resolve``: the literal a module-level name (or ``params["key"]``) stands for, else the node itself."""
        self.api = api
        self.resolve = resolve
        self.model = Model()
        self.current = "features"     # the last layer's output, while the layers form a chain
        self.loss_name: str | None = None
        self.losses_made = 0            # tf.losses calls, each added to TF1's LOSSES collection
        self.optimizer_name: str | None = None
        self.train_op: str | None = None
        self.schedules: dict[str, str] = {}      # name -> Keras schedule code
        self.metric_calls: dict[str, tuple[str, cst.Call]] = {}
        self.pure: dict[str, cst.Call] = {}      # name -> pure function call
        self.dicts: dict[str, cst.Dict] = {}
        self.eval_metric_ops: cst.BaseExpression | None = None
        self.training_flags: set[str] = set()  # names bound to `mode == ModeKeys.TRAIN`
        self.batch_norms: list[cst.Call] = []
        self.update_ops: dict[str, int] = {}  # name -> batch norms created before it was collected
        self.updates_attached = 0  # how many batch norms' updates the train_op depends on (UPDATE_OPS)
        self.tables: dict[str, tuple[dict, bool]] = {}  # get_variable tables: name -> (arguments, partitioned)
        self.in_partitioned_scope = False
        self.unpartitioned_weights: list[cst.Call] = []  # layers with weights outside any partitioned scope
        self.tf1_names = TF1VariableNames()

    def read(self, function: cst.FunctionDef, bound: Collection[str] = ()) -> Model:
        """``bound``: parameters given values elsewhere (a method's self, functools.partial's keywords)."""
        params = [param.name.value for param in function.params.params if param.name.value not in bound]
        if (params[:3] != list(MODEL_FN_PARAMETERS) or not set(params[3:]) <= {"params", "config"}
                or function.params.star_kwarg or isinstance(function.params.star_arg, cst.Param)):
            raise Unsupported(function.params, "a model_fn taking (features, labels, mode[, params][, config]) is "
                                               "migrated")
        config = next((node for node in subtree(function.body) if is_name(node, "config")), None)
        if config is not None:
            raise Unsupported(config, "the model_fn reads the RunConfig (config): give the Keras model what it "
                                      "needs from it by hand")
        self.model.uses_params = "params" in params
        statements = list(function.body.body)
        if statements and _is_docstring(statements[0]):
            statements = statements[1:]
        for statement in statements[:-1]:
            self._statement(statement)
        self._train_return(statements[-1] if statements else function)
        self._check_tables_only_looked_up(function)
        model = self.model
        if not model.layers or not model.loss or not model.optimizer:
            raise Unsupported(function, "the model_fn needs layers, a tf.losses loss and an optimizer")
        if self.eval_metric_ops is not None:
            model.metrics = self._metrics(self.eval_metric_ops)
        if model.output != self.current:
            model.chain = False
        model.tf1_trainable_names = self.tf1_names.names
        if self.updates_attached < len(self.batch_norms):
            model.notes.append(("TFM401", self.batch_norms[0], NO_MOVING_AVERAGE_UPDATES))
        if model.partitioner and self.unpartitioned_weights:
            model.notes.append(("TFM206", self.unpartitioned_weights[0], PARTITIONER_FOR_EVERY_VARIABLE))
        return model

    # -- statements ----------------------------------------------------------

    def _statement(self, statement) -> None:
        if isinstance(statement, cst.With):
            self._with(statement)
        elif isinstance(statement, cst.If):
            self._mode_branch(statement)
        elif isinstance(statement, cst.For):
            self._for_loop(statement)
        elif (assign := single_assign(statement)) is not None:
            target, value = assign
            if isinstance(value, cst.Dict):
                self.dicts[target] = value
            elif self._mode_of(value) == "TRAIN":
                self.training_flags.add(target)
            elif isinstance(value, cst.Call):
                self._call(target, value, statement)
            else:
                raise Unsupported(statement, f"`{first_line(statement)}` in the model_fn is not migrated yet")
        else:
            raise Unsupported(statement, f"`{first_line(statement)}` in the model_fn: only assignments, "
                                         "mode branches and variable scopes are migrated yet")

    def _call(self, target: str, call: cst.Call, statement) -> None:
        callee = call.func.func if isinstance(call.func, cst.Call) else call.func
        api = self.api(callee) or ""
        try:
            if api.startswith("layers."):
                self._layer(api, call, target)
            elif api == "get_variable":
                self._table(target, call)
            elif api == "nn.embedding_lookup":
                self._embedding(target, call)
            elif api == "feature_column.input_layer":
                self._input_layer(target, call)
            elif api == "losses.get_total_loss":
                self._total_loss(call, target)
            elif api.startswith("losses."):
                self._loss(api, call, target)
            elif api.startswith("metrics."):
                self.metric_calls[target] = (api, call)
            elif api in PURE_FUNCTIONS:
                self._emit(target, source(call))
                self.model.chain = False
                self.pure[target] = call
            elif api in keras_code.SCHEDULES:
                self._check_global_step(api, call)
                self.schedules[target] = keras_code.learning_rate_schedule(api, call).code
            elif api == "train.MomentumOptimizer" and self._scheduled_rate(call):
                self.model.optimizer, self.model.tf1_momentum = self._tf1_momentum(call), True
                self.optimizer_name = target
            elif api.startswith("train.") and api.endswith("Optimizer"):
                code = keras_code.optimizer(api, self._with_schedule(call))
                self.model.optimizer, self.model.after_compile = self._piece(code, call), code.after_compile
                self.optimizer_name = target
            elif self._is_update_ops(call):
                self.update_ops[target] = len(self.batch_norms)
            elif self._is_minimize(call):
                self.train_op = target
            else:
                raise Unsupported(call, f"`{api or source(callee)}` in the model_fn: no Keras translation yet "
                                        "(tf.layers, tf.losses, tf.metrics, optimizers, decay schedules and "
                                        "minimize are migrated)")
        except keras_code.NoKerasEquivalent as problem:
            raise Unsupported(call, str(problem)) from None

    def _layer(self, api: str, call: cst.Call, target: str) -> None:
        if isinstance(call.func, cst.Call):  # tf1.layers.Dense(...)(inputs)
            if api in TRAINING_DEPENDENT_LAYERS:
                raise Unsupported(call, f"a {api} layer object: whether it is active in TF1 depends on how it is "
                                        "called; migrate it by hand (the training flag)")
            code, _ = keras_code.layer(api, call.func, functional=False)
            inputs = call.args[0].value if len(call.args) == 1 and not call.args[0].keyword else None
            self.tf1_names.layer(api, keras_code.layer_arguments(api, call.func, functional=False))
        else:  # tf1.layers.dense(inputs, ...)
            code, inputs = keras_code.layer(api, call, functional=True)
            self._check_training_flag(api, call)
            self.tf1_names.layer(api, keras_code.layer_arguments(api, call, functional=True))
        if inputs is None:
            raise Unsupported(call, "a layer called with more than its inputs is not migrated yet")
        self._note_features(inputs)
        if not is_name(inputs, self.current):
            self.model.chain = False
        if code is keras_code.IDENTITY:  # a TF1 no-op (dropout without training=): its output is its input
            self._emit(target, source(inputs))
        else:
            layer = self._piece(code, call)
            self.model.layers.append(layer)
            self._emit(target, f"{layer}({source(inputs)})")
            if api in LAYERS_WITH_WEIGHTS and not self.in_partitioned_scope:
                self.unpartitioned_weights.append(call)
        self.current = target

    def _table(self, target: str, call: cst.Call) -> None:
        """`table = get_variable(name, [rows, width])`: a Keras Embedding once embedding_lookup reads it."""
        args = keras_code.get_variable_arguments(call)
        self.tf1_names.table(args.get("name"))
        if "partitioner" in args:
            self._strategy_partitioner(args["partitioner"])
        self.tables[target] = (args, self.in_partitioned_scope or "partitioner" in args)

    def _embedding(self, target: str, call: cst.Call) -> None:
        table = call.args[0].value if call.args and not call.args[0].keyword else None
        if not (isinstance(table, cst.Name) and table.value in self.tables):
            raise Unsupported(call, "embedding_lookup of a table that is not a get_variable of this model_fn")
        args, partitioned = self.tables[table.value]
        code, ids = keras_code.embedding(args, partitioned, call)
        if not partitioned:
            self.unpartitioned_weights.append(call)
        self._note_features(ids)
        layer = self._piece(code, call)
        self.model.layers.append(layer)
        self._emit(target, f"{layer}({source(ids)})")
        self.model.chain = self.model.chain and is_name(ids, self.current)
        self.current = target

    def _input_layer(self, target: str, call: cst.Call) -> None:
        """`input_layer(features, [numeric_column("x", shape=...), ...])`: the columns flattened and concatenated."""
        args = bound_values(call, INPUT_LAYER)
        if set(args) != {"features", "feature_columns"} or not is_name(args["features"], "features"):
            raise Unsupported(call, "input_layer is migrated on the model_fn's features and numeric columns only")
        keys = sorted(self._numeric_column_key(column) for column in list_elements(self.resolve(args["feature_columns"])))
        if not keys:
            raise Unsupported(call, "input_layer without feature columns")
        flat = 'keras.layers.Flatten()(tf.cast(features[{}], tf.float32))'
        self.model.lines.append("# input_layer: the numeric columns in name order, each flattened to float32.")
        if len(keys) == 1:
            self._emit(target, flat.format(f'"{keys[0]}"'))
        else:
            names = ", ".join(f'"{key}"' for key in keys)
            self._emit(target, f"keras.layers.Concatenate()([\n    {flat.format('key')}\n    for key in ({names})])")
        self.model.features_dict = True
        self.model.chain = False
        self.current = target

    def _numeric_column_key(self, column: cst.BaseExpression) -> str:
        column = self.resolve(column)
        api = self.api(column.func) if isinstance(column, cst.Call) else None
        if api != "feature_column.numeric_column":
            raise Unsupported(column, f"{api or 'a feature column'} read by input_layer: numeric_column is migrated; "
                                      "other feature columns need Keras preprocessing layers, written by hand")
        # shape, default_value and dtype describe parsing; input_layer flattens and casts to float32 whatever comes.
        args = bound_values(column, NUMERIC_COLUMN)
        key, normalizer = args.get("key"), args.get("normalizer_fn")
        if not isinstance(key, cst.SimpleString) or not (normalizer is None or is_name(normalizer, "None")):
            raise Unsupported(column, "numeric_column with a computed key or a normalizer_fn is not migrated: write "
                                      "the Keras input (and a Normalization or Lambda layer) by hand")
        return key.evaluated_value

    def _check_tables_only_looked_up(self, function: cst.FunctionDef) -> None:
        """A table used otherwise than by one embedding_lookup (arithmetic, a second lookup) has no Keras layer."""
        for name in self.tables:
            uses = [node for node in subtree(function.body) if is_name(node, name)]
            if len(uses) != 2:  # its assignment and its lookup
                raise Unsupported(uses[0], f"`{name}` is used otherwise than by one embedding_lookup: a variable "
                                        "with no layer is not migrated; write the Keras layer or weight by hand")

    def _emit(self, target: str, code: str) -> None:
        """One statement of the Keras model's code: `target = code`."""
        self.model.lines.append(f"{target} = {code}")
        self.model.bound.append(target)

    def _for_loop(self, statement: cst.For) -> None:
        """`for units in [...]:` around layers stays a loop around the Keras layers."""
        if statement.orelse is not None or statement.asynchronous or not isinstance(statement.target, cst.Name):
            raise Unsupported(statement, "a for loop other than `for name in values:` in the model_fn")
        outer, self.model.lines = self.model.lines, []
        named = len(self.tf1_names.log)
        for inner in statement.body.body:
            self._statement(inner)
        body, self.model.lines = self.model.lines, outer
        header = f"for {statement.target.value} in {source(statement.iter)}:"
        self.model.lines.append("\n".join([header, *(textwrap.indent(line, "    ") for line in body)]))
        self.model.bound.append(statement.target.value)
        self.model.chain = False
        values = self.resolve(statement.iter)
        self.tf1_names.repeat(named, len(values.elements) if isinstance(values, (cst.List, cst.Tuple)) else None)

    def _check_training_flag(self, api: str, call: cst.Call) -> None:
        """Keras turns dropout and batch statistics on in fit only: TF1 must have turned them on in TRAIN mode only."""
        if api not in TRAINING_DEPENDENT_FUNCTIONS:
            return
        training = keras_code.layer_arguments(api, call, functional=True).get("training")
        if training is not None and not (self._mode_of(training) == "TRAIN" or
                                         (isinstance(training, cst.Name) and training.value in self.training_flags)):
            raise Unsupported(training, f"{api} with training={source(training)}: migrated when it is "
                                        "`mode == ModeKeys.TRAIN` (Keras trains in fit, evaluates and predicts "
                                        "without); set the Keras training flag by hand")
        if api == "layers.batch_normalization":
            self.batch_norms.append(call)

    def _note_features(self, inputs: cst.BaseExpression) -> None:
        """`features["x"]` makes the model's inputs a dict of keras.Input."""
        if isinstance(inputs, cst.Subscript) and is_name(inputs.value, "features"):
            self.model.features_dict = True

    def _total_loss(self, call: cst.Call, target: str) -> None:
        """`get_total_loss()` after one tf.losses loss and no regularizers (which are not migrated) is that loss."""
        bound_values(call, ("add_regularization_losses", "name", "scope"))
        if self.losses_made != 1:
            raise Unsupported(call, f"get_total_loss() of {self.losses_made} tf.losses losses: Keras compiles one loss "
                                    "per output; combine them by hand (compile's loss_weights, or a custom loss)")
        self.loss_name = target

    def _loss(self, api: str, call: cst.Call, target: str) -> None:
        self.losses_made += 1
        code, labels, predictions = keras_code.loss(api, call)
        if not (is_name(labels, "labels") and isinstance(predictions, cst.Name)):
            raise Unsupported(call, "the loss must compare `labels` with a tensor the model computes")
        self.model.loss = self._piece(code, call)
        self.model.output = predictions.value
        self.loss_name = target

    def _with(self, statement: cst.With) -> None:
        """`with variable_scope(...)` or `with control_dependencies(update_ops)`, then the statements inside."""
        call = statement.items[0].item if len(statement.items) == 1 else None
        api = self.api(call.func) if isinstance(call, cst.Call) else None
        outer_partitioned, outer_scopes = self.in_partitioned_scope, self.tf1_names.scopes
        if api == "variable_scope":
            self.in_partitioned_scope |= self._variable_scope(call)
        elif api == "control_dependencies" and (count := self._update_ops_count(call)) is not None:
            self._train_op_after_updates(statement)
            self.updates_attached = count
        else:
            raise Unsupported(statement, f"`{first_line(statement)}` in the model_fn is not migrated yet")
        for inner in statement.body.body:
            self._statement(inner)
        self.in_partitioned_scope, self.tf1_names.scopes = outer_partitioned, outer_scopes

    def _variable_scope(self, call: cst.Call) -> bool:
        """`with variable_scope(name, partitioner=P):` around layers: P moves onto the strategy. Partitioned?"""
        args = bound_values(call, VARIABLE_SCOPE)
        if set(args) - {"name_or_scope", "partitioner"}:
            raise Unsupported(call, "a variable_scope with arguments other than a name and a partitioner")
        if "partitioner" in args:
            self._strategy_partitioner(args["partitioner"])
        self.tf1_names.enter(args.get("name_or_scope"))
        return "partitioner" in args

    def _update_ops_count(self, call: cst.Call) -> int | None:
        """For `control_dependencies(<get_collection(UPDATE_OPS)>)`: the batch norms whose updates it held."""
        inputs = bound_values(call, ("control_inputs",)).get("control_inputs")
        if isinstance(inputs, cst.Call) and self._is_update_ops(inputs):
            return len(self.batch_norms)
        return self.update_ops.get(inputs.value) if isinstance(inputs, cst.Name) else None

    def _train_op_after_updates(self, statement: cst.With) -> None:
        """Only `train_op = optimizer.minimize(...)` may run after the updates: Keras runs them itself."""
        body = statement.body.body
        if not (len(body) == 1 and (assign := single_assign(body[0])) and isinstance(assign[1], cst.Call)
                and self._is_minimize(assign[1])):
            raise Unsupported(statement, "control_dependencies(UPDATE_OPS) around anything but "
                                         "`train_op = optimizer.minimize(...)` is not migrated yet")

    def _is_update_ops(self, call: cst.Call) -> bool:
        if self.api(call.func) != "get_collection" or not call.args:
            return False
        return self.api(call.args[0].value) == "GraphKeys.UPDATE_OPS"

    def _strategy_partitioner(self, node: cst.BaseExpression) -> None:
        api = self.api(node.func) if isinstance(node, cst.Call) else None
        if not (api or "").startswith("distribute.experimental.partitioners."):
            raise Unsupported(node, "a partitioner other than the three compat.v1 ones along axis 0 (TFM201-203)")
        code = source(node)
        if self.model.partitioner not in (None, code):
            raise Unsupported(node, "two different partitioners: ParameterServerStrategy takes one for every "
                                    "variable; choose one, or write a Partitioner that decides by shape")
        self.model.partitioner = code

    # -- mode branches and EstimatorSpecs -------------------------------------

    def _mode_branch(self, statement: cst.If) -> None:
        """`if mode == ModeKeys.PREDICT|EVAL:` [dicts] `return EstimatorSpec(...)`, with no else."""
        mode = self._branch_mode(statement)
        if mode is None or statement.orelse is not None:
            raise Unsupported(statement, f"`{first_line(statement)}` in the model_fn: only `if mode == "
                                         "ModeKeys.PREDICT/EVAL:` branches that return an EstimatorSpec are migrated")
        *body, last = statement.body.body
        for inner in body:
            self._statement(inner)
        args = self._spec(last)
        if mode == "PREDICT" and "predictions" in args:
            self.model.predictions = self._predictions(args["predictions"])
        if mode == "EVAL":
            if not is_name(args.get("loss"), self.loss_name or ""):
                raise Unsupported(last, "the EVAL EstimatorSpec must return the loss the TRAIN one minimizes")
            self.eval_metric_ops = args.get("eval_metric_ops")

    def _branch_mode(self, statement: cst.If) -> str | None:
        mode = self._mode_of(statement.test)
        return mode if mode in ("PREDICT", "EVAL") else None

    def _mode_of(self, test: cst.BaseExpression) -> str | None:
        """"TRAIN" for `mode == ModeKeys.TRAIN` (or the other way round), None for anything else."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)):
            return None
        left, right = test.left, test.comparisons[0].comparator
        if is_name(right, "mode"):
            left, right = right, left
        api = (self.api(right) or "") if is_name(left, "mode") else ""
        return api.rpartition(".")[2] if api.startswith("estimator.ModeKeys.") else None

    def _spec(self, statement) -> dict[str, cst.BaseExpression]:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        call = small.value if isinstance(small, cst.Return) else None
        if not (isinstance(call, cst.Call) and self.api(call.func) == "estimator.EstimatorSpec"):
            raise Unsupported(statement, "expected `return EstimatorSpec(mode, ...)`")
        args = bound_values(call, ESTIMATOR_SPEC)
        for name, message in SPEC_NOT_MIGRATED.items():
            if name in args:
                raise Unsupported(args[name], message)
        return args

    def _train_return(self, statement) -> None:
        args = self._spec(statement)
        for hook in list_elements(args.get("training_hooks")):
            if not isinstance(hook, cst.Call):
                raise Unsupported(hook, "a training hook that is not constructed in the EstimatorSpec")
            try:
                hooks_code.read_hook(self.api(hook.func), hook, self.model.hooks)
            except keras_code.NoKerasEquivalent as problem:
                raise Unsupported(hook, str(problem)) from None
        if "eval_metric_ops" in args:
            if self.eval_metric_ops is not None:
                raise Unsupported(args["eval_metric_ops"], "eval_metric_ops returned twice")
            self.eval_metric_ops = args["eval_metric_ops"]
        if not (is_name(args.get("loss"), self.loss_name or "") and is_name(args.get("train_op"), self.train_op or "")):
            raise Unsupported(statement, "the model_fn must end with `return EstimatorSpec(mode, loss=..., "
                                         "train_op=...)` returning the loss and the train_op built above")

    def _predictions(self, node: cst.BaseExpression) -> list[tuple[str, str]]:
        predictions = self.dicts.get(node.value) if isinstance(node, cst.Name) else node
        if not isinstance(predictions, cst.Dict) or not all(isinstance(e, cst.DictElement) for e in predictions.elements):
            raise Unsupported(node, "predictions other than a dict written in the model_fn are not migrated yet")
        return [(source(element.key), source(element.value)) for element in predictions.elements]

    # -- metrics -------------------------------------------------------------

    def _metrics(self, node: cst.BaseExpression) -> list[str]:
        ops = self.dicts.get(node.value) if isinstance(node, cst.Name) else node
        if not isinstance(ops, cst.Dict):
            raise Unsupported(node, "eval_metric_ops must be a dict written in the model_fn")
        metrics = []
        for element in ops.elements:
            if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                    and isinstance(element.value, cst.Name) and element.value.value in self.metric_calls):
                raise Unsupported(element, "an eval_metric_ops entry that is not `\"name\": a tf.metrics result`")
            metrics.append(self._metric(element.key.evaluated_value, *self.metric_calls[element.value.value]))
        return metrics

    def _metric(self, key: str, api: str, call: cst.Call) -> str:
        if api == "metrics.auc":
            return self._auc(key, call)
        if api in METRICS_BY_HAND:
            raise Unsupported(call, f"{api}: {METRICS_BY_HAND[api]}")
        args = bound_values(call, ("labels", "predictions", "weights", "metrics_collections", "updates_collections", "name"))
        labels, predictions = args.get("labels"), args.get("predictions")
        if "weights" in args or not is_name(labels, "labels") or not isinstance(predictions, cst.Name):
            raise Unsupported(call, f"{api} is migrated on (labels, a model tensor) without weights")
        if api == "metrics.accuracy" and self._is_argmax_of_output(predictions.value):
            return f'keras.metrics.SparseCategoricalAccuracy(name="{key}")'
        if api in METRICS_ON_OUTPUT and predictions.value == self.model.output:
            return f'keras.metrics.{METRICS_ON_OUTPUT[api]}(name="{key}")'
        raise Unsupported(call, f"{api} on `{predictions.value}`: migrated on the model's output, or accuracy on "
                                "its argmax")

    def _auc(self, key: str, call: cst.Call) -> str:
        """AUC of the model's output (probabilities), or of its sigmoid (the output is logits)."""
        try:
            labels, predictions = keras_code.metric_inputs("metrics.auc", call)
            applied = self._function_of_output(predictions)
            if not is_name(labels, "labels") or applied not in (None, *SIGMOID):
                raise Unsupported(call, "metrics.auc is migrated on (labels, the model's output or its sigmoid)")
            return self._piece(keras_code.auc(call, key, from_logits=applied is not None), call)
        except keras_code.NoKerasEquivalent as problem:
            raise Unsupported(call, str(problem)) from None

    def _function_of_output(self, node: cst.BaseExpression | None) -> str | None:
        """None for the model's output itself, the api of `f(output)` (written in place or named), "" otherwise."""
        if is_name(node, self.model.output):
            return None
        call = self.pure.get(node.value) if isinstance(node, cst.Name) else node
        if isinstance(call, cst.Call) and len(call.args) == 1 and is_name(call.args[0].value, self.model.output):
            return self.api(call.func) or ""
        return ""

    def _is_argmax_of_output(self, name: str) -> bool:
        call = self.pure.get(name)
        if call is None or self.api(call.func) not in ARGMAX or not call.args:
            return False
        axis = bound_values(call, ("input", "axis", "name", "dimension", "output_type")).get("axis")
        return (is_name(call.args[0].value, self.model.output) and isinstance(axis, (cst.Integer, cst.UnaryOperation))
                and source(axis) in ("1", "-1"))

    # -- optimizers and schedules --------------------------------------------

    def _check_global_step(self, api: str, call: cst.Call) -> None:
        """A TF1 decay function must be evaluated at the global step, as Keras evaluates a schedule."""
        name, position = ("x", 0) if api == "train.piecewise_constant" else ("global_step", 1)
        for index, arg in enumerate(call.args):
            if (arg.keyword is None and index == position) or (arg.keyword and arg.keyword.value == name):
                step = arg.value
                if isinstance(step, cst.Call) and self.api(step.func) in GLOBAL_STEP:
                    return
                break
        raise Unsupported(call, f"{api} on something other than the global step: Keras schedules follow "
                                "optimizer.iterations; migrate it by hand")

    def _with_schedule(self, call: cst.Call) -> cst.Call:
        """The optimizer call with a learning rate that names a schedule replaced by the Keras schedule."""
        args = [arg.with_changes(value=cst.parse_expression(self.schedules[arg.value.value]))
                if self._is_scheduled_rate(arg, index) else arg for index, arg in enumerate(call.args)]
        return call.with_changes(args=args)

    def _scheduled_rate(self, call: cst.Call) -> bool:
        return any(self._is_scheduled_rate(arg, index) for index, arg in enumerate(call.args))

    def _is_scheduled_rate(self, arg: cst.Arg, index: int) -> bool:
        is_rate = (arg.keyword is None and index == 0) or (arg.keyword is not None and arg.keyword.value == "learning_rate")
        return is_rate and isinstance(arg.value, cst.Name) and arg.value.value in self.schedules

    def _tf1_momentum(self, call: cst.Call) -> str:
        """MomentumOptimizer on a decaying rate: Keras' SGD arguments, TF1's update (the TF1Momentum class)."""
        keras_sgd = cst.parse_expression(keras_code.optimizer("train.MomentumOptimizer", call).code)
        return source(self._with_schedule(keras_sgd.with_changes(func=cst.Name("TF1Momentum"))))

    def _is_minimize(self, call: cst.Call) -> bool:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "minimize"
                and is_name(func.value, self.optimizer_name or "")):
            return False
        args = bound_values(call, ("loss", "global_step", "var_list"))
        if "var_list" in args or not is_name(args.get("loss"), self.loss_name or ""):
            raise Unsupported(call, "minimize() of the loss over all variables is migrated; var_list and other forms are not")
        step = args.get("global_step")
        if not (isinstance(step, cst.Call) and self.api(step.func) in GLOBAL_STEP):
            raise Unsupported(call, "minimize() must advance the global step (global_step=tf1.train.get_global_step())")
        return True

    def _piece(self, code: keras_code.KerasCode, node: cst.CSTNode) -> str:
        if code.safety is Safety.NUMERIC:
            self.model.notes.append(("TFM401", node, code.why))
        return code.code


class _Rename(cst.CSTTransformer):
    """Every use of the name ``old`` becomes ``new``."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.new) if updated_node.value == self.old else updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)  # `x.self` is no use of the name

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)  # nor is `f(self=...)`


class TF1VariableNames:
    """The names TF1 gives the trainable variables a model_fn creates, in creation order.

    A tf.layers layer opens a variable scope named after its class, made unique within the
    enclosing scope (`dense`, `dense_1`, ...) unless given a name; `names` is None once a
    name cannot be known statically (a computed scope or layer name).
    """

    BASE = {"layers.dense": "dense", "layers.Dense": "dense", "layers.conv2d": "conv2d", "layers.Conv2D": "conv2d",
            "layers.batch_normalization": "batch_normalization", "layers.BatchNormalization": "batch_normalization"}
    TRAINABLE = {"dense": (("kernel", None), ("bias", "use_bias")), "conv2d": (("kernel", None), ("bias", "use_bias")),
                 "batch_normalization": (("gamma", "scale"), ("beta", "center"))}  # (variable, switched off by)

    def __init__(self) -> None:
        self.names: list[str] | None = []
        self.scopes: tuple[str, ...] = ()
        self.used: dict[tuple[tuple[str, ...], str], int] = {}  # (scope, base) -> layers named so far
        self.log: list[tuple] = []  # every layer and table named, to repeat a loop's

    def repeat(self, start: int, times: int | None) -> None:
        """A loop body ran ``times`` times in all (None: unknown): name what it made ``times - 1`` more times."""
        if times is None:
            self.names = None
            return
        for _ in range(times - 1):
            for scopes, method, args in self.log[start:]:
                outer, self.scopes = self.scopes, scopes
                getattr(self, method)(*args)
                self.scopes = outer

    def enter(self, name: cst.BaseExpression | None) -> None:
        self.scopes = (*self.scopes, self._literal(name))

    def layer(self, api: str, args: dict[str, cst.BaseExpression]) -> None:
        self.log.append((self.scopes, "layer", (api, args)))
        base = self.BASE.get(api)
        if base is None:
            return
        scope = self._literal(args["name"]) if "name" in args else self._default_scope(base)
        for variable, switch in self.TRAINABLE[base]:
            if not (switch in args and is_name(args[switch], "False")):
                self._add(scope, variable)

    def table(self, name: cst.BaseExpression | None) -> None:
        self.log.append((self.scopes, "table", (name,)))
        self._add(self._literal(name))

    def _default_scope(self, base: str) -> str:
        count = self.used.get((self.scopes, base), 0)
        self.used[(self.scopes, base)] = count + 1
        return f"{base}_{count}" if count else base

    def _add(self, *parts: str | None) -> None:
        path = (*self.scopes, *parts)
        if self.names is not None and None not in path:
            self.names.append("/".join(path))
        else:
            self.names = None

    @staticmethod
    def _literal(node: cst.BaseExpression | None) -> str | None:
        return node.evaluated_value if isinstance(node, cst.SimpleString) else None


# -- small syntax helpers ------------------------------------------------------


def bound_values(call: cst.Call, params: tuple[str, ...]) -> dict[str, cst.BaseExpression]:
    """Parameter name -> argument value, or Unsupported when the call cannot be read statically."""
    bound = bind_arguments(call, params)
    if bound is None:
        raise Unsupported(call, "arguments that cannot be read statically (*args, **kwargs or unknown keywords)")
    return {name: arg.value for name, (_, arg) in bound.items()}


def statement_value(statement: cst.CSTNode) -> cst.BaseExpression | None:
    """The value of a simple statement `value`, `x = value` or `a, b = value`."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    return small.value if isinstance(small, (cst.Expr, cst.Assign)) else None


def single_assign(statement: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    value = statement_value(statement)
    small = statement.body[0] if value is not None else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value, value
    return None


def list_elements(node: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """The items of a list or tuple literal (none for None); Unsupported for anything else."""
    if node is None:
        return []
    if not isinstance(node, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in node.elements):
        raise Unsupported(node, "hooks given as anything but a list of hooks written out")
    return [element.value for element in node.elements]


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def is_name(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def first_line(statement: cst.CSTNode) -> str:
    line = source(statement).strip().splitlines()[0]
    return line if len(line) <= 60 else line[:57] + "..."
