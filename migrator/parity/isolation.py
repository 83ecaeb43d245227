"""Each side keeps to its own folder: the user's checkpoints, summaries and exports are never read or written.

A program names its folders as it likes: a ``--model_dir`` flag with a default, an argparse default, an
environment variable, a constant. Whatever the name, the TensorFlow and Keras calls that read or write
checkpoints, summaries and SavedModels get, on both sides by the same means, the same path under the side's
folder in the work folder (``/home/me/model`` -> ``<work>/<side>_files/home/me/model``; ``gs://b/m`` ->
``<work>/<side>_files/gs/b/m``): a checkpoint planted in the program's default model_dir is not seen, and
nothing is written beside it. Paths already in the work folder (its temporary files, the harness's own
folders) stay as they are. Data files, and SavedModels a program loads (a pretrained module), are read where they
are.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

# (module attribute path, the name of the path parameter, its position in the call): functions.
FUNCTIONS = tuple((f"{namespace}train.{name}", parameter, 0) for namespace in ("", "compat.v1.") for name, parameter in (
    ("latest_checkpoint", "checkpoint_dir"), ("checkpoints_iterator", "checkpoint_dir"),
    ("load_checkpoint", "ckpt_dir_or_file"))) + (
    ("summary.create_file_writer", "logdir", 0), ("saved_model.save", "export_dir", 1))
# Methods of classes: (class path, method, parameter, position after self).
METHODS = (("train.CheckpointManager", "__init__", "directory", 1), ("train.Checkpoint", "save", "file_prefix", 0),
           ("train.Checkpoint", "write", "file_prefix", 0), ("train.Checkpoint", "restore", "save_path", 0),
           ("train.Checkpoint", "read", "save_path", 0), ("compat.v1.train.Saver", "save", "save_path", 1),
           ("compat.v1.train.Saver", "restore", "save_path", 1),
           ("compat.v1.summary.FileWriter", "__init__", "logdir", 0),
           ("compat.v1.saved_model.Builder", "__init__", "export_dir", 0))
KERAS_METHODS = (("Model", "save", "filepath", 0), ("Model", "save_weights", "filepath", 0),
                 ("Model", "load_weights", "filepath", 0))
# tf.io.gfile calls: on a path the side wrote in its folder (the SavedModel an export finishes, the exports it
# keeps), there, as what wrote it was placed; on any other (a data file), where it is.
GFILE_FUNCTIONS = tuple((f"io.gfile.{name}", "path", 0) for name in ("exists", "isdir", "listdir", "rmtree", "remove",
                                                                       "stat", "glob"))
GFILE_FUNCTIONS += tuple((f"compat.v1.gfile.{name}", "filename" if name == "Exists" else "dirname", 0)
                         for name in ("Exists", "IsDirectory", "ListDirectory"))
GFILE_METHODS = (("io.gfile.GFile", "__init__", "name", 0),)
# Folders a side makes go in its folder (Keras' model_to_estimator makes `<model_dir>/keras` with compat.v1.gfile).
MAKE_FOLDERS = (("io.gfile.makedirs", "path", 0), ("io.gfile.mkdir", "path", 0),
                ("compat.v1.gfile.MakeDirs", "dirname", 0), ("compat.v1.gfile.MkDir", "dirname", 0))
ESTIMATOR_METHODS = (("export_saved_model", "export_dir_base", 0), ("export_savedmodel", "export_dir_base", 0),
                     ("experimental_export_all_saved_models", "export_dir_base", 0))


class Isolation:
    """Maps the paths a side's program names into ``root`` (``keep``: folders whose paths stay as they are)."""

    def __init__(self, root: Path, keep: Path) -> None:
        self.root, self.keep = str(root), str(keep)

    def place(self, path):
        if not isinstance(path, (str, os.PathLike)):
            return path
        text = os.fspath(path)
        if not isinstance(text, str) or not text:
            return path
        absolute = text.replace("://", "/", 1) if "://" in text else os.path.abspath(text)
        if absolute == self.keep or absolute.startswith(self.keep + os.sep):
            return path
        return os.path.join(self.root, absolute.lstrip("/"))

    def overlaid(self, path):
        """``path`` in the side's folder where the side wrote there (it, or its folder, is there), else as it is."""
        placed = self.place(path)
        if placed is path:
            return path
        return placed if os.path.exists(placed) or os.path.isdir(os.path.dirname(placed)) else path

    def install(self, tf) -> None:
        """Patch TensorFlow's checkpoint, summary, SavedModel and file calls of this process."""
        for functions, methods, place in ((FUNCTIONS + MAKE_FOLDERS, METHODS, self.place),
                                          (GFILE_FUNCTIONS, GFILE_METHODS, self.overlaid)):
            for name, parameter, position in functions:
                owner, attribute = _owner(tf, name)
                if owner is not None:
                    setattr(owner, attribute, self._wrapped(getattr(owner, attribute), parameter, position, place))
            for name, method, parameter, position in methods:
                owner, attribute = _owner(tf, name)
                if owner is not None:
                    cls = getattr(owner, attribute)
                    setattr(cls, method, self._wrapped(getattr(cls, method), parameter, position + 1, place))
        owner, attribute = _owner(tf, "io.gfile.rename")
        if owner is not None:
            setattr(owner, attribute, self._renamed(getattr(owner, attribute)))

    def install_keras(self, keras) -> None:
        for name, method, parameter, position in KERAS_METHODS:
            cls = getattr(keras, name)
            setattr(cls, method, self._wrapped(getattr(cls, method), parameter, position + 1))

    def install_estimator(self, estimator_class) -> None:
        for method, parameter, position in ESTIMATOR_METHODS:
            if hasattr(estimator_class, method):
                setattr(estimator_class, method,
                        self._wrapped(getattr(estimator_class, method), parameter, position + 1))
        estimator_class.__init__ = self._wrapped(estimator_class.__init__, "warm_start_from", 5, self.warm_start)

    def warm_start(self, value):
        """An Estimator's ``warm_start_from`` (a path, or WarmStartSettings) where the side wrote that checkpoint
        (model_to_estimator's first one, in `<model_dir>/keras`)."""
        if hasattr(value, "ckpt_to_initialize_from"):
            return value._replace(ckpt_to_initialize_from=self.overlaid(value.ckpt_to_initialize_from))
        return self.overlaid(value)

    def _wrapped(self, function: Callable, parameter: str, position: int, place=None) -> Callable:
        place = place or self.place

        @functools.wraps(function)
        def placed(*args, **kwargs):
            if parameter in kwargs:
                kwargs[parameter] = place(kwargs[parameter])
            elif len(args) > position:
                args = (*args[:position], place(args[position]), *args[position + 1:])
            return function(*args, **kwargs)
        return placed

    def _renamed(self, function: Callable) -> Callable:
        """tf.io.gfile.rename: a file the side wrote in its folder goes to the same place there."""
        @functools.wraps(function)
        def renamed(src, dst, overwrite=False):
            placed = self.overlaid(src)
            return function(placed, dst if placed is src else self.place(dst), overwrite)
        return renamed


def _owner(tf, dotted: str):
    """(the object holding the last name of ``dotted`` under ``tf``, that name), or (None, None)."""
    *path, attribute = dotted.split(".")
    owner = tf
    for part in path:
        owner = getattr(owner, part, None)
        if owner is None:
            return None, None
    return (owner, attribute) if hasattr(owner, attribute) else (None, None)
