"""rewrites.tf_api: how TF2 spells a compat.v1 API so that it is the very same object.

The loader is checked on its own (no TensorFlow); the one test marked ``tensorflow``
checks the shipped table against the installed TensorFlow in a child process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rewrites import tf_api
from rewrites.tf_api import (
    EQUIVALENT_DATASETS,
    V1_ONLY_DATASET_MEMBERS,
    exists_in_tf2,
    is_v1_only,
    same_in_tf2,
    tf2_spelling,
)

ROOT = Path(__file__).resolve().parents[1]
TABLE = Path(tf_api.TABLE_FILE)


@pytest.mark.parametrize(
    "v1, tf2",
    [
        # Not tf.io.decode_csv: TF1's 5th positional argument is `name`, TF2's is `na_value`.
        ("decode_csv", "compat.v1.decode_csv"),
        ("io.decode_csv", "compat.v1.io.decode_csv"),
        ("decode_compressed", "io.decode_compressed"),
        ("logging.info", "compat.v1.logging.info"),
        ("logging.INFO", "compat.v1.logging.INFO"),
        # Not tf.constant: TF1's pads a short value to `shape` ([1, 2] with shape [4] is [1, 2, 2, 2]).
        ("constant", "compat.v1.constant"),
        ("float32", "float32"),
        ("newaxis", "newaxis"),
        ("layers.dense", "compat.v1.layers.dense"),
        ("train.AdamOptimizer", "compat.v1.train.AdamOptimizer"),
        ("train.Server", "distribute.Server"),
        ("train.ClusterSpec", "train.ClusterSpec"),
        # The same object is tf.estimator.SessionRunHook, but it is TensorFlow's own, tf.estimator is not.
        ("train.SessionRunHook", "compat.v1.train.SessionRunHook"),
        ("estimator.SessionRunHook", "estimator.SessionRunHook"),
        ("estimator.ModeKeys", "estimator.ModeKeys"),
        ("estimator.ModeKeys.TRAIN", "estimator.ModeKeys.TRAIN"),
        ("estimator.Estimator", "compat.v1.estimator.Estimator"),
        ("estimator.RunConfig", "estimator.RunConfig"),
        ("estimator.inputs.numpy_input_fn", "compat.v1.estimator.inputs.numpy_input_fn"),
        ("GraphKeys.TRAIN_OP", "compat.v1.GraphKeys.TRAIN_OP"),
        ("data.Dataset", "compat.v1.data.Dataset"),
        ("data.Dataset.from_tensor_slices", "compat.v1.data.Dataset.from_tensor_slices"),
        ("data.experimental.AUTOTUNE", "data.experimental.AUTOTUNE"),
        ("io.gfile.GFile", "io.gfile.GFile"),
        ("io.gfile.GFile.read", "io.gfile.GFile.read"),
        ("gfile.GFile", "io.gfile.GFile"),
        ("gfile.Open", "io.gfile.GFile"),
        ("gfile.Exists", "compat.v1.gfile.Exists"),
        ("nn.relu", "nn.relu"),
        ("nn.softmax_cross_entropy_with_logits_v2", "compat.v1.nn.softmax_cross_entropy_with_logits_v2"),
        ("random_normal", "random.normal"),
        ("string_to_hash_bucket_fast", "strings.to_hash_bucket_fast"),
        ("log", "math.log"),
        ("math.log", "math.log"),  # TF2's is the WeakTensor wrapper of this one ("~")
        ("manip.reshape", "reshape"),
        ("losses.mean_squared_error", "compat.v1.losses.mean_squared_error"),
        ("losses.Reduction.SUM", "compat.v1.losses.Reduction.SUM"),
        ("metrics.accuracy", "compat.v1.metrics.accuracy"),
        ("summary.scalar", "compat.v1.summary.scalar"),
        ("saved_model.tag_constants.SERVING", "saved_model.SERVING"),
        ("lite.constants.INT8", "int8"),
        ("keras.layers.Dense", "compat.v1.keras.layers.Dense"),
        ("raw_ops.MatMul", "raw_ops.MatMul"),
        ("contrib.layers.fully_connected", "compat.v1.contrib.layers.fully_connected"),  # unknown: kept
    ],
)
def test_tf2_spelling(v1, tf2):
    assert tf2_spelling(v1) == tf2


@pytest.mark.parametrize(
    "v1, tf2",
    [
        ("data.Dataset", "data.Dataset"),
        ("data.Dataset.from_tensor_slices", "data.Dataset.from_tensor_slices"),
        ("data.Dataset.range", "data.Dataset.range"),
        ("data.TextLineDataset", "data.TextLineDataset"),
        ("data.TFRecordDataset", "data.TFRecordDataset"),
        ("data.FixedLengthRecordDataset", "data.FixedLengthRecordDataset"),
        # TF1 only: the TF1 spelling whatever the caller chose.
        ("data.Dataset.make_one_shot_iterator", "compat.v1.data.Dataset.make_one_shot_iterator"),
        ("data.TextLineDataset.make_initializable_iterator",
         "compat.v1.data.TextLineDataset.make_initializable_iterator"),
        ("data.Dataset.output_shapes", "compat.v1.data.Dataset.output_shapes"),
        # Not one of EQUIVALENT_DATASETS, and not a dataset: unchanged by the option.
        ("data.Iterator", "compat.v1.data.Iterator"),
        ("data.DatasetSpec", "data.DatasetSpec"),
        ("nn.relu", "nn.relu"),
    ],
)
def test_tf2_spelling_with_datasets_v2(v1, tf2):
    assert tf2_spelling(v1, datasets_v2=True) == tf2


@pytest.mark.parametrize(
    "path, exists, v1_only",
    [
        ("io.decode_csv", True, False),
        ("decode_csv", False, True),
        ("decode_compressed", False, False),  # moved to tf.io
        ("io.gfile.GFile", True, False),
        ("gfile.Open", False, False),
        ("gfile", False, True),
        ("logging", False, True),
        ("logging.info", False, True),
        ("io", True, False),
        ("constant", True, False),
        ("losses.mean_squared_error", True, False),
        ("losses.Reduction.SUM_BY_NONZERO_WEIGHTS", False, True),
        ("metrics.accuracy", False, True),
        ("layers.dense", False, True),
        ("estimator.ModeKeys.TRAIN", True, False),
        ("data.Dataset.make_one_shot_iterator", False, True),
        ("data.Dataset.from_tensor_slices", True, False),
        ("optimizers", True, False),  # TF2 only
        ("contrib.layers.fully_connected", False, False),  # unknown
    ],
)
def test_exists_and_v1_only(path, exists, v1_only):
    assert (exists_in_tf2(path), is_v1_only(path)) == (exists, v1_only)


@pytest.mark.parametrize(
    "v1, same",
    [("nn.relu", True), ("math.log", True), ("estimator.ModeKeys.TRAIN", True), ("train.ClusterSpec", True),
     ("decode_compressed", False), ("constant", False), ("logging.info", False), ("train.Server", False),
     ("data.Dataset", False), ("keras.layers.Dense", False), ("contrib.layers.fully_connected", False)],
)
def test_same_in_tf2(v1, same):
    """A TF 1.x-era `import tensorflow as tf` module may keep `tf.<v1>` exactly when this says so."""
    assert same_in_tf2(v1) is same


def test_docstring_example_is_what_the_table_says():
    doc = tf_api.__doc__
    before = doc[doc.index("Before::"):doc.index("After::")].split("\n", 3)[3]  # past the import
    after = doc[doc.index("After::"):doc.index("With ``datasets_v2")].split("\n", 3)[3]
    names = re.compile(r"\btf\.([A-Za-z_][\w.]*[A-Za-z_0-9])")
    old, new = names.findall(before), names.findall(after)
    assert len(old) == len(new) > 10
    for v1, tf2 in zip(old, new):
        # The example writes `tf.X(...).batch`: a call ends the API path.
        assert tf2 == tf2_spelling(v1), v1


def _table_lines() -> list[list[str]]:
    return [line.split() for line in TABLE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]


def test_table_is_well_formed():
    rows = _table_lines()
    paths = [row[0] for row in rows]
    assert paths == sorted(set(paths))
    for row in rows:
        path, mark, *target = row
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", path), row
        assert mark in ("=", ">", "~", "!", "-", "+"), row
        assert len(target) in {">": (1,), "~": (0, 1), "!": (0, 1)}.get(mark, (0,)), row
        # Never a Keras namespace (Keras 3 from TF 2.16), never tf.estimator for TensorFlow's own API.
        if target:
            assert target[0].split(".")[0] not in {"keras", "losses", "metrics", "optimizers", "initializers"}, row
            assert target[0].split(".")[0] != "estimator" or path.startswith("estimator."), row


def test_table_matches_the_pinned_tensorflow():
    pin = re.search(r'"tensorflow-cpu==([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pin and tf_api.table_version() == pin.group(1), "regenerate: python -m rewrites.tf_api.generate"


def test_v1_only_dataset_members_are_marked_so_in_the_table():
    for cls in EQUIVALENT_DATASETS:
        for member in V1_ONLY_DATASET_MEMBERS:
            assert is_v1_only(f"{cls}.{member}"), (cls, member)


def test_loader_is_light():
    """On the path of every rewrite: it imports nothing (no TensorFlow) and reads the table once."""
    script = textwrap.dedent("""
        import sys, time
        import rewrites
        before = set(sys.modules)
        start = time.perf_counter()
        from rewrites import tf_api
        answer = tf_api.tf2_spelling("gfile.Open")
        elapsed = time.perf_counter() - start
        table = tf_api._load()
        tf_api.tf2_spelling("nn.relu")
        print(sorted(set(sys.modules) - before), answer, tf_api._load() is table, round(elapsed * 1000))
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    new_modules, answer, read_once, milliseconds = result.stdout.rsplit(" ", 3)
    assert new_modules == "['rewrites.tf_api']" and answer == "io.gfile.GFile" and read_once == "True"
    assert int(milliseconds) < 200  # about 2 ms without bytecode caches, well under 1 ms with them


# The check against TensorFlow, in a child process (TensorFlow stays out of the test process).
TF_CHECK = r"""
import json, os, sys, tempfile, types
from rewrites import tf_api
from rewrites.tf_api import generate

text, full, kept = generate.build()
import tensorflow as tf

report = {"installed": tf.version.VERSION, "stale": text != open(tf_api.TABLE_FILE, encoding="utf-8").read()}
MISSING = object()


def resolve(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, MISSING)
        if obj is MISSING:
            return MISSING
    return obj


# Every compat.v1 path walked (about 4000, a second): the listed ones and those their prefixes answer for.
paths = sorted(p for p, e in full.items() if e.kind != generate.TF2ONLY)
kinds = {}
problems = []
for path in paths:
    old = resolve(tf.compat.v1, path)
    spelled = tf_api.tf2_spelling(path)
    new = resolve(tf, spelled)
    kind = full[path].kind
    kinds[kind] = kinds.get(kind, 0) + 1
    if isinstance(old, types.ModuleType):  # a namespace: TF2's module of that name, or compat.v1's
        same = isinstance(new, types.ModuleType) and spelled in (path, "compat.v1." + path)
    elif isinstance(old, generate.PLAIN):
        same = type(new) is type(old) and new == old
    elif kind == generate.WRAPPED:
        same = getattr(new, "__wrapped__", MISSING) is old
    else:
        same = generate._same_member(old, new)
    if not same:
        problems.append(f"tf.{spelled} is not tf.compat.v1.{path} ({kind})")
    if kind in (generate.SAME, generate.MOVED) and spelled.startswith("compat.v1."):
        problems.append(f"{path}: same object in TF2, spelled {spelled}")
    if kind in (generate.DIFFERS, generate.V1ONLY) and spelled != "compat.v1." + path:
        problems.append(f"{path}: {kind} in TF2, spelled {spelled}")
    if tf_api.exists_in_tf2(path) != (resolve(tf, path) is not MISSING):
        problems.append(f"{path}: exists_in_tf2 says {tf_api.exists_in_tf2(path)}")
    if tf_api.is_v1_only(path) != (kind == generate.V1ONLY):
        problems.append(f"{path}: is_v1_only says {tf_api.is_v1_only(path)}, it is {kind}")
report["kinds"] = kinds
report["problems"] = problems

# EQUIVALENT_DATASETS: the TF1 class yields what the TF2 class does; the V1-only members are those.
report["v1_only_members"] = sorted(
    n for n in dir(tf.compat.v1.data.Dataset) if not n.startswith("_") and not hasattr(tf.data.Dataset, n))
with tempfile.TemporaryDirectory() as folder:
    lines = os.path.join(folder, "lines.txt")
    with open(lines, "w") as f:
        f.write("a,1\nb,2\nc,3\n")
    records = os.path.join(folder, "records.tfrecord")
    with tf.io.TFRecordWriter(records) as writer:
        for record in (b"x", b"yy", b"zzz"):
            writer.write(record)
    double = tf.autograph.experimental.do_not_convert(lambda x: x * 2)  # `python -c`: no source to convert
    inputs = {
        "data.Dataset": lambda cls: cls.from_tensor_slices(list(range(7))).map(double).batch(3),
        "data.TextLineDataset": lambda cls: cls(lines),
        "data.TFRecordDataset": lambda cls: cls(records),
        "data.FixedLengthRecordDataset": lambda cls: cls(lines, record_bytes=4),
    }
    report["datasets"] = {}
    for v1_path, tf2_path in tf_api.EQUIVALENT_DATASETS.items():
        old_class, new_class = resolve(tf.compat.v1, v1_path), resolve(tf, tf2_path)
        old = list(inputs[v1_path](old_class).as_numpy_iterator())
        new = list(inputs[v1_path](new_class).as_numpy_iterator())
        report["datasets"][v1_path] = [repr(old), repr(new), old_class is new_class]
print(json.dumps(report))
"""


@pytest.mark.tensorflow
@pytest.mark.skipif(not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator")),
                    reason="needs the parity extra (tensorflow, tensorflow-estimator)")
def test_table_against_tensorflow():
    result = subprocess.run([sys.executable, "-c", TF_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert not report["stale"], (
        f"{TABLE.name} differs from what TensorFlow {report['installed']} gives: "
        "regenerate it with `python -m rewrites.tf_api.generate`")
    assert report["problems"] == []
    assert sum(report["kinds"].values()) > 3000 and {"=", ">", "~", "!", "-"} <= set(report["kinds"])
    assert set(report["v1_only_members"]) == V1_ONLY_DATASET_MEMBERS
    for v1_path, (old, new, same_class) in report["datasets"].items():
        assert old == new and old != "[]" and not same_class, v1_path


@pytest.mark.parametrize("tf0, tf2", [("mul", "multiply"), ("sub", "subtract"), ("neg", "negative"),
                                      ("pack", "stack"), ("unpack", "unstack")])
def test_tensorflow_0_names_of_tf_1_ops_are_spelled_as_tf_1_named_them(tf0, tf2):
    # TF 0.12's names, gone from TF 1.0 on: tf.compat.v1.mul would raise.
    assert tf2_spelling(tf0) == tf2 and tf_api.known(tf0)


def test_a_top_level_name_neither_tf_1_nor_tf_2_has_is_unknown():
    assert not any(tf_api.known(name) for name in set(tf_api.TF0_RENAMED) - set(tf_api.TF0_SAME))
    assert tf_api.known("multiply") and tf_api.known("app.flags.FLAGS") and tf_api.known("__version__")
    assert tf_api.known("compat.as_bytes")


TF0_CHECK = """
import json
import tensorflow as tf
from rewrites import tf_api
v1 = tf.compat.v1
public = lambda module: {name for name in dir(module) if not name.startswith("_")}
print(json.dumps({
    "unknown": sorted(name for name in public(v1) | public(tf) if not tf_api.known(name)),
    "in_v1": sorted(name for name in tf_api.TF0_RENAMED if hasattr(v1, name)),
    "not_same": sorted(old for old, new in tf_api.TF0_SAME.items() if getattr(v1, new) is not getattr(tf, new)),
}))
"""


@pytest.mark.tensorflow
def test_tensorflow_0_names_are_none_of_tf_2_s_and_every_top_level_name_is_known():
    result = subprocess.run([sys.executable, "-c", TF0_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"unknown": [], "in_v1": [], "not_same": []}, report
