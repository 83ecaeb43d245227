"""A between-graph program's export function (rewrites/between_graph/exports.py), in the shape of TensorFlowOnSpark's
mnist/pipeline/tf `export_fun(args)`: a serving graph of placeholders and variables named as the training's, a Saver
restored in a session of its own from the latest checkpoint of the model folder, and TFNode.export_saved_model of
TensorFlowOnSpark's signature dicts (or tf.saved_model.simple_save). It becomes TF2's: the variables restored from
the migrated training's checkpoints (<folder>/tf2), the graph a function of the placeholders, a tf.function per
signature, tf.saved_model.save. What it cannot carry over is left with one TFM104."""

from __future__ import annotations

import pytest
from helpers import run
from ports import free_port
from test_between_graph_tfos import map_fun
from test_between_graph_tfos_pipeline import supervised

EXPORT = '''

def export_fun(args):
  from tensorflowonspark import TFNode
  import tensorflow as tf

  # The serving graph
  x = tf.placeholder(tf.float32, [None, 3], name="x")
  w = tf.Variable(tf.zeros([3, 1]), name="w")
  tf.summary.histogram("weights", w)
  scores = tf.matmul(x, w)
  prediction = tf.argmax(tf.concat([scores, -scores], 1), 1, name="prediction")
  saver = tf.train.Saver()

  with tf.Session() as sess:
    ckpt = tf.train.get_checkpoint_state(args.model)
    assert ckpt and ckpt.model_checkpoint_path, "no checkpoint in {}".format(args.model)
    saver.restore(sess, ckpt.model_checkpoint_path)

    # The signatures
    signatures = {
      tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: {
        'inputs': {'features': x},
        'outputs': {'prediction': prediction},
        'method_name': tf.saved_model.signature_constants.PREDICT_METHOD_NAME
      },
      'scores': {
        'inputs': {'features': x},
        'outputs': {'scores': scores},
        'method_name': 'scores'
      }
    }
    TFNode.export_saved_model(sess, args.export_dir, tf.saved_model.tag_constants.SERVING, signatures)
    print("exported")
'''
MIGRATED = '''\
def export_fun(args):
  import tensorflow as tf
  w = tf.Variable(tf.zeros([3, 1]), name="w")

  ckpt = tf.train.get_checkpoint_state(os.path.join(args.model, "tf2"))
  assert ckpt and ckpt.model_checkpoint_path, "no checkpoint in {}".format(args.model)
  # The variables as the migrated training saved them, by their names there: each one found, as
  # TF1's Saver required (the training's optimizer is not read).
  trained = tf.train.Checkpoint(w=w)
  trained.restore(ckpt.model_checkpoint_path).assert_existing_objects_matched().expect_partial()

  # The signatures
  def graph(x):
    """TF1's graph for serving, from its placeholders."""
    scores = tf.matmul(x, w)
    prediction = tf.compat.v1.argmax(tf.concat([scores, -scores], 1), 1, name="prediction")
    return prediction, scores

  @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="features")])
  def serving_default(x):
    prediction, scores = graph(x)
    return {"prediction": prediction}

  @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="features")])
  def scores_signature(x):
    prediction, scores = graph(x)
    return {"scores": scores}

  tf.saved_model.save(trained, args.export_dir, signatures={
      tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: serving_default,
      'scores': scores_signature,
  })
  print("exported")
'''


def test_an_export_function_becomes_tf2s_saved_model_of_the_same_signatures_from_the_trained_variables():
    source = supervised() + EXPORT
    result = run(source)
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    assert result.source.endswith(MIGRATED)
    (note,) = [f for f in result.findings if f.message.startswith("`export_fun()` exports")]
    assert note.rule == "TFM103" and note.line == source.splitlines().index("def export_fun(args):") + 1
    assert ('os.path.join(args.model, "tf2")' in note.message
            and "TF2 writes each with the predict method (TF1's scores)" in note.message)


SIMPLE_SAVE = '''

def export_fun(args):
  import tensorflow as tf

  x = tf.placeholder(tf.float32, [None, 3], name="x")
  w = tf.Variable(tf.zeros([3, 1]), name="w")
  prediction = tf.matmul(x, w, name="prediction")
  saver = tf.train.Saver()
  with tf.Session() as sess:
    saver.restore(sess, tf.train.latest_checkpoint(args.model))
    tf.saved_model.simple_save(sess, args.export_dir, {"x": x}, {"prediction": prediction})
'''


def test_a_simple_save_export_becomes_one_serving_default_signature():
    result = run(supervised() + SIMPLE_SAVE)
    assert [f.rule for f in result.findings if f.safety.value == "manual"] == []
    code = result.source
    assert ("  trained = tf.train.Checkpoint(w=w)\n"
            "  trained.restore(\n"
            "      tf.train.latest_checkpoint(os.path.join(args.model, \"tf2\"))\n"
            "  ).assert_existing_objects_matched().expect_partial()\n") in code
    assert ('  @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])\n'
            "  def serving_default(x):\n    prediction = graph(x)\n    return {\"prediction\": prediction}\n") in code
    assert ('  tf.saved_model.save(trained, args.export_dir, signatures={\n'
            '      "serving_default": serving_default,\n  })\n') in code
    export = code[code.index("def export_fun"):]
    assert all(gone not in export for gone in ("tf.Session(", "tf.placeholder(", "tf.train.Saver("))


@pytest.mark.parametrize("change, message, at", [
    (('name="w")\n  tf.summary', 'name="v")\n  tf.summary'),
     "the export's variable \"v\" is none of the migrated training's", '  w = tf.Variable(tf.zeros([3, 1]), name="v")'),
    (("'method_name': 'scores'", "'method_name': tf.saved_model.signature_constants.CLASSIFY_METHOD_NAME"),
     "a signature of the method tf.saved_model.signature_constants.CLASSIFY_METHOD_NAME: TF2 writes every",
     "        'method_name': tf.saved_model.signature_constants.CLASSIFY_METHOD_NAME"),
    (("tf.saved_model.tag_constants.SERVING", '"train"'), "a SavedModel of other tags than `serve`",
     '    TFNode.export_saved_model(sess, args.export_dir, "train", signatures)'),
    (('    print("exported")\n', '    print(sess.run(prediction, {x: [[1.0, 2.0, 3.0]]}))\n'),
     "the export's session or graph is used besides its restore and export",
     "    print(sess.run(prediction, {x: [[1.0, 2.0, 3.0]]}))"),
    (("  scores = tf.matmul(x, w)\n", "  scores = tf.layers.dense(x, 1)\n"),
     "the export's graph makes variables otherwise than `name = tf.Variable(..., name=...)`",
     "  scores = tf.layers.dense(x, 1)"),
    (('    print("exported")\n', '    print("exported")\n  return prediction\n'),
     "the export's session or graph is used after its session", "  return prediction"),
], ids=["variable of another name", "classify method", "other tags", "session run", "layer", "tensor after"])
def test_an_export_the_tf2_one_would_not_match_is_left_saying_why(change, message, at):
    source = supervised() + EXPORT.replace(*change)
    result = run(source)
    (left,) = [f for f in result.findings if f.rule == "TFM104"]
    assert message in left.message
    assert left.line == source.splitlines().index(at) + 1
    assert result.source == source


def test_an_export_after_a_training_that_saves_no_checkpoints_is_left():
    source = map_fun(imports="from tensorflowonspark import TFNode\n  ") + EXPORT.replace(
        "  from tensorflowonspark import TFNode\n", "")
    result = run(source)
    (left,) = [f for f in result.findings if f.rule == "TFM104"]
    assert "`export_fun()` exports a model from TF1's checkpoints, which the migrated training does not save" \
        in left.message
    assert result.source == source


CHECK = """\
import numpy as np
import tensorflow as tf

model = tf.saved_model.load("export")
assert sorted(model.signatures) == ["scores", "serving_default"], sorted(model.signatures)
for key, output in (("serving_default", "prediction"), ("scores", "scores")):
    function = model.signatures[key]
    assert list(function.structured_input_signature[1]) == ["features"], function.structured_input_signature
    assert list(function.structured_outputs) == [output], function.structured_outputs
reader = tf.train.load_checkpoint(tf.train.latest_checkpoint("model/tf2"))
trained = reader.get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE")
assert np.abs(trained).sum() > 0 and np.array_equal(model.w.numpy(), trained)  # the trained values, not the zeros
features = tf.constant([[1.0, 2.0, 3.0], [-1.0, 0.0, 2.0]])
scores = model.signatures["scores"](features=features)["scores"].numpy()
assert np.allclose(scores, features.numpy() @ trained, atol=1e-5), scores
prediction = model.signatures["serving_default"](features=features)["prediction"].numpy()
assert list(prediction) == [0 if score >= -score else 1 for score in scores[:, 0]], prediction
print("checked")
"""


@pytest.mark.tensorflow
def test_the_migrated_export_saves_the_clusters_trained_variables_with_the_signatures_tf1_exported(tmp_path):
    import os
    import subprocess
    import sys

    from test_between_graph_tfos import LAUNCHER

    (tmp_path / "map_fun_module.py").write_text(run(supervised() + EXPORT).source)
    (tmp_path / "launch.py").write_text(LAUNCHER.replace("format=sys.argv[5]", "format=sys.argv[5], model='model'"))
    ps, *workers = (f"127.0.0.1:{free_port()}" for _ in range(3))
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}

    def python(*args):
        return subprocess.Popen([sys.executable, *args], cwd=tmp_path, env=env, stderr=subprocess.STDOUT,
                                stdout=subprocess.PIPE, text=True)

    serving = [python("launch.py", job, str(index), ps, ",".join(workers), "-") for job, index in [("ps", 0),
                                                                                                  ("worker", 1)]]
    try:
        chief = python("launch.py", "worker", "0", ps, ",".join(workers), "-")
        out, _ = chief.communicate(timeout=240)
        assert chief.returncode == 0, out[-3000:]
    finally:
        for process in serving:
            process.kill()
            process.wait()
    # TFEstimator's export_fn, run after the cluster ended, in a process of its own.
    export = python("-c", "import types\nfrom map_fun_module import export_fun\n"
                          "export_fun(types.SimpleNamespace(model='model', export_dir='export'))")
    out, _ = export.communicate(timeout=120)
    assert export.returncode == 0 and "exported" in out, out[-3000:]
    check = python("-c", CHECK)
    out, _ = check.communicate(timeout=120)
    assert check.returncode == 0 and "checked" in out, out[-3000:]
