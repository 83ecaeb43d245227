"""TFM008: queue-runner input pipelines -> the tf.data pipeline reading the same records in the same order."""

from __future__ import annotations

import importlib.util

import pytest
from helpers import run

IMPORTS = "import tensorflow.compat.v1 as tf\n\n\n"

HELPER = IMPORTS + '''def read_example(files):
    reader = tf.TFRecordReader()
    _, serialized = reader.read(files)
    example = tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([2], tf.float32),
                                                   "y": tf.FixedLenFeature([], tf.int64)})
    return example["x"], example["y"]


def input_fn(paths, batch_size, epochs=None):
    files = tf.train.string_input_producer(paths, num_epochs=epochs, shuffle=False)
    x, y = read_example(files)
    xs, ys = tf.train.batch([x, y], batch_size=batch_size, capacity=100)
    return {"x": xs}, ys
'''

INLINE = IMPORTS + '''def input_fn(paths, batch_size, epochs=None, header=1):
  files = tf.train.string_input_producer(paths, num_epochs=epochs, shuffle=False)
  reader = tf.TextLineReader(skip_header_lines=header)
  _, line = reader.read(files)
  columns = tf.decode_csv(line, record_defaults=[[0.0], [0.0], [0]])
  features = dict(zip(["a", "b", "label"], columns))
  label = features.pop("label")
  for key in ["b"]:
    features[key] = features[key] * 2.0
  return tf.train.batch([features["a"], features["b"], label], batch_size, allow_smaller_final_batch=True)
'''

FIXED = IMPORTS + '''def input_fn(path, batch_size, epochs=None):
    files = tf.train.string_input_producer([path], num_epochs=epochs)
    _, record = tf.FixedLengthRecordReader(record_bytes=3, header_bytes=2).read(files)
    values = tf.reshape(tf.cast(tf.decode_raw(record, tf.uint8), tf.float32), [3])
    batch = tf.train.batch([values[1:], values[0]], batch_size)
    return batch[0], batch[1]
'''

# read_up_to's chunks of CSV lines, batched again only when shuffled (cloudml-samples' census input_fn's shape).
CHUNKS = IMPORTS + '''def input_fn(paths, batch_size, epochs=None, shuffle=True, header=1):
    files = tf.train.string_input_producer(paths, num_epochs=epochs, shuffle=shuffle)
    reader = tf.TextLineReader(skip_header_lines=header)
    _, rows = reader.read_up_to(files, num_records=batch_size)
    columns = tf.decode_csv(tf.expand_dims(rows, -1), record_defaults=[[0.0], [0.0], [0]])
    features = dict(zip(["a", "b", "label"], columns))
    if shuffle:
        features = tf.train.shuffle_batch(features, batch_size, capacity=batch_size * 10,
                                          min_after_dequeue=batch_size * 2 + 1, num_threads=4, enqueue_many=True)
    label = features.pop("label")
    return features, label
'''

# The chunks of lines batched again only when training, the example made of the batch (training-data-analyst's
# babyweight input_fn).
BATCHED_WHEN_TRAINING = IMPORTS + '''def input_fn(paths, batch_size, epochs=None, shuffle=True):
    files = tf.train.string_input_producer(paths, num_epochs=epochs, shuffle=False)
    _, rows = tf.TextLineReader(skip_header_lines=1).read_up_to(files, num_records=batch_size)
    if shuffle:
        rows = tf.train.shuffle_batch([rows], batch_size, capacity=10 * batch_size, min_after_dequeue=batch_size,
                                      enqueue_many=True, allow_smaller_final_batch=False)
    columns = tf.decode_csv(tf.expand_dims(rows, -1), record_defaults=[[0.0], [0.0], [0]])
    features = dict(zip(["a", "b", "label"], columns))
    return features, features.pop("label")
'''

# GZIP records read up to a batch at a time, batched as shuffled or not (cloudml-samples' util.read_examples' shape).
GZIP_CHUNKS = IMPORTS + '''def read_examples(paths, batch_size, shuffle, epochs=None):
    files = tf.train.string_input_producer(paths, epochs, shuffle)
    options = tf.python_io.TFRecordOptions(compression_type=tf.python_io.TFRecordCompressionType.GZIP)
    _, records = tf.TFRecordReader(options=options).read_up_to(files, batch_size)
    if shuffle:
        capacity = 10 + 3 * batch_size
        return tf.train.shuffle_batch([records], batch_size, capacity, 10, enqueue_many=True, num_threads=2)
    else:
        capacity = 3 * batch_size
        return tf.train.batch([records], batch_size, capacity=capacity, enqueue_many=True,
                              allow_smaller_final_batch=True)


def input_fn(paths, batch_size, shuffle=False, epochs=None):
    examples = read_examples(paths, batch_size, shuffle, epochs)
    parsed = tf.parse_example(examples, {"x": tf.FixedLenFeature([2], tf.float32),
                                         "y": tf.FixedLenFeature([], tf.int64)})
    return parsed["x"], parsed["y"]
'''


def test_a_helper_handed_the_queue_takes_the_record_and_the_dataset_maps_it():
    result = run(HELPER)
    assert "def read_example(serialized):\n    example = tf.parse_single_example(" in result.source
    assert "files = tf.data.Dataset.from_tensor_slices(paths)\n" in result.source
    assert ("    xs, ys = tf.compat.v1.data.make_one_shot_iterator(\n        tf.data.TFRecordDataset(files)\n"
            "        .repeat(epochs)\n        .map(read_example)\n"
            "        .batch(batch_size, drop_remainder=True)).get_next()\n"
            '    return {"x": xs}, ys\n') in result.source
    assert "string_input_producer" not in result.source and "TFRecordReader" not in result.source
    assert [(f.rule, f.message) for f in result.findings] == [
        ("TFM008", "queue-runner input pipeline -> tf.data: the same records in the same order")]


def test_code_making_an_example_in_the_function_moves_into_one_the_dataset_maps():
    result = run(INLINE)
    assert '''  files = tf.data.Dataset.from_tensor_slices(paths)
  def make_example(line):
    columns = tf.decode_csv(line, record_defaults=[[0.0], [0.0], [0]])
    features = dict(zip(["a", "b", "label"], columns))
    label = features.pop("label")
    for key in ["b"]:
      features[key] = features[key] * 2.0
    return features["a"], features["b"], label
  return tf.compat.v1.data.make_one_shot_iterator(
    files.flat_map(lambda file_name: tf.data.TextLineDataset(file_name).skip(header))
    .repeat(epochs)
    .map(make_example)
    .batch(batch_size, drop_remainder=False)).get_next()
''' in result.source


def test_a_pipeline_in_a_with_block_becomes_tf_data_there_and_a_rebound_key_is_no_read_of_it():
    """A between-graph graph builds its input under `with tf.device(...)`; `_, step = ...` after it binds `_`
    again and reads no key of the reader."""
    source = INLINE.replace("def input_fn(paths, batch_size, epochs=None, header=1):\n",
                            "def input_fn(paths, batch_size, epochs=None, header=1):\n with tf.device(\"/cpu:0\"):\n"
                            ).replace("\n  ", "\n   ") + " _, step = 0, 1\n"
    result = run(source)
    assert ("   files = tf.data.Dataset.from_tensor_slices(paths)\n   def make_example(line):\n"
            "    columns = tf.decode_csv(line, record_defaults=[[0.0], [0.0], [0]])\n") in result.source
    assert [f.rule for f in result.findings] == ["TFM008"]


def test_shuffled_pipelines_say_their_order_is_not_tf1s():
    source = INLINE.replace(", shuffle=False", ", seed=7").replace(
        'tf.train.batch([features["a"], features["b"], label], batch_size, allow_smaller_final_batch=True)',
        'tf.train.shuffle_batch([features["a"], label], batch_size, capacity=100, min_after_dequeue=50, seed=3)')
    result = run(source)
    assert "  files = tf.data.Dataset.from_tensor_slices(paths)\n  files = files.shuffle(files.cardinality(), seed=7)\n" \
        in result.source
    assert "    .shuffle(50, seed=3)\n    .batch(batch_size, drop_remainder=True)).get_next()" in result.source
    [finding] = result.findings
    assert "file names are shuffled each epoch in another random order" in finding.message
    assert "shuffle_batch -> shuffle(min_after_dequeue), whose random order is not TF1's" in finding.message


def test_read_up_to_chunks_are_read_per_file_and_batched_again_only_where_tf1_batched_them():
    result = run(CHUNKS)
    assert ("    files = tf.data.Dataset.from_tensor_slices(paths)\n    if shuffle:\n"
            "        files = files.shuffle(files.cardinality())\n"
            "    def read_file(file_name):\n"
            "        return tf.data.TextLineDataset(file_name).skip(header).batch(batch_size)\n"
            "    def make_example(rows):\n") in result.source
    assert ("        return features\n    dataset = (\n        files.flat_map(read_file)\n        .repeat(epochs)\n"
            "        .map(make_example))\n    if shuffle:\n"
            "        dataset = dataset.unbatch().shuffle(batch_size * 2 + 1).batch(batch_size, drop_remainder=True)\n"
            "    features = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()\n"
            '    label = features.pop("label")\n') in result.source
    assert "read_up_to" not in result.source and "shuffle_batch" not in result.source
    [finding] = [f for f in result.findings if f.rule == "TFM008"]
    assert "shuffle_batch -> shuffle(min_after_dequeue)" in finding.message
    assert "TF1's threads batched the examples in whichever order they finished" in finding.message


def test_a_reader_s_gzip_options_and_a_batching_chosen_by_an_if_are_read():
    result = run(GZIP_CHUNKS)
    assert ("    def read_file(file_name):\n"
            '        return tf.data.TFRecordDataset(file_name, compression_type="GZIP").batch(batch_size)\n'
            "    dataset = (\n        files.flat_map(read_file)\n        .repeat(epochs))\n") in result.source
    assert ("    if shuffle:\n        dataset = dataset.unbatch().shuffle(10).batch(batch_size, drop_remainder=True)\n"
            "    else:\n        dataset = dataset.unbatch().batch(batch_size, drop_remainder=False)\n"
            "    return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()\n") in result.source
    assert "TFRecordOptions" not in result.source and "options" not in result.source
    assert "capacity" not in result.source  # what only TF1's queue read goes with it


# The key batched with the records, dropped by the caller (cloudml-samples' util.read_examples as its trainers call it).
KEYED_GZIP_CHUNKS = GZIP_CHUNKS.replace("_, records = tf.TFRecordReader", "key, records = tf.TFRecordReader").replace(
    "([records]", "([key, records]").replace("examples = read_examples(", "_, examples = read_examples(")
KEYED_CHUNKS = CHUNKS.replace("_, rows = ", "line, rows = ").replace(
    "columns))", "columns), key=line)")


def test_a_key_read_is_tf1s_key_of_the_record_or_line():
    result = run(KEYED_GZIP_CHUNKS)
    assert ("    def read_file(file_name):\n"
            '        records = tf.data.TFRecordDataset(file_name, compression_type="GZIP")\n'
            "        # TF1's key: the file's name and the record's offset (each record framed by 16 bytes)\n"
            "        offsets = records.scan(tf.constant(0, tf.int64), lambda end, record: (\n"
            "            end + 16 + tf.cast(tf.strings.length(record), tf.int64), end))\n"
            '        keys = offsets.map(lambda offset: file_name + ":" + tf.strings.as_string(offset))\n'
            "        return tf.data.Dataset.zip((keys, records)).batch(batch_size)\n"
            "    dataset = (\n        files.flat_map(read_file)\n        .repeat(epochs))\n") in result.source
    result = run(KEYED_CHUNKS)
    assert ("        # TF1's key: the file's name and the line's number\n"
            "        lines = tf.data.TextLineDataset(file_name).enumerate(1).skip(header)\n"
            '        keyed = lines.map(lambda number, line: (file_name + ":" + tf.strings.as_string(number), line))\n'
            "        return keyed.batch(batch_size)\n"
            "    def make_example(line, rows):\n") in result.source
    source = KEYED_CHUNKS.replace("header=1", "number=1").replace("=header", "=number")
    assert run(source).source == source  # a name the function reading a file binds

def test_one_tensor_batched_of_a_list_is_that_tensor_as_tf1_gave_it():
    result = run(INLINE.replace('[features["a"], features["b"], label]', '[features["a"]]'))
    assert '    return features["a"]\n' in result.source and ",)" not in result.source
    result = run(BATCHED_WHEN_TRAINING)
    assert ("    dataset = (\n        files.flat_map(read_file)\n        .repeat(epochs))\n    if shuffle:\n"
            "        dataset = dataset.unbatch().shuffle(batch_size).batch(batch_size, drop_remainder=True)\n"
            "    rows = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()\n") in result.source


@pytest.mark.parametrize("replaced", [
    {"GZIP)\n": "GZIP, compression_level=9)\n"},
    {"enqueue_many=True,\n": "\n"},
    {"        return tf.train.batch([records]": "        return tf.train.batch([records, records]"},
    {"return tf.train.batch([records], batch_size,": "return tf.train.batch([records], capacity,"},
], ids=["other options", "chunks batched as examples", "other tensors in a branch", "a branch's name read"])
def test_chunked_pipelines_it_cannot_follow_stay_as_they_are(replaced):
    source = GZIP_CHUNKS
    for before, after in replaced.items():
        assert before in source
        source = source.replace(before, after)
    result = run(source)
    assert result.source == source
    assert not [f for f in result.findings if f.rule == "TFM008"]

RETURNED = ('  return tf.train.batch([features["a"], features["b"], label], batch_size, '
            'allow_smaller_final_batch=True)\n')


def test_a_keyword_read_an_unread_key_and_a_shuffle_decided_at_run_time_are_followed():
    source = INLINE.replace("shuffle=False", "shuffle=shuffle").replace(
        "def input_fn(paths, batch_size, epochs=None, header=1):",
        "def input_fn(paths, batch_size, epochs=None, header=1, shuffle=True):").replace(
        "_, line = reader.read(files)", "offset, line = reader.read(queue=files)").replace(
        "allow_smaller_final_batch=True)", "enqueue_many=False, allow_smaller_final_batch=True)")
    result = run(source)
    assert ("  files = tf.data.Dataset.from_tensor_slices(paths)\n  if shuffle:\n"
            "    files = files.shuffle(files.cardinality())\n"
            "  def make_example(line):\n") in result.source
    assert "offset" not in result.source and ".batch(batch_size, drop_remainder=False)" in result.source


@pytest.mark.parametrize("before, after", [
    ("_, line = reader.read(files)", "_, line = reader.read_up_to(files, 10)"),
    ("batch_size, allow", "batch_size, enqueue_many=True, allow"),
    ("batch_size, allow", "batch_size, dynamic_pad=True, allow"),
    ("_, line = reader.read(files)", "key, line = reader.read(files)\n  key = tf.identity(key)"),
    (RETURNED, RETURNED.replace("return", "batch =") + "  return batch, columns\n"),
    (RETURNED, RETURNED.replace("return", "batch =") + "  return batch, files\n"),
    ("tf.train.string_input_producer(paths,", "tf.train.string_input_producer(tf.train.match_filenames_once(paths),"),
    ("shuffle=False", "shuffle=args.shuffle"),
    ("reader = tf.TextLineReader(skip_header_lines=header)", "reader = make_reader()"),
    ("  reader = tf.TextLineReader", "  if header:\n    return None\n  reader = tf.TextLineReader"),
    # Images and labels in files of their own, each read by a reader of its own (TensorFlowOnSpark's CSV MNIST).
    ("  reader = tf.TextLineReader(skip_header_lines=header)\n",
     "  labels = tf.train.string_input_producer(label_paths, num_epochs=epochs, shuffle=False)\n"
     "  reader = tf.TextLineReader(skip_header_lines=header)\n"
     "  _, label_line = tf.TextLineReader().read(labels)\n"),
], ids=["read_up_to", "enqueue_many", "dynamic_pad", "key rebound", "example read after", "queue read after",
        "match_filenames_once", "shuffle at run time", "unknown reader", "a return inside", "two queues"])
def test_pipelines_it_cannot_follow_stay_as_they_are(before, after):
    assert INLINE.count(before) == 1
    source = INLINE.replace(before, after)
    result = run(source)
    assert result.source == source
    assert not [f for f in result.findings if f.rule == "TFM008"]


# -- the same batches, run -----------------------------------------------------------------------------------------

def _module(tmp_path, name: str, code: str):
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _batches(make, *args):
    """Every batch the pipeline ``make(*args)`` yields (queue runners started, for TF1's), to its end."""
    import tensorflow as tf

    found = []
    with tf.Graph().as_default():
        tensors = make(*args)
        with tf.compat.v1.Session() as session:
            session.run([tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer()])
            coordinator = tf.compat.v1.train.Coordinator()
            threads = tf.compat.v1.train.start_queue_runners(session, coordinator)
            try:
                while len(found) < 50:
                    found.append(session.run(tensors))
            except tf.errors.OutOfRangeError:
                pass
            coordinator.request_stop()
            coordinator.join(threads)
    return found


def _same(tf1, tf2):
    import numpy as np
    import tensorflow as tf

    assert len(tf1) == len(tf2) and len(tf1) > 1
    for old, new in zip(tf1, tf2):
        flat_old, flat_new = tf.nest.flatten(old), tf.nest.flatten(new)
        assert len(flat_old) == len(flat_new)
        for a, b in zip(flat_old, flat_new):
            np.testing.assert_array_equal(a, b)


@pytest.mark.tensorflow
def test_the_migrated_pipelines_yield_tf1s_batches_to_the_same_end(tmp_path):
    """Each pipeline and its migration, run to the end of their epochs: the same batches, the same count (a short
    last batch dropped, or kept with allow_smaller_final_batch), over two files and two epochs."""
    import numpy as np
    import tensorflow as tf

    records = []
    for index in range(2):
        path = str(tmp_path / f"part{index}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for row in range(7):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[index, row + 0.5])),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[10 * index + row]))}))
                writer.write(example.SerializeToString())
        records.append(path)
    lines = []
    for index in range(2):
        path = tmp_path / f"part{index}.csv"
        path.write_text("a,b,label\n" + "".join(f"{index}.5,{row},{row % 3}\n" for row in range(5)))
        lines.append(str(path))
    binary = tmp_path / "fixed.bin"
    binary.write_bytes(b"HD" + bytes(np.arange(3 * 8, dtype=np.uint8)))
    cases = [(HELPER, (records, 3, 2)), (INLINE, (lines, 4, 2)), (FIXED, (str(binary), 3, 2))]
    for index, (code, args) in enumerate(cases):
        migrated = run(code)
        assert "string_input_producer" not in migrated.source
        old = _module(tmp_path, f"old{index}", code)
        new = _module(tmp_path, f"new{index}", migrated.source)
        _same(_batches(old.input_fn, *args), _batches(new.input_fn, *args))
    # Files shuffled each epoch, batches of one: in another order, the same examples, each epoch whole.
    code = HELPER.replace(", shuffle=False", "")
    migrated = run(code)
    assert ".shuffle(files.cardinality())" in migrated.source
    old, new = _module(tmp_path, "old_shuffled", code), _module(tmp_path, "new_shuffled", migrated.source)
    tf1, tf2 = (sorted(int(ys[0]) for _, ys in _batches(side.input_fn, records, 1, 2)) for side in (old, new))
    assert tf1 == tf2 == sorted([*range(7), *range(10, 17)] * 2)


@pytest.mark.tensorflow
def test_read_up_to_pipelines_yield_tf1s_batches(tmp_path):
    """read_up_to's chunks of each file (a file's last chunk short), batched again with enqueue_many or not: the
    same batches as TF1's to the end of two epochs; shuffled, the same examples in each."""
    import tensorflow as tf

    gzipped = []
    for index in range(2):
        path = str(tmp_path / f"part{index}.tfrecord.gz")
        with tf.io.TFRecordWriter(path, options="GZIP") as writer:
            for row in range(7):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[index, row + 0.5])),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[10 * index + row]))}))
                writer.write(example.SerializeToString())
        gzipped.append(path)
    lines = []
    for index in range(2):
        path = tmp_path / f"part{index}.csv"
        rows = range(5 + 2 * index)
        path.write_text("a,b,label\n" + "".join(f"{index}.5,{row},{10 * index + row}\n" for row in rows))
        lines.append(str(path))
    cases = [(CHUNKS, (lines, 4, 2, False), lambda batch: batch[1]),
             (GZIP_CHUNKS, (gzipped, 3, False, 2), lambda batch: batch[1]),
             (KEYED_CHUNKS, (lines, 4, 2, False), lambda batch: batch[1]),
             (BATCHED_WHEN_TRAINING, (lines, 4, 2, False), lambda batch: batch[1]),
             (KEYED_GZIP_CHUNKS.replace("def input_fn(", "def parsed_fn(").replace(
                 "def read_examples(", "def input_fn("), (gzipped, 3, False, 2), lambda batch: batch[0])]
    for index, (code, args, labels) in enumerate(cases):
        migrated = run(code)
        assert "read_up_to" not in migrated.source
        old = _module(tmp_path, f"old_chunks{index}", code)
        new = _module(tmp_path, f"new_chunks{index}", migrated.source)
        tf1, tf2 = _batches(old.input_fn, *args), _batches(new.input_fn, *args)
        _same(tf1, tf2)
        assert any(len(labels(batch)) != args[1] for batch in tf1)  # a short chunk or batch among them
        shuffled = (lines, 4, 2, True) if "TextLine" in code else (gzipped, 2, True, 2)  # no example dropped
        tf1, tf2 = (_batches(side.input_fn, *shuffled) for side in (old, new))
        assert len(tf1) == len(tf2) and {len(labels(batch)) for batch in tf1 + tf2} == {shuffled[1]}
        assert sorted(y for batch in tf1 for y in labels(batch).ravel().tolist()) == \
            sorted(y for batch in tf2 for y in labels(batch).ravel().tolist())
