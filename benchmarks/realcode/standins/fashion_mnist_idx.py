"""Stand-in data for cloudml-samples' tensorflow/standard/mnist trainer (Fashion-MNIST read from gzipped IDX files):
train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz (256 examples), t10k-images-idx3-ubyte.gz and
t10k-labels-idx1-ubyte.gz (64) in the current folder, as Fashion-MNIST's files lay them out: a 16-byte header then
28x28 uint8 images, an 8-byte header then uint8 labels 0-9 (the images brighter where the label is higher, so the
model has something to learn)."""
import gzip
import struct

import numpy as np

rng = np.random.RandomState(0)
for prefix, count in (("train", 256), ("t10k", 64)):
    labels = rng.randint(10, size=count).astype(np.uint8)
    images = np.clip(rng.normal(20.0 * labels[:, None, None], 40, size=(count, 28, 28)), 0, 255).astype(np.uint8)
    with gzip.open(f"{prefix}-labels-idx1-ubyte.gz", "wb") as file:
        file.write(struct.pack(">II", 2049, count) + labels.tobytes())
    with gzip.open(f"{prefix}-images-idx3-ubyte.gz", "wb") as file:
        file.write(struct.pack(">IIII", 2051, count, 28, 28) + images.tobytes())
