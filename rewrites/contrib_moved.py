"""TFM005: the parts of tf.contrib that live on, where they live now.

TFM005 contrib-moved

What it does: slim, and the layers, initializers, regularizers, arg_scope and variable helpers of
`tf.contrib.layers` and `tf.contrib.framework`, come from the tf-slim package (`import tensorflow.contrib.slim as
slim` -> `import tf_slim as slim`, `tf.contrib.layers.fully_connected` -> `tf_slim.fully_connected`, `from
tensorflow.contrib.framework import arg_scope` -> `from tf_slim import arg_scope`); `tf.contrib.framework.nest`
becomes `tf.nest`, contrib.framework's global step functions tf.train's, and contrib.rnn's cells and static RNNs
that were TF1's own (`BasicLSTMCell`, `MultiRNNCell`, `static_rnn`, ...) `tf.nn.rnn_cell`'s and `tf.nn`'s. An import is moved when every use of
the name it binds is; what tf-slim does not have (feature columns, `embed_sequence`), or does not run on TF 2
(`batch_norm`), stays, and TFM003 names it.
Why: TensorFlow 2 has no tf.contrib, so a program that imports it cannot start; tf-slim 1.1.0 is the very code
of contrib.slim and contrib.layers, maintained for TensorFlow 2, and the variables it makes keep their names.
`tf.contrib.eager.list_devices()` becomes `[device.name for device in tf.config.list_logical_devices()]`.
contrib.metrics' streaming metrics that returned TF 1.x's tf.metrics of their arguments
(`tf.contrib.metrics.streaming_accuracy(predictions, labels)`, `metric_ops.streaming_mean(loss)`) become those
(`tf.metrics.accuracy(predictions=predictions, labels=labels)`: tf.metrics takes labels first, so predictions
and labels are given by keyword).
`tf.contrib.training.HParams(**values)` whose object the program only reads and sets attribute by attribute
(`hparams.learning_rate`, in this module, or passed to its functions) becomes `types.SimpleNamespace(**values)`.
What may differ: nothing: the same functions. The program needs the tf-slim package (`pip install tf-slim`).
An HParams read with its own methods (`values()`, `parse()`, `set_hparam()`) or passed elsewhere stays (TFM003).

Before:

    import tensorflow.compat.v1 as tf
    import tensorflow.contrib.slim as slim

    def net(images):
      with slim.arg_scope([slim.conv2d], padding="SAME"):
        hidden = slim.conv2d(images, 32, [3, 3])
      return tf.contrib.layers.fully_connected(slim.flatten(hidden), 10, activation_fn=tf.nn.relu)

After:

    import tensorflow.compat.v1 as tf
    import tf_slim as slim

    def net(images):
      with slim.arg_scope([slim.conv2d], padding="SAME"):
        hidden = slim.conv2d(images, 32, [3, 3])
      return slim.fully_connected(slim.flatten(hidden), 10, activation_fn=tf.nn.relu)

Finding:

    2:1: TFM005 [exact] `import tensorflow.contrib.slim as slim` -> `import tf_slim as slim` (the tf-slim package:
    pip install tf-slim)
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import ImportAssignment, ParentNodeProvider, ScopeProvider

from rewrites.base import TFCodemod
from rewrites.contrib_successors import CALLS, HPARAMS, HPARAMS_METHODS, PACKAGES, attribute_uses, staying, \
    streaming_metric, successor
from rewrites.syntax import bind_arguments, root, source, subtree

RULE = "TFM005"
PREFIX = "tensorflow."


class Rewrite(TFCodemod):
    METADATA_DEPENDENCIES = (*TFCodemod.METADATA_DEPENDENCIES, ParentNodeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._imports: dict[cst.CSTNode, cst.CSTNode] = {}   # import statement -> its successor's
        self._modules: set[cst.CSTNode] = set()               # `tf.contrib.slim` of `slim = tf.contrib.slim`
        self._slim: str | None = None                         # a module-level name bound to tf_slim
        uses = attribute_uses(node)
        for statement in subtree(node):
            if isinstance(statement, (cst.Import, cst.ImportFrom)):
                moved = self._moved_import(statement, uses)
                if moved is not None:
                    self._imports[statement] = moved
            elif isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0].target, cst.Name):
                api = self.api(statement.value)
                if api in PACKAGES and not staying(api, uses.get(statement.targets[0].target.value, ())):
                    self._modules.add(statement.value)
        for line in node.body:
            for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
                alias = _binds_tf_slim(self._imports.get(small, small))
                self._slim = self._slim or alias
        functions = {f.name.value: f for f in node.body if isinstance(f, cst.FunctionDef)}
        self._namespaces = {statement.value for statement in subtree(node) if isinstance(statement, cst.Assign)
                            and self.api(getattr(statement.value, "func", None)) in HPARAMS
                            and self._only_attributes(statement, functions)}

    # -- HParams ----------------------------------------------------------------------------------

    def _only_attributes(self, assign: cst.Assign, functions: dict[str, cst.FunctionDef]) -> bool:
        """`hparams = HParams(name=value, **values)` whose object is only read or set attribute by attribute."""
        call = assign.value
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) or any(
                arg.keyword is None and arg.star != "**" or arg.keyword is not None and arg.keyword.value in (
                    "hparam_def", "model_structure") for arg in call.args):
            return False
        target = assign.targets[0].target
        return self._attribute_uses(target, target.value, functions, depth=0)

    def _attribute_uses(self, bound: cst.CSTNode, name: str, functions: dict[str, cst.FunctionDef], depth: int) -> bool:
        """Every read of the value ``bound`` (an assignment's target, or a parameter) binds to ``name`` gets or sets
        an attribute of it (not an HParams method), or passes it to a function of the module whose parameter does
        the same."""
        scope = self.get_metadata(ScopeProvider, bound, None)
        assignments = [a for a in (scope[name] if scope is not None else ()) if getattr(a, "node", None) is bound]
        if len(assignments) != 1 or depth > 3:
            return False
        for access in assignments[0].references:
            node = access.node
            parent = self.get_metadata(ParentNodeProvider, node, None)
            if isinstance(parent, cst.Attribute) and parent.value is node:
                if parent.attr.value in HPARAMS_METHODS:
                    return False
                continue
            parameter = self._parameter_given(node, parent, functions)
            if parameter is None or not self._attribute_uses(parameter, parameter.name.value, functions, depth + 1):
                return False
        return True

    def _parameter_given(self, node, argument, functions: dict[str, cst.FunctionDef]) -> cst.Param | None:
        """The parameter of a module function that ``node``, an argument of a call of it, is given to."""
        call = self.get_metadata(ParentNodeProvider, argument, None)
        if not (isinstance(argument, cst.Arg) and argument.value is node and not argument.star
                and isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in functions):
            return None
        params = functions[call.func.value].params.params
        if argument.keyword is not None:
            return next((p for p in params if p.name.value == argument.keyword.value), None)
        index = [arg for arg in call.args if arg.keyword is None].index(argument)
        return params[index] if index < len(params) else None

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        api = self.api(original.func)
        if api in CALLS and not original.args and "contrib" in _chain(original.func) and self.wants(RULE, original):
            template, differs = CALLS[api]
            new = cst.parse_expression(template.format(tf=root(original.func).value))
            return self.replace(RULE, original, new, f"`{source(original)}` -> `{source(new)}`: {differs}")
        metric = streaming_metric(api)
        if metric is not None and bind_arguments(original, metric[1]) is not None and self.wants(RULE, original):
            return self._metric(original, updated, *metric)
        if original not in self._namespaces or not self.wants(RULE, original):
            return updated
        AddImportsVisitor.add_needed_import(self.context, "types")
        start = root(original.func)
        scope = self.get_metadata(ScopeProvider, start, None)
        for assignment in scope[start.value] if scope is not None and isinstance(start, cst.Name) else ():
            if isinstance(assignment, ImportAssignment):  # the import of HParams goes once nothing else uses it
                RemoveImportsVisitor.remove_unused_import_by_node(self.context, assignment.node)
        namespace = updated.with_changes(func=cst.parse_expression("types.SimpleNamespace"))
        return self.replace(RULE, original, namespace, f"`{source(original.func)}` -> `types.SimpleNamespace`: the "
                                                       "program only reads and sets its values")

    def _metric(self, original: cst.Call, updated: cst.Call, name: str, parameters: tuple[str, ...]) -> cst.Call:
        """`tf.contrib.metrics.streaming_X(...)` -> `tf.compat.v1.metrics.X(...)`, which it returned; the arguments
        given by position named where tf.metrics takes them in another order (labels first)."""
        args = list(updated.args)
        if parameters[0] == "predictions":
            equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
            args = [arg if arg.keyword else arg.with_changes(keyword=cst.Name(parameters[index]), equal=equal)
                    for index, arg in enumerate(args)]
        through_tf = "contrib" in _chain(original.func)  # `tf.contrib.metrics.X`: tf.metrics is `tf`'s, as TF1's
        func = cst.parse_expression(f"{root(original.func).value}.metrics.{name}") if through_tf \
            else self.tf2(f"compat.v1.metrics.{name}")
        new = updated.with_changes(func=func, args=args)
        return self.replace(RULE, original, new, f"`{source(original.func)}` -> `{source(new.func)}`: the same "
                                                 "metric, TF 1.x's contrib function returned it")

    # -- imports ---------------------------------------------------------------------------------

    def _moved_import(self, node: cst.Import | cst.ImportFrom, uses: dict[str, set[str]]) -> cst.CSTNode | None:
        """The import as it reads once what it imports comes from the successor, or None to keep it."""
        if isinstance(node, cst.Import):
            alias = node.names[0]
            api = _api(source(alias.name))
            if len(node.names) != 1 or alias.asname is None or api not in PACKAGES \
                    or staying(api, uses.get(alias.evaluated_alias, ())):
                return None
            return node.with_changes(names=[alias.with_changes(name=_dotted(PACKAGES[api]))])
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return None
        module = _api(source(node.module)) or ("contrib" if source(node.module) == "tensorflow.contrib" else None)
        if module is None:
            return None
        apis = [f"{module}.{alias.evaluated_name}" for alias in node.names]
        if len(apis) == 1 and apis[0] in PACKAGES:  # `from tensorflow.contrib import slim`: import tf_slim as slim
            alias = node.names[0]
            name = alias.evaluated_alias or alias.evaluated_name
            if staying(apis[0], uses.get(name, ())):
                return None
            return cst.Import(names=[cst.ImportAlias(_dotted(PACKAGES[apis[0]]), asname=cst.AsName(cst.Name(name)))])
        moved = [successor(api) for api in apis]
        if None in moved or any(api in PACKAGES for api in apis) or len({new.rpartition(".")[0] for new in moved}) != 1:
            return None
        target = moved[0].rpartition(".")[0]
        target = "tensorflow" + target[len("tf"):] if target == "tf" or target.startswith("tf.") else target
        names = [alias.with_changes(name=cst.Name(new.rpartition(".")[2])) for alias, new in zip(node.names, moved)]
        return node.with_changes(module=_dotted(target), names=names)

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.CSTNode:
        return self._leave_import(original, updated)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.CSTNode:
        return self._leave_import(original, updated)

    def _leave_import(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        moved = self._imports.get(original)
        if moved is None or not self.wants(RULE, original):
            return updated
        return self.replace(RULE, original, moved, f"`{source(original)}` -> `{source(moved)}`{_needs(moved)}")

    # -- references through tf ------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        api = self.api(node)
        return not (api and api.startswith("contrib."))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        api = self.api(original)
        if not api or not api.startswith("contrib.") or "contrib" not in _chain(original):
            return updated  # `slim.conv2d` of a contrib import moves with the import
        new = successor(api)
        if new is None or (api in PACKAGES and original not in self._modules) or new.startswith("tf_slim.nets") \
                or not self.wants(RULE, original):
            return updated
        if new.startswith("tf."):
            moved = cst.parse_expression(f"{root(original).value}.{new[len('tf.'):]}")
        else:
            if self._slim is None:
                AddImportsVisitor.add_needed_import(self.context, "tf_slim")
            moved = cst.parse_expression((self._slim or "tf_slim") + new[len("tf_slim"):])
        return self.replace(RULE, original, moved, f"`{source(original)}` -> `{source(moved)}`{_needs(moved)}")


def _api(dotted: str) -> str | None:
    """"tensorflow.contrib.slim" -> "contrib.slim"; None for what is not in a tensorflow.contrib module."""
    return dotted[len(PREFIX):] if dotted.startswith(PREFIX + "contrib.") else None


def _binds_tf_slim(node: cst.CSTNode) -> str | None:
    """The name `import tf_slim [as X]` binds."""
    if isinstance(node, cst.Import):
        for alias in node.names:
            if alias.evaluated_name == "tf_slim":
                return alias.evaluated_alias or "tf_slim"
    return None


def _dotted(path: str) -> cst.Name | cst.Attribute:
    return cst.parse_expression(path)


def _chain(node: cst.BaseExpression) -> list[str]:
    """The attribute names of a chain (`tf.contrib.layers.flatten`: contrib, layers, flatten)."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    return parts[::-1]


def _needs(new: cst.CSTNode) -> str:
    return " (the tf-slim package: pip install tf-slim)" if "tf_slim" in source(new) else ""
