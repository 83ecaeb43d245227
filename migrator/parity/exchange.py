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
from dataclasses import dataclass
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
        """Save batches of one nested structure (tuples, lists, dicts of arrays; sparse and ragged values), stacked
        per leaf; batches of different shapes (a short last one, sparse values) flattened and joined per leaf, with
        the shape of each."""
        import numpy as np

        structure = _structure_of(batches[0])
        # tf.string values come back as object arrays: store them as fixed-width bytes (no pickle)
        leaves = [[leaf.astype(bytes) if leaf.dtype == object else leaf for leaf in map(np.asarray, _leaves(batch))]
                  for batch in batches]
        meta = {"structure": structure, "count": len(batches)}
        if not _composite(structure) and all(leaf.shape == first.shape
                                             for batch in leaves for leaf, first in zip(batch, leaves[0])):
            arrays = {str(i): np.stack([batch[i] for batch in leaves]) for i in range(len(leaves[0]))}
        else:
            arrays = {str(i): np.concatenate([batch[i].ravel() for batch in leaves]) for i in range(len(leaves[0]))}
            meta["shapes"] = [[list(leaf.shape) for leaf in batch] for batch in leaves]
        self._write_npz(name, arrays, meta)

    def read_batches(self, name: str) -> tuple[Any, int]:
        """The batches: stacked as one nested structure (leading axis = batch index), or, if they differ in
        shape, a list of them; and their count. ``dataset_of`` makes either a dataset."""
        import numpy as np

        arrays, meta = self._read_npz(name)
        leaves = [arrays[str(i)] for i in range(len(arrays))]
        if "shapes" not in meta:
            return _rebuild(meta["structure"], leaves), meta["count"]
        starts, batches = [0] * len(leaves), []
        for shapes in meta["shapes"]:
            batch = []
            for i, shape in enumerate(shapes):
                size = int(np.prod(shape))
                batch.append(leaves[i][starts[i]:starts[i] + size].reshape(shape))
                starts[i] += size
            batches.append(_rebuild(meta["structure"], batch))
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


@dataclass
class Sparse:
    """A recorded tf.SparseTensor."""

    indices: Any
    values: Any
    dense_shape: Any


@dataclass
class Ragged:
    """A recorded tf.RaggedTensor: its flat values and the row splits of each ragged dimension."""

    flat_values: Any
    nested_row_splits: list


def dataset_of(tf, batches: Any):
    """The recorded batches as a tf.data dataset of them, in order: from the stacked arrays, or, for batches of
    different shapes, one dataset of each concatenated (no Python callback: it runs on the workers)."""
    if not isinstance(batches, list):
        return tf.data.Dataset.from_tensor_slices(batches)
    dataset = tf.data.Dataset.from_tensors(_tensors(tf, batches[0]))
    for batch in batches[1:]:
        dataset = dataset.concatenate(tf.data.Dataset.from_tensors(_tensors(tf, batch)))
    return dataset


def _tensors(tf, value: Any) -> Any:
    """A rebuilt batch as the input gave it: its sparse and ragged values as tf.SparseTensor / tf.RaggedTensor."""
    if isinstance(value, Sparse):
        return tf.SparseTensor(value.indices, value.values, value.dense_shape)
    if isinstance(value, Ragged):
        return tf.RaggedTensor.from_nested_row_splits(value.flat_values, value.nested_row_splits)
    if isinstance(value, dict):
        return {key: _tensors(tf, item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_tensors(tf, item) for item in value)
    return value


def _is_sparse(value: Any) -> bool:  # a tf.compat.v1.SparseTensorValue, as Session.run gives a SparseTensor
    return all(hasattr(value, name) for name in ("indices", "values", "dense_shape"))


def _is_ragged(value: Any) -> bool:  # a tf.compat.v1.ragged.RaggedTensorValue
    return hasattr(value, "flat_values") and hasattr(value, "nested_row_splits")


def _structure_of(value: Any) -> Any:
    """A JSON description of a nested value: {"dict": {k: ...}}, {"tuple": [...]}, {"list": [...]}, "leaf",
    {"sparse": 3} (indices, values, dense_shape), {"ragged": n} (flat values and n row splits)."""
    if _is_sparse(value):
        return {"sparse": 3}
    if _is_ragged(value):
        return {"ragged": len(value.nested_row_splits)}
    if isinstance(value, dict):
        return {"dict": {key: _structure_of(value[key]) for key in sorted(value)}}
    if isinstance(value, (tuple, list)):
        return {"list" if isinstance(value, list) else "tuple": [_structure_of(v) for v in value]}
    return "leaf"


def _composite(structure: Any) -> bool:
    """Does the structure hold sparse or ragged values (whose arrays differ in shape from batch to batch)?"""
    if isinstance(structure, dict):
        ((kind, inner),) = structure.items()
        if kind in ("sparse", "ragged"):
            return True
        return any(map(_composite, inner.values() if kind == "dict" else inner))
    return False


def _leaves(value: Any) -> list[Any]:
    if _is_sparse(value):
        return [value.indices, value.values, value.dense_shape]
    if _is_ragged(value):
        return [value.flat_values, *value.nested_row_splits]
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
        if kind == "sparse":
            return Sparse(next(iterator), next(iterator), next(iterator))
        if kind == "ragged":
            return Ragged(next(iterator), [next(iterator) for _ in range(inner)])
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
