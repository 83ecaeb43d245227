"""TFM306-308: tf.estimator.inputs.numpy_input_fn / pandas_input_fn -> tf.data input functions.

The TF1 helpers feed arrays through queues; a tf.data pipeline yields the same batches in the same order: the
examples in order (shuffle=False), num_epochs passes over them, batches of batch_size that run across the end of
a pass, a short last batch only when the passes end. An Estimator takes either input function, so the rewritten
program still runs with TF1; the Estimator rewrite then reads it like any tf.data input function.

TF1 evaluated x and y once, where the input function was made; the new input function reads them at every call.
So an x or y that computes (a call, arithmetic: anything but names, attributes and literal subscripts of them) is
bound to a new name (`features`, `labels`) just before the statement that made the input function, and the
dataset reads that name: computed once, there, in the same order. That needs the statement to run the call
once, as it is written: not in a lambda, a condition or a comprehension, and the call's other arguments only
read. A pandas_input_fn is migrated when y is absent or visibly one column (frame["label"], frame[LABEL] where
the module binds LABEL once to a string, frame.pop("label"), those in arithmetic or `.astype(...)`): TF1 turns a
DataFrame y into a dict.

TFM306 numpy-pandas-input

What it does: tf.estimator.inputs.numpy_input_fn or pandas_input_fn with shuffle=False becomes an input function
returning a tf.data dataset: from_tensor_slices, repeat for num_epochs passes (forever when num_epochs is None),
batch(batch_size). A module-level "name = numpy_input_fn(...)" becomes "def name(): return <dataset>", an input
function written inline becomes "lambda: <dataset>".
Why: the TF1 helpers feed arrays through queues, which TensorFlow 2 does not run; the Estimator migration then
reads the new function like any tf.data input function. The program still runs with TF1 too.
What may differ: nothing: the same batches in the same order.

Before:

    import tensorflow.compat.v1 as tf1

    train_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": train_x}, y=train_y, batch_size=16, num_epochs=None, shuffle=False)

After:

    import tensorflow as tf


    def train_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y)).repeat().batch(16)

Finding:

    3:18: TFM306 [exact] numpy_input_fn -> tf.data: the same batches in the same order

TFM307 shuffled-input

What it does: the same as TFM306 for shuffle=True: the dataset gets .shuffle(queue_capacity) before its passes.
A shuffle given by a name (`shuffle=shuffle`, set by mode) gets `.shuffle(queue_capacity if shuffle else 1)`:
a buffer of one example keeps their order.
Why: as for TFM306: TensorFlow 2 does not run the TF1 queues.
What may differ: the order of the examples: the same examples in batches of the same size, in another random
order (the order of the TF1 queue cannot be reproduced).

Before:

    import tensorflow.compat.v1 as tf1

    train_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": train_x}, y=train_y, batch_size=16, num_epochs=1, shuffle=True)

After:

    import tensorflow as tf


    def train_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y)).shuffle(1000).batch(16)

Finding:

    3:18: TFM307 [numeric] numpy_input_fn(shuffle=True) -> tf.data with .shuffle(): the same examples and batch
    sizes in another random order

TFM308 input-fn-manual

What it does: reports a numpy_input_fn or pandas_input_fn that cannot be migrated safely and leaves it as it is:
shuffle neither True, False nor a name (or attribute) holding one, x or y computed where it cannot be bound to a
name first (in a lambda, a condition, beside other computed arguments), a y that is not one column,
target_column, arguments that cannot be read.
Why: TF1 evaluated x and y once; the new input function must not compute them again at every call, and the other
cases have no tf.data equivalent the migration can be sure of.
What may differ: the code is unchanged; the finding says what to change before running tf-migrate again.

Before:

    import tensorflow.compat.v1 as tf1

    train_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": train_x}, y=train_y, batch_size=16, shuffle=args.mode == "train")

After:

    import tensorflow.compat.v1 as tf1

    train_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": train_x}, y=train_y, batch_size=16, shuffle=args.mode == "train")

Finding:

    3:18: TFM308 [manual] numpy_input_fn left as it is: shuffle is neither True, False nor a name holding one (TF1
    requires it)
"""

from __future__ import annotations

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.syntax import (Bindings, bind_arguments, is_none, is_pure_read, is_read_only, single_assign, source,
                             with_blank_lines)

NUMPY = ("x", "y", "batch_size", "num_epochs", "shuffle", "queue_capacity", "num_threads")
PANDAS = (*NUMPY, "target_column")
DEFAULTS = {"batch_size": "128", "num_epochs": "1", "queue_capacity": "1000"}
SERIES_METHODS = {"astype", "abs", "clip", "fillna", "round"}  # a Series' methods that give a Series


class Rewrite(TFCodemod):
    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._functions: list[cst.FunctionDef] = []  # the defs written for module-level input_fns
        self._module_level = {id(statement) for statement in node.body}
        self._module_level_values = {id(statement.body[0].value) for statement in node.body
                                     if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                                     and isinstance(statement.body[0], cst.Assign)}
        self._strings = _module_strings(node)
        self._bindings = Bindings()
        node.visit(self._bindings)
        self._statements: list[cst.SimpleStatementLine] = []  # the statement being read, innermost last
        self._deferred = 0  # inside code that may run later, or not at all (a lambda, `a if c else b`, ...)
        self._hoisted: dict[int, list[cst.SimpleStatementLine]] = {}  # statement -> the bindings that go before it

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statements.append(node)

    def _defer(self, node: cst.CSTNode) -> None:
        self._deferred += 1

    def _undefer(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        self._deferred -= 1
        return updated

    visit_Lambda = visit_IfExp = visit_BooleanOperation = visit_ListComp = visit_SetComp = visit_DictComp = \
        visit_GeneratorExp = _defer
    leave_Lambda = leave_IfExp = leave_BooleanOperation = leave_ListComp = leave_SetComp = leave_DictComp = \
        leave_GeneratorExp = _undefer

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.BaseStatement:
        """`name = numpy_input_fn(...)` at module level -> `def name(): return <dataset>`; the bindings of what the
        call computed go before the statement."""
        self._statements.pop()
        small = original.body[0] if len(original.body) == 1 else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                and isinstance(small.value, cst.Call) and id(original) in self._module_level:
            self._statements.append(original)  # the call's own statement, for its bindings
            dataset = self._dataset(small.value)
            self._statements.pop()
            if dataset is not None:
                name = small.targets[0].target.value
                updated = cst.parse_statement(f"def {name}():\n    return {dataset}\n")
                self._functions.append(updated)
                updated = self.replace(self._rule(small.value), small.value, updated, self._message(small.value))
        hoisted = self._hoisted.pop(id(original), None)
        if hoisted is None:
            return updated
        if updated not in self._functions:
            updated = updated.with_changes(leading_lines=())
        return cst.FlattenSentinel([hoisted[0].with_changes(leading_lines=original.leading_lines), *hoisted[1:],
                                    updated])

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        """Two blank lines around each new top-level def, as around any other."""
        body = list(updated_node.body)
        written = [any(statement is function for function in self._functions) for statement in body]
        for index, statement in enumerate(body):
            if index and (written[index] or written[index - 1]):
                body[index] = with_blank_lines(statement, 2)
        return super().leave_Module(original_node, updated_node.with_changes(body=body))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """An input_fn built inline -> `lambda: <dataset>` (module-level assignments are handled above)."""
        if id(original) in self._module_level_values:
            return updated
        dataset = self._dataset(original)
        if dataset is None:
            return updated
        return self.replace(self._rule(original), original, cst.parse_expression(f"lambda: {dataset}"),
                            self._message(original))

    # -- translation ----------------------------------------------------------

    def _dataset(self, call: cst.Call) -> str | None:
        """The tf.data pipeline of a numpy_input_fn / pandas_input_fn call, or None (reported when unsafe)."""
        api = self._api(call)
        if api not in ("estimator.inputs.numpy_input_fn", "estimator.inputs.pandas_input_fn"):
            return None
        bound = bind_arguments(call, PANDAS if api.endswith("pandas_input_fn") else NUMPY)
        if bound is None:
            return self._manual(call, "arguments that cannot be read statically (*args, **kwargs, unknown names)")
        args = {name: source(arg.value) for name, (_, arg) in bound.items()}
        if "shuffle" not in bound or args["shuffle"] not in ("True", "False") and not (
                isinstance(bound["shuffle"][1].value, (cst.Name, cst.Attribute, cst.Subscript))
                and is_read_only(bound["shuffle"][1].value)):
            return self._manual(call, "shuffle is neither True, False nor a name holding one (TF1 requires it)")
        computed = {name: bound[name][1].value for name in ("x", "y") if name in bound
                    and not is_read_only(bound[name][1].value)}
        if computed and not self._can_bind(bound, computed):
            return self._manual(call, f"`{source(next(iter(computed.values())))}` is computed, once in TF1 but at "
                                      "every call of the new input_fn, and not where it can be bound to a name first "
                                      "(in a lambda, a condition, beside other computed arguments): bind it first")
        if not self.wants(self._rule(call), call):
            return None
        pandas = api.endswith("pandas_input_fn")
        if pandas and not self._pandas_readable(call, bound):
            return None
        if computed:
            bound = self._bind_computed(call, bound, computed)
            args = {name: source(arg.value) for name, (_, arg) in bound.items()}
        features, labels = args["x"], args.get("y")
        if pandas:
            features = f"dict({features})"
        elements = f"({features}, {labels})" if labels is not None and labels != "None" else features
        chain = self.tf2(f"data.Dataset.from_tensor_slices({elements})")
        dataset = source(chain)
        capacity = args.get('queue_capacity', DEFAULTS['queue_capacity'])
        if args["shuffle"] == "True":
            dataset += f".shuffle({capacity})"
        elif args["shuffle"] != "False":  # a buffer of one keeps the order
            dataset += f".shuffle({capacity} if {args['shuffle']} else 1)"
        epochs = args.get("num_epochs", DEFAULTS["num_epochs"])
        if epochs != "1":
            dataset += ".repeat()" if epochs == "None" else f".repeat({epochs})"
        return dataset + f".batch({args.get('batch_size', DEFAULTS['batch_size'])})"

    def _can_bind(self, bound, computed: dict[str, cst.BaseExpression]) -> bool:
        """Can what x and y compute be bound to names before the call's statement: once, as TF1 computed them, in
        the order TF1 did (the call's other arguments only read, as `len(frame)` does)?"""
        return bool(self._statements) and not self._deferred and all(
            is_pure_read(arg.value) for name, (_, arg) in bound.items() if name not in computed)

    def _bind_computed(self, call: cst.Call, bound, computed: dict[str, cst.BaseExpression]) -> dict:
        """Bind each computed argument to a new name before the call's statement; ``bound`` reading those names."""
        names = {"x": "features", "y": "labels"}
        lines = self._hoisted.setdefault(id(self._statements[-1]), [])
        bound = dict(bound)
        for parameter, value in computed.items():
            name, number = names[parameter], 1
            while name in self._bindings.written:
                name, number = f"{names[parameter]}_{number}", number + 1
            self._bindings.written.add(name)
            lines.append(cst.parse_statement(f"{name} = {source(value)}\n"))
            position, arg = bound[parameter]
            bound[parameter] = (position, arg.with_changes(value=cst.Name(name)))
        return bound

    def _pandas_readable(self, call: cst.Call, bound) -> bool:
        """A pandas_input_fn whose features are the frame's columns, its labels one column (else reported)."""
        if "target_column" in bound:
            self._manual(call, "target_column only names y inside the TF1 queue: drop it, then migrate")
            return False
        y = bound["y"][1].value if "y" in bound and not is_none(bound["y"][1].value) else None
        if y is not None and not _is_one_column(y, self._strings):
            self._manual(call, "y is not visibly one column (frame[\"label\"], frame.pop(\"label\")): TF1 turns a "
                               "DataFrame y into a dict of columns; write the tf.data pipeline by hand")
            return False
        return True

    def _manual(self, call: cst.Call, why: str) -> None:
        self.report("TFM308", call, f"{self._api(call).rpartition('.')[2]} left as it is: {why}")
        return None

    def _rule(self, call: cst.Call) -> str:
        return "TFM306" if _shuffle(call) == "False" else "TFM307"

    def _message(self, call: cst.Call) -> str:
        name, shuffle = self._api(call).rpartition(".")[2], _shuffle(call)
        if shuffle == "True":
            return (f"{name}(shuffle=True) -> tf.data with .shuffle(): the same examples and batch sizes in another "
                    "random order")
        if shuffle != "False":
            return (f"{name}(shuffle={shuffle}) -> tf.data shuffled when {shuffle} is True: then the same examples "
                    "and batch sizes in another random order (else the same batches in the same order)")
        return f"{name} -> tf.data: the same batches in the same order"

    # -- where the call is -------------------------------------------------------

    def _api(self, call: cst.Call) -> str | None:
        name = self.tf_name(call.func)
        return name.api if name else None



def _shuffle(call: cst.Call) -> str | None:
    """The shuffle argument's code."""
    bound = bind_arguments(call, PANDAS)
    return source(bound["shuffle"][1].value) if bound and "shuffle" in bound else None


def _is_one_column(node: cst.BaseExpression, strings: dict[str, object]) -> bool:
    """`frame["label"]` or `frame[LABEL]` (LABEL a module's string), `frame.pop("label")`, and those in arithmetic
    with numbers or names (`frame["price"] / SCALE`) or converted (`.astype(...)`): a Series."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _is_string(node.slice[0].slice.value, strings)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and is_read_only(node.func.value):
        return node.func.attr.value == "pop" and len(node.args) == 1 and _is_string(node.args[0].value, strings)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in SERIES_METHODS:
        return _is_one_column(node.func.value, strings)
    if isinstance(node, cst.BinaryOperation):
        sides = (node.left, node.right)
        return any(_is_one_column(side, strings) for side in sides) and all(
            _is_one_column(side, strings) or isinstance(side, (cst.Integer, cst.Float, cst.Name)) for side in sides)
    return False


def _is_string(node: cst.BaseExpression, strings: dict[str, object]) -> bool:
    return isinstance(node, cst.SimpleString) or isinstance(_string_constant(node, strings), str)


def _module_strings(module: cst.Module) -> dict[str, object]:
    """The names a module binds once, at its top level, to a string or a list or tuple of strings
    (`LABEL = "Species"`, `CSV_COLUMNS = ["fare", "lat"]`, `LABEL = CSV_COLUMNS[0]`), and never changes."""
    stores = Bindings()
    module.visit(stores)
    strings: dict[str, object] = {}
    for statement in module.body:
        assigned = single_assign(statement)
        if assigned and stores.counts[assigned[0]] == 1 and assigned[0] not in stores.changed:
            value = _string_constant(assigned[1], strings)
            if value is not None:
                strings[assigned[0]] = value
    return strings


def _string_constant(node: cst.BaseExpression, strings: dict[str, object]) -> str | tuple[str, ...] | None:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value if isinstance(node.evaluated_value, str) else None
    if isinstance(node, cst.Name):
        return strings.get(node.value)
    if isinstance(node, (cst.List, cst.Tuple)):
        values = tuple(_string_constant(element.value, strings) if isinstance(element, cst.Element) else None
                       for element in node.elements)
        return values if all(isinstance(value, str) for value in values) else None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        sequence, index = _string_constant(node.value, strings), node.slice[0].slice.value
        negative = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
        number = index.expression if negative else index
        if isinstance(sequence, tuple) and isinstance(number, cst.Integer):
            position = -int(number.value) if negative else int(number.value)
            return sequence[position] if -len(sequence) <= position < len(sequence) else None
    return None
