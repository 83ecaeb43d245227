"""A flag choosing in the loop between training and running the graph otherwise: TensorFlowOnSpark's mnist
map_fun, ``while not sess.should_stop(): if args.mode == "train": ... sess.run([train_op, ...]) ... else: labels,
preds = sess.run([label, prediction])`` and what it does with them (written to each worker's file).

TF1 ran the same graph either way. Training, the workers' steps updated the ps tasks' variables. Otherwise each
worker ran the graph's tensors on the batches of its own input, with the variables the chief had restored from the
checkpoint, the global step standing still: its StopAtStepHook let one run through where the checkpoint had reached
the last step, and the session stopped where the worker's input ended.

The migrated program makes the same choice at run time. Training, it is the coordinator's program. Otherwise no
worker serves a coordinator: each makes the variables with tf.distribute's default strategy, restores the same
checkpoint, and evaluates the tensors of its own input's batches (dataset_fn, of its own task), `evaluate_batch`,
doing with them what the branch did; it stops as TF1's session did. The loop is that of a
``while not sess.should_stop():`` holding nothing but the `if`, of a graph reading a tf.data iterator, in a
session with checkpoints (without one, TF1's workers shared the chief's initial values).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from rewrites.between_graph.graph import Graph, Names
from rewrites.between_graph.runs import RUN, fetched_names, is_run, trains
from rewrites.syntax import Unsupported, bind_arguments, first_line, names_read, statement_value, subtree

if TYPE_CHECKING:
    from rewrites.between_graph.session import Session

ON_ITS_OWN = ("`{test}` chooses training or running the graph otherwise, at run time as in TF1: otherwise, each worker "
              "runs `{tensors}` on its own input's batches with the variables restored from the checkpoint (TF1's "
              "chief restored them for all; with none to restore, each worker has initial values of its own, where "
              "TF1's shared the chief's), and the chief saves the checkpoint when the loop ends, as TF1's did")


@dataclass
class Mode:
    """`if flag: <training> else: <running the graph otherwise>` (or the other way round) in the session's loop."""

    statement: cst.If
    training: list[cst.BaseStatement]   # the branch training
    other: list[cst.BaseStatement]      # the other
    training_first: bool                # the training branch is the `if`'s body
    run: cst.BaseStatement | None = None  # the other branch's run
    tensors: list[str] = field(default_factory=list)  # what it fetches

    @property
    def test(self) -> cst.BaseExpression:
        return self.statement.test

    @property
    def returned(self) -> str:
        return ", ".join(self.tensors)


def read_mode(session: Session, graph: Graph) -> Mode | None:
    """The `if` of the loop choosing between a branch running the train_op and one that does not, if one does."""
    for statement in session.loop.body.body:
        if not (isinstance(statement, cst.If) and isinstance(statement.orelse, cst.Else)
                and isinstance(statement.body, cst.IndentedBlock)
                and isinstance(statement.orelse.body, cst.IndentedBlock)):
            continue
        branches = [list(statement.body.body), list(statement.orelse.body.body)]
        training = [any(trains(s, session.name, graph) for s in branch) for branch in branches]
        if training.count(True) == 1 and any(is_run(node, session.name) for node in subtree(statement)):
            first = training[0]
            mode = Mode(statement, branches[not first], branches[first], first)
            _check(mode, session, graph)
            return mode
    return None


def _check(mode: Mode, session: Session, graph: Graph) -> None:
    where = f"`{first_line(mode.statement)}` in the loop chooses between training and running the graph otherwise"
    loop = session.loop
    if not isinstance(loop, cst.While) or len(loop.body.body) != 1 or len(session.stops) != 1:
        raise Unsupported(mode.statement, f"{where}: migrated in a `while not sess.should_stop():` loop holding "
                                          "nothing but that `if`; migrate it by hand")
    if not graph.elements or graph.placeholders:
        raise Unsupported(mode.statement, f"{where}: migrated for a graph reading a tf.data iterator, and only it; "
                                          "migrate it by hand")
    if session.checkpoints is None:
        raise Unsupported(mode.statement, f"{where}, with no checkpoints: TF1's workers ran it with the variables the "
                                          "chief initialized, which no checkpoint gives the migrated workers; migrate "
                                          "it by hand")
    if graph.sync_replicas is not None:
        raise Unsupported(mode.statement, f"{where}: migrated for asynchronous training; migrate it by hand")
    calls = [node for node in subtree(mode.test) if isinstance(node, cst.Call)]
    changed = {name.value for node in subtree(loop) if isinstance(node, (cst.AssignTarget, cst.AugAssign))
               for name in names_read(node.target)}
    read = {node.value for node in names_read(mode.test)}
    if calls or read & changed or session.name in read:
        raise Unsupported(mode.statement, f"{where}: its test must read names the loop leaves as they are, with no "
                                          "call, to choose once for the whole program; migrate it by hand")


def migrated_branch(mode: Mode, session: Session, graph: Graph, names: Names) -> list[cst.BaseStatement]:
    """The other branch, its one run of the graph's tensors (`a, b = sess.run([t1, t2])`, `a = sess.run(t)`) the
    tensors of this worker's next batch: `a, b = [value.numpy() for value in evaluate_batch(worker_iterator)]`."""
    runs = [s for s in mode.other if any(is_run(node, session.name) for node in subtree(s))]
    value = statement_value(runs[0]) if len(runs) == 1 else None
    args = bind_arguments(value, RUN) if is_run(value, session.name) else None
    if args is None or set(args) != {"fetches"} or not isinstance(runs[0].body[0], cst.Assign):
        raise Unsupported(runs[0] if runs else mode.statement, "the branch not training must run the graph's "
                          "tensors once, `a, b = sess.run([a_tensor, b_tensor])`, feeding nothing; migrate it by hand")
    run = runs[0]
    fetches = args["fetches"][1].value
    tensors, _ = fetched_names(run, fetches)
    unknown = next((t for t in tensors if t not in {*graph.computed, graph.loss} - {None}), None)
    if unknown is not None:
        raise Unsupported(fetches, f"`{unknown}`, run in the branch not training, is no tensor the graph computes: "
                                   "migrate it by hand")
    mode.run, mode.tensors = run, tensors
    listed = isinstance(fetches, (cst.List, cst.Tuple))
    code = "[value.numpy() for value in evaluate_batch(worker_iterator)]" if listed \
        else "evaluate_batch(worker_iterator).numpy()"
    if listed and len(tensors) == 1:
        code = "[evaluate_batch(worker_iterator).numpy()]"
    new = []
    for statement in mode.other:
        if statement is run:
            statement = run.with_changes(body=[run.body[0].with_changes(value=cst.parse_expression(code))])
        elif any(node.value == session.name for node in names_read(statement)):
            use = next(node for node in names_read(statement) if node.value == session.name)
            raise Unsupported(use, f"`{session.name}` is used in the branch not training besides its run: migrate "
                                   "that by hand")
        else:
            statement = names.spelled(statement)
        new.append(statement)
    return new


def loops(session: Session, graph: Graph, names: Names, conditions: list, training: list[cst.BaseStatement],
          ran: list, notes: list) -> cst.If:
    """`if flag: <the ``training`` loop> else: <the loop running the graph otherwise>` (in the program's order):
    the latter runs the branch once, then on until the step limit (the checkpoint's step, standing still) or the
    input's end. What it ran joins ``ran``, its note ``notes``."""
    mode = session.mode
    if conditions:
        raise Unsupported(session.loop, f"`{first_line(mode.statement)}` in a loop with conditions of its own: "
                                        "the loop not training stops when TF1's session did; migrate it by hand")
    other = migrated_branch(mode, session, graph, names)
    ran.append(mode.run)
    notes.append(("TFM103", mode.statement, ON_ITS_OWN.format(test=names.code(mode.test), tensors=mode.returned)))
    stop = [] if session.last_step is None else [cst.parse_statement(
        f"if int({graph.optimizer_name}.iterations) >= {names.code(session.last_step)}:\n"
        "    break  # TF1's StopAtStepHook: the checkpoint's step\n")]
    loop = cst.While(test=cst.Name("True"), body=cst.IndentedBlock([*other, *stop]))
    branches = [training, [loop]] if mode.training_first else [[loop], training]
    first = branches[0][0]
    return cst.If(test=names.spelled(mode.test), body=cst.IndentedBlock(
        [first.with_changes(leading_lines=[]), *branches[0][1:]]),
        orelse=cst.Else(cst.IndentedBlock(branches[1])))
