"""TFM008: TF1's queue-runner input pipelines, read with tf.data.

TFM008 queue-input

What it does: a pipeline of `files = tf.train.string_input_producer(names, num_epochs=, shuffle=, seed=)`, a
reader reading it (`tf.TFRecordReader()`, `tf.TextLineReader(skip_header_lines=)`,
`tf.FixedLengthRecordReader(record_bytes, header_bytes=, footer_bytes=)`: `_, record = reader.read(files)`, in
the same function, in a `with` block of it, or in a helper the queue is handed to), the code making one example of a record, and
`tf.train.batch(tensors, batch_size, ...)` or `tf.train.shuffle_batch(...)` becomes the tf.data pipeline that
reads the same records in the same order: the file names (shuffled each epoch as TF1 shuffled them, repeated
num_epochs times), the records of each file in turn, the code making an example (moved into a function the
dataset maps; a helper taking the queue takes the record instead), and batches of batch_size, the last one
dropped when short as TF1 dropped it. The batch's tensors come from the dataset's one-shot iterator, so the code
after them, an Estimator's input_fn or a session loop, reads them as before (an Estimator input_fn returning them
is then migrated to return the dataset).
Why: queue runners are TF1's graph machinery: Keras training, tf.function and TF 2's eager mode do not run them,
and TensorFlow deprecated them for tf.data.
What may differ: the order of examples where TF1's was random or raced: file names shuffled by TF1's queue (more
than one file, shuffle=True) come in another random order; `shuffle_batch` becomes `shuffle(min_after_dequeue)`,
TensorFlow's own replacement, whose random order is not TF1's; batches of more than one thread (TF1 enqueued
examples in whichever order its threads finished) come in the files' order. Not done for `read_up_to`,
`enqueue_many=True`, `dynamic_pad=True`, `shapes`, reader options, `match_filenames_once`, a key of the read that
the function reads, or code making an example whose names the function reads after the batch.

Before:

    import tensorflow.compat.v1 as tf


    def input_fn(path, batch_size):
        files = tf.train.string_input_producer([path])
        image, label = read_and_decode(files)
        images, labels = tf.train.batch([image, label], batch_size=batch_size, capacity=1000)
        return {"image": images}, labels


    def read_and_decode(files):
        reader = tf.TFRecordReader()
        _, serialized = reader.read(files)
        example = tf.parse_single_example(serialized, {"image": tf.FixedLenFeature([4], tf.float32),
                                                       "label": tf.FixedLenFeature([], tf.int64)})
        return example["image"], example["label"]

After:

    import tensorflow.compat.v1 as tf


    def input_fn(path, batch_size):
        files = tf.data.Dataset.from_tensor_slices([path])
        images, labels = tf.compat.v1.data.make_one_shot_iterator(
            tf.data.TFRecordDataset(files)
            .repeat()
            .map(read_and_decode)
            .batch(batch_size, drop_remainder=True)).get_next()
        return {"image": images}, labels


    def read_and_decode(serialized):
        example = tf.parse_single_example(serialized, {"image": tf.FixedLenFeature([4], tf.float32),
                                                       "label": tf.FixedLenFeature([], tf.int64)})
        return example["image"], example["label"]

Finding:

    5:5: TFM008 [numeric] queue-runner input pipeline -> tf.data: the same records in the same order
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.syntax import (Bindings, bind_arguments, is_literal_int, is_none, names_read, parsed_statement, source,
                             subtree)

RULE = "TFM008"
PRODUCER = "train.string_input_producer"
PRODUCER_PARAMETERS = ("string_tensor", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name",
                       "cancel_op")
# TF1 reader -> (its parameters, the dataset class reading the same records, the parameters it passes on).
READERS = {"TFRecordReader": (("name", "options"), "TFRecordDataset", ()),
           "TextLineReader": (("skip_header_lines", "name"), "TextLineDataset", ()),
           "FixedLengthRecordReader": (("record_bytes", "header_bytes", "footer_bytes", "hop_bytes", "name"),
                                       "FixedLengthRecordDataset", ("record_bytes", "header_bytes", "footer_bytes"))}
BATCH_PARAMETERS = {
    "train.batch": ("tensors", "batch_size", "num_threads", "capacity", "enqueue_many", "shapes", "dynamic_pad",
                    "allow_smaller_final_batch", "shared_name", "name"),
    "train.shuffle_batch": ("tensors", "batch_size", "capacity", "min_after_dequeue", "num_threads", "seed",
                            "enqueue_many", "shapes", "allow_smaller_final_batch", "shared_name", "name")}
NOT_DONE = ("enqueue_many", "shapes", "dynamic_pad", "shared_name", "hop_bytes", "options", "cancel_op")
EXAMPLE_FUNCTIONS = ("make_example", "read_example", "parse_record")
RECORD_NAMES = ("record", "serialized_record", "value")


@dataclass
class _Pipeline:
    """One queue pipeline in a function body: its statements and what replaces them."""

    producer: cst.SimpleStatementLine    # files = string_input_producer(...)
    batch: cst.SimpleStatementLine       # images, labels = tf.train.batch(...)
    block: list[cst.BaseStatement]       # the statements between them: reading and making an example
    replacement: list[cst.BaseStatement] = field(default_factory=list)
    helper: tuple[cst.FunctionDef, cst.FunctionDef] | None = None  # (the helper as it was, as it becomes)
    notes: list[str] = field(default_factory=list)


class Rewrite(TFCodemod):
    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._bindings = Bindings()
        node.visit(self._bindings)
        self._functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        self._pipelines: dict[int, _Pipeline] = {}  # id(producer statement) -> its pipeline
        self._helpers: dict[int, cst.FunctionDef] = {}
        for function in [n for n in subtree(node) if isinstance(n, cst.FunctionDef)]:
            for block in _blocks(function):
                for statement in block:
                    pipeline = self._pipeline(function, block, statement)
                    if pipeline is not None and self.wants(RULE, statement):
                        self._pipelines[id(statement)] = pipeline
                        if pipeline.helper is not None:
                            self._helpers[id(pipeline.helper[0])] = pipeline.helper[1]

    # -- reading ---------------------------------------------------------------------------------------------

    def _call_of(self, statement: cst.CSTNode, apis, returned: bool = False
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
        if isinstance(small.value, cst.Call) and self.api(small.value.func) in apis:
            return target, small.value
        return None

    def _pipeline(self, function: cst.FunctionDef, body: list[cst.BaseStatement], statement: cst.BaseStatement
                  ) -> _Pipeline | None:
        """The pipeline ``statement`` of ``body`` (the function's body, or a `with` block's in it) starts."""
        produced = self._call_of(statement, (PRODUCER,))
        if produced is None or not isinstance(produced[0], cst.Name):
            return None
        queue, producer = produced[0].value, produced[1]
        files = bind_arguments(producer, PRODUCER_PARAMETERS)
        if not files or "string_tensor" not in files or set(files) & set(NOT_DONE):
            return None
        if any(isinstance(n, cst.Call) and self.api(n.func) == "train.match_filenames_once"
               for n in subtree(files["string_tensor"][1].value)):
            return None  # a local variable the session initializes
        nested, body = body is not function.body.body, list(body)
        start = body.index(statement)
        end = next((i for i in range(start + 1, len(body)) if self._call_of(body[i], BATCH_PARAMETERS, True)), None)
        if end is None:
            return None
        block, batch_statement = body[start + 1:end], body[end]
        if any(isinstance(node, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal, cst.FunctionDef, cst.ClassDef))
               for s in block for node in subtree(s)):
            return None
        queues = {target.value for s in body if (made := self._call_of(s, (PRODUCER,))) is not None
                  and isinstance(target := made[0], cst.Name)} - {queue}
        if any(self._call_of(s, (PRODUCER,)) or any(isinstance(n, cst.Name) and n.value in queues for n in subtree(s))
               for s in block):
            return None  # examples made of the records of two queues (images' and labels' files): not done
        later = [node for s in body[end + 1:] for node in subtree(s)]
        if nested:  # a `with` block: the function's other code runs after it too
            inside = {id(node) for s in body for node in subtree(s)}
            later += [node for node in subtree(function.body) if id(node) not in inside]
        rebound = {id(node) for node in _rebound(later)}
        later = [node for node in later if id(node) not in rebound]  # `_, step = sess.run(...)` reads no `_`
        if any(node.value == queue for node in later if isinstance(node, cst.Name)):
            return None
        reading = self._reading(function, block, queue)
        if reading is None:
            return None
        pipeline = _Pipeline(statement, batch_statement, block)
        made = self._made(function, pipeline, queue, producer, files, reading, later)
        return pipeline if made else None

    def _reading(self, function: cst.FunctionDef, block: list[cst.BaseStatement], queue: str):
        """Where the queue is read: ("here", reader call, reader statements, record name) for a read in ``block``,
        ("helper", reader call, helper, statement calling it, record name) for a helper handed the queue."""
        uses = [(s, node) for s in block for node in subtree(s) if isinstance(node, cst.Name) and node.value == queue]
        if len(uses) != 1:
            return None
        statement, use = uses[0]
        read = _read_of(statement, use, function.body.body)
        if read is not None:
            reader = self._reader(block, read)
            return None if reader is None else ("here", reader[0], [*reader[1], statement], read[1])
        call = next((n for n in subtree(statement) if isinstance(n, cst.Call) and len(n.args) == 1
                     and n.args[0].value is use and n.args[0].keyword is None and isinstance(n.func, cst.Name)), None)
        helper = self._functions.get(call.func.value) if call is not None else None
        if helper is None or helper is function or len(helper.params.params) != 1 or helper.params.star_arg \
                not in (None, cst.MaybeSentinel.DEFAULT) or helper.params.kwonly_params or helper.params.star_kwarg:
            return None
        if sum(1 for n in subtree(self._module) if isinstance(n, cst.Name) and n.value == helper.name.value) != 2:
            return None  # its definition and this call: the helper changes
        parameter = helper.params.params[0].name.value
        inner = [(s, node) for s in helper.body.body for node in subtree(s)
                 if isinstance(node, cst.Name) and node.value == parameter]
        if len(inner) != 1:
            return None
        read = _read_of(inner[0][0], inner[0][1], helper.body.body)
        reader = self._reader(list(helper.body.body), read) if read is not None else None
        if reader is None:
            return None
        return "helper", reader[0], helper, [*reader[1], inner[0][0]], read[1], statement, call

    def _reader(self, block: list[cst.BaseStatement], read: tuple[cst.Call, str]):
        """(the reader's call, the statements making it) for `<reader>.read(queue)`: a reader made inline, or bound
        to a name by a statement of ``block`` and used only there."""
        receiver = read[0].func.value
        if isinstance(receiver, cst.Call):
            return (receiver, []) if self._reader_api(receiver) else None
        bound = [n.value for s in block for n in _targets(s)]
        if not isinstance(receiver, cst.Name) or bound.count(receiver.value) != 1:
            return None
        for statement in block:
            made = self._call_of(statement, {f"{name}" for name in READERS} | {f"io.{name}" for name in READERS})
            if made is not None and isinstance(made[0], cst.Name) and made[0].value == receiver.value:
                uses = sum(1 for s in block for n in subtree(s)
                           if isinstance(n, cst.Name) and n.value == receiver.value)
                return (made[1], [statement]) if uses == 2 else None
        return None

    def _reader_api(self, call: cst.Call) -> str | None:
        api = (self.api(call.func) or "").removeprefix("io.")
        return api if api in READERS else None

    # -- writing ---------------------------------------------------------------------------------------------

    def _made(self, function, pipeline: _Pipeline, queue: str, producer: cst.Call, files: dict, reading,
              later: list[cst.CSTNode]) -> bool:
        tf = _module_alias(producer.func)
        target, batch = self._call_of(pipeline.batch, BATCH_PARAMETERS, True)
        api = self.api(batch.func)
        bound = bind_arguments(batch, BATCH_PARAMETERS[api])
        bound = {name: arg for name, arg in (bound or {}).items()
                 if not (name in ("enqueue_many", "dynamic_pad") and source(arg[1].value) == "False")}
        if "tensors" not in bound or "batch_size" not in bound or set(bound) & set(NOT_DONE):
            return False
        if tf is None:
            return False
        parameters, dataset_class, passed = READERS[self._reader_api(reading[1])]
        given = bind_arguments(reading[1], parameters)
        if given is None or set(given) & set(NOT_DONE):
            return False
        value = {name: source(arg[1].value) for name, arg in {**bound, **given}.items()}
        tensors = bound["tensors"][1].value
        returned = source(tensors)
        if isinstance(tensors, (cst.List, cst.Tuple)):
            returned = ", ".join(source(element.value) for element in tensors.elements)
            returned = f"({returned},)" if len(tensors.elements) == 1 else returned
        # What the block binds must not be read after the batch: it moves into the example function.
        bound_in_block = {n.value for s in pipeline.block for n in _targets(s)}
        if any(isinstance(n, cst.Name) and n.value in bound_in_block for n in later):
            return False
        taken = set(self._bindings.written) | {n.value for n in subtree(function) if isinstance(n, cst.Name)}
        names = iter(n for n in EXAMPLE_FUNCTIONS if n not in taken)
        example = next(names, None)
        if example is None:
            return False
        records = _dataset(tf, dataset_class, passed, value, queue)
        indent = function.body.indent or self._module.default_indent
        if reading[0] == "here":
            _, _, dropped, record = reading
            kept = [s for s in pipeline.block if s not in dropped]
            mapped = example
            definition = _function(example, record, kept, returned, indent)
        else:
            _, _, helper, dropped, record, call_statement, call = reading
            pipeline.helper = (helper, _without(helper, dropped, record))
            single = _single_call(call_statement, call, tensors, pipeline.block)
            if single:
                mapped, definition = helper.name.value, None
            else:
                parameter = next((n for n in RECORD_NAMES if n not in taken), None)
                if parameter is None:
                    return False
                kept = [s.deep_replace(call, call.with_changes(args=[cst.Arg(cst.Name(parameter))]))
                        if s is call_statement else s for s in pipeline.block]
                mapped = example
                definition = _function(example, parameter, kept, returned, indent)
        shuffled = ""
        if api == "train.shuffle_batch":
            seed = f", seed={value['seed']}" if "seed" in value else ""
            shuffled = f".shuffle({value['min_after_dequeue']}{seed})"
            pipeline.notes.append("shuffle_batch -> shuffle(min_after_dequeue), whose random order is not TF1's")
        threads = bound.get("num_threads")
        if threads is not None and not is_literal_int(threads[1].value, 1):
            pipeline.notes.append("TF1's threads batched the examples in whichever order they finished; here they "
                                  "come in the files' order")
        drop = "True"
        if "allow_smaller_final_batch" in bound:
            smaller = bound["allow_smaller_final_batch"][1].value
            drop = "False" if source(smaller) == "True" else "True" if source(smaller) == "False" else \
                f"not {source(smaller)}"
        statements = _file_names(tf, files, pipeline, queue, indent)
        if statements is None:
            return False
        if definition is not None:
            statements.append(definition)
        chain = [records, _repeated(files), f".map({mapped})", shuffled,
                 f".batch({value['batch_size']}, drop_remainder={drop})"]
        lines = f"\n{indent}".join(filter(None, chain))
        statements.append(f"{'return' if target is None else source(target) + ' ='} "
                          f"{tf}.compat.v1.data.make_one_shot_iterator(\n{indent}{lines}).get_next()")
        pipeline.replacement = [parsed_statement(code, indent) for code in statements]
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if id(original) in self._helpers:
            helper = self._helpers[id(original)]
            return updated.with_changes(body=helper.body, params=helper.params)
        return updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        pipelines = [self._pipelines[id(s)] for s in original.body if id(s) in self._pipelines]
        if not pipelines:
            return updated
        body = list(updated.body)
        for pipeline in pipelines:
            start = list(original.body).index(pipeline.producer)
            end = list(original.body).index(pipeline.batch)
            shift = len(original.body) - len(body)
            replacement = [pipeline.replacement[0].with_changes(leading_lines=pipeline.producer.leading_lines),
                           *pipeline.replacement[1:]]
            body[start - shift:end - shift + 1] = replacement
            notes = "; ".join(pipeline.notes)
            self.replace(RULE, pipeline.producer, replacement[0],
                         "queue-runner input pipeline -> tf.data: " + (notes or "the same records in the same order"))
        return updated.with_changes(body=body)


def _rebound(code: list[cst.CSTNode]) -> list[cst.Name]:
    """The names the assignments in ``code`` bind as they are: `_` and `step` of `_, step = sess.run(...)`."""
    return [name for top in code for node in subtree(top) if isinstance(node, cst.AssignTarget)
            for name in _names_bound(node.target)]


def _names_bound(target: cst.BaseExpression) -> list[cst.Name]:
    """The names an assignment target binds as they are: `a` and `a, b`, not `a[0]` or `a.b`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _names_bound(element.value)]
    return [target] if isinstance(target, cst.Name) else []


def _blocks(function: cst.FunctionDef):
    """The function's body, and the bodies of the `with` blocks in it (a graph built under `tf.device(...)`)."""
    stack = [function.body.body]
    while stack:
        block = stack.pop()
        yield block
        stack += [s.body.body for s in block if isinstance(s, cst.With) and isinstance(s.body, cst.IndentedBlock)]


def _module_alias(func: cst.BaseExpression) -> str | None:
    """`tf` of `tf.train.string_input_producer` (`tf.compat.v1` of `tf.compat.v1.train...`)."""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and func.value.attr.value == "train":
        return source(func.value.value).removesuffix(".compat.v1")
    return None


def _read_of(statement: cst.BaseStatement, use: cst.Name, body) -> tuple[cst.Call, str] | None:
    """(the read call, the record's name) for `_, record = <reader>.read(queue)` (or `read(queue=queue)`) whose key
    the function's ``body`` does not read."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
        return None
    assign = statement.body[0]
    call, target = assign.value, assign.targets[0].target
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "read"
            and len(call.args) == 1 and call.args[0].value is use and isinstance(target, cst.Tuple)
            and len(target.elements) == 2 and all(isinstance(e.value, cst.Name) for e in target.elements)):
        return None
    if call.args[0].keyword is not None and call.args[0].keyword.value != "queue":
        return None
    key, record = (e.value for e in target.elements)
    rebound = {id(node) for node in _rebound(body)}
    if any(node is not key and node.value == key.value and id(node) not in rebound
           for s in body for node in names_read(s)):
        return None
    return call, record.value


def _targets(statement: cst.CSTNode) -> list[cst.Name]:
    found = []
    for node in subtree(statement):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            found += [n for n in subtree(node.target) if isinstance(n, cst.Name)]
        elif isinstance(node, (cst.For, cst.CompFor)):
            found += [n for n in subtree(node.target) if isinstance(n, cst.Name)]
    return found


def _single_call(statement: cst.BaseStatement, call: cst.Call, tensors: cst.BaseExpression,
                 block: list[cst.BaseStatement]) -> bool:
    """`image, label = read(files)` followed by `tf.train.batch([image, label], ...)`: the dataset maps `read`."""
    if block != [statement] or not isinstance(statement, cst.SimpleStatementLine):
        return False
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and assign.value is call and isinstance(tensors, (cst.List, cst.Tuple))):
        return False
    target = assign.targets[0].target
    names = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return len(names) > 1 and [source(n) for n in names] == [source(e.value) for e in tensors.elements]


def _without(helper: cst.FunctionDef, dropped: list[cst.BaseStatement], record: str) -> cst.FunctionDef:
    """The helper taking the record rather than the queue: its reader's statements go."""
    parameter = helper.params.params[0].with_changes(name=cst.Name(record), default=None,
                                                     equal=cst.MaybeSentinel.DEFAULT)
    body = [s for s in helper.body.body if s not in dropped]
    if body and helper.body.body[0] in dropped:
        body[0] = body[0].with_changes(leading_lines=())
    return helper.with_changes(params=helper.params.with_changes(params=[parameter]),
                               body=helper.body.with_changes(body=body))


def _function(name: str, parameter: str, statements: list[cst.BaseStatement], returned: str, indent: str) -> str:
    """The function making one example of a record: the statements that made it from the queue's record."""
    code = cst.Module(body=statements, default_indent=indent).code.strip("\n")
    lines = "".join(f"{indent}{line}\n" if line.strip() else "\n" for line in code.splitlines()) if code else ""
    return f"def {name}({parameter}):\n{lines}{indent}return {returned}\n"


def _file_names(tf: str, files: dict, pipeline: _Pipeline, queue: str, indent: str) -> list[str] | None:
    """The statements binding ``queue`` to the dataset of file names string_input_producer gave in an epoch:
    shuffled unless one (where the program decides at run time, as it decides)."""
    value = {name: source(arg[1].value) for name, arg in files.items()}
    names = files["string_tensor"][1].value
    code = [f"{queue} = {tf}.data.Dataset.from_tensor_slices({value['string_tensor']})"]
    shuffle = files.get("shuffle")
    one = isinstance(names, (cst.List, cst.Tuple)) and len(names.elements) == 1
    if not one and (shuffle is None or source(shuffle[1].value) != "False"):
        seed = f", seed={value['seed']}" if "seed" in value else ""
        # Every name in the buffer: a new permutation of them each epoch, as TF1's queue shuffled them.
        shuffled = f".shuffle({queue}.cardinality(){seed})"
        if shuffle is None or source(shuffle[1].value) == "True":
            code.append(f"{queue} = {queue}{shuffled}")
        elif isinstance(shuffle[1].value, cst.Name):
            code.append(f"if {value['shuffle']}:\n{indent}{queue} = {queue}{shuffled}")
        else:
            return None
        pipeline.notes.append("the file names are shuffled each epoch in another random order than TF1's")
    return code


def _repeated(files: dict) -> str:
    """The records read num_epochs times (TF1 repeated the file names: the same records, in the same order)."""
    epochs = files.get("num_epochs")
    return ".repeat()" if epochs is None or is_none(epochs[1].value) else f".repeat({source(epochs[1].value)})"


def _dataset(tf: str, dataset_class: str, passed: tuple[str, ...], value: dict[str, str], queue: str) -> str:
    arguments = "".join(f", {name}={value[name]}" for name in passed if name in value)
    if "skip_header_lines" in value:
        skipped = value["skip_header_lines"]
        return f"{queue}.flat_map(lambda file_name: {tf}.data.{dataset_class}(file_name).skip({skipped}))"
    return f"{tf}.data.{dataset_class}({queue}{arguments})"

