"""Stand-ins the real-code runs put on every program's path (run.py prepends this folder to PYTHONPATH).

- ``tensorflow.examples.tutorials.mnist.input_data``, the TF1 tutorials' MNIST reader, which TF 2 no longer ships:
  ``mnist_input_data.py`` here, reading the stand-in MNIST file (standins/mnist_npz.py) instead of downloading;
- ``tensorflow.examples.tutorials.mnist.mnist``, the tutorials' MNIST model (``mnist_tutorial_model.py``), for TF1
  copies that import it;
- with ``REALCODE_MNIST`` set (the path of that file), ``tf.keras.datasets.mnist.load_data()`` reads the same file:
  this machine reaches no data server, and Keras' copy of MNIST would be downloaded (and its hash checked);
- ``keras.utils.vis_utils``, where TF 1.x-era Keras 2 kept ``model_to_dot`` / ``plot_model``: Keras 2.15's
  ``keras.src.utils.vis_utils`` (notebook helper modules import it);
- ``azureml`` (a folder here): an offline Azure ML run context, as the SDK gives outside Azure;
- with ``REALCODE_PROGRESS`` set to N (run.py sets it for a cluster run of a program that trains until stopped,
  ``duration``), a training loop says how far it got: every N steps a ClusterCoordinator schedules, it waits for
  them (``join``) and prints ``realcode progress: <steps> steps done``; a TF1 MonitoredSession prints the same every
  N runs. The program's code is not touched.

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
MOVED = {"keras.utils.vis_utils": "keras.src.utils.vis_utils"}  # module -> where Keras 2.15 has it


class _Package(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__path__ = []
        if module.__name__ == TUTORIALS[-1]:
            module.input_data = importlib.import_module(READER)


class _Moved(importlib.abc.Loader):
    """The module where it moved to, under its old name."""

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        pass


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


# module -> (class, method) counted as the training loop's steps, with REALCODE_PROGRESS set.
PROGRESS = {"tensorflow.python.distribute.coordinator.cluster_coordinator": ("ClusterCoordinator", "schedule"),
            "tensorflow.python.training.monitored_session": ("_MonitoredSession", "run")}


class _Counting(importlib.abc.Loader):
    """Runs the module as it is, then has the method of PROGRESS print the steps done every REALCODE_PROGRESS."""

    def __init__(self, loader, name):
        self.loader, self.name = loader, name

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        owner, method = PROGRESS[self.name]
        cls = getattr(module, owner)
        original, every, steps = getattr(cls, method), int(os.environ["REALCODE_PROGRESS"]), [0]

        def counted(self, *args, **kwargs):
            result = original(self, *args, **kwargs)
            steps[0] += 1
            if steps[0] % every == 0:
                if method == "schedule":
                    self.join()  # the steps scheduled so far are done
                print(f"realcode progress: {steps[0]} steps done", flush=True)
            return result

        setattr(cls, method, counted)


def _found_elsewhere(finder, name, path, target):
    for other in sys.meta_path:
        if other is finder or not hasattr(other, "find_spec"):
            continue
        spec = other.find_spec(name, path, target)
        if spec is not None:
            return spec
    return None


class _StandIns(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in TUTORIALS:
            return importlib.util.spec_from_loader(name, _Package(), is_package=True)
        if name == READER:
            return importlib.util.spec_from_file_location(name, os.path.join(HERE, "mnist_input_data.py"))
        if name in MOVED:
            return importlib.util.spec_from_loader(name, _Moved())
        if name == MODEL:
            return importlib.util.spec_from_file_location(name, os.path.join(HERE, "mnist_tutorial_model.py"))
        if name in KERAS_MNIST and os.environ.get("REALCODE_MNIST"):
            spec = _found_elsewhere(self, name, path, target)
            if spec is not None:
                spec.loader = _ReadingTheStandIn(spec.loader)
            return spec
        if name in PROGRESS and os.environ.get("REALCODE_PROGRESS"):
            spec = _found_elsewhere(self, name, path, target)
            if spec is not None:
                spec.loader = _Counting(spec.loader, name)
            return spec
        return None


sys.meta_path.insert(0, _StandIns())
