"""The files the two sides and the parent exchange inside the run's work folder.

Imported by the child processes, possibly under another interpreter: standard
library and numpy only.

    job.json            what to run: steps, seed, data mode, cluster, tolerances
    data/train.npz      the recorded training batches, stacked   (old side writes)
    data/eval.npz       the recorded eval batches, stacked       (old side writes)
    initial.npz         the old model's initial weights          (old side writes)
    train.ready         data/train.npz and initial.npz are complete
    eval.ready          data/eval.npz is complete
    old.json, new.json  what each side measured (model.SideRun)
    old_final.npz, new_final.npz   final weights in creation order
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any


class Exchange:
    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)

    def path(self, name: str) -> Path:
        return self.folder / name

    # -- json and markers ---------------------------------------------------

    def write_json(self, name: str, data: Any) -> None:
        write_atomic(self.path(name), json.dumps(data, indent=1).encode())

    def read_json(self, name: str) -> Any:
        return json.loads(self.path(name).read_text())

    def mark(self, name: str) -> None:
        write_atomic(self.path(name), b"")

    def wait_for(self, marker: str, unless: str, poll: float = 0.05) -> bool:
        """Block until ``marker`` exists (True) or ``unless`` does (False). The parent enforces time limits."""
        while True:
            if self.path(marker).exists():
                return True
            if self.path(unless).exists():
                return False
            time.sleep(poll)

    # -- arrays -------------------------------------------------------------

    def write_batches(self, name: str, batches: list[Any]) -> None:
        """Save batches of one nested structure (tuples, lists, dicts of arrays), stacked per leaf; batches of
        different sizes (a short last one) concatenated per leaf, with the size of each."""
        import numpy as np

        structure = _structure_of(batches[0])
        # tf.string values come back as object arrays: store them as fixed-width bytes (no pickle)
        leaves = [[leaf.astype(bytes) if leaf.dtype == object else leaf for leaf in map(np.asarray, _leaves(batch))]
                  for batch in batches]
        meta = {"structure": structure, "count": len(batches)}
        if all(leaf.shape == first.shape for batch in leaves for leaf, first in zip(batch, leaves[0])):
            arrays = {str(i): np.stack([batch[i] for batch in leaves]) for i in range(len(leaves[0]))}
        else:
            arrays = {str(i): np.concatenate([batch[i] for batch in leaves]) for i in range(len(leaves[0]))}
            meta["sizes"] = [len(batch[0]) for batch in leaves]
        self._write_npz(name, arrays, meta)

    def read_batches(self, name: str) -> tuple[Any, int]:
        """The batches: stacked as one nested structure (leading axis = batch index), or, if they differ in
        size, a list of them; and their count. ``dataset_of`` makes either a dataset."""
        arrays, meta = self._read_npz(name)
        leaves = [arrays[str(i)] for i in range(len(arrays))]
        if "sizes" not in meta:
            return _rebuild(meta["structure"], leaves), meta["count"]
        bounds = [0]
        for size in meta["sizes"]:
            bounds.append(bounds[-1] + size)
        batches = [_rebuild(meta["structure"], [leaf[start:end] for leaf in leaves])
                   for start, end in zip(bounds, bounds[1:])]
        return batches, meta["count"]

    def write_arrays(self, name: str, named: list[tuple[str, Any]]) -> None:
        """Values in order, each with its name."""
        self._write_npz(name, {str(i): value for i, (_, value) in enumerate(named)}, {"names": [n for n, _ in named]})

    def read_arrays(self, name: str) -> list[tuple[str, Any]]:
        arrays, meta = self._read_npz(name)
        return [(n, arrays[str(i)]) for i, n in enumerate(meta["names"])]

    def _write_npz(self, name: str, arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        import io

        import numpy as np

        buffer = io.BytesIO()
        np.savez(buffer, __meta__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
        write_atomic(self.path(name), buffer.getvalue())

    def _read_npz(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        import numpy as np

        with np.load(self.path(name), allow_pickle=False) as data:
            meta = json.loads(data["__meta__"].tobytes().decode())
            return {key: data[key] for key in data.files if key != "__meta__"}, meta


def dataset_of(tf, batches: Any):
    """The recorded batches as a tf.data dataset of them, in order: from the stacked arrays, or, for batches of
    different sizes, one dataset of each concatenated (no Python callback: it runs on the workers)."""
    if not isinstance(batches, list):
        return tf.data.Dataset.from_tensor_slices(batches)
    dataset = tf.data.Dataset.from_tensors(batches[0])
    for batch in batches[1:]:
        dataset = dataset.concatenate(tf.data.Dataset.from_tensors(batch))
    return dataset


def _structure_of(value: Any) -> Any:
    """A JSON description of a nested value: {"dict": {k: ...}}, {"tuple": [...]}, {"list": [...]}, "leaf"."""
    if isinstance(value, dict):
        return {"dict": {key: _structure_of(value[key]) for key in sorted(value)}}
    if isinstance(value, (tuple, list)):
        return {"list" if isinstance(value, list) else "tuple": [_structure_of(v) for v in value]}
    return "leaf"


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _leaves(value[key])]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _rebuild(structure: Any, leaves: list[Any]) -> Any:
    iterator = iter(leaves)

    def build(node: Any) -> Any:
        if node == "leaf":
            return next(iterator)
        ((kind, inner),) = node.items()
        if kind == "dict":
            return {key: build(child) for key, child in inner.items()}
        items = [build(child) for child in inner]
        return tuple(items) if kind == "tuple" else items

    return build(structure)


def write_atomic(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def versions() -> dict[str, str]:
    """Python and the installed TensorFlow distributions that decide the numbers."""
    from importlib import metadata

    found = {"python": platform.python_version()}
    for label, distributions in (
        ("tensorflow", ("tensorflow-cpu", "tensorflow", "tensorflow-intel", "tensorflow-macos")),
        ("tensorflow_estimator", ("tensorflow-estimator",)),
        ("tf_keras", ("tf-keras",)),
        ("keras", ("keras",)),
    ):
        for distribution in distributions:
            try:
                found[label] = metadata.version(distribution)
                break
            except metadata.PackageNotFoundError:
                continue
    return found
