"""The graph's input as TFM008 (rewrites/queue_inputs.py) writes a queue-runner pipeline, and as people write a
tf.data one: the datasets it is made of (the file names'), the function it maps over the records, and
``x, y = tf.compat.v1.data.make_one_shot_iterator(<the pipeline>).get_next()``. All of it moves into the
per-worker dataset function, the pipeline bound to a name of its own there; none of it may be read by the graph's
other code, which runs in the step. Read back from the iterator (pipeline()), the pipeline is the statements binding
the dataset and those binding what only they read (`file_pattern = os.path.join(folder, "part-*")`, `parse =
parse_csv`), an `if` choosing among such assignments too (`if args.format == "csv": ds = ds.interleave(
tf.data.TextLineDataset); parse = parse_csv else: ...`): it stays the same `if` in the dataset function.
A function of the program building the pipeline and returning its batches: input_functions.py.
"""

from __future__ import annotations

import libcst as cst

from rewrites.between_graph import graph_calls
from rewrites.syntax import Unsupported, names_read, single_assign, source, statement_value, subtree

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
    return name, cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], enclosed(pipeline))])


def enclosed(pipeline: cst.BaseExpression) -> cst.BaseExpression:
    """The pipeline, in parentheses if it is the lines of a call's argument: one expression."""
    if "\n" in source(pipeline) and not pipeline.lpar:
        return pipeline.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return pipeline


def _bound_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment to ``target`` binds: not those of `self.saver = ...` (an attribute's object)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _bound_names(element.value)]
    return []


def check(dataset: str | None, statements: list[cst.BaseStatement], device: cst.With) -> None:
    """What the pipeline's ``statements`` bind besides ``dataset`` is read by nothing else in the graph, and a
    function defined there is one they map."""
    if dataset is None:
        if statements:
            raise Unsupported(statements[0], "a tf.data pipeline (or a function) in the graph no iterator reads")
        return
    inside = {id(node) for statement in statements for node in subtree(statement)}
    computed = {name for node in subtree(device) if isinstance(node, cst.AssignTarget) and id(node) not in inside
                for name in _bound_names(node.target)}
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
