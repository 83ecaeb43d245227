"""Writing feature columns' Keras code (the columns: rewrites/estimator/columns.py): the Writer binding each
expression once, and ``input_layer`` / ``linear_model`` of a list of columns, in name order as TF1's."""

from __future__ import annotations

import re

from rewrites.estimator.columns import (COMBINER_COMMENTS, FLAT, Embedding, Indicator, Numeric, Runtime,
                                        SharedEmbedding, combiner_code, literal, looked_up)

INPUT_LAYER_COMMENT = "# input_layer: the feature columns in name order, each as TF1 made it."
NUMERIC_ONLY_COMMENT = "# input_layer: the numeric columns in name order, each flattened to float32."
RUNTIME_LINEAR_SCOPE = "linear/linear_model"  # the layers weighing columns made at run time, named as TF1's scopes


class Writer:
    """The statements of the columns' Keras code, each expression bound once to a name of its own."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.bound: list[str] = []
        self._names: dict[str, str] = {}  # code -> the name bound to it
        self.scope: str | None = None     # TF1's variable scope of the columns' variables, if they have any
        self.renamed: dict[str, str] = {}  # a Keras layer's `layer/weight` -> TF1's name of the variable (code)
        self.columns_code = ""  # the code of the columns given, where a Runtime value is read
        self._indexes: dict[str, str] = {}  # columns code -> the name of its columns by name

    def value(self, given, plus: int = 0) -> str:
        """A column's argument (plus ``plus``) as code: written out, or read from the column the program made."""
        if not isinstance(given, Runtime):
            return str(given + plus)
        if self.columns_code not in self._indexes:
            self.comment("The feature columns by name, and those they are made of: sizes the program computed.")
            name = self._indexes[self.columns_code] = self._fresh("columns_by_name")
            self.assign(name, "{}")
            self.lines.append(f"pending = list({self.columns_code})\nwhile pending:\n    column = pending.pop()\n"
                              f"    if not isinstance(column, str):\n        {name}[column.name] = column\n"
                              "        pending += column.parents")
        code = self.bind(given.label, f"{self._indexes[self.columns_code]}[{literal(given.column)}].{given.attribute}")
        return f"{code} + {plus}" if plus else code

    def rename(self, keras_name: str, tf1_name: str) -> None:
        """The Keras weight ``keras_name`` is TF1's variable ``tf1_name``, in the columns' scope."""
        if self.scope is not None:
            self.renamed[keras_name] = literal(f"{self.scope}/{tf1_name}")

    def bind(self, name: str, code: str) -> str:
        """``name = code``, once: the name the code is bound to (another one if ``name`` is taken)."""
        if code in self._names:
            return self._names[code]
        name = self._fresh(name)
        self.lines.append(f"{name} = {code}")
        self.bound.append(name)
        self._names[code] = name
        return name

    def _fresh(self, name: str) -> str:
        name = _identifier(name)
        while name in self.bound:
            name += "_"
        return name

    def assign(self, target: str, code: str) -> None:
        """``target = code``: a name the caller chose."""
        self.lines.append(f"{target} = {code}")
        self.bound.append(target)

    def comment(self, text: str) -> None:
        if f"# {text}" not in self.lines:
            self.lines.append(f"# {text}")




# -- writing them

def input_layer(columns: list | None, columns_code: str, target: str, writer: Writer, scope: str | None = None) -> None:
    """Statements binding ``target`` to ``input_layer(features, columns)``, on the ``columns`` read or, made at
    run time (None), on the numeric columns ``columns_code`` holds, in name order; ``scope``: TF1's variable scope
    of the columns' tables."""
    writer.scope, writer.columns_code = scope, columns_code
    if columns is None:
        writer.comment(NUMERIC_ONLY_COMMENT[2:])
        writer.assign(target, f"keras.layers.Concatenate()([\n    {FLAT.format('column.key')}\n    for column in "
                            f"sorted({columns_code}, key=lambda column: column.name)])")
    elif all(isinstance(column, Numeric) and column.normalizer is None for column in columns):
        writer.comment(NUMERIC_ONLY_COMMENT[2:])
        keys = ", ".join(f'"{column.key}"' for column in columns)
        writer.assign(target, FLAT.format(literal(columns[0].key)) if len(columns) == 1 else
                    f"keras.layers.Concatenate()([\n    {FLAT.format('key')}\n    for key in ({keys})])")
    else:
        writer.comment(INPUT_LAYER_COMMENT[2:])
        names = [column.dense(writer) for column in columns]
        writer.assign(target, f"keras.layers.Concatenate()([{', '.join(names)}])" if len(names) > 1 else names[0])


def linear_model(columns: list | None, units: int, combiner: str, target: str, writer: Writer,
                 columns_code: str = "") -> None:
    """Statements binding ``target`` to TF1's ``linear_model(features, columns, units, sparse_combiner)``: per
    column a weight for each value (numeric) or bucket (categorical, its counts combined as ``combiner`` says:
    the weights' mean is the weights of the counts' mean), zeros at first, summed, and one bias (on the last
    column's layer: TF1 made it after the columns' weights). Columns made at run time (None: numeric columns,
    ``columns_code`` holds them) are weighed by layers named after TF1's scopes (RUNTIME_LINEAR_SCOPE)."""
    if columns is None:
        writer.comment("linear_model: the numeric columns in name order, each one's weights, summed, and a bias.")
        ordered = writer.bind("ordered_columns", f"sorted({columns_code}, key=lambda column: column.name)")
        weighted = writer.bind("weighted", (
            f"[\n    keras.layers.Dense(\n        units={units}, use_bias=column is {ordered}[-1], "
            f'kernel_initializer="zeros",\n        name=f"{RUNTIME_LINEAR_SCOPE}/{{column.name}}")(\n'
            f'        {FLAT.format("column.key")})\n    for column in {ordered}]'))
        writer.assign(target, f"keras.layers.Add()({weighted}) if len({weighted}) > 1 else {weighted}[0]")
        return
    writer.comment("linear_model: in name order, each column's weights, summed, and a bias.")
    writer.scope, writer.columns_code = "linear/linear_model", columns_code
    sums = []
    for index, column in enumerate(columns):
        bias = "True" if index == len(columns) - 1 else "False"
        if isinstance(column, (Numeric, Indicator)):
            values = column.dense(writer)
        else:
            values = counts = looked_up(column, writer, f"{column.name}_counts", combiner)
            if combiner != "sum":
                writer.comment(COMBINER_COMMENTS[combiner])
                values = writer.bind(f"{column.name}_combined",
                                     combiner_code(combiner, column).format(rows=counts, counts=counts))
        writer.rename(f"{column.name}_weights/kernel", f"{column.name}/weights")
        if bias == "True":
            writer.rename(f"{column.name}_weights/bias", "bias_weights")
        sums.append(writer.bind(f"{column.name}_weighted", (
            f'keras.layers.Dense(units={units}, use_bias={bias}, kernel_initializer="zeros", '
            f'name="{column.name}_weights")({values})')))
    writer.assign(target, f"keras.layers.Add()([{', '.join(sums)}])" if len(sums) > 1 else sums[0])


def uses_math(columns: list | None) -> bool:
    return any(isinstance(column, (Embedding, SharedEmbedding)) for column in columns or ())


def _identifier(name: str) -> str:
    identifier = re.sub(r"\W", "_", name)
    return f"column_{identifier}" if not identifier.isidentifier() or identifier in (
        "features", "net", "logits", "model", "optimizer", "tf", "keras", "math", "linear_model", "dnn_model",
        "linear_optimizer", "dnn_optimizer", "dnn_logits", "linear_logits", "index", "units", "hidden_units",
        "feature_columns", "name", "spec", "shape", "column", "pending") else identifier
