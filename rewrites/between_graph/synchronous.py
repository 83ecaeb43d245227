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

Any other configuration changes the numbers and stays manual: R of more workers (backup
workers, whose late gradients TF1 dropped), moving averages of the variables.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.syntax import Unsupported, bind_arguments, is_name, statement_value, subtree

API = "train.SyncReplicasOptimizer"
ARGUMENTS = ("opt", "replicas_to_aggregate", "total_num_replicas", "variable_averages", "variables_to_average",
             "use_locking", "name")
HOOK = "make_session_run_hook"
HOOK_ARGUMENTS = ("is_chief", "num_tokens")
UPDATE = ("SyncReplicasOptimizer -> MultiWorkerMirroredStrategy: each step averages the gradients of every worker "
          "({replicas} in TF1's program, which is the number of workers it expects)")
TOKENS = ("; TF1 started with a token per replica (num_tokens=-1), so its first steps could use gradients of "
          "variables one update old and drop late ones, where the migrated steps wait for every worker")
PS_ENDS = "# Synchronous training keeps no variables on parameter servers: a ps task has nothing to serve."


@dataclass
class Server:
    """`name = tf.train.Server(cluster, job_name=..., task_index=...)` as the program made it."""

    name: str
    cluster: str                            # code
    protocol: str                           # code
    statement: cst.BaseStatement | None     # None: made elsewhere (a parameter of the training function)
    job: cst.BaseExpression | None = None
    task: cst.BaseExpression | None = None


def wrapped_optimizer(call: cst.Call, code) -> cst.BaseExpression:
    """The optimizer ``SyncReplicasOptimizer(opt, replicas_to_aggregate=R, total_num_replicas=R)`` wraps; any other
    configuration is refused with what it would change."""
    args = bind_arguments(call, ARGUMENTS)
    if args is None or not {"opt", "replicas_to_aggregate"} <= set(args):
        raise Unsupported(call, "SyncReplicasOptimizer(opt, replicas_to_aggregate=...) is migrated; these arguments "
                                "cannot be read statically")
    averages = next((args[key][1] for key in ("variable_averages", "variables_to_average") if key in args), None)
    if averages is not None:
        raise Unsupported(averages, "SyncReplicasOptimizer's moving averages of the variables: keep a "
                                    "tf.train.ExponentialMovingAverage in the migrated step by hand")
    replicas = code(args["replicas_to_aggregate"][1].value)
    total = code(args["total_num_replicas"][1].value) if "total_num_replicas" in args else replicas
    if total != replicas:
        raise Unsupported(call, f"SyncReplicasOptimizer applies the average of the first {replicas} gradients of "
                                f"{total} workers each step and drops the late ones (backup workers); "
                                "MultiWorkerMirroredStrategy waits for every worker and averages all of them, a "
                                "different update: migrate by hand if that is what you want")
    return args["opt"][1].value


def is_hook(node, optimizer: str | None) -> bool:
    """`optimizer.make_session_run_hook(is_chief, ...)`"""
    return (optimizer is not None and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == HOOK and is_name(node.func.value, optimizer))


def notes(sync: cst.Call, hook: cst.Call | None, code) -> list[tuple[str, cst.CSTNode, str]]:
    """What the migrated update says of TF1's: TFM106 at the SyncReplicasOptimizer."""
    if hook is None:
        raise Unsupported(sync, "SyncReplicasOptimizer without its make_session_run_hook in the session's hooks: "
                                "migrate its chief queue runner and tokens by hand")
    args = bind_arguments(sync, ARGUMENTS)
    message = UPDATE.format(replicas=code(args["replicas_to_aggregate"][1].value))
    tokens = (bind_arguments(hook, HOOK_ARGUMENTS) or {}).get("num_tokens")
    if tokens is None or not (isinstance(tokens[1].value, cst.Integer) and tokens[1].value.evaluated_value == 0):
        message += TOKENS
    return [("TFM106", sync, message)]


def without_servers(server: Server, scope: cst.CSTNode, master: cst.BaseExpression, edits, names) -> None:
    """The worker's Server goes (MultiWorkerMirroredStrategy serves at its address), so do `server.join()` of the
    ps tasks and ps Servers the program started itself; any other use of the server than the session's
    ``master`` is refused."""
    if server.statement is None:
        raise Unsupported(scope, f"`{server.name}`, a server made elsewhere, runs at the worker's address, where "
                                 "MultiWorkerMirroredStrategy starts its own: start neither there, by hand")
    if server.job is None or server.task is None:
        raise Unsupported(server.statement, "a Server without job_name and task_index: say which task this is")
    edits.remove(server.statement)
    taken = {id(node) for node in (*subtree(server.statement), *subtree(master))}
    for statement in _statements(scope):
        value = statement_value(statement)
        if _is_join(value, server.name):
            _end_ps(statement, edits)
            taken |= {id(node) for node in subtree(statement)}
        elif isinstance(value, cst.Call) and names.api(value.func) in ("train.Server", "distribute.Server") \
                and _serves_ps(value):
            edits.remove(_alone_under_if(statement, edits.view))
    used = next((node for node in subtree(scope) if is_name(node, server.name) and id(node) not in taken), None)
    if used is not None:
        raise Unsupported(used, f"`{server.name}` is used besides the session: MultiWorkerMirroredStrategy starts "
                                "the worker's server itself; migrate that use by hand")


def _is_join(value, name: str) -> bool:
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "join"
            and is_name(value.func.value, name) and not value.args)


def _serves_ps(call: cst.Call) -> bool:
    """`tf.train.Server(cluster, job_name="ps", ...)`: a ps task the program starts in its own process."""
    args = bind_arguments(call, ("server_or_cluster_def", "job_name", "task_index", "protocol", "config", "start"))
    job = (args or {}).get("job_name")
    return job is not None and isinstance(job[1].value, cst.SimpleString) and job[1].value.evaluated_value == "ps"


def _end_ps(join: cst.BaseStatement, edits) -> None:
    """`server.join()` of a ps task: the task ends instead, saying why (on the `return` after it, if one is)."""
    lines = [*join.leading_lines, cst.EmptyLine(comment=cst.Comment(PS_ENDS))]
    body = list(edits.view.parent(join).body)
    after = body[body.index(join) + 1] if join is not body[-1] else None
    if isinstance(after, cst.SimpleStatementLine) and isinstance(after.body[0], cst.Return) \
            and after.body[0].value is None and after not in edits.statements:
        edits.remove(join)
        edits.replace(after, [after.with_changes(leading_lines=[*lines, *after.leading_lines])])
    else:
        edits.replace(join, [cst.SimpleStatementLine([cst.Pass()], leading_lines=lines)])


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
