"""Tier 2 (rewrites/estimator/faithful_regularization.py): where a model_fn kept as written adds TF1's regularization
losses, that reading goes and the generated step adds the regularizers Keras tracked (``sum(self.losses)``).

Inside track_tf1_style_variables TF1's collection holds the regularizers of tf.compat.v1.layers and slim layers
once traced, not those of get_variable: kept, the reading would add some of them twice. Each form below is the
model_fn of tests/parity_programs/faithful_tf1.py with its regularization line replaced (BEFORE), and what the
migrated model_fn holds there (AFTER)."""

from __future__ import annotations

import pytest
from helpers import run
from test_faithful import PROGRAM

READING = "  loss += tf.losses.get_regularization_loss()\n"
MIGRATED_CROSS_ENTROPY = ("  loss = tf.compat.v1.reduce_mean(tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2("
                          "labels=onehot, logits=logits))\n")

# (the lines replacing READING, the model_fn's lines after the cross-entropy once migrated)
FORMS = {
    "added in place": (READING, ""),
    "the sum of the list": ("  loss += tf.add_n(tf.losses.get_regularization_losses())\n", ""),
    "the sum of the collection": ("  loss += tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))\n", ""),
    "Python's sum of the list": ("  loss = loss + sum(tf.losses.get_regularization_losses())\n", "  loss = loss\n"),
    "a term of a sum": ("  loss = 2.0 * loss + tf.losses.get_regularization_loss() + 1.0\n",
                        "  loss = 2.0 * loss + 1.0\n"),
    "first term": ("  loss = tf.losses.get_regularization_loss() + loss\n", "  loss = loss\n"),
    "in add_n's list": ("  loss = tf.add_n([loss, tf.losses.get_regularization_loss()])\n",
                        "  loss = tf.add_n([loss])\n"),
    "bound to a name first": ("  l2 = tf.add_n(tf.losses.get_regularization_losses())\n  loss = loss + l2\n",
                              "  loss = loss\n"),
    "the total loss": ("  tf.losses.add_loss(loss)\n  loss = tf.losses.get_total_loss()\n",
                       "  tf.compat.v1.losses.add_loss(loss)\n"
                       "  loss = tf.compat.v1.losses.get_total_loss(add_regularization_losses=False)\n"),
}


def model_fn_after_cross_entropy(code: str) -> str:
    start = code.index(MIGRATED_CROSS_ENTROPY) + len(MIGRATED_CROSS_ENTROPY)
    return code[start:code.index("  if mode == \"eval\":", start)]


@pytest.mark.parametrize("before, after", FORMS.values(), ids=FORMS)
def test_where_the_model_fn_adds_the_regularization_losses_the_step_adds_keras(before, after):
    source = PROGRAM.read_text()
    assert READING in source
    result = run(source.replace(READING, before))
    code = result.source
    assert "class ModelFnModel(keras.Model):" in code, [f.message for f in result.findings]
    assert model_fn_after_cross_entropy(code) == after
    assert 'return results["loss"] + sum(self.losses)' in code
    assert any(f.rule == "TFM310" and "the Keras model's step adds the regularizers it tracked" in f.message
               for f in result.findings)
    assert run(code).source == code  # a second run changes nothing


def test_a_name_bound_to_the_sum_and_read_otherwise_stays_and_leaves_the_program():
    source = PROGRAM.read_text().replace(READING, "  l2 = tf.losses.get_regularization_loss()\n  loss += l2\n"
                                                  "  tf.summary.scalar('l2', l2)\n")
    result = run(source)
    assert result.source == source
    assert any(f.rule == "TFM302" and "is not added to the loss as a term of its own" in f.message
               for f in result.findings)


REFUSED = {
    "a scope's": ("  loss += tf.add_n(tf.losses.get_regularization_losses(scope='hidden'))\n",
                  "is read in a way not migrated yet"),
    "the list itself": ("  loss = tf.add_n([loss] + tf.losses.get_regularization_losses())\n",
                        "is read in a way not migrated yet"),
    "subtracted": ("  loss -= tf.losses.get_regularization_loss()\n", "is not added to the loss as a term of its own"),
    "the total of a collection": ("  loss = tf.losses.get_total_loss(add_regularization_losses=True)\n",
                                  "with arguments is not migrated yet"),
}


@pytest.mark.parametrize("before, message", REFUSED.values(), ids=REFUSED)
def test_other_readings_leave_the_program_saying_where(before, message):
    source = PROGRAM.read_text().replace(READING, before)
    result = run(source)
    assert result.source == source
    (finding,) = [f for f in result.findings if f.rule == "TFM302" and "regularization losses" in f.message]
    assert message in finding.message
    assert source.splitlines()[finding.line - 1] == before.splitlines()[-1]


def test_a_helper_reading_them_leaves_the_program():
    """The step cannot tell what a helper added: the model_fn alone may read them."""
    source = PROGRAM.read_text().replace(READING, "  loss = with_l2(loss)\n").replace(
        "def model_fn(", "def with_l2(loss):\n  return loss + tf.losses.get_regularization_loss()\n\n\ndef model_fn(")
    result = run(source)
    assert result.source == source
    assert any(f.rule == "TFM302" and "reads TF1's regularization losses outside the model_fn" in f.message
               for f in result.findings)
