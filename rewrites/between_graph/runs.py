"""A TF1 session's runs: what a run feeds and fetches, and the runs after the training loop.

``sess.run([train_op, global_step, loss], feed_dict={x: ..., y_: ...})``: the placeholders it feeds (the
step's arguments, in the graph's order), a feed dict held in a name just before the run, the names it fetches and
what each is assigned to: names, or the global step in an attribute (a trainer's `self.global_step =
sess.run([global_step, train_op])[0]`, the one result kept) (session.py makes the run a scheduled step). After the
loop, ``value = sess.run(tensor, feed_dict=...)`` evaluates one tensor of the graph with the trained variables, on
the chief (``evaluations``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from rewrites.between_graph.graph import Graph, Names
from rewrites.syntax import Unsupported, bind_arguments, is_name, single_assign, source, statement_value, subtree

if TYPE_CHECKING:
    from rewrites.between_graph.session import Session

RUN = ("fetches", "feed_dict", "options", "run_metadata")


def is_run(node, name: str) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "run"
            and is_name(node.func.value, name))


def kept_result(value) -> int | None:
    """``i`` of `sess.run([...])[i]`: the one result of the run's fetches kept (None: not indexed so)."""
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call) and len(value.slice) == 1):
        return None
    index = value.slice[0].slice
    return int(index.value.value) if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) else None


def run_value(run: cst.BaseStatement) -> cst.BaseExpression | None:
    """The run call of a run statement: `sess.run(...)`, or that of `step = sess.run([global_step, train_op])[0]`."""
    value = statement_value(run)
    return value.value if kept_result(value) is not None else value


def feed_dict_of(run: cst.BaseStatement, held: cst.BaseStatement | None) -> cst.BaseExpression | None:
    """The feed dict of the run: written in it, or held in the name ``held`` binds (None: it feeds nothing)."""
    args = bind_arguments(run_value(run), RUN)
    if "feed_dict" not in args:
        return None
    return single_assign(held)[1] if held is not None else args["feed_dict"][1].value


def held_feed(run: cst.BaseStatement, statements: list, elsewhere: list) -> cst.BaseStatement | None:
    """`feed = {x: ..., y: ...}` right before the run giving it as its feed_dict, and read nowhere else (in
    ``statements`` or the code ``elsewhere``): its dict is the run's."""
    args = bind_arguments(run_value(run), RUN) or {}
    feed = args["feed_dict"][1].value if "feed_dict" in args else None
    if not isinstance(feed, cst.Name):
        return None
    index = statements.index(run)
    held = statements[index - 1] if index else None
    assign = single_assign(held) if held is not None else None
    if not (assign and assign[0] == feed.value and isinstance(assign[1], cst.Dict)):
        raise Unsupported(feed, f"feed_dict `{feed.value}` must be a dict assigned to it right before the run")
    others = [s for s in statements if s not in (run, held)] + elsewhere
    if any(is_name(node, feed.value) for code in others for node in subtree(code)):
        raise Unsupported(feed, f"feed_dict `{feed.value}` is used besides its run: migrate that by hand")
    return held


def fed_values(feed_dict, graph: Graph, names: Names, run: cst.BaseStatement) -> list[str]:
    """The values fed to the graph's placeholders, in their order (``run``: where a run feeding nothing stands)."""
    if feed_dict is None:
        if graph.placeholders:
            raise Unsupported(run, "feed_dict must feed every placeholder, and only them")
        return []
    if not isinstance(feed_dict, cst.Dict):
        raise Unsupported(feed_dict, "feed_dict must be a dict written in the run")
    fed = {}
    for element in feed_dict.elements:
        if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.Name)):
            raise Unsupported(feed_dict, "feed_dict keys must be the graph's placeholders")
        fed[element.key.value] = names.code(element.value)
    if set(fed) != set(graph.placeholders):
        raise Unsupported(feed_dict, "feed_dict must feed every placeholder, and only them")
    return [fed[placeholder] for placeholder in graph.placeholders]


def fetched_names(statement, fetches) -> tuple[list[str], list[str | None]]:
    """The fetched names and what each is assigned to (None: not kept): a name, or an attribute of one (a
    trainer's `self.global_step`, its code), one per fetch, or the one result kept of `sess.run([...])[i]`."""
    items = [e.value for e in fetches.elements] if isinstance(fetches, (cst.List, cst.Tuple)) else [fetches]
    if not all(isinstance(item, cst.Name) for item in items):
        raise Unsupported(fetches, "run() fetches must be names of the graph")
    small = statement.body[0]
    index = kept_result(statement_value(statement))
    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
    if isinstance(small, cst.Expr):
        targets = [None] * len(items)
    elif index is not None:
        if not (isinstance(fetches, (cst.List, cst.Tuple)) and 0 <= index < len(items)) or _target(target) is None:
            raise Unsupported(statement, "run()'s one result kept must be one of its list of fetches, assigned to a "
                                         "name")
        targets = [_target(target) if position == index else None for position in range(len(items))]
    elif isinstance(fetches, (cst.List, cst.Tuple)):
        if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(items)
                and all(_target(e.value) is not None for e in target.elements)):
            raise Unsupported(statement, "run()'s results must be unpacked into names, one per fetch")
        targets = [None if is_name(e.value, "_") else _target(e.value) for e in target.elements]
    else:
        if _target(target) is None:
            raise Unsupported(statement, "run()'s result must be assigned to a name")
        targets = [_target(target)]
    return [item.value for item in items], targets


def _target(node) -> str | None:
    """The code of a name, or of an attribute of a name (`self.global_step`), that a run's result is assigned to."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return source(node)
    return None


def reads(node, target: str) -> bool:
    """Whether ``node`` reads ``target``, what a run's result was assigned to (fetched_names)."""
    return is_name(node, target) or "." in target and isinstance(node, cst.Attribute) and source(node) == target


def summary_writes(statements: list[cst.BaseStatement], name: str, graph: Graph
                   ) -> tuple[list[cst.BaseStatement], list[cst.Name]]:
    """What the loop's run (of its ``statements``) fetched of the merged summaries, written to a TF1 summary writer
    (`writer.add_summary(summary, step)`, or an `if` doing only that): those statements, and the fetches naming the
    summaries (in any run of the loop: migrated_loop says what else stops it). They go with TF1's summaries
    (TFM109); migrated_loop refuses any other use of what the run fetched of them."""
    fetched = []
    for call in (node for s in statements for node in subtree(s) if graph.merged and is_run(node, name)):
        fetches = (bind_arguments(call, RUN) or {}).get("fetches")
        items = [] if fetches is None else [e.value for e in fetches[1].value.elements] \
            if isinstance(fetches[1].value, (cst.List, cst.Tuple)) else [fetches[1].value]
        fetched += [item for item in items if isinstance(item, cst.Name) and item.value in graph.merged]
    runs = [s for s in statements if any(is_run(node, name) for node in subtree(s))]
    if len(runs) > 1:  # the others evaluate the graph (beside.py)
        runs = [s for s in runs if trains(s, name, graph)]
    if not (fetched and len(runs) == 1 and is_run(value := run_value(runs[0]), name)):
        return [], fetched
    try:
        fetches, targets = fetched_names(runs[0], bind_arguments(value, RUN)["fetches"][1].value)
    except (Unsupported, KeyError, TypeError):
        return [], fetched
    summaries = {target for fetch, target in zip(fetches, targets) if fetch in graph.merged}
    written = [statement for statement in statements if _writes(statement, summaries) or (
        isinstance(statement, cst.If) and statement.orelse is None
        and all(_writes(line, summaries) for line in statement.body.body))]
    return written, fetched


def _writes(statement, summaries: set[str | None]) -> bool:
    """`writer.add_summary(summary, ...)` of one of the ``summaries``."""
    value = statement_value(statement) if isinstance(statement, cst.SimpleStatementLine) else None
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "add_summary" and single_assign(statement) is None and bool(value.args)
            and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value in summaries)


def trains(statement: cst.BaseStatement, session: str, graph: Graph) -> bool:
    """`sess.run(train_op, ...)` or `... = sess.run([train_op, ...], ...)`: the run of a step."""
    value = statement_value(statement)
    args = bind_arguments(value, RUN) if is_run(value, session) else None
    fetches = args["fetches"][1].value if args and "fetches" in args else None
    items = [e.value for e in fetches.elements] if isinstance(fetches, (cst.List, cst.Tuple)) else [fetches]
    return any(is_name(item, graph.train_op) for item in items)


def as_tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


# -- runs after the loop ----------------------------------------------------------------------


@dataclass(frozen=True)
class Evaluation:
    """`value = sess.run(tensor, feed_dict=...)` after the loop: the tensor of the trained graph, on the chief."""

    run: cst.BaseStatement
    held: cst.BaseStatement | None  # `feed = {...}` right before it
    tensor: str
    replacement: cst.BaseStatement


def evaluations(session: Session, graph: Graph, names: Names, after: list[cst.BaseStatement]) -> list[Evaluation]:
    """The session's runs among the statements ``after`` its loop (of the same block), each the value of one
    tensor of the graph for the inputs it feeds: `value = evaluate_graph(...).numpy()`, the graph's computation
    with the trained variables."""
    found = []
    for statement in after:
        if not any(is_run(node, session.name) for node in subtree(statement)):
            continue
        found.append(evaluation(statement, session, graph, names, after, [], "after the loop"))
        if session.supervisor is None:
            raise Unsupported(statement, f"`{found[-1].tensor}` evaluated after the loop of a "
                                         "MonitoredTrainingSession, which TF1 refused once its hooks stopped the "
                                         "session: evaluated after a Supervisor's loop only")
    check_one_tensor(found)
    return found


def evaluation(statement: cst.BaseStatement, session: Session, graph: Graph, names: Names, block: list,
               elsewhere: list, where: str, batches: bool = False) -> Evaluation:
    """`value = sess.run(tensor, feed_dict=...)` (of ``block``; its feed dict, held in a name, read nowhere else
    there or ``elsewhere``): `value = evaluate_graph(...).numpy()` (``batches``: see evaluated_tensor)."""
    value, assign = statement_value(statement), single_assign(statement)
    tensor = evaluated_tensor(value if assign and is_run(value, session.name) else None, statement, session, graph,
                              where, batches)
    held = held_feed(statement, block, elsewhere)
    code = cst.parse_expression(evaluated_code(feed_dict_of(statement, held), graph, names, statement))
    replacement = statement.with_changes(body=[statement.body[0].with_changes(value=code)],
                                         leading_lines=(held or statement).leading_lines)
    return Evaluation(statement, held, tensor, replacement)


def evaluated_tensor(run: cst.Call | None, statement: cst.BaseStatement, session: Session, graph: Graph,
                     where: str, batches: bool = False) -> str:
    """The tensor of the graph ``run`` (`sess.run(tensor, feed_dict=...)`, in ``statement``) evaluates.
    ``batches``: of a graph reading a tf.data iterator too, on the next batch of a worker's iterator, as TF1's run
    read the next batch of its worker's (a ParameterServerStrategy's loop, a step scheduled on a worker)."""
    args = bind_arguments(run, RUN) if run is not None else None
    fetched = args["fetches"][1].value if args and "fetches" in args else None
    if not (isinstance(fetched, cst.Name) and set(args) <= {"fetches", "feed_dict"}):
        raise Unsupported(statement, f"{where}, `value = {session.name}.run(tensor, feed_dict=...)` is migrated "
                                     f"(the tensor computed with the trained variables); other uses of "
                                     f"`{session.name}` are not")
    tensor = fetched.value
    if tensor not in {*graph.computed, graph.loss} - {None}:
        raise Unsupported(fetched, f"`{tensor}` {where}: a tensor the graph computes is evaluated; the train_op, "
                                   "the global step or an input is not")
    if graph.elements and not batches:
        raise Unsupported(statement, f"`{tensor}` evaluated {where} of a graph reading a tf.data iterator: only a "
                                     "graph fed through placeholders is evaluated, or one reading its iterator in an "
                                     "asynchronous (ParameterServerStrategy) loop")
    return tensor


def evaluated_code(feed_dict: cst.BaseExpression | None, graph: Graph, names: Names, run: cst.CSTNode) -> str:
    fed = fed_values(feed_dict, graph, names, run)
    if graph.elements:  # on a worker, its iterator's next batch
        return f"coordinator.schedule(evaluate_graph, args={as_tuple(['per_worker_iterator', *fed])}).fetch()"
    return f"evaluate_graph({', '.join(fed)}).numpy()"


def check_one_tensor(found: list[Evaluation]) -> None:
    if len({evaluation.tensor for evaluation in found}) > 1:
        raise Unsupported(found[1].run, "the session's runs (in or after its loop) evaluating different tensors: "
                                        "one is migrated")


# The global step read back from the graph: TF1's functions, and what a function of the module doing so calls.
STEP_GETTERS = {"train.get_global_step", "train.get_or_create_global_step"}
GRAPH_READS = {"get_default_graph", "get_collection", "get_tensor_by_name", "len"}


def global_step_reads(around: list, session: Session, graph: Graph, names: Names
                      ) -> tuple[list[cst.BaseStatement], list[cst.FunctionDef]]:
    """`step_op = tf.train.get_global_step()` (or `get_global_step(sess.graph)`, a function of the module reading
    the graph's GLOBAL_STEP collection or its `global_step:0` tensor, as tensorflow/ecosystem's YARN trainer does)
    in the session's block before its loop: the graph's global step under that name, which a run fetches. Those
    statements, and the functions of the module only they called: both go."""
    found, functions = [], []
    for statement in around[:around.index(session.loop)]:
        assign = single_assign(statement)
        value = assign[1] if assign else None
        if not isinstance(value, cst.Call) or not all(is_name(arg.value, "None") or _is_graph(arg.value, session.name)
                                                      for arg in value.args) or len(value.args) > 1:
            continue
        function = names.module.functions.get(value.func.value) if isinstance(value.func, cst.Name) else None
        if names.api(value.func) in STEP_GETTERS or function is not None and _reads_global_step(function):
            found.append(statement)
            functions += [function] if function is not None and names.module.names[function.name.value] == 2 else []
    if not found:
        return [], []
    if len(found) > 1 or graph.global_step is not None:
        raise Unsupported(found[-1], f"`{single_assign(found[-1])[0]}`, the global step read back from the graph "
                                     "under a second name: fetch the one the graph binds")
    graph.global_step = single_assign(found[0])[0]
    return found, functions


def _is_graph(node: cst.BaseExpression, session: str) -> bool:
    """`sess.graph`"""
    return isinstance(node, cst.Attribute) and node.attr.value == "graph" and is_name(node.value, session)


def _reads_global_step(function: cst.FunctionDef) -> bool:
    """Does ``function`` only look the global step up in a graph (its GLOBAL_STEP collection, its `global_step:0`
    tensor), as tf.train.get_global_step does?"""
    nodes = list(subtree(function.body))
    calls = [node.func for node in nodes if isinstance(node, cst.Call)]
    looked_up = any(isinstance(node, cst.Attribute) and node.attr.value == "GLOBAL_STEP" for node in nodes)
    return looked_up and all(
        (func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)) in GRAPH_READS
        for func in calls)
