"""TFM006: tf.contrib.lookup's table functions -> the tf.lookup tables they made, proven against TF1's own
functions (tensorflow/python/ops/lookup_ops.py, which TF 2.15 still ships) on the same keys."""

from __future__ import annotations

import re

import pytest

from helpers import run

CALLS = {
    "ids from a file": 'tf.contrib.lookup.index_table_from_file("vocab.txt")',
    "ids from a file, OOV buckets": 'tf.contrib.lookup.index_table_from_file(vocabulary_file="vocab.txt", '
                                    'num_oov_buckets=3)',
    "ids from a file, its default": 'tf.contrib.lookup.index_table_from_file("vocab.txt", default_value=7, '
                                    'vocab_size=2)',
    "ids from a file's column": 'tf.contrib.lookup.index_table_from_file("pairs.txt", key_column_index=1, '
                                'value_column_index=0, delimiter=" ")',
    "ids from a tensor": "tf.contrib.lookup.index_table_from_tensor(mapping=tf.constant(VOCABULARY, "
                         "dtype=tf.string))",
    "ids from a list, OOV buckets": "tf.contrib.lookup.index_table_from_tensor(VOCABULARY, 2, name='words')",
    "the older name": "tf.contrib.lookup.string_to_index_table_from_tensor(mapping=VOCABULARY, num_oov_buckets=1)",
    "strings from a file": 'tf.contrib.lookup.index_to_string_table_from_file("vocab.txt")',
    "strings from a tensor": 'tf.contrib.lookup.index_to_string_table_from_tensor(VOCABULARY, default_value="?")',
}
# TF1's function of each call (contrib's took the vocabulary tensor as `mapping`, lookup_ops' as the first argument).
TF1 = {"index_table_from_tensor": "lookup_ops.index_table_from_tensor",
       "string_to_index_table_from_tensor": "lookup_ops.index_table_from_tensor"}

PROGRAM = 'import tensorflow.compat.v1 as tf\n\nVOCABULARY = ["emerson", "lake", "palmer"]\ntable = {call}\n'


def rewritten(call: str) -> tuple[str, list[str]]:
    result = run(PROGRAM.format(call=call))
    return result.source, [f"{f.rule} {f.message}" for f in result.findings]


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS)
def test_each_table_function_becomes_tf_lookups_table(call):
    source, findings = rewritten(call)
    assert "contrib" not in source and "tf.lookup.Static" in source
    assert findings == [f for f in findings if f.startswith("TFM006 ")] and len(findings) == 1


@pytest.mark.parametrize("call, table", [
    ('tf.contrib.lookup.index_table_from_file("v.txt", num_oov_buckets=0)', "StaticHashTable"),
    ('tf.contrib.lookup.index_table_from_file("v.txt", num_oov_buckets=1)', "StaticVocabularyTable"),
])
def test_buckets_written_out_choose_the_table_tf_lookup_has_for_them(call, table):
    source, findings = rewritten(call)
    assert f"tf.lookup.{table}(" in source and findings[0].endswith(f"`tf.lookup.{table}`: the same table")


def test_a_table_is_laid_out_an_argument_a_line_its_initializer_on_one_where_it_fits():
    source, _ = rewritten('tf.contrib.lookup.index_table_from_file("vocabulary_of_the_words.txt", num_oov_buckets=1)')
    assert source.splitlines()[3:] == [
        "table = tf.lookup.StaticVocabularyTable(",
        "    tf.lookup.TextFileInitializer(",
        '        "vocabulary_of_the_words.txt",',
        "        tf.string,",
        "        tf.lookup.TextFileIndex.WHOLE_LINE,",
        "        tf.int64,",
        "        tf.lookup.TextFileIndex.LINE_NUMBER),",
        "    num_oov_buckets=1)"]
    short, _ = rewritten("tf.contrib.lookup.index_to_string_table_from_tensor(V)")
    assert short.splitlines()[3:] == [
        "table = tf.lookup.StaticHashTable(",
        "    tf.lookup.KeyValueTensorInitializer(tf.range(tf.size(V), dtype=tf.int64), V),",
        '    default_value="UNK")']


@pytest.mark.parametrize("call, why", [
    ('tf.contrib.lookup.index_table_from_file("v.txt", num_oov_buckets=buckets)', "a bucket count read at run time "
                                                                                 "may be 0, a table of another kind"),
    ('tf.contrib.lookup.index_table_from_file("v.txt", num_oov_buckets=1, default_value=0)',
     "TF1 hashed keys whose id was the default"),
    ('tf.contrib.lookup.index_table_from_file("v.txt", key_dtype=tf.int64)', "integer keys"),
    ('tf.contrib.lookup.index_table_from_tensor(VOCABULARY, hasher_spec=tf.contrib.lookup.StrongHashSpec((1, 2)))',
     "another hash"),
    ("tf.contrib.lookup.index_table_from_tensor(read_vocabulary())", "the vocabulary would be computed twice"),
    ("tf.contrib.lookup.index_table_from_tensor(tf.constant(read_vocabulary()))", "the same, inside tf.constant"),
    ("tf.contrib.lookup.index_table_from_tensor(*arguments)", "arguments that cannot be read"),
])
def test_a_table_that_would_differ_or_cannot_be_read_stays_and_tfm003_says_what_replaces_it(call, why):
    source, findings = rewritten(call)
    assert source == PROGRAM.format(call=call), why
    assert len(findings) == 1 and findings[0].startswith("TFM003 tensorflow.contrib.lookup is gone in TF 2") \
        and "tf.lookup's tables (StaticHashTable, StaticVocabularyTable) replace it" in findings[0]


def test_ignore_tfm006_leaves_the_call():
    call = 'tf.contrib.lookup.index_table_from_file("v.txt")'
    result = run(PROGRAM.format(call=call), {"TFM003", "TFM005"})
    assert result.source == PROGRAM.format(call=call) and [f.rule for f in result.findings] == ["TFM003"]


@pytest.mark.tensorflow
@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS)
def test_the_table_gives_what_tf1s_function_gave_for_every_key(call, tmp_path, monkeypatch):
    """In a TF1 graph (initialized by tables_initializer, as TF1 programs did) and eagerly in TF 2: the same ids
    (out-of-vocabulary keys in the same buckets) or strings as TF1's own function, on known and unknown keys."""
    import tensorflow as tf
    from tensorflow.python.ops import lookup_ops

    monkeypatch.chdir(tmp_path)
    (tmp_path / "vocab.txt").write_text("emerson\nlake\npalmer\n")
    (tmp_path / "pairs.txt").write_text("10 palmer\n11 lake\n12 emerson\n")
    vocabulary = ["emerson", "lake", "palmer"]
    names = {"VOCABULARY": vocabulary, "lookup_ops": lookup_ops}
    source, _ = rewritten(call)
    new = source.split("table = ", 1)[1]
    function = re.match(r"tf\.contrib\.lookup\.(\w+)\(", call).group(1)
    old = re.sub(r"^tf\.contrib\.lookup\.\w+\(", TF1.get(function, f"lookup_ops.{function}") + "(", call)
    old = old.replace("mapping=", "").replace("tf.contrib.lookup.", "lookup_ops.")
    keys = [0, 1, 2, 5, 10, 12] if "to_string" in function else ["lake", "and", "palmer", "emerson", "carl", "", "greg"]

    def looked_up(code: str, module):
        return eval(code, {**names, "tf": module}).lookup(tf.constant(keys, tf.int64 if "to_string" in function else
                                                                      tf.string))

    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        tf1, tf2 = looked_up(old, tf.compat.v1), looked_up(new, tf.compat.v1)
        session.run(tf.compat.v1.tables_initializer())
        in_graph = session.run([tf1, tf2])
    eager_tf2 = looked_up(new, tf).numpy()
    assert in_graph[0].tolist() == in_graph[1].tolist() == eager_tf2.tolist()
    assert len(set(in_graph[0].tolist())) > 2  # ids (or strings) that tell keys apart
