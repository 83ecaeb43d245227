"""What every rewrite shares: TensorFlow name resolution, findings, TF2 spellings, imports.

A rewrite subclasses ``TFCodemod`` and, in its ``leave_*`` methods, asks
``self.tf_name(node)`` which TensorFlow API a node refers to, whatever the import
spelling, and answers with ``self.replace(...)`` or ``self.report(...)``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

import libcst as cst
from libcst.codemod import Codemod, CodemodContext, VisitorBasedCodemodCommand
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.metadata import ImportAssignment, PositionProvider, QualifiedNameProvider, QualifiedNameSource, ScopeProvider

from migrator.findings import Finding
from rewrites import RULES
from rewrites.suppressions import Suppressions
from rewrites.syntax import children, subtree

# TensorFlow internals real code imports from, and the public namespace they back.
_INTERNAL_MODULES = {
    "tensorflow.python.training.server_lib": "train",
    "tensorflow.python.training.device_setter": "train",
    "tensorflow.python.ops.partitioned_variables": "",
    "tensorflow.python.ops.variable_scope": "",
    "tensorflow_estimator.python.estimator.estimator": "estimator",
    "tensorflow_estimator.python.estimator.estimator_lib": "estimator",
    "tensorflow_estimator.python.estimator.training": "estimator",
    "tensorflow_estimator.python.estimator.run_config": "estimator",
    "tensorflow_estimator.python.estimator.model_fn": "estimator",
    "tensorflow_estimator.python.estimator.mode_keys": "estimator",
    "tensorflow_estimator.python.estimator.inputs.numpy_io": "estimator.inputs",
    "tensorflow_estimator.python.estimator.inputs.pandas_io": "estimator.inputs",
    "tensorflow_estimator.python.estimator.tpu.tpu_estimator": "estimator.tpu",
    "tensorflow_estimator.python.estimator.tpu.tpu_config": "estimator.tpu",
    # TF 1.x's copy of the Estimator, inside tensorflow itself until tensorflow_estimator took it (TF 1.13).
    "tensorflow.python.estimator.estimator": "estimator",
    "tensorflow.python.estimator.estimator_lib": "estimator",
    "tensorflow.python.estimator.training": "estimator",
    "tensorflow.python.estimator.run_config": "estimator",
    "tensorflow.python.estimator.model_fn": "estimator",
    "tensorflow.python.estimator.inputs.numpy_io": "estimator.inputs",
    "tensorflow.python.estimator.inputs.pandas_io": "estimator.inputs",
    "tensorflow.python.keras": "keras",  # TF's own copy of Keras, which tf.keras was in TF 1.x
}

# The same API under another name: TF 1.x's tf.contrib spellings of what TF 1.15 moved.
_SYNONYMS = {
    "contrib.tpu.TPUEstimator": "estimator.tpu.TPUEstimator",
    "contrib.tpu.TPUEstimatorSpec": "estimator.tpu.TPUEstimatorSpec",
    "contrib.tpu.RunConfig": "estimator.tpu.RunConfig",
    "contrib.tpu.TPUConfig": "estimator.tpu.TPUConfig",
    "contrib.tpu.CrossShardOptimizer": "tpu.CrossShardOptimizer",
    "contrib.cluster_resolver.TPUClusterResolver": "distribute.cluster_resolver.TPUClusterResolver",
    "contrib.estimator.add_metrics": "estimator.add_metrics",
    "contrib.training.HParams": "contrib.training.HParams",
}

# Modules a `tf = tf.compat.v1` style rebinding may name.
_TF_MODULES = {"tensorflow": "tensorflow", "tensorflow.compat.v1": "tensorflow.compat.v1"}

_TF2_ALIAS_CHOICES = ("tf", "tf2", "tensorflow")

# --keras: the module and name each choice imports Keras 2 as `keras` from. "auto" imports the keras package,
# TensorFlow's own Keras 2 up to TF 2.15 (autograph leaves it as it is, where it converts all of tf_keras' code at
# the first fit: seconds at every start), and KERAS_3_FALLBACK, after the module's imports, takes tf_keras where
# the keras package is Keras 3 (TF 2.16 and later), which cannot train with ParameterServerStrategy.
KERAS_IMPORTS = {"auto": ("keras", None), "tf_keras": ("tf_keras", None), "tf.keras": ("tensorflow", "keras")}
# A program running TF1 layers in Keras (tier 2's model_fn) needs Keras 2 behind tf.keras and tf.compat.v1.layers.
LEGACY_KERAS = """\
# The model_fn's TF1 layers run in Keras 2: where Keras is 3 (TensorFlow 2.16 and later),
# tf.keras and tf.compat.v1.layers are Keras 2 only with TF_USE_LEGACY_KERAS set first.
if importlib.metadata.version("keras").startswith("3."):
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
"""
KERAS_3_FALLBACK = """\
# Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
if not keras.__version__.startswith("2."):
    import tf_keras as keras
"""


@dataclass(frozen=True)
class TFName:
    """A TensorFlow API as TF1 code reached it.

    api: the name below the TensorFlow root, e.g. "train.Server";
    via: "v1" through tensorflow.compat.v1, "tf" through plain tensorflow,
         "internal" through tensorflow.python.
    """

    api: str
    via: str


def parse_tf_name(qualified: str) -> TFName | None:
    """"tensorflow.compat.v1.train.Server" -> TFName("train.Server", "v1"); non-TF1 names -> None."""
    if qualified.startswith("tensorflow.compat.v2."):  # TF 1.x's preview of TF2's API: `tf` as TF2 has it
        qualified = "tensorflow." + qualified[len("tensorflow.compat.v2."):]
    for module, public in _INTERNAL_MODULES.items():
        if qualified.startswith(module + "."):
            rest = qualified[len(module) + 1 :]
            return TFName(_synonym(f"{public}.{rest}" if public else rest), "internal")
    for root, via, prefix in _ROOTS:
        if qualified.startswith(root):
            api = prefix + qualified[len(root) :]
            if via == "v1" and api.startswith("compat.v1."):  # tf.compat.v1 reached through a compat.v1 `tf`
                api = api[len("compat.v1."):]
            if api.startswith(("compat.", "python.")):
                return None
            return TFName(_synonym(api), via)
    return None


# Packages TF1 code reaches TensorFlow through: (root, via, the API prefix their names stand for).
_ROOTS = (("tensorflow.compat.v1.", "v1", ""), ("tensorflow_estimator.", "v1", ""), ("tensorflow_gan.", "v1", "contrib.gan."),
          ("tensorflow.", "tf", ""))


def _is_tensorflow_module(qualified) -> bool:
    """`tensorflow.compat.v1`, `tensorflow.estimator`: TensorFlow itself or a namespace of its API (lowercase,
    where its classes and functions are named otherwise), reached through an import."""
    name = qualified.name
    return qualified.source is QualifiedNameSource.IMPORT and (name in _TF_MODULES or (
        parse_tf_name(name) is not None and name.rpartition(".")[2].islower()))


def _synonym(api: str) -> str:
    for old, new in _SYNONYMS.items():
        if api == old or api.startswith(old + "."):
            return new + api[len(old):]
    return api


class TFNameReader:
    """Which TensorFlow API a node refers to, whatever the import spelling.

    Mixed into a libcst MetadataDependent with QualifiedNameProvider resolved; call
    ``read_aliases(module)`` once before asking.
    """

    _module_aliases: dict[str, str] = {}
    _imported: frozenset[str] | None = None  # the names imports bind anywhere in the module; None: a star import

    def read_aliases(self, module: cst.Module) -> None:
        self._imported = _names_imports_bind(module)
        self._module_aliases = self._tensorflow_reassignments(module)

    def _may_name_tensorflow(self, node: cst.CSTNode) -> bool:
        """Only a name an import binds (or a rebinding of one) can lead to TensorFlow: the others are not worth
        a qualified-name lookup, which on a module of many statements was most of the time."""
        while isinstance(node, cst.Attribute):
            node = node.value
        return (self._imported is None or not isinstance(node, cst.Name) or node.value in self._imported
                or node.value in self._module_aliases)

    def tf_name(self, node: cst.CSTNode) -> TFName | None:
        """The TensorFlow API ``node`` refers to, through any import spelling, or None (also for an attribute of
        a call's result, `Dataset.range(3).batch`, and for a call: libcst gives `partitioner(...)(shape)` its
        callee's names)."""
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or not self._may_name_tensorflow(root):
            return None
        found: set[TFName] = set()
        for qualified in self.get_metadata(QualifiedNameProvider, node, set()):
            name = self._imported_name(qualified)
            parsed = parse_tf_name(name) if name else None
            if parsed:
                found.add(parsed)
        apis = {name.api for name in found}
        if len(apis) != 1:
            return None
        # `tf = tf.compat.v1` makes `tf.X` both: the compat.v1 reading is the one in force.
        return min(found, key=lambda name: name.via == "tf")

    def api(self, node: cst.CSTNode) -> str | None:
        name = self.tf_name(node)
        return name.api if name else None

    def _imported_name(self, qualified) -> str | None:
        if qualified.source is QualifiedNameSource.IMPORT:
            return qualified.name
        if qualified.source is QualifiedNameSource.LOCAL:
            root, _, rest = qualified.name.partition(".")
            if root in self._module_aliases and rest:
                return f"{self._module_aliases[root]}.{rest}"
        return None

    def _tensorflow_reassignments(self, module: cst.Module) -> dict[str, str]:
        """Module-level `tf = tf.compat.v1`, `tf_estimator = tf.estimator` style rebindings (also inside a
        module-level if or try): name -> TensorFlow module."""
        aliases = {}
        for statement in module_level_statements(module):
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and self._may_name_tensorflow(small.value):
                    target = small.targets[0].target
                    for qualified in self.get_metadata(QualifiedNameProvider, small.value, set()):
                        if isinstance(target, cst.Name) and _is_tensorflow_module(qualified):
                            aliases[target.value] = _TF_MODULES.get(qualified.name, qualified.name)
        return aliases


def _names_imports_bind(module: cst.Module) -> frozenset[str] | None:
    """Every name an import statement binds, in any scope of the module; None if one imports ``*``."""
    names = set()
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            if isinstance(node.names, cst.ImportStar):
                return None
            names.update(alias.evaluated_alias or alias.evaluated_name.split(".")[0] for alias in node.names)
        elif not isinstance(node, cst.BaseExpression):
            stack.extend(children(node))
    return frozenset(names)


def module_level_statements(module: cst.Module) -> Iterator[cst.BaseStatement]:
    """The module's statements, and those of module-level if / try blocks (where imports and rebindings hide)."""

    def blocks(statement: cst.CSTNode) -> Iterator[cst.BaseSuite]:
        if isinstance(statement, cst.If):
            yield statement.body
            if isinstance(statement.orelse, cst.Else):
                yield statement.orelse.body
            elif statement.orelse is not None:  # elif
                yield from blocks(statement.orelse)
        elif isinstance(statement, cst.Try):
            yield statement.body
            yield from (handler.body for handler in statement.handlers)
            yield from (part.body for part in (statement.orelse, statement.finalbody) if part is not None)

    def walk(statements) -> Iterator[cst.BaseStatement]:
        for statement in statements:
            yield statement
            for block in blocks(statement):
                if isinstance(block, cst.IndentedBlock):
                    yield from walk(block.body)

    yield from walk(module.body)


class TFCodemod(TFNameReader, VisitorBasedCodemodCommand):
    """Base of every rewrite family."""

    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ScopeProvider)
    suppressions: Suppressions | None = None  # the file's `# tf-migrate: ignore` comments, set by the engine
    run: dict[str, str] = {}  # the texts of the files migrated with this one (its group), by path, set by the engine

    # No rewrite uses libcst's matcher decorators: their bookkeeping on every node made a pass 4x slower.
    # (__init__ does not set them up either.)
    on_visit = cst.CSTTransformer.on_visit
    on_leave = cst.CSTTransformer.on_leave
    on_visit_attribute = cst.CSTTransformer.on_visit_attribute
    on_leave_attribute = cst.CSTTransformer.on_leave_attribute

    def __init__(self, context: CodemodContext, enabled: Collection[str], path: str, keras: str = "auto") -> None:
        Codemod.__init__(self, context)  # not the matcher machinery's, which inspects the class on every instance
        self.enabled = frozenset(enabled)
        self.path = path
        self.keras = keras  # how generated code imports Keras: "auto", "tf_keras" or "tf.keras" (KERAS_IMPORTS)
        self.findings: list[Finding] = []
        self.suppressed: list[Finding] = []  # findings a `# tf-migrate: ignore` comment suppressed
        self._module_aliases: dict[str, str] = {}
        self._tf2_alias: str | None = None
        self._tf2_alias_imported = False
        self._replaced: list[cst.CSTNode] = []
        # Another module of the run the rewrite changes with this one (all or nothing): its path -> (its new text,
        # [(rule, line, column, message)] its findings).
        self.other_modules: dict[str, tuple[str, list[tuple[str, int, int, str]]]] = {}

    # -- names --------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self.read_aliases(node)
        existing = self._existing_tensorflow_import(node)
        self._tf2_alias = existing if existing not in self._module_aliases else None
        self._tf2_alias_imported = self._tf2_alias is not None
        self._module = node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._frees_an_import():
            for original in self._replaced:
                RemoveImportsVisitor.remove_unused_import_by_node(self.context, original)
        return updated_node

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # names inside import statements are not uses

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    # -- TF2 spellings ------------------------------------------------------

    @staticmethod
    def _existing_tensorflow_import(module: cst.Module) -> str | None:
        """The name a module-level `import tensorflow [as X]` binds, if any."""
        for statement in module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Import):
                        for alias in small.names:
                            if alias.evaluated_name == "tensorflow":
                                return alias.evaluated_alias or "tensorflow"
        return None

    def tf2(self, dotted: str) -> cst.BaseExpression:
        """`<tf>.<dotted>` for the TF2 API, importing TensorFlow under a free name if needed."""
        if self._tf2_alias is None:
            scope = self.get_metadata(ScopeProvider, self._module)
            self._tf2_alias = next(name for name in _TF2_ALIAS_CHOICES if name not in scope)
        alias = self._tf2_alias
        if not self._tf2_alias_imported:
            AddImportsVisitor.add_needed_import(self.context, "tensorflow", asname=None if alias == "tensorflow" else alias)
        return cst.parse_expression(f"{alias}.{dotted}")

    # -- results ------------------------------------------------------------

    def report(self, rule_id: str, node: cst.CSTNode, message: str) -> None:
        """A finding at ``node``, if its rule is on (in ``suppressed`` if a comment there suppresses it)."""
        if rule_id not in self.enabled:
            return
        start = self.get_metadata(PositionProvider, node).start
        finding = Finding(self.path, start.line, start.column + 1, rule_id, RULES[rule_id].safety, message)
        suppressed = self.suppressions is not None and self.suppressions.covers(rule_id, start.line)
        (self.suppressed if suppressed else self.findings).append(finding)

    def replace(self, rule_id: str, original: cst.CSTNode, new: cst.CSTNode, message: str) -> cst.CSTNode:
        """Report the rewrite and let the imports ``original`` used go if nothing else uses them."""
        self.report(rule_id, original, message)
        self._replaced.append(original)
        return new

    def _frees_an_import(self) -> bool:
        """Did the replaced code hold the last use of an import? Only then is the import pass worth its cost."""
        removed = {node for original in self._replaced for node in subtree(original)}
        for node in removed:
            scope = self.get_metadata(ScopeProvider, node, None)
            for access in scope.accesses[node] if scope else ():
                for assignment in access.referents:
                    if isinstance(assignment, ImportAssignment) and all(
                        reference.node in removed for reference in assignment.references
                    ):
                        return True
        return False

    # -- imports of generated programs ----------------------------------------

    def generated_imports(self) -> dict[str, tuple[str, str | None]]:
        """What generated programs import: name -> (module, object or None), as `import module as name`
        or `from module import object`."""
        return {"tf": ("tensorflow", None), "keras": KERAS_IMPORTS[self.keras]}

    def wants(self, rule_id: str, node: cst.CSTNode) -> bool:
        """Is the rewrite of ``rule_id`` at ``node`` to be made: its rule on, its finding there not suppressed (then
        counted as suppressed)?"""
        if rule_id not in self.enabled:
            return False
        if self.suppressions is None:  # no `# tf-migrate: ignore` in the file: no position needed
            return True
        start = self.get_metadata(PositionProvider, node).start
        if not self.suppressions.covers(rule_id, start.line):
            return True
        self.suppressed.append(Finding(self.path, start.line, start.column + 1, rule_id, RULES[rule_id].safety, ""))
        return False
