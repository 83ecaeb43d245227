"""Where TF1 and TF2 differ only in random draws or in layout, make the two sides comparable.

Imported by the side processes (TensorFlow is there). What each side adjusted is
recorded in its ``SideRun.adjustments`` and shown in the report.

- Dropout is turned off on both sides, the layers' (Keras', TF1's, tf_slim's) and
  ``tf.nn.dropout``'s (which code kept as written calls): its masks are random draws that two programs cannot share, so with
  dropout on, the losses would agree only statistically.
- A TF1 ``embedding_lookup`` on a partitioned variable with ``partition_strategy="mod"``
  (the default) reads id ``i`` from row ``i // n`` of shard ``i % n``; a TF2 sharded
  lookup reads row ``i`` of the whole table ("div"). The old side records such tables
  and exchanges their values in TF2's row order (initial weights in, final weights
  out), so both sides look up the same numbers for the same id.
"""

from __future__ import annotations


def turn_off_dropout(tf, dropout_classes, called: set[str]) -> None:
    """Make these Dropout layer classes pass their inputs through; the names of the layers called go in ``called``."""

    def call(self, inputs, training=None):  # Dropout.call's own signature, which Keras' SavedModel saving reads
        called.add(self.name)
        return tf.identity(inputs)

    for dropout_class in dropout_classes:
        dropout_class.call = call


def internal_dropout_classes() -> list[type]:
    """The Dropout layer of TensorFlow's own copy of the TF1 layers, which tf_slim's `dropout` makes."""
    try:
        from tensorflow.python.layers import core
    except ImportError:
        return []
    return [core.Dropout]


def turn_off_nn_dropout(tf, called: set[str]) -> None:
    """Make ``tf.nn.dropout`` (TF2's and compat.v1's) pass its input through; calls go in ``called``."""

    def dropout(x, *args, **kwargs):
        called.add("tf.nn.dropout")
        return tf.identity(x)

    for module in {id(module): module for module in (tf.nn, tf.compat.v1.nn, tf.compat.v2.nn)}.values():
        module.dropout = dropout


def dropout_note(called: set[str]) -> list[str]:
    return [f"dropout off ({', '.join(sorted(called))}): random masks cannot be matched"] if called else []


def record_mod_lookups(tf) -> dict[str, list[int]]:
    """Patch ``tf.compat.v1.nn.embedding_lookup``; returns {table name: rows per shard} of its "mod" lookups."""
    from tensorflow.python.ops.variables import PartitionedVariable

    tables: dict[str, list[int]] = {}
    original = tf.compat.v1.nn.embedding_lookup

    def embedding_lookup(params, ids, partition_strategy="mod", *args, **kwargs):
        if partition_strategy == "mod" and isinstance(params, PartitionedVariable):
            shards = list(params)
            if len(shards) > 1:
                tables[params.name] = [shard.shape[0] for shard in shards]
        return original(params, ids, partition_strategy, *args, **kwargs)

    tf.compat.v1.nn.embedding_lookup = embedding_lookup
    return tables


def div_order(value, shard_rows: list[int]):
    """The rows of a "mod"-partitioned table, reordered so that row i is what a "mod" lookup of id i read."""
    count = len(shard_rows)
    offsets = [sum(shard_rows[:shard]) for shard in range(count)]
    return value[[offsets[row % count] + row // count for row in range(sum(shard_rows))]]


def mod_lookup_notes(tables: dict[str, list[int]]) -> list[str]:
    return [f"{name}: TF1 looked ids up \"mod\" {len(rows)} shards, TF2 \"div\": rows compared in TF2's order"
            for name, rows in tables.items()]
