"""TFM103 where the training loop has no step limit (`while not sv.should_stop():` over an input that does not end,
tensorflow/ecosystem's docker MNIST trainer): the migrated loop schedules steps until the program is stopped, as
TF1 trained until its tasks were, and its chief saves a checkpoint on TF1's session's timer (unlimited.py)."""

from __future__ import annotations

from pathlib import Path

from helpers import run
from test_between_graph_shapes import SUPERVISOR, manual, migrated

PS_CLUSTER = (Path(__file__).resolve().parent.parent / "examples" / "ps_cluster" / "train.py").read_text()
LIMITED = "while not sv.should_stop() and local_step < FLAGS.train_steps:"


def unlimited(source: str = SUPERVISOR) -> str:
    assert source.count(LIMITED) == 1
    return source.replace(LIMITED, "while not sv.should_stop():")


def test_a_loop_without_a_step_limit_trains_until_stopped_saving_on_tf1_s_timer():
    result = migrated(unlimited())
    code = result.source
    assert run(code).source == code, "a second run changes nothing"
    assert "\nimport time\n" in code
    assert ("    saved_at = time.time()\n    while True:\n"
            "      if time.time() - saved_at >= 600:  # TF1's session saved on this timer\n"
            "        manager.save()\n        saved_at = time.time()\n"
            "      loss_value = coordinator.schedule(") in code, code
    assert "coordinator.join()" not in code and "sv." not in code
    (note,) = [f for f in result.findings if f.rule == "TFM103" and "no step limit" in f.message]
    assert note.message.endswith("its chief saves a checkpoint every 600 seconds, as TF1's session did")


def test_the_timer_is_the_session_s_own_and_a_session_saving_nothing_saves_nothing():
    code = migrated(unlimited().replace("save_model_secs=600)", "save_model_secs=60)")).source
    assert "if time.time() - saved_at >= 60:" in code
    result = migrated(unlimited().replace("logdir=logdir,\n", "\n"))
    assert "while True:\n" in result.source and "saved_at" not in result.source and "manager" not in result.source
    assert any(f.message.endswith("and so does the migrated loop") for f in result.findings)


def test_a_session_saving_every_n_steps_without_a_step_limit_leaves_the_program():
    source = PS_CLUSTER.replace("  hooks = [tf1.train.StopAtStepHook(last_step=flags.train_steps)]\n", "")
    source = source.replace("config=config, hooks=hooks)", "config=config, save_checkpoint_steps=100)")
    line, message = manual(source)
    assert "save_checkpoint_steps=100" in line
    assert "TF1's session saved a checkpoint every `100` steps: say when training stops" in message, message


def test_synchronous_steps_without_a_step_limit_leave_the_program():
    """Every worker would save on a timer of its own, out of step with the others."""
    example = (Path(__file__).resolve().parent.parent / "examples" / "sync_replicas" / "train.py").read_text()
    source = example.replace(",\n           tf.train.StopAtStepHook(last_step=TRAIN_STEPS)]", "]")
    assert source != example
    line, message = manual(source)
    assert line.strip() == "while not sess.should_stop():"
    assert "the loop has no step limit, its steps synchronous" in message, message
