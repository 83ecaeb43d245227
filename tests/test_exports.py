"""The served model survives the migration (examples/exporter: a canned estimator's exporters; examples/export_outputs:
a model_fn kept as written, its own signatures, exported by export_saved_model): the migrated program's exports have
TF1's folders, signatures (names, methods, input keys, dtypes, shapes, output keys) and answers to the same requests.

Both exports hold the same weights: the TF1 program trains and exports; the migrated program, started on a copy of
its model_dir, carries on from that checkpoint (at max_steps already, it trains no step) and exports. Training
parity itself is tests/test_parity.py's (the `exporter` example).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "tf_keras")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, tf_keras)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

import numpy as np  # noqa: E402 (with TensorFlow, in the parity extra)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXPORTERS = {"exporter": ("exporter", "best", "final"), "export_outputs": ("served",)}  # example -> its export folders
RUNS = {"exporter": 3, "export_outputs": 1}  # of the migrated program, each exporting again
TIMEOUT = 180

# Loads each export in a fresh interpreter: its SignatureDefs as written, and each signature's answers to the same
# requests (serialized tf.Examples for a string input, feature values for the others).
PROBE = r"""
import json, sys
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

sys.path.insert(0, sys.argv[2])
from train import make_data

features, _ = make_data(8, seed=2)
features.pop("key", None)  # an example's name, which clients do not send
examples = [tf.train.Example(features=tf.train.Features(feature={
    name: tf.train.Feature(float_list=tf.train.FloatList(value=np.atleast_1d(values[row]).tolist()))
    for name, values in features.items()})).SerializeToString() for row in range(8)]
path = sys.argv[1]
with open(path + "/saved_model.pb", "rb") as file:
    graph = saved_model_pb2.SavedModel.FromString(file.read()).meta_graphs[0]
loaded = tf.saved_model.load(path)
found = {}
for name, signature in sorted(graph.signature_def.items()):
    if name.startswith("__"):
        continue
    shapes = lambda infos: {key: [tf.dtypes.as_dtype(info.dtype).name, [dim.size for dim in info.tensor_shape.dim]]
                                 for key, info in infos.items()}
    inputs = {key: tf.constant(examples) if info.dtype == tf.string.as_datatype_enum else tf.constant(features[key])
              for key, info in signature.inputs.items()}
    answers = loaded.signatures[name](**inputs)
    found[name] = {"method": signature.method_name, "inputs": shapes(signature.inputs),
                   "outputs": shapes(signature.outputs),
                   "answers": {key: value.numpy().tolist() if value.dtype != tf.string else
                               np.char.decode(value.numpy().astype(bytes)).tolist()
                               for key, value in answers.items()}}
print(json.dumps(found))
"""


def _run(program: Path, model_dir: Path) -> None:
    proc = subprocess.run([sys.executable, str(program), "--model-dir", str(model_dir)], capture_output=True,
                          text=True, timeout=TIMEOUT, cwd=model_dir.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _exports(model_dir: Path, exporter: str) -> list[Path]:
    return sorted((model_dir / "export" / exporter).iterdir())


def _probe(export: Path, example: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(export), str(EXAMPLES / example)], capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """example -> (TF1's model_dir, the migrated program's): the migrated program ran RUNS times on a copy of TF1's
    checkpoint (each run exports again)."""
    made: dict[str, tuple[Path, Path]] = {}

    def model_dirs(example: str) -> tuple[Path, Path]:
        if example not in made:
            root = tmp_path_factory.mktemp(example)
            tf1, tf2 = root / "tf1", root / "tf2"
            _run(EXAMPLES / example / "train.py", tf1)
            shutil.copytree(tf1, tf2, ignore=shutil.ignore_patterns("export"))
            for _ in range(RUNS[example]):
                _run(EXAMPLES / example / "train_tf2.py", tf2)
            made[example] = tf1, tf2
        return made[example]

    return model_dirs


@pytest.mark.parametrize("example, exporter", [(example, exporter) for example, exporters in EXPORTERS.items()
                                                for exporter in exporters])
def test_the_migrated_export_has_tf1s_signatures_and_answers_the_same(trained, example, exporter):
    tf1, tf2 = (_probe(_exports(model_dir, exporter)[-1], example) for model_dir in trained(example))
    assert sorted(tf2) == sorted(tf1) and tf1  # the same signature names
    for name, signature in tf1.items():
        migrated = tf2[name]
        for part in ("method", "inputs", "outputs"):
            assert migrated[part] == signature[part], (name, part)
        for key, answer in signature["answers"].items():
            got = migrated["answers"][key]
            flat, got = np.ravel(answer).tolist(), np.ravel(got).tolist()
            if isinstance(flat[0], str):
                assert got == flat, (name, key)
            else:
                assert got == pytest.approx(flat, rel=1e-5, abs=1e-6), (name, key)


def test_exports_land_where_tf1s_did_and_each_exporter_keeps_as_many_as_tf1s(trained):
    tf1, tf2 = trained("exporter")
    assert sorted(path.name for path in (tf2 / "export").iterdir()) == ["best", "exporter", "final"]
    latest, best, final = (_exports(tf2, name) for name in ("exporter", "best", "final"))
    # exports_to_keep=2; BestExporter's default 5, each run exporting as a run's first evaluation did; FinalExporter
    # keeps every export.
    assert len(latest) == 2 and len(best) == 3 and len(final) == 3
    assert all(path.name.isdigit() and (path / "saved_model.pb").is_file() for path in latest + best + final)
    assert len(_exports(tf1, "exporter")) == 1


# -- the parity harness's export check --------------------------------------------------------------

TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")
STEPS = ("--steps", "3")  # the exports are what is compared: a few steps train both sides alike


def _parity(old: Path, new: Path, report: Path) -> tuple[subprocess.CompletedProcess, dict]:
    proc = subprocess.run([TF_MIGRATE, "parity", str(old), str(new), *STEPS, "--json", str(report), "--",
                           "--train-steps", "3"], capture_output=True, text=True, timeout=600)
    return proc, json.loads(report.read_text()) if report.exists() else {}


def test_parity_loads_both_exports_and_finds_them_serving_alike(tmp_path):
    proc, report = _parity(EXAMPLES / "exporter" / "train.py", EXAMPLES / "exporter" / "train_tf2.py",
                           tmp_path / "report.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "3 exports serve alike (7 signatures)" in proc.stdout
    exports = {export["name"]: export for export in report["exports"]}
    assert sorted(exports) == ["export/best", "export/exporter", "export/final"]
    assert exports["export/exporter"]["old_path"] == "<model_dir>/export/exporter"
    signatures = {s["name"]: s for s in exports["export/exporter"]["signatures"]}
    assert sorted(signatures) == ["classification", "predict", "serving_default"]
    assert signatures["classification"]["method"] == "tensorflow/serving/classify"
    assert signatures["predict"]["inputs"] == {"examples": ["string", [-1]]}
    assert all(s["ok"] and s["requests"] == 16 for s in signatures.values())  # the first eval batch, as tf.Examples
    (final,) = exports["export/final"]["signatures"]
    assert sorted(final["inputs"]) == ["depth", "length", "width"] and final["requests"] == 16


def _wrong(example: str, tmp_path: Path, old: str, new: str) -> Path:
    text = (EXAMPLES / example / "train_tf2.py").read_text()
    assert text.count(old) == 1, old
    path = tmp_path / "train_tf2.py"
    path.write_text(text.replace(old, new))
    return path


# A migration that trains the same numbers but serves something else: each is a mismatch naming what differs.
WRONG_EXPORTS = {
    "signature missing": ("export_outputs", '      "classification": ("classify", "classification"),\n', "",
                          "export/served, signature 'classification': missing from the new export"),
    "input key renamed": ("export_outputs", 'return features, {"examples": serialized}',
                          'return features, {"serialized": serialized}',
                          "export/served, signature 'serving_default': input 'examples' is missing from the new "
                          "signature"),
    "input dtype changed": ("exporter", "tf.compat.v1.placeholder(tf.float32, [None])",
                            "tf.compat.v1.placeholder(tf.float64, [None])",
                            "export/final, signature 'predict': input 'depth': dtype float32 (old), float64 (new)"),
    "answers differ": ("export_outputs", 'return features, {"examples": serialized}',
                       'return {"x": features["x"] * 2.0}, {"examples": serialized}',
                       "export/served, signature 'classification': output 'scores' answers differ by up to"),
}


@pytest.mark.parametrize("fault", sorted(WRONG_EXPORTS))
def test_parity_finds_an_export_that_serves_something_else(fault, tmp_path):
    example, old, new, problem = WRONG_EXPORTS[fault]
    if fault == "input dtype changed":  # the features stay what the model reads
        new_features = "tf.cast(tf.compat.v1.expand_dims(tensor, -1), tf.float32)"
        wrong = _wrong(example, tmp_path, old, new)
        wrong.write_text(wrong.read_text().replace("tf.compat.v1.expand_dims(tensor, -1)", new_features))
    else:
        wrong = _wrong(example, tmp_path, old, new)
    proc, report = _parity(EXAMPLES / example / "train.py", wrong, tmp_path / "report.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert "MISMATCH: the exports differ" in proc.stdout and problem in proc.stdout, proc.stdout
    assert all(step["ok"] for step in report["step_comparisons"])  # training itself matched
    assert not all(export["ok"] for export in report["exports"])
