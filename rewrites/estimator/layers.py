"""Layers, tables and feature columns in a model_fn -> the Keras layers (part of the model_fn reader)."""

from __future__ import annotations

import re

import libcst as cst

from rewrites import keras_equivalents as keras_code
from rewrites.estimator.column_reader import ColumnReader
from rewrites.estimator.column_writer import Writer, input_layer, uses_math
from rewrites.estimator.columns import has_runtime
from rewrites.program.places import Value
from rewrites.syntax import Unsupported, bound_values, is_name, subtree

TRAINING_DEPENDENT_LAYERS = {"layers.Dropout", "layers.BatchNormalization"}
TRAINING_DEPENDENT_FUNCTIONS = {"layers.dropout", "layers.batch_normalization"}
LAYERS_WITH_WEIGHTS = {"layers.Dense", "layers.dense", "layers.Conv2D", "layers.conv2d", "layers.BatchNormalization",
                       "layers.batch_normalization"}
VARIABLE_SCOPE = ("name_or_scope", "default_name", "values", "initializer", "regularizer", "caching_device",
                  "partitioner", "custom_getter", "reuse", "dtype", "use_resource", "constraint",
                  "auxiliary_name_scope")
INPUT_LAYER = ("features", "feature_columns", "weight_collections", "trainable", "cols_to_vars", "cols_to_output_tensors")


class LayerReading:
    """Mixed into ModelFnReader: layers, get_variable tables read by embedding_lookup, input_layer columns."""

    def _layer(self, api: str, call: cst.Call, target: str) -> None:
        self._emit(target, self._layer_expression(api, call))
        self.current = target

    def _layer_expression(self, api: str, call: cst.Call) -> str:
        """The Keras layer of one tf.layers call, called on its inputs (a nested layer call in turn), named after
        TF1's variable scope of it."""
        if isinstance(call.func, cst.Call):  # tf1.layers.Dense(...)(inputs)
            if api in TRAINING_DEPENDENT_LAYERS:
                raise Unsupported(call, f"a {api} layer object: whether it is active in TF1 depends on how it is "
                                        "called; migrate it by hand (the training flag)")
            constructor = call.func
            inputs = call.args[0].value if len(call.args) == 1 and not call.args[0].keyword else None
        else:  # tf1.layers.dense(inputs, ...)
            constructor = call
            inputs = keras_code.layer_arguments(api, call, functional=True).get("inputs")
            self._check_training_flag(api, call)
        functional = constructor is call
        code, _ = keras_code.layer(api, self.spelled(constructor), functional=functional)
        if inputs is None:
            raise Unsupported(call, "a layer called with more than its inputs is not migrated yet")
        self._note_features(inputs)
        nested = self._nested_layer(inputs)
        if not (is_name(inputs, self.current) or nested):
            self.model.chain = False
        inputs_code = self._layer_expression(nested, inputs) if nested else self.code(inputs)
        if code is keras_code.IDENTITY:  # a TF1 no-op (dropout without training=): its output is its input
            return inputs_code
        arguments = keras_code.layer_arguments(api, constructor, functional=functional)
        name = self.tf1_names.layer(api, arguments)
        if name is not None:
            code, _ = keras_code.layer(api, self.spelled(constructor), functional=functional, name=name)
        layer = self._piece(code, call)
        self.model.layers.append(layer)
        if api in LAYERS_WITH_WEIGHTS and not self.in_partitioned_scope:
            self.unpartitioned_weights.append(call)
        return f"{layer}({inputs_code})"

    def _nested_layer(self, node: cst.BaseExpression) -> str | None:
        """The api of a tf.layers call given as another layer's inputs, else None."""
        if not isinstance(node, cst.Call):
            return None
        api = self.api(node.func.func if isinstance(node.func, cst.Call) else node.func) or ""
        return api if api.startswith("layers.") else None

    def _table(self, api: str, call: cst.Call, target: str) -> None:
        """`table = get_variable(name, [rows, width])`: a Keras Embedding once embedding_lookup reads it."""
        args = keras_code.get_variable_arguments(self.spelled(call))
        name = self.tf1_names.variable(args.get("name"))
        if name is not None:  # the Embedding is named after TF1's variable: it is the table
            args["name"] = cst.parse_expression(name)
            self.model.tf1_renamed[f"{cst.parse_expression(name).evaluated_value}/embeddings"] = name
        if "partitioner" in args:
            self._strategy_partitioner(args["partitioner"])
        self.tables[target] = (args, self.in_partitioned_scope or "partitioner" in args, name)

    def _embedding(self, api: str, call: cst.Call, target: str) -> None:
        table = call.args[0].value if call.args and not call.args[0].keyword else None
        if not (isinstance(table, cst.Name) and table.value in self.tables):
            raise Unsupported(call, "embedding_lookup of a table that is not a get_variable of this model_fn")
        args, partitioned, name = self.tables[table.value]
        self.table_lookups.add(id(table))
        code, ids = keras_code.embedding(args, partitioned, self.spelled(call))
        if not partitioned:
            self.unpartitioned_weights.append(call)
        if name is not None and partitioned and keras_code.lookup_strategy(call) == "mod":
            self.model.mod_tables.append(name)
        self._note_features(ids)
        layer = self._piece(code, call)
        self.model.layers.append(layer)
        self._emit(target, f"{layer}({self.code(ids)})")
        self.model.chain = self.model.chain and is_name(ids, self.current)
        self.current = target

    def _input_layer(self, api: str, call: cst.Call, target: str) -> None:
        """`input_layer(features, columns)` of numeric columns: each flattened to float32, concatenated in name
        order (input_layer's), the names read now or, for columns built at run time, when the model is built."""
        args = bound_values(call, INPUT_LAYER)
        if set(args) != {"features", "feature_columns"} or not is_name(args["features"], "features"):
            raise Unsupported(call, "input_layer is migrated on the model_fn's features and numeric columns only")
        columns = ColumnReader(self.values).read(Value(args["feature_columns"], self.place))
        code = self.code(args["feature_columns"])
        if columns is None or has_runtime(columns):
            for name in [name for name in self.columns if re.search(rf"\b{name}\b", code)]:
                self._emit(name, self.columns.pop(name))
        writer = Writer()
        input_layer(columns, code, target, writer)
        self.model.lines += writer.lines
        self.model.bound += writer.bound
        if uses_math(columns):
            self.model.imports.append("math")
        self.model.features_dict = self.model.columns = True
        self.model.chain = False
        self.current = target

    def _check_tables_only_looked_up(self, function: cst.FunctionDef) -> None:
        """A table used otherwise than by one embedding_lookup (arithmetic, a second lookup) has no Keras layer."""
        for name in self.tables:
            uses = [node for node in subtree(function.body) if is_name(node, name)
                    and not isinstance(self.view.parent(node), cst.AssignTarget)]
            other = next((node for node in uses if id(node) not in self.table_lookups), None)
            if other is not None or len(uses) != 1:
                raise Unsupported(self.view.statement_of(other if other is not None else uses[-1]),
                                  f"`{name}` is used otherwise than by one embedding_lookup: a variable with no layer "
                                  "is not migrated; write the Keras layer or weight by hand")

    def _check_training_flag(self, api: str, call: cst.Call) -> None:
        """Keras turns dropout and batch statistics on in fit only: TF1 must have turned them on in TRAIN mode only."""
        if api not in TRAINING_DEPENDENT_FUNCTIONS:
            return
        training = keras_code.layer_arguments(api, call, functional=True).get("training")
        if training is not None and not (self._mode_of(training) == "TRAIN" or
                                         (isinstance(training, cst.Name) and training.value in self.training_flags)):
            raise Unsupported(training, f"{api} with training={self.code(training)}: migrated when it is "
                                        "`mode == ModeKeys.TRAIN` (Keras trains in fit, evaluates and predicts "
                                        "without); set the Keras training flag by hand")
        if api == "layers.batch_normalization":
            self.batch_norms.append(call)

    def _note_features(self, inputs: cst.BaseExpression) -> None:
        """`features["x"]` makes the model's inputs a dict of keras.Input."""
        if isinstance(inputs, cst.Subscript) and is_name(inputs.value, "features"):
            self.model.features_dict = self.model.reads_features = True

    def _variable_scope(self, call: cst.Call) -> bool:
        """`with variable_scope(name, partitioner=P):` around layers: P moves onto the strategy. Partitioned?"""
        args = bound_values(call, VARIABLE_SCOPE)
        if set(args) - {"name_or_scope", "partitioner"}:
            raise Unsupported(call, "a variable_scope with arguments other than a name and a partitioner")
        if "partitioner" in args:
            self._strategy_partitioner(args["partitioner"])
        self.tf1_names.enter(args.get("name_or_scope"))
        return "partitioner" in args

    def _named_partitioner(self, api: str, call: cst.Call, target: str) -> None:
        """`partitioner = fixed_size_partitioner(2)` (made TF2's by TFM201-203), for a variable_scope to take."""
        self.partitioners[target] = call

    def _strategy_partitioner(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name) and node.value in self.partitioners:
            node = self.partitioners[node.value]
        api = self.api(node.func) if isinstance(node, cst.Call) else None
        if not (api or "").startswith("distribute.experimental.partitioners."):
            raise Unsupported(node, "a partitioner other than the three compat.v1 ones along axis 0 (TFM201-203)")
        code = self.code(node)
        if self.model.partitioner not in (None, code):
            raise Unsupported(node, "two different partitioners: ParameterServerStrategy takes one for every "
                                    "variable; choose one, or write a Partitioner that decides by shape")
        self.model.partitioner = code

