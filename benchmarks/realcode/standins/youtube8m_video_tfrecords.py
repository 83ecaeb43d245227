"""Stand-in data for the ASL YouTube-8M trainers: train.tfrecord and eval.tfrecord in the current folder.

- As it is (the video-level trainers, video and video_using_datasets): a tf.Example per video as the YouTube-8M
  video-level files hold them: `video_id`, `labels` (a few of the 4716 classes), `mean_rgb` (1024 floats) and
  `mean_audio` (128 floats).
- With `--frame` (the frame-level trainers, frame and frame_using_datasets), in their place: a tf.SequenceExample
  per video as the frame-level files hold them: context `video_id` and `labels`, and per frame (5-30 frames) `rgb`
  (1024 bytes, quantized features) and `audio` (128 bytes).
"""
import sys

import numpy as np
import tensorflow as tf


def bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


rng = np.random.RandomState(0)
frame = "--frame" in sys.argv[1:]
for name, count in (("train.tfrecord", 48), ("eval.tfrecord", 16)):
    with tf.io.TFRecordWriter(name) as writer:
        for index in range(count):
            labels = tf.train.Feature(int64_list=tf.train.Int64List(
                value=sorted(set(rng.randint(8, size=rng.randint(1, 4)).tolist()))))
            if frame:
                frames = rng.randint(5, 31)
                context = tf.train.Features(feature={"video_id": bytes_feature(b"video%d" % index), "labels": labels})
                lists = {key: tf.train.FeatureList(feature=[
                    bytes_feature(rng.randint(256, size=size).astype(np.uint8).tobytes()) for _ in range(frames)])
                    for key, size in (("rgb", 1024), ("audio", 128))}
                record = tf.train.SequenceExample(context=context, feature_lists=tf.train.FeatureLists(feature_list=lists))
            else:
                feature = {
                    "video_id": bytes_feature(b"video%d" % index),
                    "labels": labels,
                    "mean_rgb": tf.train.Feature(float_list=tf.train.FloatList(value=rng.normal(size=1024).tolist())),
                    "mean_audio": tf.train.Feature(float_list=tf.train.FloatList(value=rng.normal(size=128).tolist()))}
                record = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(record.SerializeToString())
