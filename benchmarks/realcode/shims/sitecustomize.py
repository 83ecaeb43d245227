"""Stand-ins the real-code runs put on every program's path (run.py prepends this folder to PYTHONPATH).

- ``tensorflow.examples.tutorials.mnist.input_data``, the TF1 tutorials' MNIST reader, which TF 2 no longer ships:
  ``mnist_input_data.py`` here, reading the stand-in MNIST file (standins/mnist_npz.py) instead of downloading;
- ``tensorflow.examples.tutorials.mnist.mnist``, the tutorials' MNIST model (``mnist_tutorial_model.py``), for TF1
  copies that import it;
- with ``REALCODE_MNIST`` set (the path of that file), ``tf.keras.datasets.mnist.load_data()`` reads the same file:
  this machine reaches no data server, and Keras' copy of MNIST would be downloaded (and its hash checked);
- ``azureml`` (a folder here): an offline Azure ML run context, as the SDK gives outside Azure.

A name nothing here stands in for is imported as usual; the hooks act only when the module is imported.
"""
import importlib.abc
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TUTORIALS = ("tensorflow.examples", "tensorflow.examples.tutorials", "tensorflow.examples.tutorials.mnist")
READER = "tensorflow.examples.tutorials.mnist.input_data"
MODEL = "tensorflow.examples.tutorials.mnist.mnist"
KERAS_MNIST = ("keras.src.datasets.mnist", "tf_keras.src.datasets.mnist")


class _Package(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__path__ = []
        if module.__name__ == TUTORIALS[-1]:
            module.input_data = importlib.import_module(READER)


class _ReadingTheStandIn(importlib.abc.Loader):
    """Runs the module as it is, then points its ``load_data`` at the stand-in file."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        if hasattr(module, "load_data"):
            from mnist_input_data import load_stand_in
            module.load_data = load_stand_in


class _StandIns(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in TUTORIALS:
            return importlib.util.spec_from_loader(name, _Package(), is_package=True)
        if name == READER:
            return importlib.util.spec_from_file_location(name, os.path.join(HERE, "mnist_input_data.py"))
        if name == MODEL:
            return importlib.util.spec_from_file_location(name, os.path.join(HERE, "mnist_tutorial_model.py"))
        if name in KERAS_MNIST and os.environ.get("REALCODE_MNIST"):
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    spec.loader = _ReadingTheStandIn(spec.loader)
                    return spec
        return None


sys.meta_path.insert(0, _StandIns())
