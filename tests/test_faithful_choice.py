"""An optimizer a model_fn kept as written (tier 2) picks at run time from a flag or a parameter
(rewrites/estimator/faithful_choice.py): compiled as the Keras optimizer the same value picks, restored from a TF1
checkpoint by the class chosen; proven by training each choice against TF1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "parity_programs" / "optimizer_flag_tf1.py"
TF_MIGRATE = str(Path(sys.executable).parent / "tf-migrate")
CHAIN = PROGRAM.read_text()[PROGRAM.read_text().index('  if FLAGS.optimizer == "Adam":'):
                            PROGRAM.read_text().index("  train_op = ")]


def migrated(chain: str):
    result = run(PROGRAM.read_text().replace(CHAIN, chain))
    return " ".join(result.source.split()), sorted({f"{f.rule} {f.message}" for f in result.findings})


def test_each_branch_becomes_the_keras_optimizer_the_same_value_picks():
    code, findings = migrated(CHAIN)
    assert ('model.compile( { "Adam": TF1Adam( learning_rate=params["learning_rate"], beta_1=0.9, beta_2=0.999, '
            'epsilon=1e-8), "Adagrad": keras.optimizers.legacy.Adagrad( learning_rate=params["learning_rate"], '
            'initial_accumulator_value=1e-8, epsilon=1e-30), "Momentum": keras.optimizers.legacy.SGD( '
            'learning_rate=params["learning_rate"], momentum=0.95), "ftrl": '
            'keras.optimizers.legacy.Ftrl(learning_rate=params["learning_rate"])}[FLAGS.optimizer])') in code
    assert "if FLAGS.optimizer ==" not in code and "learning_rate = params" not in code
    assert not any(f.split()[0] == "TFM302" for f in findings) and any(f.startswith("TFM310 model_fn") for f in findings)
    # a TF1 checkpoint's slots by the class chosen, its powers where that is TF1's Adam
    assert '"TF1Adam": {"{}/Adam": "m", "{}/Adam_1": "v"}, "Adagrad": {"{}/Adagrad": "accumulator"}' in code
    assert "}[type(model.optimizer).__name__]" in code and 'if hasattr(model.optimizer, "tf1_powers"):' in code


def test_an_else_branch_is_the_choice_for_any_other_value():
    chain = CHAIN.replace('  elif FLAGS.optimizer == "ftrl":\n', "  else:\n")
    code, _ = migrated(chain)
    assert "}.get(FLAGS.optimizer, keras.optimizers.legacy.Ftrl(" in code


def test_a_rate_decayed_by_the_global_step_goes_to_each_choice_as_its_keras_schedule():
    chain = ("  rate = tf.train.exponential_decay(learning_rate, tf.train.get_global_step(), 10, 0.5)\n"
             + CHAIN.replace("learning_rate=learning_rate", "learning_rate=rate").replace(
                 "FtrlOptimizer(learning_rate)", "FtrlOptimizer(rate)").replace(
                 "MomentumOptimizer(learning_rate=rate, momentum=0.95)", "MomentumOptimizer(0.1, momentum=0.95)"))
    code, findings = migrated(chain)
    assert code.count("keras.optimizers.schedules.ExponentialDecay(") == 3 and "exponential_decay" not in code
    assert not any(f.startswith("TFM302") for f in findings), findings
    _, findings = migrated(chain.replace("MomentumOptimizer(0.1, momentum=0.95)", "MomentumOptimizer(rate, 0.95)"))
    assert any(f.startswith("TFM302") and "keep the rate constant" in f for f in findings), findings


@pytest.mark.parametrize("edit, message", [
    (('elif FLAGS.optimizer == "Adagrad"', 'elif params["optimizer"] == "Adagrad"'), "a second optimizer"),
    (('elif FLAGS.optimizer == "Adagrad"', 'elif FLAGS.optimizer.startswith("Ada")'), "a second optimizer"),
    (("momentum=0.95)\n", "momentum=0.95)\n    print(FLAGS.optimizer)\n"), "a second optimizer"),
    (("tf.train.FtrlOptimizer(learning_rate)", 'tf.train.AdagradOptimizer(learning_rate, name="Other")'),
     "two optimizers chosen at run time become Keras' Adagrad with slots TF1 named otherwise"),
    (("tf.train.FtrlOptimizer(learning_rate)", "tf.train.RMSPropOptimizer(learning_rate)"),
     "an optimizer chosen at run time that Keras sets up after compile"),
], ids=["two values read", "not a string compared", "a branch doing more", "one class, two slot names",
        "RMSProp's slots set after compile"])
def test_a_chain_read_otherwise_leaves_the_program_saying_why(edit, message):
    code, findings = migrated(CHAIN.replace(*edit))
    assert any(f.startswith("TFM302 ") and message in f for f in findings), findings


@pytest.mark.tensorflow
def test_each_choice_trains_as_tf1_did_carries_on_from_its_checkpoint_and_an_unknown_one_stops(tmp_path):
    from test_parity import assert_parity, parity

    new = tmp_path / "train.py"
    new.write_text(PROGRAM.read_text())
    subprocess.run([TF_MIGRATE, "-q", str(new)], check=True)
    assert_parity(parity(PROGRAM, new, "--steps", "10", "--", "--optimizer", "Adagrad"))
    resumed = parity(PROGRAM, new, "--steps", "5", "--resume", "5", "--", "--optimizer", "Adam")
    assert_parity(resumed)
    assert "2 variables, 4 slots and the step match" in resumed.stdout, resumed.stdout  # m, v and the two powers
    unknown = subprocess.run([sys.executable, str(new), "--optimizer", "GD", "--model_dir", str(tmp_path / "m")],
                             capture_output=True, text=True, timeout=300)
    assert unknown.returncode != 0 and "KeyError: 'GD'" in unknown.stderr, unknown.stderr[-2000:]


def _two_modules(folder: Path) -> Path:
    """PROGRAM as trainers are laid out: the model_fn, last in model.py, reading the flags train.py defines."""
    text = PROGRAM.read_text()
    start, end = text.index("def model_fn"), text.index("def main")
    folder.mkdir()
    (folder / "model.py").write_text("import tensorflow.compat.v1 as tf\n\nFLAGS = tf.flags.FLAGS\n\n\n"
                                     + text[start:end].rstrip() + "\n")
    (folder / "train.py").write_text(text[:start].replace("rng = np", "import model\n\nrng = np") + text[end:].replace(
        "tf.estimator.Estimator(model_fn,", "tf.estimator.Estimator(model.model_fn,"))
    return folder / "train.py"


def test_a_model_fn_last_in_its_module_gets_its_keras_model_after_it(tmp_path):
    _two_modules(tmp_path / "program")
    subprocess.run([TF_MIGRATE, "-q", str(tmp_path / "program")], check=True, capture_output=True)
    model = (tmp_path / "program" / "model.py").read_text()
    assert model.index("def model_fn(") < model.index("\n\n\nclass ModelFnModel(keras.Model):") < model.index(
        "}[FLAGS.optimizer])\n  return model\n")


@pytest.mark.tensorflow
def test_the_choice_in_another_module_than_the_flags_trains_as_tf1_did(tmp_path):
    from test_parity import assert_parity, parity

    old, new = _two_modules(tmp_path / "old"), _two_modules(tmp_path / "new")
    subprocess.run([TF_MIGRATE, "-q", str(new.parent)], check=True, capture_output=True)
    assert_parity(parity(old, new, "--steps", "10", "--", "--optimizer", "ftrl"))
