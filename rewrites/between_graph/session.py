"""The TF1 session that trains the graph, and its loop, as a ClusterCoordinator loop.

Three openings of a session are read: ``with MonitoredTrainingSession(master=server.target,
is_chief=..., hooks=[StopAtStepHook(last_step=N)]) as sess:`` (or ``sess = ...`` before the
loop), ``with sv.managed_session(server.target) as sess:`` and ``sess =
sv.prepare_or_wait_for_session(server.target)`` of a ``sv = Supervisor(is_chief=...,
logdir=...)`` (or ``self.sv = Supervisor(...)``, read as a name in the one method of its class binding it, which
places the graph: ``Supervisors``). The loop ``while not sess.should_stop():`` / ``while not sv.should_stop() and
step < N:`` (or a ``for`` loop, without a StopAtStepHook) keeps its body; its one ``sess.run([train_op, global_step, loss], feed_dict=...)``
becomes a step scheduled on a worker, ``should_stop()`` the step limit (TF1's global step is
the optimizer's ``iterations``). ``while True:`` ends on the step the run fetched
(``if step >= N: break``); a feed dict may be held in a name just before its run. A
``v = sess.run(tensor, feed_dict=...)`` after the loop evaluates the graph's tensor on the chief,
with the trained variables; one in the loop besides its train run, the model at that step (beside.py). The
same ``sess = sv.prepare_or_wait_for_session(...)`` in both branches of
an ``if`` opens one session; so does mnist_replica's ``if FLAGS.existing_servers: ...; sess =
sv.prepare_or_wait_for_session(server_grpc_url, ...) else: sess = sv.prepare_or_wait_for_session(server.target,
...)``, the servers running elsewhere where its test holds (``Session.elsewhere``; what else that branch does stays).
A session writing checkpoints (a Supervisor's ``logdir``, a
MonitoredTrainingSession's ``checkpoint_dir``) becomes a ``tf.train.CheckpointManager`` the
program resumes from, saving when training ends. A MonitoredTrainingSession's scaffold, chief-only
hooks and hooks besides StopAtStepHook are read in monitored.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.between_graph import beside, decided, inputs, modes, monitored, synchronous, unlimited
from rewrites.between_graph.graph import Graph, Names
from rewrites.between_graph.retry import aborts
from rewrites.between_graph.runs import (RUN, Evaluation, as_tuple, feed_dict_of, fed_values, fetched_names,
                                         held_feed, is_run, reads, run_value, trains)
from rewrites.syntax import (Unsupported, bind_arguments, first_line, holder, is_name, list_elements, single_assign,
                             source, statement_value, subtree)

MONITORED_TRAINING_SESSION = ("master", "is_chief", "checkpoint_dir", "scaffold", "hooks", "chief_only_hooks",
                              "save_checkpoint_secs", "save_summaries_steps", "save_summaries_secs", "config",
                              "stop_grace_period_secs", "log_step_count_steps", "max_wait_secs",
                              "save_checkpoint_steps", "summary_dir", "save_graph_def")
SUPERVISOR = ("graph", "ready_op", "ready_for_local_init_op", "is_chief", "init_op", "init_feed_dict",
              "local_init_op", "logdir", "summary_op", "saver", "global_step", "save_summaries_secs",
              "save_model_secs", "recovery_wait_secs", "stop_grace_secs", "checkpoint_basename", "session_manager",
              "summary_writer", "init_fn", "local_init_run_options")
# Supervisor arguments the migrated program does without: its own initialisation, checkpoints and waits.
SUPERVISOR_DROPPED = {"init_op", "summary_op", "saver", "global_step", "save_summaries_secs", "recovery_wait_secs",
                      "stop_grace_secs", "save_model_secs", "checkpoint_basename", "logdir", "is_chief"}
SESSION_ARGUMENTS = ("master", "config", "wait_for_checkpoint", "max_wait_secs", "start_standard_services")
MTS_DROPPED = {"master", "is_chief", "hooks", "config", "checkpoint_dir", "save_checkpoint_secs",
               "save_checkpoint_steps", "stop_grace_period_secs", "max_wait_secs", "log_step_count_steps",
               "save_summaries_steps", "save_summaries_secs", "scaffold", "chief_only_hooks"}
GLOBAL_STEP_READ = ("TF1 read the global step in the run that incremented it, racing the increment (most often the "
                    "value before it); the migrated loop reads it after the step")
STEP_LIMIT = ": this loop, stopping at `{test}`, trains as many steps as it says, where TF1 usually trained one more"
SUPERVISOR_API = "train.Supervisor"
# ConfigProto options TF2's ParameterServerStrategy program does as TF1 did: option -> its value (None: any value).
CONFIG_AS_TF2 = {"allow_soft_placement": "True", "log_device_placement": "False", "device_filters": None}
CONFIG_DROPPED = ("the session's `{config}` goes with the session: TF2 places ops softly and ParameterServerStrategy "
                  "sets the device filters; set its other options with tf.config by hand")
MTS_API = "train.MonitoredTrainingSession"
# A session opened on no master (TF1's default '') is the task's own process's, over a graph placed or not.
OWN_SESSION = ("each task trains a graph of its own in a session of its own process: {session} names no master and no "
               "replica_device_setter places the graph on the cluster, so the tasks share no variable (the server a "
               "task starts serves nothing); there is no between-graph training to migrate: migrate each task's "
               "training as a single-process TF 2 program by hand")
PLACED_OWN_SESSION = ("the graph is placed on the cluster's tasks but {session} names no master: a session of the "
                      "task's own process, which cannot reach the ps tasks holding the graph's variables (TF1 raised "
                      "\"Cannot assign a device\", or, placing them softly, trained a copy in each task); open it on "
                      "the server's target (`master=server.target`) and migrate again, or migrate it by hand")


@dataclass(frozen=True)
class Stepping:
    """How the migrated loop runs a step and reads what it returned."""

    call: str                 # the step run with `{arguments}` (a tuple) / `{listed}` (comma-separated)
    read: str                 # the method giving a step's loss as a number
    counter: str              # the steps run so far: TF1's global step once they are done
    start: str                # its value before the loop, from `{optimizer}`
    end: tuple[str, ...]      # statements after the loop
    schedules: bool           # steps run on a worker, reading its iterator: so can an evaluation (runs.py)


INPUT_ENDS = ("a tf.data input that may end (no `.repeat()` without a count): TF1's session stopped cleanly where a "
              "worker's input ended, and so does the migrated loop, on the first worker's (each TF1 worker trained on "
              "until its own ended)")
# Asynchronous (ParameterServerStrategy): scheduled on a worker without waiting, joined at the end.
SCHEDULED = Stepping("coordinator.schedule(train_step, args={arguments})", "fetch", "scheduled_steps",
                     "int({optimizer}.iterations)", ("coordinator.join()",), True)
# Synchronous (MultiWorkerMirroredStrategy): every worker runs each step together.
SYNCHRONOUS = Stepping("train_step({listed})", "numpy", "trained_steps", "int({optimizer}.iterations.numpy())", (),
                       False)
# Without a cluster (local.py): this process runs each step in turn.
IN_PROCESS = Stepping(SYNCHRONOUS.call, SYNCHRONOUS.read, SYNCHRONOUS.counter, SYNCHRONOUS.start, (), False)


@dataclass
class Session:
    """A TF1 session over the graph: how it opened, who is chief, its loop, where it checkpoints."""

    opening: cst.BaseStatement      # the `with ... as sess:` or `sess = ...` statement
    name: str                       # `sess`
    master: cst.BaseExpression | None
    is_chief: cst.BaseExpression
    loop: cst.While | cst.For
    stops: list[cst.BaseExpression]  # what says a session should stop: `sess.should_stop()`, `sv.should_stop()`
    last_step: cst.BaseExpression | None = None  # a StopAtStepHook's
    checkpoints: cst.BaseExpression | None = None  # the directory
    supervisor: cst.BaseStatement | None = None    # `sv = Supervisor(...)`
    hooks: cst.BaseExpression | None = None        # a MonitoredTrainingSession's
    sync_hook: cst.Call | None = None              # SyncReplicasOptimizer's make_session_run_hook(...)
    scaffold: cst.BaseExpression | None = None     # a MonitoredTrainingSession's (monitored.py)
    chief_hooks: cst.BaseExpression | None = None  # its chief_only_hooks
    end_hooks: list = field(default_factory=list)  # those of them run after the loop (end_hooks.py)
    manager: dict[str, str] = field(default_factory=dict)  # the CheckpointManager's options (code), by name
    notes: list[tuple[str, cst.CSTNode, str]] = field(default_factory=list)  # what the program does without
    arguments: list[cst.BaseExpression] = field(default_factory=list)  # names the opening calls read
    config: cst.BaseExpression | None = None       # the session's ConfigProto
    elsewhere: cst.BaseExpression | None = None    # `FLAGS.existing_servers`: where it holds the servers run elsewhere
    kept: list[cst.BaseStatement] = field(default_factory=list)  # what that branch does besides opening the session
    graph: cst.BaseExpression | None = None        # a Supervisor's `graph`: the `with tf.Graph().as_default() as g:`
    retried: str | None = None                     # the flag opening it again after an AbortedError (retry.py)
    written: list[cst.BaseStatement] = field(default_factory=list)  # the loop's writes of fetched summaries: gone
    mode: modes.Mode | None = None                 # a flag choosing in the loop: training or not (modes.py)
    timer: tuple[cst.BaseExpression | None, cst.BaseExpression | None] = (None, None)  # the seconds / steps
    # between the checkpoints it saved, as given
    unlimited: bool = False                        # its loop has no step limit (unlimited.py)
    saved_every: str | None = None                 # then the seconds between the checkpoints the loop saves

    @property
    def statements(self) -> list[cst.BaseStatement]:
        """What opened the session, besides its loop: gone with it."""
        return [self.opening, *([self.supervisor] if self.supervisor is not None else [])]

    @property
    def owners(self) -> set[str]:
        """The session's name and its Supervisor's (`sv`, `self.sv`): the migrated program has neither."""
        return {self.name, *(holder(stop.func.value) for stop in self.stops)}


def owned(node: cst.CSTNode, owners: set[str]) -> bool:
    """``node`` is the session or its Supervisor (`sess`, `sv`, `self.sv`)."""
    return isinstance(node, (cst.Name, cst.Attribute)) and holder(node) in owners


class Supervisors(dict):
    """holder -> the statement binding a Supervisor to it: `sv = Supervisor(...)` anywhere in the module, or
    `self.sv = Supervisor(...)` read as a name in the one method binding it (``methods``: that method, its class)."""

    def __init__(self) -> None:
        super().__init__()
        self.methods: dict[str, tuple[cst.FunctionDef, cst.ClassDef]] = {}
        self._inside: dict[str, set[int]] = {}

    def bind_in_method(self, key: str, statement: cst.BaseStatement, method: cst.FunctionDef,
                       owner: cst.ClassDef) -> None:
        self[key], self.methods[key] = statement, (method, owner)
        self._inside[key] = {id(node) for node in subtree(method)}

    def of(self, node: cst.CSTNode) -> str | None:
        """The holder of the Supervisor ``node`` names, where it is read."""
        key = holder(node)
        if key not in self or key in self.methods and id(node) not in self._inside[key]:
            return None
        return key

    def check_other_uses(self, session: "Session", allowed: list[cst.CSTNode], scope: cst.CSTNode) -> None:
        """The session's Supervisor is used nowhere but in ``allowed`` (where the session opens, its loop runs and
        it stops): in ``scope`` (the function or module holding it) for a name, in its class for `self.sv`."""
        if session.supervisor is None:
            return
        key = holder(session.stops[0].func.value)
        method, owner = self.methods.get(key, (None, scope))
        ids = {id(node) for statement in allowed for node in subtree(statement)}
        use = next((node for node in subtree(owner) if owned(node, {key}) and id(node) not in ids), None)
        if use is not None:
            elsewhere = method is not None and id(use) not in self._inside[key]
            where = f" in `{_method_of(owner, use).name.value}`" if elsewhere else ""
            raise Unsupported(use, f"`{key}` is used{where} besides opening the session and stopping its loop: the "
                                   "migrated program has no Supervisor; migrate that use by hand")


def _method_of(owner: cst.ClassDef, node: cst.CSTNode) -> cst.FunctionDef:
    return next(method for method in owner.body.body if isinstance(method, cst.FunctionDef)
                and any(inner is node for inner in subtree(method)))


def stop_statements(block: list, owners: set[str]) -> list[cst.BaseStatement]:
    """`sv.stop()`, `sess.close()` of ``block``: gone with the session."""
    return [statement for statement in block if isinstance(value := statement_value(statement), cst.Call)
            and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("stop", "close")
            and owned(value.func.value, owners) and not value.args]


def opens_session(statement, names: Names, supervisors: Supervisors) -> bool:
    return _opens(statement, names, supervisors) or bool(_branches(statement, names, supervisors))


def _opens(statement, names: Names, supervisors: Supervisors) -> bool:
    call = _opening_call(statement)
    return call is not None and (names.api(call.func) == MTS_API or _supervisor_method(call, supervisors) is not None)


def _branches(statement, names: Names, supervisors: Supervisors) -> list[cst.BaseStatement]:
    """`if ...: ... sess = <session>(...) else: ... sess = <session>(...)`: the statements opening the session,
    each branch's last."""
    if not (isinstance(statement, cst.If) and isinstance(statement.orelse, cst.Else)
            and all(isinstance(b, cst.IndentedBlock) for b in (statement.body, statement.orelse.body))):
        return []
    lasts = [statement.body.body[-1], statement.orelse.body.body[-1]]
    if not all(not isinstance(last, cst.With) and _opens(last, names, supervisors) for last in lasts):
        return []
    return lasts if len({single_assign(last)[0] for last in lasts}) == 1 else []


def distinct_openings(openings: list[tuple], names: Names, supervisors: Supervisors) -> list[tuple]:
    """The (statement, block) openings, a session opened in both branches of an `if` once: the `if`."""
    inner = {id(last) for statement, _ in openings for last in _branches(statement, names, supervisors)}
    return [(statement, block) for statement, block in openings if id(statement) not in inner]


def _one_session(statement: cst.If, names: Names, supervisors: Supervisors
                 ) -> tuple[cst.BaseStatement, cst.BaseExpression | None, list[cst.BaseStatement]]:
    """Of an `if` opening the session in both branches, the one opening: the same, and nothing else, in both; or,
    the servers running elsewhere where the `if`'s test holds, another target there (and what else that branch
    does, kept) and the target of a Server of this process otherwise. (opening, that test, what is kept)"""
    first, second = _branches(statement, names, supervisors)
    calls = [_opening_call(first), _opening_call(second)]
    bound = [bind_arguments(call, SESSION_ARGUMENTS if _supervisor_method(call, supervisors) else
                            MONITORED_TRAINING_SESSION) for call in calls]
    if None in bound or not calls[0].func.deep_equals(calls[1].func) or set(bound[0]) != set(bound[1]):
        raise Unsupported(statement, "the branches of this `if` open the session differently: migrate it by hand")
    other = next((key for key in bound[0] if key != "master"
                  and not bound[0][key][1].value.deep_equals(bound[1][key][1].value)), None)
    if other is not None:
        raise Unsupported(statement, "the branches of this `if` do more than open the same session: migrate it by "
                                     "hand")
    masters = [_value(args, "master") for args in bound]
    if masters[0] is None and masters[1] is None or None not in masters and masters[0].deep_equals(masters[1]):
        if len(statement.body.body) > 1 or len(statement.orelse.body.body) > 1:
            raise Unsupported(statement, "the branches of this `if` do more than open the same session: migrate it "
                                         "by hand")
        return first, None, []
    if not (_is_target(masters[1]) and masters[0] is not None and not _is_target(masters[0])
            and len(statement.orelse.body.body) == 1):
        shown = [names.code(master) if master is not None else "no target" for master in masters]
        raise Unsupported(statement, f"the session opens on `{shown[0]}` where `{names.code(statement.test)}` and "
                                     f"on `{shown[1]}` otherwise: migrated where the `if` opens it on servers running "
                                     "elsewhere (another target) and, in its `else`, on `server.target` of this "
                                     "process's Server and nothing more; migrate the `if` by hand")
    return second, statement.test, list(statement.body.body[:-1])


def _is_target(master: cst.BaseExpression | None) -> bool:
    """`server.target`"""
    return isinstance(master, cst.Attribute) and master.attr.value == "target" and isinstance(master.value, cst.Name)


def read_session(statement, block: list, names: Names, supervisors: Supervisors) -> Session:
    """The session ``statement`` opens (``block``: the statements of its block, for a loop after it); an `if`
    opening the same session in both branches opens one."""
    opened, elsewhere, kept = _one_session(statement, names, supervisors) if isinstance(statement, cst.If) \
        else (statement, None, [])
    call = _opening_call(opened)
    name = _session_name(opened)
    if name is None:
        raise Unsupported(statement, "the session must be named (`with ... as sess:` or `sess = ...`)")
    loop = _loop(statement, block, name)
    if names.api(call.func) == MTS_API:
        session = _monitored(statement, call, name, loop, names)
    else:
        session = _supervised(statement, call, name, loop, names, supervisors)
    # What the other branch's opening reads goes with the session too.
    session.arguments += [arg.value for other in _branches(statement, names, supervisors)
                          if other is not opened for arg in _opening_call(other).args]
    use = next((node for kept_statement in kept for node in subtree(kept_statement)
                if owned(node, session.owners)), None)
    if use is not None:
        raise Unsupported(use, f"`{source(use)}` is used besides the one run of each step: migrate that by hand")
    session.elsewhere, session.kept = elsewhere, kept
    return session


def _opening_call(statement) -> cst.Call | None:
    if isinstance(statement, cst.With) and len(statement.items) == 1 and isinstance(statement.items[0].item, cst.Call):
        return statement.items[0].item
    value = statement_value(statement)
    return value if isinstance(value, cst.Call) and single_assign(statement) is not None else None


def _session_name(statement) -> str | None:
    if isinstance(statement, cst.With):
        asname = statement.items[0].asname
        return asname.name.value if asname is not None and isinstance(asname.name, cst.Name) else None
    return single_assign(statement)[0]


def _supervisor_method(call: cst.Call, supervisors: Supervisors) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("managed_session", "prepare_or_wait_for_session"):
        return supervisors.of(func.value)
    return None


def _loop(statement, block: list, name: str) -> cst.While | cst.For:
    body = statement.body.body if isinstance(statement, cst.With) else block[block.index(statement) + 1:]
    loops = [s for s in body if isinstance(s, (cst.While, cst.For))
             and any(is_run(node, name) for node in subtree(s))]
    if not loops:
        raise Unsupported(statement, f"no `while` or `for` loop running `{name}` after the session opens")
    return loops[0]


def _monitored(statement, call: cst.Call, name: str, loop: cst.While | cst.For, names: Names) -> Session:
    args = bind_arguments(call, MONITORED_TRAINING_SESSION)
    if args is None:
        raise Unsupported(call, "MonitoredTrainingSession arguments that cannot be read statically")
    unknown = next((key for key in args if key not in MTS_DROPPED), None)
    if unknown is not None:
        raise Unsupported(args[unknown][1], f"MonitoredTrainingSession({unknown}=...) is not migrated yet: do its "
                                            "work around the migrated loop by hand")
    if "is_chief" not in args and "master" in args:
        raise Unsupported(call, "MonitoredTrainingSession without is_chief: say which worker is TF1's chief")
    # (without a master, the session is the task's own: TF1's default chief, left by on_no_server)
    is_chief = args["is_chief"][1].value if "is_chief" in args else cst.Name("True")
    return Session(statement, name, _value(args, "master"), is_chief, loop,
                   stops=[cst.parse_expression(f"{name}.should_stop()")], checkpoints=_value(args, "checkpoint_dir"),
                   hooks=_value(args, "hooks"), scaffold=_value(args, "scaffold"),
                   chief_hooks=_value(args, "chief_only_hooks"), arguments=[a.value for a in call.args],
                   config=_value(args, "config"),
                   timer=(_value(args, "save_checkpoint_secs"), _value(args, "save_checkpoint_steps")))


def on_no_server(session: Session, placed: bool) -> str | None:
    """Why a session opened on no master (TF1's default `''`: a session of the task's own process) is left, over a
    graph ``placed`` on the cluster or not; None for a session opened on a master."""
    master = session.master
    if master is not None and not (isinstance(master, cst.SimpleString) and master.evaluated_value == ""):
        return None
    opened = "the Supervisor's session" if session.supervisor is not None else "the MonitoredTrainingSession"
    return (PLACED_OWN_SESSION if placed else OWN_SESSION).format(session=opened)


def _supervised(statement, call: cst.Call, name: str, loop: cst.While | cst.For, names: Names,
                supervisors: Supervisors) -> Session:
    sv = _supervisor_method(call, supervisors)
    supervisor = supervisors[sv]
    created, *flagged = synchronous.supervisor_calls(supervisor, names.api)  # the synchronous one in an `if`
    args = bind_arguments(created, SUPERVISOR)
    if args is None:
        raise Unsupported(created, "Supervisor arguments that cannot be read statically")
    unknown = next((key for key in args if key not in {*SUPERVISOR_DROPPED, "graph"}), None)
    if unknown is not None:
        raise Unsupported(args[unknown][1], f"Supervisor({unknown}=...) is not migrated: do its work around the "
                                            "migrated loop by hand")
    if "is_chief" not in args:
        raise Unsupported(created, "Supervisor without is_chief: say which worker is TF1's chief")
    opened = bind_arguments(call, SESSION_ARGUMENTS)
    if opened is None or set(opened) - {"master", "config", "start_standard_services"}:
        raise Unsupported(call, f"{call.func.attr.value}(master, config=...) is migrated; other arguments are not")
    save = _value(args, "save_model_secs")
    logdir = _value(args, "logdir")
    if logdir is not None and is_name(logdir, "None") or (save is not None and source_is_zero(save)):
        logdir = None
    return Session(statement, name, _value(opened, "master"), args["is_chief"][1].value, loop,
                   stops=[cst.parse_expression(f"{sv}.should_stop()")], checkpoints=logdir, supervisor=supervisor,
                   arguments=[a.value for made in (call, created, *flagged) for a in made.args],
                   config=_value(opened, "config"), graph=_value(args, "graph"), timer=(save, None))


def config_notes(session: Session, names: Names, only_for_session: dict[str, cst.BaseStatement]
                 ) -> list[tuple[str, cst.CSTNode, str]]:
    """The session's ConfigProto goes with it. Without a note where TF2 does the same: soft placement (TF2's
    default), no placement log, and device filters (ParameterServerStrategy sets its own: a worker sees the ps
    tasks and the coordinator, a ps task the workers and the coordinator; no worker another worker, as the usual
    filters `["/job:ps", "/job:worker/task:%d" % i]` said); else a note naming what is dropped."""
    config = monitored.bound(session.config, only_for_session)
    if config is None:
        return []
    proto = isinstance(config, cst.Call) and names.api(config.func) == "ConfigProto"
    args = bind_arguments(config, tuple(CONFIG_AS_TF2)) if proto else None
    if args is not None and all(key in CONFIG_AS_TF2 and CONFIG_AS_TF2[key] in (None, names.code(value[1].value))
                                for key, value in args.items()):
        return []
    return [("TFM103", config, CONFIG_DROPPED.format(config=names.code(config)))]


def source_is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.evaluated_value == 0


def _value(args: dict, name: str) -> cst.BaseExpression | None:
    return args[name][1].value if name in args else None


def last_step(session: Session, graph: Graph, names: Names, only_for_session: dict[str, cst.BaseStatement]) -> None:
    """The StopAtStepHook's last step of a MonitoredTrainingSession (and the SyncReplicasOptimizer's hook, whose
    work the migrated strategy does; other hooks: monitored.py)."""
    for hook in list_elements(monitored.bound(session.hooks, only_for_session)):
        hook = monitored.bound(hook, only_for_session)
        if synchronous.is_hook(hook, graph.optimizer_name if graph.sync_replicas else None):
            session.sync_hook = hook
            continue
        if not (isinstance(hook, cst.Call) and names.api(hook.func) == "train.StopAtStepHook"):
            monitored.other_hook(session, names, hook, only_for_session)
            continue
        bound = bind_arguments(hook, ("num_steps", "last_step"))
        if bound is None or set(bound) != {"last_step"}:
            raise Unsupported(hook, "StopAtStepHook(num_steps=...) counts from wherever a run resumed: give "
                                    "last_step")
        session.last_step = bound["last_step"][1].value


# -- the loop ---------------------------------------------------------------------------------


def migrated_loop(session: Session, graph: Graph, names: Names, outside: list[cst.CSTNode], stepping: Stepping
                  ) -> tuple[list[cst.BaseStatement], list[cst.CSTNode], list, list[Evaluation]]:
    """The loop running its steps (with what goes before and after it), the run statement it replaced (and the
    feed dict it held, and the code beside.py replaced), notes on it, the runs evaluating the graph in it.
    ``outside``: the code around the loop, which may read what the run fetched.

    TF1's asynchronous workers trained concurrently, and so do the migrated ones: a step is scheduled without
    waiting for it; its loss is fetched where the loop reads it (every step if it prints each one, every k-th
    under an `if`), the step count is the steps scheduled, and the loop ends by joining the coordinator.
    Synchronous steps are read the same way, where the loop reads them."""
    loop = session.loop
    statements = [s for s in loop_statements(session, names.api) if s not in session.written]
    run = _the_run(session, names.api, graph)
    if isinstance(run, cst.If):
        raise Unsupported(run, f"`{first_line(run)}` in the loop chooses the runs of a step: one run of the train_op "
                               "a step is migrated, not an `if` choosing between training and other runs (a mode "
                               "flag's inference); migrate it by hand")
    kept = _kept(run, graph)
    _check_summaries_only_written(session, run, graph, names.api)
    loss, step = kept.get(step_result(session, graph, names.api)), kept.get(graph.global_step)
    conditions, tests = _limits(session, names, stepping.counter, _breaks(loop))
    held = held_feed(run, statements, [loop.test if isinstance(loop, cst.While) else loop.iter, *outside])
    counted = session.last_step is not None or step is not None
    waits = loss is not None and any(is_name(node, loss) for code in outside for node in subtree(code))
    others = beside.loop_runs(session, graph, names, stepping, [run, held])
    body, after_run = [], False
    for statement in statements:
        if statement is run:
            body += _stepped(run, held, graph, names, kept, stepping, fetch=waits, counted=counted)
            after_run = True
        elif statement is held:
            continue
        else:
            statement = others.rewritten(statement, names.spelled)
            read = loss and after_run and not waits
            body.append(statement.visit(_Fetch(loss, stepping.read)) if read else statement)
    header = [loop.iter] if isinstance(loop, cst.For) else conditions
    replaced = {id(n) for node in others.nodes for n in subtree(node)}
    for node in (n for code in [*header, *(s for s in statements if s not in (run, held))] for n in subtree(code)):
        if owned(node, session.owners) and id(node) not in replaced:
            raise Unsupported(node, f"`{source(node)}` is used besides the one run of each step: migrate that by "
                                    "hand")
    if session.mode is not None and body:  # the `if`'s comments before the training loop's first statement
        body[0] = body[0].with_changes(leading_lines=[*session.mode.statement.leading_lines, *body[0].leading_lines])
    new = loop.with_changes(body=loop.body.with_changes(body=body))
    if isinstance(loop, cst.While):
        new = new.with_changes(test=cst.parse_expression(" and ".join(tests)))
    else:
        new = new.with_changes(iter=names.spelled(loop.iter))
    before = [f"{stepping.counter} = {stepping.start.format(optimizer=graph.optimizer_name)}"] if counted else []
    after = [cst.parse_statement(f"{line}\n") for line in stepping.end]
    ran = [run, *([held] if held is not None else []), *others.nodes]
    notes = _step_notes(run, loop, graph)
    chosen = [new, *after]
    if session.mode is not None:
        chosen = [modes.loops(session, graph, names, conditions, [new, *after], ran, notes)]
    if stepping is not SYNCHRONOUS and graph.elements and inputs.may_end(
            [*graph.dataset_statements, *(new for _, news, _ in graph.returns for new in news)]):
        notes.append(("TFM103", loop, INPUT_ENDS))
        # Where it ended: the steps trained, as TF1's global step said.
        ended = [*before, *([f"{step} = {stepping.counter}"] if counted and step is not None else [])]
        return [*map(cst.parse_statement, before), _until_input_ends(chosen, ended)], ran, notes, \
            others.evaluations
    if session.unlimited:
        if stepping is not SCHEDULED:
            raise Unsupported(loop, unlimited.SYNCHRONOUS)
        if session.mode is not None:
            raise Unsupported(loop, "a loop with no step limit chooses between training and other runs: migrate it "
                                    "by hand")
        secs = unlimited.timer(*session.timer) if session.checkpoints is not None else None
        session.saved_every = secs
        notes.append(("TFM103", loop, unlimited.UNLIMITED.format(secs=secs) if secs else unlimited.UNLIMITED_UNSAVED))
        return [*map(cst.parse_statement, before), new], ran, notes, others.evaluations
    return [*map(cst.parse_statement, before), *chosen], ran, notes, others.evaluations


def _until_input_ends(statements: list[cst.BaseStatement], ended: list[str]) -> cst.Try:
    """The loop, stopping where its input ends, as TF1's session did (an OutOfRangeError stopped it cleanly), then
    running ``ended``."""
    first = statements[0]
    handler = cst.ExceptHandler(
        body=cst.IndentedBlock([cst.parse_statement(line) for line in ended] or [
            cst.SimpleStatementLine([cst.Pass()])], header=cst.TrailingWhitespace(
                whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment("# TF1's session stopped there too"))),
        type=cst.parse_expression("tf.errors.OutOfRangeError"))
    return cst.Try(body=cst.IndentedBlock([first.with_changes(leading_lines=[]), *statements[1:]]),
                   handlers=[handler], leading_lines=first.leading_lines)


def loop_statements(session: Session, api) -> list[cst.BaseStatement]:
    """The loop's statements, those of a step's `try: ... except AbortedError` in its place (retry.py), those of
    the branch training in that of an `if` choosing it (modes.py), the body of an `if` the loop decides (decided.py)."""
    mode = session.mode.statement if session.mode is not None else None
    statements = []
    for s in session.loop.body.body:
        taken = aborts(s, session.retried, api) or decided.always_taken(s, statements)
        statements += s.body.body if taken else session.mode.training if s is mode else [s]
    return statements


def _the_run(session: Session, api, graph: Graph) -> cst.BaseStatement:
    runs = [s for s in loop_statements(session, api) if any(is_run(node, session.name) for node in subtree(s))]
    if len(runs) > 1:  # the others evaluate the graph (beside.py)
        runs = [s for s in runs if trains(s, session.name, graph)]
    if len(runs) != 1:
        raise Unsupported(session.loop, "the loop must run the session's train_op exactly once per step")
    return runs[0]


def step_result(session: Session, graph: Graph, api) -> str:
    """What the step returns: the loss, or the one other tensor the graph computes that the run fetches (an
    accuracy of the batch), computed from the same forward pass as TF1's run computed it."""
    run = _the_run(session, api, graph)
    fetches, _ = fetched_names(run, bind_arguments(run_value(run), RUN)["fetches"][1].value)
    return next((f for f in fetches if f not in (graph.train_op, graph.global_step, *graph.merged)), graph.loss)


def _limits(session: Session, names: Names, counter: str, breaks: list[cst.If]
            ) -> tuple[list[cst.BaseExpression], list[str]]:
    """(the loop's own conditions, the migrated loop's tests): a `while` loop stops when the session says so,
    and at its own limit, the StopAtStepHook's or its own `if ...: break` (``breaks``); a `for` loop runs its
    course (without a StopAtStepHook, which would have stopped the session under it)."""
    loop = session.loop
    if isinstance(loop, cst.For):
        if session.last_step is not None:
            raise Unsupported(loop, "a `for` loop under a StopAtStepHook: TF1 raised once the hook stopped the "
                                    "session; loop `while not sess.should_stop():`")
        return [], []
    if is_name(loop.test, "True"):
        if session.last_step is not None:
            raise Unsupported(loop, "`while True:` under a StopAtStepHook: TF1 raised once the hook stopped the "
                                    "session; loop `while not sess.should_stop():`")
        if not breaks:
            raise Unsupported(loop, "`while True:` must say when it ends in its own body: `if step >= N: break`")
        return [], ["True"]
    conditions = [c for c in _conjuncts(loop.test) if not any(_is_should_stop(c, stop) for stop in session.stops)]
    if len(conditions) == len(_conjuncts(loop.test)):
        raise Unsupported(loop, f"the loop must stop when the session says so: `while not "
                                f"{cst.Module([]).code_for_node(session.stops[0])}`")
    tests = [names.code(condition) for condition in conditions]
    if session.last_step is not None:
        tests.append(f"{counter} < {names.code(session.last_step)}")
    session.unlimited = not tests and not breaks
    return conditions, tests or ["True"]


def _breaks(loop: cst.While | cst.For) -> list[cst.If]:
    """The `if ...: break` statements of the loop's own body."""
    found = []
    for statement in loop.body.body:
        if not (isinstance(statement, cst.If) and statement.orelse is None):
            continue
        body = statement.body.body
        smalls = body if isinstance(statement.body, cst.SimpleStatementSuite) else \
            (body[0].body if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) else [])
        if len(smalls) == 1 and isinstance(smalls[0], cst.Break):
            found.append(statement)
    return found


def _kept(run: cst.BaseStatement, graph: Graph) -> dict[str, str]:
    """What the run fetched and the loop keeps: the fetched name -> the name it is assigned to."""
    value = run_value(run)
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "run"):
        raise Unsupported(run, "the session's run must be a statement of its own")
    args = bind_arguments(value, RUN)
    if args is None or "fetches" not in args or set(args) - {"fetches", "feed_dict"}:
        raise Unsupported(value, "run(fetches, feed_dict={...}) is migrated")
    fetches, targets = fetched_names(run, args["fetches"][1].value)
    if graph.train_op not in fetches:
        raise Unsupported(value, "a run without the train_op")
    unknown = next((fetch for fetch in fetches if fetch not in (graph.train_op, graph.loss, graph.global_step,
                                                                *graph.merged) and fetch not in graph.computed), None)
    if unknown is not None:
        raise Unsupported(value, f"run() fetches `{unknown}`: the train_op, the global step and the loss or another "
                                 "tensor the graph computes are migrated")
    values = [fetch for fetch in fetches if fetch not in (graph.train_op, graph.global_step, *graph.merged)]
    if len(values) > 1:
        raise Unsupported(value, f"run() fetches `{values[1]}` besides `{values[0]}`: the step returns one tensor "
                                 "(the loss, or another the graph computes)")
    kept = {fetch: target for fetch, target in zip(fetches, targets) if target and fetch not in graph.merged}
    attribute = next((t for fetch, t in kept.items() if "." in t and fetch != graph.global_step), None)
    if attribute is not None:
        raise Unsupported(run, f"run() assigns a result to `{attribute}`: only the global step's may be kept in an "
                               "attribute (the step's other results are fetched where the loop reads them by name)")
    return kept


def _check_summaries_only_written(session: Session, run: cst.BaseStatement, graph: Graph, api) -> None:
    """What the run fetched of the merged summaries is only written to a summary writer (runs.summary_writes):
    the migrated step makes no summaries."""
    if not graph.merged:
        return
    fetches, targets = fetched_names(run, bind_arguments(run_value(run), RUN)["fetches"][1].value)
    summaries = {target for fetch, target in zip(fetches, targets) if fetch in graph.merged and target}
    used = next((node for statement in loop_statements(session, api) if statement not in (run, *session.written)
                 for node in subtree(statement) if isinstance(node, cst.Name) and node.value in summaries), None)
    if used is not None:
        raise Unsupported(used, f"`{used.value}`, the summaries the run fetched, is used besides writing them to a "
                                "summary writer: the migrated step makes no TF1 summaries; migrate that by hand")


class _Fetch(cst.CSTTransformer):
    """Each read of ``name`` (what a step returned) becomes ``name.fetch()`` (or another ``read`` method)."""

    def __init__(self, name: str, read: str) -> None:
        super().__init__()
        self.name, self.read, self.targets = name, read, 0

    def visit_AssignTarget(self, node) -> None:
        self.targets += 1

    def leave_AssignTarget(self, original_node, updated_node):
        self.targets -= 1
        return updated_node

    def leave_Name(self, original_node, updated_node):
        if updated_node.value == self.name and not self.targets:
            return cst.parse_expression(f"{self.name}.{self.read}()")
        return updated_node


def _step_notes(run: cst.BaseStatement, loop: cst.While | cst.For, graph: Graph
                ) -> list[tuple[str, cst.CSTNode, str]]:
    step = _kept(run, graph).get(graph.global_step)
    if step is None:
        return []
    if isinstance(loop, cst.For):
        return [("TFM106", run, GLOBAL_STEP_READ)]
    # The loop's test, or a break, ending on the step it fetched.
    limit = next((test for test in [loop.test, *(b.test for b in _breaks(loop))]
                  if any(reads(node, step) for node in subtree(test))), loop.test)
    limited = any(reads(node, step) for node in subtree(limit))
    test = cst.Module([]).code_for_node(limit)
    return [("TFM106", run, GLOBAL_STEP_READ + (STEP_LIMIT.format(test=test) if limited else ""))]


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not test.lpar:
        return [*_conjuncts(test.left), *_conjuncts(test.right)]
    return [test]


def _is_should_stop(test, stop: cst.Call) -> bool:
    return (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
            and isinstance(test.expression, cst.Call) and not test.expression.args
            and test.expression.func.deep_equals(stop.func))


def _stepped(run: cst.BaseStatement, held: cst.BaseStatement | None, graph: Graph, names: Names,
             kept: dict[str, str], stepping: Stepping, *, fetch: bool, counted: bool) -> list[cst.BaseStatement]:
    """`_, step, loss_value = sess.run([train_op, global_step, loss], feed_dict={x: ..., y: ...})`
    -> `loss_value = coordinator.schedule(train_step, args=(...))` (or `train_step(...)`), the step counted."""
    feeds = fed_values(feed_dict_of(run, held), graph, names, run)
    arguments = ["per_worker_iterator"] * bool(graph.elements) + feeds
    step = stepping.call.format(arguments=as_tuple(arguments), listed=", ".join(arguments))
    step += f".{stepping.read}()" if fetch else ""
    result = next((fetch for fetch in kept if fetch not in (graph.train_op, graph.global_step)), None)
    lines = [f"{kept[result]} = {step}" if result is not None else step]
    if counted:
        lines.append(f"{stepping.counter} += 1")
    if graph.global_step in kept:
        lines.append(f"{kept[graph.global_step]} = {stepping.counter}")
    statements = [cst.parse_statement(line) for line in lines]
    statements[0] = statements[0].with_changes(leading_lines=run.leading_lines)
    return statements
