"""TFM003-004: what no rewrite can follow, said where it stands: modules TF 2 no longer has, and star imports.

TFM003 removed-module

What it does: reports each import (or first use, for `tf.contrib.X`) of a TensorFlow 1 module that TensorFlow 2
does not have: the tutorials' data readers (`tensorflow.examples.tutorials`), `tf.contrib`, the Estimator's
private internals (`tensorflow.python.estimator`), and the parts of TF 1.x's Keras (`tensorflow.python.keras`) TF 2
dropped (`preprocessing`, `datasets`, `applications`, ...) where TFM010 does not move them. The code is left as
it is.
Why: a migrated program that still imports one of them cannot start on TensorFlow 2; the tutorials' MNIST reader
was the most common of them in real programs.
What may differ: nothing: the code is unchanged; replace the module as the finding says.

Before:

    import tensorflow.compat.v1 as tf
    from tensorflow.examples.tutorials.mnist import input_data

    mnist = input_data.read_data_sets("/tmp/mnist", one_hot=True)
    model.train(mnist)

After:

    import tensorflow.compat.v1 as tf
    from tensorflow.examples.tutorials.mnist import input_data

    mnist = input_data.read_data_sets("/tmp/mnist", one_hot=True)
    model.train(mnist)

Finding:

    2:1: TFM003 [manual] tensorflow.examples.tutorials.mnist is gone in TF 2 (the program cannot start there): read the
    data with tf.keras.datasets (mnist.load_data()) or tensorflow_datasets, as a tf.data pipeline (TFM007 writes that
    reader where the program reads only the arrays, mnist.train.images, and next_batch's batches; a result passed on
    whole stays)

TFM004 star-import

What it does: reports `from module import *` in a module whose code uses TF1 Estimator or cluster APIs; the
module is left as it is.
Why: the names such an import brings (often `tf` and the model_fn) are not written anywhere in the module, so
tf-migrate cannot tell what they are, and the program around them would be left without a word.
What may differ: nothing: the code is unchanged; import the names the module uses by name and run tf-migrate again.

Before:

    from model import *

    estimator = tf.estimator.Estimator(model_fn)

After:

    from model import *

    estimator = tf.estimator.Estimator(model_fn)

Finding:

    1:1: TFM004 [manual] `from model import *` brings names this module's TF1 code uses (Estimator or cluster
    code): tf-migrate follows names imported by name only: import them by name (`from model import tf,
    model_fn`) and run it again
"""

from __future__ import annotations

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.contrib_successors import ADVICE, PACKAGES, attribute_uses, package_of, staying, successor, why_not
from rewrites.keras_successors import GONE as KERAS_GONE, ROOT as KERAS_ROOT, advice as keras_advice, below_root
from rewrites.syntax import source, subtree

# Module prefixes TensorFlow 2 does not have -> what to do instead.
REMOVED = {
    "tensorflow.examples.tutorials": "read the data with tf.keras.datasets (mnist.load_data()) or tensorflow_datasets, "
                                     "as a tf.data pipeline (TFM007 writes that reader where the program reads only "
                                     "the arrays, mnist.train.images, and next_batch's batches; a result passed on "
                                     "whole stays)",
    "tensorflow.contrib": "use the TF 2 API that replaced the call (tf_slim for slim and "
                          "contrib.layers, tf.keras, tensorflow_addons), or keep the program on TF 1",
    "tensorflow.python.estimator": "TensorFlow's private Estimator internals are gone with the Estimator (TF 2.16): "
                                   "drive training through the public API (train_and_evaluate, or Keras fit once "
                                   "migrated)",
    # TF 1.x's tf.keras lived in tensorflow.python.keras; TF 2 keeps a private remnant without these.
    **{f"{KERAS_ROOT}.{gone}": keras_advice(gone, []) for gone in KERAS_GONE},
}
# Names whose use beside a star import means TF1 code that the import may bring the meaning of.
TF1_WORDS = frozenset({"tf", "tf1", "tensorflow", "estimator", "Estimator", "EstimatorSpec", "TrainSpec", "EvalSpec",
                       "train_and_evaluate", "RunConfig", "model_fn", "ClusterSpec", "Server",
                       "replica_device_setter", "MonitoredTrainingSession", "Supervisor"})


def _contrib(dotted: str) -> str | None:
    """"tensorflow.contrib.layers" -> "contrib.layers" (and "tensorflow.contrib" -> "contrib")."""
    return dotted[len("tensorflow."):] if dotted == "tensorflow.contrib" or dotted.startswith("tensorflow.contrib.") \
        else None


class Rewrite(TFCodemod):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._stars: list[cst.ImportFrom] = []
        self._reported: set[str] = set()
        self._tf1_words = False

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._staying = self._contrib_staying(node)

    def _contrib_staying(self, module: cst.Module) -> dict[str, dict[str, str]]:
        """tf-slim's contrib packages (TFM005 moved the rest) -> each member the module still uses there -> why it
        stays."""
        uses = attribute_uses(module)
        found: dict[str, dict[str, str]] = {}
        for node in subtree(module):
            apis = []
            if isinstance(node, cst.Import):
                apis = [f"{api}.{member}" for alias in node.names if (api := _contrib(source(alias.name))) in PACKAGES
                        for member in staying(api, uses.get(alias.evaluated_alias or "", set()))]
            elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative \
                    and not isinstance(node.names, cst.ImportStar):
                module_api = _contrib(source(node.module))
                for alias in node.names if module_api else ():
                    api = f"{module_api}.{alias.evaluated_name}"
                    name = alias.evaluated_alias or alias.evaluated_name
                    apis += [f"{api}.{m}" for m in staying(api, uses.get(name, set()))] if api in PACKAGES else [api]
            elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and (api := self.api(node.value)) in PACKAGES:  # `slim = tf.contrib.slim`
                apis = [f"{api}.{member}" for member in staying(api, uses.get(node.targets[0].target.value, set()))]
            elif isinstance(node, cst.Attribute) and "contrib" in source(node):
                api = self.api(node)
                apis = [api] if api and api.startswith("contrib.") and "contrib." in source(node) else []
            for api in apis:
                package = package_of(api)
                if package is not None and api != package and successor(api) is None:
                    found.setdefault(package, {})[api] = why_not(api)
        return found

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._removed(source(alias.name), node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            if isinstance(node.names, cst.ImportStar):
                self._stars.append(node)
            return
        module = source(node.module)
        if isinstance(node.names, cst.ImportStar):
            if module != "__future__":
                self._stars.append(node)
            return
        names = [alias.evaluated_name for alias in node.names]
        if not any([self._removed(f"{module}.{name}", node, names) for name in names]):
            self._removed(module, node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        api = self.api(node)
        if api is not None and api.startswith("contrib."):
            self._removed("tensorflow." + ".".join(api.split(".")[:2]), node)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        self._tf1_words = self._tf1_words or node.value in TF1_WORDS

    def _removed(self, module: str, node: cst.CSTNode, names: list[str] = ()) -> bool:
        """Report ``module`` (once per file, by the package below the removed prefix: `tensorflow.contrib.slim`
        for `tensorflow.contrib.slim.nets` too) if TF 2 does not have it; ``names``: what an import from it
        takes."""
        prefix = next((prefix for prefix in REMOVED if module == prefix or module.startswith(prefix + ".")), None)
        if prefix is None:
            return False
        package = ".".join(module.split(".")[:prefix.count(".") + 2])
        if package not in self._reported:
            self._reported.add(package)
            staying = self._staying.get(_contrib(package) or "", {})
            keras = below_root(module)
            advice = "; ".join(f"`tf.{api}`: {why}" for api, why in sorted(staying.items())) \
                or ADVICE.get(_contrib(package) or "", REMOVED[prefix]) if not keras or not keras.startswith(
                    KERAS_GONE) else keras_advice(keras.rpartition(".")[0] if names else keras, list(names))
            self.report("TFM003", node, f"{package} is gone in TF 2 (the program cannot start there): {advice}")
        return True

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if self._tf1_words:
            for star in self._stars:
                module = "." * len(star.relative) + (source(star.module) if star.module is not None else "")
                self.report("TFM004", star, f"`from {module} import *` brings names this module's TF1 code uses "
                                            "(Estimator or cluster code): tf-migrate follows names imported by name "
                                            f"only: import them by name (`from {module} import tf, model_fn`) and "
                                            "run it again")
        return super().leave_Module(original_node, updated_node)
