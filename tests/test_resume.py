"""Keeping the trained model: migrated programs resume from their TF1 program's checkpoint, proven by resuming both.

`tf-migrate parity --resume N` trains the old program N steps and checkpoints; then the old program resumes
from that checkpoint as TF1 would, and the new program, started on it, restores it itself (its generated
restore_tf1_checkpoint): both train the harness's steps, and the losses, the eval loss, the final weights,
every slot of the optimizers and the step must match. Deliberately wrong restores are mismatches.
`tf-migrate checkpoint` converts a TF1 checkpoint with the program's own restore, without training.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from test_parity import EXAMPLES, PACKAGE_TF1, PACKAGE_TF2, TF_MIGRATE, parity

if not all(importlib.util.find_spec(name) for name in ("tensorflow", "tensorflow_estimator", "tf_keras", "portpicker")):
    pytest.skip("needs the parity extra (tensorflow, tensorflow-estimator, tf-keras, portpicker)", allow_module_level=True)

pytestmark = pytest.mark.tensorflow

RESUME = ("--resume", "10", "--steps", "20")  # 10 steps to the checkpoint, 20 more on both sides
# Every generated example whose program checkpoints, with the arguments that let it train 30 steps.
CHECKPOINTING = {"regression": (), "momentum": (), "rmsprop": (), "classifier": (), "partitioned": (),
                 "dropout_batchnorm": (), "embedding": (), "flags_app": ("--", "--train_steps", "30"),
                 "tpu_estimator": (), "premade_iris": (), "linear_weighted": (), "census_wide_deep": (),
                 "adam_schedule": (), "ps_cluster": ("--", "--train_steps", "30"),
                 "supervisor_flags": ("--", "--train_steps", "30"), "exporter": ("--", "--train-steps", "30"),
                 "export_outputs": ("--", "--train-steps", "30"), "helper_loop": (), "slim_nets": (),
                 "model_choice": (), "recommender": ()}
EXPORTS = {"exporter": ["export/best", "export/exporter", "export/final"], "export_outputs": ["export/served"]}
ADAM_TF1, ADAM_TF2 = EXAMPLES / "adam_schedule" / "train.py", EXAMPLES / "adam_schedule" / "train_tf2.py"
CLUSTER = str(Path(__file__).resolve().parent / "in_process_cluster.py")


def resumed(old: Path, new: Path, *arguments: str, tmp_path: Path, cwd: Path | None = None) -> dict:
    report = tmp_path / "report.json"
    result = parity(old, new, *RESUME, "--json", str(report), *arguments, cwd=cwd)
    assert report.exists(), result.stdout + result.stderr[-4000:]
    return {**json.loads(report.read_text()), "stdout": result.stdout, "returncode": result.returncode}


@pytest.mark.parametrize("example", sorted(CHECKPOINTING))
def test_each_example_resumes_from_its_tf1_checkpoint_as_tf1_does(example, tmp_path):
    data = resumed(EXAMPLES / example / "train.py", EXAMPLES / example / "train_tf2.py", *CHECKPOINTING[example],
                   tmp_path=tmp_path)
    assert data["verdict"] == "parity", data["message"] + data["stdout"]
    assert data["resume"] == 10 and len(data["old"]["losses"]) == len(data["new"]["losses"]) == 20
    kinds = {kind: [v for v in data["variables"] if v["kind"] == kind] for kind in ("variable", "slot", "step")}
    assert kinds["variable"] and kinds["step"] and all(v["ok"] for v in data["variables"])
    # Every slot the TF1 optimizer kept was compared (plain gradient descent keeps none).
    assert bool(kinds["slot"]) == (example not in ("partitioned", "ps_cluster"))
    # The exports of the resumed models serve alike: each loaded in a fresh process, its signatures answering.
    assert sorted(export["name"] for export in data["exports"]) == EXPORTS.get(example, [])
    assert all(signature["requests"] for export in data["exports"] for signature in export["signatures"])


def test_the_trainer_package_resumes_with_its_command_line(tmp_path):
    data = resumed(PACKAGE_TF1, PACKAGE_TF2, "--", "--train-steps", "30", "--hidden-units", "8,4",
                   tmp_path=tmp_path, cwd=PACKAGE_TF1.parents[1])
    assert data["verdict"] == "parity", data["message"]
    assert {v["name"] for v in data["variables"] if v["kind"] == "slot"} == {
        f"{name}/Adagrad" for name in ("dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias",
                                       "dense_2/kernel", "dense_2/bias")}


def test_the_notebook_resumes_too(tmp_path):
    from test_examples import notebook_as_script

    for name in ("train", "train_tf2"):
        (tmp_path / name).mkdir()
        notebook_as_script(EXAMPLES / "notebook" / f"{name}.ipynb", tmp_path / name)
    data = resumed(tmp_path / "train" / "notebook" / "train.py", tmp_path / "train_tf2" / "notebook" / "train.py",
                   tmp_path=tmp_path)
    assert data["verdict"] == "parity", data["message"]


# Deliberately wrong restores of the Adam program (partitioned, on a decaying rate): each a mismatch.
WRONG_RESTORES = {
    "Adam slots swapped": ('{"{}/Adam": "m", "{}/Adam_1": "v"}', '{"{}/Adam": "v", "{}/Adam_1": "m"}'),
    "step reset to 0": ("    restore_tf1_checkpoint(tf1_checkpoint, model)\n",
                        "    restore_tf1_checkpoint(tf1_checkpoint, model)\n    model.optimizer.iterations.assign(0)\n"),
    "shards in the wrong order": ("    for shard in shards:\n      if shard.shape.rank:",
                                  "    for shard in reversed(shards):\n      if shard.shape.rank:"),
}


@pytest.mark.parametrize("wrong", sorted(WRONG_RESTORES))
def test_a_wrong_restore_is_a_mismatch(wrong, tmp_path):
    old, new = WRONG_RESTORES[wrong]
    text = ADAM_TF2.read_text()
    assert text.count(old) == 1
    program = tmp_path / "train_tf2.py"
    program.write_text(text.replace(old, new))
    data = resumed(ADAM_TF1, program, tmp_path=tmp_path)
    assert data["verdict"] == "mismatch" and data["returncode"] == 1
    differ = {v["kind"] for v in data["variables"] if not v["ok"]}
    if wrong == "step reset to 0":  # the decaying rate restarts: the first update differs
        assert "step" in differ and data["first_diverging_step"] == 2
    else:
        assert differ >= {"variable", "slot"} and data["first_diverging_step"] is not None


def test_a_mod_table_restored_in_tf1s_row_order_is_a_mismatch(tmp_path):
    program = tmp_path / "train_tf2.py"
    program.write_text((EXAMPLES / "embedding" / "train_tf2.py").read_text().replace(
        '  mod_tables = ["embedding/table"]\n', "  mod_tables = []\n"))
    data = resumed(EXAMPLES / "embedding" / "train.py", program, tmp_path=tmp_path)
    assert data["verdict"] == "mismatch"
    assert {v["name"] for v in data["variables"] if not v["ok"]} >= {"embedding/table", "embedding/table/Adagrad"}


def test_a_program_that_writes_no_checkpoint_cannot_be_resumed(tmp_path):
    result = parity(EXAMPLES / "sync_replicas" / "train.py", EXAMPLES / "sync_replicas" / "train_tf2.py", *RESUME)
    assert result.returncode == 2 and "wrote no checkpoint to resume from" in result.stdout


# -- tf-migrate checkpoint ------------------------------------------------------------------------------------------


def run(*command: str, cwd: Path | None = None):
    import os
    import subprocess

    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, cwd=cwd)


def digest(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def adam_at_10(tmp_path_factory) -> Path:
    """examples/adam_schedule's TF1 program, trained 10 steps: its model_dir."""
    import sys

    model_dir = tmp_path_factory.mktemp("adam") / "model_dir"
    result = run(sys.executable, str(ADAM_TF1), "--train_steps", "10", "--model_dir", str(model_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    return model_dir


def eval_loss(output: str) -> str:
    return re.findall(r"^eval loss: (\S+)$", output, re.MULTILINE)[-1]


def test_the_checkpoint_command_converts_without_training_and_the_program_resumes_from_it(adam_at_10, tmp_path):
    import sys

    before = digest(adam_at_10)
    new_dir = tmp_path / "new"
    result = run(TF_MIGRATE, "checkpoint", str(adam_at_10), "--program", str(ADAM_TF2), "--to", str(new_dir),
                 "--json", str(tmp_path / "map.json"), "--", "--train_steps", "30")
    assert result.returncode == 0, result.stderr[-3000:]
    assert digest(adam_at_10) == before  # TF1's files are only read
    converted = json.loads((tmp_path / "map.json").read_text())
    assert converted["step"] == 10 and re.fullmatch(r".*/new/tf2/ckpt-10", converted["checkpoint"])
    assert f"-> {converted['checkpoint']} (step 10), 15 TF1 variables restored:" in result.stdout
    mapped = {entry["tf1"]: entry["variables"] for entry in converted["map"]}
    # The program ran as the chief of a cluster: the wide kernel and its slots in the three shards it trains with.
    assert mapped["wide/dense/kernel/Adam_1"] == [f"wide/dense/kernel/part_{i}/v:0" for i in range(3)]
    assert mapped["global_step"] == ["iter:0"]
    assert mapped["beta1_power"] == ["beta1_power:0"] and mapped["beta2_power"] == ["beta2_power:0"]  # TF1Adam's
    assert len(mapped) == 15  # 4 variables, 8 slots, the 2 powers, the step: the whole checkpoint
    # The program, its model_dir the new one, carries on from the converted checkpoint as from TF1's own, and
    # on a cluster whose partitioner splits the wide kernel in three.
    shutil.copytree(adam_at_10, tmp_path / "tf1_copy")
    runs = [run(sys.executable, CLUSTER, str(ADAM_TF2), "--train_steps", "20", "--model_dir", str(folder))
            for folder in (new_dir, tmp_path / "tf1_copy")]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-3000:] + runs[1].stderr[-3000:]
    assert eval_loss(runs[0].stdout) == eval_loss(runs[1].stdout)
    assert "10/10 - " in runs[0].stdout  # 10 more steps, not 20


# Where the migrated program makes a run: locally (the wide kernel whole), or as the chief of an in-process
# cluster (the kernel in the three shards of its partitioner).
LAYOUTS = {"local": [], "cluster": [CLUSTER]}


def two_more_runs(command: list[str], folder_option: str, trained: Path, loss, folder: Path,
                  layouts: tuple[str, str] = ("local", "local")) -> list[float]:
    """The loss after each of two more runs of ``command`` (to step 20, then 30), on a copy of ``trained``."""
    import sys

    shutil.copytree(trained, folder)
    losses = []
    for steps, layout in zip(("20", "30"), layouts):
        result = run(sys.executable, *LAYOUTS[layout], *command, "--train_steps", steps, folder_option, str(folder))
        assert result.returncode == 0, result.stderr[-3000:]
        losses.append(loss(result.stdout))
    return losses


def close(a: list[float], b: list[float], tolerance: float = 1e-6) -> list[bool]:
    import math

    return [math.isclose(x, y, rel_tol=tolerance) for x, y in zip(a, b)]


@pytest.fixture(scope="module")
def adam_tf1_runs(adam_at_10, tmp_path_factory) -> list[float]:
    """The eval loss of examples/adam_schedule's TF1 program after two more runs, to step 20, then 30."""
    return two_more_runs([str(ADAM_TF1)], "--model_dir", adam_at_10, lambda output: float(eval_loss(output)),
                         tmp_path_factory.mktemp("adam_tf1") / "model_dir")


@pytest.mark.parametrize("layouts", [("cluster", "cluster"), ("local", "cluster")], ids=" then ".join)
def test_resumed_twice_the_program_carries_on_from_its_own_checkpoint_as_tf1(layouts, adam_at_10, adam_tf1_runs,
                                                                            tmp_path):
    """TF1 makes three runs (10, 20, 30 steps); the migrated program takes over at 10, the second of its runs
    from its own checkpoint, whose Adam slots of the wide kernel's shards ParameterServerStrategy would not
    restore (keras-team/tf-keras#838) but the program does, whether it saved them in shards or whole."""
    losses = two_more_runs([str(ADAM_TF2)], "--model_dir", adam_at_10, lambda output: float(eval_loss(output)),
                           tmp_path / "model_dir", layouts)
    assert close(losses, adam_tf1_runs) == [True, True], (losses, adam_tf1_runs)


def test_without_restoring_the_slots_of_shards_the_second_run_differs(adam_at_10, adam_tf1_runs, tmp_path):
    program = tmp_path / "train_tf2.py"
    text = ADAM_TF2.read_text()
    first_line = "  view = tf.train.CheckpointView(path)\n"
    assert text.count(first_line) == 1
    program.write_text(text.replace(first_line, "  return\n" + first_line))
    losses = two_more_runs([str(program)], "--model_dir", adam_at_10, lambda output: float(eval_loss(output)),
                           tmp_path / "model_dir", ("cluster", "cluster"))
    # The first run restored TF1's checkpoint; the second, its own, with the slots of the shards at zero.
    assert close(losses, adam_tf1_runs, tolerance=1e-4) == [True, False], (losses, adam_tf1_runs)


def test_a_between_graph_program_resumed_twice_restores_the_slots_of_its_shards_too(tmp_path):
    """examples/ps_cluster partitioned and on Adagrad: TF1 10, 20, 30 steps, or TF1 10 and the migrated 20, 30
    (each on its own in-process cluster)."""
    import sys

    from test_parity import program

    old, new = (str(program(name, tmp_path)) for name in ("ps_cluster_adagrad_tf1", "ps_cluster_adagrad_tf2"))
    assert "restore_shard_slots(manager.latest_checkpoint, checkpoint, [weights, bias])" in Path(new).read_text()
    trained = tmp_path / "at_10"
    result = run(sys.executable, old, "--train_steps", "10", "--checkpoint_dir", str(trained))
    assert result.returncode == 0, result.stderr[-3000:]
    last_loss = lambda output: float(output.strip().splitlines()[-1].split()[-1])  # noqa: E731
    losses = [two_more_runs([name], "--checkpoint_dir", trained, last_loss, tmp_path / side)
              for side, name in (("tf1", old), ("tf2", new))]
    assert close(*losses) == [True, True], losses


@pytest.mark.parametrize("program, problems", [
    ("regression", ["dense/kernel is [8, 1] there, [2, 1] here", "dense/kernel/Adagrad is missing",
                    "wide/dense/kernel is not this program's"]),
    ("partitioned", ["linear/dense/kernel is missing", "dense/kernel/Adam is not this program's"]),
], ids=["other shapes", "slots of another optimizer"])
def test_a_checkpoint_that_does_not_fit_is_refused_naming_what_and_nothing_is_written(program, problems, adam_at_10,
                                                                                      tmp_path):
    before = digest(adam_at_10)
    result = run(TF_MIGRATE, "checkpoint", str(adam_at_10), "--program", str(EXAMPLES / program / "train_tf2.py"),
                 "--to", str(tmp_path / "new"))
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"tf-migrate checkpoint: error: the TF1 checkpoint {adam_at_10}/model.ckpt-10 does not fit "
                           "this program: ")
    assert all(problem in line for problem in problems), line
    assert not (tmp_path / "new").exists() and digest(adam_at_10) == before
