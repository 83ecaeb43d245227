"""benchmarks/realcode/run.py on a fake mirror: a git repository made here holding small TF1 programs of our own.

No network and no TensorFlow: the script materializes the programs from the repository, runs tf-migrate on them
and classifies each (migrated with its tier, left with every reason, error, silent, not fetched).
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "realcode" / "run.py"

MIGRATES = '''\
import numpy as np
import tensorflow.compat.v1 as tf


def input_fn():
  x = np.arange(64, dtype=np.float32).reshape(16, 4) / 64.0
  y = x.sum(axis=1, keepdims=True)
  return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)


def main():
  columns = [tf.feature_column.numeric_column("x", shape=[4])]
  regressor = tf.estimator.LinearRegressor(feature_columns=columns)
  regressor.train(input_fn=input_fn, steps=5)


if __name__ == "__main__":
  main()
'''

# Left for two reasons: a numpy_input_fn whose shuffle is computed, and a SessionRunHook (the model_fn, with a
# helper tf-migrate cannot translate either, is in another module of the program).
LEFT_DRIVER = '''\
import sys

import numpy as np
import tensorflow.compat.v1 as tf

from trainer import model


class Logger(tf.train.SessionRunHook):
  def after_run(self, run_context, run_values):
    print("step")


train_input = tf.estimator.inputs.numpy_input_fn({"x": np.ones((4, 1), np.float32)}, np.ones((4, 1), np.float32),
                                                 batch_size=2, num_epochs=None, shuffle=len(sys.argv) > 1)
estimator = tf.estimator.Estimator(model_fn=model.model_fn)
estimator.train(train_input, steps=3, hooks=[Logger()])
'''

LEFT_MODEL = '''\
import tensorflow.compat.v1 as tf


def tower(x):
  for width in (8, 4):
    x = tf.layers.dense(x, width, activation=tf.nn.relu)
  return x


def model_fn(features, labels, mode):
  logits = tf.layers.dense(tower(features["x"]), 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
'''

PYTHON2 = '''\
import tensorflow as tf

print "training"
estimator = tf.estimator.Estimator(model_fn=None)
'''

# Names an Estimator only in a comment and a string: not TF1 code, so not silent when tf-migrate says nothing.
QUIET = '''\
# This program once drove a tf.estimator.Estimator(...); the code is gone, the words stay.
print("nothing to do with tf.estimator.Estimator()")
'''


def load_script():
    spec = importlib.util.spec_from_file_location("realcode_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def mirror(tmp_path):
    """A mirror laid out as fetch lays it out (owner+name/repo/.git), with one commit of our programs."""
    work = tmp_path / "mirror" / "someone+tf1-programs" / "repo"
    files = {"linear/train.py": MIGRATES, "hooked/task.py": LEFT_DRIVER, "hooked/trainer/__init__.py": "",
             "hooked/trainer/model.py": LEFT_MODEL, "old/train.py": PYTHON2, "quiet/train.py": QUIET,
             "unrelated.py": "print('not part of any program')\n"}
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "programs")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True).stdout.strip()
    return tmp_path / "mirror", commit


def write_manifest(path, commit):
    def entry(name, paths, kind, repo="someone/tf1-programs", sha=commit):
        return {"name": name, "repo": repo, "commit": sha, "paths": paths, "kind": kind}

    programs = [
        entry("linear", ["linear/train.py"], "canned"),
        entry("hooked", ["hooked/task.py", "hooked/trainer/__init__.py", "hooked/trainer/model.py"], "custom"),
        entry("old", ["old/train.py"], "custom"),
        entry("quiet", ["quiet/train.py"], "custom", sha="0" * 40),  # not in the snapshot: its HEAD is used
        entry("elsewhere", ["train.py"], "between-graph", repo="nobody/not-fetched"),
    ]
    path.write_text(json.dumps({"programs": programs}))


def test_classification_and_json(mirror, tmp_path, capsys):
    if shutil.which("git") is None:
        pytest.skip("no git")
    mirror_dir, commit = mirror
    manifest, out, scratch = tmp_path / "manifest.json", tmp_path / "out.json", tmp_path / "scratch"
    write_manifest(manifest, commit)
    script = load_script()

    assert script.main(["--manifest", str(manifest), "--mirror", str(mirror_dir), "--scratch", str(scratch),
                        "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    rows = {row["name"]: row for row in report["programs"]}

    linear = rows["linear"]
    assert linear["outcome"] == "migrated" and linear["tier"] == 1
    assert "TFM309" in linear["rules"] and linear["changed"] == ["linear/train.py"]
    # the old copy is kept beside the migrated one, as written
    assert (scratch / "linear.tf1" / "linear" / "train.py").read_text() == MIGRATES
    assert (scratch / "linear" / "linear" / "train.py").read_text() != MIGRATES
    assert not (scratch / "linear" / "unrelated.py").exists()

    hooked = rows["hooked"]
    assert hooked["outcome"] == "left" and hooked["tier"] is None
    assert len(hooked["reasons"]) >= 2, hooked["reasons"]  # every reason, not only the first
    assert "TFM308 shuffle is neither True, False nor a name holding one (TF1 requires it)" in hooked["reasons"]
    assert any(reason.startswith("TFM302 ") and "SessionRunHook" in reason for reason in hooked["reasons"])
    assert all("left as it is" not in reason for reason in hooked["reasons"])
    assert len(hooked["manual"]) >= 2

    old = rows["old"]
    assert old["outcome"] == "error"
    assert any("old/train.py:3" in error and "Python" in error for error in old["errors"])

    quiet = rows["quiet"]
    assert quiet["outcome"] == "unchanged"
    assert any("not in the snapshot" in note for note in quiet["notes"])

    assert rows["elsewhere"]["outcome"] == "not fetched"
    assert "fetch github:nobody/not-fetched" in printed

    totals = report["totals"]
    assert totals["all"] == {**totals["all"], "programs": 5, "migrated": 1, "tier1": 1, "tier2": 0, "left": 1,
                             "error": 1, "silent": 0, "unchanged": 1, "not_fetched": 1}
    assert totals["canned"]["migrated"] == 1 and totals["custom"]["left"] == 1
    reasons = {entry["reason"]: entry["programs"] for entry in report["reasons"]}
    assert reasons["TFM308 shuffle is neither True, False nor a name holding one (TF1 requires it)"] == 1
    for line in ("linear", "hooked", "elsewhere"):
        assert any(row.startswith(line + " ") for row in printed.splitlines())


def test_silent_is_tf1_code_without_a_finding(tmp_path):
    script = load_script()
    (tmp_path / "model.py").write_text("import tensorflow as tf\n\n\ndef model_fn(features, labels, mode):\n"
                                       "  return tf.estimator.EstimatorSpec(mode, loss=tf.constant(0.0))\n")
    nothing = {"records": [], "changed": [], "crash": None}
    assert script.classify(tmp_path, nothing)["outcome"] == "silent"
    note = {"records": [{"type": "finding", "path": "model.py", "line": 5, "rule": "TFM301", "level": "numeric",
                         "message": "..."}], "changed": ["model.py"], "crash": None}
    assert script.classify(tmp_path, note)["outcome"] == "migrated"
    (tmp_path / "model.py").write_text("# tf.estimator.Estimator( in a comment only\n")
    assert script.classify(tmp_path, nothing)["outcome"] == "unchanged"


def test_tier_table_reserves_tfm310():
    script = load_script()
    assert script.TIERS["TFM310"] == 2
    assert script.TIERS["TFM301"] == script.TIERS["TFM309"] == script.TIERS["TFM103"] == 1


def test_reason_first_clause():
    script = load_script()
    finding = {"rule": "TFM104", "message": "between-graph program left as it is: no loop running `sess` after the "
                                            "session opens: migrate the loop by hand"}
    assert script.reason_of(finding) == "TFM104 no loop running `sess` after the session opens"
    assert script.reason_of({"rule": "TFM107", "message": "replica_device_setter left as TF1: ..."}) == \
        "TFM107 " + script.PER_USE["TFM107"]
    assert script.reason_key("TFM302 `tower` in the model_fn") == "TFM302 `…` in the model_fn"


def test_run_step_uses_the_stand_in_and_the_command(mirror, tmp_path, capsys):
    """--run: the stand-in writes its data in the scratch folder, then the command runs there (no TensorFlow: the
    command only reads what the stand-in wrote); a failing command is `runs: no` with its last error line."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    mirror_dir, commit = mirror
    runs_ok = {"standin": "open('data.csv', 'w').write('1,2\\n')",
               "command": "python -c \"import os, sys; sys.exit(0 if os.path.exists('data.csv') else 3)\""}
    runs_bad = {"command": "python -c \"raise ValueError('no data here')\""}
    programs = [{"name": name, "repo": "someone/tf1-programs", "commit": commit, "paths": ["linear/train.py"],
                 "kind": "canned", "runs": runs} for name, runs in (("ok", runs_ok), ("bad", runs_bad))]
    manifest, out = tmp_path / "manifest.json", tmp_path / "out.json"
    manifest.write_text(json.dumps({"programs": programs}))
    script = load_script()
    script.main(["--manifest", str(manifest), "--mirror", str(mirror_dir), "--scratch", str(tmp_path / "s"),
                 "--json", str(out), "--run", "--run-timeout", "60"])
    rows = {row["name"]: row for row in json.loads(out.read_text())["programs"]}
    assert rows["ok"]["outcome"] == "migrated" and rows["ok"]["runs"] == "yes"
    assert rows["bad"]["runs"] == "no" and "ValueError: no data here" in rows["bad"]["run_error"]
    assert json.loads(out.read_text())["totals"]["all"]["runs"] == 1
    assert "runs: no (ValueError: no data here)" in capsys.readouterr().out


def cell(kind, *lines):
    return {"cell_type": kind, "source": [line + "\n" for line in lines[:-1]] + [lines[-1]]}


def notebook_output(tmp_path, cells, local_files=None) -> str:
    """What a notebook of ``cells`` prints, run as realcode runs it (its code cells as one script)."""
    path = tmp_path / "lab.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    (tmp_path / "run.py").write_text(load_script().notebook_script(path, local_files))
    done = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_notebook_runs_as_its_code_cells_in_order(tmp_path):
    """A `runs` entry naming a notebook runs its code cells as Jupyter would: %%writefile cells write their file,
    %%time runs its body, other cell magics and `%` / `!` lines do not run."""
    assert notebook_output(tmp_path, [
        cell("markdown", "# not code"),
        cell("code", "%matplotlib inline", "!pip install nothing", "values = [1]"),
        cell("code", "!curl -s http://localhost:4040/api | python3 -c \\", '    "import sys"', "values.append(2)"),
        cell("code", "%%writefile data.csv", "a,b", "1,2"),
        cell("code", "%%bash", "exit 3"),
        cell("code", "%%time", "values.append(open('data.csv').read().splitlines()[1])"),
        cell("code", 'get_ipython().system_raw("tensorboard &")', "print(values)"),
    ]) == "[1, 2, '1,2']\n"


def test_a_notebook_s_shell_aliases_run_by_automagic_do_not_run(tmp_path):
    """`ls -la data/` without `!` is IPython's alias, not Python; `ls = ...` and `cat(...)` are Python."""
    assert notebook_output(tmp_path, [
        cell("code", "ls -la ../data/ARC-Easy", "ls", "values = [1]"),
        cell("code", "ls = [2]", "def cat(x):", "  return x", "values += cat(ls)", "print(values)"),
    ]) == "[1, 2]\n"


def test_a_notebook_reads_the_stand_in_s_file_where_it_named_a_url(tmp_path):
    (tmp_path / "data.csv").write_text("a,b")
    cells = [cell("code", "URL = 'https://storage.example.com/data.csv'",
                  "print(open(URL).read(), URL.startswith('https'))")]
    assert notebook_output(tmp_path, cells, {"https://storage.example.com/data.csv": "data.csv"}) == "a,b False\n"


def test_a_notebook_s_future_imports_open_its_script(tmp_path):
    assert notebook_output(tmp_path, [cell("code", "print('first')"),
                                      cell("code", "from __future__ import print_function", "print('ran')")]) \
        == "first\nran\n"


# -- a program run as a cluster (ps + 2 workers on 127.0.0.1) ----------------------------------------------------

# A cluster task of our own, no TensorFlow: the ps serves (waits until stopped), the workers print what they were
# given and exit; worker CRASHES raises; with TRAINS they train until stopped. With TF_CONFIG it reads its cluster
# and task from there, as TF1's TF_CONFIG-reading programs did.
CLUSTER_TASK = '''\
import json, os, sys, time

args = dict(arg[2:].split("=", 1) for arg in sys.argv[1:])
if os.environ.get("TF_CONFIG"):
    config = json.loads(os.environ["TF_CONFIG"])
    args.update(job_name=config["task"]["type"], task_index=str(config["task"]["index"]),
                ps_hosts=",".join(config["cluster"]["ps"]), worker_hosts=",".join(config["cluster"]["worker"]))
task = (args["job_name"], int(args["task_index"]))
if task == ("ps", 0):
    while True:
        time.sleep(1)
if task == ("worker", int(args.get("crashes", -1))):
    raise ValueError("worker %d cannot reach the ps" % task[1])
if "trains" in args:  # until stopped: worker 0 says how far it got as the shims would, with REALCODE_PROGRESS set
    steps, every = 0, int(os.environ["REALCODE_PROGRESS"])
    while True:
        time.sleep(0.002)
        steps += 1
        if task == ("worker", 0) and args["trains"] == "forever" and steps % every == 0:
            print("realcode progress: %d steps done" % steps, flush=True)
if task == ("worker", 0):
    time.sleep(1)
hosts = args["ps_hosts"].split(",") + args["worker_hosts"].split(",")
assert len(hosts) == 3 and all(host.startswith("127.0.0.1:") for host in hosts) and len(set(hosts)) == 3, hosts
print("%s %d of ps %s, workers %s" % (task + (args["ps_hosts"], args["worker_hosts"])))
'''

FLAGS = "--job_name={job} --task_index={index} --ps_hosts={ps_hosts} --worker_hosts={worker_hosts}"


def run_cluster_entries(mirror, tmp_path, entries, *options):
    """run.py --run on the linear program of the fake mirror, once per entry of ``entries`` (name -> runs)."""
    mirror_dir, commit = mirror
    programs = [{"name": name, "repo": "someone/tf1-programs", "commit": commit, "paths": ["linear/train.py"],
                 "kind": "between-graph", "runs": {"standin": f"open('task.py', 'w').write({CLUSTER_TASK!r})",
                                                   "timeout": 60, **runs}} for name, runs in entries.items()]
    manifest, out = tmp_path / "manifest.json", tmp_path / "out.json"
    manifest.write_text(json.dumps({"programs": programs}))
    load_script().main(["--manifest", str(manifest), "--mirror", str(mirror_dir), "--scratch", str(tmp_path / "s"),
                        "--json", str(out), "--run", *options])
    return {row["name"]: row for row in json.loads(out.read_text())["programs"]}


def test_a_cluster_entry_runs_ps_and_two_workers_and_worker_0_decides(mirror, tmp_path, capsys):
    """The command once per task, its hosts (free ports on 127.0.0.1), job and index filled in, or TF_CONFIG set
    per task: it runs when worker 0 exits 0 and the others exited 0 or still serve; then all are stopped."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    rows = run_cluster_entries(mirror, tmp_path, {
        "flags": {"command": "python task.py " + FLAGS, "cluster": {"ps": 1, "workers": 2}},
        "tf_config": {"command": "python task.py", "cluster": {"ps": 1, "workers": 2, "tf_config": True}},
    })
    for name in ("flags", "tf_config"):
        assert rows[name]["runs"] == "yes" and rows[name]["run_error"] is None, rows[name]
        tasks = rows[name]["run_tasks"]  # worker 1 may still be on its way out when worker 0 ends: either counts
        assert tasks["ps 0"] == "serving" and tasks["worker 0"] == "exit 0"
        assert tasks["worker 1"] in ("exit 0", "serving")
        assert rows[name]["run_as"] == "ps 1 + 2 workers"
    logs = tmp_path / "s" / "flags.cluster"
    assert (logs / "worker0.log").read_text().startswith("worker 0 of ps 127.0.0.1:")
    assert (logs / "worker1.log").read_text().startswith("worker 1 of ps 127.0.0.1:")
    assert "runs: yes; as ps 1 + 2 workers" in capsys.readouterr().out


def test_a_crashing_worker_fails_the_cluster_run_naming_the_task(mirror, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("no git")
    rows = run_cluster_entries(mirror, tmp_path, {
        "worker 1 crashes": {"command": "python task.py --crashes=1 " + FLAGS, "cluster": {"ps": 1, "workers": 2}},
        "worker 0 crashes": {"command": "python task.py --crashes=0 " + FLAGS, "cluster": {"ps": 1, "workers": 2}},
    })
    assert rows["worker 1 crashes"]["runs"] == "no"
    assert rows["worker 1 crashes"]["run_error"] == "worker 1: ValueError: worker 1 cannot reach the ps"
    assert rows["worker 0 crashes"]["runs"] == "no"
    assert rows["worker 0 crashes"]["run_error"] == "worker 0: ValueError: worker 0 cannot reach the ps"
    assert rows["worker 0 crashes"]["run_tasks"]["ps 0"] == "serving"


def test_an_entry_s_then_commands_run_after_the_cluster_and_one_failing_fails_the_run(mirror, tmp_path):
    """`then`: commands run in order in the program's folder once it ran (TensorFlowOnSpark's export_fn, a check);
    `{checks}` names benchmarks/realcode/checks/."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    after = "python -c \"import os; assert os.path.isfile('task.py'); open('after.txt', 'w').write('done')\""
    rows = run_cluster_entries(mirror, tmp_path, {
        "then": {"command": "python task.py " + FLAGS, "cluster": {"ps": 1, "workers": 2}, "then": [after]},
        "then fails": {"command": "python task.py " + FLAGS, "cluster": {"ps": 1, "workers": 2},
                       "then": [after, "python {checks}/saved_model.py missing serving_default:x:y"]},
    })
    assert rows["then"]["runs"] == "yes" and (tmp_path / "s" / "then" / "after.txt").read_text() == "done"
    assert rows["then fails"]["runs"] == "no"
    assert rows["then fails"]["run_error"].startswith("then 2: OSError: SavedModel file does not exist at: missing")


def test_a_cluster_that_trains_until_stopped_runs_for_its_duration_and_shows_progress(mirror, tmp_path, capsys):
    """`"duration"`: a program with no step limit (ecosystem's docker/mnist.py) is stopped that long after its start;
    it runs when no task failed and worker 0 logged its training's progress (REALCODE_PROGRESS set: the shims' lines,
    printed here by the task itself)."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    cluster = {"ps": 1, "workers": 2, "duration": 3}
    rows = run_cluster_entries(mirror, tmp_path, {
        "progress": {"command": "python task.py --trains=forever " + FLAGS, "cluster": cluster},
        "silent": {"command": "python task.py --trains=silently " + FLAGS, "cluster": cluster},
        "crashing": {"command": "python task.py --trains=forever --crashes=1 " + FLAGS, "cluster": cluster},
    })
    assert rows["progress"]["runs"] == "yes", rows["progress"]
    assert rows["progress"]["run_tasks"] == {"ps 0": "serving", "worker 1": "serving", "worker 0": "serving"}
    assert rows["progress"]["run_as"] == "ps 1 + 2 workers for 3 s"
    assert rows["silent"]["runs"] == "no"
    assert rows["silent"]["run_error"] == "worker 0: no training progress logged in 3 s"
    assert rows["crashing"]["run_error"] == "worker 1: ValueError: worker 1 cannot reach the ps"
    assert "runs: yes; as ps 1 + 2 workers for 3 s" in capsys.readouterr().out


@pytest.mark.tensorflow
def test_the_shims_print_the_progress_of_a_tf1_monitored_session(tmp_path):
    """REALCODE_PROGRESS=N: every N runs of a MonitoredSession, the line run.py's duration looks for (the same
    comes from a ClusterCoordinator's schedule, awaited)."""
    program = '''\
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()
increment = tf.assign_add(tf.train.get_or_create_global_step(), 1)
with tf.train.MonitoredTrainingSession() as sess:
    for _ in range(5):
        sess.run(increment)
'''
    (tmp_path / "loop.py").write_text(program)
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parent / "shims"), "REALCODE_PROGRESS": "2",
           "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "loop.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.findall(r"^realcode progress: .*$", done.stdout, re.M) == [
        "realcode progress: 2 steps done", "realcode progress: 4 steps done"], done.stdout


@pytest.mark.tensorflow
def test_the_tf1_copy_runs_as_a_cluster_as_tf1_ran_it(mirror, tmp_path):
    """--run-original: the TF1 copy, whose `import tensorflow as tf` meant TF1's API (`tf.train.Server`, which TF 2
    has only in compat.v1), runs through tf1_era.py as ps + 2 workers; the ps joins, the workers start their
    servers and exit."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    server = ("import json, os\nimport tensorflow as tf\n\nconfig = json.loads(os.environ['TF_CONFIG'])\n"
              "server = tf.train.Server(tf.train.ClusterSpec(config['cluster']), job_name=config['task']['type'],\n"
              "                         task_index=config['task']['index'])\n"
              "if config['task']['type'] == 'ps':\n    server.join()\nprint('served', server.target)\n")
    rows = run_cluster_entries(mirror, tmp_path, {"tf1": {
        "standin": f"open('server.py', 'w').write({server!r})", "command": "python server.py",
        "cluster": {"ps": 1, "workers": 2, "tf_config": True}, "timeout": 120}}, "--run-original")
    row = rows["tf1"]
    assert row["runs"] == "no" and "has no attribute 'Server'" in row["run_error"], row  # TF 2's tf: no Server
    assert row["original_runs"] == "yes", row
    tasks = row["original_tasks"]
    assert tasks["ps 0"] == "serving" and tasks["worker 0"] == "exit 0" and tasks["worker 1"] in ("exit 0", "serving")
    assert "served grpc://" in (tmp_path / "s" / "tf1.tf1.cluster" / "worker0.log").read_text()


@pytest.mark.tensorflow
def test_the_shims_give_the_tf1_mnist_reader_and_keras_the_stand_in_data(tmp_path):
    """The TF1 tutorials' reader (gone from TF 2) and Keras' mnist.load_data() read the stand-in file, the same
    arrays; next_batch crosses an epoch's end as TF1's did; Azure ML's run context is an offline one."""
    subprocess.run([sys.executable, str(SCRIPT.parent / "standins" / "mnist_npz.py")], cwd=tmp_path, check=True)
    check = '''\
import numpy as np
from tensorflow.examples.tutorials.mnist import input_data
import tensorflow as tf
from azureml.core.run import Run

mnist = input_data.read_data_sets("data/mnist", one_hot=True)
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
assert mnist.train.images.shape == (1000, 784) and mnist.validation.num_examples == 5000, mnist.train.images.shape
assert np.array_equal(mnist.test.images, x_test.reshape(1000, 784).astype(np.float32) * (1.0 / 255.0))
assert np.array_equal(mnist.validation.labels.argmax(1), y_train[:5000])
first, _ = mnist.train.next_batch(600)
crossing, labels = mnist.train.next_batch(600)
assert crossing.shape == (600, 784) and labels.shape == (600, 10) and mnist.train.epochs_completed == 1
Run.get_context().log("read", len(crossing))
'''
    env = {**load_script().run_env(), "REALCODE_MNIST": "mnist.npz"}
    done = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "[offline run] read: 600\n" and (tmp_path / "data" / "mnist").is_dir()


def test_an_entry_s_shims_folder_is_on_its_path_only(tmp_path):
    """`"shims": ["packages"]` puts the stand-ins of packages this machine lacks on that entry's path (ktext's
    processor pickled with dill and loaded back, sklearn's split of a DataFrame), and on no other entry's."""
    check = '''\
import dill
import pandas as pd
from ktext.preprocess import processor
from sklearn.model_selection import train_test_split

train, test = train_test_split(pd.DataFrame({"body": ["a b c", "b c d e", "c", "a a"] * 5}), test_size=.10)
assert len(train) == 18 and len(test) == 2 and not set(train.index) & set(test.index)
title_pp = processor(append_indicators=True, keep_n=3, padding_maxlen=4, padding="post")
vectors = title_pp.fit_transform(["a b c", "a a b d e f"])
assert vectors.tolist() == [[3, 2, 4, 1], [3, 2, 2, 4]], vectors.tolist()  # a, _start_, b kept
body_pp = processor(keep_n=10, padding_maxlen=3)
assert body_pp.fit_transform(["x y", "y"]).tolist() == [[0, 3, 2], [0, 0, 2]]
again = dill.loads(dill.dumps(title_pp))
assert max(again.id2token) == 4 and again.id2token[0] == "_pad_"
from IPython.display import SVG
try:
    SVG("x")
except NotImplementedError as error:
    print(error)
'''
    script = load_script()
    done = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=script.run_env({"shims": ["packages"]}),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "IPython.display.SVG is not stood in (benchmarks/realcode/shims/packages)\n"
    alone = subprocess.run([sys.executable, "-c", "import ktext"], cwd=tmp_path, env=script.run_env({}),
                           capture_output=True, text=True)
    assert alone.returncode != 0 and "No module named 'ktext'" in alone.stderr
