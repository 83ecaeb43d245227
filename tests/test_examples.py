"""The TF1 programs in examples/ run, train, and print the same losses every time.

Each example runs as a child process of ``sys.executable`` in an empty scratch
folder that is also its TMPDIR (so we can check it cleans up after itself),
with TF_CONFIG removed (so it trains locally). Per-step losses are parsed from
its output, in one of two formats:

* Estimator examples: ``RunConfig(log_step_count_steps=1)`` with INFO logging
  makes the Estimator log every step on stderr:
  ``INFO:tensorflow:loss = 0.8455549, step = 3 (0.001 sec)``
* ps_cluster, supervisor_flags, mts_scaffold, sync_replicas and mnist_replica print the loss they fetched on stdout:
  ``step 3 loss 2.1360164``

Both loss values are numpy float32 printed with ``str``: the shortest text that
reads back as the same float32. The loss is the one computed before the step's
update. The step number is the global step read in the same ``session.run``
that increments it, so now and then it is one ahead: tests rely on the order
of the lines and compare losses, not step numbers.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import GENERATED_EXAMPLES, run
from ports import free_port

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "portpicker")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, portpicker)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
IN_PROCESS_CLUSTER = Path(__file__).resolve().parent / "in_process_cluster.py"  # an absolute program path
TIMEOUT = 120  # seconds per program; each takes about 5 on 2 CPU cores
TRAIN_STEPS = {"regression": 20, "momentum": 20, "rmsprop": 20, "classifier": 30, "partitioned": 30,
               "dropout_batchnorm": 30, "embedding": 30, "manual": 20, "ps_cluster": 20, "flags_app": 20,
               "supervisor_flags": 20, "sync_replicas": 20, "premade_iris": 20,
               "linear_weighted": 20, "census_wide_deep": 20, "adam_schedule": 30, "exporter": 20,
               "export_outputs": 20, "helper_loop": 30, "slim_nets": 30,
               "model_choice": 30, "recommender": 30, "mts_scaffold": 20,
               # mnist_replica's loop breaks on the global step its run read before that run's update: 21 runs.
               "mnist_replica": 21}
# TPUEstimator logs no loss per step: its example is checked by its eval loss.
KERAS_STEPS = {**TRAIN_STEPS, "tpu_estimator": 20}
SINGLE_FILE_EXAMPLES = sorted(KERAS_STEPS)
ASYNCHRONOUS = ("ps_cluster", "supervisor_flags", "mts_scaffold", "mnist_replica")  # print their losses; migrated by TFM103 to a
# coordinator
BETWEEN_GRAPH = (*ASYNCHRONOUS, "sync_replicas")  # and SyncReplicasOptimizer's, to MultiWorkerMirroredStrategy
# The migrated loop trains as many steps as it says, where mnist_replica's TF1 loop ran once more (TFM106).
MIGRATED_STEPS = {**TRAIN_STEPS, "mnist_replica": 20}
PACKAGE = EXAMPLES / "trainer_package"  # trainer/ in tf1/ and, migrated, in tf2/: run as `python -m trainer.task`

ESTIMATOR_LINE = re.compile(r"^INFO:tensorflow:loss = (\S+), step = (\d+)", re.MULTILINE)
PRINTED_LINE = re.compile(r"^step (\d+) loss (\S+)$", re.MULTILINE)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    leftovers: list[str]  # what the program left in its cwd and TMPDIR

    @property
    def steps(self) -> list[int]:
        """The step numbers logged or printed, in order."""
        logged = [int(step) for _, step in ESTIMATOR_LINE.findall(self.stderr)]
        return logged + [int(step) for step, _ in PRINTED_LINE.findall(self.stdout)]

    @property
    def losses(self) -> list[float]:
        """The loss of each training step, in order."""
        logged = [float(loss) for loss, _ in ESTIMATOR_LINE.findall(self.stderr)]
        return logged + [float(loss) for _, loss in PRINTED_LINE.findall(self.stdout)]


def run_example(name: str, *args: str, root: Path = EXAMPLES, program: str = "train.py") -> Run:
    """Run <root>/<name>/<program> with ``args``; raises TimeoutExpired (after killing it) on a hang."""
    return run_command([str(root / name / program), *args])


def run_command(arguments: list[str], folder: Path | None = None) -> Run:
    """`python ARGUMENTS` in an empty scratch folder that is also its TMPDIR (or, for `-m`, in ``folder``, the
    package's root, with PYTHONPATH naming it), TF_CONFIG removed."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
        env["TMPDIR"] = scratch
        if folder is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
        proc = subprocess.run([sys.executable, *arguments], cwd=scratch, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT)
        return Run(proc.returncode, proc.stdout, proc.stderr, sorted(os.listdir(scratch)))


@functools.lru_cache(maxsize=None)
def first_run(name: str) -> Run:
    """One run per example without arguments, shared by the tests below."""
    return run_example(name)


def assert_trained(run: Run, train_steps: int) -> None:
    assert run.returncode == 0, run.stderr[-3000:]
    losses = run.losses
    assert len(losses) == train_steps, run.stdout + run.stderr[-3000:]
    assert run.steps == sorted(run.steps) and 0 <= run.steps[0] <= run.steps[-1] <= train_steps, run.steps
    assert all(math.isfinite(loss) for loss in losses), losses
    third = train_steps // 3
    assert sum(losses[-third:]) < sum(losses[:third]), losses


@pytest.mark.parametrize("name", sorted(TRAIN_STEPS))
def test_example_trains_and_cleans_up(name):
    run = first_run(name)
    assert_trained(run, TRAIN_STEPS[name])
    assert run.leftovers == []


@pytest.mark.parametrize("name", sorted(TRAIN_STEPS))
def test_example_is_deterministic(name):
    assert run_example(name).losses == first_run(name).losses


def test_classifier_predicts():
    predictions = [line for line in first_run("classifier").stdout.splitlines() if line.startswith("prediction:")]
    assert len(predictions) == 3


def run_as_cluster(program: str, workers: int, tmp_path: Path, example: str = "ps_cluster") -> Run:
    """examples/EXAMPLE/PROGRAM as one process per task on localhost: ps 0 and workers 1.. in the background,
    worker 0 (TF1's chief) in the foreground. The background tasks must serve until they are stopped."""
    ports = [free_port() for _ in range(1 + workers)]
    hosts = [f"--ps_hosts=localhost:{ports[0]}", "--worker_hosts=" + ",".join(f"localhost:{p}" for p in ports[1:])]
    serving = []
    try:
        for job, index in [("ps", 0), *(("worker", i) for i in range(1, workers))]:
            with open(tmp_path / f"{job}{index}.log", "w") as log:
                serving.append(subprocess.Popen(
                    [sys.executable, str(EXAMPLES / example / program), f"--job_name={job}",
                     f"--task_index={index}", *hosts], stdout=log, stderr=subprocess.STDOUT))
        chief = run_example(example, "--job_name=worker", "--task_index=0", *hosts, program=program)
        for task in serving:
            assert task.poll() is None, [log.read_text() for log in tmp_path.glob("*.log")]  # serving, not crashed
    finally:
        for task in serving:
            task.terminate()
        for task in serving:
            try:
                assert task.wait(timeout=30) == -signal.SIGTERM  # stopped by the signal, not by an error
            except subprocess.TimeoutExpired:
                task.kill()
                task.wait()
                raise
    return chief


@pytest.mark.parametrize("example", BETWEEN_GRAPH)
def test_between_graph_example_as_separate_processes(tmp_path, example):
    worker = run_as_cluster("train.py", 1, tmp_path, example)
    assert_trained(worker, TRAIN_STEPS[example])
    # Same graph, seed and data as the in-process cluster: the same losses.
    assert worker.losses == first_run(example).losses


# -- the examples after `tf-migrate` ----------------------------------------------


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    """examples/ as `tf-migrate --out` writes it."""
    from migrator.cli import main

    out = tmp_path_factory.mktemp("migrated")
    assert main(["--out", str(out), "--quiet", str(EXAMPLES)]) == 1  # examples/manual stays manual
    return out


def test_the_current_rules_change_the_estimator_cluster_and_partitioner_examples(migrated):
    changed = {name for name in SINGLE_FILE_EXAMPLES
               if (migrated / name / "train.py").read_bytes() != (EXAMPLES / name / "train.py").read_bytes()}
    assert changed == {*GENERATED_EXAMPLES, *BETWEEN_GRAPH}  # not manual
    assert "FixedShardsPartitioner(2)" in (migrated / "partitioned" / "train.py").read_text()
    assert "ClusterCoordinator(strategy)" in (migrated / "ps_cluster" / "train.py").read_text()


@pytest.mark.parametrize("name", [*GENERATED_EXAMPLES, *BETWEEN_GRAPH])
def test_generated_tf2_example_is_what_the_tool_produces(migrated, name):
    """examples/NAME/train_tf2.py is checked in as `tf-migrate` writes it; regenerate it with
    `tf-migrate --out OUT examples/` and copy OUT/NAME/train.py over it."""
    assert (migrated / name / "train.py").read_text() == (EXAMPLES / name / "train_tf2.py").read_text()


def test_a_second_run_over_the_migrated_examples_changes_nothing(migrated, capsys):
    from migrator.cli import main

    capsys.readouterr()
    assert main(["--check", str(migrated)]) == 1  # examples/manual's finding is left
    assert ": 0 would change," in capsys.readouterr().err
    for name in GENERATED_EXAMPLES:
        assert "ParameterServerStrategy" in (migrated / name / "train.py").read_text()


def assert_keras_trained(run: Run, name: str) -> None:
    """Keras' epoch lines say every step ran; the program evaluated and cleaned up."""
    assert run.returncode == 0, run.stderr[-3000:]
    steps = KERAS_STEPS[name]
    output = run.stdout + run.stderr
    assert f"{steps}/{steps} - " in output, output[-3000:]
    assert "eval" in run.stdout and run.leftovers == []


@pytest.mark.parametrize("name", GENERATED_EXAMPLES)
def test_generated_tf2_example_trains_locally_and_cleans_up(name):
    assert_keras_trained(run_example(name, program="train_tf2.py"), name)


@pytest.mark.parametrize("name", GENERATED_EXAMPLES)
def test_generated_tf2_example_trains_on_an_in_process_cluster(name):
    """As the chief of 1 worker and 2 ps, its own ParameterServerStrategy and callbacks, nothing patched."""
    run = run_example(name, str(EXAMPLES / name / "train_tf2.py"), program=str(IN_PROCESS_CLUSTER))
    assert_keras_trained(run, name)


def eval_line(run: Run) -> str:
    assert run.returncode == 0, run.stderr[-3000:]
    return re.search(r"^eval loss: \S+$", run.stdout, re.MULTILINE).group(0)


def test_tpu_estimator_example_trains_without_a_tpu_the_same_every_time():
    first, again = run_example("tpu_estimator"), run_example("tpu_estimator")
    assert eval_line(first) == eval_line(again) and first.leftovers == []
    assert "Saving dict for global step 20:" in first.stderr


# -- the trainer package: trainer/task.py and trainer/model.py, run as `python -m trainer.task` --------------


def run_package(version: str, *args: str, chief: bool = False) -> Run:
    """examples/trainer_package/VERSION as `python -m trainer.task ARGS` (as the chief of an in-process cluster)."""
    arguments = ["-m", "trainer.task", *args]
    return run_command([str(IN_PROCESS_CLUSTER), *arguments] if chief else arguments, folder=PACKAGE / version)


def test_trainer_package_trains_from_its_command_line():
    run = run_package("tf1", "--train-steps", "15")
    assert_trained(run, 15)
    assert run.losses == run_package("tf1", "--train-steps", "15").losses and run.leftovers == []
    assert re.search(r"^eval rmse: \S+$", run.stdout, re.MULTILINE)


def test_migrated_trainer_package_is_what_the_tool_produces(migrated):
    """Both modules of the program migrated together: task.py drives, model.py holds build_model."""
    for name in ("__init__.py", "task.py", "model.py"):
        assert (migrated / "trainer_package" / "tf1" / "trainer" / name).read_text() == \
            (PACKAGE / "tf2" / "trainer" / name).read_text()
    # and the migrated package is TF2 already: nothing left to change
    assert (migrated / "trainer_package" / "tf2").exists()


@pytest.mark.parametrize("chief", [False, True], ids=["locally", "as chief of an in-process cluster"])
def test_migrated_trainer_package_trains_from_the_same_command_line(chief):
    run = run_package("tf2", "--train-steps", "15", "--batch-size", "4", chief=chief)
    assert run.returncode == 0, run.stderr[-3000:]
    output = run.stdout + run.stderr
    assert "15/15 - " in output and re.search(r"^eval rmse: \S+$", run.stdout, re.MULTILINE), output[-3000:]
    assert run.leftovers == []


def test_manual_example_is_left_byte_for_byte_with_its_finding(migrated):
    from migrator.engine import migrate
    from rewrites import RULES

    original = EXAMPLES / "manual" / "train.py"
    assert (migrated / "manual" / "train.py").read_bytes() == original.read_bytes()
    (finding,) = migrate(original.read_text(), str(original), frozenset(RULES)).findings
    assert finding.rule == "TFM302" and "SessionRunHook" in finding.message
    assert "hooks=[StepPrinter()]" in original.read_text().splitlines()[finding.line - 1]


@pytest.mark.parametrize("example", BETWEEN_GRAPH)
def test_migrated_between_graph_example_trains_in_one_process_on_its_own_cluster(example):
    """No arguments: the program's own in-process cluster (1 ps, 1 worker), its worker 0 driving it."""
    run = run_example(example, program="train_tf2.py")
    assert_trained(run, MIGRATED_STEPS[example])
    assert run.leftovers == []


@pytest.mark.parametrize("example", ASYNCHRONOUS)
def test_migrated_between_graph_example_as_separate_ps_worker_and_chief_processes(tmp_path, example):
    """The launch commands of the TF1 program: ps 0 and worker 1 serve, worker 0 (TF1's chief) drives them."""
    chief = run_as_cluster("train_tf2.py", 2, tmp_path, example)
    assert_trained(chief, MIGRATED_STEPS[example])


def run_synchronous(program: Path, workers: int, tmp_path: Path, *args: str) -> list[Run]:
    """PROGRAM as ps 0 and workers 0..N-1 on localhost, all started together from the TF1 command line (and
    ``args``); each worker must end by itself, and so must the ps task of a migrated program (TF1's serves until
    stopped). The workers' runs, in task order."""
    ports = [free_port() for _ in range(1 + workers)]
    hosts = [f"--ps_hosts=localhost:{ports[0]}", "--worker_hosts=" + ",".join(f"localhost:{p}" for p in ports[1:])]
    tasks = [("ps", 0), *(("worker", i) for i in range(workers))]
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    logs = [open(tmp_path / f"{job}{index}.out", "w+") for job, index in tasks]
    processes = [subprocess.Popen([sys.executable, str(program), f"--job_name={job}", f"--task_index={index}",
                                   *hosts, *args], stdout=log, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
                 for (job, index), log in zip(tasks, logs)]
    try:
        errors = [process.communicate(timeout=TIMEOUT)[1] for process in processes[1:]]
        if program.name == "train.py":
            assert processes[0].poll() is None, processes[0].communicate()[1][-3000:]  # serving, not crashed
            processes[0].terminate()
        assert processes[0].wait(timeout=TIMEOUT) == (-signal.SIGTERM if program.name == "train.py" else 0)
    finally:
        for process in processes:
            process.kill()
    runs = []
    for process, log, error in zip(processes[1:], logs[1:], errors):
        log.seek(0)
        runs.append(Run(process.returncode, log.read(), error, []))
    for log in logs:
        log.close()
    return runs


VALIDATION = re.compile(r"^After 20 training step\(s\), validation cross entropy = (\S+)$", re.MULTILINE)


def test_mnist_replica_as_a_ps_and_two_asynchronous_workers(tmp_path):
    """Each worker trains until the global step it read reaches 20, then validates, and ends by itself. Worker 1
    waits for the chief to initialize the variables (looking every second), by which time the chief may have
    trained most steps: how the steps fall to the workers varies."""
    workers = run_synchronous(EXAMPLES / "mnist_replica" / "train.py", 2, tmp_path)
    for worker in workers:
        assert worker.returncode == 0, worker.stderr[-3000:]
        assert worker.steps == sorted(worker.steps) and worker.steps[-1] >= 20, worker.steps
        assert all(math.isfinite(loss) for loss in worker.losses) and len(VALIDATION.findall(worker.stdout)) == 1
    assert sum(len(worker.losses) for worker in workers) >= 20


def test_mnist_replica_as_a_ps_and_two_synchronous_workers_trains_the_same_every_time(tmp_path):
    """--sync_replicas: one update of the two workers' gradients (of their own batches) per step; each worker
    reads every step and prints the same losses and validation run after run."""
    runs = [run_synchronous(EXAMPLES / "mnist_replica" / "train.py", 2, tmp_path, "--sync_replicas")
            for _ in range(2)]
    for worker in runs[0]:
        assert_trained(worker, TRAIN_STEPS["mnist_replica"])
        assert worker.steps == list(range(21)) and len(VALIDATION.findall(worker.stdout)) == 1
    assert runs[0][0].losses != runs[0][1].losses
    assert [(w.losses, VALIDATION.findall(w.stdout)) for w in runs[0]] == [
        (w.losses, VALIDATION.findall(w.stdout)) for w in runs[1]]


def test_migrated_mnist_replica_with_sync_replicas_as_two_workers_training_every_step_together(tmp_path):
    """--sync_replicas chooses MultiWorkerMirroredStrategy: both workers run steps 1..20, the ps ends at once,
    and both validate the same trained variables."""
    workers = run_synchronous(EXAMPLES / "mnist_replica" / "train_tf2.py", 2, tmp_path, "--sync_replicas")
    for worker in workers:
        assert_trained(worker, MIGRATED_STEPS["mnist_replica"])
        assert worker.steps == list(range(1, 21))
    assert len({tuple(VALIDATION.findall(worker.stdout)) for worker in workers}) == 1


def test_migrated_sync_replicas_example_as_separate_worker_processes_and_a_ps_that_ends(tmp_path):
    """The TF1 launch commands, 2 workers: every worker trains the same steps, together; the ps task ends at
    once, with nothing to serve."""
    for worker in run_synchronous(EXAMPLES / "sync_replicas" / "train_tf2.py", 2, tmp_path):
        assert_trained(worker, TRAIN_STEPS["sync_replicas"])
        assert worker.steps == list(range(1, 21))


def test_synchronous_workers_keep_the_first_workers_checkpoints_and_resume_from_them(tmp_path):
    """Every MultiWorkerMirroredStrategy worker saves (the save is collective): into one folder they would race.
    The first worker's go to the program's folder, the others' to scratch; a second run resumes from them."""
    source = (EXAMPLES / "sync_replicas" / "train.py").read_text()
    with_checkpoints = source.replace("stop_grace_period_secs=1)", 'stop_grace_period_secs=1, checkpoint_dir="ckpts")')
    assert with_checkpoints != source
    program = tmp_path / "train_tf2.py"
    program.write_text(run(with_checkpoints).source)
    for worker in run_synchronous(program, 2, tmp_path):
        assert_trained(worker, TRAIN_STEPS["sync_replicas"])
    assert sorted(os.listdir(tmp_path / "ckpts")) == ["tf2"]
    assert {"checkpoint", "ckpt-1.index"} <= set(os.listdir(tmp_path / "ckpts" / "tf2"))
    again = run_synchronous(program, 2, tmp_path)
    assert [(worker.returncode, worker.steps) for worker in again] == [(0, []), (0, [])]
    assert "ckpt-2.index" in os.listdir(tmp_path / "ckpts" / "tf2")


@pytest.mark.parametrize("program", ["train.py", "train_tf2.py"])
def test_two_synchronous_workers_train_as_one_worker_on_both_their_batches(program, tmp_path):
    """SyncReplicasOptimizer, and the MultiWorkerMirroredStrategy migration, average the workers' gradients: the
    mean of 2 workers' losses (8 rows each) is, step by step, the loss of 1 worker reading both (16 rows)."""
    source = (EXAMPLES / "sync_replicas" / program).read_text()
    one_worker = tmp_path / "one_worker.py"
    one_worker.write_text(source.replace("\nBATCH_SIZE = 8\n", "\nBATCH_SIZE = 16\n"))
    workers = run_synchronous(EXAMPLES / "sync_replicas" / program, 2, tmp_path)
    alone = run_command([str(one_worker)])
    assert_trained(alone, 20)
    assert [len(worker.losses) for worker in workers] == [20, 20]
    mean = [(a + b) / 2 for a, b in zip(workers[0].losses, workers[1].losses)]
    assert mean == pytest.approx(alone.losses, rel=1e-5)
    assert workers[0].losses != pytest.approx(alone.losses, rel=1e-3)  # each worker's own batch, not both


def test_tf_0_11s_summing_sync_replicas_migrated_trains_as_one_worker_on_both_batches_at_twice_the_rate(tmp_path):
    """TF 0.11's SyncReplicasOptimizer (given replica_id) summed the workers' gradients: 2 workers' mean losses of 8
    rows each, summed, are twice the mean loss of 16 rows, whose Momentum update is one worker's at twice the
    learning rate. The summing migration's 2 workers' mean loss is, step by step, that of the averaging migration's
    one worker (TF1's update: test_parity.test_sync_replicas_program_and_its_multi_worker_mirrored_migration_match_
    step_by_step) reading both batches so."""
    summing = tmp_path / "summing_tf2.py"
    summing.write_text(run(edited((EXAMPLES / "sync_replicas" / "train.py").read_text(), (
        "total_num_replicas=num_workers)",
        "total_num_replicas=num_workers,\n        replica_id=flags.task_index)"))).source)
    one_worker = tmp_path / "one_worker.py"
    one_worker.write_text(edited((EXAMPLES / "sync_replicas" / "train_tf2.py").read_text(),
                                 ("\nBATCH_SIZE = 8\n", "\nBATCH_SIZE = 16\n"),
                                 ("learning_rate=0.05,", "learning_rate=0.1,")))
    workers = run_synchronous(summing, 2, tmp_path)
    alone = run_command([str(one_worker)])
    assert_trained(alone, 20)
    assert [len(worker.losses) for worker in workers] == [20, 20]
    mean = [(a + b) / 2 for a, b in zip(workers[0].losses, workers[1].losses)]
    assert mean == pytest.approx(alone.losses, rel=1e-5)


def test_generated_program_resumes_from_its_checkpoints_as_the_estimator_did(tmp_path):
    """The classifier's migration run twice on one model_dir: max_steps counts every run's steps, so the
    second run trains none; a checkpoint every 10 steps, the last 2 kept."""
    model_dir = tmp_path / "model"
    text = (EXAMPLES / "classifier" / "train_tf2.py").read_text()
    for before, after in (("model_dir = tempfile.mkdtemp()", f"model_dir = {str(model_dir)!r}"),
                          ("shutil.rmtree(model_dir)", "")):
        assert text.count(before) == 1
        text = text.replace(before, after)
    (tmp_path / "resume").mkdir()
    (tmp_path / "resume" / "train_tf2.py").write_text(text)
    first = run_example("resume", root=tmp_path, program="train_tf2.py")
    assert first.returncode == 0 and "30/30 - " in first.stdout + first.stderr, first.stderr[-3000:]
    second = run_example("resume", root=tmp_path, program="train_tf2.py")
    assert second.returncode == 0 and "/30 - " not in second.stdout + second.stderr, second.stderr[-3000:]
    assert first.stdout.splitlines()[-4] == second.stdout.splitlines()[-4]  # the same eval accuracy and loss
    assert sorted(path.name for path in (model_dir / "tf2").glob("*.index")) == ["ckpt-20.index", "ckpt-30.index"]


def edited(text: str, *edits: tuple[str, str]) -> str:
    for before, after in edits:
        assert text.count(before) == 1, before
        text = text.replace(before, after)
    return text


def eval_loss(run: Run) -> float:
    assert run.returncode == 0, run.stderr[-3000:]
    return float(re.search(r"^eval loss: (\S+)$", run.stdout, re.MULTILINE).group(1))


def test_warm_start_from_a_tf1_checkpoint_gives_the_same_model_on_both_sides(tmp_path):
    """The regression trains 20 steps into a kept model_dir; a copy warm-started from it trains one more step in
    TF1 and, migrated, in Keras: the same eval loss, which a model not warm-started would not have."""
    from migrator.engine import migrate
    from rewrites import RULES

    trained = tmp_path / "trained"
    program = (EXAMPLES / "regression" / "train.py").read_text()
    keep = ("shutil.rmtree(model_dir)", "")
    for name, text in (
        ("first", edited(program, ("model_dir = tempfile.mkdtemp()", f"model_dir = {str(trained)!r}"), keep)),
        ("tf1", edited(program, ("Estimator(model_fn=_model_fn, config=config)",
                                 f"Estimator(model_fn=_model_fn, config=config, warm_start_from={str(trained)!r})"),
                       ("max_steps=20", "max_steps=1"))),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.py").write_text(text)
    (tmp_path / "tf2").mkdir()
    tf2 = migrate((tmp_path / "tf1" / "train.py").read_text(), "train.py", frozenset(RULES)).source
    assert "for name, variable in tf1_variables(model).items():" in tf2
    (tmp_path / "tf2" / "train.py").write_text(tf2)
    first = eval_loss(run_example("first", root=tmp_path))
    tf1, tf2 = eval_loss(run_example("tf1", root=tmp_path)), eval_loss(run_example("tf2", root=tmp_path))
    assert tf2 == pytest.approx(tf1, rel=1e-5) and tf1 != pytest.approx(first, rel=1e-3)


def test_migrated_tf_config_program_as_separate_chief_worker_and_ps_processes(tmp_path):
    """A between-graph program configured by TF_CONFIG, migrated, then one process per task with its own TF_CONFIG:
    the chief drives the cluster and exits, the worker and the ps serve until they are stopped."""
    from migrator.engine import migrate
    from rewrites import RULES

    original = (Path(__file__).resolve().parent / "parity_programs" / "ps_tf_config_tf1.py").read_text()
    migrated = migrate(original, "train.py", frozenset(RULES))
    assert "TFM103" in [finding.rule for finding in migrated.findings]
    program = tmp_path / "train.py"
    program.write_text(migrated.source)
    cluster = {job: [f"localhost:{free_port()}"] for job in ("chief", "worker", "ps")}

    def environment(job: str) -> dict[str, str]:
        return {**os.environ, "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": job, "index": 0}})}

    serving = [subprocess.Popen([sys.executable, str(program)], env=environment(job), stdout=subprocess.DEVNULL,
                                stderr=subprocess.STDOUT) for job in ("ps", "worker")]
    try:
        chief = subprocess.run([sys.executable, str(program)], env=environment("chief"), capture_output=True,
                               text=True, timeout=TIMEOUT)
        assert all(task.poll() is None for task in serving)  # serving, not crashed
    finally:
        for task in serving:
            task.terminate()
        codes = [task.wait(timeout=30) for task in serving]
    assert chief.returncode == 0, chief.stderr[-3000:]
    assert codes == [-signal.SIGTERM, -signal.SIGTERM]
    losses = [float(loss) for _, loss in PRINTED_LINE.findall(chief.stdout)]
    assert len(losses) == 20 and losses[-1] < losses[0], chief.stdout


# -- the notebook ------------------------------------------------------------------


def notebook_as_script(notebook: Path, folder: Path) -> None:
    """examples/notebook/NOTEBOOK's code cells in order, magics skipped, as FOLDER/notebook/train.py."""
    from migrator.files import read_source
    from migrator.notebooks import runnable

    source = read_source(notebook)
    (folder / "notebook").mkdir(exist_ok=True)
    (folder / "notebook" / "train.py").write_text(runnable(source.notebook, source.text))


def test_generated_notebook_is_what_the_tool_produces(migrated):
    assert (migrated / "notebook" / "train.ipynb").read_text() == (EXAMPLES / "notebook" / "train_tf2.ipynb").read_text()


@pytest.mark.parametrize("notebook", ["train.ipynb", "train_tf2.ipynb"])
def test_the_notebooks_code_cells_train_in_order(notebook, tmp_path):
    notebook_as_script(EXAMPLES / "notebook" / notebook, tmp_path)
    run = run_example("notebook", root=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.search(r"^eval loss: \S+$", run.stdout, re.MULTILINE) and run.leftovers == []
