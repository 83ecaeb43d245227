"""TFM008: TF1's queue-runner input pipelines, read with tf.data.

TFM008 queue-input

What it does: a pipeline of `files = tf.train.string_input_producer(names, num_epochs=, shuffle=, seed=)`, a reader
reading it (`tf.TFRecordReader()`, `tf.TextLineReader(skip_header_lines=)`,
`tf.FixedLengthRecordReader(record_bytes, header_bytes=, footer_bytes=)`: `_, record = reader.read(files)`, in the
same function, in a `with` block of it, or in a helper the queue is handed to), the code making one example of a
record, and `tf.train.batch(tensors, batch_size, ...)` or `tf.train.shuffle_batch(...)` becomes the tf.data pipeline
that reads the same records in the same order: the file names (shuffled each epoch as TF1 shuffled them, repeated
num_epochs times), the records of each file in turn, the code making an example (moved into a function the dataset
maps; a helper taking the queue takes the record instead), and batches of batch_size, the last one dropped when
short as TF1 dropped it. `reader.read_up_to(queue, n)` gives chunks of up to n records of one file (a file's last
chunk shorter), as TF1 read them: each file's dataset batched by n, the example code mapped over the chunks; batched
again with `enqueue_many=True`, the chunks are unbatched then batched; the batching may be chosen by an `if` (`if
shuffle:` shuffle_batch, `else:` batch, or no batching: the chunks as they are). A TFRecordReader's
`options=TFRecordOptions(compression_type=GZIP)` gives the dataset's compression_type. A key of the read the
function reads is TF1's key, written with the records of each file: a record's `file:offset` (TFRecordReader), a
line's `file:number` (TextLineReader). One tensor of a list batched is that tensor, as TF1 returned it. The batch's
tensors come from the dataset's one-shot iterator, so the code after them, an Estimator's input_fn or a session
loop, reads them as before (an Estimator input_fn returning them is then migrated to return the dataset).
Why: queue runners are TF1's graph machinery: Keras training, tf.function and TF 2's eager mode do not run them,
and TensorFlow deprecated them for tf.data.
What may differ: the order of examples where TF1's was random or raced: file names shuffled by TF1's queue (more
than one file, shuffle=True) come in another random order; `shuffle_batch` becomes `shuffle(min_after_dequeue)`,
TensorFlow's own replacement, whose random order is not TF1's; batches of more than one thread (TF1 enqueued
examples in whichever order its threads finished) come in the files' order. Not done for `enqueue_many=True` of
examples read one at a time, read_up_to's chunks batched as examples, `dynamic_pad=True`, `shapes`, reader options
other than the compression, `match_filenames_once`, a key read in a helper or of another reader, or code making an
example whose names the function reads after the batch.

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

import re
from dataclasses import dataclass, field

import libcst as cst

from rewrites import queue_datasets, queue_syntax
from rewrites.base import TFCodemod
from rewrites.queue_datasets import OPTIONS_APIS
from rewrites.queue_syntax import BATCH_PARAMETERS, NOT_DONE, PRODUCER, PRODUCER_PARAMETERS, READERS
from rewrites.syntax import Bindings, bind_arguments, parsed_statement, source, subtree

RULE = "TFM008"
EXAMPLE_FUNCTIONS = ("make_example", "read_example", "parse_record")
DATASET_NAMES = ("dataset", "records", "input_dataset")
FILE_FUNCTIONS = ("read_file", "read_records", "records_of_file")
KEYED = ("TFRecordDataset", "TextLineDataset")  # TF1's key of each record is written for these
KEY_NAMES = ("file_name", "records", "offsets", "keys", "end", "record", "offset", "number", "line", "lines", "keyed")
RECORD_NAMES = ("record", "serialized_record", "value")


@dataclass
class _Pipeline:
    """One queue pipeline in a function body: its statements and what replaces them."""

    producer: cst.SimpleStatementLine    # files = string_input_producer(...)
    batch: cst.BaseStatement             # images, labels = tf.train.batch(...), or an `if` choosing the batching
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
            for block in queue_syntax.blocks(function):
                for statement in block:
                    pipeline = self._pipeline(function, block, statement)
                    if pipeline is not None and self.wants(RULE, statement):
                        self._pipelines[id(statement)] = pipeline
                        if pipeline.helper is not None:
                            self._helpers[id(pipeline.helper[0])] = pipeline.helper[1]

    # -- reading ---------------------------------------------------------------------------------------------

    def _call_of(self, statement: cst.CSTNode, apis, returned: bool = False):
        return queue_syntax.call_of(statement, apis, self.api, returned)

    def _batching(self, statement: cst.BaseStatement):
        return queue_syntax.batching(statement, self.api)

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
        end = next((i for i in range(start + 1, len(body)) if self._batching(body[i]) is not None), None)
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
        rebound = {id(node) for node in queue_syntax.rebound(later)}
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
        read = queue_syntax.read_of(statement, use, function.body.body)
        if read is not None:
            reader = self._reader(block, read)
            return None if reader is None else ("here", reader[0], [*reader[1], statement], read[1], read[2:])
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
        read = queue_syntax.read_of(inner[0][0], inner[0][1], helper.body.body)
        reader = self._reader(list(helper.body.body), read) if read is not None and read[3] is None else None
        if reader is None:
            return None
        return "helper", reader[0], helper, [*reader[1], inner[0][0]], read[1], statement, call, read[2:]

    def _reader(self, block: list[cst.BaseStatement], read: tuple[cst.Call, str, str | None]):
        """(the reader's call, the statements making it) for `<reader>.read(queue)`: a reader made inline, or bound
        to a name by a statement of ``block`` and used only there (its options too: `options = TFRecordOptions(...)`
        given as `TFRecordReader(options=options)`)."""
        receiver = read[0].func.value
        if isinstance(receiver, cst.Call):
            made = (receiver, []) if self._reader_api(receiver) else None
        else:
            made = self._bound_in(block, receiver, {*READERS, *(f"io.{name}" for name in READERS)})
        if made is None:
            return None
        options = next((arg.value for arg in made[0].args if arg.keyword and arg.keyword.value == "options"), None)
        if isinstance(options, cst.Name):
            given = self._bound_in(block, options, OPTIONS_APIS)
            return None if given is None else (made[0], [*given[1], *made[1]])
        return made

    def _bound_in(self, block: list[cst.BaseStatement], name: cst.BaseExpression, apis):
        """(call, [statement]) of the one `name = <api>(...)` of ``block`` whose name only one other use reads."""
        bound = [n.value for s in block for n in queue_syntax.targets(s)]
        if not isinstance(name, cst.Name) or bound.count(name.value) != 1:
            return None
        for statement in block:
            made = self._call_of(statement, apis)
            if made is not None and isinstance(made[0], cst.Name) and made[0].value == name.value:
                keywords = {id(n.keyword) for s in block for n in subtree(s) if isinstance(n, cst.Arg)}
                uses = sum(1 for s in block for n in subtree(s)
                           if isinstance(n, cst.Name) and n.value == name.value and id(n) not in keywords)
                return (made[1], [statement]) if uses == 2 else None
        return None

    def _reader_api(self, call: cst.Call) -> str | None:
        api = (self.api(call.func) or "").removeprefix("io.")
        return api if api in READERS else None

    # -- writing ---------------------------------------------------------------------------------------------

    def _made(self, function, pipeline: _Pipeline, queue: str, producer: cst.Call, files: dict, reading,
              later: list[cst.CSTNode]) -> bool:
        tf = queue_syntax.module_alias(producer.func)
        condition, branches = self._batching(pipeline.batch)
        batches = [None if made is None else self._batch(made[1]) for made in branches]
        if tf is None or any(made is not None and bound is None for made, bound in zip(branches, batches)):
            return False
        target, batch = branches[0]
        chunk, key = reading[-1]
        if any(bound is not None and ("enqueue_many" in bound) != (chunk is not None) for bound in batches):
            return False  # read_up_to's chunks enqueued many at a time, a single read's examples one at a time
        tensors = batches[0]["tensors"][1].value
        parameters, dataset_class, passed = READERS[self._reader_api(reading[1])]
        given = bind_arguments(reading[1], parameters)
        if given is None or set(given) & set(NOT_DONE):
            return False
        value = {name: source(arg[1].value) for name, arg in given.items()}
        if "options" in given:
            dropped = reading[2] if reading[0] == "here" else reading[3]
            value["compression_type"] = self._compression(given["options"][1].value, dropped)
            if value["compression_type"] is None:
                return False
        returned = source(tensors)
        if isinstance(tensors, (cst.List, cst.Tuple)):  # TF1 batched one tensor of a list into a tensor, not a list
            returned = ", ".join(source(element.value) for element in tensors.elements)
        if None in branches and (target is None or source(target) != returned):
            return False  # a branch not batching: the examples flow on as they are, in the batch's name
        # What the block binds must not be read after the batch (but the batch's names): it moves into the example
        # function.
        bound_in_block = {n.value for s in pipeline.block for n in queue_syntax.targets(s)}
        rebound = {n.value for n in queue_syntax.names_bound(target)} if target is not None else set()
        if condition is not None:  # what a branch computed for the batch's arguments tf.data drops
            bound_in_block |= {n.value for branch in (pipeline.batch.body, getattr(pipeline.batch.orelse, "body", None))
                               if branch is not None for s in branch.body[:-1] for n in queue_syntax.targets(s)}
        read_after = [*later, *([] if condition is None else subtree(condition))]
        if any(isinstance(n, cst.Name) and n.value in bound_in_block - rebound for n in read_after):
            return False
        taken = set(self._bindings.written) | {n.value for n in subtree(function) if isinstance(n, cst.Name)}
        example = next((n for n in EXAMPLE_FUNCTIONS if n not in taken), None)
        dataset = next((n for n in DATASET_NAMES if n not in taken), None)
        reader = next((n for n in FILE_FUNCTIONS if n not in taken), None)
        if example is None or dataset is None or reader is None:
            return False
        indent = function.body.indent or self._module.default_indent
        written = " ".join([*value.values(), chunk or ""])  # in the function reading a file
        if key is not None and (dataset_class not in KEYED or set(re.findall(r"\w+", written)) & set(KEY_NAMES)):
            return False
        records, read_file = queue_datasets.records(tf, dataset_class, passed, value, queue, chunk, key is not None,
                                                    reader, indent)
        if reading[0] == "here":
            _, _, dropped, record, _ = reading
            record = record if key is None else f"{key}, {record}"
            kept = [s for s in pipeline.block if s not in dropped]
            mapped = example if kept or returned != record else None  # the records are the examples
            definition = queue_datasets.example_function(example, record, kept, returned, indent) if mapped else None
        else:
            _, _, helper, dropped, record, call_statement, call, _ = reading
            pipeline.helper = (helper, queue_datasets.without(helper, dropped, record))
            if queue_datasets.single_call(call_statement, call, tensors, pipeline.block):
                mapped, definition = helper.name.value, None
            else:
                parameter = next((n for n in RECORD_NAMES if n not in taken), None)
                if parameter is None:
                    return False
                kept = [s.deep_replace(call, call.with_changes(args=[cst.Arg(cst.Name(parameter))]))
                        if s is call_statement else s for s in pipeline.block]
                mapped = example
                definition = queue_datasets.example_function(example, parameter, kept, returned, indent)
        batched = [None if bound is None else queue_datasets.batching(self.api(made[1].func), bound, pipeline.notes)
                   for made, bound in zip(branches, batches)]
        statements = queue_datasets.file_names(tf, files, pipeline.notes, queue, indent)
        if statements is None:
            return False
        statements += [code for code in (read_file, definition) if code is not None]
        chain = [records, queue_datasets.repeated(files), *([f".map({mapped})"] if mapped else [])]
        assigned = "return" if target is None else f"{source(target)} ="
        assigned = f"{assigned} {tf}.compat.v1.data.make_one_shot_iterator("
        if condition is None:
            lines = f"\n{indent}".join([*chain, *batched[0]])
            statements.append(f"{assigned}\n{indent}{lines}).get_next()")
        else:
            lines = f"\n{indent}".join(chain)
            statements.append(f"{dataset} = (\n{indent}{lines})")
            statements.append(f"if {source(condition)}:\n{indent}{dataset} = {dataset}{''.join(batched[0])}"
                              + (f"\nelse:\n{indent}{dataset} = {dataset}{''.join(batched[1])}" if batched[1] else ""))
            statements.append(f"{assigned}{dataset}).get_next()")
        pipeline.replacement = [parsed_statement(code, indent) for code in statements]
        return True

    def _batch(self, call: cst.Call) -> dict | None:
        """The arguments of a tf.train.batch / shuffle_batch call TFM008 follows (enqueue_many=False left out)."""
        bound = bind_arguments(call, BATCH_PARAMETERS[self.api(call.func)])
        bound = {name: arg for name, arg in (bound or {}).items()
                 if not (name in ("enqueue_many", "dynamic_pad") and source(arg[1].value) == "False")}
        if "tensors" not in bound or "batch_size" not in bound or set(bound) & set(NOT_DONE) \
                or ("enqueue_many" in bound and source(bound["enqueue_many"][1].value) != "True"):
            return None
        return bound

    def _compression(self, options: cst.BaseExpression, dropped: list[cst.BaseStatement]) -> str | None:
        """The compression_type of the reader's options (a name bound to them among the reader's statements)."""
        if isinstance(options, cst.Name):
            options = next((made[1] for s in dropped if (made := self._call_of(s, OPTIONS_APIS)) is not None
                            and source(made[0]) == options.value), None)
        return None if options is None else queue_datasets.compression(options, self.api)

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
