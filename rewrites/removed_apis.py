"""TFM003-004: what no rewrite can follow, said where it stands: modules TF 2 no longer has, and star imports.

TFM003 removed-module

What it does: reports each import (or first use, for `tf.contrib.X`) of a TensorFlow 1 module that TensorFlow 2
does not have: the tutorials' data readers (`tensorflow.examples.tutorials`), `tf.contrib`, and the Estimator's
private internals (`tensorflow.python.estimator`). The code is left as it is.
Why: a migrated program that still imports one of them cannot start on TensorFlow 2; the tutorials' MNIST reader
was the most common of them in real programs.
What may differ: nothing: the code is unchanged; replace the module as the finding says.

Before:

    import tensorflow.compat.v1 as tf
    from tensorflow.examples.tutorials.mnist import input_data

    mnist = input_data.read_data_sets("/tmp/mnist", one_hot=True)

After:

    import tensorflow.compat.v1 as tf
    from tensorflow.examples.tutorials.mnist import input_data

    mnist = input_data.read_data_sets("/tmp/mnist", one_hot=True)

Finding:

    2:1: TFM003 [manual] tensorflow.examples.tutorials.mnist is gone in TF 2 (the program cannot start there): read the
    data with tf.keras.datasets (mnist.load_data()) or tensorflow_datasets, as a tf.data pipeline

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
from rewrites.syntax import source

# Module prefixes TensorFlow 2 does not have -> what to do instead.
REMOVED = {
    "tensorflow.examples.tutorials": "read the data with tf.keras.datasets (mnist.load_data()) or tensorflow_datasets, "
                                     "as a tf.data pipeline",
    "tensorflow.contrib": "use the TF 2 API that replaced the call (tf_slim for slim and "
                          "contrib.layers, tf.keras, tensorflow_addons), or keep the program on TF 1",
    "tensorflow.python.estimator": "TensorFlow's private Estimator internals are gone with the Estimator (TF 2.16): "
                                   "drive training through the public API (train_and_evaluate, or Keras fit once "
                                   "migrated)",
}
# Names whose use beside a star import means TF1 code that the import may bring the meaning of.
TF1_WORDS = frozenset({"tf", "tf1", "tensorflow", "estimator", "Estimator", "EstimatorSpec", "TrainSpec", "EvalSpec",
                       "train_and_evaluate", "RunConfig", "model_fn", "ClusterSpec", "Server",
                       "replica_device_setter", "MonitoredTrainingSession", "Supervisor"})


class Rewrite(TFCodemod):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._stars: list[cst.ImportFrom] = []
        self._reported: set[str] = set()
        self._tf1_words = False

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
        if not any([self._removed(f"{module}.{alias.evaluated_name}", node) for alias in node.names]):
            self._removed(module, node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        api = self.api(node)
        if api is not None and api.startswith("contrib."):
            self._removed("tensorflow." + ".".join(api.split(".")[:2]), node)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        self._tf1_words = self._tf1_words or node.value in TF1_WORDS

    def _removed(self, module: str, node: cst.CSTNode) -> bool:
        """Report ``module`` (once per file, by the package below the removed prefix: `tensorflow.contrib.slim`
        for `tensorflow.contrib.slim.nets` too) if TF 2 does not have it."""
        prefix = next((prefix for prefix in REMOVED if module == prefix or module.startswith(prefix + ".")), None)
        if prefix is None:
            return False
        package = ".".join(module.split(".")[:prefix.count(".") + 2])
        if package not in self._reported:
            self._reported.add(package)
            self.report("TFM003", node, f"{package} is gone in TF 2 (the program cannot start there): "
                                        f"{REMOVED[prefix]}")
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
