"""Stand-in data for cloudml-samples' MNIST trainers (mnist/distributed, mnist/hptuning and their
tensorflow/standard/mnist/deprecated copies): train.tfr.gz and eval.tfr.gz in the current folder, GZIP-compressed
TFRecord files of tf.Examples as the samples' preprocessing wrote them: `images`, 784 floats in [0, 1] of a 28x28
grey image, `labels`, 0-9 (an int64), and `key`, the example's index as a string (the images brighter where the
label is higher, so the model has something to learn)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
options = tf.io.TFRecordOptions(compression_type="GZIP")
for name, count in (("train.tfr.gz", 600), ("eval.tfr.gz", 200)):
    with tf.io.TFRecordWriter(name, options) as writer:
        for index in range(count):
            label = int(rng.randint(10))
            image = np.clip(rng.normal(0.08 * label, 0.15, size=784), 0, 1).astype(np.float32)
            feature = {"images": tf.train.Feature(float_list=tf.train.FloatList(value=image)),
                       "labels": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                       "key": tf.train.Feature(bytes_list=tf.train.BytesList(value=[str(index).encode()]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
