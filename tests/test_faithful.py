"""TFM310: a model_fn tier 1 cannot translate is kept as written and run in Keras (tier 2,
rewrites/estimator/faithful.py): the optimizer and minimize go to the generated model's compile and train_step,
EstimatorSpec returns become the loss, and the rest is the program's own code, its variables under TF1's names."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import check_left, parity_of_migration, run, tf1_and_migrated_evaluations

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "parity_programs" / "faithful_tf1.py"
TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")
EVALUATED = r"eval loss: (\S+), accuracy (\S+), mean logit (\S+)$"  # what PROGRAM prints at its end
KERAS_DENSE = ('    net = tf.layers.dense(net, units, activation=tf.nn.relu, name="hidden_%d" % index)\n',
               "    net = tf.keras.layers.Dense(units, activation=tf.nn.relu)(net)\n")


def migrated(source: str):
    result = run(source)
    assert run(result.source).source == result.source, "a second run changes nothing"
    return result


def rules(result) -> list[str]:
    return sorted(finding.rule for finding in result.findings)


def test_a_model_fn_tier_1_cannot_translate_is_kept_and_run_in_keras():
    source = PROGRAM.read_text()
    result = migrated(source)
    code = result.source
    assert rules(result) == ["TFM301", "TFM310", "TFM310"]
    kept, regularized = sorted((f for f in result.findings if f.rule == "TFM310"), key=lambda f: f.line)
    assert kept.line == source.splitlines().index("def model_fn(features, labels, mode, params):") + 1
    assert "tier 2" in kept.message and "tier 1 stopped at line 33: `constant`" in kept.message
    # The program's own code stays, respelled for TF2; what only trained in TF1's graph goes.
    assert "def dense_stack(net, hidden_units, training):" in code and "tf.compat.v1.cond(training," in code
    assert 'tf.compat.v1.get_variable("logits_w"' in code and "losses.get_regularization_loss()\n" not in code
    assert "the Keras model's step adds the regularizers it tracked" in regularized.message
    for gone in ("AdamOptimizer", "minimize(loss, global_step", "get_global_step", "EstimatorSpec", "ModeKeys"):
        assert gone not in code, gone
    assert 'return {"loss": loss, "metrics": metrics}' in code and 'return {"loss": loss}' in code
    # eval_metric_ops: the tensors each metric took, for the Keras metric the generated model updates.
    assert "accuracy = (labels, tf.compat.v1.argmax(logits, 1))" in code
    assert 'metrics = {"accuracy": accuracy, "mean_logit": (logits,)}' in code
    assert '"accuracy": keras.metrics.Accuracy(name="accuracy"),' in code
    assert '"mean_logit": keras.metrics.Mean(name="mean_logit"),' in code
    # The generated model runs it under track_tf1_style_variables and trains it with TF1's optimizer.
    assert "class ModelFnModel(keras.Model):" in code and "@tf.compat.v1.keras.utils.track_tf1_style_variables" in code
    assert 'return model_fn(features, labels, "train" if training else "eval", self.params)' in code
    assert "sum(self.losses)" in code  # where the model_fn added the regularization losses
    assert "TF1Adam(learning_rate=params[\"learning_rate\"], epsilon=1e-08)" in code
    assert "model = build_model(dataset, params=params)" in code
    # TF1's checkpoints fit by name.
    assert 'return {variable.name.split(":")[0]: variable for variable in model.weights' in code
    assert code.index("def model_fn(") < code.index("class ModelFnModel") < code.index("def build_model(")


def test_without_tf1_regularization_losses_the_step_adds_none():
    source = PROGRAM.read_text().replace("  loss += tf.losses.get_regularization_loss()\n", "")
    code = migrated(source).source
    assert "ModelFnModel" in code and "self.losses" not in code


def test_the_batch_norm_updates_around_minimize_go():
    source = PROGRAM.read_text().replace(
        "  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n",
        "  update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n"
        "  with tf.control_dependencies(update_ops):\n"
        "    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n")
    code = migrated(source).source
    assert "ModelFnModel" in code and "UPDATE_OPS" not in code and "control_dependencies" not in code


def test_a_model_fn_tier_1_translates_stays_tier_1():
    from test_estimator import SEED

    result = migrated(SEED)
    assert "TFM310" not in rules(result) and "track_tf1_style_variables" not in result.source


OPTIMIZED = ("  train_op = tf.contrib.layers.optimize_loss(loss, tf.train.get_global_step(), RATE, OPTIMIZER"
             "OPTIONS)\n")


MINIMIZED = ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n"
             "  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n")


@pytest.mark.parametrize("before, after, message", [
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  rate = tf.reduce_mean(logits)\n  optimizer = tf.train.AdamOptimizer(rate)\n",
     "the optimizer's arguments read `rate`, computed by `tf.reduce_mean(logits)`"),
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  rate = learning_rate_of(params)\n  optimizer = tf.train.AdamOptimizer(rate)\n",
     "the optimizer's arguments read `rate`, computed by `learning_rate_of(params)`"),
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  rate, decay = params[\"learning_rate\"], 0.9\n  optimizer = tf.train.AdamOptimizer(rate)\n",
     "the optimizer's arguments read `rate`, which the model_fn binds otherwise than by `name = ...`"),
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  rate = params[\"learning_rate\"]\n  rate *= 2\n  optimizer = tf.train.AdamOptimizer(rate)\n",
     "the optimizer's arguments read `rate`, which the model_fn binds more than once"),
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  rate = tf.train.exponential_decay(0.1, tf.train.get_global_step(), 10, 0.5)\n"
     "  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "`rate`, a decay schedule of the global step that the optimizer's learning rate does not read"),
    ("  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n",
     "  gradients = optimizer.compute_gradients(loss)\n"
     "  train_op = optimizer.apply_gradients(gradients, global_step=tf.train.get_global_step())\n",
     "compute_gradients"),
    ('"mean_logit": tf.metrics.mean(logits)', '"below": tf.metrics.percentage_below(logits, 0.5)',
     "`tf.metrics.percentage_below(logits, 0.5)` in eval_metric_ops, in a model_fn kept as written "
     "(tier 2), is not migrated"),
    ("predictions=tf.argmax(logits, 1))\n", "predictions=tf.argmax(logits, 1))\n    doubled = accuracy[1] * 2.0\n",
     "`accuracy`, a tf.metrics result, read besides eval_metric_ops"),
    ("  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n",
     "  step = tf.train.get_global_step()\n  loss += 0.0 * tf.cast(step, tf.float32)\n"
     "  train_op = optimizer.minimize(loss, global_step=step)\n",
     "reads the global step (`step`) other than in minimize"),
    ("  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n",
     "  train_op = tf.group(train_op, tf.no_op())\n"
     "  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n",
     "`train_op`, which TF1's training needed and the Keras model does not, is read here"),
    *[(MINIMIZED, OPTIMIZED.replace("RATE", "0.1").replace("OPTIMIZER", '"SGD"').replace("OPTIONS", options), message)
      for options, message in [
          (", clip_gradients=5.0", "optimize_loss(clip_gradients=...) changes how it trains"),
          (", variables=tf.trainable_variables()[:1]", "optimize_loss(variables=...) changes how it trains"),
          (", increment_global_step=False", "optimize_loss(increment_global_step=...) is not migrated")]],
    ("  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n",
     "  metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)\n"
     "  print(list(estimator.predict(eval_input_fn)))\n",
     "predict() of a model_fn kept as written (tier 2) that returns no predictions"),
    ("def dense_stack(net, hidden_units, training):\n",
     "SCALE = tf.keras.layers.Dense(4)\n\n\ndef dense_stack(net, hidden_units, training):\n  net = SCALE(net)\n",
     "a Keras layer or model made outside the model_fn's code (at module level, in an input_fn"),
    ("  return tf.data.Dataset.from_tensor_slices(examples(0)).repeat().batch(16)\n",
     "  scale = tf.keras.layers.Rescaling(2.0)\n  return tf.data.Dataset.from_tensor_slices(examples(0)).map(\n"
     "      lambda x, y: ({\"x\": scale(x[\"x\"])}, y)).repeat().batch(16)\n",
     "a Keras layer or model made outside the model_fn's code (at module level, in an input_fn"),
    (KERAS_DENSE[0], "    net = tf.keras.layers.Dense(units, kernel_regularizer=tf.keras.regularizers.l2(0.1))(net)\n",
     "TF1's regularization losses held no Keras layer's"),
    *[(KERAS_DENSE[0], after, "a Keras model built on the model_fn's tensors (`input_tensor=`, `Input`, `.output`)")
      for after in ("    base = tf.keras.Sequential([tf.keras.layers.InputLayer(input_tensor=net), "
                    "tf.keras.layers.Dense(units)])\n    net = base.output\n",
                    "    net = tf.keras.applications.ResNet50(weights=None, input_tensor=net).output\n",
                    "    net = tf.keras.layers.Dense(units)(net)\n    net = tf.keras.Model(net, net).outputs[0]\n")],
    ("  loss += tf.losses.get_regularization_loss()\n",
     "  loss += 1e-4 * tf.add_n([tf.nn.l2_loss(v) for v in tf.global_variables()])\n",
     "`tf.global_variables()` reads TF1's graph collections, which are empty in a model_fn kept as written"),
    *[(before, after, "in a model_fn kept as written (tier 2): the Keras model running it would make the variable "
                      "again at each call")
      for before, after in (
          ("  logits = tf.matmul(net, weights)\n",
           "  scale = tf.Variable(1.0, name=\"scale\")\n  logits = tf.matmul(net, weights) * scale\n"),
          ("    net = tf.cond(training, lambda: net * 0.9, lambda: net)\n",
           "    net = tf.cond(training, lambda: net * 0.9, lambda: net) + tf.compat.v1.Variable(0.0)\n"))],
], ids=["optimizer of a TF local", "a rate a helper computes", "a rate bound in a tuple", "a rate bound twice", "a schedule the optimizer ignores",
        "gradients by hand", "another metric", "a metric read besides", "the global step read",
        "the train_op read", "optimize_loss clipped", "optimize_loss of some variables", "optimize_loss not stepping",
        "predict", "a Keras layer at module level", "a Keras layer in the input_fn", "a Keras layer's regularizer",
        "a Keras model on an input tensor", "Keras' application on one", "a functional model of the graph's tensors",
        "a graph collection", "a tf.Variable in the model_fn", "a tf.Variable in its helper"])
def test_what_tier_2_does_not_run_yet_leaves_the_program_saying_why(before, after, message):
    left_saying(before, after, message)


def left_saying(before: str, after: str, message: str) -> None:
    """PROGRAM with ``before`` replaced by ``after`` is left as it is, with a TFM302 finding saying ``message``."""
    source = PROGRAM.read_text()
    assert before in source
    check_left(source.replace(before, after), message)


@pytest.mark.tensorflow
def test_the_kept_model_fn_trains_as_tf1_did_and_carries_on_from_its_checkpoint(tmp_path):
    """Parity from TF1's checkpoint of step 10 (variables, Adam's slots and the step, by TF1's names), then 20 more
    steps and the eval loss, on an in-process cluster of 1 worker and 2 ps."""
    printed = tf1_and_migrated_evaluations(tmp_path, PROGRAM.read_text(), EVALUATED)
    assert printed[1] == pytest.approx(printed[0], rel=1e-6)


def partial_program() -> str:
    """PROGRAM's model_fn scaling its logits by a keyword that `functools.partial` gives it."""
    return PROGRAM.read_text().replace("import argparse\n", "import argparse\nimport functools\n").replace(
        "def model_fn(features, labels, mode, params):", "def model_fn(features, labels, mode, params, scale=1.0):"
    ).replace("  logits = tf.matmul(net, weights)\n", "  logits = tf.matmul(net, weights) * scale\n").replace(
        "tf.estimator.Estimator(model_fn,", "tf.estimator.Estimator(functools.partial(model_fn, scale=2.0),")


def wrapper_program() -> str:
    """partial_program's keyword given by a function only calling the model_fn (estimator/model_fn_wrapper.py)."""
    return partial_program().replace("functools.partial(model_fn, scale=2.0),", "scaled_model_fn,").replace(
        "\n\n\ndef main():", "\n\n\ndef scaled_model_fn(features, labels, mode, params):\n"
                               "  return model_fn(features, labels, mode, params, scale=2.0)\n\n\ndef main():")


@pytest.mark.parametrize("program", [partial_program, wrapper_program], ids=["partial", "wrapper"])
def test_functools_partials_keywords_reach_the_kept_model_fn(program):
    """The build function takes them (the Estimator's call gives them), and the model passes them at each call."""
    code = migrated(program()).source
    assert "model = build_model(dataset, params=params, scale=2.0)" in code
    assert "def build_model(dataset, params, **keywords):" in code and "ModelFnModel(params, **keywords)" in code
    assert 'model_fn(features, labels, "train" if training else "eval", self.params, **self.tf1_keywords)' in code
    assert "scaled_model_fn" not in code


@pytest.mark.tensorflow
@pytest.mark.parametrize("program", [partial_program, wrapper_program], ids=["partial", "wrapper"])
def test_functools_partials_keywords_train_as_tf1s_did(tmp_path, program):
    printed = parity_of_migration(tmp_path, program(), program())
    assert printed.startswith("PARITY: 20 steps match"), printed


def test_keras_layers_the_model_fn_makes_are_made_once():
    """A Keras layer made in the model_fn's code each time it runs (once in TF1's graph) is made at the model's first
    call only: the same layer, the same weights, at every later call; layers without weights (`concatenate`) stay."""
    source = PROGRAM.read_text().replace(*KERAS_DENSE).replace(
        "  logits = tf.matmul(net, weights)\n",
        "  logits = tf.matmul(tf.keras.layers.concatenate([net, net])[:, :net.shape[1]], weights)\n")
    code = migrated(source).source
    assert "net = tf1_keras_layer(lambda: tf.compat.v1.keras.layers.Dense(units, activation=tf.nn.relu))(net)" in code
    assert "tf.compat.v1.keras.layers.concatenate([net, net])" in code
    assert "def tf1_keras_layer(make):" in code and "get_or_create_layer(scope.name, make)" in code
    assert '.removeprefix(f"{model.name}/")' in code  # TF1 named the layers' variables outside any model


def test_keras_layers_of_a_net_picked_from_a_dict_of_the_module_are_made_once():
    """issue 30's shape (c): the net a model_fn picks by params from a module-level dict of functions is the model_fn's
    code too; the dict itself, made at import, is not."""
    source = PROGRAM.read_text().replace(*KERAS_DENSE).replace(
        "def model_fn(features, labels, mode, params):\n",
        "NETS = {\"dense\": dense_stack}\n\n\ndef model_fn(features, labels, mode, params):\n").replace(
        "  net = dense_stack(features", "  net = NETS[\"dense\"](features")
    code = migrated(source).source
    assert "tf1_keras_layer(lambda: tf.compat.v1.keras.layers.Dense(units, activation=tf.nn.relu))(net)" in code
    assert 'NETS = {"dense": dense_stack}' in code


@pytest.mark.tensorflow
def test_keras_layers_the_model_fn_makes_carry_on_from_tf1s_checkpoint(tmp_path):
    """TF1 named a Keras layer's variables `dense/kernel`, in no model: the migrated program restores them from
    TF1's checkpoint by those names and evaluates as TF1 did."""
    printed = tf1_and_migrated_evaluations(tmp_path, PROGRAM.read_text().replace(*KERAS_DENSE), EVALUATED)
    assert printed[1] == pytest.approx(printed[0], rel=1e-6)


def test_without_tfm310_tier_1_alone_leaves_the_program_with_its_reasons():
    from helpers import ALL_RULES

    source = PROGRAM.read_text()
    result = run(source, enabled=ALL_RULES - {"TFM310"})
    assert result.source == source
    assert any(f.rule == "TFM302" and "`constant` in the model_fn" in f.message for f in result.findings)


@pytest.mark.parametrize("training", [
    "  train_op = tf.train.AdamOptimizer(params[\"learning_rate\"]).minimize(loss, tf.train.get_global_step())\n",
    "  update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n"
    "  with tf.control_dependencies(update_ops):\n"
    "    step = tf.train.get_global_step()\n"
    "    optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n"
    "    train_op = optimizer.minimize(loss, global_step=step)\n",
    "  train_op = tf.contrib.layers.optimize_loss(loss, tf.train.get_global_step(), params[\"learning_rate\"], "
    "\"Adam\")\n",
    "  update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n"
    "  with tf.control_dependencies(update_ops):\n"
    "    train_op = tf.contrib.layers.optimize_loss(loss=loss, global_step=tf.train.get_global_step(),\n"
    "        learning_rate=params[\"learning_rate\"], optimizer=tf.train.AdamOptimizer, update_ops=update_ops)\n",
], ids=["chained, the step positional", "all under the update ops", "optimize_loss", "optimize_loss of a class"])
def test_the_training_statements_as_people_write_them_go(training):
    before = ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n"
              "  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n")
    source = PROGRAM.read_text()
    assert before in source
    code = migrated(source.replace(before, training)).source
    assert "ModelFnModel" in code and "TF1Adam(" in code
    for gone in ("AdamOptimizer", "get_global_step", "control_dependencies", "UPDATE_OPS", "train_op", "contrib"):
        assert gone not in code, gone


@pytest.mark.parametrize("before, after, compiled", [
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  base = params[\"learning_rate\"]\n  rate = base * 2\n  optimizer = tf.train.AdamOptimizer(rate)\n",
     "TF1Adam(learning_rate=params[\"learning_rate\"] * 2, epsilon=1e-08)"),
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  step = tf.train.get_or_create_global_step()\n"
     "  rate = tf.train.exponential_decay(params[\"learning_rate\"], step, decay_steps=10, decay_rate=0.5)\n"
     "  tf.summary.scalar(\"learning_rate\", rate)\n"
     "  optimizer = tf.train.AdamOptimizer(learning_rate=rate)\n",
     "keras.optimizers.schedules.ExponentialDecay(initial_learning_rate=params[\"learning_rate\"], decay_steps=10, "
     "decay_rate=0.5)"),
    ("  optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n",
     "  rate = tf.train.exponential_decay(0.1, tf.train.get_global_step(), 10, 0.5)\n"
     "  optimizer = tf.train.MomentumOptimizer(rate, 0.9)\n",
     "TF1Momentum(learning_rate=keras.optimizers.schedules.ExponentialDecay(initial_learning_rate=0.1, "
     "decay_steps=10, decay_rate=0.5), momentum=0.9)"),
], ids=["arithmetic of params", "a decay schedule of the step, logged", "momentum on a schedule"])
def test_what_the_optimizer_reads_in_the_model_fn_is_carried_to_the_build_function(before, after, compiled):
    source = PROGRAM.read_text()
    assert before in source
    result = migrated(source.replace(before, after))
    code = result.source
    assert "ModelFnModel" in code and compiled in " ".join(code.split()).replace("( ", "(").replace(" )", ")")
    assert ("class TF1Momentum(keras.optimizers.legacy.SGD):" in code) == ("TF1Momentum" in compiled)
    for gone in ("rate = ", "base = ", "get_or_create_global_step", "summary.scalar", "exponential_decay"):
        assert gone not in code, gone
    logged = [f.message for f in result.findings if f.message.startswith("`tf.summary.scalar(")]
    assert logged == (['`tf.summary.scalar("learning_rate", rate)` goes: TF1 wrote the summary to model_dir\'s '
                       "events, which the model kept as written in Keras does not (a keras.callbacks.TensorBoard "
                       "writes the losses)"] if "summary" in after else [])


@pytest.mark.parametrize("unset", ["  metrics = None\n  train_op = None\n", "  train_op = metrics = None\n"],
                         ids=["alone", "chained"])
def test_a_train_op_none_outside_training_goes_with_it(unset):
    """One EstimatorSpec for every mode, as notebooks write it: `train_op` None but in TRAIN goes (of a chained
    assignment, its name), `metrics` stays."""
    source = PROGRAM.read_text()
    start, end = source.index("  if mode == tf.estimator.ModeKeys.EVAL:\n"), source.index("\n\n\ndef main")
    code = migrated(source[:start] + unset + (
        "  if mode == tf.estimator.ModeKeys.EVAL:\n"
        "    accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, 1))\n"
        "    metrics = {\"accuracy\": accuracy, \"mean_logit\": tf.metrics.mean(logits)}\n"
        "  if mode == tf.estimator.ModeKeys.TRAIN:\n"
        "    optimizer = tf.train.AdamOptimizer(params[\"learning_rate\"])\n"
        "    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n"
        "  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)") +
        source[end:]).source
    assert "ModelFnModel" in code and "train_op" not in code
    assert "  metrics = None\n  if mode == \"eval\":\n" in code and 'return {"loss": loss, "metrics": metrics}' in code


def test_an_estimator_spec_held_in_a_name_holds_the_results():
    before = "  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n"
    held = "  spec = tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n  return spec\n"
    source = PROGRAM.read_text()
    assert before in source
    code = migrated(source.replace(before, held)).source
    assert 'spec = {"loss": loss}\n  return spec\n' in code and "EstimatorSpec" not in code
    read = source.replace(before, held.replace("  return spec", "  print(spec.loss)\n  return spec"))
    result = run(read)
    assert result.source == read
    assert any("`spec`, an EstimatorSpec, read other than by `return spec`" in f.message for f in result.findings)


@pytest.mark.parametrize("rate, optimizer, options, compiled, scope", [
    ('params["learning_rate"]', '"Adam"', "", 'TF1Adam(learning_rate=params["learning_rate"], '
     "epsilon=1e-08)", "OptimizeLoss"),
    ("0.1", '"Momentum"', ', name="train"', "keras.optimizers.legacy.SGD(learning_rate=0.1, momentum=0.9)", "train"),
    ("tf.train.exponential_decay(0.1, tf.train.get_global_step(), 10, 0.5)", '"SGD"', "",
     "keras.optimizers.legacy.SGD(learning_rate=keras.optimizers.schedules.ExponentialDecay(initial_learning_rate=0.1, "
     "decay_steps=10, decay_rate=0.5))", "OptimizeLoss"),
], ids=["Adam by name", "Momentum named train", "SGD on a schedule"])
def test_optimize_loss_is_the_optimizer_it_made_its_variables_in_its_scope(rate, optimizer, options, compiled, scope):
    before = MINIMIZED
    source = PROGRAM.read_text()
    assert before in source
    training = OPTIMIZED.replace("RATE", rate).replace("OPTIMIZER", optimizer).replace("OPTIONS", options)
    if "decay" in rate:
        training = f"  rate = {rate}\n" + training.replace(rate, "rate")
    code = migrated(source.replace(before, training)).source
    assert compiled in " ".join(code.split()).replace("( ", "(").replace(" )", ")")
    assert "optimize_loss" not in code and "contrib" not in code
    # TF1's checkpoints hold its optimizer's variables in the scope, and a rate given as a number as a variable,
    # which a restore may meet there.
    assert (f'"{scope}/{{}}/' in code) == (optimizer != '"SGD"')  # plain SGD keeps no slots
    assert f'"{scope}/learning_rate"' in code
    assert (f'targets["{scope}/beta1_power"], targets["{scope}/beta2_power"] = (' in code) == ("Adam" in optimizer)


OPTIMIZE_LOSS_PROGRAM = ROOT / "tests" / "parity_programs" / "optimize_loss_tf1.py"


@pytest.mark.tensorflow
def test_optimize_loss_migrated_trains_as_the_optimizer_it_made_and_carries_on_from_its_checkpoint(tmp_path):
    """TF 2.15 has no tf.contrib: the TF1 side is optimize_loss written out as it built the training (the program's
    docstring); the migrated side is tf-migrate's of the same program calling optimize_loss. Parity from the TF1
    side's checkpoint of step 10: Adam's slots and powers by their names in the OptimizeLoss scope, the step."""
    written_out = OPTIMIZE_LOSS_PROGRAM.read_text()
    start, end = written_out.index("  # optimize_loss {\n"), written_out.index("  # }\n") + len("  # }\n")
    call = ("  train_op = tf.contrib.layers.optimize_loss(loss, tf.train.get_global_step(), "
            "learning_rate=params[\"learning_rate\"], optimizer=\"Adam\")\n")
    printed = parity_of_migration(tmp_path, written_out, written_out[:start] + call + written_out[end:], "--resume",
                                  "10")
    assert re.match(r"PARITY: 20 steps match .*, eval loss matches, \d+ variables, \d+ slots and the step match",
                    printed), printed


@pytest.mark.tensorflow
def test_unnamed_layers_of_a_helper_keep_their_tf1_names_at_every_call(tmp_path):
    """The first call (building the model) and fit's name an unnamed layer alike: `dense`, as TF1 did; the migrated
    program runs, reports the global step it read, and trains as TF1 did."""
    program = ROOT / "tests" / "parity_programs" / "regression_helper_tf1.py"
    (tmp_path / "train.py").write_bytes(program.read_bytes())
    (tmp_path / "train_tf2.py").write_bytes(program.read_bytes())
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    migrate = subprocess.run([TF_MIGRATE, "train_tf2.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert migrate.returncode == 0 and "TFM310" in migrate.stdout, migrate.stdout + migrate.stderr
    run = subprocess.run([sys.executable, "train_tf2.py"], cwd=tmp_path, capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.search(r"^global step 20, eval loss \S+$", run.stdout, re.MULTILINE), run.stdout
    result = subprocess.run([TF_MIGRATE, "parity", "train.py", "train_tf2.py", "--steps", "10"], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert result.stdout.startswith("PARITY: 10 steps match") and "2 variables match" in result.stdout


EXPORTING = ROOT / "examples" / "export_outputs" / "train.py"
SIGNATURES = ('        "serving_default": tf.estimator.export.PredictOutput(predictions),\n'
              '        "classification": tf.estimator.export.ClassificationOutput(scores=probabilities, classes=names),\n')


def test_a_kept_model_fn_predicts_and_exports_its_own_signatures():
    source = EXPORTING.read_text().replace(
        '  print("exported to %s" % path.decode())\n',
        '  print("exported to %s" % path.decode())\n  print(next(estimator.predict(eval_input_fn))["class_ids"])\n')
    code = migrated(source).source
    # Features alone: the model_fn's PREDICT mode, its results the predictions and export outputs.
    assert 'mode = "infer" if labels is None else "train" if training else "eval"' in code
    assert '"classification": {"scores": probabilities, "classes": names}' in code
    assert '"classification": ("classify", "classification"),' in code  # read from the results at that key
    assert 'export_saved_model(model, os.path.join(model_dir, "export", "served"), serving_input_fn)' in code
    assert 'for prediction in' not in code and 'next(predict_examples(model, eval_input_fn()))["class_ids"]' in code
    assert 'predictor(features, training=False)["predictions"]' in code


@pytest.mark.parametrize("signatures, expected", [
    ("", ['"serving_default": ("predict", "serving_default"),']),  # no export_outputs: TF1's default
    ('        "scores": tf.estimator.export.RegressionOutput(value=probabilities[:, 0]),\n',
     ['"scores": ("regress", "scores"),', '"serving_default": ("regress", "scores"),']),  # one: the default too
    ('        SIGNATURE: tf.estimator.export.PredictOutput(predictions),\n',  # SIGNATURE = "scores" above
     ['"scores": ("predict", "scores"),', '"serving_default": ("predict", "scores"),']),
], ids=["default", "one, also the default", "named by a module constant"])
def test_the_signatures_of_a_kept_model_fn_are_tf1s(signatures, expected):
    source = EXPORTING.read_text().replace(SIGNATURES, signatures).replace(
        'CLASSES = ["low"', 'SIGNATURE = "scores"\nCLASSES = ["low"')
    if not signatures:
        source = source.replace(", export_outputs={\n    })", ")")
    code = migrated(source).source
    for line in expected:
        assert line in code


@pytest.mark.parametrize("signatures, message", [
    ('        "predict": tf.estimator.export.PredictOutput(predictions),\n'
     '        "classification": tf.estimator.export.ClassificationOutput(scores=probabilities, classes=names),\n',
     "several export_outputs, none of them the default"),
    ('        "serving_default": MyOutput(predictions),\n', "`MyOutput(predictions)` in export_outputs"),
], ids=["no default", "an output of the program's"])
def test_export_outputs_tier_2_cannot_read_leave_the_program(signatures, message):
    source = EXPORTING.read_text().replace(SIGNATURES, signatures)
    result = run(source)
    assert result.source == source
    assert any(message in f.message for f in result.findings if f.rule == "TFM302"), result.findings


def test_a_kept_model_fn_s_program_asks_for_keras_2_before_importing_tensorflow():
    """From TF 2.16, track_tf1_style_variables and tf.compat.v1.layers exist only with tf_keras behind tf.keras."""
    code = migrated(PROGRAM.read_text()).source
    setting = ('if importlib.metadata.version("keras").startswith("3."):\n'
               '  os.environ["TF_USE_LEGACY_KERAS"] = "1"\n')  # in the program's two-space indentation
    assert code.count(setting) == 1 and "import os\n" in code and "import importlib.metadata\n" in code
    assert code.index("import os\n") < code.index(setting) < code.index("import tensorflow as tf")


def test_a_module_binding_keras_to_tensorflows_keeps_it_in_tier_2():
    """`from tensorflow import keras` is Keras 2 where the module sets TF_USE_LEGACY_KERAS before TensorFlow's import,
    as tier 2 does: the generated code uses that binding (tier 1 would need tf_keras there)."""
    source = PROGRAM.read_text().replace("import tensorflow.compat.v1 as tf\n",
                                         "import tensorflow.compat.v1 as tf\nfrom tensorflow import keras\n", 1)
    code = migrated(source).source
    assert "from tensorflow import keras\n" in code and "tf_keras" not in code
    assert code.index('os.environ["TF_USE_LEGACY_KERAS"] = "1"') < code.index("import tensorflow as tf")
    assert "class ModelFnModel(keras.Model):" in code


def test_a_helper_module_the_kept_model_fn_imports_is_respelled_for_tf2(cli, tmp_path):
    """The net built by a helper of another module that mentions no Estimator (`import tensorflow as tf`, TF1's
    `tf.layers`): the model_fn runs it, so it becomes TF2 code too (else the migrated program fails there), with a
    finding saying why it changed."""
    source = PROGRAM.read_text()
    start, end = source.index("def dense_stack("), source.index("def model_fn(")
    (tmp_path / "layers_lib.py").write_text("import tensorflow as tf\n\n\n" + source[start:end].rstrip() + "\n")
    (tmp_path / "train.py").write_text(source[:start].replace(
        "import numpy as np\n", "import numpy as np\nfrom layers_lib import dense_stack\n") + source[end:])
    code, out, _ = cli("--check", ".")
    assert code == 1 and "layers_lib.py:1:1: TFM310 [numeric] part of the Estimator program driven in train.py" in out
    code, out, _ = cli("--quiet", ".")
    assert code == 0, out
    helper = (tmp_path / "layers_lib.py").read_text()
    assert "tf.compat.v1.layers.dense(" in helper and "tf.compat.v1.cond(" in helper
    assert "class ModelFnModel(keras.Model):" in (tmp_path / "train.py").read_text()


@pytest.mark.parametrize("made, where", [
    (KERAS_DENSE, "layers_lib.py:6:11: TFM302"),
    (('    net = tf.cond(training, lambda: net * 0.9, lambda: net)\n',
      '    net = tf.cond(training, lambda: net * 0.9, lambda: net) * tf.Variable(1.0, name="gain_%d" % index)\n'),
     "layers_lib.py:7:63: TFM302"),
], ids=["Keras layers", "a tf.Variable"])
def test_what_a_helper_module_makes_anew_at_each_call_leaves_the_program(cli, tmp_path, made, where):
    """A helper of another module making Keras layers or tf.Variables: made anew at each call of the Keras model
    running the model_fn, they would train new weights each time (fit refuses a tf.Variable made at each call); the
    program is left, saying where."""
    source = PROGRAM.read_text().replace(*made)
    start, end = source.index("def dense_stack("), source.index("def model_fn(")
    (tmp_path / "layers_lib.py").write_text("import tensorflow as tf\n\n\n" + source[start:end].rstrip() + "\n")
    (tmp_path / "train.py").write_text(source[:start].replace(
        "import numpy as np\n", "import numpy as np\nfrom layers_lib import dense_stack\n") + source[end:])
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    code, out, _ = cli(".")
    assert where in out and "in a module of helpers of a model_fn kept as written" in out
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_a_helper_module_tf2_runs_as_it_is_is_named_with_the_package_it_needs(cli, tmp_path):
    """examples/slim_nets: nets.py binds TF2's `tf` and builds the net with tf_slim. It is part of the program and
    unchanged; its finding says so, and names the package the migrated program needs."""
    example = ROOT / "examples" / "slim_nets"
    for name in ("train.py", "nets.py"):
        (tmp_path / name).write_bytes((example / name).read_bytes())
    code, out, _ = cli("--check", ".")
    assert code == 1 and ("nets.py:2:1: TFM310 [numeric] part of the Estimator program driven in train.py: TF1 code "
                          "its model_fn kept as written (tier 2) runs, unchanged (TF2 runs it as it is); it needs the "
                          "tf-slim package (`pip install tf-slim`)") in out, out


def test_a_module_whose_first_line_imports_tensorflow_reads_its_legacy_keras_switch_after_its_imports():
    """`import tensorflow.compat.v1 as tf` as the module's first line, nothing before it: the imports the switch to
    Keras 2 reads (importlib, os) come before it, or the migrated program stops at its first line."""
    source = PROGRAM.read_text()
    imports = source[source.index("import "):source.index("import tensorflow")]
    source = source.replace(imports, "").replace(source[:source.index("import ")], "")
    assert source.startswith("import tensorflow") and "import argparse" not in source
    source = source.replace("argparse.ArgumentParser()", "__import__('argparse').ArgumentParser()")
    code = run(source, keras="auto").source  # `import keras`, added first
    switch = code.index("if importlib.metadata.version(")
    assert code.index("import importlib.metadata\n") < switch and code.index("import os\n") < switch
    compile(code, "train.py", "exec")


NESTED = ROOT / "tests" / "parity_programs" / "nested_model_fn_tf1.py"
KEPT = ('    logits = tf.layers.dense(net, 1)\n',
        '    logits = tf.layers.dense(net, 1) + tf.get_variable("shift", [1], initializer=tf.zeros_initializer())\n')


@pytest.mark.tensorflow
@pytest.mark.parametrize("tier", [1, 2])
def test_a_model_fn_nested_in_a_function_named_build_model_is_migrated_in_place(tier, tmp_path):
    """The Keras function (and, in tier 2, the class running the model_fn) goes where the model_fn is, inside the
    function, named `build_keras_model` since the module already has a `build_model`; the program runs, and
    parity holds."""
    source = NESTED.read_text()
    if tier == 2:
        assert KEPT[0] in source
        source = source.replace(*KEPT)
    (tmp_path / "train.py").write_text(source)
    (tmp_path / "train_tf2.py").write_text(source)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    migrate = subprocess.run([TF_MIGRATE, "train_tf2.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert migrate.returncode == 0 and ("TFM310" in migrate.stdout) == (tier == 2), migrate.stdout + migrate.stderr
    code = (tmp_path / "train_tf2.py").read_text()
    assert "\n  def build_keras_model(" in code and "\n      model = build_keras_model(" in code
    assert ("\n  class ModelFnModel(keras.Model):\n    \"\"\"" in code) == (tier == 2)
    run = subprocess.run([sys.executable, "train_tf2.py", "--steps", "5"], cwd=tmp_path, capture_output=True,
                         text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.search(r"^global step 5, eval mae \S+$", run.stdout, re.MULTILINE), run.stdout
    result = subprocess.run([TF_MIGRATE, "parity", "train.py", "train_tf2.py", "--steps", "10"], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert result.stdout.startswith("PARITY: 10 steps match"), result.stdout


def test_a_name_of_the_enclosing_function_is_not_taken_by_the_build_function():
    """`build_model` bound in the function around the model_fn (not at module level): the build function is
    `build_keras_model`, and the function's own name stays its."""
    source = (NESTED.read_text().replace("def build_model(args):", "def main(args):")
              .replace("  build_model(parser.parse_args())", "  main(parser.parse_args())")
              .replace("  def train_and_evaluate(args):", "  build_model = None\n\n  def train_and_evaluate(args):"))
    result = migrated(source)
    assert "\n  def build_keras_model(" in result.source and "def build_model(" not in result.source
    assert "  build_model = None\n" in result.source


# The model computed in float64 (gcp_forecasting's LSTM): TF1's layers made float64 variables for float64 inputs.
FLOAT64 = (('dense_stack(features["x"],', 'dense_stack(tf.cast(features["x"], tf.float64),'),
           ('tf.get_variable("logits_w", [params["hidden_units"][-1], 3],',
            'tf.get_variable("logits_w", [params["hidden_units"][-1], 3], dtype=tf.float64,'),
           ("tf.one_hot(labels, 3)", "tf.one_hot(labels, 3, dtype=tf.float64)"))


def in_float64() -> str:
    source = PROGRAM.read_text()
    for before, after in FLOAT64:
        assert source.count(before) == 1, before
        source = source.replace(before, after)
    return source


def test_a_model_fn_computing_in_float64_has_its_layers_take_their_inputs_dtype():
    assert "disable_v2_dtype_behavior" not in run(PROGRAM.read_text()).source
    code = run(in_float64()).source
    build = code[code.index("def build_model("):]
    assert build.index("  tf.compat.v1.keras.layers.disable_v2_dtype_behavior()\n") < build.index(
        "  model = ModelFnModel(params)\n")


@pytest.mark.tensorflow
def test_a_model_fn_computing_in_float64_evaluates_tf1s_checkpoint_as_tf1_did(tmp_path):
    printed = tf1_and_migrated_evaluations(tmp_path, in_float64(), EVALUATED)
    assert printed[1] == pytest.approx(printed[0], rel=1e-6)


LOOKUP_PROGRAM = """\
import tensorflow.compat.v1 as tf

COLUMNS = [tf.feature_column.indicator_column(
    tf.feature_column.categorical_column_with_vocabulary_list("kind", ["a", "b"]))]


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"kind": [["a"], ["b"]]}, [[0.5], [1.0]])).repeat().batch(2)


def model_fn(features, labels, mode):
  logits = tf.layers.dense(tf.feature_column.input_layer(features, COLUMNS), 1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
  loss = tf.reduce_mean(tf.square(logits - labels))
  train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.estimator.Estimator(model_fn, model_dir="out")
estimator.train(input_fn, max_steps=5)
EXPORT
"""


EXPORTED_LOOKUP_PROGRAM = LOOKUP_PROGRAM.replace("EXPORT", """

def serving_input_fn():
  kind = tf.placeholder(tf.string, [None, 1])
  return tf.estimator.export.ServingInputReceiver({"kind": kind}, {"kind": kind})


estimator.export_saved_model("export", serving_input_fn)""")


def test_an_export_of_a_kept_model_fn_making_lookup_tables_is_built_in_a_tf1_graph():
    """A vocabulary column read in the model_fn makes its table as the model runs, outside the traced model, where
    Keras does not track it and tf.saved_model.save refuses it: the export builds the model_fn's PREDICT mode in a
    TF1 graph and writes it with TF1's SavedModel builder (parity: tests/test_parity.py)."""
    code = migrated(EXPORTED_LOOKUP_PROGRAM).source
    assert "def tf1_export_outputs(self, features):" in code and \
        'return model_fn(features, None, "infer")["export_outputs"]' in code
    export = code[code.index("def export_saved_model("):code.index("\n\n\n", code.index("def export_saved_model("))]
    assert "export_outputs = predictor.tf1_export_outputs(features)" in export
    assert "tf.compat.v1.saved_model.Builder(temporary)" in export and "tf.saved_model.save(" not in export
    assert "saved_model_pb2" not in code
    plain = migrated(LOOKUP_PROGRAM.replace("EXPORT", "").replace(
        "tf.feature_column.input_layer(features, COLUMNS)", "features['x']")).source
    assert "tf1_export_outputs" not in plain


def test_an_export_of_a_kept_model_fn_making_lookup_tables_and_keras_layers_leaves_the_program():
    """Keras layers the model_fn makes are tracked by the Keras model, not TF1's graph the export builds."""
    exported = EXPORTED_LOOKUP_PROGRAM.replace(
        "  logits = tf.layers.dense(tf.feature_column.input_layer(features, COLUMNS), 1)",
        "  logits = head(tf.feature_column.input_layer(features, COLUMNS))").replace(
        "def model_fn(", "def head(net):\n  return tf.keras.layers.Dense(1)(net)\n\n\ndef model_fn(")
    result = run(exported)
    assert result.source == exported
    assert any("makes lookup tables as it runs (`tf.feature_column.input_layer(features, COLUMNS)`) and Keras layers"
               in finding.message for finding in result.findings), [f.message for f in result.findings]

