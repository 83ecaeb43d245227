"""A function of the program building the graph's tf.data input (inputs.py): the graph calls it (`x, y =
read_examples(path, 100, epochs)`) and it returns its iterator's batches (`return
tf.compat.v1.data.make_one_shot_iterator(<pipeline>).get_next()`, as TFM008 writes a queue-runner function's, or
`iterator = <pipeline>.make_one_shot_iterator()` then `return iterator.get_next()`, or the batches unpacked then
returned, `images, labels = ...get_next()` `return images, labels`, in a `with tf.name_scope("input"):` block the
function ends with or not; or an expression of the batch, `features = iterator.get_next()` `return features,
features.pop(LABEL)`, which a map of the pipeline computes): the function returns the pipeline instead, and its
call, bound to a name, is the per-worker dataset function's; the same batches, in the same order. Called nowhere
else in the program (but in another TF1 graph of the graph's module, `with evaluation_graph.as_default():`, where
the call reads the returned pipeline's one-shot iterator, as the function did), it may not make variables,
placeholders, queues or summaries. A function of another module given with the graph's (census' `model.input_fn`
in trainer/model.py) is changed the same way, that module made a TF2 module (the migrated program imports it): the
engine migrates both files or neither (a rewrite's ``other_modules``).
"""

from __future__ import annotations

import os
import re

import libcst as cst

from rewrites.between_graph import graph_calls
from rewrites.between_graph.inputs import enclosed, iterated
from rewrites.syntax import Unsupported, children, first_line, is_name, name_reads, single_assign, subtree


def input_function(value, module: graph_calls.ModuleCode, api
                   ) -> tuple[graph_calls.ModuleCode | None, list[tuple[cst.SimpleStatementLine, list]],
                              list[cst.Call]] | None:
    """(its module, None for the graph's own; the edits making it return its pipeline: returning_pipeline(); its
    other calls, in TF1 graphs, to read the pipeline's iterator: iterated_call()) of the function ``value`` calls,
    when it is a function of the program ending in `return <a one-shot iterator of a pipeline>.get_next()`;
    Unsupported when the function is not one the migration may change so."""
    if not isinstance(value, cst.Call):
        return None
    if isinstance(value.func, cst.Name) and value.func.value in module.functions:
        other, function = None, module.functions[value.func.value]
    elif (found := graph_calls.other_function(value.func, module)) is not None:
        other, function = found
    else:
        return None
    home = other or module
    returned = _returned_pipeline(function, home.api or api)
    if returned is None:
        return None
    call = f"`{first_line(value)}` in the graph"
    if other is not None and graph_calls.in_run(other.path, module.run) is None:
        raise Unsupported(value, f"{call} builds its tf.data input in {other.file}, which is not migrated with this "
                                 "file: that function would return the pipeline now, for the per-worker dataset "
                                 "function; give tf-migrate both files (or their folder)")
    elsewhere = called_elsewhere(value, function, module, other)
    if elsewhere is None or function.decorators:
        raise Unsupported(value, f"{call} builds its tf.data input in a function the program names elsewhere too "
                                 "(but calls in another TF1 graph, `with graph.as_default():`): it would return the "
                                 "pipeline now, for the per-worker dataset function; migrate it by hand")
    where = f"{call}, building the per-worker dataset,"
    try:
        for node in graph_calls.in_order(function.body):
            if isinstance(node, cst.Call) and graph_calls.other_function(node.func, home) is not None \
                    or isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in \
                    home.functions:
                raise Unsupported(node, f"{where} calls `{first_line(node)}` of the program, which the migration "
                                        "does not follow there; migrate it by hand")
            graph_calls.refuse(node, home.api or api, where, DATASET_REFUSED)
    except Unsupported as problem:
        if other is None:
            raise
        raise Unsupported(value, f"{problem} (line {other.position(problem.node)[0]} of {other.file}: "
                                 f"`{first_line(problem.node)}`)") from None
    return other, returning_pipeline(*returned), elsewhere


def called_elsewhere(call: cst.Call, function: cst.FunctionDef, module: graph_calls.ModuleCode,
                      other: graph_calls.ModuleCode | None) -> list[cst.Call] | None:
    """The other calls of the input function, each in a TF1 graph of the graph's module (census' evaluation graph:
    `with evaluation_graph.as_default():`), which read its pipeline's one-shot iterator now; None when the program
    names it anywhere else but at its definition and its import (`from model import input_fn`): in the graph's
    module, its own, or another file of the run."""
    name = function.name.value
    in_graphs = {id(node) for block in subtree(module.tree) if _makes_graph_default(block)
                 and not any(node is call for node in subtree(block)) for node in subtree(block.body)}
    calls = [node for node in subtree(module.tree) if isinstance(node, cst.Call) and node is not call
             and node.func.deep_equals(call.func) and id(node) in in_graphs]
    if other is None:
        return calls if module.names[name] == 2 + len(calls) else None
    used = call.func.value if isinstance(call.func, cst.Name) else call.func.attr.value
    mentioned = re.compile(rf"\b{re.escape(name)}\b")
    if module.names[used] != (2 if isinstance(call.func, cst.Name) else 1) + len(calls) or other.names[name] != 1 \
            or any(mentioned.search(text) for path, text in module.run.items()
                   if os.path.abspath(path) not in {os.path.abspath(other.path), os.path.abspath(module.path)}):
        return None
    return calls


def _makes_graph_default(node) -> bool:
    """`with <a graph>.as_default():`"""
    return isinstance(node, cst.With) and len(node.items) == 1 and isinstance(call := node.items[0].item, cst.Call) \
        and isinstance(call.func, cst.Attribute) and call.func.attr.value == "as_default" and not call.args


def iterated_call(call: cst.BaseExpression) -> cst.Call:
    """`tf.compat.v1.data.make_one_shot_iterator(<call>).get_next()`: the batches a call of the input function
    returned before it returned its pipeline."""
    below = cst.ParenthesizedWhitespace(last_line=cst.SimpleWhitespace("    "), indent=True)  # the call, below
    made = cst.Call(cst.parse_expression("tf.compat.v1.data.make_one_shot_iterator"), [cst.Arg(call)],
                    whitespace_before_args=below)
    return cst.Call(cst.Attribute(made, cst.Name("get_next")))


# What a function building the dataset may not do: all a step may not, but read tf.data.
DATASET_REFUSED = tuple(rule for rule in graph_calls.REFUSED if rule[1] is not graph_calls.READS_DATA)


def _returned_pipeline(function: cst.FunctionDef, api
                       ) -> tuple[list[cst.SimpleStatementLine], cst.BaseExpression] | None:
    """(the statements making the iterator and returning its batches, its pipeline): the function's last, and only,
    return is `return <one-shot iterator>.get_next()`, the iterator made there or just before (`iterator =
    <one-shot iterator>`, read nowhere else)."""
    body = _last_block(function.body.body)
    last = body[-1] if body and isinstance(body[-1], cst.SimpleStatementLine) else None
    value = last.body[0].value if last is not None and isinstance(last.body[0], cst.Return) else None
    made, mapped = [last], None
    if _returns_unpacked(value, body, function):  # `images, labels = <iterator>.get_next()` `return images, labels`
        value, made = body[-2].body[0].value, [body[-2], last]
        body = body[:-1]
    elif (mapped := _returned_of_batch(value, body, function)) is not None:  # `return features, features.pop(...)`
        value, made = body[-2].body[0].value, [body[-2], last]
        body = body[:-1]
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args
            and value.func.attr.value == "get_next"):
        return None
    iterator = value.func.value
    if isinstance(iterator, cst.Name) and len(body) > 1 and (assign := single_assign(body[-2])) is not None \
            and assign[0] == iterator.value and len(name_reads(function.body, iterator.value)) == 2:
        iterator, made = assign[1], [body[-2], *made]
    pipeline = iterated(iterator, api)
    if pipeline is None and isinstance(iterator, cst.Call) and isinstance(iterator.func, cst.Attribute) \
            and iterator.func.attr.value == "make_one_shot_iterator" and not iterator.args:
        pipeline = iterator.func.value
    if pipeline is None or sum(isinstance(node, cst.Return) for node in _own_nodes(function.body)) != 1:
        return None
    return made, pipeline if mapped is None else _mapped(pipeline, mapped)


def _returned_of_batch(value, body: list, function: cst.FunctionDef) -> cst.Lambda | None:
    """`lambda features: (features, features.pop(LABEL))` of `features = <iterator>.get_next()` then `return
    features, features.pop(LABEL)`: what the function returns of the batch, and the batch read nowhere else. Only
    names, constants, items, attributes and the batch's own methods: a map of the pipeline computes it the same."""
    before = single_assign(body[-2]) if value is not None and len(body) > 1 else None
    if before is None or not (isinstance(before[1], cst.Call) and isinstance(before[1].func, cst.Attribute)
                              and before[1].func.attr.value == "get_next"):
        return None
    name = before[0]
    reads = name_reads(value, name)
    if not reads or len(name_reads(function.body, name)) != len(reads) + 1:  # and its assignment
        return None
    for node in subtree(value):
        if isinstance(node, cst.Call) and not (isinstance(node.func, cst.Attribute) and is_name(node.func.value, name)):
            return None
        if not isinstance(node, _BATCH_EXPRESSIONS):
            return None
    return cst.Lambda(cst.Parameters([cst.Param(cst.Name(name))]), value.with_changes(
        lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if isinstance(value, cst.Tuple) else value)


# What an expression of the batch may be made of.
_BATCH_EXPRESSIONS = (cst.Tuple, cst.List, cst.Element, cst.Name, cst.Attribute, cst.Subscript, cst.SubscriptElement,
                      cst.Index, cst.Call, cst.Arg, cst.SimpleString, cst.Integer, cst.Comma, cst.Dot,
                      cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftParen, cst.RightParen,
                      cst.ParenthesizedWhitespace, cst.SimpleWhitespace, cst.TrailingWhitespace, cst.Newline,
                      cst.EmptyLine, cst.Comment)


def _mapped(pipeline: cst.BaseExpression, function: cst.Lambda) -> cst.Call:
    """`<pipeline>.map(lambda batch: ...)`."""
    if not isinstance(pipeline, (cst.Name, cst.Attribute, cst.Call)) and not pipeline.lpar:
        pipeline = pipeline.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(cst.Attribute(pipeline, cst.Name("map")), [cst.Arg(function)])


def _last_block(body) -> list[cst.BaseStatement]:
    """The statements the function ends with: those of a `with tf.name_scope("input"):` block it ends in."""
    while body and isinstance(body[-1], cst.With) and len(body[-1].items) == 1:
        body = list(body[-1].body.body)
    return list(body)


def _returns_unpacked(value, body: list, function: cst.FunctionDef) -> bool:
    """`return images, labels` of the names the statement before binds (`images, labels = ...`), read nowhere
    else in the function (but in the functions it defines, their own)."""
    if not (isinstance(value, cst.Tuple) and len(body) > 1
            and all(isinstance(element.value, cst.Name) for element in value.elements)):
        return False
    names = [element.value.value for element in value.elements]
    before = body[-2]
    targets = before.body[0].targets if isinstance(before, cst.SimpleStatementLine) and isinstance(
        before.body[0], cst.Assign) else []
    unpacked = targets[0].target if len(targets) == 1 else None
    return (isinstance(unpacked, cst.Tuple) and [getattr(e.value, "value", None) for e in unpacked.elements] == names
            and all(sum(len(name_reads(statement, name)) for statement in function.body.body
                        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))) == 2 for name in names))


def _own_nodes(node: cst.CSTNode):
    """The nodes of a function's body, not those of the functions (or lambdas) it defines."""
    for child in children(node):
        yield child
        if not isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            yield from _own_nodes(child)


def returning_pipeline(made: list[cst.SimpleStatementLine], pipeline: cst.BaseExpression
                       ) -> list[tuple[cst.SimpleStatementLine, list[cst.SimpleStatementLine]]]:
    """The function's statements making its iterator and returning its batches, each with what replaces it: the
    return of the pipeline."""
    last = made[-1]
    returned = last.with_changes(body=[last.body[0].with_changes(value=enclosed(pipeline))])
    return [*((statement, []) for statement in made[:-1]), (last, [returned])]
