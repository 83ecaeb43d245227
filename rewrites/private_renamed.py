"""TFM011: private TF 1.x names that TF 2 keeps in the same module under another name.

TFM011 tf1-private-renamed

What it does: a use of a name that TF 1.x's private modules (`tensorflow.python.*`) had and TF 2's same module
has under another name is spelled with TF 2's: `tf_logging._get_logger` -> `tf_logging.get_logger` (TF 1.13
made TensorFlow's logger public under that name). An import of the old name imports the new one under the old
name: `from tensorflow.python.platform.tf_logging import get_logger as _get_logger`.
Why: SageMaker's script-mode programs hand TensorFlow's logger a stream handler this way; on TF 2 the old name
is an AttributeError when the program starts.
What may differ: nothing: the very function the old name was.

Before:

    from tensorflow.python.platform import tf_logging

    tf_logger = tf_logging._get_logger()

After:

    from tensorflow.python.platform import tf_logging

    tf_logger = tf_logging.get_logger()

Finding:

    3:13: TFM011 [exact] tensorflow.python.platform.tf_logging._get_logger (TF 1.x) -> `get_logger`: TF 2's
    name for the same function
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from rewrites.base import TFCodemod
from rewrites.private_successors import RENAMED
from rewrites.syntax import source

RULE = "TFM011"


def _message(qualified: str, name: str) -> str:
    return f"{qualified} (TF 1.x) -> `{name}`: TF 2's name for the same function"


class Rewrite(TFCodemod):
    METADATA_DEPENDENCIES = (*TFCodemod.METADATA_DEPENDENCIES, QualifiedNameProvider)

    def _renamed(self, node: cst.CSTNode) -> tuple[str, str] | None:
        for qualified in self.get_metadata(QualifiedNameProvider, node, set()):
            if qualified.name in RENAMED:
                return qualified.name, RENAMED[qualified.name]
        return None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        renamed = self._renamed(original)
        if renamed is None or not self.wants(RULE, original):
            return updated
        self.report(RULE, original, _message(*renamed))
        return updated.with_changes(attr=cst.Name(renamed[1]))

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        if original.relative or original.module is None or isinstance(original.names, cst.ImportStar):
            return updated
        module = source(original.module)
        names = []
        for alias in updated.names:
            qualified = f"{module}.{alias.evaluated_name}"
            if qualified in RENAMED and self.wants(RULE, original):
                self.report(RULE, original, _message(qualified, RENAMED[qualified]))
                alias = alias.with_changes(name=cst.Name(RENAMED[qualified]),
                                           asname=alias.asname or cst.AsName(cst.Name(alias.evaluated_name)))
            names.append(alias)
        return updated.with_changes(names=names)
