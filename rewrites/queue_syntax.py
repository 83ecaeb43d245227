"""TFM008's reading of the code around a queue-runner pipeline (rewrites/queue_inputs.py): the blocks a pipeline
may be in, the names statements bind, the reader's read of the queue and the statement batching its examples."""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import bind_arguments, names_read, source, subtree

PRODUCER = "train.string_input_producer"
PRODUCER_PARAMETERS = ("string_tensor", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name",
                       "cancel_op")
# TF1 reader -> (its parameters, the dataset class reading the same records, the parameters it passes on).
READERS = {"TFRecordReader": (("name", "options"), "TFRecordDataset", ("compression_type",)),
           "TextLineReader": (("skip_header_lines", "name"), "TextLineDataset", ()),
           "FixedLengthRecordReader": (("record_bytes", "header_bytes", "footer_bytes", "hop_bytes", "name"),
                                       "FixedLengthRecordDataset", ("record_bytes", "header_bytes", "footer_bytes"))}
BATCH_PARAMETERS = {
    "train.batch": ("tensors", "batch_size", "num_threads", "capacity", "enqueue_many", "shapes", "dynamic_pad",
                    "allow_smaller_final_batch", "shared_name", "name"),
    "train.shuffle_batch": ("tensors", "batch_size", "capacity", "min_after_dequeue", "num_threads", "seed",
                            "enqueue_many", "shapes", "allow_smaller_final_batch", "shared_name", "name")}
NOT_DONE = ("shapes", "dynamic_pad", "shared_name", "hop_bytes", "cancel_op")
READS = {"read": ("queue",), "read_up_to": ("queue", "num_records")}
UNUSED_ARGUMENTS = ("capacity", "num_threads", "shared_name", "name")  # TF1's queue's: tf.data has no use for them

def rebound(code: list[cst.CSTNode]) -> list[cst.Name]:
    """The names the assignments in ``code`` bind as they are: `_` and `step` of `_, step = sess.run(...)`."""
    return [name for top in code for node in subtree(top) if isinstance(node, cst.AssignTarget)
            for name in names_bound(node.target)]


def names_bound(target: cst.BaseExpression) -> list[cst.Name]:
    """The names an assignment target binds as they are: `a` and `a, b`, not `a[0]` or `a.b`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in names_bound(element.value)]
    return [target] if isinstance(target, cst.Name) else []


def blocks(function: cst.FunctionDef):
    """The function's body, and the bodies of the `with` blocks in it (a graph built under `tf.device(...)`)."""
    stack = [function.body.body]
    while stack:
        block = stack.pop()
        yield block
        stack += [s.body.body for s in block if isinstance(s, cst.With) and isinstance(s.body, cst.IndentedBlock)]


def module_alias(func: cst.BaseExpression) -> str | None:
    """`tf` of `tf.train.string_input_producer` (`tf.compat.v1` of `tf.compat.v1.train...`)."""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and func.value.attr.value == "train":
        return source(func.value.value).removesuffix(".compat.v1")
    return None


def read_of(statement: cst.BaseStatement, use: cst.Name, body) -> tuple[cst.Call, str, str | None, str | None] | None:
    """(the read call, the record's name, the chunk size of a `read_up_to`, the key's name if the function's ``body``
    reads it) for `key, record = <reader>.read(queue)` (or `read(queue=queue)`, `key, records =
    <reader>.read_up_to(queue, num_records)`)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
        return None
    assign = statement.body[0]
    call, target = assign.value, assign.targets[0].target
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in READS
            and isinstance(target, cst.Tuple) and len(target.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in target.elements)):
        return None
    parameters = READS[call.func.attr.value]
    arguments = bind_arguments(call, parameters)
    if arguments is None or set(arguments) != set(parameters) or arguments["queue"][1].value is not use:
        return None
    key, record = (e.value for e in target.elements)
    bindings = rebound(body)
    rebinding = {id(node) for node in bindings}
    read = any(node is not key and node.value == key.value and id(node) not in rebinding
               for s in body for node in names_read(s))
    if read and sum(1 for node in bindings if node.value == key.value) != 1:
        return None
    chunk = arguments.get("num_records")
    return call, record.value, None if chunk is None else source(chunk[1].value), key.value if read else None


def targets(statement: cst.CSTNode) -> list[cst.Name]:
    found = []
    for node in subtree(statement):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            found += [n for n in subtree(node.target) if isinstance(n, cst.Name)]
        elif isinstance(node, (cst.For, cst.CompFor)):
            found += [n for n in subtree(node.target) if isinstance(n, cst.Name)]
    return found


def call_of(statement: cst.CSTNode, apis, api, returned: bool = False
            ) -> tuple[cst.BaseAssignTargetExpression | None, cst.Call] | None:
    """(target, call) of `target = <api>(...)` for one of ``apis`` (``returned``: also (None, call) of
    `return <api>(...)`)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
    elif isinstance(small, cst.Return) and returned:
        target = None
    else:
        return None
    if isinstance(small.value, cst.Call) and api(small.value.func) in apis:
        return target, small.value
    return None


def batching(statement: cst.BaseStatement, api):
    """(condition, [(target, call) or None]) of the statement batching the examples: (None, [one]) for
    `x, y = tf.train.batch(...)` (or `return ...`), (`shuffle`, [branches]) for `if shuffle:` with one batching
    statement in each branch (None: a branch without one, the examples flowing as they are)."""
    made = call_of(statement, BATCH_PARAMETERS, api, True)
    if made is not None:
        return None, [made]
    if not isinstance(statement, cst.If) or isinstance(statement.orelse, cst.If):
        return None
    branches = [statement.body] + ([statement.orelse.body] if statement.orelse is not None else [])
    made = [branch_batching(branch, api) for branch in branches]
    if any(m is None for m in made):
        return None
    targets = {None if target is None else source(target) for target, _ in made}
    if len(targets) != 1 or len({source(bind_arguments(call, BATCH_PARAMETERS[api(call.func)]).get(
            "tensors", (None, cst.Arg(cst.Name("_"))))[1].value) for _, call in made}) != 1:
        return None  # each branch batches the same tensors into the same names
    return statement.test, made + ([None] if statement.orelse is None else [])


def branch_batching(branch: cst.BaseSuite, api):
    """(target, call) of a branch batching the examples: its batching statement, after assignments of what only
    the batch's arguments tf.data has no use for read (`capacity = min_after_dequeue + 3 * batch_size`)."""
    if not isinstance(branch, cst.IndentedBlock) or not branch.body:
        return None
    made = call_of(branch.body[-1], BATCH_PARAMETERS, api, True)
    bound = bind_arguments(made[1], BATCH_PARAMETERS[api(made[1].func)]) if made is not None else None
    if bound is None:
        return None
    unused = [node for name in UNUSED_ARGUMENTS if name in bound for node in subtree(bound[name][1].value)]
    for statement in branch.body[:-1]:
        assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) \
            and len(statement.body) == 1 else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)
                and not any(isinstance(n, cst.Call) for n in subtree(assign.value))):
            return None
        name = assign.targets[0].target.value
        reads = [n for s in branch.body for n in names_read(s) if n.value == name]
        if any(n is not assign.targets[0].target and not any(n is u for u in unused) for n in reads):
            return None
    return made
