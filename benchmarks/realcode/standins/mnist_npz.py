"""Stand-in data for the programs reading MNIST through the TF1 tutorials' reader (input_data.read_data_sets) or
Keras' mnist.load_data(): mnist.npz in the current folder, in Keras' layout (x_train, y_train, x_test, y_test; uint8
28x28 images and uint8 digits), 6000 training and 1000 test images made up, each brighter where its label is higher,
so that a model has something to learn. 6000: TF1's reader holds the first 5000 training images out for validation.
The shims (shims/mnist_input_data.py, shims/sitecustomize.py) read it."""
import numpy as np

rng = np.random.RandomState(0)
arrays = {}
for split, count in (("train", 6000), ("test", 1000)):
    labels = rng.randint(10, size=count).astype(np.uint8)
    images = np.clip(rng.normal(20 * labels[:, None, None], 40, size=(count, 28, 28)), 0, 255)
    arrays[f"x_{split}"], arrays[f"y_{split}"] = images.astype(np.uint8), labels
np.savez_compressed("mnist.npz", **arrays)
