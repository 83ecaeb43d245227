"""Each side keeps a copy of every SavedModel its program exports, for the parent's export check.

A program may remove its exports before it ends (a model_dir in a temporary folder, removed at the end), so
each export is copied into the work folder as it is made: ``exports/<side>/<pid>-<n>``, listed in
``<side>_exports.json`` by the folder it was exported into (its export_dir_base), the latest of each.

- old side: what ``Estimator.export_saved_model`` / ``export_savedmodel`` return (an exporter's export too);
- new side: a SavedModel written into a folder named by a timestamp, as TF1's exports were, by
  ``tf.saved_model.save`` or renamed there by ``tf.io.gfile.rename`` (written beside, then renamed).

Installed before the isolation (migrator/parity/isolation.py), so that the paths seen are where the side wrote.
"""

from __future__ import annotations

import functools
import os
import shutil

from migrator.parity.exchange import Exchange

EXPORT_METHODS = ("export_saved_model", "export_savedmodel")
SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")  # as_text=True writes the second


class ExportCapture:
    def __init__(self, exchange: Exchange, side: str) -> None:
        self.exchange, self.side = exchange, side
        self.listing = f"{side}_exports.json"
        self.kept: dict[str, str] = {}  # export_dir_base -> the copy of its latest export
        self.count = 0
        self.stopped = False  # the program went on to train another model: its exports are not compared

    def keep(self, export_dir) -> None:
        export_dir = os.fsdecode(export_dir).rstrip("/")
        if self.stopped:
            return
        if not any(os.path.isfile(os.path.join(export_dir, name)) for name in SAVED_MODEL_FILES):
            return
        self.count += 1
        copy = self.exchange.path(os.path.join("exports", self.side, f"{os.getpid()}-{self.count}"))
        shutil.copytree(export_dir, copy)
        base = os.path.dirname(export_dir)
        previous = self.kept.get(base)
        self.kept[base] = str(copy)
        if previous:
            shutil.rmtree(previous, ignore_errors=True)
        self.exchange.write_json(self.listing, self.kept)

    def install_estimator(self, estimator_class: type) -> None:
        for method in EXPORT_METHODS:
            if hasattr(estimator_class, method):
                setattr(estimator_class, method, self._keeping(getattr(estimator_class, method)))

    def _keeping(self, export: callable) -> callable:
        @functools.wraps(export)
        def exported(*args, **kwargs):
            path = export(*args, **kwargs)
            self.keep(path)
            return path
        return exported

    def install_tf(self, tf) -> None:
        save, rename = tf.saved_model.save, tf.io.gfile.rename

        @functools.wraps(save)
        def saved(obj, export_dir, *args, **kwargs):
            save(obj, export_dir, *args, **kwargs)
            if _timestamp(export_dir):
                self.keep(export_dir)

        @functools.wraps(rename)
        def renamed(src, dst, *args, **kwargs):
            rename(src, dst, *args, **kwargs)
            if _timestamp(dst):
                self.keep(dst)

        tf.saved_model.save, tf.io.gfile.rename = saved, renamed


def _timestamp(path) -> bool:
    return os.path.basename(os.fsdecode(path).rstrip("/")).isdigit()
