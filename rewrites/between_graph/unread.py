"""Between-graph programs whose session the discovery reads in none of its shapes: where their TFM104 goes.

A module holds one when it makes a session (a MonitoredTrainingSession, a Supervisor's managed_session /
prepare_or_wait_for_session, a plain Session) but opens none as session.py reads them, and it calls TF1-only
cluster code (rewrites/tf1_cluster.py's TF1_ONLY) or opens a plain Session on a server's `.target`. What stopped
it is, in this order: the first of those sessions in a function placing a graph on the cluster
(replica_device_setter, SyncReplicasOptimizer); the first graph under `tf.device(replica_device_setter(...))`,
which no session read after it trains (named: the parameter of its function that runs it, and the plain Session
without a target a caller passes there); the first of those sessions. A module without a session (a server launcher,
a model's helper module) holds no program of its own, nor does one whose only cluster code is a ClusterSpec, a
Server or a /job:ps string (an Estimator program given a cluster, its device filters).

A module that starts a Server of its cluster itself and trains with a TF1 Estimator is a between-graph program too
(the ps tasks join that Server, the others run the Estimator on the cluster): when the Estimator rewrite left its
Estimator (its TFM302 says why), ``estimator_left`` places its TFM104 at the Estimator's driver. rewrites/tf1_cluster.py
asks, as it runs after the program rewrites.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from rewrites.between_graph.session import MTS_API, Supervisors
from rewrites.syntax import children, first_line, is_name, single_assign, source, subtree
from rewrites.tf1_cluster import TF1_ONLY

PLAIN_SESSIONS = {"Session", "InteractiveSession", "compat.v1.Session", "compat.v1.InteractiveSession"}
SUPERVISOR_METHODS = ("managed_session", "prepare_or_wait_for_session")
PLACEMENT = {"train.replica_device_setter", "train.SyncReplicasOptimizer"}
SERVERS = {"train.Server", "distribute.Server"}
# What trains the program in an Estimator: its driver, else the Estimator made (Estimator, a canned one, a Keras
# model's).
ESTIMATOR_DRIVERS = ("estimator.train_and_evaluate", "contrib.learn.learn_runner.run")
ESTIMATORS = ("Estimator", "Classifier", "Regressor", "model_to_estimator")
OPENED = ("only a session opened where its loop runs (`with ... as sess:` or `sess = ...` before the loop) is read; "
          "migrate the program by hand")


@dataclass
class _Made:
    """A session the module makes: the call, its statement, the outermost and the innermost function it is in."""

    call: cst.Call
    statement: cst.CSTNode
    outermost: cst.FunctionDef | None
    innermost: cst.FunctionDef | None


@dataclass
class _Cluster:
    """The sessions and the cluster code of a module; `placed`: the outermost functions placing a graph (None: the
    module's own code)."""

    api: Callable[[cst.CSTNode], str | None]
    sessions: list[_Made] = field(default_factory=list)
    placed: set = field(default_factory=set)
    tf1_only: bool = False  # or a plain Session on a server's target

    def walk(self, node: cst.CSTNode, statement: cst.CSTNode, outermost=None, innermost=None) -> None:
        if isinstance(node, cst.FunctionDef):
            outermost, innermost = outermost or node, node
        if isinstance(node, cst.BaseStatement):
            statement = node
        if isinstance(node, cst.Call):
            api = self.api(node.func)
            self.tf1_only |= api in TF1_ONLY or api in PLAIN_SESSIONS and _on_a_server(node)
            if api in PLACEMENT:
                self.placed.add(outermost)
            if api in PLAIN_SESSIONS or api == MTS_API or (
                    isinstance(node.func, cst.Attribute) and node.func.attr.value in SUPERVISOR_METHODS):
                self.sessions.append(_Made(node, statement, outermost, innermost))
        for child in children(node):
            self.walk(child, statement, outermost, innermost)


def _on_a_server(session: cst.Call) -> bool:
    """`Session(server.target, ...)`"""
    target = next((arg.value for arg in session.args if arg.keyword is None or arg.keyword.value == "target"), None)
    return isinstance(target, cst.Attribute) and target.attr.value == "target"


def first_stop(module: cst.Module, api: Callable[[cst.CSTNode], str | None], supervisors: Supervisors,
               devices: list[cst.With]) -> tuple[cst.CSTNode, str] | None:
    """(where, why) the first thing that stopped the module's between-graph program, if it holds one."""
    cluster = _Cluster(api)
    cluster.walk(module, module)
    if not (cluster.tf1_only and cluster.sessions):
        return None
    placed = [made for made in cluster.sessions if made.outermost in cluster.placed]
    if placed or not devices:
        made = (placed or cluster.sessions)[0]
        return made.call, _why(made, api, supervisors)
    return devices[0], _unopened(module, devices[0], api)


def _unopened(module: cst.Module, device: cst.With, api: Callable[[cst.CSTNode], str | None]) -> str:
    """Why a graph no session read after it trains is left: the session running it, where that can be told."""
    why = "no MonitoredTrainingSession or Supervisor session opens after this graph in its block"
    function = _holding(module, device)
    parameters = [param.name.value for param in function.params.params] if function is not None else []
    run = next((node.func.value.value for node in subtree(function.body) if isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute) and node.func.attr.value == "run"
                and isinstance(node.func.value, cst.Name) and node.func.value.value in parameters), None) \
        if function is not None else None
    if run is None:
        return f"{why}: the session training it is made elsewhere; migrate the program by hand"
    made = _made_by_callers(module, function.name.value, parameters.index(run), run, api)
    on_no_server = (f" (`{first_line(made)}`: a session on no server, so TF1 trained the graph in each task's "
                    "own process, not on the cluster)") if made is not None else ""
    return (f"{why}: `{run}` runs it, a parameter of `{function.name.value}` that its caller passes{on_no_server}; "
            "migrate the program by hand")


def _holding(module: cst.Module, node: cst.CSTNode) -> cst.FunctionDef | None:
    """The innermost function holding ``node``."""
    stack = [(module, None)]
    while stack:
        at, function = stack.pop()
        if at is node:
            return function
        function = at if isinstance(at, cst.FunctionDef) else function
        stack += [(child, function) for child in children(at)]
    return None


def _made_by_callers(module: cst.Module, function: str, position: int, parameter: str,
                     api: Callable[[cst.CSTNode], str | None]) -> cst.BaseStatement | None:
    """`name = tf.Session()` (no target) the module passes as ``parameter`` of ``function``, if it does."""
    given = {arg.value.value for node in subtree(module) if isinstance(node, cst.Call) and is_name(node.func, function)
             for i, arg in enumerate(node.args) if isinstance(arg.value, cst.Name)
             and (arg.keyword.value == parameter if arg.keyword else i == position and not arg.star)}
    return next((statement for statement in subtree(module) if (assign := single_assign(statement)) is not None
                 and assign[0] in given and isinstance(assign[1], cst.Call) and api(assign[1].func) in PLAIN_SESSIONS
                 and not assign[1].args), None)


def _why(made: _Made, api: Callable[[cst.CSTNode], str | None], supervisors: Supervisors) -> str:
    func = made.call.func
    if api(func) in PLAIN_SESSIONS:
        return (f"a plain `{source(func)}` runs the cluster's graph: only a MonitoredTrainingSession or a "
                "Supervisor's session is migrated; run the steps with a ClusterCoordinator of ParameterServerStrategy "
                "by hand")
    if api(func) != MTS_API and supervisors.of(func.value) is None:
        return (f"the session comes from `{source(func.value)}`, which is not a Supervisor bound to a name in this "
                "module (`sv = tf.train.Supervisor(...)`) nor to `self.sv` in the one method of its class binding it, "
                "which places the graph; only such a Supervisor's session is read: migrate the program by hand")
    statement = made.statement
    if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Return) \
            and statement.body[0].value is made.call and made.innermost is not None:
        return f"`{source(func)}(...)` makes a session that `{made.innermost.name.value}` returns: {OPENED}"
    return f"`{source(func)}(...)` makes a session in a statement that does not open it: {OPENED}"


def estimator_left(module: cst.Module, api: Callable[[cst.CSTNode], str | None]) -> tuple[cst.Call, str] | None:
    """(where, why) of a module serving its cluster with a Server it starts, whose training is an Estimator left as
    TF1 (after the program rewrites: one migrated is Keras now), if it has no TF1-only cluster code (a program of
    that shape gets its TFM104 from the between-graph rewrite)."""
    calls = [(node, api(node.func)) for node in subtree(module) if isinstance(node, cst.Call)]
    if not any(name in SERVERS for _, name in calls) or any(name in TF1_ONLY for _, name in calls):
        return None
    made = [node for node, name in calls if name in ESTIMATOR_DRIVERS] + [
        node for node, name in calls if name and name.split(".")[0] in ("estimator", "contrib", "keras")
        and name.rpartition(".")[2].endswith(ESTIMATORS)]
    if not made:
        return None
    return made[0], (f"its training is a TF1 Estimator (`{source(made[0].func)}(...)`) on the cluster its Server "
                     "serves, not a session loop: the Estimator migration left it (its TFM302 finding says why); fix "
                     "that and run tf-migrate again (the Estimator becomes Keras fit under ParameterServerStrategy, "
                     "the Server a tf.distribute.Server), or migrate the program by hand")
