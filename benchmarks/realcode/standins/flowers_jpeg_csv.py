"""Stand-in data for the flowers image classifiers: small JPEG images in `images/` and train_set.csv / eval_set.csv
in the current folder, a line per image: its path and its label, one of the five flower names the program knows."""
import os

import numpy as np
import tensorflow as tf

LABELS = ["daisy", "dandelion", "roses", "sunflowers", "tulips"]
rng = np.random.RandomState(0)
os.makedirs("images", exist_ok=True)
for name, count in (("train_set.csv", 20), ("eval_set.csv", 10)):
    with open(name, "w") as rows:
        for index in range(count):
            path = os.path.join("images", f"{name[:-8]}_{index}.jpg")
            pixels = rng.randint(256, size=(24, 32, 3)).astype(np.uint8)
            tf.io.write_file(path, tf.io.encode_jpeg(pixels))
            rows.write(f"{path},{LABELS[index % len(LABELS)]}\n")
