"""TFM201-205: compat.v1 partitioners -> tf.distribute.experimental.partitioners.

The TF2 classes compute the same shards as the TF1 functions along axis 0 (the
TF2 ones call the TF1 code), and they accept the ``(shape, dtype)`` call that
``get_variable(partitioner=...)`` makes, so the rewritten code still runs under
TF1 too. Every TF1 default equals the TF2 default, so none needs spelling out.

======  ================================  ===================================================
rule    TF1                               TF2
======  ================================  ===================================================
TFM201  fixed_size_partitioner(           FixedShardsPartitioner(num_shards)
          num_shards, axis=0)
TFM202  variable_axis_size_partitioner(   MaxSizePartitioner(max_shard_bytes, max_shards=None,
          max_shard_bytes, axis=0,          bytes_per_string=16)
          bytes_per_string_element=16,
          max_shards=None)
TFM203  min_max_variable_partitioner(     MinSizePartitioner(min_shard_bytes=256 << 10,
          max_partitions=1, axis=0,         max_shards=1, bytes_per_string=16)
          min_slice_size=256 << 10,
          bytes_per_string_element=16)
======  ================================  ===================================================

Before::

    partitioner = tf1.min_max_variable_partitioner(max_partitions=4, min_slice_size=64 << 10)

After::

    partitioner = tf.distribute.experimental.partitioners.MinSizePartitioner(min_shard_bytes=64 << 10, max_shards=4)

TFM204 partitioner-axis (manual): TF2 partitioners split axis 0 only, so a call
with ``axis=1`` (or an axis that is not a literal) is left as it is.
TFM205 partitioner-arguments (manual): ``*args`` / ``**kwargs`` or unknown
arguments cannot be mapped statically; the call is left as it is.
(Moving a partitioner from ``get_variable`` / ``variable_scope`` onto the
strategy is part of the Estimator and cluster rewrites.)
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrites.base import TFCodemod
from rewrites.syntax import bind_arguments, is_literal_int, keyword_arg, without_trailing_comma


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


class Rewrite(TFCodemod):
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
        if not self.wants(partitioner.rule):
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
