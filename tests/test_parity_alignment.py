"""What the sides adjust to be comparable (migrator/parity/alignment.py) leaves the program working as before."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

DROPOUT_OFF_THEN_EXPORT = """
import sys
import numpy as np
import keras
import tensorflow as tf
from migrator.parity.alignment import turn_off_dropout

called = set()
turn_off_dropout(tf, [keras.layers.Dropout], called)
model = keras.Sequential([keras.layers.Dense(3), keras.layers.Dropout(0.5), keras.layers.Dense(1)])
x = np.ones([4, 2], np.float32)
trained = model(x, training=True).numpy()
tf.saved_model.save(model, sys.argv[1])
print(sorted(called), np.array_equal(trained, model(x, training=False).numpy()))
"""


@pytest.mark.tensorflow
def test_a_model_with_dropout_turned_off_still_exports(tmp_path):
    """Keras' SavedModel saving traces each layer's call with the signature the layer's call has: the dropout
    turned off keeps Dropout.call's (a program that exports at its end reached the harness's error before)."""
    done = subprocess.run([sys.executable, "-c", DROPOUT_OFF_THEN_EXPORT, str(tmp_path / "export")],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == "['dropout'] True"
    assert (tmp_path / "export" / "saved_model.pb").exists()
