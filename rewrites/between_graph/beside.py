"""What the session's loop does besides its train step, and the host values the graph's block makes for it.

An accuracy or validation run every N steps, ``if i % 100 == 0: acc = sess.run(accuracy, feed_dict={x: ...,
keep_prob: 1.0})`` (or a run within a statement, ``print(..., sess.run(accuracy, feed_dict={...}))``), is the
graph's tensor computed with the variables as trained so far (runs.py's ``evaluate_graph``): on the coordinator
once the steps scheduled so far are done (``coordinator.join()``), so that it evaluates the model at that step, or
on every worker of synchronous training. ``tf.train.global_step(sess, global_step)`` reads the optimizer's step
count from its variable, as TF1 read the global step's. What the loop prints stays.

A value made in the graph's block from no tensor of the graph and by no TensorFlow op (MNIST's arrays,
``mnist = input_data.read_data_sets(...)``), which the session's code reads, is made once before the migrated
graph, where TF1 made it: it is not a tensor of the step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from rewrites.between_graph.graph import Graph, Names
from rewrites.between_graph.runs import RUN, Evaluation, evaluated_code, evaluated_tensor, evaluation, is_run
from rewrites.syntax import (Unsupported, bind_arguments, holder, is_name, names_read, single_assign, statement_value,
                             subtree)

if TYPE_CHECKING:
    from rewrites.between_graph.session import Session, Stepping

GLOBAL_STEP_READ = "train.global_step"
SETTLED = "# Once the steps scheduled so far are done: the model evaluated is that of this step."


@dataclass
class LoopRuns:
    """The loop's runs besides its train step, and its reads of the global step: what replaces each."""

    evaluations: list[Evaluation] = field(default_factory=list)
    replacements: dict[cst.CSTNode, object] = field(default_factory=dict)  # statement -> statements, call -> code
    nodes: list[cst.CSTNode] = field(default_factory=list)  # the TF1 code replaced, naming the session and the
    # graph's tensors: `v = sess.run(...)` and the feed dict it holds, a run within a statement, a global step read

    def rewritten(self, statement: cst.BaseStatement, spelled) -> cst.BaseStatement:
        """``statement`` of the loop's body, what it holds replaced, the rest ``spelled`` (in the migrated
        module's spelling)."""
        if not any(node in self.replacements for node in subtree(statement)):
            return spelled(statement)
        return statement.visit(_Rewritten(self.replacements, spelled))


def trains(statement: cst.BaseStatement, session: str, graph: Graph) -> bool:
    """`sess.run(train_op, ...)` or `... = sess.run([train_op, ...], ...)`: the run of a step."""
    value = statement_value(statement)
    args = bind_arguments(value, RUN) if is_run(value, session) else None
    fetches = args["fetches"][1].value if args and "fetches" in args else None
    items = [e.value for e in fetches.elements] if isinstance(fetches, (cst.List, cst.Tuple)) else [fetches]
    return any(is_name(item, graph.train_op) for item in items)


def loop_runs(session: Session, graph: Graph, names: Names, stepping: Stepping,
              step: list[cst.BaseStatement]) -> LoopRuns:
    """The runs of the session's loop besides its ``step`` (the train run and the feed dict it holds), however
    nested in its body, and its reads of the global step."""
    found = LoopRuns()
    loop = session.loop
    read = cst.parse_expression(stepping.start.format(optimizer=graph.optimizer_name))
    steps = {node: read for node in subtree(loop.body) if isinstance(node, cst.Call)
             and names.api(node.func) == GLOBAL_STEP_READ and len(node.args) == 2
             and is_name(node.args[0].value, session.name) and is_name(node.args[1].value, graph.global_step)}
    found.replacements |= steps
    found.nodes += list(steps)
    for statement, block in _nested(list(loop.body.body)):
        if statement in step or not isinstance(statement, cst.SimpleStatementLine) \
                or not any(is_run(node, session.name) for node in subtree(statement)):
            continue
        value = statement_value(statement)
        if single_assign(statement) and is_run(value, session.name):
            elsewhere = [s for s in loop.body.body if s not in block and statement not in list(subtree(s))]
            evaluated = [evaluation(statement, session, graph, names, block, elsewhere, "in the loop", stepping)]
            found.nodes += [statement, *([evaluated[0].held] if evaluated[0].held is not None else [])]
        else:
            evaluated, runs = _within(statement, session, graph, names, steps, stepping)
            found.nodes += runs
        found.evaluations += evaluated
        replacement = evaluated[0].replacement
        use = next((node for node in subtree(replacement) if isinstance(node, (cst.Name, cst.Attribute))
                    and holder(node) in session.owners), None)
        if use is not None:  # in what the run feeds
            raise Unsupported(statement, f"`{holder(use)}` is used in the loop besides its runs: migrate that by hand")
        settle = [cst.parse_statement(f"{line}\n") for line in stepping.end]
        if settle:
            comment = cst.EmptyLine(comment=cst.Comment(SETTLED))
            settle[0] = settle[0].with_changes(leading_lines=[*replacement.leading_lines, comment])
            replacement = replacement.with_changes(leading_lines=[])
        found.replacements[statement] = [*settle, replacement]
        if evaluated[0].held is not None:
            found.replacements[evaluated[0].held] = []
    return found


def _within(statement: cst.SimpleStatementLine, session: Session, graph: Graph, names: Names,
            steps: dict[cst.CSTNode, cst.BaseExpression], stepping: Stepping
            ) -> tuple[list[Evaluation], list[cst.Call]]:
    """Runs within a statement, `print("accuracy", sess.run(accuracy, feed_dict={...}))`: each the graph's tensor
    computed, `evaluate_graph(...).numpy()`, the rest of the statement as it was (its global step reads
    ``steps``' code). (The evaluations, the runs.)"""
    runs = [node for node in subtree(statement) if is_run(node, session.name)]
    tensors = [evaluated_tensor(run, statement, session, graph, "in the loop", stepping) for run in runs]
    feeds = [bind_arguments(run, RUN).get("feed_dict") for run in runs]
    codes = {run: cst.parse_expression(evaluated_code(feed[1].value if feed else None, graph, names, run, stepping))
             for run, feed in zip(runs, feeds)}
    replacement = statement.visit(_Rewritten(steps | codes, names.spelled))
    return [Evaluation(statement, None, tensor, replacement) for tensor in tensors], runs


def _nested(block: list) -> list[tuple[cst.BaseStatement, list]]:
    """The statements of ``block``, however nested (in `if`, `for`, `while`, `with` bodies), with their block's."""
    found = []
    for statement in block:
        found.append((statement, block))
        for inner in _blocks(statement):
            found += _nested(list(inner.body))
    return found


def _blocks(statement) -> list[cst.IndentedBlock]:
    blocks = [b for b in (getattr(statement, "body", None),) if isinstance(b, cst.IndentedBlock)]
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
        blocks.append(orelse.body)
    elif isinstance(orelse, cst.If):
        blocks += _blocks(orelse)
    return blocks


class _Rewritten(cst.CSTTransformer):
    """The replacements made; each part of the code holding none of them spelled as it stands."""

    def __init__(self, replacements: dict, spelled) -> None:
        super().__init__()
        self.replacements, self.spelled = replacements, spelled
        self.holding: set[int] = set()  # the nodes holding a replaced one
        self.replaced = {id(node) for node in replacements}

    def on_visit(self, node) -> bool:
        if id(node) in self.replaced:
            return False
        holds = any(id(inner) in self.replaced for inner in subtree(node))
        if holds:
            self.holding.add(id(node))
        return holds

    def on_leave(self, original_node, updated_node):
        if id(original_node) in self.replaced:
            new = self.replacements[original_node]
            if isinstance(new, list):
                return cst.FlattenSentinel(new) if new else cst.RemovalSentinel.REMOVE
            return new
        return updated_node if id(original_node) in self.holding else self.spelled(original_node)


# -- host values made in the graph's block ------------------------------------------------------


def host_values(device: cst.With, graph: Graph, names: Names, code: list[cst.CSTNode],
                skipped: set[int]) -> list[cst.BaseStatement]:
    """The statements of the graph's block making a value the session's ``code`` reads (but in the nodes
    ``skipped``: its runs), from no tensor of the graph and by no TensorFlow op: taken out of the graph's
    computation, to be made before it."""
    found = []
    for statement in device.body.body:
        assign = single_assign(statement)
        if assign is None or assign[0] not in graph.computed:
            continue
        name, value = assign
        read = any(is_name(node, name) and id(node) not in skipped for part in code for node in names_read(part))
        tensors = graph.tensors - {name}
        if not read or any(node.value in tensors for node in names_read(value)) or any(
                isinstance(node, cst.Call) and names.api(node.func) is not None for node in subtree(value)):
            continue
        found.append(statement)
        graph.computed.remove(name)
        graph.computation.remove(names.code(statement).strip())
    return found
