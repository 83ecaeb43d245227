"""templates: how generated code is laid out."""

from __future__ import annotations

import pytest

from templates import WIDTH, wrap


@pytest.mark.parametrize("code, column, wrapped", [
    ("x = f(a, b)", 0, "x = f(a, b)"),
    ("x = keras.layers.Dense(units=1, activation='relu')", 60,
     "x = keras.layers.Dense(\n    units=1, activation='relu')"),
    ("x = f(aaaaaaaaaa, bbbbbbbbbb)(c)", 80, "x = f(\n    aaaaaaaaaa,\n    bbbbbbbbbb)(c)"),
    ("o = T(lr=S(initial_learning_rate=0.05, decay_steps=5), momentum=0.9)", 50,
     "o = T(\n    lr=S(\n        initial_learning_rate=0.05, decay_steps=5),\n    momentum=0.9)"),
    ("s = 'a, (b' + f(x, y)", 90, "s = 'a, (b' + f(\n    x, y)"),
    ("y = layer(option=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])(tf.cast(v, tf.float32))", 40,
     "y = layer(option=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])(\n    tf.cast(v, tf.float32))"),
    ("d = f(x).map(lambda features, labels: (features, labels, features['a_long_name_of_a_weight']))", 30,
     "d = f(x).map(\n    lambda features, labels: (\n        features, labels, features['a_long_name_of_a_weight']))"),
], ids=["short", "arguments on one line", "one to a line", "nested", "strings are no brackets",
        "the call that fits, not the one holding the most", "a lambda's parameters are one item"])
def test_wrap_breaks_a_long_line_after_its_first_call(code, column, wrapped):
    assert wrap(code, column) == wrapped


def test_generated_examples_keep_within_the_width():
    from pathlib import Path

    for program in sorted((Path(__file__).resolve().parent.parent / "examples").glob("*/train_tf2.py")):
        long = [line for line in program.read_text().splitlines() if len(line) > WIDTH]
        assert not long, (program, long)
