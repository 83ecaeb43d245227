"""The graph's input as TFM008 (rewrites/queue_inputs.py) writes a queue-runner pipeline, and as people write a
tf.data one: the datasets it is made of (the file names'), the function it maps over the records, and
``x, y = tf.compat.v1.data.make_one_shot_iterator(<the pipeline>).get_next()``. All of it moves into the
per-worker dataset function, the pipeline bound to a name of its own there; none of it may be read by the graph's
other code, which runs in the step. Read back from the iterator (pipeline()), the pipeline is the statements binding
the dataset and those binding what only they read (`file_pattern = os.path.join(folder, "part-*")`, `parse =
parse_csv`), an `if` choosing among such assignments too (`if args.format == "csv": ds = ds.interleave(
tf.data.TextLineDataset); parse = parse_csv else: ...`): it stays the same `if` in the dataset function.

Or the graph calls a function of its module that builds the pipeline (`x, y = read_examples(path, 100, epochs)`)
and returns its iterator's batches (`return tf.compat.v1.data.make_one_shot_iterator(<pipeline>).get_next()`, as
TFM008 writes a queue-runner function's, or `iterator = <pipeline>.make_one_shot_iterator()` then `return
iterator.get_next()`, or the batches unpacked then returned, `images, labels = ...get_next()` `return images,
labels`, in a `with tf.name_scope("input"):` block the function ends with or not; or an expression of the batch,
`features = iterator.get_next()` `return features, features.pop(LABEL)`, which a map of the pipeline computes):
the function returns the pipeline instead, and its call, bound to a name, is the per-worker dataset function's; the
same batches, in the same order. Called nowhere else in the program, it may not make variables, placeholders,
queues or summaries. A function of another module given with the graph's (census' `model.input_fn` in
trainer/model.py) is changed the same way, that module made a TF2 module (the migrated program imports it): the
engine migrates both files or neither (a rewrite's ``other_modules``).
"""

from __future__ import annotations

import os
import re

import libcst as cst

from rewrites.between_graph import graph_calls
from rewrites.syntax import (Unsupported, children, first_line, is_name, name_reads, names_read, single_assign,
                             source, statement_value, subtree)

ITERATOR_FUNCTIONS = {"data.make_one_shot_iterator"}
DATASET_NAMES = ("dataset", "records", "input_dataset")


def is_mapped_function(statement) -> bool:
    """`def make_example(record): ...` in the graph: a function for the dataset to map (checked by check())."""
    return isinstance(statement, cst.FunctionDef) and not statement.decorators


def iterated(value, api) -> cst.BaseExpression | None:
    """The pipeline of `make_one_shot_iterator(<a dataset expression>)` (not of a name: graph.py reads those)."""
    if isinstance(value, cst.Call) and api(value.func) in ITERATOR_FUNCTIONS and len(value.args) == 1 \
            and value.args[0].keyword is None and not isinstance(value.args[0].value, cst.Name):
        return value.args[0].value
    return None


def bound(pipeline: cst.BaseExpression, statements: list[cst.BaseStatement]) -> tuple[str, cst.BaseStatement]:
    """(name, `name = (pipeline)`): the dataset the iterator reads, named as nothing the pipeline reads
    (``statements``: those building it)."""
    taken = {node.value for code in [pipeline, *statements] for node in subtree(code) if isinstance(node, cst.Name)}
    name = next((name for name in DATASET_NAMES if name not in taken), None)
    if name is None:
        raise Unsupported(pipeline, f"the iterator's dataset needs a name, and {', '.join(DATASET_NAMES)} are taken")
    return name, cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], _enclosed(pipeline))])


def _enclosed(pipeline: cst.BaseExpression) -> cst.BaseExpression:
    """The pipeline, in parentheses if it is the lines of a call's argument: one expression."""
    if "\n" in source(pipeline) and not pipeline.lpar:
        return pipeline.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return pipeline


def check(dataset: str | None, statements: list[cst.BaseStatement], device: cst.With) -> None:
    """What the pipeline's ``statements`` bind besides ``dataset`` is read by nothing else in the graph, and a
    function defined there is one they map."""
    if dataset is None:
        if statements:
            raise Unsupported(statements[0], "a tf.data pipeline (or a function) in the graph no iterator reads")
        return
    inside = {id(node) for statement in statements for node in subtree(statement)}
    computed = {name.value for node in subtree(device) if isinstance(node, cst.AssignTarget) and id(node) not in inside
                for name in subtree(node.target) if isinstance(name, cst.Name)}
    read = next((node for statement in statements if not isinstance(statement, cst.FunctionDef)
                 for node in _reads(statement) if node.value in computed), None)
    if read is not None:
        raise Unsupported(read, f"`{read.value}`, which the graph's input reads, is computed in the graph (in the "
                                "step, once migrated): only what the pipeline itself binds moves into the per-worker "
                                "dataset function; compute it before the graph")
    for statement in statements:
        for name in [statement.name.value] if isinstance(statement, cst.FunctionDef) else sorted(_bound(statement)):
            if name == dataset:
                continue
            reads = [node for node in names_read(device) if node.value == name]
            outside = next((node for node in reads if id(node) not in inside), None)
            if outside is not None or not reads:
                raise Unsupported(statement, f"`{name}` is part of the graph's input and moves into the per-worker "
                                             "dataset function: only the tf.data pipeline the iterator reads may use "
                                             "it")


def pipeline(statements: list[cst.BaseStatement], api) -> list[cst.BaseStatement]:
    """The ``statements`` building the dataset whose one-shot iterator the graph reads, before that iterator: each
    binding the dataset, or names that only the pipeline's later statements read, or an `if` doing so in each
    branch."""
    at, dataset = next(((index, name) for index, statement in enumerate(statements)
                        if (name := _iterated(statement_value(statement), api))), (0, None))
    found, needed = [], {dataset}
    for index in range(at - 1, -1, -1):
        statement, later = statements[index], statements[index + 1:]
        binds = _bound(statement)
        if not binds or not binds & needed or any(
                name != dataset and any(node.value == name for other in later if other not in found
                                        for node in names_read(other)) for name in binds):
            continue
        found.insert(0, statement)
        needed |= {node.value for node in _reads(statement)}
    return found


def _iterated(value, api) -> str | None:
    """The dataset name of `ds.make_one_shot_iterator()` / `make_one_shot_iterator(ds)` (`.get_next()` of it)."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get_next":
        value = value.func.value
    if not isinstance(value, cst.Call):
        return None
    if api(value.func) in ITERATOR_FUNCTIONS and len(value.args) == 1 and isinstance(value.args[0].value, cst.Name):
        return value.args[0].value.value
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "make_one_shot_iterator" \
            and isinstance(value.func.value, cst.Name) and not value.args:
        return value.func.value.value
    return None


def names_bound(statement) -> set[str]:
    """The names a statement of the pipeline binds (a function's name, for one it maps)."""
    return {statement.name.value} if isinstance(statement, cst.FunctionDef) else _bound(statement) or set()


def _bound(statement) -> set[str] | None:
    """The names `name = value` binds; those an `if` binds in each of its branches, the same in each (without an
    `else`: only names it rebinds, read in its own assignments); None for any other statement."""
    if isinstance(statement, cst.If):
        branches = [statement.body.body]
        orelse = statement.orelse
        while isinstance(orelse, cst.If):
            branches.append(orelse.body.body)
            orelse = orelse.orelse
        names = [{name for line in branch for name in _bound(line) or {None}} for branch in branches]
        if orelse is not None:
            names.append({name for line in orelse.body.body for name in _bound(line) or {None}})
        if None in set().union(*names) or any(group != names[0] for group in names):
            return None
        if orelse is None and not names[0] <= {node.value for node in _reads(statement)}:
            return None
        return names[0]
    assign = single_assign(statement)
    return {assign[0]} if assign is not None else None


def _reads(statement) -> list[cst.Name]:
    """The names an assignment (or an `if` of assignments) reads: not those it binds."""
    if isinstance(statement, cst.If):
        return [*names_read(statement.test), *(node for line in statement.body.body for node in _reads(line)),
                *(_reads(statement.orelse) if isinstance(statement.orelse, cst.If) else
                  (node for line in statement.orelse.body.body for node in _reads(line)) if statement.orelse else ())]
    value = statement_value(statement)
    return names_read(value) if value is not None else []


def shard_note(statements: list[cst.BaseStatement], api) -> tuple[cst.CSTNode, str] | None:
    """A `shard(n, index)` of the pipeline by anything but a number: TF1's worker read its own shard, the migrated
    workers all make the chief's dataset function (ParameterServerStrategy's per-worker datasets are alike). Kept,
    with a note, where it shards the file names `list_files` shuffled without a seed (each TF1 worker read a random
    share of the files each epoch, and so does each migrated one); refused otherwise."""
    files = set()  # the names holding shuffled file names where the statement stands
    for statement in statements:
        for node in subtree(statement):
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value ==
                    "shard" and len(node.args) == 2 and not isinstance(node.args[1].value, cst.Integer)):
                continue
            sharded = node.func.value
            if isinstance(sharded, cst.Name) and sharded.value in files or _shuffled_files(sharded, api):
                return node, SHARDED_FILES.format(shard=source(node))
            raise Unsupported(node, f"`{source(node)}`: each TF1 worker read its own shard; the migrated workers "
                                    "all make the chief's per-worker dataset (ParameterServerStrategy's are alike), "
                                    "whose index is the chief's: shard the file names of an unseeded `list_files`, "
                                    "or give each worker its data by hand")
        assign = single_assign(statement)
        files = files - (_bound(statement) or set()) | ({assign[0]} if assign and _shuffled_files(assign[1], api)
                                                         else set())
    return None


SHARDED_FILES = ("`{shard}` of the file names list_files shuffled without a seed: each TF1 worker read a random share "
                 "of the files each epoch; the migrated workers all make the chief's per-worker dataset, its index "
                 "the chief's, and each reads a random share of the same size")


def _shuffled_files(value, api) -> bool:
    """`tf.data.Dataset.list_files(pattern)`: its file names shuffled, without a seed (TF1's default)."""
    if not (isinstance(value, cst.Call) and api(value.func) == "data.Dataset.list_files"):
        return False
    keywords = {arg.keyword.value: arg.value for arg in value.args if arg.keyword}
    return len(value.args) == 1 + len(keywords) and "seed" not in keywords and not (
        "shuffle" in keywords and not (isinstance(keywords["shuffle"], cst.Name)
                                       and keywords["shuffle"].value == "True"))


def computed_for(pipeline: list[cst.BaseStatement], computed: dict[str, cst.BaseStatement]) -> list[cst.BaseStatement]:
    """Of the graph's statements computing a name in the step (``computed``, by name), those the ``pipeline``'s
    statements read, and those these read in turn: they move with it into the per-worker dataset function."""
    moved: list[cst.BaseStatement] = []
    while True:
        read = {node.value for statement in [*pipeline, *moved] for node in names_read(statement)}
        more = [statement for name, statement in computed.items() if name in read and statement not in moved]
        if not more:
            return moved
        moved += more


def in_order(statements: list[cst.BaseStatement], graph: list[cst.BaseStatement], tensors: set[str]
             ) -> list[cst.BaseStatement]:
    """The dataset function's ``statements`` in the ``graph``'s order (those written for it last), none reading
    ``tensors`` of the graph, which it does not have."""
    for statement in statements:
        read = {id(node) for node in names_read(statement)}
        node = next((node for node in graph_calls.in_order(statement) if id(node) in read and node.value in tensors),
                    None)
        if node is not None and not isinstance(statement, cst.FunctionDef):  # a mapped function's own names
            raise Unsupported(node, f"the graph's input reads `{node.value}`, a tensor of the graph: the per-worker "
                                    "dataset function building it has none; migrate it by hand")
    order = {id(statement): index for index, statement in enumerate(graph)}
    return sorted(statements, key=lambda statement: order.get(id(statement), len(graph)))


def may_end(statements: list[cst.BaseStatement]) -> bool:
    """Whether the pipeline these statements build may end: none repeats it without a count (`.repeat()`)."""
    return not any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value ==
                   "repeat" and not node.args for statement in statements for node in subtree(statement))


def input_function(value, module: graph_calls.ModuleCode, api
                   ) -> tuple[graph_calls.ModuleCode | None, list[tuple[cst.SimpleStatementLine, list]]] | None:
    """(its module, None for the graph's own; the edits making it return its pipeline: returning_pipeline()) of the
    function ``value`` calls, when it is a function of the program ending in `return <a one-shot iterator of a
    pipeline>.get_next()`; Unsupported when the function is not one the migration may change so."""
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
    if _named_elsewhere(value, function, module, other) or function.decorators:
        raise Unsupported(value, f"{call} builds its tf.data input in a function the program names elsewhere too: "
                                 "it would return the pipeline now, for the per-worker dataset function; migrate "
                                 "it by hand")
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
    return other, returning_pipeline(*returned)


def _named_elsewhere(call: cst.Call, function: cst.FunctionDef, module: graph_calls.ModuleCode,
                     other: graph_calls.ModuleCode | None) -> bool:
    """Whether the program names the input function anywhere but at its definition and the graph's call (and
    its import, `from model import input_fn`): in the graph's module, its own, or another file of the run."""
    name = function.name.value
    if other is None:
        return module.names[name] != 2
    used = call.func.value if isinstance(call.func, cst.Name) else call.func.attr.value
    mentioned = re.compile(rf"\b{re.escape(name)}\b")
    return module.names[used] != (2 if isinstance(call.func, cst.Name) else 1) or other.names[name] != 1 or any(
        mentioned.search(text) for path, text in module.run.items()
        if os.path.abspath(path) not in {os.path.abspath(other.path), os.path.abspath(module.path)})


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
    returned = last.with_changes(body=[last.body[0].with_changes(value=_enclosed(pipeline))])
    return [*((statement, []) for statement in made[:-1]), (last, [returned])]
