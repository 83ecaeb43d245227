"""TFM008's writing side (rewrites/queue_inputs.py reads the pipeline): the tf.data code of each part of a TF1
queue-runner pipeline, as source text: the file names' dataset, the records' dataset (a reader's options, the chunks
of `read_up_to`), the function making an example, and the batching of tf.train.batch / shuffle_batch."""

from __future__ import annotations

import libcst as cst

from rewrites.syntax import is_literal_int, is_none, source

# TFRecordOptions' compression -> TFRecordDataset's compression_type.
COMPRESSIONS = {"GZIP": '"GZIP"', "ZLIB": '"ZLIB"', "NONE": '""'}
OPTIONS_APIS = ("python_io.TFRecordOptions", "io.TFRecordOptions")
COMPRESSION_TYPES = ("python_io.TFRecordCompressionType.", "io.TFRecordCompressionType.")


def compression(options: cst.BaseExpression, api) -> str | None:
    """`"GZIP"` of `tf.python_io.TFRecordOptions(compression_type=tf.python_io.TFRecordCompressionType.GZIP)` (or
    of `"GZIP"`): the compression_type the dataset reads; None for other options."""
    if isinstance(options, cst.Call) and api(options.func) in OPTIONS_APIS and len(options.args) == 1 \
            and (options.args[0].keyword is None or options.args[0].keyword.value == "compression_type") \
            and not options.args[0].star:
        options = options.args[0].value
    if isinstance(options, cst.SimpleString) and options.evaluated_value.upper() in ("GZIP", "ZLIB", ""):
        return COMPRESSIONS[options.evaluated_value.upper() or "NONE"]
    kind = api(options) or ""
    return next((COMPRESSIONS.get(kind.removeprefix(prefix)) for prefix in COMPRESSION_TYPES
                 if kind.startswith(prefix)), None)


def records(tf: str, dataset_class: str, passed: tuple[str, ...], value: dict[str, str], queue: str,
            chunk: str | None, keyed: bool, function: str, indent: str) -> tuple[str, str | None]:
    """(the dataset of the records the reader read from the file names' dataset ``queue``, the definition of the
    ``function`` it maps each file name with, if one): TF1's `read_up_to(queue, chunk)` read up to ``chunk``
    records of one file at a time (a file's last ones fewer); ``keyed``: each record with TF1's key of it."""
    arguments = "".join(f", {name}={value[name]}" for name in passed if name in value)
    skipped = f".skip({value['skip_header_lines']})" if "skip_header_lines" in value else ""
    chunks = f".batch({chunk})" if chunk is not None else ""
    read = f"{tf}.data.{dataset_class}(file_name{arguments})"
    if keyed and dataset_class == "TextLineDataset":
        body = ["# TF1's key: the file's name and the line's number",
                f"lines = {read}.enumerate(1){skipped}",
                f"keyed = lines.map(lambda number, line: (file_name + \":\" + {tf}.strings.as_string(number), line))",
                f"return keyed{chunks}"]
    elif keyed:
        body = [f"records = {read}",
                "# TF1's key: the file's name and the record's offset (each record framed by 16 bytes)",
                f"offsets = records.scan({tf}.constant(0, {tf}.int64), lambda end, record: (",
                f"{indent}end + 16 + {tf}.cast({tf}.strings.length(record), {tf}.int64), end))",
                f"keys = offsets.map(lambda offset: file_name + \":\" + {tf}.strings.as_string(offset))",
                f"return {tf}.data.Dataset.zip((keys, records)){chunks}"]
    elif chunk is not None:
        body = [f"return {read}{skipped}{chunks}"]
    elif skipped:
        return f"{queue}.flat_map(lambda file_name: {tf}.data.{dataset_class}(file_name){skipped})", None
    else:
        return f"{tf}.data.{dataset_class}({queue}{arguments})", None
    lines = "".join(f"{indent}{line}\n" for line in body)
    return f"{queue}.flat_map({function})", f"def {function}(file_name):\n{lines}"


def file_names(tf: str, files: dict, notes: list[str], queue: str, indent: str) -> list[str] | None:
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
        notes.append("the file names are shuffled each epoch in another random order than TF1's")
    return code


def repeated(files: dict) -> str:
    """The records read num_epochs times (TF1 repeated the file names: the same records, in the same order)."""
    epochs = files.get("num_epochs")
    return ".repeat()" if epochs is None or is_none(epochs[1].value) else f".repeat({source(epochs[1].value)})"


def batching(api: str, bound: dict, notes: list[str]) -> list[str]:
    """The dataset methods batching as tf.train.batch / shuffle_batch (``api``) did with its arguments ``bound``:
    examples given many at a time (enqueue_many=True) are unbatched first, then shuffled, then batched."""
    value = {name: source(arg[1].value) for name, arg in bound.items()}
    chain = [".unbatch()"] if "enqueue_many" in bound else []
    if api == "train.shuffle_batch":
        seed = f", seed={value['seed']}" if "seed" in value else ""
        chain.append(f".shuffle({value['min_after_dequeue']}{seed})")
        notes.append("shuffle_batch -> shuffle(min_after_dequeue), whose random order is not TF1's")
    threads = bound.get("num_threads")
    if threads is not None and not is_literal_int(threads[1].value, 1):
        notes.append("TF1's threads batched the examples in whichever order they finished; here they come in the "
                     "files' order")
    drop = "True"
    if "allow_smaller_final_batch" in bound:
        smaller = value["allow_smaller_final_batch"]
        drop = "False" if smaller == "True" else "True" if smaller == "False" else f"not {smaller}"
    return [*chain, f".batch({value['batch_size']}, drop_remainder={drop})"]


def example_function(name: str, parameter: str, statements: list[cst.BaseStatement], returned: str,
                     indent: str) -> str:
    """The function making one example of a record: the statements that made it from the queue's record."""
    code = cst.Module(body=statements, default_indent=indent).code.strip("\n")
    lines = "".join(f"{indent}{line}\n" if line.strip() else "\n" for line in code.splitlines()) if code else ""
    return f"def {name}({parameter}):\n{lines}{indent}return {returned}\n"


def single_call(statement: cst.BaseStatement, call: cst.Call, tensors: cst.BaseExpression,
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


def without(helper: cst.FunctionDef, dropped: list[cst.BaseStatement], record: str) -> cst.FunctionDef:
    """The helper taking the record rather than the queue: its reader's statements go."""
    parameter = helper.params.params[0].with_changes(name=cst.Name(record), default=None,
                                                     equal=cst.MaybeSentinel.DEFAULT)
    body = [s for s in helper.body.body if s not in dropped]
    if body and helper.body.body[0] in dropped:
        body[0] = body[0].with_changes(leading_lines=())
    return helper.with_changes(params=helper.params.with_changes(params=[parameter]),
                               body=helper.body.with_changes(body=body))
