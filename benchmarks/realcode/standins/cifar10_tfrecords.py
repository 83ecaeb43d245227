"""Stand-in data for the SageMaker bring-your-own cifar10 samples: data/train.tfrecords and data/eval.tfrecords, each
a tf.Example per image: `image`, 32x32x3 random bytes (depth-major, as the CIFAR-10 binaries), and `label`, 0-9."""
import os

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
os.makedirs("data", exist_ok=True)
for name, rows in (("train", 64), ("eval", 16)):
    with tf.io.TFRecordWriter(os.path.join("data", f"{name}.tfrecords")) as writer:
        for _ in range(rows):
            image = rng.randint(0, 256, size=3 * 32 * 32).astype(np.uint8).tobytes()
            example = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.randint(10))]))}))
            writer.write(example.SerializeToString())
