"""Stand-in data for SageMaker's TF1 MNIST examples: train.tfrecords and test.tfrecords in the current folder, a
tf.Example per image: `image_raw`, 784 bytes of a 28x28 grey image, and `label`, 0-9 (the images brighter where
the label is higher, so the model has something to learn)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
for name, count in (("train.tfrecords", 600), ("test.tfrecords", 200)):
    with tf.io.TFRecordWriter(name) as writer:
        for _ in range(count):
            label = int(rng.randint(10))
            image = np.clip(rng.normal(20 * label, 40, size=784), 0, 255).astype(np.uint8)
            feature = {"image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
                       "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
