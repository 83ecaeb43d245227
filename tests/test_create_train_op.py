"""create_train_op (tf.contrib.training's, slim's, tf-slim's) in a model_fn kept as written (tier 2,
rewrites/estimator/create_train_op.py): read as minimize of its optimizer, whose variables TF1's checkpoints name
as minimize's; what changes the training is refused, naming the argument; proven by training against TF1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import check_left, parity_of_migration, run

ROOT = Path(__file__).resolve().parents[1]
# optimize_loss's program, its training written out between the markers: a batch norm, whose UPDATE_OPS
# create_train_op runs before the step, and Adam.
OPTIMIZE_LOSS_PROGRAM = ROOT / "tests" / "parity_programs" / "optimize_loss_tf1.py"
OPTIMIZER = "  optimizer = tf.train.AdamOptimizer(learning_rate=params[\"learning_rate\"])\n"
CALL = "  train_op = tf_slim.learning.create_train_op(loss, optimizer)\n"


def program(training: str) -> str:
    """The program training with ``training`` (tf-slim imported)."""
    source = OPTIMIZE_LOSS_PROGRAM.read_text()
    start, end = source.index("  # optimize_loss {\n"), source.index("  # }\n") + len("  # }\n")
    source = source[:start] + training + source[end:]
    return source.replace("import tensorflow.compat.v1 as tf\n", "import tensorflow.compat.v1 as tf\nimport tf_slim\n")


@pytest.mark.parametrize("training, checked", [
    (OPTIMIZER + "  train_op = tf.contrib.training.create_train_op(loss, optimizer)\n", True),
    ("  train_op = tf.contrib.slim.learning.create_train_op(\n"
     "      loss, tf.train.AdamOptimizer(params[\"learning_rate\"]), tf.train.get_or_create_global_step(),\n"
     "      check_numerics=False, clip_gradient_norm=0)\n", False),
    ("  update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n" + OPTIMIZER +
     "  train_op = tf_slim.training.create_train_op(\n"
     "      total_loss=loss, optimizer=optimizer, global_step=tf.train.get_global_step(), update_ops=update_ops,\n"
     "      gate_gradients=tf.train.Optimizer.GATE_GRAPH, aggregation_method=tf.AggregationMethod.ADD_N,\n"
     "      colocate_gradients_with_ops=True, check_numerics=True)\n", True),
], ids=["contrib.training", "slim's, its optimizer made in place", "tf-slim's training, all that changes nothing"])
def test_create_train_op_goes_and_its_optimizer_is_compiled(training, checked):
    result = run(program(training))
    code = result.source
    assert run(code).source == code, "a second run changes nothing"
    assert not [f for f in result.findings if f.rule in ("TFM302", "TFM003")]
    assert 'model.compile(TF1Adam(learning_rate=params["learning_rate"], epsilon=1e-08))' in code
    for gone in ("create_train_op(", "AdamOptimizer", "UPDATE_OPS", "global_step()", "contrib", "tf_slim."):
        assert gone not in code.split('"""', 2)[2], gone  # after the program's docstring
    assert ('loss = tf.debugging.check_numerics(loss, "LossTensor is inf or nan")' in code) == checked
    # TF1's checkpoints name the optimizer's variables as minimize's: in no scope.
    assert '{"{}/Adam": "m", "{}/Adam_1": "v"}' in code
    assert 'targets["beta1_power"], targets["beta2_power"] = (' in code


def test_summarized_gradients_are_noted():
    result = run(program(OPTIMIZER + CALL.replace("optimizer)", "optimizer, summarize_gradients=True)")))
    assert "ModelFnModel" in result.source
    assert any(f.rule == "TFM310" and f.message.startswith("create_train_op(summarize_gradients=...): TF1 wrote "
                                                           "histograms of the gradients") for f in result.findings)


@pytest.mark.parametrize("training, message", [
    (CALL.replace("optimizer)", "optimizer, clip_gradient_norm=5.0)"),
     "create_train_op(clip_gradient_norm=...) changes how it trains"),
    (CALL.replace("optimizer)", "optimizer, gradient_multipliers={\"dense/kernel\": 2.0})"),
     "create_train_op(gradient_multipliers=...) changes how it trains"),
    (CALL.replace("optimizer)", "optimizer, variables_to_train=tf.trainable_variables()[:1])"),
     "create_train_op(variables_to_train=...) changes how it trains"),
    (CALL.replace("learning.create_train_op(loss, optimizer)", "training.create_train_op(loss, optimizer, "
                                                               "transform_grads_fn=lambda grads: grads)"),
     "create_train_op(transform_grads_fn=...) changes how it trains"),
    (CALL.replace("optimizer)", "optimizer, global_step=None)"),
     "create_train_op(global_step=None) did not advance the global step"),
    (CALL.replace("optimizer)", "optimizer, tf.train.create_global_step())"),
     "create_train_op must advance the global step"),
    (CALL.replace("optimizer)", "optimizer, update_ops=[])"),
     "create_train_op(update_ops=...) other than the UPDATE_OPS collection"),
    (CALL.replace("optimizer)", "optimizer, gate_gradients=tf.train.Optimizer.GATE_NONE)"),
     "create_train_op(gate_gradients=...) other than GATE_OP or GATE_GRAPH"),
    (CALL.replace("optimizer)", "make_optimizer())"),
     "create_train_op's optimizer must be a tf.train optimizer made in the model_fn"),
    (CALL.replace("(loss,", "(2.0 * loss,"), "create_train_op of an expression: bind the loss to a name first"),
], ids=["clipped", "multiplied", "some variables", "transformed", "no step", "another step", "no update ops",
        "ungated", "an optimizer a helper makes", "an expression"])
def test_create_train_op_that_trains_otherwise_leaves_the_program_saying_why(training, message):
    check_left(program(OPTIMIZER + training), message)


@pytest.mark.tensorflow
def test_create_train_op_migrated_trains_as_tf1_did_and_carries_on_from_its_checkpoint(tmp_path):
    """The TF1 side runs tf-slim's create_train_op (tf.contrib's code); parity from its checkpoint of step 10: the
    variables, Adam's slots and powers by minimize's names, the step, then 20 steps and the eval loss."""
    printed = parity_of_migration(tmp_path, program(OPTIMIZER + CALL), program(OPTIMIZER + CALL), "--resume", "10")
    assert re.match(r"PARITY: 20 steps match .*, eval loss matches, 7 variables, 10 slots and the step match",
                    printed), printed
