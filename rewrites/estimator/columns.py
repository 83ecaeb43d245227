"""Feature columns -> Keras layers giving, per example, exactly what TF1's ``input_layer`` gave.

Shared by the model_fn reader (``input_layer(features, columns)`` in a model_fn) and the canned
estimators (their ``feature_columns``). Each column is read from the call that made it, wherever
the program made it, its arguments numbers and strings the migration can read; its Keras code is
written in the build function, on ``features`` (the dict of ``keras.Input``):

- ``numeric_column``: the feature flattened, as float32;
- ``bucketized_column``: ``Discretization`` with the same boundaries (a value on a boundary goes to
  the upper bucket in both), one-hot;
- ``categorical_column_with_vocabulary_list``: ``StringLookup`` / ``IntegerLookup`` with ``""`` /
  ``-1`` as the mask TF1 drops, out-of-vocabulary values dropped (``num_oov_buckets=0``) or hashed
  into the same buckets, after the vocabulary as in TF1;
- ``categorical_column_with_hash_bucket``: ``Hashing`` (the same fingerprint), ``""`` / ``-1``
  dropped as TF1 drops them; ``categorical_column_with_identity``: the ids themselves;
- ``crossed_column`` of keys and bucketized columns: ``HashedCrossing`` (the same buckets);
- ``indicator_column``: the categorical column's counts (multi-hot); ``embedding_column``: a
  ``Dense`` layer without bias on those counts, which is the sum of the rows looked up (the
  kernel is TF1's embedding table, ``[buckets, dimension]``, initialised as TF1 did), divided as
  the combiner divides.

``input_layer`` sorts columns by name and concatenates them: so does the code written here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import libcst as cst

from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import Unsupported, bound_values, is_name

NUMERIC_COLUMN = ("key", "shape", "default_value", "dtype", "normalizer_fn")
BUCKETIZED_COLUMN = ("source_column", "boundaries")
VOCABULARY_LIST = ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets")
HASH_BUCKET = ("key", "hash_bucket_size", "dtype")
IDENTITY = ("key", "num_buckets", "default_value")
CROSSED = ("keys", "hash_bucket_size", "hash_key")
EMBEDDING = ("categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from", "tensor_name_in_ckpt",
             "max_norm", "trainable", "use_safe_embedding_lookup")
INPUT_LAYER_COMMENT = "# input_layer: the feature columns in name order, each as TF1 made it."
NUMERIC_ONLY_COMMENT = "# input_layer: the numeric columns in name order, each flattened to float32."
FLAT = "keras.layers.Flatten()(tf.cast(features[{}], tf.float32))"
COMBINERS = {"mean": "{rows} / tf.maximum(tf.reduce_sum({counts}, axis=1, keepdims=True), 1.0)",
             "sqrtn": "{rows} * tf.math.rsqrt(tf.maximum(tf.reduce_sum({counts}, axis=1, keepdims=True), 1.0))"}
COMBINER_COMMENTS = {"mean": 'combiner="mean": over the ids of the example (none: zeros, as in TF1)',
                     "sqrtn": 'combiner="sqrtn": over the square root of the number of ids (none: zeros)'}


# -- the columns ------------------------------------------------------------------------------------------
# Each writes its Keras code through a _Writer: ``dense`` (a float [batch, width] tensor, what input_layer gave
# for it), ``counts`` (a categorical column's [batch, buckets] counts of the ids of each example), ``ids``.


@dataclass
class Numeric:
    key: str

    @property
    def name(self) -> str:
        return self.key

    def dense(self, writer: _Writer) -> str:
        return writer.bind(self.name, FLAT.format(_literal(self.key)))


@dataclass
class Bucketized:
    source: Numeric
    boundaries: list

    @property
    def name(self) -> str:
        return f"{self.source.name}_bucketized"

    def ids(self, writer: _Writer) -> str:
        return writer.bind(f"{self.source.name}_buckets", f"keras.layers.Discretization(bin_boundaries="
                           f"{_literal(self.boundaries)})(tf.cast(features[{_literal(self.source.key)}], tf.float32))")

    def counts(self, writer: _Writer, name: str) -> str:
        return writer.bind(name, f"keras.layers.CategoryEncoding(num_tokens={len(self.boundaries) + 1}, "
                                 f'output_mode="count")({self.ids(writer)})')

    def dense(self, writer: _Writer) -> str:
        return self.counts(writer, self.name)


@dataclass
class VocabularyList:
    key: str
    vocabulary: list
    oov_buckets: int

    @property
    def name(self) -> str:
        return self.key

    def counts(self, writer: _Writer, name: str) -> str:
        strings = all(isinstance(word, str) for word in self.vocabulary)
        layer, mask = ("StringLookup", '""') if strings else ("IntegerLookup", "-1")  # what TF1 drops
        oov = max(self.oov_buckets, 1)
        lookup = (f"keras.layers.{layer}(vocabulary={_literal(self.vocabulary)}, num_oov_indices={oov}, "
                  f'mask_token={mask}, output_mode="count")(features[{_literal(self.key)}])')
        if not self.oov_buckets:  # TF1 dropped what is not in the vocabulary: Keras counts it first
            return writer.bind(name, f"{lookup}[:, 1:]")
        # Keras counts the out-of-vocabulary buckets first, TF1 after the vocabulary.
        return writer.bind(name, f"tf.roll({lookup}, shift={-oov}, axis=1)")


@dataclass
class HashBucket:
    key: str
    size: int
    strings: bool

    @property
    def name(self) -> str:
        return self.key

    def counts(self, writer: _Writer, name: str) -> str:
        feature, mask = f"features[{_literal(self.key)}]", '""' if self.strings else "-1"
        writer.comment(f"TF1 drops {mask}: hashed here into one bucket more, cut off.")
        ids = writer.bind(f"{self.name}_hashed", f"tf.where({feature} == {mask}, tf.constant({self.size}, tf.int64), "
                                                 f"keras.layers.Hashing(num_bins={self.size})({feature}))")
        return writer.bind(name, f'keras.layers.CategoryEncoding(num_tokens={self.size + 1}, output_mode="count")'
                                 f"({ids})[:, :-1]")


@dataclass
class Identity:
    key: str
    size: int

    @property
    def name(self) -> str:
        return self.key

    def counts(self, writer: _Writer, name: str) -> str:
        feature = f"features[{_literal(self.key)}]"
        writer.comment("TF1 drops -1: counted here in one bucket more, cut off.")
        ids = writer.bind(f"{self.name}_ids", f"tf.where({feature} < 0, tf.constant({self.size}, {feature}.dtype), "
                                              f"{feature})")
        return writer.bind(name, f'keras.layers.CategoryEncoding(num_tokens={self.size + 1}, output_mode="count")'
                                 f"({ids})[:, :-1]")


@dataclass
class Crossed:
    parts: list  # keys (str) and Bucketized columns
    size: int

    @property
    def name(self) -> str:
        return "_X_".join(sorted(part if isinstance(part, str) else part.name for part in self.parts))

    def counts(self, writer: _Writer, name: str) -> str:
        inputs = ", ".join(f"features[{_literal(part)}]" if isinstance(part, str) else part.ids(writer)
                           for part in self.parts)
        crossed = writer.bind(f"{self.name}_crossed", f"keras.layers.HashedCrossing(num_bins={self.size})(({inputs}))")
        return writer.bind(name, f'keras.layers.CategoryEncoding(num_tokens={self.size}, output_mode="count")'
                                 f"({crossed})")


@dataclass
class Indicator:
    categorical: object

    @property
    def name(self) -> str:
        return f"{self.categorical.name}_indicator"

    def dense(self, writer: _Writer) -> str:
        return self.categorical.counts(writer, self.name)


@dataclass
class Embedding:
    categorical: object
    dimension: int
    combiner: str

    @property
    def name(self) -> str:
        return f"{self.categorical.name}_embedding"

    def dense(self, writer: _Writer) -> str:
        """The rows the ids pick, summed by a Dense kernel on their counts (the kernel is TF1's table), combined."""
        counts = self.categorical.counts(writer, f"{self.categorical.name}_counts")
        rows = writer.bind(f"{self.categorical.name}_rows", (
            f"keras.layers.Dense(units={self.dimension}, use_bias=False, kernel_initializer=keras.initializers."
            f'TruncatedNormal(stddev=1 / math.sqrt({self.dimension})), name="{self.name}")({counts})'))
        if self.combiner == "sum":
            return rows
        writer.comment(COMBINER_COMMENTS[self.combiner])
        return writer.bind(self.name, COMBINERS[self.combiner].format(rows=rows, counts=counts))


class _Writer:
    """The statements of the columns' Keras code, each expression bound once to a name of its own."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.bound: list[str] = []
        self._names: dict[str, str] = {}  # code -> the name bound to it

    def bind(self, name: str, code: str) -> str:
        if code in self._names:
            return self._names[code]
        name = _identifier(name)
        while name in self.bound:
            name += "_"
        self.lines.append(f"{name} = {code}")
        self.bound.append(name)
        self._names[code] = name
        return name

    def comment(self, text: str) -> None:
        if f"# {text}" not in self.lines:
            self.lines.append(f"# {text}")


# -- reading them ------------------------------------------------------------------------------------------


class ColumnReader:
    """Reads a list of feature columns wherever the program built it."""

    def __init__(self, values: Values) -> None:
        self.values = values

    def read(self, given: Value) -> list | None:
        """The columns ``given`` holds, sorted by name; None when they are made at run time (numeric columns of
        keys known only then). Unsupported for a column not migrated, or a list the migration cannot follow."""
        items = self._items(given)
        if items is None:
            return None
        columns = [item if isinstance(item, Numeric) else self.column(item) for item in items]
        if any(column is None for column in columns):
            return None
        dense = [column for column in columns if hasattr(column, "dense") or isinstance(column, Embedding)]
        if len(dense) != len(columns):
            other = next(item for item, column in zip(items, columns) if column not in dense)
            raise other.fail("a categorical column given to input_layer: wrap it in an indicator_column or an "
                             "embedding_column, as TF1 required")
        return sorted(columns, key=lambda column: column.name)

    def column(self, given: Value):
        """The column ``given`` makes; None for a numeric column whose key is known at run time only."""
        column = self.values.resolve(given)
        api = column.api() if isinstance(column.node, cst.Call) else None
        reader = READERS.get(api or "")
        if reader is None:
            raise column.fail(f"{api or 'this feature column'} is not migrated yet: write its Keras preprocessing "
                              "by hand")
        return getattr(self, reader)(column)

    def _items(self, given: Value) -> list | None:
        """The Values of the columns (or, from a comprehension over keys, the columns), None for keys known at
        run time only."""
        trail: list = []
        columns = self.values.resolve(given, trail=trail)
        value = columns.node
        if isinstance(value, (cst.List, cst.Tuple)) and not value.elements:
            items = self._appended(trail, columns)
        elif isinstance(value, (cst.List, cst.Tuple)):
            if any(isinstance(element, cst.StarredElement) for element in value.elements):
                raise columns.fail("feature columns with a `*` are not migrated: write the list out")
            items = [Value(element.value, columns.place) for element in value.elements]
        elif isinstance(value, cst.ListComp) and value.for_in.inner_for_in is None and not value.for_in.ifs \
                and isinstance(value.for_in.target, cst.Name):
            place = self.values.place_of(columns.view, value.elt)
            element = self.values.resolve(Value(value.elt, place))
            if (element.api() if isinstance(element.node, cst.Call) else None) != "feature_column.numeric_column":
                raise element.fail("feature columns made in a comprehension: numeric columns are migrated")
            self._numeric_key(element)
            iterated = self.values.constant(Value(value.for_in.iter, columns.place))
            if not (isinstance(iterated, (list, tuple)) and all(isinstance(key, str) for key in iterated)):
                return None
            return [Numeric(key) for key in iterated]
        else:
            raise given.fail("the feature columns must be a list the migration can follow (written out, a "
                             "comprehension, or appended to in a loop)")
        if not items:
            raise given.fail("no feature columns")
        return items

    def _appended(self, trail: list, columns: Value) -> list[Value]:
        """The items `columns.append(item)` adds to an empty list (in a loop, typically)."""
        binding = next((step for step in reversed(trail) if getattr(step, "value", None) is not None
                        and step.value.node is columns.node), None)
        assignment = getattr(binding, "assignment", None)
        items = []
        for reference in getattr(assignment, "references", ()):
            node = reference.node
            view = columns.view
            attribute, call = view.parent(node), view.parent(view.parent(node))
            if isinstance(attribute, cst.Attribute) and attribute.attr.value == "append" and \
                    isinstance(call, cst.Call) and len(call.args) == 1:
                items.append(Value(call.args[0].value, self.values.place_of(view, call)))
            elif isinstance(attribute, (cst.Attribute, cst.AugAssign)) or isinstance(view.parent(node), cst.AugAssign):
                raise Unsupported(node, "feature columns added to a list otherwise than by append", view.path)
        return items

    def _args(self, column: Value, parameters: tuple[str, ...], read: tuple[str, ...], other=()) -> dict:
        """The arguments named in ``read`` as constants (``other``: allowed, not read); any other argument given
        is not migrated."""
        bound = {name: node for name, node in bound_values(column.node, parameters).items() if name not in other}
        extra = set(bound) - set(read)
        if extra:
            raise column.fail(f"{column.api().rpartition('.')[2]}({sorted(extra)[0]}=...) is not migrated yet: write "
                              "its Keras preprocessing by hand")
        values = {}
        for name, node in bound.items():
            constant = self.values.constant(Value(node, column.place))
            if constant is None and not is_name(node, "None"):
                raise column.fail(f"{name} must be a value the migration can read (the Keras model is built apart)")
            values[name] = constant
        return values

    def _numeric_key(self, column: Value) -> str | None:
        # shape, default_value and dtype describe parsing; input_layer flattens and casts to float32 whatever comes.
        args = bound_values(column.node, NUMERIC_COLUMN)
        key, normalizer = args.get("key"), args.get("normalizer_fn")
        if normalizer is not None and not is_name(normalizer, "None"):
            raise column.fail("numeric_column with a normalizer_fn is not migrated: write the Keras input (and a "
                              "Normalization or Lambda layer) by hand")
        known = self.values.constant(Value(key, column.place)) if key is not None else None
        return known if isinstance(known, str) else None

    def _numeric(self, column: Value) -> Numeric | None:
        key = self._numeric_key(column)
        return Numeric(key) if key is not None else None

    def _bucketized(self, column: Value) -> Bucketized:
        source = bound_values(column.node, BUCKETIZED_COLUMN).get("source_column")
        numeric = self.column(Value(source, column.place)) if source is not None else None
        if not isinstance(numeric, Numeric):
            raise column.fail("bucketized_column of a numeric column with a key the migration can read is migrated")
        shape = bound_values(self.values.resolve(Value(source, column.place)).node, NUMERIC_COLUMN).get("shape")
        if shape is not None and self.values.constant(Value(shape, column.place)) not in (1, (1,), [1]):
            raise column.fail("bucketized_column of a numeric column of more than one value is not migrated yet")
        boundaries = self._args(column, BUCKETIZED_COLUMN, ("boundaries",), other=("source_column",))["boundaries"]
        return Bucketized(numeric, [float(boundary) for boundary in boundaries])

    def _vocabulary_list(self, column: Value) -> VocabularyList:
        args = self._args(column, VOCABULARY_LIST, ("key", "vocabulary_list", "default_value", "num_oov_buckets"),
                          other=("dtype",))
        if args.get("default_value", -1) != -1:
            raise column.fail("categorical_column_with_vocabulary_list(default_value=...) is not migrated yet")
        return VocabularyList(args["key"], list(args["vocabulary_list"]), args.get("num_oov_buckets") or 0)

    def _hash_bucket(self, column: Value) -> HashBucket:
        args = self._args(column, HASH_BUCKET, ("key", "hash_bucket_size"), other=("dtype",))
        dtype = bound_values(column.node, HASH_BUCKET).get("dtype")
        strings = dtype is None or (column.view.api(dtype) or "").endswith("string")
        return HashBucket(args["key"], args["hash_bucket_size"], strings)

    def _identity(self, column: Value) -> Identity:
        args = self._args(column, IDENTITY, ("key", "num_buckets"))
        return Identity(args["key"], args["num_buckets"])

    def _crossed(self, column: Value) -> Crossed:
        args = bound_values(column.node, CROSSED)
        keys = self.values.resolve(Value(args["keys"], column.place)) if "keys" in args else None
        if keys is None or not isinstance(keys.node, (cst.List, cst.Tuple)):
            raise column.fail("crossed_column's keys must be a list written out")
        parts = []
        for element in keys.node.elements:
            constant = self.values.constant(Value(element.value, keys.place))
            part = constant if isinstance(constant, str) else self.column(Value(element.value, keys.place))
            if not isinstance(part, (str, Bucketized)):
                raise column.fail("crossed_column of keys and bucketized columns is migrated; crossing other "
                                  "columns is not yet")
            parts.append(part)
        size = self._args(column, CROSSED, ("hash_bucket_size",), other=("keys",))["hash_bucket_size"]
        return Crossed(parts, size)

    def _categorical(self, column: Value, name: str):
        given = bound_values(column.node, EMBEDDING).get("categorical_column")
        categorical = self.column(Value(given, column.place)) if given is not None else None
        if not hasattr(categorical, "counts"):
            raise column.fail(f"{name} of a categorical column the migration can read is migrated")
        return categorical

    def _indicator(self, column: Value) -> Indicator:
        return Indicator(self._categorical(column, "indicator_column"))

    def _embedding(self, column: Value) -> Embedding:
        args = self._args(column, EMBEDDING, ("dimension", "combiner"), other=("categorical_column",))
        return Embedding(self._categorical(column, "embedding_column"), args["dimension"],
                         args.get("combiner") or "mean")


READERS = {"feature_column.numeric_column": "_numeric", "feature_column.bucketized_column": "_bucketized",
           "feature_column.categorical_column_with_vocabulary_list": "_vocabulary_list",
           "feature_column.categorical_column_with_hash_bucket": "_hash_bucket",
           "feature_column.categorical_column_with_identity": "_identity",
           "feature_column.crossed_column": "_crossed", "feature_column.indicator_column": "_indicator",
           "feature_column.embedding_column": "_embedding"}


# -- writing them ------------------------------------------------------------------------------------------


def input_layer(columns: list | None, columns_code: str, target: str) -> tuple[list[str], list[str]]:
    """Statements binding ``target`` to ``input_layer(features, columns)`` (on the ``columns`` read, or, made at
    run time (None), on the numeric columns ``columns_code`` holds, in name order), and the names they bind."""
    if columns is None:
        return [NUMERIC_ONLY_COMMENT,
                f"{target} = keras.layers.Concatenate()([\n    {FLAT.format('column.key')}\n    for column in "
                f"sorted({columns_code}, key=lambda column: column.name)])"], [target]
    if all(isinstance(column, Numeric) for column in columns):
        if len(columns) == 1:
            return [NUMERIC_ONLY_COMMENT, f"{target} = {FLAT.format(_literal(columns[0].key))}"], [target]
        keys = ", ".join(f'"{column.key}"' for column in columns)
        return [NUMERIC_ONLY_COMMENT,
                f"{target} = keras.layers.Concatenate()([\n    {FLAT.format('key')}\n    for key in ({keys})])"], [target]
    writer = _Writer()
    writer.comment(INPUT_LAYER_COMMENT[2:])
    names = [column.dense(writer) for column in columns]
    concatenated = f"keras.layers.Concatenate()([{', '.join(names)}])" if len(names) > 1 else names[0]
    writer.lines.append(f"{target} = {concatenated}")
    return writer.lines, [*writer.bound, target]


def uses_math(columns: list | None) -> bool:
    return any(isinstance(column, Embedding) for column in columns or ())


def _literal(value) -> str:
    """A key, a vocabulary or boundaries as code, strings in double quotes."""
    return json.dumps(value)


def _identifier(name: str) -> str:
    identifier = re.sub(r"\W", "_", name)
    return f"column_{identifier}" if not identifier.isidentifier() or identifier in (
        "features", "net", "logits", "model", "optimizer", "tf", "keras", "math") else identifier
