"""`tf` after migration: a migrated module imports TF2 as `tf`, and what stays TF1 says so.

Real TF1 programs bind `tf` to TensorFlow 1: ``import tensorflow.compat.v1 as tf`` (with or
without ``tf.disable_v2_behavior()``), ``from tensorflow.compat import v1 as tf``, ``tf =
tf.compat.v1``, or a TF 1.x-era ``import tensorflow as tf`` reaching ``tf.layers``,
``tf.logging``, ``tf.train.AdamOptimizer``. The generated code is TF2 and names it ``tf``, as
TF2 code everywhere does; no ``tf2`` alias is invented. So a module the migration edits gets
``import tensorflow as tf`` and every TF1 reference that stays is respelled to the TF2 name of
the very same object (``tf.gfile.Open`` -> ``tf.io.gfile.GFile``), or ``tf.compat.v1.X``
where TF2 has none or another (``tf.logging.info`` -> ``tf.compat.v1.logging.info``,
``tf.decode_csv`` -> ``tf.compat.v1.decode_csv``, whose arguments differ from
``tf.io.decode_csv``'s): it computes exactly what it did (rewrites/tf_api). ``ModeKeys.TRAIN`` / ``EVAL`` / ``PREDICT`` become the strings they are
("train", "eval", "infer"): ``tf.estimator`` is gone from TF 2.16. A TF1 dataset class is
spelled ``tf.data.X`` (TF2's, the same elements) unless the module calls a TF1-only dataset
method. The switch to graph mode (``disable_v2_behavior``, ``disable_eager_execution``) goes:
Keras trains eagerly.

Before::

    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()

    def parse_csv(line):
      columns = tf.decode_csv(line, record_defaults=DEFAULTS)
      tf.logging.info("parsed")
      return dict(zip(COLUMNS, tf.unstack(columns)))

After::

    import tensorflow as tf

    def parse_csv(line):
      columns = tf.compat.v1.decode_csv(line, record_defaults=DEFAULTS)
      tf.compat.v1.logging.info("parsed")
      return dict(zip(COLUMNS, tf.unstack(columns)))
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import libcst as cst

from rewrites import tf_api
from rewrites.base import module_level_statements
from rewrites.keras_successors import successor as keras_successor
from rewrites.program.modules import ModuleView
from rewrites.syntax import Replace, Unsupported, children, first_line, is_name, root, source, statement_value, subtree

TF = "tf"
MODE_KEYS = {"estimator.ModeKeys.TRAIN": "train", "estimator.ModeKeys.EVAL": "eval",
             "estimator.ModeKeys.PREDICT": "infer"}
GRAPH_MODE_SWITCHES = {"disable_v2_behavior", "disable_eager_execution", "compat.v1.disable_v2_behavior",
                       "compat.v1.disable_eager_execution"}
GONE = ("contrib.",)  # TF 1.x modules TF 2 has not even in compat.v1
# What only runs in TF1's graph mode: a migrated program that still uses it cannot drop the switch.
GRAPH_ONLY = {"Session", "InteractiveSession", "placeholder", "placeholder_with_default", "train.MonitoredTrainingSession",
              "train.MonitoredSession", "train.Supervisor", "train.Saver", "global_variables_initializer",
              "local_variables_initializer", "tables_initializer", "get_default_graph", "train.start_queue_runners",
              "train.Scaffold", "data.make_one_shot_iterator", "data.make_initializable_iterator"}


@dataclass
class Rebinding:
    """How a module's `tf` becomes TF2: the statements to change, and what `tf` meant before."""

    kind: str                         # "v1": tf was compat.v1; "tf1-era": TF 1.x plain tf; "tf2"; "none"
    imports: list[cst.CSTNode] = field(default_factory=list)    # import statements binding tf to compat.v1
    reassignments: list[cst.BaseStatement] = field(default_factory=list)  # `tf = tf.compat.v1`
    # `if tf.__version__ >= "2": tf = tf.compat.v1`, `try: import tensorflow.compat.v1 as tf / except: ...`
    blocks: list[cst.If | cst.Try] = field(default_factory=list)
    plain_import: bool = False        # the module also has a top-level `import tensorflow as tf`


class Spelling:
    """How one module's TensorFlow references read once the module is migrated."""

    def __init__(self, view: ModuleView, removed: Collection[cst.CSTNode] = ()) -> None:
        """``removed``: code the migration takes out (TF1 dataset methods there do not keep datasets TF1's)."""
        self.view = view
        self.rebinding = self._rebinding()
        self._datasets_v2 = not view.uses_v1_dataset_methods(removed)
        self._spelled: dict[cst.CSTNode, cst.BaseExpression | None] = {}

    # -- how tf is bound --------------------------------------------------------------------

    def _rebinding(self) -> Rebinding:
        view = self.view
        reassigned = view._module_aliases.get(TF)
        imported = view.imported(TF)
        local = _imported_in_functions(view.module) if imported is None and TF not in view.top_level else None
        if local is not None:
            imported = "tensorflow"  # TensorFlowOnSpark's map_fun: `import tensorflow as tf` in the function only
        rebinding = Rebinding("none", imports=local or [])  # `import tensorflow.compat.v1 as tf` there instead
        self._find_rebindings(view.module.body, rebinding)
        rebinding.plain_import = any(isinstance(small, cst.Import) and _imports_tf(small) and not _imports_v1_as_tf(small)
                                     for line in view.module.body if isinstance(line, cst.SimpleStatementLine)
                                     for small in line.body)
        if reassigned == "tensorflow.compat.v1" or rebinding.imports or rebinding.blocks:
            rebinding.kind = "v1"
        elif imported == "tensorflow":
            rebinding.kind = "tf1-era" if self._reaches_tf1_only_apis() else "tf2"
        elif imported == "tensorflow.compat.v2":  # TF2's API as TF 1.x previewed it: `import tensorflow as tf` now
            rebinding.kind = "tf2"
            rebinding.imports = [small for statement in module_level_statements(view.module)
                                 if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
                                 if isinstance(small, cst.Import) and _imports_as_tf(small, "tensorflow.compat.v2")]
        elif imported is not None or TF in view.top_level:
            binding = self._binding_of_tf()
            raise Unsupported(binding, f"the migrated program needs `tf` for TensorFlow 2, which this module binds "
                                       f"in `{first_line(binding)}`", view.path)
        return rebinding

    def _binding_of_tf(self) -> cst.CSTNode:
        """The module-level statement that binds `tf` to something other than TensorFlow."""
        for statement in module_level_statements(self.view.module):
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar) \
                        and any((alias.evaluated_alias or alias.evaluated_name) == TF for alias in small.names):
                    return statement
        return self.view.top_level[TF][0]

    def _find_rebindings(self, statements, rebinding: Rebinding) -> None:
        """Module-level statements binding `tf` to TF1, and if / try blocks that do nothing else."""
        for statement in statements:
            if isinstance(statement, (cst.If, cst.Try)) and self._binds_v1(statement) and all(
                    self._binding_tf(line) for line in _block_lines(statement)):
                rebinding.blocks.append(statement)
                continue
            if isinstance(statement, cst.SimpleStatementLine):
                if len(statement.body) == 1 and self._reassigns_tf(statement.body[0]):
                    rebinding.reassignments.append(statement)
                rebinding.imports.extend(small for small in statement.body
                                         if isinstance(small, (cst.Import, cst.ImportFrom)) and _imports_v1_as_tf(small))
            for block in _blocks(statement):
                self._find_rebindings(block.body, rebinding)

    def _reassigns_tf(self, small: cst.BaseSmallStatement) -> bool:
        """`tf = tf.compat.v1`."""
        return isinstance(small, cst.Assign) and _binds(small, TF) and self.view.api(small.value) is None \
            and _names_tf_module(small.value)

    def _binding_tf(self, line: cst.SimpleStatementLine | cst.SimpleStatementSuite | None) -> bool:
        return line is not None and all(isinstance(small, cst.Pass) or self._reassigns_tf(small) or (
            isinstance(small, (cst.Import, cst.ImportFrom)) and _imports_tf(small)) for small in line.body)

    def _binds_v1(self, block: cst.If | cst.Try) -> bool:
        return any(self._reassigns_tf(small) or (isinstance(small, (cst.Import, cst.ImportFrom))
                                                 and _imports_v1_as_tf(small))
                   for line in _block_lines(block) if line is not None for small in line.body)

    def _reaches_tf1_only_apis(self) -> bool:
        """Plain `tf.X` names an API TF 2 has in compat.v1 only (`tf.compat.v1.X` is TF 2's own way to reach it), or
        TF 0.x's name of a TF 1.x op (`tf.mul`)."""
        return any(self._through_tf(node) and not _through_compat(node) and (
            tf_api.is_v1_only(api := self.view.api(node)) or api in tf_api.TF0_SAME)
            for node in self._references(self.view.module))

    def _through_tf(self, node: cst.CSTNode) -> bool:
        start = root(node)
        return isinstance(start, cst.Name) and start.value == TF and start is not node

    def _through_tf2_alias(self, node: cst.CSTNode) -> bool:
        """`tf2.X` of `import tensorflow as tf2` (the program's, or a rule's where tf was compat.v1)."""
        start = root(node)
        return isinstance(start, cst.Name) and start.value != TF and start is not node \
            and self.view.imported(start.value) == "tensorflow"

    def _references(self, tree: cst.CSTNode):
        """The outermost names and attribute chains that name a TensorFlow API."""
        stack = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                continue
            if isinstance(node, (cst.Attribute, cst.Name)) and self.view.api(node) is not None:
                yield node
                continue
            if isinstance(node, cst.Attribute):
                stack.append(node.value)
                continue
            stack.extend(children(node))

    # -- one reference ------------------------------------------------------------------------

    def reference(self, node: cst.CSTNode) -> cst.BaseExpression | None:
        """The TF2 spelling of a TensorFlow reference in this module, or None to keep it as it is."""
        if node in self._spelled:
            return self._spelled[node]
        spelled = self._reference(node)
        self._spelled[node] = spelled
        return spelled

    def _reference(self, node: cst.CSTNode) -> cst.BaseExpression | None:
        api = self.view.api(node)
        if api is None:
            return None
        if api in MODE_KEYS:
            return cst.SimpleString(f'"{MODE_KEYS[api]}"')
        if self.rebinding.kind in ("v1", "tf1-era") and self._through_tf2_alias(node):
            return cst.parse_expression(f"{TF}.{api}")  # `tf2.nn.relu`: one name for TF2, tf
        if not self._through_tf(node) or self.rebinding.kind in ("tf2", "none"):
            return None
        if self.rebinding.kind == "tf1-era" and not (tf_api.is_v1_only(api) or not tf_api.same_in_tf2(api)):
            return None
        spelled = tf_api.tf2_spelling(api, datasets_v2=self._datasets_v2)
        new = cst.parse_expression(f"{TF}.{spelled}")
        return None if source(new) == source(node) else new

    def spelled(self, node: cst.CSTNode) -> cst.CSTNode:
        """A copy of ``node`` with every TensorFlow reference in it respelled."""
        replacements = {ref: new for ref in self._references(node) if (new := self.reference(ref)) is not None}
        if not replacements:
            return node
        return node.visit(Replace(replacements))

    def code(self, node: cst.CSTNode) -> str:
        return source(self.spelled(node))

    # -- the module ------------------------------------------------------------------------------

    def graph_mode_switches(self) -> list[cst.BaseStatement]:
        """`tf.disable_v2_behavior()` statements anywhere in the module."""
        return [statement for statement in subtree(self.view.module)
                if isinstance(statement, cst.SimpleStatementLine)
                and isinstance(value := statement_value(statement), cst.Call)
                and (self.view.api(value.func) or "").rpartition(".")[2] in
                {name.rpartition(".")[2] for name in GRAPH_MODE_SWITCHES}
                and self.view.api(value.func) in GRAPH_MODE_SWITCHES]

    def graph_only_use(self, skip: set[cst.CSTNode] = frozenset()) -> cst.CSTNode | None:
        """The first use (in the source's order) of what needs TF1's graph mode, outside ``skip`` (code the
        migration removes or replaces)."""
        inside = {id(node) for removed in skip for node in subtree(removed)}
        return min((node for node in self._references(self.view.module)
                    if id(node) not in inside and self.view.api(node) in GRAPH_ONLY), key=self.view.position,
                   default=None)

    def gone_use(self, skip: set[cst.CSTNode] = frozenset()) -> cst.CSTNode | None:
        """A use of what TF 2 has not even in compat.v1 (``tf.contrib``), outside ``skip``."""
        inside = {id(node) for removed in skip for node in subtree(removed)}
        for node in self._references(self.view.module):
            if id(node) not in inside and self.view.api(node).startswith(GONE):
                return node
        return None

    def unknown_use(self, skip: set[cst.CSTNode] = frozenset()) -> cst.CSTNode | None:
        """The first use (in the source's order), outside ``skip``, of a name neither TF 1.x nor TF 2 has
        (tf_api.known: TF 0.x's `tf.scalar_summary`), which TF 2 would raise at; `tf.contrib` is gone_use's."""
        inside = {id(node) for removed in skip for node in subtree(removed)}
        return min((node for node in self._references(self.view.module)
                    if id(node) not in inside and self._through_tf(node)
                    and not tf_api.known(api := self.view.api(node)) and not api.startswith(GONE)),
                   key=self.view.position, default=None)

    def all_references(self) -> dict[cst.CSTNode, cst.BaseExpression]:
        """Every respelled reference of the module: node -> its TF2 spelling."""
        return {node: new for node in self._references(self.view.module) if (new := self.reference(node)) is not None}

    def keras_references(self) -> dict[cst.CSTNode, cst.BaseExpression]:
        """TensorFlow's Keras in the module (`tf.keras.X`, `Dense` of `from tensorflow.keras.layers import Dense`) as
        `keras.X`: Keras 2, as generated code imports it (`tf.keras` is Keras 3 from TensorFlow 2.16). A private
        name is Keras 2's only where keras_successors knows its private module (`_remove_long_seq`)."""
        return {node: cst.parse_expression(_keras_2(node, api)) for node in self._references(self.view.module)
                if (api := self.view.api(node)).startswith("keras.") and not is_name(root(node), "keras")}


def _keras_2(node: cst.CSTNode, api: str) -> str:
    """Keras 2's spelling of ``api`` ("keras.X") of TF's Keras, or Unsupported for a private name Keras 2's public
    module does not have."""
    if not any(part.startswith("_") for part in api.split(".")):
        return api
    module, _, name = api[len("keras."):].rpartition(".")
    moved = keras_successor(module, name)
    if moved is None:
        raise Unsupported(node, f"`{api.rpartition('.')[2]}` is private to TF 1.x's tf.keras: Keras 2's "
                                f"keras.{module} has no such name (import a public one)")
    return f"keras.{moved}"


def _binds(assign: cst.Assign, name: str) -> bool:
    return len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
        and assign.targets[0].target.value == name


def _names_tf_module(value: cst.BaseExpression) -> bool:
    return source(value).replace(" ", "") in ("tf.compat.v1", "tensorflow.compat.v1")


def _blocks(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        return [statement.body, *(_blocks(orelse) if isinstance(orelse, cst.If) else [orelse.body] if orelse else [])]
    if isinstance(statement, cst.Try):
        return [statement.body, *(handler.body for handler in statement.handlers),
                *(part.body for part in (statement.orelse, statement.finalbody) if part is not None)]
    return []


def _block_lines(statement: cst.If | cst.Try):
    """The simple statement lines of an if / try, however nested; any other compound statement is None."""
    for block in _blocks(statement):
        if isinstance(block, cst.SimpleStatementSuite):
            yield block
            continue
        for line in block.body:
            if isinstance(line, (cst.If, cst.Try)):
                yield from _block_lines(line)
            else:
                yield line if isinstance(line, cst.SimpleStatementLine) else None


def _through_compat(node: cst.CSTNode) -> bool:
    """`tf.compat.X...`."""
    while isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Attribute) and node.attr.value == "compat"


def _imports_tf(statement: cst.Import | cst.ImportFrom) -> bool:
    """An import binding `tf` to TensorFlow or its compat.v1."""
    return _imports_v1_as_tf(statement) or (isinstance(statement, cst.Import) and all(
        alias.evaluated_alias == TF and alias.evaluated_name == "tensorflow" for alias in statement.names))


def _imported_in_functions(module: cst.Module) -> list[cst.CSTNode] | None:
    """`tf` bound only in functions, and only by `import tensorflow as tf` or `import tensorflow.compat.v1 as tf`:
    the compat.v1 imports (None: bound otherwise, or not at all)."""
    binds = [node for node in subtree(module) if isinstance(node, (cst.Import, cst.ImportFrom))
             and not isinstance(node.names, cst.ImportStar)
             and any((alias.evaluated_alias or alias.evaluated_name) == TF for alias in node.names)]
    v1 = [node for node in binds if _imports_v1_as_tf(node)]
    plain = all(node in v1 or isinstance(node, cst.Import) and _imports_as_tf(node, "tensorflow") for node in binds)
    return v1 if binds and plain else None


def _imports_as_tf(statement: cst.Import, module: str) -> bool:
    """`import <module> as tf`."""
    return any((alias.evaluated_alias or "") == TF and alias.evaluated_name == module for alias in statement.names)


def _imports_v1_as_tf(statement: cst.Import | cst.ImportFrom) -> bool:
    """`import tensorflow.compat.v1 as tf` / `from tensorflow.compat import v1 as tf`."""
    if isinstance(statement.names, cst.ImportStar):
        return False
    for alias in statement.names:
        if (alias.evaluated_alias or "") != TF:
            continue
        if isinstance(statement, cst.Import) and alias.evaluated_name == "tensorflow.compat.v1":
            return True
        if isinstance(statement, cst.ImportFrom) and statement.module is not None and not statement.relative \
                and source(statement.module) == "tensorflow.compat" and alias.evaluated_name == "v1":
            return True
    return False
