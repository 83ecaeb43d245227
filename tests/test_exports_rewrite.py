"""EvalSpec(exporters=...) -> export_saved_model after the evaluation (rewrites/estimator/exports.py), and what is
left with a finding. The exports themselves are checked by loading them: tests/test_exports.py."""

from __future__ import annotations

import re
from textwrap import dedent

import pytest
from test_estimator_programs import run_one

import rewrites.estimator.exports

INPUTS = '''import tensorflow.compat.v1 as tf


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": [1.0, 2.0]}, [0.5, 1.0])).repeat().batch(2)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": [1.0, 2.0]}, [0.5, 1.0])).batch(2)


'''
DOC = rewrites.estimator.exports.__doc__
BEFORE = dedent(DOC[DOC.index("Before::\n") + len("Before::\n"):DOC.index("After::")])


def manual(result) -> list[str]:
    return [finding.message for finding in result.findings if finding.safety == "manual"]


def test_docstring_example_is_what_the_rewrite_does():
    result = run_one(INPUTS + BEFORE)
    code = result.source
    after = dedent(DOC[DOC.index("After::\n") + len("After::\n"):])
    for part in re.split(r"^ *\.\.\..*\n", after, flags=re.MULTILINE):
        assert part in code, part
        code = code[code.index(part) + len(part):]
    assert "tf.estimator" not in result.source and "LatestExporter" not in result.source
    assert any(finding.rule == "TFM301" and finding.message.startswith("exporters= -> export_saved_model")
               for finding in result.findings)


def test_the_export_function_holds_the_signatures_tf1s_head_exported():
    code = run_one(INPUTS + BEFORE.replace("DNNRegressor([8]", "DNNClassifier([8]").replace(
        "[0.5, 1.0]", "[0, 1]")).source
    for line in ('"serving_default": ("classify", {"classes": "all_classes", "scores": "probabilities"}),',
                 '"regression": ("regress", {"outputs": "logistic"}),', '"predict": ("predict", None),'):
        assert line in code
    assert "model, predictor = build_dnn_classifier_model(" in code


def test_tf1s_serving_function_builders_become_generated_functions_of_the_same_receivers():
    builders = BEFORE.replace(
        'exporter = tf.estimator.LatestExporter("exporter", serving_input_fn, exports_to_keep=3)',
        'spec = tf.feature_column.make_parse_example_spec([tf.feature_column.numeric_column("x")])\n'
        'examples = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec, default_batch_size=4)\n'
        'raw = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None])})\n'
        'exporters = [tf.estimator.FinalExporter("examples", examples), tf.estimator.LatestExporter("raw", raw)]'
    ).replace("exporters=exporter", "exporters=exporters")
    builders = builders[builders.index("estimator = "):]  # serving_input_fn is not needed
    code = run_one(INPUTS + builders).source
    assert ('export_saved_model(\n        predictor,\n        os.path.join("out", "export", "examples"),\n'
            '        parsing_serving_input_fn(spec, default_batch_size=4))') in code
    # TF2 has no placeholders outside a graph: the generated function reads the specs' dtypes and shapes.
    assert 'raw_serving_input_fn({"x": tf.TensorSpec(shape=[None], dtype=tf.float32)})' in code
    assert "exports_to_keep=5" in code  # LatestExporter's default; FinalExporter keeps every export
    assert "def parsing_serving_input_fn(feature_spec, default_batch_size=None):" in code
    assert "examples = tf.estimator" not in code and "raw = tf.estimator" not in code


def test_a_best_exporter_exports_after_the_one_evaluation_as_tf1s_first_evaluation_did():
    best = BEFORE.replace('tf.estimator.LatestExporter("exporter", serving_input_fn, exports_to_keep=3)',
                          'tf.estimator.BestExporter(name="best", serving_input_receiver_fn=serving_input_fn,\n'
                          '                                     compare_fn=lambda best, current: True)')
    result = run_one(INPUTS + best)
    assert ('export_saved_model(\n        predictor, os.path.join("out", "export", "best"), serving_input_fn, '
            'exports_to_keep=5)') in result.source  # BestExporter's default
    assert "BestExporter" not in result.source and "compare_fn" not in result.source
    (note,) = [f for f in result.findings if f.rule == "TFM301" and f.message.startswith("BestExporter")]
    assert "exports that model, as TF1's first evaluation did" in note.message and note.line == best.count(
        "\n", 0, best.index("tf.estimator.BestExporter")) + INPUTS.count("\n") + 1


@pytest.mark.parametrize("serving", ['lambda: serving_input_fn(SIZE)', 'functools.partial(serving_input_fn, SIZE)'],
                         ids=["lambda", "partial"])
def test_a_serving_function_called_by_a_lambda_or_bound_by_a_partial_has_its_receiver_rewritten(serving):
    """``serving_input_receiver_fn=lambda: serving_input_fn(args["seq_len"])``: the lambda stays the serving function
    (the export calls it), the function it calls returns the receiver's tensors."""
    source = "import functools\n" + INPUTS + "SIZE = 2\n" + BEFORE.replace(
        "def serving_input_fn():\n", "def serving_input_fn(size):\n").replace(
        '("exporter", serving_input_fn,', f'("exporter", {serving},')
    code = run_one(source).source
    assert "        return inputs, inputs\n" in code or "    return inputs, inputs\n" in code
    assert f'os.path.join("out", "export", "exporter"), {serving}, exports_to_keep=3)' in " ".join(
        code.replace("(\n", "(").split())


def test_assets_extra_and_as_text_are_passed_to_the_export():
    """TF1 copied each file of assets_extra into the export's assets.extra folder and, with as_text, wrote
    saved_model.pbtxt: the generated export does the same (tests/test_parity_export_check.py: compared)."""
    written = BEFORE.replace(", exports_to_keep=3)", ", assets_extra={'vocab.txt': VOCAB}, as_text=True)")
    code = run_one(INPUTS + "VOCAB = 'vocab.txt'\n" + written).source
    assert "exports_to_keep=5, assets_extra={'vocab.txt': VOCAB}, as_text=True)" in " ".join(
        code.replace("(\n", "(").split())
    assert "from google.protobuf import text_format" in code
    assert 'tf.io.gfile.GFile(os.path.join(temporary, "saved_model.pbtxt"), "w")' in code
    assert 'path = os.path.join(temporary, "assets.extra", destination)' in code
    plain = run_one(INPUTS + BEFORE).source  # without them, the generated function has neither
    assert "assets_extra" not in plain and "as_text" not in plain and "text_format" not in plain


def test_a_serving_function_made_by_a_factory_of_the_program_has_its_receiver_rewritten():
    factory = BEFORE.replace('def serving_input_fn():\n    inputs', 'def make_serving_input_fn(name):\n'
                             '  def serving_input_fn():\n    inputs').replace(
        "    return tf.estimator.export.ServingInputReceiver(inputs, inputs)\n",
        "    return tf.estimator.export.ServingInputReceiver(inputs, inputs)\n  return serving_input_fn\n").replace(
        '("exporter", serving_input_fn,', '("exporter", make_serving_input_fn("x"),')
    code = run_one(INPUTS + factory).source
    assert "    return inputs, inputs\n  return serving_input_fn" in code
    assert '        os.path.join("out", "export", "exporter"),\n        make_serving_input_fn("x"),\n' in code


def test_a_serving_function_picked_from_a_dict_by_a_flag_has_each_receiver_rewritten():
    """The Cloud ML samples' `SERVING_FUNCTIONS[args.export_format]`: every function of the dict is migrated (the one
    picked is known when the program runs), and the pick stays as written."""
    picked = BEFORE.replace("def serving_input_fn():\n", "def other_serving_input_fn():\n"
                            "    inputs = {'x': tf.placeholder(tf.float32, [None, 1])}\n"
                            "    return tf.estimator.export.ServingInputReceiver(inputs, inputs)\n\n\n"
                            "def serving_input_fn():\n").replace(
        '("exporter", serving_input_fn,', '("exporter", SERVING_FUNCTIONS[FORMAT],')
    picked = picked.replace("estimator = ", "SERVING_FUNCTIONS = {'ONE': serving_input_fn, 'OTHER': "
                            "other_serving_input_fn}\nFORMAT = 'ONE'\n\nestimator = ", 1)
    assert "SERVING_FUNCTIONS[FORMAT]" in picked and "SERVING_FUNCTIONS = {" in picked
    code = run_one(INPUTS + picked).source
    assert code.count("    return inputs, inputs\n") == 2 and "ServingInputReceiver" not in code
    assert 'os.path.join("out", "export", "exporter"), SERVING_FUNCTIONS[FORMAT], exports_to_keep=3)' in " ".join(
        code.replace("(\n", "(").split())
    left = run_one(INPUTS + picked.replace("'OTHER': other_serving_input_fn", "'OTHER': make_one()"))
    assert any("a serving function the migration cannot follow" in message for message in manual(left))


@pytest.mark.parametrize("change, reason", [
    (("tf.estimator.LatestExporter(", "MyExporter("), "an exporter of the program's own class"),
    ((", exports_to_keep=3)", ", as_text=len(SERVING) > 0)"), "an exporter's as_text= must be True or False as "
                                                                "written"),
    (("ServingInputReceiver(inputs, inputs)", "ServingInputReceiver(inputs, inputs, {'raw': inputs})"),
     "receiver_tensors_alternatives"),
    (("    return tf.estimator.export.ServingInputReceiver(inputs, inputs)",
      "    receiver = tf.estimator.export.ServingInputReceiver(inputs, inputs)\n    return receiver"),
     "must return its receiver where it makes it"),
    (("    return tf.estimator.export.ServingInputReceiver(inputs, inputs)", "    return inputs"),
     "does not return a ServingInputReceiver"),
    ((', model_dir="out")', ")"), "an exporter of an Estimator without a model_dir"),
    (('"exporter", serving_input_fn,', '"exporter", SERVING.pop(),'), "a serving function the migration cannot follow"),
    (('"exporter", serving_input_fn,', '"exporter", lambda: tf.estimator.export.ServingInputReceiver({}, {}),'),
     "a serving function written as a lambda that makes its receiver"),
    (("estimator = tf.estimator.DNNRegressor", "print(serving_input_fn())\nestimator = tf.estimator.DNNRegressor"),
     "`serving_input_fn`, a serving function, is also called here"),
], ids=["own exporter", "as_text computed", "alternatives", "receiver held", "no receiver", "no model_dir",
        "unfollowed", "a lambda", "called elsewhere"])
def test_what_is_not_migrated_leaves_the_program_with_its_reason(change, reason):
    source = INPUTS + "SERVING = [lambda: None]\n" + BEFORE.replace(*change)
    result = run_one(source)
    assert result.source == source
    assert any(reason in message for message in manual(result)), manual(result)


CALLED = INPUTS.replace("def eval_input_fn", "def unused_eval_input_fn") + BEFORE[:BEFORE.index("estimator = ")] + """
def main():
    estimator = tf.estimator.DNNRegressor([8], [tf.feature_column.numeric_column("x")], model_dir="out")
    estimator.train(train_input_fn, max_steps=10)
    path = estimator.export_savedmodel("exported", serving_input_fn)
    print(path.decode())
"""


def test_an_export_call_after_training_exports_there_and_returns_the_path():
    result = run_one(CALLED)
    assert '    path = export_saved_model(predictor, "exported", serving_input_fn)\n    print(path.decode())' in \
        result.source
    assert any(f.message.startswith("export_savedmodel() -> export_saved_model(predictor, ...)")
               for f in result.findings)


@pytest.mark.parametrize("arguments, reason", [
    ('serving_input_fn, checkpoint_path="ckpt"', "export_savedmodel(checkpoint_path=...) is not migrated yet"),
    ("serving_input_fn, as_text=path.startswith('gs')", "export_savedmodel's as_text= must be True or False"),
])
def test_an_export_call_with_what_is_not_migrated_leaves_the_program(arguments, reason):
    source = CALLED.replace('export_savedmodel("exported", serving_input_fn)',
                            f'export_savedmodel("exported", {arguments})')
    result = run_one(source)
    assert result.source == source
    assert any(reason in message for message in manual(result)), manual(result)


def test_an_export_of_a_training_graph_leaves_the_program():
    source = CALLED.replace('estimator.export_savedmodel("exported", serving_input_fn)',
                            'estimator.export_saved_model("exported", serving_input_fn, '
                            'experimental_mode=tf.estimator.ModeKeys.TRAIN)')
    result = run_one(source)
    assert result.source == source
    assert any("exports a training or evaluation graph" in message for message in manual(result)), manual(result)


KERAS = """import numpy as np
import tensorflow.compat.v1 as tf


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"image": np.ones((8, 3), np.float32)}, np.zeros(8))).repeat().batch(2)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"image": np.ones((8, 3), np.float32)}, np.zeros(8))).batch(2)


def serving():
    placeholders = {"image": tf.placeholder(tf.float32, [None, 3])}
    return tf.estimator.export.ServingInputReceiver(placeholders, placeholders)


def main():
    inputs = tf.keras.layers.Input(shape=(3,), name="image")
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, activation="softmax", name="probs")(inputs))
    model.compile(tf.keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    estimator = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir="out")
    exporter = tf.estimator.LatestExporter("exporter", serving)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=2, exporters=exporter)
    tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(input_fn, max_steps=4), eval_spec)
"""


def test_a_keras_model_s_export_is_keyed_by_its_outputs_names_as_model_to_estimator_did():
    code = run_one(KERAS).source
    assert 'export_saved_model(model, os.path.join("out", "export", "exporter"), serving, exports_to_keep=5)' in code
    assert "predictions = dict(zip(predictor.output_names, tf.nest.flatten(predictions)))" in code
    assert '"serving_default": ("predict", None),' in code


@pytest.mark.parametrize("read, migrates", [("", True), ("print(exported)\n", False)], ids=["unread", "read"])
def test_train_and_evaluate_s_export_results_unread_are_no_reason_to_leave(read, migrates):
    """`result, export_results = train_and_evaluate(...)`: TF1's second result, the export paths, is bound and often
    never read; read, it leaves the program (the migrated exports are not collected there)."""
    source = INPUTS + BEFORE.replace("tf.estimator.train_and_evaluate(",
                                     "result, exported = tf.estimator.train_and_evaluate(") + read
    result = run_one(source)
    assert (result.source != source) == migrates
    if not migrates:
        assert any("the results of train_and_evaluate are used in a way not migrated yet" in message
                   for message in manual(result)), manual(result)


TIER_1 = INPUTS + '''
def serving_input_fn():
    inputs = {"x": tf.placeholder(tf.float32, [None])}
    return tf.estimator.export.ServingInputReceiver(inputs, inputs)


def model_fn(features, labels, mode):
    out = tf.layers.dense(tf.expand_dims(features["x"], -1), 1)
    logits = tf.squeeze(out, -1)
    probabilities = tf.nn.sigmoid(logits)
    predictions = {"probabilities": probabilities, "logits": logits}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=EXPORT_OUTPUTS)
    loss = tf.losses.mean_squared_error(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.estimator.Estimator(model_fn, model_dir="out")
exporter = tf.estimator.LatestExporter("exporter", serving_input_fn)
eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=1, exporters=exporter)
tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=10), eval_spec)
'''


@pytest.mark.parametrize("outputs, signatures", [
    ('{"classify": tf.estimator.export.PredictOutput(predictions)}',
     ['"classify": ("predict", None),', '"serving_default": ("predict", None),']),
    ('{"serving_default": tf.estimator.export.PredictOutput({"scores": probabilities}),\n'
     '                                 "classification": tf.estimator.export.ClassificationOutput(scores=probabilities)}',
     ['"serving_default": ("predict", {"scores": "probabilities"}),',
      '"classification": ("classify", {"scores": "probabilities"}),']),
], ids=["the predictions", "outputs of the predictions"])
def test_a_translated_model_fn_exports_the_signatures_of_its_export_outputs(outputs, signatures):
    """Tier 1: each export output's tensors are the model_fn's predictions, which the predictor gives by key."""
    result = run_one(TIER_1.replace("EXPORT_OUTPUTS", outputs))
    assert "TFM310" not in {f.rule for f in result.findings}, "tier 1"
    for line in signatures:
        assert line in result.source, result.source[-3000:]


def test_an_export_output_of_other_tensors_keeps_the_model_fn_as_written():
    """Tier 1's predictor gives the predictions alone: other tensors are exported by tier 2, which runs the model_fn
    in TF1's PREDICT mode (its own export_outputs); the finding says what kept it from tier 1."""
    source = TIER_1.replace("EXPORT_OUTPUTS", '{"serving_default": tf.estimator.export.PredictOutput({"l": logits * 2})}')
    (tier_2,) = [f.message for f in run_one(source).findings if f.rule == "TFM310"]
    assert "tier 1 stopped at line 24: an export output whose tensors are not the model_fn's predictions" in tier_2


@pytest.mark.tensorflow
def test_the_export_keeps_the_shapes_the_serving_function_set(tmp_path):
    """A serving function parsing comma-separated strings sets its features' shape (`set_shape`), which the model's
    Dense layer needs; the generated export (which prunes the serving function's graph, a copy losing such shapes)
    gives each feature its shape back, so the model builds and serves."""
    import os
    import time

    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    from tensorflow.core.protobuf import saved_model_pb2

    from templates import render

    namespace = {"tf": tf, "keras": keras, "os": os, "time": time, "saved_model_pb2": saved_model_pb2}
    exec(render("export_saved_model.py.j2", names={"export_saved_model": "export_saved_model"}, assets=False,
                text=False, results=False, signatures=[("serving_default", "predict", None)], keras_outputs=False,
                builders=(), graph=False, forwarded=[]), namespace)

    class Model(keras.Model):  # reads the feature's last dimension when it first builds
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1, kernel_initializer="ones")

        def call(self, features, training=False):
            return self.dense(features["x"])

    def serving_input_fn():
        text = tf.compat.v1.placeholder(tf.string, [None], name="x")
        x = tf.strings.to_number(tf.strings.split(text, ",").to_tensor(), tf.float32)
        x.set_shape([None, 3])
        return {"x": x}, {"x": text}

    export = namespace["export_saved_model"](Model(), str(tmp_path), serving_input_fn)
    served = tf.saved_model.load(export.decode()).signatures["serving_default"]
    answer = served(x=tf.constant(["1,2,3", "0,0,1.5"]))
    assert np.ravel(answer["output"].numpy()).tolist() == [6.0, 1.5]
