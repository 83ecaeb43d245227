"""Stand-in data for the ASL YouTube-8M video-level trainers: train.tfrecord and eval.tfrecord in the current folder,
a tf.Example per video as the YouTube-8M video-level files hold them: `video_id`, `labels` (a few of the 4716
classes), `mean_rgb` (1024 floats) and `mean_audio` (128 floats)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
for name, count in (("train.tfrecord", 48), ("eval.tfrecord", 16)):
    with tf.io.TFRecordWriter(name) as writer:
        for index in range(count):
            feature = {
                "video_id": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"video%d" % index])),
                "labels": tf.train.Feature(int64_list=tf.train.Int64List(
                    value=sorted(set(rng.randint(8, size=rng.randint(1, 4)).tolist())))),
                "mean_rgb": tf.train.Feature(float_list=tf.train.FloatList(value=rng.normal(size=1024).tolist())),
                "mean_audio": tf.train.Feature(float_list=tf.train.FloatList(value=rng.normal(size=128).tolist()))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
