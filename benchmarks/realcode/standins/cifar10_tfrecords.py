"""Stand-in data for the SageMaker bring-your-own cifar10 programs: train.tfrecords and eval.tfrecords in the current
folder (the program reads `<data-dir>/train.tfrecords` and `eval.tfrecords`), a tf.Example per image: `image`, the
3072 bytes of a 32x32x3 image, channels first, as the CIFAR-10 converter wrote them, and `label`, 0-9."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
for name, count in (("train.tfrecords", 64), ("eval.tfrecords", 16)):
    with tf.io.TFRecordWriter(name) as writer:
        for _ in range(count):
            image = rng.randint(256, size=3 * 32 * 32).astype(np.uint8).tobytes()
            feature = {"image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
                       "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.randint(10))]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
