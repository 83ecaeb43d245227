"""Stand-in data for cloudml-samples' tensorflow/standard/imdb trainer: imdb.npz (`x_train`, `y_train`, `x_test`,
`y_test`: 200 and 100 made-up reviews of 40 word ids each, 1-9995, and their labels 0/1, the ids of positive reviews
skewed higher, so the model has something to learn) and imdb_word_index.json (word -> id, `w1` ... `w9995`), in the
current folder. The reviews are of one length, stored as 2-D int arrays: Keras' own imdb.npz holds object arrays
of lists, which np.load reads only with allow_pickle=True, and the program calls np.load(path) without it."""
import json

import numpy as np

rng = np.random.RandomState(0)
arrays = {}
for part, count in (("train", 200), ("test", 100)):
    labels = rng.randint(2, size=count)
    reviews = np.where(labels[:, None] == 1, rng.randint(4000, 9996, size=(count, 40)),
                       rng.randint(1, 6000, size=(count, 40)))
    arrays[f"x_{part}"], arrays[f"y_{part}"] = reviews.astype(np.int64), labels.astype(np.int64)
np.savez("imdb.npz", **arrays)
with open("imdb_word_index.json", "w") as file:
    json.dump({f"w{index}": index for index in range(1, 9996)}, file)
