"""The real-code benchmark: tf-migrate on public TF1 programs, materialized from fetched snapshots.

    python benchmarks/realcode/run.py [--manifest PATH] [--mirror /work/.mirror] [--scratch DIR]
                                      [--only NAME...] [--json PATH] [--run] [--run-original]
                                      [--run-timeout SECONDS]

benchmarks/realcode/manifest.json names each program by its coordinates only (repository, commit,
paths, kind: never its code). Per program this script

1. writes the program's files from the repository's snapshot (``git --git-dir <mirror>/<owner>+<name>/repo show
   <commit>:<path>``; the snapshot's HEAD when the commit is not in it, said in the row) into
   ``<scratch>/<name>/``, keeping their relative paths, and a copy of them into ``<scratch>/<name>.tf1/``;
2. runs ``tf-migrate --output-format json`` on ``<scratch>/<name>/`` (in place);
3. classifies it:

   - ``migrated``: files changed and no manual finding is left; its tier is read from TIERS by the rule ids of
     its findings (``-`` when no finding names a tier);
   - ``left``: manual findings remain: every distinct reason (rule id and the message's first clause);
   - ``error``: tf-migrate reported a file error (failed to parse, Python 2, internal error), or crashed;
   - ``silent``: the files hold TF1 Estimator or cluster code and tf-migrate said nothing at all (must be 0);
   - ``unchanged``: nothing changed, nothing manual, and either some non-manual finding or no TF1 code
     (a manifest entry to look at again);
   - ``not fetched``: the repository's snapshot is not under --mirror (the fetch source to ask for is printed).

With ``--run``, each migrated program that has a ``runs`` entry in the manifest is run (its stand-in data script
first, in the scratch folder, given the entry's ``standin_args``), with a time limit, no TF_CONFIG and TF_CPP_MIN_LOG_LEVEL=3; and, where the entry
names a ``parity`` program, ``tf-migrate parity`` compares the TF1 copy with the migrated one. A notebook's entry
may map the URLs it reads to the stand-in's files (``local_files``): this machine reaches no data server. An entry
marked ``parity_only`` (a program whose own step count, fixed in its code, takes hours here) is not run whole:
parity runs it, and stops both sides after their first steps; it runs when parity gets to a verdict.

A between-graph entry's ``cluster`` runs the command as one process per task on 127.0.0.1 (``{ps_hosts}``,
``{worker_hosts}``, ``{job}``, ``{index}`` filled, or TF_CONFIG per task): it runs when worker 0 (or the entry's
coordinator, run as the chief) exits 0 in time and the other tasks exited 0 or still serve; one that trains until
stopped (``duration``) runs when no task failed in that time and the chief's log shows progress (the shims print it).
The summary counts the between-graph programs left without exactly one TFM104 (must be 0). With ``--run-original``
the TF1 copy of every program with a ``runs`` entry runs the same way, through tf1_era.py. shims/ is first on the
path of everything run (the TF1 tutorials' MNIST reader, Keras' MNIST from the stand-in file, Azure ML's run).

The script needs only the standard library, git and tf-migrate (next to this Python, or on PATH).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOK_SCRIPT = "_notebook_as_script.py"
SHIMS = HERE / "shims"
TF1_ERA = HERE / "tf1_era.py"

# The tier a migrated program got, read from the rule ids of its findings. The highest tier found wins: a
# program with one model_fn in tier 2 is a tier-2 program. TFM310 is the faithful tier's (issue 30).
TIERS = {
    "TFM103": 1,  # between-graph program -> ClusterCoordinator / MultiWorkerMirroredStrategy
    "TFM301": 1,  # Estimator program -> Keras fit under ParameterServerStrategy
    "TFM305": 1,  # TPUEstimator migrated for use_tpu=False
    "TFM309": 1,  # canned estimator -> Keras model of the same layers
    "TFM310": 2,  # the faithful tier: TF1 model code kept under track_tf1_style_variables
}

KINDS = ("custom", "canned", "tpu", "contrib-learn", "between-graph")
OUTCOMES = ("migrated", "left", "error", "silent", "unchanged", "not fetched")

# "TF1 code", read simply: a program whose files mention one of these and that gets no finding is silent.
TF1_CODE = re.compile(r"estimator\.|Estimator\(|ClusterSpec|replica_device_setter|MonitoredTrainingSession"
                      r"|Supervisor\(")

# A manual finding's message reads "<what> left as it is: <why>: <what to do>"; the reason is <why>.
LEFT_PREFIX = re.compile(r"^[^:`]*?\bleft (?:as it is|untouched)\s*:\s*")

# Rules whose findings mark each use of code left as it is, not a reason of their own: one reason per program.
PER_USE = {"TFM107": "TF1 cluster code left as it is (a finding at each use)"}


# -- the manifest -------------------------------------------------------------------------------------------


def load_manifest(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    programs = data["programs"] if isinstance(data, dict) else data
    names = set()
    for program in programs:
        for key in ("name", "repo", "commit", "paths", "kind"):
            if key not in program:
                raise SystemExit(f"{path}: program {program.get('name', program)!r} has no {key!r}")
        if program["kind"] not in KINDS:
            raise SystemExit(f"{path}: {program['name']}: kind {program['kind']!r} is not one of {', '.join(KINDS)}")
        if not re.fullmatch(r"[0-9a-f]{40}", program["commit"]):
            raise SystemExit(f"{path}: {program['name']}: commit {program['commit']!r} is not 40 hex digits")
        if program["name"] in names:
            raise SystemExit(f"{path}: two programs are named {program['name']!r}")
        names.add(program["name"])
    return programs


def git_dir(mirror: Path, repo: str) -> Path | None:
    """The bare git directory of ``repo``'s snapshot under ``mirror`` (fetch puts it at owner+name/repo)."""
    base = mirror / repo.replace("/", "+")
    for candidate in (base / "repo", base / "repo" / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def git(gitdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True)


# -- one program --------------------------------------------------------------------------------------------


def materialize(program: dict, gitdir: Path, into: Path) -> tuple[str, list[str]]:
    """Write the program's files into ``into``; returns the commit used and notes (a missing commit or file)."""
    notes = []
    commit = program["commit"]
    if git(gitdir, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        head = git(gitdir, "rev-parse", "HEAD").stdout.decode().strip()
        notes.append(f"commit {commit[:12]} not in the snapshot: used its HEAD {head[:12]}")
        commit = head
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    for rel in program["paths"]:
        shown = git(gitdir, "show", f"{commit}:{rel}")
        if shown.returncode != 0:
            notes.append(f"{rel}: not in {commit[:12]}")
            continue
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(shown.stdout)
    return commit, notes


def digest(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def tf_migrate_command() -> list[str]:
    beside = Path(sys.executable).with_name("tf-migrate")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("tf-migrate")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from migrator.cli import main; sys.exit(main())"]


def reason_of(finding: dict) -> str:
    """A manual finding's reason: its rule id and the first clause of what its message says stopped it (up to the
    first ": " outside backquotes)."""
    rule = finding.get("rule", "?")
    if rule in PER_USE:
        return f"{rule} {PER_USE[rule]}"
    message = LEFT_PREFIX.sub("", finding.get("message", "").strip(), count=1)
    quoted, end = False, len(message)
    for i, char in enumerate(message):
        if char == "`":
            quoted = not quoted
        elif not quoted and message.startswith(": ", i):
            end = i
            break
    return f"{rule} {message[:end].strip().rstrip('.')}"


def shorten(text: str, width: int = 120) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def reason_key(reason: str) -> str:
    """A reason with the program's own names (in backquotes) blanked, so that programs stopped alike count together."""
    return re.sub(r"`[^`]*`", "`…`", reason)


def relative(path: str, folder: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(folder.resolve()))
    except ValueError:
        return path


def migrate(folder: Path, timeout: float) -> dict:
    """tf-migrate on ``folder`` in place; its findings, errors and notes, and which files changed."""
    before = digest(folder)
    started = time.monotonic()
    try:
        done = subprocess.run([*tf_migrate_command(), "--output-format", "json", "--color", "never", str(folder)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"records": [], "changed": [], "crash": f"tf-migrate took more than {timeout:.0f} s",
                "seconds": round(time.monotonic() - started, 2)}
    records, crash = [], None
    prefix = str(folder.resolve()) + os.sep
    for line in done.stdout.splitlines():
        try:
            record = json.loads(line.replace(json.dumps(prefix)[1:-1], ""))
        except ValueError:
            continue
        if isinstance(record, dict) and "type" in record:
            if "path" in record and record["path"]:
                record["path"] = relative(record["path"], folder)
            records.append(record)
    errors = any(record["type"] == "error" for record in records)
    if done.returncode not in (0, 1, 2) or (done.returncode == 2 and not errors) or "Traceback (most recent" in done.stderr:
        lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("tf-migrate: ")]
        crash = f"tf-migrate exited {done.returncode}: " + (lines[-1] if lines else "(no message)")
    after = digest(folder)
    changed = sorted(path for path in after if before.get(path) != after[path])
    return {"records": records, "changed": changed, "crash": crash,
            "seconds": round(time.monotonic() - started, 2)}


def code_text(path: Path) -> str:
    """The code of a .py file or of a notebook's code cells, without comments and strings (a docstring, a comment or
    a notebook's printed output that names an Estimator is not TF1 code)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(text).get("cells", [])
            text = "\n".join("".join(cell.get("source", "")) if isinstance(cell.get("source"), list)
                             else str(cell.get("source", "")) for cell in cells if cell.get("cell_type") == "code")
        except (ValueError, AttributeError):
            return text
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("%", "!")))
    words = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in (tokenize.COMMENT, tokenize.STRING):
                words.append(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text
    return " ".join(words).replace(" . ", ".").replace(" (", "(").replace(" .", ".").replace(". ", ".")


def mentions_tf1(folder: Path) -> bool:
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".ipynb") and TF1_CODE.search(code_text(path)):
            return True
    return False


def classify(folder: Path, result: dict) -> dict:
    findings = [r for r in result["records"] if r["type"] == "finding"]
    errors = [r for r in result["records"] if r["type"] == "error"]
    manual = [f for f in findings if f.get("level") == "manual"]
    rules = sorted({f["rule"] for f in findings})
    tiers = [TIERS[rule] for rule in rules if rule in TIERS]
    # "see FILE:LINE" points at the finding that says why: that one is the reason
    reasons = {reason_of(f) for f in manual}
    row = {"rules": rules, "changed": result["changed"], "tier": None, "errors": [],
           "tfm104": sum(1 for f in manual if f["rule"] == "TFM104"),
           "reasons": sorted(r for r in reasons if not re.match(r"TFM\d+ see \S+:\d+", r)) or sorted(reasons),
           "manual": [f"{f['path']}:{f.get('line')}: {f['rule']} {f['message']}" for f in manual]}
    if result["crash"] or errors:
        row["outcome"] = "error"
        row["errors"] = [result["crash"]] if result["crash"] else []
        row["errors"] += [f"{e['path']}:{e.get('line') or 0}: {e['message']}" for e in errors]
    elif manual:
        row["outcome"] = "left"
    elif not findings and mentions_tf1(folder):
        row["outcome"] = "silent"
    elif result["changed"]:
        row["outcome"] = "migrated"
        row["tier"] = max(tiers) if tiers else None
    else:
        row["outcome"] = "unchanged"
    return row


# -- running a migrated program -----------------------------------------------------------------------------


def run_env(runs: dict | None = None, original: bool = False) -> dict:
    """The environment programs run in: this one's without TF_CONFIG, with the entry's own ``env``, and the shims
    (shims/: the stand-ins of what TF 2 or this machine lacks, and the folders of it the entry's ``shims`` names)
    first on the path; for a TF1 copy run by tf1_era.py, the project too."""
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update((runs or {}).get("env", {}))
    paths = [str(SHIMS), *(str(SHIMS / name) for name in (runs or {}).get("shims", [])),
             *([str(HERE.parents[1])] if original else []), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
    return env


def python_command(command: str, original: bool = False) -> list[str]:
    """A manifest command line, with a leading ``python`` meaning this Python; for a TF1 copy (``original``), this
    Python running the program through tf1_era.py, as TF 1.x ran it."""
    words = shlex.split(command)
    if words and words[0] in ("python", "python3"):
        words[0:1] = [sys.executable, *([str(TF1_ERA)] if original else [])]
    return words


def last_error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Exit)\b|^ERROR|^MISMATCH|^error", line):
            return line[:200]
    return lines[-1][:200] if lines else ""


def stand_in(runs: dict, folder: Path, timeout: float) -> str | None:
    """Run the entry's stand-in data generator (or each of a list, in order) in ``folder``; an error line, or None."""
    scripts = runs.get("standin") or []
    for script in [scripts] if isinstance(scripts, str) else scripts:
        source = HERE / script
        code = source.read_text(encoding="utf-8") if script.endswith(".py") and source.is_file() else script
        try:
            done = subprocess.run([sys.executable, "-c", code, *runs.get("standin_args", [])], cwd=folder,
                                  env=run_env(), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"the stand-in took more than {timeout:.0f} s"
        if done.returncode != 0:
            return "stand-in: " + last_error_line(done.stderr + done.stdout)
    return None


# Jupyter's get_ipython(), which notebooks call for shell commands (tensorboard, ngrok): they do nothing here.
NOTEBOOK_SHELL = """\
class _Shell:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def get_ipython():
    return _Shell()"""


def notebook_script(path: Path, local_files: dict[str, str] | None = None) -> str:
    """A notebook's code cells as one script, as Jupyter would run them top to bottom: `%%writefile F` cells write
    F, other cell magics (`%%time`) run their body (`%%bash` and the like are skipped), `%` and `!` lines go, and
    `get_ipython()`'s shell calls do nothing. ``local_files``: each URL the cells read -> the file read instead."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    parts = [NOTEBOOK_SHELL]
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        first, _, body = text.partition("\n")
        if first.startswith("%%writefile"):
            target = first.split(maxsplit=1)[1].split()[-1]
            parts.append(f"with open({target!r}, 'w') as _file:\n    _file.write({body!r})")
            continue
        if first.startswith("%%"):
            if first.split()[0] not in ("%%time", "%%timeit", "%%capture"):
                continue
            text = body
        parts.append("\n".join(_without_magics(text.splitlines())))
    # `from __future__` imports must open the script: they go before the shell stub.
    future = [line for part in parts[1:] for line in part.splitlines() if line.startswith("from __future__ import")]
    parts = future + [NOTEBOOK_SHELL] + ["\n".join(line for line in part.splitlines() if line not in future)
                                         for part in parts[1:]]
    script = "\n\n".join(parts) + "\n"
    for url, local in (local_files or {}).items():
        script = script.replace(url, local)
    return script


# IPython's shell aliases, which its automagic runs without `!` (`ls -la data/`); `pwd` a magic run so too.
AUTOMAGIC = {"cat", "cp", "ldir", "lf", "lk", "ll", "ls", "lx", "mkdir", "mv", "rm", "rmdir", "pwd"}


def _without_magics(lines: list[str]) -> list[str]:
    """The lines of a cell but its `%` and `!` lines and shell aliases run by automagic, each with the lines a
    trailing backslash continues it on."""
    kept, continued = [], False
    for line in lines:
        skip = continued or line.lstrip().startswith(("%", "!")) or _automagic(line)
        continued = skip and line.rstrip().endswith("\\")
        if not skip:
            kept.append(line)
    return kept


def _automagic(line: str) -> bool:
    """`ls -la data/` on a line of its own: not Python, but a shell alias IPython runs."""
    words = line.split()
    if not words or words[0] not in AUTOMAGIC or line != line.lstrip():
        return False
    try:
        compile(line, "<cell>", "exec")
    except SyntaxError:
        return True
    return len(words) == 1  # a bare `ls` is the alias too (as Python, a name read)


def write_notebook_script(runs: dict, where: Path) -> None:
    if "notebook" in runs:
        script = where / runs.get("cwd", ".") / NOTEBOOK_SCRIPT
        script.write_text(notebook_script(where / runs["notebook"], runs.get("local_files")), encoding="utf-8")


def run_once(runs: dict, folder: Path, timeout: float, original: bool = False) -> dict:
    """The entry's command in ``folder`` (as a cluster where the entry has ``cluster``), then each of its ``then``
    commands: runs yes / no, and the last error line when no."""
    where = folder / runs.get("cwd", ".")
    if "cluster" in runs:
        done = run_cluster(runs, where, folder.parent / f"{folder.name}.cluster", timeout, original)
    else:
        command = python_command(f"python {NOTEBOOK_SCRIPT}" if "notebook" in runs else runs["command"], original)
        done = run_command(command, where, runs, timeout, original)
    for number, then in enumerate(runs.get("then", []) if done["runs"] == "yes" else [], 1):
        ours = "{checks}" in then  # a check of ours: plain TF 2, not the TF1 era of the program's copy
        command = python_command(then.format(checks=HERE / "checks"), original and not ours)
        after = run_command(command, where, runs, timeout, original)
        if after["runs"] != "yes":
            return {**done, "runs": "no", "run_error": f"then {number}: {after['run_error']}"}
    return done


def run_command(command: list[str], where: Path, runs: dict, timeout: float, original: bool) -> dict:
    try:
        done = subprocess.run(command, cwd=where, env=run_env(runs, original), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"runs": "no", "run_error": f"timed out after {timeout:.0f} s"}
    error = last_error_line(done.stderr + "\n" + done.stdout) if done.returncode else None
    return {"runs": "no" if done.returncode else "yes", "run_error": error}


def run_original(program: dict, old: Path, timeout: float) -> dict:
    """--run-original: the TF1 copy run as the entry says (its stand-in data first), through tf1_era.py: a check
    that the entry's command line is the program's. Not a ``parity_only`` entry's: its own step count takes hours."""
    runs = program["runs"]
    if runs.get("parity_only"):
        return {}
    timeout = float(runs.get("timeout", timeout))
    problem = stand_in(runs, old / runs.get("cwd", "."), timeout)
    if problem:
        return {"original_runs": "no", "original_error": problem}
    write_notebook_script(runs, old)
    done = run_once(runs, old, timeout, original=True)
    return {"original_runs": done["runs"], "original_error": done["run_error"],
            **({"original_tasks": done["run_tasks"]} if "run_tasks" in done else {})}


def run_program(program: dict, folder: Path, old: Path, timeout: float) -> dict:
    runs = program["runs"]
    timeout = float(runs.get("timeout", timeout))
    out = {"runs": None, "run_error": None, "parity": None, "parity_line": None}
    here = runs.get("cwd", ".")
    for where in (folder, old):
        problem = stand_in(runs, where / here, timeout)
        if problem:
            out["runs"], out["run_error"] = "no", problem
            return out
    for where in (folder, old):  # the TF1 copy's too: parity compares the two scripts
        write_notebook_script(runs, where)
    if runs.get("parity_only"):  # its own step count is too long to run whole here: parity's run stands for it
        out["runs"] = "yes"
    else:
        out.update(run_once(runs, folder, timeout))
    parity = runs.get("parity")
    if parity is True:  # a notebook's: its cells as a script
        parity = str(Path(here) / NOTEBOOK_SCRIPT)
    if out["runs"] == "yes" and parity:
        arguments = shlex.split(runs.get("parity_args", ""))
        command = [*tf_migrate_command(), "parity", str(old / parity), str(folder / parity),
                   "--timeout", str(int(timeout)), *(["--"] + arguments if arguments else [])]
        try:
            done = subprocess.run(command, cwd=folder / here, env=run_env(runs), capture_output=True, text=True,
                                  timeout=3 * timeout)
            text = done.stdout + "\n" + done.stderr
            verdict = re.search(r"^(PARITY|MISMATCH|ERROR)\b.*$", text, re.M)
            out["parity"] = verdict.group(1) if verdict else f"exit {done.returncode}"
            out["parity_line"] = (verdict.group(0) if verdict else last_error_line(text))[:200]
        except subprocess.TimeoutExpired:
            out["parity"], out["parity_line"] = "ERROR", f"parity took more than {3 * timeout:.0f} s"
        if runs.get("parity_only") and out["parity"] not in ("PARITY", "MISMATCH"):
            out["runs"], out["run_error"] = "no", out["parity_line"]
    return out


# -- running a between-graph program as a cluster -----------------------------------------------------------

# What the shims print (REALCODE_PROGRESS set) each time a training loop has done another REALCODE_PROGRESS steps.
PROGRESS = re.compile(r"^realcode progress: (\d+) steps done$", re.MULTILINE)

# A task: its job, its index, the process, and where its output goes.
Task = collections.namedtuple("Task", "job index process log")


def free_port() -> int:
    try:
        import portpicker
        return portpicker.pick_unused_port()
    except ImportError:
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]


def cluster_spec(cluster: dict) -> dict[str, list[str]]:
    """ps and worker hosts on 127.0.0.1 at free ports (and the chief's, where the entry has one: its coordinator,
    or the program itself as the chief task, ``"chief": true`` or the job name the program gives it, "master")."""
    jobs = {"ps": cluster.get("ps", 1), "worker": cluster.get("workers", 2)}
    if cluster.get("coordinator") or cluster.get("chief"):
        jobs = {chief_job(cluster): 1, **jobs}
    return {job: [f"127.0.0.1:{free_port()}" for _ in range(count)] for job, count in jobs.items()}


def chief_job(cluster: dict) -> str:
    chief = cluster.get("chief")
    return chief if isinstance(chief, str) else "chief"


def task_command(runs: dict, spec: dict, job: str, index: int, original: bool) -> list[str]:
    """The command of one task: the entry's, its {ps_hosts} {worker_hosts} {job} {index} filled; for the jobs the
    entry lets only serve (``serve``), standins/std_server.py; for the chief, the entry's coordinator if it has one."""
    cluster = runs["cluster"]
    if job == "chief" and cluster.get("coordinator"):
        return [sys.executable, str(HERE / cluster["coordinator"])]
    if job in cluster.get("serve", ()):
        return [sys.executable, str(HERE / "standins" / "std_server.py")]
    command = runs["command"].format(ps_hosts=",".join(spec["ps"]), worker_hosts=",".join(spec["worker"]),
                                     job=job, index=index)
    return python_command(command, original)


def start_task(runs: dict, spec: dict, job: str, index: int, where: Path, logs: Path, original: bool) -> Task:
    env = run_env(runs, original)
    if runs["cluster"].get("duration"):
        env.setdefault("REALCODE_PROGRESS", "100")
    if runs["cluster"].get("tf_config") or job == chief_job(runs["cluster"]) or job in runs["cluster"].get("serve", ()):
        env["TF_CONFIG"] = json.dumps({"cluster": spec, "task": {"type": job, "index": index}})
    log = logs / f"{job}{index}.log"
    with open(log, "w") as out:
        process = subprocess.Popen(task_command(runs, spec, job, index, original), cwd=where, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    return Task(job, index, process, log)


def task_error(task: Task) -> str:
    return f"{task.job} {task.index}: " + last_error_line(task.log.read_text(errors="replace"))


def stop(tasks: list[Task]) -> None:
    for task in tasks:
        if task.process.poll() is None:
            task.process.terminate()
    for task in tasks:
        try:
            task.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            task.process.kill()
            task.process.wait()


def run_cluster(runs: dict, where: Path, logs: Path, timeout: float, original: bool = False) -> dict:
    """The program as one process per task on 127.0.0.1: the ps tasks and workers 1.. first, then worker 0 (TF1's
    chief; the migrated program's coordinator), or the entry's coordinator as the chief. It runs when that task
    exits 0 within ``timeout`` and every other task has either exited 0 or is still serving; all are then stopped.
    A program that trains until stopped (the cluster's ``duration``, in seconds) runs when, that long after the
    start, no task has failed and the deciding task's log shows its training's progress (PROGRESS: the shims print
    it, REALCODE_PROGRESS set). ``run_tasks``: how each task ended (``serving`` when it was still up)."""
    spec = cluster_spec(runs["cluster"])
    logs.mkdir(parents=True, exist_ok=True)
    chief = chief_job(runs["cluster"])
    decider = (chief, 0) if chief in spec else ("worker", 0)
    order = [(job, index) for job in ("ps", "worker") for index in range(len(spec[job])) if (job, index) != decider]
    duration = runs["cluster"].get("duration")
    tasks = []
    try:
        for job, index in [*order, decider]:
            tasks.append(start_task(runs, spec, job, index, where, logs, original))
        last, others = tasks[-1], tasks[:-1]
        deadline = time.monotonic() + min(duration or timeout, timeout)
        crashed = []
        while last.process.poll() is None and not crashed and time.monotonic() < deadline:
            time.sleep(0.2)
            crashed = [task for task in others if task.process.poll() not in (None, 0)]
        crashed = crashed or [task for task in others if task.process.poll() not in (None, 0)]
        ended = {f"{task.job} {task.index}": "serving" if task.process.poll() is None
                 else f"exit {task.process.returncode}" for task in tasks}
    finally:
        stop(tasks)
    state = ended[f"{last.job} {last.index}"]
    if crashed:
        error = task_error(crashed[0])
    elif state == "serving" and duration and duration <= timeout:
        steps = PROGRESS.findall(last.log.read_text(errors="replace"))
        error = None if steps else f"{last.job} {last.index}: no training progress logged in {duration} s"
    elif state == "serving":
        error = f"{last.job} {last.index}: timed out after {timeout:.0f} s"
    else:
        error = None if state == "exit 0" else task_error(last)
    return {"runs": "no" if error else "yes", "run_error": error, "run_tasks": ended}


def cluster_text(runs: dict) -> str:
    cluster = runs["cluster"]
    text = f"ps {cluster.get('ps', 1)} + {cluster.get('workers', 2)} workers"
    text += f" for {cluster['duration']} s" if cluster.get("duration") else ""
    return text + (f", {Path(cluster['coordinator']).stem} as chief" if cluster.get("coordinator") else "")


# -- the run ------------------------------------------------------------------------------------------------


def fetch_source(repo: str) -> str:
    return f"github:{repo}"


def measure(program: dict, mirror: Path, scratch: Path, args) -> dict:
    row = {"name": program["name"], "kind": program["kind"], "repo": program["repo"], "notes": []}
    gitdir = git_dir(mirror, program["repo"])
    if gitdir is None:
        row.update(outcome="not fetched", tier=None, reasons=[], fetch=fetch_source(program["repo"]))
        return row
    folder, old = scratch / program["name"], scratch / (program["name"] + ".tf1")
    commit, notes = materialize(program, gitdir, folder)
    row["commit"], row["notes"] = commit, notes
    if old.exists():
        shutil.rmtree(old)
    shutil.copytree(folder, old)
    result = migrate(folder, args.timeout)
    row["seconds"] = result["seconds"]
    row.update(classify(folder, result))
    if args.run and row["outcome"] == "migrated" and program.get("runs"):
        row.update(run_program(program, folder, old, args.run_timeout))
    if args.run_original and program.get("runs"):
        row.update(run_original(program, old, args.run_timeout))
    if program.get("runs", {}).get("cluster") and (row.get("runs") or row.get("original_runs")):
        row["run_as"] = cluster_text(program["runs"])
    return row


def tier_text(row: dict) -> str:
    if row["outcome"] != "migrated":
        return ""
    return str(row["tier"]) if row["tier"] else "-"


def detail_text(row: dict) -> str:
    if row["outcome"] == "left":
        return "; ".join(shorten(reason, 100) for reason in row["reasons"])
    if row["outcome"] == "error":
        return "; ".join(row["errors"] + [shorten(reason, 100) for reason in row.get("reasons", [])])
    if row["outcome"] == "not fetched":
        return f"fetch {row['fetch']}"
    if row["outcome"] == "migrated" and row.get("runs"):
        text = f"runs: {row['runs']}" + (f" ({row['run_error']})" if row.get("run_error") else "")
        if row.get("parity"):
            text += f"; parity: {row['parity_line'] or row['parity']}"
        return text
    return ""


def run_text(row: dict) -> str:
    """The detail, with how the program ran (as a cluster, its tasks) and how its TF1 copy ran (--run-original)."""
    parts = [detail_text(row)]
    if row.get("original_runs"):
        parts.append(f"TF1 copy runs: {row['original_runs']}"
                     + (f" ({row['original_error']})" if row.get("original_error") else ""))
    if row.get("run_as"):
        parts.append(f"as {row['run_as']}")
    return "; ".join(part for part in parts if part)


def totals(rows: list[dict]) -> dict:
    table = {}
    for kind in (*KINDS, "all"):
        chosen = [row for row in rows if kind == "all" or row["kind"] == kind]
        if not chosen:
            continue
        count = collections.Counter(row["outcome"] for row in chosen)
        migrated = [row for row in chosen if row["outcome"] == "migrated"]
        table[kind] = {
            "programs": len(chosen),
            "migrated": len(migrated),
            "tier1": sum(1 for row in migrated if row["tier"] == 1),
            "tier2": sum(1 for row in migrated if row["tier"] == 2),
            "runs": sum(1 for row in chosen if row.get("runs") == "yes"),
            "run_tried": sum(1 for row in chosen if row.get("runs")),
            "parity": sum(1 for row in chosen if row.get("parity") == "PARITY"),
            "left": count["left"], "error": count["error"], "silent": count["silent"],
            "unchanged": count["unchanged"], "not_fetched": count["not fetched"],
        }
    return table


def without_one_tfm104(rows: list[dict]) -> list[str]:
    """The between-graph programs left without exactly one TFM104 (issue 32: each left one has one, saying why)."""
    return [row["name"] for row in rows if row["kind"] == "between-graph" and row["outcome"] == "left"
            and row.get("tfm104") != 1]


def reasons_table(rows: list[dict]) -> list[tuple[str, int]]:
    """Each reason with the number of programs it stops (left, or failed with manual findings as well), every
    reason of a program counted; reasons that differ only in the program's own names count together."""
    count, spellings = collections.Counter(), collections.defaultdict(set)
    for row in rows:
        keys = set()
        for reason in row.get("reasons", ()):
            keys.add(reason_key(reason))
            spellings[reason_key(reason)].add(reason)
        count.update(keys)
    shown = {key: next(iter(spellings[key])) if len(spellings[key]) == 1 else key for key in count}
    return sorted(((shown[key], number) for key, number in count.items()), key=lambda item: (-item[1], item[0]))


def render(rows: list[dict], table: dict, reasons: list[tuple[str, int]], stream) -> None:
    width = max([len(row["name"]) for row in rows] + [7])
    print(f"{'program':<{width}}  {'kind':<13}  {'outcome':<11}  tier  reasons / errors / run", file=stream)
    for row in rows:
        detail = run_text(row)
        if row.get("notes"):
            detail = (detail + "  " if detail else "") + "[" + "; ".join(row["notes"]) + "]"
        print(f"{row['name']:<{width}}  {row['kind']:<13}  {row['outcome']:<11}  {tier_text(row):<4}  {detail}",
              file=stream)
    print(file=stream)
    columns = ("programs", "migrated", "tier1", "tier2", "runs", "parity", "left", "error", "silent", "unchanged",
               "not_fetched")
    print(f"{'kind':<13}  " + "  ".join(f"{c:>8}" if len(c) <= 8 else c for c in columns), file=stream)
    for kind, numbers in table.items():
        cells = []
        for column in columns:
            value = str(numbers[column])
            if column == "runs" and numbers["run_tried"]:
                value = f"{numbers['runs']}/{numbers['run_tried']}"
            cells.append(f"{value:>{max(8, len(column))}}")
        print(f"{kind:<13}  " + "  ".join(cells), file=stream)
    if any(row["kind"] == "between-graph" for row in rows):
        unsaid = without_one_tfm104(rows)
        print(file=stream)
        print(f"between-graph programs left without exactly one TFM104: {len(unsaid)}"
              + (f" ({', '.join(unsaid)})" if unsaid else ""), file=stream)
    if reasons:
        print(file=stream)
        print("programs  reason (every reason of each left program counts)", file=stream)
        for reason, number in reasons:
            print(f"{number:>8}  {shorten(reason)}", file=stream)
    missing = sorted({row["fetch"] for row in rows if row["outcome"] == "not fetched"})
    if missing:
        print(file=stream)
        print(f"{len(missing)} snapshot(s) not fetched: fetch each of these, then run again:", file=stream)
        for source in missing:
            print(f"  fetch {source}", file=stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.json")
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("TFM_MIRROR", "/work/.mirror")),
                        help="where fetch put the snapshots (owner+name/repo); default /work/.mirror")
    parser.add_argument("--scratch", type=Path, default=None,
                        help="folder the programs are written into (default: a new temporary folder, kept)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these programs (names, or fnmatch patterns)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write rows, totals and reasons as JSON")
    parser.add_argument("--run", action="store_true",
                        help="run migrated programs that have a `runs` entry (and parity where it names one)")
    parser.add_argument("--run-original", action="store_true",
                        help="run the TF1 copy of every program that has a `runs` entry too, through tf1_era.py "
                             "(whatever its outcome): a check of the entry's command line")
    parser.add_argument("--run-timeout", type=float, default=300.0, help="seconds per run (default 300)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per tf-migrate call (default 600)")
    args = parser.parse_args(argv)

    programs = load_manifest(args.manifest)
    if args.only:
        import fnmatch
        programs = [p for p in programs if any(fnmatch.fnmatchcase(p["name"], pattern) for pattern in args.only)]
        if not programs:
            parser.error("--only matched no program of the manifest")
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="realcode-"))
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    rows = []
    for program in programs:
        rows.append(measure(program, args.mirror, scratch, args))
        if not sys.stdout.isatty():
            continue
        print(f"\r{len(rows)}/{len(programs)} {program['name'][:60]:<60}", end="", file=sys.stderr, flush=True)
    if sys.stdout.isatty():
        print("\r" + " " * 80 + "\r", end="", file=sys.stderr)
    table, reasons = totals(rows), reasons_table(rows)
    render(rows, table, reasons, sys.stdout)
    seconds = round(time.monotonic() - started, 1)
    print(f"\n{len(rows)} programs in {seconds} s; scratch folder: {scratch}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"programs": rows, "totals": table,
                                         "between_graph_left_without_one_tfm104": without_one_tfm104(rows),
                                         "reasons": [{"reason": r, "programs": n} for r, n in reasons],
                                         "seconds": seconds, "scratch": str(scratch)}, indent=1) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
