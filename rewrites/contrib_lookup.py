"""TFM006: tf.contrib.lookup's tables, made by tf.lookup.

TFM006 contrib-lookup

What it does: `tf.contrib.lookup.index_table_from_file`, `index_table_from_tensor` (and its older name
`string_to_index_table_from_tensor`), `index_to_string_table_from_file` and `index_to_string_table_from_tensor`
become the tf.lookup table each made: a `StaticHashTable` of a `TextFileInitializer` (or a
`KeyValueTensorInitializer`) that gives each key its line number (or position), and a `StaticVocabularyTable`
where they hashed out-of-vocabulary keys into `num_oov_buckets`.
Why: TensorFlow 2 has no tf.contrib, so a program that calls these cannot start. They were TF1's own lookup
functions, building the tables tf.lookup has in TF 2, in graph mode (compat.v1, initialized by
`tf.tables_initializer()` as before) and eagerly.
What may differ: nothing: the same ids for the same keys, out-of-vocabulary keys in the same buckets
(Fingerprint64 of the key, as TF1's default `FastHashSpec`). A call whose `num_oov_buckets` is not a number
written out, with a `hasher_spec`, a `default_value` beside out-of-vocabulary buckets, keys that are not strings,
or a vocabulary computed by a call other than `tf.constant` stays, and TFM003 reports it.

Before:

    import tensorflow.compat.v1 as tf

    def lookups(words, labels):
      vocabulary = tf.contrib.lookup.index_table_from_file("vocab.txt", num_oov_buckets=1)
      classes = tf.contrib.lookup.index_table_from_tensor(tf.constant(["cat", "dog"]))
      return vocabulary.lookup(words), classes.lookup(labels)

After:

    import tensorflow.compat.v1 as tf

    def lookups(words, labels):
      vocabulary = tf.lookup.StaticVocabularyTable(
          tf.lookup.TextFileInitializer(
              "vocab.txt",
              tf.string,
              tf.lookup.TextFileIndex.WHOLE_LINE,
              tf.int64,
              tf.lookup.TextFileIndex.LINE_NUMBER),
          num_oov_buckets=1)
      classes = tf.lookup.StaticHashTable(
          tf.lookup.KeyValueTensorInitializer(
              tf.constant(["cat", "dog"]),
              tf.range(tf.size(["cat", "dog"]), dtype=tf.int64)),
          default_value=-1)
      return vocabulary.lookup(words), classes.lookup(labels)

Finding:

    4:16: TFM006 [exact] `tf.contrib.lookup.index_table_from_file` -> `tf.lookup.StaticVocabularyTable`: the same
    table
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from rewrites.base import TFCodemod
from rewrites.syntax import bind_arguments, is_read_only, root, source

RULE = "TFM006"

WHOLE_LINE, LINE_NUMBER = "lookup.TextFileIndex.WHOLE_LINE", "lookup.TextFileIndex.LINE_NUMBER"


@dataclass(frozen=True)
class Made:
    """A table's code: `table(initializer(*initializer_arguments), *arguments)`, spelled with the module's `tf`."""

    table: str
    initializer: str
    initializer_arguments: list[str]
    arguments: list[str]

    def code(self, indent: int) -> str:
        """An argument a line, indented 4 more than the line's ``indent`` (which the block the code goes in adds);
        the initializer's arguments too where they do not fit in 100 columns."""
        inner = f"{self.initializer}({', '.join(self.initializer_arguments)})"
        if indent + 4 + len(inner) > 100:
            inner = f"{self.initializer}(\n        " + ",\n        ".join(self.initializer_arguments) + ")"
        return f"{self.table}(\n    {inner},\n    " + ", ".join(self.arguments) + ")"


@dataclass(frozen=True)
class Table:
    """A contrib.lookup function: its parameters in TF1's order, what makes its table (from `tf` and the arguments
    as code), and whether it took out-of-vocabulary buckets."""

    parameters: tuple[str, ...]
    build: Callable[[str, dict[str, str]], Made]
    oov_buckets: bool = True


def _named(args: dict[str, str], *names: str) -> list[str]:
    return [f"{name}={args[name]}" for name in names if name in args]


def _index_table(tf: str, args: dict[str, str], initializer: str, initializer_arguments: list[str]) -> Made:
    """TF1's table of ids: a hash table, wrapped in one hashing unknown keys into buckets if it had any."""
    buckets = args.get("num_oov_buckets", "0")
    if buckets != "0":
        return Made(f"{tf}.lookup.StaticVocabularyTable", initializer, initializer_arguments,
                    [f"num_oov_buckets={buckets}", *_named(args, "name")])
    return Made(f"{tf}.lookup.StaticHashTable", initializer, initializer_arguments,
                [f"default_value={args.get('default_value', '-1')}", *_named(args, "name")])


def _file_columns(tf: str, args: dict[str, str], key: tuple[str, str], value: tuple[str, str]) -> list[str]:
    """TextFileInitializer's arguments as TF1's TextFileIdTableInitializer / TextFileStringTableInitializer gave
    them: ``key`` and ``value`` are (dtype, default column)."""
    return [args["vocabulary_file"], f"{tf}.{key[0]}", args.get("key_column_index", f"{tf}.{key[1]}"),
            f"{tf}.{value[0]}", args.get("value_column_index", f"{tf}.{value[1]}"),
            *_named(args, "vocab_size", "delimiter")]


def _positions(tf: str, args: dict[str, str]) -> str:
    """TF1's `cast(range(size(vocabulary)), int64)`, the size read from what the vocabulary tensor is made of."""
    return f"{tf}.range({tf}.size({args['size_of']}), dtype={tf}.int64)"


def _ids_from_file(tf: str, args: dict[str, str]) -> Made:
    return _index_table(tf, args, f"{tf}.lookup.TextFileInitializer",
                        _file_columns(tf, args, ("string", WHOLE_LINE), ("int64", LINE_NUMBER)))


def _ids_from_tensor(tf: str, args: dict[str, str]) -> Made:
    return _index_table(tf, args, f"{tf}.lookup.KeyValueTensorInitializer", [args["mapping"], _positions(tf, args)])


def _strings_from_file(tf: str, args: dict[str, str]) -> Made:
    return Made(f"{tf}.lookup.StaticHashTable", f"{tf}.lookup.TextFileInitializer",
                _file_columns(tf, args, ("int64", LINE_NUMBER), ("string", WHOLE_LINE)), _strings_default(args))


def _strings_from_tensor(tf: str, args: dict[str, str]) -> Made:
    return Made(f"{tf}.lookup.StaticHashTable", f"{tf}.lookup.KeyValueTensorInitializer",
                [_positions(tf, args), args["mapping"]], _strings_default(args))


def _strings_default(args: dict[str, str]) -> list[str]:
    """TF1's string for an id not in the vocabulary: "UNK" unless given."""
    return ["default_value=" + args.get("default_value", '"UNK"'), *_named(args, "name")]


TABLES = {
    "index_table_from_file": Table(("vocabulary_file", "num_oov_buckets", "vocab_size", "default_value", "hasher_spec",
                                    "key_dtype", "name", "key_column_index", "value_column_index", "delimiter"),
                                   _ids_from_file),
    "index_table_from_tensor": Table(("mapping", "num_oov_buckets", "default_value", "hasher_spec", "dtype", "name"),
                                     _ids_from_tensor),
    "string_to_index_table_from_tensor": Table(("mapping", "num_oov_buckets", "default_value", "hasher_spec", "name"),
                                               _ids_from_tensor),
    "index_to_string_table_from_file": Table(("vocabulary_file", "vocab_size", "default_value", "name",
                                              "key_column_index", "value_column_index", "delimiter"),
                                             _strings_from_file, oov_buckets=False),
    "index_to_string_table_from_tensor": Table(("mapping", "default_value", "name"), _strings_from_tensor,
                                               oov_buckets=False),
}


class Rewrite(TFCodemod):
    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._lines = node.code.splitlines()

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        api = self.api(original.func) or ""
        table = TABLES.get(api[len("contrib.lookup."):]) if api.startswith("contrib.lookup.") else None
        tf = root(original.func)
        if table is None or not isinstance(tf, cst.Name) or "contrib" not in source(original.func):
            return updated
        bound = bind_arguments(original, table.parameters)
        args = self._arguments(bound, table) if bound is not None else None
        if args is None or not self.wants(RULE, original):
            return updated
        made = table.build(tf.value, args)
        start = self.get_metadata(PositionProvider, original).start
        line = self._lines[start.line - 1]
        code = made.code(len(line) - len(line.lstrip()))
        return self.replace(RULE, original, cst.parse_expression(code),
                            f"`tf.contrib.lookup.{api.rpartition('.')[2]}` -> `tf.lookup."
                            f"{made.table.rpartition('.')[2]}`: the same table")

    def _arguments(self, bound: dict, table: Table) -> dict[str, str] | None:
        """The arguments as code, or None where the table would differ from TF1's or could not be read."""
        args = {name: source(arg.value) for name, (_, arg) in bound.items()}
        if "mapping" not in args and "vocabulary_file" not in args or "hasher_spec" in args:
            return None
        if any(name in args and self.api(bound[name][1].value) != "string" for name in ("key_dtype", "dtype")):
            return None
        if table.oov_buckets:
            buckets = bound.get("num_oov_buckets")
            if buckets is not None and not isinstance(buckets[1].value, cst.Integer):
                return None
            if args.get("num_oov_buckets", "0") != "0" and args.get("default_value", "-1") != "-1":
                return None
        if "mapping" in args:
            size_of = _size_source(bound["mapping"][1].value, self.api)
            if size_of is None:
                return None
            args["size_of"] = source(size_of)
        return args


def _size_source(vocabulary: cst.BaseExpression, api) -> cst.BaseExpression | None:
    """What the vocabulary's size can be read from without computing it again: itself if reading it computes
    nothing (a name, a list written out), the values of a `tf.constant(values, ...)`; else None."""
    if isinstance(vocabulary, cst.Call) and api(vocabulary.func) == "constant" and vocabulary.args:
        value = next((arg.value for arg in vocabulary.args if arg.keyword is None or arg.keyword.value == "value"),
                     None)
        return value if value is not None and is_read_only(value) else None
    return vocabulary if is_read_only(vocabulary) else None
