"""SyncReplicasOptimizer programs: synchronous training, on MultiWorkerMirroredStrategy.

TF1's ``SyncReplicasOptimizer(opt, replicas_to_aggregate=R, total_num_replicas=R)`` made the
between-graph workers synchronous: each round it averaged one gradient from each of the R
workers and applied it once. ParameterServerStrategy is asynchronous, so these programs
become ``MultiWorkerMirroredStrategy`` programs instead: every worker runs the program's
loop as before, on its own batches, and each step all-reduces the gradients of the loss
divided by the number of workers: their average, applied on every worker's copy of the
variables. No variables live on ps tasks any more: a ps task has nothing to serve and
ends, and MultiWorkerMirroredStrategy starts the worker's server itself, at the worker's
address of the cluster, so the program's own ``Server`` for it goes.

TF 0.11's SyncReplicasOptimizer, the one taking ``replica_id`` (the worker's index into its staleness
checks), summed the R gradients where TF 1.0's averages them: its programs' steps leave the loss
unscaled, so that MultiWorkerMirroredStrategy's all-reduce sums them too.

Any other configuration changes the numbers and stays manual: R of more workers (backup
workers, whose late gradients TF1 dropped), moving averages of the variables.

TensorFlow's mnist_replica.py and its descendants choose at run time, with a flag: ``if
FLAGS.sync_replicas:`` wraps the optimizer (``replicas_to_aggregate`` from another flag, by default
the number of workers) and, after ``minimize``, makes its TF1 session machinery (local init ops,
the chief's queue runner and tokens), which a Supervisor made in an ``if`` of the same flag and the
chief's ``if FLAGS.sync_replicas and is_chief:`` after the session opens consume. Such a program
chooses its strategy from the same flag (``Flag``; or a name holding it, bound before the program's Server,
or an integer flag compared to a literal, ``if sync == 1:``): MultiWorkerMirroredStrategy where it is true,
the ClusterCoordinator of ParameterServerStrategy otherwise; the machinery goes (MultiWorkerMirroredStrategy
needs none). A ``replicas_to_aggregate`` the program computes at run time is checked at run time:
the synchronous program refuses to start when it is not the number of workers, rather than train
otherwise than TF1 (leaving the program would refuse its default too, which is the number of workers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.syntax import (Unsupported, assigned, bind_arguments, children, is_name, names_read, single_assign,
                             statement_value, subtree)

API = "train.SyncReplicasOptimizer"
ARGUMENTS = ("opt", "replicas_to_aggregate", "total_num_replicas", "variable_averages", "variables_to_average",
             "use_locking", "name")
# TF 0.11's signature: a call giving replica_id is of that version, whose update summed the gradients.
SUMMING_ARGUMENTS = ("opt", "replicas_to_aggregate", "variable_averages", "variables_to_average", "replica_id",
                     "total_num_replicas", "use_locking", "name")
HOOK = "make_session_run_hook"
HOOK_ARGUMENTS = ("is_chief", "num_tokens")
UPDATE = ("SyncReplicasOptimizer -> MultiWorkerMirroredStrategy: each step {aggregates} the gradients of every "
          "worker ({replicas} in TF1's program, which is the number of workers it expects)")
SUMMED = (": TF 0.11's SyncReplicasOptimizer, the one taking replica_id, summed them too (TF 1.0's averages them)")
TOKENS = ("; TF1 started with a token per replica (num_tokens=-1), so its first steps could use gradients of "
          "variables one update old and drop late ones, where the migrated steps wait for every worker")
PS_ENDS = "# Synchronous training keeps no variables on parameter servers: a ps task has nothing to serve."
# What SyncReplicasOptimizer gives its TF1 session, and the Supervisor arguments taking it.
MACHINERY = {"local_step_init_op", "chief_init_op", "ready_for_local_init_op", "get_chief_queue_runner",
             "get_init_tokens_op"}
SUPERVISOR_MACHINERY = {"local_init_op", "ready_for_local_init_op"}
CHECKED = ("the migrated program refuses to start unless {replicas} is {total}, the number of workers, whose "
           "gradients MultiWorkerMirroredStrategy {aggregates} every step")
REPLICAS_CHECK = """\
if {replicas} != {total}:
    raise ValueError(
        "replicas_to_aggregate=%d of %d workers: MultiWorkerMirroredStrategy {aggregates} "
        "the gradients of every worker each step, as SyncReplicasOptimizer did only for "
        "replicas_to_aggregate equal to the number of workers: migrate this configuration "
        "by hand" % ({replicas}, {total}))
"""
FLAG_TRAINING = ("between-graph training chosen by `{flag}` at run time -> where it is true, every worker runs its "
                 "steps on MultiWorkerMirroredStrategy, the gradients {aggregated} over the workers as "
                 "SyncReplicasOptimizer did, and ps tasks end; otherwise TF1's chief drives the cluster with a "
                 "ClusterCoordinator of ParameterServerStrategy, the other workers serve; prove both with tf-migrate "
                 "parity")


@dataclass
class Server:
    """`name = tf.train.Server(cluster, job_name=..., task_index=...)` as the program made it."""

    name: str
    cluster: str                            # code
    protocol: str                           # code
    statement: cst.BaseStatement | None     # None: made elsewhere (a parameter of the training function)
    job: cst.BaseExpression | None = None
    task: cst.BaseExpression | None = None


def wrapped_optimizer(call: cst.Call, code, runtime: frozenset[str] = frozenset()
                      ) -> tuple[cst.BaseExpression, tuple[str, str] | None]:
    """The optimizer ``SyncReplicasOptimizer(opt, replicas_to_aggregate=R, total_num_replicas=R)`` wraps, and
    (R, total) to compare at run time when R is a name of ``runtime`` (computed from flags); any other
    configuration is refused with what it would change."""
    args = _arguments(call)
    if args is None or not {"opt", "replicas_to_aggregate"} <= set(args):
        raise Unsupported(call, "SyncReplicasOptimizer(opt, replicas_to_aggregate=...) is migrated; these arguments "
                                "cannot be read statically")
    averages = next((args[key][1] for key in ("variable_averages", "variables_to_average") if key in args), None)
    if averages is not None:
        raise Unsupported(averages, "SyncReplicasOptimizer's moving averages of the variables: keep a "
                                    "tf.train.ExponentialMovingAverage in the migrated step by hand")
    given = args["replicas_to_aggregate"][1].value
    replicas = code(given)
    total = code(args["total_num_replicas"][1].value) if "total_num_replicas" in args else replicas
    if total == replicas:
        return args["opt"][1].value, None
    if isinstance(given, cst.Name) and given.value in runtime:
        return args["opt"][1].value, (replicas, total)
    raise Unsupported(call, f"SyncReplicasOptimizer applies the average of the first {replicas} gradients of "
                            f"{total} workers each step and drops the late ones (backup workers); "
                            "MultiWorkerMirroredStrategy waits for every worker and averages all of them, a "
                            "different update: migrate by hand if that is what you want")


def sums(call: cst.Call) -> bool:
    """TF 0.11's SyncReplicasOptimizer (given replica_id), which summed the gradients it aggregated."""
    return any(arg.keyword is not None and arg.keyword.value == "replica_id" for arg in call.args)


AGGREGATES = {False: "averages", True: "sums"}


def _arguments(call: cst.Call):
    return bind_arguments(call, SUMMING_ARGUMENTS if sums(call) else ARGUMENTS)


def is_hook(node, optimizer: str | None) -> bool:
    """`optimizer.make_session_run_hook(is_chief, ...)`"""
    return (optimizer is not None and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == HOOK and is_name(node.func.value, optimizer))


def notes(sync: cst.Call, hook: cst.Call | None, code, flag: Flag | None = None
          ) -> list[tuple[str, cst.CSTNode, str]]:
    """What the migrated update says of TF1's: TFM106 at the SyncReplicasOptimizer. Its tokens: the hook's, or
    those of the get_init_tokens_op() a flag's machinery made."""
    if flag is not None:
        if flag.tokens is None:
            raise Unsupported(sync, "SyncReplicasOptimizer without the get_init_tokens_op() its chief runs: migrate "
                                    "its chief queue runner and tokens by hand")
        tokens = (bind_arguments(flag.tokens, ("num_tokens",)) or {}).get("num_tokens")
    elif hook is None:
        raise Unsupported(sync, "SyncReplicasOptimizer without its make_session_run_hook in the session's hooks: "
                                "migrate its chief queue runner and tokens by hand")
    else:
        tokens = (bind_arguments(hook, HOOK_ARGUMENTS) or {}).get("num_tokens")
    args = _arguments(sync)
    aggregates = AGGREGATES[sums(sync)]
    message = UPDATE.format(aggregates=aggregates, replicas=code(args["replicas_to_aggregate"][1].value))
    if sums(sync):
        message += SUMMED
    if tokens is None or not (isinstance(tokens[1].value, cst.Integer) and tokens[1].value.evaluated_value == 0):
        message += TOKENS
    if flag is not None and flag.check is not None:
        message += "; " + CHECKED.format(replicas=flag.check[0], total=flag.check[1], aggregates=aggregates)
    return [("TFM106", sync, message)]


def without_servers(server: Server, scope: cst.CSTNode, master: cst.BaseExpression, edits, names,
                    flag: Flag | None = None) -> None:
    """The worker's Server goes (MultiWorkerMirroredStrategy serves at its address), so do `server.join()` of the
    ps tasks and ps Servers the program started itself; any other use of the server than the session's
    ``master`` is refused. Under a ``flag``, only where it is true: they stay for the asynchronous program."""
    if server.statement is None:
        raise Unsupported(scope, f"`{server.name}`, a server made elsewhere, runs at the worker's address, where "
                                 "MultiWorkerMirroredStrategy starts its own: start neither there, by hand")
    if server.job is None or server.task is None:
        raise Unsupported(server.statement, "a Server without job_name and task_index: say which task this is")
    if flag is not None:
        _check_bound_before(flag, server.statement, scope)
    _drop(server.statement, edits, names, flag)
    taken = {id(node) for node in (*subtree(server.statement), *subtree(master))}
    for statement in _statements(scope):
        value = statement_value(statement)
        if _is_join(value, server.name):
            _end_ps(statement, edits, names, flag, isinstance(scope, cst.FunctionDef))
            taken |= {id(node) for node in subtree(statement)}
        elif isinstance(value, cst.Call) and names.api(value.func) in ("train.Server", "distribute.Server") \
                and _serves_ps(value):
            _drop(statement if flag else _alone_under_if(statement, edits.view), edits, names, flag)
    used = next((node for node in subtree(scope) if is_name(node, server.name) and id(node) not in taken), None)
    if used is not None:
        raise Unsupported(used, f"`{server.name}` is used besides the session: MultiWorkerMirroredStrategy starts "
                                "the worker's server itself; migrate that use by hand")


def _check_bound_before(flag: Flag, server: cst.BaseStatement, scope: cst.CSTNode) -> None:
    """The names the flag reads are bound before the Server, the first statement the migrated program tests
    the flag at (`sync = FLAGS.sync` after it would leave the name unbound there)."""
    read = {name.value for name in names_read(flag.test)}
    after = False
    for node in _in_order(scope):
        after = after or node is server
        if after and isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) \
                and node.target.value in read:
            test = cst.Module([]).code_for_node(flag.test)
            raise Unsupported(node.target, f"`{node.target.value}`, of the flag `{test}` choosing "
                                           "SyncReplicasOptimizer, is bound after the Server the flag chooses to "
                                           "start: bind it before, or migrate by hand")


def _in_order(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from _in_order(child)


def _drop(statement: cst.BaseStatement, edits, names, flag: Flag | None) -> None:
    """The statement goes, or under a flag runs only where it is false."""
    if flag is None:
        edits.remove(statement)
    else:
        edits.replace(statement, [flag.unless([names.spelled(statement).with_changes(leading_lines=[])],
                                              statement.leading_lines)])


def _is_join(value, name: str) -> bool:
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "join"
            and is_name(value.func.value, name) and not value.args)


def _serves_ps(call: cst.Call) -> bool:
    """`tf.train.Server(cluster, job_name="ps", ...)`: a ps task the program starts in its own process."""
    args = bind_arguments(call, ("server_or_cluster_def", "job_name", "task_index", "protocol", "config", "start"))
    job = (args or {}).get("job_name")
    return job is not None and isinstance(job[1].value, cst.SimpleString) and job[1].value.evaluated_value == "ps"


def _end_ps(join: cst.BaseStatement, edits, names, flag: Flag | None, in_function: bool) -> None:
    """`server.join()` of a ps task: the task ends instead, saying why (on the `return` after it, if one is, or
    a `return` of the function holding it: TF1's ps never went past its join). Under a flag, it joins where the
    flag is false."""
    kept = [flag.unless([names.spelled(join).with_changes(leading_lines=[])], join.leading_lines)] if flag else []
    lines = [*([] if flag else join.leading_lines), cst.EmptyLine(comment=cst.Comment(PS_ENDS))]
    body = list(edits.view.parent(join).body)
    after = body[body.index(join) + 1] if join is not body[-1] else None
    if isinstance(after, cst.SimpleStatementLine) and isinstance(after.body[0], cst.Return) \
            and after.body[0].value is None and after not in edits.statements:
        edits.replace(join, kept)
        edits.replace(after, [after.with_changes(leading_lines=[*lines, *after.leading_lines])])
    else:
        end = cst.Return() if in_function else cst.Pass()
        edits.replace(join, [*kept, cst.SimpleStatementLine([end], leading_lines=lines)])


def _alone_under_if(statement: cst.BaseStatement, view) -> cst.BaseStatement:
    """The `if` whose whole body (no else) ``statement`` is, or the statement."""
    block = view.parent(statement)
    test = view.parent(block)
    if isinstance(test, cst.If) and test.orelse is None and len(block.body) == 1:
        return test
    return statement


def _statements(node: cst.CSTNode):
    for child in subtree(node):
        if isinstance(child, cst.SimpleStatementLine):
            yield child


# -- the flag choosing synchronous training at run time -------------------------------------


@dataclass
class Flag:
    """`if FLAGS.sync_replicas:` wrapping the optimizer in a SyncReplicasOptimizer, in the graph."""

    test: cst.BaseExpression                 # the flag (a name or attribute)
    spelled: cst.BaseExpression              # as the migrated module spells it
    setup: list[cst.BaseStatement]           # computing the wrapper's arguments: `replicas_to_aggregate = ...`
    check: tuple[str, str] | None = None     # (replicas_to_aggregate, total_num_replicas) compared at run time
    bound: set[str] = field(default_factory=set)  # names the machinery binds: `sync_init_op = opt.get_init_tokens_op()`
    tokens: cst.Call | None = None           # that get_init_tokens_op(...)

    def branches(self, synchronous: list, asynchronous: list, leading_lines) -> cst.If:
        """`if flag: <synchronous> else: <asynchronous>`"""
        return cst.If(test=self.spelled, body=cst.IndentedBlock(_unlead(synchronous)),
                      orelse=cst.Else(cst.IndentedBlock(_unlead(asynchronous))), leading_lines=leading_lines)

    def unless(self, statements: list, leading_lines) -> cst.If:
        """`if not flag: <statements>`"""
        return cst.If(test=cst.UnaryOperation(cst.Not(), self.spelled), body=cst.IndentedBlock(_unlead(statements)),
                      leading_lines=leading_lines)

    def setup_and_check(self, names, aggregates: str) -> list[cst.BaseStatement]:
        """What the synchronous program runs first: the wrapper's arguments, checked at run time (none when
        they are the number of workers as written); ``aggregates``: what the strategy does of the gradients."""
        if self.check is None:
            return []
        replicas, total = self.check
        return [*(names.spelled(statement) for statement in self.setup),
                cst.parse_statement(REPLICAS_CHECK.format(replicas=replicas, total=total,
                                                         aggregates=aggregates))]


def _unlead(statements: list) -> list:
    """The statements, the first without blank lines before it (the first of a block)."""
    first = statements[0]
    return [first.with_changes(leading_lines=[line for line in first.leading_lines if line.comment]), *statements[1:]]


def flagged_optimizer(statement: cst.If, optimizer: str | None, api, spelled
                      ) -> tuple[Flag, cst.BaseStatement] | None:
    """(the flag, the `opt = SyncReplicasOptimizer(opt, ...)` statement) of `if FLAG: [setup] opt = ...`, the
    setup only assigning values computed without calls; None for another `if`."""
    if not (_is_flag(statement.test) and statement.orelse is None and isinstance(statement.body, cst.IndentedBlock)):
        return None
    *setup, last = statement.body.body
    assign = single_assign(last)
    if not (assign and optimizer and assign[0] == optimizer and isinstance(assign[1], cst.Call)
            and api(assign[1].func) == API):
        return None
    if any(isinstance(node, cst.Call) for s in setup for node in subtree(s)) \
            or not all(single_assign(s) for s in _flat(setup)):
        return None
    return Flag(statement.test, spelled(statement.test), setup), last


def _is_flag(test: cst.BaseExpression) -> bool:
    """`FLAGS.sync_replicas`, `sync` or an integer one compared to a literal: `sync == 1`."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        return isinstance(comparison.operator, cst.Equal) and isinstance(comparison.comparator, cst.Integer) \
            and _is_flag(test.left)
    return isinstance(test, (cst.Name, cst.Attribute))


def setup_names(flag: Flag) -> frozenset[str]:
    return frozenset(single_assign(s)[0] for s in _flat(flag.setup))


def read_machinery(statement: cst.If, flag: Flag, optimizer: str | None, api) -> bool:
    """`if FLAG:` (the same flag, or `if FLAG and is_chief:`) making the SyncReplicasOptimizer's TF1 session
    machinery: `name = opt.X` or `name = opt.X(...)` of MACHINERY, under `if`s of their own; recorded in the flag."""
    if not (any(part.deep_equals(flag.test) for part in _conjuncts(statement.test)) and statement.orelse is None):
        return False
    found = {}
    for line in _flat(statement.body.body):
        assign = single_assign(line)
        value = assign[1] if assign else None
        attribute = value.func if isinstance(value, cst.Call) else value
        if not (isinstance(attribute, cst.Attribute) and is_name(attribute.value, optimizer or "")
                and attribute.attr.value in MACHINERY):
            return False
        found[assign[0]] = value
    flag.bound |= set(found)
    flag.tokens = next((value for value in found.values() if isinstance(value, cst.Call)
                        and value.func.attr.value == "get_init_tokens_op"), flag.tokens)
    return True


def makes_machinery(statement: cst.BaseStatement) -> bool:
    """An `if` only binding MACHINERY of an optimizer (`local_init_op = opt.local_step_init_op`): the graph's."""
    lines = list(_flat([statement])) if isinstance(statement, cst.If) else []
    for line in lines:
        assign = single_assign(line) if line is not None else None
        value = assign[1] if assign else None
        attribute = value.func if isinstance(value, cst.Call) else value
        if not (isinstance(attribute, cst.Attribute) and attribute.attr.value in MACHINERY):
            return False
    return bool(lines)


def _flat(statements: list):
    """The simple statement lines of ``statements``, those of `if`s among them too (None for anything else)."""
    for statement in statements:
        if isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock):
            yield from _flat(statement.body.body)
            if statement.orelse is not None:
                yield from _flat([statement.orelse] if isinstance(statement.orelse, cst.If)
                                 else statement.orelse.body.body)
        else:
            yield statement if isinstance(statement, cst.SimpleStatementLine) else None


def supervisor_calls(statement: cst.BaseStatement, api) -> list[cst.Call]:
    """The Supervisor calls of `sv = Supervisor(...)`, or of `if FLAG: sv = Supervisor(..., local_init_op=...,
    ready_for_local_init_op=...) else: sv = Supervisor(...)`: the one without SyncReplicasOptimizer's
    machinery first; none for another statement."""
    if not isinstance(statement, cst.If):
        assign = assigned(statement)
        return [assign[1]] if assign and isinstance(assign[1], cst.Call) \
            and api(assign[1].func) == "train.Supervisor" else []
    if not (isinstance(statement.orelse, cst.Else) and isinstance(statement.body, cst.IndentedBlock)
            and len(statement.body.body) == len(statement.orelse.body.body) == 1):
        return []
    both = [supervisor_calls(branch.body[0], api) for branch in (statement.body, statement.orelse.body)]
    if not all(both) or assigned(statement.body.body[0])[0] != assigned(statement.orelse.body.body[0])[0]:
        return []
    synchronous, asynchronous = (both[0][0], both[1][0])
    extra = [arg for arg in synchronous.args if not any(arg.deep_equals(other) for other in asynchronous.args)]
    if len(extra) != len(synchronous.args) - len(asynchronous.args) \
            or not all(arg.keyword and arg.keyword.value in SUPERVISOR_MACHINERY for arg in extra):
        return []
    return [asynchronous, synchronous]


def chief_start(statements: list, flag: Flag, session_name: str) -> list[cst.BaseStatement]:
    """`if FLAG and is_chief: sess.run(sync_init_op); sv.start_queue_runners(sess, [chief_queue_runner])`
    among ``statements``: the machinery at work, which goes."""
    found = []
    for statement in statements:
        if not (isinstance(statement, cst.If) and statement.orelse is None
                and any(part.deep_equals(flag.test) for part in _conjuncts(statement.test))):
            continue
        calls = [statement_value(line) for line in _flat(statement.body.body)]
        if all(isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
               and call.func.attr.value in ("run", "start_queue_runners") for call in calls) \
                and any(is_name(node, session_name) for node in subtree(statement.body)):
            found.append(statement)
    return found


def check_flag(flag: Flag | None, supervisor: cst.BaseStatement | None, scope: cst.CSTNode,
               gone: list[cst.CSTNode]) -> None:
    """A Supervisor chosen by an `if` is chosen by the graph's flag; the names of the flag's machinery are read
    nowhere but in what goes (the graph, the Supervisor, the chief's start)."""
    if isinstance(supervisor, cst.If) and (flag is None or not supervisor.test.deep_equals(flag.test)):
        raise Unsupported(supervisor, "a Supervisor chosen by an `if` other than the flag choosing the graph's "
                                      "SyncReplicasOptimizer: migrate it by hand")
    if flag is None:
        return
    skipped = {id(node) for statement in gone for node in subtree(statement)}
    used = next((node for node in subtree(scope) if isinstance(node, cst.Name) and node.value in flag.bound
                 and id(node) not in skipped), None)
    if used is not None:
        raise Unsupported(used, f"`{used.value}`, SyncReplicasOptimizer's TF1 session machinery, is used besides "
                                "the Supervisor and the chief's start: migrate that use by hand")


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not test.lpar:
        return [*_conjuncts(test.left), *_conjuncts(test.right)]
    return [test]
