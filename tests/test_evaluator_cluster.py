"""A migrated ``train_and_evaluate`` program on TF1's cluster layout: chief, worker, ps and an evaluator.

Estimator users run ``train_and_evaluate`` with a ``TF_CONFIG`` cluster of a chief, workers, ps tasks and an
evaluator task that evaluates each new checkpoint until the one of ``max_steps``. Here the migrated
examples/adam_schedule runs that way: one process per task on localhost, each ``python train_tf2.py`` with its
own ``TF_CONFIG`` and one shared ``--model_dir``.

ParameterServerStrategy's coordinator connects to every task of the cluster it is given, and an evaluator runs no
server: with the evaluator in that cluster the chief waits for it forever (tensorflow/tensorflow#46169). The
chief must train to ``max_steps`` and end; the evaluator must evaluate the chief's checkpoints, beside the
cluster, up to the last one, then end; ps and worker tasks serve until they are stopped, as TF1's ps tasks did.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ports import free_port

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "portpicker")):
    pytest.skip("needs the parity extra (tensorflow, portpicker)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

PROGRAM = Path(__file__).resolve().parent.parent / "examples" / "adam_schedule" / "train_tf2.py"
FIRST_STEPS, MAX_STEPS = 2, 4  # a first run's checkpoint, then the cluster trains on to max_steps
TIMEOUT = 240  # seconds for a task to reach a state: 25 at most on 2 busy cores (the test: 35-65 s)
FOUND = re.compile(r"Found new checkpoint at \S*ckpt-(\d+)$", re.MULTILINE)  # tf.train.checkpoints_iterator's
EVALUATION = re.compile(r"^1/1 - ", re.MULTILINE)  # evaluate's line (verbose=2) for EvalSpec(steps=1)
EVAL_LOSS = re.compile(r"^eval loss: (\S+)$", re.MULTILINE)


class Task:
    """One task of the cluster: `python PROGRAM ARGUMENTS` with its TF_CONFIG, its output in a log file."""

    def __init__(self, job: str, cluster: dict, arguments: list[str], folder: Path):
        self.job, self.log = job, folder / f"{job}.log"
        environment = {**os.environ, "PYTHONUNBUFFERED": "1",
                       "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": job, "index": 0}})}
        with open(self.log, "w") as log:
            self.process = subprocess.Popen([sys.executable, str(PROGRAM), *arguments], env=environment,
                                            stdout=log, stderr=subprocess.STDOUT, cwd=folder)

    @property
    def output(self) -> str:
        return self.log.read_text()

    def wait_for(self, pattern: re.Pattern, timeout: float = TIMEOUT) -> re.Match:
        """Polls the task's output until PATTERN appears; fails if the task ends first or the time is up."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = pattern.search(self.output)
            if match:
                return match
            assert self.process.poll() is None, f"{self.job} ended ({self.process.returncode}):\n{self.tail()}"
            time.sleep(0.2)
        pytest.fail(f"{self.job}: no {pattern.pattern!r} within {timeout} s:\n{self.tail()}")

    def wait(self, timeout: float = TIMEOUT) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.job} did not end within {timeout} s (hung?):\n{self.tail()}")

    def tail(self) -> str:
        return self.output[-4000:]


def run_locally(arguments: list[str], folder: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    run = subprocess.run([sys.executable, str(PROGRAM), *arguments], env=environment, cwd=folder,
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-4000:]


def test_chief_trains_and_the_evaluator_evaluates_its_checkpoints_to_the_last(tmp_path):
    model_dir = tmp_path / "model"
    checkpoints = model_dir / "tf2"
    cluster = {job: [f"127.0.0.1:{free_port()}"] for job in ("chief", "worker", "ps", "evaluator")}
    arguments = ["--train_steps", str(MAX_STEPS), "--model_dir", str(model_dir)]
    tasks = []
    try:
        serving = [Task(job, cluster, arguments, tmp_path) for job in ("ps", "worker")]
        tasks = list(serving)
        # A checkpoint the evaluator finds at once: it must evaluate it and carry on to the one of max_steps.
        run_locally(["--train_steps", str(FIRST_STEPS), "--model_dir", str(model_dir)], tmp_path)
        assert (checkpoints / f"ckpt-{FIRST_STEPS}.index").exists()
        evaluator = Task("evaluator", cluster, arguments, tmp_path)
        tasks.append(evaluator)
        assert evaluator.wait_for(FOUND).group(1) == str(FIRST_STEPS)
        evaluator.wait_for(EVALUATION)
        started = time.monotonic()
        chief = Task("chief", cluster, arguments, tmp_path)
        tasks.append(chief)
        assert chief.wait() == 0, chief.tail()
        assert evaluator.wait() == 0, evaluator.tail()
        print(f"chief and evaluator done {time.monotonic() - started:.1f} s after the chief started")
        for task in serving:
            assert task.process.poll() is None, f"{task.job} ended:\n{task.tail()}"  # serving, not crashed
            task.process.terminate()
        assert [task.wait(timeout=30) for task in serving] == [-signal.SIGTERM] * 2
    finally:
        for task in tasks:
            if task.process.poll() is None:
                task.process.kill()
                task.process.wait()

    # The chief trained the steps left, on the cluster, and saved the checkpoint of max_steps.
    steps = MAX_STEPS - FIRST_STEPS
    assert f"{steps}/{steps} - " in chief.output and "ParameterServerStrategy" in chief.output, chief.tail()
    assert (checkpoints / f"ckpt-{MAX_STEPS}.index").exists()
    # The evaluator trained nothing: it evaluated each checkpoint it found once, the last the one of max_steps.
    found = [int(step) for step in FOUND.findall(evaluator.output)]
    assert found[0] == FIRST_STEPS and found[-1] == MAX_STEPS and found == sorted(set(found)), (found, evaluator.tail())
    assert len(EVALUATION.findall(evaluator.output)) == len(found), evaluator.tail()
    assert f"{steps}/{steps} - " not in evaluator.output, evaluator.tail()
    assert sorted(path.name for path in checkpoints.glob("*.index")) == [f"ckpt-{FIRST_STEPS}.index",
                                                                        f"ckpt-{MAX_STEPS}.index"]
    # Both evaluated the final weights on the same batch: the same loss.
    (chief_loss,), (evaluator_loss,) = EVAL_LOSS.findall(chief.output), EVAL_LOSS.findall(evaluator.output)
    assert float(evaluator_loss) == pytest.approx(float(chief_loss), rel=1e-5)


REGRESSION = (Path(__file__).resolve().parent.parent / "examples" / "regression" / "train.py").read_text()


STOP = "if int(model.optimizer.iterations) >= 20:\n      break\n"


@pytest.mark.parametrize("edits, stop", [
    ({}, STOP),
    # One Keras epoch per checkpoint: the last is still the one of max_steps.
    ({"log_step_count_steps=1)": "log_step_count_steps=1, save_checkpoints_steps=5)"}, STOP),
    # No max_steps (one pass over an input that ends): TF1's evaluator evaluated until it was stopped.
    ({"max_steps=20)": ")", ".repeat().batch(1)": ".batch(1)"}, None),
], ids=["max_steps", "a checkpoint every 5 steps", "no max_steps"])
def test_generated_evaluator_stops_at_the_checkpoint_of_max_steps(edits, stop):
    from helpers import run

    source = REGRESSION
    for before, after in edits.items():
        assert before in source
        source = source.replace(before, after)
    code = run(source).source
    start = code.index('if task_type == "evaluator":')
    evaluator = code[start:code.index("\nelse:", start)]
    assert "tf.train.checkpoints_iterator(checkpoints.directory)" in evaluator, evaluator
    assert "model.evaluate(eval_dataset, steps=3, verbose=2)" in evaluator and "fit(" not in evaluator, evaluator
    assert (stop in evaluator) if stop else ("break" not in evaluator), evaluator
    # The chief's cluster is TF_CONFIG's without the evaluator, whose task returns before anything serves.
    bootstrap = code[code.index("def strategy_for_this_task"):code.index("ParameterServerStrategy(")]
    assert 'jobs.pop("evaluator", None)' in bootstrap
    assert bootstrap.index('== "evaluator":') < bootstrap.index("tf.distribute.Server(")


def test_a_master_task_trains_as_the_chief(tmp_path):
    """A kubeflow TFJob's Master, TF1's older name of the chief that RunConfig took as one: ParameterServerStrategy
    refuses the name, so every task's bootstrap calls it chief."""
    cluster = {job: [f"127.0.0.1:{free_port()}"] for job in ("master", "worker", "ps")}
    arguments = ["--train_steps", str(FIRST_STEPS), "--model_dir", str(tmp_path / "model")]
    tasks = []
    try:
        tasks = [Task(job, cluster, arguments, tmp_path) for job in ("ps", "worker", "master")]
        assert tasks[-1].wait() == 0, tasks[-1].tail()
        assert all(task.process.poll() is None for task in tasks[:2]), [task.tail() for task in tasks[:2]]
    finally:
        for task in tasks:
            if task.process.poll() is None:
                task.process.kill()
                task.process.wait()
    assert f"{FIRST_STEPS}/{FIRST_STEPS} - " in tasks[-1].output, tasks[-1].tail()
