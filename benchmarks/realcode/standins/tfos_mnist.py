"""Stand-in data for TensorFlowOnSpark's mnist/tf examples (InputMode.TENSORFLOW), as its mnist_data_setup.py wrote
MNIST: mnist/tfr/part-0000N (tf.Examples: `image`, 784 int64 pixels, `label`, 10 int64, one-hot) and
mnist/csv2/part-0000N (lines `label|p1,p2,...,p784`), 4 files of 200 images each (brighter where the label is
higher, so the model has something to learn). With ``--map_fun MODULE.FUNCTION``, also tfos_map_fun.py here: the
launcher running that map_fun as one task with TensorFlowOnSpark's context (shims/tfos_context.py); with
``--export_fun MODULE.FUNCTION``, tfos_export_fun.py, running a TFEstimator's export_fn as it did after training."""
import argparse
import os

import numpy as np
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--map_fun")
parser.add_argument("--export_fun")
options = parser.parse_args()

rng = np.random.RandomState(0)
for folder in ("mnist/tfr", "mnist/csv2"):
    os.makedirs(folder, exist_ok=True)
for part in range(4):
    labels = rng.randint(10, size=200)
    images = np.clip(rng.normal(20 * labels[:, None], 40, size=(200, 784)), 0, 255).astype(np.int64)
    with tf.io.TFRecordWriter(f"mnist/tfr/part-{part:05d}") as writer:
        for label, image in zip(labels, images):
            feature = {"image": tf.train.Feature(int64_list=tf.train.Int64List(value=image)),
                       "label": tf.train.Feature(int64_list=tf.train.Int64List(value=np.eye(10, dtype=int)[label]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    with open(f"mnist/csv2/part-{part:05d}", "w") as lines:
        lines.writelines(f"{label}|{','.join(map(str, image))}\n" for label, image in zip(labels, images))
for launcher_name, named, runner in (("tfos_map_fun.py", options.map_fun, "run_task"),
                                     ("tfos_export_fun.py", options.export_fun, "run_export")):
    if named:
        module, function = named.rsplit(".", 1)
        with open(launcher_name, "w") as launcher:
            launcher.write(f"from tfos_context import {runner}\nfrom {module} import {function}\n\n"
                           f"{runner}({function})\n")
