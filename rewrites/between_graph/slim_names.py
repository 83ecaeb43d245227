"""tf-slim's names, read as the tf.contrib ones they were. TFM005 runs before the between-graph rule and moves
tf.contrib's layers to tf-slim (`from tensorflow.contrib import slim` -> `import tf_slim as slim`, `slim =
tf.contrib.slim` -> `slim = tf_slim`); read as TensorFlow's again (`slim.layers.conv2d`:
tf.contrib.slim.layers.conv2d), a function of the graph's module making variables with them is one
(graph_calls.py refuses it at every step, model_modules.py keeps it as TF1 code in a Keras layer), not computation
the step would run."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider, QualifiedNameSource

from rewrites.base import TFCodemod, module_level_statements

PACKAGE = "tf_slim"


def contrib_api(codemod: TFCodemod, node: cst.CSTNode) -> str | None:
    """`contrib.slim.X` for a node naming tf_slim.X (through an import or a module-level `slim = tf_slim`)."""
    root = node
    while isinstance(root, cst.Attribute):
        root = root.value
    aliases = _aliases(codemod)
    if not isinstance(root, cst.Name) or not (codemod._may_name_tensorflow(root) or root.value in aliases):
        return None
    found = set()
    for qualified in codemod.get_metadata(QualifiedNameProvider, node, set()):
        name = qualified.name
        if qualified.source is QualifiedNameSource.LOCAL:
            first, _, rest = name.partition(".")
            name = f"{aliases[first]}.{rest}" if first in aliases and rest else name
        if name.startswith(PACKAGE + "."):
            found.add(name[len(PACKAGE) + 1:])
    return f"contrib.slim.{found.pop()}" if len(found) == 1 else None


def _aliases(codemod: TFCodemod) -> dict[str, str]:
    """The module's `slim = tf_slim` (also in a module-level if or try): name -> tf-slim's module; read once."""
    module = codemod._module
    if getattr(codemod, "_slim_aliases_of", None) is not module:
        aliases = {}
        for statement in module_level_statements(module):
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(target := small.targets[0].target, cst.Name) \
                        and codemod._may_name_tensorflow(small.value):
                    aliases |= {target.value: qualified.name for qualified in codemod.get_metadata(
                        QualifiedNameProvider, small.value, set()) if qualified.name.split(".")[0] == PACKAGE}
        codemod._slim_aliases_of, codemod._slim_aliases = module, aliases
    return codemod._slim_aliases
