"""TFM306-307: numpy_input_fn / pandas_input_fn -> tf.data input functions with the same batches."""

from __future__ import annotations

import importlib.util

import pytest
from helpers import check_noop, check_transformed, run

DATASET = "tf.data.Dataset.from_tensor_slices"


@pytest.mark.parametrize("tf1, dataset, rule", [
    ("numpy_input_fn(x, y, shuffle=False)", f"{DATASET}((x, y)).batch(128)", "TFM306"),
    ("numpy_input_fn({'a': a}, y, batch_size=4, num_epochs=None, shuffle=False)",
     f"{DATASET}(({{'a': a}}, y)).repeat().batch(4)", "TFM306"),
    ("numpy_input_fn(x=x, batch_size=8, num_epochs=3, shuffle=False)", f"{DATASET}(x).repeat(3).batch(8)", "TFM306"),
    ("numpy_input_fn(x, y, 8, None, True, queue_capacity=64)", f"{DATASET}((x, y)).shuffle(64).repeat().batch(8)",
     "TFM307"),
    ("numpy_input_fn(x, None, 2, shuffle=False)",
     f"{DATASET}(x).batch(2)", "TFM306"),
    ("pandas_input_fn(frame, frame['label'], batch_size=4, shuffle=False)",
     f"{DATASET}((dict(frame), frame['label'])).batch(4)", "TFM306"),
    ("pandas_input_fn(frame, labels['y'], num_epochs=None, shuffle=True)",
     f"{DATASET}((dict(frame), labels['y'])).shuffle(1000).repeat().batch(128)", "TFM307"),
    ("pandas_input_fn(frame, shuffle=False)", f"{DATASET}(dict(frame)).batch(128)", "TFM306"),
    ("pandas_input_fn(x=frame, y=None, shuffle=False)", f"{DATASET}(dict(frame)).batch(128)", "TFM306"),
    ("numpy_input_fn(x, y, shuffle=args.shuffle, num_epochs=epochs)",
     f"{DATASET}((x, y)).shuffle(1000 if args.shuffle else 1).repeat(epochs).batch(128)", "TFM307"),
], ids=["arrays", "dict, forever", "features only, 3 epochs", "shuffled", "y None", "pandas label column",
        "pandas other frame's column", "pandas features only", "pandas y None", "shuffle and epochs by name"])
def test_module_level_input_fn_becomes_a_function_returning_a_dataset(tf1, dataset, rule):
    check_transformed(
        f"import tensorflow as tf\n\ntrain_input_fn = tf.compat.v1.estimator.inputs.{tf1}\nrun(train_input_fn)\n",
        f"import tensorflow as tf\n\n\ndef train_input_fn():\n    return {dataset}\n\n\nrun(train_input_fn)\n",
        findings=(rule,))


@pytest.mark.parametrize("imports, spelling", [
    ("import tensorflow.compat.v1 as tf1\n", "tf1.estimator.inputs.numpy_input_fn"),
    ("import tensorflow as tf\n", "tf.estimator.inputs.numpy_input_fn"),
    ("from tensorflow.compat.v1.estimator.inputs import numpy_input_fn\n", "numpy_input_fn"),
    ("from tensorflow_estimator.python.estimator.inputs import numpy_io\n", "numpy_io.numpy_input_fn"),
    ("import tensorflow_estimator as tfe\n", "tfe.estimator.inputs.numpy_input_fn"),
], ids=["tf1 alias", "tf", "from import", "tensorflow_estimator internals", "tensorflow_estimator"])
def test_every_import_spelling_and_inline_input_fns_become_lambdas(imports, spelling):
    result = run(f"{imports}\nestimator.train(input_fn={spelling}(x, y, shuffle=False), steps=5)\n")
    assert f"estimator.train(input_fn=lambda: {DATASET}((x, y)).batch(128), steps=5)" in result.source
    assert [f.rule for f in result.findings] == ["TFM306"]


@pytest.mark.parametrize("source, where", [
    ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(x, y, shuffle=mode == TRAIN)\n", "shuffle is neither"),
    ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(x, y)\n", "shuffle is neither"),
    ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(x, y, shuffle=1)\n", "shuffle is neither"),
    ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(x, y, shuffle='True')\n", "shuffle is neither"),
    ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(**kwargs)\n", "cannot be read statically"),
    ("f = tf.compat.v1.estimator.inputs.pandas_input_fn(frame, labels, shuffle=False)\n", "not visibly one column"),
    ("f = tf.compat.v1.estimator.inputs.pandas_input_fn(frame, frame[['y', 'z']], shuffle=False)\n",
     "not visibly one column"),
    ("f = lambda: tf.compat.v1.estimator.inputs.numpy_input_fn(np.random.rand(5), shuffle=False)\n",
     "computed, once in TF1"),
    ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(load(), batch_size=size(), shuffle=False)\n",
     "beside other computed arguments"),
    ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(load(), shuffle=False) if train else None\n",
     "not where it can be bound"),
    ("f = tf.compat.v1.estimator.inputs.pandas_input_fn(frame, frame['y'], shuffle=False, target_column='t')\n",
     "target_column"),
], ids=["shuffle computed", "shuffle missing", "shuffle a number", "shuffle a string", "kwargs", "pandas y a frame?",
        "pandas y columns", "computed in a lambda", "computed batch size too", "made in a condition", "target_column"])
def test_input_fns_that_cannot_be_read_stay_manual(source, where):
    source = "import tensorflow as tf\n" + source
    result = run(source)
    assert result.source == source
    (finding,) = result.findings
    assert finding.rule == "TFM308" and where in finding.message


PANDAS_LABEL = "f = tf.compat.v1.estimator.inputs.pandas_input_fn(frame, frame[LABEL], shuffle=False)\n"


@pytest.mark.parametrize("constants", [
    'LABEL = "species"\n',
    'COLUMNS = ["species", "width"]\nLABEL = COLUMNS[0]\n',
    'COLUMNS = ("width", "species")\nLABEL = COLUMNS[-1]\n',
], ids=["a string", "a list's first", "a tuple's last"])
def test_a_pandas_label_named_by_a_module_string_is_one_column(constants):
    result = run("import tensorflow as tf\n" + constants + PANDAS_LABEL)
    assert f"{DATASET}((dict(frame), frame[LABEL])).batch(128)" in result.source
    assert [f.rule for f in result.findings] == ["TFM306"]


@pytest.mark.parametrize("constants", [
    'LABEL = ["species"]\n',
    'LABEL = "species"\nLABEL = "width"\n',
    'COLUMNS = ["species", "width"]\nCOLUMNS.reverse()\nLABEL = COLUMNS[0]\n',
    'COLUMNS = ["species", "width"]\nCOLUMNS[0] = ["a", "b"]\nLABEL = COLUMNS[0]\n',
    'COLUMNS = ["species"]\nLABEL = COLUMNS[1]\n',
    'LABEL = "species"\ndef f(LABEL):\n    pass\n',
    'LABEL = "species"\nfor LABEL in ("a", "b"):\n    pass\n',
], ids=["a list of one", "bound twice", "list changed by a method", "list item replaced", "index out of range",
        "a parameter's name", "a loop's"])
def test_a_pandas_label_that_may_not_be_a_string_stays_manual(constants):
    source = "import tensorflow as tf\n" + constants + PANDAS_LABEL
    result = run(source)
    assert result.source == source
    assert [f.rule for f in result.findings] == ["TFM308"] and "not visibly one column" in result.findings[0].message


COMPUTED = {
    "module level": ("f = tf.compat.v1.estimator.inputs.numpy_input_fn(np.random.rand(5), shuffle=False)\n",
                     f"features = np.random.rand(5)\n\n\ndef f():\n    return {DATASET}(features).batch(128)\n"),
    "a factory's": ("def make(frame):\n    return tf.compat.v1.estimator.inputs.pandas_input_fn(\n"
                    "        frame, frame.pop('y') / SCALE, shuffle=False)\n",
                    "def make(frame):\n    labels = frame.pop('y') / SCALE\n"
                    f"    return lambda: {DATASET}((dict(frame), labels)).batch(128)\n"),
    "inline, names taken": ("features = 1\nfor step in range(3):\n    estimator.train(input_fn=tf.compat.v1."
                            "estimator.inputs.numpy_input_fn(load(step), y.astype(int), shuffle=False), steps=5)\n",
                            "features = 1\nfor step in range(3):\n    features_1 = load(step)\n"
                            "    labels = y.astype(int)\n    estimator.train(input_fn=lambda: "
                            f"{DATASET}((features_1, labels)).batch(128), steps=5)\n"),
}


COMPUTED["beside a batch size of len(frame)"] = (
    "f = tf.compat.v1.estimator.inputs.pandas_input_fn(x=frame[list(cols)], y=frame['y'] / SCALE, num_epochs=1,\n"
    "    batch_size=len(frame), shuffle=False)\n",
    "features = frame[list(cols)]\nlabels = frame['y'] / SCALE\n\n\ndef f():\n"
    f"    return {DATASET}((dict(features), labels)).batch(len(frame))\n")


COMPUTED["an imported name not shadowed"] = (
    "from data import features\nf = tf.compat.v1.estimator.inputs.numpy_input_fn(features(), shuffle=False)\n",
    "from data import features\nfeatures_1 = features()\n\n\ndef f():\n"
    f"    return {DATASET}(features_1).batch(128)\n")


@pytest.mark.parametrize("source, migrated", COMPUTED.values(), ids=COMPUTED.keys())
def test_what_x_and_y_compute_is_bound_to_names_before_the_statement_once_as_tf1_computed_it(source, migrated):
    result = run("import tensorflow as tf\n" + source)
    assert result.source == "import tensorflow as tf\n" + migrated
    assert [f.rule for f in result.findings] == ["TFM306"]


def test_noop():
    check_noop("import tensorflow as tf\nds = tf.data.Dataset.from_tensor_slices(x)\nnumpy_input_fn = 3\n")


# -- the same batches, in TensorFlow ------------------------------------------------------------------


needs_tensorflow = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator")),
    reason="needs the parity extra (tensorflow, tensorflow-estimator)")


def assert_same_batches(function: str, arguments: str, names, count: int) -> None:
    """`input_fn = FUNCTION(ARGUMENTS)`: the first ``count`` batches of TF1's queue and of the migrated tf.data input
    are equal. ``names()``: a fresh namespace of the arguments' names for each side."""
    import numpy as np
    import tensorflow as tf

    program = f"import tensorflow as tf\n\ninput_fn = tf.compat.v1.estimator.inputs.{function}({arguments})\n"
    scope = names()
    exec(run(program).source, scope)
    migrated = list(scope["input_fn"]().take(count).as_numpy_iterator())
    scope = names()
    exec(program, scope)
    with tf.Graph().as_default():
        tensors = scope["input_fn"]()
        with tf.compat.v1.train.MonitoredSession() as session:
            original = [session.run(tensors) for _ in range(count)]
    assert len(migrated) == len(original) == count
    for new, old in zip(migrated, original):
        tf.nest.map_structure(np.testing.assert_array_equal, old, new)


@pytest.mark.tensorflow
@needs_tensorflow
@pytest.mark.parametrize("arguments, count", [
    ("x, y, batch_size=2, shuffle=False", 3),                   # 2 + 2 + 1
    ("x, y, batch_size=3, num_epochs=2, shuffle=False", 4),     # across the end of a pass: 3 + 3 + 3 + 1
    ("{'a': x, 'b': z}, {'t': y}, batch_size=2, num_epochs=None, shuffle=False", 6),
    ("x, batch_size=4, num_epochs=None, shuffle=False", 4),
    ("x, y, batch_size=2, num_epochs=epochs, shuffle=shuffle", 6),  # both False: TF1's order, by a buffer of one
], ids=["one pass", "two passes", "dicts, forever", "features only", "shuffle and epochs by name"])
def test_rewritten_input_fn_yields_the_batches_of_numpy_input_fn(arguments, count):
    import numpy as np

    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    assert_same_batches("numpy_input_fn", arguments,
                        lambda: {"x": x, "y": np.arange(5), "z": x * 2, "shuffle": False, "epochs": None}, count)


@pytest.mark.tensorflow
@needs_tensorflow
@pytest.mark.parametrize("arguments, count", [
    ("frame, frame['label'], batch_size=2, shuffle=False", 3),
    ("frame, batch_size=3, num_epochs=2, shuffle=False", 4),
], ids=["label column", "features only, two passes"])
def test_rewritten_input_fn_yields_the_batches_of_pandas_input_fn(arguments, count):
    import numpy as np
    import pandas as pd

    def frame():  # pandas_input_fn ignores the index: rows in order
        return {"frame": pd.DataFrame({"a": np.arange(5, dtype=np.float32), "b": np.arange(5, 10),
                                       "label": np.arange(5) % 2}, index=[10, 3, 7, 1, 5])}

    assert_same_batches("pandas_input_fn", arguments, frame, count)
