"""Feature columns -> the Keras inputs that give, per example, what TF1's ``input_layer`` gave.

Shared by the model_fn reader (``input_layer(features, columns)`` in a model_fn) and the canned
estimators (their ``feature_columns``). Numeric columns only, for now: each is flattened and cast
to float32, and they are concatenated in the order of their names (``input_layer`` sorts them).
"""

from __future__ import annotations

import libcst as cst

from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, bound_values, is_name

NUMERIC_COLUMN = ("key", "shape", "default_value", "dtype", "normalizer_fn")
INPUT_LAYER_COMMENT = "# input_layer: the numeric columns in name order, each flattened to float32."
FLAT = "keras.layers.Flatten()(tf.cast(features[{}], tf.float32))"


def input_layer_code(keys: list[str] | None, columns: str) -> str:
    """The Keras expression of ``input_layer(features, columns)``: on the ``keys`` read, or, when they are known
    at run time only (None), on the columns' keys in name order."""
    if keys is None:
        return (f"keras.layers.Concatenate()([\n    {FLAT.format('column.key')}\n    for column in "
                f"sorted({columns}, key=lambda column: column.name)])")
    if len(keys) == 1:
        return FLAT.format(f'"{keys[0]}"')
    names = ", ".join(f'"{key}"' for key in keys)
    return f"keras.layers.Concatenate()([\n    {FLAT.format('key')}\n    for key in ({names})])"


class NumericColumns:
    """Reads a list of numeric feature columns wherever the program built it."""

    def __init__(self, values: Values) -> None:
        self.values = values

    def keys(self, given: Value) -> list[str] | None:
        """The sorted keys of the numeric columns ``given`` holds; None when known only at run time. Unsupported
        for another kind of column, or a list the migration cannot follow."""
        trail: list = []
        columns = self.values.resolve(given, trail=trail)
        value = columns.node
        if isinstance(value, (cst.List, cst.Tuple)) and not value.elements:
            appended = self._appended(trail, columns)
            keys = [self._key(item) for item in appended]
        elif isinstance(value, (cst.List, cst.Tuple)):
            if any(isinstance(element, cst.StarredElement) for element in value.elements):
                raise columns.fail("feature columns with a `*` are not migrated: write the list out")
            keys = [self._key(Value(element.value, columns.place)) for element in value.elements]
        elif isinstance(value, cst.ListComp) and value.for_in.inner_for_in is None and not value.for_in.ifs \
                and isinstance(value.for_in.target, cst.Name):
            place = self.values.place_of(columns.view, value.elt)
            self._key(Value(value.elt, place), loop=value.for_in.target.value)
            iterated = self.values.constant(Value(value.for_in.iter, columns.place))
            keys = list(iterated) if isinstance(iterated, (list, tuple)) and all(
                isinstance(key, str) for key in iterated) else [None]
        else:
            raise given.fail("the feature columns must be a list the migration can follow (written "
                                    "out, a comprehension, or appended to in a loop)")
        if not keys:
            raise given.fail("no feature columns")
        return None if None in keys else sorted(keys)

    def _appended(self, trail: list, columns: Value) -> list[Value]:
        """The items `columns.append(item)` adds to an empty list (in a loop, typically)."""
        binding = next((step for step in reversed(trail) if getattr(step, "value", None) is not None
                        and step.value.node is columns.node), None)
        assignment = getattr(binding, "assignment", None)
        items = []
        for reference in getattr(assignment, "references", ()):
            node = reference.node
            view = columns.view
            attribute, call = view.parent(node), view.parent(view.parent(node))
            if isinstance(attribute, cst.Attribute) and attribute.attr.value == "append" and \
                    isinstance(call, cst.Call) and len(call.args) == 1:
                items.append(Value(call.args[0].value, self.values.place_of(view, call)))
            elif isinstance(attribute, (cst.Attribute, cst.AugAssign)) or isinstance(view.parent(node), cst.AugAssign):
                raise Unsupported(node, "feature columns added to a list otherwise than by append", view.path)
        return items

    def _key(self, column: Value, loop: str | None = None) -> str | None:
        """The key of a numeric_column (None: known at run time, e.g. the loop variable ``loop``)."""
        column = self.values.resolve(column)
        api = column.api() if isinstance(column.node, cst.Call) else None
        if api != "feature_column.numeric_column":
            raise column.fail(f"{api or 'a feature column'} : numeric_column is migrated; other "
                              "feature columns need Keras preprocessing layers, written by hand")
        # shape, default_value and dtype describe parsing; input_layer flattens and casts to float32 whatever comes.
        args = bound_values(column.node, NUMERIC_COLUMN)
        key, normalizer = args.get("key"), args.get("normalizer_fn")
        if normalizer is not None and not is_name(normalizer, "None"):
            raise column.fail("numeric_column with a normalizer_fn is not migrated: write the Keras input (and a "
                              "Normalization or Lambda layer) by hand")
        known = self.values.constant(Value(key, column.place)) if key is not None else None
        return known if isinstance(known, str) else None
