"""TFM309: canned DNN estimators -> the Keras model of the same layers, with the defaults of their version, in the
program shapes of the Estimator work (main() under tf.app.run, build_estimator in another module, flags)."""

from __future__ import annotations

import re
from pathlib import Path
from textwrap import dedent

import pytest
from helpers import ALL_RULES, tf1_and_migrated_evaluations
from test_estimator_programs import run_one, run_tree

import rewrites.estimator.canned

PROGRAMS = Path(__file__).parent / "parity_programs"
INPUT_FN = '''
def train_input_fn():
  features = {"x": [[1.0], [2.0]], "y": [[0.5], [0.0]]}
  return tf.data.Dataset.from_tensor_slices((features, [0, 2])).repeat().batch(2)
'''
FLAGS = '''
tf.app.flags.DEFINE_integer("train_steps", 1000, "steps to train")
FLAGS = tf.app.flags.FLAGS
'''


def test_docstring_example_is_what_the_rewrite_does():
    """canned.py's Before, completed where it elides (flags, the input function), migrates to its After but for
    the lines the After elides."""
    doc = rewrites.estimator.canned.__doc__
    before = dedent(doc[doc.index("Before::\n") + len("Before::\n"):doc.index("After::")])
    after = dedent(doc[doc.index("After::\n") + len("After::\n"):])
    imports, body = before.split("\n\n", 1)
    code = run_one(f"{imports}\n{FLAGS}\n{INPUT_FN}\n\n{body}").source
    for part in re.split(r"^ *\.\.\..*\n", after, flags=re.MULTILINE):
        for piece in filter(None, (piece.strip("\n") for piece in part.split("\n\n"))):
            assert piece in code, piece
            code = code[code.index(piece) + len(piece):]


# The premade-estimator shape: columns appended in a loop over the data's keys, at run time.
PREMADE = """
import argparse

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", default=100, type=int)
parser.add_argument("--train_steps", default=1000, type=int)


def train_input_fn(features, labels, batch_size):
    return tf.data.Dataset.from_tensor_slices((dict(features), labels)).shuffle(1000).repeat().batch(batch_size)


def main(argv):
    args = parser.parse_args(argv[1:])
    train_x, train_y = {"a": [1.0, 2.0], "b": [0.0, 1.0]}, [0, 2]
    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))
    classifier = tf.estimator.DNNClassifier(
        feature_columns=my_feature_columns,
        hidden_units=[10, 10],
        n_classes=3)
    classifier.train(input_fn=lambda: train_input_fn(train_x, train_y, args.batch_size), steps=args.train_steps)


if __name__ == "__main__":
    tf.compat.v1.app.run(main)
"""


def findings(result, rule):
    return [f.message for f in result.findings if f.rule == rule]


def test_columns_made_at_run_time_are_given_to_the_build_function_and_v2_trains_as_v2():
    result = run_one(PREMADE)
    code = result.source
    for line in (
        "def build_dnn_classifier_model(input_spec, feature_columns):\n",
        "        for column in sorted(feature_columns, key=lambda column: column.name)])\n",
        '    net = keras.layers.Dense(units=10, activation="relu", name="dnn/hiddenlayer_1")(net)\n',
        "    optimizer = keras.optimizers.legacy.Adagrad()\n",
        "        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),\n",
        "        model = build_dnn_classifier_model(dataset.element_spec[0], feature_columns=my_feature_columns)\n",
        "    model.fit(dataset, epochs=1, steps_per_epoch=args.train_steps, verbose=2)\n",
    ):
        assert line in code, line
    assert "DNNClassifier(" not in code
    (note,) = findings(result, "TFM309")
    assert "trained as v2" in note and "Adagrad at 0.001, the loss averaged over the batch" in note
    assert "spell it tf.compat.v1.estimator.DNNClassifier" in note


@pytest.mark.parametrize("spelling", [
    "import tensorflow.compat.v1 as tf\n",
    "import tensorflow as tf\ntf = tf.compat.v1\n",
    "from tensorflow.compat import v1 as tf\n",
])
def test_a_module_whose_tf_is_compat_v1_means_v1(spelling):
    result = run_one(PREMADE.replace("import tensorflow as tf\n", spelling).replace("tf.compat.v1.app.run", "tf.app.run"))
    code = result.source
    assert "import tensorflow as tf\n" in code and "compat.v1 as tf" not in code
    assert ("    optimizer = keras.optimizers.legacy.Adagrad(\n"
            "        learning_rate=0.05, initial_accumulator_value=0.1, epsilon=1e-30)\n") in code
    assert 'SparseCategoricalCrossentropy(from_logits=True, reduction="sum")' in code
    (note,) = findings(result, "TFM309")
    assert "trained as v1 (tf.compat.v1.estimator.DNNClassifier): Adagrad at 0.05, the loss summed" in note


@pytest.mark.parametrize("ending, version", [
    ("tf.compat.v1.app.run(main)", "v2"),  # TF 2's own way to reach compat.v1
    ("tf.logging.set_verbosity(tf.logging.INFO)\n    tf.app.run(main)", "v1"),  # ran on TF 1.x
], ids=["tf.compat.v1 spelled out", "TF 1.x plain tf"])
def test_plain_tf_reaching_tf1_only_apis_means_the_program_ran_on_tf1_and_had_v1(ending, version):
    source = PREMADE.replace("tf.compat.v1.app.run(main)", ending)
    assert source != PREMADE or version == "v2"
    (note,) = findings(run_one(source), "TFM309")
    if version == "v1":
        assert ("trained as v1 (tf.estimator.DNNClassifier of TF 1.x: this module's plain `tf` reaches APIs TF 2 has "
                "only in tf.compat.v1, so the program ran on TF 1.x): Adagrad at 0.05, the loss summed") in note, note
    else:
        assert "trained as v2 (tf.estimator.DNNClassifier of TF 2;" in note, note


@pytest.mark.parametrize("arguments, expected", [
    ('optimizer="Adam"', ["optimizer = keras.optimizers.legacy.Adam()\n"]),
    ("loss_reduction=tf.losses.Reduction.SUM", ['SparseCategoricalCrossentropy(from_logits=True, reduction="sum")']),
    ("activation_fn=tf.nn.tanh, dropout=0.25", ['activation="tanh", name="dnn/hiddenlayer_0"',
                                               "net = keras.layers.Dropout(rate=0.25)(net)\n"]),
], ids=["optimizer name", "loss reduction", "activation and dropout"])
def test_the_estimators_arguments(arguments, expected):
    code = run_one(PREMADE.replace("n_classes=3)", f"n_classes=3, {arguments})")).source
    for piece in expected:
        assert piece in code, piece


def test_a_v1_tf1_optimizer_object_of_numbers():
    source = PREMADE.replace("import tensorflow as tf\n", "import tensorflow.compat.v1 as tf\n").replace(
        "n_classes=3)", "n_classes=3, optimizer=tf.train.GradientDescentOptimizer(learning_rate=0.1))")
    assert "optimizer = keras.optimizers.legacy.SGD(learning_rate=0.1)" in run_one(source).source


def test_a_v1_tf1_optimizer_of_arguments_known_at_run_time_gets_them_from_the_driver():
    source = PREMADE.replace("import tensorflow as tf\n", "import tensorflow.compat.v1 as tf\n").replace(
        'parser.add_argument("--train_steps", default=1000, type=int)\n',
        'parser.add_argument("--train_steps", default=1000, type=int)\n'
        'parser.add_argument("--learning_rate", default=0.1, type=float)\n').replace(
        "n_classes=3)",
        "n_classes=3, optimizer=tf.train.FtrlOptimizer(args.learning_rate, l1_regularization_strength=0.01))")
    code = run_one(source).source
    assert "def build_dnn_classifier_model(input_spec, feature_columns, learning_rate):\n" in code, code
    assert ("keras.optimizers.legacy.Ftrl(\n        learning_rate=learning_rate, l1_regularization_strength=0.01)"
            in code)
    assert "            feature_columns=my_feature_columns,\n            learning_rate=args.learning_rate)" in code


@pytest.mark.parametrize("n_classes, loss, metrics", [
    ("2", "keras.losses.BinaryCrossentropy(from_logits=True)",
     ['keras.metrics.BinaryAccuracy(threshold=0.0, name="accuracy")', 'keras.metrics.AUC(from_logits=True, name="auc")']),
    ("3", "keras.losses.SparseCategoricalCrossentropy(from_logits=True)",
     ['keras.metrics.SparseCategoricalAccuracy(name="accuracy")']),
])
def test_classifier_heads(n_classes, loss, metrics):
    result = run_one(PREMADE.replace("n_classes=3", f"n_classes={n_classes}"))
    code = result.source
    units = 1 if n_classes == "2" else 3
    assert f'logits = keras.layers.Dense(units={units}, name="dnn/logits")(net)' in code
    assert f"loss={loss}" in code and all(metric in code for metric in metrics)
    unreported = [m for m in findings(result, "TFM309") if "also reported" in m]
    assert bool(unreported) == (n_classes == "2"), unreported


def test_a_regressor_in_a_build_estimator_of_another_module_with_flags():
    results = run_tree({
        "trainer/__init__.py": "",
        "trainer/model.py": """
            import tensorflow.compat.v1 as tf

            def build_estimator(config, hidden_units):
              columns = [tf.feature_column.numeric_column("x", shape=[2])]
              return tf.estimator.DNNRegressor(hidden_units=hidden_units, feature_columns=columns, config=config,
                                               label_dimension=1)
            """,
        "trainer/task.py": """
            import tensorflow.compat.v1 as tf

            from trainer import model

            flags = tf.app.flags
            flags.DEFINE_string("job_dir", "/tmp/job", "where checkpoints go")
            flags.DEFINE_integer("train_steps", 100, "steps")
            FLAGS = flags.FLAGS

            def input_fn():
              return tf.data.Dataset.from_tensor_slices(({"x": [[1.0, 2.0]]}, [[1.0]])).repeat().batch(1)

            def main(_):
              config = tf.estimator.RunConfig(model_dir=FLAGS.job_dir)
              estimator = model.build_estimator(config, [8, 4])
              estimator.train(input_fn, max_steps=FLAGS.train_steps)

            if __name__ == "__main__":
              tf.app.run()
            """,
    })
    model, task = results["trainer/model.py"].source, results["trainer/task.py"].source
    assert "def build_dnn_regressor_model(input_spec):" in model
    assert 'keras.layers.Flatten()(tf.cast(features["x"], tf.float32))' in model
    assert 'net = keras.layers.Dense(units=4, activation="relu", name="dnn/hiddenlayer_1")(net)' in model
    assert 'loss=keras.losses.MeanSquaredError(reduction="sum")' in model
    assert "from trainer.model import build_dnn_regressor_model" in task or "model.build_dnn_regressor_model" in task
    assert "CheckpointManager" in task and "FLAGS.job_dir" in task
    assert any("canned DNNRegressor ->" in f.message for f in results["trainer/model.py"].findings)


@pytest.mark.parametrize("change, where, why", [
    ("n_classes=3)", "label_vocabulary", "label_vocabulary must be a list of strings where the estimator is made"),
    ("n_classes=3)", "batch_norm", "batch_norm must be True or False where the estimator is made"),
    ("n_classes=3)", "activation_fn", "activation_fn other than a tf.nn activation"),
    ("n_classes=3)", "dropout", "dropout must be a number the migration can read"),
    ("hidden_units=[10, 10]", "hidden_units", "hidden_units must be a list of numbers"),
    ("n_classes=3)", "optimizer", "optimizer 'Momentum' is not one of the canned estimators' names"),
], ids=["label_vocabulary", "batch_norm", "activation", "dropout", "hidden_units", "optimizer"])
def test_what_is_not_migrated_yet_is_left_with_the_reason(change, where, why):
    new = {"label_vocabulary": 'n_classes=3, label_vocabulary=args.labels)',
           "batch_norm": "n_classes=3, batch_norm=args.batch_size > 10)", "activation_fn": "n_classes=3, activation_fn=lambda x: x)",
           "dropout": "n_classes=3, dropout=args.batch_size)", "hidden_units": "hidden_units=[10, None]",
           "optimizer": 'n_classes=3, optimizer="Momentum")'}[where]
    source = PREMADE.replace(change, new)
    assert source != PREMADE
    result = run_one(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM302"]
    assert why in finding.message and where in source.splitlines()[finding.line - 1], finding


PREDICT = ("steps=args.train_steps)\n", "steps=args.train_steps)\n    for prediction in classifier.predict("
           "input_fn=lambda: train_input_fn(train_x, train_y, 1)):\n        print(prediction['class_ids'][0])\n")


def test_predict_with_a_canned_estimator_yields_what_its_head_predicted():
    code = run_one(PREMADE.replace(*PREDICT)).source
    assert "    model, predictor = build_dnn_classifier_model(" in code
    assert ('    predictor = keras.Model(inputs=features, outputs={\n'
            '        "logits": logits,\n'
            '        "probabilities": tf.nn.softmax(logits),\n'
            '        "class_ids": tf.argmax(logits, axis=-1)[:, None],\n'
            '        "classes": tf.strings.as_string(tf.argmax(logits, axis=-1)[:, None]),\n'
            '        "all_class_ids": tf.tile(tf.range(3)[None, :], [tf.shape(logits)[0], 1]),\n'
            '        "all_classes": tf.strings.as_string(tf.tile(tf.range(3)[None, :], [tf.shape(logits)[0], 1])),\n'
            '    })\n') in code, code
    assert ("    for prediction in predict_examples(predictor, train_input_fn(train_x, train_y, 1)):\n"
            "        print(prediction['class_ids'][0])\n") in code


def test_predict_with_a_wide_and_deep_estimator_predicts_from_both_parts_logits_summed():
    code = run_one(COMBINED.replace(*PREDICT)).source
    assert "    logits = keras.layers.Add()([linear_logits, dnn_logits])\n" in code
    assert '        "class_ids": tf.argmax(logits, axis=-1)[:, None],\n' in code
    assert "for prediction in predict_examples(predictor, " in code


def test_switched_off_the_canned_estimator_is_left_as_it_is():
    result = run_one(PREMADE, enabled=ALL_RULES - {"TFM309"})
    assert result.source == dedent(PREMADE)
    (finding,) = [f for f in result.findings if f.rule == "TFM302"]
    assert "TFM309 (canned-estimator), which is switched off" in finding.message


@pytest.mark.parametrize("estimator, why", [
    ("BaselineClassifier", "it learns the label prior alone (one bias per class, Ftrl)"),
    ("BoostedTreesClassifier", "gradient boosted trees have no Keras counterpart: TensorFlow Decision Forests"),
    ("RNNClassifier", "its sequence feature columns have no Keras preprocessing written for them"),
    ("DNNEstimator", "canned estimator DNNEstimator left as it is: not migrated yet"),
])
def test_other_canned_estimators_are_left_saying_what_to_do(estimator, why):
    source = PREMADE.replace("DNNClassifier(", f"{estimator}(").replace("        hidden_units=[10, 10],\n", "")
    result = run_one(source)
    assert result.source == dedent(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM302"]
    assert why in finding.message, finding.message


def test_a_canned_estimator_the_migration_cannot_follow_is_left_with_the_reason():
    """Not the generic "not migrated yet" of a kind TFM309 migrates: what stops it here."""
    source = PREMADE.replace("    classifier.train(", "    classifier = wrapped_for_serving(classifier)\n"
                             "    classifier.train(")
    assert source != PREMADE
    (finding,) = [f for f in run_one(source).findings if f.rule == "TFM302"]
    assert finding.message.startswith("canned DNNClassifier left as it is: `classifier` is passed to "
                                      "`wrapped_for_serving`, which the migration cannot follow"), finding.message


def test_a_linear_model_of_columns_made_at_run_time_weighs_each_under_tf1s_name():
    source = PREMADE.replace("DNNClassifier(", "LinearClassifier(").replace("        hidden_units=[10, 10],\n", "")
    result = run_one(source)
    code = result.source
    assert not findings(result, "TFM302") and "LinearClassifier(" not in code
    for line in ("def build_linear_classifier_model(input_spec, feature_columns):\n",
                 "    ordered_columns = sorted(feature_columns, key=lambda column: column.name)\n",
                 '            units=3, use_bias=column is ordered_columns[-1], kernel_initializer="zeros",\n',
                 '            name=f"linear/linear_model/{column.name}")(\n',
                 "    logits = keras.layers.Add()(weighted) if len(weighted) > 1 else weighted[0]\n"):
        assert line in code, line


def test_a_wide_and_deep_model_of_linear_columns_made_at_run_time_is_left_with_the_reason():
    """Its linear part's default rate depends on how many columns it has."""
    source = PREMADE.replace("DNNClassifier(", "DNNLinearCombinedClassifier(").replace(
        "feature_columns=my_feature_columns,\n        hidden_units=[10, 10],",
        "linear_feature_columns=my_feature_columns,\n        dnn_feature_columns=my_feature_columns,\n"
        "        dnn_hidden_units=[10, 10],")
    assert source != PREMADE
    (finding,) = [f for f in run_one(source).findings if f.rule == "TFM302"]
    assert "the linear part of feature columns made at run time is not migrated yet" in finding.message


LINEAR_AT_RUN_TIME = """\
import argparse

import numpy as np
import tensorflow.compat.v1 as tf

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir")
parser.add_argument("--keys", default="c,a,b")


def input_fn(train):
    rng = np.random.RandomState(0 if train else 1)
    features = {key: rng.normal(size=64).astype(np.float32) for key in "abc"}
    labels = (features["a"] + 2 * features["b"] - features["c"] > 0).astype(np.int64)
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    if train:
        dataset = dataset.repeat()
    return dataset.batch(16)


def main():
    args = parser.parse_args()
    columns = [tf.feature_column.numeric_column(key) for key in args.keys.split(",")]
    classifier = tf.estimator.LinearClassifier(columns, model_dir=args.model_dir)
    classifier.train(lambda: input_fn(True), max_steps=20)
    metrics = classifier.evaluate(lambda: input_fn(False))
    print("eval loss: %s, accuracy %s" % (metrics["loss"], metrics["accuracy"]))


main()
"""


@pytest.mark.tensorflow
def test_a_linear_model_of_columns_made_at_run_time_evaluates_tf1s_checkpoint_as_tf1_did(tmp_path):
    """Each column's weights restored from TF1's checkpoint by its key: the same loss and accuracy."""
    printed = tf1_and_migrated_evaluations(tmp_path, LINEAR_AT_RUN_TIME, r"eval loss: (\S+), accuracy (\S+)$")
    assert printed[1] == pytest.approx(printed[0], rel=1e-5)
    assert 0.6 < printed[0][1] < 1


CENSUS_COLUMNS = """
    age = tf.feature_column.numeric_column("age")
    age_buckets = tf.feature_column.bucketized_column(age, boundaries=[25.0, 45.0])
    education = tf.feature_column.categorical_column_with_vocabulary_list("education", ["Bachelors", "Masters"])
    occupation = tf.feature_column.categorical_column_with_hash_bucket("occupation", hash_bucket_size=20)
    deep_columns = [
        age,
        tf.feature_column.indicator_column(education),
        tf.feature_column.embedding_column(occupation, dimension=4),
        tf.feature_column.indicator_column(tf.feature_column.crossed_column([age_buckets, "education"], 16)),
    ]
"""


def test_feature_columns_of_every_kind_become_named_keras_steps_in_name_order():
    source = PREMADE.replace("""    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))
""", CENSUS_COLUMNS).replace("feature_columns=my_feature_columns", "feature_columns=deep_columns")
    result = run_one(source)
    code = result.source
    assert "def build_dnn_classifier_model(input_spec):\n" in code and "import math\n" in code
    steps = [line.split(" = ")[0].strip() for line in code[code.index("# input_layer"):code.index("    net = keras")]
             .splitlines() if " = " in line and line.startswith("    ") and not line.startswith("     ")]
    assert steps == ["age", "age_values", "age_buckets", "age_bucketized_X_education_crossed", "age_bucketized_X_education_indicator",
                     "education_indicator", "occupation_hashed", "occupation_counts", "occupation_rows",
                     "occupation_embedding"], steps
    concatenated = code[code.index("    net = keras.layers.Concatenate()(["):code.index("])\n    net = keras.layers.Dense")]
    assert re.findall(r"\w+(?=,|$)", concatenated) == ["age", "age_bucketized_X_education_indicator",
                                                       "education_indicator", "occupation_embedding"], concatenated
    assert 'vocabulary=["Bachelors", "Masters"]' in code and 'name="occupation_embedding")(occupation_counts)' in code


def test_input_layer_in_a_model_fn_reads_the_same_columns():
    code = run_one('''
        import tensorflow.compat.v1 as tf

        def input_fn():
            return tf.data.Dataset.from_tensor_slices(({"w": [["a"]], "x": [[1.0]]}, [[1.0]])).repeat().batch(1)

        def model_fn(features, labels, mode):
            columns = [tf.feature_column.numeric_column("x"), tf.feature_column.indicator_column(
                tf.feature_column.categorical_column_with_vocabulary_list("w", ["a", "b"], num_oov_buckets=1))]
            net = tf.feature_column.input_layer(features, columns)
            logits = tf.layers.dense(net, 1)
            loss = tf.losses.mean_squared_error(labels, logits)
            train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

        estimator = tf.estimator.Estimator(model_fn)
        estimator.train(input_fn, max_steps=10)
        ''').source
    assert "    w_indicator = tf.roll(\n" in code and "    net = keras.layers.Concatenate()([w_indicator, x])\n" in code


@pytest.mark.parametrize("column, why", [
    ('tf.feature_column.indicator_column(tf.feature_column.categorical_column_with_vocabulary_file("w", "v.txt", 3))',
     "categorical_column_with_vocabulary_file(vocabulary_size=...) is not migrated yet"),
    ('tf.feature_column.indicator_column(tf.feature_column.sequence_categorical_column_with_identity("w", 3))',
     "feature_column.sequence_categorical_column_with_identity is not migrated yet"),
    ('tf.feature_column.categorical_column_with_hash_bucket("w", 5)', "wrap it in an indicator_column"),
    ('tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x", shape=[2]), [0.0])',
     "bucketized_column of a numeric column of more than one value is not migrated yet"),
    ('tf.feature_column.indicator_column(tf.feature_column.categorical_column_with_vocabulary_list("w", ["a"], '
     'default_value=0))', "default_value=...) is not migrated yet"),
    ('tf.feature_column.embedding_column(tf.feature_column.categorical_column_with_identity("i", 4), 2, max_norm=1.0)',
     "embedding_column(max_norm=...) is not migrated yet"),
    ('tf.feature_column.embedding_column(tf.feature_column.weighted_categorical_column('
     'tf.feature_column.categorical_column_with_identity("i", 4), "w"), 2, combiner="sqrtn")',
     'an embedding_column of weighted ids with combiner="sqrtn"'),
    ('tf.feature_column.indicator_column(tf.feature_column.weighted_categorical_column(tf.feature_column.'
     'crossed_column(["a", "b"], 4), "w"))', "weighted_categorical_column of a vocabulary list, hash bucket or identity"),
    ('tf.feature_column.numeric_column("x", normalizer_fn=lambda x: (x - np.mean(train_x["a"])) / 2.0)',
     "a normalizer_fn is migrated when it is arithmetic (+ - * / **) on its argument and numbers known before"),
    ('make_column("x")', "`make_column(\"x\")` is not a feature column the migration can follow to the call"),
    ('tf.feature_column.numeric_column("x", normalizer_fn=tf.math.log1p)',
     "a normalizer_fn is migrated when it is a lambda of one argument"),
])
def test_columns_not_migrated_yet_are_left_with_the_reason(column, why):
    source = PREMADE.replace("my_feature_columns.append(tf.feature_column.numeric_column(key=key))",
                             f"my_feature_columns.append({column})")
    result = run_one(source)
    assert result.source == dedent(source)
    (finding,) = [f for f in result.findings if f.rule == "TFM302"]
    assert why in finding.message, finding.message


@pytest.mark.parametrize("column, reads", [
    ('tf.feature_column.bucketized_column(tf.feature_column.numeric_column("x"), np.linspace(0, 1.0, FLAGS.nbuckets).tolist())',
     ['x_boundaries = columns_by_name["x_bucketized"].boundaries',
      "bin_boundaries=list(x_boundaries)", "num_tokens=len(x_boundaries) + 1"]),
    ('tf.feature_column.indicator_column(tf.feature_column.categorical_column_with_hash_bucket("w", FLAGS.buckets))',
     ['w_buckets = columns_by_name["w"].hash_bucket_size', "tf.constant(w_buckets, tf.int64)",
      "keras.layers.Hashing(num_bins=w_buckets)", "num_tokens=w_buckets + 1"]),
    ('tf.feature_column.indicator_column(tf.feature_column.categorical_column_with_identity("i", FLAGS.ids))',
     ['i_buckets = columns_by_name["i"].num_buckets', "num_tokens=i_buckets + 1"]),
    ('tf.feature_column.embedding_column(tf.feature_column.crossed_column(["a", "b"], FLAGS.buckets), FLAGS.dimension)',
     ['crossed_buckets = columns_by_name["a_X_b"].hash_bucket_size', "HashedCrossing(num_bins=crossed_buckets)",
      'crossed_dimension = columns_by_name["a_X_b_embedding"].dimension', "units=crossed_dimension",
      "stddev=1 / math.sqrt(crossed_dimension)"]),
], ids=["boundaries", "hash buckets", "identity buckets", "crossed and embedded"])
def test_column_sizes_known_when_the_program_runs_are_read_from_the_columns_it_made(column, reads):
    """A size computed as the program runs (from a flag, a global a task sets, np.linspace of one) is read from
    the column the program made, found by name among the columns the build function is given (parity:
    tests/test_parity.py)."""
    source = PREMADE.replace("my_feature_columns.append(tf.feature_column.numeric_column(key=key))",
                             f"my_feature_columns.append({column})").replace(
        "import tensorflow as tf\n", "import numpy as np\nimport tensorflow as tf\n")
    result = run_one(source)
    assert not findings(result, "TFM302"), result.findings
    code = result.source
    build = code[code.index("def build_dnn_classifier_model(input_spec, feature_columns):"):]
    assert "    pending = list(feature_columns)\n" in build and "        pending += column.parents\n" in build
    for line in reads:
        assert line in build, build[:3000]
    assert "feature_columns=my_feature_columns" in code[code.index("with strategy.scope():"):]
    compile(code, "train.py", "exec")


# The Titanic tutorial's shape (tensorflow/docs, tutorials/estimator/linear): keys from loops over lists written
# out, vocabularies from the data as the program runs.
LOOPED_KEYS = """    CATEGORICAL_COLUMNS = ["sex", "n_siblings_spouses"]
    my_feature_columns = []
    for feature_name in CATEGORICAL_COLUMNS:
        vocabulary = sorted(set(train_x[feature_name]))
        my_feature_columns.append(tf.feature_column.categorical_column_with_vocabulary_list(feature_name, vocabulary))
    for feature_name in ["age", "fare"]:
        my_feature_columns.append(tf.feature_column.numeric_column(feature_name))
"""


def test_columns_appended_in_loops_over_keys_written_out_are_read_round_by_round():
    """Each round's key is the loop's; a vocabulary known only as the program runs is read from the column it made,
    and so is whether its words are strings or integers (TF1 took the column's dtype from them)."""
    source = PREMADE.replace(COLUMNS_IN_A_LOOP, LOOPED_KEYS).replace(
        "tf.estimator.DNNClassifier(", "tf.estimator.LinearClassifier(").replace("        hidden_units=[10, 10],\n", "")
    result = run_one(source)
    assert not findings(result, "TFM302"), result.findings
    build = result.source[result.source.index("def build_linear_classifier_model("):]
    for line in ['sex_vocabulary = columns_by_name["sex"].vocabulary_list',
                 'sex_strings = sex_dtype == tf.string', 'sex_dtype = columns_by_name["sex"].dtype',
                 "sex_counts = (keras.layers.StringLookup if sex_strings else keras.layers.IntegerLookup)(",
                 'mask_token="" if sex_strings else -1', 'n_siblings_spouses_vocabulary = columns_by_name["n_siblings_',
                 'age = keras.layers.Flatten()(tf.cast(features["age"], tf.float32))',
                 'name="fare_weights")(fare)']:
        assert line in build, build[:4000]
    compile(result.source, "train.py", "exec")


@pytest.mark.parametrize("change, reason", [
    (("for feature_name in CATEGORICAL_COLUMNS:", "for feature_name in train_x.keys():"),
     "categorical_column_with_vocabulary_list's key must be a value the migration can read"),
    (("        my_feature_columns.append(tf.feature_column.categorical_column_with_vocabulary_list(",
      "        if len(vocabulary) > 1:\n            my_feature_columns.append("
      "tf.feature_column.categorical_column_with_vocabulary_list("),
     "categorical_column_with_vocabulary_list's key must be a value the migration can read"),
    (('    for feature_name in ["age", "fare"]:\n',
      '    for feature_name in ["age", "fare"]:\n        if feature_name == "fare":\n            break\n'),
     "feature columns appended in a loop that a `break`, `continue`, `return` or `raise` may leave"),
], ids=["keys known at run time", "an if known at run time", "a loop left by break"])
def test_columns_in_loops_the_migration_cannot_read_round_by_round_keep_the_program(change, reason):
    source = PREMADE.replace(COLUMNS_IN_A_LOOP, LOOPED_KEYS.replace(*change)).replace(
        "tf.estimator.DNNClassifier(", "tf.estimator.LinearClassifier(").replace("        hidden_units=[10, 10],\n", "")
    assert any(reason in message for message in findings(run_one(source), "TFM302"))


def test_an_if_in_the_loop_is_read_in_each_round_and_lists_may_be_made_together():
    looped = LOOPED_KEYS.replace("    my_feature_columns = []\n", "    my_feature_columns, deep = [], []\n").replace(
        "(feature_name, vocabulary))\n", "(feature_name, vocabulary))\n"
        "        if feature_name == \"sex\":\n            deep.append(tf.feature_column.indicator_column("
        "my_feature_columns[-1]))\n        else:\n            deep.append(tf.feature_column.numeric_column("
        "feature_name))\n")
    source = PREMADE.replace(COLUMNS_IN_A_LOOP, looped).replace("feature_columns=my_feature_columns",
                                                                "feature_columns=deep")
    result = run_one(source)
    assert any("`my_feature_columns[-1]` is not a feature column" in m for m in findings(result, "TFM302"))
    source = source.replace("my_feature_columns[-1]", "tf.feature_column.categorical_column_with_vocabulary_list("
                                                      "feature_name, vocabulary)")
    result = run_one(source)
    assert not findings(result, "TFM302"), result.findings
    assert 'n_siblings_spouses = keras.layers.Flatten()(tf.cast(features["n_siblings_spouses"], tf.float32))' \
        in result.source and "sex_indicator = (keras.layers.StringLookup if sex_strings" in result.source


LINEAR = PREMADE.replace("""    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))
""", CENSUS_COLUMNS.replace("tf.feature_column.indicator_column(education)", "education").replace(
    "        tf.feature_column.embedding_column(occupation, dimension=4),\n", "        occupation,\n")).replace(
    "feature_columns=my_feature_columns", "feature_columns=deep_columns").replace(
    "tf.estimator.DNNClassifier(", "tf.estimator.LinearClassifier(").replace("        hidden_units=[10, 10],\n", "")


def test_a_linear_classifier_weighs_each_column_and_adds_one_bias():
    result = run_one(LINEAR)
    code = result.source
    assert "def build_linear_classifier_model(input_spec):\n" in code
    assert ('    education_counts = keras.layers.StringLookup(' in code
            and 'name="occupation_weights")(occupation_counts)' in code)
    layers = re.findall(r'keras\.layers\.Dense\(\s*units=3,\s*use_bias=(\w+),\s*kernel_initializer="zeros",\s*'
                        r'name="(\w+)"\)', code)
    assert layers == [("False", "age_weights"), ("False", "age_bucketized_X_education_indicator_weights"),
                      ("False", "education_weights"), ("True", "occupation_weights")], layers
    assert "logits = keras.layers.Add()([" in code and "keras.optimizers.legacy.Ftrl(learning_rate=0.2)" in code
    (note, *_) = findings(result, "TFM309")
    assert "Ftrl at 0.2, the loss averaged over the batch" in note


def test_sparse_combiner_divides_the_counts_the_weights_multiply():
    """The weights' mean is the weights of the counts' mean; the last layer's bias stays out of the division."""
    code = run_one(LINEAR.replace("n_classes=3)", 'n_classes=3, sparse_combiner="sqrtn")')).source
    assert "occupation_combined = occupation_counts * tf.math.rsqrt(" in code
    assert 'use_bias=True,\n        kernel_initializer="zeros",\n        name="occupation_weights")(occupation_combined)' in code
    assert "age_weighted = " in code and "age_combined" not in code  # a numeric column has no ids to combine


@pytest.mark.parametrize("change, why", [
    (("        occupation,\n", "        tf.feature_column.embedding_column(occupation, dimension=4),\n"),
     "an embedding_column in a linear model is not migrated yet"),
    (('n_classes=3)', 'n_classes=3, sparse_combiner="max")'), 'sparse_combiner must be "sum", "mean" or "sqrtn"'),
])
def test_linear_models_not_migrated_yet(change, why):
    source = LINEAR.replace(*change)
    assert source != LINEAR
    (finding,) = [f for f in run_one(source).findings if f.rule == "TFM302"]
    assert why in finding.message, finding.message


def test_a_weight_column_weighs_the_loss_and_the_metrics():
    source = PREMADE.replace("n_classes=3)", 'n_classes=3, weight_column=tf.feature_column.numeric_column("w"))')
    code = run_one(source).source
    assert ('    dataset = train_input_fn(train_x, train_y, args.batch_size).map(\n'
            '        lambda features, labels: (features, labels, features["w"]))\n') in code, code
    assert "weighted_metrics=[" in code and "    metrics=[" not in code


COMBINED = PREMADE.replace("""    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))
""", CENSUS_COLUMNS).replace("tf.estimator.DNNClassifier(", "tf.estimator.DNNLinearCombinedClassifier(").replace(
    "        feature_columns=my_feature_columns,\n        hidden_units=[10, 10],\n",
    "        linear_feature_columns=[education, occupation],\n        dnn_feature_columns=deep_columns,\n"
    "        dnn_hidden_units=[10, 10],\n")


@pytest.mark.parametrize("spelling, linear, dnn, reduction", [
    ("tf.estimator", "keras.optimizers.legacy.Ftrl(learning_rate=0.005)",
     "keras.optimizers.legacy.Adagrad(learning_rate=0.001)", ""),
    ("tf.compat.v1.estimator", "keras.optimizers.legacy.Ftrl(learning_rate=0.005)",
     "keras.optimizers.legacy.Adagrad(\n        learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-30)",
     ', reduction="sum"'),
])
def test_a_wide_and_deep_model_sums_both_parts_each_trained_by_its_optimizer(spelling, linear, dnn, reduction):
    source = COMBINED.replace("tf.estimator.DNNLinearCombinedClassifier(", f"{spelling}.DNNLinearCombinedClassifier(")
    result = run_one(source)
    code = result.source
    assert "def build_dnn_linear_combined_classifier_model(input_spec):\n" in code
    assert ("    dnn_logits = keras.layers.Dense(units=3, name=\"dnn/logits\")(net)\n" in code
            and "    linear_logits = keras.layers.Add()([education_weighted, occupation_weighted])\n" in code)
    assert ("    linear_model = keras.Model(inputs=features, outputs=linear_logits)\n"
            "    dnn_model = keras.Model(inputs=features, outputs=dnn_logits)\n") in code
    assert "    model = keras.experimental.WideDeepModel(linear_model, dnn_model)\n" in code
    assert f"    linear_optimizer = {linear}\n    dnn_optimizer = {dnn}\n" in code, code
    assert ("    model.compile(\n        [linear_optimizer, dnn_optimizer],\n"
            f"        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True{reduction}),") in code
    (note, *_) = findings(result, "TFM309")
    assert "the DNN part Adagrad at 0.001, the linear part Ftrl at 0.005, the loss " in note, note


def test_a_wide_and_deep_model_with_a_part_missing_is_left_with_the_reason():
    source = COMBINED.replace("        linear_feature_columns=[education, occupation],\n", "")
    (finding,) = [f for f in run_one(source).findings if f.rule == "TFM302"]
    assert "DNNLinearCombinedClassifier without both linear and dnn feature columns" in finding.message


def test_hidden_units_known_at_run_time_are_given_to_the_build_function():
    source = PREMADE.replace('parser.add_argument("--train_steps", default=1000, type=int)\n',
                             'parser.add_argument("--train_steps", default=1000, type=int)\n'
                             'parser.add_argument("--hidden_units", nargs="+", default=[10, 10], type=int)\n').replace(
        "        hidden_units=[10, 10],\n", "        hidden_units=args.hidden_units,\n")
    code = run_one(source).source
    assert "def build_dnn_classifier_model(input_spec, feature_columns, hidden_units):\n" in code, code
    assert ('    for index, units in enumerate(hidden_units):\n'
            '        net = keras.layers.Dense(units=units, activation="relu", name=f"dnn/hiddenlayer_{index}")(net)\n'
            '    logits = keras.layers.Dense(units=3, name="dnn/logits")(net)\n') in code
    assert ("build_dnn_classifier_model(\n            dataset.element_spec[0], feature_columns=my_feature_columns, "
            "hidden_units=args.hidden_units)") in code, code


def test_batch_norm_follows_each_hidden_layer_with_the_estimators_momentum():
    code = run_one(PREMADE.replace("n_classes=3)", "n_classes=3, batch_norm=True, dropout=0.1)")).source
    assert ('    net = keras.layers.Dense(units=10, activation="relu", name="dnn/hiddenlayer_1")(net)\n'
            '    net = keras.layers.Dropout(rate=0.1)(net)\n'
            '    net = keras.layers.BatchNormalization(momentum=0.999, name="dnn/hiddenlayer_1/batchnorm_1")(net)\n'
            '    logits = ') in code, code


def test_label_vocabulary_is_looked_up_by_the_inputs_beside_the_weights():
    source = PREMADE.replace("n_classes=3)", 'n_classes=3, label_vocabulary=["setosa", "versicolor", "virginica"], '
                                             'weight_column="w")')
    code = run_one(source).source
    assert ('        lambda features, labels: (\n'
            '            features,\n'
            '            keras.layers.StringLookup(\n'
            '                vocabulary=["setosa", "versicolor", "virginica"], num_oov_indices=0)(labels),\n'
            '            features["w"]))') in code, code


FEATURIZER = {
    "trainer/__init__.py": "",
    "trainer/featurizer.py": """
        import tensorflow as tf

        INPUT_COLUMNS = [
            tf.feature_column.categorical_column_with_vocabulary_list("gender", [" Female", " Male"]),
            tf.feature_column.numeric_column("age"),
        ]

        def get_deep_and_wide_columns(embedding_size=8):
          (gender, age) = INPUT_COLUMNS
          age_buckets = tf.feature_column.bucketized_column(age, boundaries=[18, 25])
          wide_columns = [gender, age_buckets]
          deep_columns = [tf.feature_column.indicator_column(gender), age]
          return deep_columns, wide_columns
        """,
    "trainer/task.py": """
        import tensorflow as tf

        from trainer import featurizer

        def input_fn():
          return tf.data.Dataset.from_tensor_slices(({"gender": [" Male"], "age": [30.0]}, [1])).repeat().batch(1)

        def main():
          (deep_columns, wide_columns) = featurizer.get_deep_and_wide_columns(8)
          estimator = tf.estimator.DNNLinearCombinedClassifier(
              linear_feature_columns=wide_columns, dnn_feature_columns=deep_columns, dnn_hidden_units=[4])
          estimator.train(input_fn, max_steps=3)
        """,
}


def test_a_featurizer_module_of_feature_columns_is_read_with_the_program():
    """cloudml-samples' census shape: the columns in a module that names no Estimator, unpacked from a list and a
    returned tuple."""
    from migrator.engine import program_groups

    files = {path: dedent(text) for path, text in FEATURIZER.items()}
    assert sorted(map(sorted, program_groups(files, ALL_RULES))) == [
        ["trainer/__init__.py"], ["trainer/featurizer.py", "trainer/task.py"]]
    task = run_tree(FEATURIZER)["trainer/task.py"].source
    assert "gender_weighted = keras.layers.Dense(" in task and "age_bucketized_weighted" in task
    assert 'net = keras.layers.Concatenate()([age, gender_indicator])' in task


def test_column_arguments_written_with_builtins_are_read():
    """census' `hash_bucket_size=int(1e4)`, boundaries counted with len()."""
    source = LINEAR.replace('categorical_column_with_hash_bucket("occupation", hash_bucket_size=20)',
                            'categorical_column_with_hash_bucket("occupation", hash_bucket_size=int(2e1))')
    assert source != LINEAR

    def build_function(code: str) -> str:
        return code[code.index("def build_linear_classifier_model"):code.index("def strategy_for_this_task")]

    assert build_function(run_one(source).source) == build_function(run_one(LINEAR).source)
    shadowed = source.replace("import argparse\n", "import argparse\n\nint = float\n")
    assert 'occupation_buckets = columns_by_name["occupation"].hash_bucket_size' in run_one(shadowed).source


def test_shared_embeddings_unpacked_into_names_look_up_one_table():
    source = PREMADE.replace("""    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))
""", """    a = tf.feature_column.categorical_column_with_hash_bucket("a", 10)
    b = tf.feature_column.categorical_column_with_hash_bucket("b", 10)
    a_embedded, b_embedded = tf.compat.v1.feature_column.shared_embedding_columns([a, b], dimension=4)
    my_feature_columns = [b_embedded, tf.feature_column.numeric_column("x"), a_embedded]
""")
    code = run_one(source).source
    assert code.count('name="a_b_shared_embedding")') == 1 and "a_rows = a_b_shared_embedding_table(a_counts)" in code
    assert "b_rows = a_b_shared_embedding_table(b_counts)" in code
    assert "net = keras.layers.Concatenate()([a_shared_embedding, b_shared_embedding, x])" in code, code


COLUMNS_IN_A_LOOP = """    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))
"""


@pytest.mark.parametrize("boundaries, expected", [
    ("np.arange(start=15, stop=45, step=1).tolist()", "list(range(15, 45))"),
    ("np.arange(32.0, 42, 0.1).tolist()", "np.arange(32.0, 42, 0.1).tolist()"),
    ("np.linspace(-124.3, -114.3, 5).tolist()", "np.linspace(-124.3, -114.3, 5).tolist()"),
    ("list(np.linspace(32.5, 42, NBUCKETS))", "np.linspace(32.5, 42, 7).tolist()"),
    ("list(range(400, 700, 20))", "list(range(400, 700, 20))"),
    ("[x for x in range(3)]", None),
    ("np.arange(0, 1, 0.5, dtype=np.float32).tolist()", None),
], ids=["arange of ints", "arange of floats", "linspace", "list of linspace", "range", "comprehension", "dtype"])
def test_bucket_boundaries_written_with_range_or_numpy_are_numpy_s_numbers(boundaries, expected):
    np = pytest.importorskip("numpy")
    source = PREMADE.replace("import tensorflow as tf\n",
                             "import numpy as np\nimport tensorflow as tf\n\nNBUCKETS = 7\n")
    result = run_one(source.replace(COLUMNS_IN_A_LOOP, f"    my_feature_columns = [tf.feature_column.bucketized_column("
                                                      f"tf.feature_column.numeric_column('a'), {boundaries})]\n"))
    if expected is None:  # not read before the program runs: read from the column then
        assert not findings(result, "TFM302") and \
            'a_boundaries = columns_by_name["a_bucketized"].boundaries' in result.source
        return
    written = re.search(r"Discretization\(\s*bin_boundaries=(\[[^]]*\])", result.source).group(1)
    assert [float(number) for number in written.strip("[]").split(",")] == \
        [float(number) for number in eval(expected, {"np": np})]


@pytest.mark.parametrize("vocabulary, known", [
    ("('AS,VX' + ',F9').split(',')", True), ("'AS VX  F9'.split()", True), ("text.split(',')", False),
    ("'AS,VX,F9'.split(sep)", False),
], ids=["split of strings added", "split on whitespace", "split of a string not known", "a separator not known"])
def test_a_vocabulary_split_from_a_known_string_is_its_words(vocabulary, known):
    source = PREMADE.replace(COLUMNS_IN_A_LOOP, "    my_feature_columns = [tf.feature_column.indicator_column("
                             "tf.feature_column.categorical_column_with_vocabulary_list('carrier', "
                             f"{vocabulary}))]\n")
    result = run_one(source)
    assert not findings(result, "TFM302"), result.findings
    if known:
        assert 'vocabulary=["AS", "VX", "F9"]' in result.source
    else:  # read from the column the program made
        assert 'carrier_vocabulary = columns_by_name["carrier"].vocabulary_list' in result.source
        assert "vocabulary=list(carrier_vocabulary)" in result.source


def test_a_hash_bucket_size_of_arithmetic_on_constants_is_its_value():
    source = PREMADE.replace(COLUMNS_IN_A_LOOP, "    my_feature_columns = [tf.feature_column.indicator_column("
                             "tf.feature_column.crossed_column(['a', 'b'], hash_bucket_size=24 * 7 + len([1, 2]) ** 2 "
                             "// 3))]\n")
    assert "keras.layers.HashedCrossing(num_bins=169)" in run_one(source).source


TWO_RUNS = """
import tensorflow as tf

COLUMNS = [tf.feature_column.numeric_column("x")]


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[0.5], [1.0]])).repeat().batch(2)


model = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=COLUMNS, model_dir="short")
model.train(input_fn=input_fn, max_steps=5)

model = tf.estimator.DNNRegressor(hidden_units=[8], feature_columns=COLUMNS, model_dir="long")
model.train(input_fn=input_fn, max_steps=50)
"""


def test_a_notebook_training_again_under_the_same_name_migrates_both_runs():
    result = run_one(TWO_RUNS)
    code = result.source
    assert "DNNRegressor(" not in code, result.findings
    assert code.count("model.fit(") == 2 and 'units=4' in code and 'units=8' in code
    assert "steps_per_epoch=5 - steps_done," in code and "steps_per_epoch=50 - steps_done," in code


def test_a_name_read_before_it_is_bound_again_still_stops_the_migration():
    source = TWO_RUNS.replace('\nmodel = tf.estimator.DNNRegressor(hidden_units=[8]',
                              '\nprint(model.get_variable_names())\nmodel = tf.estimator.DNNRegressor(hidden_units=[8]')
    result = run_one(source)
    assert 'model = tf.estimator.DNNRegressor(hidden_units=[4]' in result.source  # the run it reads stays
    assert "print(model.get_variable_names())" in result.source
    assert any("`model` is also used here (`print(model.get_variable_names())`)" in f.message for f in result.findings)


LOOP = """    my_feature_columns = []
    for key in train_x.keys():
        my_feature_columns.append(tf.feature_column.numeric_column(key=key))
"""


@pytest.mark.parametrize("columns", [
    '    by_name = {"b": tf.feature_column.numeric_column("b"), "a": tf.feature_column.numeric_column("a")}\n'
    "    my_feature_columns = by_name.values()\n",
    '    by_name = {key: tf.feature_column.numeric_column(key) for key in ["a", "b"]}\n'
    "    my_feature_columns = list(by_name.values())\n",
    '    by_name = {"b": tf.feature_column.numeric_column("b")}\n'
    '    by_name["a"] = tf.feature_column.numeric_column("a")\n'
    "    my_feature_columns = by_name.values()\n",
    '    by_name = {key: tf.feature_column.numeric_column(key) for key in "b,c".split(",")}\n'
    '    by_name.update({"a": tf.feature_column.numeric_column("a")})\n'
    '    del by_name["c"]\n'
    "    my_feature_columns = by_name.values()\n",
    '    more = {"a": tf.feature_column.numeric_column("x")}\n'
    '    more["a"] = tf.feature_column.numeric_column("a")\n'
    '    by_name = {"b": tf.feature_column.numeric_column("b"), "c": tf.feature_column.numeric_column("c")}\n'
    '    by_name.update(more)\n'
    '    by_name.pop("c")\n'
    "    my_feature_columns = by_name.values()\n",
    '    by_name = {"a": tf.feature_column.numeric_column("a")}\n'
    "    my_feature_columns = by_name.values()\n"
    '    by_name["b"] = tf.feature_column.numeric_column("b")\n',
    '    by_name = {"a": tf.feature_column.numeric_column("a"), "b": tf.feature_column.numeric_column("b")}\n'
    "    my_feature_columns = list(by_name.values())\n"
    '    by_name["c"] = tf.feature_column.numeric_column("c")\n',
    "    by_name = {}\n"
    '    for key in ["b", "x", "a"]:\n'
    '        if key not in ["x"]:\n'
    "            by_name[key] = tf.feature_column.numeric_column(key)\n"
    "    my_feature_columns = by_name.values()\n",
], ids=["a dict written out", "a dict comprehension, listed", "an item set after", "updated, an item deleted",
        "updated by another dict changed, an item popped", "a view of the values, an item set before it is read",
        "a copy of the values, an item set after", "set in a loop over keys written out, an if read in each round"])
def test_the_values_of_a_dict_of_columns_are_its_columns(columns):
    expected = run_one(PREMADE.replace(LOOP, '    my_feature_columns = [tf.feature_column.numeric_column("a"), '
                                             'tf.feature_column.numeric_column("b")]\n')).source
    source = PREMADE.replace(LOOP, columns)
    result = run_one(source)
    assert result.source != source and "TFM302" not in {f.rule for f in result.findings}
    built = expected[expected.index("def build_dnn_classifier_model"):expected.index("    return model\n")]
    assert built in result.source


COMPREHENDED = """\
    real = {key: tf.feature_column.numeric_column(key) for key in "a,b".split(",")}
    disc = {}
    disc.update({"d_{}".format(key): tf.feature_column.bucketized_column(real[key], [0.0, 1.0]) for key in ["a", "b"]})
    crossed = {"ab": tf.feature_column.crossed_column([disc["d_a"], disc["d_b"]], 9)}
    embedded = {name: tf.feature_column.embedding_column(column, 3) for name, column in crossed.items()}
    real.update(embedded)
    my_feature_columns = real.values()
"""


def test_columns_made_in_comprehensions_over_keys_or_a_dict_s_items_and_looked_up_by_key_are_those_columns():
    """flights_model's: bucketized columns of `real[key]` for each key, crossed, embedded for each item of a dict,
    added to the dict of numeric columns: the same model as those columns written out."""
    written = (
        '    a, b = tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")\n'
        "    my_feature_columns = [a, b, tf.feature_column.embedding_column(tf.feature_column.crossed_column(\n"
        "        [tf.feature_column.bucketized_column(a, [0.0, 1.0]), tf.feature_column.bucketized_column(b, [0.0, 1.0])"
        "], 9), 3)]\n")
    expected = run_one(PREMADE.replace(LOOP, written)).source
    result = run_one(PREMADE.replace(LOOP, COMPREHENDED))
    assert "TFM302" not in {f.rule for f in result.findings}, result.findings
    built = expected[expected.index("def build_dnn_classifier_model"):expected.index("    return model\n")]
    assert "HashedCrossing(num_bins=9)" in built and "Discretization" in built
    assert built in result.source


@pytest.mark.parametrize("made, change, why", [
    ("", '    by_name.update(c=tf.feature_column.numeric_column("c"))\n', "otherwise than by"),
    ("", '    if train_x:\n        by_name["c"] = tf.feature_column.numeric_column("c")\n', "in a condition"),
    ("", '    by_name.setdefault("c", tf.feature_column.numeric_column("c"))\n', "otherwise than by"),
    ("", '    by_name[KEY] = tf.feature_column.numeric_column("c")\n', "key in a dict must be a string"),
    ('    by_name = {renamed(key): tf.feature_column.numeric_column(key) for key in ["a"]}\n',
     '    by_name["xa"] = tf.feature_column.numeric_column("c")\n', "its keys not known"),
    ('    by_name = {}\n    by_name.update({renamed(key): tf.feature_column.numeric_column(key) for key in ["a"]})\n',
     '    by_name.update({renamed(key): tf.feature_column.numeric_column(key) for key in ["b"]})\n',
     "by keys not known"),
    ("", '    def columns():\n        return list(by_name.values())\n'
         '    by_name["c"] = tf.feature_column.numeric_column("c")\n    my_feature_columns = columns()\n',
     "after the columns are used"),
    ("", '    for key, _ in train_x.items():\n        by_name[key] = tf.feature_column.numeric_column(key)\n',
     "in a loop over keys not known before the program runs (`train_x.items()`)"),
    ("", '    for key in ["b"]:\n        if train_x:\n'
         '            by_name[key] = tf.feature_column.numeric_column(key)\n',
     "in a condition not known before the program runs"),
    ("", '    for key in ["b", "c"]:\n        if key == "c":\n            break\n'
         '        by_name[key] = tf.feature_column.numeric_column(key)\n', "in a condition, loop"),
], ids=["updated by keyword", "in a condition", "setdefault", "a key not known", "a comprehension keyed otherwise",
        "updated by comprehensions keyed otherwise",
        "after they are used", "in a loop over keys known at run time", "in a loop, an if known at run time",
        "in a loop left by break"])
def test_a_dict_of_columns_changed_where_its_columns_cannot_be_known_is_left(made, change, why):
    made = made or '    by_name = {"a": tf.feature_column.numeric_column("a")}\n'
    use = "" if "my_feature_columns" in change else "    my_feature_columns = by_name.values()\n"
    source = PREMADE.replace(LOOP, made + change + use)
    result = run_one(source)
    assert result.source == source
    assert any(why in message for message in findings(result, "TFM302")), result.findings


@pytest.mark.parametrize("strategy, config, why", [
    ("tf.distribute.MirroredStrategy()", "train_distribute=strategy, eval_distribute=strategy", None),
    ("tf.distribute.OneDeviceStrategy('/cpu:0')", "train_distribute=strategy", None),
    ("tf.distribute.MirroredStrategy()", "train_distribute=strategy, eval_distribute=None", None),
    ("tf.distribute.experimental.MultiWorkerMirroredStrategy()", "train_distribute=strategy",
     "a strategy over this machine's devices"),
    ("tf.distribute.MirroredStrategy()", "train_distribute=strategy, eval_distribute=tf.distribute.MirroredStrategy()",
     "eval_distribute=...) other than the train_distribute strategy"),
], ids=["mirrored, evaluating too", "one device", "evaluating without", "multi-worker", "another to evaluate"])
def test_a_strategy_over_this_machine_s_devices_is_the_one_the_migrated_program_trains_under_on_its_own(
        strategy, config, why):
    """RunConfig(train_distribute=...): TF1 trained under it where the program ran on its own; so does the migrated
    program (in a TF_CONFIG cluster it trains under ParameterServerStrategy, as every migrated program)."""
    source = PREMADE.replace("    classifier = tf.estimator.DNNClassifier(\n",
                             f"    strategy = {strategy}\n    classifier = tf.estimator.DNNClassifier(\n"
                             f"        config=tf.estimator.RunConfig({config}),\n")
    result = run_one(source)
    if why is not None:
        assert result.source == source
        assert any(why in message for message in findings(result, "TFM302")), result.findings
        return
    code = result.source
    assert "TFM302" not in {f.rule for f in result.findings}, result.findings
    used = re.search(r"task_type, (\w+) = strategy_for_this_task\(strategy\)\n", code).group(1)
    assert f"with {used}.scope():\n        model = build_dnn_classifier_model(" in code
    assert "def strategy_for_this_task(local_strategy):" in code
    assert "        return None, local_strategy\n" in code
    compile(code, "train.py", "exec")


MODEL_MODULE = '''\
import tensorflow as tf

NNSIZE = [64, 16]
BOUNDS = [0.0, 1.0]


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [[2.0], [4.0]])).repeat().batch(2)


def train_and_evaluate(output_dir):
    x = tf.feature_column.numeric_column("x")
    estimator = tf.estimator.DNNRegressor(model_dir=output_dir, hidden_units=NNSIZE,
                                          feature_columns=[x, tf.feature_column.bucketized_column(x, BOUNDS)])
    estimator.train(input_fn, max_steps=10)
'''


def test_a_model_fn_s_input_layer_reads_sizes_known_when_it_runs_from_the_columns_given_through_params():
    source = (PROGRAMS / "custom_estimator_tf1.py").read_text().replace(
        '    tf.feature_column.numeric_column(key="Petal", shape=(2,)),\n',
        '    tf.feature_column.numeric_column(key="Petal", shape=(2,)),\n'
        '    tf.feature_column.bucketized_column(tf.feature_column.numeric_column(key="SepalWidth"), '
        'np.linspace(-3, 3, int(sys.argv[1])).tolist()),\n')
    code = run_one(source).source
    build = code[code.index("def build_my_model("):]
    assert '  pending = list(params["feature_columns"])\n' in build and \
        'SepalWidth_boundaries = columns_by_name["SepalWidth_bucketized"].boundaries' in build


@pytest.mark.parametrize("task, outcome", [
    ("model.NNSIZE = args.nnsize\n", "read when it runs"),
    ("model.NNSIZE += [2]\n", "read when it runs"),
    ("model.NNSIZE[0] = 32\n", "read when it runs"),
    ("model.NNSIZE.append(2)\n", "read when it runs"),
    ("print(model.NNSIZE)\n", "its value"),
    ("model.BOUNDS = [0.5]\n", "read from the column"),
], ids=["set by the task", "added to", "an item set", "appended to", "only read", "a column's"])
def test_a_module_constant_another_module_sets_is_read_when_the_program_runs(tmp_path, cli, task, outcome):
    """babyweight's trainer: task.py sets `model.NNSIZE` from its flags before it trains; the hidden units are not
    model.py's [64, 16] then. The migrated model.py reads `NNSIZE` where TF1 read it, when the program runs; a
    feature column's boundaries are read from the column the program made, never built with model.py's value."""
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "__init__.py").write_text("")
    (tmp_path / "trainer" / "model.py").write_text(MODEL_MODULE)
    (tmp_path / "trainer" / "task.py").write_text(
        "import argparse\n\nfrom trainer import model\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--nnsize', nargs='+', type=int, default=[8, 4])\nargs = parser.parse_args()\n"
        + task + "model.train_and_evaluate('out')\n")
    code, out, err = cli("trainer")
    migrated = (tmp_path / "trainer" / "model.py").read_text()
    compile(migrated, "model.py", "exec")
    if outcome == "read from the column":
        assert 'x_boundaries = columns_by_name["x_bucketized"].boundaries' in migrated and "bin_boundaries=[" not in \
            migrated, migrated
        return
    driver = migrated[migrated.index("def train_and_evaluate(output_dir):"):]
    if outcome == "read when it runs":
        assert re.search(r"build_\w+_model\([^)]*hidden_units=NNSIZE\)", driver), driver
        assert "units=64" not in migrated
    else:
        assert "units=64" in migrated and "units=16" in migrated, out


TWO_FUNCTIONS = '''\
import numpy as np
import tensorflow.compat.v1 as tf

X = {"a": np.arange(8, dtype=np.float32)}
Y = np.arange(8, dtype=np.float32)


def input_fn():
  return tf.data.Dataset.from_tensor_slices((X, Y)).repeat().batch(4)


def small():
  model = tf.estimator.DNNRegressor([2], [tf.feature_column.numeric_column("a")], model_dir="small")
  model.train(input_fn, max_steps=3)


def big():
  model = tf.estimator.DNNRegressor([16, 16], [tf.feature_column.numeric_column("a")], model_dir="big")
  model.train(input_fn, max_steps=3)


small()
big()
'''


def test_two_models_of_one_module_built_in_its_functions_each_keep_their_own_build_function():
    """Both build functions go above both functions: under one name the second would replace the first before
    small() runs, and small() would train big()'s model. Code that is the same may be written twice."""
    code = run_one(TWO_FUNCTIONS).source
    builds = {name: code[code.index(f"def {name}("):].split("\n\n\n")[0]
              for name in re.findall(r"^def (build_dnn_regressor_model\w*)\(", code, re.M)}
    assert len(builds) == 2, list(builds)
    small, big = (code[code.index(f"def {name}():"):].split("\n\n\n")[0] for name in ("small", "big"))
    (small_build,) = [name for name in builds if f"= {name}(" in small]
    (big_build,) = [name for name in builds if f"= {name}(" in big]
    assert "units=2," in builds[small_build] and "units=16," not in builds[small_build]
    assert "units=16," in builds[big_build] and small_build != big_build
