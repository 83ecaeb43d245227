"""TFM010: names of TF 1.x's own tf.keras that TF 2 dropped come from Keras 2; what does not move stays with TFM003."""

from __future__ import annotations

from textwrap import dedent

import pytest

from helpers import check_transformed, run
from rewrites.keras_successors import advice, successor

# cloudml-samples' imdb trainer/utils.py, in short.
IMDB_UTILS = """\
    import numpy as np

    from tensorflow.python.keras.preprocessing.sequence import _remove_long_seq
    from tensorflow.python.keras.preprocessing.sequence import pad_sequences

    SENTENCE_SIZE = 256

    def preprocess(xs, labels, maxlen=None):
      if maxlen:
        xs, labels = _remove_long_seq(maxlen, xs, labels)
      return pad_sequences(xs, value=0, padding='post', maxlen=SENTENCE_SIZE), labels
    """


def rules(source: str, keras: str = "tf_keras") -> tuple[str, list[tuple[int, str]]]:
    result = run(source, keras=keras)
    return result.source, [(f.line, f.rule) for f in result.findings]


def test_imdb_utils_take_both_names_from_tf_keras():
    findings = check_transformed(IMDB_UTILS, """\
        import numpy as np

        import tf_keras as keras

        SENTENCE_SIZE = 256

        def preprocess(xs, labels, maxlen=None):
          if maxlen:
            xs, labels = keras.src.preprocessing.sequence._remove_long_seq(maxlen, xs, labels)
          return keras.preprocessing.sequence.pad_sequences(xs, value=0, padding='post', maxlen=SENTENCE_SIZE), labels
        """)
    assert [(f.line, f.rule) for f in findings] == [(3, "TFM010"), (4, "TFM010")]
    assert "Keras 2's private copy of the same function" in findings[0].message


def test_with_keras_auto_the_keras_package_falls_back_to_tf_keras_on_keras_3():
    source, found = rules(dedent(IMDB_UTILS), keras="auto")
    assert source.startswith(dedent("""\
        import numpy as np

        import keras

        # Keras 2, as this code needs: TF's own up to 2.15; from 2.16 (Keras 3) the tf_keras package.
        if not keras.__version__.startswith("2."):
          import tf_keras as keras

        SENTENCE_SIZE = 256
        """))
    assert found == [(3, "TFM010"), (4, "TFM010")]
    assert run(source, keras="auto").source == source


def test_an_imported_module_moves_with_its_attributes_and_an_alias_keeps_nothing_of_tf1():
    source, found = rules(dedent("""\
        from tensorflow.python.keras.preprocessing import sequence
        from tensorflow.python.keras.preprocessing.sequence import skipgrams as pairs

        x = sequence.pad_sequences(x, maxlen=10)
        table = sequence.make_sampling_table(100)
        couples, labels = pairs(x[0], 100)
        """))
    assert source == dedent("""\
        import tf_keras as keras

        x = keras.preprocessing.sequence.pad_sequences(x, maxlen=10)
        table = keras.preprocessing.sequence.make_sampling_table(100)
        couples, labels = keras.preprocessing.sequence.skipgrams(x[0], 100)
        """)
    assert found == [(1, "TFM010"), (1, "TFM010"), (2, "TFM010")]


LEFT = {
    "a name keras 2 does not have as tf1 had it": (
        "from tensorflow.python.keras.preprocessing.sequence import TimeseriesGenerator, pad_sequences\n"
        "x = pad_sequences(TimeseriesGenerator(data, targets, length=3))\n",
        "`TimeseriesGenerator`: TF 1.x's is a subclass of its own Keras' Sequence"),
    "a module not in the table": (
        "from tensorflow.python.keras.preprocessing.text import Tokenizer\ntokens = Tokenizer(num_words=10)\n",
        "import the same names from keras.preprocessing.text"),
    "an attribute of a module that does not move": (
        "from tensorflow.python.keras.preprocessing import sequence\nx = sequence.TimeseriesGenerator(x, y, 3)\n",
        "import the same names from keras.preprocessing"),
    "a module passed on whole": (
        "from tensorflow.python.keras.preprocessing import sequence\nuse(sequence)\n",
        "import the same names from keras.preprocessing"),
    "a name not used here (another module may import it from here)": (
        "from tensorflow.python.keras.preprocessing.sequence import pad_sequences\n",
        "TFM010 moves them where each is used in the module"),
    "keras bound to another": (
        "import keras_preprocessing as keras\n"
        "from tensorflow.python.keras.preprocessing.sequence import pad_sequences\nx = pad_sequences(x)\n",
        "neither it nor `keras` is bound otherwise"),
    "keras bound in a function": (
        "from tensorflow.python.keras.preprocessing.sequence import pad_sequences\n"
        "def f(x, keras):\n  return pad_sequences(x)\n", "neither it nor `keras` is bound otherwise"),
    "the name bound again": (
        "from tensorflow.python.keras.preprocessing.sequence import pad_sequences\n"
        "x = pad_sequences(x)\npad_sequences = None\n", "neither it nor `keras` is bound otherwise"),
    "__all__ passes names on": (
        "from tensorflow.python.keras.preprocessing.sequence import pad_sequences\n"
        "__all__ = ['pad_sequences']\nx = pad_sequences(x)\n", "TFM010 moves them"),
}


@pytest.mark.parametrize("source, said", LEFT.values(), ids=LEFT)
def test_what_does_not_move_stays_and_tfm003_says_why(source, said):
    result = run(source)
    assert result.source == source
    [finding] = [f for f in result.findings if f.rule in ("TFM003", "TFM010")]
    assert finding.rule == "TFM003" and said in finding.message, finding.message


def test_with_keras_from_tensorflow_a_private_name_stays():
    source, found = rules(dedent(IMDB_UTILS), keras="tf.keras")
    assert "from tensorflow.python.keras.preprocessing.sequence import _remove_long_seq\n" in source
    assert "from tensorflow import keras\n" in source and "keras.preprocessing.sequence.pad_sequences(xs" in source
    assert found == [(3, "TFM003"), (4, "TFM010")]


def test_with_the_rule_off_nothing_moves():
    result = run(IMDB_UTILS, enabled={"TFM003"})
    assert result.source == dedent(IMDB_UTILS) and [f.rule for f in result.findings] == ["TFM003"]


def test_the_table_answers_by_module_and_name():
    assert successor("preprocessing.sequence", "pad_sequences") == "preprocessing.sequence.pad_sequences"
    assert successor("preprocessing.sequence", "_remove_long_seq") == "src.preprocessing.sequence._remove_long_seq"
    assert successor("preprocessing.sequence", "TimeseriesGenerator") is None
    assert successor("preprocessing.text", "Tokenizer") is None
    assert advice("preprocessing.sequence", ["scale"]).startswith(
        "`scale`: Keras 2's keras.preprocessing.sequence has no `scale` of TF 1.x's")


def _moved_functions(keras: str) -> tuple:
    namespace: dict = {}
    exec(compile(run(IMDB_UTILS, keras=keras).source, "utils.py", "exec"), namespace)
    return namespace["preprocess"]([[1, 2], [1, 2, 3, 4], [5]], [0, 1, 2], maxlen=3)


@pytest.mark.tensorflow
@pytest.mark.parametrize("keras", ["auto", "tf_keras"])
def test_the_moved_names_compute_what_tf1s_did(keras):
    """TF 1.x's `_remove_long_seq` kept the sequences shorter than maxlen (and their labels); its `pad_sequences`
    padded after with `value`, to int32."""
    import numpy as np

    padded, labels = _moved_functions(keras)
    assert labels == [0, 2]
    assert padded.dtype == np.int32 and padded.shape == (2, 256)
    assert padded[:, :3].tolist() == [[1, 2, 0], [5, 0, 0]] and not padded[:, 3:].any()


# A model_to_estimator program (the Estimator family respells its module's Keras): a private name of TF 1.x's Keras
# is Keras 2's only where the table knows it.
KERAS_PROGRAM = """\
import tensorflow as tf
from tensorflow.python.keras.preprocessing.sequence import {name}
from tensorflow.python.keras import models


def keras_estimator(model_dir, config):
  model = models.Sequential()
  model.add(tf.keras.layers.Dense(1, input_shape=(3,)))
  model.compile(optimizer="sgd", loss="mse")
  return tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=model_dir, config=config)


def input_fn():
  xs, ys = {name}(4, [[1., 2., 3.]], [1.])
  return tf.data.Dataset.from_tensor_slices((xs, ys)).repeat().batch(1)


estimator = keras_estimator("/tmp/model", tf.estimator.RunConfig())
estimator.train(input_fn, max_steps=10)
"""


def test_in_a_migrated_program_a_private_name_comes_from_keras_2s_private_module():
    result = run(KERAS_PROGRAM.format(name="_remove_long_seq"))
    assert "  xs, ys = keras.src.preprocessing.sequence._remove_long_seq(4, [[1., 2., 3.]], [1.])\n" in result.source
    assert "tensorflow.python" not in result.source and "TFM301" in {f.rule for f in result.findings}


def test_in_a_migrated_program_a_private_name_keras_2_lacks_leaves_the_program():
    source = KERAS_PROGRAM.format(name="_pad_one")
    result = run(source)
    assert result.source == source
    assert any(f.rule == "TFM302" and f.line == 14 and "`_pad_one` is private to TF 1.x's tf.keras: Keras 2's "
               "keras.preprocessing.sequence has no such name" in f.message for f in result.findings)
