"""TFM201-205: compat.v1 partitioners -> tf.distribute.experimental.partitioners.

The TF2 classes compute the same shards as the TF1 functions along axis 0 (the TF2 ones call the TF1 code), and
they accept the (shape, dtype) call that get_variable(partitioner=...) makes, so the rewritten code still runs
under TF1 too. Every TF1 default equals the TF2 default, so none needs spelling out. Moving a partitioner from
get_variable / variable_scope onto the strategy is part of the Estimator and cluster rewrites (TFM206, TFM105).

TFM201 fixed-size-partitioner

What it does: tf.compat.v1.fixed_size_partitioner(num_shards) becomes
tf.distribute.experimental.partitioners.FixedShardsPartitioner(num_shards).
Why: TensorFlow 2's strategies take partitioner objects; the TF1 function is gone from the TF2 API.
What may differ: nothing: the variable is split into the same shards.

Before:

    import tensorflow.compat.v1 as tf1

    partitioner = tf1.fixed_size_partitioner(4)

After:

    import tensorflow as tf

    partitioner = tf.distribute.experimental.partitioners.FixedShardsPartitioner(4)

Finding:

    3:15: TFM201 [exact] fixed_size_partitioner -> FixedShardsPartitioner

TFM202 variable-axis-size-partitioner

What it does: tf.compat.v1.variable_axis_size_partitioner becomes
tf.distribute.experimental.partitioners.MaxSizePartitioner, with bytes_per_string_element renamed
bytes_per_string.
Why: TensorFlow 2's strategies take partitioner objects; the TF1 function is gone from the TF2 API.
What may differ: nothing: the variable is split into the same shards.

Before:

    import tensorflow.compat.v1 as tf1

    partitioner = tf1.variable_axis_size_partitioner(64 << 20, bytes_per_string_element=32)

After:

    import tensorflow as tf

    partitioner = tf.distribute.experimental.partitioners.MaxSizePartitioner(64 << 20, bytes_per_string=32)

Finding:

    3:15: TFM202 [exact] variable_axis_size_partitioner -> MaxSizePartitioner

TFM203 min-max-variable-partitioner

What it does: tf.compat.v1.min_max_variable_partitioner becomes
tf.distribute.experimental.partitioners.MinSizePartitioner, its arguments renamed: max_partitions becomes
max_shards, min_slice_size becomes min_shard_bytes, bytes_per_string_element becomes bytes_per_string.
Why: TensorFlow 2's strategies take partitioner objects; the TF1 function is gone from the TF2 API.
What may differ: nothing: the variable is split into the same shards.

Before:

    import tensorflow.compat.v1 as tf1

    partitioner = tf1.min_max_variable_partitioner(max_partitions=4, min_slice_size=64 << 10)

After:

    import tensorflow as tf

    partitioner = tf.distribute.experimental.partitioners.MinSizePartitioner(min_shard_bytes=64 << 10, max_shards=4)

Finding:

    3:15: TFM203 [exact] min_max_variable_partitioner -> MinSizePartitioner

TFM204 partitioner-axis

What it does: reports a partitioner called with an axis other than 0 (or an axis that is not a number written
in the code) and leaves the call as it is.
Why: TensorFlow 2's partitioners split axis 0 only, so no TF2 partitioner computes the same shards.
What may differ: the code is unchanged; reshape or transpose the variable so it is split along axis 0, or keep
it unpartitioned.

Before:

    import tensorflow.compat.v1 as tf1

    partitioner = tf1.fixed_size_partitioner(4, axis=1)

After:

    import tensorflow.compat.v1 as tf1

    partitioner = tf1.fixed_size_partitioner(4, axis=1)

Finding:

    3:15: TFM204 [manual] fixed_size_partitioner with an axis other than 0: TF2 partitioners split axis 0 only;
    reshape or transpose the variable so it is sharded along axis 0, or keep it unpartitioned

TFM205 partitioner-arguments

What it does: reports a partitioner called with *args, **kwargs or argument names the TF1 function does not
have, and leaves the call as it is.
Why: which TF1 argument each value is cannot be read from the code, so the call cannot be translated safely.
What may differ: the code is unchanged; write the TF2 partitioner by hand.

Before:

    import tensorflow.compat.v1 as tf1

    partitioner = tf1.fixed_size_partitioner(*shards)

After:

    import tensorflow.compat.v1 as tf1

    partitioner = tf1.fixed_size_partitioner(*shards)

Finding:

    3:15: TFM205 [manual] fixed_size_partitioner: arguments cannot be mapped statically (*args, **kwargs or
    unknown names); rewrite it by hand as tf.distribute.experimental.partitioners.FixedShardsPartitioner
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.syntax import VisitsWhatMentions, bind_arguments, is_literal_int, keyword_arg, without_trailing_comma


@dataclass(frozen=True)
class Partitioner:
    rule: str
    tf2_class: str
    tf1_params: tuple[str, ...]
    tf2_params: tuple[str, ...]
    renames: dict[str, str]  # TF1 parameter -> TF2 parameter; `axis` has none


PARTITIONERS = {
    "fixed_size_partitioner": Partitioner(
        "TFM201",
        "FixedShardsPartitioner",
        tf1_params=("num_shards", "axis"),
        tf2_params=("num_shards",),
        renames={"num_shards": "num_shards"},
    ),
    "variable_axis_size_partitioner": Partitioner(
        "TFM202",
        "MaxSizePartitioner",
        tf1_params=("max_shard_bytes", "axis", "bytes_per_string_element", "max_shards"),
        tf2_params=("max_shard_bytes", "max_shards", "bytes_per_string"),
        renames={"max_shard_bytes": "max_shard_bytes", "max_shards": "max_shards", "bytes_per_string_element": "bytes_per_string"},
    ),
    "min_max_variable_partitioner": Partitioner(
        "TFM203",
        "MinSizePartitioner",
        tf1_params=("max_partitions", "axis", "min_slice_size", "bytes_per_string_element"),
        tf2_params=("min_shard_bytes", "max_shards", "bytes_per_string"),
        renames={"max_partitions": "max_shards", "min_slice_size": "min_shard_bytes", "bytes_per_string_element": "bytes_per_string"},
    ),
}


class Rewrite(VisitsWhatMentions, TFCodemod):
    MENTIONS = tuple(PARTITIONERS)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.tf_name(original.func)
        partitioner = PARTITIONERS.get(name.api) if name else None
        if partitioner is None:
            return updated
        bound = bind_arguments(updated, partitioner.tf1_params)
        if bound is None:
            self.report("TFM205", original, f"{name.api}: arguments cannot be mapped statically (*args, **kwargs or "
                        "unknown names); rewrite it by hand as "
                        f"tf.distribute.experimental.partitioners.{partitioner.tf2_class}")
            return updated
        if "axis" in bound and not is_literal_int(bound["axis"][1].value, 0):
            self.report("TFM204", original, f"{name.api} with an axis other than 0: TF2 partitioners split axis 0 only; "
                        "reshape or transpose the variable so it is sharded along axis 0, or keep it unpartitioned")
            return updated
        if not self.wants(partitioner.rule, original):
            return updated
        call = updated.with_changes(
            func=self.tf2(f"distribute.experimental.partitioners.{partitioner.tf2_class}"),
            args=without_trailing_comma(tf2_arguments(partitioner, bound), updated.args),
        )
        return self.replace(partitioner.rule, original, call, f"{name.api} -> {partitioner.tf2_class}")


def tf2_arguments(partitioner: Partitioner, bound: dict[str, tuple[int | None, cst.Arg]]) -> list[cst.Arg]:
    """The TF2 arguments in TF2 order: positional while the positions agree, keywords after."""
    by_tf2 = {partitioner.renames[tf1]: given for tf1, given in bound.items() if tf1 != "axis"}
    args, positional = [], True
    for index, param in enumerate(partitioner.tf2_params):
        if param not in by_tf2:
            positional = False
            continue
        position, arg = by_tf2[param]
        positional = positional and position == index
        if positional:
            args.append(arg)
        elif arg.keyword is not None:
            args.append(arg.with_changes(keyword=cst.Name(param)))
        else:
            args.append(keyword_arg(param, arg.value, like=arg))
    return args
