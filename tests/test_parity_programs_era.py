"""What the parity harness reads of a program before it runs it: its modules written for TF 1.x (their `import
tensorflow` gets tensorflow.compat.v1 on the old side), and the Keras packages it patches only once imported."""

from __future__ import annotations

import os
import sys

import pytest

from migrator.parity.era import tf1_era_modules
from migrator.parity.program import patch_when_imported


def test_the_modules_written_for_tf1x_are_found_across_the_programs_imports(tmp_path):
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "__init__.py").write_text("")
    (tmp_path / "trainer" / "task.py").write_text(
        "import tensorflow as tf\nfrom trainer import model, modern, nets, compat\n"
        "tf.logging.set_verbosity(tf.logging.INFO)\n")
    (tmp_path / "trainer" / "model.py").write_text(
        "import tensorflow as tf\n\ndef parse(x):\n  return tf.parse_single_example(x, {'a': tf.FixedLenFeature([], tf.float32)})\n")
    (tmp_path / "trainer" / "modern.py").write_text("import tensorflow as tf\n\nx = tf.io.FixedLenFeature([], tf.float32)\n")
    (tmp_path / "trainer" / "nets.py").write_text("import tensorflow.compat.v1 as tf\nnet = tf.contrib.layers.flatten\n")
    (tmp_path / "trainer" / "compat.py").write_text("import tensorflow.compat.v1 as tf\nx = tf.layers.dense\n")
    (tmp_path / "unrelated.py").write_text("import tensorflow as tf\ntf.logging.info('not imported')\n")
    task = str(tmp_path / "trainer" / "task.py")
    assert sorted(tf1_era_modules(task, task, {})) == [str(tmp_path / "trainer" / name) for name in ("model.py", "nets.py", "task.py")]


def test_the_code_of_a_stand_in_is_what_is_read(tmp_path):
    """`--verify` runs the migrated text in place of the file: what is read is the code that runs."""
    program = tmp_path / "train.py"
    program.write_text("import tensorflow as tf\ntf.logging.info('TF 1.x')\n")
    code = tmp_path / "code.py"
    code.write_text("import tensorflow as tf\ntf.print('TF 2')\n")
    assert tf1_era_modules(str(code), str(program), {}) == []
    assert tf1_era_modules(str(program), str(program), {}) == [str(program)]


def test_a_package_is_patched_once_it_is_imported_and_not_before(tmp_path, monkeypatch):
    (tmp_path / "lazy_keras_like.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    patched = []
    finders = list(sys.meta_path)
    try:
        patch_when_imported(("lazy_keras_like", "json"), patched.append)
        assert [module.__name__ for module in patched] == ["json"]  # imported already: patched now
        import lazy_keras_like

        assert patched[-1] is lazy_keras_like and lazy_keras_like.VALUE == 1
        import importlib

        importlib.reload(lazy_keras_like)
        assert len(patched) == 2  # once
    finally:
        sys.meta_path[:] = finders
        sys.modules.pop("lazy_keras_like", None)


CONTRIB_ON_THE_OLD_SIDE = """
import tensorflow as tensorflow_module
from migrator.parity.era import give_contrib

give_contrib(tensorflow_module)
tf = tensorflow_module.compat.v1
tf.disable_eager_execution()
weight = tf.get_variable("w", initializer=2.0)
loss = tf.square(weight)
step = tf.train.get_or_create_global_step()
train = tf.contrib.layers.optimize_loss(loss, step, learning_rate=0.25, optimizer="SGD", summaries=[])
ids = tf.contrib.lookup.index_table_from_tensor(mapping=tf.constant(["a", "b"]), num_oov_buckets=1).lookup(
    tf.constant(["b", "a", "zz"]))
cells = tf.contrib.rnn.MultiRNNCell([tf.contrib.rnn.BasicLSTMCell(2), tf.contrib.rnn.GRUCell(3)])
outputs, _ = tf.contrib.rnn.static_rnn(cells, [tf.ones([1, 4])] * 2, dtype=tf.float32)
print(len(outputs), outputs[-1].shape.as_list(), hasattr(tf.contrib.rnn, "LayerNormBasicLSTMCell"))
with tf.Session() as session:
    session.run([tf.global_variables_initializer(), tf.tables_initializer()])
    session.run(train)
    print(session.run(weight), session.run(ids).tolist())
"""


@pytest.mark.tensorflow
def test_the_old_side_gives_a_tf1x_program_contribs_optimize_loss_lookup_tables_and_cells():
    """TF 1.x programs reach tf.contrib.layers.optimize_loss (tf-slim's, which reads `ops.Tensor`, gone from TF
    2.15's ops module), tf.contrib.lookup's tables (TF1's own functions) and contrib.rnn's cells and static RNNs
    (TF1's own, re-exported; contrib's own cells are missing, as on TF 2): all run on the old side."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", CONTRIB_ON_THE_OLD_SIDE], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-3:-1] == ["2 [1, 3] False",
                                              "1.0 [1, 0, 2]"]  # 2 - 0.25 * 2 * 2; the unknown key in the last bucket


PYTHON_KERAS_PROGRAM = """
import tensorflow as tf
from tensorflow.python.keras.preprocessing import sequence
from tensorflow.python.keras.layers import Dense
from tensorflow.python.keras import models

print(sequence.pad_sequences([[1, 2]], maxlen=3).tolist(), Dense is tf.keras.layers.Dense,
      models.Sequential is tf.keras.Sequential)
"""
OLD_SIDE_START = """
import sys
import tensorflow as tf
from migrator.parity.era import give_python_keras, give_v1

give_v1([sys.argv[1]])
give_python_keras()
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), {"__file__": sys.argv[1], "__name__": "__main__"})
optimizer = tf.keras.optimizers.Adam(0.1)
print(type(optimizer).__module__)
"""


@pytest.mark.tensorflow
def test_the_old_side_gives_a_tf1x_program_the_keras_tensorflow_python_keras_was_and_v1_optimizers(tmp_path):
    """TF 2.15 keeps a partial legacy copy of Keras in tensorflow.python.keras (no preprocessing, other classes
    than tf.keras'); a TF 1.x program's imports of it get tf.keras' modules. In graph mode tf.keras.optimizers are
    the OptimizerV2 ones TF 1.x had (Keras 2's legacy optimizers): its new ones cannot be made there."""
    import subprocess

    program = tmp_path / "train.py"
    program.write_text(PYTHON_KERAS_PROGRAM)
    done = subprocess.run([sys.executable, "-c", OLD_SIDE_START, str(program)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-3:-1] == ["[[0, 1, 2]] True True", "keras.src.optimizers.legacy.adam"]
