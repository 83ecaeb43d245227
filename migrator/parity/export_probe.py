"""Loads SavedModels in a fresh process, as a server would: each signature's def and its answers to requests.

    python -m migrator.parity.export_probe WORKDIR EXPORT_DIR...

Prints one JSON line: for each EXPORT_DIR, ``{"signatures": {name: {"method", "inputs", "outputs", "answers",
"requests", "note"}}, "assets_extra": {file: sha256}}`` (inputs and outputs: key -> [dtype, shape], shape None
for an unknown rank), or
``{"error": "..."}`` when it does not load. Run by the parent (migrator/parity/export_check.py) with each side's
interpreter, so that the old export loads where TF1 ran and the new one where the migration runs.

The requests are the features of the first recorded evaluation batch (else training batch): a signature's
input named like a feature gets that feature's values; a string input named like none gets those features as
serialized tf.Examples (a parsing receiver's). Both sides' probes build them alike from the same batch.
"""

from __future__ import annotations

import json
import os
import sys

from migrator.parity.exchange import Exchange


def recorded_features(exchange: Exchange):
    """The features of the first recorded batch (eval, else train): a dict of arrays, or one array."""
    for name in ("data/eval.npz", "data/train.npz"):
        if exchange.path(name).exists():
            batches, _ = exchange.read_batches(name)
            batch = batches[0] if isinstance(batches, list) else _first(batches)
            return batch[0] if isinstance(batch, (tuple, list)) else batch
    return None


def _first(stacked):
    if isinstance(stacked, dict):
        return {key: _first(value) for key, value in stacked.items()}
    if isinstance(stacked, (tuple, list)):
        return type(stacked)(_first(value) for value in stacked)
    return stacked[0] if hasattr(stacked, "shape") else stacked


def serialized_examples(tf, np, features: dict) -> list[bytes] | None:
    """Each row of the features as a tf.Example (None: a feature is not an array)."""
    arrays = {key: value for key, value in features.items()}
    if not arrays or not all(isinstance(value, np.ndarray) and value.ndim >= 1 for value in arrays.values()):
        return None
    rows = len(next(iter(arrays.values())))
    examples = []
    for row in range(rows):
        feature = {}
        for key, values in arrays.items():
            value = np.ravel(values[row])
            if value.dtype.kind == "f":
                feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value.tolist()))
            elif value.dtype.kind in "iub":
                feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=value.astype(np.int64).tolist()))
            elif value.dtype.kind in "SOU":
                feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[item if isinstance(item, bytes) else str(item).encode() for item in value.tolist()]))
            else:
                return None
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return examples


def request(tf, np, inputs: dict, features) -> tuple[dict | None, str | None]:
    """The signature's inputs for the recorded features, or (None, why there is no request)."""
    if features is None:
        return None, "no recorded batch to make requests of"
    named = features if isinstance(features, dict) else {}
    made = {}
    for key, (dtype, shape) in inputs.items():
        if key in named:
            value = np.asarray(named[key])
            if dtype == "string" and value.dtype.kind not in "SOU":
                return None, (f"input '{key}' takes strings (the serving function parses them), the recorded "
                              "feature is numbers")
        elif not named and len(inputs) == 1:
            value = np.asarray(features)
        elif dtype == "string":
            examples = serialized_examples(tf, np, named)
            if examples is None:
                return None, f"the recorded features cannot be written as tf.Examples for input '{key}'"
            value = np.array(examples, dtype=object)
        else:
            return None, f"no recorded feature for input '{key}'"
        made[key] = tf.constant(_fitted(np, value, shape), dtype=tf.dtypes.as_dtype(dtype))
    return made, None


def _fitted(np, value, shape):
    """``value`` in the rank of the input's shape where its examples' sizes allow it (one value per example as
    [batch] or [batch, 1])."""
    if shape is None or value.ndim == len(shape) or value.ndim == 0:
        return value
    rest = [dim if dim >= 0 else -1 for dim in shape[1:]]
    try:
        return value.reshape([value.shape[0], *rest])
    except ValueError:
        return value


def describe(tf, infos) -> dict:
    return {key: [tf.dtypes.as_dtype(info.dtype).name,
                  None if info.tensor_shape.unknown_rank else [dim.size for dim in info.tensor_shape.dim]]
            for key, info in sorted(infos.items())}


def answers(np, outputs: dict) -> dict:
    found = {}
    for key, value in outputs.items():
        array = value.numpy()
        if array.dtype.kind in "SO":
            found[key] = np.char.decode(array.astype(bytes), errors="replace").tolist()
        else:
            found[key] = array.astype(np.float64).tolist()
    return found


def probe(tf, np, path: str, features) -> dict:
    from tensorflow.core.protobuf import saved_model_pb2

    try:
        if os.path.isfile(f"{path}/saved_model.pbtxt"):  # written with as_text=True
            from google.protobuf import text_format

            with open(f"{path}/saved_model.pbtxt") as file:
                graph = text_format.Parse(file.read(), saved_model_pb2.SavedModel()).meta_graphs[0]
        else:
            with open(f"{path}/saved_model.pb", "rb") as file:
                graph = saved_model_pb2.SavedModel.FromString(file.read()).meta_graphs[0]
        loaded = tf.saved_model.load(path)
    except Exception as error:  # noqa: BLE001 (whatever stops a server loading it is the answer)
        return {"error": f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"}
    signatures = {}
    for name, signature in sorted(graph.signature_def.items()):
        if name.startswith("__"):  # the SavedModel's own (its init op)
            continue
        found = {"method": signature.method_name, "inputs": describe(tf, signature.inputs),
                 "outputs": describe(tf, signature.outputs), "answers": {}, "requests": 0, "note": None}
        inputs, found["note"] = request(tf, np, found["inputs"], features)
        if inputs is not None:
            try:
                found["answers"] = answers(np, loaded.signatures[name](**inputs))
                found["requests"] = int(next(iter(inputs.values())).shape[0]) if inputs else 0
            except Exception as error:  # noqa: BLE001
                found["note"] = f"it failed to answer: {type(error).__name__}: {str(error).strip()[:300]}"
        signatures[name] = found
    return {"signatures": signatures, "assets_extra": assets_extra(path)}


def assets_extra(path: str) -> dict[str, str]:
    """The files of the export's assets.extra folder (its assets_extra), each by its SHA-256."""
    import hashlib

    folder = os.path.join(path, "assets.extra")
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(root, name), "rb") as file:
                found[os.path.relpath(os.path.join(root, name), folder)] = hashlib.sha256(file.read()).hexdigest()
    return found


def main(argv: list[str]) -> int:
    import numpy as np
    import tensorflow as tf

    workdir, *paths = argv
    features = recorded_features(Exchange(workdir))
    print(json.dumps({path: probe(tf, np, path, features) for path in paths}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
