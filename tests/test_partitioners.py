"""TFM201-205: compat.v1 partitioners -> tf.distribute.experimental.partitioners."""

import pytest
from helpers import check_noop, check_transformed

P = "tf.distribute.experimental.partitioners"


@pytest.mark.parametrize(
    "tf1, tf2, rule",
    [
        # fixed_size_partitioner(num_shards, axis=0)
        ("fixed_size_partitioner(4)", "FixedShardsPartitioner(4)", "TFM201"),
        ("fixed_size_partitioner(num_shards=4)", "FixedShardsPartitioner(num_shards=4)", "TFM201"),
        ("fixed_size_partitioner(4, 0)", "FixedShardsPartitioner(4)", "TFM201"),
        ("fixed_size_partitioner(4, axis=0)", "FixedShardsPartitioner(4)", "TFM201"),
        ("fixed_size_partitioner(axis=0, num_shards=n)", "FixedShardsPartitioner(num_shards=n)", "TFM201"),
        # variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None)
        ("variable_axis_size_partitioner(1 << 20)", "MaxSizePartitioner(1 << 20)", "TFM202"),
        ("variable_axis_size_partitioner(1 << 20, 0, 8, 3)",
         "MaxSizePartitioner(1 << 20, max_shards=3, bytes_per_string=8)", "TFM202"),
        ("variable_axis_size_partitioner(max_shard_bytes=64, max_shards=3, bytes_per_string_element=8)",
         "MaxSizePartitioner(max_shard_bytes=64, max_shards=3, bytes_per_string=8)", "TFM202"),
        ("variable_axis_size_partitioner(64, bytes_per_string_element=4)",
         "MaxSizePartitioner(64, bytes_per_string=4)", "TFM202"),
        # min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16)
        ("min_max_variable_partitioner()", "MinSizePartitioner()", "TFM203"),
        ("min_max_variable_partitioner(4)", "MinSizePartitioner(max_shards=4)", "TFM203"),
        ("min_max_variable_partitioner(4, 0, 64 << 10, 8)",
         "MinSizePartitioner(min_shard_bytes=64 << 10, max_shards=4, bytes_per_string=8)", "TFM203"),
        ("min_max_variable_partitioner(max_partitions=4, min_slice_size=64 << 10)",
         "MinSizePartitioner(min_shard_bytes=64 << 10, max_shards=4)", "TFM203"),
        ("min_max_variable_partitioner(bytes_per_string_element=2)", "MinSizePartitioner(bytes_per_string=2)", "TFM203"),
    ],
)
def test_argument_mapping(tf1, tf2, rule):
    check_transformed(
        f"import tensorflow as tf\np = tf.compat.v1.{tf1}\n",
        f"import tensorflow as tf\np = {P}.{tf2}\n",
        findings=(rule,),
    )


@pytest.mark.parametrize(
    "imports, call, new_import",
    [
        ("import tensorflow as tf\n", "tf.fixed_size_partitioner", "import tensorflow as tf\n"),
        ("import tensorflow as tf\n", "tf.compat.v1.fixed_size_partitioner", "import tensorflow as tf\n"),
        ("import tensorflow.compat.v1 as tf1\n", "tf1.fixed_size_partitioner", "import tensorflow as tf\n"),
        ("import tensorflow.compat.v1 as tf\n", "tf.fixed_size_partitioner", "import tensorflow as tf2\n"),
        ("from tensorflow.compat.v1 import fixed_size_partitioner\n", "fixed_size_partitioner", "import tensorflow as tf\n"),
        ("from tensorflow.compat.v1 import fixed_size_partitioner as fsp\n", "fsp", "import tensorflow as tf\n"),
        ("from tensorflow.python.ops import partitioned_variables\n",
         "partitioned_variables.fixed_size_partitioner", "import tensorflow as tf\n"),
        ("from tensorflow.python.ops.partitioned_variables import fixed_size_partitioner\n",
         "fixed_size_partitioner", "import tensorflow as tf\n"),
    ],
)
def test_every_import_spelling(imports, call, new_import):
    tf2 = new_import.split()[-1]
    check_transformed(
        f"{imports}\np = {call}(2)\n",
        f"{new_import}\np = {tf2}.distribute.experimental.partitioners.FixedShardsPartitioner(2)\n",
        findings=("TFM201",),
    )


def test_inside_get_variable_and_variable_scope():
    check_transformed(
        """\
        import tensorflow.compat.v1 as tf1

        def model_fn(features, labels, mode):
            with tf1.variable_scope("embed", partitioner=tf1.min_max_variable_partitioner(max_partitions=2)):
                table = tf1.get_variable(
                    "table",
                    shape=[5, 3],
                    partitioner=tf1.fixed_size_partitioner(
                        num_shards=2,
                        axis=0,
                    ),
                )
            return table
        """,
        """\
        import tensorflow.compat.v1 as tf1
        import tensorflow as tf

        def model_fn(features, labels, mode):
            with tf1.variable_scope("embed", partitioner=tf.distribute.experimental.partitioners.MinSizePartitioner(max_shards=2)):
                table = tf1.get_variable(
                    "table",
                    shape=[5, 3],
                    partitioner=tf.distribute.experimental.partitioners.FixedShardsPartitioner(
                        num_shards=2,
                    ),
                )
            return table
        """,
        findings=("TFM203", "TFM201"),
    )


@pytest.mark.parametrize(
    "call, rule",
    [
        ("tf1.fixed_size_partitioner(4, axis=1)", "TFM204"),
        ("tf1.fixed_size_partitioner(4, 1)", "TFM204"),
        ("tf1.fixed_size_partitioner(4, axis=AXIS)", "TFM204"),
        ("tf1.fixed_size_partitioner(4, axis=-1)", "TFM204"),
        ("tf1.variable_axis_size_partitioner(1024, axis=1)", "TFM204"),
        ("tf1.min_max_variable_partitioner(2, 1)", "TFM204"),
        ("tf1.fixed_size_partitioner(*args)", "TFM205"),
        ("tf1.min_max_variable_partitioner(**options)", "TFM205"),
        ("tf1.fixed_size_partitioner(4, shards=4)", "TFM205"),
        ("tf1.fixed_size_partitioner(4, 0, 7)", "TFM205"),
        ("tf1.fixed_size_partitioner(4, num_shards=4)", "TFM205"),
    ],
)
def test_left_alone_with_a_manual_finding(call, rule):
    check_noop(f"import tensorflow.compat.v1 as tf1\np = {call}\n", findings=(rule,))


def test_manual_finding_says_where_and_what_to_do():
    from helpers import run

    (finding,) = run("import tensorflow.compat.v1 as tf1\n\np = tf1.fixed_size_partitioner(4, axis=1)\n").findings
    assert (finding.line, finding.col, finding.safety) == (3, 5, "manual")
    assert "axis" in finding.message and "axis 0" in finding.message


@pytest.mark.parametrize(
    "source",
    [
        f"import tensorflow as tf\np = {P}.FixedShardsPartitioner(4)\n",
        "import tensorflow as tf\np = my_fixed_size_partitioner(4)\n",
        "import tensorflow as tf\nfrom mylib import fixed_size_partitioner\np = fixed_size_partitioner(4)\n",
        "import tensorflow as tf\np = tf.compat.v1.fixed_size_partitioner\n",  # a reference, not a call
    ],
)
def test_noop(source):
    check_noop(source)


def test_disabled_rule_leaves_the_call():
    check_noop("import tensorflow as tf\np = tf.compat.v1.fixed_size_partitioner(4)\n", enabled={"TFM202", "TFM203"})


def test_import_goes_only_after_its_last_use_is_replaced():
    check_transformed(
        """\
        from tensorflow.compat.v1 import fixed_size_partitioner
        a = fixed_size_partitioner(2)
        b = fixed_size_partitioner(3)
        """,
        f"""\
        import tensorflow as tf

        a = {P}.FixedShardsPartitioner(2)
        b = {P}.FixedShardsPartitioner(3)
        """,
    )


def test_import_stays_while_a_use_is_left_for_a_person():
    check_transformed(
        """\
        from tensorflow.compat.v1 import fixed_size_partitioner
        a = fixed_size_partitioner(2)
        b = fixed_size_partitioner(3, axis=1)
        """,
        f"""\
        from tensorflow.compat.v1 import fixed_size_partitioner
        import tensorflow as tf

        a = {P}.FixedShardsPartitioner(2)
        b = fixed_size_partitioner(3, axis=1)
        """,
        findings=("TFM201", "TFM204"),
    )


def test_a_partitioner_called_at_once_is_one_call_not_two():
    """`partitioner(...)(shape, dtype)`, as TensorFlow's own sharded_variable.py writes it: the outer call is the
    partitioner's result called, not a second partitioner (libcst names it after its callee)."""
    check_transformed(
        "import tensorflow as tf\nslices = tf.compat.v1.fixed_size_partitioner(2)(shape, dtype)\n",
        f"import tensorflow as tf\nslices = {P}.FixedShardsPartitioner(2)(shape, dtype)\n",
        findings=("TFM201",),
    )
    check_noop("import tensorflow.compat.v1 as tf1\np = tf1.min_max_variable_partitioner(2, axis=a)(shape, dtype)\n",
               findings=("TFM204",))
