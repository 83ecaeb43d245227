"""Stand-in data for the SageMaker working_with_tfrecords dnn-classifier: iris.tfrecords in the current folder (the
program reads every file of its --data_dir, by names relative to where it runs), a tf.Example per flower: the four
measurements as floats and `label`, 0-2."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
with tf.io.TFRecordWriter("iris.tfrecords") as writer:
    for _ in range(120):
        label = int(rng.randint(3))
        values = rng.normal(loc=[5.0 + label, 3.0, 1.5 + 2 * label, 0.3 + label], scale=0.3)
        feature = {name: tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
                   for name, value in zip(("sepal_length", "sepal_width", "petal_length", "petal_width"), values)}
        feature["label"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))
        writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
