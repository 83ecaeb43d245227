"""TFM010: names of TF 1.x's own tf.keras that TF 2 dropped, from the Keras 2 package the migration targets.

TFM010 tf1-keras-moved

What it does: an import of a name from a module of TF 1.x's Keras (`tensorflow.python.keras`) that TF 2 no longer
has goes, and each use of the name is spelled on Keras 2 as the migrated program imports it (`import keras`, with
the fallback to tf_keras from TF 2.16, as --keras says): `pad_sequences` of
`tensorflow.python.keras.preprocessing.sequence` -> `keras.preprocessing.sequence.pad_sequences`. A name TF 1.x
exported under a private name is taken from Keras 2's private module that holds the same function
(`_remove_long_seq` -> `keras.src.preprocessing.sequence._remove_long_seq`). Done where every name of the import
moves, each is used in the module and nothing else binds it or `keras` there.
Why: TF 2's tensorflow.python.keras is a private remnant without preprocessing, datasets or applications, so the
program could not start.
What may differ: nothing: the same functions (the names moved are those whose Keras 2 code is TF 1.x's). Another
module importing the name from this one would no longer find it. A name Keras 2 does not have as TF 1.x had it
stays, and TFM003 names it; so does a private one with --keras tf.keras, whose keras reaches no private module.

Before:

    import numpy as np
    from tensorflow.python.keras.preprocessing.sequence import pad_sequences

    def padded(reviews):
      return pad_sequences(reviews, maxlen=256, padding="post")

After:

    import numpy as np
    import tf_keras as keras

    def padded(reviews):
      return keras.preprocessing.sequence.pad_sequences(reviews, maxlen=256, padding="post")

Finding:

    2:1: TFM010 [exact] `pad_sequences` of tensorflow.python.keras.preprocessing.sequence (TF 1.x's tf.keras,
    gone from TF 2) -> `keras.preprocessing.sequence.pad_sequences` (Keras 2)
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ImportAssignment, ParentNodeProvider, ScopeProvider

from rewrites.base import KERAS_IMPORTS, TFCodemod
from rewrites.keras_successors import MOVED, ROOT, below_root, successor
from rewrites.program.edits import with_keras_3_fallback
from rewrites.syntax import source

RULE = "TFM010"
KERAS = "keras"
FALLBACK = "import tf_keras as keras"  # KERAS_3_FALLBACK's, with --keras auto


def keras_import(choice: str) -> str:
    """The import binding `keras` as --keras ``choice`` says (KERAS_IMPORTS)."""
    module, obj = KERAS_IMPORTS[choice]
    return f"from {module} import {obj}" if obj else f"import {module}" + ("" if module == KERAS else f" as {KERAS}")


class Rewrite(TFCodemod):
    METADATA_DEPENDENCIES = (*TFCodemod.METADATA_DEPENDENCIES, ParentNodeProvider)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._moved: dict[cst.SimpleStatementLine, list[str]] = {}   # import line -> its findings
        self._uses: dict[cst.CSTNode, cst.BaseExpression] = {}       # a use of a moved name -> its Keras 2 spelling
        scope = self.get_metadata(ScopeProvider, node.body[0], None) if node.body else None
        if scope is None or not self._keras_free(scope):
            return
        for line in node.body:
            small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                    and not isinstance(small.names, cst.ImportStar) and below_root(source(small.module)):
                uses = self._uses_moved(small, scope)
                if uses is not None and self.wants(RULE, small):
                    self._uses.update(uses[0])
                    self._moved[line] = uses[1]

    def _keras_free(self, scope) -> bool:
        """Does the module bind `keras` only to the Keras 2 --keras names, if at all, and `__all__` nowhere?"""
        allowed = (keras_import(self.keras), *([FALLBACK] if self.keras == "auto" else []))
        return "__all__" not in scope and all(
            isinstance(assignment, ImportAssignment) and source(assignment.node) in allowed
            for assignment in scope.assignments[KERAS])

    def _uses_moved(self, node: cst.ImportFrom, scope) -> tuple[dict, list[str]] | None:
        """Each use of the names ``node`` imports with its Keras 2 spelling, and the findings; None if one stays."""
        module = below_root(source(node.module))
        uses: dict[cst.CSTNode, cst.BaseExpression] = {}
        said = []
        for alias in node.names:
            bound = alias.evaluated_alias or alias.evaluated_name
            assignments = list(scope.assignments[bound])
            if len(assignments) != 1 or not assignments[0].references:
                return None
            references = [access.node for access in assignments[0].references]
            if any(not isinstance(ref, cst.Name) or not self._sees_module_keras(ref) for ref in references):
                return None
            tf1_module = f"{module}.{alias.evaluated_name}"
            if tf1_module in MOVED:  # `from ...preprocessing import sequence`
                found = self._module_uses(tf1_module, references)
            else:
                tf1_module = module
                path = self._reachable(successor(module, alias.evaluated_name))
                found = {ref: path for ref in references} if path else None
            if found is None:
                return None
            uses.update((ref, cst.parse_expression(f"{KERAS}.{path}")) for ref, path in found.items())
            said += [_message(f"{ROOT}.{tf1_module}", path) for path in sorted(set(found.values()))]
        return uses, said

    def _module_uses(self, module: str, references: list[cst.Name]) -> dict[cst.CSTNode, str] | None:
        """`sequence.pad_sequences` of an imported module: each use an attribute that moves."""
        found = {}
        for ref in references:
            parent = self.get_metadata(ParentNodeProvider, ref, None)
            path = self._reachable(successor(module, parent.attr.value)) if isinstance(parent, cst.Attribute) \
                and parent.value is ref else None
            if path is None:
                return None
            found[parent] = path
        return found

    def _reachable(self, path: str | None) -> str | None:
        """``path`` unless it is private and --keras tf.keras: TensorFlow's keras reaches no private module."""
        return None if path is None or path.startswith("src.") and KERAS_IMPORTS[self.keras][1] else path

    def _sees_module_keras(self, node: cst.Name) -> bool:
        scope = self.get_metadata(ScopeProvider, node, None)
        return scope is not None and all(assignment.scope is scope.globals for assignment in scope[KERAS])

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self._uses.get(original, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return self._uses.get(original, updated)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self._moved:
            return super().leave_Module(original_node, updated_node)
        for line, messages in self._moved.items():
            for message in messages:
                self.report(RULE, line.body[0], message)
        bound = bool(self.get_metadata(ScopeProvider, original_node.body[0]).assignments[KERAS])
        body = []
        for original, updated in zip(original_node.body, updated_node.body):
            if original not in self._moved:
                body.append(updated)
            elif not bound:
                bound = True
                body.append(updated.with_changes(body=[cst.parse_statement(keras_import(self.keras)).body[0]]))
        module = updated_node.with_changes(body=body)
        if self.keras == "auto":
            module = with_keras_3_fallback(module)
        return super().leave_Module(original_node, module)


def _message(module: str, path: str) -> str:
    name = path.rpartition(".")[2]
    private = " (Keras 2's private copy of the same function)" if path.startswith("src.") else " (Keras 2)"
    return f"`{name}` of {module} (TF 1.x's tf.keras, gone from TF 2) -> `{KERAS}.{path}`{private}"
