"""Stand-in data for the iris CSV programs: iris_training.csv (120 rows) and iris_test.csv (30 rows), laid out as
TensorFlow's copies of them: a first line `count,4,setosa,versicolor,virginica` that the programs skip or read as
the header, then a row per flower of the four measurements (SepalLength, SepalWidth, PetalLength, PetalWidth,
floats) and the species, 0-2 (the measurements grow with the species, so the model has something to learn).

- cloudml-samples' tensorflow/standard/iris trainer reads them where --train-files / --eval-files say (here, the
  current folder);
- tensorflow/docs' tutorials/estimator/premade notebook reads them with tf.keras.utils.get_file("iris_training.csv",
  URL), which finds them in its cache ~/.keras/datasets without downloading: with `--keras-cache` they are written
  to .keras/datasets in the current folder as well, and the entry runs with HOME set to the current folder.
"""
import os
import sys

import numpy as np

rng = np.random.RandomState(0)
folders = ["."] + ([os.path.join(".keras", "datasets")] if "--keras-cache" in sys.argv[1:] else [])
for name, count in (("iris_training.csv", 120), ("iris_test.csv", 30)):
    lines = [f"{count},4,setosa,versicolor,virginica"]
    for _ in range(count):
        label = int(rng.randint(3))
        values = rng.normal(loc=[5.0 + 0.8 * label, 3.2 - 0.2 * label, 1.5 + 2 * label, 0.3 + 0.9 * label], scale=0.3)
        lines.append(",".join(f"{value:.1f}" for value in values) + f",{label}")
    for folder in folders:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name), "w") as file:
            file.write("\n".join(lines) + "\n")
