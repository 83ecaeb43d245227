"""Feature columns a factory computes for its canned estimator, kept for the Keras model.

A factory that makes and returns the estimator (``build_estimator(model_dir, nbuckets, hidden_units)``, the
taxifare trainers') goes with it. Where the columns it passes are computed from its parameters (boundaries of
``np.linspace(38.0, 42.0, nbuckets)``, a crossed column's ``nbuckets * nbuckets`` buckets), the code that computes
them cannot be written out at the driver: the factory stays instead, renamed, returning those columns, and the
driver calls it with the factory call's arguments and builds the Keras model on what it returns (the sizes are
read from the columns, rewrites/estimator/columns.py).

Before::

    def build_estimator(model_dir, nbuckets, hidden_units):
      latbuckets = np.linspace(38.0, 42.0, nbuckets).tolist()
      b_plat = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("pickuplat"), latbuckets)
      wide_columns = [b_plat]
      deep_columns = [tf.feature_column.embedding_column(b_plat, 3)]
      estimator = tf.estimator.DNNLinearCombinedRegressor(
          model_dir=model_dir, linear_feature_columns=wide_columns, dnn_feature_columns=deep_columns,
          dnn_hidden_units=hidden_units)
      return estimator


    def train_and_evaluate(args):
      estimator = build_estimator(args["output_dir"], args["nbuckets"], args["hidden_units"])

After::

    def build_estimator_columns(model_dir, nbuckets, hidden_units):
      latbuckets = np.linspace(38.0, 42.0, nbuckets).tolist()
      b_plat = tf.feature_column.bucketized_column(tf.feature_column.numeric_column("pickuplat"), latbuckets)
      wide_columns = [b_plat]
      deep_columns = [tf.feature_column.embedding_column(b_plat, 3)]

      return deep_columns, wide_columns
    ...
    def train_and_evaluate(args):
      ...
      with strategy.scope():
        deep_columns, wide_columns = build_estimator_columns(
            args["output_dir"], args["nbuckets"], args["hidden_units"])
        model = build_dnn_linear_combined_regressor_model(
            dataset.element_spec[0],
            dnn_feature_columns=deep_columns,
            hidden_units=args["hidden_units"],
            linear_feature_columns=wide_columns)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.estimator.program import Program
from rewrites.program.places import Value
from rewrites.program.relocation import relocate
from rewrites.program.values import own_nodes
from rewrites.syntax import Unsupported, source

COLUMNS = ("feature_columns", "dnn_feature_columns", "linear_feature_columns")


@dataclass
class Kept:
    lines: list[str] = field(default_factory=list)     # at the driver, before the model is built
    codes: dict[str, str] = field(default_factory=dict)  # keyword -> its code at the driver
    names: list[str] = field(default_factory=list)     # the names those lines bind there


def keep(emitter, program: Program, taken: set[str]) -> Kept:
    """The factory kept for the columns the driver cannot compute (nothing when it can compute them all)."""
    model_fn = program.setup.model_fn
    factories = [function for _, function in program.factories]
    local: dict[str, Value] = {}
    for key, value in model_fn.keywords.items():
        if key not in COLUMNS:
            continue
        try:
            emitter.relocated(value, program)
        except Unsupported:
            if not _computed_in(emitter.values, value, factories):
                raise
            local[key] = value
    if not local:
        return Kept()
    first = next(iter(local.values()))
    factory, call = first.place.function, first.place.call
    if call is None or any(value.place.function is not factory for value in local.values()):
        raise first.fail("feature columns computed in more than one function, or in a factory called more than once: "
                         "make them in one function")
    returned = next(node for node in own_nodes(factory) if isinstance(node, cst.Return))  # its one (Values.returned)
    new_name = f"{factory.name.value}_columns"
    names = list(dict.fromkeys(value.node.value for value in local.values()))
    if new_name in taken or new_name in _module_names(first):
        raise first.fail(f"the migrated program keeps `{factory.name.value}` as `{new_name}`, a name already used")
    kept = Kept(names=[_fresh(name, taken) for name in names])
    kept.codes = {key: kept.names[names.index(value.node.value)] for key, value in local.items()}
    edits = emitter.module_edits(first.view)
    edits.expressions[factory.name] = cst.Name(new_name)
    statement = first.view.statement_of(returned)
    edits.replace(statement, [cst.SimpleStatementLine([cst.Return(cst.parse_expression(", ".join(names)))],
                                                      leading_lines=[cst.EmptyLine(indent=False)])])
    docstring = _docstring(factory)
    if docstring is not None:
        edits.replace(docstring, [cst.SimpleStatementLine([cst.Expr(cst.SimpleString(
            f'"""The feature columns `{factory.name.value}` made for its estimator: the Keras model is built on '
            'them."""'))])])
    kept.lines = [f"{', '.join(kept.names)} = {_call(emitter, program, call, new_name)}"]
    program.kept_factories.append(factory)
    return kept


def _computed_in(values, value: Value, factories: list[cst.FunctionDef]) -> bool:
    """A local name of a factory, bound there to what the driver cannot compute again."""
    if not isinstance(value.node, cst.Name) or not any(value.place.function is f for f in factories):
        return False
    binding = values.binding(value.node, value.place)
    return binding.kind == "value" and binding.value is not None and binding.value.place.function is \
        value.place.function and not isinstance(getattr(binding.assignment, "node", None), cst.Param)


def _call(emitter, program: Program, call, new_name: str) -> str:
    """The factory's call as the driver writes it, calling the kept function."""
    code = relocate(emitter.values, Value(call.node, call.place), program.place,
                    spell=lambda view, node: emitter.spelling(view).reference(node))
    func = code.func
    if isinstance(func, cst.Name):
        func = cst.Name(new_name)
    elif isinstance(func, cst.Attribute):
        func = func.with_changes(attr=cst.Name(new_name))
    else:
        raise Unsupported(call.node, "the factory making the feature columns must be called by its name",
                          call.place.view.path)
    return source(code.with_changes(func=func))


def _docstring(function: cst.FunctionDef) -> cst.SimpleStatementLine | None:
    first = function.body.body[0] if isinstance(function.body, cst.IndentedBlock) and function.body.body else None
    if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) and isinstance(
            first.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        return first
    return None


def _module_names(value: Value) -> set[str]:
    return {statement.name.value for statement in value.view.module.body
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef))}


def _fresh(name: str, taken: set[str]) -> str:
    candidate = name
    while candidate in taken:
        candidate += "_"
    taken.add(candidate)
    return candidate
