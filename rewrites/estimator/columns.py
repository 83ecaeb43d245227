"""Feature columns -> Keras layers giving, per example, exactly what TF1's ``input_layer`` gave.

Shared by the model_fn reader (``input_layer(features, columns)`` in a model_fn) and the canned
estimators (their ``feature_columns``); column_reader.py reads the columns from the program. Each
column's Keras code is written in the build function, on ``features`` (the dict of ``keras.Input``), by a
Writer (rewrites/estimator/column_writer.py):

- ``numeric_column``: the feature (through its ``normalizer_fn`` of arithmetic) flattened, as float32;
- ``bucketized_column``: ``Discretization`` with the same boundaries (a value on a boundary goes to
  the upper bucket in both), one-hot;
- ``categorical_column_with_vocabulary_list`` / ``_file``: ``StringLookup`` / ``IntegerLookup`` (of the
  list, or reading the file's whole lines as TF1 did) with ``""`` / ``-1`` as the mask TF1 drops,
  out-of-vocabulary values dropped (``num_oov_buckets=0``) or hashed into the same buckets, after the
  vocabulary as in TF1;
- ``categorical_column_with_hash_bucket``: ``Hashing`` (the same fingerprint), ``""`` / ``-1``
  dropped as TF1 drops them; ``categorical_column_with_identity``: the ids themselves;
- ``weighted_categorical_column``: the ids counted with their weights (``CategoryEncoding``'s
  ``count_weights``), weights of 0 or less dropped where TF1's safe embedding lookup dropped them;
- ``crossed_column`` of keys, bucketized, vocabulary and identity columns (crossed columns flattened, as in TF1):
  ``HashedCrossing`` (the same buckets) of the raw keys and of TF1's ids of the columns; an example where a
  categorical column has no id (TF1 dropped its missing value) has no crossed id, as in TF1;
- ``indicator_column``: the categorical column's counts (multi-hot); ``embedding_column``: a
  ``Dense`` layer without bias on those counts, which is the sum of the rows looked up (the
  kernel is TF1's embedding table, ``[buckets, dimension]``, initialised as TF1 did), divided as
  the combiner divides; ``shared_embedding_columns``: one such layer, every column of it looking up in it.

``input_layer`` sorts columns by name and concatenates them: so does the code written here.

A size the program computes as it runs (an embedding's ``dimension`` from a flag, ``boundaries`` of
``np.linspace(0, 1, nbuckets)``, a ``hash_bucket_size`` or ``num_buckets``), or a vocabulary list it reads from its data
(``df[key].unique()``: strings or integers, as the column's dtype says), is read from the column the program made,
found by its name among the columns the build function is given and those they are made of (``Runtime``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rewrites.estimator.column_writer import Writer

FLAT = "keras.layers.Flatten()(tf.cast(features[{}], tf.float32))"
COMBINERS = {"mean": "{rows} / tf.maximum(tf.reduce_sum({counts}, axis=1, keepdims=True), 1.0)",
             "sqrtn": "{rows} * tf.math.rsqrt(tf.maximum(tf.reduce_sum({counts}, axis=1, keepdims=True), 1.0))"}
TABLE = ("keras.layers.Dense(units={0}, use_bias=False, kernel_initializer=keras.initializers.TruncatedNormal("
         'stddev=1 / math.sqrt({0})), name="{1}")')
WEIGHTED_MEAN = "tf.math.divide_no_nan({rows}, tf.reduce_sum({counts}, axis=1, keepdims=True))"
COMBINER_COMMENTS = {"mean": 'combiner="mean": over the ids of the example (none: zeros, as in TF1)',
                     "sqrtn": 'combiner="sqrtn": over the square root of the number of ids (none: zeros)'}


@dataclass(frozen=True)
class Runtime:
    """A column's argument known only when the program runs: its ``attribute`` of the column named ``column``."""

    attribute: str  # dimension, boundaries, hash_bucket_size, num_buckets, vocabulary_list or dtype
    column: str
    label: str  # the name the generated code binds it to


def has_runtime(columns: list | None) -> bool:
    """Some column's argument is read when the program runs (the build function needs the columns)."""
    def values(column) -> list:
        inner = [getattr(column, name) for name in ("categorical", "source") if hasattr(column, name)]
        inner += [part for part in getattr(column, "parts", []) if not isinstance(part, str)]
        own = [getattr(column, name, None) for name in ("dimension", "boundaries", "size", "vocabulary")]
        return own + [value for child in inner for value in values(child)]
    return any(isinstance(value, Runtime) for column in columns or () for value in values(column))


# -- the columns ------------------------------------------------------------------------------------------
# Each writes its Keras code through a Writer: ``dense`` (a float [batch, width] tensor, what input_layer gave
# for it), ``counts`` (a categorical column's [batch, buckets] counts of the ids of each example), ``ids``.


@dataclass
class Numeric:
    key: str
    normalizer: str | None = None  # normalizer_fn's arithmetic on {} (the raw feature), before the cast, as TF1
    single: bool = field(default=True, compare=False)  # one value an example (shape 1), as bucketized_column needs

    @property
    def name(self) -> str:
        return self.key

    def dense(self, writer: Writer) -> str:
        if self.normalizer is None:
            return writer.bind(self.name, FLAT.format(literal(self.key)))
        normalized = writer.bind(f"{self.name}_normalized",
                                 self.normalizer.replace("{}", f"features[{literal(self.key)}]"))
        return writer.bind(self.name, f"keras.layers.Flatten()(tf.cast({normalized}, tf.float32))")


@dataclass
class Bucketized:
    source: Numeric
    boundaries: list

    @property
    def name(self) -> str:
        return f"{self.source.name}_bucketized"

    def ids(self, writer: Writer) -> str:
        feature = (self.source.normalizer or "{}").replace("{}", f"features[{literal(self.source.key)}]")
        values = writer.bind(f"{self.source.name}_values", f"tf.cast({feature}, tf.float32)")
        boundaries = f"list({writer.value(self.boundaries)})" if isinstance(self.boundaries, Runtime) else \
            literal(self.boundaries)
        return writer.bind(f"{self.source.name}_buckets",
                           f"keras.layers.Discretization(bin_boundaries={boundaries})({values})")

    def crossing(self, writer: Writer) -> tuple[str, None]:
        return self.ids(writer), None

    def counts(self, writer: Writer, name: str) -> str:
        buckets = f"len({writer.value(self.boundaries)}) + 1" if isinstance(self.boundaries, Runtime) else \
            len(self.boundaries) + 1
        return writer.bind(name, f"keras.layers.CategoryEncoding(num_tokens={buckets}, "
                                 f'output_mode="count")({self.ids(writer)})')

    def dense(self, writer: Writer) -> str:
        return self.counts(writer, self.name)


@dataclass
class VocabularyList:
    key: str
    vocabulary: list | str | Runtime  # the words, the path of a file of them (one a line), or read as it runs
    oov_buckets: int
    strings: bool | None = None  # of a file or read as it runs: the words are strings (else integers; None: the
    #                              column's dtype, which TF1 took from the words, says it as the program runs)

    @property
    def name(self) -> str:
        return self.key

    @property
    def size(self) -> int | None:
        """The number of buckets (None: of a file or read as the program runs, known then)."""
        return len(self.vocabulary) + self.oov_buckets if isinstance(self.vocabulary, list) else None

    def _words(self, writer: Writer) -> tuple[str, int | str]:
        """The vocabulary as code, and its length (as code where it is read as the program runs)."""
        if not isinstance(self.vocabulary, Runtime):
            return literal(self.vocabulary), len(self.vocabulary)
        words = writer.value(self.vocabulary)
        return f"list({words})", f"len({words})"

    def _lookup(self, writer: Writer, mode: str) -> str:
        strings = self.strings if not isinstance(self.vocabulary, list) else all(
            isinstance(word, str) for word in self.vocabulary)
        if strings is None:
            dtype = writer.value(Runtime("dtype", self.name, f"{self.name}_dtype"))
            writer.comment("Strings or integers, as the column's words are: TF1 drops \"\" or -1.")
            strings = writer.bind(f"{self.name}_strings", f"{dtype} == tf.string")
            layer, mask = f"(keras.layers.StringLookup if {strings} else keras.layers.IntegerLookup)", \
                f'"" if {strings} else -1'
        else:
            layer, mask = ("keras.layers.StringLookup", '""') if strings else ("keras.layers.IntegerLookup", "-1")
        return (f"{layer}(vocabulary={self._words(writer)[0]}, num_oov_indices={max(self.oov_buckets, 1)}, "
                f'mask_token={mask}, output_mode="{mode}")(features[{literal(self.key)}])')

    def crossing(self, writer: Writer) -> tuple[str, str]:
        """TF1's ids (the vocabulary first, out of vocabulary -1 or its bucket after it) from Keras' (the mask 0,
        out of vocabulary next, the vocabulary last); and where the value is missing."""
        looked_up = writer.bind(f"{self.name}_lookup", self._lookup(writer, "int"))
        oov = self.oov_buckets
        beyond = f"{looked_up} - 1 + {self._words(writer)[1]}" if oov else "tf.constant(-1, tf.int64)"
        ids = writer.bind(f"{self.name}_ids", f"tf.where({looked_up} > {max(oov, 1)}, {looked_up} - {max(oov, 1) + 1}, "
                                              f"{beyond})")
        return ids, f"{looked_up} == 0"

    def counts(self, writer: Writer, name: str, weights: str | None = None) -> str:
        oov = max(self.oov_buckets, 1)
        lookup = self._lookup(writer, "count")
        if weights is not None:  # the ids (the mask 0, out of vocabulary next), their weights summed per bucket
            ids = writer.bind(f"{self.name}_ids", self._lookup(writer, "int"))
            length = self._words(writer)[1]
            tokens = 1 + oov + length if isinstance(length, int) else f"{1 + oov} + {length}"
            lookup = (f"keras.layers.CategoryEncoding(num_tokens={tokens}, "
                      f'output_mode="count")({ids}, count_weights={weights})[:, 1:]')
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

    def counts(self, writer: Writer, name: str, weights: str | None = None) -> str:
        feature, mask = f"features[{literal(self.key)}]", '""' if self.strings else "-1"
        writer.comment(f"TF1 drops {mask}: hashed here into one bucket more, cut off.")
        size = writer.value(self.size)
        ids = writer.bind(f"{self.name}_hashed", f"tf.where({feature} == {mask}, tf.constant({size}, tf.int64), "
                                                 f"keras.layers.Hashing(num_bins={size})({feature}))")
        return writer.bind(name, _encoding(writer.value(self.size, 1), ids, weights) + "[:, :-1]")


@dataclass
class Identity:
    key: str
    size: int

    @property
    def name(self) -> str:
        return self.key

    def crossing(self, writer: Writer) -> tuple[str, str]:
        feature = f"features[{literal(self.key)}]"
        return writer.bind(f"{self.name}_ids64", f"tf.cast({feature}, tf.int64)"), f"{feature} < 0"

    def counts(self, writer: Writer, name: str, weights: str | None = None) -> str:
        feature = f"features[{literal(self.key)}]"
        writer.comment("TF1 drops -1: counted here in one bucket more, cut off.")
        ids = writer.bind(f"{self.name}_ids", f"tf.where({feature} < 0, tf.constant({writer.value(self.size)}, "
                                              f"{feature}.dtype), {feature})")
        return writer.bind(name, _encoding(writer.value(self.size, 1), ids, weights) + "[:, :-1]")


@dataclass
class Weighted:
    """weighted_categorical_column: each id counts its weight (a feature of the ids' shape), not 1."""

    categorical: object  # VocabularyList, HashBucket or Identity
    weight_key: str

    @property
    def name(self) -> str:
        return f"{self.categorical.name}_weighted_by_{self.weight_key}"

    def counts(self, writer: Writer, name: str, positive: bool = False) -> str:
        """``positive``: weights of 0 or less dropped, as TF1's embedding lookup dropped them."""
        weights = f"tf.cast(features[{literal(self.weight_key)}], tf.float32)"
        if positive:
            weights = writer.bind(f"{self.weight_key}_positive", f"tf.maximum({weights}, 0.0)")
        return self.categorical.counts(writer, name, weights)


@dataclass
class Crossed:
    parts: list  # keys (str), Bucketized, VocabularyList and Identity columns
    size: int

    @property
    def name(self) -> str:
        return "_X_".join(sorted(part if isinstance(part, str) else part.name for part in self.parts))

    def counts(self, writer: Writer, name: str) -> str:
        inputs, missing = [], []
        for part in self.parts:
            ids, absent = (f"features[{literal(part)}]", None) if isinstance(part, str) else part.crossing(writer)
            inputs.append(ids)
            missing += [f"({absent})"] if absent else []
        size = writer.value(self.size)
        crossed = writer.bind(f"{self.name}_crossed",
                              f"keras.layers.HashedCrossing(num_bins={size})(({', '.join(inputs)}))")
        if not missing:
            return writer.bind(name, _encoding(size, crossed, None))
        writer.comment("TF1 crosses nothing where a column's value is missing: counted here in one bucket more, "
                       "cut off.")
        kept = writer.bind(f"{self.name}_kept", f"tf.where({' | '.join(missing)}, tf.constant({size}, tf.int64), "
                                                f"{crossed})")
        return writer.bind(name, _encoding(writer.value(self.size, 1), kept, None) + "[:, :-1]")


@dataclass
class Indicator:
    categorical: object

    @property
    def name(self) -> str:
        return f"{self.categorical.name}_indicator"

    def dense(self, writer: Writer) -> str:
        return self.categorical.counts(writer, self.name)


@dataclass
class Embedding:
    categorical: object
    dimension: int
    combiner: str

    @property
    def name(self) -> str:
        return f"{self.categorical.name}_embedding"

    def dense(self, writer: Writer) -> str:
        writer.rename(f"{self.name}/kernel", f"{self.name}/embedding_weights")
        table = TABLE.format(writer.value(self.dimension), self.name)
        return _embedded(writer, self.categorical, self.combiner, table, self.name)


@dataclass(frozen=True)
class SharedTable:
    """shared_embedding_columns' one table: a Dense kernel every column of it looks up in."""

    name: str
    dimension: int
    combiner: str

    def layer(self, writer: Writer) -> str:
        writer.rename(f"{self.name}/kernel", f"{self.name}/embedding_weights")
        return writer.bind(f"{self.name}_table", TABLE.format(self.dimension, self.name))


@dataclass
class SharedEmbedding:
    categorical: object
    table: SharedTable

    @property
    def name(self) -> str:
        return f"{self.categorical.name}_shared_embedding"

    def dense(self, writer: Writer) -> str:
        return _embedded(writer, self.categorical, self.table.combiner, self.table.layer(writer), self.name)


# -- writing them ------------------------------------------------------------------------------------------


def _embedded(writer: Writer, categorical, combiner: str, table: str, name: str) -> str:
    """The rows the ids pick, summed by ``table`` (a Dense layer whose kernel is TF1's embedding table) on their
    counts, combined."""
    counts = looked_up(categorical, writer, f"{categorical.name}_counts", combiner)
    rows = writer.bind(f"{categorical.name}_rows", f"{table}({counts})")
    if combiner == "sum":
        return rows
    writer.comment(COMBINER_COMMENTS[combiner])
    return writer.bind(name, combiner_code(combiner, categorical).format(rows=rows, counts=counts))


def looked_up(categorical, writer: Writer, name: str, combiner: str) -> str:
    """The counts of a categorical column as TF1's safe_embedding_lookup_sparse summed them (embedding and
    linear_model): weights of 0 or less dropped, but for the sum."""
    if isinstance(categorical, Weighted) and combiner != "sum":
        return categorical.counts(writer, name, positive=True)
    return categorical.counts(writer, name)


def _encoding(tokens: int | str, ids: str, weights: str | None) -> str:
    weighted = f", count_weights={weights}" if weights else ""
    return f'keras.layers.CategoryEncoding(num_tokens={tokens}, output_mode="count")({ids}{weighted})'


def combiner_code(combiner: str, categorical) -> str:
    """The combiner's code; of weighted ids, a mean over their weights, which may sum to less than 1."""
    return WEIGHTED_MEAN if combiner == "mean" and isinstance(categorical, Weighted) else COMBINERS[combiner]


def literal(value) -> str:
    """A key, a vocabulary or boundaries as code, strings in double quotes."""
    return json.dumps(value)
