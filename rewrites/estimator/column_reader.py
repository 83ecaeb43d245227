"""Reading feature columns from the program: each from the call that made it, wherever the program
made it, its arguments numbers and strings the migration can read or, for sizes and vocabularies,
read from the column as the program runs (rewrites/estimator/columns.py says what each becomes).
Columns appended in loops over keys known before the program runs are read round by round."""

from __future__ import annotations

import libcst as cst

from rewrites.estimator.column_containers import UNFOLLOWED, ColumnContainers
from rewrites.estimator.columns import (Bucketized, Crossed, Embedding, HashBucket, Identity, Indicator, Numeric,
                                        Runtime, SharedEmbedding, SharedTable, VocabularyList, Weighted)
from rewrites.program.constants import UNKNOWN
from rewrites.program.places import Value
from rewrites.program.values import Values
from rewrites.syntax import bound_values, is_name, source

NUMERIC_COLUMN = ("key", "shape", "default_value", "dtype", "normalizer_fn")
BUCKETIZED_COLUMN = ("source_column", "boundaries")
VOCABULARY_LIST = ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets")
VOCABULARY_FILE = ("key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "default_value", "dtype")
HASH_BUCKET = ("key", "hash_bucket_size", "dtype")
IDENTITY = ("key", "num_buckets", "default_value")
CROSSED = ("keys", "hash_bucket_size", "hash_key")
WEIGHTED = ("categorical_column", "weight_feature_key", "dtype")
SHARED_EMBEDDINGS = ("categorical_columns", "dimension", "combiner", "initializer", "shared_embedding_collection_name",
                     "ckpt_to_load_from", "tensor_name_in_ckpt", "max_norm", "trainable", "use_safe_embedding_lookup")
SHARED = "feature_column.shared_embedding_columns"
EMBEDDING = ("categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from", "tensor_name_in_ckpt",
             "max_norm", "trainable", "use_safe_embedding_lookup")

AT_RUN_TIME = object()  # an argument (a size) known when the program runs, read then from the column it made
ARITHMETIC = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.Power: "**"}
# What each argument read must be (others: a number, a string or None).
ARGUMENT_TYPES = {"boundaries": (list, tuple), "vocabulary_list": (list, tuple), "hash_bucket_size": int,
                  "num_buckets": int, "dimension": int, "num_oov_buckets": (int, type(None))}


class ColumnReader:
    """Reads a list of feature columns wherever the program built it."""

    def __init__(self, values: Values) -> None:
        self.values = values
        self.containers = ColumnContainers(values, self)

    def read(self, given: Value, dense: bool = True) -> list | None:
        """The columns ``given`` holds, sorted by name; None when they are made at run time (numeric columns of
        keys known only then). Unsupported for a column not migrated, a list the migration cannot follow, or
        (``dense``: for input_layer, not linear_model) a categorical column."""
        items = self._items(given)
        if items is None:
            return None
        columns = [self.column(item) if isinstance(item, Value) else item for item in items]
        if any(column is None for column in columns):
            return None
        categorical = [item for item, column in zip(items, columns) if not hasattr(column, "dense")]
        if dense and categorical:
            other = categorical[0] if isinstance(categorical[0], Value) else given
            raise other.fail("a categorical column given to input_layer: wrap it in an indicator_column or an "
                             "embedding_column, as TF1 required")
        return sorted(columns, key=lambda column: column.name)

    def column(self, given: Value):
        """The column ``given`` makes; None for a numeric column whose key is known at run time only."""
        looped = self.values.looped(given)
        if looped is not UNKNOWN:  # `col` of `for key, col in by_name.items()`
            if not hasattr(looped, "name"):
                raise given.fail("a feature column must be made by a call the migration can follow")
            return looped
        found = self.containers.looked_up(given)
        if found is not None:
            return found
        column = self.values.resolve(given)
        if isinstance(column.node, cst.Name):
            shared = self._unpacked_shared(column)
            if shared is not None:
                return shared
        api = column.api() if isinstance(column.node, cst.Call) else None
        reader = READERS.get(api or "")
        if reader is None and api is not None:
            raise column.fail(f"{api} is not migrated yet: write its Keras preprocessing by hand")
        if reader is None:
            code = " ".join(source(given.node).split())
            raise column.fail(f"`{code[:60] + '...' if len(code) > 60 else code}` is not a feature column the "
                              "migration can follow to the call that makes it: make the column where the list is")
        return getattr(self, reader)(column)

    def _items(self, given: Value) -> list | None:
        """The Values of the columns (or, from a comprehension over keys, the columns), None for keys known at
        run time only."""
        trail: list = []
        columns = self.values.resolve(given, trail=trail)
        value = columns.node
        if isinstance(value, (cst.List, cst.Tuple)) and not value.elements:
            items = self.containers.appended(trail, columns)
        elif isinstance(value, (cst.List, cst.Tuple)):
            items = []
            for element in value.elements:
                item = Value(element.value, columns.place)
                if isinstance(element, cst.StarredElement):
                    items += self._shared_or_fail(item, "feature columns with a `*` are migrated for a "
                                                        "shared_embedding_columns(...): write the list out")
                else:
                    items.append(item)
        elif isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            parts = [self._items(Value(side, columns.place)) for side in (value.left, value.right)]
            return None if None in parts else parts[0] + parts[1]
        elif isinstance(value, cst.Call) and columns.api() == SHARED:
            return self._shared(columns)
        elif isinstance(value, cst.ListComp):
            made = self.containers.comprehended(value, value.elt, columns)
            return None if made is None else [column for _, column in made]
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args \
                and value.func.attr.value == "values":
            return self._dict_values(Value(value.func.value, columns.place), given)
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list" \
                and len(value.args) == 1 and not value.args[0].keyword and not value.args[0].star:
            return self._items(Value(value.args[0].value, columns.place))
        else:
            raise given.fail(UNFOLLOWED)
        if not items:
            raise given.fail("no feature columns")
        return items

    def _dict_values(self, mapping: Value, given: Value) -> list | None:
        """`columns.values()` of a dict written out or a dict comprehension, as the program's changes to it leave it
        (rewrites/estimator/column_containers.py)."""
        entries = self.containers.entries(mapping, given)
        if entries is None:
            return None
        if not entries:
            raise given.fail("no feature columns")
        return list(entries.values())

    def _shared_or_fail(self, given: Value, why: str) -> list:
        resolved = self.values.resolve(given)
        if isinstance(resolved.node, cst.Call) and resolved.api() == SHARED:
            return self._shared(resolved)
        raise given.fail(why)

    def _unpacked_shared(self, name: Value):
        """`a, b = shared_embedding_columns(...)`: the column ``name`` is, or None."""
        binding = self.values.binding(name.node, name.place)
        if binding.kind != "value" or not binding.detail.isdigit():
            return None
        call = self.values.resolve(binding.value)
        if not (isinstance(call.node, cst.Call) and call.api() == SHARED):
            return None
        columns = self._shared(call)
        return columns[int(binding.detail)] if int(binding.detail) < len(columns) else None

    def _shared(self, call: Value) -> list[SharedEmbedding]:
        """shared_embedding_columns(categorical_columns, dimension, combiner): one column each, in their order,
        looking up one table (TF1 named it after the columns' names, sorted)."""
        args = self._args(call, SHARED_EMBEDDINGS, ("dimension", "combiner", "shared_embedding_collection_name"),
                          other=("categorical_columns",))
        given = bound_values(call.node, SHARED_EMBEDDINGS).get("categorical_columns")
        listed = self.values.resolve(Value(given, call.place)) if given is not None else None
        if listed is None or not isinstance(listed.node, (cst.List, cst.Tuple)):
            raise call.fail("shared_embedding_columns' categorical columns must be a list written out")
        categoricals = [self.column(Value(element.value, listed.place)) for element in listed.node.elements]
        if not all(isinstance(c, (VocabularyList, HashBucket, Identity)) and isinstance(c.size, int)
                   for c in categoricals) \
                or len({(type(c), c.size) for c in categoricals}) != 1:
            raise call.fail("shared_embedding_columns of vocabulary-list, hash-bucket or identity columns of one type "
                            "and number of buckets is migrated (TF1 took no others)")
        combiner = args.get("combiner") or "mean"
        name = args.get("shared_embedding_collection_name") or \
            "_".join(sorted(c.name for c in categoricals)) + "_shared_embedding"
        table = SharedTable(name, args["dimension"], combiner)
        return [SharedEmbedding(categorical, table) for categorical in categoricals]

    def _args(self, column: Value, parameters: tuple[str, ...], read: tuple[str, ...], other=(), sizes=()) -> dict:
        """The arguments named in ``read`` as constants (``other``: allowed, not read; ``sizes``: AT_RUN_TIME where
        they are known only then); any other argument given is not migrated."""
        bound = {name: node for name, node in bound_values(column.node, parameters).items() if name not in other}
        extra = set(bound) - set(read)
        if extra:
            raise column.fail(f"{column.api().rpartition('.')[2]}({sorted(extra)[0]}=...) is not migrated yet: write "
                              "its Keras preprocessing by hand")
        values = {}
        for name, node in bound.items():
            constant = self.values.constant(Value(node, column.place))
            if constant is UNKNOWN and name in sizes:
                values[name] = AT_RUN_TIME
                continue
            if not isinstance(constant, ARGUMENT_TYPES.get(name, (str, int, float, type(None)))) or (
                    isinstance(constant, list) and not all(isinstance(item, (str, int, float)) for item in constant)):
                raise column.fail(f"{column.api().rpartition('.')[2]}'s {name} must be a value the migration can "
                                  "read (the Keras model is built apart): write it out")
            values[name] = constant
        return values

    def numeric_key(self, column: Value, normalized: bool = False) -> str | None:
        # shape, default_value and dtype describe parsing; input_layer flattens and casts to float32 whatever comes.
        args = bound_values(column.node, NUMERIC_COLUMN)
        key, normalizer = args.get("key"), args.get("normalizer_fn")
        if not normalized and normalizer is not None and not is_name(normalizer, "None"):
            raise column.fail("numeric_column with a normalizer_fn is migrated where the columns are written out")
        known = self.values.constant(Value(key, column.place)) if key is not None else None
        return known if isinstance(known, str) else None

    def _numeric(self, column: Value) -> Numeric | None:
        key = self.numeric_key(column, normalized=True)
        normalizer = bound_values(column.node, NUMERIC_COLUMN).get("normalizer_fn")
        if key is None:
            return self.numeric_key(column)  # None, or why not
        shape = bound_values(column.node, NUMERIC_COLUMN).get("shape")
        single = shape is None or self.values.constant(Value(shape, column.place)) in (1, (1,), [1])
        if normalizer is None or is_name(normalizer, "None"):
            return Numeric(key, single=single)
        return Numeric(key, self._normalizer(Value(normalizer, column.place)), single=single)

    def _normalizer(self, given: Value) -> str:
        """A normalizer_fn of arithmetic on its argument and numbers, as code on ``{}`` (the raw feature)."""
        function = self.values.resolve(given)
        node = function.node
        params = node.params if isinstance(node, cst.Lambda) else None
        if params is None or len(params.params) != 1 or params.params[0].default is not None or \
                params.kwonly_params or params.posonly_params or params.star_kwarg is not None or \
                isinstance(params.star_arg, (cst.Param, cst.ParamStar)):
            raise given.fail("a normalizer_fn is migrated when it is a lambda of one argument: write the Keras input's "
                             "normalization by hand")
        parameter = node.params.params[0].name.value

        def code(expression: cst.BaseExpression) -> str:
            if isinstance(expression, cst.Name) and expression.value == parameter:
                return "{}"
            if isinstance(expression, cst.BinaryOperation) and type(expression.operator) in ARITHMETIC:
                return f"({code(expression.left)} {ARITHMETIC[type(expression.operator)]} {code(expression.right)})"
            if isinstance(expression, cst.UnaryOperation) and isinstance(expression.operator, cst.Minus):
                return f"-{code(expression.expression)}"
            number = self.values.constant(Value(expression, function.place))
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                return repr(number)
            raise given.fail("a normalizer_fn is migrated when it is arithmetic (+ - * / **) on its argument and "
                             "numbers known before the program runs (the Keras model is built apart): write the "
                             "Keras input's normalization by hand")

        text = code(node.body)
        return text[1:-1] if text.startswith("(") and text.endswith(")") else text

    def _bucketized(self, column: Value) -> Bucketized:
        source = bound_values(column.node, BUCKETIZED_COLUMN).get("source_column")
        numeric = self.column(Value(source, column.place)) if source is not None else None
        if not isinstance(numeric, Numeric):
            raise column.fail("bucketized_column of a numeric column with a key the migration can read is migrated")
        if not numeric.single:
            raise column.fail("bucketized_column of a numeric column of more than one value is not migrated yet")
        boundaries = self._args(column, BUCKETIZED_COLUMN, ("boundaries",), other=("source_column",),
                                sizes=("boundaries",))["boundaries"]
        if boundaries is AT_RUN_TIME:
            return _at_run_time(Bucketized(numeric, boundaries), "boundaries", "boundaries",
                                f"{numeric.name}_boundaries")
        return Bucketized(numeric, [float(boundary) for boundary in boundaries])

    def _vocabulary_list(self, column: Value) -> VocabularyList:
        args = self._args(column, VOCABULARY_LIST, ("key", "vocabulary_list", "default_value", "num_oov_buckets"),
                          other=("dtype",), sizes=("vocabulary_list",))
        if args.get("default_value", -1) != -1:
            raise column.fail("categorical_column_with_vocabulary_list(default_value=...) is not migrated yet")
        if args["vocabulary_list"] is not AT_RUN_TIME:
            return VocabularyList(args["key"], list(args["vocabulary_list"]), args.get("num_oov_buckets") or 0)
        dtype = bound_values(column.node, VOCABULARY_LIST).get("dtype")  # else TF1 took it from the words
        strings = None if dtype is None else (column.view.api(dtype) or "").endswith("string")
        return _at_run_time(VocabularyList(args["key"], AT_RUN_TIME, args.get("num_oov_buckets") or 0, strings),
                            "vocabulary", "vocabulary_list", f"{args['key']}_vocabulary")

    def _vocabulary_file(self, column: Value) -> VocabularyList:
        """Keras' lookup reads the file as TF1 did, each whole line an entry; TF1's vocabulary_size (only the
        first lines) has no counterpart."""
        args = self._args(column, VOCABULARY_FILE, ("key", "vocabulary_file", "num_oov_buckets", "default_value"),
                          other=("dtype",))
        if args.get("default_value", -1) not in (-1, None):
            raise column.fail("categorical_column_with_vocabulary_file(default_value=...) is not migrated yet")
        if not isinstance(args.get("vocabulary_file"), str):
            raise column.fail("categorical_column_with_vocabulary_file's vocabulary_file must be a path written out")
        dtype = bound_values(column.node, VOCABULARY_FILE).get("dtype")
        strings = dtype is None or (column.view.api(dtype) or "").endswith("string")
        return VocabularyList(args["key"], args["vocabulary_file"], args.get("num_oov_buckets") or 0, strings)

    def _hash_bucket(self, column: Value) -> HashBucket:
        args = self._args(column, HASH_BUCKET, ("key", "hash_bucket_size"), other=("dtype",),
                          sizes=("hash_bucket_size",))
        dtype = bound_values(column.node, HASH_BUCKET).get("dtype")
        strings = dtype is None or (column.view.api(dtype) or "").endswith("string")
        return _at_run_time(HashBucket(args["key"], args["hash_bucket_size"], strings), "size", "hash_bucket_size",
                            f"{args['key']}_buckets")

    def _identity(self, column: Value) -> Identity:
        args = self._args(column, IDENTITY, ("key", "num_buckets"), sizes=("num_buckets",))
        return _at_run_time(Identity(args["key"], args["num_buckets"]), "size", "num_buckets", f"{args['key']}_buckets")

    def _crossed(self, column: Value) -> Crossed:
        args = bound_values(column.node, CROSSED)
        keys = self.values.resolve(Value(args["keys"], column.place)) if "keys" in args else None
        if keys is None or not isinstance(keys.node, (cst.List, cst.Tuple)):
            raise column.fail("crossed_column's keys must be a list written out")
        parts = []
        for element in keys.node.elements:
            constant = self.values.constant(Value(element.value, keys.place))
            part = constant if isinstance(constant, str) else self.column(Value(element.value, keys.place))
            if isinstance(part, VocabularyList) and isinstance(part.vocabulary, str) and part.oov_buckets:
                raise column.fail("crossed_column of a vocabulary file with num_oov_buckets is not migrated yet")
            if not isinstance(part, (str, Bucketized, VocabularyList, Identity, Crossed)):
                raise column.fail("crossed_column of keys, bucketized, vocabulary, identity and crossed columns is "
                                  "migrated")
            parts += part.parts if isinstance(part, Crossed) else [part]
        size = self._args(column, CROSSED, ("hash_bucket_size",), other=("keys",),
                          sizes=("hash_bucket_size",))["hash_bucket_size"]
        return _at_run_time(Crossed(parts, size), "size", "hash_bucket_size", "crossed_buckets")

    def _categorical(self, column: Value, name: str):
        given = bound_values(column.node, EMBEDDING).get("categorical_column")
        categorical = self.column(Value(given, column.place)) if given is not None else None
        if not hasattr(categorical, "counts"):
            raise column.fail(f"{name} of a categorical column the migration can read is migrated")
        return categorical

    def _weighted(self, column: Value) -> Weighted:
        args = self._args(column, WEIGHTED, ("weight_feature_key",), other=("categorical_column", "dtype"))
        given = bound_values(column.node, WEIGHTED).get("categorical_column")
        categorical = self.column(Value(given, column.place)) if given is not None else None
        if isinstance(categorical, VocabularyList) and isinstance(categorical.vocabulary, str):
            raise column.fail("weighted_categorical_column of a vocabulary file is not migrated yet")
        if not isinstance(categorical, (VocabularyList, HashBucket, Identity)) or not isinstance(
                args.get("weight_feature_key"), str):
            raise column.fail("weighted_categorical_column of a vocabulary list, hash bucket or identity column, "
                              "weighed by a feature's key, is migrated")
        return Weighted(categorical, args["weight_feature_key"])

    def _indicator(self, column: Value) -> Indicator:
        return Indicator(self._categorical(column, "indicator_column"))

    def _embedding(self, column: Value) -> Embedding:
        args = self._args(column, EMBEDDING, ("dimension", "combiner"), other=("categorical_column",),
                          sizes=("dimension",))
        categorical, combiner = self._categorical(column, "embedding_column"), args.get("combiner") or "mean"
        if isinstance(categorical, Weighted) and combiner == "sqrtn":
            raise column.fail('an embedding_column of weighted ids with combiner="sqrtn" (over the root of the sum of '
                              "the squared weights) is not migrated yet")
        label = "crossed" if isinstance(categorical, Crossed) else categorical.name
        return _at_run_time(Embedding(categorical, args["dimension"], combiner), "dimension", "dimension",
                            f"{label}_dimension")


def _at_run_time(column, field: str, attribute: str, label: str):
    """``column``, its ``field`` read from the column the program made, by its ``attribute`` (bound to ``label``),
    where the argument is known only when the program runs."""
    if getattr(column, field) is AT_RUN_TIME:
        setattr(column, field, Runtime(attribute, column.name, label))
    return column


READERS = {"feature_column.numeric_column": "_numeric", "feature_column.bucketized_column": "_bucketized",
           "feature_column.categorical_column_with_vocabulary_list": "_vocabulary_list",
           "feature_column.categorical_column_with_vocabulary_file": "_vocabulary_file",
           "feature_column.categorical_column_with_hash_bucket": "_hash_bucket",
           "feature_column.categorical_column_with_identity": "_identity",
           "feature_column.crossed_column": "_crossed", "feature_column.indicator_column": "_indicator",
           "feature_column.weighted_categorical_column": "_weighted",
           "feature_column.embedding_column": "_embedding"}
