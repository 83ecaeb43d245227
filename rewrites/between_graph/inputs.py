"""The graph's input as TFM008 (rewrites/queue_inputs.py) writes a queue-runner pipeline, and as people write a
tf.data one: the datasets it is made of (the file names'), the function it maps over the records, and
``x, y = tf.compat.v1.data.make_one_shot_iterator(<the pipeline>).get_next()``. All of it moves into the
per-worker dataset function, the pipeline bound to a name of its own there; none of it may be read by the graph's
other code, which runs in the step.
"""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import Unsupported, names_read, single_assign, source, subtree

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
    if "\n" in source(pipeline) and not pipeline.lpar:  # lines of a call's argument: one expression in parentheses
        pipeline = pipeline.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return name, cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], pipeline)])


def check(dataset: str | None, statements: list[cst.BaseStatement], device: cst.With) -> None:
    """What the pipeline's ``statements`` bind besides ``dataset`` is read by nothing else in the graph, and a
    function defined there is one they map."""
    if dataset is None:
        if statements:
            raise Unsupported(statements[0], "a tf.data pipeline (or a function) in the graph no iterator reads")
        return
    inside = {id(node) for statement in statements for node in subtree(statement)}
    for statement in statements:
        name = statement.name.value if isinstance(statement, cst.FunctionDef) else single_assign(statement)[0]
        if name == dataset:
            continue
        reads = [node for node in names_read(device) if node.value == name]
        outside = next((node for node in reads if id(node) not in inside), None)
        if outside is not None or not reads:
            raise Unsupported(statement, f"`{name}` is part of the graph's input and moves into the per-worker "
                                         "dataset function: only the tf.data pipeline the iterator reads may use it")
