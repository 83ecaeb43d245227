"""Proof per column type: TF1's input_layer and the Keras code tf-migrate writes for the same feature columns give,
on the same batch of raw features, exactly the same numbers. The Keras side is the real thing: a canned
DNNClassifier program on the columns is migrated, its build function run, and the model cut before its first
hidden layer; embedding tables are copied from TF1's variables, as parity does."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from test_estimator_programs import run_one

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tf_keras")):
    pytest.skip("needs the parity extra (tensorflow, tf_keras)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

WORDS = np.array([["a"], ["b"], ["zz"], [""], ["c"], ["a"]])             # out of vocabulary, empty
PAIRS = np.array([["a", "b"], ["zz", ""], ["", ""], ["c", "c"], ["b", "a"], ["a", ""]])  # multi-valued, empty rows
AGES = np.array([[17.0], [18.0], [24.9], [25.0], [65.0], [-3.0]], np.float32)  # on and between boundaries
# Weighted columns: TF1 fails unless every weight has its id (no missing values); weights of 0 or less dropped by
# embeddings but for combiner="sum", not by indicators.
WEIGHTED_WORDS = np.array([["a", "b"], ["zz", "c"], ["a", "a"], ["c", "c"], ["b", "a"], ["a", "zz"]])
WEIGHTED_IDS = np.array([[0], [3], [1], [2], [2], [3]], np.int64)
WEIGHTS = np.array([[0.5, 2.0], [1.5, 3.0], [1.0, 1.0], [-1.0, 0.25], [2.0, 2.0], [0.75, 4.0]], np.float32)
IDS = np.array([[0], [3], [1], [-1], [2], [3]], np.int64)                  # -1: missing

CASES = {
    "numeric": ("[fc.numeric_column('age')]", {"age": AGES}),
    "numeric, normalized": ("[fc.numeric_column('age', normalizer_fn=lambda x: (x - 40.0) / 12.5)]", {"age": AGES}),
    "integer numeric, normalized": ("[fc.numeric_column('i', normalizer_fn=lambda value: -value ** 2 + 2 * value)]",
                                    {"i": IDS}),
    "bucketized, normalized": ("[fc.bucketized_column(fc.numeric_column('age', normalizer_fn=lambda x: x / 10),"
                               " [1.8, 2.5])]", {"age": AGES}),
    "bucketized": ("[fc.bucketized_column(fc.numeric_column('age'), [18.0, 25.0, 65.0])]", {"age": AGES}),
    "vocabulary list": ("[fc.indicator_column(fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c']))]",
                        {"w": WORDS}),
    "vocabulary list, oov buckets": (
        "[fc.indicator_column(fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c'], num_oov_buckets=2))]",
        {"w": WORDS}),
    "vocabulary list, multi-valued": (
        "[fc.indicator_column(fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c'], num_oov_buckets=1))]",
        {"w": PAIRS}),
    "integer vocabulary list": (
        "[fc.indicator_column(fc.categorical_column_with_vocabulary_list('i', [3, 1, 7], dtype=tf.int64))]",
        {"i": IDS}),
    "vocabulary file": (
        "[fc.indicator_column(fc.categorical_column_with_vocabulary_file('w', VOCABULARY_FILE))]", {"w": WORDS}),
    "vocabulary file, oov buckets, multi-valued": (
        "[fc.indicator_column(fc.categorical_column_with_vocabulary_file('w', VOCABULARY_FILE, num_oov_buckets=2))]",
        {"w": PAIRS}),
    "hash bucket": ("[fc.indicator_column(fc.categorical_column_with_hash_bucket('w', 5))]", {"w": WORDS}),
    "hash bucket, multi-valued": ("[fc.indicator_column(fc.categorical_column_with_hash_bucket('w', 7))]",
                                  {"w": PAIRS}),
    "integer hash bucket": ("[fc.indicator_column(fc.categorical_column_with_hash_bucket('i', 5, dtype=tf.int64))]",
                            {"i": IDS}),
    "identity": ("[fc.indicator_column(fc.categorical_column_with_identity('i', 4))]", {"i": IDS}),
    "crossed": ("[fc.indicator_column(fc.crossed_column([fc.bucketized_column(fc.numeric_column('age'), [18.0, 25.0]),"
                " 'w'], 11))]", {"age": AGES, "w": WORDS}),
    "crossed, categorical columns, missing and out-of-vocabulary values": (
        "[fc.indicator_column(fc.crossed_column([fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c']),"
        " fc.categorical_column_with_identity('i', 4), fc.bucketized_column(fc.numeric_column('age'), [18.0])], 13))]",
        {"w": WORDS, "i": IDS[::-1], "age": AGES}),
    "crossed, oov buckets, a crossed column in it": (
        "[fc.embedding_column(fc.crossed_column([fc.crossed_column([fc.categorical_column_with_vocabulary_list("
        "'w', ['a', 'b'], num_oov_buckets=2), 'v'], 3), 'i'], 17), 2)]",
        {"w": WORDS, "v": WORDS[::-1], "i": IDS}),
    "crossed, integer vocabulary and vocabulary file": (
        "[fc.indicator_column(fc.crossed_column([fc.categorical_column_with_vocabulary_list('i', [3, 1, 7], "
        "dtype=tf.int64), fc.categorical_column_with_vocabulary_file('w', VOCABULARY_FILE)], 7))]",
        {"w": WORDS, "i": IDS}),
    "embedding, mean": ("[fc.embedding_column(fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c']), 3)]",
                        {"w": PAIRS}),
    "embedding, sqrtn": ("[fc.embedding_column(fc.categorical_column_with_hash_bucket('w', 6), 2, combiner='sqrtn')]",
                         {"w": PAIRS}),
    "embedding, sum": ("[fc.embedding_column(fc.categorical_column_with_identity('i', 4), 2, combiner='sum')]",
                       {"i": IDS}),
    "weighted vocabulary list": (
        "[fc.indicator_column(fc.weighted_categorical_column("
        "fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c']), 'weight'))]",
        {"w": WEIGHTED_WORDS, "weight": WEIGHTS}),
    "weighted vocabulary list, oov buckets, embedding": (
        "[fc.embedding_column(fc.weighted_categorical_column("
        "fc.categorical_column_with_vocabulary_list('w', ['a', 'b'], num_oov_buckets=2), 'weight'), 2)]",
        {"w": WEIGHTED_WORDS, "weight": WEIGHTS}),
    "weighted identity, embedding summed": (
        "[fc.embedding_column(fc.weighted_categorical_column(fc.categorical_column_with_identity('i', 4), 'weight'),"
        " 3, combiner='sum')]", {"i": WEIGHTED_IDS, "weight": WEIGHTS[:, :1]}),
    "weighted identity, embedding averaged": (
        "[fc.embedding_column(fc.weighted_categorical_column(fc.categorical_column_with_identity('i', 4), 'weight'),"
        " 3)]", {"i": WEIGHTED_IDS, "weight": WEIGHTS[:, :1]}),
    "weighted hash bucket": (
        "[fc.indicator_column(fc.weighted_categorical_column(fc.categorical_column_with_hash_bucket('w', 5), "
        "'weight'))]", {"w": WEIGHTED_WORDS, "weight": WEIGHTS}),
    "shared embeddings": (
        "[*fc.shared_embedding_columns([fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c']),"
        " fc.categorical_column_with_vocabulary_list('v', ['c', 'zz', 'a'])], 3)]", {"w": PAIRS, "v": WORDS}),
    "shared embeddings, sqrtn, beside others": (
        "fc.shared_embedding_columns([fc.categorical_column_with_identity('j', 4),"
        " fc.categorical_column_with_identity('i', 4)], 2, combiner='sqrtn') + [fc.numeric_column('age')]",
        {"j": IDS[::-1], "i": IDS, "age": AGES}),
    "several, sorted by name": (
        "[fc.numeric_column('age'), fc.indicator_column(fc.categorical_column_with_vocabulary_list('w', ['b', 'a'])),"
        " fc.embedding_column(fc.categorical_column_with_identity('i', 4), 2),"
        " fc.bucketized_column(fc.numeric_column('age'), [20.0])]", {"age": AGES, "w": WORDS, "i": IDS}),
}

PROGRAM = """
import tensorflow.compat.v1 as tf
from tensorflow.compat.v1 import feature_column as fc


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({features}, [0] * {rows})).repeat().batch({rows})


def main(_):
    columns = {columns}
    classifier = tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=columns, n_classes=3)
    classifier.train(input_fn=input_fn, max_steps=1)
"""


def tf1_input_layer(columns_code: str, features: dict) -> tuple[np.ndarray, dict]:
    """TF1's input_layer on the batch, and the values of the embedding tables it made (by column name)."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        namespace = {"tf": tf.compat.v1, "fc": tf.compat.v1.feature_column}
        columns = eval(columns_code, namespace)
        output = tf.compat.v1.feature_column.input_layer({k: tf.constant(v) for k, v in features.items()}, columns)
        tables = {v.name.split("/")[-2]: v for v in tf.compat.v1.global_variables() if "embedding_weights" in v.name}
        with tf.compat.v1.Session() as session:
            session.run([tf.compat.v1.global_variables_initializer(), tf.compat.v1.tables_initializer()])
            return session.run(output), session.run(tables)


def keras_input_layer(columns_code: str, features: dict, tables: dict) -> tuple[np.ndarray, str]:
    """The migrated program's model on the batch, up to its first hidden layer; and the build function."""
    import tensorflow as tf

    literal = "{" + ", ".join(f"{key!r}: {value.tolist()!r}" for key, value in features.items()) + "}"
    result = run_one(PROGRAM.format(features=literal, rows=len(next(iter(features.values()))), columns=columns_code))
    assert any(f.rule == "TFM309" for f in result.findings), result.findings
    code = result.source
    build = code[code.index("def build_dnn_classifier_model"):code.index("def strategy_for_this_task")]
    namespace: dict = {}
    exec("import math\nimport tensorflow as tf\nimport tf_keras as keras\n\n" + build, namespace)
    spec = tf.data.Dataset.from_tensor_slices(features).batch(2).element_spec
    model = namespace["build_dnn_classifier_model"](spec)
    for name, table in tables.items():
        model.get_layer(name).set_weights([table])
    cut = namespace["keras"].Model(model.inputs, model.get_layer("dnn/hiddenlayer_0").input)
    return cut({key: tf.constant(value) for key, value in features.items()}).numpy(), build


@pytest.mark.parametrize("case", CASES)
def test_keras_code_gives_what_input_layer_gave(case, tmp_path):
    columns, features = CASES[case]
    vocabulary = tmp_path / "vocabulary.txt"
    vocabulary.write_text("c\na\nb\n")
    columns = columns.replace("VOCABULARY_FILE", repr(str(vocabulary)))
    expected, tables = tf1_input_layer(columns, features)
    actual, build = keras_input_layer(columns, features, tables)
    assert actual.shape == expected.shape, build
    # Weighted means add floats in another order than TF1's lookup: equal up to float32 rounding.
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7, err_msg=build)


# -- linear_model: the sparse columns as a linear estimator weighs them ----------------------------------------------

LINEAR_CASES = {
    "numeric and bucketized": ("[fc.numeric_column('age'), fc.bucketized_column(fc.numeric_column('age'), "
                               "[18.0, 25.0, 65.0])]", {"age": AGES}, "sum"),
    "vocabulary list, oov buckets": (
        "[fc.categorical_column_with_vocabulary_list('w', ['a', 'b', 'c'], num_oov_buckets=2)]", {"w": PAIRS}, "sum"),
    "hash bucket, mean": ("[fc.categorical_column_with_hash_bucket('w', 5)]", {"w": PAIRS}, "mean"),
    "identity, sqrtn": ("[fc.categorical_column_with_identity('i', 4)]", {"i": IDS}, "sqrtn"),
    "crossed": ("[fc.crossed_column([fc.bucketized_column(fc.numeric_column('age'), [18.0, 25.0]), 'w'], 11)]",
                {"age": AGES, "w": WORDS}, "sum"),
    "crossed, categorical columns": (
        "[fc.crossed_column([fc.categorical_column_with_vocabulary_list('w', ['a', 'b']), "
        "fc.categorical_column_with_identity('i', 4)], 9)]", {"w": WORDS, "i": IDS[::-1]}, "mean"),
    "weighted, mean": ("[fc.weighted_categorical_column(fc.categorical_column_with_vocabulary_list('w', ['a', 'c']),"
                       " 'weight')]", {"w": WEIGHTED_WORDS, "weight": WEIGHTS}, "mean"),
    "indicator and several, sorted by name": (
        "[fc.indicator_column(fc.categorical_column_with_identity('i', 4)), fc.numeric_column('age'),"
        " fc.categorical_column_with_vocabulary_list('w', ['b', 'a'])]", {"age": AGES, "w": WORDS, "i": IDS}, "sum"),
}


def tf1_linear_model(columns_code: str, features: dict, combiner: str) -> tuple[np.ndarray, dict]:
    """TF1's linear_model (3 units) on the batch, its weights set to random values; and those values."""
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        columns = eval(columns_code, {"tf": tf.compat.v1, "fc": tf.compat.v1.feature_column})
        output = tf.compat.v1.feature_column.linear_model(
            {k: tf.constant(v) for k, v in features.items()}, columns, units=3, sparse_combiner=combiner)
        rng = np.random.RandomState(0)
        variables = {v.name.split(":")[0].split("/")[1]: v for v in tf.compat.v1.global_variables()}
        values = {name: rng.normal(size=v.shape.as_list()).astype(np.float32) for name, v in variables.items()}
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.tables_initializer())
            for name, variable in variables.items():
                variable.load(values[name], session)
            return session.run(output), values


@pytest.mark.parametrize("case", LINEAR_CASES)
def test_keras_code_gives_what_linear_model_gave(case):
    import tensorflow as tf

    columns, features, combiner = LINEAR_CASES[case]
    expected, weights = tf1_linear_model(columns, features, combiner)
    literal = "{" + ", ".join(f"{key!r}: {value.tolist()!r}" for key, value in features.items()) + "}"
    program = PROGRAM.format(features=literal, rows=len(next(iter(features.values()))), columns=columns).replace(
        "tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=columns, n_classes=3)",
        f'tf.estimator.LinearClassifier(feature_columns=columns, n_classes=3, sparse_combiner="{combiner}")')
    code = run_one(program).source
    build = code[code.index("def build_linear_classifier_model"):code.index("def strategy_for_this_task")]
    namespace: dict = {}
    exec("import tensorflow as tf\nimport tf_keras as keras\n\n" + build, namespace)
    model = namespace["build_linear_classifier_model"](tf.data.Dataset.from_tensor_slices(features).batch(2).element_spec)
    layers = [layer for layer in model.layers if layer.name.endswith("_weights")]
    for layer in layers:
        kernel = weights[layer.name[:-len("_weights")]]
        layer.set_weights([kernel, weights["bias_weights"]] if layer.use_bias else [kernel])
    assert layers[-1].use_bias and not any(layer.use_bias for layer in layers[:-1]), build
    actual = model({key: tf.constant(value) for key, value in features.items()}).numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6, err_msg=build)
